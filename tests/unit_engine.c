/* unit_engine.c - the stream engine: local-step variants against references,
 * the Gibbs conditional, lazy scaling, global.rows=counts row totals, determinism,
 * threads, topic recovery. */
#include "engine/model.h"
#include "testutil.h"
#include "testcorpus.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- local-step variants against a straightforward double reference ---- */

/* One initialisation plus one sweep of a pure VB variant (r = 0: no
 * sampling, so the result is deterministic), in doubles, straight from
 * docs/algorithm.md. Returns n_w gamma_w[k] into out (npairs x K). */
static void reference_vb(const slda_model_t *model, slda_vb_kind_t vb, const uint32_t *w,
                         const uint32_t *n, uint32_t np, double *out)
{
    uint32_t K = model->K;
    double f[8][16], g[8][16], nt[16] = {0}, var[16] = {0}, weta = model->W * model->p.eta;
    /* gamma starts from the variant's own word factor times alpha: the plain
     * f for CVB0/CVB, exp E[log phi] for SVB */
    for (uint32_t u = 0; u < np; u++) {
        double s = 0;
        for (uint32_t k = 0; k < K; k++) {
            double nphi = model->sigma * model->A[(size_t)w[u] * model->Kp + k];
            f[u][k] = vb == SLDA_VB_SVB ? exp(slda_digamma(nphi + model->p.eta) -
                                              slda_digamma(model->NZ[k] + weta))
                                        : (nphi + model->p.eta) / (model->NZ[k] + weta);
            s += f[u][k] * model->alpha[k];
        }
        for (uint32_t k = 0; k < K; k++) {
            g[u][k] = f[u][k] * model->alpha[k] / s;
            nt[k] += n[u] * g[u][k];
            var[k] += n[u] * g[u][k] * (1 - g[u][k]);
        }
    }
    double ed[16];
    for (uint32_t k = 0; k < K; k++)
        ed[k] = exp(slda_digamma(nt[k] + model->alpha[k]));
    for (uint32_t u = 0; u < np; u++) {
        double t[16], s = 0;
        for (uint32_t k = 0; k < K; k++) {
            double e = nt[k] - g[u][k] + model->alpha[k];
            if (vb == SLDA_VB_CVB0)
                t[k] = f[u][k] * e;
            else if (vb == SLDA_VB_CVB)
                t[k] = f[u][k] * e *
                       exp(-(var[k] - g[u][k] * (1 - g[u][k])) / (2 * e * e));
            else
                t[k] = f[u][k] * ed[k];
            s += t[k];
        }
        for (uint32_t k = 0; k < K; k++) {
            double gn = t[k] / s;
            nt[k] += n[u] * (gn - g[u][k]);
            var[k] += n[u] * (gn * (1 - gn) - g[u][k] * (1 - g[u][k]));
            g[u][k] = gn;
            out[u * K + k] = n[u] * gn;
        }
    }
}

static void test_vb_variants_against_reference(void)
{
    static const slda_vb_kind_t kinds[] = {SLDA_VB_CVB0, SLDA_VB_CVB, SLDA_VB_SVB};
    const uint32_t w[] = {1, 3, 4, 7}, n[] = {3, 2, 5, 2};
    for (size_t i = 0; i < 3; i++) {
        slda_params_t p = base_params(5);
        p.vb = kinds[i];
        p.hybrid = 0;
        p.burnin = 0;
        p.samples = 1;
        slda_model_t *model = make_model(&p, 10);
        slda_frozen_t fz;
        CHECK_INT(slda_frozen_init(&fz, model, NULL, 0), SLDA_OK);
        slda_local_t *loc = slda_local_new(model->K);
        slda_local_run(loc, &fz, w, n, 4, 1, 2, 1, NULL);
        double ref[4 * 5];
        reference_vb(model, kinds[i], w, n, 4, ref);
        double maxdiff = 0;
        for (uint32_t u = 0; u < 4; u++)
            for (uint32_t k = 0; k < 5; k++) {
                double d = fabs(loc->stats[u * loc->Kp + k] - ref[u * 5 + k]);
                maxdiff = d > maxdiff ? d : maxdiff;
            }
        fprintf(stderr, "variant %s: max |engine - reference| = %.3g\n",
                slda_local_name(kinds[i], 0), maxdiff);
        CHECK_NEAR(maxdiff, 0, 1e-4);
        slda_local_destroy(loc);
        slda_frozen_clear(&fz);
        slda_model_destroy(model);
    }
}

/* The hybrids route by the threshold: with r = 0 a hybrid is its pure VB
 * variant, and with r above every count it is CGS, bit for bit. */
static void run_stats(slda_vb_kind_t vb, int hybrid, uint32_t r, float *out)
{
    const uint32_t w[] = {0, 2, 5, 6, 9}, n[] = {1, 4, 1, 2, 3};
    slda_params_t p = base_params(6);
    p.vb = vb;
    p.hybrid = hybrid;
    p.threshold = r;
    slda_model_t *model = make_model(&p, 10);
    slda_frozen_t fz;
    CHECK_INT(slda_frozen_init(&fz, model, NULL, 0), SLDA_OK);
    slda_local_t *loc = slda_local_new(6);
    slda_local_run(loc, &fz, w, n, 5, 4, 4, 1, NULL);
    memcpy(out, loc->stats, 5 * loc->Kp * sizeof(float));
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    slda_model_destroy(model);
}

