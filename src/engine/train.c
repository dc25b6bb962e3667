/* train.c - one minibatch: local steps on every document, then the global update.
 *
 * The global state is frozen while the local steps run (slda_frozen_t holds
 * the per-minibatch constants). With one thread each document's statistics
 * go straight into the minibatch accumulator; with more, workers write them
 * into per-document slices that are added in document order, so the sums -
 * and the model - are bit-identical to one thread.
 *
 * The pipeline (global.stale=1, the default). A minibatch's global update is
 * not applied when its call returns: it waits as the model's pending update,
 * and the next call computes it (slda_global_prepare: merge the slices, new
 * rows written beside the model) on the calling thread while the workers
 * already run that call's local steps, then applies it (slda_global_commit:
 * copy the rows, move sigma and NZ) once they are done. So the local steps of
 * minibatch t see the model after update t-2, not t-1: a fixed staleness of
 * one update, the same for every thread count (one thread runs the same
 * steps in the same order), so results stay bit-identical across thread
 * counts. The first SLDA_STALE_WARMUP updates are applied in their own call.
 * The serial part of a minibatch shrinks to the copy of its rows, alpha and
 * the births decisions. Alpha and births run at the end of their own call,
 * before that call's update is applied (on the model as it is then; a merge
 * or a freed slot also moves or drops that topic's column of the pending
 * statistics, slda_pending_column). slda_model_flush applies the pending update; a model is flushed
 * before it is saved, evaluated at the end or read by the user. While an
 * update is pending, words of its minibatch stay pinned in the vocabulary
 * (vocab.c pins the words of the last two epochs), so no eviction can hand
 * their rows to other words before the update lands. global.stale=0 applies
 * every update in its own call: the steps of the serial algorithm exactly.
 */
#include "engine/births.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/step.h"
#include "engine/train.h"
#include "engine/replay.h"
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

/* The first updates are applied at once, whatever global.stale says: while
 * one minibatch is a large share of all the model has seen, local steps one
 * update behind are much worse (KOS and Reuters at K=100, one pass, seeds
 * 1-3, held-out perplexity against global.stale=0: +1.4% and +0.2% with no
 * such start, +0.5% and 0.0% with 4 updates, +0.4% and +0.4% with 8). */
#ifndef SLDA_STALE_WARMUP
#define SLDA_STALE_WARMUP 4
#endif

/* A minibatch whose global update is not applied yet (see the top). */
typedef struct slda_pending_s {
    slda_accum_t *acc;
    int active;            /* statistics waiting for prepare and commit */
    int sliced;            /* the statistics are in words/stats, not yet in acc */
    uint64_t ntokens, tokens_before;
    size_t ndocs;
    size_t *off;           /* ndocs + 1 pair offsets into words and stats */
    uint32_t *words;       /* the documents' word ids, in document order */
    float *stats;          /* pairs x Kp: each pair's statistics */
    size_t cap_docs, cap_pairs;
    slda_gprep_t g;
} slda_pending_t;

typedef struct train_job_s {
    slda_model_t *model;
    slda_frozen_t fz;
    const slda_doc_t *docs;
    slda_local_t **locs;   /* one per worker */
    float *ntheta;         /* ndocs x K mean document counts (alpha learning), or NULL */
    float *thetas;         /* ndocs x K, or NULL */
    slda_pending_t *next;  /* this minibatch's statistics */
    slda_pending_t *prev;  /* the pending update, prepared by the calling thread */
    float *scores;         /* births: ndocs per-token log-likelihoods, or NULL */
    float **pw;            /* births: per document p(w) of each pair, or NULL */
    slda_replay_fill_t *fill; /* replay.c: the documents stored for a second visit, or NULL */
    uint64_t t;
    size_t ndocs;          /* items past ndocs: nextra of the caller's (slda_model_train_with), */
    size_t nextra;         /* then those resolving stored documents ahead (replay.c) */
    void (*extra)(size_t, uint32_t, void *);
    void *extra_opaque;
} train_job_t;

