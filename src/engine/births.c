/* births.c - topics that are born, retired and merged as a stream changes.
 *
 * docs/algorithm.md, "Streams that change": rho_t -> 0 freezes the model, so
 * documents of a subject that appears late pile into whatever topic holds
 * their words. Every decision here is part of the global update: it runs on
 * the model's thread at the end of the minibatch's call (train.c), from its
 * per-document scores in document order, so the same seed and input (or the
 * same update log) give the same births whatever the thread count.
 *
 * 1. Score (worker threads, slda_births_doc_score): a document's mean
 *    per-token log p(w) = log sum_k theta_k phi_wk under the frozen model,
 *    theta from its own local step. A running baseline (decayed mean and
 *    variance of the documents *not* flagged, so a shift does not drag it
 *    down) flags documents scoring more than births.z deviations below it;
 *    flagged bags are kept in a buffer with their per-word p(w).
 * 2. Proposal (once births.docs documents are buffered): the densest cosine
 *    cluster of the buffer (seed = the document with most neighbours, then
 *    members = documents close to the cluster's centroid, twice). A topic is
 *    estimated from the even-numbered members (backed off to the model's
 *    p(w), build_topic) and scored on the odd ones: each odd document's
 *    likelihood becomes lambda p(w) + (1 - lambda) phi_new(w), lambda fitted
 *    by EM (per document), and the gain is the mean held-out nats per token
 *    over those documents. Kept only when the gain reaches births.gain: the
 *    new topic predicts documents it was not built from better than the
 *    model does. The members leave the buffer and the next cluster is
 *    proposed in the same update, until one fails (slda_births_update).
 * 3. Slot: a free one (a dead topic, retired by update_shares), else the
 *    closest pair by Jensen-Shannon divergence if below births.merge
 *    (merged: counts and alpha added, the Dirichlet aggregation property);
 *    else no birth.
 * 4. Seed: the slot's column is zeroed and gets the members' counts times
 *    their responsibility for the new topic, scaled by rho_t C / T (T = the
 *    tokens of the minibatches the buffer spans): what the global step would
 *    have added had those tokens been the new topic's. The slot's mass is
 *    then about one update's worth, so each later update moves it by ~1/(n+1)
 *    after n updates - the Robbins-Monro schedule restarted for that topic,
 *    while the others keep their rho_t.
 * 5. Row totals: under global.rows=counts (global_step.c) a word's row total
 *    follows its running token count since the first update, and only its
 *    split over the topics moves by rho_t. Once the stream has changed, that
 *    count keeps the old frequencies: with new subjects over the old words,
 *    phi_k(w) ~ split_k(w) x total(w) mixed the new splits with the old
 *    totals, and every topic, old and new, ended 0.3-0.4 (L1) from the truth.
 *    So after the first birth the running count is windowed: before an
 *    update of m tokens at step rho_t it holds at most
 *    WINDOW_RATIO x (m / rho_t - m) tokens (its start only moves forward), so
 *    r_t >= rho_t / WINDOW_RATIO, about, and the totals follow the recent
 *    stream (slda_births_count_start, called by train.c for every update).
 *    A stream where nothing is born keeps the exact running count, bit for
 *    bit. WINDOW_RATIO 1 (r_t >= rho_t, the plain step's memory) cost a
 *    stationary stream 9-10% of perplexity after one legitimate birth
 *    (Reuters, records 4 updates stale: a merge of two duplicated topics
 *    and a birth); 4 costs 0.9-2.3% there and finds the new topics of
 *    bench/shift as well (new topics 0.035-0.12 L1 from the truth against
 *    0.054-0.17, old ones 0.02-0.25 against 0.03-0.22); 8 lets the shared-
 *    word streams' topics drift (0.12-0.16) - docs/benchmarks.md, "The window ratio after a birth".
 * Dead topics are retired eagerly (column zeroed, alpha_k at its floor so no
 * document uses the slot until a birth). Events and counters are read with
 * slda_model_events / slda_model_topic_counts.
 *
 * The whole state (baseline, shares, since, free slots, the buffer with each
 * document's p(w), tokens seen, the windowed count, counters, the last
 * EVENTS_KEPT events) goes
 * into snapshots through slda_births_export / slda_births_import (snapshot.c,
 * docs/snapshot-format.md "The births state"), so a restored model or a
 * replica replaying the same minibatches decides exactly as the model that
 * never stopped (test 0081). A snapshot without it starts a new baseline.
 */
#include "engine/births.h"
#include "engine/global_step.h"
#include "engine/labels.h"
#include "engine/step.h"
#include "engine/train.h"
#include "engine/pending.h"
#include "engine/rows_nz.h"
#include "engine/sparse.h"
#include "core/pool.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BASE_RATE 0.002   /* baseline decay per document: a window of ~500 docs */
#define SHARE_RATE 0.02   /* topic share decay per update: a window of ~50 updates */
#define WARMUP_UPDATES 50 /* no flags, births or deaths before this (baseline settles) */
#define MAX_AGE 64        /* buffered documents older than this many updates are dropped */
#define COS_SEED 0.3    /* cosine of a seed's neighbours (0.2: clusters mixed subjects) */
#define COS_MEMBER 0.5  /* cosine to the centroid of a member (0.3-0.4: mixed) */
#define MIN_CLUSTER 8     /* members needed for a proposal (4 to build, 4 to test) */
#define EM_ITERS 30
#define EVENTS_KEPT 1024
#define WINDOW_RATIO 4.0 /* windowed running count: WINDOW_RATIO x (m / rho_t - m) tokens ("5.") */
#define MAX_CAP 200000    /* buffer capacity: 2 x births.docs, at most 100000 */

typedef struct bdoc_s {
    uint32_t n, len;
    uint32_t *word, *count;
    float *pw;          /* p(w) under the model when the document was scored */
    uint64_t t;         /* update of its minibatch */
    uint64_t mark;      /* tokens seen before its minibatch */
    double norm;
} bdoc_t;

struct slda_births_s {
    uint32_t K, W;
    double mu, var;     /* baseline of the score */
    uint64_t nbase;
    double *share;      /* K: decayed share of tokens */
    uint64_t *since;    /* K: update at which the slot started (0 or its birth) */
    uint8_t *is_free;   /* K */
    bdoc_t *buf;
    uint32_t nbuf, cap;
    uint64_t tokens;    /* tokens seen */
    int windowed;       /* a birth happened: the running count is windowed (slda_births_count_start) */
    uint64_t counted;   /* windowed: tokens in the running count after the last update */
    float *dense;       /* W scratch, zero between uses */
    float *dense2;      /* W scratch, zero between uses */
    float *dense3;      /* W scratch, zero between uses */
    slda_event_t ev[EVENTS_KEPT];
    uint64_t nev;       /* events made; ev[(seq - 1) % EVENTS_KEPT] */
    slda_topic_counts_t counts;
};

