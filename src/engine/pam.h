/* pam.h - 4-level pachinko allocation (model.kind=pam; pam.c, docs/models.md).
 *
 * S super-topics over K sub-topics over words: a document draws a super-topic mixture theta_m
 * ~ Dir(alpha0) and, for each super-topic x, a sub-topic mixture theta_mx ~ Dir(alpha_x); a
 * token draws x ~ theta_m, then its sub-topic y ~ theta_mx, then its word from the sub-topic's
 * words (the topic-word counts every kind shares). alpha0 is fixed (alpha); the S x K matrix
 * alpha_x is learned from the documents by a fixed-point step blended in with rho_t.
 */
#ifndef SLDA_PAM_H
#define SLDA_PAM_H

#include "core/config.h"

typedef struct slda_pam_s slda_pam_t;
typedef struct slda_local_s slda_local_t;
typedef struct slda_frozen_s slda_frozen_t;

/* alpha_x starts at alpha times a factor in [0.5, 1.5) drawn from seed for each entry (the
 * super-topics would otherwise start alike and stay alike). */
slda_pam_t *slda_pam_new(uint32_t S, uint32_t K, double alpha, uint64_t seed);
void slda_pam_free(slda_pam_t *pam);
uint32_t slda_pam_supers(const slda_pam_t *pam);
/* alpha_x[y] (S x K, row-major) and alpha0 (S); readable and, for a snapshot, writable. */
double *slda_pam_alpha(slda_pam_t *pam);
const double *slda_pam_alpha_c(const slda_pam_t *pam);
double slda_pam_alpha0(const slda_pam_t *pam);
/* Super-topic x's n largest sub-topics by their share of its prior alpha_x (the topics it
 * groups), largest first, into ids and shares; returns how many (`topics`, the report, the
 * live page). */
uint32_t slda_pam_super_top(const slda_pam_t *pam, uint32_t x, uint32_t n, uint32_t *ids,
                            double *shares);

/* The local step of one document (the hybrid: AMF updates of the joint (super, sub) of its
 * words with count > r, joint draws for the others), statistics like slda_local_run's
 * (loc->stats, or loc->stats_out for this run: nu x Kp, each word's expected sub-topic
 * counts). nxy (S x K, may be NULL): the document's counts n_mxy for alpha_x's step, one
 * draw of every token (the last sweep's draws, and draws from the AMF words' responsibilities:
 * slda_pam_draw_counts), after everything else used the random stream. theta (K, may be
 * NULL): its sub-topic mixture sum_x theta_mx theta_mxy. */
void slda_pam_run(slda_local_t *loc, const slda_frozen_t *fz, const slda_pam_t *pam,
                  const uint32_t *words, const uint32_t *counts, uint32_t npairs,
                  uint64_t seed_a, uint64_t seed_b, int want_stats, float *theta, float *nxy);
/* Frees a worker's PAM scratch (slda_local_destroy calls it through loc->pam_free). */
void slda_pam_scratch_free(void *scratch);

/* n draws from the distribution g (sk weights, not necessarily normalised) added to out, one
 * per draw; cum (sk) is scratch. The counts alpha_x is learned from: a mean-field (AMF)
 * document spreads a little of every word over every super-topic, and Minka's step reads such
 * mean counts as documents whose sub-topic mixtures are all alike, so alpha_x grew and the
 * super-topics' mixtures flattened (KOS, K=50, S=10, batch AMF: perplexity 1717.6 against
 * Gibbs' 1429.1); one draw of every token from its responsibilities gives integer counts as
 * Gibbs' are (1424.2): a stochastic EM step. */
void slda_pam_draw_counts(const float *g, size_t sk, uint32_t n, slda_rng_t *rng, double *cum,
                          float *out);

/* The step on alpha_x after a minibatch: one fixed-point (Minka) step per super-topic on the
 * documents' counts nxy (ndocs x S x K), blended in with rho. */
void slda_pam_step(slda_pam_t *pam, const float *nxy, size_t ndocs, double rho, uint64_t t);
/* alpha_x is learned from update `warmup` on, with `step` times the update's rho
 * (pam.alpha.step, pam.alpha.warmup; pam.c says why). */
void slda_pam_schedule(slda_pam_t *pam, double step, uint64_t warmup);

#endif /* SLDA_PAM_H */