static void train_doc(size_t i, uint32_t worker, void *opaque)
{
    train_job_t *job = opaque;
    if (i >= job->ndocs + job->nextra) {
        slda_replay_ahead_item(i - job->ndocs - job->nextra, worker, job->model);
        return;
    }
    if (i >= job->ndocs) {
        job->extra(i - job->ndocs, worker, job->extra_opaque);
        return;
    }
    const slda_doc_t *doc = &job->docs[i];
    slda_local_t *loc = job->locs[worker];
    uint32_t K = job->model->K, Kp = job->model->Kp;
    if (doc->npairs == 0 || doc->ntokens == 0)
        return;
    slda_replay_fill(job->fill, job->model, i, doc);
    if (job->next->sliced) { /* the statistics go straight into the document's slice */
        memcpy(job->next->words + job->next->off[i], doc->word, doc->npairs * sizeof *doc->word);
        loc->stats_out = job->next->stats + job->next->off[i] * Kp;
    }
    slda_local_run(loc, &job->fz, doc->word, doc->count, doc->npairs, job->t, i, 1,
                   job->thetas ? job->thetas + i * K : NULL);
    if (job->ntheta)
        memcpy(job->ntheta + i * K, loc->ntheta_sum, K * sizeof(float));
    if (job->scores) /* births.c */
        job->scores[i] = slda_births_doc_score(&job->fz, loc, doc->word, doc->count,
                                               doc->npairs, job->pw[i]);
    if (!job->next->sliced)
        slda_accum_add(job->next->acc, doc->word, loc->stats, doc->npairs);
}

/* The threads claim the longest documents first (pool.c), the caller's items
 * after them all (cost 0, index order). */
static uint64_t doc_cost(size_t i, void *opaque)
{
    const train_job_t *job = opaque;
    return i < job->ndocs ? job->docs[i].ntokens : 0;
}

/* Statistics of pending minibatches: two, used in turn. */
static slda_pending_t *pending_get(slda_model_t *model, int which, char *errstr,
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
        slda_big_free(pd);
        model->pend[i] = NULL;
    }
    model->pending = NULL;
}

/* Make room for the slices of ndocs documents (train_doc copies each one's
 * word ids in). */
static void pending_slice(slda_pending_t *pd, const slda_doc_t *docs, size_t ndocs, uint32_t Kp)
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

/* Add the slices into the accumulator, in document order (empty documents
 * were never trained: they add nothing). */
static void pending_merge(slda_pending_t *pd, uint32_t Kp)
{
    if (!pd->sliced)
        return;
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
    pending_merge(pd, Kp); /* on the sums, so one thread and many agree bit for bit */
    float *x = pd->acc->sum;
    for (uint32_t r = 0; r < pd->acc->nslots; r++, x += Kp) {
        if (to != UINT32_MAX)
            x[to] += x[from];
        x[from] = 0;
    }
}

static void prepare(const slda_model_t *model, slda_pending_t *pd)
{
    pending_merge(pd, model->Kp);
    slda_global_prepare(model, pd->acc, pd->ntokens, pd->tokens_before, &pd->g);
}

/* The calling thread's task while the workers run the local steps. */
static void prepare_prev(void *opaque)
{
    train_job_t *job = opaque;
    prepare(job->model, job->prev);
}

static double commit(slda_model_t *model, slda_pending_t *pd)
{
    double rho = slda_global_commit(model, pd->acc, pd->ntokens, pd->tokens_before, &pd->g);
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
    prepare(model, pd);
    return commit(model, pd);
}

/* Scratch of each worker, kept across minibatches (it grows to the largest
 * document seen). */
slda_local_t **slda_model_locals(slda_model_t *model, uint32_t nthreads)
{
    if (model->nlocals < nthreads) {
        model->locals = slda_xrealloc(model->locals, nthreads * sizeof *model->locals);
        for (uint32_t i = model->nlocals; i < nthreads; i++)
            model->locals[i] = slda_local_new(model->K);
        model->nlocals = nthreads;
    }
    return model->locals;
}

void slda_model_free_locals(slda_model_t *model)
{
    for (uint32_t i = 0; i < model->nlocals; i++)
        slda_local_destroy(model->locals[i]);
    free(model->locals);
    model->locals = NULL;
    model->nlocals = 0;
}

/* Check every document (ids in range, counts summing to ntokens, at most
 * SLDA_MAX_DOC_TOKENS) before anything changes, then give rows of words that
 * reach training for the first time their initial values. */
static slda_err_t prepare_rows(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                               char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < ndocs; i++) {
        if (docs[i].npairs == 0 && docs[i].ntokens == 0)
            continue; /* empty: skipped and counted by the caller */
        slda_err_t err = slda_doc_check(&docs[i], model->W, errstr, errstr_size);
        if (err != SLDA_OK)
            return err;
    }
    uint32_t upto = 0; /* 1 + the highest id of a row to set up */
    for (size_t i = 0; i < ndocs; i++)
        for (uint32_t u = 0; u < docs[i].npairs; u++)
            if (!model->row_ready[docs[i].word[u]] && docs[i].word[u] >= upto)
                upto = docs[i].word[u] + 1;
    slda_model_page_in(model, upto); /* model.c, "Paging in" */
    for (size_t i = 0; i < ndocs; i++)
        for (uint32_t u = 0; u < docs[i].npairs; u++)
            if (!model->row_ready[docs[i].word[u]])
                slda_model_init_row(model, docs[i].word[u]);
    return SLDA_OK;
}

