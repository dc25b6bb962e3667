/* local_cvb0.c - CVB0 updates of a document's VB pairs (ALGORITHM.md, "Local step").
 *
 *   gamma_w[k] ∝ f[w][k] · (N_theta[k] − gamma_w[k] + alpha_k),
 *   N_theta += n_wj (gamma_new − gamma_old)
 *
 * Only one token's share is excluded. The loops run over Kp (padding has
 * f = alpha = 0, so padded gamma stays 0) in 8-float vectors; the sweep is
 * compiled for AVX2 and for the baseline and picked at run time, with
 * identical arithmetic order (no FMA contraction under -std=c11), so results
 * do not depend on the machine.
 */
#include "engine/local.h"

#include <string.h>

__attribute__((target_clones("avx2", "default"))) static void
slda_local_word_factors_clones(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                        const float *inv_nz)
{
    uint32_t Kp = loc->Kp;
    float sigma = (float)model->sigma, eta = (float)model->p.eta;
    for (uint32_t u = 0; u < loc->nu; u++) {
        const float *a = model->A + (size_t)words[u] * Kp;
        float *f = loc->f + (size_t)u * Kp;
        for (uint32_t k = 0; k < Kp; k++)
            f[k] = (sigma * a[k] + eta) * inv_nz[k];
    }
}

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
            t[b] = f[b] * (nt[b] - g[b] + al[b]);
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

const slda_vb_ops_t slda_vb_cvb0 = {"cvb0", cvb0_init, cvb0_sweep};

const slda_vb_ops_t *slda_vb_ops(slda_vb_kind_t vb)
{
    switch (vb) {
    case SLDA_VB_CVB0:
        return &slda_vb_cvb0;
    case SLDA_VB_CVB:
        return &slda_vb_cvb;
    case SLDA_VB_SVB:
        return &slda_vb_svb;
    default:
        return NULL;
    }
}

/* Plain entry point: clang exports target_clones functions only under an
 * ifunc name, so callers in other files go through this wrapper. */
void slda_local_word_factors(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                             const float *inv_nz)
{
    slda_local_word_factors_clones(loc, model, words, inv_nz);
}
