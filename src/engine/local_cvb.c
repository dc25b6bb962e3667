/* local_cvb.c - second-order CVB updates of a document's VB pairs (ALGORITHM.md; Asuncion eq. 18).
 *
 *   gamma_w[k] ∝ f[w][k] · (E + alpha_k) · exp(−V / (2 (E + alpha_k)²)),
 *   E = N_theta[k] − gamma_w[k],  V = Var[k] − gamma_w[k](1 − gamma_w[k])
 *
 * Var[k] = sum over VB pairs of n gamma (1 − gamma) is kept up to date with the
 * counts (CG tokens contribute no variance). In stream mode the global state
 * is frozen, so the phi and Z variance terms of batch mode do not apply.
 */
#include "engine/local.h"

#include <math.h>

static void cvb_init(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                     const float *inv_nz)
{
    slda_local_word_factors(loc, model, words, inv_nz);
}

static void cvb_sweep(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    float *t = loc->p, *nt = loc->ntheta, *var = loc->var;
    for (uint32_t v = 0; v < loc->nv; v++) {
        const float *f = loc->f + (size_t)loc->v_u[v] * Kp;
        float *g = loc->gamma + (size_t)v * Kp;
        float sum = 0;
        for (uint32_t k = 0; k < K; k++) {
            float e = nt[k] - g[k] + loc->alpha[k];
            float vv = var[k] - g[k] * (1 - g[k]);
            if (e < 1e-20f)
                e = 1e-20f;
            if (vv < 0)
                vv = 0;
            t[k] = f[k] * e * expf(-vv / (2 * e * e));
            sum += t[k];
        }
        float inv = sum > 0 ? 1.0f / sum : 0;
        float n = loc->v_n[v];
        for (uint32_t k = 0; k < K; k++) {
            float gn = t[k] * inv;
            nt[k] += n * (gn - g[k]);
            var[k] += n * (gn * (1 - gn) - g[k] * (1 - g[k]));
            g[k] = gn;
        }
    }
}

const slda_vb_ops_t slda_vb_cvb = {"cvb", cvb_init, cvb_sweep};
