/* track.c - topic tracking: event time, prevalence windows, drift, events, the sidecar state.
 *
 * A topic's id is its slot in the model (0..K-1), which snapshots and
 * restarts keep; the tracker follows each slot over event time.
 *  - Prevalence: every trained document's mixture theta is added to the
 *    window of its event time (track.window) in a ring of track.windows
 *    windows; a window's share of topic k is the mean theta_k of its documents.
 *    Documents older than the ring are dropped (counted); later windows
 *    recycle the oldest slots.
 *  - Drift: at each snapshot each topic's top SLDA_TRACK_TOP words (with
 *    probabilities) are compared with those kept from the previous snapshot:
 *    Jensen-Shannon distance of the two lists renormalised to sum 1, and the
 *    words that entered or left the top SLDA_TRACK_SHOW.
 *  - Events: birth (slot taken over), change, merge, death; plus the engine's
 *    own (slda_track_engine_event). docs/tracking.md has the rules.
 * Owned by the service thread; not thread-safe.
 */
#include "track/track.h"

#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MERGED_MAX 4096 /* close pairs remembered (so a merge is reported once) */

typedef struct tw_s {  /* one topic's kept words */
    size_t n;
    char *word[SLDA_TRACK_TOP];
    float prob[SLDA_TRACK_TOP];
} tw_t;

typedef struct topic_s {
    tw_t words;          /* at the last comparison */
    double mass;         /* share of the model's tokens then */
    double drift;        /* JS distance at the last comparison, -1 = none */
    int dead;            /* a death was reported and the topic has not come back */
    char entered[200], left[200]; /* top-10 changes at the last comparison */
} topic_t;

typedef struct slot_s {
    int64_t win;  /* window index (start / window_ms); INT64_MIN = empty */
    double docs;
    double *sum;  /* K */
} slot_t;

struct slda_track_s {
    uint32_t K;
    slda_track_opts_t o;
    /* event time */
    int64_t newest_ms;
    uint64_t clamped, late, dropped, docs;
    /* prevalence ring */
    slot_t *slots;
    int64_t newest_win; /* INT64_MIN = none */
    /* drift */
    topic_t *topics;
    int compared;
    uint64_t compared_docs; /* documents trained at the last comparison */
    uint32_t (*merged)[2];
    size_t nmerged;
    /* events */
    slda_track_event_t ev[SLDA_TRACK_EVENTS];
    size_t nev, ev_first; /* ring: nev kept, oldest at ev_first */
    slda_track_event_cb cb;
    void *cb_opaque;
};

void slda_track_opts_default(slda_track_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->window_ms = 3600 * 1000;
    o->windows = 168;
    o->warmup_docs = 1000;
    o->change_js = 0.5;
    o->birth_js = 0.8;
    o->birth_keep = 3;
    o->merge_js = 0.3;
    o->death_floor = 0.002;
    o->death_windows = 3;
    o->trend_windows = 4;
    o->trend_slope = 0.02;
}

void slda_track_opts_from_conf(slda_track_opts_t *o, const slda_conf_t *c)
{
    static const int64_t window_ms[] = {60 * 1000, 3600 * 1000, 24 * 3600 * 1000,
                                        7 * 24 * 3600 * 1000LL};
    slda_track_opts_default(o);
    o->window_ms = window_ms[c->track_window >= 0 && c->track_window < 4 ? c->track_window : 1];
    o->windows = c->track_windows;
    o->warmup_docs = c->track_warmup_docs;
    o->change_js = c->track_change_js;
    o->birth_js = c->track_birth_js;
    o->birth_keep = c->track_birth_keep;
    o->merge_js = c->track_merge_js;
    o->death_floor = c->track_death_floor;
    o->death_windows = c->track_death_windows;
    o->trend_windows = c->track_trend_windows;
    o->trend_slope = c->track_trend_slope;
}

static void tw_clear(tw_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->word[i]);
    t->n = 0;
}

static void ring_reset(slda_track_t *track)
{
    for (uint32_t i = 0; i < track->o.windows; i++) {
        track->slots[i].win = INT64_MIN;
        track->slots[i].docs = 0;
        memset(track->slots[i].sum, 0, track->K * sizeof(double));
    }
    track->newest_win = INT64_MIN;
}

slda_track_t *slda_track_new(uint32_t K, const slda_track_opts_t *opts)
{
    slda_track_t *track = slda_xcalloc(1, sizeof *track);
    track->K = K;
    track->o = *opts;
    if (track->o.windows < 2)
        track->o.windows = 2;
    if (track->o.window_ms <= 0)
        track->o.window_ms = 3600 * 1000;
    if (track->o.trend_windows < 2)
        track->o.trend_windows = 2;
    track->slots = slda_xcalloc(track->o.windows, sizeof *track->slots);
    for (uint32_t i = 0; i < track->o.windows; i++)
        track->slots[i].sum = slda_xcalloc(K, sizeof(double));
    ring_reset(track);
    track->topics = slda_xcalloc(K, sizeof *track->topics);
    for (uint32_t k = 0; k < K; k++)
        track->topics[k].drift = -1;
    track->merged = slda_xcalloc(MERGED_MAX, sizeof *track->merged);
    return track;
}

