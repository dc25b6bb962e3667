/* report_sidecar.c - `streamlda report`: the tracker's states beside the snapshots, merged.
 *
 * The service and `train --time-field` save the tracker's state beside each snapshot
 * (<snapshot>.track.json, io/snapdir.h; its format in docs/tracking.md): prevalence windows by
 * event time, the newest event time, the events the tracker raised. The report merges them
 * over every snapshot it uses, oldest first: a window in several states takes the newest
 * state's value (a later state saw more of the window's documents), an event already known
 * (same kind, topic and update) is not added twice. A state is checked whole (K, update count,
 * window length, every window's shape) before any of it is taken, so an unusable one is
 * reported and costs only its own windows and events, never a chart of garbage. Missing
 * numbers read as NAN and are then refused or zero, never used as numbers.
 */
#include "cli/report.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "io/snapdir.h"
#include "track/prev.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number node as a double (NAN if not a number). */
static double js_num(const slda_json_t *js, uint32_t node)
{
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_NUMBER)
        return NAN;
    char buf[64];
    size_t len = js->nodes[node].end - js->nodes[node].start;
    if (len >= sizeof buf)
        return NAN;
    memcpy(buf, js->src + js->nodes[node].start, len);
    buf[len] = 0;
    return strtod(buf, NULL);
}

/* The merged tier of windows of width ms (made if new; NULL when there are too many). */
static struct slda_report_tier_s *report_tier(slda_report_t *r, int64_t ms)
{
    for (size_t t = 0; t < r->ntiers; t++)
        if (r->tiers[t].ms == ms)
            return &r->tiers[t];
    if (r->ntiers == sizeof r->tiers / sizeof r->tiers[0])
        return NULL;
    struct slda_report_tier_s *tr = &r->tiers[r->ntiers++];
    memset(tr, 0, sizeof *tr);
    tr->ms = ms;
    return tr;
}

/* One prevalence window into its tier's merged list (a later sidecar overwrites an earlier
 * one's): share = sums / docs, or the shares under a later model (now). */
static void report_window(slda_report_t *r, struct slda_report_tier_s *tr, int64_t start,
                          double docs, const double *sums, const double *now)
{
    size_t lo = 0, hi = tr->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tr->start[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == tr->n || tr->start[lo] != start) {
        if (tr->n == tr->cap) {
            tr->cap = tr->cap ? 2 * tr->cap : 256;
            tr->start = slda_xrealloc(tr->start, tr->cap * sizeof *tr->start);
            tr->docs = slda_xrealloc(tr->docs, tr->cap * sizeof *tr->docs);
            tr->share = slda_xrealloc(tr->share, tr->cap * r->K * sizeof *tr->share);
            tr->now = slda_xrealloc(tr->now, tr->cap * sizeof *tr->now);
        }
        memmove(tr->start + lo + 1, tr->start + lo, (tr->n - lo) * sizeof *tr->start);
        memmove(tr->docs + lo + 1, tr->docs + lo, (tr->n - lo) * sizeof *tr->docs);
        memmove(tr->now + lo + 1, tr->now + lo, (tr->n - lo) * sizeof *tr->now);
        memmove(tr->share + (lo + 1) * r->K, tr->share + lo * r->K,
                (tr->n - lo) * r->K * sizeof *tr->share);
        tr->n++;
    }
    tr->start[lo] = start;
    tr->docs[lo] = docs;
    tr->now[lo] = now != NULL;
    for (uint32_t k = 0; k < r->K; k++)
        tr->share[lo * r->K + k] = now ? now[k] : docs > 0 ? sums[k] / docs : 0;
}

