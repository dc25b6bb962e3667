/* model_priv.h - the model's fields and row bookkeeping: private to src/engine (model.c).
 *
 * Other layers see a model through engine/model.h's accessors only
 * (tests/0002-layers.py fails on an include of this file outside src/engine).
 */
#ifndef SLDA_MODEL_PRIV_H
#define SLDA_MODEL_PRIV_H

#include "engine/model.h"
#include "text/bag.h"
#include "text/tokenize.h"
#include "text/vocab.h"

/*
 * Nphi[w][k] = sigma * A[w*Kp + k] (lazy scale, docs/algorithm.md "Global step").
 * Rows are Kp floats (K rounded up to 16) and 64-byte aligned, so the K loops
 * vectorise; padding entries stay 0. NZ[k] = sum_w Nphi[w][k] is kept dense.
 */
struct slda_model_s {
    slda_params_t p;            /* own copy (strings owned) */
    uint32_t K, Kp;
    uint32_t W;                 /* rows allocated: fixed vocabulary size or vocab.capacity */
    float *A;                   /* W * Kp */
    double sigma;
    double *NZ;                 /* K */
    double *alpha;              /* K */
    double alpha_sum;
    uint64_t t;                 /* global updates applied */
    uint64_t docs, tokens;      /* trained on */
    double corpus_tokens;       /* C in use */
    slda_vocab_t *vocab;
    slda_tokenizer_t *tok;
    slda_offset_t *offsets;
    size_t noffsets;
    char *name;                 /* model.name */
    int64_t created_ms, updated_ms;
    uint8_t *row_ready;         /* W: 1 once the row holds its initial or learned counts */
    uint32_t nready;            /* rows with row_ready set: the words the model holds */
    uint32_t rows_used;         /* 1 + the highest id whose row was ever written: the rows
                                 * from here on are zero (pages never touched), so loops
                                 * over all rows of A stop here (slda_model_row_written) */
    uint32_t rows_paged;        /* rows below this were written at least once (model.c,
                                 * slda_model_page_in): their pages are writable */
    uint64_t init_t;            /* init_weight is prod_{s < init_t} (1 - rho_s) (model.c) */
    double init_weight;
    struct slda_pool_s *pool;   /* worker threads (core/pool.h), NULL when threads == 1 */
    struct slda_pending_s *pend[2]; /* minibatch statistics, used in turn (train.c) */
    struct slda_pending_s *pending; /* the one whose global update is not applied yet */
    struct slda_local_s **locals; /* per worker local-step scratch (train.c) */
    uint32_t nlocals;
    struct slda_births_s *births; /* births.c state, NULL unless births=true */
    struct slda_replay_s *replay; /* replay.c: documents waiting for their second visit */
    uint64_t replay_tokens;     /* tokens of second visits trained on (not in tokens) */
    uint64_t replay_input_docs; /* documents a finite input will train on, when known before
                                 * training (streamlda train holds its files); 0 = a stream */
    slda_bag_t *bag;            /* text.c's scratch for slda_doc_from_text */
    /* The sparse path (rows_nz.c, docs/engine.md "The sparse path"): each row's
     * topics that may hold counts, in increasing order; the other entries of the
     * row are zero. Valid while nz_valid: a writer of A other than the sparse
     * global step clears it (slda_rows_nz_invalidate) and the next sparse
     * minibatch builds the lists again from A. */
    uint16_t **nzt;             /* W lists, NULL until built */
    uint32_t *nzn, *nzcap;      /* W: entries and capacity of each list */
    int nz_valid;
    struct slda_wtabs_s *wtabs; /* the sparse local step's proposal tables (sparse_tables.c) */
    struct slda_authors_s *authors; /* model.kind=atm: the author statistics (authors.c), else NULL */
    struct slda_pam_s *pam;     /* model.kind=pam: the super-topics' priors (pam.c), else NULL */
    char **labels;              /* labels.c: K user labels (NULL entries: none), or NULL */
};
typedef struct slda_births_s slda_births_t;

/* Row id of A is about to be written. Every writer of a row that may be
 * zero goes through here: a row gets counts only after its word reaches
 * training (slda_model_mark_row) or from a snapshot; the updates, births
 * and evictions write rows marked before, and the whole-matrix loops
 * (scaling, clearing, a topic's column) leave zero rows zero. */
static inline void slda_model_row_written(slda_model_t *model, uint32_t id)
{
    if (id >= model->rows_used)
        model->rows_used = id + 1;
}
/* Mark a row as holding counts (the snapshot loader calls it for each row). */
static inline void slda_model_mark_row(slda_model_t *model, uint32_t id)
{
    slda_model_row_written(model, id);
    model->nready += !model->row_ready[id];
    model->row_ready[id] = 1;
}
/* model.c: free what slda_model_alloc made (the state); model_new.c's
 * slda_model_destroy frees what the other modules attached first. */
void slda_model_free_state(slda_model_t *model);
/* Fold sigma into A (O(W K)); done when sigma falls below SLDA_SIGMA_FOLD. */
void slda_model_fold_scale(slda_model_t *model);
#define SLDA_SIGMA_FOLD 1e-6
void slda_model_init_row(slda_model_t *model, uint32_t id);
/* The same for the word of that key (update.c: a word the vocabulary does
 * not hold yet, on a borrowed row for the local steps). */
void slda_model_init_row_key(slda_model_t *model, uint32_t id, uint64_t key);
/* Zero rows [from, to) of A on the pool, in pieces (forget_all; paging in). */
void slda_model_zero_rows(slda_model_t *model, uint32_t from, uint32_t to);
/* Before rows below upto get their initial values (train.c): page in the
 * rows of A up to upto, rounded up to SLDA_PAGE_IN_BYTES, by writing zeros
 * on the pool to those past rows_used (zero already). See model.c. */
void slda_model_page_in(slda_model_t *model, uint32_t upto);
#ifndef SLDA_PAGE_IN_BYTES
#define SLDA_PAGE_IN_BYTES ((size_t)2 << 20)
#endif

#endif /* SLDA_MODEL_PRIV_H */
