/* cli_export.c - `streamlda export`: a snapshot's topic-word probabilities as .npy, its words.
 *
 * Outputs are replaced atomically (io/outfile.c); exit 1 naming the path and the reason when
 * the snapshot cannot be read or an output cannot be written.
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


static const char export_usage[] =
    "Usage: streamlda export SNAPSHOT --npy FILE [--vocab FILE]\n"
    "Write the K x V topic-word probabilities phi as a NumPy .npy file (float32,\n"
    "row k = topic k, columns = the words in use in id order) and optionally the\n"
    "column words, one per line. A regular file (or a symlink's target) is replaced\n"
    "atomically; a FIFO or device is written straight; \"-\" is standard output.\n";

int slda_cli_export(int argc, char **argv)
{
    static const struct option longopts[] = {{"npy", required_argument, 0, 'n'},
                                             {"vocab", required_argument, 0, 'v'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *npy = NULL, *vocab = NULL;
    int c, rc = SLDA_EXIT_OK;
    char err[1024];
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'n')
            npy = optarg;
        else if (c == 'v')
            vocab = optarg;
        else if (c == 'h') {
            fputs(export_usage, stdout);
            return SLDA_EXIT_OK;
        } else {
            fputs(export_usage, stderr);
            return SLDA_EXIT_USAGE;
        }
    }
    const char *missing = optind >= argc      ? "a SNAPSHOT to export"
                          : optind < argc - 1 ? NULL
                          : !npy && !vocab    ? "an output: --npy FILE and/or --vocab FILE"
                                              : NULL;
    if (optind < argc - 1)
        fprintf(stderr, "streamlda export: one SNAPSHOT, not %d arguments\n", argc - optind);
    else if (missing)
        fprintf(stderr, "streamlda export: missing %s\n", missing);
    if (optind != argc - 1 || missing) {
        fputs(export_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    if (npy && vocab && !strcmp(npy, "-") && !strcmp(vocab, "-")) {
        fprintf(stderr, "streamlda export: only one of --npy and --vocab can be \"-\" "
                        "(standard output)\n");
        return SLDA_EXIT_USAGE;
    }
    slda_model_t *model = slda_cli_load_snapshot(argv[optind]);
    if (!model)
        return SLDA_EXIT_FAIL;
    if ((npy && slda_export_npy(model, npy, err, sizeof err) != SLDA_OK) ||
        (vocab && slda_export_vocab(model, vocab, err, sizeof err) != SLDA_OK)) {
        fprintf(stderr, "streamlda: %s\n", err);
        rc = SLDA_EXIT_FAIL;
    }
    slda_model_destroy(model);
    return rc;
}
