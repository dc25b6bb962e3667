/* snapshot_priv.h - what the snapshot files share: the header, the sections, packing helpers.
 *
 * Private to src/io/snapshot*.c (io/snapshot.h is what other files use).
 * snapshot.c holds the envelope and the entry points and calls one writer
 * and one reader per section: the header (snapshot_header.c), its "params"
 * map (snapshot_params.c) and "births" map (snapshot_births.c), and the body
 * (snapshot_body.c). Writers pack into a msgpack_packer and cannot fail (the
 * sink records the first error); readers return 0, or -1 with the failure in
 * the reader (core/msgpack.h), and free what they allocated through the
 * structure they fill (slda_snap_header_clear).
 */
#ifndef SLDA_SNAPSHOT_PRIV_H
#define SLDA_SNAPSHOT_PRIV_H

#include "io/snapshot.h"
#include "engine/births.h"
#include "core/config.h"
#include "core/msgpack.h"

#include <msgpack.h>

#include <string.h>

/* The optional header key of the births state (absent in older snapshots,
 * and when the model has none). */
#define SLDA_SNAP_KEY_BIRTHS "births"
/* The optional header key of the topics' user labels (snapshot_labels.c). */
#define SLDA_SNAP_KEY_LABELS "labels"

/* The optional "labels" key as parsed: n pairs, texts owned; attached to the model once it is
 * built (slda_snap_labels_attach). */
typedef struct slda_snap_labels_s {
    int present;
    size_t at;        /* byte offset of the array, for messages */
    uint32_t n;
    uint32_t *topic;
    char **text;
} slda_snap_labels_t;

/* The optional "births" header key as parsed: st's arrays are owned here.
 * Its values are checked against the model (K, W, updates) once the header
 * is complete (slda_births_import), from where the map starts. */
typedef struct slda_snap_births_s {
    int present;
    size_t at;                /* byte offset of the map, for messages */
    slda_births_state_t st;
} slda_snap_births_t;

/* The optional header key of the author statistics (model.kind=atm, snapshot_authors.c). */
#define SLDA_SNAP_KEY_AUTHORS "authors"
/* The format version of a model's snapshots: 1 for LDA (as before), 2 for the other kinds
 * (a reader of version 1 refuses them by their version). */
#define SLDA_SNAP_VERSION_LDA 1

/* The optional "authors" header key as parsed: arrays owned, counts borrowed from the input. */
typedef struct slda_snap_authors_s {
    int present;
    size_t at;
    uint64_t evicted;
    uint32_t n, nnames;
    uint32_t *ids;
    char **names;
    double *freqs, *tokens;
    uint64_t *updates;
    const unsigned char *counts;
    size_t counts_len;
} slda_snap_authors_t;

/* The optional "pam" header key (model.kind=pam, snapshot_pam.c) as parsed. */
#define SLDA_SNAP_KEY_PAM "pam"
typedef struct slda_snap_pam_s {
    int present;
    size_t at;
    uint32_t S, nalpha;
    double *alpha;
} slda_snap_pam_t;

/* The header as parsed (snapshot_header.c); arrays and strings owned. */
typedef struct slda_snap_header_s {
    uint64_t format;
    char *name;
    uint32_t K, W, nrows, capacity;
    int fixed;
    uint64_t hash_seed;
    double *alpha, *NZ;
    uint32_t nalpha, nNZ;
    double alpha_sum, eta, sigma, corpus_tokens;
    uint64_t t, docs, tokens;
    int64_t created_ms, updated_ms;
    int64_t event_ms; /* optional "event_ms", 0 when absent */
    slda_snap_births_t births; /* optional "births" */
    slda_snap_authors_t authors; /* optional "authors" */
    slda_snap_pam_t pam;       /* optional "pam" */
    uint32_t envelope;         /* the file's format version (the header's must be the same) */
    slda_snap_labels_t labels; /* optional "labels" */
    slda_params_t p;
    slda_offset_t *offs;
    size_t noffs;
} slda_snap_header_t;

/* Packing helpers of the writers. */

static inline void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

static inline void pack_str_or_nil(msgpack_packer *pk, const char *s)
{
    if (s)
        msgpack_pack_str_with_body(pk, s, strlen(s));
    else
        msgpack_pack_nil(pk);
}

