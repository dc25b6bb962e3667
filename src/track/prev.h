/* prev.h - prevalence by event time at several resolutions at once, in bounded memory (prev.c).
 *
 * Every document's mixture is added to one window of each tier: minutes for the last hours,
 * hours for the last weeks, days for the last years, and a last tier that never drops a
 * document: when its windows no longer cover the span of the stream it doubles their width
 * (merging pairs), as round-robin databases and Prometheus' downsampling keep a long history
 * coarse and a short one fine. A finer tier forgets its oldest windows (their documents stay
 * in the coarser tiers) and counts the documents that arrived older than its ring. So a
 * replay of nine years and a live stream both keep their whole span, in at most
 * sum(tier windows) x K doubles, with nothing left out uncounted.
 *
 * A window also holds, when sampling is on, a reservoir of its documents (track/sample.h) and
 * their mixture under the model as it is now (rescored by slda_prev_rescore): the timeline
 * under one model. Owned by one thread (the service's, or train's).
 */
#ifndef SLDA_TRACK_PREV_H
#define SLDA_TRACK_PREV_H

#include "core/slda_int.h"
#include "engine/model.h"

#include <stdint.h>

#define SLDA_PREV_TIERS 5 /* at most: minute, hour, day, week (and the doubling last tier) */

/* One tier as configured: its window (ms), how many windows it keeps, whether it is the last
 * tier (never drops a document: doubles its window instead), whether its windows keep a
 * sample of their documents. */
typedef struct slda_prev_tier_s {
    int64_t window_ms;
    uint32_t windows;
    int doubling;
    int sampled;
} slda_prev_tier_t;

struct slda_sample_s;

/* A window of a tier: its documents' mixtures summed at training time, and (sample.c) its
 * mean mixture under the current model. */
typedef struct slda_pwin_s {
    int64_t win;          /* start / the tier's width; INT64_MIN: empty slot */
    double docs;
    double *sum;          /* K: sum of theta at training time (allocated on first use) */
    double *now;          /* K: mean theta under the model of update `scored`, or NULL */
    uint64_t scored;      /* the update count `now` was computed at, +1 (0: never) */
    struct slda_sample_s *sample; /* reservoir of its documents, or NULL */
} slda_pwin_t;

typedef struct slda_ptier_s {
    slda_prev_tier_t conf;
    int64_t width;   /* ms; the doubling tier's grows */
    int64_t base;    /* doubling tier: window index of slot 0 (INT64_MIN: none yet) */
    int64_t top;     /* the newest window index with documents (INT64_MIN: none) */
    uint64_t beyond; /* documents older than the ring when they came (kept in coarser tiers) */
    uint32_t doublings;
    slda_pwin_t *w;  /* conf.windows slots */
} slda_ptier_t;

typedef struct slda_prev_s {
    uint32_t K;
    size_t ntiers;
    slda_ptier_t tier[SLDA_PREV_TIERS];
    uint32_t sample_docs; /* reservoir size per window (0: no samples) */
    uint64_t docs;        /* documents added */
    slda_rng_t rng;       /* the reservoirs' draws (seeded: the same stream, the same samples) */
} slda_prev_t;

/* The tiers for a finest window (ms) kept `windows` times: that tier, then each standard
 * resolution coarser than it (hour: 504 = 3 weeks, day: 1096 = 3 years, week: 1024 = 19.6
 * years, the last doubling beyond). Returns how many (<= SLDA_PREV_TIERS). */
size_t slda_prev_default_tiers(int64_t finest_ms, uint32_t windows, slda_prev_tier_t *out);

/* A store for K topics over ntiers tiers (finest first, each coarser than the one before);
 * sample_docs per window (0: none) in the tiers marked sampled. */
slda_prev_t *slda_prev_new(uint32_t K, const slda_prev_tier_t *tiers, size_t ntiers,
                           uint32_t sample_docs);
void slda_prev_destroy(slda_prev_t *p);
/* Empty every tier (the configuration kept). */
void slda_prev_reset(slda_prev_t *p);

/* The window of event time ms in tier t, made if needed (NULL: older than a ring). */
slda_pwin_t *slda_prev_window(slda_prev_t *p, size_t t, int64_t ms);
/* Add one document's mixture (K floats) at ms to every tier; doc (may be NULL: not sampled),
 * a document of model's vocabulary, is offered to the sampled tiers' reservoirs (kept by word
 * key, track/sample.h). Returns 0, or -1 if theta is not a mixture (not added). */
int slda_prev_add(slda_prev_t *p, int64_t ms, const float *theta, const slda_model_t *model,
                  const slda_doc_t *doc);

/* Windows of tier t with documents, oldest first, into out (at most max); returns how many
 * there are (possibly more than max). */
size_t slda_prev_list(const slda_prev_t *p, size_t t, const slda_pwin_t **out, size_t max);
/* The window (ms) tier t has now. */
int64_t slda_prev_width(const slda_prev_t *p, size_t t);
/* The earliest and latest event time with documents (0, 0 when none). */
void slda_prev_span(const slda_prev_t *p, int64_t *first_ms, int64_t *last_ms);
/* The finest tier that holds the stream (at least SLDA_PREV_COVER of its documents) in at
 * most max_points windows (the last tier when none does), and the documents outside it. */
#define SLDA_PREV_COVER 0.995
size_t slda_prev_pick(const slda_prev_t *p, size_t max_points);
double slda_prev_outside(const slda_prev_t *p, size_t t);
/* A window's mean share of topic k: under the current model when rescored, else at training
 * time. */
double slda_prev_share(const slda_prev_t *p, const slda_pwin_t *w, uint32_t k);

/* Restore a window of tier t (a saved state): width must be the tier's width now, or, for
 * the doubling tier, a wider one it doubles to. sums: K. Returns the window or NULL. */
slda_pwin_t *slda_prev_restore(slda_prev_t *p, size_t t, int64_t width, int64_t start_ms,
                               double docs, const double *sums);

#endif /* SLDA_TRACK_PREV_H */
