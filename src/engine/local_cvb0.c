/* local_cvb0.c - CVB0 updates of a document's VB pairs (docs/algorithm.md, "Local step").
 *
 *   gamma_w[k] ∝ f[w][k] · (N_theta[k] − gamma_w[k] + alpha_k),
 *   N_theta += n_wj (gamma_new − gamma_old)
 *
 * Only one token's share is excluded. CVB0 is approximate mean field with arithmetic
 * means (Asuncion 2010, eq. 16: AMF for LDA is CVB0). The rule is written once
 * (CVB0_WEIGHT) and used by the stream sweep in float (8-float vectors) and by batch
 * mode in double, where the word factor also excludes the pair's share from the live
 * topic-word counts: f = (Nphi[w][k] − g + eta) / (NZ[k] − g + W eta).
 *
 * Stream: the loops run over Kp (padding has f = alpha = 0, so padded gamma stays 0)
 * in 8-float vectors; the sweep is compiled for AVX2 and for the baseline and picked
 * at run time, with identical arithmetic order (no FMA contraction under -std=c11),
 * so results do not depend on the machine.
 */
#include "engine/local.h"

#include <math.h>

/* The unnormalised gamma of one topic: any arithmetic type, 8-float vectors included. */
#define CVB0_WEIGHT(f, nt, g, al) ((f) * ((nt) - (g) + (al)))

static void cvb0_init(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                      const float *inv_nz)
{
    slda_local_word_factors(loc, model, words, inv_nz);
}

__attribute__((target_clones("avx2", "default"))) static void cvb0_sweep(slda_local_t *loc)
{
    uint32_t Kp = loc->Kp;
    slda_v8f *nt = (slda_v8f *)loc->ntheta;
    const slda_v8f *al = (const slda_v8f *)loc->alpha;
    slda_v8f *t = (slda_v8f *)loc->p;
    for (uint32_t v = 0; v < loc->nv; v++) {
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)loc->v_u[v] * Kp);
        slda_v8f *g = (slda_v8f *)(loc->gamma + (size_t)v * Kp);
        slda_v8f acc = {0};
        for (uint32_t b = 0; b < Kp / 8; b++) {
            t[b] = CVB0_WEIGHT(f[b], nt[b], g[b], al[b]);
            acc += t[b];
        }
        float sum = slda_v8_sum(&acc);
        float inv = sum > 0 ? 1.0f / sum : 0;
        float n = loc->v_n[v];
        for (uint32_t b = 0; b < Kp / 8; b++) {
            slda_v8f gn = t[b] * inv;
            nt[b] += n * (gn - g[b]);
            g[b] = gn;
        }
    }
}

/* Batch mode (Asuncion 2010 eq. 16 with the live counts). fmax guards rounding below zero. */
static void cvb0_batch(const slda_vb_batch_t *v, double *out)
{
    double sum = 0.0;
    for (uint32_t k = 0; k < v->K; k++) {
        double gk = v->g[k];
        double f = (fmax(v->nphi[k] - gk, 0.0) + v->eta) / (v->NZ[k] - gk + v->weta);
        out[k] = CVB0_WEIGHT(f, v->nt[k], gk, v->alpha);
        sum += out[k];
    }
    slda_normalise_d(out, v->K, sum);
}

const slda_vb_ops_t slda_vb_cvb0 = {"cvb0", cvb0_init, cvb0_sweep, cvb0_batch, 1, 0};
