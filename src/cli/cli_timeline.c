/* cli_timeline.c - `streamlda timeline`: every document of some files scored under one snapshot,
 * each topic's share per window of event time.
 *
 * The prevalence the tracker keeps while training is each document's mixture under the model
 * of that moment: the first windows of a run are scored by a model that has barely learned.
 * This command scores every document again under one snapshot (slda_model_infer, the frozen
 * model), so the whole timeline is under one model. Inputs are those of `train`: JSON lines or
 * CSV/TSV with a time field (--time-field), gzip or not, several files, standard input ("-").
 * The snapshot is only read: documents are looked up by their words' keys (text/bag.h) and a
 * word the model does not hold is left out, so scoring never changes the model's vocabulary.
 * Documents are scored in blocks on -X threads=N threads (each document's result depends only
 * on it and the snapshot: any thread count gives the same numbers). The windows are those of
 * the tracker (src/track/prev.h): the finest resolution that holds the span in at most
 * SLDA_TRACK_POINTS windows, or the one asked for (--window), which then keeps every window.
 * Output: one JSON object (--json, default standard output) and/or CSV (--csv), one row per
 * window: its start, its documents and each topic's share.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "core/json.h"
#include "core/pool.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "io/outfile.h"
#include "io/reader.h"
#include "text/bag.h"
#include "text/vocab.h"
#include "track/prev.h"
#include "track/track.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1024 /* documents scored per hand-over to the threads */

static const char timeline_usage[] =
    "Usage: streamlda timeline [OPTIONS] SNAPSHOT FILE...\n"
    "Score every document of FILEs (or standard input, '-') under SNAPSHOT and print each\n"
    "topic's share of the documents per window of event time: the timeline under one model.\n"
    "(The prevalence `report` shows was scored while training, by the model of the moment,\n"
    "and corrected from a sample; this scores every document with the same model.)\n"
    "  -f, --format FMT       auto (default), jsonl, csv, tsv (records with fields)\n"
    "      --time-field NAME  the field with each document's event time (needed; ISO 8601,\n"
    "                         YYYYMMDD or epoch seconds/ms)\n"
    "      --text-field NAME[,NAME]  the text's field(s) (default text)\n"
    "      --id-field NAME    the id's field (default id)\n"
    "      --lang-field NAME  the language's field (default lang, else language)\n"
    "      --window W         auto (default: the finest of minute, hour, day, week that holds\n"
    "                         the span in at most 400 windows, else weeks, doubled until the\n"
    "                         span fits 1024), minute, hour, day or week (every window kept)\n"
    "      --json FILE        write the timeline as JSON ('-': standard output, the default\n"
    "                         without --csv)\n"
    "      --csv FILE         write it as CSV: start,start_ms,docs,topic_0,...,topic_K-1\n"
    "  -c, --config FILE, -X key=value   properties (threads=N scores on N threads)\n"
    "  -h, --help             this help\n"
    "Records that cannot be read (no time, no text, no known word) are reported on stderr and\n"
    "counted. Exit status: 0 written, 1 no document scored or an output not written, 2 usage.\n";

typedef struct tl_s {
    slda_model_t *model;
    uint32_t K;
    slda_doc_t doc[BLOCK];
    int64_t ms[BLOCK];
    float *theta;   /* BLOCK x K */
    int ok[BLOCK];
    size_t n;
} tl_t;

static void score_one(size_t i, uint32_t worker, void *opaque)
{
    tl_t *t = opaque;
    (void)worker;
    /* the seed is the document's index in the block's file order: reproducible */
    t->ok[i] = slda_model_infer(t->model, &t->doc[i], t->theta + i * t->K, i + 1) == SLDA_OK;
}

