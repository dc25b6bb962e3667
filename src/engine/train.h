/* train.h - a minibatch's local steps and its global update, pipelined (train.c). */
#ifndef SLDA_TRAIN_H
#define SLDA_TRAIN_H

#include "engine/local.h"

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
/* train.c: free the per-worker scratch kept in the model. */
void slda_model_free_locals(slda_model_t *model);

#endif /* SLDA_TRAIN_H */