static void bdoc_clear(bdoc_t *d)
{
    free(d->word);
    free(d->count);
    free(d->pw);
}

/* x becomes a copy of one document's bag (n pairs, len tokens), its p(w),
 * the update and token mark it was buffered at, and the norm of its counts. */
static void bdoc_set(bdoc_t *x, uint32_t n, uint32_t len, const uint32_t *word,
                     const uint32_t *count, const float *pw, uint64_t t, uint64_t mark)
{
    x->n = n;
    x->len = len;
    x->word = slda_xmalloc(n * sizeof *x->word);
    x->count = slda_xmalloc(n * sizeof *x->count);
    x->pw = slda_xmalloc(n * sizeof *x->pw);
    memcpy(x->word, word, n * sizeof *x->word);
    memcpy(x->count, count, n * sizeof *x->count);
    memcpy(x->pw, pw, n * sizeof *x->pw);
    x->t = t;
    x->mark = mark;
    x->norm = 0;
    for (uint32_t u = 0; u < n; u++)
        x->norm += (double)count[u] * count[u];
    x->norm = sqrt(x->norm);
}

slda_births_t *slda_births_new(const slda_model_t *model)
{
    slda_births_t *b = slda_xcalloc(1, sizeof *b);
    b->K = model->K;
    b->W = model->W;
    b->share = slda_xcalloc(b->K, sizeof *b->share);
    b->since = slda_xcalloc(b->K, sizeof *b->since);
    b->is_free = slda_xcalloc(b->K, 1);
    for (uint32_t k = 0; k < b->K; k++)
        b->share[k] = 1.0 / b->K;
    b->cap = 2 * (model->p.births_docs ? model->p.births_docs : 1);
    b->buf = slda_xcalloc(b->cap, sizeof *b->buf);
    b->dense = slda_xcalloc(b->W, sizeof *b->dense);
    b->dense2 = slda_xcalloc(b->W, sizeof *b->dense2);
    b->dense3 = slda_xcalloc(b->W, sizeof *b->dense3);
    return b;
}

static void buf_drop(slda_births_t *b, const uint8_t *drop)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->nbuf; i++) {
        if (drop[i])
            bdoc_clear(&b->buf[i]);
        else
            b->buf[n++] = b->buf[i];
    }
    b->nbuf = n;
}

static void buf_clear(slda_births_t *b)
{
    for (uint32_t i = 0; i < b->nbuf; i++)
        bdoc_clear(&b->buf[i]);
    b->nbuf = 0;
}

void slda_births_free(slda_births_t *b)
{
    if (!b)
        return;
    buf_clear(b);
    free(b->buf);
    free(b->share);
    free(b->since);
    free(b->is_free);
    free(b->dense);
    free(b->dense2);
    free(b->dense3);
    free(b);
}

uint32_t slda_births_buffered(const slda_births_t *b)
{
    return b ? b->nbuf : 0;
}

uint32_t slda_births_events_kept(void)
{
    return EVENTS_KEPT;
}

size_t slda_births_remap(const slda_births_t *b, uint64_t base, float *rows, size_t n,
                         size_t stride)
{
    if (!b || !b->nev)
        return 0;
    uint64_t first = b->nev > EVENTS_KEPT ? b->nev - EVENTS_KEPT + 1 : 1, seq = b->nev + 1;
    while (seq > first && b->ev[(seq - 2) % EVENTS_KEPT].update > base)
        seq--; /* the first event after update base (events come in update order) */
    size_t done = 0;
    for (; seq <= b->nev; seq++, done++) {
        const slda_event_t *e = &b->ev[(seq - 1) % EVENTS_KEPT];
        uint32_t from = e->topic, to = e->kind == SLDA_EVENT_MERGE ? e->other : UINT32_MAX;
        for (size_t r = 0; r < n; r++) { /* as slda_pending_column does for train.c */
            float *x = rows + r * stride;
            if (to != UINT32_MAX)
                x[to] += x[from];
            x[from] = 0;
        }
    }
    return done;
}

void slda_births_export(const slda_births_t *b, slda_births_state_t *st)
{
    memset(st, 0, sizeof *st);
    st->K = b->K;
    st->mu = b->mu;
    st->var = b->var;
    st->nbase = b->nbase;
    st->tokens = b->tokens;
    st->windowed = b->windowed;
    st->counted = b->counted;
    st->share = b->share;
    st->since = b->since;
    st->is_free = b->is_free;
    st->cap = b->cap;
    st->nbuf = b->nbuf;
    st->buf = slda_xcalloc(b->nbuf + 1, sizeof *st->buf);
    for (uint32_t i = 0; i < b->nbuf; i++)
        st->buf[i] = (slda_births_doc_t){.n = b->buf[i].n, .word = b->buf[i].word,
                                          .count = b->buf[i].count, .pw = b->buf[i].pw,
                                          .t = b->buf[i].t, .mark = b->buf[i].mark};
    st->counts = b->counts;
    st->nev = b->nev;
    st->nkept = b->nev < EVENTS_KEPT ? (uint32_t)b->nev : EVENTS_KEPT;
    st->ev = slda_xcalloc(st->nkept + 1, sizeof *st->ev);
    for (uint32_t i = 0; i < st->nkept; i++)
        st->ev[i] = b->ev[(b->nev - st->nkept + i) % EVENTS_KEPT];
}

void slda_births_export_clear(slda_births_state_t *st)
{
    free(st->buf);
    free(st->ev);
    memset(st, 0, sizeof *st);
}

/* One buffered document of st against the model; its copy into x (x->norm as
 * flag_docs computes it, so a restored buffer clusters to the same bits). */
static int import_doc(const slda_model_t *model, const slda_births_state_t *st, uint32_t i,
                      bdoc_t *x, char *errstr, size_t errstr_size)
{
    const slda_births_doc_t *d = &st->buf[i];
    uint64_t len = 0;
    if (d->n == 0 || d->n > model->W)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "buffered document %u: %u words (1..W=%u)", i, d->n, model->W);
    if (d->t > model->t || d->mark > st->tokens)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "buffered document %u: update %" PRIu64 " / token mark %" PRIu64
                            " after the model's %" PRIu64 " / %" PRIu64,
                            i, d->t, d->mark, model->t, st->tokens);
    for (uint32_t u = 0; u < d->n; u++) {
        if (d->word[u] >= model->W || d->count[u] == 0 || !isfinite(d->pw[u]) || d->pw[u] < 0)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                                "buffered document %u, word %u: id %u (W=%u), count %u, "
                                "p(w) %g",
                                i, u, d->word[u], model->W, d->count[u], (double)d->pw[u]);
        len += d->count[u];
    }
    if (len > UINT32_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "buffered document %u: %" PRIu64 " tokens", i, len);
    bdoc_set(x, d->n, (uint32_t)len, d->word, d->count, d->pw, d->t, d->mark);
    return SLDA_OK;
}

