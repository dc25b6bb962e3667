/* cli_report.c - `streamlda report`: a static report of a run from its snapshot directory.
 *
 * The command: options, then slda_report_collect (report_collect.c) gathers the snapshots of
 * one model, their weights, drift and events and the tracker's states beside them, and the
 * writers (report_html.c, report_json.c) render that into files written atomically
 * (io/outfile.h: a temp file renamed over the target, "-" for standard output). Output paths
 * are checked before any snapshot is read, so a typo costs nothing. Skipped snapshots are
 * reported but do not fail the command; no usable snapshot does. Exit 0 written, 1 nothing to
 * report or a file not written, 2 usage.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "cli/report.h"
#include "core/slda_int.h"
#include "io/outfile.h"
#include "track/align.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char report_usage[] =
    "Usage: streamlda report SNAPSHOT_DIR [--html FILE] [--json FILE] [OPTIONS]\n"
    "A static report of a run from the snapshots in SNAPSHOT_DIR (<model>-<updates>.slda, as\n"
    "`run` and `train --snapshot-dir` write them), ordered by update count: the topics of the\n"
    "newest snapshot with their weights and top words, each topic's weight over time (the\n"
    "snapshots' newest event time when they carry one, else the time of their last update),\n"
    "its drift (Jensen-Shannon distance of the same slot between consecutive snapshots) and\n"
    "events: change (drift >= --change), taken (a slot whose new words match no previous\n"
    "topic), drift (a slot >= --change away from its words at its last event, or after the\n"
    "warm-up, and --change/2 further than the median slot anchored with it: a change spread\n"
    "over several snapshots), moved (a slot's previous topic now best matches another slot),\n"
    "rise/fall (weight doubled/halved). The HTML is one file with inline CSS and SVG, no\n"
    "external resource.\n"
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

static int report_write(const slda_report_t *r, const char *path, int html)
{
    char err[1024];
    slda_outfile_t out;
    if (slda_outfile_open(&out, "report", path, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda report: %s\n", err);
        return -1;
    }
    if (html)
        slda_report_write_html(r, out.fp);
    else
        slda_report_write_json(r, out.fp);
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
            if ((n = slda_cli_opt_long(optarg, 1, 30)) < 0)
                goto bad_value;
            break;
        case 't':
            if ((top = slda_cli_opt_long(optarg, 0, 1000000000)) < 0)
                goto bad_value;
            break;
        case 'C':
            change = strtod(optarg, &end);
            if (end == optarg || *end || !(change > 0 && change <= 1))
                goto bad_value;
            break;
        case 'W':
            errno = 0;
            warmup = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || *optarg == '-')
                goto bad_value;
            break;
        case 'h': fputs(report_usage, stdout); return SLDA_EXIT_OK;
        default: goto usage;
        }
    }
    const char *missing = optind >= argc      ? "a SNAPSHOT_DIR to report"
                          : optind < argc - 1 ? NULL
                          : !html && !json    ? "an output: --html FILE and/or --json FILE"
                                              : NULL;
    if (optind < argc - 1)
        fprintf(stderr, "streamlda report: one SNAPSHOT_DIR, not %d arguments\n", argc - optind);
    else if (missing)
        fprintf(stderr, "streamlda report: missing %s\n", missing);
    if (optind != argc - 1 || missing)
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
    slda_report_t r = {0};
    r.dir = argv[optind];
    r.nwords = (uint32_t)n;
    r.top = (uint32_t)top;
    r.change = change;
    r.warmup = warmup;
    int rc = SLDA_EXIT_FAIL;
    if (slda_report_collect(&r, model) == 0 &&
        (!html || report_write(&r, html, 1) == 0) && (!json || report_write(&r, json, 0) == 0)) {
        fprintf(stderr,
                "streamlda report: %zu snapshot%s of model \"%s\" (K=%u), %zu skipped, %zu "
                "event%s\n",
                r.npts, r.npts == 1 ? "" : "s", r.model_name, r.K, r.nskipped, r.nev,
                r.nev == 1 ? "" : "s");
        rc = SLDA_EXIT_OK;
    }
    slda_report_clear(&r);
    return rc;
bad_value:
    fprintf(stderr, "streamlda report: %s \"%s\": not %s\n",
            c == 'n' ? "--words" : c == 't' ? "--top" : c == 'C' ? "--change" : "--warmup", optarg,
            c == 'n'   ? "a whole number in 1..30"
            : c == 't' ? "a whole number in 0..1000000000"
            : c == 'C' ? "a number in (0, 1]"
                       : "a whole number of documents");
usage:
    fputs(report_usage, stderr);
    return SLDA_EXIT_USAGE;
}
