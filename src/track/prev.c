/* prev.c - prevalence by event time at several resolutions at once, in bounded memory.
 *
 * Invariants. Tiers run finest first. A ring tier keeps its last conf.windows windows: window
 * index i (start / width) lives in slot i mod windows, and a slot whose index is not i holds
 * an older window, recycled when i arrives; a document older than the ring is counted in
 * `beyond` and lives on in the coarser tiers. The last tier (conf.doubling) keeps every
 * document: its slots are the windows base .. base + windows - 1, and when a document falls
 * outside, the tier moves its base back (older data) or, when the span no longer fits,
 * doubles its width, merging pairs of windows (sums, documents, reservoirs) until it fits.
 * Window indexes are floor(ms / width), aligned to the epoch (UTC), so every tier's windows
 * nest into the next one's when widths divide (minute, hour, day; a week holds 7 days).
 * One thread owns a store.
 */
#include "track/prev.h"

#include "track/sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_MS (60 * 1000LL)
#define HOUR_MS (3600 * 1000LL)
#define DAY_MS (24 * HOUR_MS)
#define WEEK_MS (7 * DAY_MS)

size_t slda_prev_default_tiers(int64_t finest_ms, uint32_t windows, slda_prev_tier_t *out)
{
    /* the coarser tiers' lengths: hours for three weeks, days for three years, weeks for
     * 19.6 years, then doubling; only the tiers above the minute are sampled (the last
     * hours were scored by a model that is still the current one) */
    static const struct { int64_t ms; uint32_t n; } std[] = {
        {MIN_MS, 240}, {HOUR_MS, 504}, {DAY_MS, 1096}, {WEEK_MS, 1024}};
    size_t n = 0;
    for (size_t i = 0; i < sizeof std / sizeof std[0]; i++) {
        if (std[i].ms < finest_ms)
            continue;
        out[n].window_ms = n ? std[i].ms : finest_ms;
        out[n].windows = n ? std[i].n : windows;
        out[n].doubling = 0;
        out[n].sampled = out[n].window_ms >= HOUR_MS;
        n++;
    }
    if (!n) { /* a window wider than a week: one doubling tier */
        out[0].window_ms = finest_ms;
        out[0].windows = windows;
        out[0].sampled = 1;
        n = 1;
    }
    out[n - 1].doubling = 1;
    return n;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void win_clear(slda_pwin_t *w, uint32_t K)
{
    w->win = INT64_MIN;
    w->docs = 0;
    if (w->sum)
        memset(w->sum, 0, K * sizeof *w->sum);
    free(w->now);
    w->now = NULL;
    w->scored = 0;
    slda_sample_destroy(w->sample);
    w->sample = NULL;
}

static void win_free(slda_pwin_t *w)
{
    free(w->sum);
    free(w->now);
    slda_sample_destroy(w->sample);
    memset(w, 0, sizeof *w);
    w->win = INT64_MIN;
}

slda_prev_t *slda_prev_new(uint32_t K, const slda_prev_tier_t *tiers, size_t ntiers,
                           uint32_t sample_docs)
{
    slda_prev_t *p = slda_xcalloc(1, sizeof *p);
    p->K = K;
    p->ntiers = ntiers < SLDA_PREV_TIERS ? ntiers : SLDA_PREV_TIERS;
    p->sample_docs = sample_docs;
    slda_rng_seed3(&p->rng, 0x70726576 /* "prev" */, K, sample_docs);
    for (size_t t = 0; t < p->ntiers; t++) {
        slda_ptier_t *tr = &p->tier[t];
        tr->conf = tiers[t];
        if (tr->conf.windows < 2)
            tr->conf.windows = 2;
        tr->conf.doubling = t + 1 == p->ntiers; /* the last tier keeps everything */
        tr->width = tr->conf.window_ms;
        tr->w = slda_xcalloc(tr->conf.windows, sizeof *tr->w);
        for (uint32_t i = 0; i < tr->conf.windows; i++)
            tr->w[i].win = INT64_MIN;
        tr->base = tr->top = INT64_MIN;
    }
    return p;
}

void slda_prev_destroy(slda_prev_t *p)
{
    if (!p)
        return;
    for (size_t t = 0; t < p->ntiers; t++) {
        for (uint32_t i = 0; i < p->tier[t].conf.windows; i++)
            win_free(&p->tier[t].w[i]);
        free(p->tier[t].w);
    }
    free(p);
}

void slda_prev_reset(slda_prev_t *p)
{
    for (size_t t = 0; t < p->ntiers; t++) {
        slda_ptier_t *tr = &p->tier[t];
        for (uint32_t i = 0; i < tr->conf.windows; i++)
            win_clear(&tr->w[i], p->K);
        tr->width = tr->conf.window_ms;
        tr->base = tr->top = INT64_MIN;
        tr->beyond = 0;
        tr->doublings = 0;
    }
    p->docs = 0;
}

/* ---- the doubling tier ---- */

/* Merge window b into a (both of the same tier, a of the merged index). */
static void win_merge(slda_prev_t *p, slda_pwin_t *a, slda_pwin_t *b)
{
    if (b->docs <= 0)
        return;
    if (!a->sum)
        a->sum = slda_xcalloc(p->K, sizeof *a->sum);
    if (a->now && b->now && a->scored == b->scored) {
        for (uint32_t k = 0; k < p->K; k++)
            a->now[k] = (a->now[k] * a->docs + b->now[k] * b->docs) / (a->docs + b->docs);
    } else if (a->docs > 0 || !b->now) { /* scored at other times: score again */
        free(a->now);
        a->now = NULL;
        a->scored = 0;
    } else {
        a->now = b->now;
        a->scored = b->scored;
        b->now = NULL;
    }
    for (uint32_t k = 0; k < p->K; k++)
        a->sum[k] += b->sum[k];
    if (b->sample) {
        if (!a->sample) {
            a->sample = b->sample;
            b->sample = NULL;
        } else
            slda_sample_merge(a->sample, a->docs, b->sample, b->docs, &p->rng);
    }
    a->docs += b->docs;
}

/* Lay the tier's windows out again from base, after the width doubled `twice` times (0: the
 * same width, a new base only). Every window with documents lands inside. */
static void relayout(slda_prev_t *p, slda_ptier_t *tr, int64_t base, int doublings)
{
    uint32_t n = tr->conf.windows;
    slda_pwin_t *old = tr->w;
    tr->w = slda_xcalloc(n, sizeof *tr->w);
    for (uint32_t i = 0; i < n; i++)
        tr->w[i].win = INT64_MIN;
    tr->width <<= doublings;
    tr->doublings += (uint32_t)doublings;
    tr->base = base;
    tr->top = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        slda_pwin_t *o = &old[i];
        if (o->win == INT64_MIN || o->docs <= 0) {
            win_free(o);
            continue;
        }
        int64_t idx = o->win >> doublings; /* floor for negative indexes too */
        slda_pwin_t *d = &tr->w[idx - base];
        if (d->win == INT64_MIN) {
            *d = *o; /* moved whole: sums, reservoir, scores */
            d->win = idx;
            if (doublings) { /* a window of the new width holds only part: score again */
                free(d->now);
                d->now = NULL;
                d->scored = 0;
            }
            memset(o, 0, sizeof *o);
        } else {
            win_merge(p, d, o);
            win_free(o);
        }
        if (idx > tr->top)
            tr->top = idx;
    }
    free(old);
}