static void test_hybrid_routing(void)
{
    float a[5 * 16], b[5 * 16];
    static const slda_vb_kind_t kinds[] = {SLDA_VB_CVB0, SLDA_VB_CVB, SLDA_VB_SVB};
    for (int i = 0; i < 3; i++) {
        run_stats(kinds[i], 1, 0, a);
        run_stats(kinds[i], 0, 0, b);
        CHECK_MEM(a, b, sizeof a);
        run_stats(kinds[i], 1, 100, a);
        run_stats(SLDA_VB_NONE, 0, 0, b);
        CHECK_MEM(a, b, sizeof a);
        /* and r = 1 differs from both: singletons are sampled, the rest not */
        run_stats(kinds[i], 1, 1, a);
        CHECK_NE(memcmp(a, b, sizeof a), 0);
    }
}

/* ---- the Gibbs conditional: chi-square against the exact joint ---- */

/* Two singleton tokens (words a, b) under frozen f: the collapsed joint is
 * p(z1, z2) ∝ f_a[z1] f_b[z2] alpha_z1 (alpha_z2 + [z1 == z2]). Many
 * independent chains (seeded differently) each give one draw after burn-in;
 * their histogram must fit the exact distribution (chi-square, 15 degrees of
 * freedom, critical value 37.70 at p = 0.001). */
static void test_gibbs_conditional(void)
{
    slda_params_t p = base_params(4);
    p.vb = SLDA_VB_NONE;
    p.hybrid = 0;
    p.alpha = 0.5;
    p.burnin = 20;
    p.samples = 1;
    p.stats = SLDA_STATS_SAMPLE;
    slda_model_t *model = make_model(&p, 6);
    slda_frozen_t fz;
    CHECK_INT(slda_frozen_init(&fz, model, NULL, 0), SLDA_OK);
    slda_local_t *loc = slda_local_new(4);
    const uint32_t w[] = {2, 5}, n[] = {1, 1};
    double exact[16], total = 0, f[2][4], weta = model->W * p.eta;
    for (int u = 0; u < 2; u++)
        for (int k = 0; k < 4; k++)
            f[u][k] = (model->sigma * model->A[(size_t)w[u] * model->Kp + k] + p.eta) /
                      (model->NZ[k] + weta);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            exact[a * 4 + b] = f[0][a] * f[1][b] * p.alpha * (p.alpha + (a == b));
            total += exact[a * 4 + b];
        }
    uint32_t hist[16] = {0}, runs = 20000;
    for (uint32_t r = 0; r < runs; r++) {
        slda_local_run(loc, &fz, w, n, 2, 99, r, 1, NULL);
        int za = -1, zb = -1;
        for (int k = 0; k < 4; k++) {
            if (loc->stats[k] > 0.5f)
                za = k;
            if (loc->stats[loc->Kp + k] > 0.5f)
                zb = k;
        }
        CHECK_GE(za, 0);
        CHECK_GE(zb, 0);
        if (za >= 0 && zb >= 0)
            hist[za * 4 + zb]++;
    }
    double chi2 = 0;
    for (int c = 0; c < 16; c++) {
        double e = runs * exact[c] / total;
        chi2 += (hist[c] - e) * (hist[c] - e) / e;
    }
    fprintf(stderr, "gibbs conditional: chi-square %.2f (15 df, critical 37.70)\n", chi2);
    CHECK_LT(chi2, 37.70);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    slda_model_destroy(model);
}

/* ---- lazy scaling equals the dense update ---- */

static void test_lazy_scaling(void)
{
    slda_params_t p = base_params(7);
    p.rows = SLDA_ROWS_DECAY; /* the plain step; test_counts_rows has global.rows=counts */
    p.rho_min = 0.3; /* sigma shrinks fast: folds happen within the test */
    p.corpus_tokens = 1000;
    slda_model_t *model = make_model(&p, 40);
    uint32_t W = model->W, K = model->K, Kp = model->Kp;
    double *dense = malloc(sizeof(double) * W * K), nz[7];
    for (uint32_t w = 0; w < W; w++)
        for (uint32_t k = 0; k < K; k++)
            dense[w * K + k] = model->sigma * model->A[(size_t)w * Kp + k];
    memcpy(nz, model->NZ, sizeof nz);
    slda_accum_t *acc = slda_accum_new(W, Kp, NULL, 0);
    slda_rng_t rng;
    slda_rng_seed(&rng, 5);
    float *stats = calloc((size_t)5 * Kp, sizeof(float));
    uint32_t words[5];
    int folds = 0;
    for (int step = 0; step < 60; step++) {
        slda_accum_reset(acc);
        double ntok = 0, colsum[7] = {0};
        for (uint32_t u = 0; u < 5; u++) {
            words[u] = slda_rng_below(&rng, W);
            for (uint32_t k = 0; k < K; k++) {
                stats[u * Kp + k] = slda_rng_float(&rng) * 3;
                ntok += stats[u * Kp + k];
            }
        }
        /* a word may repeat: the accumulator must merge it */
        slda_accum_add(acc, words, stats, 5);
        double rho = slda_rho(&model->p, model->t), c = rho * 1000 / (uint64_t)ntok;
        for (uint32_t w = 0; w < W; w++)
            for (uint32_t k = 0; k < K; k++)
                dense[w * K + k] *= 1 - rho;
        for (uint32_t u = 0; u < 5; u++)
            for (uint32_t k = 0; k < K; k++) {
                dense[words[u] * K + k] += c * stats[u * Kp + k];
                colsum[k] += stats[u * Kp + k];
            }
        for (uint32_t k = 0; k < K; k++)
            nz[k] = (1 - rho) * nz[k] + c * colsum[k];
        double before = model->sigma;
        slda_global_update(model, acc, (uint64_t)ntok);
        folds += model->sigma > before;
    }
    double maxrel = 0, maxnz = 0;
    for (uint32_t w = 0; w < W; w++)
        for (uint32_t k = 0; k < K; k++) {
            double lazy = model->sigma * model->A[(size_t)w * Kp + k];
            double rel = fabs(lazy - dense[w * K + k]) / (fabs(dense[w * K + k]) + 1e-3);
            maxrel = rel > maxrel ? rel : maxrel;
        }
    for (uint32_t k = 0; k < K; k++)
        maxnz = fmax(maxnz, fabs(model->NZ[k] - nz[k]) / nz[k]);
    fprintf(stderr, "lazy scaling: %d folds, max relative difference %.3g, NZ %.3g\n", folds,
            maxrel, maxnz);
    CHECK_GE(folds, 1);
    CHECK_NEAR(maxrel, 0, 1e-4);
    CHECK_NEAR(maxnz, 0, 1e-7); /* float statistics summed in another order */
    free(stats);
    free(dense);
    slda_accum_free(acc);
    slda_model_destroy(model);
}

