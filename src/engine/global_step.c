/* global_step.c - the stochastic update of the global counts, and the alpha step.
 *
 * docs/algorithm.md, "Global step": rho_t = max(rho_min, s (tau + t)^-kappa);
 * Nphi <- (1 - rho) Nphi + rho (C/|M|) sum_j S_j, done lazily: the decay only
 * scales sigma, and the words the minibatch touched get rho (C/|M|) / sigma
 * times their statistics added to A, so an update costs O(words touched x K)
 * plus O(K) for NZ. sigma is folded into A (O(W K)) only when it falls below
 * SLDA_SIGMA_FOLD, which with rho_min = 0 and kappa = 0.7 happens rarely.
 *
 * global.rows=counts (the default) departs from that update in one respect:
 * the total of each word's row. The plain step decays the rows of words absent
 * from the minibatch by (1 - rho_t) and gives a present word's row rho_t C/|M|
 * times its minibatch count, so a word's total is a noisy, recency-weighted
 * guess of its frequency: a rare word seen early has almost nothing left at the
 * end of a pass, one seen late holds many times its count. With counts, every
 * row total follows its word's running token count instead (scaled to C): the
 * rows decay by (1 - r_t) with r_t = max(|M| / tokens seen, rho_min), which is
 * the exact running average, and a present word's row is the plain update of
 * that row rescaled to its new total (1 - r_t) R_w + r_t (C/|M|) n_w. So the
 * split of a word over the topics moves as in the plain step, and only the
 * totals change; NZ is kept equal to the sum of the rows. No new state: the
 * totals live in the rows, so snapshots hold them. After a topic birth the
 * running count is windowed so the totals follow a changed stream (births.c,
 * "5. Row totals": train.c passes the windowed count as tokens_before). Measured in
 * docs/benchmarks.md ("One pass against converged Gibbs").
 * The stochastic alpha step (Minka's fixed point or a safeguarded Newton on
 * the minibatch's document counts, blended with rho_t) lives here too.
 */
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/rows_nz.h"
#include "engine/step.h"
#include "engine/train.h"
#include "core/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

slda_accum_t *slda_accum_new(uint32_t W, uint32_t Kp, char *errstr, size_t errstr_size)
{
    slda_accum_t *acc = slda_xcalloc(1, sizeof *acc);
    acc->W = W;
    acc->Kp = Kp;
    acc->slot_of = slda_big_alloc((size_t)W * sizeof(int32_t), "minibatch word index",
                                  errstr, errstr_size);
    if (!acc->slot_of) {
        free(acc);
        return NULL;
    }
    memset(acc->slot_of, 0xff, (size_t)W * sizeof(int32_t));
    return acc;
}

void slda_accum_free(slda_accum_t *acc)
{
    if (!acc)
        return;
    slda_big_free(acc->slot_of);
    free(acc->word);
    free(acc->c1);
    free(acc->c2);
    slda_big_free(acc->sum);
    free(acc);
}

void slda_accum_reset(slda_accum_t *acc)
{
    for (uint32_t s = 0; s < acc->nslots; s++)
        acc->slot_of[acc->word[s]] = -1;
    acc->nslots = 0;
}

static void accum_grow(slda_accum_t *acc)
{
    uint32_t cap = acc->cap ? acc->cap * 2 : 1024;
    acc->sum = slda_big_grow(acc->sum, (size_t)cap * acc->Kp * sizeof(float)); /* in place */
    acc->word = slda_xrealloc(acc->word, cap * sizeof *acc->word);
    acc->c1 = slda_xrealloc(acc->c1, cap * sizeof *acc->c1);
    acc->c2 = slda_xrealloc(acc->c2, cap * sizeof *acc->c2);
    acc->cap = cap;
}

__attribute__((target_clones("avx2", "default"))) static void
slda_accum_add_clones(slda_accum_t *acc, const uint32_t *words, const float *stats, uint32_t n)
{
    uint32_t Kp = acc->Kp;
    for (uint32_t u = 0; u < n; u++) {
        int32_t s = acc->slot_of[words[u]];
        if (s < 0) {
            if (acc->nslots == acc->cap)
                accum_grow(acc);
            s = (int32_t)acc->nslots++;
            acc->slot_of[words[u]] = s;
            acc->word[s] = words[u];
            memset(acc->sum + (size_t)s * Kp, 0, Kp * sizeof(float));
        }
        float *dst = acc->sum + (size_t)s * Kp;
        const float *src = stats + (size_t)u * Kp;
        for (uint32_t k = 0; k < Kp; k++)
            dst[k] += src[k];
    }
}