/* The slot of window index win (at the tier's width now) of the doubling tier, after moving
 * or coarsening the tier so that it fits with every window it holds. Returns the window index
 * at the (possibly new) width through *win. */
static slda_pwin_t *doubling_slot(slda_prev_t *p, slda_ptier_t *tr, int64_t *win)
{
    int64_t n = tr->conf.windows;
    if (tr->base == INT64_MIN) {
        tr->base = *win;
        tr->top = *win;
    }
    if (*win < tr->base || *win >= tr->base + n) {
        int64_t lo = *win < tr->base ? *win : tr->base;
        int64_t hi = tr->top > *win ? tr->top : *win;
        int d = 0;
        while ((hi >> d) - (lo >> d) + 1 > n)
            d++;
        relayout(p, tr, lo >> d, d);
        *win >>= d;
    }
    if (*win > tr->top)
        tr->top = *win;
    return &tr->w[*win - tr->base];
}

/* ---- windows ---- */

slda_pwin_t *slda_prev_window(slda_prev_t *p, size_t t, int64_t ms)
{
    slda_ptier_t *tr = &p->tier[t];
    int64_t win = floor_div(ms, tr->width);
    slda_pwin_t *w;
    if (tr->conf.doubling) {
        w = doubling_slot(p, tr, &win);
    } else {
        int64_t n = tr->conf.windows;
        if (tr->top != INT64_MIN && win <= tr->top - n) {
            tr->beyond++; /* older than the ring: in the coarser tiers only */
            return NULL;
        }
        if (tr->top == INT64_MIN || win > tr->top)
            tr->top = win;
        int64_t i = win % n;
        w = &tr->w[i < 0 ? i + n : i];
    }
    if (w->win != win) { /* a recycled slot (the window it held left the ring), or a new one */
        win_clear(w, p->K);
        w->win = win;
    }
    if (!w->sum)
        w->sum = slda_xcalloc(p->K, sizeof *w->sum);
    return w;
}

int slda_prev_add(slda_prev_t *p, int64_t ms, const float *theta, const slda_model_t *model,
                  const slda_doc_t *doc)
{
    slda_sdoc_t *sd = NULL; /* made when a reservoir first takes the document */
    double tot = 0;
    for (uint32_t k = 0; k < p->K; k++)
        tot += theta[k];
    if (!(tot > 0) || !isfinite(tot))
        return -1;
    double inv = 1.0 / tot;
    for (size_t t = 0; t < p->ntiers; t++) {
        slda_pwin_t *w = slda_prev_window(p, t, ms);
        if (!w)
            continue;
        for (uint32_t k = 0; k < p->K; k++)
            w->sum[k] += theta[k] * inv;
        w->docs += 1;
        if (w->now) { /* a document the rescored mean has not seen: at its training value */
            for (uint32_t k = 0; k < p->K; k++)
                w->now[k] += (theta[k] * inv - w->now[k]) / w->docs;
        }
        if (doc && model && p->sample_docs && p->tier[t].conf.sampled) {
            if (!w->sample)
                w->sample = slda_sample_new(p->sample_docs);
            int slot = slda_sample_offer(w->sample, &p->rng);
            if (slot >= 0) {
                if (!sd)
                    sd = slda_sdoc_new(model, doc, theta, p->K);
                sd->refs++;
                slda_sample_put(w->sample, slot, sd);
            }
        }
    }
    p->docs++;
    return 0;
}

