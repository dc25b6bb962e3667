/* cli_label.c - `streamlda label`: list, set or remove the user labels of a snapshot's topics.
 *
 * `label SNAPSHOT` lists every topic's label (the user's, else the automatic one in brackets);
 * `label SNAPSHOT TOPIC TEXT` sets topic TOPIC's label and `label SNAPSHOT TOPIC ""` removes it,
 * writing the snapshot again in place (temp file, fsync, rename: a reader sees the old file or
 * the new one), its event time kept. Everything else in the file is what it was: the model
 * loads and writes back bit for bit. A running service keeps its own model: label it through
 * its page or POST /api/labels (docs/tracking.md, "Labels"); a label set here is restored
 * with this snapshot. Exit 1 with the path and the reason (a snapshot that cannot be read or
 * written, a topic out of range, a label too long or not UTF-8), 2 for usage.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "track/track.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char label_usage[] =
    "Usage: streamlda label SNAPSHOT [TOPIC [TEXT]]\n"
    "User labels of topics, stored in the snapshot (docs/tracking.md, \"Labels\"):\n"
    "  label SNAPSHOT              list each topic's label: the user's in quotes, else the\n"
    "                              automatic one (its most relevant words) in brackets\n"
    "  label SNAPSHOT TOPIC TEXT   set topic TOPIC's label (at most 120 bytes of UTF-8) and\n"
    "                              write the snapshot again in place\n"
    "  label SNAPSHOT TOPIC \"\"     remove it\n"
    "A running service labels its topics through its page or POST /api/labels.\n"
    "Exit status 1 with the reason (unreadable snapshot, topic out of range, bad label).\n";

/* Every topic: `topic K "user label"` or `topic K [automatic label]`. */
static void label_list(const slda_model_t *model)
{
    uint32_t K = slda_model_topics(model);
    slda_track_words_t *words = slda_xmalloc(K * sizeof *words);
    slda_track_model_words(model, words, NULL);
    for (uint32_t k = 0; k < K; k++) {
        const char *user = slda_model_label(model, k);
        char autol[200];
        slda_track_autolabel(model, &words[k], autol, sizeof autol);
        if (user)
            printf("topic %u \"%s\"\n", k, user);
        else
            printf("topic %u [%s]\n", k, autol);
    }
    free(words);
}

int slda_cli_label(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(label_usage, stdout);
        return SLDA_EXIT_OK;
    }
    if (argc != 2 && argc != 4) {
        fputs(label_usage, stderr);
        return SLDA_EXIT_USAGE;
    }
    const char *path = argv[1];
    char why[1200];
    slda_snapshot_meta_t meta = {0};
    slda_model_t *model = slda_cli_snap_load(path, &meta, why, sizeof why);
    if (!model) {
        fprintf(stderr, "streamlda label: %s\n", why);
        return SLDA_EXIT_FAIL;
    }
    if (argc == 2) {
        label_list(model);
        slda_model_destroy(model);
        return SLDA_EXIT_OK;
    }
    long k = slda_cli_opt_long(argv[2], 0, (long)slda_model_topics(model) - 1);
    int rc = SLDA_EXIT_OK;
    if (k < 0) {
        fprintf(stderr, "streamlda label: topic \"%s\": not a topic of %s (0..%u)\n", argv[2],
                path, slda_model_topics(model) - 1);
        rc = SLDA_EXIT_FAIL;
    } else if (slda_model_set_label(model, (uint32_t)k, argv[3], why, sizeof why) != SLDA_OK ||
               slda_snapshot_write_meta(model, &meta, path, why, sizeof why) != SLDA_OK) {
        fprintf(stderr, "streamlda label: %s: %s\n", path, why);
        rc = SLDA_EXIT_FAIL;
    }
    slda_model_destroy(model);
    return rc;
}