/* forget_all clears the rows of A ever written (rows_used; the others are
 * zero), on the pool. Clearing all of a model with vocab.capacity=131072 and
 * K=100, 54 MB, most of it never touched before (page faults), took 23 ms on
 * one thread of this machine, 12 ms on two, and kept all of it resident. */
static void forget_all(slda_model_t *model)
{
    slda_model_zero_rows(model, 0, model->rows_used);
    memset(model->NZ, 0, model->K * sizeof(double));
    model->sigma = 1.0;
}

/* Sum of one Kp-float row, 8 floats at a time in a fixed order (inlined into
 * each clone of counts_rows). */
static inline __attribute__((always_inline)) double row_sum(const float *v, uint32_t Kp)
{
    const slda_v8f *vv = (const slda_v8f *)v;
    slda_v8f s = {0};
    for (uint32_t b = 0; b < Kp / 8; b++)
        s += vv[b];
    return slda_v8_sum(&s);
}

/* global.rows=counts (see the top of this file). sigma is the decayed scale
 * (already in the model, or the one slda_global_prepare will commit): a
 * touched word's row before this update is sigma a / lam (lam = 1 when the
 * model was just cleared), and the decayed row sigma a is what NZ holds after
 * its own decay. Its new row f ((1 - rho) sigma a / lam + rho cm x), x = its
 * minibatch statistics (summing to its count n_w), is written as
 * c1 a + c2 x, 8 floats at a time in a fixed order (compiled for AVX2 and the
 * baseline with the same arithmetic, like the local step's loops): into A
 * (in_place) or over x in the accumulator, for slda_global_commit to copy.
 * First every touched row's total is read (independent loads of scattered
 * rows, which the memory system overlaps; updating each row right after its
 * sum made every row wait for its load: +10% time on 20 Newsgroups), then the
 * rows are updated. */
__attribute__((target_clones("avx2", "default"))) static void
counts_rows(slda_model_t *model, slda_accum_t *acc, double sigma, double lam, double r,
            double rho, double cm, slda_v8f *da, int in_place)
{
    uint32_t Kp = model->Kp;
    for (uint32_t s = 0; s < acc->nslots; s++) {
        const float *a = model->A + (size_t)acc->word[s] * Kp;
        if (s + 4 < acc->nslots) { /* rows are scattered: start loading a later one */
            const float *later = model->A + (size_t)acc->word[s + 4] * Kp;
            for (uint32_t k = 0; k < Kp; k += 16)
                __builtin_prefetch(later + k);
        }
        double old = row_sum(a, Kp) * sigma / lam, n = row_sum(acc->sum + (size_t)s * Kp, Kp);
        double plain = (1.0 - rho) * old + rho * cm * n; /* the plain step's new row total */
        double f = ((1.0 - r) * old + r * cm * n) / plain; /* to the running count's total */
        acc->c1[s] = n > 0 && plain > 0 ? (float)(f * (1.0 - rho) / lam) : 1.0f;
        acc->c2[s] = n > 0 && plain > 0 ? (float)(f * rho * cm / sigma) : 0.0f;
    }
    for (uint32_t s = 0; s < acc->nslots; s++) {
        slda_v8f *av = (slda_v8f *)(model->A + (size_t)acc->word[s] * Kp);
        slda_v8f *xv = (slda_v8f *)(acc->sum + (size_t)s * Kp);
        slda_v8f *out = in_place ? av : xv;
        slda_v8f c1 = {0}, c2 = {0};
        c1 += acc->c1[s];
        c2 += acc->c2[s];
        for (uint32_t b = 0; b < Kp / 8; b++) {
            slda_v8f na = c1 * av[b] + c2 * xv[b];
            da[b] += na - av[b];
            out[b] = na;
        }
    }
}

/* The counts update's constants for a minibatch of ntokens tokens that comes
 * after tokens_before tokens: rho, r, lam = 1 - r, cm = C / ntokens. */
void slda_counts_constants(const slda_model_t *model, uint64_t ntokens, uint64_t tokens_before,
                           slda_gprep_t *g)
{
    double C = slda_step_corpus(model);
    double seen = (double)tokens_before + (double)ntokens;
    double r = seen > 0 ? (double)ntokens / seen : 0;
    if (r < model->p.rho_min)
        r = model->p.rho_min;
    if (r > 1.0)
        r = 1.0;
    g->rho = slda_rho(&model->p, model->t);
    g->r = r;
    g->lam = 1.0 - r;
    g->cm = ntokens ? C / (double)ntokens : 0;
}