/* ---- reading ---- */

size_t slda_prev_list(const slda_prev_t *p, size_t t, const slda_pwin_t **out, size_t max)
{
    const slda_ptier_t *tr = &p->tier[t];
    size_t n = 0;
    if (tr->top == INT64_MIN)
        return 0;
    int64_t cap = tr->conf.windows;
    if (tr->conf.doubling) {
        for (int64_t i = 0; i < cap; i++) {
            const slda_pwin_t *w = &tr->w[i];
            if (w->win != INT64_MIN && w->docs > 0) {
                if (n < max)
                    out[n] = w;
                n++;
            }
        }
        return n;
    }
    for (int64_t win = tr->top - cap + 1; win <= tr->top; win++) {
        int64_t i = win % cap;
        const slda_pwin_t *w = &tr->w[i < 0 ? i + cap : i];
        if (w->win == win && w->docs > 0) {
            if (n < max)
                out[n] = w;
            n++;
        }
    }
    return n;
}

int64_t slda_prev_width(const slda_prev_t *p, size_t t)
{
    return p->tier[t].width;
}

void slda_prev_span(const slda_prev_t *p, int64_t *first_ms, int64_t *last_ms)
{
    const slda_ptier_t *last = &p->tier[p->ntiers - 1];
    *first_ms = *last_ms = 0;
    if (last->top == INT64_MIN)
        return;
    for (uint32_t i = 0; i < last->conf.windows; i++)
        if (last->w[i].win != INT64_MIN && last->w[i].docs > 0) {
            *first_ms = last->w[i].win * last->width;
            break;
        }
    *last_ms = (last->top + 1) * last->width;
    /* the finest tier knows the end more precisely */
    const slda_ptier_t *fine = &p->tier[0];
    if (fine->top != INT64_MIN)
        *last_ms = (fine->top + 1) * fine->width;
}

/* Documents in tier t's windows now. */
static double tier_docs(const slda_prev_t *p, size_t t)
{
    const slda_ptier_t *tr = &p->tier[t];
    double n = 0;
    for (uint32_t i = 0; i < tr->conf.windows; i++)
        if (tr->w[i].win != INT64_MIN)
            n += tr->w[i].docs;
    return n;
}

size_t slda_prev_pick(const slda_prev_t *p, size_t max_points)
{
    double all = tier_docs(p, p->ntiers - 1); /* the last tier holds every document */
    for (size_t t = 0; t + 1 < p->ntiers; t++) {
        const slda_ptier_t *tr = &p->tier[t];
        if (tr->top == INT64_MIN)
            continue;
        /* it covers the stream when it holds nearly every document (a few stray old times
         * must not turn a chart of hours into one of years: they are counted as outside) and
         * its span fits in max_points windows */
        const slda_pwin_t *first = NULL;
        slda_prev_list(p, t, &first, 1);
        int64_t points = first ? tr->top - first->win + 1 : 0;
        if (points <= (int64_t)max_points && tier_docs(p, t) >= SLDA_PREV_COVER * all)
            return t;
    }
    return p->ntiers - 1;
}

double slda_prev_outside(const slda_prev_t *p, size_t t)
{
    double d = tier_docs(p, p->ntiers - 1) - tier_docs(p, t);
    return d > 0 ? d : 0;
}

double slda_prev_share(const slda_prev_t *p, const slda_pwin_t *w, uint32_t k)
{
    if (w->now)
        return w->now[k];
    return w->docs > 0 ? w->sum[k] / w->docs : 0;
}

slda_pwin_t *slda_prev_restore(slda_prev_t *p, size_t t, int64_t width, int64_t start_ms,
                               double docs, const double *sums)
{
    slda_ptier_t *tr = &p->tier[t];
    if (width <= 0 || start_ms % width != 0 || !(docs > 0))
        return NULL;
    if (width != tr->width) {
        /* the doubling tier doubled while the state was saved: double it here as well */
        if (!tr->conf.doubling || width < tr->width || width % tr->width)
            return NULL;
        int d = 0;
        while ((tr->width << d) < width)
            d++;
        if ((tr->width << d) != width)
            return NULL;
        if (tr->base == INT64_MIN)
            tr->width <<= d, tr->doublings += (uint32_t)d;
        else
            relayout(p, tr, tr->base >> d, d);
    }
    slda_pwin_t *w = slda_prev_window(p, t, start_ms);
    if (!w)
        return NULL;
    w->docs += docs;
    for (uint32_t k = 0; k < p->K; k++)
        w->sum[k] += sums[k];
    return w;
}