void slda_track_destroy(slda_track_t *track)
{
    if (!track)
        return;
    for (uint32_t i = 0; i < track->o.windows; i++)
        free(track->slots[i].sum);
    free(track->slots);
    for (uint32_t k = 0; k < track->K; k++)
        tw_clear(&track->topics[k].words);
    free(track->topics);
    free(track->merged);
    free(track);
}

uint32_t slda_track_topics(const slda_track_t *track)
{
    return track->K;
}

/* ---- event time ---- */

int64_t slda_track_time(slda_track_t *track, int64_t ts_ms, int64_t now_ms, int *clamped)
{
    int64_t t = ts_ms > 0 ? ts_ms : now_ms;
    *clamped = 0;
    if (t > now_ms + SLDA_TRACK_FUTURE_MS) {
        /* to the newest time seen, not to the clock: one bad record in a
         * replay of old data must not push every window out of the ring */
        t = track->newest_ms ? track->newest_ms : now_ms;
        *clamped = 1;
        track->clamped++;
        return t;
    }
    if (t < track->newest_ms)
        track->late++;
    else
        track->newest_ms = t;
    return t;
}

int64_t slda_track_newest(const slda_track_t *track) { return track->newest_ms; }
void slda_track_set_newest(slda_track_t *track, int64_t ms) { track->newest_ms = ms; }
uint64_t slda_track_clamped(const slda_track_t *track) { return track->clamped; }
uint64_t slda_track_late(const slda_track_t *track) { return track->late; }
uint64_t slda_track_dropped(const slda_track_t *track) { return track->dropped; }
uint64_t slda_track_docs(const slda_track_t *track) { return track->docs; }

/* ---- prevalence ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static slot_t *slot_of(const slda_track_t *track, int64_t win)
{
    int64_t n = track->o.windows, i = win % n;
    return &track->slots[i < 0 ? i + n : i];
}

void slda_track_add(slda_track_t *track, int64_t ms, const float *theta)
{
    int64_t win = floor_div(ms, track->o.window_ms);
    if (track->newest_win != INT64_MIN && win <= track->newest_win - (int64_t)track->o.windows) {
        track->dropped++; /* older than the ring */
        return;
    }
    if (track->newest_win == INT64_MIN || win > track->newest_win)
        track->newest_win = win;
    slot_t *s = slot_of(track, win);
    if (s->win != win) { /* a recycled slot: the window it held left the ring */
        s->win = win;
        s->docs = 0;
        memset(s->sum, 0, track->K * sizeof(double));
    }
    double tot = 0;
    for (uint32_t k = 0; k < track->K; k++)
        tot += theta[k];
    if (!(tot > 0) || !isfinite(tot))
        return;
    for (uint32_t k = 0; k < track->K; k++)
        s->sum[k] += theta[k] / tot;
    s->docs += 1;
    track->docs++;
}

size_t slda_track_windows(const slda_track_t *track, int64_t *start, double *docs, double *share)
{
    size_t n = 0;
    if (track->newest_win == INT64_MIN)
        return 0;
    for (int64_t w = track->newest_win - track->o.windows + 1; w <= track->newest_win; w++) {
        const slot_t *s = slot_of(track, w);
        if (s->win != w || s->docs <= 0)
            continue;
        if (start)
            start[n] = w * track->o.window_ms;
        if (docs)
            docs[n] = s->docs;
        if (share)
            for (uint32_t k = 0; k < track->K; k++)
                share[n * track->K + k] = s->sum[k] / s->docs;
        n++;
    }
    return n;
}

/* The last m windows with documents, newest last: their window indexes into
 * win[] (m entries at most); returns how many. */
static size_t last_windows(const slda_track_t *track, size_t m, int64_t *win)
{
    size_t n = 0;
    if (track->newest_win == INT64_MIN)
        return 0;
    for (int64_t w = track->newest_win; w > track->newest_win - track->o.windows && n < m; w--) {
        const slot_t *s = slot_of(track, w);
        if (s->win == w && s->docs > 0)
            win[n++] = w;
    }
    for (size_t i = 0; i < n / 2; i++) { /* oldest first */
        int64_t x = win[i];
        win[i] = win[n - 1 - i];
        win[n - 1 - i] = x;
    }
    return n;
}

double slda_track_slope(const slda_track_t *track, uint32_t k)
{
    int64_t win[256];
    size_t m = track->o.trend_windows < 256 ? track->o.trend_windows : 256;
    size_t n = last_windows(track, m, win);
    if (n < m || k >= track->K) /* a line through fewer windows is mostly noise */
        return 0;
    /* least squares of share on the window index (gaps count as time), each
     * window weighted by its documents: the newest window, still filling,
     * counts for what it holds */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        const slot_t *s = slot_of(track, win[i]);
        double w = s->docs, x = (double)(win[i] - win[0]), y = s->sum[k] / s->docs;
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    double den = sw * sxx - sx * sx;
    return den > 0 ? (sw * sxy - sx * sy) / den : 0;
}

const char *slda_track_flag(const slda_track_t *track, uint32_t k)
{
    double s = slda_track_slope(track, k);
    if (s >= track->o.trend_slope)
        return "emerging";
    if (s <= -track->o.trend_slope)
        return "fading";
    return NULL;
}

