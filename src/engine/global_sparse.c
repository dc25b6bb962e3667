/* global_sparse.c - the sparse path's minibatch sums and global step.
 *
 * A minibatch's statistics are its documents' (word, topic, x) entries
 * (local_sparse.c). slda_sacc_merge sums them by word, words in order of
 * first appearance and topics increasing within a word, equal topics in
 * document order: the same sums for any thread count. The global step
 * is global_step.c's, row rule for row rule (global.rows=counts: each touched
 * row rescaled to its running count and moved towards its statistics by
 * rho_t; global.rows=decay: the plain SCVB0 step), written over the topics a
 * row holds (rows_nz.c) and the topics its statistics add: O(entries) per
 * touched word instead of O(K). Each row's list grows by the topics added.
 */
#include "engine/sparse.h"
#include "engine/rows_nz.h"
#include "engine/step.h"

#include <stdlib.h>
#include <string.h>

void slda_sacc_free(slda_sacc_t *acc)
{
    free(acc->word);
    free(acc->off);
    free(acc->cnt);
    free(acc->topic);
    free(acc->x);
    free(acc->da);
    free(acc->pf);
    free(acc->list);
    memset(acc, 0, sizeof *acc);
}

void slda_sacc_frozen(slda_sacc_t *acc, const slda_frozen_t *fz, uint32_t K)
{
    if (acc->K != K || !acc->pf) {
        free(acc->da);
        free(acc->pf);
        free(acc->list);
        acc->da = slda_xcalloc(K + 1, sizeof *acc->da);
        acc->pf = slda_xmalloc((K + 1) * sizeof *acc->pf);
        acc->list = slda_xmalloc((K + 1) * sizeof *acc->list);
        acc->K = K;
    }
    for (uint32_t k = 0; k < K; k++)
        acc->pf[k] = fz->alpha[k] * fz->inv_nz[k];
}

static void grow_slots(slda_sacc_t *acc, uint32_t need)
{
    if (need <= acc->cap)
        return;
    uint32_t cap = acc->cap ? acc->cap : 1024;
    while (cap < need)
        cap *= 2;
    acc->word = slda_xrealloc(acc->word, cap * sizeof *acc->word);
    acc->off = slda_xrealloc(acc->off, ((size_t)cap + 1) * sizeof *acc->off);
    acc->cnt = slda_xrealloc(acc->cnt, ((size_t)cap + 1) * sizeof *acc->cnt);
    acc->cap = cap;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sort one slot's (topic, x) by topic, then position (so that equal topics
 * add up in document order), and add up equal topics; returns how many are
 * left. scratch: n keys and n values. */
static uint32_t sort_reduce(uint16_t *topic, float *x, uint32_t n, uint64_t *scratch)
{
    if (n <= 1)
        return n == 1 && x[0] != 0;
    float *val = (float *)(scratch + n);
    for (uint32_t j = 0; j < n; j++) {
        scratch[j] = (uint64_t)topic[j] << 32 | j;
        val[j] = x[j];
    }
    if (n <= 24) {
        for (uint32_t i = 1; i < n; i++) {
            uint64_t key = scratch[i];
            uint32_t j = i;
            for (; j > 0 && scratch[j - 1] > key; j--)
                scratch[j] = scratch[j - 1];
            scratch[j] = key;
        }
    } else {
        qsort(scratch, n, sizeof *scratch, cmp_u64);
    }
    uint32_t m = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint16_t k = (uint16_t)(scratch[j] >> 32);
        float v = val[(uint32_t)scratch[j]];
        if (v == 0)
            continue; /* a dropped column's (slda_sacc_column) */
        if (m && topic[m - 1] == k) {
            x[m - 1] += v;
        } else {
            topic[m] = k;
            x[m++] = v;
        }
    }
    return m;
}