static void counts_nz(slda_model_t *model, const slda_gprep_t *g)
{
    const float *d = (const float *)g->da;
    for (uint32_t k = 0; k < model->K; k++)
        model->NZ[k] = (1.0 - g->r) * model->NZ[k] + model->sigma * d[k];
}

static double counts_update(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens,
                            uint64_t tokens_before, slda_gprep_t *g)
{
    slda_counts_constants(model, ntokens, tokens_before, g);
    memset(g->da, 0, model->Kp * sizeof(float)); /* the model's topics: not all SLDA_MAX_TOPICS */
    double lam = g->lam;
    if (lam < 1e-12) { /* the first update: only this minibatch counts */
        forget_all(model);
        lam = 1.0;
    } else {
        model->sigma *= lam;
    }
    if (model->sigma < SLDA_SIGMA_FOLD)
        slda_model_fold_scale(model);
    counts_rows(model, acc, model->sigma, lam, g->r, g->rho, g->cm, g->da, 1);
    counts_nz(model, g);
    model->t++;
    return g->rho;
}

/* global.rows=decay: the plain SCVB0 step, in place. */
static double decay_update(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens)
{
    uint32_t K = model->K, Kp = model->Kp;
    double rho = slda_rho(&model->p, model->t);
    double C = slda_step_corpus(model);
    double c = ntokens ? rho * C / (double)ntokens : 0;
    double colsum[SLDA_MAX_TOPICS];
    memset(colsum, 0, model->K * sizeof *colsum);

    if (1.0 - rho < 1e-12)
        forget_all(model);
    else
        model->sigma *= 1.0 - rho;
    if (model->sigma < SLDA_SIGMA_FOLD)
        slda_model_fold_scale(model);
    float scale = (float)(c / model->sigma);
    for (uint32_t s = 0; s < acc->nslots; s++) {
        float *a = model->A + (size_t)acc->word[s] * Kp;
        const float *x = acc->sum + (size_t)s * Kp;
        for (uint32_t k = 0; k < K; k++) {
            a[k] += scale * x[k];
            colsum[k] += x[k];
        }
    }
    for (uint32_t k = 0; k < K; k++)
        model->NZ[k] = (1.0 - rho) * model->NZ[k] + c * colsum[k];
    model->t++;
    return rho;
}

double slda_global_update(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens)
{
    slda_gprep_t g;
    if (model->p.rows == SLDA_ROWS_COUNTS)
        return counts_update(model, acc, ntokens, model->tokens, &g);
    return decay_update(model, acc, ntokens);
}

void slda_global_prepare(const slda_model_t *model, slda_accum_t *acc, uint64_t ntokens,
                         uint64_t tokens_before, slda_gprep_t *g)
{
    g->ready = 0;
    if (model->p.rows != SLDA_ROWS_COUNTS)
        return;
    slda_counts_constants(model, ntokens, tokens_before, g);
    g->sigma = model->sigma * g->lam;
    if (g->lam < 1e-12 || g->sigma < SLDA_SIGMA_FOLD)
        return; /* clearing or folding rewrites every row: done by the commit */
    memset(g->da, 0, model->Kp * sizeof(float));
    /* model is only read: the new rows go over the statistics in acc */
    counts_rows((slda_model_t *)model, acc, g->sigma, g->lam, g->r, g->rho, g->cm, g->da, 0);
    g->ready = 1;
}

/* The commit copies the new rows in pieces of this many on the pool, while
 * the other threads would wait for it: a KOS minibatch's update is about
 * 1,800 rows (0.8 MB, 20 us at cache speed); with two threads the commits of
 * a KOS run took 4.5 -> 2.9 ms, of Reuters 12.5 -> 10.6 ms (clocks around
 * them, three runs each). */
#define COMMIT_PIECE 256

typedef struct commit_job_s {
    slda_model_t *model;
    const slda_accum_t *acc;
} commit_job_t;

