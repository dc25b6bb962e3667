/* local_sparse.c - the sampled local step of the sparse path (docs/engine.md, "The sparse path").
 *
 * Every token of the document has a topic z_i and is resampled each sweep
 * from docs/algorithm.md's eq. 25, p(k) ~ (N_theta¬i[k] + alpha_k) phi_w[k]
 * with phi_w[k] = (sigma A_wk + eta) inv_k, by Metropolis-Hastings in O(1):
 * two steps per token and sweep, with the proposals of LightLDA (Yuan et al.
 * 2015), which here are exact in their own factor because the global state
 * is frozen for the minibatch:
 *
 *   word step: t ~ q_w(k) ~ phi_w[k] (sparse_tables.c);
 *              accept with min(1, (N¬[t] + alpha_t) / (N¬[s] + alpha_s))
 *   doc step:  t ~ q_d(k) ~ N¬[k] + [k = s] + alpha_k, the topic of a token
 *              of the document drawn uniformly (the token itself included)
 *              or, with probability sum(alpha) / (L + sum(alpha)), alpha's;
 *              the reverse move, from t, proposes s with N¬[s] + alpha_s, so
 *              accept with min(1, phi_w[t] / phi_w[s])
 *
 * (s the current topic, N¬ the document's counts without the token). Each
 * step leaves p invariant, so the sweep does (tests/unit_sparse.c: chi-square
 * against the exact posterior). The statistics are Rao-Blackwellised: each
 * token's full conditional, summed over the collection sweeps in what the
 * document and the word hold (stats() below). Scratch is the worker's
 * slda_local_t; the model is only read.
 */
#include "engine/sparse.h"

#include <stdlib.h>
#include <string.h>