void slda_report_pick_tier(slda_report_t *r)
{
    /* a tier holds the stream when it holds nearly as many documents (SLDA_PREV_COVER) as the
     * one holding most (the coarsest, which never forgets): the finest of those with at most
     * SLDA_TRACK_POINTS windows over its span, else the coarsest */
    double most = 0;
    double *docs = slda_xcalloc(r->ntiers + 1, sizeof *docs);
    for (size_t t = 0; t < r->ntiers; t++) {
        for (size_t i = 0; i < r->tiers[t].n; i++)
            docs[t] += r->tiers[t].docs[i];
        most = docs[t] > most ? docs[t] : most;
    }
    const struct slda_report_tier_s *best = NULL, *whole = NULL;
    for (size_t t = 0; t < r->ntiers; t++) {
        const struct slda_report_tier_s *tr = &r->tiers[t];
        if (!tr->n || docs[t] < SLDA_PREV_COVER * most)
            continue;
        if (!whole || tr->ms > whole->ms)
            whole = tr;
        int64_t points = (tr->start[tr->n - 1] - tr->start[0]) / tr->ms + 1;
        if (points <= SLDA_TRACK_POINTS && (!best || tr->ms < best->ms))
            best = tr;
    }
    if (!best)
        best = whole;
    if (best) {
        r->win_ms = best->ms;
        r->win_start = best->start;
        r->win_docs = best->docs;
        r->win_share = best->share;
        r->win_now = best->now;
        r->nwin = best->n;
        r->win_outside = most - docs[best - r->tiers];
    }
    free(docs);
}

/* String node into buf (truncated to size). */
static void js_str(const slda_json_t *js, uint32_t node, char *buf, size_t size)
{
    buf[0] = 0;
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_STRING)
        return;
    char *tmp = slda_xmalloc(slda_json_raw_len(js, node) + 1);
    slda_json_string(js, node, tmp);
    snprintf(buf, size, "%s", tmp);
    free(tmp);
}

/* The events of a tracking state (docs/tracking.md: kind, topic, other?, event_ms, update, js?,
 * words), added unless already known (same kind, topic and update): a later state holds the
 * earlier events too, until its ring of 256 drops them. Malformed entries are left out. */
static void report_sidecar_events(slda_report_t *r, const slda_json_t *js)
{
    uint32_t evs = slda_json_object_get(js, 0, "events");
    if (evs == SLDA_JSON_NONE || js->nodes[evs].type != SLDA_JSON_ARRAY)
        return;
    uint32_t e = slda_json_first(js, evs);
    for (uint32_t x = 0; x < js->nodes[evs].size; x++, e = js->nodes[e].next) {
        if (js->nodes[e].type != SLDA_JSON_OBJECT)
            continue;
        slda_track_event_t ev;
        memset(&ev, 0, sizeof ev);
        double topic = js_num(js, slda_json_object_get(js, e, "topic"));
        double other = js_num(js, slda_json_object_get(js, e, "other"));
        double ms = js_num(js, slda_json_object_get(js, e, "event_ms"));
        double upd = js_num(js, slda_json_object_get(js, e, "update"));
        double jsd = js_num(js, slda_json_object_get(js, e, "js"));
        js_str(js, slda_json_object_get(js, e, "kind"), ev.kind, sizeof ev.kind);
        if (!ev.kind[0] || !(topic >= 0 && topic < r->K) || !isfinite(ms) || !(upd >= 0))
            continue;
        ev.topic = (uint32_t)topic;
        ev.other = other >= 0 && other < r->K ? (uint32_t)other : UINT32_MAX;
        ev.event_ms = (int64_t)ms;
        ev.update = (uint64_t)upd;
        ev.js = isfinite(jsd) ? jsd : -1;
        uint32_t words = slda_json_object_get(js, e, "words");
        if (words != SLDA_JSON_NONE && js->nodes[words].type == SLDA_JSON_ARRAY) {
            size_t used = 0;
            uint32_t w = slda_json_first(js, words);
            for (uint32_t y = 0; y < js->nodes[words].size; y++, w = js->nodes[w].next) {
                char word[64];
                js_str(js, w, word, sizeof word);
                int n = snprintf(ev.words + used, sizeof ev.words - used, "%s%s", used ? " " : "",
                                 word);
                if (n < 0 || (size_t)n >= sizeof ev.words - used)
                    break;
                used += (size_t)n;
            }
        }
        int known = 0;
        for (size_t i = 0; i < r->ntev && !known; i++)
            known = r->tev[i].topic == ev.topic && r->tev[i].update == ev.update &&
                    !strcmp(r->tev[i].kind, ev.kind);
        if (known)
            continue;
        if (r->ntev == r->tevcap) {
            r->tevcap = r->tevcap ? 2 * r->tevcap : 64;
            r->tev = slda_xrealloc(r->tev, r->tevcap * sizeof *r->tev);
        }
        r->tev[r->ntev++] = ev;
    }
}