static int import_events(const slda_model_t *model, const slda_births_state_t *st,
                         slda_births_t *b, char *errstr, size_t errstr_size)
{
    uint32_t want = st->nev < EVENTS_KEPT ? (uint32_t)st->nev : EVENTS_KEPT;
    if (st->nkept != want)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "%u events kept of %" PRIu64 " made, expected %u", st->nkept,
                            st->nev, want);
    for (uint32_t i = 0; i < st->nkept; i++) {
        const slda_event_t *e = &st->ev[i];
        if (e->seq != st->nev - st->nkept + 1 + i || e->update > model->t ||
            e->kind < SLDA_EVENT_BIRTH || e->kind > SLDA_EVENT_MERGE || e->topic >= model->K ||
            e->other >= model->K || !isfinite(e->value))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                                "event %u: seq %" PRIu64 " (expected %" PRIu64 "), update %"
                                PRIu64 ", kind %d, topics %u/%u (K=%u), value %g",
                                i, e->seq, st->nev - st->nkept + 1 + i, e->update, (int)e->kind,
                                e->topic, e->other, model->K, e->value);
        b->ev[(e->seq - 1) % EVENTS_KEPT] = *e;
    }
    b->nev = st->nev;
    return SLDA_OK;
}

slda_births_t *slda_births_import(const slda_model_t *model, const slda_births_state_t *st,
                                  char *errstr, size_t errstr_size)
{
    if (st->K != model->K || !isfinite(st->mu) || !isfinite(st->var) || st->var < 0 ||
        st->nbuf > st->cap || st->cap > MAX_CAP || st->windowed > 1 ||
        (st->windowed && st->counted == 0)) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                     "%u topics for K=%u, baseline mean %g variance %g, %u documents buffered "
                     "of %u (at most %u), windowed %d with %" PRIu64 " tokens counted",
                     st->K, model->K, st->mu, st->var, st->nbuf, st->cap, MAX_CAP, st->windowed,
                     st->counted);
        return NULL;
    }
    for (uint32_t k = 0; k < model->K; k++)
        if (!isfinite(st->share[k]) || st->share[k] < 0 || st->since[k] > model->t ||
            st->is_free[k] > 1) {
            slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                         "topic %u: share %g, since update %" PRIu64 " (model at %" PRIu64
                         "), free flag %u",
                         k, st->share[k], st->since[k], model->t, st->is_free[k]);
            return NULL;
        }
    slda_births_t *b = slda_births_new(model);
    memcpy(b->share, st->share, model->K * sizeof *b->share);
    memcpy(b->since, st->since, model->K * sizeof *b->since);
    memcpy(b->is_free, st->is_free, model->K);
    b->mu = st->mu;
    b->var = st->var;
    b->nbase = st->nbase;
    b->tokens = st->tokens;
    b->windowed = st->windowed;
    b->counted = st->counted;
    b->counts = st->counts;
    if (st->cap > b->cap) {
        b->buf = slda_xrealloc(b->buf, st->cap * sizeof *b->buf);
        b->cap = st->cap;
    }
    for (uint32_t i = 0; i < st->nbuf; i++) {
        if (import_doc(model, st, i, &b->buf[i], errstr, errstr_size) != SLDA_OK) {
            slda_births_free(b);
            return NULL;
        }
        b->nbuf++;
    }
    if (import_events(model, st, b, errstr, errstr_size) != SLDA_OK) {
        slda_births_free(b);
        return NULL;
    }
    return b;
}

/* theta (Kp floats, padding 0) against the word factors of the local step:
 * f[u][k] = (Nphi[w][k] + eta) / (NZ[k] + W eta) for CVB0, CVB and CGS, in
 * the 8-float vectors of the local step (the score costs one more sweep's
 * worth of multiplies, not a fresh pass over the model's rows). */
static float score_from_factors(const slda_local_t *loc, const float *theta, const uint32_t *counts,
                                uint32_t npairs, float *pw)
{
    uint32_t Kp = loc->Kp;
    double ll = 0, L = 0;
    for (uint32_t u = 0; u < npairs; u++) {
        const slda_v8f *f = (const slda_v8f *)(loc->f + (size_t)u * Kp);
        const slda_v8f *th = (const slda_v8f *)theta;
        slda_v8f acc = {0};
        for (uint32_t k = 0; k < Kp / 8; k++)
            acc += th[k] * f[k];
        float p = slda_v8_hsum(&acc);
        pw[u] = p;
        ll += counts[u] * log(p > 1e-30f ? p : 1e-30f);
        L += counts[u];
    }
    return L > 0 ? (float)(ll / L) : 0.0f;
}

float slda_births_doc_score(const slda_frozen_t *fz, const slda_local_t *loc,
                            const uint32_t *words, const uint32_t *counts, uint32_t npairs,
                            float *pw)
{
    const slda_model_t *model = fz->model;
    uint32_t K = model->K, Kp = model->Kp;
    double tot = 0, L = 0, ll = 0, norm = 0;
    float theta[SLDA_MAX_TOPICS + 16] __attribute__((aligned(32)));
    memset(theta, 0, Kp * sizeof *theta); /* K..Kp-1: padding, 0 like the factors' */
    for (uint32_t u = 0; u < npairs; u++)
        L += counts[u];
    for (uint32_t k = 0; k < K; k++)
        tot += loc->ntheta_sum[k];
    for (uint32_t k = 0; k < K; k++)
        norm += (tot > 0 ? loc->ntheta_sum[k] * L / tot : 0) + fz->alpha[k];
    for (uint32_t k = 0; k < K; k++)
        theta[k] = (float)(((tot > 0 ? loc->ntheta_sum[k] * L / tot : 0) + fz->alpha[k]) / norm);
    if ((!fz->ops || fz->ops->plain_factors) && loc->nu == npairs)
        return score_from_factors(loc, theta, counts, npairs, pw);
    /* SVB's factors are exp E[log phi]: recompute phi from the model */
    float sigma = (float)model->sigma, eta = (float)model->p.eta;
    for (uint32_t u = 0; u < npairs; u++) {
        const float *a = model->A + (size_t)words[u] * Kp;
        double p = 0;
        for (uint32_t k = 0; k < K; k++)
            p += theta[k] * ((sigma * a[k] + eta) * fz->inv_nz[k]);
        pw[u] = (float)p;
        ll += counts[u] * log(p > 1e-300 ? p : 1e-300);
    }
    return L > 0 ? (float)(ll / L) : 0.0f;
}

