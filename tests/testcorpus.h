/* testcorpus.h - the engine's unit-test fixtures (unit_engine.c, unit_sparse.c): parameters, a
 * model over a fixed vocabulary, a synthetic corpus with known topics, minibatch training,
 * births' settings. */
#ifndef SLDA_TESTCORPUS_H
#define SLDA_TESTCORPUS_H

#include "engine/model.h"
#include "engine/model_priv.h"
#include "engine/batch.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline slda_params_t base_params(uint32_t K)
{
    slda_params_t p;
    memset(&p, 0, sizeof p);
    p.topics = K;
    p.alpha = 0.1;
    p.eta = 0.1;
    p.vb = SLDA_VB_CVB0;
    p.hybrid = 1;
    p.threshold = 1;
    p.burnin = 5;
    p.samples = 5;
    p.stats = SLDA_STATS_RB;
    p.rho_s = 1;
    p.rho_tau = 10;
    p.rho_kappa = 0.7;
    p.init_scale = 1;
    p.seed = 7;
    p.threads = 1;
    p.min_length = 1;
    p.stopwords = "none";
    return p;
}

/* births on (or off) with the configuration table's defaults for its settings. */
static inline void births_params(slda_params_t *p, int on)
{
    p->births = on;
    p->births_docs = 64;
    p->births_z = 1.5;
    p->births_gain = 0.08;
    p->births_floor = 0.05;
    p->births_merge = 0.3;
}

/* A model over a fixed vocabulary "w0".."w{W-1}" with random initial rows. */
static inline slda_model_t *make_model(const slda_params_t *p, uint32_t W)
{
    char err[256], word[32];
    slda_model_t *model = slda_model_alloc(p, W, 1, (p)->seed, NULL, err, sizeof err);
    if (!model) {
        fprintf(stderr, "slda_model_alloc: %s\n", err);
        exit(1);
    }
    for (uint32_t w = 0; w < W; w++) {
        int n = snprintf(word, sizeof word, "w%u", w);
        CHECK_INT(slda_vocab_put(model->vocab, w, word, (size_t)n, 0, err, sizeof err), SLDA_OK);
        slda_model_init_row(model, w);
    }
    if (p->threads > 1 && slda_model_start_threads(model, err, sizeof err) != SLDA_OK)
        exit(1);
    return model;
}

typedef struct corpus_s {
    slda_doc_t *docs;
    size_t n;
    double *phi; /* K x W true topics */
} corpus_t;

/* K topics over W words; topic k puts most of its mass on its own block of
 * W/K words plus a little everywhere. theta ~ sparse random (alpha-like). */
static inline corpus_t make_corpus(uint32_t K, uint32_t W, size_t ndocs, uint32_t len, uint64_t seed)
{
    corpus_t c = {calloc(ndocs, sizeof(slda_doc_t)), ndocs, calloc((size_t)K * W, sizeof(double))};
    slda_rng_t rng;
    slda_rng_seed(&rng, seed);
    uint32_t block = W / K;
    for (uint32_t k = 0; k < K; k++) {
        double s = 0;
        for (uint32_t w = 0; w < W; w++) {
            double v = (w / block == k ? 1.0 + slda_rng_double(&rng) : 0.01);
            c.phi[k * W + w] = v;
            s += v;
        }
        for (uint32_t w = 0; w < W; w++)
            c.phi[k * W + w] /= s;
    }
    for (size_t d = 0; d < ndocs; d++) {
        double theta[64], s = 0;
        for (uint32_t k = 0; k < K; k++) {
            double u = slda_rng_double(&rng);
            theta[k] = u * u * u * u; /* a few topics dominate each document */
            s += theta[k];
        }
        slda_doc_init(&c.docs[d]);
        char id[32];
        snprintf(id, sizeof id, "d%zu", d);
        c.docs[d].id = strdup(id);
        for (uint32_t i = 0; i < len; i++) {
            double u = slda_rng_double(&rng) * s, acc = 0;
            uint32_t k = 0;
            for (; k < K - 1; k++)
                if ((acc += theta[k]) > u)
                    break;
            double v = slda_rng_double(&rng);
            uint32_t w = 0;
            acc = 0;
            for (; w < W - 1; w++)
                if ((acc += c.phi[k * W + w]) > v)
                    break;
            slda_doc_add(&c.docs[d], w, 1);
        }
        slda_doc_finish(&c.docs[d]);
    }
    return c;
}

