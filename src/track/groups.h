/* groups.h - tracking by group: each group's share of the stream over event time and its
 * topic mix, for a bounded set of groups (groups.c; docs/tracking.md "Groups").
 *
 * A group is what a document says it belongs to besides its words: a source, a channel, a
 * language, an author (input.group.field, or @lang, @author, @key). People watching a
 * stream ask "who writes about what, and who is growing": per group the documents over
 * time (one axis of SLDA_GROUP_POINTS windows shared by all groups, doubling its width as the
 * span grows, so the whole span stays in bounded memory) and the sum of its documents'
 * topic mixtures. At most `capacity` groups are held; when full, a new group takes the slot
 * of the one with the fewest documents among a few sampled (as Redis samples keys to evict),
 * whose counts go to "(other)" and are counted. Owned by the tracker's thread.
 */
#ifndef SLDA_TRACK_GROUPS_H
#define SLDA_TRACK_GROUPS_H

#include "core/json.h"
#include "core/slda_int.h"

#include <stdint.h>
#include <stdio.h>

#define SLDA_GROUP_POINTS 64  /* windows of the shared time axis */
#define SLDA_GROUP_SAMPLE 16  /* groups sampled for an eviction */
#define SLDA_GROUP_OTHER "(other)" /* where evicted groups' documents go */
#define SLDA_GROUP_NONE "(none)"   /* a document whose record names no group */
#define SLDA_GROUP_SHOW 20    /* groups /api/groups and the report list (the largest) */

typedef struct slda_groups_s slda_groups_t;

/* Groups of documents over K topics, at most capacity (>= 1) of them; source names what they
 * are (the field, or @lang ...: shown with them). */
slda_groups_t *slda_groups_new(uint32_t K, uint32_t capacity, const char *source);
void slda_groups_destroy(slda_groups_t *g);

/* One document at event time ms with mixture theta (K, summing to 1): it belongs to the n
 * groups named (each gets 1/n of it; n = 0: SLDA_GROUP_NONE). */
void slda_groups_add(slda_groups_t *g, int64_t ms, const float *theta, const char *const *names,
                     uint32_t n);

uint32_t slda_groups_count(const slda_groups_t *g);     /* groups held */
uint64_t slda_groups_evicted(const slda_groups_t *g);   /* groups evicted into (other) */
const char *slda_groups_source(const slda_groups_t *g);
/* The documents of group `name` (0 when not held) and, with mix (K), its mean topic mix. */
double slda_groups_docs(const slda_groups_t *g, const char *name, double *mix);

/* The n largest groups by documents: their slots into slot (largest first); how many. */
uint32_t slda_groups_largest(const slda_groups_t *g, uint32_t n, uint32_t *slot);
/* The group in slot (SLDA_GROUPS_OTHER: "(other)"): its name, documents, documents per window
 * of the axis (SLDA_GROUP_POINTS) and sums of its documents' mixtures (K), borrowed. */
#define SLDA_GROUPS_OTHER UINT32_MAX
const char *slda_groups_get(const slda_groups_t *g, uint32_t slot, double *docs,
                            const double **series, const double **mix);
/* The time axis: its windows up to the last with documents (0: none), the first's start and
 * their width (ms), and every document per window (total, borrowed). */
int slda_groups_axis(const slda_groups_t *g, int64_t *base_ms, int64_t *width_ms,
                     const double **total);

/* JSON object (docs/tracking.md "Groups"): with state, every group with its whole mix (the
 * sidecar; slda_groups_read restores it), else the SLDA_GROUP_SHOW largest with their
 * top topics (the page, the report). */
void slda_groups_write_json(const slda_groups_t *g, FILE *f, int state);
/* Restore from a state's object (node of js): 0, or -1 with the reason in err. */
int slda_groups_read(slda_groups_t *g, const slda_json_t *js, uint32_t node, char *err,
                     size_t errsize);

#endif /* SLDA_TRACK_GROUPS_H */
