/* global_step.h - the stochastic global step: minibatch statistics, rho_t, the update of the
 * topic-word counts, alpha (global_step.c). */
#ifndef SLDA_GLOBAL_STEP_H
#define SLDA_GLOBAL_STEP_H

#include "engine/local.h"

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

/* Apply the minibatch statistics in acc with ntokens training tokens
 * (docs/algorithm.md "Global step") in place; returns rho_t. The engine uses the
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
/* global.rows=counts: the constants of the update of a minibatch of ntokens
 * tokens after tokens_before (g's rho, r, lam = 1 - r, cm = C / ntokens). */
void slda_counts_constants(const slda_model_t *model, uint64_t ntokens, uint64_t tokens_before,
                           slda_gprep_t *g);
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

#endif /* SLDA_GLOBAL_STEP_H */