/* Uniform in [0, 1) with 53 bits (a token index over long documents). */
static inline double rng_double53(slda_rng_t *rng)
{
    return (double)(slda_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* The first running sum above u among cum[0..n) (n >= 1). */
static inline uint32_t search(const float *cum, uint32_t n, float u)
{
    uint32_t lo = 0, len = n;
    while (len > 1) {
        uint32_t half = len / 2;
        lo = cum[lo + half - 1] > u ? lo : lo + half;
        len -= half;
    }
    return lo;
}

/* A draw from word table ti's q_w (the row's part or the smoothing part). */
static inline uint32_t draw_word(const slda_wtabs_t *t, uint32_t ti, slda_rng_t *rng)
{
    float m = t->mass[ti];
    float u = slda_rng_float(rng) * (float)(m + t->eta_inv);
    if (u < m) {
        size_t off = t->off[ti];
        return t->topic[off + search(t->cum + off, (uint32_t)(t->off[ti + 1] - off), u)];
    }
    return slda_alias_draw(&t->smooth, rng);
}

static inline uint32_t draw_alpha(const slda_wtabs_t *t, uint32_t K, slda_rng_t *rng)
{
    if (t->alpha_sym)
        return (uint32_t)(((slda_rng_next(rng) >> 32) * (uint64_t)K) >> 32);
    return slda_alias_draw(&t->alpha, rng);
}

static void reserve(slda_local_t *loc, uint32_t nu, uint32_t ng, uint32_t samples)
{
    if (nu > loc->cap_tu) {
        loc->cap_tu = nu + nu / 2 + 16;
        loc->tab_u = slda_xrealloc(loc->tab_u, loc->cap_tu * sizeof *loc->tab_u);
    }
    if (ng > loc->cap_g) { /* the dense step's token arrays, shared */
        uint32_t cap = ng < 256 ? 256 : ng + ng / 2;
        loc->g_u = slda_xrealloc(loc->g_u, cap * sizeof *loc->g_u);
        loc->z = slda_xrealloc(loc->z, cap * sizeof *loc->z);
        loc->cap_g = cap;
    }
    size_t nz = (size_t)ng * samples;
    if (nz > loc->cap_zs) {
        loc->cap_zs = nz + nz / 2 + 256;
        loc->zs = slda_xrealloc(loc->zs, loc->cap_zs * sizeof *loc->zs);
    }
    uint32_t dcap = ng < loc->K ? ng : loc->K;
    if ((size_t)dcap * samples > loc->cap_dl) {
        loc->cap_dl = (size_t)dcap * samples + 256;
        loc->sp_dl = slda_xrealloc(loc->sp_dl, loc->cap_dl * sizeof *loc->sp_dl);
    }
    if (samples > loc->cap_dn_n) { /* sp_nd: zero between uses, so made anew */
        loc->cap_dn_n = samples;
        free(loc->sp_nd);
        loc->sp_nd = slda_xcalloc((size_t)samples * loc->Kp, sizeof *loc->sp_nd);
        loc->sp_dn_n = slda_xrealloc(loc->sp_dn_n, samples * sizeof *loc->sp_dn_n);
        loc->sp_e = slda_xrealloc(loc->sp_e, samples * sizeof *loc->sp_e);
        loc->sp_m = slda_xrealloc(loc->sp_m, samples * sizeof *loc->sp_m);
    }
    loc->sp_dcap = dcap;
    if (!loc->dtop) { /* per topic, zero between uses */
        loc->dtop = slda_xmalloc(loc->Kp * sizeof *loc->dtop);
        loc->sp_mark = slda_xcalloc(loc->Kp, 1);
        loc->sp_acc = slda_xcalloc(loc->Kp, sizeof *loc->sp_acc);
        loc->sp_touch = slda_xmalloc(loc->Kp * sizeof *loc->sp_touch);
    }
}

/* One sweep over the tokens: a word step and a doc step each. */
static void sweep(slda_local_t *loc, const slda_frozen_t *fz)
{
    const slda_wtabs_t *t = fz->tabs;
    const slda_model_t *model = fz->model;
    const float *inv = fz->inv_nz, *al = fz->alpha;
    float *nd = loc->ntheta, sigma = t->sigma, eta = t->eta;
    uint32_t L = loc->ng, K = loc->K, Kp = loc->Kp;
    double dmass = (double)L + fz->alpha_sum;
    for (uint32_t i = 0; i < L; i++) {
        uint32_t ti = loc->tab_u[loc->g_u[i]], s = loc->z[i];
        nd[s] -= 1;
        uint32_t k = draw_word(t, ti, &loc->rng);
        if (k != s) {
            float ratio = (nd[k] + al[k]) / (nd[s] + al[s]);
            if (ratio >= 1.0f || slda_rng_float(&loc->rng) < ratio)
                s = k;
        }
        loc->z[i] = s;
        double ud = rng_double53(&loc->rng) * dmass;
        if (ud < (double)L) {
            uint32_t j = (uint32_t)ud;
            k = loc->z[j < L ? j : L - 1];
        } else {
            k = draw_alpha(t, K, &loc->rng);
        }
        if (k != s) {
            const float *a = model->A + (size_t)t->word[ti] * Kp;
            float ps = (sigma * a[s] + eta) * inv[s], pk = (sigma * a[k] + eta) * inv[k];
            float ratio = pk / ps;
            if (ratio >= 1.0f || slda_rng_float(&loc->rng) < ratio)
                s = k;
        }
        loc->z[i] = s;
        nd[s] += 1;
    }
}

/* Sort n topics in place (small n: insertion; else qsort). */
static int cmp_u16(const void *a, const void *b)
{
    return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static void sort_topics(uint16_t *v, uint32_t n)
{
    if (n > 24) {
        qsort(v, n, sizeof *v, cmp_u16);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint16_t x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* After collection sweep c: the document's topics D_c (those its tokens
 * hold) as a list and their N_c[k] inv_k dense (sp_nd row c: the only way
 * stats() reads the counts), and E_c = sum_k N_c[k] inv_k, M_c = max_k
 * N_c[k] inv_k. */
static void keep_sweep(slda_local_t *loc, const float *inv, uint32_t c)
{
    uint32_t L = loc->ng, n = 0;
    uint32_t *dl = loc->sp_dl + (size_t)c * loc->sp_dcap;
    float *nd = loc->sp_nd + (size_t)c * loc->Kp;
    uint16_t *zs = loc->zs + (size_t)c * L;
    double e = 0;
    float mx = 0;
    for (uint32_t i = 0; i < L; i++) {
        uint32_t z = loc->z[i];
        zs[i] = (uint16_t)z;
        if (nd[z] == 0) {
            nd[z] = loc->ntheta[z] * inv[z];
            dl[n++] = z;
            e += nd[z];
            mx = nd[z] > mx ? nd[z] : mx;
        }
    }
    loc->sp_dn_n[c] = n;
    loc->sp_e[c] = e;
    loc->sp_m[c] = mx;
}

/* The statistics of unique word u (count cu, tokens first ..): the
 * Rao-Blackwellised sum over its tokens and the collection sweeps of each
 * token's full conditional p_i(k) ~ (N_c[k] - [z_i = k] + alpha_k) phi_w[k],
 * phi_w[k] = (sigma A_wk + eta) inv_k (docs/engine.md, "The sparse path").
 * Its normaliser Z_i = Z_c - phi_w[z_i] differs by token only through the
 * token's own topic, so with S = sum_i 1/Z_i the sum is
 *   N_c[k] phi_w[k] S - sum_{i: z_i = k} phi_w[k] / Z_i + alpha_k phi_w[k] S
 * and splits into parts that cost what the word and the document hold:
 *   row part      N_c[k] sigma A_wk inv_k S over the topics both hold (the
 *                 shorter list of the two walked, the other looked up);
 *   smoothing     N_c[k] eta inv_k S over the document's topics;
 *   prior part    alpha_k phi_w[k] S, the same vector for every token and
 *                 every document of the minibatch: one entry, topic
 *                 SLDA_SPARSE_PRIOR, holding the sum of S over the sweeps,
 *                 which the global step expands once per word over the
 *                 topics its row lists (global_sparse.c).
 * The smoothing part is not expanded when its largest entry is under
 * 1/SLDA_SPARSE_KEEP of the word's tokens (unless the row lists nothing: a
 * new word's statistics are all smoothing); then entries under
 * 1/SLDA_SPARSE_KEEP of the word's statistics are dropped (the largest is
 * always kept) and the rest, the prior's mass included, scaled to sum to cu:
 * at most SLDA_SPARSE_KEEP + 1 entries, topics increasing. Returns their
 * number. */
static uint32_t stats(slda_local_t *loc, const slda_frozen_t *fz, uint32_t w, uint32_t ti,
                      uint32_t cu, uint32_t first, uint32_t samples, slda_sentry_t *out)
{
    const slda_wtabs_t *t = fz->tabs;
    const float *inv = fz->inv_nz;
    const float *a = fz->model->A + (size_t)w * loc->Kp;
    float sigma = t->sigma, eta = t->eta, *acc = loc->sp_acc;
    uint16_t *touch = loc->sp_touch;
    uint32_t nt = 0, L = loc->ng;
    size_t off = t->off[ti], nrow = t->off[ti + 1] - off;
    float share = (float)cu / SLDA_SPARSE_KEEP; /* a part's entries must reach this */
    double prior = 0;
#define SLDA_TOUCH(k)                                                                          \
    do {                                                                                       \
        if (!loc->sp_mark[k]) {                                                                \
            loc->sp_mark[k] = 1;                                                               \
            touch[nt++] = (uint16_t)(k);                                                       \
        }                                                                                      \
    } while (0)
    for (uint32_t c = 0; c < samples; c++) {
        const uint32_t *dl = loc->sp_dl + (size_t)c * loc->sp_dcap;
        const float *nd = loc->sp_nd + (size_t)c * loc->Kp; /* N_c[k] inv_k */
        const uint16_t *zs = loc->zs + (size_t)c * L;
        uint32_t n = loc->sp_dn_n[c];
        /* Z_c: the row part over the topics both hold, then the rest */
        float zr = 0; /* a sum of at most K positive terms: float is enough */
        double s = 0;
        if (nrow <= n) {
            for (size_t j = off; j < off + nrow; j++)
                zr += nd[t->topic[j]] * a[t->topic[j]];
        } else {
            for (uint32_t j = 0; j < n; j++)
                zr += nd[dl[j]] * a[dl[j]];
        }
        double zf = sigma * zr + eta * loc->sp_e[c] + t->amass[ti];
        for (uint32_t i = first; i < first + cu; i++)
            s += 1.0 / (zf - (sigma * a[zs[i]] + eta) * inv[zs[i]]);
        /* a row that lists nothing has only this part */
        int smooth = nrow == 0 || (float)(s * eta * loc->sp_m[c]) >= share;
        for (uint32_t i = first; i < first + cu; i++) { /* each token's own topic out */
            uint32_t z = zs[i];
            float own = smooth ? (sigma * a[z] + eta) * inv[z] : sigma * a[z] * inv[z];
            if (own > 0) {
                SLDA_TOUCH(z);
                acc[z] -= (float)(own / (zf - (sigma * a[z] + eta) * inv[z]));
            }
        }
        float sr = (float)(s * sigma);
        if (nrow <= n) {
            for (size_t j = off; j < off + nrow; j++) {
                uint32_t k = t->topic[j];
                if (nd[k] > 0) {
                    SLDA_TOUCH(k);
                    acc[k] += nd[k] * a[k] * sr;
                }
            }
        } else {
            for (uint32_t j = 0; j < n; j++) {
                uint32_t k = dl[j];
                if (a[k] > 0) {
                    SLDA_TOUCH(k);
                    acc[k] += nd[k] * a[k] * sr;
                }
            }
        }
        if (smooth) {
            float se = (float)(s * eta);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t k = dl[j];
                SLDA_TOUCH(k);
                acc[k] += nd[k] * se;
            }
        }
        prior += s;
    }
#undef SLDA_TOUCH
    double pmass = prior * t->lmass[ti], kept = 0;
    float best = 0, tpos = 0; /* the positive entries' sum, in float: it only sets the floor */
    uint32_t top = UINT32_MAX, m = 0;
    for (uint32_t j = 0; j < nt; j++) {
        float x = acc[touch[j]];
        tpos += x > 0 ? x : 0;
        if (x > best) {
            best = x;
            top = touch[j];
        }
    }
    float floor_x = (float)((pmass + tpos) / SLDA_SPARSE_KEEP);
    for (uint32_t j = 0; j < nt; j++) {
        uint32_t k = touch[j];
        float x = acc[k];
        if (x > 0 && x >= floor_x && m < SLDA_SPARSE_KEEP) {
            touch[m++] = (uint16_t)k;
            kept += x;
        } else {
            acc[k] = 0;
            loc->sp_mark[k] = 0;
        }
    }
    if (m == 0 && top != UINT32_MAX) { /* spread thinner than the floor: the largest */
        touch[m++] = (uint16_t)top;
        acc[top] = best;
        kept = best;
    }
    sort_topics(touch, m);
    float scale = kept + pmass > 0 ? (float)(cu / (kept + pmass)) : 0;
    for (uint32_t j = 0; j < m; j++) {
        uint32_t k = touch[j];
        out[j] = (slda_sentry_t){w, k, acc[k] * scale};
        acc[k] = 0;
        loc->sp_mark[k] = 0;
    }
    if (prior > 0) /* the prior part's weight, expanded by the global step */
        out[m++] = (slda_sentry_t){w, SLDA_SPARSE_PRIOR, (float)(prior * scale)};
    return m;
}

/* Every unique word's statistics, words in doc order. */
static uint32_t entries(slda_local_t *loc, const slda_frozen_t *fz, const uint32_t *words,
                        const uint32_t *counts, uint32_t npairs, uint32_t samples,
                        slda_sentry_t *out)
{
    uint32_t nent = 0, first = 0;
    for (uint32_t u = 0; u < npairs; u++) {
        nent += stats(loc, fz, words[u], loc->tab_u[u], counts[u], first, samples, out + nent);
        first += counts[u];
    }
    return nent;
}

uint32_t slda_sparse_run(slda_local_t *loc, const slda_frozen_t *fz, const uint32_t *words,
                         const uint32_t *counts, uint32_t npairs, uint64_t seed_a,
                         uint64_t seed_b, int want_stats, float *theta, slda_sentry_t *out)
{
    const slda_model_t *model = fz->model;
    const slda_params_t *p = &model->p;
    const slda_wtabs_t *t = fz->tabs;
    uint32_t Kp = loc->Kp, burnin, samples, L = 0;
    slda_local_sweeps(p, want_stats, fz->revisit, &burnin, &samples);
    for (uint32_t u = 0; u < npairs; u++)
        L += counts[u];
    reserve(loc, npairs, L, samples);
    loc->nu = npairs;
    loc->ng = L;
    loc->L = L;
    loc->nv = 0;
    if (loc->sp_clean) { /* this step ran last: clear what it left (O(topics), not O(K)) */
        for (uint32_t j = 0; j < loc->ndtop; j++)
            loc->ntheta_sum[loc->dtop[j]] = 0;
    } else {
        memset(loc->ntheta, 0, Kp * sizeof(float));
        memset(loc->ntheta_sum, 0, Kp * sizeof(float));
    }
    slda_rng_seed3(&loc->rng, p->seed, seed_a, seed_b);
    /* every token is sampled; its first topic from its word's proposal */
    uint32_t i = 0;
    for (uint32_t u = 0; u < npairs; u++) {
        uint32_t ti = (uint32_t)t->of[words[u]];
        loc->tab_u[u] = ti;
        for (uint32_t c = 0; c < counts[u]; c++, i++) {
            uint32_t z = draw_word(t, ti, &loc->rng);
            loc->g_u[i] = u;
            loc->z[i] = z;
            loc->ntheta[z] += 1;
        }
    }
    for (uint32_t s = 0; s < burnin; s++)
        sweep(loc, fz);
    loc->ndtop = 0;
    for (uint32_t c = 0; c < samples; c++) {
        sweep(loc, fz);
        keep_sweep(loc, fz->inv_nz, c);
        for (i = 0; i < L; i++) {
            uint32_t z = loc->z[i];
            if (loc->ntheta_sum[z] == 0)
                loc->dtop[loc->ndtop++] = z;
            loc->ntheta_sum[z] += 1;
        }
    }
    for (i = 0; i < L; i++) /* ntheta back to zero (nobody reads it after the run) */
        loc->ntheta[loc->z[i]] = 0;
    loc->sp_clean = 1;
    float inv_s = 1.0f / (float)samples;
    for (uint32_t j = 0; j < loc->ndtop; j++)
        loc->ntheta_sum[loc->dtop[j]] *= inv_s;
    if (theta) {
        float denom = (float)(L + fz->alpha_sum);
        for (uint32_t k = 0; k < loc->K; k++)
            theta[k] = (loc->ntheta_sum[k] + fz->alpha[k]) / denom;
    }
    uint32_t nent = want_stats && out ? entries(loc, fz, words, counts, npairs, samples, out) : 0;
    for (uint32_t c = 0; c < samples; c++) { /* sp_nd back to zero */
        const uint32_t *dl = loc->sp_dl + (size_t)c * loc->sp_dcap;
        float *nd = loc->sp_nd + (size_t)c * loc->Kp;
        for (uint32_t j = 0; j < loc->sp_dn_n[c]; j++)
            nd[dl[j]] = 0;
    }
    return nent;
}

float slda_sparse_doc_score(const slda_frozen_t *fz, slda_local_t *loc, const uint32_t *words,
                            const uint32_t *counts, uint32_t npairs, float *pw)
{
    const slda_wtabs_t *t = fz->tabs;
    const float *inv = fz->inv_nz;
    float *wk = loc->sp_acc; /* n_k inv_k over the document's topics (zero between uses) */
    uint32_t Kp = loc->Kp, nd = loc->ndtop;
    double tot = 0, L = 0, ll = 0, e = 0;
    for (uint32_t u = 0; u < npairs; u++)
        L += counts[u];
    for (uint32_t j = 0; j < nd; j++) {
        uint32_t k = loc->dtop[j];
        tot += loc->ntheta_sum[k];
        wk[k] = loc->ntheta_sum[k] * inv[k];
        e += wk[k];
    }
    /* births.c's theta_k = (c_k + alpha_k) / norm, c = the mean counts scaled to L;
     * sum_k c_k phi_w[k] = scale (sigma sum_k n_k inv_k A_wk + eta sum_k n_k inv_k), the
     * first sum over the shorter of the row's listed topics and the document's */
    double scale = tot > 0 ? L / tot : 0, norm = L + fz->alpha_sum;
    for (uint32_t u = 0; u < npairs; u++) {
        uint32_t ti = (uint32_t)t->of[words[u]];
        const float *a = fz->model->A + (size_t)words[u] * Kp;
        size_t off = t->off[ti], nrow = t->off[ti + 1] - off;
        double r = 0;
        if (nrow < nd) {
            for (size_t j = off; j < off + nrow; j++)
                r += wk[t->topic[j]] * a[t->topic[j]];
        } else {
            for (uint32_t j = 0; j < nd; j++)
                r += wk[loc->dtop[j]] * a[loc->dtop[j]];
        }
        double p = (t->amass[ti] + scale * (t->sigma * r + t->eta * e)) / norm;
        pw[u] = (float)p;
        ll += counts[u] * log(p > 1e-30 ? p : 1e-30);
    }
    for (uint32_t j = 0; j < nd; j++)
        wk[loc->dtop[j]] = 0;
    return L > 0 ? (float)(ll / L) : 0.0f;
}
