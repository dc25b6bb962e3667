/* update_priv.h - a record's fields and a replica minibatch's words: the update files' own.
 *
 * update.c makes records (local half) and applies them (apply half),
 * update_codec.c encodes and decodes them, update_scratch.c interns the words
 * of a replica's documents. A record owns every array it points to; the
 * arrays of the births inputs are NULL unless scores is set, lengths and
 * ntheta NULL unless the record carries alpha inputs.
 */
#ifndef SLDA_UPDATE_PRIV_H
#define SLDA_UPDATE_PRIV_H

#include "engine/update.h"

#define UPD_TOPIC_MAX 256 /* bytes of an input's topic name */

typedef struct upd_input_s {
    char *topic;
    int32_t partition;
    int64_t from, to;
} upd_input_t;

struct slda_update_s {
    uint32_t K;
    uint64_t base;            /* model->t the local half read */
    uint64_t ntokens;
    uint32_t ndocs, ntrained;
    int revisit;
    int marks;                /* made from scratch documents: apply counts the words */
    uint32_t nwords;
    char **word;              /* nwords, NUL-terminated, owned */
    uint32_t *wlen;
    uint32_t *wcount;         /* nwords: tokens of each word in the minibatch */
    uint32_t nslots;
    uint32_t *slot;           /* nslots: word index of each slot */
    float *stats;             /* nslots * K */
    uint32_t *lengths;        /* ndocs, or NULL */
    float *ntheta;            /* ndocs * K, or NULL */
    float *scores;            /* ndocs, or NULL (births) */
    uint32_t *npairs;         /* ndocs (births) */
    uint32_t *pword, *pcount; /* total pairs: word index, count (births) */
    float *pw;                /* total pairs (births) */
    uint64_t npairs_total;
    size_t ninputs;
    upd_input_t *inputs;
};

/* The words of one replica minibatch, interned by their bytes (update_scratch.c). */
struct slda_update_scratch_s {
    slda_bag_t *bag;
    char **word;
    uint32_t *len;
    uint64_t *hash;
    uint32_t n, cap;
    uint32_t *table; /* tcap slots: word index, or UINT32_MAX */
    uint32_t tcap;
};

#endif /* SLDA_UPDATE_PRIV_H */
