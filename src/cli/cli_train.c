/* cli_train.c - `streamlda train` in stream mode: files or standard input, minibatches, held-out
 * perplexity, second visits, the summary line.
 *
 * stdout carries the summary (and topics with -n); progress and diagnostics go to stderr.
 * Exit codes: 0 success, 1 runtime failure (nothing trained, an output that cannot be
 * written), 2 usage error, 128 + the signal when stopped.
 */
#include "cli/cli.h"
#include "io/outfile.h"
#include "core/json.h"
#include "io/reader.h"
#include "core/slda_int.h"
#include "io/snapshot.h"
#include "engine/model.h"
#include "text/tokenize.h"
#include "track/track.h"

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


/* ---- train (stream mode over files or standard input) ---- */

static const char train_usage[] =
    "Usage: streamlda train [OPTIONS] [FILE...]\n"
    "Learn a topic model from documents in FILEs (or standard input, '-').\n"
    "Stream mode runs minibatches of minibatch.docs documents through the hybrid\n"
    "local step and the stochastic global update; --batch runs the hybrid paper's\n"
    "in-place batch algorithms instead (see `streamlda train --batch --help`).\n"
    "\n"
    "  -f, --format FMT     auto (default), uci, ldac, text, jsonl, csv, tsv (CSV/TSV: a\n"
    "                       header line naming the columns; auto detects them by name or\n"
    "                       by a header of names, and refuses one without its text column)\n"
    "  -o, --output FILE    write the final model snapshot to FILE ('-': standard output,\n"
    "                       and the summary goes to standard error)\n"
    "  -p, --passes N       passes over the input (default 1; files are held in memory)\n"
    "  -k, --topics N       number of topics (same as -X topics=N)\n"
    "      --heldout M      hold out documents with XXH3(id) % M == 0 (-X heldout.modulo=M)\n"
    "                       and report their document-completion perplexity\n"
    "      --print-topics N print the top N words of each topic at the end\n"
    "      --coherence      report UMass coherence (top 10 words) on the held-out docs\n"
    "      --test-obs FILE  with --test-held: an explicit document-completion split;\n"
    "      --test-held FILE theta is folded in on each document of --test-obs and the\n"
    "                       document with the same id in --test-held is scored\n"
    "      --batch          batch mode (the hybrid paper's experiment)\n"
    "      --snapshot-dir DIR  also write snapshots DIR/<model.name>-<updates>.slda along the\n"
    "                       way (`streamlda report DIR` charts them) and at the end\n"
    "      --snapshot-every N  with --snapshot-dir: a snapshot every N documents trained\n"
    "      --time-field NAME  each document's event time is in field NAME of its JSON line\n"
    "                       or CSV/TSV row (ISO 8601, YYYYMMDD or epoch); with --snapshot-dir\n"
    "                       the tracker's state (prevalence by event time, drift, events;\n"
    "                       docs/tracking.md) is written beside each snapshot\n"
    "      --text-field NAME[,NAME]  the text's field(s) (default text; several are joined)\n"
    "      --id-field NAME  the id's field (default id; else the line number)\n"
    "      --author-field NAME  -X model.kind=atm: the authors' field (default author; a\n"
    "                       string, a JSON array, or names separated by ';')\n"
    "      --lang-field NAME  the language's field (default lang, else language; overrides\n"
    "                       identification)\n"
    "      --group-field NAME  with --time-field: track each group's share over time and\n"
    "                       its topic mix (a source, a channel; @lang: the language;\n"
    "                       @author: the authors, the default of model.kind=atm)\n"
    "  -c, --config FILE    configuration file (key=value lines)\n"
    "  -X key=value         set a property; -X list shows them all, -X dump the result\n"
    "  -q, --quiet          no progress lines\n"
    "  -h, --help           this help\n"
    "\n"
    "Standard output gets one summary line:\n"
    "  train docs=N tokens=N seconds=S tokens_per_s=R test_docs=N perplexity=P rejected=N\n"
    "        dropped_tokens=N wall_seconds=S\n"
    "(seconds and tokens_per_s count the training steps only; wall_seconds adds reading and\n"
    "tokenising the input; neither counts held-out evaluation. perplexity is - without\n"
    "held-out documents; rejected counts the records left out with a reason on stderr;\n"
    "dropped_tokens the occurrences of new words a full vocabulary could not take).\n"
    "\n"
    "Exit status: 0 trained; 1 nothing trained (no documents, every record rejected,\n"
    "everything held out: no model is written) or a runtime failure; 2 usage error;\n"
    "130 (SIGINT) / 143 (SIGTERM) / 129 (SIGHUP): stopped early, the model so far\n"
    "written with -o.\n";

