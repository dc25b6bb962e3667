/* track.c - topic tracking: event time, prevalence windows, drift, events.
 *
 * A topic's id is its slot in the model (0..K-1), which snapshots and
 * restarts keep; the tracker follows each slot over event time.
 *  - Prevalence: every trained document's mixture theta is added to the
 *    window of its event time at several resolutions at once (prev.c: the
 *    finest is track.window x track.windows, then hours, days, weeks, the last
 *    doubling its windows so that nothing is dropped); a window's share of
 *    topic k is the mean theta_k of its documents, under the current model once
 *    its sample was scored again (sample.c).
 *  - Drift: at each snapshot each topic's top SLDA_TRACK_TOP words (with
 *    probabilities) are compared with those kept from the previous snapshot:
 *    Jensen-Shannon distance of the two lists renormalised to sum 1, and the
 *    words that entered or left the top SLDA_TRACK_SHOW.
 *  - Events: birth (slot taken over), change, merge, death; plus the engine's
 *    own (slda_track_engine_event). docs/tracking.md has the rules.
 * Owned by the service thread; not thread-safe.
 */
#include "track/track_priv.h"

#include "track/changes.h"

#include "core/json.h"
#include "track/sample.h"
#include "text/vocab.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


void slda_track_opts_default(slda_track_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->window_ms = 60 * 1000;
    o->windows = 240;
    o->sample_docs = 32;
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

slda_err_t slda_track_group_check(const slda_conf_t *conf, slda_model_kind_t kind, int keyed,
                                  char *errstr, size_t errstr_size)
{
    const char *g = conf->input_group_field;
    if (!g || g[0] != '@' || !strcmp(g, "@lang"))
        return SLDA_OK;
    if (!strcmp(g, "@author"))
        return kind == SLDA_KIND_ATM
                   ? SLDA_OK
                   : slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                  "input.group.field=@author groups by the authors an "
                                  "author-topic model reads (model.kind=atm); with "
                                  "model.kind=%s name the authors' field itself (e.g. "
                                  "input.group.field=author)", slda_kind_name(kind));
    if (!strcmp(g, "@key"))
        return keyed ? SLDA_OK
                     : slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                    "input.group.field=@key groups by the Kafka message's key, "
                                    "and train's files have none: name a field");
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "input.group.field=\"%s\": a field's name, or @lang, @author, @key", g);
}

void slda_track_opts_from_conf(slda_track_opts_t *o, const slda_conf_t *c)
{
    static const int64_t window_ms[] = {60 * 1000, 3600 * 1000, 24 * 3600 * 1000,
                                        7 * 24 * 3600 * 1000LL};
    slda_track_opts_default(o);
    o->window_ms = window_ms[c->track_window >= 0 && c->track_window < 4 ? c->track_window : 1];
    o->windows = c->track_windows;
    o->sample_docs = c->track_sample_docs;
    o->warmup_docs = c->track_warmup_docs;
    o->change_js = c->track_change_js;
    o->birth_js = c->track_birth_js;
    o->birth_keep = c->track_birth_keep;
    o->merge_js = c->track_merge_js;
    o->death_floor = c->track_death_floor;
    o->death_windows = c->track_death_windows;
    o->trend_windows = c->track_trend_windows;
    o->trend_slope = c->track_trend_slope;
    o->examples = c->track_examples;
    o->group_capacity = c->track_group_capacity;
    o->subject_docs = c->track_subject_docs;
    o->subject_words = c->track_subject_words;
    o->group_source = c->input_group_field && *c->input_group_field ? c->input_group_field
                      : c->p.kind == SLDA_KIND_ATM                    ? "@author"
                                                                       : NULL;
}

