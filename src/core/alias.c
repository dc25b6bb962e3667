/* alias.c - Walker's alias tables, built by Vose's method in a fixed order.
 *
 * Each of the n columns holds probability 1/n of the mass: its own index with
 * probability p_i n (scaled into [0, 2^32] as thresh) and an alias for the
 * rest. The construction walks the "small" and "large" columns in index
 * order with two stacks, so the table depends on the weights alone (the
 * sparse local step draws from them on any thread; docs/engine.md, "The sparse
 * path"). Columns left over by rounding keep their own index always.
 */
#include "core/alias.h"

#include <stdlib.h>

void slda_alias_clear(slda_alias_t *a)
{
    if (!a)
        return;
    free(a->alias);
    free(a->thresh);
    a->alias = NULL;
    a->thresh = NULL;
    a->n = a->cap = 0;
}

void slda_alias_build(slda_alias_t *a, const double *w, uint32_t n)
{
    if (n > a->cap) {
        a->cap = n;
        a->alias = slda_xrealloc(a->alias, (size_t)n * sizeof *a->alias);
        a->thresh = slda_xrealloc(a->thresh, (size_t)n * sizeof *a->thresh);
    }
    a->n = n;
    double total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += w[i];
    a->total = total;
    /* scaled[i] = w[i] n / total, kept in thresh's slot as a double scratch */
    double *scaled = slda_xmalloc((size_t)n * sizeof *scaled);
    uint32_t *small = slda_xmalloc((size_t)n * sizeof *small);
    uint32_t *large = slda_xmalloc((size_t)n * sizeof *large);
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        scaled[i] = total > 0 ? w[i] * (double)n / total : 1.0;
        if (scaled[i] < 1.0)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[--nl];
        a->thresh[s] = (uint64_t)(scaled[s] * 4294967296.0);
        a->alias[s] = l;
        scaled[l] -= 1.0 - scaled[s];
        if (scaled[l] < 1.0)
            small[ns++] = l;
        else
            large[nl++] = l;
    }
    while (nl) { /* what rounding left: always the column itself */
        uint32_t l = large[--nl];
        a->thresh[l] = (uint64_t)1 << 32;
        a->alias[l] = l;
    }
    while (ns) {
        uint32_t s = small[--ns];
        a->thresh[s] = (uint64_t)1 << 32;
        a->alias[s] = s;
    }
    free(scaled);
    free(small);
    free(large);
}
