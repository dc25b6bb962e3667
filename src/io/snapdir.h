/* snapdir.h - a directory of snapshots: file names, listing in update order, pruning. */
#ifndef SLDA_SNAPDIR_H
#define SLDA_SNAPDIR_H

#include "core/slda_int.h"

/*
 * A snapshot directory holds, for each model (model.name) written into it:
 *
 *     <dir>/<model>-<updates, 20 digits>.slda             a snapshot (io/snapshot.c)
 *     <dir>/<model>-<updates, 20 digits>.slda.track.json  the tracker's state beside it
 *                                                         (track/track.c, docs/tracking.md)
 *     <dir>/<snapshot or state>.tmp.<pid>                 a writer's temp file until its rename
 *                                                         (io/outfile.c)
 *
 * The update count is zero-padded so that names sort in update order and say, without opening
 * the file, which model and which update they hold. Models may share a directory: a file of
 * another model never matches, and a name that only looks like a snapshot's (another digit
 * count, a letter among the digits, a count above 2^64-1, which no writer makes) is not one.
 * The service (kafka/service.c) and `train --snapshot-dir` write these names, `report` reads
 * them. Nothing here prints; errors go into errstr.
 *
 *     char path[4096], err[512];
 *     slda_snapdir_path(path, sizeof path, "snaps", "news", 1200);
 *         // "snaps/news-00000000000000001200.slda"
 *     slda_snapdir_list_t list;
 *     if (slda_snapdir_list(&list, "snaps", "news", err, sizeof err) == SLDA_OK) {
 *         for (size_t i = 0; i < list.n; i++) // oldest first
 *             printf("%s %" PRIu64 "\n", list.ents[i].path, list.ents[i].updates);
 *         slda_snapdir_list_clear(&list);
 *     }
 */

#define SLDA_SNAPDIR_EXT ".slda"              /* a snapshot file's name ends so */
#define SLDA_SNAPDIR_TRACK_EXT ".track.json"  /* appended to a snapshot's path: its tracker state */
#define SLDA_SNAPDIR_DIGITS 20                /* digits of the update count (2^64-1 has 20) */

/* ---- names (these return snprintf's value: the length wanted, truncated to size) ---- */

/* "<model>-<updates, 20 digits>.slda". */
int slda_snapdir_name(char *buf, size_t size, const char *model, uint64_t updates);
/* "<dir>/<model>-<updates, 20 digits>.slda". */
int slda_snapdir_path(char *buf, size_t size, const char *dir, const char *model,
                      uint64_t updates);
/* "<snapshot_path>.track.json": the tracker's state beside a snapshot. */
int slda_snapdir_track_path(char *buf, size_t size, const char *snapshot_path);

/* 1 when name (a base name) is a snapshot's, "<model>-<20 digits>.slda" with a model of at
 * least one character: *model_len gets the length of its model part, *updates its update count
 * (either may be NULL). Else 0. */
int slda_snapdir_parse(const char *name, size_t *model_len, uint64_t *updates);
/* 1 when name is the name of a snapshot of model: exactly, with suffix "", else followed by
 * suffix and anything after it. */
int slda_snapdir_match(const char *name, const char *model, const char *suffix);
/* 1 when name is a temp file left by a writer of model: "<snapshot>.tmp.<pid>" or
 * "<snapshot>.track.json.tmp.<pid>" (never another model's). */
int slda_snapdir_is_temp(const char *name, const char *model);

/* ---- listing ---- */

typedef struct slda_snapdir_ent_s {
    char *model;      /* owned: the model part of the name */
    char *file;       /* owned: the base name */
    char *path;       /* owned: "<dir>/<file>" */
    uint64_t updates; /* the update count of the name */
} slda_snapdir_ent_t;

typedef struct slda_snapdir_list_s {
    slda_snapdir_ent_t *ents; /* owned */
    size_t n, cap;
    char **odd;               /* owned (slda_snapdir_scan only): base names ending in ".slda"
                               * that are not snapshot names, in directory order */
    size_t nodd, oddcap;
} slda_snapdir_list_t;

