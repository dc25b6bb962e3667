/* cli_infer.c - `streamlda infer`: topic mixtures of new documents under a snapshot, as JSON lines.
 *
 * Rejected records are reported (file:line) and skipped; exit 1 when an input cannot be
 * opened or no document could be read at all.
 */
#include "cli/cli.h"
#include "io/outfile.h"
#include "core/json.h"
#include "io/reader.h"
#include "core/slda_int.h"
#include "io/snapshot.h"

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>


/* ---- topics, infer, export ---- */

/* topics: src/cli/cli_topics.c (with --weights, --json) */

static const char infer_usage[] =
    "Usage: streamlda infer [OPTIONS] SNAPSHOT [FILE...]\n"
    "Print the topic mixture of each document in FILEs (or standard input) as a JSON line:\n"
    "  {\"id\":\"...\",\"lang\":\"de\",\"topics\":[[k,weight],...]}   (the --top largest)\n"
    "  (lang: the record's, or identified from raw text; absent when not identified)\n"
    "  -f, --format FMT   auto (default), uci, ldac, text, jsonl\n"
    "  -t, --top N        topics per document (default 5)\n"
    "      --author-field NAME  an author-topic model (model.kind=atm): the authors' field\n"
    "                     (default author); a document of a known author is folded in with\n"
    "                     its author's mixture as prior, one without with alpha alone\n"
    "  -h, --help         this help\n"
    "Documents that cannot be read are reported on stderr and skipped. Exit status 1\n"
    "when an input cannot be opened or no document could be read at all.\n";

static void print_mixture(const slda_doc_t *doc, const float *theta, uint32_t K, uint32_t top)
{
    uint32_t best[64];
    uint32_t m = 0;
    for (uint32_t k = 0; k < K; k++) {
        if (m == top && theta[k] <= theta[best[top - 1]])
            continue;
        uint32_t i = m < top ? m++ : top - 1;
        while (i > 0 && theta[best[i - 1]] < theta[k]) {
            best[i] = best[i - 1];
            i--;
        }
        best[i] = k;
    }
    printf("{\"id\":");
    slda_json_write_string(stdout, doc->id ? doc->id : "");
    if (doc->lang[0])
        printf(",\"lang\":\"%s\"", doc->lang); /* a code of ASCII letters */
    printf(",\"topics\":[");
    for (uint32_t i = 0; i < m; i++)
        printf("%s[%u,%.6f]", i ? "," : "", best[i], theta[best[i]]);
    printf("]}\n");
}

int slda_cli_infer(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, 0, 'f'},
                                             {"top", required_argument, 0, 't'},
                                             {"author-field", required_argument, 0, 'A'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    slda_format_t fmt = SLDA_FORMAT_AUTO;
    long top = 5;
    const char *author_field = NULL;
    int c, rc = SLDA_EXIT_OK;
    char err[1024];
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:t:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(infer_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'f' && (int)(fmt = slda_format_parse(optarg)) >= 0) {
            continue;
        } else if (c == 't' && (top = strtol(optarg, NULL, 10)) >= 1 && top <= 64) {
            continue;
        } else if (c == 'A' && *optarg) {
            author_field = optarg;
            continue;
        }
        fputs(infer_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    if (optind >= argc) {
        fputs(infer_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = slda_cli_load_snapshot(argv[optind++]);
    if (!model)
        return SLDA_EXIT_FAIL;
    /* Inference never grows the vocabulary: unknown words are dropped. */
    slda_conf_t *conf = slda_conf_new();
    if (author_field &&
        slda_conf_set(conf, "input.author.field", author_field, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda infer: %s\n", err);
        slda_conf_destroy(conf);
        slda_model_destroy(model);
        return SLDA_EXIT_USAGE;
    }
    float *theta = slda_xmalloc(slda_model_topics(model) * sizeof(float));
    static char *stdin_only[] = {"-"};
    char **files = optind < argc ? argv + optind : stdin_only;
    int nfiles = optind < argc ? argc - optind : 1;
    uint32_t K = slda_model_topics(model);
    if ((uint32_t)top > K)
        top = K;
    uint64_t ndocs = 0, nrejected = 0;
    for (int f = 0; f < nfiles; f++) {
        slda_reader_t *rd = slda_reader_open(conf, model, files[f], fmt, err, sizeof err);
        if (!rd) {
            fprintf(stderr, "streamlda: %s\n", err);
            rc = SLDA_EXIT_FAIL;
            continue;
        }
        rd->rec.authors_optional = 1; /* model.kind=atm: a document without is folded in alone */
        slda_doc_t doc;
        slda_doc_init(&doc);
        slda_err_t e;
        uint64_t n = 0;
        while ((e = slda_reader_next(rd, &doc, err, sizeof err)) != SLDA_ERR_EOF) {
            n++;
            if (e != SLDA_OK) {
                nrejected++;
                slda_cli_input_error(e, err);
                slda_doc_clear(&doc);
                continue;
            }
            ndocs++;
            if (slda_model_infer(model, &doc, theta, n) != SLDA_OK)
                fprintf(stderr, "streamlda: document \"%s\": no known words\n",
                        doc.id ? doc.id : "");
            print_mixture(&doc, theta, K, (uint32_t)top);
            slda_doc_clear(&doc);
        }
        slda_reader_close(rd);
    }
    slda_cli_input_summary();
    if (ndocs == 0 && rc == SLDA_EXIT_OK) { /* nothing to show is a failure, as in train */
        if (nrejected)
            fprintf(stderr, "streamlda infer: no mixtures: all %llu records were rejected\n",
                    (unsigned long long)nrejected);
        else
            fprintf(stderr, "streamlda infer: no documents in %s\n",
                    nfiles > 1 ? "the inputs"
                    : strcmp(files[0], "-") ? files[0] : "standard input");
        rc = SLDA_EXIT_FAIL;
    }
    free(theta);
    slda_conf_destroy(conf);
    slda_model_destroy(model);
    return rc;
}

