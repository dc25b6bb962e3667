/* train.c - one minibatch: local steps on every document, then the global update.
 *
 * The global state is frozen while the local steps run (slda_frozen_t holds
 * the per-minibatch constants). With one thread each document's statistics
 * go straight into the minibatch accumulator; with more, workers write them
 * into per-document slices and the caller adds the slices in document order,
 * so the sums - and the model - are bit-identical to one thread.
 */
#include "births.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct train_job_s {
    slda_model_t *model;
    slda_frozen_t fz;
    const slda_doc_t *docs;
    slda_local_t **locs;   /* one per worker */
    float *ntheta;         /* ndocs x K mean document counts (alpha learning), or NULL */
    float *thetas;         /* ndocs x K, or NULL */
    float **slices;        /* per document statistics (threads > 1), or NULL */
    float *scores;         /* births: ndocs per-token log-likelihoods, or NULL */
    float **pw;            /* births: per document p(w) of each pair, or NULL */
    uint64_t t;
} train_job_t;

static double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void train_doc(size_t i, uint32_t worker, void *opaque)
{
    train_job_t *job = opaque;
    const slda_doc_t *doc = &job->docs[i];
    slda_local_t *loc = job->locs[worker];
    uint32_t K = job->model->K, Kp = job->model->Kp;
    if (doc->npairs == 0 || doc->ntokens == 0)
        return;
    slda_local_run(loc, &job->fz, doc->word, doc->count, doc->npairs, job->t, i, 1,
                   job->thetas ? job->thetas + i * K : NULL);
    if (job->ntheta)
        memcpy(job->ntheta + i * K, loc->ntheta_sum, K * sizeof(float));
    if (job->scores) /* births.c */
        job->scores[i] = slda_births_doc_score(&job->fz, loc, doc->word, doc->count,
                                               doc->npairs, job->pw[i]);
    if (job->slices)
        memcpy(job->slices[i], loc->stats, (size_t)doc->npairs * Kp * sizeof(float));
    else
        slda_accum_add(job->model->accum, doc->word, loc->stats, doc->npairs);
}

/* Scratch of each worker, kept across minibatches (it grows to the largest
 * document seen). */
static slda_local_t **worker_locals(slda_model_t *model, uint32_t nthreads)
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
    for (size_t i = 0; i < ndocs; i++)
        for (uint32_t u = 0; u < docs[i].npairs; u++)
            if (!model->row_ready[docs[i].word[u]])
                slda_model_init_row(model, docs[i].word[u]);
    return SLDA_OK;
}

slda_err_t slda_model_train(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_stats_t *stats, char *errstr,
                            size_t errstr_size)
{
    double t0 = mono_seconds();
    uint32_t nthreads = slda_pool_threads(model);
    uint64_t ntokens = 0, ntrained = 0, empty = 0;
    train_job_t job = {.model = model, .docs = docs, .thetas = thetas, .t = model->t};
    slda_err_t err = prepare_rows(model, docs, ndocs, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    if (!model->accum) {
        model->accum = slda_accum_new(model->W, model->Kp, errstr, errstr_size);
        if (!model->accum)
            return SLDA_ERR_NOMEM;
    }
    err = slda_frozen_init(&job.fz, model, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    uint32_t *lengths = slda_xcalloc(ndocs ? ndocs : 1, sizeof *lengths);
    for (size_t i = 0; i < ndocs; i++) {
        lengths[i] = docs[i].ntokens;
        ntokens += docs[i].ntokens;
        if (docs[i].npairs && docs[i].ntokens)
            ntrained++;
        else
            empty++;
    }
    if (model->p.births) { /* births.c: per-document scores for the global step */
        if (!model->births)
            model->births = slda_births_new(model);
        job.scores = slda_xcalloc(ndocs + 1, sizeof *job.scores);
        job.pw = slda_xcalloc(ndocs + 1, sizeof *job.pw);
        for (size_t i = 0; i < ndocs; i++)
            job.pw[i] = slda_xmalloc((size_t)docs[i].npairs * sizeof(float) + 1);
    }
    if (model->p.alpha_learn != SLDA_ALPHA_FIXED || job.scores)
        job.ntheta = slda_xcalloc(ndocs * model->K + 1, sizeof(float));
    if (nthreads > 1) {
        job.slices = slda_xcalloc(ndocs + 1, sizeof *job.slices);
        for (size_t i = 0; i < ndocs; i++)
            job.slices[i] = slda_xmalloc((size_t)docs[i].npairs * model->Kp * sizeof(float) + 1);
    }
    job.locs = worker_locals(model, nthreads);
    slda_accum_reset(model->accum);
    slda_pool_run(model, ndocs, train_doc, &job);
    for (size_t i = 0; job.slices && i < ndocs; i++) {
        if (docs[i].npairs && docs[i].ntokens)
            slda_accum_add(model->accum, docs[i].word, job.slices[i], docs[i].npairs);
        free(job.slices[i]);
    }
    double rho = slda_global_update(model, model->accum, ntokens);
    if (job.ntheta)
        slda_alpha_update(model, job.ntheta, lengths, ndocs, rho);
    if (job.scores) /* births.c: births, retirement and merges (part of the global update) */
        slda_births_update(model, docs, ndocs, job.scores, job.pw, job.ntheta, ntokens, rho);
    model->docs += ntrained;
    model->tokens += ntokens;
    model->updated_ms = slda_now_ms();
    slda_vocab_new_epoch(model->vocab);

    free(job.slices);
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
        stats->seconds = mono_seconds() - t0;
    }
    return SLDA_OK;
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