static void event(slda_births_t *b, slda_model_t *model, slda_event_kind_t kind,
                  uint32_t topic, uint32_t other, uint32_t docs, double value)
{
    slda_event_t *e = &b->ev[b->nev % EVENTS_KEPT];
    b->nev++;
    *e = (slda_event_t){.seq = b->nev, .update = model->t, .doc = model->docs, .kind = kind,
                        .topic = topic, .other = other, .docs = docs, .value = value};
    slda_labels_event(model, kind, topic); /* the slot holds another topic now */
}

/* Zero topic k's column and take it out of use (alpha_k at its floor). */
static void free_slot(slda_model_t *model, slda_births_t *b, uint32_t k)
{
    slda_pending_column(model, k, UINT32_MAX); /* train.c: the update still pending, too */
    for (uint32_t w = 0; w < model->rows_used; w++) /* the others are zero */
        model->A[(size_t)w * model->Kp + k] = 0;
    model->alpha_sum -= model->alpha[k] - SLDA_ALPHA_MIN;
    model->alpha[k] = SLDA_ALPHA_MIN;
    model->NZ[k] = 0;
    b->is_free[k] = 1;
    b->share[k] = 0;
}

/* Decayed share of each topic in this minibatch's tokens; retire the dead. */
static void update_shares(slda_model_t *model, slda_births_t *b, const float *ntheta,
                          size_t ndocs)
{
    uint32_t K = model->K;
    double col[SLDA_MAX_TOPICS], tot = 0;
    memset(col, 0, K * sizeof *col);
    for (size_t j = 0; j < ndocs; j++)
        for (uint32_t k = 0; k < K; k++)
            col[k] += ntheta[j * K + k];
    for (uint32_t k = 0; k < K; k++)
        tot += col[k];
    if (!(tot > 0))
        return;
    for (uint32_t k = 0; k < K; k++) {
        if (b->is_free[k])
            continue;
        b->share[k] += SHARE_RATE * (col[k] / tot - b->share[k]);
        if (model->t >= WARMUP_UPDATES && model->t - b->since[k] >= 2.0 / SHARE_RATE &&
            b->share[k] < model->p.births_floor / K) {
            double s = b->share[k];
            free_slot(model, b, k);
            b->counts.deaths++;
            event(b, model, SLDA_EVENT_DEATH, k, k, 0, s);
        }
    }
}

/* Baseline update and buffering of the flagged documents, in document order. */
static void flag_docs(slda_model_t *model, slda_births_t *b, const slda_doc_t *docs, size_t ndocs,
                      const float *scores, float *const *pw)
{
    double sd = sqrt(b->var);
    int warm = model->t >= WARMUP_UPDATES && b->nbase >= 100;
    for (size_t j = 0; j < ndocs; j++) {
        const slda_doc_t *d = &docs[j];
        if (d->npairs == 0 || d->ntokens == 0)
            continue;
        double s = scores[j];
        if (warm && s < b->mu - model->p.births_z * sd) {
            b->counts.flagged++;
            if (b->nbuf == b->cap) { /* full: drop the oldest */
                bdoc_clear(&b->buf[0]);
                memmove(b->buf, b->buf + 1, (b->cap - 1) * sizeof *b->buf);
                b->nbuf--;
            }
            bdoc_set(&b->buf[b->nbuf++], d->npairs, d->ntokens, d->word, d->count, pw[j],
                     model->t, b->tokens);
            continue;
        }
        if (b->nbase == 0) {
            b->mu = s;
        } else {
            double r = b->nbase < 1.0 / BASE_RATE ? 1.0 / (b->nbase + 1) : BASE_RATE;
            double dlt = s - b->mu;
            b->mu += r * dlt;
            b->var = (1 - r) * (b->var + r * dlt * dlt);
        }
        b->nbase++;
    }
}

static double dense_dot(const float *dense, const bdoc_t *x)
{
    double s = 0;
    for (uint32_t u = 0; u < x->n; u++)
        s += (double)dense[x->word[u]] * x->count[u];
    return s;
}

/* Densest cosine cluster of the buffer into member[] (1 = in); returns its size. */
static uint32_t cluster(slda_births_t *b, uint8_t *member)
{
    uint32_t best = 0, bestn = 0;
    for (uint32_t i = 0; i < b->nbuf; i++) {
        bdoc_t *x = &b->buf[i];
        uint32_t n = 0;
        for (uint32_t u = 0; u < x->n; u++)
            b->dense[x->word[u]] = (float)x->count[u];
        for (uint32_t j = 0; j < b->nbuf; j++)
            if (j != i && dense_dot(b->dense, &b->buf[j]) >= COS_SEED * x->norm * b->buf[j].norm)
                n++;
        for (uint32_t u = 0; u < x->n; u++)
            b->dense[x->word[u]] = 0;
        if (n > bestn) {
            bestn = n;
            best = i;
        }
    }
    if (bestn + 1 < MIN_CLUSTER)
        return 0;
    /* members: the seed's neighbours, then twice the documents near the centroid */
    bdoc_t *s = &b->buf[best];
    for (uint32_t u = 0; u < s->n; u++)
        b->dense[s->word[u]] = (float)s->count[u];
    for (uint32_t j = 0; j < b->nbuf; j++)
        member[j] = j == best || dense_dot(b->dense, &b->buf[j]) >=
                                     COS_SEED * s->norm * b->buf[j].norm;
    for (uint32_t u = 0; u < s->n; u++)
        b->dense[s->word[u]] = 0;
    uint32_t size = 0;
    for (int round = 0; round < 2; round++) {
        double cn = 0;
        for (uint32_t j = 0; j < b->nbuf; j++)
            if (member[j])
                for (uint32_t u = 0; u < b->buf[j].n; u++)
                    b->dense[b->buf[j].word[u]] += (float)b->buf[j].count[u] / b->buf[j].len;
        for (uint32_t j = 0; j < b->nbuf; j++)
            if (member[j])
                for (uint32_t u = 0; u < b->buf[j].n; u++) {
                    uint32_t w = b->buf[j].word[u];
                    if (b->dense[w] > 0) {
                        cn += (double)b->dense[w] * b->dense[w];
                        b->dense2[w] = b->dense[w];
                        b->dense[w] = -b->dense[w]; /* counted once */
                    }
                }
        cn = sqrt(cn);
        for (uint32_t j = 0; j < b->nbuf; j++)
            if (member[j])
                for (uint32_t u = 0; u < b->buf[j].n; u++)
                    b->dense[b->buf[j].word[u]] = 0;
        uint8_t *next = member + b->nbuf; /* second half of member[] is scratch */
        size = 0;
        for (uint32_t j = 0; j < b->nbuf; j++) {
            next[j] = dense_dot(b->dense2, &b->buf[j]) >= COS_MEMBER * cn * b->buf[j].norm;
            size += next[j];
        }
        for (uint32_t j = 0; j < b->nbuf; j++)
            if (member[j])
                for (uint32_t u = 0; u < b->buf[j].n; u++)
                    b->dense2[b->buf[j].word[u]] = 0;
        memcpy(member, next, b->nbuf);
    }
    return size;
}

