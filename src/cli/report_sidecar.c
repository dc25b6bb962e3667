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

/* One prevalence window into the merged list (a later sidecar overwrites an earlier one's). */
static void report_window(slda_report_t *r, int64_t start, double docs, const double *sums)
{
    size_t lo = 0, hi = r->nwin;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->win_start[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == r->nwin || r->win_start[lo] != start) {
        if (r->nwin == r->wincap) {
            r->wincap = r->wincap ? 2 * r->wincap : 256;
            r->win_start = slda_xrealloc(r->win_start, r->wincap * sizeof *r->win_start);
            r->win_docs = slda_xrealloc(r->win_docs, r->wincap * sizeof *r->win_docs);
            r->win_share = slda_xrealloc(r->win_share, r->wincap * r->K * sizeof *r->win_share);
        }
        memmove(r->win_start + lo + 1, r->win_start + lo, (r->nwin - lo) * sizeof *r->win_start);
        memmove(r->win_docs + lo + 1, r->win_docs + lo, (r->nwin - lo) * sizeof *r->win_docs);
        memmove(r->win_share + (lo + 1) * r->K, r->win_share + lo * r->K,
                (r->nwin - lo) * r->K * sizeof *r->win_share);
        r->nwin++;
    }
    r->win_start[lo] = start;
    r->win_docs[lo] = docs;
    for (uint32_t k = 0; k < r->K; k++)
        r->win_share[lo * r->K + k] = docs > 0 ? sums[k] / docs : 0;
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

/* The tracker's state beside a snapshot (docs/tracking.md, "Sidecar"): its newest event time
 * into *newest_ms and its prevalence windows into the merged list. 0 when there is none, 1 when
 * used, -1 when it is there but unusable (reported, and then ignored). */
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
    double *sums = slda_xmalloc(r->K * sizeof *sums);
    if (slda_json_parse(&js, buf ? buf : "", len, err, sizeof err) != SLDA_OK ||
        js.nodes[0].type != SLDA_JSON_OBJECT) {
        snprintf(detail, sizeof detail, "not a JSON object (%s)", buf ? err : "empty");
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
    double win = why ? NAN : js_num(&js, slda_json_object_get(&js, 0, "window_ms"));
    uint32_t prev = why ? SLDA_JSON_NONE : slda_json_object_get(&js, 0, "prevalence");
    if (!why && (!isfinite(newest) || !(win > 0) ||
                 (prev == SLDA_JSON_NONE || js.nodes[prev].type != SLDA_JSON_ARRAY))) {
        why = "newest_ms, window_ms or prevalence missing or not numbers";
    } else if (!why && r->win_ms && (int64_t)win != r->win_ms) {
        snprintf(detail, sizeof detail, "window of %g ms, an earlier sidecar's is %" PRId64 " ms",
                 win, r->win_ms);
        why = detail;
    }
    /* every window must be [start, docs, [K numbers]] before any is taken (arrays are walked
     * by their size: a last element's next is the node after the array) */
    uint32_t nw = why ? 0 : js.nodes[prev].size, w = why ? 0 : slda_json_first(&js, prev);
    for (uint32_t x = 0; x < nw && !why; x++, w = js.nodes[w].next) {
        uint32_t a = slda_json_first(&js, w);
        uint32_t b = a == SLDA_JSON_NONE ? a : js.nodes[a].next;
        uint32_t c = b == SLDA_JSON_NONE ? b : js.nodes[b].next;
        if (js.nodes[w].type != SLDA_JSON_ARRAY || js.nodes[w].size != 3 ||
            !isfinite(js_num(&js, a)) || !(js_num(&js, b) >= 0) ||
            js.nodes[c].type != SLDA_JSON_ARRAY || js.nodes[c].size != r->K)
            why = "a prevalence window is not [start_ms, docs, [K sums]]";
    }
    if (why) {
        fprintf(stderr, "streamlda report: ignored %s: %s\n", path, why);
        free(buf);
        free(sums);
        slda_json_clear(&js);
        return -1;
    }
    r->win_ms = (int64_t)win;
    report_sidecar_events(r, &js);
    w = slda_json_first(&js, prev);
    for (uint32_t x = 0; x < nw; x++, w = js.nodes[w].next) {
        uint32_t a = slda_json_first(&js, w), b = js.nodes[a].next, c = js.nodes[b].next;
        uint32_t v = slda_json_first(&js, c);
        for (uint32_t k = 0; k < r->K; k++, v = js.nodes[v].next) {
            double y = js_num(&js, v);
            sums[k] = isfinite(y) && y > 0 ? y : 0;
        }
        report_window(r, (int64_t)js_num(&js, a), js_num(&js, b), sums);
    }
    *newest_ms = (int64_t)newest;
    r->nsidecars++;
    free(buf);
    free(sums);
    slda_json_clear(&js);
    return 1;
}
