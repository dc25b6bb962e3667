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
#include "engine/authors.h"
#include "engine/model.h"

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
    "      --lang-field NAME  the language's field (default lang, else language; overrides\n"
    "                     identification, and so picks the stop list with text.stopwords=auto)\n"
    "      --by-author    one line per author instead of per document: its documents'\n"
    "                     words folded in together, a known author's counts as the prior,\n"
    "                     a new author's from alpha (fold-in of a new author's mixture):\n"
    "                     {\"author\",\"docs\",\"tokens\",\"known\",\"topics\":[[k,weight],...]}\n"
    "  -h, --help         this help\n"
    "Documents that cannot be read are reported on stderr and skipped. Exit status 1\n"
    "when an input cannot be opened or no document could be read at all.\n";

static void print_mixture(const slda_doc_t *doc, const float *theta, uint32_t K, uint32_t top,
                          int continued)
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
    if (!continued) { /* else (--by-author) the caller opened the object */
        printf("{\"id\":");
        slda_json_write_string(stdout, doc->id ? doc->id : "");
        putchar(',');
    }
    if (doc->lang[0])
        printf("\"lang\":\"%s\",", doc->lang); /* a code of ASCII letters */
    printf("\"topics\":[");
    for (uint32_t i = 0; i < m; i++)
        printf("%s[%u,%.6f]", i ? "," : "", best[i], theta[best[i]]);
    printf("]}\n");
}

/* --by-author: each author's documents merged into one, in first-appearance order. */
typedef struct by_author_s {
    slda_doc_t *doc;  /* one per author: its name its only author, its words merged */
    uint32_t *ndocs;
    size_t n, cap;
    uint32_t *slot;   /* open addressing over name hashes: index + 1, 0 empty */
    size_t mask;
} by_author_t;

static slda_doc_t *author_doc(by_author_t *b, const char *name)
{
    size_t len = strlen(name);
    if (2 * (b->n + 1) > b->mask) { /* grow and rehash */
        size_t cap = 2 * (b->mask + 1);
        free(b->slot);
        b->slot = slda_xcalloc(cap, sizeof *b->slot);
        b->mask = cap - 1;
        for (size_t i = 0; i < b->n; i++) {
            const char *a = b->doc[i].author[0];
            size_t h = slda_hash64(a, strlen(a), 0) & b->mask;
            while (b->slot[h])
                h = (h + 1) & b->mask;
            b->slot[h] = (uint32_t)i + 1;
        }
    }
    size_t h = slda_hash64(name, len, 0) & b->mask;
    for (; b->slot[h]; h = (h + 1) & b->mask)
        if (!strcmp(b->doc[b->slot[h] - 1].author[0], name))
            return &b->doc[b->slot[h] - 1];
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->doc = slda_xrealloc(b->doc, b->cap * sizeof *b->doc);
        b->ndocs = slda_xrealloc(b->ndocs, b->cap * sizeof *b->ndocs);
    }
    slda_doc_t *d = &b->doc[b->n];
    slda_doc_init(d);
    slda_doc_add_author(d, name, len);
    d->id = slda_xstrdup(name);
    b->ndocs[b->n] = 0;
    b->slot[h] = (uint32_t)++b->n;
    return d;
}

static void by_author_add(by_author_t *b, const slda_doc_t *doc)
{
    for (uint32_t j = 0; j < doc->nauthor; j++) {
        slda_doc_t *d = author_doc(b, doc->author[j]);
        b->ndocs[d - b->doc]++;
        for (uint32_t u = 0; u < doc->npairs; u++)
            slda_doc_add(d, doc->word[u], doc->count[u]);
        slda_doc_finish(d);
    }
}

/* Each author's mixture folded in from its documents under the model: a known author's
 * counts are the prior, a new one starts from alpha (docs/models.md). */
