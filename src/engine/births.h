/* births.h - births, retirement and merges of topics (births.c): the hook the
 * global step calls and the per-document score the local step computes. */
#ifndef SLDA_BIRTHS_H
#define SLDA_BIRTHS_H

#include "model.h"

#ifndef SLDA_DEFAULT_HORIZON
#define SLDA_DEFAULT_HORIZON 1e6 /* as in global_step.c: corpus.tokens=0 on a stream */
#endif

slda_births_t *slda_births_new(const slda_model_t *model);
void slda_births_free(slda_births_t *b);
/* Mean per-token log sum_k theta_k phi_wk of a document right after its local
 * step in loc (theta from loc's summed document counts, phi from loc's word
 * factors, or from the model for SVB); pw (npairs) receives each word's p(w).
 * Reads the frozen model only: safe on worker threads. */
float slda_births_doc_score(const slda_frozen_t *fz, const slda_local_t *loc,
                            const uint32_t *words, const uint32_t *counts, uint32_t npairs,
                            float *pw);
/* After the global update of a minibatch (model thread, document order):
 * retire dead topics, flag and buffer poorly explained documents, and maybe
 * give them a topic. scores/pw/ntheta are per document as the local step
 * left them; ntokens and rho those of the update. */
void slda_births_update(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                        const float *scores, float *const *pw, const float *ntheta,
                        uint64_t ntokens, double rho);

#endif
