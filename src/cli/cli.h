/* cli.h - shared pieces of the command line (src/cli/): the only code that prints and exits. */
#ifndef SLDA_CLI_H
#define SLDA_CLI_H

#include "streamlda.h"

#include <signal.h>

/* Exit codes. */
#define SLDA_EXIT_OK 0
#define SLDA_EXIT_FAIL 1
#define SLDA_EXIT_USAGE 2

/* Options every subcommand shares, collected by getopt_long in the
 * subcommand and applied with slda_cli_conf_apply. */
typedef struct slda_cli_opts_s {
    const char *config_path; /* -c/--config FILE, may be NULL */
    const char **xprops;     /* -X key=value, in order */
    size_t nx, xcap;
} slda_cli_opts_t;

/* cli_common.c: -c FILE or -X key=value of getopt's option c into opts; 1 if handled. */
int slda_cli_common_opt(int c, slda_cli_opts_t *opts);
/* A snapshot, or NULL after printing the path, the reason and the error's name. */
slda_model_t *slda_cli_load_snapshot(const char *path);
/* s with HTML's special characters escaped (the report's pages). */
void slda_cli_html_text(FILE *f, const char *s);
/* Remember one -X key=value (the string is borrowed from argv). */
void slda_cli_add_x(slda_cli_opts_t *opts, const char *kv);
/* A record's fields named on the command line (train, timeline, infer): --time-field,
 * --text-field, --id-field, --author-field, --lang-field and --group-field, getopt codes 'F',
 * 'U', 'I', 'A', 'G' and 'P', are -X input.time.field=NAME ... input.group.field=NAME. One table (cli_common.c)
 * for every command: slda_cli_longopts writes a command's own options (own, up to its
 * {0, 0, 0, 0}) then those of the field options whose codes are in fields ("FUIG") into out
 * (room for cap, terminated; an overflow aborts: a programming error) and returns out;
 * slda_cli_field_opt turns one into its -X, 1 when c was one of them; buf holds the
 * "key=value" strings until the options are applied. */
struct option;
struct option *slda_cli_longopts(const struct option *own, const char *fields,
                                 struct option *out, size_t cap);
typedef char slda_cli_fieldbuf_t[6][300]; /* --time-, --text-, --id-, --author-, --lang-,
                                             --group-field */
int slda_cli_field_opt(int c, slda_cli_opts_t *opts, slda_cli_fieldbuf_t buf);
/* Apply defaults < config file < environment < -X into conf. `-X list`
 * prints the property table and `-X dump` the effective configuration, and
 * then return SLDA_EXIT_OK with *done set. Prints errors on stderr and
 * returns SLDA_EXIT_USAGE on a bad key or value. */
int slda_cli_conf_apply(slda_conf_t *conf, slda_cli_opts_t *opts, int *done);
/* One -X key=value into conf; prints why and returns SLDA_EXIT_USAGE when refused. */
int slda_cli_x_set(slda_conf_t *conf, const char *kv);
void slda_cli_opts_clear(slda_cli_opts_t *opts);

/* Set to the signal number by SIGINT/SIGTERM/SIGHUP (the handler does nothing else);
 * loops poll it. A command stopped by it exits 128 + the number. */
extern volatile sig_atomic_t slda_cli_stop;
/* The service's stop flag (slda_service_run): 1 at the first of those signals, -1 at the
 * next one (stop now: the shutdown's waits end at once). */
extern volatile sig_atomic_t slda_cli_svc_stop;
void slda_cli_install_signals(void); /* also ignores SIGPIPE */
/* Set vocab.file from the input's neighbour (vocab.X.txt beside docword.X.txt,
 * vocab.txt beside an lda-c file) unless one is configured; prints and
 * returns -1 if the property cannot be set. */
int slda_cli_guess_vocab(slda_conf_t *conf, const char *path, slda_format_t fmt);

/* Report a rejected input record on stderr: the first SLDA_CLI_ERRORS_SHOWN of
 * each kind in full, then one line saying the rest are only counted. */
#define SLDA_CLI_ERRORS_SHOWN 10
void slda_cli_input_error(slda_err_t err, const char *msg);
/* One line with the count of every kind of rejected record (if any). */
void slda_cli_input_summary(void);

/* Subcommands: argv[0] is the subcommand name. Return the exit code. */
int slda_cli_train(int argc, char **argv);
int slda_cli_topics(int argc, char **argv);  /* cli_topics.c */
int slda_cli_authors(int argc, char **argv); /* cli_authors.c */
int slda_cli_diff(int argc, char **argv);    /* cli_diff.c */
int slda_cli_report(int argc, char **argv);  /* cli_report.c, report_*.c */
int slda_cli_timeline(int argc, char **argv); /* cli_timeline.c */
int slda_cli_label(int argc, char **argv);   /* cli_label.c */

/* train --snapshot-dir DIR [--snapshot-every N] [--time-field NAME] (cli_snapshots.c): a snapshot
 * <DIR>/<model>-<updates, 20 digits>.slda every N documents and at the end; with a time field,
 * the tracker (src/track) gets each document's mixture at its event time and writes its state
 * beside each snapshot (<snapshot>.track.json). NULL (after printing why) if DIR cannot be
 * used. */
typedef struct slda_cli_snaps_s slda_cli_snaps_t;
slda_cli_snaps_t *slda_cli_snaps_new(const slda_conf_t *conf, const slda_model_t *model,
                                           const char *dir, uint64_t every, int timed);
void slda_cli_snaps_destroy(slda_cli_snaps_t *tl);
/* Room for n mixtures when the tracker wants them, else NULL (owned by tl). */
float *slda_cli_snaps_thetas(slda_cli_snaps_t *tl, size_t n);
/* After a minibatch (final: the end of training): feed the tracker, write a snapshot when due.
 * Accepts tl NULL. -1 after printing why a snapshot could not be written. */
int slda_cli_snaps_step(slda_cli_snaps_t *tl, slda_model_t *model, const slda_doc_t *docs,
                           size_t n, const float *thetas, int final);
/* At the end of the input, before the replay's second visits: the tracker compares the
 * topics' words now (events for the documents since the last snapshot), so the final
 * snapshot's comparison covers the replay alone, which raises none. Accepts tl NULL. */
void slda_cli_snaps_compare(slda_cli_snaps_t *tl, slda_model_t *model);
int slda_cli_infer(int argc, char **argv);
int slda_cli_export(int argc, char **argv);
int slda_cli_batch(int argc, char **argv);   /* train --batch */
/* cli_kafka.c, in the module streamlda-kafka.so: main() finds them with dlsym */
#define SLDA_KAFKA_MODULE "streamlda-kafka.so"
int slda_cli_run(int argc, char **argv);
int slda_cli_produce(int argc, char **argv);
int slda_cli_broker(int argc, char **argv);

#endif