static void tw_clear(tw_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->word[i]);
    t->n = 0;
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
    slda_prev_tier_t tiers[SLDA_PREV_TIERS];
    size_t nt = slda_prev_default_tiers(track->o.window_ms, track->o.windows, tiers);
    track->prev = slda_prev_new(K, tiers, nt, track->o.sample_docs);
    track->topics = slda_xcalloc(K, sizeof *track->topics);
    for (uint32_t k = 0; k < K; k++)
        track->topics[k].drift = -1;
    track->merged = slda_xcalloc(MERGED_MAX, sizeof *track->merged);
    track->chg_ms = slda_xmalloc(2 * (size_t)(K ? K : 1) * sizeof *track->chg_ms);
    for (size_t i = 0; i < 2 * (size_t)K; i++)
        track->chg_ms[i] = INT64_MIN;
    slda_track_examples_init(track);
    if (track->o.group_source && track->o.group_capacity) {
        track->group_src = slda_xstrdup(track->o.group_source);
        track->o.group_source = track->group_src;
        track->groups = slda_groups_new(K, track->o.group_capacity, track->group_src);
    }
    track->subjects = slda_subjects_new(track->o.subject_docs, track->o.subject_words);
    return track;
}

void slda_track_destroy(slda_track_t *track)
{
    if (!track)
        return;
    slda_prev_destroy(track->prev);
    for (uint32_t k = 0; k < track->K; k++)
        tw_clear(&track->topics[k].words);
    free(track->topics);
    free(track->merged);
    free(track->chg_ms);
    slda_track_examples_free(track);
    slda_groups_destroy(track->groups);
    free(track->group_src);
    slda_subjects_destroy(track->subjects);
    free(track->subject_keys);
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

/* The document's groups by the groups' source: its language, its authors, or its group. */
static void add_groups(slda_track_t *track, int64_t ms, const float *theta, const slda_doc_t *doc)
{
    const char *src = track->group_src;
    const char *one = !strcmp(src, "@lang") ? (doc->lang[0] ? doc->lang : NULL) : doc->group;
    if (!strcmp(src, "@author")) {
        slda_groups_add(track->groups, ms, theta, (const char *const *)doc->author, doc->nauthor);
    } else if (one && strchr(one, '\n')) { /* tags (a JSON array, io/record.h): a share in each */
        char *copy = slda_xstrdup(one);
        uint32_t n = 1;
        for (const char *p = one; (p = strchr(p, '\n')); p++)
            n++;
        const char **names = slda_xmalloc(n * sizeof *names);
        n = 0;
        for (char *p = copy, *nl; p; p = nl ? nl + 1 : NULL) {
            if ((nl = strchr(p, '\n')))
                *nl = '\0';
            names[n++] = p;
        }
        slda_groups_add(track->groups, ms, theta, names, n);
        free(names);
        free(copy);
    } else {
        slda_groups_add(track->groups, ms, theta, &one, one ? 1 : 0);
    }
}

const slda_groups_t *slda_track_groups(const slda_track_t *track)
{
    return track->groups;
}

char *slda_track_json_groups(const slda_track_t *track, size_t *len)
{
    if (!track->groups)
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    slda_groups_write_json(track->groups, f, 0);
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

void slda_track_add(slda_track_t *track, int64_t ms, const float *theta)
{
    slda_track_add_doc(track, ms, theta, NULL, NULL);
}

static void join_words(char *dst, size_t size, size_t n, const char *const *word);

/* A new subject found by the words (subject.c): an event "subject" on the topic that holds
 * most of its documents, dated where they start to come, naming its words. */
static void emit_subject(slda_track_t *track, const slda_subject_t *sj, const slda_model_t *model)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    const char *word[SLDA_SUBJECT_WORDS];
    size_t n = 0;
    for (uint32_t i = 0; i < sj->nwords; i++) {
        uint32_t id = slda_vocab_find_key(vocab, sj->key[i]);
        const char *w = id != UINT32_MAX ? slda_vocab_word(vocab, id) : NULL;
        if (w)
            word[n++] = w;
    }
    slda_track_event_t *ev = slda_track_event_push(track);
    snprintf(ev->kind, sizeof ev->kind, "subject");
    ev->topic = sj->topic < track->K ? sj->topic : 0;
    ev->update = slda_model_updates(model);
    ev->event_ms = sj->first_ms;
    join_words(ev->words, sizeof ev->words, n, word);
    if (track->cb)
        track->cb(ev, track->cb_opaque);
}

static void add_subjects(slda_track_t *track, int64_t ms, const float *theta,
                         const slda_model_t *model, const slda_doc_t *doc)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    if (doc->npairs > track->subject_cap) {
        track->subject_cap = doc->npairs * 2;
        track->subject_keys = slda_xrealloc(track->subject_keys,
                                            track->subject_cap * sizeof *track->subject_keys);
    }
    uint32_t n = 0, top = 0;
    for (uint32_t i = 0; i < doc->npairs; i++)
        track->subject_keys[n++] = slda_vocab_key(vocab, doc->word[i]);
    for (uint32_t k = 1; k < track->K; k++)
        if (theta[k] > theta[top])
            top = k;
    size_t found = slda_subjects_add(track->subjects, track->subject_keys, n, top, ms);
    if (found) {
        size_t nf;
        const slda_subject_t *sj = slda_subjects_found(track->subjects, &nf);
        for (size_t i = 0; i < nf; i++)
            emit_subject(track, &sj[i], model);
    }
}