/* Every snapshot in dir, of any model, in directory order (as readdir returns them) into list,
 * and the other names ending in ".slda" into list->odd (temp files and tracker states end
 * otherwise: in neither). list is initialised here; clear it with slda_snapdir_list_clear,
 * also after a failure (it is then empty). SLDA_ERR_IO, `snapshot directory "<dir>": <reason>`,
 * when dir cannot be read. */
slda_err_t slda_snapdir_scan(slda_snapdir_list_t *list, const char *dir, char *errstr,
                             size_t errstr_size);
/* The snapshots of model in dir, oldest first (by update count), as slda_snapdir_scan. */
slda_err_t slda_snapdir_list(slda_snapdir_list_t *list, const char *dir, const char *model,
                             char *errstr, size_t errstr_size);
/* Order entries by update count, oldest first. */
void slda_snapdir_sort(slda_snapdir_ent_t *ents, size_t n);
/* Free what an entry owns (the struct itself is the caller's); accepts a zeroed one. */
void slda_snapdir_ent_clear(slda_snapdir_ent_t *ent);
/* Free every entry and name of the list and zero it; accepts a zeroed list. */
void slda_snapdir_list_clear(slda_snapdir_list_t *list);

/* ---- before writing ---- */

/* Make dir if it is missing (one level: its parent must exist) and check that it is a
 * directory. SLDA_ERR_IO, `<what> "<dir>": <reason>` (what: the option or property that named
 * it, "--snapshot-dir"). */
slda_err_t slda_snapdir_make(const char *what, const char *dir, char *errstr,
                             size_t errstr_size);
/* Would writing snapshots of model into dir fail for sure? slda_outfile_check (io/outfile.h)
 * on its first name, "<dir>/<model>-00000000000000000000.slda": creates nothing. */
slda_err_t slda_snapdir_check(const char *dir, const char *model, char *errstr,
                              size_t errstr_size);

/* ---- pruning ---- */

/* What slda_snapdir_prune asks its caller and tells it. */
typedef struct slda_snapdir_prune_cb_s {
    /* 1 when the snapshot of this update count counts towards keep and may be removed (the
     * service: known to load); NULL: every snapshot. The others are never touched. */
    int (*prunable)(void *opaque, uint64_t updates);
    /* After each removal (error NULL), or each file that could not be removed (error:
     * "cannot remove <path>: <reason>", the file is left); may be NULL. */
    void (*removed)(void *opaque, uint64_t updates, const char *error);
    void *opaque;
} slda_snapdir_prune_cb_t;

/* Keep the newest `keep` prunable snapshots of model in dir and remove the older prunable ones,
 * each with its tracker state; tracker states of model whose snapshot file is missing (a writer
 * failed or died between the two) are removed too. A snapshot already gone counts as removed.
 * SLDA_ERR_IO with the first failure in errstr when a file could not be removed (the rest are
 * still tried); SLDA_OK when dir cannot be read (nothing to prune). cb may be NULL. */
slda_err_t slda_snapdir_prune(const char *dir, const char *model, size_t keep,
                              const slda_snapdir_prune_cb_t *cb, char *errstr,
                              size_t errstr_size);
/* The same, keeping besides the newest `keep` at most `history` older ones thinned with age
 * (slda_snapdir_thin): snapshot.history. */
slda_err_t slda_snapdir_prune_thin(const char *dir, const char *model, size_t keep,
                                   size_t history, const slda_snapdir_prune_cb_t *cb,
                                   char *errstr, size_t errstr_size);
/* Which of n snapshots to keep, given their update counts newest first (u[0] the newest):
 * the newest `keep`, and of the older ones at most `history`: each older snapshot falls in a
 * bucket of updates [i s, (i+1) s) whose size s = 2^L base grows with its age (2^L base <= age
 * < 2^(L+1) base), and the oldest of each bucket stays (so the first snapshot always does).
 * Buckets are powers of two aligned on update counts, so as snapshots age theirs merge in
 * pairs and a snapshot kept once is dropped only when an older one shares its new bucket:
 * applied after every new snapshot, the kept ones stay spread over the whole run, about two
 * per doubling of age; base (1 update, doubled while more than `history` remain) bounds
 * them. out[j] = 1 to keep. */
void slda_snapdir_thin(const uint64_t *u, size_t n, size_t keep, size_t history,
                       unsigned char *out);

#endif /* SLDA_SNAPDIR_H */