typedef struct docvec_s {
    slda_doc_t *v;
    size_t n, cap;
    uint64_t tokens;
} docvec_t;

static slda_doc_t *docvec_push(docvec_t *dv)
{
    if (dv->n == dv->cap) {
        dv->cap = dv->cap ? dv->cap * 2 : 1024;
        dv->v = slda_xrealloc(dv->v, dv->cap * sizeof *dv->v);
    }
    slda_doc_init(&dv->v[dv->n]);
    return &dv->v[dv->n++];
}

static void docvec_clear(docvec_t *dv)
{
    slda_docs_clear(dv->v, dv->n);
    free(dv->v);
    memset(dv, 0, sizeof *dv);
}

typedef struct train_run_s {
    slda_conf_t *conf;
    slda_model_t *model;
    docvec_t heldout;
    docvec_t batch;
    uint64_t ndocs_read, nerrors;
    double train_seconds;
    double eval_seconds;     /* held-out evaluation, excluded from the rates */
    double last_rho;
    double last_progress;
    int quiet;
    char **files;
    int nfiles;
    slda_format_t fmt;
    const char *test_obs, *test_held;
    docvec_t obs, held;      /* explicit split, paired by id */
    slda_heldout_t *hout, *hobs, *hheld; /* heldout, obs, held by word key: scored */
    char first_error[1024];  /* why the first record was rejected ("" if none) */
    const char *time_field;  /* --time-field: JSON lines with an event time (cli_timed.c) */
    slda_cli_snaps_t *tl; /* --snapshot-dir: snapshots along the way (cli_snapshots.c) */
    uint32_t pass;           /* the pass over the input (-p): only the first feeds the tracker */
} train_run_t;

/* Keep doc in *set by word key (ids go stale once the vocabulary evicts). */
static void held_put(slda_heldout_t **set, const slda_model_t *model, const slda_doc_t *doc)
{
    char err[256];
    if (!*set)
        *set = slda_heldout_new();
    if (slda_heldout_put(*set, slda_heldout_count(*set), model, doc, err, sizeof err))
        fprintf(stderr, "streamlda: held-out document not kept: %s\n", err);
}

static int is_heldout(const slda_conf_t *conf, const slda_doc_t *doc, uint64_t ordinal)
{
    char buf[32];
    const char *id = doc->id;
    if (conf->heldout_modulo == 0)
        return 0;
    if (!id) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)ordinal);
        id = buf;
    }
    return slda_hash64(id, strlen(id), 0) % conf->heldout_modulo == 0;
}

static double heldout_perplexity(train_run_t *tr)
{
    double perp = NAN, t0 = slda_mono_s();
    if (tr->hobs)
        slda_heldout_perplexity(tr->model, tr->hobs, tr->hheld, tr->conf->p.seed, &perp, NULL);
    else if (tr->hout)
        slda_heldout_perplexity(tr->model, tr->hout, NULL, tr->conf->p.seed, &perp, NULL);
    tr->eval_seconds += slda_mono_s() - t0;
    return perp;
}

/* A perplexity as text: "-" when there is none (no held-out document scored). */
static const char *perplexity_text(double perp, char out[32])
{
    if (isfinite(perp))
        snprintf(out, 32, "%.2f", perp);
    else
        snprintf(out, 32, "-");
    return out;
}

/* One status line on stderr every progress.ms: rates over training time
 * only, and the held-out perplexity when there are held-out documents (its
 * evaluation is not counted in the rates). */
static void progress(train_run_t *tr, int force)
{
    double now = slda_mono_s();
    if (tr->quiet || tr->conf->progress_ms == 0)
        return;
    if (!force && (now - tr->last_progress) * 1000 < tr->conf->progress_ms)
        return;
    tr->last_progress = now;
    char perp[32];
    double secs = tr->train_seconds > 0 ? tr->train_seconds : 1e-9;
    fprintf(stderr,
            "progress: docs %llu tokens %llu docs/s %.0f tokens/s %.0f rho %.4f updates %llu "
            "vocabulary %u rejected %llu perplexity %s\n",
            (unsigned long long)slda_model_docs(tr->model),
            (unsigned long long)slda_model_tokens(tr->model), slda_model_docs(tr->model) / secs,
            slda_model_tokens(tr->model) / secs, tr->last_rho,
            (unsigned long long)slda_model_updates(tr->model), slda_model_vocab_size(tr->model),
            (unsigned long long)tr->nerrors, perplexity_text(heldout_perplexity(tr), perp));
}

