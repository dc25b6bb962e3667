/* cli_snap.h - what the commands on snapshots share (topics, diff, report; cli_snap.c). */
#ifndef SLDA_CLI_SNAP_H
#define SLDA_CLI_SNAP_H

#include "engine/model.h"

#include <stdint.h>
#include <stdio.h>

/* Read a snapshot (meta may be NULL); NULL with "<reason> (<SLDA_ERR_...>)" in why. */
slda_model_t *slda_cli_snap_load(const char *path, slda_snapshot_meta_t *meta, char *why,
                                 size_t why_size);
/* A number option in [lo, hi]; -1 when it does not parse. */
long slda_cli_opt_long(const char *s, long lo, long hi);
/* The ids of the n (at most 1000) most probable words of topic k; returns how many. */
size_t slda_cli_top_words(const slda_model_t *model, uint32_t k, size_t n, uint32_t *ids);
/* The n (at most 32) most probable words of topic k, space-separated, into buf (a word that
 * does not fit whole is left out, and the ones after it). */
void slda_cli_words_text(const slda_model_t *model, uint32_t k, size_t n, char *buf,
                         size_t size);
/* The words of ids as a JSON array of strings. */
void slda_cli_json_words(FILE *f, const slda_model_t *model, const uint32_t *ids, size_t n);
/* A double for JSON: finite with 6 significant digits ("%.6g"), else null. */
void slda_cli_json_num(FILE *f, double v);
/* qsort comparison of doubles, increasing. */
int slda_cli_cmp_double(const void *a, const void *b);

#endif /* SLDA_CLI_SNAP_H */
