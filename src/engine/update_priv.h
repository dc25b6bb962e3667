/* update_priv.h - a record's fields and a replica minibatch's words: the update files' own.
 *
 * update.c makes records (local half) and applies them (apply half),
 * update_codec.c encodes and decodes them (update_rows.c: the rows, values
 * and varints inside), update_scratch.c interns the words
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
    uint32_t nlabels;         /* user labels set by the record (update_labels.c) */
    uint32_t *label_slot;     /* nlabels */
    char **label_text;        /* nlabels, NUL-terminated, owned ("": removed) */
};

/* update_labels.c: set the record's labels on the model, in record order. */
slda_err_t upd_apply_labels(slda_model_t *model, const slda_update_t *upd, char *errstr,
                            size_t errstr_size);
/* A record that carries labels only (no document, no token): applying it sets them and moves
 * nothing else, not even the update count. */
int upd_labels_only(const slda_update_t *upd);

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

/* A growing byte buffer (update_rows.c); p malloc'ed, the user frees it. */
typedef struct upd_buf_s {
    unsigned char *p;
    size_t n, cap;
} upd_buf_t;

void upd_buf_reserve(upd_buf_t *b, size_t more);
void upd_put_le32(unsigned char *p, uint32_t v);
uint32_t upd_get_le32(const unsigned char *p);
void upd_put_f32(unsigned char *p, float f);
float upd_get_f32(const unsigned char *p);
/* Unsigned LEB128, minimal, <= 2^32 - 1: get returns -1 (cursor anywhere) on a bad one. */
void upd_put_varint(upd_buf_t *b, uint32_t v);
int upd_get_varint(const unsigned char **p, const unsigned char *end, uint32_t *v);
/* Bytes of a dense row of K values (version 1's row). */
size_t upd_dense_bytes(slda_update_values_t values, uint32_t K);
/* A row of K values: version 1 dense, version 2 dense or sparse, whichever
 * is shorter; get returns NULL, or what is wrong (x then undefined). */
void upd_put_row(upd_buf_t *b, const float *x, uint32_t K, slda_update_values_t values,
                 int version);
const char *upd_get_row(const unsigned char **p, const unsigned char *end, float *x, uint32_t K,
                        slda_update_values_t values, int version);

#endif /* SLDA_UPDATE_PRIV_H */