void slda_sacc_merge(slda_sacc_t *acc, int32_t *slot_of, const slda_sentry_t *ent,
                     const size_t *eoff, const uint32_t *ecount, size_t ndocs, uint32_t K)
{
    size_t n = 0;
    acc->nslots = 0;
    (void)K; /* acc->K, set by slda_sacc_frozen */
    grow_slots(acc, 1);
    for (size_t d = 0; d < ndocs; d++) { /* slots in first appearance, entries per slot */
        for (size_t e = eoff[d]; e < eoff[d] + ecount[d]; e++) {
            int32_t s = slot_of[ent[e].word];
            if (s < 0) {
                grow_slots(acc, acc->nslots + 1);
                s = (int32_t)acc->nslots++;
                slot_of[ent[e].word] = s;
                acc->word[s] = ent[e].word;
                acc->cnt[s] = 0;
            }
            acc->cnt[s]++;
        }
        n += ecount[d];
    }
    if (n + 1 > acc->cap_e) {
        acc->cap_e = n + 1 > 2 * acc->cap_e ? n + 1 : 2 * acc->cap_e;
        acc->topic = slda_xrealloc(acc->topic, acc->cap_e * sizeof *acc->topic);
        acc->x = slda_xrealloc(acc->x, acc->cap_e * sizeof *acc->x);
    }
    size_t pos = 0;
    uint32_t most = 0;
    for (uint32_t s = 0; s < acc->nslots; s++) {
        acc->off[s] = pos;
        pos += acc->cnt[s];
        most = acc->cnt[s] > most ? acc->cnt[s] : most;
        acc->cnt[s] = 0;
    }
    acc->off[acc->nslots] = pos;
    for (size_t d = 0; d < ndocs; d++) /* in document order */
        for (size_t e = eoff[d]; e < eoff[d] + ecount[d]; e++) {
            uint32_t s = (uint32_t)slot_of[ent[e].word];
            size_t at = acc->off[s] + acc->cnt[s]++;
            acc->topic[at] = (uint16_t)ent[e].topic;
            acc->x[at] = ent[e].x;
        }
    uint64_t *scratch = slda_xmalloc(((size_t)most + 1) * 2 * sizeof *scratch);
    for (uint32_t s = 0; s < acc->nslots; s++) {
        slot_of[acc->word[s]] = -1;
        acc->cnt[s] = sort_reduce(acc->topic + acc->off[s], acc->x + acc->off[s], acc->cnt[s],
                                  scratch);
    }
    free(scratch);
}

void slda_sacc_column(slda_sacc_t *acc, uint32_t from, uint32_t to)
{
    uint64_t *scratch = NULL;
    uint32_t have = 0;
    if (acc->pf && from < acc->K) /* the prior part follows the column (a merge keeps to's own) */
        acc->pf[from] = 0;
    for (uint32_t s = 0; s < acc->nslots; s++) {
        uint16_t *topic = acc->topic + acc->off[s];
        float *x = acc->x + acc->off[s];
        uint32_t n = acc->cnt[s], hit = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (topic[j] != from)
                continue;
            hit = 1;
            if (to == UINT32_MAX)
                x[j] = 0;
            else
                topic[j] = (uint16_t)to;
        }
        if (!hit)
            continue;
        if (n > have) {
            have = n;
            scratch = slda_xrealloc(scratch, (size_t)have * 2 * sizeof *scratch);
        }
        acc->cnt[s] = sort_reduce(topic, x, n, scratch);
    }
    free(scratch);
}

/* Clear every row written, NZ and sigma (the first update), and the lists:
 * the lists hold every value that is not zero (rows_nz.c), so only those
 * are written (O(entries), not a pass over rows_used x K floats). */
static void forget_all(slda_model_t *model)
{
    for (uint32_t w = 0; w < model->rows_used; w++) {
        float *a = model->A + (size_t)w * model->Kp;
        for (uint32_t j = 0; j < model->nzn[w]; j++)
            a[model->nzt[w][j]] = 0;
    }
    memset(model->NZ, 0, model->K * sizeof(double));
    model->sigma = 1.0;
    slda_rows_nz_clear_all(model);
}

/* The topics a slot's entries add to its row's list (not the prior entry). */
static uint32_t listed_entries(const slda_sacc_t *acc, uint32_t s)
{
    uint32_t ne = acc->cnt[s];
    return ne && acc->topic[acc->off[s] + ne - 1] == SLDA_SPARSE_PRIOR ? ne - 1 : ne;
}