/* ---- global.rows=counts: the dense update in doubles, and row totals ---- */

/* One global step of global.rows=counts on a dense W x K matrix, straight from
 * global_step.c's description: rows decay by (1 - r), r = max(|M| / tokens
 * seen, rho_min); a present word's row is the plain step's new row rescaled to
 * (1 - r) R_w + r (C/|M|) n_w. x holds the minibatch statistics per word (zero
 * rows for absent words). */
static void dense_counts_step(double *dense, double *nz, const double *x, uint32_t W, uint32_t K,
                              double rho, double r, double cm)
{
    for (uint32_t w = 0; w < W; w++) {
        double R = 0, n = 0;
        for (uint32_t k = 0; k < K; k++) {
            R += dense[w * K + k];
            n += x[w * K + k];
        }
        for (uint32_t k = 0; k < K; k++) {
            double old = dense[w * K + k], now = (1 - r) * old;
            if (n > 0)
                now = ((1 - r) * R + r * cm * n) / ((1 - rho) * R + rho * cm * n) *
                      ((1 - rho) * old + rho * cm * x[w * K + k]);
            nz[k] += now - (1 - r) * old; /* nz was decayed by the caller */
            dense[w * K + k] = now;
        }
    }
}

static void test_counts_rows(void)
{
    slda_params_t p = base_params(7);
    p.rows = SLDA_ROWS_COUNTS;
    p.rho_min = 0.3; /* sigma shrinks fast (by 1 - r <= 0.7): folds happen within the test */
    p.rho_tau = 1;   /* rho_0 = 1: the first update replaces the initial rows */
    p.rho_s = 2;     /* rho_t = 2 (1 + t)^-0.5 stays above r = 0.3 for 40 updates, so the
                        rescaling matters (with rho_t = r it is the plain step) */
    p.rho_kappa = 0.5;
    p.corpus_tokens = 1000;
    slda_model_t *model = make_model(&p, 40);
    uint32_t W = model->W, K = model->K, Kp = model->Kp;
    double *dense = calloc((size_t)W * K, sizeof(double)), *x = calloc((size_t)W * K, sizeof(double));
    double nz[7] = {0};
    slda_accum_t *acc = slda_accum_new(W, Kp, NULL, 0);
    slda_rng_t rng;
    slda_rng_seed(&rng, 5);
    float *stats = calloc((size_t)5 * Kp, sizeof(float));
    uint32_t words[5];
    int folds = 0;
    for (int step = 0; step < 60; step++) {
        slda_accum_reset(acc);
        memset(x, 0, (size_t)W * K * sizeof(double));
        double ntok = 0;
        for (uint32_t u = 0; u < 5; u++) {
            words[u] = slda_rng_below(&rng, W);
            for (uint32_t k = 0; k < K; k++) {
                stats[u * Kp + k] = slda_rng_float(&rng) * 3;
                ntok += stats[u * Kp + k];
                x[words[u] * K + k] += stats[u * Kp + k]; /* a repeated word merges */
            }
        }
        slda_accum_add(acc, words, stats, 5);
        uint64_t n = (uint64_t)ntok;
        double rho = slda_rho(&model->p, model->t);
        double r = fmax((double)n / (double)(model->tokens + n), p.rho_min);
        if (step == 0)
            memset(dense, 0, (size_t)W * K * sizeof(double)); /* r = 1: initial rows go */
        for (uint32_t k = 0; k < K; k++)
            nz[k] *= 1 - r;
        dense_counts_step(dense, nz, x, W, K, rho, r, 1000.0 / (double)n);
        double before = model->sigma;
        slda_global_update(model, acc, n);
        model->tokens += n; /* as slda_model_train does after the update */
        folds += model->sigma > before;
    }
    double maxrel = 0, maxnz = 0;
    for (uint32_t w = 0; w < W; w++)
        for (uint32_t k = 0; k < K; k++) {
            double lazy = model->sigma * model->A[(size_t)w * Kp + k];
            double rel = fabs(lazy - dense[w * K + k]) / (fabs(dense[w * K + k]) + 1e-3);
            maxrel = rel > maxrel ? rel : maxrel;
        }
    for (uint32_t k = 0; k < K; k++)
        maxnz = fmax(maxnz, fabs(model->NZ[k] - nz[k]) / nz[k]);
    fprintf(stderr, "counts rows: %d folds, max relative difference %.3g, NZ %.3g\n", folds,
            maxrel, maxnz);
    CHECK_GE(folds, 1);
    CHECK_NEAR(maxrel, 0, 1e-4);
    CHECK_NEAR(maxnz, 0, 1e-6);
    free(stats);
    free(dense);
    free(x);
    slda_accum_free(acc);
    slda_model_destroy(model);
}

