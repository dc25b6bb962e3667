/* rows_nz.h - each row's topics that may hold counts, for the sparse path (rows_nz.c). */
#ifndef SLDA_ROWS_NZ_H
#define SLDA_ROWS_NZ_H

#include "engine/model_priv.h"

/* The lists built from A when they are not valid (a scan of the rows written:
 * O(rows x K), once after something else wrote A). */
void slda_rows_nz_ensure(slda_model_t *model);
/* Something other than the sparse global step wrote A: the lists are built
 * again before the next sparse use. */
static inline void slda_rows_nz_invalidate(slda_model_t *model)
{
    model->nz_valid = 0;
}
/* Row w's list becomes its union with add[0..n) (increasing, no duplicates). */
void slda_rows_nz_union(slda_model_t *model, uint32_t w, const uint16_t *add, uint32_t n);
/* Row w's list becomes list[0..n) (increasing, no duplicates). */
void slda_rows_nz_set(slda_model_t *model, uint32_t w, const uint16_t *list, uint32_t n);
/* Row w holds nothing (evicted, cleared). */
static inline void slda_rows_nz_clear_row(slda_model_t *model, uint32_t w)
{
    if (model->nzn)
        model->nzn[w] = 0;
}
/* Row w was given its initial values: all K topics (full) or none. */
void slda_rows_nz_reset_row(slda_model_t *model, uint32_t w, int full);
/* Topic k of row w may hold a count now (births: a seed, a merge). */
static inline void slda_rows_nz_add(slda_model_t *model, uint32_t w, uint32_t k)
{
    uint16_t t = (uint16_t)k;
    if (model->nz_valid)
        slda_rows_nz_union(model, w, &t, 1);
}
/* Every row holds nothing (the first update clears the model). */
void slda_rows_nz_clear_all(slda_model_t *model);
void slda_rows_nz_free(slda_model_t *model);

#endif /* SLDA_ROWS_NZ_H */
