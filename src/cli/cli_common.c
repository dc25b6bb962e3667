/* cli_common.c - what the subcommands share: -c/-X options, the record-field options' table
 * (--time-field .. --lang-field of train, timeline and infer), the configuration's precedence,
 * signals, rejected-record messages, the vocabulary file beside an input, loading a snapshot.
 *
 * The only code that prints and exits is src/cli/ (docs/architecture.md); these helpers print
 * diagnostics to stderr, never data to stdout.
 */
#include "cli/cli.h"
#include "io/outfile.h"
#include "core/json.h"
#include "io/reader.h"
#include "core/slda_int.h"
#include "io/snapshot.h"
#include "engine/model.h"
#include "text/tokenize.h"

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


/* ---- output ---- */

void slda_cli_html_text(FILE *f, const char *s)
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

/* ---- shared options ---- */

void slda_cli_add_x(slda_cli_opts_t *opts, const char *kv)
{
    if (opts->nx == opts->xcap) {
        opts->xcap = opts->xcap ? opts->xcap * 2 : 8;
        opts->xprops = slda_xrealloc(opts->xprops, opts->xcap * sizeof *opts->xprops);
    }
    opts->xprops[opts->nx++] = kv;
}

/* The record-field options: one row each, in slda_cli_fieldbuf_t's order. */
static const struct {
    const char *name, *prop;
    int code;
} field_opts[] = {{"time-field", "input.time.field", 'F'},     {"text-field", "input.text.field", 'U'},
                  {"id-field", "input.id.field", 'I'},         {"author-field", "input.author.field", 'A'},
                  {"lang-field", "input.lang.field", 'G'},     {"group-field", "input.group.field", 'P'}};
#define FIELD_OPTS (sizeof field_opts / sizeof field_opts[0])

static void put_opt(struct option *out, size_t *n, size_t cap, struct option opt)
{
    if (*n + 1 >= cap) { /* the caller's array is too small: a programming error */
        fprintf(stderr, "streamlda: internal error: more than %zu options\n", cap - 1);
        abort();
    }
    out[(*n)++] = opt;
}

struct option *slda_cli_longopts(const struct option *own, const char *fields,
                                 struct option *out, size_t cap)
{
    size_t n = 0;
    for (; own->name; own++)
        put_opt(out, &n, cap, *own);
    for (size_t i = 0; i < FIELD_OPTS; i++)
        if (strchr(fields, field_opts[i].code))
            put_opt(out, &n, cap, (struct option){field_opts[i].name, required_argument, 0,
                                                  field_opts[i].code});
    out[n] = (struct option){0, 0, 0, 0};
    return out;
}

int slda_cli_field_opt(int c, slda_cli_opts_t *opts, slda_cli_fieldbuf_t buf)
{
    for (size_t i = 0; i < FIELD_OPTS; i++) {
        if (c != field_opts[i].code)
            continue;
        snprintf(buf[i], sizeof buf[i], "%s=%s", field_opts[i].prop, optarg);
        slda_cli_add_x(opts, buf[i]);
        return 1;
    }
    return 0;
}

void slda_cli_opts_clear(slda_cli_opts_t *opts)
{
    free(opts->xprops);
    memset(opts, 0, sizeof *opts);
}

int slda_cli_x_set(slda_conf_t *conf, const char *kv)
{
    char err[512];
    const char *eq = strchr(kv, '=');
    if (!eq) {
        fprintf(stderr, "streamlda: -X \"%s\": expected key=value, list or dump\n", kv);
        return SLDA_EXIT_USAGE;
    }
    char *key = slda_xstrndup(kv, (size_t)(eq - kv));
    slda_err_t e = slda_conf_set(conf, key, eq + 1, err, sizeof err);
    free(key);
    if (e != SLDA_OK) {
        /* the key only: the reason names the value, with control bytes escaped */
        fprintf(stderr, "streamlda: -X %.*s: %s\n", (int)(eq - kv), kv, err);
        return SLDA_EXIT_USAGE;
    }
    return SLDA_EXIT_OK;
}