uint64_t slda_track_subject_skipped(const slda_track_t *track)
{
    return slda_subjects_skipped(track->subjects);
}

void slda_track_add_doc(slda_track_t *track, int64_t ms, const float *theta,
                        const slda_model_t *model, const slda_doc_t *doc)
{
    if (slda_prev_add(track->prev, ms, theta, model, doc) == 0) {
        track->docs++;
        for (uint32_t k = 0; k < track->K; k++) /* (a mixture: slda_prev_add checked it) */
            if (theta[k] >= SLDA_EXAMPLE_MIN && track->topics[k].about < UINT32_MAX)
                track->topics[k].about++;
        if (doc)
            slda_track_examples_offer(track, ms, theta, model, doc);
        if (doc && track->groups)
            add_groups(track, ms, theta, doc);
        if (doc && model && track->subjects)
            add_subjects(track, ms, theta, model, doc);
    } else {
        track->dropped++; /* not a mixture: nothing to add */
    }
}

uint64_t slda_track_beyond(const slda_track_t *track)
{
    return track->prev->tier[0].beyond;
}

size_t slda_track_tiers(const slda_track_t *track)
{
    return track->prev->ntiers;
}

size_t slda_track_tier_windows(const slda_track_t *track, size_t tier, int64_t *start,
                               double *docs, double *share)
{
    const slda_prev_t *p = track->prev;
    if (tier >= p->ntiers)
        return 0;
    size_t n = slda_prev_list(p, tier, NULL, 0);
    const slda_pwin_t **w = slda_xmalloc((n ? n : 1) * sizeof *w);
    slda_prev_list(p, tier, w, n);
    int64_t width = slda_prev_width(p, tier);
    for (size_t i = 0; i < n; i++) {
        if (start)
            start[i] = w[i]->win * width;
        if (docs)
            docs[i] = w[i]->docs;
        if (share)
            for (uint32_t k = 0; k < track->K; k++)
                share[i * track->K + k] = slda_prev_share(p, w[i], k);
    }
    free(w);
    return n;
}

size_t slda_track_windows(const slda_track_t *track, int64_t *start, double *docs, double *share)
{
    return slda_track_tier_windows(track, 0, start, docs, share);
}

int64_t slda_track_tier_width(const slda_track_t *track, size_t tier)
{
    return tier < track->prev->ntiers ? slda_prev_width(track->prev, tier) : 0;
}

size_t slda_track_pick(const slda_track_t *track, size_t max_points)
{
    return slda_prev_pick(track->prev, max_points);
}

size_t slda_track_rescore(slda_track_t *track, const slda_model_t *model, double deadline)
{
    size_t n = 0;
    if (track->o.sample_docs)
        n = slda_prev_rescore(track->prev, model, slda_model_updates(model),
                              slda_prev_pick(track->prev, SLDA_TRACK_POINTS), deadline);
    if (!deadline || slda_mono_s() < deadline) /* the representative documents, in the rest */
        slda_track_examples_rescore(track, model, deadline);
    return n;
}

/* The last m windows with documents of the tier the charts show (the finest holding the
 * stream in at most SLDA_TRACK_POINTS windows), newest last (at most m). Not the finest tier:
 * a year's stream in minute windows holds a document or none per window, whose shares are
 * noise (a topic of 8% 'died' in three one-document minutes of a stationary stream). */
