/* pending.h - a minibatch's statistics until its global update is applied (pending.c). */
#ifndef SLDA_PENDING_H
#define SLDA_PENDING_H

#include "engine/global_step.h"
#include "engine/sparse.h"

/* A minibatch whose global update is not applied yet (see the top). */
typedef struct slda_pending_s {
    slda_accum_t *acc;
    int active;            /* statistics waiting for prepare and commit */
    int sliced;            /* the statistics are in words/stats, not yet in acc */
    uint64_t ntokens, tokens_before;
    size_t ndocs;
    size_t *off;           /* ndocs + 1 pair offsets into words and stats */
    uint32_t *words;       /* the documents' word ids, in document order */
    float *stats;          /* pairs x Kp: each pair's statistics */
    size_t cap_docs, cap_pairs;
    slda_gprep_t g;
    /* the sparse path (sparse.h): document i's entries at ent + eoff[i], ecount[i]
     * of them, summed into sacc by the preparation */
    int sparse;
    slda_sentry_t *ent;
    size_t *eoff;          /* ndocs + 1: room for each document's entries */
    uint32_t *ecount;      /* ndocs */
    size_t cap_edocs, cap_ent;
    slda_sacc_t sacc;
} slda_pending_t;

/* The model's buffer which (0 or 1), made on first use; NULL (errstr) when it cannot be. */
slda_pending_t *slda_pending_get(slda_model_t *model, int which, char *errstr,
                                 size_t errstr_size);
/* Make room for the slices of ndocs documents (the workers copy each one's word ids in). */
void slda_pending_slice(slda_pending_t *pd, const slda_doc_t *docs, size_t ndocs, uint32_t Kp);
/* The sparse path: room for the entries of ndocs documents, each at most its
 * unique words times min(K, SLDA_SPARSE_KEEP) + 1. */
void slda_pending_entries(slda_pending_t *pd, const slda_doc_t *docs, size_t ndocs, uint32_t K);
/* The update's first half (slda_global_prepare) on the slices' sums: reads the model only. */
void slda_pending_prepare(const slda_model_t *model, slda_pending_t *pd);
/* Its second half (slda_global_commit): the update applied; returns rho_t. */
double slda_pending_commit(slda_model_t *model, slda_pending_t *pd);
/* Topic column from of the pending update's statistics is added to column to
 * (UINT32_MAX: dropped) and zeroed, as the model's column is when a topic is
 * merged or freed (births.c). */
void slda_pending_column(slda_model_t *model, uint32_t from, uint32_t to);
/* Free both buffers (model_new.c's slda_model_destroy). */
void slda_model_free_pending(slda_model_t *model);

#endif /* SLDA_PENDING_H */