int slda_cli_conf_apply(slda_conf_t *conf, slda_cli_opts_t *opts, int *done)
{
    char err[512];
    *done = 0;
    if (opts->config_path && slda_conf_load_file(conf, opts->config_path, err, sizeof err)) {
        fprintf(stderr, "streamlda: %s\n", err);
        return SLDA_EXIT_USAGE;
    }
    if (slda_conf_load_env(conf, err, sizeof err)) {
        fprintf(stderr, "streamlda: %s\n", err);
        return SLDA_EXIT_USAGE;
    }
    for (size_t i = 0; i < opts->nx; i++) {
        const char *kv = opts->xprops[i];
        if (!strcmp(kv, "list")) {
            slda_conf_print_table(stdout, 0);
            *done = 1;
            return SLDA_EXIT_OK;
        }
        if (!strcmp(kv, "dump"))
            continue; /* printed once every -X is applied */
        if (slda_cli_x_set(conf, kv) != SLDA_EXIT_OK)
            return SLDA_EXIT_USAGE;
    }
    for (size_t i = 0; i < opts->nx; i++) {
        if (!strcmp(opts->xprops[i], "dump")) {
            slda_conf_dump(conf, stdout);
            *done = 1;
        }
    }
    return SLDA_EXIT_OK;
}

static uint64_t input_errors[SLDA_ERR__COUNT];

void slda_cli_input_error(slda_err_t err, const char *msg)
{
    if ((unsigned)err >= SLDA_ERR__COUNT)
        err = SLDA_ERR_INVALID;
    uint64_t n = ++input_errors[err];
    if (n <= SLDA_CLI_ERRORS_SHOWN)
        fprintf(stderr, "streamlda: %s (%s)\n", msg, slda_err_name(err));
    if (n == SLDA_CLI_ERRORS_SHOWN)
        fprintf(stderr, "streamlda: further %s records are counted, not shown\n",
                slda_err_name(err));
}

void slda_cli_input_summary(void)
{
    const char *sep = "";
    int any = 0;
    for (int e = 0; e < SLDA_ERR__COUNT; e++)
        any |= input_errors[e] > 0;
    if (!any)
        return;
    fprintf(stderr, "streamlda: rejected records:");
    for (int e = 0; e < SLDA_ERR__COUNT; e++) {
        if (input_errors[e]) {
            fprintf(stderr, "%s %llu %s", sep, (unsigned long long)input_errors[e],
                    slda_err_name((slda_err_t)e));
            sep = ",";
        }
    }
    fputc('\n', stderr);
}

/* Common option letters: -c FILE, -X key=value, -h. Returns 1 if handled. */
int slda_cli_common_opt(int c, slda_cli_opts_t *opts)
{
    if (c == 'c') {
        opts->config_path = optarg;
        return 1;
    }
    if (c == 'X') {
        slda_cli_add_x(opts, optarg);
        return 1;
    }
    return 0;
}

volatile sig_atomic_t slda_cli_stop = 0;
volatile sig_atomic_t slda_cli_svc_stop = 0;

/* No SA_RESTART: a read blocked on a pipe or terminal returns EINTR, so the
 * loop sees the flag; the flag holds the first signal's number (exit 128 + it).
 * A second signal asks the service to stop now (SLDA_STOP_NOW). SIGHUP stops
 * like SIGTERM: a closed terminal or a supervisor's hang-up must not cost the
 * training since the last snapshot (its default action killed the process). */
static void on_signal(int sig)
{
    if (slda_cli_stop) {
        slda_cli_svc_stop = -1;
        return;
    }
    slda_cli_stop = sig;
    slda_cli_svc_stop = 1;
}

void slda_cli_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}


int slda_cli_guess_vocab(slda_conf_t *conf, const char *path, slda_format_t fmt)
{
    char err[512];
    if (conf->p.vocab_file && *conf->p.vocab_file)
        return 0;
    char *vocab = slda_reader_guess_vocab(path, fmt);
    if (!vocab)
        return 0;
    int rc = slda_conf_set(conf, "vocab.file", vocab, err, sizeof err) == SLDA_OK ? 0 : -1;
    if (rc)
        fprintf(stderr, "streamlda: %s\n", err);
    free(vocab);
    return rc;
}

slda_model_t *slda_cli_load_snapshot(const char *path)
{
    char err[1024];
    slda_err_t e;
    slda_model_t *model = slda_snapshot_read(path, &e, err, sizeof err);
    if (!model) {
        fprintf(stderr, "streamlda: %s (%s)\n", err, slda_err_name(e));
        return NULL;
    }
    uint32_t icu = slda_tokenizer_icu_trained(slda_model_tokenizer(model));
    if (icu)
        fprintf(stderr,
                "streamlda: warning: %s was made with ICU %u, this program has ICU %u: Chinese, "
                "Japanese and Thai words may be cut differently (text.segment=unicode)\n",
                path, icu, slda_tokenizer_icu_major());
    return model;
}