static size_t last_windows(const slda_track_t *track, size_t m, const slda_pwin_t **win)
{
    size_t tier = slda_prev_pick(track->prev, SLDA_TRACK_POINTS);
    size_t n = slda_prev_list(track->prev, tier, NULL, 0);
    if (!n)
        return 0;
    const slda_pwin_t **all = slda_xmalloc(n * sizeof *all);
    slda_prev_list(track->prev, tier, all, n);
    size_t take = n < m ? n : m;
    memcpy(win, all + (n - take), take * sizeof *win);
    free(all);
    return take;
}

double slda_track_slope(const slda_track_t *track, uint32_t k)
{
    const slda_pwin_t *win[256];
    size_t m = track->o.trend_windows < 256 ? track->o.trend_windows : 256;
    size_t n = last_windows(track, m, win);
    if (n < m || k >= track->K) /* a line through fewer windows is mostly noise */
        return 0;
    /* least squares of share on the window index (gaps count as time), each
     * window weighted by its documents: the newest window, still filling,
     * counts for what it holds */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double w = win[i]->docs, x = (double)(win[i]->win - win[0]->win),
               y = win[i]->sum[k] / win[i]->docs;
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

slda_track_event_t *slda_track_event_push(slda_track_t *track)
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
    ev->js = ev->before = ev->after = -1;
    return ev;
}

