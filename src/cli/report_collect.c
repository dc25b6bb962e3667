/* report_collect.c - `streamlda report`'s data: a model's snapshots, weights, drift, events.
 *
 * Reads a directory of one model's snapshots (<model>-<updates, 20 digits>.slda, as the service
 * and `train --snapshot-dir` write them; io/snapdir.h) in update order into an slda_report_t
 * (report.h) for the writers: each snapshot's topic weights (shares of NZ), the drift of every
 * slot between consecutive snapshots (Jensen-Shannon distance, src/track/align.c) and the
 * events found there (change, taken, drift, moved, rise, fall). Snapshots that cannot be used
 * (corrupt, another K, another vocabulary, another model or run, a name that disagrees with
 * the header) are skipped with a message naming the file; they never reach a chart. The
 * newest snapshot that loads decides K, vocabulary and run; the others are loaded oldest first
 * and freed as soon as the next one is in, so at most two models are in memory at a time. The
 * time axis is the snapshots' event time (header event_ms, else the tracking state's
 * newest_ms) only when every snapshot has one, else every snapshot's last update. No event is
 * raised from a step whose earlier snapshot has fewer than --warmup documents (a new model's
 * drift is learning). The CLI's own file: it prints what it skips on stderr.
 */
#include "cli/cli_snap.h"
#include "cli/report.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "io/snapdir.h"
#include "track/align.h"
#include "track/changes.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What only the gathering needs: the files, what the newest usable snapshot set, the anchors. */
typedef struct gather_s {
    slda_report_t *r;
    slda_snapdir_ent_t *ents; /* the chosen model's snapshots, oldest first */
    size_t nents;
    int have_ref;      /* K, vocabulary and run below are the newest usable snapshot's */
    int64_t event_ms;  /* the header's event_ms of the snapshot report_load returned last */
    int64_t created_ms;
    uint64_t hash_seed;
    int fixed;
    uint32_t W;
    /* per slot, its words at its anchor snapshot (after the warm-up, then at its last event):
     * drift accumulated over several snapshots is measured against them */
    struct anchor_s {
        char **words;
        double *probs;
        uint32_t n;
        size_t point;
    } *anchor;
} gather_t;

static void report_skip(slda_report_t *r, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_skip(slda_report_t *r, const char *file, const char *fmt, ...)
{
    char msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "streamlda report: skipped %s/%s: %s\n", r->dir, file, msg);
    if (r->nskipped == r->skipcap) {
        r->skipcap = r->skipcap ? 2 * r->skipcap : 16;
        r->skipped = slda_xrealloc(r->skipped, r->skipcap * sizeof *r->skipped);
    }
    size_t len = strlen(file) + strlen(msg) + 3;
    r->skipped[r->nskipped] = slda_xmalloc(len);
    snprintf(r->skipped[r->nskipped++], len, "%s: %s", file, msg);
}

/* Snapshot files of the chosen model in g->ents, by update count. */
static int report_list(gather_t *g, const char *want_model)
{
    slda_report_t *r = g->r;
    char err[4400];
    slda_snapdir_list_t all; /* every model's, in directory order */
    if (slda_snapdir_scan(&all, r->dir, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        slda_snapdir_list_clear(&all);
        return -1;
    }
    for (size_t i = 0; i < all.nodd; i++)
        report_skip(r, all.odd[i],
                    "not a snapshot file name (<model>-<20-digit update count>.slda)");
    size_t n = all.n;
    /* the model: as asked, else the one with the most files (first by name on a tie) */
    const char *model = want_model;
    if (!model) {
        size_t best = 0;
        for (size_t i = 0; i < n; i++) {
            size_t c = 0;
            for (size_t j = 0; j < n; j++)
                c += !strcmp(all.ents[i].model, all.ents[j].model);
            if (c > best || (c == best && model && strcmp(all.ents[i].model, model) < 0)) {
                best = c;
                model = all.ents[i].model;
            }
        }
    }
    r->model_name = model ? slda_xstrdup(model) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (model && !strcmp(all.ents[i].model, model)) {
            g->ents = slda_xrealloc(g->ents, (g->nents + 1) * sizeof *g->ents);
            g->ents[g->nents++] = all.ents[i];
            memset(&all.ents[i], 0, sizeof all.ents[i]); /* now g's */
            continue;
        }
        report_skip(r, all.ents[i].file, "a snapshot of model \"%s\", not \"%s\"%s",
                    all.ents[i].model, model ? model : "",
                    want_model ? "" : " (choose with --model)");
    }
    slda_snapdir_list_clear(&all);
    if (!g->nents) {
        fprintf(stderr, "streamlda report: no snapshot%s%s%s in \"%s\"\n",
                model ? " of model \"" : "", model ? model : "", model ? "\"" : "", r->dir);
        return -1;
    }
    slda_snapdir_sort(g->ents, g->nents);
    return 0;
}

