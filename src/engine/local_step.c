/* local_step.c - the per-document hybrid local step (docs/algorithm.md, "Local step").
 *
 * Global state is frozen while a minibatch runs: the word factors of a
 * document's unique words are computed once into loc->f, then S sweeps run
 * over its VB pairs (the variant table below, one file each) and its CG
 * tokens (local_cgs.c). A worker owns its slda_local_t; nothing here touches the
 * model except through const reads, so documents run on any thread, and the
 * result depends only on the document and its seed.
 */
#include "engine/local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The variant table: one row per line of core/config.h's SLDA_VB_VARIANTS. */
#define VB_ROW(id, name) [SLDA_VB_##id] = &slda_vb_##name,
static const slda_vb_ops_t *const vb_table[SLDA_VB__COUNT] = {
    [SLDA_VB_NONE] = NULL, SLDA_VB_VARIANTS(VB_ROW)};
#undef VB_ROW

const slda_vb_ops_t *slda_vb_ops(slda_vb_kind_t vb)
{
    return (unsigned)vb < SLDA_VB__COUNT ? vb_table[vb] : NULL;
}

/* Scratch vectors are small (a document's working set): abort on failure. */
static float *vec_alloc(size_t n)
{
    float *v = slda_big_alloc(n * sizeof(float), "local step scratch", NULL, 0);
    if (!v) {
        slda_xmalloc(SIZE_MAX); /* prints the failure and aborts */
    }
    return v;
}

slda_local_t *slda_local_new(uint32_t K)
{
    slda_local_t *loc = slda_xcalloc(1, sizeof *loc);
    loc->K = K;
    loc->Kp = (K + 15) & ~15u;
    loc->ntheta = vec_alloc(loc->Kp);
    loc->ntheta_sum = vec_alloc(loc->Kp);
    loc->var = vec_alloc(loc->Kp);
    loc->expdig = vec_alloc(loc->Kp);
    loc->logdig = vec_alloc(loc->Kp);
    loc->p = vec_alloc(loc->Kp);
    loc->alpha = vec_alloc(loc->Kp);
    loc->prior_buf = vec_alloc(loc->Kp);
    memset(loc->prior_buf, 0, loc->Kp * sizeof(float));
    return loc;
}

void slda_local_destroy(slda_local_t *loc)
{
    if (!loc)
        return;
    free(loc->v_u);
    free(loc->v_n);
    free(loc->g_u);
    free(loc->z);
    free(loc->tab_u);
    free(loc->zs);
    free(loc->dtop);
    free(loc->sp_dl);
    free(loc->sp_nd);
    free(loc->sp_e);
    free(loc->sp_m);
    free(loc->sp_dn_n);
    free(loc->sp_mark);
    free(loc->sp_acc);
    free(loc->sp_touch);
    slda_big_free(loc->f);
    slda_big_free(loc->lf);
    slda_big_free(loc->gamma);
    slda_big_free(loc->stats);
    slda_big_free(loc->ntheta);
    slda_big_free(loc->ntheta_sum);
    slda_big_free(loc->var);
    slda_big_free(loc->expdig);
    slda_big_free(loc->logdig);
    slda_big_free(loc->p);
    slda_big_free(loc->alpha);
    slda_big_free(loc->prior_buf);
    if (loc->pam_free)
        loc->pam_free(loc->pam);
    free(loc);
}

void slda_local_reserve(slda_local_t *loc, uint32_t nu, uint32_t ng)
{
    if (nu > loc->cap_u) {
        uint32_t cap = nu < 64 ? 64 : nu + nu / 2;
        size_t bytes = (size_t)cap * loc->Kp * sizeof(float);
        loc->f = slda_big_grow(loc->f, bytes); /* alloc.c: touched pages stay, no copy */
        loc->lf = slda_big_grow(loc->lf, bytes);
        loc->gamma = slda_big_grow(loc->gamma, bytes);
        loc->stats = slda_big_grow(loc->stats, bytes);
        loc->v_u = slda_xrealloc(loc->v_u, cap * sizeof *loc->v_u);
        loc->v_n = slda_xrealloc(loc->v_n, cap * sizeof *loc->v_n);
        loc->cap_u = cap;
    }
    if (ng > loc->cap_g) {
        uint32_t cap = ng < 256 ? 256 : ng + ng / 2;
        loc->g_u = slda_xrealloc(loc->g_u, cap * sizeof *loc->g_u);
        loc->z = slda_xrealloc(loc->z, cap * sizeof *loc->z);
        loc->cap_g = cap;
    }
}