/* ---- Jensen-Shannon distance ---- */

typedef struct hw_s {
    uint64_t h;
    double p;
} hw_t;

static int hw_cmp(const void *a, const void *b)
{
    uint64_t x = ((const hw_t *)a)->h, y = ((const hw_t *)b)->h;
    return x < y ? -1 : x > y;
}

/* Words hashed, probabilities renormalised, sorted by hash. */
static size_t hw_make(size_t n, const char *const *word, const float *prob, hw_t *out)
{
    double tot = 0;
    for (size_t i = 0; i < n; i++)
        tot += prob[i] > 0 ? prob[i] : 0;
    for (size_t i = 0; i < n; i++) {
        out[i].h = slda_hash64(word[i], strlen(word[i]), 0);
        out[i].p = tot > 0 && prob[i] > 0 ? prob[i] / tot : 0;
    }
    if (n > 1)
        qsort(out, n, sizeof *out, hw_cmp);
    return n;
}

static double plogp_m(double p, double m)
{
    return p > 0 ? p * log2(p / m) : 0;
}

static double js_sorted(const hw_t *a, size_t na, const hw_t *b, size_t nb)
{
    if (!na && !nb)
        return 0;
    if (!na || !nb)
        return 1;
    double d = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        double p = 0, q = 0;
        if (j == nb || (i < na && a[i].h < b[j].h))
            p = a[i++].p;
        else if (i == na || b[j].h < a[i].h)
            q = b[j++].p;
        else
            p = a[i++].p, q = b[j++].p;
        double m = 0.5 * (p + q);
        d += 0.5 * plogp_m(p, m) + 0.5 * plogp_m(q, m);
    }
    if (d < 0)
        d = 0;
    if (d > 1)
        d = 1;
    return sqrt(d);
}

double slda_track_js(const slda_track_words_t *a, const slda_track_words_t *b)
{
    hw_t ha[SLDA_TRACK_TOP], hb[SLDA_TRACK_TOP];
    size_t na = hw_make(a->n, a->word, a->prob, ha), nb = hw_make(b->n, b->word, b->prob, hb);
    return js_sorted(ha, na, hb, nb);
}

/* ---- events ---- */

void slda_track_set_event_cb(slda_track_t *track, slda_track_event_cb cb, void *opaque)
{
    track->cb = cb;
    track->cb_opaque = opaque;
}

static void join_words(char *dst, size_t size, size_t n, const char *const *word)
{
    size_t used = 0;
    dst[0] = '\0';
    for (size_t i = 0; i < n && i < SLDA_TRACK_SHOW; i++) {
        size_t len = strlen(word[i]);
        if (used + len + 2 > size)
            break;
        if (used)
            dst[used++] = ' ';
        memcpy(dst + used, word[i], len + 1);
        used += len;
    }
}

static slda_track_event_t *event_push(slda_track_t *track)
{
    size_t at;
    if (track->nev < SLDA_TRACK_EVENTS)
        at = (track->ev_first + track->nev++) % SLDA_TRACK_EVENTS;
    else {
        at = track->ev_first;
        track->ev_first = (track->ev_first + 1) % SLDA_TRACK_EVENTS;
    }
    slda_track_event_t *ev = &track->ev[at];
    memset(ev, 0, sizeof *ev);
    ev->other = UINT32_MAX;
    ev->event_ms = track->newest_ms;
    return ev;
}

static void emit(slda_track_t *track, const char *kind, uint32_t topic, uint32_t other,
                 double js, const slda_track_words_t *w, uint64_t update)
{
    slda_track_event_t *ev = event_push(track);
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    ev->topic = topic;
    ev->other = other;
    ev->js = js;
    ev->update = update;
    if (w)
        join_words(ev->words, sizeof ev->words, w->n, w->word);
    if (track->cb)
        track->cb(ev, track->cb_opaque);
}

void slda_track_engine_event(slda_track_t *track, const char *kind, uint32_t topic,
                             const char *words, uint64_t update)
{
    slda_track_event_t *ev = event_push(track);
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    ev->topic = topic;
    ev->update = update;
    ev->js = -1;
    snprintf(ev->words, sizeof ev->words, "%s", words ? words : "");
    if (track->cb)
        track->cb(ev, track->cb_opaque);
}

const slda_track_event_t *slda_track_events(const slda_track_t *track, size_t *n, size_t *first)
{
    *n = track->nev;
    *first = track->ev_first;
    return track->ev;
}

double slda_track_drift(const slda_track_t *track, uint32_t k)
{
    return k < track->K ? track->topics[k].drift : -1;
}

/* Words of the top SLDA_TRACK_SHOW of a that are not in b's, space separated. */
static size_t top_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
                       char *out, size_t size)
{
    size_t used = 0, n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < na && i < SLDA_TRACK_SHOW; i++) {
        int found = 0;
        for (size_t j = 0; j < nb && j < SLDA_TRACK_SHOW && !found; j++)
            found = !strcmp(a[i], b[j]);
        if (found)
            continue;
        n++;
        size_t len = strlen(a[i]);
        if (used + len + 2 > size)
            continue;
        if (used)
            out[used++] = ' ';
        memcpy(out + used, a[i], len + 1);
        used += len;
    }
    return n;
}

