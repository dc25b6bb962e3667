/* pam_local.c - 4-level pachinko allocation: the hybrid local step over (super, sub) topic pairs.
 *
 * docs/models.md, "Pachinko allocation". With the topic-word counts frozen for the minibatch,
 * a token's joint conditional over its super-topic x and sub-topic y is
 *
 *   p(x, y) ∝ (n_x + alpha0) (n_xy + alpha_xy) / (n_x + A_x) f[w][y],  A_x = sum_y alpha_xy,
 *
 * n the document's own counts without the token, f LDA's word factor. The words of count > r
 * (local.threshold) take the arithmetic-mean (AMF, as CVB0 is for LDA) update of their
 * responsibility gamma(x, y) with one token's share taken out of the counts; the others are
 * drawn jointly (x, y) from the conditional, their statistics the conditional's marginal over
 * x (Rao-Blackwellised). A word's statistics for the topic-word step are its expected sub-topic
 * counts, so the global step, the accumulators and the update of every kind are shared. Cost:
 * S K per token and sweep (LDA's K, times S).
 */
#include "engine/pam_priv.h"
#include "engine/local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pam_scratch_s {
    uint32_t S, K, cap_v, cap_g;
    float *g;       /* nv x S x K: the AMF pairs' responsibilities */
    uint32_t *v_u;  /* nv: unique-word index */
    float *v_n;     /* nv: count */
    uint32_t *g_u;  /* ng: unique-word index of each drawn token */
    uint32_t *zx, *zy;
    float *nx, *nxy, *nx_sum, *nxy_sum, *p, *A;
    float *alf;     /* S x K: alpha_x as floats, for the document */
    double *cum;    /* S x K: slda_pam_draw_counts' scratch */
} pam_scratch_t;

void slda_pam_scratch_free(void *scratch)
{
    pam_scratch_t *s = scratch;
    if (!s)
        return;
    free(s->g);
    free(s->v_u);
    free(s->v_n);
    free(s->g_u);
    free(s->zx);
    free(s->zy);
    free(s->nx);
    free(s->nxy);
    free(s->nx_sum);
    free(s->nxy_sum);
    free(s->p);
    free(s->A);
    free(s->alf);
    free(s->cum);
    free(s);
}

static pam_scratch_t *scratch(slda_local_t *loc, uint32_t S, uint32_t K, uint32_t nv, uint32_t ng)
{
    pam_scratch_t *s = loc->pam;
    if (s && (s->S != S || s->K != K)) {
        slda_pam_scratch_free(s);
        s = NULL;
    }
    if (!s) {
        s = slda_xcalloc(1, sizeof *s);
        s->S = S;
        s->K = K;
        size_t sk = (size_t)S * K;
        s->nx = slda_xmalloc(S * sizeof *s->nx);
        s->nx_sum = slda_xmalloc(S * sizeof *s->nx_sum);
        s->A = slda_xmalloc(S * sizeof *s->A);
        s->nxy = slda_xmalloc(sk * sizeof *s->nxy);
        s->nxy_sum = slda_xmalloc(sk * sizeof *s->nxy_sum);
        s->p = slda_xmalloc(sk * sizeof *s->p);
        s->alf = slda_xmalloc(sk * sizeof *s->alf);
        s->cum = slda_xmalloc(sk * sizeof *s->cum);
        loc->pam = s;
        loc->pam_free = slda_pam_scratch_free;
    }
    if (nv > s->cap_v) {
        s->cap_v = nv + nv / 2 + 16;
        s->g = slda_xrealloc(s->g, (size_t)s->cap_v * S * K * sizeof *s->g);
        s->v_u = slda_xrealloc(s->v_u, s->cap_v * sizeof *s->v_u);
        s->v_n = slda_xrealloc(s->v_n, s->cap_v * sizeof *s->v_n);
    }
    if (ng > s->cap_g) {
        s->cap_g = ng + ng / 2 + 64;
        s->g_u = slda_xrealloc(s->g_u, s->cap_g * sizeof *s->g_u);
        s->zx = slda_xrealloc(s->zx, s->cap_g * sizeof *s->zx);
        s->zy = slda_xrealloc(s->zy, s->cap_g * sizeof *s->zy);
    }
    return s;
}

