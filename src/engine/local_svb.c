/* local_svb.c - standard VB updates of a document's VB pairs (docs/algorithm.md; eq. 21).
 *
 *   gamma_w[k] ∝ exp(psi(Nphi[w][k]+eta) − psi(NZ[k]+W eta)) · exp(psi(N_theta[k]+alpha_k))
 *
 * Nothing is excluded. The word part is fixed while the global state is
 * frozen and is computed once per document; the document part
 * exp(psi(N_theta + alpha)) is computed once per sweep from the counts at
 * the sweep's start (the usual VB fixed-point iteration), so a sweep costs
 * K digammas plus O(K) per pair. A word is either a VB pair or CG tokens of
 * a document, never both, so loc->f holds the SVB factor for VB words and
 * the plain factor f (docs/algorithm.md) for the CG words of the SVB/CGS hybrid,
 * which sample from eq. 25 like every hybrid. gamma starts from this factor
 * times alpha (docs/algorithm.md's f·alpha with the variant's own word factor).
 *
 * Range. psi(x) ~ -1/x for small x, so with a small eta a topic where the
 * word has no counts gets exp(psi(eta)) = exp(-1000) at eta = 0.001: far
 * below float (and double) range. Both factors are therefore kept relative
 * to their largest entry (a constant per word or per sweep cancels when
 * gamma is normalised): f = exp(lf), lf = E[log phi] - max <= 0, and
 * expdig = exp(logdig), logdig = psi(N_theta + alpha) - max <= 0. Each
 * factor has an entry equal to 1, but their product can still vanish in
 * every topic (the word's best topics are the document's worst); a pair
 * whose products sum below SVB_TINY is redone in log space, shifted by its
 * own maximum, so gamma is always a distribution and no token is lost.
 *
 * The rule's one term, E[log] of a Dirichlet component psi(count + prior)
 * (svb_log_factor), is written once; batch mode applies the whole rule to the
 * live counts of each pair in double (nothing is excluded either).
 */
#include "engine/local.h"

#include <math.h>

/* Below this sum, products of two factors in [0, 1] may have lost topics
 * that matter to float underflow (normal floats end at 1.2e-38, and a topic
 * 1e-7 of the sum is still a rounding error): redo the pair in log space. */
#define SVB_TINY 1e-30f

/* psi(count + prior), a count that rounding took below zero read as zero. */
static inline double svb_log_factor(double count, double prior)
{
    return slda_digamma((count > 0 ? count : 0) + prior);
}

static void svb_init(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                     const float *inv_nz)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    double sigma = model->sigma, eta = model->p.eta;
    double weta = (double)slda_model_smoothing_words(model) * eta;
    double dz[SLDA_MAX_TOPICS], e[SLDA_MAX_TOPICS];
    slda_local_word_factors(loc, model, words, inv_nz);
    for (uint32_t k = 0; k < K; k++)
        dz[k] = svb_log_factor(model->NZ[k], weta);
    for (uint32_t v = 0; v < loc->nv; v++) {
        uint32_t u = loc->v_u[v];
        const float *a = model->A + (size_t)words[u] * Kp;
        float *f = loc->f + (size_t)u * Kp, *lf = loc->lf + (size_t)u * Kp;
        double mx = -INFINITY;
        for (uint32_t k = 0; k < K; k++) {
            e[k] = svb_log_factor(sigma * a[k], eta) - dz[k];
            mx = e[k] > mx ? e[k] : mx;
        }
        for (uint32_t k = 0; k < K; k++) {
            lf[k] = (float)(e[k] - mx);
            f[k] = (float)exp(e[k] - mx);
        }
    }
}

/* gamma of one pair from log factors when the plain products underflowed:
 * t[k] = exp(lf[k] + ld[k] - max). Returns the sum (>= 1). */
static float svb_log_products(float *t, const float *lf, const float *ld, uint32_t K)
{
    float mx = -INFINITY, sum = 0;
    for (uint32_t k = 0; k < K; k++) {
        t[k] = lf[k] + ld[k];
        mx = t[k] > mx ? t[k] : mx;
    }
    for (uint32_t k = 0; k < K; k++) {
        t[k] = expf(t[k] - mx);
        sum += t[k];
    }
    return sum;
}

static void svb_sweep(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    float *t = loc->p, *nt = loc->ntheta, *ed = loc->expdig, *ld = loc->logdig;
    double d[SLDA_MAX_TOPICS], mx = -INFINITY;
    for (uint32_t k = 0; k < K; k++) {
        /* N_theta drifts below 0 by rounding when a topic empties */
        d[k] = svb_log_factor(nt[k], loc->alpha[k]);
        mx = d[k] > mx ? d[k] : mx;
    }
    for (uint32_t k = 0; k < K; k++) {
        ld[k] = (float)(d[k] - mx);
        ed[k] = expf(ld[k]);
    }
    for (uint32_t v = 0; v < loc->nv; v++) {
        size_t row = (size_t)loc->v_u[v] * Kp;
        const float *f = loc->f + row;
        float *g = loc->gamma + (size_t)v * Kp;
        float sum = 0;
        for (uint32_t k = 0; k < K; k++) {
            t[k] = f[k] * ed[k];
            sum += t[k];
        }
        if (!(sum >= SVB_TINY))
            sum = svb_log_products(t, loc->lf + row, ld, K);
        float inv = 1.0f / sum;
        float n = loc->v_n[v];
        for (uint32_t k = 0; k < K; k++) {
            float gn = t[k] * inv;
            nt[k] += n * (gn - g[k]);
            g[k] = gn;
        }
    }
}

/* Batch mode (hybrid paper eq. 21), the counts including the pair itself. */
static void svb_batch(const slda_vb_batch_t *v, double *out)
{
    double mx = -INFINITY, sum = 0.0;
    for (uint32_t k = 0; k < v->K; k++) {
        out[k] = svb_log_factor(v->nphi[k], v->eta) - svb_log_factor(v->NZ[k], v->weta) +
                 svb_log_factor(v->nt[k], v->alpha);
        mx = fmax(mx, out[k]);
    }
    for (uint32_t k = 0; k < v->K; k++) {
        out[k] = exp(out[k] - mx);
        sum += out[k];
    }
    slda_normalise_d(out, v->K, sum);
}

const slda_vb_ops_t slda_vb_svb = {"svb", svb_init, svb_sweep, svb_batch, 0, 0};