slda_err_t slda_frozen_init(slda_frozen_t *fz, const slda_model_t *model, char *errstr,
                            size_t errstr_size)
{
    uint32_t Kp = model->Kp;
    double weta = (double)slda_model_smoothing_words(model) * model->p.eta;
    memset(fz, 0, sizeof *fz);
    fz->model = model;
    fz->ops = slda_vb_ops(model->p.vb);
    fz->r = slda_params_r(&model->p);
    fz->inv_nz = slda_big_alloc(Kp * sizeof(float), "topic totals", errstr, errstr_size);
    fz->alpha = slda_big_alloc(Kp * sizeof(float), "alpha", errstr, errstr_size);
    if (!fz->inv_nz || !fz->alpha) {
        slda_frozen_clear(fz);
        return SLDA_ERR_NOMEM;
    }
    for (uint32_t k = 0; k < model->K; k++) {
        double nz = model->NZ[k] > 0 ? model->NZ[k] : 0;
        fz->inv_nz[k] = (float)(1.0 / (nz + weta));
        fz->alpha[k] = (float)model->alpha[k];
    }
    fz->alpha_sum = model->alpha_sum;
    return SLDA_OK;
}

void slda_frozen_clear(slda_frozen_t *fz)
{
    slda_big_free(fz->inv_nz);
    slda_big_free(fz->alpha);
    fz->inv_nz = fz->alpha = NULL;
}

/* Split the pairs by the threshold r into VB pairs and CG tokens. */
static void split_doc(slda_local_t *loc, const uint32_t *counts, uint32_t npairs, uint32_t r)
{
    loc->nv = loc->ng = loc->L = 0;
    for (uint32_t u = 0; u < npairs; u++) {
        uint32_t n = counts[u];
        loc->L += n;
        if (n > r) {
            loc->v_u[loc->nv] = u;
            loc->v_n[loc->nv] = (float)n;
            loc->nv++;
        } else {
            for (uint32_t i = 0; i < n; i++)
                loc->g_u[loc->ng++] = u;
        }
    }
}

/* gamma_w proportional to f[w] * alpha (docs/algorithm.md: initialisation). */
static void init_gamma(slda_local_t *loc)
{
    uint32_t Kp = loc->Kp;
    for (uint32_t v = 0; v < loc->nv; v++) {
        const float *f = loc->f + (size_t)loc->v_u[v] * Kp;
        float *g = loc->gamma + (size_t)v * Kp;
        float n = loc->v_n[v], sum = 0;
        for (uint32_t k = 0; k < Kp; k++) {
            g[k] = f[k] * loc->alpha[k];
            sum += g[k];
        }
        float inv = sum > 0 ? 1.0f / sum : 0;
        for (uint32_t k = 0; k < Kp; k++) {
            g[k] *= inv;
            loc->ntheta[k] += n * g[k];
            loc->var[k] += n * g[k] * (1 - g[k]);
        }
    }
}

static void collect_vb(slda_local_t *loc)
{
    uint32_t Kp = loc->Kp;
    for (uint32_t v = 0; v < loc->nv; v++) {
        const float *g = loc->gamma + (size_t)v * Kp;
        float *s = loc->stats + (size_t)loc->v_u[v] * Kp;
        float n = loc->v_n[v];
        for (uint32_t k = 0; k < Kp; k++)
            s[k] += n * g[k];
    }
}

static float ntheta_change(const slda_local_t *loc, const float *before)
{
    float d = 0;
    for (uint32_t k = 0; k < loc->K; k++)
        d += fabsf(loc->ntheta[k] - before[k]);
    return d;
}