static void commit_piece(size_t i, uint32_t worker, void *opaque)
{
    const commit_job_t *job = opaque;
    uint32_t Kp = job->model->Kp, from = (uint32_t)i * COMMIT_PIECE, to = from + COMMIT_PIECE;
    (void)worker;
    if (to > job->acc->nslots)
        to = job->acc->nslots;
    for (uint32_t s = from; s < to; s++)
        memcpy(job->model->A + (size_t)job->acc->word[s] * Kp, job->acc->sum + (size_t)s * Kp,
               Kp * sizeof(float));
}

double slda_global_commit(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens,
                          uint64_t tokens_before, slda_gprep_t *g)
{
    slda_rows_nz_invalidate(model); /* rows_nz.c: the sparse path's lists follow only its own step */
    if (!g->ready) {
        if (model->p.rows == SLDA_ROWS_COUNTS)
            return counts_update(model, acc, ntokens, tokens_before, g);
        return decay_update(model, acc, ntokens);
    }
    commit_job_t job = {model, acc};
    model->sigma = g->sigma;
    slda_pool_run(model->pool, (acc->nslots + COMMIT_PIECE - 1) / COMMIT_PIECE, commit_piece, &job);
    counts_nz(model, g);
    model->t++;
    return g->rho;
}

double slda_trigamma(double x)
{
    double r = 0.0;
    while (x < 6.0) {
        r += 1.0 / (x * x);
        x += 1.0;
    }
    double f = 1.0 / (x * x);
    return r + 1.0 / x + f / 2.0 +
           f / x * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30))));
}

/* Dirichlet-multinomial log-likelihood of alpha for the document counts
 * (Minka 2000, eq. 53; constants dropped): sum_j [lgamma(sum alpha) -
 * lgamma(L_j + sum alpha) + sum_k (lgamma(n_jk + alpha_k) - lgamma(alpha_k))]. */
static double alpha_loglik(const double *a, uint32_t K, const float *nt, const uint32_t *len,
                           size_t nd)
{
    double as = 0, ll = 0;
    for (uint32_t k = 0; k < K; k++)
        as += a[k];
    for (uint32_t k = 0; k < K; k++) {
        double lk = lgamma(a[k]);
        for (size_t j = 0; j < nd; j++)
            ll += lgamma(nt[j * K + k] + a[k]) - lk;
    }
    for (size_t j = 0; j < nd; j++)
        ll += lgamma(as) - lgamma(len[j] + as);
    return ll;
}

/* One step of Minka's fixed point (Heinrich eq. 10 form):
 * alpha_k <- alpha_k sum_j [psi(n_jk + alpha_k) - psi(alpha_k)] /
 *                   sum_j [psi(L_j + sum alpha) - psi(sum alpha)].
 * It never lowers the likelihood (Minka 2000, sec. 1). Returns 0 when there
 * is nothing to fit (no tokens). */
static int fixed_point_step(double *a, uint32_t K, const float *nt, const uint32_t *len,
                            size_t nd)
{
    double as = 0, den = 0;
    for (uint32_t k = 0; k < K; k++)
        as += a[k];
    for (size_t j = 0; j < nd; j++)
        den += slda_digamma(len[j] + as) - slda_digamma(as);
    if (!(den > 0))
        return 0;
    for (uint32_t k = 0; k < K; k++) {
        double num = 0, dk = slda_digamma(a[k]);
        for (size_t j = 0; j < nd; j++)
            num += slda_digamma(nt[j * K + k] + a[k]) - dk;
        double na = a[k] * num / den;
        a[k] = na > SLDA_ALPHA_MIN ? na : SLDA_ALPHA_MIN;
    }
    return 1;
}

/* Newton's direction for the likelihood (Minka 2000, sec. 3; Heinrich eq.
 * 11): gradient g_k = sum_j [psi(sum a) - psi(L_j + sum a) + psi(n_jk + a_k)
 * - psi(a_k)], Hessian H = diag(q) + z 1 1', q_k = sum_j [psi'(n_jk + a_k) -
 * psi'(a_k)] (< 0), z = sum_j [psi'(sum a) - psi'(L_j + sum a)] (> 0), so
 * H^-1 g = (g - b) / q with b = sum(g/q) / (1/z + sum(1/q)). H is negative
 * definite (the Newton step goes uphill) iff every q_k < 0 and 1/z + sum 1/q
 * > 0 (det(diag(q) + z 1 1') = det(diag(q)) (1 + z sum 1/q), and a rank-one
 * term moves one eigenvalue only); returns 0 when it is not, and the caller
 * takes a fixed-point step. */
