/* sample.h - documents kept by word key to be scored again under a later model (sample.c).
 *
 * A window of prevalence (prev.h) keeps a uniform reservoir of its documents, each by its
 * words' vocabulary keys (XXH3 of the word with the vocabulary's seed: a key outlives the id,
 * which an eviction reuses) and counts, with its mixture at training time (its largest
 * entries). When the model has moved, the window is scored again: the reservoir's documents
 * under the model now. The window's share under the current model is then the training-time
 * share corrected by the sample's mean change (a difference estimator, exact when the
 * reservoir holds every document of the window; otherwise shrunk by its own sampling
 * variance, so the noise of a small sample does not move a settled model's shares).
 * Documents are shared between the tiers' reservoirs (reference counted). One thread.
 */
#ifndef SLDA_TRACK_SAMPLE_H
#define SLDA_TRACK_SAMPLE_H

#include "core/slda_int.h"
#include "engine/model.h"
#include "track/prev.h"

#define SLDA_SDOC_WORDS 96 /* distinct words kept per sampled document (the most frequent) */
#define SLDA_SDOC_TOP 8    /* entries of the training-time mixture kept */

typedef struct slda_sdoc_s {
    uint32_t refs;
    uint32_t n;                   /* words */
    uint64_t *key;                /* n vocabulary keys */
    uint16_t *count;              /* n counts (saturated at 65535) */
    uint32_t ntop;
    uint32_t top_k[SLDA_SDOC_TOP];/* training-time mixture: its largest entries */
    float top_p[SLDA_SDOC_TOP];
} slda_sdoc_t;

typedef struct slda_sample_s {
    uint32_t n, cap;
    double seen;        /* documents offered */
    slda_sdoc_t **doc;  /* n */
} slda_sample_t;

/* A sampled document from doc's words (ids of model's vocabulary) and its training-time
 * mixture theta (K); refs 0: each holder takes its reference (prev.c, examples.c), and
 * slda_sdoc_unref frees it with the last. */
slda_sdoc_t *slda_sdoc_new(const slda_model_t *model, const slda_doc_t *doc,
                           const float *theta, uint32_t K);
/* A document from its parts (a saved state): n keys and counts, the mixture's entries. */
slda_sdoc_t *slda_sdoc_make(const uint64_t *key, const uint16_t *count, uint32_t n,
                            const uint32_t *top_k, const float *top_p, uint32_t ntop);
void slda_sdoc_unref(slda_sdoc_t *d);

/* d's mixture under model now (K floats into theta, seeded by seed); doc is scratch. 0, or -1
 * when none of its words is held now or inference fails. */
int slda_sdoc_infer(const slda_sdoc_t *d, const slda_model_t *model, slda_doc_t *doc,
                    float *theta, uint64_t seed);

slda_sample_t *slda_sample_new(uint32_t cap);
void slda_sample_destroy(slda_sample_t *s);
/* Reservoir step for one more document of the window: returns the slot the document goes to
 * (the caller puts it there with slda_sample_put), or -1 when it is not kept. */
int slda_sample_offer(slda_sample_t *s, slda_rng_t *rng);
void slda_sample_put(slda_sample_t *s, int slot, slda_sdoc_t *d);
/* Merge b into a (a window of twice the width made of both): a weighted reservoir of the two
 * windows' documents (na, nb documents each). b is emptied. */
void slda_sample_merge(slda_sample_t *a, double na, slda_sample_t *b, double nb,
                       slda_rng_t *rng);

/* The window's mean mixture under model (K, into now) from its reservoir and its
 * training-time sums (each topic's sample mean change shrunk by slda_sample_shrink). Returns
 * 0, or -1 when the window has no sample. */
/* n changes of one topic (their sum and sum of squares) sampled from a window of docs
 * documents: their mean, shrunk towards 0 by its sampling variance v (c (1 - v / c^2), at
 * least 0; c unchanged when n < 2 or the sample is the whole window). */
double slda_sample_shrink(double sum, double sum2, uint32_t n, double docs);
int slda_sample_score(const slda_sample_t *s, const slda_model_t *model, const double *sum,
                      double docs, uint32_t K, double *now);

/* Score again, under model (update count `update`), the windows whose mixture under the
 * current model is missing or was computed at an update count that is now a quarter or more
 * behind (the model moved since), first those of tier `first`, until deadline (slda_mono_s;
 * 0: all). Returns the number of windows scored. */
size_t slda_prev_rescore(slda_prev_t *p, const slda_model_t *model, uint64_t update,
                         size_t first, double deadline);
/* Windows still waiting to be scored again. */
size_t slda_prev_stale(const slda_prev_t *p, uint64_t update);

#endif /* SLDA_TRACK_SAMPLE_H */
