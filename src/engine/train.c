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
 *
 * A minibatch as a job (engine/model.h): slda_train_begin sets it up on the
 * model's thread, its items (the documents' local steps, then any stored
 * documents resolved ahead) run in one hand-over to the pool, the caller
 * preparing the pending update meanwhile (slda_train_pre), and
 * slda_train_end applies what follows. slda_model_train is those three; a
 * caller may run the items in a hand-over together with items of its own
 * (the service decodes the next minibatch's messages there), which read only
 * what the local steps read.
 */
#include "engine/authors.h"
#include "engine/pam.h"
#include "engine/births.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/step.h"
#include "engine/train.h"
#include "engine/pending.h"
#include "engine/replay.h"
#include "engine/rows_nz.h"
#include "engine/sparse.h"
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

/* A minibatch as a job (train.h): items [0, ndocs) are its documents' local
 * steps, items [ndocs, ndocs + nahead) resolve stored documents ahead
 * (replay.c). Made by slda_train_begin on the model's thread, its items run
 * on any thread, ended (and freed) by slda_train_end on the model's thread. */
struct slda_train_s {
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
    size_t ndocs;
    size_t nahead;         /* items past ndocs: stored documents resolved ahead */
    uint32_t *lengths;     /* ndocs: tokens of each document (alpha learning) */
    uint64_t ntokens, ntrained, empty;
    int revisit;           /* the documents' second visit (replay.c) */
    double t0;             /* when slda_train_begin was called */
    uint32_t *aoff, *aid;  /* model.kind=atm: each document's author ids (authors.c), or NULL */
    float *pam_nxy;        /* model.kind=pam: ndocs x S x K counts n_mxy, one draw (pam.c), or NULL */
};

void slda_train_item(slda_train_t *job, size_t i, uint32_t worker)
{
    if (i >= job->ndocs) {
        slda_replay_ahead_item(i - job->ndocs, worker, job->model);
        return;
    }
    const slda_doc_t *doc = &job->docs[i];
    slda_local_t *loc = job->locs[worker];
    uint32_t K = job->model->K, Kp = job->model->Kp;
    if (doc->npairs == 0 || doc->ntokens == 0)
        return;
    slda_replay_fill(job->fill, job->model, i, doc);
    if (job->next->sparse) { /* sparse.h: entries into the document's slice */
        slda_pending_t *pd = job->next;
        pd->ecount[i] = slda_sparse_run(loc, &job->fz, doc->word, doc->count, doc->npairs,
                                        job->t, i, 1, job->thetas ? job->thetas + i * K : NULL,
                                        pd->ent + pd->eoff[i]);
        if (job->ntheta)
            memcpy(job->ntheta + i * K, loc->ntheta_sum, K * sizeof(float));
        if (job->scores)
            job->scores[i] = slda_sparse_doc_score(&job->fz, loc, doc->word, doc->count,
                                                   doc->npairs, job->pw[i]);
        return;
    }
    if (job->next->sliced) { /* the statistics go straight into the document's slice */
        memcpy(job->next->words + job->next->off[i], doc->word, doc->npairs * sizeof *doc->word);
        loc->stats_out = job->next->stats + job->next->off[i] * Kp;
    }
    if (job->aoff) { /* authors.c: the document's prior from its authors' counts */
        loc->prior_sum = slda_authors_prior(job->model->authors, job->aid + job->aoff[i],
                                            job->aoff[i + 1] - job->aoff[i], job->model->alpha,
                                            job->model->alpha_sum, loc->prior_buf);
        loc->prior = loc->prior_buf;
    }
    if (job->pam_nxy) { /* pam_local.c: the (super, sub) local step */
        size_t sk = (size_t)slda_pam_supers(job->model->pam) * K;
        slda_pam_run(loc, &job->fz, job->model->pam, doc->word, doc->count, doc->npairs, job->t,
                     i, 1, job->thetas ? job->thetas + i * K : NULL, job->pam_nxy + i * sk);
    } else {
        slda_local_run(loc, &job->fz, doc->word, doc->count, doc->npairs, job->t, i, 1,
                       job->thetas ? job->thetas + i * K : NULL);
    }
    if (job->ntheta)
        memcpy(job->ntheta + i * K, loc->ntheta_sum, K * sizeof(float));
    if (job->scores) /* births.c */
        job->scores[i] = slda_births_doc_score(&job->fz, loc, doc->word, doc->count,
                                               doc->npairs, job->pw[i]);
    if (!job->next->sliced)
        slda_accum_add(job->next->acc, doc->word, loc->stats, doc->npairs);
}

/* The documents by their tokens (the threads claim the longest first,
 * pool.c); the items resolving stored documents ahead after them all
 * (cost 0, index order). */
uint64_t slda_train_cost(const slda_train_t *job, size_t i)
{
    return i < job->ndocs ? job->docs[i].ntokens : 0;
}

size_t slda_train_items(const slda_train_t *job)
{
    return job->ndocs + job->nahead;
}

/* The calling thread's task while the workers run the local steps: the
 * pending update's preparation (none when no update is pending). */
void slda_train_pre(slda_train_t *job)
{
    if (job->prev)
        slda_pending_prepare(job->model, job->prev);
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
    if (!slda_params_sparse(&model->p)) /* the sparse path writes rows where they hold counts */
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

/* Set up one minibatch's job (slda_train_begin). revisit: the documents'
 * second visit (replay.c): they feed no births and count in replay_tokens,
 * not in docs and tokens; nahead: the drain's items resolving the next
 * stored minibatch ahead (a first visit sets up its own, replay.c). */
static slda_err_t begin(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                        float *thetas, int revisit, size_t nahead, slda_train_t **out,
                        char *errstr, size_t errstr_size)
{
    double t0 = slda_mono_s();
    uint32_t nthreads = slda_pool_threads(model->pool);
    *out = NULL;
    /* second visits come from replay.c in ids of rows ready, checked already */
    slda_err_t err = revisit ? SLDA_OK : prepare_rows(model, docs, ndocs, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_pending_t *prev = model->pending;
    int which = prev == model->pend[0] && prev ? 1 : 0;
    slda_pending_t *next = slda_pending_get(model, which, errstr, errstr_size);
    if (!next)
        return SLDA_ERR_NOMEM;
    slda_train_t *job = slda_xcalloc(1, sizeof *job);
    *job = (slda_train_t){.model = model, .docs = docs, .thetas = thetas, .t = model->t,
                          .ndocs = ndocs, .nahead = nahead, .revisit = revisit, .t0 = t0};
    err = slda_frozen_init(&job->fz, model, errstr, errstr_size);
    if (err != SLDA_OK) {
        free(job);
        return err;
    }
    job->fz.revisit = revisit;
    job->lengths = slda_xcalloc(ndocs ? ndocs : 1, sizeof *job->lengths);
    for (size_t i = 0; i < ndocs; i++) {
        job->lengths[i] = docs[i].ntokens;
        job->ntokens += docs[i].ntokens;
        if (docs[i].npairs && docs[i].ntokens)
            job->ntrained++;
        else
            job->empty++;
    }
    if (model->p.births && !revisit) { /* births.c: per-document scores for the global step */
        if (!model->births)
            model->births = slda_births_new(model);
        job->scores = slda_xcalloc(ndocs + 1, sizeof *job->scores);
        job->pw = slda_xcalloc(ndocs + 1, sizeof *job->pw);
        for (size_t i = 0; i < ndocs; i++)
            job->pw[i] = slda_xmalloc((size_t)docs[i].npairs * sizeof(float) + 1);
    }
    if (model->authors && !revisit) /* authors.c: the prior of each document, its step */
        slda_authors_map(model->authors, docs, ndocs, &job->aoff, &job->aid);
    if (model->pam) /* pam.c: each document's counts for the super-topics' priors */
        job->pam_nxy = slda_xcalloc(ndocs * slda_pam_supers(model->pam) * model->K + 1,
                                    sizeof(float));
    if (model->p.alpha_learn != SLDA_ALPHA_FIXED || job->scores || job->aoff)
        job->ntheta = slda_xcalloc(ndocs * model->K + 1, sizeof(float));
    next->ndocs = ndocs;
    next->sparse = 0;
    next->sliced = nthreads > 1;
    if (slda_params_sparse(&model->p)) { /* sparse.h: the proposal tables, the entries' room */
        slda_rows_nz_ensure(model);
        if (!model->wtabs)
            model->wtabs = slda_xcalloc(1, sizeof *model->wtabs);
        slda_wtabs_build(model->wtabs, model, &job->fz, docs, ndocs);
        job->fz.tabs = model->wtabs;
        slda_pending_entries(next, docs, ndocs, model->K);
        slda_sacc_frozen(&next->sacc, &job->fz, model->K);
    } else if (next->sliced) { /* pending_merge clears the accumulator, on the caller's time */
        slda_pending_slice(next, docs, ndocs, model->Kp);
    } else {
        slda_accum_reset(next->acc);
    }
    job->next = next;
    job->prev = prev && prev->active ? prev : NULL;
    job->locs = slda_model_locals(model, nthreads);
    if (!revisit && SLDA_REPLAY_ACTIVE(&model->p)) {
        job->fill = slda_replay_reserve(model, docs, ndocs);
        job->nahead = slda_replay_ahead_due(model, job->fill);
    }
    *out = job;
    return SLDA_OK;
}

slda_err_t slda_train_begin(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_t **out, char *errstr, size_t errstr_size)
{
    return begin(model, docs, ndocs, thetas, 0, 0, out, errstr, errstr_size);
}

/* After the items: the pending update applied, this minibatch's update made
 * pending (or applied: global.stale=0, the first updates), alpha and births,
 * the counters; the job freed. */
static void end(slda_train_t *job, slda_train_stats_t *stats)
{
    slda_model_t *model = job->model;
    slda_pending_t *next = job->next;
    size_t ndocs = job->ndocs;
    if (job->prev)
        slda_pending_commit(model, job->prev);
    slda_replay_store(model, job->fill); /* stamped as before the update: it evicts no word */
    next->active = 1;
    next->ntokens = job->ntokens;
    /* this minibatch's step size: its update is the next one applied */
    double rho = slda_rho(&model->p, model->t);
    next->tokens_before = slda_model_tokens_before(model, job->ntokens, rho);
    model->pending = next;
    /* global.stale=0, or one of the first updates: the update now, before
     * alpha and births */
    if (!model->p.stale || model->t < SLDA_STALE_WARMUP)
        rho = slda_model_flush(model);
    slda_model_update_done(model, job->docs, ndocs, job->lengths, job->ntheta, job->scores,
                           job->pw, job->ntokens, job->ntrained, job->revisit, rho);
    if (job->pam_nxy) { /* the super-topics' priors, blended in with this update's rho */
        slda_pam_step(model->pam, job->pam_nxy, ndocs, rho, model->t);
        free(job->pam_nxy);
    }
    if (job->aoff) { /* the authors' step, on the model thread in document order */
        slda_authors_step(model->authors, &model->p, job->aoff, job->aid, ndocs, job->ntheta,
                          model->alpha, model->alpha_sum);
        free(job->aoff);
        free(job->aid);
    }

    for (size_t i = 0; job->pw && i < ndocs; i++)
        free(job->pw[i]);
    free(job->pw);
    free(job->scores);
    free(job->ntheta);
    free(job->lengths);
    slda_frozen_clear(&job->fz);
    if (stats) {
        stats->docs = job->ntrained;
        stats->tokens = job->ntokens;
        stats->skipped_empty = job->empty;
        stats->rho = rho;
        stats->seconds = slda_mono_s() - job->t0;
    }
    free(job);
}

/* The pool's view of a job (core/pool.h's signatures). */
static uint64_t job_cost(size_t i, void *opaque)
{
    return slda_train_cost(opaque, i);
}

static void job_item(size_t i, uint32_t worker, void *opaque)
{
    slda_train_item(opaque, i, worker);
}

static void job_pre(void *opaque)
{
    slda_train_pre(opaque);
}

/* A job's items in one hand-over to the model's threads, the caller
 * preparing the pending update meanwhile. */
static void run(slda_train_t *job)
{
    slda_pool_run_longest(job->model->pool, slda_train_items(job), job_cost, job_item,
                          job->prev ? job_pre : NULL, job);
}

/* Train the stored minibatches that are due (all of them with drain: each
 * one's local steps resolve the next one's documents, replay.c). */
static slda_err_t revisit_due(slda_model_t *model, int drain, char *errstr, size_t errstr_size)
{
    size_t n;
    slda_doc_t *docs;
    while ((docs = slda_replay_pop(model, drain, &n))) {
        size_t nahead = drain ? slda_replay_ahead(model) : 0;
        slda_train_t *job = NULL;
        slda_err_t err = n ? begin(model, docs, n, NULL, 1, nahead, &job, errstr, errstr_size)
                           : SLDA_OK;
        if (job) {
            run(job);
            end(job, NULL);
        } else if (nahead) { /* not run: no documents, or refused before the pool */
            slda_pool_run(model->pool, nahead, slda_replay_ahead_item, model);
        }
        slda_docs_clear(docs, n);
        free(docs);
        if (err != SLDA_OK)
            return err;
    }
    return SLDA_OK;
}

slda_err_t slda_train_end(slda_train_t *job, slda_train_stats_t *stats, char *errstr,
                          size_t errstr_size)
{
    slda_model_t *model = job->model;
    double t0 = job->t0;
    end(job, stats);
    if (!SLDA_REPLAY_ACTIVE(&model->p))
        return SLDA_OK;
    slda_err_t err = revisit_due(model, 0, errstr, errstr_size);
    if (stats)
        stats->seconds = slda_mono_s() - t0; /* second visits included */
    return err;
}

slda_err_t slda_model_train(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_stats_t *stats, char *errstr,
                            size_t errstr_size)
{
    slda_train_t *job;
    slda_err_t err = slda_train_begin(model, docs, ndocs, thetas, &job, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    run(job);
    return slda_train_end(job, stats, errstr, errstr_size);
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
    } else if (model->pam) {
        slda_pam_run(loc, &fz, model->pam, words, counts, n, UINT64_MAX, seed, 0, theta, NULL);
    } else {
        slda_authors_doc_prior(model, doc, loc);
        slda_local_run(loc, &fz, words, counts, n, UINT64_MAX, seed, 0, theta);
    }
    free(words);
    free(counts);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    return err;
}