/* With global.rows=counts and no forgetting, a word's row total is C times its
 * share of the tokens trained on, however long ago it was seen: here w0 occurs
 * only in the first of 40 minibatches and w1 in every one, with the same total
 * count, so their rows must end with equal totals. The plain step (decay)
 * leaves w0 with (1 - rho) per update of it - nearly nothing - and gives w1
 * the recency-weighted guess; this test fails on it. */
static void test_counts_rows_keep_rare_words(void)
{
    for (int rows = SLDA_ROWS_COUNTS; rows <= SLDA_ROWS_DECAY; rows++) {
        slda_params_t p = base_params(4);
        p.rows = (slda_rows_kind_t)rows;
        p.rho_tau = 1;
        p.corpus_tokens = 4000;
        slda_model_t *model = make_model(&p, 8);
        uint32_t Kp = model->Kp;
        slda_accum_t *acc = slda_accum_new(model->W, Kp, NULL, 0);
        float stats[3 * 16] = {0};
        for (int step = 0; step < 40; step++) {
            /* step 0: w0 40 tokens, w1 1, w2 59; later steps: w1 1 token, w2 99 */
            uint32_t words0[3] = {0, 1, 2}, words1[2] = {1, 2};
            float per0[3] = {10.0f, 0.25f, 14.75f}, per1[2] = {0.25f, 24.75f};
            uint32_t nw = step == 0 ? 3 : 2;
            memset(stats, 0, sizeof stats);
            for (uint32_t u = 0; u < nw; u++)
                for (uint32_t k = 0; k < 4; k++)
                    stats[u * Kp + k] = step == 0 ? per0[u] : per1[u];
            slda_accum_reset(acc);
            slda_accum_add(acc, step == 0 ? words0 : words1, stats, nw);
            slda_global_update(model, acc, 100);
            model->tokens += 100; /* as slda_model_train does after the update */
        }
        double tot[3] = {0}, nzsum = 0;
        for (uint32_t w = 0; w < 3; w++)
            for (uint32_t k = 0; k < 4; k++)
                tot[w] += model->sigma * model->A[(size_t)w * Kp + k];
        for (uint32_t k = 0; k < 4; k++)
            nzsum += model->NZ[k];
        fprintf(stderr, "rows=%s: row totals w0 %.2f w1 %.2f w2 %.2f, NZ %.2f (4000 tokens)\n",
                rows == SLDA_ROWS_COUNTS ? "counts" : "decay", tot[0], tot[1], tot[2], nzsum);
        if (rows == SLDA_ROWS_COUNTS) {
            /* 40 of 4000 tokens each: C * 40 / 4000 = 40 */
            CHECK_NEAR(tot[0], 40, 1e-3);
            CHECK_NEAR(tot[1], 40, 1e-3);
            CHECK_NEAR(tot[0] + tot[1] + tot[2], 4000, 1e-2);
            CHECK_NEAR(nzsum, 4000, 1e-2);
        } else {
            CHECK_LT(tot[0], 10); /* the plain step all but forgets the early word */
        }
        slda_accum_free(acc);
        slda_model_destroy(model);
    }
}

/* ---- a synthetic corpus from a known LDA ---- */

/* Every true topic is matched by a learned one within L1 distance 0.25
 * (out of 2). */
static void test_topic_recovery(void)
{
    slda_model_destroy(check_recovery(base_params(5), 0.25, "recovery"));
}

/* Same seed and input give the same model bit for bit, and threads=2
 * gives what threads=1 gives. */
static void test_determinism_and_threads(void)
{
    corpus_t c = make_corpus(4, 60, 300, 40, 5);
    slda_model_t *m[3];
    for (int i = 0; i < 3; i++) {
        slda_params_t p = base_params(4);
        p.threads = i == 2 ? 2 : 1;
        p.alpha_learn = SLDA_ALPHA_FIXEDPOINT;
        m[i] = make_model(&p, 60);
        train_passes(m[i], &c, 0, 300, 1, 32);
    }
    size_t bytes = (size_t)m[0]->W * m[0]->Kp * sizeof(float);
    CHECK_MEM(m[0]->A, m[1]->A, bytes);
    CHECK_MEM(m[0]->A, m[2]->A, bytes);
    CHECK_MEM(m[0]->NZ, m[2]->NZ, 4 * sizeof(double));
    CHECK_MEM(m[0]->alpha, m[2]->alpha, 4 * sizeof(double));
    CHECK_EQ(m[0]->sigma, m[2]->sigma);
    CHECK_INT(slda_model_docs(m[2]), 300);
    /* alpha learning moved alpha away from its start */
    CHECK_GT(fabs(m[0]->alpha[0] - 0.1), 1e-4);
    for (int i = 0; i < 3; i++)
        slda_model_destroy(m[i]);
    free_corpus(&c);
}