uint64_t slda_model_tokens_before(slda_model_t *model, uint64_t ntokens, double rho)
{
    /* tokens trained on so far (after a birth, the windowed count: births.c) */
    return slda_births_count_start(model->births, model->tokens + model->replay_tokens, ntokens,
                                   rho);
}

void slda_model_update_done(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            const uint32_t *lengths, const float *ntheta, const float *scores,
                            float *const *pw, uint64_t ntokens, uint64_t ntrained, int revisit,
                            double rho)
{
    if (ntheta)
        slda_alpha_update(model, ntheta, lengths, ndocs, rho);
    if (scores) /* births.c: births, retirement and merges (part of the global update) */
        slda_births_update(model, docs, ndocs, scores, pw, ntheta, ntokens, rho);
    if (revisit) {
        model->replay_tokens += ntokens;
    } else {
        model->docs += ntrained;
        model->tokens += ntokens;
    }
    model->updated_ms = slda_now_ms();
    slda_vocab_new_epoch(model->vocab);
}

/* One minibatch. revisit: the documents' second visit (replay.c): they
 * feed no births and count in replay_tokens, not in docs and tokens. */
static slda_err_t train_call(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                             float *thetas, slda_train_stats_t *stats, int revisit,
                             size_t nextra, void (*extra)(size_t, uint32_t, void *),
                             void *extra_opaque, char *errstr, size_t errstr_size)
{
    double t0 = slda_mono_s();
    uint32_t nthreads = slda_pool_threads(model->pool);
    uint64_t ntokens = 0, ntrained = 0, empty = 0;
    train_job_t job = {.model = model, .docs = docs, .thetas = thetas, .t = model->t,
                       .ndocs = ndocs, .nextra = nextra, .extra = extra,
                       .extra_opaque = extra_opaque};
    /* second visits come from replay.c in ids of rows ready, checked already */
    slda_err_t err = revisit ? SLDA_OK : prepare_rows(model, docs, ndocs, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_pending_t *prev = model->pending;
    int which = prev == model->pend[0] && prev ? 1 : 0;
    slda_pending_t *next = pending_get(model, which, errstr, errstr_size);
    if (!next)
        return SLDA_ERR_NOMEM;
    err = slda_frozen_init(&job.fz, model, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    job.fz.revisit = revisit;
    uint32_t *lengths = slda_xcalloc(ndocs ? ndocs : 1, sizeof *lengths);
    for (size_t i = 0; i < ndocs; i++) {
        lengths[i] = docs[i].ntokens;
        ntokens += docs[i].ntokens;
        if (docs[i].npairs && docs[i].ntokens)
            ntrained++;
        else
            empty++;
    }
    if (model->p.births && !revisit) { /* births.c: per-document scores for the global step */
        if (!model->births)
            model->births = slda_births_new(model);
        job.scores = slda_xcalloc(ndocs + 1, sizeof *job.scores);
        job.pw = slda_xcalloc(ndocs + 1, sizeof *job.pw);
        for (size_t i = 0; i < ndocs; i++)
            job.pw[i] = slda_xmalloc((size_t)docs[i].npairs * sizeof(float) + 1);
    }
    if (model->p.alpha_learn != SLDA_ALPHA_FIXED || job.scores)
        job.ntheta = slda_xcalloc(ndocs * model->K + 1, sizeof(float));
    next->ndocs = ndocs;
    next->sliced = nthreads > 1;
    if (next->sliced) /* pending_merge clears the accumulator, on the caller's time */
        pending_slice(next, docs, ndocs, model->Kp);
    else
        slda_accum_reset(next->acc);
    job.next = next;
    job.prev = prev && prev->active ? prev : NULL;
    job.locs = slda_model_locals(model, nthreads);
    size_t nahead = 0;
    if (!revisit && SLDA_REPLAY_ACTIVE(&model->p)) {
        job.fill = slda_replay_reserve(model, docs, ndocs);
        nahead = slda_replay_ahead_due(model, job.fill);
    }
    slda_pool_run_longest(model->pool, ndocs + nextra + nahead, doc_cost, train_doc,
                          job.prev ? prepare_prev : NULL, &job);
    if (job.prev)
        commit(model, job.prev);
    slda_replay_store(model, job.fill); /* stamped as before the update: it evicts no word */
    next->active = 1;
    next->ntokens = ntokens;
    /* this minibatch's step size: its update is the next one applied */
    double rho = slda_rho(&model->p, model->t);
    next->tokens_before = slda_model_tokens_before(model, ntokens, rho);
    model->pending = next;
    /* global.stale=0, or one of the first updates: the update now, before
     * alpha and births */
    if (!model->p.stale || model->t < SLDA_STALE_WARMUP)
        rho = slda_model_flush(model);
    slda_model_update_done(model, docs, ndocs, lengths, job.ntheta, job.scores, job.pw, ntokens,
                           ntrained, revisit, rho);

    for (size_t i = 0; job.pw && i < ndocs; i++)
        free(job.pw[i]);
    free(job.pw);
    free(job.scores);
    free(job.ntheta);
    free(lengths);
    slda_frozen_clear(&job.fz);
    if (stats) {
        stats->docs = ntrained;
        stats->tokens = ntokens;
        stats->skipped_empty = empty;
        stats->rho = rho;
        stats->seconds = slda_mono_s() - t0;
    }
    return SLDA_OK;
}

/* Train the stored minibatches that are due (all of them with drain: each
 * one's local steps resolve the next one's documents, replay.c). */
static slda_err_t revisit_due(slda_model_t *model, int drain, char *errstr, size_t errstr_size)
{
    size_t n;
    slda_doc_t *docs;
    while ((docs = slda_replay_pop(model, drain, &n))) {
        size_t nahead = drain ? slda_replay_ahead(model) : 0;
        slda_err_t err = n ? train_call(model, docs, n, NULL, NULL, 1, nahead,
                                        slda_replay_ahead_item, model, errstr, errstr_size)
                           : SLDA_OK;
        if (nahead && (!n || err != SLDA_OK)) /* not run: train_call fails before its pool */
            slda_pool_run(model->pool, nahead, slda_replay_ahead_item, model);
        slda_docs_clear(docs, n);
        free(docs);
        if (err != SLDA_OK)
            return err;
    }
    return SLDA_OK;
}

slda_err_t slda_model_train(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_stats_t *stats, char *errstr,
                            size_t errstr_size)
{
    return slda_model_train_with(model, docs, ndocs, thetas, stats, 0, NULL, NULL, errstr,
                                 errstr_size);
}

slda_err_t slda_model_train_with(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                                 float *thetas, slda_train_stats_t *stats, size_t nextra,
                                 void (*extra)(size_t i, uint32_t worker, void *opaque),
                                 void *opaque, char *errstr, size_t errstr_size)
{
    double t0 = slda_mono_s();
    slda_err_t err = train_call(model, docs, ndocs, thetas, stats, 0, nextra, extra, opaque,
                                errstr, errstr_size);
    if (err != SLDA_OK || !SLDA_REPLAY_ACTIVE(&model->p))
        return err;
    err = revisit_due(model, 0, errstr, errstr_size);
    if (stats)
        stats->seconds = slda_mono_s() - t0; /* second visits included */
    return err;
}

slda_err_t slda_model_replay_drain(slda_model_t *model, char *errstr, size_t errstr_size)
{
    if (!model)
        return SLDA_ERR_INVALID;
    return revisit_due(model, 1, errstr, errstr_size);
}

slda_err_t slda_model_infer(const slda_model_t *model, const slda_doc_t *doc, float *theta,
                            uint64_t seed)
{
    slda_frozen_t fz;
    slda_err_t err = slda_doc_check(doc, model->W, NULL, 0);
    if (err == SLDA_ERR_RANGE)
        return err;
    err = slda_frozen_init(&fz, model, NULL, 0);
    if (err != SLDA_OK)
        return err;
    slda_local_t *loc = slda_local_new(model->K);
    uint32_t *words = slda_xmalloc((doc->npairs + 1) * sizeof *words);
    uint32_t *counts = slda_xmalloc((doc->npairs + 1) * sizeof *counts);
    uint32_t n = 0;
    for (uint32_t u = 0; u < doc->npairs; u++) {
        if (doc->word[u] < model->W && model->row_ready[doc->word[u]]) {
            words[n] = doc->word[u];
            counts[n++] = doc->count[u];
        }
    }
    if (n == 0) {
        for (uint32_t k = 0; k < model->K; k++)
            theta[k] = (float)(model->alpha[k] / model->alpha_sum);
        err = SLDA_ERR_EMPTY;
    } else {
        slda_local_run(loc, &fz, words, counts, n, UINT64_MAX, seed, 0, theta);
    }
    free(words);
    free(counts);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    return err;
}