/* Fit lambda of lambda p(w) + (1 - lambda) q(w) for document x by EM; returns the
 * mean log-likelihood gain per token over p alone. resp (n) receives the new
 * topic's responsibility for each word (may be NULL). */
static double em_gain(const bdoc_t *x, const float *q, double *resp)
{
    double lam = 0.5;
    for (int it = 0; it < EM_ITERS; it++) {
        double m = 0;
        for (uint32_t u = 0; u < x->n; u++) {
            double p = x->pw[u], qq = q[x->word[u]];
            double den = lam * p + (1 - lam) * qq;
            m += x->count[u] * (den > 0 ? (1 - lam) * qq / den : 0);
        }
        lam = 1 - m / x->len;
        if (lam < 1e-6)
            lam = 1e-6;
    }
    double g = 0;
    for (uint32_t u = 0; u < x->n; u++) {
        double p = x->pw[u] > 1e-300 ? x->pw[u] : 1e-300, qq = q[x->word[u]];
        double mix = lam * p + (1 - lam) * qq;
        g += x->count[u] * (log(mix) - log(p));
        if (resp)
            resp[u] = (1 - lam) * qq / mix;
    }
    return g / x->len;
}

/* q[w] = (c[w] + BACKOFF pbar[w]) / (n + BACKOFF): the chosen members' counts
 * (n tokens) backed off to the model's own prediction pbar[w] (the mean p(w)
 * of the members holding w), for the members' words only (other words stay
 * 0 and are never read). A few documents cannot estimate a topic's tail; with
 * eta smoothing every word they miss would cost the candidate log(lambda),
 * and real topics were turned down (gain 0.02-0.15 nats on clusters of a new
 * topic). The test stays held out: q is built from other documents. */
#define BACKOFF 50.0
static void build_topic(slda_births_t *b, const uint8_t *use)
{
    double n = 0;
    for (uint32_t j = 0; j < b->nbuf; j++)
        if (use[j]) {
            n += b->buf[j].len;
            for (uint32_t u = 0; u < b->buf[j].n; u++)
                b->dense[b->buf[j].word[u]] += (float)b->buf[j].count[u];
        }
    /* pbar: sum of p(w) in dense2, number of members holding w in dense3 */
    for (uint32_t j = 0; j < b->nbuf; j++)
        if (use[j + b->nbuf])
            for (uint32_t u = 0; u < b->buf[j].n; u++) {
                b->dense2[b->buf[j].word[u]] += b->buf[j].pw[u];
                b->dense3[b->buf[j].word[u]] += 1;
            }
    for (uint32_t j = 0; j < b->nbuf; j++) /* every member's words, counted or not */
        if (use[j + b->nbuf])
            for (uint32_t u = 0; u < b->buf[j].n; u++) {
                uint32_t w = b->buf[j].word[u];
                if (b->dense3[w] > 0) {
                    double pbar = b->dense2[w] / b->dense3[w];
                    b->dense2[w] = (float)((b->dense[w] + BACKOFF * pbar) / (n + BACKOFF));
                    b->dense3[w] = 0;
                }
            }
    for (uint32_t j = 0; j < b->nbuf; j++)
        if (use[j])
            for (uint32_t u = 0; u < b->buf[j].n; u++)
                b->dense[b->buf[j].word[u]] = 0;
}

static void clear_topic(slda_births_t *b, const uint8_t *member)
{
    for (uint32_t j = 0; j < b->nbuf; j++)
        if (member[j])
            for (uint32_t u = 0; u < b->buf[j].n; u++)
                b->dense2[b->buf[j].word[u]] = 0;
}

/* A slot born at update `since` (0: there from the start) has had the time a
 * share needs to settle. A newborn is still moving: merging it (seed 2 of
 * bench/shift, K=10: two newborns 0.23 apart merged three updates after the
 * first was born) left a mixture that no later birth could undo. */
static int settled(const slda_model_t *model, uint64_t since)
{
    return since == 0 || model->t - since >= 2.0 / SHARE_RATE;
}

/* Topic i's share of word w: p_wi = a_wi sigma / NZ_i (rows held only). */
static void topic_inv(const slda_model_t *model, double *inv)
{
    for (uint32_t k = 0; k < model->K; k++)
        inv[k] = model->NZ[k] > 0 ? model->sigma / model->NZ[k] : 0;
}

static int eligible(const slda_model_t *model, uint32_t k, const uint8_t *is_free,
                    const uint64_t *since)
{
    return !is_free[k] && settled(model, since[k]);
}

/* A word's two terms of the Jensen-Shannon divergence of shares p and q, added to *js in
 * this order (both searches sum them alike, so they agree to the bit). */
static inline void js_add(double *js, double p, double q)
{
    double m = 0.5 * (p + q);
    if (p > 0)
        *js += 0.5 * p * log(p / m);
    if (q > 0)
        *js += 0.5 * q * log(q / m);
}

/* Exact Jensen-Shannon divergence (nats) of topics i and j over the rows held. */
static double js_pair(const slda_model_t *model, const double *inv, uint32_t i, uint32_t j)
{
    double js = 0.0;
    for (uint32_t w = 0; w < model->rows_used; w++) {
        if (!model->row_ready[w])
            continue;
        const float *a = model->A + (size_t)w * model->Kp;
        js_add(&js, a[i] * inv[i], a[j] * inv[j]);
    }
    return js;
}

/* Whether a pair whose bound is `bound` may be closer than `below`: a margin for the
 * rounding of the bound's sums (relative error well under 1e-4 over a range of rows). */
static inline int may_be_below(double bound, double below)
{
    return bound * (1.0 - 1e-3) - 1e-6 < below;
}

/* The closest pair of settled, live topics by Jensen-Shannon divergence,
 * among the pairs that can be closer than `below` (births.merge); 0 when
 * none can. Computing JS for all K(K-1)/2 pairs costs two logs per pair and
 * word (on Reuters at K=100, one scan took 1.1 s, half of a whole pass), so
 * pairs are screened first by a bound that needs no log: per word,
 *   f(p,q) = p/2 log(2p/(p+q)) + q/2 log(2q/(p+q)) >= ln2 (sqrt p - sqrt q)^2 / 2
 * (f/g depends only on q/p and falls from 1 at q = p to ln 2 at q = 0), so
 *   JS(i,j) >= ln2 (S_i/2 + S_j/2 - sum_w sqrt(p_wi p_wj)),  S_k = sum_w p_wk,
 * a Gram matrix of the square roots: K^2/2 multiply-adds per word. Only the
 * pairs whose bound is below `below` get the exact JS (usually none), so
 * the pair returned, and whether it is below `below`, are what the full scan
 * gave. */