/* The record's words the model holds, by key (the vocabulary is not changed). */
static slda_err_t record_doc(const slda_model_t *model, const slda_record_t *rec,
                             slda_bag_t *bag, slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    slda_err_t e = slda_record_tokenize(slda_model_tokenizer(model), slda_vocab_seed(vocab), rec,
                                        bag, errstr, errstr_size);
    if (e != SLDA_OK)
        return e;
    doc->npairs = doc->ntokens = 0;
    for (uint32_t i = 0; i < bag->n; i++) {
        uint32_t id = slda_vocab_find_key(vocab, bag->hash[i]);
        if (id != UINT32_MAX && id < slda_model_rows(model) && slda_model_row_ready(model, id))
            slda_doc_add(doc, id, bag->count[i]);
    }
    slda_doc_finish(doc);
    if (!doc->npairs)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            bag->n ? "document: none of its %u words is known to the snapshot"
                                   : "document: no tokens", bag->n);
    return SLDA_OK;
}

static int64_t window_ms(const char *w)
{
    return !strcmp(w, "minute") ? 60000LL : !strcmp(w, "hour") ? 3600000LL
         : !strcmp(w, "day") ? 86400000LL : !strcmp(w, "week") ? 604800000LL
         : !strcmp(w, "auto") ? 0 : -1;
}

static void write_json(FILE *f, const char *snap, const slda_model_t *model, slda_prev_t *p,
                       size_t tier, uint64_t docs, uint64_t rejected)
{
    uint32_t K = slda_model_topics(model);
    size_t n = slda_prev_list(p, tier, NULL, 0);
    const slda_pwin_t **w = slda_xmalloc((n ? n : 1) * sizeof *w);
    slda_prev_list(p, tier, w, n);
    int64_t width = slda_prev_width(p, tier);
    fprintf(f, "{\"snapshot\":");
    slda_json_write_string(f, snap);
    fprintf(f, ",\"model\":");
    slda_json_write_string(f, slda_model_name(model) ? slda_model_name(model) : "");
    fprintf(f, ",\"K\":%u,\"updates\":%" PRIu64 ",\"docs\":%" PRIu64 ",\"rejected\":%" PRIu64
               ",\"window_ms\":%" PRId64 ",\"topics\":[",
            K, slda_model_updates(model), docs, rejected, width);
    uint32_t ids[10];
    for (uint32_t k = 0; k < K; k++) {
        size_t m = slda_cli_top_words(model, k, 10, ids);
        fprintf(f, "%s{\"topic\":%u,\"words\":", k ? "," : "", k);
        slda_cli_json_words(f, model, ids, m);
        fputc('}', f);
    }
    fprintf(f, "],\"windows\":[");
    for (size_t i = 0; i < n; i++) {
        char iso[40];
        slda_time_format(w[i]->win * width, iso, sizeof iso);
        fprintf(f, "%s\n{\"start_ms\":%" PRId64 ",\"start\":\"%s\",\"docs\":%.0f,\"share\":[",
                i ? "," : "", w[i]->win * width, iso, w[i]->docs);
        for (uint32_t k = 0; k < K; k++)
            fprintf(f, "%s%.6g", k ? "," : "", w[i]->sum[k] / w[i]->docs);
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    free(w);
}

static void write_csv(FILE *f, uint32_t K, slda_prev_t *p, size_t tier)
{
    size_t n = slda_prev_list(p, tier, NULL, 0);
    const slda_pwin_t **w = slda_xmalloc((n ? n : 1) * sizeof *w);
    slda_prev_list(p, tier, w, n);
    int64_t width = slda_prev_width(p, tier);
    fprintf(f, "start,start_ms,docs");
    for (uint32_t k = 0; k < K; k++)
        fprintf(f, ",topic_%u", k);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        char iso[40];
        slda_time_format(w[i]->win * width, iso, sizeof iso);
        fprintf(f, "%s,%" PRId64 ",%.0f", iso, w[i]->win * width, w[i]->docs);
        for (uint32_t k = 0; k < K; k++)
            fprintf(f, ",%.6g", w[i]->sum[k] / w[i]->docs);
        fputc('\n', f);
    }
    free(w);
}

