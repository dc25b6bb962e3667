/* local_cvb.c - second-order CVB updates of a document's VB pairs (docs/algorithm.md; eq. 18).
 *
 *   gamma_w[k] ∝ f[w][k] · (E + alpha_k) · exp(−V / (2 (E + alpha_k)²)),
 *   E = N_theta[k] − gamma_w[k],  V = Var[k] − gamma_w[k](1 − gamma_w[k])
 *
 * Var[k] = sum over VB pairs of n gamma (1 − gamma) is kept up to date with the
 * counts (CG tokens contribute no variance). The document's part of the rule is
 * written once (CVB_WEIGHT, for float and double). In stream mode the global state is
 * frozen, so f is the plain word factor; batch mode's word factor carries the phi and Z
 * variance terms of eq. 18 too, with one share excluded from the live counts:
 * f = (Ephi / EZ) exp(−Vphi / (2 Ephi²) + VZ / (2 EZ²)).
 */
#include "engine/local.h"

#include <math.h>

/* f · e · exp(−v / (2 e²)), e and v clamped at their bounds (rounding of the running
 * sums can take them past): one instance per precision. */
#define CVB_WEIGHT(T, EXP)                                                                  \
    static inline T cvb_weight_##T(T f, T e, T v)                                          \
    {                                                                                       \
        if (e < (T)1e-20)                                                                   \
            e = (T)1e-20;                                                                   \
        if (v < 0)                                                                          \
            v = 0;                                                                          \
        return f * e * EXP(-v / (2 * e * e));                                               \
    }
CVB_WEIGHT(float, expf)
CVB_WEIGHT(double, exp)

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
            t[k] = cvb_weight_float(f[k], nt[k] - g[k] + loc->alpha[k],
                                    var[k] - g[k] * (1 - g[k]));
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

/* Batch mode. When every topic's weight underflows (a small alpha or eta: the exponents
 * reach -1/(8 alpha)), the rule is redone in log space, shifted by its maximum. */
static void cvb_batch(const slda_vb_batch_t *v, double *out)
{
    double sum = 0.0;
    for (uint32_t k = 0; k < v->K; k++) {
        double gk = v->g[k], vk = gk * (1.0 - gk);
        double ep = fmax(v->nphi[k] - gk, 0.0) + v->eta, ez = v->NZ[k] - gk + v->weta;
        double vp = fmax(v->vphi[k] - vk, 0.0), vz = fmax(v->VZ[k] - vk, 0.0);
        double f = ep / ez * exp(-vp / (2.0 * ep * ep) + vz / (2.0 * ez * ez));
        out[k] = cvb_weight_double(f, v->nt[k] - gk + v->alpha, v->vt[k] - vk);
        sum += out[k];
    }
    if (!(sum > 0.0) || !isfinite(sum)) {
        double mx = -INFINITY;
        for (uint32_t k = 0; k < v->K; k++) {
            double gk = v->g[k], vk = gk * (1.0 - gk);
            double ep = fmax(v->nphi[k] - gk, 0.0) + v->eta, ez = v->NZ[k] - gk + v->weta;
            double vp = fmax(v->vphi[k] - vk, 0.0), vz = fmax(v->VZ[k] - vk, 0.0);
            double e = fmax(v->nt[k] - gk + v->alpha, 1e-20), vt = fmax(v->vt[k] - vk, 0.0);
            out[k] = log(ep / ez) - vp / (2.0 * ep * ep) + vz / (2.0 * ez * ez) + log(e) -
                     vt / (2.0 * e * e);
            mx = fmax(mx, out[k]);
        }
        sum = 0.0;
        for (uint32_t k = 0; k < v->K; k++)
            sum += out[k] = exp(out[k] - mx);
    }
    slda_normalise_d(out, v->K, sum);
}

const slda_vb_ops_t slda_vb_cvb = {"cvb", cvb_init, cvb_sweep, cvb_batch, 1, 1};
