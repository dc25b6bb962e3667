/* evaluate.c - held-out perplexity by document completion, and UMass topic coherence.
 *
 * docs/algorithm.md, "Evaluation in stream mode": each held-out document's tokens
 * are split at random (seeded per document) into an observed half, on which
 * the local step folds in theta with the model frozen, and a scored half:
 * log p(w) = log sum_k theta_k phi_wk, phi_wk = (Nphi[w][k]+eta)/(NZ[k]+W eta).
 * Words whose rows never reached training (open vocabulary) are not scored.
 */
#include "engine/model_priv.h"
#include "engine/authors.h"
#include "engine/pam.h"
#include "engine/global_step.h"
#include "engine/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct half_s {
    uint32_t *w, *n;
    uint32_t len;
} half_t;

/* Split doc's tokens between obs and test (each token by a fair coin). */
static void split_tokens(const slda_model_t *model, const slda_doc_t *doc, slda_rng_t *rng,
                         half_t *obs, half_t *test)
{
    obs->len = test->len = 0;
    for (uint32_t u = 0; u < doc->npairs; u++) {
        uint32_t w = doc->word[u], a = 0, b = 0;
        if (w >= model->W || !model->row_ready[w])
            continue;
        for (uint32_t i = 0; i < doc->count[u]; i++) {
            if (slda_rng_next(rng) >> 63)
                a++;
            else
                b++;
        }
        if (a) {
            obs->w[obs->len] = w;
            obs->n[obs->len++] = a;
        }
        if (b) {
            test->w[test->len] = w;
            test->n[test->len++] = b;
        }
    }
}

/* Score test[j] after folding theta in on obs[j] (model frozen). */
static void complete_doc(const slda_model_t *model, slda_local_t *loc, const slda_frozen_t *fz,
                         const slda_doc_t *doc, const half_t *obs, const half_t *test,
                         uint64_t seed, size_t j, float *theta, double *loglik, uint64_t *ntok)
{
    uint32_t K = model->K;
    double denom[SLDA_MAX_TOPICS];
    slda_phi_view_t view;
    slda_model_phi_view(model, &view);
    for (uint32_t k = 0; k < K; k++)
        denom[k] = slda_model_phi_denom(model, k);
    if (model->pam) { /* model.kind=pam: theta over the sub-topics, sum_x theta_x theta_xy */
        slda_pam_run(loc, fz, model->pam, obs->w, obs->n, obs->len, seed ^ 0x65766c, j, 0,
                     theta, NULL);
    } else {
        slda_authors_doc_prior(model, doc, loc); /* model.kind=atm: the authors' mixtures */
        slda_local_run(loc, fz, obs->w, obs->n, obs->len, seed ^ 0x65766c, j, 0, theta);
    }
    for (uint32_t u = 0; u < test->len; u++) {
        double p = 0;
        for (uint32_t k = 0; k < K; k++)
            p += theta[k] * slda_phi_at(&view, test->w[u], k, denom[k]);
        *loglik += test->n[u] * log(p);
        *ntok += test->n[u];
    }
}

/* The words of doc whose rows hold counts, as a half_t (borrowing buffers). */
static void known_words(const slda_model_t *model, const slda_doc_t *doc, half_t *out)
{
    out->len = 0;
    for (uint32_t u = 0; u < doc->npairs; u++) {
        uint32_t w = doc->word[u];
        if (w < model->W && model->row_ready[w]) {
            out->w[out->len] = w;
            out->n[out->len++] = doc->count[u];
        }
    }
}