/* global.stale=1 (train.c's pipeline): the local steps of a minibatch run
 * while the previous one's update is prepared, and the model is the same bit
 * for bit with 1, 2 and 3 threads; the last update waits until
 * slda_model_flush; and it is another model than global.stale=0 (the
 * pipeline is in effect). */
static void test_pipeline_threads(void)
{
    corpus_t c = make_corpus(5, 80, 400, 40, 6);
    slda_model_t *m[4];
    for (int i = 0; i < 4; i++) {
        slda_params_t p = base_params(5);
        p.threads = i < 3 ? (uint32_t)i + 1 : 1;
        p.stale = i < 3;
        p.alpha_learn = SLDA_ALPHA_FIXEDPOINT;
        m[i] = make_model(&p, 80);
        train_passes(m[i], &c, 0, 400, 1, 16);
    }
    /* 25 minibatches: the last update is still pending with global.stale=1 */
    CHECK_INT(slda_model_updates(m[0]), 24);
    CHECK_INT(slda_model_updates(m[3]), 25);
    for (int i = 0; i < 3; i++) {
        CHECK_GT(slda_model_flush(m[i]), 0);
        CHECK_EQ(slda_model_flush(m[i]), 0); /* nothing left */
        CHECK_INT(slda_model_updates(m[i]), 25);
    }
    size_t bytes = (size_t)m[0]->W * m[0]->Kp * sizeof(float);
    for (int i = 1; i < 3; i++) {
        CHECK_MEM(m[0]->A, m[i]->A, bytes);
        CHECK_MEM(m[0]->NZ, m[i]->NZ, 5 * sizeof(double));
        CHECK_MEM(m[0]->alpha, m[i]->alpha, 5 * sizeof(double));
        CHECK_EQ(m[0]->sigma, m[i]->sigma);
    }
    CHECK_NE(memcmp(m[0]->A, m[3]->A, bytes), 0);
    for (int i = 0; i < 4; i++)
        slda_model_destroy(m[i]);
    free_corpus(&c);
}

/* The first update forgets every initial row (global_step.c, forget_all),
 * clearing A in 2 MB pieces on the pool: with 2 and 3 threads a matrix of
 * 6001 x 104 floats (a whole piece and a partial one) ends as with one
 * thread, and a row in the last partial piece that the update does not touch
 * is zero (fails when the last piece is left out). */
static void test_forget_all_pieces(void)
{
    slda_model_t *m[3];
    uint32_t W = 6001, words[3] = {0, 3000, 17};
    for (int i = 0; i < 3; i++) {
        slda_params_t p = base_params(100);
        p.rows = SLDA_ROWS_COUNTS;
        p.threads = (uint32_t)i + 1;
        p.corpus_tokens = 1000;
        m[i] = make_model(&p, W);
        uint32_t Kp = m[i]->Kp;
        CHECK_NE(m[i]->A[(size_t)(W - 1) * Kp], 0); /* initial rows are random */
        float *stats = calloc((size_t)3 * Kp, sizeof(float));
        for (uint32_t u = 0; u < 3; u++)
            for (uint32_t k = 0; k < 100; k++)
                stats[u * Kp + k] = (float)(1 + (u + k) % 3);
        slda_accum_t *acc = slda_accum_new(W, Kp, NULL, 0);
        slda_accum_add(acc, words, stats, 3);
        slda_global_update(m[i], acc, 600); /* nothing seen before: r = 1, all forgotten */
        slda_accum_free(acc);
        free(stats);
    }
    size_t bytes = (size_t)W * m[0]->Kp * sizeof(float);
    CHECK_GT(bytes, ((size_t)1 << 21));
    CHECK_NE(bytes % ((size_t)1 << 21), 0);
    for (uint32_t k = 0; k < m[0]->Kp; k++)
        CHECK_EQ(m[2]->A[(size_t)(W - 1) * m[2]->Kp + k], 0);
    CHECK_NE(m[0]->A[(size_t)3000 * m[0]->Kp], 0);
    for (int i = 1; i < 3; i++) {
        CHECK_MEM(m[0]->A, m[i]->A, bytes);
        CHECK_MEM(m[0]->NZ, m[i]->NZ, 100 * sizeof(double));
    }
    for (int i = 0; i < 3; i++)
        slda_model_destroy(m[i]);
}

/* slda_model_top_words_all (one pass over the rows, a filter on each
 * topic's current last value) gives every topic the list slda_model_top_words
 * gives it: random rows, rows tied with each other (a later word ties behind
 * an earlier one), a tiny scale where eta makes every probability nearly the
 * same, lists longer than the vocabulary. */
