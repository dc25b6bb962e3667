/* sample.c - windows' documents kept by word key, scored again under the model as it is now.
 *
 * Invariants. A reservoir (Vitter's algorithm R) holds a uniform sample of the documents
 * offered to it: with `seen` offered and cap slots, each was kept with probability
 * cap / seen. Two reservoirs merge into one of the documents of both windows, each kept
 * with a probability proportional to the documents it stands for (weighted sampling without
 * replacement, Efraimidis-Spirakis keys). A sampled document is shared by the reservoirs of
 * its windows in the several tiers (refs). Scoring maps its keys to the model's ids now
 * (a word the model no longer holds is left out, as the held-out documents do) and infers
 * its mixture under the frozen model (slda_model_infer): the window's share under the
 * current model is its training-time share plus the sample's mean change
 * (theta now - theta then), a difference estimator, exact when the sample holds every
 * document of the window; otherwise each topic's mean change is shrunk by its sampling
 * variance (slda_sample_shrink), so a settled model's small changes, which a sample of 32
 * measures mostly as noise, do not move the share. The training-time mixture is kept as its
 * SLDA_SDOC_TOP largest entries, the rest spread evenly. One thread.
 */
#include "track/sample.h"

#include "text/vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- documents ---- */

typedef struct wc_s {
    uint32_t id, count;
} wc_t;

static int wc_by_count(const void *a, const void *b)
{
    const wc_t *x = a, *y = b;
    return x->count != y->count ? (x->count < y->count ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

static void top_entries(slda_sdoc_t *d, const float *theta, uint32_t K)
{
    double tot = 0;
    for (uint32_t k = 0; k < K; k++)
        tot += theta[k];
    d->ntop = 0;
    for (uint32_t k = 0; k < K; k++) {
        float v = tot > 0 ? (float)(theta[k] / tot) : 0;
        uint32_t i = d->ntop < SLDA_SDOC_TOP ? d->ntop++ : SLDA_SDOC_TOP;
        if (i == SLDA_SDOC_TOP && v <= d->top_p[SLDA_SDOC_TOP - 1])
            continue;
        if (i == SLDA_SDOC_TOP)
            i--;
        while (i > 0 && d->top_p[i - 1] < v) {
            d->top_k[i] = d->top_k[i - 1];
            d->top_p[i] = d->top_p[i - 1];
            i--;
        }
        d->top_k[i] = k;
        d->top_p[i] = v;
    }
}

slda_sdoc_t *slda_sdoc_new(const slda_model_t *model, const slda_doc_t *doc,
                           const float *theta, uint32_t K)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    uint32_t n = doc->npairs;
    wc_t stack[SLDA_SDOC_WORDS], *wc = stack;
    if (n > SLDA_SDOC_WORDS) { /* the most frequent words: they carry the mixture */
        wc = slda_xmalloc(n * sizeof *wc);
        for (uint32_t i = 0; i < n; i++)
            wc[i] = (wc_t){doc->word[i], doc->count[i]};
        qsort(wc, n, sizeof *wc, wc_by_count);
        n = SLDA_SDOC_WORDS;
    } else {
        for (uint32_t i = 0; i < n; i++)
            wc[i] = (wc_t){doc->word[i], doc->count[i]};
    }
    slda_sdoc_t *d = slda_xcalloc(1, sizeof *d);
    d->refs = 0;
    d->key = slda_xmalloc((n ? n : 1) * sizeof *d->key);
    d->count = slda_xmalloc((n ? n : 1) * sizeof *d->count);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t key = slda_vocab_key(vocab, wc[i].id);
        if (!key)
            continue;
        d->key[d->n] = key;
        d->count[d->n++] = (uint16_t)(wc[i].count < 65535 ? wc[i].count : 65535);
    }
    if (wc != stack)
        free(wc);
    top_entries(d, theta, K);
    return d;
}

slda_sdoc_t *slda_sdoc_make(const uint64_t *key, const uint16_t *count, uint32_t n,
                            const uint32_t *top_k, const float *top_p, uint32_t ntop)
{
    slda_sdoc_t *d = slda_xcalloc(1, sizeof *d);
    d->key = slda_xmalloc((n ? n : 1) * sizeof *d->key);
    d->count = slda_xmalloc((n ? n : 1) * sizeof *d->count);
    memcpy(d->key, key, n * sizeof *key);
    memcpy(d->count, count, n * sizeof *count);
    d->n = n;
    d->ntop = ntop < SLDA_SDOC_TOP ? ntop : SLDA_SDOC_TOP;
    memcpy(d->top_k, top_k, d->ntop * sizeof *top_k);
    memcpy(d->top_p, top_p, d->ntop * sizeof *top_p);
    return d;
}

