/* testdraw.h - what the batch tests' synthetic corpora share (unit_batch.c, unit_batch_models.c):
 * the known topics they are drawn from and a draw from a discrete distribution. */
#ifndef SLDA_TESTDRAW_H
#define SLDA_TESTDRAW_H

#include "testutil.h"

/* Topic k (of 3, over 30 words) puts 95% of its mass on words 10k..10k+9 (weights 1/(i+1), a
 * Zipf-like head), 5% evenly on the other 20. */
static inline double test_true_phi(int k, int w)
{
    static const double h10 = 2.9289682539682538; /* sum_{i=1..10} 1/i */
    if (w / 10 != k)
        return 0.05 / 20;
    return 0.95 / ((w % 10 + 1) * h10);
}

/* An index drawn from p[0..n) (summing to 1). */
static inline int test_draw(slda_rng_t *rng, const double *p, int n)
{
    double u = slda_rng_double(rng), c = 0.0;
    for (int i = 0; i < n - 1; i++) {
        c += p[i];
        if (u < c)
            return i;
    }
    return n - 1;
}

#endif /* SLDA_TESTDRAW_H */
