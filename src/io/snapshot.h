/* snapshot.h - module-private pieces shared by snapshot.c and export.c. */
#ifndef SLDA_SNAPSHOT_H
#define SLDA_SNAPSHOT_H

#include "engine/model.h"

#include <stdio.h>
#include <string.h>

/* File envelope (docs/snapshot-format.md): magic, big-endian format version,
 * MessagePack stream, big-endian XXH3-64 trailer. */
#define SLDA_SNAP_MAGIC "SLDASNAP"
#define SLDA_SNAP_MAGIC_LEN 8
#define SLDA_SNAP_VERSION 2 /* the newest this build reads and writes (snapshot_priv.h) */
#define SLDA_SNAP_TRAILER_LEN 8
/* Body rows per block: bounds the reader's per-block arrays and the
 * writer's packing buffer (4096 x K=100 floats = 1.6 MB). */
#define SLDA_SNAP_BLOCK_ROWS 4096

/* n floats as little-endian IEEE-754 binary32 bytes into dst (4n bytes):
 * the byte order of snapshot rows and .npy data on any host. */
static inline void slda_floats_to_le(const float *src, size_t n, unsigned char *dst)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &src[i], sizeof u);
        dst[4 * i] = (unsigned char)u;
        dst[4 * i + 1] = (unsigned char)(u >> 8);
        dst[4 * i + 2] = (unsigned char)(u >> 16);
        dst[4 * i + 3] = (unsigned char)(u >> 24);
    }
}

/* Same as slda_snapshot_decode, with `name` (a path, a topic) in the error
 * messages instead of "<memory>". */
slda_model_t *slda_snapshot_decode_named(const void *buf, size_t len, const char *name,
                                         slda_err_t *err_out, char *errstr,
                                         size_t errstr_size);

/* The ids in use (slda_vocab_word != NULL), increasing, as a malloc'ed array
 * the caller frees; *n receives the count. */
uint32_t *slda_model_ids_in_use(const slda_model_t *model, uint32_t *n);

/* model.kind=atm: the author mixtures as an A x K float32 .npy (rows in the order of the
 * names file, one name a line); SLDA_ERR_INVALID for another kind (export.c). */
slda_err_t slda_export_authors(const slda_model_t *model, const char *npy, const char *names,
                               char *errstr, size_t errstr_size);
/* The column words of slda_model_phi / slda_export_npy, one per line. */
slda_err_t slda_export_vocab(const slda_model_t *model, const char *path, char *errstr,
                             size_t errstr_size);

#endif /* SLDA_SNAPSHOT_H */
