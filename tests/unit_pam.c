/* unit_pam.c - 4-level pachinko allocation (model.kind=pam, engine/pam.c, docs/models.md): the
 * local step's statistics against the exact posterior of a tiny document, the fixed-point step
 * of the super-topics' priors recovering a known Dirichlet, determinism over thread counts, a
 * snapshot that trains on bit for bit, and what the kind refuses. */
#include "testutil.h"
#include "testcorpus.h"
#include "engine/batch.h"
#include "engine/local.h"
#include "engine/pam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SS 2 /* super-topics of the exact check */
#define KK 2 /* sub-topics */

static slda_params_t pam_params(uint32_t S, uint32_t K)
{
    slda_params_t p = base_params(K);
    p.kind = SLDA_KIND_PAM;
    p.pam_super = S;
    p.pam_alpha_step = 0.1;
    p.pam_alpha_warmup = 50;
    p.vocab_capacity = 1024;
    return p;
}

static double phi_of(const slda_model_t *m, uint32_t w, uint32_t k)
{
    double weta = m->W * m->p.eta;
    return (m->sigma * m->A[(size_t)w * m->Kp + k] + m->p.eta) / (m->NZ[k] + weta);
}

/* The local step samples each token's (super, sub) pair; its statistics (the sub-topic
 * marginals, Rao-Blackwellised) average to the exact marginals of the collapsed posterior
 * p(x, y | w) of three tokens: Polya urns over the super-topics (alpha0) and, inside each,
 * over the sub-topics (alpha_x), times the frozen topics. */
static void test_local_exact(void)
{
    slda_params_t p = pam_params(SS, KK);
    p.vb = SLDA_VB_NONE;
    p.hybrid = 0;
    p.burnin = 5;
    p.samples = 10;
    slda_model_t *m = make_model(&p, 4);
    double *al = slda_pam_alpha(m->pam);
    const double set[SS * KK] = {0.8, 0.2, 0.1, 0.6}; /* two unlike super-topics */
    memcpy(al, set, sizeof set);
    const uint32_t tok[3] = {1, 2, 3}, ones[3] = {1, 1, 1};
    double a0 = slda_pam_alpha0(m->pam), want[3][KK] = {{0}}, total = 0;
    for (uint32_t s = 0; s < 64; s++) {
        uint32_t x[3], y[3], cx[SS] = {0}, cxy[SS][KK] = {{0}};
        double pr = 1;
        for (int i = 0; i < 3; i++) {
            uint32_t c = (s >> (2 * i)) & 3;
            x[i] = c / KK;
            y[i] = c % KK;
            double A = set[x[i] * KK] + set[x[i] * KK + 1];
            pr *= (cx[x[i]] + a0) / (i + SS * a0) *
                  (cxy[x[i]][y[i]] + set[x[i] * KK + y[i]]) / (cx[x[i]] + A) *
                  phi_of(m, tok[i], y[i]);
            cx[x[i]]++;
            cxy[x[i]][y[i]]++;
        }
        total += pr;
        for (int i = 0; i < 3; i++)
            want[i][y[i]] += pr;
    }
    slda_frozen_t fz;
    CHECK_INT(slda_frozen_init(&fz, m, NULL, 0), SLDA_OK);
    slda_local_t *loc = slda_local_new(KK);
    double got[3][KK] = {{0}};
    uint32_t runs = 3000;
    for (uint32_t r = 0; r < runs; r++) {
        slda_pam_run(loc, &fz, m->pam, tok, ones, 3, 1, r, 1, NULL, NULL);
        for (int i = 0; i < 3; i++)
            for (uint32_t k = 0; k < KK; k++)
                got[i][k] += loc->stats[(size_t)i * loc->Kp + k];
    }
    double worst = 0;
    for (int i = 0; i < 3; i++)
        for (uint32_t k = 0; k < KK; k++) {
            double d = fabs(got[i][k] / runs - want[i][k] / total);
            worst = d > worst ? d : worst;
        }
    fprintf(stderr, "pam local step: largest error of a token's sub-topic marginal %.4f\n",
            worst);
    CHECK_LT(worst, 0.02);
    /* theta sums to 1 and the document's counts come back */
    float theta[KK], nxy[SS * KK];
    slda_pam_run(loc, &fz, m->pam, tok, ones, 3, 1, 0, 0, theta, nxy);
    CHECK_NEAR(theta[0] + theta[1], 1.0, 1e-5);
    CHECK_NEAR(nxy[0] + nxy[1] + nxy[2] + nxy[3], 3.0, 1e-4);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    slda_model_destroy(m);
}

