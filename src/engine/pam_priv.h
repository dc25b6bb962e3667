/* pam_priv.h - pachinko allocation's state, shared by pam.c (the priors) and pam_local.c (the
 * local step); private to src/engine. */
#ifndef SLDA_PAM_PRIV_H
#define SLDA_PAM_PRIV_H

#include "engine/pam.h"

struct slda_pam_s {
    uint32_t S, K;
    double alpha0;
    double step;     /* pam.alpha.step */
    uint64_t warmup; /* pam.alpha.warmup */
    double *alpha;  /* S x K */
};

#endif /* SLDA_PAM_PRIV_H */