/* Is node an array of [number, number >= 0, [K numbers]] (a tier's "prevalence", or with
 * now, its "now")? (Arrays are walked by their size: a last element's next is the node after
 * the array.) */
static int windows_ok(const slda_json_t *js, uint32_t node, uint32_t K)
{
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_ARRAY)
        return 0;
    uint32_t w = slda_json_first(js, node);
    for (uint32_t x = 0; x < js->nodes[node].size; x++, w = js->nodes[w].next) {
        uint32_t a = slda_json_first(js, w);
        uint32_t b = a == SLDA_JSON_NONE ? a : js->nodes[a].next;
        uint32_t c = b == SLDA_JSON_NONE ? b : js->nodes[b].next;
        if (js->nodes[w].type != SLDA_JSON_ARRAY || js->nodes[w].size != 3 ||
            !isfinite(js_num(js, a)) || !(js_num(js, b) >= 0) ||
            js->nodes[c].type != SLDA_JSON_ARRAY || js->nodes[c].size != K)
            return 0;
    }
    return 1;
}

/* The K numbers of window entry w's third element into v (missing or negative: 0). */
static void window_values(const slda_json_t *js, uint32_t w, uint32_t K, double *v)
{
    uint32_t a = slda_json_first(js, w), b = js->nodes[a].next, c = js->nodes[b].next;
    uint32_t x = slda_json_first(js, c);
    for (uint32_t k = 0; k < K; k++, x = js->nodes[x].next) {
        double y = js_num(js, x);
        v[k] = isfinite(y) && y > 0 ? y : 0;
    }
}

/* A tier's windows (and its "now" shares, may be SLDA_JSON_NONE) into the merged tier of
 * width ms. */
static void take_windows(slda_report_t *r, const slda_json_t *js, int64_t ms, uint32_t prev,
                         uint32_t now, uint64_t beyond)
{
    struct slda_report_tier_s *tr = report_tier(r, ms);
    if (!tr)
        return;
    tr->beyond = beyond;
    double *sums = slda_xmalloc(r->K * sizeof *sums), *shares = slda_xmalloc(r->K * sizeof *shares);
    uint32_t nn = now == SLDA_JSON_NONE ? 0 : js->nodes[now].size;
    uint32_t w = slda_json_first(js, prev), v = nn ? slda_json_first(js, now) : SLDA_JSON_NONE;
    uint32_t vi = 0;
    for (uint32_t x = 0; x < js->nodes[prev].size; x++, w = js->nodes[w].next) {
        int64_t start = (int64_t)js_num(js, slda_json_first(js, w));
        double docs = js_num(js, js->nodes[slda_json_first(js, w)].next);
        window_values(js, w, r->K, sums);
        /* "now" lists a subset of the windows, in the same order */
        while (vi < nn && (int64_t)js_num(js, slda_json_first(js, v)) < start)
            vi++, v = js->nodes[v].next;
        int scored = vi < nn && (int64_t)js_num(js, slda_json_first(js, v)) == start;
        if (scored)
            window_values(js, v, r->K, shares);
        report_window(r, tr, start, docs, sums, scored ? shares : NULL);
    }
    free(sums);
    free(shares);
}

/* The tracker's state beside a snapshot (docs/tracking.md, "Sidecar"): its newest event time
 * into *newest_ms and its prevalence windows into the merged tiers (format 1: one ring of
 * window_ms windows; format 2: "tiers", each with its window, windows and the shares scored
 * again under the snapshot's model). 0 when there is none, 1 when used, -1 when it is there
 * but unusable (reported, and then ignored). */
