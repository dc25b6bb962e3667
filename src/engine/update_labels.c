/* update_labels.c - user labels as update records, so that every replica sets them in log order.
 *
 * A label posted to one replica (POST /api/labels) must name the same slot on every replica
 * and survive in whichever replica writes the snapshots. Replicas change only by applying
 * the update log (docs/replication.md), so the label travels there: a record of labels only
 * (no document, no token; update_codec.c writes it as format version 3 with a "labels" key),
 * published in the replica's transaction like a minibatch's record. Applying it sets the
 * labels on the model (labels.c) and moves nothing else: not the statistics, not the update
 * count, so a label never changes what a replica learns. A label names the slot as it is when
 * the record is applied: a birth in that slot between the post and the record coming back
 * (within one transaction interval) would give the new topic the label.
 */
#include "engine/update_priv.h"
#include "engine/labels.h"
#include "engine/model_priv.h"

#include <stdlib.h>
#include <string.h>

slda_update_t *slda_update_new_labels(const slda_model_t *model)
{
    slda_update_t *upd = slda_xcalloc(1, sizeof *upd);
    upd->K = model->K;
    upd->base = model->t;
    return upd;
}

slda_err_t slda_update_add_label(slda_update_t *upd, uint32_t k, const char *text, char *errstr,
                                 size_t errstr_size)
{
    if (k >= upd->K)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "label: topic %u, the model has %u", k, upd->K);
    slda_err_t err = slda_label_check(text, errstr, errstr_size);
    if (err)
        return err;
    upd->label_slot = slda_xrealloc(upd->label_slot, (upd->nlabels + 1) * sizeof *upd->label_slot);
    upd->label_text = slda_xrealloc(upd->label_text, (upd->nlabels + 1) * sizeof *upd->label_text);
    upd->label_slot[upd->nlabels] = k;
    upd->label_text[upd->nlabels++] = slda_xstrdup(text);
    return SLDA_OK;
}

uint32_t slda_update_labels(const slda_update_t *upd, uint32_t i, uint32_t *k, const char **text)
{
    if (i < upd->nlabels) {
        *k = upd->label_slot[i];
        *text = upd->label_text[i];
    }
    return upd->nlabels;
}

int upd_labels_only(const slda_update_t *upd)
{
    return upd->nlabels && !upd->ndocs && !upd->ntokens && !upd->nwords;
}

slda_err_t upd_apply_labels(slda_model_t *model, const slda_update_t *upd, char *errstr,
                            size_t errstr_size)
{
    for (uint32_t i = 0; i < upd->nlabels; i++) {
        slda_err_t err = slda_model_set_label(model, upd->label_slot[i], upd->label_text[i],
                                              errstr, errstr_size);
        if (err)
            return err;
    }
    return SLDA_OK;
}