static int merged_has(const slda_track_t *track, uint32_t i, uint32_t j)
{
    for (size_t q = 0; q < track->nmerged; q++)
        if (track->merged[q][0] == i && track->merged[q][1] == j)
            return 1;
    return 0;
}

/* Deaths: the last death.windows windows with documents all below the floor. */
static void check_deaths(slda_track_t *track, const slda_track_words_t *words, int events,
                         uint64_t update)
{
    int64_t win[256];
    size_t m = track->o.death_windows < 256 ? track->o.death_windows : 256;
    size_t n = last_windows(track, m, win);
    if (!m || n < m)
        return;
    for (uint32_t k = 0; k < track->K; k++) {
        int low = 1;
        for (size_t i = 0; i < n && low; i++) {
            const slot_t *s = slot_of(track, win[i]);
            low = s->sum[k] / s->docs < track->o.death_floor;
        }
        if (low && !track->topics[k].dead) {
            track->topics[k].dead = 1;
            if (events)
                emit(track, "death", k, UINT32_MAX, -1, &words[k], update);
        } else if (!low)
            track->topics[k].dead = 0;
    }
}

static void check_merges(slda_track_t *track, const slda_track_words_t *words, int events,
                         uint64_t update)
{
    uint32_t K = track->K;
    hw_t *hw = slda_xmalloc((size_t)K * SLDA_TRACK_TOP * sizeof *hw);
    size_t *n = slda_xmalloc(K * sizeof *n);
    for (uint32_t k = 0; k < K; k++)
        n[k] = hw_make(words[k].n, words[k].word, words[k].prob, hw + (size_t)k * SLDA_TRACK_TOP);
    uint32_t (*now)[2] = slda_xmalloc(MERGED_MAX * sizeof *now);
    size_t nnow = 0;
    for (uint32_t i = 0; i < K; i++)
        for (uint32_t j = i + 1; j < K; j++) {
            if (!n[i] || !n[j])
                continue;
            double d = js_sorted(hw + (size_t)i * SLDA_TRACK_TOP, n[i],
                                 hw + (size_t)j * SLDA_TRACK_TOP, n[j]);
            if (d >= track->o.merge_js || nnow == MERGED_MAX)
                continue;
            if (events && !merged_has(track, i, j))
                emit(track, "merge", i, j, d, &words[i], update);
            now[nnow][0] = i;
            now[nnow++][1] = j;
        }
    memcpy(track->merged, now, nnow * sizeof *now);
    track->nmerged = nnow;
    free(now);
    free(hw);
    free(n);
}

void slda_track_compare(slda_track_t *track, const slda_track_words_t *words,
                        const double *mass, uint64_t docs, uint64_t update)
{
    /* drift from a warm-up model to a settled one is the model learning, not
     * the stream moving: events need both comparisons past the warm-up */
    int events = track->compared && track->compared_docs >= track->o.warmup_docs;
    for (uint32_t k = 0; k < track->K; k++) {
        topic_t *t = &track->topics[k];
        const slda_track_words_t *w = &words[k];
        if (track->compared) {
            slda_track_words_t prev;
            prev.n = t->words.n;
            for (size_t i = 0; i < prev.n; i++) {
                prev.word[i] = t->words.word[i];
                prev.prob[i] = t->words.prob[i];
            }
            double js = slda_track_js(&prev, w);
            top_diff(w->word, w->n, prev.word, prev.n, t->entered, sizeof t->entered);
            size_t gone = top_diff(prev.word, prev.n, w->word, w->n, t->left, sizeof t->left);
            size_t shown = prev.n < SLDA_TRACK_SHOW ? prev.n : SLDA_TRACK_SHOW;
            size_t kept = shown - gone;
            t->drift = js;
            if (events && kept <= track->o.birth_keep && js >= track->o.birth_js)
                emit(track, "birth", k, UINT32_MAX, js, w, update);
            else if (events && js >= track->o.change_js)
                emit(track, "change", k, UINT32_MAX, js, w, update);
        }
        tw_clear(&t->words);
        for (size_t i = 0; i < w->n && i < SLDA_TRACK_TOP; i++) {
            t->words.word[i] = slda_xstrdup(w->word[i]);
            t->words.prob[i] = w->prob[i];
        }
        t->words.n = w->n < SLDA_TRACK_TOP ? w->n : SLDA_TRACK_TOP;
        t->mass = mass ? mass[k] : 0;
    }
    check_deaths(track, words, docs >= track->o.warmup_docs, update);
    check_merges(track, words, events, update);
    track->compared = 1;
    track->compared_docs = docs;
}