/* The time of a snapshot on the report's axis: the newest event time in its header (event_ms,
 * docs/snapshot-format.md) when it has one, else its last update (wall clock). */
static int64_t snap_time(const gather_t *g, const slda_model_t *model, int *event_time)
{
    *event_time = g->event_ms > 0;
    return g->event_ms > 0 ? g->event_ms : slda_model_updated_ms(model);
}

/* Load ents[i]; NULL (and the file skipped with the reason) when it cannot be used. The first
 * model accepted (the newest, g->have_ref 0) sets what the others must match. */
static slda_model_t *report_load(gather_t *g, size_t i)
{
    char why[1200];
    slda_report_t *r = g->r;
    const slda_snapdir_ent_t *e = &g->ents[i];
    slda_snapshot_meta_t meta = {0};
    slda_model_t *model = slda_cli_snap_load(e->path, &meta, why, sizeof why);
    if (!model) {
        report_skip(r, e->file, "%s", why);
        return NULL;
    }
    const char *name = slda_model_name(model) ? slda_model_name(model) : "";
    const char *what = NULL;
    char detail[512];
    if (strcmp(name, r->model_name)) {
        snprintf(detail, sizeof detail, "its header names model \"%s\"", name);
        what = detail;
    } else if (slda_model_updates(model) != e->updates) {
        snprintf(detail, sizeof detail, "its header says %" PRIu64 " updates, its name %" PRIu64,
                 slda_model_updates(model), e->updates);
        what = detail;
    } else if (g->have_ref && slda_model_topics(model) != r->K) {
        snprintf(detail, sizeof detail, "K=%u, the newest snapshot has K=%u",
                 slda_model_topics(model), r->K);
        what = detail;
    } else if (g->have_ref && (slda_vocab_is_fixed(slda_model_vocab(model)) != g->fixed ||
                               slda_vocab_seed(slda_model_vocab(model)) != g->hash_seed ||
                               (g->fixed && slda_model_rows(model) != g->W))) {
        snprintf(detail, sizeof detail,
                 "another vocabulary (%s, %u rows, hash seed %" PRIu64 "; the newest snapshot: "
                 "%s, %u rows, hash seed %" PRIu64 ")",
                 slda_vocab_is_fixed(slda_model_vocab(model)) ? "fixed" : "open",
                 slda_model_rows(model), slda_vocab_seed(slda_model_vocab(model)),
                 g->fixed ? "fixed" : "open", g->W, g->hash_seed);
        what = detail;
    } else if (g->have_ref && slda_model_created_ms(model) != g->created_ms) {
        snprintf(detail, sizeof detail,
                 "another run of model \"%s\" (created at %" PRId64 " ms, the newest snapshot's "
                 "model at %" PRId64 " ms)", name, slda_model_created_ms(model), g->created_ms);
        what = detail;
    }
    if (what) {
        report_skip(r, e->file, "%s", what);
        slda_model_destroy(model);
        return NULL;
    }
    g->event_ms = meta.event_ms;
    return model;
}