static void sweep(slda_local_t *loc, const slda_frozen_t *fz)
{
    if (fz->ops && loc->nv)
        fz->ops->sweep(loc);
    if (loc->ng)
        slda_cgs_sweep(loc);
    if (loc->collect) {
        if (loc->want_stats)
            collect_vb(loc);
        for (uint32_t k = 0; k < loc->Kp; k++)
            loc->ntheta_sum[k] += loc->ntheta[k];
    }
}

/* replay on: a trained document is visited twice (replay.c), the first time
 * with half of each phase's sweeps (rounded down, at least one collection
 * sweep: 2 + 2 of the default 5 + 5), the second with replay.burnin +
 * replay.samples (docs/engine.md, "Second visits"). */
void slda_local_sweeps(const slda_params_t *p, int want_stats, int revisit, uint32_t *burnin,
                       uint32_t *samples)
{
    *burnin = p->burnin;
    *samples = p->samples;
    if (want_stats && SLDA_REPLAY_ACTIVE(p)) {
        *burnin = revisit ? p->replay_burnin : p->burnin / 2;
        *samples = revisit ? p->replay_samples : (p->samples >= 2 ? p->samples / 2 : 1);
    }
}

void slda_local_run(slda_local_t *loc, const slda_frozen_t *fz, const uint32_t *words,
                    const uint32_t *counts, uint32_t npairs, uint64_t seed_a, uint64_t seed_b,
                    int want_stats, float *theta)
{
    const slda_model_t *model = fz->model;
    const slda_params_t *p = &model->p;
    uint32_t Kp = loc->Kp, ntok = 0;
    for (uint32_t u = 0; u < npairs; u++)
        ntok += counts[u] <= fz->r ? counts[u] : 0;
    slda_local_reserve(loc, npairs, ntok);
    float *own_stats = loc->stats;
    if (loc->stats_out) /* the caller's buffer, for this run only */
        loc->stats = loc->stats_out;
    loc->nu = npairs;
    loc->want_stats = want_stats;
    loc->stats_kind = p->stats;
    loc->collect = 0;
    memcpy(loc->alpha, loc->prior ? loc->prior : fz->alpha, Kp * sizeof(float));
    double alpha_sum = loc->prior ? loc->prior_sum : fz->alpha_sum;
    loc->prior = NULL;
    loc->sp_clean = 0;
    memset(loc->ntheta, 0, Kp * sizeof(float));
    memset(loc->ntheta_sum, 0, Kp * sizeof(float));
    memset(loc->var, 0, Kp * sizeof(float));
    if (want_stats)
        memset(loc->stats, 0, (size_t)npairs * Kp * sizeof(float));
    slda_rng_seed3(&loc->rng, p->seed, seed_a, seed_b);
    split_doc(loc, counts, npairs, fz->r);

    if (fz->ops)
        fz->ops->init_words(loc, model, words, fz->inv_nz);
    else
        slda_local_word_factors(loc, model, words, fz->inv_nz);
    init_gamma(loc);
    slda_cgs_init(loc);

    uint32_t burnin, samples;
    slda_local_sweeps(p, want_stats, fz->revisit, &burnin, &samples);
    float before[SLDA_MAX_TOPICS];
    for (uint32_t s = 0; s < burnin; s++) {
        if (p->tolerance > 0)
            memcpy(before, loc->ntheta, loc->K * sizeof(float));
        sweep(loc, fz);
        if (p->tolerance > 0 && loc->L > 0 &&
            ntheta_change(loc, before) < (float)(p->tolerance * loc->L))
            break;
    }
    loc->collect = 1;
    for (uint32_t s = 0; s < samples; s++)
        sweep(loc, fz);

    float inv_s = 1.0f / (float)samples;
    if (want_stats) {
        for (size_t i = 0; i < (size_t)npairs * Kp; i++)
            loc->stats[i] *= inv_s;
    }
    for (uint32_t k = 0; k < Kp; k++)
        loc->ntheta_sum[k] *= inv_s;
    loc->stats = own_stats;
    loc->stats_out = NULL;
    if (theta) {
        float denom = (float)(loc->L + alpha_sum);
        for (uint32_t k = 0; k < loc->K; k++)
            theta[k] = (loc->ntheta_sum[k] + loc->alpha[k]) / denom;
    }
}