int slda_report_sidecar_read(slda_report_t *r, const char *snapshot_path,
                             const slda_model_t *model, int64_t *newest_ms)
{
    char path[4200], err[512];
    slda_snapdir_track_path(path, sizeof path, snapshot_path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t len;
    char *buf = slda_read_all(f, &len);
    fclose(f);
    slda_json_t js;
    slda_json_init(&js);
    const char *why = NULL;
    char detail[600];
    double fmt = NAN;
    if (slda_json_parse(&js, buf ? buf : "", len, err, sizeof err) != SLDA_OK ||
        js.nodes[0].type != SLDA_JSON_OBJECT) {
        snprintf(detail, sizeof detail, "not a JSON object (%s)", buf ? err : "empty");
        why = detail;
    } else if ((fmt = js_num(&js, slda_json_object_get(&js, 0, "format"))) != 1 && fmt != 2) {
        snprintf(detail, sizeof detail, "format %g, not 1 or 2", fmt);
        why = detail;
    } else if (js_num(&js, slda_json_object_get(&js, 0, "K")) != r->K) {
        snprintf(detail, sizeof detail, "K=%g, the snapshots have K=%u",
                 js_num(&js, slda_json_object_get(&js, 0, "K")), r->K);
        why = detail;
    } else if (js_num(&js, slda_json_object_get(&js, 0, "update")) !=
               (double)slda_model_updates(model)) {
        snprintf(detail, sizeof detail, "update %g, its snapshot's is %" PRIu64,
                 js_num(&js, slda_json_object_get(&js, 0, "update")), slda_model_updates(model));
        why = detail;
    }
    double newest = why ? NAN : js_num(&js, slda_json_object_get(&js, 0, "newest_ms"));
    uint32_t tiers = SLDA_JSON_NONE, prev = SLDA_JSON_NONE;
    double win = NAN;
    if (!why && fmt == 1) {
        win = js_num(&js, slda_json_object_get(&js, 0, "window_ms"));
        prev = slda_json_object_get(&js, 0, "prevalence");
        if (!isfinite(newest) || !(win > 0) || prev == SLDA_JSON_NONE ||
            js.nodes[prev].type != SLDA_JSON_ARRAY)
            why = "newest_ms, window_ms or prevalence missing or not numbers";
        else if (!windows_ok(&js, prev, r->K))
            why = "a prevalence window is not [start_ms, docs, [K sums]]";
    } else if (!why) {
        tiers = slda_json_object_get(&js, 0, "tiers");
        if (!isfinite(newest) || tiers == SLDA_JSON_NONE || js.nodes[tiers].type != SLDA_JSON_ARRAY)
            why = "newest_ms or tiers missing or not numbers";
        uint32_t t = why ? 0 : slda_json_first(&js, tiers);
        for (uint32_t x = 0; !why && x < js.nodes[tiers].size; x++, t = js.nodes[t].next) {
            uint32_t now = js.nodes[t].type == SLDA_JSON_OBJECT ? slda_json_object_get(&js, t, "now")
                                                               : SLDA_JSON_NONE;
            if (js.nodes[t].type != SLDA_JSON_OBJECT ||
                !(js_num(&js, slda_json_object_get(&js, t, "window_ms")) > 0) ||
                !windows_ok(&js, slda_json_object_get(&js, t, "prevalence"), r->K) ||
                (now != SLDA_JSON_NONE && !windows_ok(&js, now, r->K)))
                why = "a tier is not {window_ms, prevalence: [[start_ms, docs, [K sums]], ...], "
                      "now: [[start_ms, update, [K shares]], ...]}";
        }
    }
    if (why) {
        fprintf(stderr, "streamlda report: ignored %s: %s\n", path, why);
        free(buf);
        slda_json_clear(&js);
        return -1;
    }
    report_sidecar_events(r, &js);
    if (fmt == 1) {
        take_windows(r, &js, (int64_t)win, prev, SLDA_JSON_NONE, 0);
    } else {
        uint32_t t = slda_json_first(&js, tiers);
        for (uint32_t x = 0; x < js.nodes[tiers].size; x++, t = js.nodes[t].next) {
            double beyond = js_num(&js, slda_json_object_get(&js, t, "beyond"));
            take_windows(r, &js, (int64_t)js_num(&js, slda_json_object_get(&js, t, "window_ms")),
                         slda_json_object_get(&js, t, "prevalence"),
                         slda_json_object_get(&js, t, "now"), beyond >= 0 ? (uint64_t)beyond : 0);
        }
    }
    *newest_ms = (int64_t)newest;
    r->nsidecars++;
    free(buf);
    slda_json_clear(&js);
    return 1;
}