void slda_track_model_words(const slda_model_t *model, slda_track_words_t *words, double *mass)
{
    uint32_t K = slda_model_topics(model);
    uint32_t *ids = slda_xmalloc((size_t)K * SLDA_TRACK_TOP * sizeof *ids);
    float *probs = slda_xmalloc((size_t)K * SLDA_TRACK_TOP * sizeof *probs);
    size_t have[SLDA_MAX_TOPICS];
    slda_model_top_words_all(model, SLDA_TRACK_TOP, ids, probs, have); /* one pass, all topics */
    for (uint32_t k = 0; k < K; k++) {
        size_t m = 0;
        for (size_t i = 0; i < have[k]; i++) {
            const char *w = slda_model_word(model, ids[k * SLDA_TRACK_TOP + i]);
            if (!w)
                continue;
            words[k].word[m] = w;
            words[k].prob[m++] = probs[k * SLDA_TRACK_TOP + i];
        }
        words[k].n = m;
    }
    free(ids);
    free(probs);
    if (mass) {
        double tot = 0;
        slda_model_topic_totals(model, mass);
        for (uint32_t k = 0; k < K; k++)
            tot += mass[k];
        for (uint32_t k = 0; k < K; k++)
            mass[k] = tot > 0 ? mass[k] / tot : 0;
    }
}

/* ---- JSON ---- */

static void write_words_str(FILE *f, const char *s)
{
    /* a space separated list as a JSON array of strings */
    fputc('[', f);
    int first = 1;
    while (*s) {
        size_t len = strcspn(s, " ");
        if (len) {
            char buf[200];
            snprintf(buf, sizeof buf, "%.*s", (int)len, s);
            if (!first)
                fputc(',', f);
            slda_json_write_string(f, buf);
            first = 0;
        }
        s += len;
        while (*s == ' ')
            s++;
    }
    fputc(']', f);
}

static void write_event(FILE *f, const slda_track_event_t *ev)
{
    char iso[40];
    slda_time_format(ev->event_ms, iso, sizeof iso);
    fprintf(f, "{\"kind\":");
    slda_json_write_string(f, ev->kind);
    fprintf(f, ",\"topic\":%u", ev->topic);
    if (ev->other != UINT32_MAX)
        fprintf(f, ",\"other\":%u", ev->other);
    fprintf(f, ",\"event_ms\":%lld,\"event_time\":\"%s\",\"update\":%llu",
            (long long)ev->event_ms, iso, (unsigned long long)ev->update);
    if (ev->js >= 0)
        fprintf(f, ",\"js\":%.4f", ev->js);
    fprintf(f, ",\"words\":");
    write_words_str(f, ev->words);
    fputc('}', f);
}

void slda_track_write_json(const slda_track_t *track, FILE *f, const char *model_name,
                           uint64_t update)
{
    fprintf(f, "{\"format\":1,\"model\":");
    slda_json_write_string(f, model_name ? model_name : "");
    fprintf(f,
            ",\"update\":%llu,\"K\":%u,\"window_ms\":%lld,\"windows\":%u,\"newest_ms\":%lld,"
            "\"clamped\":%llu,\"late\":%llu,\"dropped\":%llu,\"docs\":%llu,\"compared\":%s,"
            "\"compared_docs\":%llu",
            (unsigned long long)update, track->K, (long long)track->o.window_ms, track->o.windows,
            (long long)track->newest_ms, (unsigned long long)track->clamped,
            (unsigned long long)track->late, (unsigned long long)track->dropped,
            (unsigned long long)track->docs, track->compared ? "true" : "false",
            (unsigned long long)track->compared_docs);
    fprintf(f, ",\n\"prevalence\":[");
    int first = 1;
    if (track->newest_win != INT64_MIN)
        for (int64_t w = track->newest_win - track->o.windows + 1; w <= track->newest_win; w++) {
            const slot_t *s = slot_of(track, w);
            if (s->win != w || s->docs <= 0)
                continue;
            fprintf(f, "%s\n[%lld,%.17g,[", first ? "" : ",", (long long)(w * track->o.window_ms),
                    s->docs);
            for (uint32_t k = 0; k < track->K; k++)
                fprintf(f, "%s%.9g", k ? "," : "", s->sum[k]);
            fprintf(f, "]]");
            first = 0;
        }
    fprintf(f, "],\n\"topics\":[");
    for (uint32_t k = 0; k < track->K; k++) {
        const topic_t *t = &track->topics[k];
        fprintf(f, "%s\n{\"id\":%u,\"mass\":%.9g,\"drift\":%.6g,\"dead\":%s,\"words\":[",
                k ? "," : "", k, t->mass, t->drift, t->dead ? "true" : "false");
        for (size_t i = 0; i < t->words.n; i++) {
            fprintf(f, "%s[", i ? "," : "");
            slda_json_write_string(f, t->words.word[i]);
            fprintf(f, ",%.9g]", (double)t->words.prob[i]);
        }
        fprintf(f, "],\"entered\":");
        write_words_str(f, t->entered);
        fprintf(f, ",\"left\":");
        write_words_str(f, t->left);
        fputc('}', f);
    }
    fprintf(f, "],\n\"merged\":[");
    for (size_t q = 0; q < track->nmerged; q++)
        fprintf(f, "%s[%u,%u]", q ? "," : "", track->merged[q][0], track->merged[q][1]);
    fprintf(f, "],\n\"events\":[");
    for (size_t i = 0; i < track->nev; i++) {
        if (i)
            fputc(',', f);
        fputc('\n', f);
        write_event(f, &track->ev[(track->ev_first + i) % SLDA_TRACK_EVENTS]);
    }
    fprintf(f, "]}\n");
}

/* ---- reading the sidecar ---- */

typedef struct jr_s {
    slda_json_t js;
    char *err;
    size_t errsize;
    slda_err_t code;
} jr_t;