/* A slot's statistics in all: its entries, its prior entry's weight (*prior)
 * times the prior part alpha_k phi_w[k] over the row's listed topics, with
 * the minibatch's frozen phi; *total gets the sum of the row's listed values
 * (one walk of the list for both). */
static double slot_mass(const slda_model_t *model, const slda_sacc_t *acc, uint32_t s,
                        double *prior, double *total)
{
    uint32_t w = acc->word[s], ne = acc->cnt[s];
    const float *x = acc->x + acc->off[s], *a = model->A + (size_t)w * model->Kp;
    const uint16_t *list = model->nzt[w];
    uint32_t nl = model->nzn[w];
    double n = 0, pm = 0, sum = 0;
    *prior = 0;
    for (uint32_t j = 0; j < ne; j++)
        n += x[j];
    if (ne && acc->topic[acc->off[s] + ne - 1] == SLDA_SPARSE_PRIOR) {
        *prior = x[ne - 1];
        n -= x[ne - 1];
        const float *pf = acc->pf;
        float eta = (float)model->p.eta, sigma = acc->sigma;
        for (uint32_t j = 0; j < nl; j++) { /* pm as the tables' lmass */
            float v = a[list[j]];
            sum += v;
            pm += v > 0 ? pf[list[j]] * (sigma * v + eta) : 0;
        }
    } else {
        for (uint32_t j = 0; j < nl; j++)
            sum += a[list[j]];
    }
    *total = sum;
    return n + *prior * pm;
}

/* Value v (was old) into a[k], pruned under floor_v; k listed in out[m] if
 * it stays. Returns the new m. */
static inline uint32_t put(float *restrict a, double *restrict da, uint16_t *restrict out,
                           uint32_t m, uint32_t k, float v, float old, float floor_v)
{
    v = v < floor_v ? 0 : v;
    da[k] += (double)v - old;
    a[k] = v;
    out[m] = (uint16_t)k;
    return m + (v > 0); /* v is 0 or at least floor_v */
}

/* Row w after the step: each value v of its list and of its entries' topics
 * (topic[0..ne), increasing, not the prior entry; the list and the entries
 * walked together, so the list becomes their union in the same pass)
 * becomes c1 v plus c2 times its statistic (its entry plus prior times
 * alpha_k phi_w[k] where v was not zero: the topics the local step's tables
 * held, whose mass it normalised by); a value under the prune floor (in
 * counts, sigma v < eta / SLDA_SPARSE_PRUNE: it moves phi_w[k] by less than
 * 1/SLDA_SPARSE_PRUNE of the smoothing) becomes zero and leaves the list.
 * Adds each value's change to da. */
static void step_row(slda_model_t *model, slda_sacc_t *acc, uint32_t w, float c1, float c2,
                     const uint16_t *topic, const float *x, uint32_t ne, double prior, double *da)
{
    float *restrict a = model->A + (size_t)w * model->Kp;
    const uint16_t *restrict list = model->nzt[w];
    uint16_t *restrict out = acc->list;
    const float *restrict pf = acc->pf;
    float floor_v = (float)(model->p.eta / SLDA_SPARSE_PRUNE / model->sigma);
    float pw = (float)prior, eta = (float)model->p.eta, sigma = acc->sigma;
    float ps = pw * sigma, pe = pw * eta;
    uint32_t n = model->nzn[w], m = 0, e = 0, j = 0;
    for (;;) {
        /* the listed topics before the next entry's: the prior part only */
        uint32_t stop = e < ne ? topic[e] : UINT32_MAX;
        for (; j < n && list[j] < stop; j++) {
            uint32_t k = list[j];
            float old = a[k], add = old > 0 ? pf[k] * (ps * old + pe) : 0;
            m = put(a, da, out, m, k, c1 * old + c2 * add, old, floor_v);
        }
        if (e == ne)
            break;
        /* the entry's topic: listed (its prior part too) or one the list gains */
        uint32_t k = stop;
        float old = a[k], add = 0;
        if (j < n && list[j] == k) {
            add = old > 0 ? pf[k] * (ps * old + pe) : 0;
            j++;
        }
        add += x[e++];
        m = put(a, da, out, m, k, c1 * old + c2 * add, old, floor_v);
    }
    slda_rows_nz_set(model, w, out, m);
}