static int newton_direction(const double *a, uint32_t K, const float *nt, const uint32_t *len,
                            size_t nd, double *dir)
{
    double g[SLDA_MAX_TOPICS], q[SLDA_MAX_TOPICS];
    double as = 0, gz = 0, z = 0, sgq = 0, siq = 0;
    for (uint32_t k = 0; k < K; k++)
        as += a[k];
    for (size_t j = 0; j < nd; j++) {
        gz += slda_digamma(as) - slda_digamma(len[j] + as);
        z += slda_trigamma(as) - slda_trigamma(len[j] + as);
    }
    if (!(z > 0))
        return 0;
    for (uint32_t k = 0; k < K; k++) {
        double dk = slda_digamma(a[k]), tk = slda_trigamma(a[k]);
        g[k] = gz;
        q[k] = 0;
        for (size_t j = 0; j < nd; j++) {
            g[k] += slda_digamma(nt[j * K + k] + a[k]) - dk;
            q[k] += slda_trigamma(nt[j * K + k] + a[k]) - tk;
        }
        if (!(q[k] < 0))
            return 0; /* topic k unused: the optimum is at the boundary */
        sgq += g[k] / q[k];
        siq += 1.0 / q[k];
    }
    if (!(1.0 / z + siq > 0))
        return 0;
    double b = sgq / (1.0 / z + siq);
    for (uint32_t k = 0; k < K; k++)
        dir[k] = -(g[k] - b) / q[k]; /* -H^-1 g */
    return 1;
}

/* Safeguarded Newton: the full step, halved until alpha stays above
 * SLDA_ALPHA_MIN and the likelihood does not fall; a fixed-point step when
 * the Hessian is not negative definite or 30 halvings do not help (a plain
 * Newton step overshoots far from the optimum, e.g. from alpha much too
 * large, and can leave the positive orthant). Returns 0 when converged. */
static int newton_step(double *a, uint32_t K, const float *nt, const uint32_t *len, size_t nd)
{
    double dir[SLDA_MAX_TOPICS], na[SLDA_MAX_TOPICS];
    if (newton_direction(a, K, nt, len, nd, dir)) {
        double ll = alpha_loglik(a, K, nt, len, nd), step = 1.0;
        for (int tries = 0; tries < 30; tries++, step *= 0.5) {
            int ok = 1;
            for (uint32_t k = 0; k < K && ok; k++) {
                na[k] = a[k] + step * dir[k];
                ok = na[k] >= SLDA_ALPHA_MIN && isfinite(na[k]);
            }
            if (ok && alpha_loglik(na, K, nt, len, nd) >= ll) {
                memcpy(a, na, K * sizeof *a);
                return 1;
            }
        }
    }
    return fixed_point_step(a, K, nt, len, nd);
}

void slda_alpha_estimate(slda_alpha_learn_t how, double *a, uint32_t K, const float *nt,
                         const uint32_t *len, size_t nd, int iters)
{
    double prev[SLDA_MAX_TOPICS];
    for (int it = 0; it < iters; it++) {
        memcpy(prev, a, K * sizeof *a);
        int moved = how == SLDA_ALPHA_NEWTON ? newton_step(a, K, nt, len, nd)
                                             : fixed_point_step(a, K, nt, len, nd);
        if (!moved)
            return;
        double change = 0;
        for (uint32_t k = 0; k < K; k++)
            change = fmax(change, fabs(a[k] - prev[k]) / prev[k]);
        if (change < 1e-12)
            return;
    }
}

void slda_alpha_update(slda_model_t *model, const float *ntheta, const uint32_t *lengths,
                       size_t ndocs, double rho)
{
    uint32_t K = model->K;
    double est[SLDA_MAX_TOPICS];
    if (model->p.alpha_learn == SLDA_ALPHA_FIXED || ndocs == 0)
        return;
    memcpy(est, model->alpha, K * sizeof(double));
    slda_alpha_estimate(model->p.alpha_learn, est, K, ntheta, lengths, ndocs, 20);
    model->alpha_sum = 0;
    for (uint32_t k = 0; k < K; k++) {
        model->alpha[k] = (1.0 - rho) * model->alpha[k] + rho * est[k];
        model->alpha_sum += model->alpha[k];
    }
}

/* Plain entry point: clang exports target_clones functions only under an
 * ifunc name, so callers in other files go through this wrapper. */
void slda_accum_add(slda_accum_t *acc, const uint32_t *words, const float *stats, uint32_t n)
{
    slda_accum_add_clones(acc, words, stats, n);
}