static int jr_fail(jr_t *r, slda_err_t code, const char *fmt, const char *what)
{
    if (r->code == SLDA_OK) {
        r->code = code;
        snprintf(r->err, r->errsize, fmt, what);
    }
    return -1;
}

static int jr_num(jr_t *r, uint32_t node, const char *what, double *v)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_NUMBER)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not a number", what);
    char buf[64];
    size_t len = r->js.nodes[node].end - r->js.nodes[node].start;
    if (len >= sizeof buf)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": number too long", what);
    memcpy(buf, r->js.src + r->js.nodes[node].start, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtod(buf, NULL);
    if (!isfinite(*v))
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not finite", what);
    return 0;
}

static int jr_field(jr_t *r, uint32_t obj, const char *key, double *v)
{
    return jr_num(r, slda_json_object_get(&r->js, obj, key), key, v);
}

static char *jr_str(jr_t *r, uint32_t node, const char *what)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_STRING) {
        jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not a string", what);
        return NULL;
    }
    char *s = slda_xmalloc(slda_json_raw_len(&r->js, node) + 1);
    slda_json_string(&r->js, node, s);
    return s;
}

static int jr_array(jr_t *r, uint32_t node, const char *what)
{
    if (node == SLDA_JSON_NONE || r->js.nodes[node].type != SLDA_JSON_ARRAY)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": missing or not an array", what);
    return 0;
}

/* A JSON array of strings into a space separated string. */
static int jr_words(jr_t *r, uint32_t node, const char *what, char *out, size_t size)
{
    out[0] = '\0';
    if (jr_array(r, node, what))
        return -1;
    size_t used = 0;
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0; e_i < r->js.nodes[node].size; e_i++, e = r->js.nodes[e].next) {
        char *s = jr_str(r, e, what);
        if (!s)
            return -1;
        size_t len = strlen(s);
        if (used + len + 2 <= size) {
            if (used)
                out[used++] = ' ';
            memcpy(out + used, s, len + 1);
            used += len;
        }
        free(s);
    }
    return 0;
}

static int read_prevalence(jr_t *r, slda_track_t *t, uint32_t node)
{
    if (jr_array(r, node, "prevalence"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, node), e_i = 0; e_i < r->js.nodes[node].size; e_i++, e = r->js.nodes[e].next) {
        if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 3)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [start, docs, sums]",
                           "prevalence");
        uint32_t a = slda_json_first(&r->js, e), b = r->js.nodes[a].next,
                 c = r->js.nodes[b].next;
        double start, docs;
        if (jr_num(r, a, "prevalence start", &start) || jr_num(r, b, "prevalence docs", &docs))
            return -1;
        if (jr_array(r, c, "prevalence sums") || r->js.nodes[c].size != t->K)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not K sums", "prevalence");
        if (docs < 0 || fmod(start, (double)t->o.window_ms) != 0)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad window start or count",
                           "prevalence");
        int64_t win = (int64_t)start / t->o.window_ms;
        if (t->newest_win != INT64_MIN && win <= t->newest_win - (int64_t)t->o.windows)
            continue;
        if (t->newest_win == INT64_MIN || win > t->newest_win)
            t->newest_win = win;
        slot_t *s = slot_of(t, win);
        s->win = win;
        s->docs = docs;
        uint32_t k = 0;
        for (uint32_t x = slda_json_first(&r->js, c), x_i = 0; x_i < r->js.nodes[c].size && k < t->K; x_i++, x = r->js.nodes[x].next, k++)
            if (jr_num(r, x, "prevalence sum", &s->sum[k]) || s->sum[k] < 0)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": bad sum", "prevalence");
    }
    return 0;
}

static int read_topic(jr_t *r, slda_track_t *t, uint32_t node, uint32_t k)
{
    topic_t *tp = &t->topics[k];
    double id, mass, drift;
    if (r->js.nodes[node].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not an object", "topics");
    if (jr_field(r, node, "id", &id) || jr_field(r, node, "mass", &mass) ||
        jr_field(r, node, "drift", &drift))
        return -1;
    if (id != k)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": ids out of order", "topics");
    tp->mass = mass;
    tp->drift = drift;
    uint32_t dead = slda_json_object_get(&r->js, node, "dead");
    tp->dead = dead != SLDA_JSON_NONE && r->js.nodes[dead].type == SLDA_JSON_TRUE;
    uint32_t words = slda_json_object_get(&r->js, node, "words");
    if (jr_array(r, words, "words"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, words), e_i = 0; e_i < r->js.nodes[words].size; e_i++, e = r->js.nodes[e].next) {
        if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 2)
            return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [word, p]", "words");
        if (tp->words.n == SLDA_TRACK_TOP)
            break;
        uint32_t a = slda_json_first(&r->js, e);
        double p;
        if (jr_num(r, r->js.nodes[a].next, "word probability", &p))
            return -1;
        char *w = jr_str(r, a, "word");
        if (!w)
            return -1;
        tp->words.word[tp->words.n] = w;
        tp->words.prob[tp->words.n++] = (float)p;
    }
    if (jr_words(r, slda_json_object_get(&r->js, node, "entered"), "entered", tp->entered,
                 sizeof tp->entered) ||
        jr_words(r, slda_json_object_get(&r->js, node, "left"), "left", tp->left,
                 sizeof tp->left))
        return -1;
    return 0;
}

