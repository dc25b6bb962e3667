/* changes.c - a topic's share rising or falling over event time: a test on counts.
 *
 * Used by `report` over the windows its charts show and by the tracker at each comparison over
 * the windows of the chart's tier (the service's rise and fall events). Over the windows (each
 * window's documents and each topic's mean share), a topic's share in a block of the latest M windows (M = 1, 4, 16: a jump, a
 * steeper or a slower rise) is tested against its own baseline, the max(8, 2M) windows before
 * the block: a two-proportion z statistic with the documents as counts (a document's share is
 * a fraction, whose variance is below p(1-p): the test errs on the side of silence). A rise is
 * z >= CHANGE_Z with the block's share at least CHANGE_RATIO times the baseline's and above it
 * by half a uniform share (0.5/K); a fall the mirror. The block and the baseline must hold
 * CHANGE_MIN_BLOCK and CHANGE_MIN_BASE documents, and the baseline must start after the
 * warm-up (that many documents in the windows before it: report --warmup, track.warmup.docs): the first windows, scored while the
 * model settled, are no one's baseline. After a rise a topic raises no rise until the
 * longest baseline lies wholly after it (QUIET windows), and likewise after a fall; a burst
 * still rises and falls. An event's time is when the change happened (event time, not the
 * snapshot that found it): the window of the block where a step from the baseline's share to
 * the block's fits best (the split of baseline + block into two levels with the largest
 * between-level sum of squares, n1 n2 / (n1 + n2) (p2 - p1)^2, as binary segmentation
 * places a change point). The block's start would put a step in the middle of a 16-window
 * block up to 15 windows early: before the change, in the windows of the baseline's level.
 */
#include "track/changes.h"

#include "core/slda_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHANGE_Z 5.0           /* one-sided p ~ 3e-7 per test: K x windows x 3 tests stay quiet */
#define CHANGE_RATIO 1.5       /* and a change people would call one */
#define CHANGE_MIN_BLOCK 10.0  /* documents in the block */
#define CHANGE_MIN_BASE 20.0   /* documents in the baseline */

static const size_t scales[] = {1, 4, 16};
#define QUIET (16 + 32) /* the longest block and its baseline */

typedef struct wins_s { /* the windows: documents and K shares each */
    const double *docs, *share;
    size_t n;
    uint32_t K;
} wins_t;

/* Documents and the topic's share of windows [a, b). */
static void pool(const wins_t *r, uint32_t k, size_t a, size_t b, double *docs, double *share)
{
    double n = 0, s = 0;
    for (size_t w = a; w < b; w++) {
        n += r->docs[w];
        s += r->share[w * r->K + k] * r->docs[w];
    }
    *docs = n;
    *share = n > 0 ? s / n : 0;
}

/* The window of [a0, end) where topic k's share steps from its level over [b0, c) to its
 * level over [c, end) with the largest between-level sum of squares (documents as weights). */
static size_t change_point(const wins_t *r, uint32_t k, size_t b0, size_t a0, size_t end)
{
    size_t best = a0;
    double best_ss = -1;
    for (size_t c = a0; c < end; c++) {
        double n1, p1, n2, p2;
        pool(r, k, b0, c, &n1, &p1);
        pool(r, k, c, end, &n2, &p2);
        if (!(n1 > 0) || !(n2 > 0))
            continue;
        double ss = n1 * n2 / (n1 + n2) * (p2 - p1) * (p2 - p1);
        if (ss > best_ss) {
            best_ss = ss;
            best = c;
        }
    }
    return best;
}

typedef struct found_s {
    slda_change_t *c;
    size_t n, cap;
} found_t;

static void add_change(found_t *f, int fall, uint32_t k, size_t w, double before, double after,
                       double z, double nb, double na)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->c = slda_xrealloc(f->c, f->cap * sizeof *f->c);
    }
    f->c[f->n++] = (slda_change_t){.fall = fall, .topic = k, .window = w, .before = before,
                                   .after = after, .z = z, .docs_before = nb, .docs_after = na};
}

static int by_window(const void *a, const void *b)
{
    const slda_change_t *x = a, *y = b;
    return x->window != y->window ? (x->window > y->window) - (x->window < y->window)
                                  : (x->topic > y->topic) - (x->topic < y->topic);
}

size_t slda_changes_find(const double *docs, const double *share, size_t n, uint32_t K,
                         double warmup, slda_change_t **out)
{
    const wins_t wr = {docs, share, n, K}, *r = &wr;
    found_t f = {0};
    *out = NULL;
    if (!n || !K)
        return 0;
    double *cum = slda_xmalloc((n + 1) * sizeof *cum); /* documents before each window */
    cum[0] = 0;
    for (size_t w = 0; w < n; w++)
        cum[w + 1] = cum[w] + docs[w];
    double floor = 0.5 / K;
    for (uint32_t k = 0; k < K; k++) {
        size_t quiet_until[2] = {0, 0}; /* rise, fall: the first block end allowed again */
        for (size_t end = 1; end <= n; end++) {
            for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
                size_t m = scales[s], base = 2 * m > 8 ? 2 * m : 8;
                if (end < m + base)
                    break;
                size_t b0 = end - m - base, a0 = end - m;
                if (cum[b0] < warmup)
                    break;
                double nb, pb, na, pa;
                pool(r, k, b0, a0, &nb, &pb);
                pool(r, k, a0, end, &na, &pa);
                if (na < CHANGE_MIN_BLOCK || nb < CHANGE_MIN_BASE)
                    continue;
                double pp = (pa * na + pb * nb) / (na + nb);
                double se = sqrt(pp * (1 - pp) * (1 / na + 1 / nb));
                if (!(se > 0))
                    continue;
                double z = (pa - pb) / se;
                int fall;
                if (z >= CHANGE_Z && pa >= CHANGE_RATIO * pb && pa - pb >= floor)
                    fall = 0;
                else if (z <= -CHANGE_Z && pa * CHANGE_RATIO <= pb && pb - pa >= floor)
                    fall = 1;
                else
                    continue;
                if (end < quiet_until[fall])
                    break;
                add_change(&f, fall, k, change_point(r, k, b0, a0, end), pb, pa, z, nb, na);
                quiet_until[fall] = end + QUIET;
                break;
            }
        }
    }
    free(cum);
    if (f.n > 1) /* qsort of nothing: c may be NULL */
        qsort(f.c, f.n, sizeof *f.c, by_window);
    *out = f.c;
    return f.n;
}