/* The fixed-point step recovers the Dirichlet the documents' counts were drawn from. */
static void test_alpha_step(void)
{
    const uint32_t K = 3, D = 3000, N = 40;
    const double truth[3] = {2.0, 0.5, 0.25};
    slda_pam_t *pam = slda_pam_new(1, K, 0.3, 1);
    slda_pam_schedule(pam, 1.0, 0);
    float *nxy = calloc((size_t)D * K, sizeof *nxy);
    slda_rng_t rng;
    slda_rng_seed(&rng, 4);
    for (uint32_t d = 0; d < D; d++) {
        double th[3], s = 0; /* a Dirichlet draw through gammas (shape >= 0.25: Marsaglia-Tsang
                                with the boost) */
        for (uint32_t k = 0; k < K; k++) {
            double a = truth[k] < 1 ? truth[k] + 1 : truth[k], dd = a - 1.0 / 3, c = 1 / sqrt(9 * dd), g;
            for (;;) {
                double u1 = slda_rng_double(&rng), u2 = slda_rng_double(&rng);
                double z = sqrt(-2 * log(u1 + 1e-300)) * cos(6.283185307179586 * u2);
                double v = pow(1 + c * z, 3);
                if (v <= 0)
                    continue;
                double u = slda_rng_double(&rng);
                if (log(u + 1e-300) < 0.5 * z * z + dd - dd * v + dd * log(v)) {
                    g = dd * v;
                    break;
                }
            }
            if (truth[k] < 1)
                g *= pow(slda_rng_double(&rng) + 1e-300, 1 / truth[k]);
            th[k] = g;
            s += g;
        }
        for (uint32_t i = 0; i < N; i++) {
            double u = slda_rng_double(&rng) * s, acc = 0;
            uint32_t k = 0;
            for (; k < K - 1; k++)
                if ((acc += th[k]) > u)
                    break;
            nxy[(size_t)d * K + k] += 1;
        }
    }
    for (int it = 0; it < 300; it++)
        slda_pam_step(pam, nxy, D, 1.0, 1000);
    const double *al = slda_pam_alpha_c(pam);
    fprintf(stderr, "pam alpha step: %.3f %.3f %.3f (truth 2, 0.5, 0.25)\n", al[0], al[1], al[2]);
    for (uint32_t k = 0; k < K; k++)
        CHECK_NEAR(al[k], truth[k], 0.12 * truth[k]);
    /* before the warm-up, nothing moves */
    slda_pam_schedule(pam, 1.0, 2000);
    double before = al[0];
    slda_pam_step(pam, nxy, D, 1.0, 1000);
    CHECK_EQ(al[0], before);
    free(nxy);
    slda_pam_free(pam);
}

/* 1 and 2 threads: the same model and priors bit for bit; a snapshot (version 2, with the
 * priors) trains on as the model that never stopped. */
static void test_threads_snapshot(void)
{
    corpus_t c = make_corpus(4, 80, 300, 30, 5);
    slda_model_t *m[2];
    for (int i = 0; i < 2; i++) {
        slda_params_t p = pam_params(3, 4);
        p.threads = (uint32_t)i + 1;
        p.pam_alpha_warmup = 2;
        p.corpus_tokens = 300.0 * 30;
        m[i] = make_model(&p, 80);
        train_passes(m[i], &c, 0, 200, 1, 16);
        slda_model_flush(m[i]);
    }
    CHECK_MEM(m[0]->A, m[1]->A, (size_t)m[0]->W * m[0]->Kp * sizeof(float));
    CHECK_MEM(slda_pam_alpha_c(m[0]->pam), slda_pam_alpha_c(m[1]->pam), 12 * sizeof(double));
    void *buf = NULL;
    size_t len = 0;
    char err[512];
    slda_err_t code;
    CHECK_OK(slda_snapshot_encode(m[0], &buf, &len, err, sizeof err), err);
    CHECK(len > 12 && ((unsigned char *)buf)[11] == 2);
    slda_model_t *back = slda_snapshot_decode(buf, len, &code, err, sizeof err);
    if (!back)
        fprintf(stderr, "decode: %s\n", err);
    CHECK_NONNULL(back);
    if (back) {
        CHECK_MEM(slda_pam_alpha_c(m[0]->pam), slda_pam_alpha_c(back->pam), 12 * sizeof(double));
        train_passes(m[0], &c, 200, 100, 1, 16);
        train_passes(back, &c, 200, 100, 1, 16);
        slda_model_flush(m[0]);
        slda_model_flush(back);
        CHECK_MEM(m[0]->A, back->A, (size_t)m[0]->W * m[0]->Kp * sizeof(float));
        CHECK_MEM(slda_pam_alpha_c(m[0]->pam), slda_pam_alpha_c(back->pam), 12 * sizeof(double));
        slda_model_destroy(back);
    }
    free(buf);
    double perp;
    CHECK_INT(slda_eval_perplexity(m[0], c.docs + 200, 100, 3, &perp, NULL), SLDA_OK);
    CHECK(isfinite(perp) && perp > 1 && perp < 80);
    for (int i = 0; i < 2; i++)
        slda_model_destroy(m[i]);
    free_corpus(&c);
}

static void test_refusals(void)
{
    char err[256];
    slda_params_t p = pam_params(0, 4);
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "pam.super");
    p = pam_params(3, 4);
    p.alpha_learn = SLDA_ALPHA_NEWTON;
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "model.kind=pam: alpha.learn");
    p = pam_params(3, 4);
    check_kind_refusals(&p, "pam");
}

int main(void)
{
    test_local_exact();
    test_alpha_step();
    test_threads_snapshot();
    test_refusals();
    return slda_test_done("unit_pam");
}
