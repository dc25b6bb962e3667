/* batch_atm.c - batch mode for the author-topic model: one row of topic counts per author.
 *
 * docs/models.md, "Batch mode". With one author a document, the author-topic model's
 * collapsed conditional of a token is LDA's with the document's topic counts replaced by its
 * author's, N_x[k] summed over every document x wrote (Rosen-Zvi et al.; Heinrich Fig. 1b with
 * x observed). So batch.c runs unchanged over rows of Ntheta that are authors, not documents:
 * every local variant of the table (CGS, CVB0 = AMF, CVB, SVB, the hybrids) and the document
 * completion (a test token predicted by its author's mixture). A document with several
 * authors would need the joint draw of (x, z) over its authors; batch mode refuses it rather
 * than approximate (the stream mode's approximation is documented in docs/models.md).
 */
#include "engine/batch_priv.h"
#include "engine/authors.h"
#include "engine/model_priv.h"

#include <stdlib.h>
#include <string.h>

typedef struct named_s {
    const char *name;
    uint32_t j;
} named_t;

static int by_name(const void *a, const void *b)
{
    const named_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->j > y->j) - (x->j < y->j);
}

slda_err_t slda_batch_atm_rows(slda_batch_t *batch, const slda_doc_t *docs, char *errstr,
                               size_t errstr_size)
{
    size_t J = batch->J;
    for (size_t j = 0; j < J; j++)
        if (docs[j].nauthor != 1)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "document \"%s\": %u authors; batch mode with model.kind=atm "
                                "takes one author a document (input.author.field, "
                                "--author-field; document %zu)",
                                docs[j].id ? docs[j].id : "", docs[j].nauthor, j);
    named_t *byname = slda_xmalloc((J ? J : 1) * sizeof *byname);
    for (size_t j = 0; j < J; j++)
        byname[j] = (named_t){.name = docs[j].author[0], .j = (uint32_t)j};
    qsort(byname, J, sizeof *byname, by_name);
    batch->row = slda_batch_big(J, sizeof(uint32_t), "batch author rows", errstr, errstr_size);
    batch->names = slda_xcalloc(J ? J : 1, sizeof *batch->names);
    if (!batch->row) {
        free(byname);
        return SLDA_ERR_NOMEM;
    }
    size_t R = 0;
    for (size_t i = 0; i < J; i++) {
        if (i == 0 || strcmp(byname[i].name, byname[i - 1].name))
            batch->names[R++] = slda_xstrdup(byname[i].name);
        batch->row[byname[i].j] = (uint32_t)(R - 1);
    }
    free(byname);
    batch->R = R;
    batch->rtrain = slda_batch_big(R, sizeof(uint32_t), "batch author tokens", errstr,
                                   errstr_size);
    return batch->rtrain ? SLDA_OK : SLDA_ERR_NOMEM;
}

slda_err_t slda_batch_atm_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                                size_t errstr_size)
{
    slda_authors_t *a = slda_model_authors_mut(model);
    size_t K = batch->K;
    if (!a)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "model \"%s\": holds no authors (model.kind=atm)", model->name);
    if (batch->R > slda_authors_capacity(a))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "authors.capacity %u: the batch has %zu authors",
                            slda_authors_capacity(a), batch->R);
    float *counts = slda_xmalloc(K * sizeof *counts);
    slda_err_t err = SLDA_OK;
    for (size_t x = 0; x < batch->R && err == SLDA_OK; x++) {
        const double *nt = batch->Ntheta + x * K;
        for (size_t k = 0; k < K; k++)
            counts[k] = (float)(nt[k] > 0 ? nt[k] : 0.0);
        err = slda_authors_put(a, (uint32_t)x, batch->names[x], strlen(batch->names[x]),
                               batch->rtrain[x], counts, batch->rtrain[x], batch->iter, errstr,
                               errstr_size);
    }
    free(counts);
    return err;
}
