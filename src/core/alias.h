/* alias.h - Walker's alias tables: a draw from a fixed discrete distribution in O(1) (alias.c). */
#ifndef SLDA_ALIAS_H
#define SLDA_ALIAS_H

#include "core/slda_int.h"

/* A distribution over 0..n-1 with weights w (Vose's construction, in a fixed
 * order: the same weights give the same table on every machine). A draw takes
 * one random word: its high 32 bits pick a column, its low 32 bits decide
 * between the column and its alias. */
typedef struct slda_alias_s {
    uint32_t n, cap;
    uint32_t *alias;  /* n */
    uint64_t *thresh; /* n: keep the column when the low 32 bits are below it (2^32: always) */
    double total;     /* sum of the weights */
} slda_alias_t;

/* (Re)build a for weights w[0..n) (each >= 0, their sum > 0); a may hold an
 * older table (its arrays are reused) or be zeroed. */
void slda_alias_build(slda_alias_t *a, const double *w, uint32_t n);
void slda_alias_clear(slda_alias_t *a);

static inline uint32_t slda_alias_draw(const slda_alias_t *a, slda_rng_t *rng)
{
    uint64_t r = slda_rng_next(rng);
    uint32_t col = (uint32_t)(((r >> 32) * (uint64_t)a->n) >> 32);
    return (uint32_t)r < a->thresh[col] ? col : a->alias[col];
}

#endif /* SLDA_ALIAS_H */