static inline void pack_bool(msgpack_packer *pk, int v)
{
    if (v)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

static inline void pack_doubles(msgpack_packer *pk, const double *v, uint32_t n)
{
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_double(pk, v[i]);
}

/* ---- snapshot_header.c ---- */
/* The header map: its fixed keys, "params" (slda_snap_params_write),
 * "offsets", and the optional "event_ms" (meta) and "births". */
void slda_snap_header_write(msgpack_packer *pk, const slda_model_t *model, uint32_t nrows,
                            const slda_snapshot_meta_t *meta);
/* The header into h (owned by h: slda_snap_header_clear), checked for
 * consistency; the births state is checked only by slda_snap_births_attach. */
int slda_snap_header_read(slda_msgpack_t *mp, slda_snap_header_t *h);
void slda_snap_header_clear(slda_snap_header_t *h);
/* The model the header describes, without its rows and words (the body's);
 * NULL on failure (mp->err set). */
slda_model_t *slda_snap_model_build(slda_msgpack_t *mp, slda_snap_header_t *h);
/* An array of at most SLDA_MAX_TOPICS numbers into *out (malloc'ed). */

/* ---- snapshot_params.c ---- */
void slda_snap_params_write(msgpack_packer *pk, const slda_params_t *p);
/* "params" into p (strings malloc'ed); keys an older snapshot lacks get the
 * value its absence means. */
int slda_snap_params_read(slda_msgpack_t *mp, slda_params_t *p);

/* Arrays of numbers in the header maps (births, authors). */
/* An array of uints of at most max entries into *out (malloc'ed). */
static inline int slda_snap_read_u64s(slda_msgpack_t *mp, const char *what, uint32_t max,
                                      uint64_t **out, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > max)
        return slda_msgpack_fail(mp, "%s: %u values, at most %u", what, *n, max);
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_uint(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

/* An array of uint32 into *out (malloc'ed); its length is bounded by the bytes left. */
static inline int slda_snap_read_u32s(slda_msgpack_t *mp, const char *what, uint32_t **out,
                                      uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_u32(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

/* ---- snapshot_authors.c ---- */
void slda_snap_authors_write(msgpack_packer *pk, const slda_model_t *model);
int slda_snap_authors_read(slda_msgpack_t *mp, slda_snap_authors_t *sa);
void slda_snap_authors_clear(slda_snap_authors_t *sa);
int slda_snap_authors_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_authors_t *sa);
/* The format version model's snapshots carry (SLDA_SNAP_VERSION_LDA or SLDA_SNAP_VERSION). */
static inline uint32_t slda_snap_version_of(const slda_model_t *model)
{
    return slda_model_params(model)->kind == SLDA_KIND_LDA ? SLDA_SNAP_VERSION_LDA
                                                            : SLDA_SNAP_VERSION;
}

/* ---- snapshot_pam.c ---- */
void slda_snap_pam_write(msgpack_packer *pk, const slda_model_t *model);
int slda_snap_pam_read(slda_msgpack_t *mp, slda_snap_pam_t *sp);
void slda_snap_pam_clear(slda_snap_pam_t *sp);
int slda_snap_pam_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_pam_t *sp);

/* ---- snapshot_births.c ---- */
void slda_snap_births_write(msgpack_packer *pk, const slda_births_t *b);
int slda_snap_births_read(slda_msgpack_t *mp, slda_snap_births_t *sb);
void slda_snap_births_clear(slda_snap_births_t *sb);
/* The parsed state given to the built model (slda_model_attach_births). */
int slda_snap_births_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_births_t *sb);

/* ---- snapshot_labels.c ---- */
void slda_snap_labels_write(msgpack_packer *pk, const slda_model_t *model);
int slda_snap_labels_read(slda_msgpack_t *mp, slda_snap_labels_t *sl);
void slda_snap_labels_clear(slda_snap_labels_t *sl);
int slda_snap_labels_attach(slda_msgpack_t *mp, slda_model_t *model, const slda_snap_labels_t *sl);

/* ---- snapshot_body.c ---- */
/* One block of n rows (ids increasing); scratch holds max(K*4, n) bytes. */
void slda_snap_block_write(msgpack_packer *pk, const slda_model_t *model, const uint32_t *ids,
                           uint32_t n, unsigned char *scratch);
/* Blocks up to and including the end marker, nrows rows in all, into the
 * model; nothing may follow the end marker. */
int slda_snap_body_read(slda_msgpack_t *mp, slda_model_t *model, uint32_t nrows);

#endif /* SLDA_SNAPSHOT_PRIV_H */
