/* cli_track.c - topic tracking commands: `topics` (with --weights, --json), `diff`, `report`.
 *
 * topics prints a snapshot's topics with their weights (shares of the topic totals NZ); diff
 * aligns the topics of two snapshots by optimal assignment on Jensen-Shannon distance
 * (src/track/align.c) and says what moved; report reads a directory of one model's snapshots
 * (<model>-<updates, 20 digits>.slda, as the service and `train --snapshot-dir` write them) and
 * writes a self-contained HTML page (inline CSS and SVG, no external resource) and a JSON file:
 * topics of the newest snapshot, each topic's weight over time, drift per slot between
 * consecutive snapshots, events. Snapshots that cannot be used (corrupt, another K, another
 * vocabulary, another model or run, a name that disagrees with the header) are skipped with a
 * message naming the file; they never reach a chart. At most two models are loaded at a time.
 * The time axis is the snapshots' event time (header event_ms, else the tracking state's
 * newest_ms) only when every snapshot has one; prevalence windows and the tracker's events come
 * from the states beside the snapshots (<snapshot>.track.json, docs/tracking.md).
 *
 * Also train's side of it (called from cli.c): snapshots into a directory along the way
 * (slda_cli_timeline_*) and JSON lines with an event time per document (slda_cli_timed_*), fed
 * to the tracker of src/track so the states beside those snapshots hold prevalence by event time.
 */
#include "track/align.h"
#include "io/outfile.h"
#include "cli/cli.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "io/docmsg.h"
#include "io/snapdir.h"
#include "track/track.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- shared helpers ---- */

static slda_model_t *track_load(const char *path, slda_snapshot_meta_t *meta, char *why,
                                size_t why_size)
{
    slda_err_t e;
    char err[1024];
    slda_model_t *model = slda_snapshot_read_meta(path, meta, &e, err, sizeof err);
    if (!model)
        snprintf(why, why_size, "%s (%s)", err, slda_err_name(e));
    return model;
}

/* A number option in [lo, hi]; -1 when it does not parse. */
static long opt_long(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

/* The top n words of topic k (ids into ids, count returned). */
static size_t topic_words(const slda_model_t *model, uint32_t k, size_t n, uint32_t *ids)
{
    float probs[1000];
    return slda_model_top_words(model, k, n > 1000 ? 1000 : n, ids, probs);
}

static void json_words(FILE *f, const slda_model_t *model, const uint32_t *ids, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        slda_json_write_string(f, slda_model_word(model, ids[i]));
    }
    fputc(']', f);
}

/* A double for JSON: finite with enough digits, else null. */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

/* ---- topics ---- */

static const char topics_usage[] =
    "Usage: streamlda topics [-n N] [--weights] [--json] SNAPSHOT\n"
    "Print the N most probable words of each topic (default 10), one topic a line:\n"
    "  topic K: word word ...\n"
    "  -n, --words N   words per topic\n"
    "  -w, --weights   print each topic's weight, its share of the topic totals NZ\n"
    "                  (the share of the model's tokens it holds):\n"
    "                    topic K 0.0421: word word ...\n"
    "      --json      one JSON object: {\"model\",\"K\",\"updates\",\"docs\",\"topics\":\n"
    "                  [{\"topic\",\"weight\",\"words\",\"probs\"}]}\n"
    "  -h, --help      this help\n"
    "Exit status 1 with the path and the reason for a snapshot that cannot be read.\n";