void slda_sdoc_unref(slda_sdoc_t *d)
{
    if (!d || --d->refs > 0)
        return;
    free(d->key);
    free(d->count);
    free(d);
}

/* ---- reservoirs ---- */

slda_sample_t *slda_sample_new(uint32_t cap)
{
    slda_sample_t *s = slda_xcalloc(1, sizeof *s);
    s->cap = cap ? cap : 1;
    s->doc = slda_xcalloc(s->cap, sizeof *s->doc);
    return s;
}

void slda_sample_destroy(slda_sample_t *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        slda_sdoc_unref(s->doc[i]);
    free(s->doc);
    free(s);
}

int slda_sample_offer(slda_sample_t *s, slda_rng_t *rng)
{
    s->seen += 1;
    if (s->n < s->cap)
        return (int)s->n;
    double j = floor(slda_rng_double(rng) * s->seen);
    return j < s->cap ? (int)j : -1;
}

void slda_sample_put(slda_sample_t *s, int slot, slda_sdoc_t *d)
{
    if (slot < 0 || (uint32_t)slot > s->n || (uint32_t)slot >= s->cap) {
        slda_sdoc_unref(d);
        return;
    }
    if ((uint32_t)slot == s->n)
        s->n++;
    else
        slda_sdoc_unref(s->doc[slot]);
    s->doc[slot] = d;
}

void slda_sample_merge(slda_sample_t *a, double na, slda_sample_t *b, double nb,
                       slda_rng_t *rng)
{
    uint32_t m = a->n + b->n;
    if (m <= a->cap) { /* room for both */
        for (uint32_t i = 0; i < b->n; i++)
            a->doc[a->n++] = b->doc[i];
        b->n = 0;
        a->seen += b->seen;
        return;
    }
    /* each document stands for n / sample-size documents of its window: keys u^(1/w) */
    struct cand { double key; slda_sdoc_t *d; } *c = slda_xmalloc(m * sizeof *c);
    double wa = a->n ? na / a->n : 0, wb = b->n ? nb / b->n : 0;
    for (uint32_t i = 0; i < m; i++) {
        double w = i < a->n ? wa : wb, u = slda_rng_double(rng);
        c[i].d = i < a->n ? a->doc[i] : b->doc[i - a->n];
        c[i].key = w > 0 ? log(u > 0 ? u : 1e-300) / w : -INFINITY; /* log(u^(1/w)) */
    }
    for (uint32_t i = 0; i < a->cap; i++) { /* the cap largest keys, by selection */
        uint32_t best = i;
        for (uint32_t j = i + 1; j < m; j++)
            if (c[j].key > c[best].key)
                best = j;
        struct cand tmp = c[i];
        c[i] = c[best];
        c[best] = tmp;
    }
    for (uint32_t i = 0; i < a->cap; i++)
        a->doc[i] = c[i].d;
    for (uint32_t i = a->cap; i < m; i++)
        slda_sdoc_unref(c[i].d);
    a->n = a->cap;
    a->seen += b->seen;
    b->n = 0;
    free(c);
}

/* ---- scoring ---- */

/* doc's words under model's vocabulary now: the keys the model still holds. */
static int sdoc_doc(const slda_sdoc_t *d, const slda_model_t *model, slda_doc_t *doc)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    doc->npairs = doc->ntokens = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        uint32_t id = slda_vocab_find_key(vocab, d->key[i]);
        if (id == UINT32_MAX || id >= slda_model_rows(model) || !slda_model_row_ready(model, id))
            continue;
        slda_doc_add(doc, id, d->count[i]);
    }
    slda_doc_finish(doc);
    return doc->npairs ? 0 : -1;
}

int slda_sdoc_infer(const slda_sdoc_t *d, const slda_model_t *model, slda_doc_t *doc,
                    float *theta, uint64_t seed)
{
    if (sdoc_doc(d, model, doc))
        return -1;
    return slda_model_infer(model, doc, theta, seed) == SLDA_OK ? 0 : -1;
}

/* The sample's mean change of one topic, shrunk by its own noise: with n changes summing to
 * `sum` (squares `sum2`) drawn from a window of `docs` documents, the mean c has the sampling
 * variance v = s^2 / n (1 - n / docs) (s^2 the changes' variance, the finite-population
 * correction), and c (1 - v / c^2), cut at 0, is the positive-part Stein shrinkage of c
 * towards no change. Once the model has settled, the true change is small and the sample's
 * mean is mostly its noise (32 documents of thousands, each inferred with its own noise):
 * unshrunk, it moved Reuters' weekly shares away from those of the same model scoring every
 * document (bench/track/real.py); a large consistent change (a model that learned since) keeps
 * nearly all of it. */
