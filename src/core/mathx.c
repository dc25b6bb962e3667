/* mathx.c - special functions the variational steps need. */
#include "core/slda_int.h"

#include <math.h>

/* Digamma by recurrence up to x >= 6, then the asymptotic series
 * (Abramowitz & Stegun 6.3.18); absolute error below 1e-12 for x > 0. */
double slda_digamma(double x)
{
    double r = 0.0;
    while (x < 6.0) {
        r -= 1.0 / x;
        x += 1.0;
    }
    double f = 1.0 / (x * x);
    double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
    return r + log(x) - 0.5 / x + t;
}
