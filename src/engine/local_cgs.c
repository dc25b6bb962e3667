/* local_cgs.c - collapsed Gibbs draws of a document's CG tokens (docs/algorithm.md eq. 25).
 *
 *   p(z_i = k) ∝ f[w_i][k] · (N_theta¬i[k] + alpha_k)
 *
 * Exact dense sampling: the K products and their running total are formed,
 * then a uniform draw scaled by the total is located by a linear scan over
 * 8-wide block sums. In collection sweeps each token adds to the document's
 * statistics either its normalised p (Rao-Blackwellised, local.stats=rb) or
 * its one-hot sample (local.stats=sample).
 *
 * The plain word factor f[w][k] = (Nphi[w][k] + eta) / (NZ[k] + W eta) that
 * the CG tokens sample from is made here too (slda_local_word_factors), for
 * every unique word of a document; the VB variants whose rule uses it (CVB0,
 * CVB) take theirs from it as well.
 */
#include "engine/local.h"

/* The topic whose cumulative mass first exceeds u: scan the 8-topic block
 * sums, then the topics inside the block. Padding topics have p = 0. */
static inline uint32_t locate(const float *p, const float *bs, uint32_t K, uint32_t nb, float u)
{
    float c = 0;
    uint32_t b = 0;
    for (; b + 1 < nb; b++) {
        if (c + bs[b] > u)
            break;
        c += bs[b];
    }
    uint32_t end = 8 * b + 8 < K ? 8 * b + 8 : K;
    for (uint32_t k = 8 * b; k < end; k++) {
        c += p[k];
        if (c > u)
            return k;
    }
    /* u fell past the block through rounding: take its last topic with mass */
    for (uint32_t k = end; k-- > 0;)
        if (p[k] > 0)
            return k;
    return 0;
}

/* pv = f (nt + alpha), 8 floats at a time; returns the sum. Inlined into
 * each target clone of its callers. */
static inline __attribute__((always_inline)) float
products(slda_v8f *pv, float *bs, const slda_v8f *f, const slda_v8f *nt, const slda_v8f *al,
         uint32_t nb)
{
    float total = 0;
    for (uint32_t b = 0; b < nb; b++) {
        pv[b] = f[b] * (nt[b] + al[b]);
        bs[b] = slda_v8_hsum(&pv[b]);
    }
    for (uint32_t b = 0; b < nb; b++)
        total += bs[b];
    return total;
}

/* No document counts yet: the initial draws use p(k) ∝ f[w][k] alpha_k. */
static const slda_v8f zero[SLDA_MAX_TOPICS / 8];

__attribute__((target_clones("avx2", "default"))) static void slda_cgs_init_clones(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    const slda_v8f *al = (const slda_v8f *)loc->alpha;
    slda_v8f *pv = (slda_v8f *)loc->p;
    float bs[SLDA_MAX_TOPICS / 8];
    for (uint32_t i = 0; i < loc->ng; i++) {
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)loc->g_u[i] * Kp);
        float total = products(pv, bs, f, zero, al, Kp / 8);
        uint32_t z = locate(loc->p, bs, K, Kp / 8, slda_rng_float(&loc->rng) * total);
        loc->z[i] = z;
        loc->ntheta[z] += 1;
    }
}

__attribute__((target_clones("avx2", "default"))) static void slda_cgs_sweep_clones(slda_local_t *loc)
{
    uint32_t K = loc->K, Kp = loc->Kp;
    slda_v8f *nt = (slda_v8f *)loc->ntheta;
    const slda_v8f *al = (const slda_v8f *)loc->alpha;
    slda_v8f *pv = (slda_v8f *)loc->p;
    int rb = loc->collect && loc->want_stats && loc->stats_kind == SLDA_STATS_RB;
    int onehot = loc->collect && loc->want_stats && loc->stats_kind == SLDA_STATS_SAMPLE;
    float bs[SLDA_MAX_TOPICS / 8];
    for (uint32_t i = 0; i < loc->ng; i++) {
        uint32_t u = loc->g_u[i];
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)u * Kp);
        loc->ntheta[loc->z[i]] -= 1;
        float total = products(pv, bs, f, nt, al, Kp / 8);
        uint32_t z = locate(loc->p, bs, K, Kp / 8, slda_rng_float(&loc->rng) * total);
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

/* Plain entry points: clang exports target_clones functions only under an
 * ifunc name, so callers in other files go through these wrappers. */
void slda_local_word_factors(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                             const float *inv_nz)
{
    slda_local_word_factors_clones(loc, model, words, inv_nz);
}

void slda_cgs_init(slda_local_t *loc)
{
    slda_cgs_init_clones(loc);
}

void slda_cgs_sweep(slda_local_t *loc)
{
    slda_cgs_sweep_clones(loc);
}