static void test_top_words_all(void)
{
    slda_params_t p = base_params(7);
    slda_model_t *model = make_model(&p, 300);
    uint32_t K = model->K, Kp = model->Kp, ids[7 * 400], one[400];
    float probs[7 * 400], pone[400];
    size_t have[7];
    for (int round = 0; round < 3; round++) {
        if (round == 1) /* ties: rows 100..199 repeat rows 0..99 */
            memcpy(model->A + (size_t)100 * Kp, model->A, (size_t)100 * Kp * sizeof(float));
        if (round == 2)
            model->sigma = 1e-7;
        size_t sizes[4] = {1, 3, 20, 400};
        for (int si = 0; si < 4; si++) {
            size_t n = sizes[si];
            slda_model_top_words_all(model, n, ids, probs, have);
            for (uint32_t k = 0; k < K; k++) {
                size_t m = slda_model_top_words(model, k, n, one, pone);
                CHECK_INT(have[k], m);
                for (size_t i = 0; i < m && i < have[k]; i++) {
                    CHECK_INT(ids[k * n + i], one[i]);
                    CHECK_EQ(probs[k * n + i], pone[i]);
                }
            }
        }
    }
    slda_model_destroy(model);
}

/* Empty documents are skipped and counted, not trained on. */
static void test_empty_documents(void)
{
    slda_params_t p = base_params(3);
    slda_model_t *model = make_model(&p, 10);
    slda_doc_t docs[2];
    slda_doc_init(&docs[0]);
    slda_doc_init(&docs[1]);
    slda_doc_add(&docs[1], 3, 2);
    slda_doc_finish(&docs[1]);
    slda_train_stats_t st;
    char err[128];
    CHECK_INT(slda_model_train(model, docs, 2, NULL, &st, err, sizeof err), SLDA_OK);
    CHECK_INT(st.docs, 1);
    CHECK_INT(st.skipped_empty, 1);
    CHECK_INT(st.tokens, 2);
    /* an out-of-range word id is refused before anything changes */
    docs[1].word[0] = 99;
    CHECK_INT(slda_model_train(model, docs, 2, NULL, &st, err, sizeof err), SLDA_ERR_RANGE);
    CHECK_CONTAINS(err, "out of range");
    CHECK_INT(slda_model_updates(model), 1);
    /* counts that do not add up to ntokens, or more than SLDA_MAX_DOC_TOKENS */
    docs[1].word[0] = 3;
    docs[1].ntokens = 7;
    CHECK_INT(slda_model_train(model, docs, 2, NULL, &st, err, sizeof err), SLDA_ERR_RANGE);
    CHECK_CONTAINS(err, "not the sum of its counts");
    docs[1].count[0] = SLDA_MAX_DOC_TOKENS + 1;
    docs[1].ntokens = SLDA_MAX_DOC_TOKENS + 1;
    CHECK_INT(slda_model_train(model, docs, 2, NULL, &st, err, sizeof err), SLDA_ERR_RANGE);
    CHECK_CONTAINS(err, "over the limit");
    CHECK_INT(slda_model_updates(model), 1);
    slda_docs_clear(docs, 2);
    slda_model_destroy(model);
}

/* ---- small eta: every variant stays finite, learns and keeps every token ---- */

/* eta = 0.001 puts exp(psi(eta)) = exp(-1000) in SVB's word factor of any
 * topic where the word has no counts: beyond float and double range (and
 * eta = 0.0125, exp(-80), into float's denormals). With rho_0 = 1 (tau = 1)
 * every row no document has touched yet is exactly zero, as a new word's
 * row is in an open vocabulary: the first 120 documents here use only the
 * first half of the vocabulary, so the other half arrives with zero rows.
 * Each variant must give a finite held-out perplexity well below the
 * uniform model's (W) and the untrained model's, close to what it reaches
 * with eta = 0.1, and lose no token: with rho_0 = 1, sum_k NZ[k] stays
 * exactly C when every minibatch's statistics add up to its tokens. */