static inline void free_corpus(corpus_t *c)
{
    slda_docs_clear(c->docs, c->n);
    free(c->docs);
    free(c->phi);
}

static inline void train_passes(slda_model_t *model, corpus_t *c, size_t first, size_t count,
                         int passes, size_t mb)
{
    char err[256];
    for (int p = 0; p < passes; p++)
        for (size_t i = first; i < first + count; i += mb) {
            size_t n = first + count - i < mb ? first + count - i : mb;
            if (slda_model_train(model, c->docs + i, n, NULL, NULL, err, sizeof err) != SLDA_OK) {
                fprintf(stderr, "train: %s\n", err);
                slda_test_failures++;
                return;
            }
        }
}

/* Topic recovery (unit_engine.c, unit_sparse.c): K=5 topics over 100 words,
 * 1,200 training documents of 80 tokens, three passes in minibatches of 50.
 * Held-out perplexity (300 documents) must fall by a fifth and every true
 * topic be matched by a learned one within max_l1 (out of 2). Returns the
 * trained model for the caller's own checks (it destroys it). */
static inline slda_model_t *check_recovery(slda_params_t p, double max_l1, const char *what)
{
    const uint32_t K = 5, W = 100;
    corpus_t c = make_corpus(K, W, 1500, 80, 11);
    p.topics = K;
    p.corpus_tokens = 1200.0 * 80;
    slda_model_t *model = make_model(&p, W);
    double perp0, perp1;
    CHECK_INT(slda_eval_perplexity(model, c.docs + 1200, 300, 3, &perp0, NULL), SLDA_OK);
    train_passes(model, &c, 0, 1200, 3, 50);
    CHECK_INT(slda_eval_perplexity(model, c.docs + 1200, 300, 3, &perp1, NULL), SLDA_OK);
    fprintf(stderr, "%s: held-out perplexity %.2f before, %.2f after training\n", what, perp0,
            perp1);
    CHECK_LT(perp1, perp0 * 0.8);
    float *phi = malloc(sizeof(float) * K * W);
    CHECK_INT(slda_model_phi(model, phi, NULL), SLDA_OK);
    double worst = 0;
    for (uint32_t t = 0; t < K; t++) {
        double best = 2;
        for (uint32_t k = 0; k < K; k++) {
            double l1 = 0;
            for (uint32_t w = 0; w < W; w++)
                l1 += fabs(phi[k * W + w] - c.phi[t * W + w]);
            best = l1 < best ? l1 : best;
        }
        fprintf(stderr, "%s: true topic %u best L1 %.3f\n", what, t, best);
        worst = best > worst ? best : worst;
    }
    CHECK_LT(worst, max_l1);
    free(phi);
    free_corpus(&c);
    return model;
}

/* A model of p's kind (not LDA) refuses update records (replicas), the error naming the kind
 * (unit_atm.c, unit_pam.c; batch mode runs every kind: unit_batch_models.c). */
static inline void check_kind_refusals(const slda_params_t *p, const char *kind)
{
    char err[256], want[64];
    slda_model_t *m = make_model(p, 6);
    slda_update_t *upd = NULL;
    CHECK_ERR(slda_update_local(m, NULL, NULL, 0, 0, NULL, &upd, err, sizeof err),
              SLDA_ERR_INVALID, err);
    snprintf(want, sizeof want, "model.kind=%s has no update records", kind);
    CHECK_CONTAINS(err, want);
    slda_model_destroy(m);
}

#endif /* SLDA_TESTCORPUS_H */
