/* step.h - the global step's schedule: the step size rho_t and the corpus size C (step.c). */
#ifndef SLDA_STEP_H
#define SLDA_STEP_H

#include "core/config.h"

/* rho_t = max(rho.min, rho.s (rho.tau + t)^-rho.kappa), at most 1 (docs/algorithm.md "Global
 * step"). */
double slda_rho(const slda_params_t *p, uint64_t t);
/* C, the number of tokens the model stands for: corpus.tokens, or on a stream of no known
 * size (corpus.tokens=0) SLDA_DEFAULT_HORIZON. */
double slda_step_corpus(const slda_model_t *model);
#define SLDA_DEFAULT_HORIZON 1e6

#endif /* SLDA_STEP_H */