static void test_small_eta(void)
{
    static const struct {
        slda_vb_kind_t vb;
        int hybrid;
    } variants[] = {{SLDA_VB_NONE, 0}, {SLDA_VB_CVB0, 0}, {SLDA_VB_CVB, 0}, {SLDA_VB_SVB, 0},
                    {SLDA_VB_CVB0, 1}, {SLDA_VB_CVB, 1},  {SLDA_VB_SVB, 1}};
    static const double etas[3] = {0.1, 0.0125, 0.001};
    const uint32_t K = 6, W = 120;
    corpus_t c = make_corpus(K, W, 700, 60, 17);
    for (size_t d = 0; d < 120; d++) { /* words W/2.. first appear in document 120 */
        slda_doc_t *doc = &c.docs[d];
        uint32_t n = 0;
        doc->ntokens = 0;
        for (uint32_t u = 0; u < doc->npairs; u++)
            if (doc->word[u] < W / 2) {
                doc->word[n] = doc->word[u];
                doc->count[n] = doc->count[u];
                doc->ntokens += doc->count[n++];
            }
        doc->npairs = n;
    }
    for (size_t v = 0; v < 3 * sizeof variants / sizeof variants[0]; v++) {
        slda_params_t p = base_params(K);
        p.vb = variants[v / 3].vb;
        p.hybrid = variants[v / 3].hybrid;
        p.eta = etas[v % 3];
        p.rho_tau = 1;
        p.corpus_tokens = 600.0 * 60;
        slda_model_t *model = make_model(&p, W);
        double perp = NAN, perp0 = NAN, lost = 0;
        static double ref; /* the variant's perplexity with eta = 0.1 */
        char err[256];
        slda_eval_perplexity(model, c.docs + 600, 100, 3, &perp0, NULL);
        for (size_t i = 0; i < 600; i += 20) {
            CHECK_INT(slda_model_train(model, c.docs + i, 20, NULL, NULL, err, sizeof err),
                      SLDA_OK);
            double total = 0;
            for (uint32_t k = 0; k < K; k++)
                total += model->NZ[k];
            lost = fmax(lost, fabs(total - p.corpus_tokens) / p.corpus_tokens);
        }
        slda_eval_perplexity(model, c.docs + 600, 100, 3, &perp, NULL);
        fprintf(stderr, "eta=%-5g %-8s: held-out perplexity %.2f (untrained %.2f, uniform %u), "
                "largest |sum NZ - C| / C %.2g\n", p.eta, slda_local_name(p.vb, p.hybrid), perp,
                perp0, W, lost);
        CHECK_TRUE(isfinite(perp) && perp < 0.8 * W && perp < 0.8 * perp0,
                   "perplexity %g, untrained %g, uniform %u", perp, perp0, W);
        if (v % 3)
            CHECK_LT(perp, 1.25 * ref);
        else
            ref = perp;
        CHECK_NEAR(lost, 0, 1e-4);
        slda_model_destroy(model);
    }
    free_corpus(&c);
}

/* ---- alpha: fixed point and Newton find the same, known optimum ---- */

static double normal_draw(slda_rng_t *rng)
{
    double u = slda_rng_double(rng), v = slda_rng_double(rng);
    return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* Gamma(a, 1) (Marsaglia & Tsang 2000; a < 1 through Gamma(a + 1) U^(1/a)). */
static double gamma_draw(slda_rng_t *rng, double a)
{
    if (a < 1)
        return gamma_draw(rng, a + 1) * pow(slda_rng_double(rng) + 1e-300, 1 / a);
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal_draw(rng), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = slda_rng_double(rng);
        if (log(u + 1e-300) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* Documents drawn from a known Dirichlet: theta_j ~ Dir(alpha_true), then L
 * tokens from theta_j. The likelihood's maximum (found by running Minka's
 * fixed point to convergence) must be reached by the safeguarded Newton from
 * starts on both sides, including far ones where a plain Newton step leaves
 * the positive orthant; and with 1500 documents it lies near alpha_true. */
static void test_alpha_newton(void)
{
    enum { K = 5, ND = 1500, L = 60 };
    const double truth[K] = {0.05, 0.2, 0.5, 1.0, 3.0};
    float *nt = calloc((size_t)ND * K, sizeof *nt);
    uint32_t len[ND];
    slda_rng_t rng;
    slda_rng_seed(&rng, 2024);
    for (size_t j = 0; j < ND; j++) {
        double th[K], s = 0;
        for (int k = 0; k < K; k++)
            s += th[k] = gamma_draw(&rng, truth[k]);
        for (int i = 0; i < L; i++) {
            double u = slda_rng_double(&rng) * s, acc = 0;
            int k = 0;
            while (k < K - 1 && (acc += th[k]) <= u)
                k++;
            nt[j * K + k] += 1;
        }
        len[j] = L;
    }
    double opt[K] = {1, 1, 1, 1, 1};
    slda_alpha_estimate(SLDA_ALPHA_FIXEDPOINT, opt, K, nt, len, ND, 100000);
    for (int k = 0; k < K; k++) {
        fprintf(stderr, "alpha[%d]: true %.3f, maximum likelihood %.5f\n", k, truth[k], opt[k]);
        CHECK_NEAR(opt[k], truth[k], 0.15 * truth[k]);
    }
    const double starts[] = {1.0, 0.01, 30.0, 0.1};
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
        double a[K];
        for (int k = 0; k < K; k++)
            a[k] = starts[s];
        slda_alpha_estimate(SLDA_ALPHA_NEWTON, a, K, nt, len, ND, 100);
        double worst = 0;
        for (int k = 0; k < K; k++)
            worst = fmax(worst, fabs(a[k] - opt[k]) / opt[k]);
        fprintf(stderr, "newton from %g: largest relative distance to the maximum %.3g\n",
                starts[s], worst);
        CHECK_NEAR(worst, 0, 1e-6);
    }
    free(nt);
}

/* slda_doc_finish sorts by word id and merges repeated ids (adding counts):
 * short documents by insertion, long ones by a radix sort on the id. Against a
 * reference (counts summed per id, ids in order) for lengths around the switch
 * and ids that set 1 to 4 bytes. */
static void test_doc_finish_sort(void)
{
    static const uint32_t lens[] = {0, 1, 2, 63, 64, 65, 66, 200, 1000, 5000};
    static const uint32_t spans[] = {3, 250, 70000, 20000000, 4000000000u};
    uint64_t rng = 12345;
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        for (size_t si = 0; si < sizeof spans / sizeof *spans; si++) {
            uint32_t n = lens[li], span = spans[si];
            slda_doc_t doc;
            slda_doc_init(&doc);
            uint32_t *ids = malloc((n + 1) * sizeof *ids), *counts = malloc((n + 1) * sizeof *counts);
            uint64_t want_tokens = 0;
            for (uint32_t i = 0; i < n; i++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                ids[i] = (uint32_t)((rng >> 33) % span);
                counts[i] = 1 + (uint32_t)((rng >> 20) % 5);
                slda_doc_add(&doc, ids[i], counts[i]);
                want_tokens += counts[i];
            }
            slda_doc_finish(&doc);
            /* reference: distinct ids in increasing order, each with its summed count,
             * covering every pair added */
            int ok = doc.ntokens == want_tokens;
            uint32_t covered = 0;
            for (uint32_t u = 0; u < doc.npairs; u++) {
                if (u > 0 && doc.word[u - 1] >= doc.word[u])
                    ok = 0;
                uint32_t sum = 0;
                for (uint32_t i = 0; i < n; i++)
                    if (ids[i] == doc.word[u])
                        sum += counts[i], covered++;
                if (sum == 0 || sum != doc.count[u])
                    ok = 0;
            }
            if (covered != n)
                ok = 0;
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "doc_finish: n=%u span=%u: npairs %u tokens %u (want %llu)\n", n,
                        span, doc.npairs, doc.ntokens, (unsigned long long)want_tokens);
            free(ids);
            free(counts);
            slda_doc_clear(&doc);
        }
    }
}