static int train_minibatch(train_run_t *tr, slda_doc_t *docs, size_t n)
{
    char err[512];
    slda_train_stats_t st;
    if (n == 0)
        return 0;
    float *thetas = slda_cli_snaps_thetas(tr->tl, n);
    if (slda_model_train(tr->model, docs, n, thetas, &st, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda: train: %s\n", err);
        return -1;
    }
    tr->train_seconds += st.seconds;
    tr->last_rho = st.rho;
    progress(tr, 0);
    /* a second pass trains the same documents again: the prevalence counts them once */
    return slda_cli_snaps_step(tr->tl, tr->model, docs, tr->pass ? 0 : n, thetas, 0);
}

static int load_file(train_run_t *tr, const char *path, docvec_t *dv)
{
    char err[1024];
    slda_reader_t *rd = slda_reader_open(tr->conf, tr->model, path, tr->fmt, err, sizeof err);
    if (!rd) {
        fprintf(stderr, "streamlda: %s\n", err);
        return -1;
    }
    for (;;) {
        slda_doc_t *doc = docvec_push(dv);
        slda_err_t e = slda_reader_next(rd, doc, err, sizeof err);
        if (e == SLDA_OK)
            continue;
        slda_doc_clear(doc);
        dv->n--;
        if (e == SLDA_ERR_EOF)
            break;
        slda_cli_input_error(e, err);
    }
    slda_reader_close(rd);
    return 0;
}

static int cmp_doc_id(const void *a, const void *b)
{
    const slda_doc_t *x = a, *y = b;
    return strcmp(x->id ? x->id : "", y->id ? y->id : "");
}

/* Load --test-obs and --test-held and keep the documents present in both,
 * paired by id at the same index. */
static int load_test_split(train_run_t *tr)
{
    docvec_t obs = {0}, held = {0};
    if (load_file(tr, tr->test_obs, &obs) || load_file(tr, tr->test_held, &held)) {
        docvec_clear(&obs);
        docvec_clear(&held);
        return -1;
    }
    qsort(obs.v, obs.n, sizeof *obs.v, cmp_doc_id);
    qsort(held.v, held.n, sizeof *held.v, cmp_doc_id);
    size_t i = 0, j = 0;
    while (i < obs.n && j < held.n) {
        int c = cmp_doc_id(&obs.v[i], &held.v[j]);
        if (c == 0) {
            *docvec_push(&tr->obs) = obs.v[i];
            *docvec_push(&tr->held) = held.v[j];
            slda_doc_init(&obs.v[i++]);
            slda_doc_init(&held.v[j++]);
        } else if (c < 0) {
            i++;
        } else {
            j++;
        }
    }
    for (size_t k = 0; k < tr->obs.n; k++) {
        held_put(&tr->hobs, tr->model, &tr->obs.v[k]);
        held_put(&tr->hheld, tr->model, &tr->held.v[k]);
    }
    docvec_clear(&obs);
    docvec_clear(&held);
    return 0;
}

/* Read every document of the inputs; keep held-out ones aside; hand the
 * rest to sink (stream: train every minibatch; passes > 1: keep them). */
static int read_inputs(train_run_t *tr, int keep_all)
{
    char err[1024];
    uint32_t mb = tr->conf->minibatch_docs;
    for (int f = 0; f < tr->nfiles && !slda_cli_stop; f++) {
        /* with a time field (--time-field), JSON lines or CSV/TSV records carry each
         * document's event time (doc.time_ms); the reader rejects a record without one */
        slda_reader_t *rd = slda_reader_open(tr->conf, tr->model, tr->files[f], tr->fmt, err,
                                             sizeof err);
        if (!rd && slda_cli_stop)
            break; /* a signal interrupted the first read: not an error */
        if (!rd) {
            fprintf(stderr, "streamlda: %s\n", err);
            return -1;
        }
        for (;;) {
            if (slda_cli_stop)
                break;
            slda_doc_t *doc = docvec_push(&tr->batch);
            slda_err_t e = slda_reader_next(rd, doc, err, sizeof err);
            if (e != SLDA_OK) {
                slda_doc_clear(doc);
                tr->batch.n--;
                if (e == SLDA_ERR_EOF || (e == SLDA_ERR_IO && slda_cli_stop))
                    break; /* the end, or a read interrupted by a signal (EINTR) */
                if (!tr->nerrors++)
                    snprintf(tr->first_error, sizeof tr->first_error, "%s", err);
                slda_cli_input_error(e, err);
                continue;
            }
            tr->ndocs_read++;
            if (is_heldout(tr->conf, doc, tr->ndocs_read)) {
                held_put(&tr->hout, tr->model, doc);
                *docvec_push(&tr->heldout) = *doc;
                tr->batch.n--;
                continue;
            }
            tr->batch.tokens += doc->ntokens;
            if (!keep_all && tr->batch.n >= mb) {
                if (train_minibatch(tr, tr->batch.v, tr->batch.n)) {
                    slda_reader_close(rd);
                    return -1;
                }
                slda_docs_clear(tr->batch.v, tr->batch.n);
                tr->batch.n = 0;
            }
        }
        slda_reader_close(rd);
    }
    if (!keep_all && tr->batch.n) {
        if (train_minibatch(tr, tr->batch.v, tr->batch.n))
            return -1;
        slda_docs_clear(tr->batch.v, tr->batch.n);
        tr->batch.n = 0;
    }
    return 0;
}

static int train_passes(train_run_t *tr, uint32_t passes)
{
    uint32_t mb = tr->conf->minibatch_docs;
    if (slda_model_corpus_tokens(tr->model) <= 0)
        slda_model_set_corpus_tokens(tr->model, (double)tr->batch.tokens);
    /* replay: every document of every pass is known now; when they all fit in
     * replay.docs, their second visits wait for the end (replay.c) */
    slda_model_set_input_docs(tr->model, (uint64_t)tr->batch.n * passes);
    for (uint32_t pass = 0; pass < passes && !slda_cli_stop; pass++) {
        tr->pass = pass;
        for (size_t i = 0; i < tr->batch.n && !slda_cli_stop; i += mb) {
            size_t n = tr->batch.n - i < mb ? tr->batch.n - i : mb;
            if (train_minibatch(tr, tr->batch.v + i, n))
                return -1;
        }
        if (!tr->quiet && (tr->heldout.n || tr->obs.n))
            fprintf(stderr, "pass %u: held-out perplexity %.2f\n", pass + 1,
                    heldout_perplexity(tr));
    }
    return 0;
}

static void print_topics(const slda_model_t *model, size_t n, FILE *out)
{
    uint32_t *ids = slda_xmalloc(n * sizeof *ids);
    float *probs = slda_xmalloc(n * sizeof *probs);
    for (uint32_t k = 0; k < slda_model_topics(model); k++) {
        size_t m = slda_model_top_words(model, k, n, ids, probs);
        fprintf(out, "topic %u:", k);
        for (size_t i = 0; i < m; i++)
            fprintf(out, " %s", slda_model_word(model, ids[i]));
        fputc('\n', out);
    }
    free(ids);
    free(probs);
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP"
                                                                                  : "signal";
}

/* Why a train run has no model: interrupted, every record rejected, every
 * document held out, or no documents at all. */
static void report_nothing_trained(const train_run_t *tr, const char *output)
{
    const char *tail = output ? "; no model written" : "";
    if (slda_cli_stop)
        fprintf(stderr, "streamlda train: interrupted (%s) before any document was trained%s\n",
                signal_name(slda_cli_stop), tail);
    else if (tr->nerrors == 1 && !tr->ndocs_read)
        fprintf(stderr, "streamlda train: nothing trained: the only record was rejected (%s)%s\n",
                tr->first_error, tail);
    else if (tr->nerrors && !tr->ndocs_read)
        fprintf(stderr,
                "streamlda train: nothing trained: all %llu records were rejected (the first: "
                "%s)%s\n",
                (unsigned long long)tr->nerrors, tr->first_error, tail);
    else if (tr->ndocs_read && tr->heldout.n == tr->ndocs_read)
        fprintf(stderr,
                "streamlda train: nothing trained: all %llu documents were held out "
                "(heldout.modulo=%u)%s\n",
                (unsigned long long)tr->ndocs_read, tr->conf->heldout_modulo, tail);
    else if (tr->ndocs_read)
        fprintf(stderr, "streamlda train: nothing trained from %llu documents%s\n",
                (unsigned long long)tr->ndocs_read, tail);
    else if (tr->nfiles == 1)
        fprintf(stderr, "streamlda train: nothing trained: no documents in %s%s\n",
                strcmp(tr->files[0], "-") ? tr->files[0] : "standard input", tail);
    else
        fprintf(stderr, "streamlda train: nothing trained: no documents in the %d inputs%s\n",
                tr->nfiles, tail);
}


int slda_cli_train(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'},  {"output", required_argument, 0, 'o'},
        {"passes", required_argument, 0, 'p'},  {"topics", required_argument, 0, 'k'},
        {"heldout", required_argument, 0, 'H'}, {"print-topics", required_argument, 0, 'T'},
        {"coherence", no_argument, 0, 'C'},     {"config", required_argument, 0, 'c'},
        {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
        {"batch", no_argument, 0, 'B'},         {"test-obs", required_argument, 0, 'O'},
        {"test-held", required_argument, 0, 'L'}, {"snapshot-dir", required_argument, 0, 'D'},
        {"snapshot-every", required_argument, 0, 'E'}, {0, 0, 0, 0}};
    struct option opts_all[32];
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--batch"))
            return slda_cli_batch(argc, argv);

    slda_cli_opts_t opts = {0};
    train_run_t tr = {0};
    const char *output = NULL, *snap_dir = NULL;
    uint64_t snap_every = 0;
    uint32_t passes = 1, print_n = 0;
    int coherence = 0, c, rc = SLDA_EXIT_FAIL, done;
    char err[1024], kbuf[64], hbuf[64]; /* -k / --heldout as -X, alive until return */
    slda_cli_fieldbuf_t fbuf;           /* --time-field, --text-field, ... as -X */
    tr.conf = slda_conf_new();
    tr.fmt = SLDA_FORMAT_AUTO;
    optind = 1;
    slda_cli_longopts(longopts, "FUIAGP", opts_all, sizeof opts_all / sizeof opts_all[0]);
    while ((c = getopt_long(argc, argv, "f:o:p:k:c:X:qh", opts_all, NULL)) != -1) {
        if (slda_cli_common_opt(c, &opts) || slda_cli_field_opt(c, &opts, fbuf))
            continue;
        switch (c) {
        case 'f':
            tr.fmt = slda_format_parse(optarg);
            if ((int)tr.fmt < 0) {
                fprintf(stderr, "streamlda train: unknown format \"%s\"\n", optarg);
                goto usage;
            }
            break;
        case 'o': output = optarg; break;
        case 'p': passes = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'k':
            snprintf(kbuf, sizeof kbuf, "topics=%s", optarg);
            slda_cli_add_x(&opts, kbuf);
            break;
        case 'H':
            snprintf(hbuf, sizeof hbuf, "heldout.modulo=%s", optarg);
            slda_cli_add_x(&opts, hbuf);
            break;
        case 'T': print_n = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'C': coherence = 1; break;
        case 'O': tr.test_obs = optarg; break;
        case 'L': tr.test_held = optarg; break;
        case 'D': snap_dir = optarg; break;
        case 'E': {
            char *end;
            errno = 0;
            snap_every = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || *optarg == '-' || snap_every == 0) {
                fprintf(stderr, "streamlda train: --snapshot-every must be a number of documents "
                                "> 0\n");
                goto usage;
            }
            break;
        }
        case 'q': tr.quiet = 1; break;
        case 'h':
            fputs(train_usage, stdout);
            rc = SLDA_EXIT_OK;
            goto out;
        default: goto usage;
        }
    }
    if (!tr.test_obs != !tr.test_held) {
        fprintf(stderr, "streamlda train: --test-obs and --test-held go together\n");
        goto usage;
    }
    if (snap_every && !snap_dir) {
        fprintf(stderr, "streamlda train: --snapshot-every needs --snapshot-dir\n");
        goto usage;
    }
    if (passes < 1 || passes > 100000) {
        fprintf(stderr, "streamlda train: --passes must be 1..100000\n");
        goto usage;
    }
    if ((rc = slda_cli_conf_apply(tr.conf, &opts, &done)) != SLDA_EXIT_OK || done)
        goto out;
    if (tr.conf->input_time_field && *tr.conf->input_time_field)
        tr.time_field = tr.conf->input_time_field; /* --time-field, -X input.time.field */
    if (tr.conf->p.replay == SLDA_REPLAY_AUTO) /* second visits: on for a finite input */
        tr.conf->p.replay = tr.conf->p.kind == SLDA_KIND_LDA ? SLDA_REPLAY_ON : SLDA_REPLAY_OFF;
    static char *stdin_only[] = {"-"};
    tr.files = optind < argc ? argv + optind : stdin_only;
    tr.nfiles = optind < argc ? argc - optind : 1;
    if (slda_cli_guess_vocab(tr.conf, tr.files[0], tr.fmt)) {
        rc = SLDA_EXIT_USAGE;
        goto out;
    }
    rc = SLDA_EXIT_FAIL;
    /* an -o that cannot be written fails now, not after the whole run */
    if (output && slda_outfile_check("snapshot", output, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda: %s\n", err);
        goto out;
    }
    tr.model = slda_model_new(tr.conf, err, sizeof err);
    if (!tr.model) {
        fprintf(stderr, "streamlda: %s\n", err);
        goto out;
    }
    if (tr.test_obs && load_test_split(&tr))
        goto out;
    if (snap_dir && tr.time_field && tr.conf->track &&
        slda_track_group_check(tr.conf, slda_model_params(tr.model)->kind, 0, err, sizeof err)) {
        fprintf(stderr, "streamlda train: %s\n", err);
        goto out;
    }
    if (snap_dir && !(tr.tl = slda_cli_snaps_new(tr.conf, tr.model, snap_dir, snap_every,
                                                    tr.time_field && tr.conf->track)))
        goto out;
    slda_cli_install_signals();
    /* Files (or several passes) are held in memory so C (corpus.tokens) is
     * the training set's size; a single pass over standard input streams. */
    int streaming = passes == 1 && tr.nfiles == 1 && !strcmp(tr.files[0], "-");
    double wall0 = slda_mono_s();
    if (read_inputs(&tr, !streaming))
        goto out;
    if (!streaming && train_passes(&tr, passes))
        goto out;
    if (!slda_cli_stop) { /* replay: the documents still waiting for their second visit */
        char derr[512];
        slda_cli_snaps_compare(tr.tl, tr.model); /* the stream's end, before the replay */
        double d0 = slda_mono_s();
        if (slda_model_replay_drain(tr.model, derr, sizeof derr) != SLDA_OK) {
            fprintf(stderr, "streamlda: train: %s\n", derr);
            goto out;
        }
        tr.train_seconds += slda_mono_s() - d0;
    }
    slda_model_flush(tr.model); /* the last minibatch's update (global.stale) */
    double wall = slda_mono_s() - wall0 - tr.eval_seconds;
    progress(&tr, 1);
    slda_cli_input_summary();
    if (slda_model_docs(tr.model) == 0) { /* never an empty model and exit 0 */
        report_nothing_trained(&tr, output);
        rc = slda_cli_stop ? 128 + slda_cli_stop : SLDA_EXIT_FAIL;
        goto out;
    }
    /* With -o - the snapshot is the data on standard output: reports go to stderr. */
    FILE *report = output && !strcmp(output, "-") ? stderr : stdout;
    char perp[32];
    uint64_t refused = slda_vocab_refused(slda_model_vocab(tr.model));
    fprintf(report, "train docs=%llu tokens=%llu seconds=%.3f tokens_per_s=%.0f test_docs=%zu "
           "perplexity=%s rejected=%llu dropped_tokens=%llu wall_seconds=%.3f\n",
           (unsigned long long)slda_model_docs(tr.model),
           (unsigned long long)slda_model_tokens(tr.model), tr.train_seconds,
           slda_model_tokens(tr.model) / (tr.train_seconds > 0 ? tr.train_seconds : 1e-9),
           tr.obs.n ? tr.obs.n : tr.heldout.n, perplexity_text(heldout_perplexity(&tr), perp),
           (unsigned long long)tr.nerrors, (unsigned long long)refused, wall);
    uint64_t capped = slda_tokenizer_capped(slda_model_tokenizer(tr.model));
    if (capped)
        fprintf(stderr,
                "streamlda train: %llu tokens longer than text.token.max=%u characters were "
                "dropped (run-together text or junk: docs/text.md)\n",
                (unsigned long long)capped,
                slda_tokenizer_rules(slda_model_tokenizer(tr.model))->token_max);
    if (refused)
        fprintf(stderr,
                "streamlda train: warning: %llu occurrences of new words were left out: the "
                "vocabulary (vocab.capacity=%u) was full of words the current or the previous "
                "minibatch uses; "
                "raise vocab.capacity\n",
                (unsigned long long)refused, slda_vocab_capacity(slda_model_vocab(tr.model)));
    if (tr.conf->p.births) { /* births.c: the topic events, then their counts (stderr) */
        slda_event_t ev[64];
        size_t nev;
        for (uint64_t seen = 0; (nev = slda_model_events(tr.model, seen, ev, 64)) > 0;
             seen = ev[nev - 1].seq)
            for (size_t i = 0; i < nev; i++)
                fprintf(stderr, "topic %s topic=%u other=%u update=%llu doc=%llu docs=%u "
                        "value=%.4f\n", slda_event_kind_name(ev[i].kind), ev[i].topic,
                        ev[i].other, (unsigned long long)ev[i].update,
                        (unsigned long long)ev[i].doc, ev[i].docs, ev[i].value);
        slda_topic_counts_t tc;
        slda_model_topic_counts(tr.model, &tc);
        fprintf(stderr, "topics births=%llu deaths=%llu merges=%llu proposals=%llu rejected=%llu "
                "(no_cluster=%llu no_gain=%llu no_slot=%llu) flagged=%llu\n",
                (unsigned long long)tc.births, (unsigned long long)tc.deaths,
                (unsigned long long)tc.merges, (unsigned long long)tc.proposals,
                (unsigned long long)tc.rejected, (unsigned long long)tc.no_cluster,
                (unsigned long long)tc.no_gain, (unsigned long long)tc.no_slot,
                (unsigned long long)tc.flagged);
    }
    if (coherence && tr.heldout.n) {
        double mean;
        if (slda_heldout_umass(tr.model, tr.hout, 10, &mean, NULL) == SLDA_OK)
            fprintf(report, "coherence umass_top10=%.3f\n", mean);
    }
    if (print_n)
        print_topics(tr.model, print_n, report);
    if (output && slda_snapshot_write(tr.model, output, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda: %s\n", err);
        goto out;
    }
    if (slda_cli_snaps_step(tr.tl, tr.model, NULL, 0, NULL, 1)) /* the final state */
        goto out;
    rc = SLDA_EXIT_OK;
    if (slda_cli_stop) { /* the model holds every document read in full */
        fprintf(stderr, "streamlda train: interrupted (%s) after %llu documents%s%s\n",
                signal_name(slda_cli_stop), (unsigned long long)slda_model_docs(tr.model),
                output ? "; the model so far was written to " : "; no -o, nothing saved",
                output ? output : "");
        rc = 128 + slda_cli_stop;
    }
    goto out;
usage:
    fputs(train_usage, stderr);
    rc = SLDA_EXIT_USAGE;
out:
#ifndef SLDA_FREE_AT_EXIT
    if (rc == SLDA_EXIT_OK) {
        /* main() returns next, and the kernel takes the memory back at once: freeing the
         * documents, rows and stores here took 8-11 ms on Reuters (1.5 on KOS), all serial.
         * Left reachable for leak checkers; sanitizer builds free (CMakeLists.txt), so the
         * teardown after a whole run stays checked. */
        static volatile train_run_t kept;
        slda_cli_snaps_destroy(tr.tl);
        tr.tl = NULL;
        kept = tr;
        (void)kept;
        slda_cli_opts_clear(&opts);
        return rc;
    }
#endif
    docvec_clear(&tr.batch);
    docvec_clear(&tr.heldout);
    docvec_clear(&tr.obs);
    docvec_clear(&tr.held);
    slda_heldout_destroy(tr.hout);
    slda_heldout_destroy(tr.hobs);
    slda_heldout_destroy(tr.hheld);
    slda_cli_snaps_destroy(tr.tl);
    slda_model_destroy(tr.model);
    slda_conf_destroy(tr.conf);
    slda_cli_opts_clear(&opts);
    return rc;
}