typedef struct gram_job_s {
    const slda_model_t *model;
    const uint32_t *live;
    const double *inv;
    uint32_t n, nchunks;
    float *gram;  /* nchunks x n x n: each range's partial Gram matrix */
    double *sum;  /* nchunks x n */
} gram_job_t;

/* The Gram matrix of square roots (float, 8 lanes with AVX2) and the topic
 * sums (double) over one fixed range of rows; the ranges depend on W and the
 * number of live topics only and are added in order in double, so the bound
 * is the same for any thread count; it only screens pairs (with a margin for
 * the float sums, closest_pair) before their exact divergence decides. */
__attribute__((target_clones("avx2", "default"))) static void
gram_range(const gram_job_t *job, uint32_t w0, uint32_t w1, float *gram, double *sum, float *r)
{
    const slda_model_t *model = job->model;
    uint32_t n = job->n, Kp = model->Kp;
    for (uint32_t w = w0; w < w1; w++) {
        if (!model->row_ready[w])
            continue;
        const float *a = model->A + (size_t)w * Kp;
        for (uint32_t x = 0; x < n; x++) {
            double p = a[job->live[x]] * job->inv[job->live[x]];
            sum[x] += p;
            r[x] = (float)p;
        }
        for (uint32_t x = 0; x < n; x++) /* sqrtps: counts are never negative */
            r[x] = sqrtf(r[x] > 0.0f ? r[x] : 0.0f);
        for (uint32_t x = 0; x < n; x++) {
            float rx = r[x], *g = gram + (size_t)x * n;
            if (rx == 0.0f)
                continue;
            for (uint32_t y = x + 1; y < n; y++)
                g[y] += rx * r[y];
        }
    }
}

static void gram_chunk(size_t c, uint32_t worker, void *opaque)
{
    gram_job_t *job = opaque;
    uint32_t n = job->n, W = job->model->W;
    uint32_t per = (W + job->nchunks - 1) / job->nchunks;
    uint32_t w0 = (uint32_t)c * per, w1 = w0 + per < W ? w0 + per : W;
    float *r = slda_xmalloc((n + 1) * sizeof *r);
    (void)worker;
    if (w0 < w1)
        gram_range(job, w0, w1, job->gram + c * (size_t)n * n, job->sum + c * (size_t)n, r);
    free(r);
}

static uint32_t closest_pair(const slda_model_t *model, double below, uint32_t *pi,
                             uint32_t *pj, double *pd, const uint8_t *is_free,
                             const uint64_t *since)
{
    uint32_t K = model->K, n = 0;
    double inv[SLDA_MAX_TOPICS];
    uint32_t *live = slda_xmalloc(K * sizeof *live);
    topic_inv(model, inv);
    for (uint32_t k = 0; k < K; k++)
        if (eligible(model, k, is_free, since))
            live[n++] = k;
    /* up to 32 ranges of rows, at most 4M floats of partial matrices */
    size_t cells = (size_t)n * n + 1;
    uint32_t nchunks = (uint32_t)(((size_t)1 << 22) / cells);
    nchunks = nchunks < 1 ? 1 : nchunks > 32 ? 32 : nchunks;
    if (nchunks > model->W / 256 + 1)
        nchunks = model->W / 256 + 1;
    gram_job_t job = {model, live, inv, n, nchunks,
                      slda_xcalloc(nchunks * cells, sizeof(float)),
                      slda_xcalloc((size_t)nchunks * (n + 1), sizeof(double))};
    if (n >= 2)
        slda_pool_run(model->pool, nchunks, gram_chunk, &job); /* reads the model */
    double *gram = slda_xcalloc(cells, sizeof *gram), *sum = job.sum;
    for (uint32_t c = 0; c < nchunks; c++) {
        for (size_t i = 0; i < (size_t)n * n; i++)
            gram[i] += job.gram[c * (size_t)n * n + i];
        for (uint32_t x = 0; c > 0 && x < n; x++)
            sum[x] += job.sum[c * (size_t)n + x];
    }
    double best = INFINITY;
    uint32_t found = 0;
    for (uint32_t x = 0; x < n; x++)
        for (uint32_t y = x + 1; y < n; y++) {
            double bound = M_LN2 * (0.5 * (sum[x] + sum[y]) - gram[(size_t)x * n + y]);
            if (!may_be_below(bound, below))
                continue;
            double js = js_pair(model, inv, live[x], live[y]);
            if (js < best) {
                best = js;
                *pi = live[x];
                *pj = live[y];
                found = 1;
            }
        }
    free(live);
    free(gram);
    free(job.gram);
    free(job.sum);
    *pd = best;
    return found;
}

/* js_pair over two columns of (row, p) in row order: the rows where either
 * holds a share, the same terms in the same order (a row where both are 0
 * adds 0 there), so the same value to the bit. */
static double js_columns(const uint32_t *cw, const double *cp, const size_t *cstart, uint32_t x,
                         uint32_t y)
{
    double js = 0.0;
    size_t a = cstart[x], ae = cstart[x + 1], b = cstart[y], be = cstart[y + 1];
    while (a < ae || b < be) {
        double p = 0, q = 0;
        if (b >= be || (a < ae && cw[a] < cw[b])) {
            p = cp[a++];
        } else if (a >= ae || cw[b] < cw[a]) {
            q = cp[b++];
        } else {
            p = cp[a++];
            q = cp[b++];
        }
        js_add(&js, p, q);
    }
    return js;
}

/* The same search where the rows list the topics they hold (the sparse path,
 * rows_nz.c): the same bound, its Gram sums over the non-zero entries only,
 * which are all that add to them. Each live topic's column (its rows and
 * their square roots) and each row's entries are gathered once; topic x's
 * Gram row is then, over x's rows, the row's later entries times x's: in all
 * the sum over rows of (entries)^2 / 2 multiply-adds, where the dense scan
 * does n^2 / 2 for every row (K=10,000, 20 Newsgroups: a dense scan took
 * about 30 s and 1.2 GB of matrices, and a pass 482 s). Pairs are visited in
 * the dense scan's order and decided by the same exact divergence; the
 * bound's sums are double here (float there), both within the margin. */
