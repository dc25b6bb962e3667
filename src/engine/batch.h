/* batch.h - the in-place batch algorithms of the hybrid paper, one sweep at a time (batch.c). */
#ifndef SLDA_BATCH_H
#define SLDA_BATCH_H

#include "core/config.h"

/*
 * slda_batch_run (streamlda.h) is a loop over these. Tests drive them
 * directly to look at the state between iterations.
 */
typedef struct slda_batch_s slda_batch_t;

/* Sizes of the split corpus. */
typedef struct slda_batch_sizes_s {
    uint64_t train_tokens, test_tokens;
    uint64_t vb_pairs;  /* training pairs with count > r (one gamma each) */
    uint64_t cg_tokens; /* training tokens of pairs with count <= r (one z each) */
} slda_batch_sizes_t;

/* Split docs (borrowed, only during the call) into training and test tokens
 * and initialise the variant of p (vb, hybrid, threshold, topics, alpha, eta,
 * seed) into *out. Fails with errstr set on bad parameters (SLDA_ERR_INVALID),
 * an out-of-range word id (SLDA_ERR_RANGE), a corpus without training or test
 * tokens (SLDA_ERR_EMPTY) or a failed allocation (SLDA_ERR_NOMEM). */
slda_err_t slda_batch_new(const slda_params_t *p, const slda_doc_t *docs, size_t ndocs,
                          uint32_t nwords, slda_batch_t **out, char *errstr,
                          size_t errstr_size);
void slda_batch_destroy(slda_batch_t *batch);

/* One sweep over every document; then, for the sampling variants past the
 * burn-in, adds this iteration's predictive probabilities to the average. */
void slda_batch_iterate(slda_batch_t *batch);
/* Iterations done so far. */
uint32_t slda_batch_iterations(const slda_batch_t *batch);
/* Test perplexity: the sample average (eq. 31) once there are samples, else
 * the current counts (eq. 30). */
double slda_batch_perplexity(const slda_batch_t *batch);
void slda_batch_sizes(const slda_batch_t *batch, slda_batch_sizes_t *out);
/* Sum of NZ (should equal the training token count). */
double slda_batch_topic_total(const slda_batch_t *batch);
/* Recount Ntheta, Nphi, NZ (and the CVB variances) from the gammas and the
 * topic assignments and return the largest absolute difference from the
 * live arrays: the incremental updates' bookkeeping error. */
double slda_batch_check(const slda_batch_t *batch);

/* Put the batch's current topic-word counts into model, whose vocabulary
 * the documents were read through (K equal, at least as many rows): A =
 * Nphi (sigma 1), NZ recounted from the stored rows, the rows of words with
 * training tokens ready (and every row of a fixed vocabulary), t = the
 * iterations run, docs/tokens/C = the training documents/tokens. */
slda_err_t slda_batch_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                            size_t errstr_size);

/* Iterations before the sampling variants start averaging (the paper's 10). */
#define SLDA_BATCH_BURNIN 10
/* Fraction of each document's tokens withheld for testing. */
#define SLDA_BATCH_TEST_FRACTION 0.1

#endif
