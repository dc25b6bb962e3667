/* main.c - the streamlda command: the subcommand table, `config`, `--version`, and the Kafka
 * commands' module (streamlda-kafka.so, loaded for run, produce and broker only).
 *
 * The only code that prints and exits is src/cli/. stdout carries data, diagnostics go to
 * stderr. Exit codes: 0 success, 1 runtime failure, 2 usage error.
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


/* ---- config, version, dispatch ---- */

static int cli_config(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--markdown")) {
        slda_conf_print_table(stdout, 1);
        return SLDA_EXIT_OK;
    }
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("Usage: streamlda config [--markdown]\n"
             "Print every property with its type, default and description\n"
             "(--markdown: as config/CONFIGURATION.md).");
        return SLDA_EXIT_OK;
    }
    slda_conf_print_table(stdout, 0);
    return SLDA_EXIT_OK;
}

static const char main_usage[] =
    "Usage: streamlda COMMAND [OPTIONS]\n"
    "Learn LDA topic models from a stream of documents.\n"
    "\n"
    "Commands:\n"
    "  train    learn from files or standard input (stream, or --batch)\n"
    "  run      the Kafka service: consume documents, learn, publish snapshots\n"
    "  topics   print the top words (and --weights, labels, --search WORD, --docs) of each\n"
    "           topic of a snapshot\n"
    "  label    list, set or remove the user labels of a snapshot's topics\n"
    "  diff     align the topics of two snapshots (optimal assignment on JS distance)\n"
    "  report   an HTML/JSON report of a run from its snapshot directory\n"
    "  timeline  each topic's share per window of event time, every document scored under\n"
    "           one snapshot (JSON, CSV)\n"
    "  infer    topic mixtures of new documents under a snapshot\n"
    "  authors  an author-topic model's authors: their mixtures, who drives a topic\n"
    "  export   write a snapshot's topic-word probabilities as a NumPy .npy file\n"
    "  produce  feed files into a Kafka topic, one document per line\n"
    "  broker   host a standalone embedded Kafka cluster for other processes\n"
    "  config   list every configuration property\n"
    "  version  print the version\n"
    "\n"
    "`streamlda COMMAND --help` describes each command.\n";

/* Data that never reached standard output (disk full, file size limit, a
 * closed pipe with SIGPIPE ignored) fails the command. */
static int finish(int rc)
{
    int e = fflush(stdout) != 0 ? errno : ferror(stdout) ? EIO : 0;
    if (!e)
        return rc;
    fprintf(stderr, "streamlda: standard output: %s\n", strerror(e));
    return rc == SLDA_EXIT_OK ? SLDA_EXIT_FAIL : rc;
}

/* run, produce and broker: cli_kafka.c and the Kafka layer, built as the module
 * streamlda-kafka.so (CMakeLists.txt) and loaded here, so that the other commands start
 * without librdkafka and its TLS libraries (4 of the 5 ms of an empty
 * start). The module calls the engine in the program, which exports it. It lies beside the
 * program (the build tree) or in ../lib/streamlda/ (installed): found from the path the
 * program was run by (AT_EXECFN), then from that path with its links resolved; never
 * through a search path (no RUNPATH: the loader would also look in the working directory). */
static int kafka_command(const char *entry, int argc, char **argv)
{
    static const char *const places[] = {"", "../lib/streamlda/"};
    const char *exe = (const char *)getauxval(AT_EXECFN);
    char *real = exe ? realpath(exe, NULL) : NULL;
    const char *bases[] = {exe, real};
    void *module = NULL;
    char path[4096];
    for (size_t b = 0; b < 2 && !module; b++) {
        if (!bases[b] || (b == 1 && !strcmp(bases[0], bases[1])))
            continue;
        const char *slash = strrchr(bases[b], '/');
        int dirlen = slash ? (int)(slash - bases[b] + 1) : 0;
        for (size_t p = 0; p < sizeof places / sizeof places[0] && !module; p++) {
            snprintf(path, sizeof path, "%s%.*s%s" SLDA_KAFKA_MODULE, dirlen ? "" : "./",
                     dirlen, bases[b], places[p]);
            if (access(path, F_OK))
                continue;
            if (!(module = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
                fprintf(stderr, "streamlda %s: cannot load the Kafka commands: %s\n", argv[0],
                        dlerror());
                free(real);
                return SLDA_EXIT_FAIL;
            }
        }
    }
    if (!module) {
        fprintf(stderr, "streamlda %s: the Kafka commands are in %s, which is neither beside "
                "the program (%s) nor in its ../lib/streamlda/\n", argv[0], SLDA_KAFKA_MODULE,
                real ? real : exe ? exe : "?");
        free(real);
        return SLDA_EXIT_FAIL;
    }
    free(real);
    int (*fn)(int, char **);
    void *sym = dlsym(module, entry);
    if (!sym) {
        fprintf(stderr, "streamlda %s: %s has no %s: %s\n", argv[0], path, entry, dlerror());
        return SLDA_EXIT_FAIL;
    }
    memcpy(&fn, &sym, sizeof fn); /* POSIX: dlsym's object pointer holds the function */
    return fn(argc, argv);        /* the module stays loaded until exit */
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
        const char *module_entry; /* instead of fn: in the Kafka module (kafka_command) */
    } cmds[] = {{"train", slda_cli_train, NULL},   {"run", NULL, "slda_cli_run"},
                {"topics", slda_cli_topics, NULL}, {"infer", slda_cli_infer, NULL},
                {"export", slda_cli_export, NULL}, {"produce", NULL, "slda_cli_produce"},
                {"broker", NULL, "slda_cli_broker"}, {"config", cli_config, NULL},
                {"diff", slda_cli_diff, NULL},     {"report", slda_cli_report, NULL},
                {"timeline", slda_cli_timeline, NULL}, {"authors", slda_cli_authors, NULL},
                {"label", slda_cli_label, NULL}};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(main_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? SLDA_EXIT_USAGE : SLDA_EXIT_OK;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "-V") ||
        !strcmp(argv[1], "--version")) {
        printf("streamlda %s\n", slda_version_str());
        return SLDA_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return finish(cmds[i].fn ? cmds[i].fn(argc - 1, argv + 1)
                                     : kafka_command(cmds[i].module_entry, argc - 1, argv + 1));
    fprintf(stderr, "streamlda: unknown command \"%s\"\n\n%s", argv[1], main_usage);
    return SLDA_EXIT_USAGE;
}