slda_err_t slda_eval_completion(const slda_model_t *model, const slda_doc_t *obs_docs,
                                const slda_doc_t *test_docs, size_t ndocs, uint64_t seed,
                                double *perplexity, uint64_t *ntokens_out)
{
    uint32_t maxp = 1;
    slda_frozen_t fz;
    slda_err_t err = slda_frozen_init(&fz, model, NULL, 0);
    if (err != SLDA_OK)
        return err;
    for (size_t j = 0; j < ndocs; j++) {
        maxp = obs_docs[j].npairs > maxp ? obs_docs[j].npairs : maxp;
        if (test_docs)
            maxp = test_docs[j].npairs > maxp ? test_docs[j].npairs : maxp;
    }
    half_t obs = {slda_xmalloc(maxp * 4), slda_xmalloc(maxp * 4), 0};
    half_t test = {slda_xmalloc(maxp * 4), slda_xmalloc(maxp * 4), 0};
    float *theta = slda_xmalloc(model->K * sizeof(float));
    slda_local_t *loc = slda_local_new(model->K);
    double loglik = 0;
    uint64_t ntok = 0;
    for (size_t j = 0; j < ndocs; j++) {
        if (slda_doc_check(&obs_docs[j], model->W, NULL, 0) != SLDA_OK ||
            (test_docs && slda_doc_check(&test_docs[j], model->W, NULL, 0) != SLDA_OK))
            continue; /* malformed documents are not scored */
        if (test_docs) {
            known_words(model, &obs_docs[j], &obs);
            known_words(model, &test_docs[j], &test);
        } else {
            slda_rng_t rng;
            slda_rng_seed3(&rng, seed, 0x686f6c64, j);
            split_tokens(model, &obs_docs[j], &rng, &obs, &test);
        }
        if (obs.len == 0 || test.len == 0)
            continue;
        complete_doc(model, loc, &fz, &obs_docs[j], &obs, &test, seed, j, theta, &loglik,
                     &ntok);
    }
    free(obs.w);
    free(obs.n);
    free(test.w);
    free(test.n);
    free(theta);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    if (ntokens_out)
        *ntokens_out = ntok;
    *perplexity = ntok ? exp(-loglik / (double)ntok) : NAN;
    return ntok ? SLDA_OK : SLDA_ERR_EMPTY;
}

slda_err_t slda_eval_perplexity(const slda_model_t *model, const slda_doc_t *docs,
                                size_t ndocs, uint64_t seed, double *perplexity,
                                uint64_t *ntokens_out)
{
    return slda_eval_completion(model, docs, NULL, ndocs, seed, perplexity, ntokens_out);
}

static int doc_has(const slda_doc_t *doc, uint32_t w)
{
    uint32_t lo = 0, hi = doc->npairs;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (doc->word[mid] < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < doc->npairs && doc->word[lo] == w;
}

/* UMass coherence (Mimno et al. 2011): for the top words v_1..v_n of a topic,
 * sum over i > j of log((D(v_i, v_j) + 1) / D(v_j)), with D counting the
 * reference documents that contain the words. Pairs whose D(v_j) is 0 are
 * skipped. */
slda_err_t slda_eval_umass(const slda_model_t *model, const slda_doc_t *docs,
                           size_t ndocs, size_t n, double *mean, double *per_topic)
{
    uint32_t K = model->K;
    if (n < 2 || n > 100 || ndocs == 0)
        return SLDA_ERR_INVALID;
    uint32_t *ids = slda_xmalloc(n * sizeof *ids);
    float *probs = slda_xmalloc(n * sizeof *probs);
    uint8_t *present = slda_xmalloc(n);
    uint32_t *df = slda_xmalloc(n * sizeof *df), *co = slda_xmalloc(n * n * sizeof *co);
    double total = 0;
    for (uint32_t k = 0; k < K; k++) {
        size_t m = slda_model_top_words(model, k, n, ids, probs);
        memset(df, 0, n * sizeof *df);
        memset(co, 0, n * n * sizeof *co);
        for (size_t j = 0; j < ndocs; j++) {
            for (size_t i = 0; i < m; i++) {
                present[i] = (uint8_t)doc_has(&docs[j], ids[i]);
                df[i] += present[i];
            }
            for (size_t i = 0; i < m; i++)
                for (size_t l = 0; l < i && present[i]; l++)
                    co[i * n + l] += present[l];
        }
        double c = 0;
        for (size_t i = 1; i < m; i++)
            for (size_t l = 0; l < i; l++)
                if (df[l])
                    c += log((co[i * n + l] + 1.0) / df[l]);
        if (per_topic)
            per_topic[k] = c;
        total += c;
    }
    *mean = total / K;
    free(ids);
    free(probs);
    free(present);
    free(df);
    free(co);
    return SLDA_OK;
}
