/* cli_batch.c - `streamlda train --batch`: the hybrid paper's batch experiment on one corpus file.
 *
 * Reads every document of FILE into memory through the reader API (bad
 * records are reported on stderr, counted and skipped), then runs
 * slda_batch_train on the model the documents were read through, so that
 * with -o its final topics are written as a snapshot that topics, infer and
 * export read like any other. Progress lines go to stderr, the one result
 * line to stdout. Exit codes: 0 success, 1 runtime failure, 2 usage error.
 */
#include "cli/cli.h"
#include "io/outfile.h"
#include "io/reader.h"
#include "core/slda_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char batch_usage[] =
    "Usage: streamlda train --batch [OPTIONS] FILE\n"
    "Run one of the hybrid paper's in-place batch algorithms (Welling, Teh & Kappen\n"
    "2008) on the corpus in FILE: 10% of each document's tokens are withheld (seeded)\n"
    "and the test perplexity is reported. The variant is -X local=cgs|cvb0|cvb|svb|\n"
    "cvb0+cgs|cvb+cgs|svb+cgs; the hybrids sample the word-document pairs with count\n"
    "<= local.threshold. The sampling variants average the predictive probability\n"
    "over every iteration after a 10-iteration burn-in. -X model.kind=atm|pam runs\n"
    "the author-topic model (one author a document, from --author-field) or\n"
    "pachinko allocation (pam.super super-topics; local=cgs samples, any other\n"
    "variant its AMF form) the same way (docs/models.md, \"Batch mode\").\n"
    "\n"
    "  -i, --iterations N   sweeps over the corpus (default 300)\n"
    "  -e, --every N        print the test perplexity every N iterations (default 10,\n"
    "                       0 = never)\n"
    "  -f, --format FMT     auto (default), uci, ldac, text, jsonl\n"
    "  -o, --output FILE    write the final model (the last iteration's topic-word\n"
    "                       counts) as a snapshot for topics, infer and export\n"
    "  -c, --config FILE    configuration file (key=value lines)\n"
    "      --author-field NAME  -X model.kind=atm: the authors' field (default author)\n"
    "      --text-field NAME, --id-field NAME  JSON/CSV fields (input.text.field, ...)\n"
    "  -X key=value         set a property (topics, alpha, eta, local, local.threshold,\n"
    "                       seed, vocab.file, ...); -X list shows them all\n"
    "  -h, --help           this help\n"
    "\n"
    "Standard error gets `iter N perplexity P` lines; standard output one line:\n"
    "  batch local=NAME K=K iterations=N perplexity=P seconds=S\n";

typedef struct batch_cli_s {
    slda_cli_opts_t opts;
    uint32_t iterations, every;
    slda_format_t fmt;
    const char *path;
    const char *output; /* -o: snapshot path, or NULL */
    slda_cli_fieldbuf_t fbuf; /* --author-field, ... as -X, alive as long as opts */
} batch_cli_t;

/* A decimal in 0..max, or -1. */
static long parse_count(const char *s, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > max)
        return -1;
    return v;
}

/* Options into cli; returns -1 for usage errors, 1 for --help, else 0. */
static int parse_args(batch_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"iterations", required_argument, 0, 'i'}, {"every", required_argument, 0, 'e'},
        {"format", required_argument, 0, 'f'},     {"config", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},             {"batch", no_argument, 0, 'B'},
        {"output", required_argument, 0, 'o'},     {"author-field", required_argument, 0, 'A'},
        {"text-field", required_argument, 0, 'U'}, {"id-field", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:e:f:o:c:X:h", longopts, NULL)) != -1) {
        if (slda_cli_field_opt(c, &cli->opts, cli->fbuf))
            continue;
        switch (c) {
        case 'B': break;
        case 'i':
            if ((v = parse_count(optarg, 10000000)) < 0) {
                fprintf(stderr, "streamlda train --batch: --iterations \"%s\": not 0..10000000\n",
                        optarg);
                return -1;
            }
            cli->iterations = (uint32_t)v;
            break;
        case 'e':
            if ((v = parse_count(optarg, 10000000)) < 0) {
                fprintf(stderr, "streamlda train --batch: --every \"%s\": not 0..10000000\n",
                        optarg);
                return -1;
            }
            cli->every = (uint32_t)v;
            break;
        case 'f':
            cli->fmt = slda_format_parse(optarg);
            if ((int)cli->fmt < 0) {
                fprintf(stderr, "streamlda train --batch: unknown format \"%s\"\n", optarg);
                return -1;
            }
            break;
        case 'o': cli->output = optarg; break;
        case 'c': cli->opts.config_path = optarg; break;
        case 'X': slda_cli_add_x(&cli->opts, optarg); break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind < argc - 1) {
        fprintf(stderr, "streamlda train --batch: expected one FILE, got %d\n", argc - optind);
        return -1;
    }
    cli->path = optind < argc ? argv[optind] : NULL; /* none is fine for -X list/dump */
    return 0;
}

typedef struct corpus_s {
    slda_doc_t *docs;
    size_t n, cap;
    uint32_t max_word; /* 1 + the highest word id seen */
    uint64_t errors, empty;
} corpus_t;

static void corpus_clear(corpus_t *c)
{
    slda_docs_clear(c->docs, c->n);
    free(c->docs);
    memset(c, 0, sizeof *c);
}

static void corpus_keep(corpus_t *c, slda_doc_t *doc)
{
    if (doc->ntokens == 0) {
        c->empty++;
        slda_doc_clear(doc);
        return;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->docs = slda_xrealloc(c->docs, c->cap * sizeof *c->docs);
    }
    for (uint32_t i = 0; i < doc->npairs; i++)
        if (doc->word[i] >= c->max_word)
            c->max_word = doc->word[i] + 1;
    c->docs[c->n++] = *doc; /* takes what doc owns */
    slda_doc_init(doc);
}