static uint32_t closest_pair_sparse(const slda_model_t *model, double below, uint32_t *pi,
                                    uint32_t *pj, double *pd, const uint8_t *is_free,
                                    const uint64_t *since)
{
    uint32_t K = model->K, n = 0, W = model->rows_used;
    double inv[SLDA_MAX_TOPICS];
    uint32_t *live = slda_xmalloc(K * sizeof *live), *pos = slda_xmalloc(K * sizeof *pos);
    topic_inv(model, inv);
    for (uint32_t k = 0; k < K; k++) {
        pos[k] = UINT32_MAX;
        if (eligible(model, k, is_free, since)) {
            pos[k] = n;
            live[n++] = k;
        }
    }
    /* rows: entries (y, sqrt p_wy) of the live topics, y increasing (lists are sorted) */
    size_t *rstart = slda_xcalloc((size_t)W + 1, sizeof *rstart), nnz = 0;
    size_t *rend = slda_xcalloc((size_t)W + 1, sizeof *rend);
    for (uint32_t w = 0; w < W; w++) {
        rstart[w] = nnz;
        if (model->row_ready[w])
            nnz += model->nzn[w];
    }
    rstart[W] = nnz;
    uint32_t *ry = slda_xmalloc((nnz + 1) * sizeof *ry);
    double *rv = slda_xmalloc((nnz + 1) * sizeof *rv), *rp = slda_xmalloc((nnz + 1) * sizeof *rp);
    double *sum = slda_xcalloc(n + 1, sizeof *sum);
    size_t *cstart = slda_xcalloc((size_t)n + 1, sizeof *cstart);
    for (uint32_t w = 0; w < W; w++) {
        size_t e = rstart[w];
        if (!model->row_ready[w])
            continue;
        const float *a = model->A + (size_t)w * model->Kp;
        for (uint32_t u = 0; u < model->nzn[w]; u++) {
            uint32_t k = model->nzt[w][u], y = pos[k];
            double p = a[k] * inv[k];
            if (y == UINT32_MAX || !(p > 0))
                continue;
            sum[y] += p;
            ry[e] = y;
            rp[e] = p;
            rv[e++] = sqrt(p);
            cstart[y]++;
        }
        rend[w] = e; /* the live, non-zero entries: rstart[w] .. rend[w] */
    }
    /* columns: (row, p_wx) of each live topic, rows increasing */
    size_t total = 0;
    for (uint32_t y = 0; y < n; y++) {
        size_t c = cstart[y];
        cstart[y] = total;
        total += c;
    }
    cstart[n] = total;
    uint32_t *cw = slda_xmalloc((total + 1) * sizeof *cw);
    double *cp = slda_xmalloc((total + 1) * sizeof *cp);
    size_t *fill = slda_xmalloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, cstart, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t w = 0; w < W; w++)
        for (size_t e = rstart[w]; e < rend[w]; e++) {
            cw[fill[ry[e]]] = w;
            cp[fill[ry[e]]++] = rp[e];
        }
    double *g = slda_xcalloc(n + 1, sizeof *g), best = INFINITY;
    uint32_t found = 0;
    for (uint32_t x = 0; x < n; x++) {
        for (size_t c = cstart[x]; c < cstart[x + 1]; c++) {
            uint32_t w = cw[c];
            double rx = sqrt(cp[c]); /* the row's rv, the same to the bit */
            for (size_t e = rstart[w]; e < rend[w]; e++)
                if (ry[e] > x)
                    g[ry[e]] += rx * rv[e];
        }
        for (uint32_t y = x + 1; y < n; y++) {
            double bound = M_LN2 * (0.5 * (sum[x] + sum[y]) - g[y]);
            g[y] = 0;
            if (!may_be_below(bound, below))
                continue;
            double js = js_columns(cw, cp, cstart, x, y);
            if (js < best) {
                best = js;
                *pi = live[x];
                *pj = live[y];
                found = 1;
            }
        }
    }
    free(cp);
    free(live);
    free(pos);
    free(rstart);
    free(rend);
    free(ry);
    free(rv);
    free(rp);
    free(sum);
    free(cstart);
    free(cw);
    free(fill);
    free(g);
    *pd = best;
    return found;
}

uint32_t slda_births_closest_pair(const slda_model_t *model, double below, int sparse,
                                  uint32_t *i, uint32_t *j, double *d)
{
    const slda_births_t *b = model->births;
    if (sparse)
        return closest_pair_sparse(model, below, i, j, d, b->is_free, b->since);
    return closest_pair(model, below, i, j, d, b->is_free, b->since);
}

/* A slot for a birth: free, dead or freed by merging the closest pair. */
static int find_slot(slda_model_t *model, slda_births_t *b, uint32_t *slot)
{
    uint32_t K = model->K;
    for (uint32_t k = 0; k < K; k++)
        if (b->is_free[k]) {
            *slot = k;
            return 1;
        }
    uint32_t i, j;
    double d;
    if (K >= 3 &&
        slda_births_closest_pair(model, model->p.births_merge, model->nz_valid && model->nzt, &i,
                                 &j, &d) &&
        d < model->p.births_merge) {
        if (model->NZ[j] > model->NZ[i]) { /* keep the larger */
            uint32_t x = i;
            i = j;
            j = x;
        }
        for (uint32_t w = 0; w < model->rows_used; w++) { /* the others are zero */
            float *a = model->A + (size_t)w * model->Kp;
            if (a[j] != 0)
                slda_rows_nz_add(model, w, i); /* rows_nz.c */
            a[i] += a[j];
        }
        slda_pending_column(model, j, i);
        model->NZ[i] += model->NZ[j];
        model->alpha[i] += model->alpha[j] - SLDA_ALPHA_MIN;
        model->alpha[j] = SLDA_ALPHA_MIN; /* alpha_sum unchanged */
        b->share[i] += b->share[j];
        free_slot(model, b, j);
        b->counts.merges++;
        event(b, model, SLDA_EVENT_MERGE, j, i, 0, d);
        *slot = j;
        return 1;
    }
    return 0;
}