/* pool.c's claims: 20,000 hand-overs of 0 to 9 items on 3 threads, some
 * after a pause longer than a worker polls (so it blocks and may wake after
 * the job is done, then claim from a later one): every item runs exactly once,
 * on a valid worker, and its plain (non-atomic) result is seen by the caller
 * when the hand-over returns; the caller's pre task runs once per hand-over. */
typedef struct pool_probe_s {
    atomic_int runs[9];
    uint32_t out[9];
    uint32_t round;
    int pre;
    atomic_int bad_worker;
} pool_probe_t;

static void pool_probe_item(size_t i, uint32_t worker, void *opaque)
{
    pool_probe_t *pr = opaque;
    if (worker >= 3)
        atomic_store(&pr->bad_worker, 1);
    volatile uint32_t spin = 0; /* items of unequal length */
    for (uint32_t j = 0; j < (uint32_t)(i * 50); j++)
        spin += j;
    pr->out[i] = pr->round * 16 + (uint32_t)i;
    atomic_fetch_add(&pr->runs[i], 1);
}

static void pool_probe_pre(void *opaque)
{
    ((pool_probe_t *)opaque)->pre++;
}

static void pool_claims_rounds(slda_model_t *model)
{
    pool_probe_t pr;
    memset(&pr, 0, sizeof pr);
    int wrong = 0;
    for (uint32_t r = 0; r < 20000; r++) {
        size_t n = r % 10;
        pr.round = r;
        pr.pre = 0;
        for (size_t i = 0; i < 9; i++)
            atomic_store(&pr.runs[i], 0);
        if (r % 97 == 0) {
            struct timespec ts = {0, 400000}; /* 0.4 ms: the workers block */
            nanosleep(&ts, NULL);
        }
        slda_pool_run_pre(model->pool, n, pool_probe_item, pool_probe_pre, &pr);
        wrong += pr.pre != 1;
        for (size_t i = 0; i < 9; i++) {
            int want = i < n;
            wrong += atomic_load(&pr.runs[i]) != want;
            wrong += want && pr.out[i] != r * 16 + i;
        }
    }
    CHECK_INT(wrong, 0);
    CHECK_INT(atomic_load(&pr.bad_worker), 0);
}

static void test_pool_claims(void)
{
    slda_params_t p = base_params(5);
    p.threads = 3;
    slda_model_t *model = make_model(&p, 10);
    pool_claims_rounds(model);
    slda_model_destroy(model);
}

/* More threads than CPUs: the pool's threads block at once instead of
 * polling (a poller holds the CPU a thread with work needs), and the
 * protocol holds. Fewer or as many: they poll. */
static void test_pool_oversubscribed(void)
{
    cpu_set_t all, one;
    CHECK_INT(sched_getaffinity(0, sizeof all, &all), 0);
    int ncpu = CPU_COUNT(&all), first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CHECK_INT(sched_setaffinity(0, sizeof one, &one), 0); /* the workers inherit it */
    slda_params_t p = base_params(5);
    p.threads = 2;
    slda_model_t *model = make_model(&p, 10);
    CHECK_INT(slda_pool_spins(model->pool), 0);
    pool_claims_rounds(model);
    slda_model_destroy(model);
    CHECK_INT(sched_setaffinity(0, sizeof all, &all), 0);
    model = make_model(&p, 10);
    CHECK_INT(slda_pool_spins(model->pool), ncpu >= 2);
    slda_model_destroy(model);
}

int main(void)
{
    test_vb_variants_against_reference();
    test_hybrid_routing();
    test_gibbs_conditional();
    test_lazy_scaling();
    test_counts_rows();
    test_counts_rows_keep_rare_words();
    test_topic_recovery();
    test_determinism_and_threads();
    test_pipeline_threads();
    test_pool_claims();
    test_pool_oversubscribed();
    test_forget_all_pieces();
    test_top_words_all();
    test_empty_documents();
    test_small_eta();
    test_alpha_newton();
    test_doc_finish_sort();
    return slda_test_done("unit_engine");
}