static double joint(const pam_scratch_t *s, const slda_pam_t *pam, const float *restrict f,
                    const float *own_g)
{
    uint32_t S = s->S, K = s->K;
    double total = 0;
    for (uint32_t x = 0; x < S; x++) {
        const float *restrict n = s->nxy + (size_t)x * K;
        const float *restrict al = s->alf + (size_t)x * K;
        float *restrict p = s->p + (size_t)x * K;
        float gx = 0, row = 0;
        if (own_g) {
            const float *restrict g = own_g + (size_t)x * K;
            for (uint32_t y = 0; y < K; y++)
                gx += g[y];
            float nx = s->nx[x] - gx, outer = (nx + (float)pam->alpha0) / (nx + s->A[x]);
            for (uint32_t y = 0; y < K; y++) {
                float v = f[y] * (n[y] - g[y] + al[y]) * outer;
                p[y] = v > 0 ? v : 0;
                row += p[y];
            }
        } else {
            float nx = s->nx[x], outer = (nx + (float)pam->alpha0) / (nx + s->A[x]);
            for (uint32_t y = 0; y < K; y++) {
                float v = f[y] * (n[y] + al[y]) * outer;
                p[y] = v > 0 ? v : 0;
                row += p[y];
            }
        }
        total += row;
    }
    return total;
}

static void add_counts(pam_scratch_t *s, const float *g, float w)
{
    uint32_t S = s->S, K = s->K;
    for (uint32_t x = 0; x < S; x++) {
        float gx = 0;
        for (uint32_t y = 0; y < K; y++) {
            s->nxy[(size_t)x * K + y] += w * g[(size_t)x * K + y];
            gx += g[(size_t)x * K + y];
        }
        s->nx[x] += w * gx;
    }
}

static void draw(const pam_scratch_t *s, slda_rng_t *rng, double total, uint32_t *ox,
                 uint32_t *oy)
{
    double u = slda_rng_double(rng) * total, c = 0;
    size_t sk = (size_t)s->S * s->K, last = 0;
    for (size_t i = 0; i < sk; i++) {
        if (s->p[i] > 0)
            last = i;
        c += s->p[i];
        if (c > u) {
            last = i;
            break;
        }
    }
    *ox = (uint32_t)(last / s->K);
    *oy = (uint32_t)(last % s->K);
}