static void by_author_print(by_author_t *b, const slda_model_t *model, float *theta, uint32_t K,
                            uint32_t top)
{
    const slda_authors_t *a = slda_model_authors(model);
    for (size_t i = 0; i < b->n; i++) {
        slda_doc_t *d = &b->doc[i];
        const char *name = d->author[0];
        int known = slda_authors_lookup(a, name, strlen(name)) != UINT32_MAX;
        if (slda_model_infer(model, d, theta, i + 1) != SLDA_OK)
            fprintf(stderr, "streamlda: author \"%s\": no known words\n", name);
        printf("{\"author\":");
        slda_json_write_string(stdout, name);
        printf(",\"docs\":%u,\"tokens\":%u,\"known\":%s,", b->ndocs[i], d->ntokens,
               known ? "true" : "false");
        print_mixture(d, theta, K, top, 1);
        slda_doc_clear(d);
    }
    free(b->doc);
    free(b->ndocs);
    free(b->slot);
}

int slda_cli_infer(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, 0, 'f'},
                                             {"top", required_argument, 0, 't'},
                                             {"by-author", no_argument, 0, 'B'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct option opts_all[16];
    slda_format_t fmt = SLDA_FORMAT_AUTO;
    long top = 5;
    slda_cli_opts_t fields = {0}; /* --author-field, --lang-field as -X */
    slda_cli_fieldbuf_t fbuf;
    int c, rc = SLDA_EXIT_OK, by_author_on = 0;
    by_author_t by_author = {0};
    char err[1024];
    optind = 1;
    slda_cli_longopts(longopts, "AG", opts_all, sizeof opts_all / sizeof opts_all[0]);
    while ((c = getopt_long(argc, argv, "f:t:h", opts_all, NULL)) != -1) {
        if (slda_cli_field_opt(c, &fields, fbuf))
            continue;
        if (c == 'h') {
            fputs(infer_usage, stdout);
            return SLDA_EXIT_OK;
        } else if (c == 'f' && (int)(fmt = slda_format_parse(optarg)) >= 0) {
            continue;
        } else if (c == 't' && (top = strtol(optarg, NULL, 10)) >= 1 && top <= 64) {
            continue;
        } else if (c == 'B') {
            by_author_on = 1;
            continue;
        }
        slda_cli_opts_clear(&fields);
        fputs(infer_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    /* Inference never grows the vocabulary: unknown words are dropped. */
    slda_conf_t *conf = slda_conf_new();
    for (size_t i = 0; i < fields.nx; i++)
        if (slda_cli_x_set(conf, fields.xprops[i]) != SLDA_EXIT_OK)
            rc = SLDA_EXIT_USAGE;
    slda_cli_opts_clear(&fields);
    if (rc != SLDA_EXIT_OK || optind >= argc) {
        if (rc == SLDA_EXIT_OK)
            fputs(infer_usage, stderr);
        slda_conf_destroy(conf);
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = slda_cli_load_snapshot(argv[optind++]);
    if (!model) {
        slda_conf_destroy(conf);
        return SLDA_EXIT_FAIL;
    }
    if (by_author_on && !slda_model_authors(model)) {
        fprintf(stderr, "streamlda infer: --by-author: the snapshot is not an author-topic model "
                        "(model.kind=atm)\n");
        slda_conf_destroy(conf);
        slda_model_destroy(model);
        return SLDA_EXIT_FAIL;
    }
    if (by_author_on) { /* the table exists: mask != 0 */
        by_author.slot = slda_xcalloc(64, sizeof *by_author.slot);
        by_author.mask = 63;
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
            if (by_author.mask && doc.nauthor == 0) { /* nothing to fold it into: said, counted */
                fprintf(stderr, "streamlda infer: document \"%s\": no author (--by-author)\n",
                        doc.id ? doc.id : "");
                nrejected++;
                ndocs--;
            } else if (by_author.mask) { /* --by-author: folded in at the end */
                by_author_add(&by_author, &doc);
            }
            else
                print_mixture(&doc, theta, K, (uint32_t)top, 0);
            slda_doc_clear(&doc);
        }
        slda_reader_close(rd);
    }
    if (by_author_on) {
        by_author_print(&by_author, model, theta, K, (uint32_t)top);
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