static slda_report_event_t *report_event(slda_report_t *r, size_t point, uint32_t k,
                                         const char *kind)
{
    if (r->nev == r->evcap) {
        r->evcap = r->evcap ? 2 * r->evcap : 32;
        r->ev = slda_xrealloc(r->ev, r->evcap * sizeof *r->ev);
    }
    slda_report_event_t *ev = &r->ev[r->nev++];
    memset(ev, 0, sizeof *ev);
    ev->point = point;
    ev->topic = k;
    ev->other = UINT32_MAX;
    snprintf(ev->kind, sizeof ev->kind, "%s", kind);
    return ev;
}

/* phi[k][id] in double (as align.c computes it). */
static double phi_d(const slda_model_t *model, uint32_t id, uint32_t k)
{
    slda_phi_view_t view;
    slda_model_phi_view(model, &view);
    return slda_phi_at(&view, id, k, slda_model_phi_denom(model, k));
}

/* The id of word in model if the model holds it, else UINT32_MAX. */
static uint32_t held_id(const slda_model_t *model, const char *word)
{
    uint32_t id = slda_model_word_id(model, word, strlen(word));
    if (id == UINT32_MAX || !slda_model_row_held(model, id))
        return UINT32_MAX;
    return id;
}

/* Slot k's anchor := its words in model (at point p). */
static void anchor_set(gather_t *g, uint32_t k, const slda_model_t *model, size_t p)
{
    struct anchor_s *an = &g->anchor[k];
    uint32_t top = g->r->top;
    for (uint32_t i = 0; i < an->n; i++)
        free(an->words[i]);
    uint32_t want = top ? (top < 1000 ? top : 1000) : SLDA_ALIGN_TOP_DEFAULT;
    uint32_t *ids = slda_xmalloc(want * sizeof *ids);
    float *probs = slda_xmalloc(want * sizeof *probs);
    an->n = (uint32_t)slda_model_top_words(model, k, want, ids, probs);
    an->words = slda_xrealloc(an->words, (an->n + 1) * sizeof *an->words);
    an->probs = slda_xrealloc(an->probs, (an->n + 1) * sizeof *an->probs);
    for (uint32_t i = 0; i < an->n; i++) {
        an->words[i] = slda_xstrdup(slda_model_word(model, ids[i]));
        an->probs[i] = phi_d(model, ids[i], k);
    }
    an->point = p;
    free(ids);
    free(probs);
}

/* JS distance of slot k in model from its anchor, over the anchor's words and one bucket for
 * the rest (a coarse-graining: a lower bound of the full rows' distance; words new to the slot
 * show as a growing bucket). Identical words and probabilities give 0. */
static double anchor_dist(const gather_t *g, uint32_t k, const slda_model_t *model)
{
    const struct anchor_s *an = &g->anchor[k];
    double *p = slda_xmalloc((an->n + 1) * sizeof *p), *q = slda_xmalloc((an->n + 1) * sizeof *q);
    double mp = 0, mq = 0;
    for (uint32_t i = 0; i < an->n; i++) {
        uint32_t id = held_id(model, an->words[i]);
        p[i] = an->probs[i];
        q[i] = id == UINT32_MAX ? 0 : phi_d(model, id, k);
        mp += p[i];
        mq += q[i];
    }
    p[an->n] = mp < 1 ? 1 - mp : 0;
    q[an->n] = mq < 1 ? 1 - mq : 0;
    double d = slda_js_distance(p, q, an->n + 1);
    free(p);
    free(q);
    return d;
}

/* Each slot's distance from its anchor in da[k]; in base[k] how far the model as a whole
 * moved since that slot's anchor: the median distance of the slots anchored at the same
 * snapshot, when there are at least DRIFT_PEERS of them (else 0). A model learning in one pass
 * keeps refining every topic: on Reuters-21578 at K=50 the median slot was 0.45 from its words at
 * the warm-up's end 20,000 documents later, and six slots crossed 0.5 (drift events on a
 * shuffled, stationary stream). A slot that moved no further than its peers did moved with
 * the model, not with the stream. */
