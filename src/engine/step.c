/* step.c - the stochastic global step's schedule: the step size rho_t and the corpus size C.
 *
 * Every minibatch's update (global_step.c, update.c's records, births.c's re-seeding)
 * moves the topic-word counts by rho_t towards the minibatch's statistics scaled by
 * C / |M| (docs/algorithm.md "Global step"). Both depend only on the parameters, the update
 * count t and the model's C: the same t gives the same step on every replica. A new
 * step-size parameter is a field in core/config.h, a row in core/config.c's property
 * table (flags: stored in snapshots, tunable on restore) and its use here.
 */
#include "engine/step.h"
#include "engine/model_priv.h"

#include <math.h>

double slda_rho(const slda_params_t *p, uint64_t t)
{
    double rho = p->rho_s * pow(p->rho_tau + (double)t, -p->rho_kappa);
    if (rho < p->rho_min)
        rho = p->rho_min;
    return rho > 1.0 ? 1.0 : rho;
}

double slda_step_corpus(const slda_model_t *model)
{
    return model->corpus_tokens > 0 ? model->corpus_tokens : SLDA_DEFAULT_HORIZON;
}