static int write_out(const char *path, int json, const char *snap, const slda_model_t *model,
                     slda_prev_t *p, size_t tier, uint64_t docs, uint64_t rejected)
{
    char err[1024];
    slda_outfile_t out;
    if (slda_outfile_open(&out, "timeline", path, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda timeline: %s\n", err);
        return -1;
    }
    if (json)
        write_json(out.fp, snap, model, p, tier, docs, rejected);
    else
        write_csv(out.fp, slda_model_topics(model), p, tier);
    if (ferror(out.fp)) {
        fprintf(stderr, "streamlda timeline: \"%s\": write error\n", path);
        slda_outfile_abort(&out);
        return -1;
    }
    if (slda_outfile_commit(&out, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda timeline: %s\n", err);
        return -1;
    }
    return 0;
}

/* Score the block's documents and add them to the windows. */
static void flush_block(tl_t *t, slda_pool_t *pool, slda_prev_t *p, uint64_t *docs,
                        uint64_t *rejected)
{
    slda_pool_run(pool, t->n, score_one, t);
    for (size_t i = 0; i < t->n; i++) {
        if (t->ok[i] && slda_prev_add(p, t->ms[i], t->theta + i * t->K, NULL, NULL) == 0)
            ++*docs;
        else
            ++*rejected;
        slda_doc_clear(&t->doc[i]);
    }
    t->n = 0;
}

int slda_cli_timeline(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"window", required_argument, 0, 'W'},
        {"json", required_argument, 0, 'J'},   {"csv", required_argument, 0, 'V'},
        {"config", required_argument, 0, 'c'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    struct option opts_all[16];
    slda_cli_opts_t opts = {0};
    slda_format_t fmt = SLDA_FORMAT_AUTO;
    const char *json = NULL, *csv = NULL, *win = "auto";
    slda_cli_fieldbuf_t fbuf;
    char err[1024];
    int c, rc = SLDA_EXIT_USAGE, done;
    slda_conf_t *conf = slda_conf_new();
    slda_model_t *model = NULL;
    slda_prev_t *p = NULL;
    slda_pool_t *pool = NULL;
    tl_t *t = NULL;
    optind = 1;
    slda_cli_longopts(longopts, "FUIG", opts_all, sizeof opts_all / sizeof opts_all[0]);
    while ((c = getopt_long(argc, argv, "f:c:X:h", opts_all, NULL)) != -1) {
        if (slda_cli_common_opt(c, &opts) || slda_cli_field_opt(c, &opts, fbuf))
            continue;
        switch (c) {
        case 'f':
            if ((int)(fmt = slda_format_parse(optarg)) < 0) {
                fprintf(stderr, "streamlda timeline: unknown format \"%s\"\n", optarg);
                goto usage;
            }
            break;
        case 'W':
            if (window_ms(optarg) < 0)
                goto usage;
            win = optarg;
            break;
        case 'J': json = optarg; break;
        case 'V': csv = optarg; break;
        case 'h':
            fputs(timeline_usage, stdout);
            rc = SLDA_EXIT_OK;
            goto out;
        default: goto usage;
        }
    }
    if (argc - optind < 2)
        goto usage;
    if ((rc = slda_cli_conf_apply(conf, &opts, &done)) != SLDA_EXIT_OK || done)
        goto out;
    rc = SLDA_EXIT_USAGE;
    if (!conf->input_time_field || !*conf->input_time_field) {
        fprintf(stderr, "streamlda timeline: --time-field NAME is needed: the field of each "
                        "record with its event time\n");
        goto usage;
    }
    if (!json && !csv)
        json = "-";
    if (json && csv && !strcmp(json, "-") && !strcmp(csv, "-")) {
        fprintf(stderr, "streamlda timeline: only one of --json and --csv can be \"-\"\n");
        goto usage;
    }
    rc = SLDA_EXIT_FAIL;
    if ((json && slda_outfile_check("timeline", json, err, sizeof err) != SLDA_OK) ||
        (csv && slda_outfile_check("timeline", csv, err, sizeof err) != SLDA_OK)) {
        fprintf(stderr, "streamlda timeline: %s\n", err);
        goto out;
    }
    const char *snap = argv[optind++];
    if (!(model = slda_cli_snap_load(snap, NULL, err, sizeof err))) {
        fprintf(stderr, "streamlda timeline: %s\n", err);
        goto out;
    }
    uint32_t K = slda_model_topics(model);
    if (slda_pool_new(conf->p.threads, &pool, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda timeline: %s\n", err);
        goto out;
    }
    slda_prev_tier_t tiers[SLDA_PREV_TIERS];
    int64_t wms = window_ms(win);
    size_t nt;
    if (wms > 0) { /* one resolution, every window kept (it doubles past 100,000) */
        tiers[0] = (slda_prev_tier_t){wms, 100000, 1, 0};
        nt = 1;
    } else
        nt = slda_prev_default_tiers(60000, 240, tiers);
    p = slda_prev_new(K, tiers, nt, 0);
    t = slda_xcalloc(1, sizeof *t);
    t->model = model;
    t->K = K;
    t->theta = slda_xmalloc((size_t)BLOCK * K * sizeof *t->theta);
    for (size_t i = 0; i < BLOCK; i++)
        slda_doc_init(&t->doc[i]);
    slda_bag_t *bag = slda_bag_new();
    uint64_t docs = 0, rejected = 0;
    slda_cli_install_signals();
    for (int f = optind; f < argc && !slda_cli_stop; f++) {
        slda_reader_t *rd = slda_reader_open(conf, model, argv[f], fmt, err, sizeof err);
        if (!rd) {
            fprintf(stderr, "streamlda timeline: %s\n", err);
            rc = SLDA_EXIT_FAIL;
            continue;
        }
        const slda_record_t *rec;
        slda_err_t e;
        while (!slda_cli_stop && (e = slda_reader_next_record(rd, &rec, err, sizeof err)) !=
                                     SLDA_ERR_EOF) {
            if (e == SLDA_ERR_INVALID) { /* a format of word ids: no records of text */
                fprintf(stderr, "streamlda timeline: %s\n", err);
                break;
            }
            if (e == SLDA_OK) {
                char why[512];
                slda_record_time(rec, &t->ms[t->n], NULL, 0);
                e = record_doc(model, rec, bag, &t->doc[t->n], why, sizeof why);
                if (e != SLDA_OK)
                    snprintf(err, sizeof err, "%s: %s", argv[f], why);
            }
            if (e != SLDA_OK) {
                rejected++;
                slda_cli_input_error(e, err);
                if (e == SLDA_ERR_IO)
                    break;
                continue;
            }
            if (++t->n == BLOCK)
                flush_block(t, pool, p, &docs, &rejected);
        }
        slda_reader_close(rd);
    }
    flush_block(t, pool, p, &docs, &rejected);
    slda_bag_free(bag);
    slda_cli_input_summary();
    if (!docs) {
        fprintf(stderr, "streamlda timeline: no document scored (%" PRIu64 " rejected)\n",
                rejected);
        rc = SLDA_EXIT_FAIL;
        goto out;
    }
    size_t tier = wms > 0 ? 0 : slda_prev_pick(p, SLDA_TRACK_POINTS);
    if ((json && write_out(json, 1, snap, model, p, tier, docs, rejected)) ||
        (csv && write_out(csv, 0, snap, model, p, tier, docs, rejected))) {
        rc = SLDA_EXIT_FAIL;
        goto out;
    }
    fprintf(stderr, "streamlda timeline: %" PRIu64 " documents scored under %s (K=%u, %" PRIu64
                    " updates), %" PRIu64 " rejected, %zu windows of %" PRId64 " s\n",
            docs, snap, K, slda_model_updates(model), rejected, slda_prev_list(p, tier, NULL, 0),
            slda_prev_width(p, tier) / 1000);
    rc = slda_cli_stop ? 128 + slda_cli_stop : SLDA_EXIT_OK;
    goto out;
usage:
    fputs(timeline_usage, stderr);
    rc = SLDA_EXIT_USAGE;
out:
    if (t) {
        for (size_t i = 0; i < BLOCK; i++)
            slda_doc_clear(&t->doc[i]);
        free(t->theta);
        free(t);
    }
    slda_prev_destroy(p);
    slda_pool_destroy(pool);
    slda_model_destroy(model);
    slda_conf_destroy(conf);
    slda_cli_opts_clear(&opts);
    return rc;
}
