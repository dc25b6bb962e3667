/* align.h - topic alignment between two models: Jensen-Shannon distances of their topics' word
 * distributions (words matched by string) and the optimal one-to-one assignment (Hungarian).
 *
 * Used by `streamlda diff` and `streamlda report` (src/cli/cli_diff.c, report_collect.c).
 * Nothing here prints, allocates model-sized arrays or keeps state between calls.
 */
#ifndef SLDA_ALIGN_H
#define SLDA_ALIGN_H

#include "engine/model.h"

#include <stddef.h>
#include <stdint.h>

/* Minimum-cost one-to-one assignment on an n x m cost matrix (row-major, finite values):
 * min(n, m) pairs, each row and each column used at most once. row_to_col (n entries) receives
 * the column of each row, or -1 for a row left without one (only when n > m). Returns the
 * total cost. Shortest augmenting paths with potentials (the Hungarian algorithm in the
 * Jonker-Volgenant form): O(min(n,m)^2 max(n,m)) time, O(n + m) extra memory. Ties are broken
 * deterministically (lowest column first). */
double slda_align_assign(const double *cost, uint32_t n, uint32_t m, int32_t *row_to_col);

/* Jensen-Shannon distance of two distributions over n outcomes: sqrt of the JS divergence
 * with base-2 logarithms, so in [0, 1]; 0 exactly when p[i] == q[i] for every i. p and q are
 * non-negative and should each sum to 1 (not checked: the caller's remainder bucket does). */
double slda_js_distance(const double *p, const double *q, size_t n);

/* Words compared per topic by slda_align_distances when the caller has no preference. */
#define SLDA_ALIGN_TOP_DEFAULT 100

/* dist[i * Kb + j] = JS distance between topic i of a and topic j of b (Ka x Kb, row-major).
 * Words are matched by string (two models' word ids differ). Each topic is represented by its
 * `top` most probable words; the distance of a pair is taken over the union of both topics'
 * lists, every word with its exact probability under each model (0 where that model does not
 * hold the word), plus one remainder bucket holding each side's mass outside the union. That
 * coarse-graining never increases the distance (it is a lower bound on the full rows') and is
 * exact when the topics' mass outside the lists is negligible. top == 0 (or more words than a
 * model holds) compares the full rows over the union of both vocabularies. The terms come from
 * a table (align.c) within 1e-5 of slda_js_distance on the same support; identical topics give
 * exactly 0. Cost: O(Ka Kb 2 top) table lookups, plus O((Ka + Kb) W log top) to pick the
 * lists (measured, bench/track_cli.sh: about 2 s at K=1000, top 100, besides loading), rows
 * shared among worker threads (slda_align_threads). */
slda_err_t slda_align_distances(const slda_model_t *a, const slda_model_t *b, uint32_t top,
                                double *dist, char *errstr, size_t errstr_size);

/* Worker threads of slda_align_distances: 0 (the default) = one per core online (at most 8)
 * for matrices of 2 million word comparisons or more, one thread below that; n > 0 forces n.
 * The result never depends on it (each cell is computed alone). For tests and benchmarks; set
 * it before any call, not during one. */
extern uint32_t slda_align_threads;

/* Topic weights: each topic's share of the topic totals NZ (K values summing to 1; uniform
 * when the model has no counts yet). */
void slda_align_weights(const slda_model_t *model, double *out);

#endif /* SLDA_ALIGN_H */
