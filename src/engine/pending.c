/* pending.c - a minibatch's statistics until its global update is applied (global.stale).
 *
 * With global.stale=1 a minibatch's update is applied by the next training
 * call, while that one's local steps run (train.c "Pipeline"): its statistics
 * wait here, in one of two buffers used in turn. A worker writes a document's
 * statistics straight into its slice (words and stats at off[i]); the slices
 * are added into the accumulator in document order before the update
 * (pending_merge), so the sums do not depend on the thread count. What changes
 * a topic's column before the update lands (births.c: a birth, a death, a
 * merge) moves the pending statistics' column too (slda_pending_column), so
 * an old topic's statistics never land on its slot's new topic. Belongs to the
 * model's thread but for the slices, which workers fill.
 */
#include "engine/pending.h"

#include <stdlib.h>
#include <string.h>

/* Statistics of pending minibatches: two, used in turn. */
slda_pending_t *slda_pending_get(slda_model_t *model, int which, char *errstr,
                                 size_t errstr_size)
{
    if (!model->pend[which]) {
        /* 64-byte aligned and zeroed: g.da holds 32-byte vectors */
        slda_pending_t *pd = slda_big_alloc(sizeof *pd, "minibatch", errstr, errstr_size);
        if (!pd)
            return NULL;
        pd->acc = slda_accum_new(model->W, model->Kp, errstr, errstr_size);
        if (!pd->acc) {
            slda_big_free(pd);
            return NULL;
        }
        model->pend[which] = pd;
    }
    return model->pend[which];
}

void slda_model_free_pending(slda_model_t *model)
{
    for (int i = 0; i < 2; i++) {
        slda_pending_t *pd = model->pend[i];
        if (!pd)
            continue;
        slda_accum_free(pd->acc);
        free(pd->off);
        free(pd->words);
        slda_big_free(pd->stats);
        free(pd->ent);
        free(pd->eoff);
        free(pd->ecount);
        slda_sacc_free(&pd->sacc);
        slda_big_free(pd);
        model->pend[i] = NULL;
    }
    model->pending = NULL;
}

/* Make room for the slices of ndocs documents (train_doc copies each one's
 * word ids in). */
void slda_pending_slice(slda_pending_t *pd, const slda_doc_t *docs, size_t ndocs, uint32_t Kp)
{
    size_t pairs = 0;
    if (pd->cap_docs < ndocs + 1) {
        pd->cap_docs = ndocs + 1;
        pd->off = slda_xrealloc(pd->off, pd->cap_docs * sizeof *pd->off);
    }
    for (size_t i = 0; i < ndocs; i++) {
        pd->off[i] = pairs;
        if (docs[i].npairs && docs[i].ntokens) /* the others are not trained: no slice */
            pairs += docs[i].npairs;
    }
    pd->off[ndocs] = pairs;
    if (pd->cap_pairs < pairs + 1) {
        /* doubling: growing to each new largest minibatch reallocated (and
         * zeroed, and faulted in) the slices 14 times in a KOS run, 5 ms of
         * its 2-thread training's 140 */
        pd->cap_pairs = pairs + 1 > 2 * pd->cap_pairs ? pairs + 1 : 2 * pd->cap_pairs;
        pd->words = slda_xrealloc(pd->words, pd->cap_pairs * sizeof *pd->words);
        pd->stats = slda_big_grow(pd->stats, pd->cap_pairs * Kp * sizeof(float));
    }
}

void slda_pending_entries(slda_pending_t *pd, const slda_doc_t *docs, size_t ndocs, uint32_t K)
{
    uint32_t per = (K < SLDA_SPARSE_KEEP ? K : SLDA_SPARSE_KEEP) + 1;
    size_t n = 0;
    if (pd->cap_edocs < ndocs + 1) {
        pd->cap_edocs = ndocs + 1;
        pd->eoff = slda_xrealloc(pd->eoff, pd->cap_edocs * sizeof *pd->eoff);
        pd->ecount = slda_xrealloc(pd->ecount, pd->cap_edocs * sizeof *pd->ecount);
    }
    for (size_t i = 0; i < ndocs; i++) {
        pd->eoff[i] = n;
        pd->ecount[i] = 0; /* a document not trained adds none */
        if (docs[i].npairs && docs[i].ntokens)
            n += (size_t)docs[i].npairs * per;
    }
    pd->eoff[ndocs] = n;
    if (pd->cap_ent < n + 1) {
        pd->cap_ent = n + 1 > 2 * pd->cap_ent ? n + 1 : 2 * pd->cap_ent;
        pd->ent = slda_xrealloc(pd->ent, pd->cap_ent * sizeof *pd->ent);
    }
    pd->sparse = 1;
    pd->sliced = 1;
}

/* Add the slices into the accumulator, in document order (empty documents
 * were never trained: they add nothing). */
static void pending_merge(slda_pending_t *pd, uint32_t Kp, uint32_t K)
{
    if (!pd->sliced)
        return;
    if (pd->sparse) {
        slda_accum_reset(pd->acc); /* its word index is the merge's */
        slda_sacc_merge(&pd->sacc, pd->acc->slot_of, pd->ent, pd->eoff, pd->ecount, pd->ndocs, K);
        pd->sliced = 0;
        return;
    }
    slda_accum_reset(pd->acc); /* the sums of two minibatches ago, committed since */
    for (size_t i = 0; i < pd->ndocs; i++) {
        size_t n = pd->off[i + 1] - pd->off[i];
        if (n)
            slda_accum_add(pd->acc, pd->words + pd->off[i], pd->stats + pd->off[i] * Kp,
                           (uint32_t)n);
    }
    pd->sliced = 0;
}

void slda_pending_column(slda_model_t *model, uint32_t from, uint32_t to)
{
    slda_pending_t *pd = model->pending;
    if (!pd || !pd->active)
        return;
    uint32_t Kp = model->Kp;
    pending_merge(pd, Kp, model->K); /* on the sums, so one thread and many agree bit for bit */
    if (pd->sparse) {
        slda_sacc_column(&pd->sacc, from, to);
        return;
    }
    float *x = pd->acc->sum;
    for (uint32_t r = 0; r < pd->acc->nslots; r++, x += Kp) {
        if (to != UINT32_MAX)
            x[to] += x[from];
        x[from] = 0;
    }
}

void slda_pending_prepare(const slda_model_t *model, slda_pending_t *pd)
{
    pending_merge(pd, model->Kp, model->K);
    if (pd->sparse)
        return; /* the sparse step reads and writes its rows at once: all in the commit */
    slda_global_prepare(model, pd->acc, pd->ntokens, pd->tokens_before, &pd->g);
}

double slda_pending_commit(slda_model_t *model, slda_pending_t *pd)
{
    double rho = pd->sparse
                     ? slda_sparse_update(model, &pd->sacc, pd->ntokens, pd->tokens_before)
                     : slda_global_commit(model, pd->acc, pd->ntokens, pd->tokens_before, &pd->g);
    pd->active = 0;
    if (model->pending == pd)
        model->pending = NULL;
    return rho;
}

double slda_model_flush(slda_model_t *model)
{
    slda_pending_t *pd = model ? model->pending : NULL;
    if (!pd || !pd->active)
        return 0;
    slda_pending_prepare(model, pd);
    return slda_pending_commit(model, pd);
}

