/* model.h - internals shared by model.c, train.c, global_step.c and pool.c. */
#ifndef SLDA_MODEL_H
#define SLDA_MODEL_H

#include "engine/local.h"
#include "core/pool.h"

/* (Re)start the model's worker threads for its threads= (after a change of
 * it, or a snapshot decoded): the pool of slda_model_pool. */
slda_err_t slda_model_start_threads(slda_model_t *model, char *errstr, size_t errstr_size);
/* The model's worker threads (NULL with threads=1): readers tokenise and
 * parse on them while the model is not training. */
slda_pool_t *slda_model_pool(const slda_model_t *model);

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

/* Minibatch statistics: one Kp-vector per distinct word touched, found
 * through slot_of (W entries, -1 = none); reset costs O(words touched). */
typedef struct slda_accum_s {
    uint32_t Kp, W;
    int32_t *slot_of;   /* W */
    uint32_t *word;     /* nslots: word id of each slot */
    float *sum;         /* nslots * Kp */
    float *c1, *c2;     /* cap: per-slot factors of the global.rows=counts update */
    uint32_t nslots, cap;
} slda_accum_t;

slda_accum_t *slda_accum_new(uint32_t W, uint32_t Kp, char *errstr, size_t errstr_size);
void slda_accum_free(slda_accum_t *acc);
void slda_accum_reset(slda_accum_t *acc);
/* acc[word[u]] += stats[u] for u < n. */
void slda_accum_add(slda_accum_t *acc, const uint32_t *words, const float *stats, uint32_t n);

/* train.c: the local-step scratch of nthreads workers, kept in the model
 * (train.c and update.c run local steps on them). */
slda_local_t **slda_model_locals(slda_model_t *model, uint32_t nthreads);
/* train.c: tokens_before of the next update, of ntokens tokens at step rho
 * (the tokens trained on so far; after a birth, births.c's windowed count). */
uint64_t slda_model_tokens_before(slda_model_t *model, uint64_t ntokens, double rho);
/* train.c: what follows a minibatch's global update, in order (train.c and
 * update.c's apply, which must agree bit for bit): the alpha step (ntheta,
 * lengths: ndocs documents; NULL = none), births (scores, pw: NULL = none),
 * the counters (second visits count in replay_tokens), the vocabulary's
 * epoch. */
void slda_model_update_done(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            const uint32_t *lengths, const float *ntheta, const float *scores,
                            float *const *pw, uint64_t ntokens, uint64_t ntrained, int revisit,
                            double rho);
/* train.c: free the per-worker scratch and the pending statistics kept in the model. */
void slda_model_free_locals(slda_model_t *model);
void slda_model_free_pending(slda_model_t *model);
/* births.c: topic column from of the pending update's statistics is added
 * to column to (UINT32_MAX: dropped) and zeroed, as the model's column is
 * when a topic is merged or freed: with global.stale=1 the minibatch before
 * a birth, a death or a merge is not applied yet, and its statistics for the
 * old topic must not land on the slot's new one. */
void slda_pending_column(slda_model_t *model, uint32_t from, uint32_t to);

/* global_step.c */
double slda_rho(const slda_params_t *p, uint64_t t);
/* Apply the minibatch statistics in acc with ntokens training tokens
 * (ALGORITHM.md "Global step") in place; returns rho_t. The engine uses the
 * two halves below (train.c); this one is the reference unit_engine checks. */
double slda_global_update(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens);
/* The same update in two halves, for the pipeline (train.c):
 * slda_global_prepare only reads the model and writes each touched row's new
 * value over its statistics in acc (global.rows=counts; anything else, the
 * first update and a fold of sigma leave g->ready = 0); slda_global_commit
 * then copies the rows in and moves sigma, NZ and t (or, not ready, does the
 * whole update in place). prepare + commit with nothing changing the touched
 * rows or sigma between them is slda_global_update bit for bit.
 * tokens_before: the tokens trained on before this minibatch. Returns rho_t. */
typedef struct slda_gprep_s {
    int ready;
    double rho, r, lam, cm, sigma;
    slda_v8f da[SLDA_MAX_TOPICS / 8]; /* the change of each topic's total / sigma */
} slda_gprep_t;
void slda_global_prepare(const slda_model_t *model, slda_accum_t *acc, uint64_t ntokens,
                         uint64_t tokens_before, slda_gprep_t *g);
double slda_global_commit(slda_model_t *model, slda_accum_t *acc, uint64_t ntokens,
                          uint64_t tokens_before, slda_gprep_t *g);
/* Maximum-likelihood Dirichlet alpha (K values, improved in place from their
 * current values) for the document counts nt (nd x K) of lengths len:
 * Minka's fixed point (how = SLDA_ALPHA_FIXEDPOINT) or a safeguarded Newton
 * (SLDA_ALPHA_NEWTON), at most iters steps, fewer once alpha stops moving.
 * Every alpha_k stays >= SLDA_ALPHA_MIN. */
#define SLDA_ALPHA_MIN 1e-6
void slda_alpha_estimate(slda_alpha_learn_t how, double *a, uint32_t K, const float *nt,
                         const uint32_t *len, size_t nd, int iters);
/* Stochastic alpha step from the minibatch's mean document counts
 * (ntheta: ndocs x K, lengths: ndocs). */
void slda_alpha_update(slda_model_t *model, const float *ntheta, const uint32_t *lengths,
                       size_t ndocs, double rho);

#endif