/* Every document of path into c; bad records are reported and skipped. */
static int read_corpus(slda_conf_t *conf, slda_model_t *model, const char *path,
                       slda_format_t fmt, corpus_t *c)
{
    char err[1024];
    slda_reader_t *rd = slda_reader_open(conf, model, path, fmt, err, sizeof err);
    if (!rd) {
        fprintf(stderr, "streamlda: %s\n", err);
        return -1;
    }
    slda_doc_t doc;
    slda_doc_init(&doc);
    for (;;) {
        slda_err_t e = slda_reader_next(rd, &doc, err, sizeof err);
        if (e == SLDA_ERR_EOF)
            break;
        if (e != SLDA_OK) {
            c->errors++;
            slda_cli_input_error(e, err);
            slda_doc_clear(&doc);
            continue;
        }
        if (conf->p.kind == SLDA_KIND_ATM && doc.nauthor > 1) {
            /* the batch ATM takes one author a document (docs/models.md, "Batch mode") */
            snprintf(err, sizeof err, "%s: document \"%s\": %u authors; batch mode with "
                     "model.kind=atm takes one author a document (skipped)", path,
                     doc.id ? doc.id : "", doc.nauthor);
            c->errors++;
            slda_cli_input_error(SLDA_ERR_INVALID, err);
            slda_doc_clear(&doc);
            continue;
        }
        corpus_keep(c, &doc);
    }
    slda_doc_clear(&doc);
    slda_reader_close(rd);
    return 0;
}

static void on_progress(uint32_t iter, double perplexity, void *opaque)
{
    (void)opaque;
    fprintf(stderr, "iter %u perplexity %.1f\n", iter, perplexity);
}

/* Load the corpus and run the experiment; conf is applied already. */
static int run_batch(slda_conf_t *conf, const batch_cli_t *cli)
{
    char err[1024];
    corpus_t corpus = {0};
    slda_batch_result_t res;
    int rc = SLDA_EXIT_FAIL;
    if (slda_cli_guess_vocab(conf, cli->path, cli->fmt))
        return SLDA_EXIT_USAGE;
    /* an -o that cannot be written fails now, not after the whole run */
    if (cli->output && slda_outfile_check("snapshot", cli->output, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda: %s\n", err);
        return SLDA_EXIT_FAIL;
    }
    slda_model_t *model = slda_model_new(conf, err, sizeof err);
    if (!model) {
        fprintf(stderr, "streamlda: %s\n", err);
        return SLDA_EXIT_FAIL;
    }
    if (read_corpus(conf, model, cli->path, cli->fmt, &corpus))
        goto out;
    /* In open-vocabulary mode ids can run past the rows in use (eviction
     * leaves holes), so W covers every id seen. */
    if (corpus.n == 0) {
        fprintf(stderr, "streamlda: corpus \"%s\": no documents to train (%llu bad records, "
                "%llu empty; the reasons are above)\n", cli->path,
                (unsigned long long)corpus.errors, (unsigned long long)corpus.empty);
        goto out;
    }
    uint32_t W = slda_model_vocab_size(model);
    if (corpus.max_word > W)
        W = corpus.max_word;
    fprintf(stderr, "batch: %zu documents, vocabulary %u, %llu bad records, %llu empty\n",
            corpus.n, W, (unsigned long long)corpus.errors, (unsigned long long)corpus.empty);
    slda_err_t e = slda_batch_train(cli->output ? model : NULL, conf, corpus.docs, corpus.n, W,
                                    cli->iterations, on_progress, cli->every, NULL, &res, err,
                                    sizeof err);
    if (e != SLDA_OK) {
        fprintf(stderr, "streamlda: %s (%s)\n", err, slda_err_name(e));
        goto out;
    }
    printf("batch local=%s K=%u iterations=%u perplexity=%.2f seconds=%.3f\n",
           slda_local_name(conf->p.vb, conf->p.hybrid), conf->p.topics, cli->iterations,
           res.perplexity, res.seconds);
    if (cli->output && slda_snapshot_write(model, cli->output, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda: %s\n", err);
        goto out;
    }
    rc = fflush(stdout) == 0 ? SLDA_EXIT_OK : SLDA_EXIT_FAIL;
out:
    corpus_clear(&corpus);
    slda_model_destroy(model);
    return rc;
}

int slda_cli_batch(int argc, char **argv)
{
    batch_cli_t cli = {.iterations = 300, .every = 10, .fmt = SLDA_FORMAT_AUTO};
    int rc, done = 0, parsed = parse_args(&cli, argc, argv);
    if (parsed) {
        fputs(batch_usage, parsed > 0 ? stdout : stderr);
        slda_cli_opts_clear(&cli.opts);
        return parsed > 0 ? SLDA_EXIT_OK : SLDA_EXIT_USAGE;
    }
    slda_conf_t *conf = slda_conf_new();
    rc = slda_cli_conf_apply(conf, &cli.opts, &done);
    if (rc == SLDA_EXIT_OK && !done && !cli.path) {
        fprintf(stderr, "streamlda train --batch: expected one FILE\n");
        fputs(batch_usage, stderr);
        rc = SLDA_EXIT_USAGE;
    } else if (rc == SLDA_EXIT_OK && !done) {
        rc = run_batch(conf, &cli);
    }
    slda_conf_destroy(conf);
    slda_cli_opts_clear(&cli.opts);
    return rc;
}