static int read_event(jr_t *r, slda_track_t *t, uint32_t node)
{
    if (r->js.nodes[node].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not an object", "events");
    double topic, ms, update, other = -1, js = -1;
    if (jr_field(r, node, "topic", &topic) || jr_field(r, node, "event_ms", &ms) ||
        jr_field(r, node, "update", &update))
        return -1;
    if (slda_json_object_get(&r->js, node, "other") != SLDA_JSON_NONE &&
        jr_field(r, node, "other", &other))
        return -1;
    if (slda_json_object_get(&r->js, node, "js") != SLDA_JSON_NONE &&
        jr_field(r, node, "js", &js))
        return -1;
    if (topic < 0 || topic >= t->K || other >= t->K)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": topic out of range", "events");
    char *kind = jr_str(r, slda_json_object_get(&r->js, node, "kind"), "kind");
    if (!kind)
        return -1;
    slda_track_event_t *ev = event_push(t);
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    free(kind);
    ev->topic = (uint32_t)topic;
    ev->other = other < 0 ? UINT32_MAX : (uint32_t)other;
    ev->event_ms = (int64_t)ms;
    ev->update = (uint64_t)update;
    ev->js = js;
    return jr_words(r, slda_json_object_get(&r->js, node, "words"), "words", ev->words,
                    sizeof ev->words);
}

static int read_state(jr_t *r, slda_track_t *t)
{
    double fmt, K, wms, windows, newest, clamped, late, dropped, docs;
    if (r->js.nodes[0].type != SLDA_JSON_OBJECT)
        return jr_fail(r, SLDA_ERR_CORRUPT, "%s: not a JSON object", "tracking state");
    if (jr_field(r, 0, "format", &fmt) || jr_field(r, 0, "K", &K) ||
        jr_field(r, 0, "window_ms", &wms) || jr_field(r, 0, "windows", &windows) ||
        jr_field(r, 0, "newest_ms", &newest) || jr_field(r, 0, "clamped", &clamped) ||
        jr_field(r, 0, "late", &late) || jr_field(r, 0, "dropped", &dropped) ||
        jr_field(r, 0, "docs", &docs))
        return -1;
    if (fmt != 1)
        return jr_fail(r, SLDA_ERR_VERSION, "field \"%s\": not 1", "format");
    if (K != t->K) {
        snprintf(r->err, r->errsize, "tracking state is for K=%.0f, the model has K=%u", K, t->K);
        r->code = SLDA_ERR_INVALID;
        return -1;
    }
    int same_window = wms == (double)t->o.window_ms;
    t->newest_ms = (int64_t)newest;
    t->clamped = (uint64_t)clamped;
    t->late = (uint64_t)late;
    t->dropped = (uint64_t)dropped;
    t->docs = (uint64_t)docs;
    uint32_t c = slda_json_object_get(&r->js, 0, "compared");
    t->compared = c != SLDA_JSON_NONE && r->js.nodes[c].type == SLDA_JSON_TRUE;
    double cd = 0;
    if (slda_json_object_get(&r->js, 0, "compared_docs") != SLDA_JSON_NONE &&
        jr_field(r, 0, "compared_docs", &cd))
        return -1;
    t->compared_docs = (uint64_t)cd;
    /* another track.window: the windows cannot be re-binned; start them again */
    if (same_window && read_prevalence(r, t, slda_json_object_get(&r->js, 0, "prevalence")))
        return -1;
    uint32_t topics = slda_json_object_get(&r->js, 0, "topics");
    if (jr_array(r, topics, "topics"))
        return -1;
    if (r->js.nodes[topics].size != t->K)
        return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": not K entries", "topics");
    uint32_t k = 0;
    for (uint32_t e = slda_json_first(&r->js, topics), e_i = 0; e_i < r->js.nodes[topics].size; e_i++, e = r->js.nodes[e].next, k++)
        if (read_topic(r, t, e, k))
            return -1;
    uint32_t merged = slda_json_object_get(&r->js, 0, "merged");
    if (merged != SLDA_JSON_NONE && !jr_array(r, merged, "merged"))
        for (uint32_t e = slda_json_first(&r->js, merged), e_i = 0; e_i < r->js.nodes[merged].size && t->nmerged < MERGED_MAX; e_i++, e = r->js.nodes[e].next) {
            double a, b;
            if (r->js.nodes[e].type != SLDA_JSON_ARRAY || r->js.nodes[e].size != 2)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": entry is not [i, j]", "merged");
            uint32_t x = slda_json_first(&r->js, e);
            if (jr_num(r, x, "merged", &a) || jr_num(r, r->js.nodes[x].next, "merged", &b))
                return -1;
            if (a < 0 || b < 0 || a >= t->K || b >= t->K)
                return jr_fail(r, SLDA_ERR_CORRUPT, "field \"%s\": topic out of range", "merged");
            t->merged[t->nmerged][0] = (uint32_t)a;
            t->merged[t->nmerged++][1] = (uint32_t)b;
        }
    uint32_t events = slda_json_object_get(&r->js, 0, "events");
    if (jr_array(r, events, "events"))
        return -1;
    for (uint32_t e = slda_json_first(&r->js, events), e_i = 0; e_i < r->js.nodes[events].size; e_i++, e = r->js.nodes[e].next)
        if (read_event(r, t, e))
            return -1;
    return 0;
}

