/* pam.c - 4-level pachinko allocation: the model's state (alpha0, the S x K priors alpha_x) and
 * their learning; the local step is pam_local.c (docs/models.md, "Pachinko allocation").
 *
 * alpha_x (S x K) is learned from the documents' counts n_mxy after each minibatch, one draw of
 * every token from what the local step left (slda_pam_draw_counts: the AMF words' mean counts
 * made alpha_x grow until the super-topics' mixtures were flat), by one fixed-point step of
 * Minka's Dirichlet estimate per super-topic,
 *   alpha_xy' = alpha_xy sum_d [psi(n_dxy + alpha_xy) - psi(alpha_xy)]
 *                        / sum_d [psi(n_dx + A_x) - psi(A_x)],
 * over the documents that use x, blended in with pam.alpha.step times the update's rho from
 * update pam.alpha.warmup on (floored at 1e-4), as Li and McCallum's Gibbs sampler
 * re-estimates it between iterations. alpha0 stays alpha. Why the warm-up and the smaller
 * step: an estimate from a model that has barely trained is a poor prior to blend in at
 * rho ~ 1. Measured one pass, K=50 (docs/benchmarks.md): with S=1 (PAM is then LDA with a
 * learned asymmetric alpha) KOS 1736.9 blending every estimate at rho, 1588.6 with both
 * (LDA: 1587.7); with S=10, learned from mean counts, alpha cost 1.9% on KOS and AP against
 * alpha_x fixed, which groups nothing; learned from drawn counts it costs nothing (seeds 1-2:
 * KOS 1616.9 against 1621.4 fixed, AP 2561.0 against 2559.4, Reuters 1291.6 against 1309.0).
 */
#include "engine/pam_priv.h"
#include "core/topn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void slda_pam_schedule(slda_pam_t *pam, double step, uint64_t warmup)
{
    pam->step = step;
    pam->warmup = warmup;
}

slda_pam_t *slda_pam_new(uint32_t S, uint32_t K, double alpha, uint64_t seed)
{
    slda_rng_t rng;
    slda_rng_seed3(&rng, seed, 0x70616d, S);
    slda_pam_t *pam = slda_xcalloc(1, sizeof *pam);
    pam->S = S;
    pam->K = K;
    pam->alpha0 = alpha;
    pam->alpha = slda_xmalloc((size_t)S * K * sizeof *pam->alpha);
    for (size_t i = 0; i < (size_t)S * K; i++)
        pam->alpha[i] = alpha * (0.5 + slda_rng_double(&rng));
    return pam;
}

void slda_pam_free(slda_pam_t *pam)
{
    if (!pam)
        return;
    free(pam->alpha);
    free(pam);
}

uint32_t slda_pam_supers(const slda_pam_t *pam)
{
    return pam->S;
}

double *slda_pam_alpha(slda_pam_t *pam)
{
    return pam->alpha;
}

const double *slda_pam_alpha_c(const slda_pam_t *pam)
{
    return pam->alpha;
}

uint32_t slda_pam_super_top(const slda_pam_t *pam, uint32_t x, uint32_t n, uint32_t *ids,
                            double *shares)
{
    const double *a = pam->alpha + (size_t)x * pam->K;
    double A = 0;
    uint32_t m = 0;
    for (uint32_t y = 0; y < pam->K; y++) {
        A += a[y];
        if (n)
            slda_topn_push(ids, shares, &m, n, y, a[y]);
    }
    for (uint32_t i = 0; i < m; i++)
        shares[i] = A > 0 ? shares[i] / A : 0;
    return m;
}

double slda_pam_alpha0(const slda_pam_t *pam)
{
    return pam->alpha0;
}

void slda_pam_draw_counts(const float *g, size_t sk, uint32_t n, slda_rng_t *rng, double *cum,
                          float *out)
{
    double c = 0;
    for (size_t i = 0; i < sk; i++)
        cum[i] = c += g[i] > 0 ? g[i] : 0;
    if (!(c > 0) || !sk)
        return;
    for (uint32_t t = 0; t < n; t++) {
        double u = slda_rng_double(rng) * c;
        size_t lo = 0, hi = sk - 1;
        while (lo < hi) { /* the first cum above u */
            size_t mid = lo + (hi - lo) / 2;
            if (cum[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        out[lo] += 1;
    }
}

void slda_pam_step(slda_pam_t *pam, const float *nxy, size_t ndocs, double rho, uint64_t t)
{
    if (t < pam->warmup || pam->step <= 0)
        return;
    rho = rho * pam->step < 1 ? rho * pam->step : 1;
    uint32_t S = pam->S, K = pam->K;
    double *num = slda_xcalloc(K, sizeof *num);
    for (uint32_t x = 0; x < S; x++) {
        double *al = pam->alpha + (size_t)x * K, A = 0, den = 0;
        for (uint32_t y = 0; y < K; y++)
            A += al[y];
        memset(num, 0, K * sizeof *num);
        size_t used = 0;
        for (size_t d = 0; d < ndocs; d++) {
            const float *n = nxy + (d * S + x) * K;
            double nx = 0;
            for (uint32_t y = 0; y < K; y++)
                nx += n[y];
            if (!(nx > 1e-3))
                continue;
            used++;
            den += slda_digamma(nx + A) - slda_digamma(A);
            for (uint32_t y = 0; y < K; y++)
                num[y] += slda_digamma(n[y] + al[y]) - slda_digamma(al[y]);
        }
        if (!used || !(den > 0))
            continue;
        for (uint32_t y = 0; y < K; y++) {
            double next = al[y] * num[y] / den;
            if (!isfinite(next))
                continue;
            double v = (1 - rho) * al[y] + rho * next;
            al[y] = v > 1e-4 ? v : 1e-4;
        }
    }
    free(num);
}