#define DRIFT_PEERS 8
static void anchor_dists(const gather_t *g, const slda_model_t *cur, uint32_t K, double *da,
                         double *base)
{
    double *v = slda_xmalloc((K + 1) * sizeof *v);
    for (uint32_t k = 0; k < K; k++)
        da[k] = anchor_dist(g, k, cur);
    for (uint32_t k = 0; k < K; k++) {
        uint32_t n = 0;
        for (uint32_t j = 0; j < K; j++)
            if (g->anchor[j].point == g->anchor[k].point)
                v[n++] = da[j];
        base[k] = 0;
        if (n >= DRIFT_PEERS) {
            qsort(v, n, sizeof *v, slda_cli_cmp_double);
            base[k] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        }
    }
    free(v);
}

/* Drift and events between the previous accepted snapshot and this one (point p). */
static int report_step(gather_t *g, const slda_model_t *prev, const slda_model_t *cur,
                       size_t p)
{
    slda_report_t *r = g->r;
    uint32_t K = r->K;
    char err[512];
    double *d = slda_xmalloc((size_t)K * K * sizeof *d);
    int32_t *r2c = slda_xmalloc(K * sizeof *r2c);
    if (slda_align_distances(prev, cur, r->top, d, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        free(d);
        free(r2c);
        return -1;
    }
    slda_align_assign(d, K, K, r2c);
    const double *w0 = r->weights + (p - 1) * K, *w1 = r->weights + p * K;
    double floor = 0.5 / K; /* a weight change smaller than half a uniform share is noise */
    /* a model still warming up drifts because it learns, not because the stream moves */
    int quiet = slda_model_docs(prev) < r->warmup;
    if (!quiet && !g->anchor) { /* the first step past the warm-up: anchors at its start */
        g->anchor = slda_xcalloc(K, sizeof *g->anchor);
        for (uint32_t k = 0; k < K; k++)
            anchor_set(g, k, prev, p - 1);
    }
    double *da = NULL, *base = NULL;
    if (!quiet) { /* before any slot re-anchors at this step */
        da = slda_xmalloc(2 * (K + 1) * sizeof *da);
        base = da + K + 1;
        anchor_dists(g, cur, K, da, base);
    }
    for (uint32_t k = 0; k < K; k++) {
        double dk = d[(size_t)k * K + k];
        r->drift[p * K + k] = dk;
        slda_report_event_t *ev = NULL;
        if (quiet)
            continue;
        size_t before = r->nev;
        if (dk >= r->change) {
            double colmin = 1;
            for (uint32_t i = 0; i < K; i++)
                if (d[(size_t)i * K + k] < colmin)
                    colmin = d[(size_t)i * K + k];
            ev = report_event(r, p, k, colmin >= r->change ? "taken" : "change");
            ev->js = dk;
        }
        uint32_t j = r2c[k] < 0 ? k : (uint32_t)r2c[k];
        /* the margin keeps near-ties between two similar slots from flagging a move */
        if (j != k && d[(size_t)k * K + j] + 0.05 < dk) {
            ev = report_event(r, p, k, "moved");
            ev->other = j;
            ev->js = d[(size_t)k * K + j];
        }
        int stepped = r->nev > before && (!strcmp(r->ev[before].kind, "change") ||
                                          !strcmp(r->ev[before].kind, "taken"));
        if (stepped) {
            anchor_set(g, k, cur, p);
        } else {
            /* a change spread over several snapshots: far from the slot's anchor, and
             * further than the model as a whole moved since (anchor_dists); a slot that moved
             * with its peers keeps its anchor */
            if (da[k] >= r->change && da[k] - base[k] >= r->change / 2) {
                ev = report_event(r, p, k, "drift");
                ev->js = da[k];
                char now[180], was[180] = "";
                const struct anchor_s *an = &g->anchor[k];
                slda_cli_words_text(cur, k, 8, now, sizeof now);
                for (uint32_t i = 0, used = 0; i < an->n && i < 8; i++) {
                    int n = snprintf(was + used, sizeof was - used, "%s%s", i ? " " : "",
                                     an->words[i]);
                    if (n < 0 || (size_t)n >= sizeof was - used)
                        break;
                    used += (uint32_t)n;
                }
                snprintf(ev->words, sizeof ev->words, "%s (was at %s: %s)", now,
                         r->pts[an->point].file, was);
                anchor_set(g, k, cur, p);
            }
        }
        if (w1[k] >= 2 * w0[k] && w1[k] - w0[k] >= floor)
            ev = report_event(r, p, k, "rise");
        else if (w1[k] <= 0.5 * w0[k] && w0[k] - w1[k] >= floor)
            ev = report_event(r, p, k, "fall");
        (void)ev;
    }
    /* words and weights for every event of this step */
    for (size_t e = 0; e < r->nev; e++) {
        slda_report_event_t *ev = &r->ev[e];
        if (ev->point != p)
            continue;
        ev->w0 = w0[ev->topic];
        ev->w1 = w1[ev->topic];
        if (ev->words[0])
            continue; /* drift: written when found */
        if (!ev->js)
            ev->js = d[(size_t)ev->topic * K + ev->topic];
        char now[180], was[180];
        slda_cli_words_text(cur, ev->topic, 8, now, sizeof now);
        if (!strcmp(ev->kind, "taken") || !strcmp(ev->kind, "change")) {
            slda_cli_words_text(prev, ev->topic, 8, was, sizeof was);
            snprintf(ev->words, sizeof ev->words, "%s (was: %s)", now, was);
        } else if (!strcmp(ev->kind, "moved")) {
            slda_cli_words_text(prev, ev->topic, 8, was, sizeof was);
            snprintf(ev->words, sizeof ev->words, "%s", was);
        } else {
            snprintf(ev->words, sizeof ev->words, "%s", now);
        }
    }
    free(da);
    free(d);
    free(r2c);
    return 0;
}

/* Add model (ents[i]) as the next point; prev (may be NULL) is the previous accepted one. */
static int report_add(gather_t *g, size_t i, const slda_model_t *prev,
                      const slda_model_t *model, int skipped_before)
{
    slda_report_t *r = g->r;
    size_t p = r->npts++;
    slda_report_point_t *pt = &r->pts[p];
    pt->file = slda_xstrdup(g->ents[i].file);
    pt->t = slda_model_updates(model);
    pt->docs = slda_model_docs(model);
    pt->time_ms = snap_time(g, model, &pt->event_time);
    pt->updated_ms = slda_model_updated_ms(model);
    int64_t newest = 0;
    /* the tracking state's newest time stands in for a header without event_ms (snapshots
     * written before the key) */
    if (slda_report_sidecar_read(r, g->ents[i].path, model, &newest) == 1 && newest > 0 &&
        !pt->event_time) {
        pt->time_ms = newest;
        pt->event_time = 1;
    }
    pt->gap_before = p > 0 && skipped_before;
    slda_align_weights(model, r->weights + p * r->K);
    for (uint32_t k = 0; k < r->K; k++)
        r->drift[p * r->K + k] = NAN;
    return prev ? report_step(g, prev, model, p) : 0;
}

/* Steps much longer than usual are gaps too: a snapshot was lost or pruned there, and the
 * chart must not pretend the line in between was observed. A step is long when it has over
 * twice the median number of updates and of documents: a last snapshot whose updates are the
 * second visits of a finite input's tail (replay) adds updates, not documents, and is no gap. */
static void report_gaps(slda_report_t *r)
{
    if (r->npts < 3)
        return;
    size_t n = r->npts - 1;
    double *steps = slda_xmalloc(n * sizeof *steps), *dsteps = slda_xmalloc(n * sizeof *dsteps);
    for (size_t p = 1; p < r->npts; p++) {
        steps[p - 1] = (double)(r->pts[p].t - r->pts[p - 1].t);
        dsteps[p - 1] = (double)r->pts[p].docs - (double)r->pts[p - 1].docs;
    }
    qsort(steps, n, sizeof *steps, slda_cli_cmp_double);
    qsort(dsteps, n, sizeof *dsteps, slda_cli_cmp_double);
    double median = steps[n / 2], dmedian = dsteps[n / 2];
    free(steps);
    free(dsteps);
    for (size_t p = 1; p < r->npts; p++) {
        double step = (double)(r->pts[p].t - r->pts[p - 1].t);
        double dstep = (double)r->pts[p].docs - (double)r->pts[p - 1].docs;
        if (step > 2 * median && dstep > 2 * dmedian && !r->pts[p].gap_before) {
            r->pts[p].gap_before = 1;
            fprintf(stderr,
                    "streamlda report: gap in %s: %" PRIu64 " updates and %.0f documents between "
                    "%s and %s (usually %.0f and %.0f)\n",
                    r->dir, r->pts[p].t - r->pts[p - 1].t, dstep, r->pts[p - 1].file,
                    r->pts[p].file, median, dmedian);
        }
    }
}

/* The newest model's labels (the user's and the automatic ones) and the representative
 * documents of its tracking state (quiet when it has none). */
const char *slda_report_label(const slda_report_t *r, uint32_t k)
{
    return r->label && r->label[k] ? r->label[k] : r->autolabel ? r->autolabel[k] : NULL;
}

static void report_labels(slda_report_t *r, const char *path)
{
    slda_track_words_t *words = slda_xmalloc(r->K * sizeof *words);
    slda_track_model_words(r->ref, words, NULL);
    r->label = slda_xcalloc(r->K, sizeof *r->label);
    r->autolabel = slda_xcalloc(r->K, sizeof *r->autolabel);
    for (uint32_t k = 0; k < r->K; k++) {
        r->label[k] = words[k].label ? slda_xstrdup(words[k].label) : NULL;
        r->autolabel[k] = slda_xstrdup(words[k].autolabel);
    }
    free(words);
    r->examples = slda_report_examples_load(path, r->K, 1);
}

/* Every usable snapshot of g->ents as a point, oldest first; then the gaps and the axis. */
static int report_points(gather_t *g)
{
    slda_report_t *r = g->r;
    /* the newest snapshot that loads sets K, the vocabulary and the run; it is loaded again
     * in turn, so that no more than two models (1 GB at K=1000) are in memory at a time */
    size_t refi = g->nents;
    slda_model_t *ref = NULL;
    while (refi-- > 0) {
        if ((ref = report_load(g, refi)))
            break;
    }
    if (!ref) {
        fprintf(stderr, "streamlda report: no usable snapshot of model \"%s\" in \"%s\"\n",
                r->model_name, r->dir);
        return -1;
    }
    r->K = slda_model_topics(ref);
    g->created_ms = slda_model_created_ms(ref);
    g->hash_seed = slda_vocab_seed(slda_model_vocab(ref));
    g->fixed = slda_vocab_is_fixed(slda_model_vocab(ref));
    g->W = slda_model_rows(ref);
    g->have_ref = 1;
    slda_model_destroy(ref);
    r->pts = slda_xcalloc(refi + 1, sizeof *r->pts);
    r->weights = slda_xmalloc((refi + 1) * r->K * sizeof *r->weights);
    r->drift = slda_xmalloc((refi + 1) * r->K * sizeof *r->drift);
    slda_model_t *prev = NULL;
    size_t skipped = r->nskipped;
    int rc = 0;
    for (size_t i = 0; i <= refi && rc == 0; i++) {
        slda_model_t *model = report_load(g, i);
        if (!model)
            continue;
        rc = report_add(g, i, prev, model, r->nskipped != skipped);
        skipped = r->nskipped;
        slda_model_destroy(prev);
        prev = model;
    }
    r->ref = prev; /* the newest point: its topics head the report */
    if (prev) /* its labels, and the representative documents of its tracking state */
        report_labels(r, g->ents[refi].path);
    if (rc == 0 && !r->npts) {
        fprintf(stderr, "streamlda report: no usable snapshot of model \"%s\" in \"%s\"\n",
                r->model_name, r->dir);
        rc = -1;
    }
    if (rc == 0)
        report_gaps(r);
    /* one axis for every point: event time only if every snapshot has one */
    size_t with_event = 0;
    for (size_t p = 0; p < r->npts; p++)
        with_event += r->pts[p].event_time;
    if (with_event && with_event < r->npts) {
        fprintf(stderr, "streamlda report: %zu of %zu snapshots carry no event time: the time "
                        "axis is each snapshot's last update for all\n",
                r->npts - with_event, r->npts);
        for (size_t p = 0; p < r->npts; p++) {
            r->pts[p].event_time = 0;
            r->pts[p].time_ms = r->pts[p].updated_ms;
        }
    }
    return rc;
}

static void gather_clear(gather_t *g)
{
    for (size_t i = 0; i < g->nents; i++)
        slda_snapdir_ent_clear(&g->ents[i]);
    free(g->ents);
    if (g->anchor) {
        for (uint32_t k = 0; k < g->r->K; k++) {
            for (uint32_t i = 0; i < g->anchor[k].n; i++)
                free(g->anchor[k].words[i]);
            free(g->anchor[k].words);
            free(g->anchor[k].probs);
        }
        free(g->anchor);
    }
}

void slda_report_changes(slda_report_t *r)
{
    slda_change_t *c;
    size_t n = slda_changes_find(r->win_docs, r->win_share, r->nwin, r->K, (double)r->warmup, &c);
    r->chg = slda_xcalloc(n ? n : 1, sizeof *r->chg);
    r->nchg = r->chgcap = n;
    for (size_t i = 0; i < n; i++) {
        slda_report_change_t *x = &r->chg[i];
        snprintf(x->kind, sizeof x->kind, "%s", c[i].fall ? "fall" : "rise");
        x->topic = c[i].topic;
        x->start_ms = r->win_start[c[i].window];
        x->before = c[i].before;
        x->after = c[i].after;
        x->z = c[i].z;
        x->docs_before = c[i].docs_before;
        x->docs_after = c[i].docs_after;
    }
    free(c);
}

int slda_report_collect(slda_report_t *r, const char *model)
{
    gather_t g;
    memset(&g, 0, sizeof g);
    g.r = r;
    int rc = report_list(&g, model) == 0 && report_points(&g) == 0 ? 0 : -1;
    gather_clear(&g);
    if (rc == 0) {
        slda_report_pick_tier(r);
        slda_report_changes(r);
    }
    return rc;
}

void slda_report_clear(slda_report_t *r)
{
    for (size_t i = 0; i < r->nskipped; i++)
        free(r->skipped[i]);
    free(r->skipped);
    for (size_t i = 0; i < r->npts; i++)
        free(r->pts[i].file);
    free(r->pts);
    free(r->weights);
    free(r->drift);
    free(r->ev);
    free(r->model_name);
    for (size_t t = 0; t < r->ntiers; t++) {
        free(r->tiers[t].start);
        free(r->tiers[t].docs);
        free(r->tiers[t].share);
        free(r->tiers[t].now);
    }
    free(r->tev);
    free(r->chg);
    for (uint32_t k = 0; r->label && k < r->K; k++) {
        free(r->label[k]);
        free(r->autolabel[k]);
    }
    free(r->label);
    free(r->autolabel);
    slda_report_examples_free(r->examples);
    slda_model_destroy(r->ref);
}