/* Fold sigma into A when it is small (slda_model_fold_scale); the rows the
 * prior entries read keep their value: acc->sigma follows. */
static void fold(slda_model_t *model, slda_sacc_t *acc)
{
    if (model->sigma < SLDA_SIGMA_FOLD) {
        acc->sigma = (float)(acc->sigma / model->sigma);
        slda_model_fold_scale(model);
    }
}

static double counts_update(slda_model_t *model, slda_sacc_t *acc, uint64_t ntokens,
                            uint64_t tokens_before)
{
    slda_gprep_t g;
    slda_counts_constants(model, ntokens, tokens_before, &g);
    double lam = g.lam, *da = acc->da;
    acc->sigma = (float)model->sigma; /* the rows as the prior entries read them */
    if (lam < 1e-12) { /* the first update: only this minibatch counts */
        forget_all(model);
        lam = 1.0;
    } else {
        model->sigma *= lam;
    }
    fold(model, acc);
    double sigma = model->sigma;
    memset(da, 0, model->K * sizeof *da);
    for (uint32_t s = 0; s < acc->nslots; s++) {
        uint32_t w = acc->word[s], ne = listed_entries(acc, s);
        const uint16_t *topic = acc->topic + acc->off[s];
        double prior, total, n = slot_mass(model, acc, s, &prior, &total);
        double old = total * sigma / lam;
        double plain = (1.0 - g.rho) * old + g.rho * g.cm * n;
        if (!(n > 0 && plain > 0)) {
            slda_rows_nz_union(model, w, topic, ne);
            continue;
        }
        double f = ((1.0 - g.r) * old + g.r * g.cm * n) / plain;
        step_row(model, acc, w, (float)(f * (1.0 - g.rho) / lam),
                 (float)(f * g.rho * g.cm / sigma), topic, acc->x + acc->off[s], ne, prior, da);
    }
    for (uint32_t k = 0; k < model->K; k++)
        model->NZ[k] = (1.0 - g.r) * model->NZ[k] + sigma * da[k];
    model->t++;
    return g.rho;
}

static double decay_update(slda_model_t *model, slda_sacc_t *acc, uint64_t ntokens)
{
    double rho = slda_rho(&model->p, model->t), C = slda_step_corpus(model);
    double c = ntokens ? rho * C / (double)ntokens : 0, *da = acc->da;
    acc->sigma = (float)model->sigma; /* the rows as the prior entries read them */
    if (1.0 - rho < 1e-12)
        forget_all(model);
    else
        model->sigma *= 1.0 - rho;
    fold(model, acc);
    double sigma = model->sigma;
    memset(da, 0, model->K * sizeof *da);
    for (uint32_t s = 0; s < acc->nslots; s++) {
        uint32_t w = acc->word[s], ne = listed_entries(acc, s);
        double prior = acc->cnt[s] > ne ? acc->x[acc->off[s] + ne] : 0;
        step_row(model, acc, w, 1.0f, (float)(c / sigma), acc->topic + acc->off[s],
                 acc->x + acc->off[s], ne, prior, da);
    }
    /* NZ decays with sigma; da holds sigma-free changes of A */
    for (uint32_t k = 0; k < model->K; k++)
        model->NZ[k] = (1.0 - rho) * model->NZ[k] + sigma * da[k];
    model->t++;
    return rho;
}

double slda_sparse_update(slda_model_t *model, slda_sacc_t *acc, uint64_t ntokens,
                          uint64_t tokens_before)
{
    slda_rows_nz_ensure(model);
    if (model->p.rows == SLDA_ROWS_COUNTS)
        return counts_update(model, acc, ntokens, tokens_before);
    return decay_update(model, acc, ntokens);
}