static void emit(slda_track_t *track, const char *kind, uint32_t topic, uint32_t other,
                 double js, const slda_track_words_t *w, uint64_t update)
{
    slda_track_event_t *ev = slda_track_event_push(track);
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
    slda_track_event_t *ev = slda_track_event_push(track);
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    ev->topic = topic;
    ev->update = update;
    ev->js = -1;
    ev->engine = 1;
    snprintf(ev->words, sizeof ev->words, "%s", words ? words : "");
    slda_track_examples_forget(track, topic, track->docs + 1); /* the slot re-seeded */
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

/* Words of the top SLDA_TRACK_SHOW of a that are not in b's, as a NUL separated list
 * (topic_t): a word is kept whole even when it holds spaces. */
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
        if (!len || used + len + 2 > size)
            continue;
        memcpy(out + used, a[i], len + 1);
        used += len + 1;
        out[used] = '\0';
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
    const slda_pwin_t *win[256];
    size_t m = track->o.death_windows < 256 ? track->o.death_windows : 256;
    size_t n = last_windows(track, m, win);
    if (!m || n < m)
        return;
    for (uint32_t k = 0; k < track->K; k++) {
        int low = 1;
        for (size_t i = 0; i < n && low; i++)
            low = win[i]->sum[k] / win[i]->docs < track->o.death_floor;
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

/* A topic's words kept at the last comparison, as slda_track_js and top_diff take them. */
static void kept_words(const tw_t *tw, slda_track_words_t *out)
{
    out->n = tw->n;
    for (size_t i = 0; i < tw->n; i++) {
        out->word[i] = tw->word[i];
        out->prob[i] = tw->prob[i];
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (sorted in place). */
static double median(double *v, uint32_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return !n ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rises and falls of the topics' shares over the windows the chart shows (track/changes.c: the
 * report's test on counts), each raised once, at the event time of the window where it
 * happened: one found again at the next comparison (or at a coarser tier) is not newer than the
 * last raised of its topic and kind. */
static void check_changes(slda_track_t *track, const slda_track_words_t *words, uint64_t update)
{
    uint32_t K = track->K;
    size_t tier = slda_track_pick(track, SLDA_TRACK_POINTS);
    size_t n = slda_track_tier_windows(track, tier, NULL, NULL, NULL);
    if (n < 2)
        return;
    int64_t *start = slda_xmalloc(n * sizeof *start);
    double *docs = slda_xmalloc(n * sizeof *docs), *share = slda_xmalloc(n * K * sizeof *share);
    slda_track_tier_windows(track, tier, start, docs, share);
    slda_change_t *c;
    size_t nc = slda_changes_find(docs, share, n, K, (double)track->o.warmup_docs, &c);
    for (size_t i = 0; i < nc; i++) {
        int64_t ms = start[c[i].window], *last = &track->chg_ms[2 * (size_t)c[i].topic + c[i].fall];
        if (ms <= *last)
            continue;
        *last = ms;
        slda_track_event_t *ev = slda_track_event_push(track);
        snprintf(ev->kind, sizeof ev->kind, "%s", c[i].fall ? "fall" : "rise");
        ev->topic = c[i].topic;
        ev->event_ms = ms;
        ev->update = update;
        ev->before = c[i].before;
        ev->after = c[i].after;
        const slda_track_words_t *w = &words[c[i].topic];
        join_words(ev->words, sizeof ev->words, w->n, w->word);
        if (track->cb)
            track->cb(ev, track->cb_opaque);
    }
    free(c);
    free(start);
    free(docs);
    free(share);
}

void slda_track_compare(slda_track_t *track, const slda_track_words_t *words,
                        const double *mass, uint64_t docs, uint64_t update)
{
    /* drift from a warm-up model to a settled one is the model learning, not
     * the stream moving: events need both comparisons past the warm-up; so is a move
     * with no new document since the last comparison (train's replay of second visits) */
    int events = track->settled && track->compared &&
                 track->compared_docs >= track->o.warmup_docs && docs > track->compared_docs;
    /* the model has settled once, past the warm-up, most of its topics stand still between
     * two comparisons (the median drift under half of track.change.js): a model still
     * settling moves most topics at once, a stream's change a few; events from the next
     * comparison on (track.warmup.docs alone is blind to K: at K=50 the first comparison
     * after 1,000 documents raised most of the false events on shuffled AP and 20 Newsgroups) */
    double *drift = NULL; /* each topic's drift since the last comparison */
    if (track->compared) {
        drift = slda_xmalloc((track->K ? track->K : 1) * sizeof *drift);
        for (uint32_t k = 0; k < track->K; k++) {
            slda_track_words_t prev;
            kept_words(&track->topics[k].words, &prev);
            drift[k] = slda_track_js(&prev, &words[k]);
        }
    }
    if (!track->settled && track->compared && track->compared_docs >= track->o.warmup_docs &&
        docs > track->compared_docs) {
        double *sorted = slda_xmalloc((track->K ? track->K : 1) * sizeof *sorted);
        memcpy(sorted, drift, track->K * sizeof *sorted);
        track->settled = median(sorted, track->K) < track->o.change_js / 2;
        free(sorted);
    }
    for (uint32_t k = 0; k < track->K; k++) {
        topic_t *t = &track->topics[k];
        const slda_track_words_t *w = &words[k];
        if (track->compared) {
            slda_track_words_t prev;
            kept_words(&t->words, &prev);
            double js = drift[k];
            top_diff(w->word, w->n, prev.word, prev.n, t->entered, sizeof t->entered);
            size_t gone = top_diff(prev.word, prev.n, w->word, w->n, t->left, sizeof t->left);
            size_t shown = prev.n < SLDA_TRACK_SHOW ? prev.n : SLDA_TRACK_SHOW;
            size_t kept = shown - gone;
            t->drift = js;
            /* new words are a subject when documents are about them: a slot that one odd
             * document took over (a message of source code, of uuencoded binary) raises no
             * event (on shuffled 20 Newsgroups they were all that was left) */
            int subject = t->about >= SLDA_SUBJECT_DOCS;
            if (events && subject && kept <= track->o.birth_keep && js >= track->o.birth_js)
                emit(track, "birth", k, UINT32_MAX, js, w, update);
            else if (events && subject && js >= track->o.change_js)
                emit(track, "change", k, UINT32_MAX, js, w, update);
            if (js >= track->o.change_js) /* other words now: the documents of before go */
                slda_track_examples_forget(track, k, track->ex_compared);
        }
        tw_clear(&t->words);
        for (size_t i = 0; i < w->n && i < SLDA_TRACK_TOP; i++) {
            t->words.word[i] = slda_xstrdup(w->word[i]);
            t->words.prob[i] = w->prob[i];
        }
        t->words.n = w->n < SLDA_TRACK_TOP ? w->n : SLDA_TRACK_TOP;
        t->mass = mass ? mass[k] : 0;
        t->about = 0;
    }
    check_deaths(track, words, docs >= track->o.warmup_docs && track->settled, update);
    check_merges(track, words, events, update);
    if (events)
        check_changes(track, words, update);
    free(drift);
    track->compared = 1;
    track->compared_docs = docs;
    track->ex_compared = track->docs; /* examples after this are of the words now */
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
        words[k].label = slda_model_label(model, k);
        slda_track_autolabel(model, &words[k], words[k].autolabel, sizeof words[k].autolabel);
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

