/* changes.h - a topic's share rising or falling over event time: a test on counts (changes.c).
 *
 * `report` runs it over the windows its charts show, the tracker at each comparison over the
 * windows of the chart's tier (rise and fall events, docs/tracking.md "Drift and events").
 */
#ifndef SLDA_TRACK_CHANGES_H
#define SLDA_TRACK_CHANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct slda_change_s {
    int fall;            /* 0: a rise, 1: a fall */
    uint32_t topic;
    size_t window;       /* where it happened (the change point in the block that showed it) */
    double before, after;/* the topic's share in the baseline and in the block */
    double z;            /* the two-proportion z statistic */
    double docs_before, docs_after;
} slda_change_t;

/* Changes over n windows, oldest first: docs[n] documents, share[n * K] each topic's mean share;
 * no baseline starts before `warmup` documents. Returns how many; *out (malloc'ed, NULL when
 * none) sorted by window, then topic. */
size_t slda_changes_find(const double *docs, const double *share, size_t n, uint32_t K,
                         double warmup, slda_change_t **out);

#endif /* SLDA_TRACK_CHANGES_H */