slda_err_t slda_track_read_json(slda_track_t *track, const char *text, size_t len, char *errstr,
                                size_t errstr_size)
{
    jr_t r;
    char err[300] = "";
    memset(&r, 0, sizeof r);
    r.err = err;
    r.errsize = sizeof err;
    slda_json_init(&r.js);
    slda_err_t e = slda_json_parse(&r.js, text, len, err, sizeof err);
    if (e) {
        slda_json_clear(&r.js);
        return slda_set_err(errstr, errstr_size, e, "%s", err);
    }
    /* read into a fresh tracker, then move it in: a failure leaves track as it was */
    slda_track_t *t = slda_track_new(track->K, &track->o);
    int bad = read_state(&r, t);
    slda_json_clear(&r.js);
    if (bad) {
        slda_track_destroy(t);
        return slda_set_err(errstr, errstr_size, r.code ? r.code : SLDA_ERR_CORRUPT, "%s", err);
    }
    t->cb = track->cb;
    t->cb_opaque = track->cb_opaque;
    slda_track_t tmp = *track;
    *track = *t;
    *t = tmp;
    slda_track_destroy(t);
    return SLDA_OK;
}

slda_err_t slda_track_save(const slda_track_t *track, const char *path, const char *model_name,
                           uint64_t update, char *errstr, size_t errstr_size)
{
    slda_outfile_t out;
    slda_err_t e = slda_outfile_open(&out, "tracking state", path, errstr, errstr_size);
    if (e)
        return e;
    slda_track_write_json(track, out.fp, model_name, update);
    if (ferror(out.fp)) {
        int en = errno;
        slda_outfile_abort(&out);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": %s", path,
                            strerror(en ? en : EIO));
    }
    return slda_outfile_commit(&out, errstr, errstr_size);
}

slda_err_t slda_track_load(slda_track_t *track, const char *path, char *errstr,
                           size_t errstr_size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": %s", path,
                            strerror(errno));
    size_t len;
    char *buf = slda_read_all(f, &len);
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(buf);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "tracking state \"%s\": read error",
                            path);
    }
    char err[400];
    slda_err_t e = slda_track_read_json(track, buf ? buf : "", len, err, sizeof err);
    free(buf);
    if (e)
        return slda_set_err(errstr, errstr_size, e, "tracking state \"%s\": %s", path, err);
    return SLDA_OK;
}

/* ---- page JSON ---- */

char *slda_track_json_topics(const slda_track_t *track, const slda_track_words_t *words,
                             const double *mass, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "{\"K\":%u,\"topics\":[", track->K);
    for (uint32_t k = 0; k < track->K; k++) {
        const topic_t *t = &track->topics[k];
        fprintf(f, "%s{\"id\":%u,\"weight\":%.6g,\"words\":[", k ? "," : "", k, mass[k]);
        for (size_t i = 0; i < words[k].n && i < SLDA_TRACK_SHOW; i++) {
            fprintf(f, "%s[", i ? "," : "");
            slda_json_write_string(f, words[k].word[i]);
            fprintf(f, ",%.5g]", (double)words[k].prob[i]);
        }
        const char *flag = slda_track_flag(track, k);
        fprintf(f, "],\"drift\":");
        if (t->drift >= 0)
            fprintf(f, "%.4f", t->drift);
        else
            fprintf(f, "null");
        fprintf(f, ",\"trend\":%.5g,\"flag\":%s%s%s,\"dead\":%s,\"entered\":",
                slda_track_slope(track, k), flag ? "\"" : "", flag ? flag : "null",
                flag ? "\"" : "", t->dead ? "true" : "false");
        write_words_str(f, t->entered);
        fprintf(f, ",\"left\":");
        write_words_str(f, t->left);
        fputc('}', f);
    }
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

char *slda_track_json_prevalence(const slda_track_t *track, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "{\"K\":%u,\"window_ms\":%lld,\"newest_ms\":%lld,\"windows\":[", track->K,
            (long long)track->o.window_ms, (long long)track->newest_ms);
    int first = 1;
    if (track->newest_win != INT64_MIN)
        for (int64_t w = track->newest_win - track->o.windows + 1; w <= track->newest_win; w++) {
            const slot_t *s = slot_of(track, w);
            if (s->win != w || s->docs <= 0)
                continue;
            fprintf(f, "%s{\"start\":%lld,\"docs\":%.0f,\"share\":[", first ? "" : ",",
                    (long long)(w * track->o.window_ms), s->docs);
            for (uint32_t k = 0; k < track->K; k++)
                fprintf(f, "%s%.4g", k ? "," : "", s->sum[k] / s->docs);
            fprintf(f, "]}");
            first = 0;
        }
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

char *slda_track_json_events(const slda_track_t *track, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "{\"events\":[");
    for (size_t i = 0; i < track->nev; i++) {
        if (i)
            fputc(',', f);
        write_event(f, &track->ev[(track->ev_first + i) % SLDA_TRACK_EVENTS]);
    }
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}