void slda_pam_run(slda_local_t *loc, const slda_frozen_t *fz, const slda_pam_t *pam,
                  const uint32_t *words, const uint32_t *counts, uint32_t npairs,
                  uint64_t seed_a, uint64_t seed_b, int want_stats, float *theta, float *nxy_out)
{
    const slda_model_t *model = fz->model;
    const slda_params_t *p = &model->p;
    uint32_t S = pam->S, K = pam->K, Kp = loc->Kp, nv = 0, ng = 0, L = 0;
    loc->sp_clean = 0; /* local_sparse.c's ntheta state */
    size_t sk = (size_t)S * K;
    for (uint32_t u = 0; u < npairs; u++) {
        L += counts[u];
        if (counts[u] > fz->r)
            nv++;
        else
            ng += counts[u];
    }
    slda_local_reserve(loc, npairs, ng);
    pam_scratch_t *s = scratch(loc, S, K, nv, ng);
    float *stats = loc->stats_out ? loc->stats_out : loc->stats;
    loc->stats_out = NULL;
    loc->prior = NULL;
    if (want_stats)
        memset(stats, 0, (size_t)npairs * Kp * sizeof(float));
    slda_rng_seed3(&loc->rng, p->seed, seed_a, seed_b);
    loc->nu = npairs; /* the word factors are made for loc->nu words */
    slda_local_word_factors(loc, model, words, fz->inv_nz);
    memset(s->nx, 0, S * sizeof *s->nx);
    memset(s->nxy, 0, sk * sizeof *s->nxy);
    memset(s->nx_sum, 0, S * sizeof *s->nx_sum);
    memset(s->nxy_sum, 0, sk * sizeof *s->nxy_sum);
    for (uint32_t x = 0; x < S; x++) {
        double a = 0;
        for (uint32_t y = 0; y < K; y++) {
            a += pam->alpha[(size_t)x * K + y];
            s->alf[(size_t)x * K + y] = (float)pam->alpha[(size_t)x * K + y];
        }
        s->A[x] = (float)a;
    }
    nv = ng = 0;
    for (uint32_t u = 0; u < npairs; u++) {
        if (counts[u] > fz->r) {
            s->v_u[nv] = u;
            s->v_n[nv++] = (float)counts[u];
        } else {
            for (uint32_t i = 0; i < counts[u]; i++)
                s->g_u[ng++] = u;
        }
    }
    /* initial responsibilities from the priors, then the initial draws in order */
    for (uint32_t v = 0; v < nv; v++) {
        float *g = s->g + (size_t)v * sk;
        double tot = joint(s, pam, loc->f + (size_t)s->v_u[v] * Kp, NULL);
        for (size_t i = 0; i < sk; i++)
            g[i] = tot > 0 ? (float)(s->p[i] / tot) : 1.0f / (float)sk;
    }
    for (uint32_t v = 0; v < nv; v++)
        add_counts(s, s->g + (size_t)v * sk, s->v_n[v]);
    for (uint32_t i = 0; i < ng; i++) {
        double tot = joint(s, pam, loc->f + (size_t)s->g_u[i] * Kp, NULL);
        draw(s, &loc->rng, tot, &s->zx[i], &s->zy[i]);
        s->nx[s->zx[i]] += 1;
        s->nxy[(size_t)s->zx[i] * K + s->zy[i]] += 1;
    }
    uint32_t burnin, samples;
    slda_local_sweeps(p, want_stats, fz->revisit, &burnin, &samples);
    for (uint32_t sweep = 0; sweep < burnin + samples; sweep++) {
        int collect = sweep >= burnin;
        for (uint32_t v = 0; v < nv; v++) {
            float *g = s->g + (size_t)v * sk;
            double tot = joint(s, pam, loc->f + (size_t)s->v_u[v] * Kp, g);
            if (!(tot > 0))
                continue;
            float n = s->v_n[v];
            add_counts(s, g, -n);
            for (size_t i = 0; i < sk; i++)
                g[i] = (float)(s->p[i] / tot);
            add_counts(s, g, n);
        }
        for (uint32_t i = 0; i < ng; i++) {
            uint32_t x = s->zx[i], y = s->zy[i];
            s->nx[x] -= 1;
            s->nxy[(size_t)x * K + y] -= 1;
            double tot = joint(s, pam, loc->f + (size_t)s->g_u[i] * Kp, NULL);
            draw(s, &loc->rng, tot, &s->zx[i], &s->zy[i]);
            x = s->zx[i];
            y = s->zy[i];
            s->nx[x] += 1;
            s->nxy[(size_t)x * K + y] += 1;
            if (collect && want_stats && tot > 0) { /* Rao-Blackwellised: the marginal over x */
                float *st = stats + (size_t)s->g_u[i] * Kp;
                float inv = (float)(1.0 / tot);
                for (uint32_t xx = 0; xx < S; xx++)
                    for (uint32_t yy = 0; yy < K; yy++)
                        st[yy] += s->p[(size_t)xx * K + yy] * inv;
            }
        }
        if (!collect)
            continue;
        for (uint32_t v = 0; v < nv && want_stats; v++) {
            const float *g = s->g + (size_t)v * sk;
            float *st = stats + (size_t)s->v_u[v] * Kp;
            for (uint32_t x = 0; x < S; x++)
                for (uint32_t y = 0; y < K; y++)
                    st[y] += s->v_n[v] * g[(size_t)x * K + y];
        }
        for (uint32_t x = 0; x < S; x++)
            s->nx_sum[x] += s->nx[x];
        for (size_t i = 0; i < sk; i++)
            s->nxy_sum[i] += s->nxy[i];
    }
    float inv_s = 1.0f / (float)samples;
    if (want_stats)
        for (size_t i = 0; i < (size_t)npairs * Kp; i++)
            stats[i] *= inv_s;
    for (uint32_t x = 0; x < S; x++)
        s->nx_sum[x] *= inv_s;
    for (size_t i = 0; i < sk; i++)
        s->nxy_sum[i] *= inv_s;
    if (nxy_out) { /* alpha_x's counts: one draw of every token (slda_pam_draw_counts) */
        memset(nxy_out, 0, sk * sizeof *nxy_out);
        for (uint32_t i = 0; i < ng; i++)
            nxy_out[(size_t)s->zx[i] * K + s->zy[i]] += 1;
        for (uint32_t v = 0; v < nv; v++)
            slda_pam_draw_counts(s->g + (size_t)v * sk, sk, (uint32_t)s->v_n[v], &loc->rng,
                                 s->cum, nxy_out);
    }
    memset(loc->ntheta_sum, 0, Kp * sizeof(float)); /* the sub-topic counts, as LDA's N_theta */
    for (uint32_t x = 0; x < S; x++)
        for (uint32_t y = 0; y < K; y++)
            loc->ntheta_sum[y] += s->nxy_sum[(size_t)x * K + y];
    loc->L = L;
    if (theta) {
        double denom0 = L + S * pam->alpha0;
        for (uint32_t y = 0; y < K; y++)
            theta[y] = 0;
        for (uint32_t x = 0; x < S; x++) {
            double tx = (s->nx_sum[x] + pam->alpha0) / denom0;
            double inner = s->nx_sum[x] + s->A[x];
            for (uint32_t y = 0; y < K; y++)
                theta[y] += (float)(tx * (s->nxy_sum[(size_t)x * K + y] +
                                          pam->alpha[(size_t)x * K + y]) / inner);
        }
    }
}
