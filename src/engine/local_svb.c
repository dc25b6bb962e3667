/* local_svb.c - standard VB updates of a document's VB pairs (ALGORITHM.md; hybrid paper eq. 21).
 *
 *   gamma_w[k] ∝ exp(psi(Nphi[w][k]+eta) − psi(NZ[k]+W eta)) · exp(psi(N_theta[k]+alpha_k))
 *
 * Nothing is excluded. The word part is fixed while the global state is
 * frozen and is computed once per document into loc->f; the document part
 * exp(psi(N_theta + alpha)) is computed once per sweep from the counts at
 * the sweep's start (the usual VB fixed-point iteration), so a sweep costs
 * K digammas plus O(K) per pair. A word is either a VB pair or CG tokens of
 * a document, never both, so loc->f holds exp E[log phi] for VB words and
 * the plain factor f (ALGORITHM.md) for the CG words of the SVB/CGS hybrid,
 * which sample from eq. 25 like every hybrid. gamma starts from this factor
 * times alpha (ALGORITHM.md's f·alpha with the variant's own word factor).
 */
#include "local.h"

#include <math.h>

static void svb_init(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                     const float *inv_nz)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    double sigma = model->sigma, eta = model->p.eta, weta = model->W * eta;
    double dz[SLDA_MAX_TOPICS];
    slda_local_word_factors(loc, model, words, inv_nz);
    for (uint32_t k = 0; k < K; k++)
        dz[k] = slda_digamma((model->NZ[k] > 0 ? model->NZ[k] : 0) + weta);
    for (uint32_t v = 0; v < loc->nv; v++) {
        uint32_t u = loc->v_u[v];
        const float *a = model->A + (size_t)words[u] * Kp;
        float *f = loc->f + (size_t)u * Kp;
        for (uint32_t k = 0; k < K; k++)
            f[k] = (float)exp(slda_digamma(sigma * a[k] + eta) - dz[k]);
    }
}

static void svb_sweep(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    float *t = loc->p, *nt = loc->ntheta, *ed = loc->expdig;
    for (uint32_t k = 0; k < K; k++)
        ed[k] = (float)exp(slda_digamma((double)nt[k] + loc->alpha[k]));
    for (uint32_t v = 0; v < loc->nv; v++) {
        const float *f = loc->f + (size_t)loc->v_u[v] * Kp;
        float *g = loc->gamma + (size_t)v * Kp;
        float sum = 0;
        for (uint32_t k = 0; k < K; k++) {
            t[k] = f[k] * ed[k];
            sum += t[k];
        }
        float inv = sum > 0 ? 1.0f / sum : 0;
        float n = loc->v_n[v];
        for (uint32_t k = 0; k < K; k++) {
            float gn = t[k] * inv;
            nt[k] += n * (gn - g[k]);
            g[k] = gn;
        }
    }
}

const slda_vb_ops_t slda_vb_svb = {"svb", svb_init, svb_sweep};