int slda_cli_topics(int argc, char **argv)
{
    static const struct option longopts[] = {{"words", required_argument, 0, 'n'},
                                             {"weights", no_argument, 0, 'w'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    long n = 10;
    int c, weights = 0, json = 0;
    char why[1200];
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:wh", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(topics_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'w') {
            weights = 1;
        } else if (c == 'j') {
            json = 1;
        } else if (c != 'n' || (n = opt_long(optarg, 1, 1000)) < 0) {
            fputs(topics_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fputs(topics_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = track_load(argv[optind], NULL, why, sizeof why);
    if (!model) {
        fprintf(stderr, "streamlda: %s\n", why);
        return SLDA_EXIT_FAIL;
    }
    uint32_t K = slda_model_topics(model);
    double *wt = slda_xmalloc(K * sizeof *wt);
    uint32_t *ids = slda_xmalloc((size_t)n * sizeof *ids);
    float *probs = slda_xmalloc((size_t)n * sizeof *probs);
    slda_align_weights(model, wt);
    if (json) {
        printf("{\"model\":");
        slda_json_write_string(stdout, slda_model_name(model) ? slda_model_name(model) : "");
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64
               ",\"weight\":\"share of NZ\",\"topics\":[",
               K, slda_model_updates(model), slda_model_docs(model));
    }
    for (uint32_t k = 0; k < K; k++) {
        size_t m = slda_model_top_words(model, k, (size_t)n, ids, probs);
        if (json) {
            printf("%s{\"topic\":%u,\"weight\":", k ? "," : "", k);
            json_num(stdout, wt[k]);
            printf(",\"words\":");
            json_words(stdout, model, ids, m);
            printf(",\"probs\":[");
            for (size_t i = 0; i < m; i++) {
                printf("%s", i ? "," : "");
                json_num(stdout, probs[i]);
            }
            printf("]}");
            continue;
        }
        if (weights)
            printf("topic %u %.4f:", k, wt[k]);
        else
            printf("topic %u:", k);
        for (size_t i = 0; i < m; i++)
            printf(" %s", slda_model_word(model, ids[i]));
        putchar('\n');
    }
    if (json)
        printf("]}\n");
    free(wt);
    free(ids);
    free(probs);
    slda_model_destroy(model);
    return SLDA_EXIT_OK;
}

/* ---- diff ---- */

static const char diff_usage[] =
    "Usage: streamlda diff [OPTIONS] A B\n"
    "Align the topics of two snapshots (or models) A and B: each topic of A is paired with one\n"
    "topic of B by optimal assignment (Hungarian algorithm) on the Jensen-Shannon distance of\n"
    "their word distributions, words matched by string (0 = the same distribution, 1 = no word\n"
    "in common). With different K the extra topics of the larger model are unmatched.\n"
    "  -n, --words N   words shown per topic and compared for gained/lost (default 10)\n"
    "      --top M     words per topic in the distance (default 100), plus one bucket for the\n"
    "                  rest of each distribution; 0 = full rows over both vocabularies (exact,\n"
    "                  O(K^2 W): slow for large K)\n"
    "      --json      one JSON object instead of text\n"
    "  -h, --help      this help\n"
    "Text output: one block per pair (in A's topic order), then unmatched topics, then\n"
    "  summary pairs=N identical=N moved=N mean_js=X median_js=X max_js=X unmatched_a=N\n"
    "          unmatched_b=N\n"
    "(identical: distance 0; moved: paired with a topic of another id).\n"
    "Exit status: 0 compared, 1 a snapshot cannot be read, 2 usage error.\n";

typedef struct diff_side_s {
    const char *path;
    slda_model_t *model;
    double *wt;
    uint32_t *ids; /* K x n top words */
    size_t *nids;
} diff_side_t;

static void diff_side_init(diff_side_t *s, size_t n)
{
    uint32_t K = slda_model_topics(s->model);
    s->wt = slda_xmalloc(K * sizeof *s->wt);
    slda_align_weights(s->model, s->wt);
    s->ids = slda_xmalloc((size_t)K * n * sizeof *s->ids);
    s->nids = slda_xmalloc(K * sizeof *s->nids);
    for (uint32_t k = 0; k < K; k++)
        s->nids[k] = topic_words(s->model, k, n, s->ids + (size_t)k * n);
}

static void diff_side_clear(diff_side_t *s)
{
    free(s->wt);
    free(s->ids);
    free(s->nids);
    slda_model_destroy(s->model);
}

/* The words of topic k of `from` whose string is not among topic j's of `in`. */
static size_t words_missing(const diff_side_t *from, uint32_t k, const diff_side_t *in,
                            uint32_t j, size_t n, const char **out)
{
    size_t m = 0;
    const uint32_t *fi = from->ids + (size_t)k * n, *ii = in->ids + (size_t)j * n;
    for (size_t x = 0; x < from->nids[k]; x++) {
        const char *w = slda_model_word(from->model, fi[x]);
        int found = 0;
        for (size_t y = 0; y < in->nids[j] && !found; y++)
            found = !strcmp(w, slda_model_word(in->model, ii[y]));
        if (!found)
            out[m++] = w;
    }
    return m;
}

static void print_strs(FILE *f, const char **w, size_t n, int json)
{
    if (json)
        fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (json) {
            if (i)
                fputc(',', f);
            slda_json_write_string(f, w[i]);
        } else {
            fprintf(f, " %s", w[i]);
        }
    }
    if (json)
        fputc(']', f);
}

static void print_topic_words(FILE *f, const diff_side_t *s, uint32_t k, size_t n, int json)
{
    if (json) {
        json_words(f, s->model, s->ids + (size_t)k * n, s->nids[k]);
        return;
    }
    for (size_t i = 0; i < s->nids[k]; i++)
        fprintf(f, " %s", slda_model_word(s->model, s->ids[(size_t)k * n + i]));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void diff_unmatched(const diff_side_t *s, const char *side, const char *used, size_t n,
                           int json, int *first)
{
    uint32_t K = slda_model_topics(s->model);
    for (uint32_t k = 0; k < K; k++) {
        if (used[k])
            continue;
        if (json) {
            printf("%s{\"topic\":%u,\"weight\":", *first ? "" : ",", k);
            json_num(stdout, s->wt[k]);
            printf(",\"words\":");
            print_topic_words(stdout, s, k, n, 1);
            printf("}");
            *first = 0;
        } else {
            printf("unmatched %s %u weight %.4f:", side, k, s->wt[k]);
            print_topic_words(stdout, s, k, n, 0);
            putchar('\n');
        }
    }
}

int slda_cli_diff(int argc, char **argv)
{
    static const struct option longopts[] = {{"words", required_argument, 0, 'n'},
                                             {"top", required_argument, 0, 't'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    long n = 10, top = SLDA_ALIGN_TOP_DEFAULT;
    int c, json = 0, rc = SLDA_EXIT_FAIL;
    char why[1200], err[512];
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(diff_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'n' && (n = opt_long(optarg, 1, 1000)) >= 0) {
            continue;
        } else if (c == 't' && (top = opt_long(optarg, 0, 1000000000)) >= 0) {
            continue;
        } else {
            fputs(diff_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) {
        fputs(diff_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    diff_side_t a = {argv[optind], NULL, NULL, NULL, NULL};
    diff_side_t b = {argv[optind + 1], NULL, NULL, NULL, NULL};
    if (!(a.model = track_load(a.path, NULL, why, sizeof why)) ||
        !(b.model = track_load(b.path, NULL, why, sizeof why))) {
        fprintf(stderr, "streamlda: %s\n", why);
        slda_model_destroy(a.model);
        return SLDA_EXIT_FAIL;
    }
    uint32_t Ka = slda_model_topics(a.model), Kb = slda_model_topics(b.model);
    double *dist = slda_xmalloc((size_t)Ka * Kb * sizeof *dist);
    int32_t *r2c = slda_xmalloc(Ka * sizeof *r2c);
    char *used_a = slda_xcalloc(Ka, 1), *used_b = slda_xcalloc(Kb, 1);
    const char **gained = slda_xmalloc((size_t)n * sizeof *gained);
    const char **lost = slda_xmalloc((size_t)n * sizeof *lost);
    double *js = slda_xmalloc((Ka < Kb ? Ka : Kb) * sizeof *js + 1);
    if (slda_align_distances(a.model, b.model, (uint32_t)top, dist, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda diff: %s\n", err);
        goto out;
    }
    slda_align_assign(dist, Ka, Kb, r2c);
    diff_side_init(&a, (size_t)n);
    diff_side_init(&b, (size_t)n);
    if (json) {
        printf("{\"a\":{\"path\":");
        slda_json_write_string(stdout, a.path);
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64 "},\"b\":{\"path\":", Ka,
               slda_model_updates(a.model), slda_model_docs(a.model));
        slda_json_write_string(stdout, b.path);
        printf(",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64
               "},\"words_compared\":%ld,\"pairs\":[",
               Kb, slda_model_updates(b.model), slda_model_docs(b.model), top);
    }
    size_t npairs = 0, identical = 0, moved = 0;
    double sum = 0;
    for (uint32_t i = 0; i < Ka; i++) {
        if (r2c[i] < 0)
            continue;
        uint32_t j = (uint32_t)r2c[i];
        double d = dist[(size_t)i * Kb + j];
        used_a[i] = used_b[j] = 1;
        js[npairs++] = d;
        sum += d;
        identical += d == 0;
        moved += i != j;
        size_t ng = words_missing(&b, j, &a, i, (size_t)n, gained);
        size_t nl = words_missing(&a, i, &b, j, (size_t)n, lost);
        if (json) {
            printf("%s{\"a\":%u,\"b\":%u,\"js\":", npairs > 1 ? "," : "", i, j);
            json_num(stdout, d);
            printf(",\"weight_a\":");
            json_num(stdout, a.wt[i]);
            printf(",\"weight_b\":");
            json_num(stdout, b.wt[j]);
            printf(",\"words_a\":");
            print_topic_words(stdout, &a, i, (size_t)n, 1);
            printf(",\"words_b\":");
            print_topic_words(stdout, &b, j, (size_t)n, 1);
            printf(",\"gained\":");
            print_strs(stdout, gained, ng, 1);
            printf(",\"lost\":");
            print_strs(stdout, lost, nl, 1);
            printf("}");
        } else {
            printf("pair %u -> %u js %.6f weight %.4f -> %.4f\n  a:", i, j, d, a.wt[i], b.wt[j]);
            print_topic_words(stdout, &a, i, (size_t)n, 0);
            printf("\n  b:");
            print_topic_words(stdout, &b, j, (size_t)n, 0);
            printf("\n  gained:");
            print_strs(stdout, gained, ng, 0);
            printf("\n  lost:");
            print_strs(stdout, lost, nl, 0);
            putchar('\n');
        }
    }
    int first = 1;
    if (json)
        printf("],\"unmatched_a\":[");
    diff_unmatched(&a, "a", used_a, (size_t)n, json, &first);
    first = 1;
    if (json)
        printf("],\"unmatched_b\":[");
    diff_unmatched(&b, "b", used_b, (size_t)n, json, &first);
    qsort(js, npairs, sizeof *js, cmp_double);
    double mean = npairs ? sum / npairs : 0;
    double median = !npairs ? 0 : npairs % 2 ? js[npairs / 2]
                                            : 0.5 * (js[npairs / 2 - 1] + js[npairs / 2]);
    double max = npairs ? js[npairs - 1] : 0;
    if (json)
        printf("],\"summary\":{\"pairs\":%zu,\"identical\":%zu,\"moved\":%zu,\"mean_js\":%.6f,"
               "\"median_js\":%.6f,\"max_js\":%.6f,\"unmatched_a\":%u,\"unmatched_b\":%u}}\n",
               npairs, identical, moved, mean, median, max, Ka - (uint32_t)npairs,
               Kb - (uint32_t)npairs);
    else
        printf("summary pairs=%zu identical=%zu moved=%zu mean_js=%.6f median_js=%.6f "
               "max_js=%.6f unmatched_a=%u unmatched_b=%u\n",
               npairs, identical, moved, mean, median, max, Ka - (uint32_t)npairs,
               Kb - (uint32_t)npairs);
    rc = SLDA_EXIT_OK;
out:
    free(dist);
    free(r2c);
    free(used_a);
    free(used_b);
    free(gained);
    free(lost);
    free(js);
    diff_side_clear(&a);
    diff_side_clear(&b);
    return rc;
}

/* ---- report ---- */

static const char report_usage[] =
    "Usage: streamlda report SNAPSHOT_DIR [--html FILE] [--json FILE] [OPTIONS]\n"
    "A static report of a run from the snapshots in SNAPSHOT_DIR (<model>-<updates>.slda, as\n"
    "`run` and `train --snapshot-dir` write them), ordered by update count: the topics of the\n"
    "newest snapshot with their weights and top words, each topic's weight over time (the\n"
    "snapshots' newest event time when they carry one, else the time of their last update),\n"
    "its drift (Jensen-Shannon distance of the same slot between consecutive snapshots) and\n"
    "events: change (drift >= --change), taken (a slot whose new words match no previous\n"
    "topic), drift (a slot >= --change away from its words at its last event, or after the\n"
    "warm-up: a change spread over several snapshots), moved (a slot's previous topic now best\n"
    "matches another slot), rise/fall (weight doubled/halved). The HTML is one file with\n"
    "inline CSS and SVG, no external resource.\n"
    "  --html FILE        write the HTML report ('-': standard output)\n"
    "  --json FILE        write the same data as JSON ('-': standard output)\n"
    "  --model NAME       the model to report (default: the one with most snapshots)\n"
    "  -n, --words N      words shown per topic (default 10)\n"
    "  --top M            words per topic in the distances (default 100; 0 = full rows)\n"
    "  --change X         drift that makes a change event, 0..1 (default 0.5)\n"
    "  --warmup N         no events from a snapshot of fewer than N documents to the next\n"
    "                     (default 1000, as track.warmup.docs: a new model's drift is learning)\n"
    "  -h, --help         this help\n"
    "Snapshots that cannot be used (corrupt or truncated, another K, another vocabulary,\n"
    "another model or another run of it, a file name that disagrees with its header) are\n"
    "skipped with a message naming the file and listed in the report; gaps in the sequence\n"
    "are reported. Exit status: 0 written (even with skipped files), 1 no usable snapshot or a\n"
    "file cannot be written, 2 usage error.\n";

typedef struct rpoint_s {
    const char *file;
    uint64_t t, docs;
    int64_t time_ms;
    int event_time;  /* time_ms is an event time (else the last update's wall clock) */
    int64_t updated_ms;
    int gap_before;  /* a snapshot is missing (skipped, or a step much longer than usual) */
} rpoint_t;

typedef struct revent_s {
    size_t point;
    uint32_t topic, other; /* other: UINT32_MAX unless moved */
    char kind[8];
    double js, w0, w1;
    char words[400];
} revent_t;

typedef struct report_s {
    const char *dir;
    char *model_name;
    uint32_t K, nwords, top;
    double change;
    uint64_t warmup; /* no events while the earlier snapshot of a step has fewer documents */
    slda_snapdir_ent_t *ents; /* the chosen model's snapshots, oldest first */
    size_t nents;
    rpoint_t *pts;
    size_t npts;
    double *weights; /* npts x K */
    double *drift;   /* npts x K, NAN at the first point */
    revent_t *ev;
    size_t nev, evcap;
    char **skipped;  /* "file: reason" */
    size_t nskipped, skipcap;
    slda_model_t *ref; /* the newest usable snapshot, once every point is in */
    int have_ref;      /* K, vocabulary and run below are the newest usable snapshot's */
    int64_t event_ms;  /* the header's event_ms of the snapshot report_load returned last */
    int64_t created_ms;
    uint64_t hash_seed;
    int fixed;
    uint32_t W;
    /* the tracker's prevalence windows (sidecars <snapshot>.track.json), merged over every
     * snapshot's sidecar, a newer sidecar's value of a window winning */
    int64_t win_ms;
    int64_t *win_start;
    double *win_docs;
    double *win_share; /* nwin x K */
    size_t nwin, wincap;
    size_t nsidecars;
    /* per slot, its words at its anchor snapshot (after the warm-up, then at its last event):
     * drift accumulated over several snapshots is measured against them */
    struct anchor_s {
        char **words;
        double *probs;
        uint32_t n;
        size_t point;
    } *anchor;
    /* the events the tracker recorded while training (in the sidecars; merged, oldest first) */
    slda_track_event_t *tev;
    size_t ntev, tevcap;
} report_t;

static void report_skip(report_t *r, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_skip(report_t *r, const char *file, const char *fmt, ...)
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

/* Snapshot files of the chosen model in r->ents, by update count. */
static int report_list(report_t *r, const char *want_model)
{
    char err[4400];
    slda_snapdir_list_t all; /* every model's, in directory order */
    if (slda_snapdir_scan(&all, r->dir, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        slda_snapdir_list_clear(&all);
        return -1;
    }
    for (size_t i = 0; i < all.nodd; i++)
        report_skip(r, all.odd[i], "not a snapshot file name (<model>-<20-digit update count>.slda)");
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
            r->ents = slda_xrealloc(r->ents, (r->nents + 1) * sizeof *r->ents);
            r->ents[r->nents++] = all.ents[i];
            memset(&all.ents[i], 0, sizeof all.ents[i]); /* now r's */
            continue;
        }
        report_skip(r, all.ents[i].file, "a snapshot of model \"%s\", not \"%s\"%s",
                    all.ents[i].model, model ? model : "",
                    want_model ? "" : " (choose with --model)");
    }
    slda_snapdir_list_clear(&all);
    if (!r->nents) {
        fprintf(stderr, "streamlda report: no snapshot%s%s%s in \"%s\"\n",
                model ? " of model \"" : "", model ? model : "", model ? "\"" : "", r->dir);
        return -1;
    }
    slda_snapdir_sort(r->ents, r->nents);
    return 0;
}

/* The time of a snapshot on the report's axis: the newest event time in its header (event_ms,
 * docs/snapshot-format.md) when it has one, else its last update (wall clock). */
static int64_t snap_time(const report_t *r, const slda_model_t *model, int *event_time)
{
    *event_time = r->event_ms > 0;
    return r->event_ms > 0 ? r->event_ms : slda_model_updated_ms(model);
}

/* Load ents[i]; NULL (and the file skipped with the reason) when it cannot be used. The first
 * model accepted (the newest, r->have_ref 0) sets what the others must match. */
static slda_model_t *report_load(report_t *r, size_t i)
{
    char why[1200];
    const slda_snapdir_ent_t *e = &r->ents[i];
    slda_snapshot_meta_t meta = {0};
    slda_model_t *model = track_load(e->path, &meta, why, sizeof why);
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
    } else if (r->have_ref && slda_model_topics(model) != r->K) {
        snprintf(detail, sizeof detail, "K=%u, the newest snapshot has K=%u",
                 slda_model_topics(model), r->K);
        what = detail;
    } else if (r->have_ref && (slda_vocab_is_fixed(slda_model_vocab(model)) != r->fixed ||
                          slda_vocab_seed(slda_model_vocab(model)) != r->hash_seed ||
                          (r->fixed && slda_model_rows(model) != r->W))) {
        snprintf(detail, sizeof detail,
                 "another vocabulary (%s, %u rows, hash seed %" PRIu64 "; the newest snapshot: "
                 "%s, %u rows, hash seed %" PRIu64 ")",
                 slda_vocab_is_fixed(slda_model_vocab(model)) ? "fixed" : "open", slda_model_rows(model),
                 slda_vocab_seed(slda_model_vocab(model)), r->fixed ? "fixed" : "open", r->W, r->hash_seed);
        what = detail;
    } else if (r->have_ref && slda_model_created_ms(model) != r->created_ms) {
        snprintf(detail, sizeof detail,
                 "another run of model \"%s\" (created at %" PRId64 " ms, the newest snapshot's "
                 "model at %" PRId64 " ms)", name, slda_model_created_ms(model), r->created_ms);
        what = detail;
    }
    if (what) {
        report_skip(r, e->file, "%s", what);
        slda_model_destroy(model);
        return NULL;
    }
    r->event_ms = meta.event_ms;
    return model;
}

static void words_of(const slda_model_t *model, uint32_t k, size_t n, char *buf, size_t size)
{
    uint32_t ids[32];
    size_t m = topic_words(model, k, n > 32 ? 32 : n, ids), used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < m && used + 1 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? " " : "",
                         slda_model_word(model, ids[i]));
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

static revent_t *report_event(report_t *r, size_t point, uint32_t k, const char *kind)
{
    if (r->nev == r->evcap) {
        r->evcap = r->evcap ? 2 * r->evcap : 32;
        r->ev = slda_xrealloc(r->ev, r->evcap * sizeof *r->ev);
    }
    revent_t *ev = &r->ev[r->nev++];
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
static void anchor_set(report_t *r, uint32_t k, const slda_model_t *model, size_t p)
{
    struct anchor_s *an = &r->anchor[k];
    for (uint32_t i = 0; i < an->n; i++)
        free(an->words[i]);
    uint32_t want = r->top ? (r->top < 1000 ? r->top : 1000) : SLDA_ALIGN_TOP_DEFAULT;
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
static double anchor_dist(const report_t *r, uint32_t k, const slda_model_t *model)
{
    const struct anchor_s *an = &r->anchor[k];
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

/* Drift and events between the previous accepted snapshot and this one (point p). */
static int report_step(report_t *r, const slda_model_t *prev, const slda_model_t *cur, size_t p)
{
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
    if (!quiet && !r->anchor) { /* the first step past the warm-up: anchors at its start */
        r->anchor = slda_xcalloc(K, sizeof *r->anchor);
        for (uint32_t k = 0; k < K; k++)
            anchor_set(r, k, prev, p - 1);
    }
    for (uint32_t k = 0; k < K; k++) {
        double dk = d[(size_t)k * K + k];
        r->drift[p * K + k] = dk;
        revent_t *ev = NULL;
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
            anchor_set(r, k, cur, p);
        } else {
            /* a change spread over several snapshots: far from the slot's anchor */
            double da = anchor_dist(r, k, cur);
            if (da >= r->change) {
                ev = report_event(r, p, k, "drift");
                ev->js = da;
                char now[180], was[180] = "";
                const struct anchor_s *an = &r->anchor[k];
                words_of(cur, k, 8, now, sizeof now);
                for (uint32_t i = 0, used = 0; i < an->n && i < 8; i++) {
                    int n = snprintf(was + used, sizeof was - used, "%s%s", i ? " " : "",
                                     an->words[i]);
                    if (n < 0 || (size_t)n >= sizeof was - used)
                        break;
                    used += (uint32_t)n;
                }
                snprintf(ev->words, sizeof ev->words, "%s (was at %s: %s)", now,
                         r->pts[an->point].file, was);
                anchor_set(r, k, cur, p);
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
        revent_t *ev = &r->ev[e];
        if (ev->point != p)
            continue;
        ev->w0 = w0[ev->topic];
        ev->w1 = w1[ev->topic];
        if (ev->words[0])
            continue; /* drift: written when found */
        if (!ev->js)
            ev->js = d[(size_t)ev->topic * K + ev->topic];
        char now[180], was[180];
        words_of(cur, ev->topic, 8, now, sizeof now);
        if (!strcmp(ev->kind, "taken") || !strcmp(ev->kind, "change")) {
            words_of(prev, ev->topic, 8, was, sizeof was);
            snprintf(ev->words, sizeof ev->words, "%s (was: %s)", now, was);
        } else if (!strcmp(ev->kind, "moved")) {
            words_of(prev, ev->topic, 8, was, sizeof was);
            snprintf(ev->words, sizeof ev->words, "%s", was);
        } else {
            snprintf(ev->words, sizeof ev->words, "%s", now);
        }
    }
    free(d);
    free(r2c);
    return 0;
}

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
static void report_window(report_t *r, int64_t start, double docs, const double *sums)
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
static void report_sidecar_events(report_t *r, const slda_json_t *js)
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

/* The tracker's state beside snapshot ents[i] (docs/tracking.md, "Sidecar"): its newest event
 * time into *newest_ms and its prevalence windows into the merged list. 0 when there is none,
 * 1 when used, -1 when it is there but unusable (reported, and then ignored). */
static int report_sidecar(report_t *r, size_t i, const slda_model_t *model, int64_t *newest_ms)
{
    char path[4200], err[512];
    slda_snapdir_track_path(path, sizeof path, r->ents[i].path);
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

/* Add model (ents[i]) as the next point; prev (may be NULL) is the previous accepted one. */
static int report_add(report_t *r, size_t i, const slda_model_t *prev, const slda_model_t *model,
                      int skipped_before)
{
    size_t p = r->npts++;
    rpoint_t *pt = &r->pts[p];
    pt->file = r->ents[i].file;
    pt->t = slda_model_updates(model);
    pt->docs = slda_model_docs(model);
    pt->time_ms = snap_time(r, model, &pt->event_time);
    pt->updated_ms = slda_model_updated_ms(model);
    int64_t newest = 0;
    /* the tracking state's newest time stands in for a header without event_ms (snapshots
     * written before the key) */
    if (report_sidecar(r, i, model, &newest) == 1 && newest > 0 && !pt->event_time) {
        pt->time_ms = newest;
        pt->event_time = 1;
    }
    pt->gap_before = p > 0 && skipped_before;
    slda_align_weights(model, r->weights + p * r->K);
    for (uint32_t k = 0; k < r->K; k++)
        r->drift[p * r->K + k] = NAN;
    return prev ? report_step(r, prev, model, p) : 0;
}

/* Steps much longer than usual (over twice the median) are gaps too: a snapshot was lost or
 * pruned there, and the chart must not pretend the line in between was observed. */
static void report_gaps(report_t *r)
{
    if (r->npts < 3)
        return;
    size_t n = r->npts - 1;
    double *steps = slda_xmalloc(n * sizeof *steps);
    for (size_t p = 1; p < r->npts; p++)
        steps[p - 1] = (double)(r->pts[p].t - r->pts[p - 1].t);
    qsort(steps, n, sizeof *steps, cmp_double);
    double median = steps[n / 2];
    free(steps);
    for (size_t p = 1; p < r->npts; p++) {
        double step = (double)(r->pts[p].t - r->pts[p - 1].t);
        if (step > 2 * median && !r->pts[p].gap_before) {
            r->pts[p].gap_before = 1;
            fprintf(stderr,
                    "streamlda report: gap in %s: %" PRIu64 " updates between %s and %s (usually "
                    "%.0f)\n",
                    r->dir, r->pts[p].t - r->pts[p - 1].t, r->pts[p - 1].file, r->pts[p].file,
                    median);
        }
    }
}

static int report_collect(report_t *r)
{
    /* the newest snapshot that loads sets K, the vocabulary and the run; it is loaded again
     * in turn, so that no more than two models (1 GB at K=1000) are in memory at a time */
    size_t refi = r->nents;
    slda_model_t *ref = NULL;
    while (refi-- > 0) {
        if ((ref = report_load(r, refi)))
            break;
    }
    if (!ref) {
        fprintf(stderr, "streamlda report: no usable snapshot of model \"%s\" in \"%s\"\n",
                r->model_name, r->dir);
        return -1;
    }
    r->K = slda_model_topics(ref);
    r->created_ms = slda_model_created_ms(ref);
    r->hash_seed = slda_vocab_seed(slda_model_vocab(ref));
    r->fixed = slda_vocab_is_fixed(slda_model_vocab(ref));
    r->W = slda_model_rows(ref);
    r->have_ref = 1;
    slda_model_destroy(ref);
    r->pts = slda_xcalloc(refi + 1, sizeof *r->pts);
    r->weights = slda_xmalloc((refi + 1) * r->K * sizeof *r->weights);
    r->drift = slda_xmalloc((refi + 1) * r->K * sizeof *r->drift);
    slda_model_t *prev = NULL;
    size_t skipped = r->nskipped;
    int rc = 0;
    for (size_t i = 0; i <= refi && rc == 0; i++) {
        slda_model_t *model = report_load(r, i);
        if (!model)
            continue;
        rc = report_add(r, i, prev, model, r->nskipped != skipped);
        skipped = r->nskipped;
        slda_model_destroy(prev);
        prev = model;
    }
    r->ref = prev; /* the newest point: its topics head the report */
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

static void report_free(report_t *r)
{
    for (size_t i = 0; i < r->nents; i++)
        slda_snapdir_ent_clear(&r->ents[i]);
    for (size_t i = 0; i < r->nskipped; i++)
        free(r->skipped[i]);
    free(r->skipped);
    free(r->ents);
    free(r->pts);
    free(r->weights);
    free(r->drift);
    free(r->ev);
    free(r->model_name);
    free(r->win_start);
    free(r->win_docs);
    free(r->win_share);
    free(r->tev);
    if (r->anchor) {
        for (uint32_t k = 0; k < r->K; k++) {
            for (uint32_t i = 0; i < r->anchor[k].n; i++)
                free(r->anchor[k].words[i]);
            free(r->anchor[k].words);
            free(r->anchor[k].probs);
        }
        free(r->anchor);
    }
    slda_model_destroy(r->ref);
}

/* ---- report: JSON ---- */

static void report_json(const report_t *r, FILE *f)
{
    uint32_t K = r->K;
    size_t last = r->npts - 1;
    fprintf(f, "{\"model\":");
    slda_json_write_string(f, r->model_name);
    fprintf(f, ",\"dir\":");
    slda_json_write_string(f, r->dir);
    fprintf(f, ",\"K\":%u,\"time\":\"%s\",\"snapshots\":[", K,
            r->pts[last].event_time ? "event" : "updated");
    for (size_t p = 0; p < r->npts; p++) {
        const rpoint_t *pt = &r->pts[p];
        fprintf(f, "%s{\"file\":", p ? "," : "");
        slda_json_write_string(f, pt->file);
        fprintf(f, ",\"updates\":%" PRIu64 ",\"docs\":%" PRIu64 ",\"time_ms\":%" PRId64
                   ",\"event_time\":%s,\"gap_before\":%s}",
                pt->t, pt->docs, pt->time_ms, pt->event_time ? "true" : "false",
                pt->gap_before ? "true" : "false");
    }
    fprintf(f, "],\"topics\":[");
    uint32_t *ids = slda_xmalloc(r->nwords * sizeof *ids);
    for (uint32_t k = 0; k < K; k++) {
        size_t m = topic_words(r->ref, k, r->nwords, ids);
        fprintf(f, "%s{\"topic\":%u,\"weight\":", k ? "," : "", k);
        json_num(f, r->weights[last * K + k]);
        fprintf(f, ",\"words\":");
        json_words(f, r->ref, ids, m);
        fprintf(f, ",\"weights\":[");
        for (size_t p = 0; p < r->npts; p++) {
            fputs(p ? "," : "", f);
            json_num(f, r->weights[p * K + k]);
        }
        fprintf(f, "],\"drift\":[");
        for (size_t p = 0; p < r->npts; p++) {
            fputs(p ? "," : "", f);
            json_num(f, r->drift[p * K + k]);
        }
        fprintf(f, "]}");
    }
    free(ids);
    fprintf(f, "],\"events\":[");
    for (size_t e = 0; e < r->nev; e++) {
        const revent_t *ev = &r->ev[e];
        fprintf(f, "%s{\"kind\":\"%s\",\"topic\":%u,", e ? "," : "", ev->kind, ev->topic);
        if (ev->other != UINT32_MAX)
            fprintf(f, "\"to\":%u,", ev->other);
        fprintf(f, "\"snapshot\":");
        slda_json_write_string(f, r->pts[ev->point].file);
        fprintf(f, ",\"time_ms\":%" PRId64 ",\"js\":", r->pts[ev->point].time_ms);
        json_num(f, ev->js);
        fprintf(f, ",\"weight_before\":");
        json_num(f, ev->w0);
        fprintf(f, ",\"weight_after\":");
        json_num(f, ev->w1);
        fprintf(f, ",\"words\":");
        slda_json_write_string(f, ev->words);
        fputc('}', f);
    }
    fprintf(f, "],\"prevalence\":{\"window_ms\":%" PRId64 ",\"windows\":[", r->win_ms);
    for (size_t w = 0; w < r->nwin; w++) {
        fprintf(f, "%s{\"start_ms\":%" PRId64 ",\"docs\":", w ? "," : "", r->win_start[w]);
        json_num(f, r->win_docs[w]);
        fprintf(f, ",\"share\":[");
        for (uint32_t k = 0; k < K; k++) {
            fputs(k ? "," : "", f);
            json_num(f, r->win_share[w * K + k]);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]},\"tracker_events\":[");
    for (size_t e = 0; e < r->ntev; e++) {
        const slda_track_event_t *ev = &r->tev[e];
        fprintf(f, "%s{\"kind\":", e ? "," : "");
        slda_json_write_string(f, ev->kind);
        fprintf(f, ",\"topic\":%u", ev->topic);
        if (ev->other != UINT32_MAX)
            fprintf(f, ",\"other\":%u", ev->other);
        fprintf(f, ",\"event_ms\":%" PRId64 ",\"update\":%" PRIu64 ",\"js\":", ev->event_ms,
                ev->update);
        json_num(f, ev->js >= 0 ? ev->js : NAN);
        fprintf(f, ",\"words\":");
        slda_json_write_string(f, ev->words);
        fputc('}', f);
    }
    fprintf(f, "],\"skipped\":[");
    for (size_t i = 0; i < r->nskipped; i++) {
        fputs(i ? "," : "", f);
        slda_json_write_string(f, r->skipped[i]);
    }
    fprintf(f, "]}\n");
}

/* ---- report: HTML ---- */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* UTC date, with the time when the report spans less than three days (seconds under an
 * hour). */
static void fmt_time(int64_t ms, int64_t span_ms, char *buf, size_t size)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, size, span_ms < 3600LL * 1000 ? "%Y-%m-%d %H:%M:%S"
                        : span_ms < 3LL * 86400 * 1000 ? "%Y-%m-%d %H:%M" : "%Y-%m-%d", &tm);
}

/* Month (or, under 60 days, week) ticks across a plot: faint lines with a label at the top. */
static void html_ticks(FILE *f, int64_t t0, int64_t t1, double L, double pw, double T, double ph)
{
    if (t1 - t0 < 14LL * 86400 * 1000)
        return; /* two weeks or less: the end labels say enough */
    int monthly = t1 - t0 >= 60LL * 86400 * 1000;
    time_t s = (time_t)(t0 / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    if (monthly) {
        tm.tm_mday = 1;
        tm.tm_mon++;
    } else {
        tm.tm_mday += (8 - tm.tm_wday) % 7 ? (8 - tm.tm_wday) % 7 : 7; /* the next Monday */
    }
    int n = 0;
    for (;;) {
        time_t at = timegm(&tm);
        int64_t ms = (int64_t)at * 1000;
        if (ms >= t1 || n++ > 60)
            break;
        double x = L + pw * (double)(ms - t0) / (double)(t1 - t0);
        char label[16];
        strftime(label, sizeof label, monthly ? "%b" : "%d %b", &tm);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e3e6ea\"/>"
                   "<text x=\"%.1f\" y=\"%.0f\" font-size=\"7\" fill=\"#8a93a0\">%s</text>\n",
                x, T, x, T + ph, x + 1.5, T + 7, label);
        if (monthly)
            tm.tm_mon++;
        else
            tm.tm_mday += 7;
        tm.tm_isdst = 0;
        timegm(&tm); /* normalise */
    }
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>streamlda report</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;"
    "padding:16px 20px;color:#1d2430;background:#f6f7f9}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px}\n"
    ".meta{color:#5b6472;margin:0 0 10px}\n"
    "table{border-collapse:collapse;background:#fff;width:100%}\n"
    "td,th{border-bottom:1px solid #e3e6ea;padding:3px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#eef0f3;font-weight:600}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}\n"
    ".bar{display:inline-block;height:9px;background:#3b6fb6;vertical-align:middle}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:10px}\n"
    ".card{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:8px 10px}\n"
    ".card h3{font-size:13px;margin:0 0 2px}.card .w{color:#5b6472;font-size:12px;"
    "margin:0 0 4px;min-height:32px}\n"
    "svg{display:block;width:100%;height:auto}\n"
    ".ev-change,.ev-taken,.ev-drift{color:#b3261e}.ev-moved{color:#7a4cb0}.ev-rise{color:#1e7a3c}"
    ".ev-fall{color:#9a6a00}\n"
    ".skip{color:#b3261e}.legend{color:#5b6472;font-size:12px}\n"
    "</style></head><body>\n";

/* One topic's chart: weight over time (blue; gaps dashed), drift bars (orange, 0..1 on the
 * lower band), events as red dots. Fixed viewBox so every chart has the same axes size. */
static void html_chart(FILE *f, const report_t *r, uint32_t k, int64_t t0, int64_t t1)
{
    const double Wd = 320, Hd = 120, L = 40, R = 8, T = 8, B = 20, band = 22;
    double pw = Wd - L - R, ph = Hd - T - B - band - 4;
    uint32_t K = r->K;
    double ymax = 0;
    for (size_t p = 0; p < r->npts; p++)
        if (r->weights[p * K + k] > ymax)
            ymax = r->weights[p * K + k];
    ymax = ymax > 0 ? ymax * 1.1 : 1.0 / K;
    double span = (double)(t1 - t0);
#define XOF(p) (span > 0 ? L + pw * (double)(r->pts[p].time_ms - t0) / span : L + pw / 2)
#define YOF(v) (T + ph - ph * (v) / ymax)
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"topic %u weight over "
               "time\" class=\"chart\" data-topic=\"%u\">\n", Wd, Hd, k, k);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfcfd\" "
               "stroke=\"#d5d9df\"/>\n", L, T, pw, ph);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%.1f%%</text>\n", L - 3, T + 8, 100 * ymax);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">0</text>\n", L - 3, T + ph);
    html_ticks(f, t0, t1, L, pw, T, ph);
    /* drift band */
    double by = T + ph + 4;
    fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fdf8f2\" "
               "stroke=\"#eadccb\"/>\n", L, by, pw, band);
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"8\" text-anchor=\"end\" "
               "fill=\"#a0652a\">drift</text>\n", L - 3, by + band / 2 + 3);
    for (size_t p = 1; p < r->npts; p++) {
        double dv = r->drift[p * K + k];
        if (!isfinite(dv))
            continue;
        double h = band * (dv > 1 ? 1 : dv);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"%.1f\" fill=\"%s\">"
                   "<title>drift %.3f</title></rect>\n",
                XOF(p) - 1, by + band - h, h, dv >= r->change ? "#b3261e" : "#e08a2c", dv);
    }
    /* the weight line, dashed across gaps */
    for (size_t p = 1; p < r->npts; p++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#3b6fb6\" "
                   "stroke-width=\"1.6\"%s/>\n",
                XOF(p - 1), YOF(r->weights[(p - 1) * K + k]), XOF(p), YOF(r->weights[p * K + k]),
                r->pts[p].gap_before ? " stroke-dasharray=\"3 3\"" : "");
    for (size_t p = 0; p < r->npts; p++) {
        int event = 0;
        for (size_t e = 0; e < r->nev && !event; e++)
            event = r->ev[e].point == p && r->ev[e].topic == k;
        if (!event && r->npts > 60)
            continue;
        fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>%s: "
                   "%.2f%%</title></circle>\n",
                XOF(p), YOF(r->weights[p * K + k]), event ? "2.8" : "1.8",
                event ? "#b3261e" : "#3b6fb6", r->pts[p].file, 100 * r->weights[p * K + k]);
    }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" fill=\"#5b6472\">%s</text>\n", L,
            Hd - 4, a);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%s</text>\n</svg>\n", Wd - R, Hd - 4, b);
#undef XOF
#undef YOF
}

/* Topic k's share of the documents in each event-time window (k == UINT32_MAX: the number of
 * documents per window, as bars). Windows without documents are absent from the sidecars, so
 * the line breaks there instead of interpolating across them. */
static void html_prev_chart(FILE *f, const report_t *r, uint32_t k, int64_t t0, int64_t t1)
{
    const double Wd = 320, Hd = 84, L = 40, R = 8, T = 6, B = 18;
    double pw = Wd - L - R, ph = Hd - T - B;
    uint32_t K = r->K;
    double span = t1 > t0 ? (double)(t1 - t0) : 1, ymax = 0;
    for (size_t w = 0; w < r->nwin; w++) {
        double v = k == UINT32_MAX ? r->win_docs[w] : r->win_share[w * K + k];
        ymax = v > ymax ? v : ymax;
    }
    ymax = ymax > 0 ? ymax * 1.1 : 1;
#define WX(w) (L + pw * ((double)(r->win_start[w] - t0) + 0.5 * r->win_ms) / span)
#define WY(v) (T + ph - ph * (v) / ymax)
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" class=\"prev\" aria-label=\"%s by "
               "event-time window\">\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
               "height=\"%.0f\" fill=\"#f7fbf8\" stroke=\"#cfe0d4\"/>\n",
            Wd, Hd, k == UINT32_MAX ? "documents" : "share of documents", L, T, pw, ph);
    if (k == UINT32_MAX)
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
                   "fill=\"#5b6472\">%.0f</text>\n", L - 3, T + 8, ymax);
    else
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
                   "fill=\"#5b6472\">%.1f%%</text>\n", L - 3, T + 8, 100 * ymax);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">0</text>\n", L - 3, T + ph);
    html_ticks(f, t0, t1, L, pw, T, ph);
    double bw = pw * (double)r->win_ms / span;
    for (size_t w = 0; w < r->nwin; w++) {
        if (k == UINT32_MAX) {
            double h = ph * r->win_docs[w] / ymax;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                       "fill=\"#2e8b57\"/>\n", WX(w) - bw / 2, T + ph - h, bw > 1 ? bw : 1, h);
        } else if (w > 0 && r->win_start[w] - r->win_start[w - 1] == r->win_ms) {
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "stroke=\"#2e8b57\" stroke-width=\"1.3\"/>\n",
                    WX(w - 1), WY(r->win_share[(w - 1) * K + k]), WX(w),
                    WY(r->win_share[w * K + k]));
        }
    }
    if (k != UINT32_MAX) /* a lone window (no neighbour) still shows */
        for (size_t w = 0; w < r->nwin; w++) {
            int left = w > 0 && r->win_start[w] - r->win_start[w - 1] == r->win_ms;
            int right = w + 1 < r->nwin && r->win_start[w + 1] - r->win_start[w] == r->win_ms;
            if (!left && !right)
                fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"1.4\" fill=\"#2e8b57\"/>\n",
                        WX(w), WY(r->win_share[w * K + k]));
        }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" fill=\"#5b6472\">%s</text>\n"
               "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%s</text>\n</svg>\n",
            L, Hd - 3, a, Wd - R, Hd - 3, b);
