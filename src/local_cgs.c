/* local_cgs.c - collapsed Gibbs draws of a document's CG tokens (ALGORITHM.md eq. 25).
 *
 *   p(z_i = k) ∝ f[w_i][k] · (N_theta¬i[k] + alpha_k)
 *
 * Exact dense sampling: the K products and their running total are formed,
 * then a uniform draw scaled by the total is located by a linear scan over
 * 8-wide block sums. In collection sweeps each token adds to the document's
 * statistics either its normalised p (Rao-Blackwellised, local.stats=rb) or
 * its one-hot sample (local.stats=sample).
 */
#include "local.h"

static inline uint32_t locate(const float *p, uint32_t K, float u)
{
    float c = 0;
    uint32_t k = 0;
    for (; k + 8 <= K; k += 8) {
        float b = p[k] + p[k + 1] + p[k + 2] + p[k + 3] + p[k + 4] + p[k + 5] + p[k + 6] +
                  p[k + 7];
        if (c + b > u)
            break;
        c += b;
    }
    for (; k < K; k++) {
        c += p[k];
        if (c > u)
            return k;
    }
    /* u fell past the end through rounding: take the last topic with mass */
    for (k = K; k-- > 0;)
        if (p[k] > 0)
            return k;
    return 0;
}

/* pv = f (nt + alpha), 8 floats at a time; returns the sum. Inlined into
 * each target clone of its callers. */
static inline __attribute__((always_inline)) float
products(slda_v8f *pv, const slda_v8f *f, const slda_v8f *nt, const slda_v8f *al, uint32_t nb)
{
    slda_v8f acc = {0};
    for (uint32_t b = 0; b < nb; b++) {
        pv[b] = f[b] * (nt[b] + al[b]);
        acc += pv[b];
    }
    return slda_v8_sum(acc);
}

__attribute__((target_clones("avx2", "default"))) void slda_cgs_init(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    const slda_v8f *al = (const slda_v8f *)loc->alpha;
    slda_v8f *pv = (slda_v8f *)loc->p;
    const slda_v8f zero[SLDA_MAX_TOPICS / 8] = {{0}};
    for (uint32_t i = 0; i < loc->ng; i++) {
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)loc->g_u[i] * Kp);
        float total = products(pv, f, zero, al, Kp / 8);
        uint32_t z = locate(loc->p, K, slda_rng_float(&loc->rng) * total);
        loc->z[i] = z;
        loc->ntheta[z] += 1;
    }
}

__attribute__((target_clones("avx2", "default"))) void slda_cgs_sweep(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    slda_v8f *nt = (slda_v8f *)loc->ntheta;
    const slda_v8f *al = (const slda_v8f *)loc->alpha;
    slda_v8f *pv = (slda_v8f *)loc->p;
    int rb = loc->collect && loc->want_stats && loc->stats_kind == SLDA_STATS_RB;
    int onehot = loc->collect && loc->want_stats && loc->stats_kind == SLDA_STATS_SAMPLE;
    for (uint32_t i = 0; i < loc->ng; i++) {
        uint32_t u = loc->g_u[i];
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)u * Kp);
        loc->ntheta[loc->z[i]] -= 1;
        float total = products(pv, f, nt, al, Kp / 8);
        uint32_t z = locate(loc->p, K, slda_rng_float(&loc->rng) * total);
        loc->z[i] = z;
        loc->ntheta[z] += 1;
        if (rb) {
            slda_v8f *s = (slda_v8f *)(loc->stats + (size_t)u * Kp);
            float inv = total > 0 ? 1.0f / total : 0;
            for (uint32_t b = 0; b < Kp / 8; b++)
                s[b] += pv[b] * inv;
        } else if (onehot) {
            loc->stats[(size_t)u * Kp + z] += 1;
        }
    }
}
