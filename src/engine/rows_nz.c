/* rows_nz.c - each row's topics that may hold counts, in increasing order (the sparse path).
 *
 * The sparse local step and global step (local_sparse.c, global_sparse.c)
 * visit a word's row only where it holds counts: its list. The dense matrix A
 * stays the model (snapshots, exports and every reader see it unchanged); the
 * lists are derived state, never stored: built from A by a scan (a model
 * restored or trained densely before), then kept by the sparse global step,
 * which unions each row's list with the topics its statistics add and drops
 * the values it prunes (global_sparse.c), and by births, which add a merged
 * or seeded topic (slda_rows_nz_add). A list holds every non-zero value of
 * its row, and may hold a zero (a freed column, a value that underflowed in
 * a fold) until the row's next step: a zero costs a visit, never a wrong
 * value. Model's thread only.
 */
#include "engine/rows_nz.h"

#include <stdlib.h>
#include <string.h>

static void reserve(slda_model_t *model, uint32_t w, uint32_t n)
{
    if (model->nzcap[w] >= n)
        return;
    uint32_t cap = model->nzcap[w] ? model->nzcap[w] : 4;
    while (cap < n)
        cap *= 2;
    if (cap > model->K)
        cap = model->K;
    model->nzt[w] = slda_xrealloc(model->nzt[w], (size_t)cap * sizeof **model->nzt);
    model->nzcap[w] = cap;
}

void slda_rows_nz_ensure(slda_model_t *model)
{
    if (model->nz_valid)
        return;
    if (!model->nzt) {
        model->nzt = slda_xcalloc(model->W, sizeof *model->nzt);
        model->nzn = slda_xcalloc(model->W, sizeof *model->nzn);
        model->nzcap = slda_xcalloc(model->W, sizeof *model->nzcap);
    }
    uint32_t K = model->K, Kp = model->Kp;
    for (uint32_t w = 0; w < model->W; w++) {
        model->nzn[w] = 0;
        if (w >= model->rows_used)
            continue; /* never written: zero */
        const float *a = model->A + (size_t)w * Kp;
        uint32_t n = 0;
        for (uint32_t k = 0; k < K; k++)
            n += a[k] != 0.0f;
        if (!n)
            continue;
        reserve(model, w, n);
        n = 0;
        for (uint32_t k = 0; k < K; k++)
            if (a[k] != 0.0f)
                model->nzt[w][n++] = (uint16_t)k;
        model->nzn[w] = n;
    }
    model->nz_valid = 1;
}

void slda_rows_nz_union(slda_model_t *model, uint32_t w, const uint16_t *add, uint32_t n)
{
    uint32_t have = model->nzn[w], extra = 0;
    const uint16_t *old = model->nzt[w];
    for (uint32_t i = 0, j = 0; j < n; j++) { /* topics of add not listed */
        while (i < have && old[i] < add[j])
            i++;
        extra += i == have || old[i] != add[j];
    }
    if (!extra)
        return;
    reserve(model, w, have + extra);
    uint16_t *t = model->nzt[w];
    /* merge from the back, in place */
    uint32_t i = have, j = n, o = have + extra;
    while (j > 0) {
        if (i > 0 && t[i - 1] > add[j - 1])
            t[--o] = t[--i];
        else if (i > 0 && t[i - 1] == add[j - 1]) {
            t[--o] = t[--i];
            j--;
        } else
            t[--o] = add[--j];
    }
    model->nzn[w] = have + extra;
}

void slda_rows_nz_set(slda_model_t *model, uint32_t w, const uint16_t *list, uint32_t n)
{
    reserve(model, w, n);
    if (n)
        memcpy(model->nzt[w], list, (size_t)n * sizeof *list);
    model->nzn[w] = n;
}

void slda_rows_nz_reset_row(slda_model_t *model, uint32_t w, int full)
{
    if (!model->nz_valid)
        return;
    model->nzn[w] = 0;
    if (!full)
        return;
    reserve(model, w, model->K);
    for (uint32_t k = 0; k < model->K; k++)
        model->nzt[w][k] = (uint16_t)k;
    model->nzn[w] = model->K;
}

void slda_rows_nz_clear_all(slda_model_t *model)
{
    if (model->nzn)
        memset(model->nzn, 0, (size_t)model->W * sizeof *model->nzn);
}

void slda_rows_nz_free(slda_model_t *model)
{
    if (model->nzt) {
        for (uint32_t w = 0; w < model->W; w++)
            free(model->nzt[w]);
    }
    free(model->nzt);
    free(model->nzn);
    free(model->nzcap);
    model->nzt = NULL;
    model->nzn = model->nzcap = NULL;
    model->nz_valid = 0;
}