#undef WX
#undef WY
}

static const char *window_name(int64_t ms)
{
    return ms == 60000 ? "minute" : ms == 3600000 ? "hour" : ms == 86400000 ? "day"
         : ms == 7 * 86400000LL ? "week" : "window";
}

static void report_html(const report_t *r, FILE *f)
{
    uint32_t K = r->K;
    size_t last = r->npts - 1;
    int64_t t0 = r->pts[0].time_ms, t1 = r->pts[last].time_ms;
    for (size_t p = 0; p < r->npts; p++) {
        t0 = r->pts[p].time_ms < t0 ? r->pts[p].time_ms : t0;
        t1 = r->pts[p].time_ms > t1 ? r->pts[p].time_ms : t1;
    }
    if (r->nwin && r->pts[last].event_time) { /* one event-time axis for both kinds of chart */
        t0 = r->win_start[0] < t0 ? r->win_start[0] : t0;
        t1 = r->win_start[r->nwin - 1] + r->win_ms > t1 ? r->win_start[r->nwin - 1] + r->win_ms
                                                        : t1;
    }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fputs(html_head, f);
    fprintf(f, "<h1>Topics of model &ldquo;");
    html_text(f, r->model_name);
    fprintf(f, "&rdquo;</h1>\n<p class=\"meta\">%zu snapshot%s in <code>", r->npts,
            r->npts == 1 ? "" : "s");
    html_text(f, r->dir);
    fprintf(f, "</code>, %s to %s (%s), K = %u, %" PRIu64 " documents, %" PRIu64
               " updates; newest <code>",
            a, b, r->pts[last].event_time ? "event time" : "time of each snapshot's last update",
            K, r->pts[last].docs, r->pts[last].t);
    html_text(f, r->pts[last].file);
    fprintf(f, "</code>.</p>\n");
    if (r->nskipped) {
        fprintf(f, "<h2 class=\"skip\">Skipped files (%zu)</h2>\n<ul class=\"skip\">\n",
                r->nskipped);
        for (size_t i = 0; i < r->nskipped; i++) {
            fputs("<li>", f);
            html_text(f, r->skipped[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    /* topics of the newest snapshot, heaviest first */
    uint32_t *order = slda_xmalloc(K * sizeof *order);
    const double *wl = r->weights + last * K;
    for (uint32_t k = 0; k < K; k++) {
        uint32_t i = k;
        while (i > 0 && wl[order[i - 1]] < wl[k]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = k;
    }
    double wmax = K ? wl[order[0]] : 1;
    char words[800];
    fprintf(f, "<h2>Topics (newest snapshot, by weight)</h2>\n<table><tr><th>topic</th>"
               "<th>weight</th><th></th><th>drift</th><th>top words</th></tr>\n");
    for (uint32_t x = 0; x < K; x++) {
        uint32_t k = order[x];
        words_of(r->ref, k, r->nwords, words, sizeof words);
        double dv = r->drift[last * K + k];
        fprintf(f, "<tr><td class=\"n\">%u</td><td class=\"n\">%.2f%%</td><td><span class=\"bar\" "
                   "style=\"width:%.0fpx\"></span></td><td class=\"n\">",
                k, 100 * wl[k], wmax > 0 ? 120 * wl[k] / wmax : 0);
        if (isfinite(dv))
            fprintf(f, "%.3f", dv);
        fputs("</td><td>", f);
        html_text(f, words);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    /* events */
    fprintf(f, "<h2>Events (%zu)</h2>\n", r->nev);
    if (r->nev) {
        fputs("<table><tr><th>time</th><th>snapshot</th><th>event</th><th>topic</th>"
              "<th>js</th><th>weight</th><th>words</th></tr>\n", f);
        for (size_t e = 0; e < r->nev; e++) {
            const revent_t *ev = &r->ev[e];
            fmt_time(r->pts[ev->point].time_ms, t1 - t0, a, sizeof a);
            fprintf(f, "<tr><td class=\"n\">%s</td><td>", a);
            html_text(f, r->pts[ev->point].file);
            fprintf(f, "</td><td class=\"ev-%s\">%s", ev->kind, ev->kind);
            if (ev->other != UINT32_MAX)
                fprintf(f, " to %u", ev->other);
            fprintf(f, "</td><td class=\"n\">%u</td><td class=\"n\">%.3f</td><td class=\"n\">"
                       "%.2f%% &rarr; %.2f%%</td><td>",
                    ev->topic, ev->js, 100 * ev->w0, 100 * ev->w1);
            html_text(f, ev->words);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    } else {
        fputs("<p class=\"meta\">None.</p>\n", f);
    }
    if (r->ntev) {
        fprintf(f, "<h2>Events recorded while training (%zu)</h2>\n<p class=\"legend\">From the "
                   "tracker's state beside the snapshots (docs/tracking.md: birth, change, merge, "
                   "death), at the newest event time when each was seen.</p>\n<table><tr>"
                   "<th>time</th><th>update</th><th>event</th><th>topic</th><th>js</th>"
                   "<th>words</th></tr>\n", r->ntev);
        for (size_t e = 0; e < r->ntev; e++) {
            const slda_track_event_t *ev = &r->tev[e];
            fmt_time(ev->event_ms, t1 - t0, a, sizeof a);
            fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"n\">%" PRIu64 "</td><td>", a,
                    ev->update);
            html_text(f, ev->kind);
            if (ev->other != UINT32_MAX)
                fprintf(f, " with %u", ev->other);
            fprintf(f, "</td><td class=\"n\">%u</td><td class=\"n\">", ev->topic);
            if (ev->js >= 0)
                fprintf(f, "%.3f", ev->js);
            fputs("</td><td>", f);
            html_text(f, ev->words);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (r->nwin) {
        fprintf(f, "<h2>Documents per %s of event time</h2>\n<p class=\"legend\">From the "
                   "tracker's state beside %zu snapshot%s (%zu %ss with documents). Green lines "
                   "in each topic below: the topic's mean share of the documents of each %s "
                   "(broken where a %s has no documents).</p>\n<div class=\"card\" "
                   "style=\"max-width:480px\">\n",
                window_name(r->win_ms), r->nsidecars, r->nsidecars == 1 ? "" : "s", r->nwin,
                window_name(r->win_ms), window_name(r->win_ms), window_name(r->win_ms));
        html_prev_chart(f, r, UINT32_MAX, t0, t1);
        fputs("</div>\n", f);
    }
    /* one chart per topic */
    fprintf(f, "<h2>Weight over %s</h2>\n<p class=\"legend\">Blue: the topic's share of the "
               "model's tokens at each snapshot (dashed across a gap). Orange bars: drift of the "
               "slot since the previous snapshot (Jensen-Shannon distance, 0 to 1; red at or "
               "above %.2f). Red dots: events.</p>\n<div class=\"grid\">\n",
            r->pts[last].event_time ? "event time" : "time", r->change);
    for (uint32_t x = 0; x < K; x++) {
        uint32_t k = order[x];
        words_of(r->ref, k, r->nwords, words, sizeof words);
        fprintf(f, "<div class=\"card\"><h3>Topic %u &middot; %.2f%%</h3><p class=\"w\">", k,
                100 * wl[k]);
        html_text(f, words);
        fputs("</p>\n", f);
        html_chart(f, r, k, t0, t1);
        if (r->nwin)
            html_prev_chart(f, r, k, t0, t1);
        fputs("</div>\n", f);
    }
    fputs("</div>\n<p class=\"legend\">Written by streamlda " SLDA_VERSION_STR
          " (streamlda report).</p>\n</body></html>\n", f);
    free(order);
}

static int report_write(const report_t *r, const char *path, int html)
{
    char err[1024];
    slda_outfile_t out;
    if (slda_outfile_open(&out, "report", path, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        return -1;
    }
    if (html)
        report_html(r, out.fp);
    else
        report_json(r, out.fp);
    if (ferror(out.fp)) {
        fprintf(stderr, "streamlda report: report \"%s\": write error\n", path);
        slda_outfile_abort(&out);
        return -1;
    }
    if (slda_outfile_commit(&out, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        return -1;
    }
    return 0;
}

int slda_cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"html", required_argument, 0, 'H'},
                                             {"json", required_argument, 0, 'J'},
                                             {"model", required_argument, 0, 'm'},
                                             {"words", required_argument, 0, 'n'},
                                             {"top", required_argument, 0, 't'},
                                             {"change", required_argument, 0, 'C'},
                                             {"warmup", required_argument, 0, 'W'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *html = NULL, *json = NULL, *model = NULL;
    long n = 10, top = SLDA_ALIGN_TOP_DEFAULT;
    double change = 0.5;
    uint64_t warmup = 1000;
    char *end;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'H': html = optarg; break;
        case 'J': json = optarg; break;
        case 'm': model = optarg; break;
        case 'n':
            if ((n = opt_long(optarg, 1, 30)) < 0)
                goto usage;
            break;
        case 't':
            if ((top = opt_long(optarg, 0, 1000000000)) < 0)
                goto usage;
            break;
        case 'C':
            change = strtod(optarg, &end);
            if (end == optarg || *end || !(change > 0 && change <= 1))
                goto usage;
            break;
        case 'W':
            errno = 0;
            warmup = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || *optarg == '-')
                goto usage;
            break;
        case 'h': fputs(report_usage, stdout); return SLDA_EXIT_OK;
        default: goto usage;
        }
    }
    if (optind != argc - 1 || (!html && !json))
        goto usage;
    if (html && json && !strcmp(html, "-") && !strcmp(json, "-")) {
        fprintf(stderr, "streamlda report: only one of --html and --json can be \"-\"\n");
        goto usage;
    }
    char err[1024];
    if ((html && slda_outfile_check("report", html, err, sizeof err) != SLDA_OK) ||
        (json && slda_outfile_check("report", json, err, sizeof err) != SLDA_OK)) {
        fprintf(stderr, "streamlda report: %s\n", err);
        return SLDA_EXIT_FAIL;
    }
    report_t r = {0};
    r.dir = argv[optind];
    r.nwords = (uint32_t)n;
    r.top = (uint32_t)top;
    r.change = change;
    r.warmup = warmup;
    int rc = SLDA_EXIT_FAIL;
    if (report_list(&r, model) == 0 && report_collect(&r) == 0 &&
        (!html || report_write(&r, html, 1) == 0) && (!json || report_write(&r, json, 0) == 0)) {
        fprintf(stderr,
                "streamlda report: %zu snapshot%s of model \"%s\" (K=%u), %zu skipped, %zu "
                "event%s\n",
                r.npts, r.npts == 1 ? "" : "s", r.model_name, r.K, r.nskipped, r.nev,
                r.nev == 1 ? "" : "s");
        rc = SLDA_EXIT_OK;
    }
    report_free(&r);
    return rc;
usage:
    fputs(report_usage, stderr);
    return SLDA_EXIT_USAGE;
}

/* ---- train: snapshots into a directory, event time, the tracker's sidecar ---- */

#include "io/gzfile.h"

struct slda_cli_timeline_s {
    char *dir, *name;
    uint64_t every, next;   /* a snapshot when the model's documents reach next */
    uint64_t written_t;     /* update count of the last snapshot written (UINT64_MAX: none) */
    slda_track_t *track;    /* with --time-field: prevalence by event time, drift, events */
    slda_track_words_t *words;
    double *mass;
    float *thetas;
    size_t thetas_cap;
    uint32_t K;
    uint32_t windows; /* track.windows, for the summary */
};

slda_cli_timeline_t *slda_cli_timeline_new(const slda_conf_t *conf, const slda_model_t *model,
                                           const char *dir, uint64_t every, int timed)
{
    size_t err_size = strlen(dir) + 1024; /* the directory in full, as given */
    char *err = slda_xmalloc(err_size);
    const char *name = slda_model_name(model) ? slda_model_name(model) : conf->model_name;
    if (slda_snapdir_make("--snapshot-dir", dir, err, err_size) != SLDA_OK ||
        slda_snapdir_check(dir, name, err, 1024) != SLDA_OK) {
        fprintf(stderr, "streamlda train: %s\n", err);
        free(err);
        return NULL;
    }
    free(err);
    slda_cli_timeline_t *tl = slda_xcalloc(1, sizeof *tl);
    tl->dir = slda_xstrdup(dir);
    tl->name = slda_xstrdup(name);
    tl->every = every;
    tl->next = every ? every : UINT64_MAX;
    tl->written_t = UINT64_MAX;
    tl->K = slda_model_topics(model);
    if (timed) {
        slda_track_opts_t opts;
        slda_track_opts_from_conf(&opts, conf);
        tl->track = slda_track_new(tl->K, &opts);
        tl->windows = opts.windows;
        tl->words = slda_xcalloc(tl->K, sizeof *tl->words);
        tl->mass = slda_xcalloc(tl->K, sizeof *tl->mass);
    }
    return tl;
}

void slda_cli_timeline_destroy(slda_cli_timeline_t *tl)
{
    if (!tl)
        return;
    slda_track_destroy(tl->track);
    free(tl->words);
    free(tl->mass);
    free(tl->thetas);
    free(tl->dir);
    free(tl->name);
    free(tl);
}

float *slda_cli_timeline_thetas(slda_cli_timeline_t *tl, size_t n)
{
    if (!tl || !tl->track)
        return NULL;
    if (n * tl->K > tl->thetas_cap) {
        tl->thetas_cap = n * tl->K;
        tl->thetas = slda_xrealloc(tl->thetas, tl->thetas_cap * sizeof *tl->thetas);
    }
    return tl->thetas;
}

static int timeline_write(slda_cli_timeline_t *tl, slda_model_t *model)
{
    char path[4200], err[1024];
    slda_model_flush(model); /* a snapshot holds every update so far (global.stale) */
    uint64_t t = slda_model_updates(model);
    if (t == tl->written_t)
        return 0;
    slda_snapdir_path(path, sizeof path, tl->dir, tl->name, t);
    slda_snapshot_meta_t meta = {0};
    if (tl->track)
        meta.event_ms = slda_track_newest(tl->track);
    if (slda_snapshot_write_meta(model, &meta, path, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda train: %s\n", err);
        return -1;
    }
    tl->written_t = t;
    if (tl->track) {
        slda_track_model_words(model, tl->words, tl->mass);
        slda_track_compare(tl->track, tl->words, tl->mass, slda_model_docs(model), t);
        char side[4200];
        slda_snapdir_track_path(side, sizeof side, path);
        if (slda_track_save(tl->track, side, tl->name, t, err, sizeof err) != SLDA_OK) {
            fprintf(stderr, "streamlda train: %s\n", err);
            return -1;
        }
    }
    return 0;
}

int slda_cli_timeline_step(slda_cli_timeline_t *tl, slda_model_t *model, const slda_doc_t *docs,
                           size_t n, const float *thetas, int final)
{
    if (!tl)
        return 0;
    if (tl->track && thetas)
        for (size_t i = 0; i < n; i++) {
            /* as the service does: far-future times clamped, late ones counted */
            int clamped;
            int64_t ms = slda_track_time(tl->track, docs[i].time_ms, slda_now_ms(), &clamped);
            slda_track_add(tl->track, ms, thetas + i * tl->K);
        }
    uint64_t d = slda_model_docs(model);
    if (!final && d < tl->next)
        return 0;
    while (tl->next <= d)
        tl->next += tl->every;
    int rc = timeline_write(tl, model);
    if (final && tl->track) {
        /* what happened to the event times (docs/tracking.md, "Event time") */
        char newest[40] = "none";
        if (slda_track_newest(tl->track))
            slda_time_format(slda_track_newest(tl->track), newest, sizeof newest);
        fprintf(stderr,
                "streamlda train: event time: newest %s, %llu late (older than the newest before "
                "them), %llu in the far future (clamped), %llu older than the %u windows kept "
                "(left out of the prevalence)\n",
                newest, (unsigned long long)slda_track_late(tl->track),
                (unsigned long long)slda_track_clamped(tl->track),
                (unsigned long long)slda_track_dropped(tl->track), tl->windows);
    }
    return rc;
}

/* JSON lines with an event time in a field: each line goes through the Kafka message decoder
 * (the same document a message with this value makes) and the time through slda_time_from_json,
 * so a record without a valid time is rejected like any other bad record. */
struct slda_cli_timed_s {
    FILE *f;
    char *path, *field;
    char *line;
    size_t cap;
    uint64_t lineno;
    slda_model_t *model;
    uint32_t max_bytes;
    char why[256];
};

slda_cli_timed_t *slda_cli_timed_open(const slda_conf_t *conf, slda_model_t *model,
                                      const char *path, const char *field, char *errstr,
                                      size_t errstr_size)
{
    slda_cli_timed_t *rd = slda_xcalloc(1, sizeof *rd);
    int is_stdin = !strcmp(path, "-");
    FILE *in = is_stdin ? stdin : fopen(path, "rb");
    if (!in) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "input \"%s\": %s", path, strerror(errno));
        free(rd);
        return NULL;
    }
    rd->f = slda_gz_open(in, !is_stdin, rd->why, sizeof rd->why);
    if (!rd->f) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "input \"%s\": %s", path, strerror(errno));
        if (!is_stdin)
            fclose(in);
        free(rd);
        return NULL;
    }
    rd->path = slda_xstrdup(path);
    rd->field = slda_xstrdup(field);
    rd->model = model;
    rd->max_bytes = 0; /* documents of any size, as the file readers take them */
    (void)conf;
    return rd;
}

slda_err_t slda_cli_timed_next(slda_cli_timed_t *rd, slda_doc_t *doc, char *errstr,
                               size_t errstr_size)
{
    char err[900];
    for (;;) {
        errno = 0;
        ssize_t len = getline(&rd->line, &rd->cap, rd->f);
        if (len < 0) {
            if (ferror(rd->f))
                return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s:%llu: %s", rd->path,
                                    (unsigned long long)rd->lineno + 1,
                                    rd->why[0] ? rd->why : strerror(errno ? errno : EIO));
            return SLDA_ERR_EOF;
        }
        rd->lineno++;
        while (len > 0 && (rd->line[len - 1] == '\n' || rd->line[len - 1] == '\r'))
            rd->line[--len] = 0;
        size_t i = 0;
        while (i < (size_t)len && (rd->line[i] == ' ' || rd->line[i] == '\t'))
            i++;
        if (i == (size_t)len)
            continue; /* blank lines are not records, as in the JSON-lines reader */
        int64_t ms = 0;
        slda_err_t e = slda_time_from_json(rd->line, (size_t)len, rd->field, &ms, err, sizeof err);
        if (e == SLDA_OK)
            e = slda_doc_from_message(rd->model, SLDA_INFMT_JSON, rd->line, (size_t)len, NULL, 0,
                                      rd->max_bytes, doc, err, sizeof err);
        if (e != SLDA_OK)
            return slda_set_err(errstr, errstr_size, e, "%s:%llu: %s", rd->path,
                                (unsigned long long)rd->lineno, err);
        doc->time_ms = ms;
        return SLDA_OK;
    }
}

void slda_cli_timed_close(slda_cli_timed_t *rd)
{
    if (!rd)
        return;
    if (rd->f && rd->f != stdin)
        fclose(rd->f);
    free(rd->line);
    free(rd->path);
    free(rd->field);
    free(rd);
}