static int propose(slda_model_t *model, slda_births_t *b, double rho)
{
    uint32_t n = b->nbuf;
    uint8_t *member = slda_xcalloc(2 * n + 1, 1), *use = slda_xcalloc(2 * n + 1, 1);
    uint32_t size = cluster(b, member);
    b->counts.proposals++;
    if (size < MIN_CLUSTER) { /* no cluster: let the buffer turn over */
        uint8_t *drop = slda_xcalloc(n + 1, 1);
        for (uint32_t j = 0; j < n / 2; j++)
            drop[j] = 1;
        buf_drop(b, drop);
        free(drop);
        b->counts.rejected++;
        b->counts.no_cluster++;
        free(member);
        free(use);
        return 0;
    }
    /* build from the even members, test on the odd */
    uint32_t pos = 0;
    for (uint32_t j = 0; j < n; j++) {
        use[n + j] = member[j];
        if (member[j])
            use[j] = (pos++ % 2) == 0;
    }
    build_topic(b, use);
    double gain = 0, toks = 0;
    for (uint32_t j = 0; j < n; j++)
        if (member[j] && !use[j]) {
            gain += em_gain(&b->buf[j], b->dense2, NULL) * b->buf[j].len;
            toks += b->buf[j].len;
        }
    clear_topic(b, member);
    gain /= toks;
    uint32_t slot = 0;
    int fs = gain >= model->p.births_gain ? find_slot(model, b, &slot) : -1;
    if (fs <= 0) {
        b->counts.rejected++;
        if (fs < 0)
            b->counts.no_gain++;
        else
            b->counts.no_slot++;
        buf_drop(b, member); /* these documents are not helped (or nothing can hold them) */
        free(member);
        free(use);
        return 0;
    }
    /* seed: every member's counts times the new topic's responsibility */
    for (uint32_t j = 0; j < n; j++)
        use[j] = member[j];
    build_topic(b, use);
    uint64_t mark = b->tokens;
    double seedsum = 0;
    for (uint32_t j = 0; j < n; j++)
        if (member[j]) {
            bdoc_t *x = &b->buf[j];
            double *resp = slda_xmalloc(x->n * sizeof *resp);
            em_gain(x, b->dense2, resp);
            for (uint32_t u = 0; u < x->n; u++)
                b->dense[x->word[u]] += (float)(resp[u] * x->count[u]);
            free(resp);
            if (x->mark < mark)
                mark = x->mark;
        }
    clear_topic(b, member);
    free_slot(model, b, slot);
    double C = slda_step_corpus(model);
    double T = (double)(b->tokens - mark);
    double scale = rho * C / (T > 0 ? T : 1);
    for (uint32_t j = 0; j < n; j++)
        if (member[j])
            for (uint32_t u = 0; u < b->buf[j].n; u++) {
                uint32_t w = b->buf[j].word[u];
                if (b->dense[w] > 0 && model->row_ready[w]) {
                    double v = scale * b->dense[w];
                    model->A[(size_t)w * model->Kp + slot] = (float)(v / model->sigma);
                    slda_rows_nz_add(model, w, slot);
                    seedsum += v;
                }
                b->dense[w] = 0;
            }
    model->NZ[slot] = seedsum;
    double live = 0;
    uint32_t nlive = 0;
    for (uint32_t k = 0; k < model->K; k++)
        if (!b->is_free[k]) {
            live += model->alpha[k];
            nlive++;
        }
    double a = nlive ? live / nlive : model->p.alpha;
    model->alpha_sum += a - model->alpha[slot];
    model->alpha[slot] = a;
    b->is_free[slot] = 0;
    b->since[slot] = model->t;
    b->share[slot] = 1.0 / model->K;
    b->counts.births++;
    event(b, model, SLDA_EVENT_BIRTH, slot, slot, size, gain);
    buf_drop(b, member);
    free(member);
    free(use);
    return 1;
}

uint64_t slda_births_count_start(slda_births_t *b, uint64_t total, uint64_t ntokens, double rho)
{
    if (!b || !b->windowed)
        return total;
    if (ntokens == 0) /* a minibatch of empty documents: nothing to count (keep would be 0) */
        return b->counted;
    uint64_t before = b->counted;
    /* WINDOW_RATIO 1: r = ntokens / (keep + ntokens) = rho */
    double keep = WINDOW_RATIO * ((double)ntokens / rho - (double)ntokens);
    if (rho > 0 && rho < 1 && (double)before > keep)
        before = (uint64_t)keep;
    b->counted = before + ntokens;
    return before;
}

void slda_births_update(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                        const float *scores, float *const *pw, const float *ntheta,
                        uint64_t ntokens, double rho)
{
    slda_births_t *b = model->births;
    uint32_t cap = 2 * (model->p.births_docs ? model->p.births_docs : 1);
    if (b->cap < cap) { /* births.docs raised since (a restored model's configuration) */
        b->buf = slda_xrealloc(b->buf, cap * sizeof *b->buf);
        b->cap = cap;
    }
    update_shares(model, b, ntheta, ndocs);
    flag_docs(model, b, docs, ndocs, scores, pw);
    b->tokens += ntokens;
    uint8_t *old = slda_xcalloc(b->nbuf + 1, 1);
    for (uint32_t j = 0; j < b->nbuf; j++)
        old[j] = model->t - b->buf[j].t > MAX_AGE;
    buf_drop(b, old);
    free(old);
    /* Births come together: every cluster the buffer holds is proposed in the
     * same update, so the newborns share the new words by their seeds. One
     * born alone has the smallest NZ[k], and eta / (NZ[k] + W eta) made it
     * take every word no topic held yet (a mixture of the new subjects). */
    if (b->nbuf >= model->p.births_docs) {
        uint32_t tries = 0;
        while (propose(model, b, rho) && ++tries < model->K && b->nbuf >= MIN_CLUSTER)
            ;
        if (tries && !b->windowed) { /* the stream has changed: see slda_births_count_start */
            b->windowed = 1;
            b->counted = model->tokens + model->replay_tokens + ntokens;
        }
        buf_clear(b); /* afresh: scores predate any newborn; the rejected are not retried */
    }
}

size_t slda_model_events(const slda_model_t *model, uint64_t since, slda_event_t *out,
                         size_t max)
{
    const slda_births_t *b = model->births;
    if (!b || max == 0)
        return 0;
    uint64_t first = b->nev > EVENTS_KEPT ? b->nev - EVENTS_KEPT + 1 : 1;
    if (since + 1 > first)
        first = since + 1;
    size_t n = 0;
    for (uint64_t s = first; s <= b->nev && n < max; s++)
        out[n++] = b->ev[(s - 1) % EVENTS_KEPT];
    return n;
}

void slda_model_topic_counts(const slda_model_t *model, slda_topic_counts_t *counts)
{
    memset(counts, 0, sizeof *counts);
    if (model->births)
        *counts = model->births->counts;
}

const char *slda_event_kind_name(slda_event_kind_t kind)
{
    switch (kind) {
    case SLDA_EVENT_BIRTH: return "birth";
    case SLDA_EVENT_DEATH: return "death";
    case SLDA_EVENT_MERGE: return "merge";
    }
    return "?";
}

const slda_births_t *slda_model_births(const slda_model_t *model)
{
    return model->births;
}

slda_err_t slda_model_attach_births(slda_model_t *model, const slda_births_state_t *st,
                                    char *errstr, size_t errstr_size)
{
    slda_births_t *b = slda_births_import(model, st, errstr, errstr_size);
    if (!b)
        return SLDA_ERR_CORRUPT;
    slda_births_free(model->births);
    model->births = b;
    return SLDA_OK;
}