double slda_sample_shrink(double sum, double sum2, uint32_t n, double docs)
{
    if (!n)
        return 0;
    double c = sum / n;
    if (n < 2 || !(c != 0))
        return c;
    double s2 = (sum2 - n * c * c) / (n - 1);
    double fpc = docs > n ? 1 - n / docs : 0;
    double v = s2 > 0 ? s2 / n * fpc : 0;
    double f = 1 - v / (c * c);
    return f > 0 ? c * f : 0;
}

int slda_sample_score(const slda_sample_t *s, const slda_model_t *model, const double *sum,
                      double docs, uint32_t K, double *now)
{
    if (!s || !s->n || !(docs > 0))
        return -1;
    /* every document of the window in the sample: its mean now; else the training-time mean
     * plus the sample's mean change */
    int whole = s->seen <= s->n;
    double *chg = slda_xcalloc(2 * (size_t)K, sizeof *chg), *chg2 = chg + K;
    double *diff = slda_xmalloc(K * sizeof *diff);
    float *theta = slda_xmalloc(K * sizeof *theta);
    slda_doc_t doc;
    slda_doc_init(&doc);
    uint32_t used = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const slda_sdoc_t *d = s->doc[i];
        if (sdoc_doc(d, model, &doc))
            continue; /* none of its words is held now: it cannot be scored */
        if (slda_model_infer(model, &doc, theta, i + 1) != SLDA_OK)
            continue;
        double tot = 0, then_top = 0;
        for (uint32_t k = 0; k < K; k++)
            tot += theta[k];
        if (!(tot > 0))
            continue;
        for (uint32_t k = 0; k < K; k++)
            diff[k] = theta[k] / tot;
        if (!whole) {
            for (uint32_t j = 0; j < d->ntop; j++)
                then_top += d->top_p[j];
            double rest = K > d->ntop && then_top < 1 ? (1 - then_top) / (K - d->ntop) : 0;
            for (uint32_t k = 0; k < K; k++)
                diff[k] -= rest;
            for (uint32_t j = 0; j < d->ntop; j++)
                diff[d->top_k[j]] -= d->top_p[j] - rest;
        }
        for (uint32_t k = 0; k < K; k++) {
            chg[k] += diff[k];
            chg2[k] += diff[k] * diff[k];
        }
        used++;
    }
    slda_doc_clear(&doc);
    free(theta);
    free(diff);
    if (!used) {
        free(chg);
        return -1;
    }
    double tot = 0;
    for (uint32_t k = 0; k < K; k++) {
        double v = whole ? chg[k] / used : sum[k] / docs + slda_sample_shrink(chg[k], chg2[k], used, docs);
        now[k] = v > 0 ? v : 0;
        tot += now[k];
    }
    for (uint32_t k = 0; k < K && tot > 0; k++)
        now[k] /= tot;
    free(chg);
    return 0;
}

/* A window's score is stale when it has none, or when the model has taken a quarter more
 * updates since (and at least 8): early windows are scored again often while the model
 * learns fast, later ones rarely. */
static int stale(const slda_pwin_t *w, uint64_t update)
{
    if (!w->sample || !w->sample->n || w->docs <= 0)
        return 0;
    if (!w->scored)
        return 1;
    uint64_t at = w->scored - 1;
    return update >= at + 8 && update >= at + at / 4;
}

size_t slda_prev_stale(const slda_prev_t *p, uint64_t update)
{
    size_t n = 0;
    for (size_t t = 0; t < p->ntiers; t++)
        for (uint32_t i = 0; i < p->tier[t].conf.windows; i++)
            n += p->tier[t].w[i].win != INT64_MIN && stale(&p->tier[t].w[i], update);
    return n;
}

size_t slda_prev_rescore(slda_prev_t *p, const slda_model_t *model, uint64_t update,
                         size_t first, double deadline)
{
    size_t done = 0;
    for (size_t o = 0; o < p->ntiers; o++) {
        size_t t = o == 0 ? first : o <= first ? o - 1 : o;
        if (t >= p->ntiers)
            continue;
        slda_ptier_t *tr = &p->tier[t];
        for (uint32_t i = 0; i < tr->conf.windows; i++) {
            slda_pwin_t *w = &tr->w[i];
            if (w->win == INT64_MIN || !stale(w, update))
                continue;
            if (deadline > 0 && slda_mono_s() >= deadline)
                return done;
            if (!w->now)
                w->now = slda_xmalloc(p->K * sizeof *w->now);
            if (slda_sample_score(w->sample, model, w->sum, w->docs, p->K, w->now)) {
                free(w->now);
                w->now = NULL;
            }
            w->scored = update + 1;
            done++;
        }
    }
    return done;
}
