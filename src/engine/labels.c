/* labels.c - user labels of topic slots, held by the model and stored in its snapshots.
 *
 * A label names what a slot holds ("elections", "crash of 1987"); it belongs to the slot's
 * stable id (docs/tracking.md, "Stable topic identity") and is kept as long as the slot holds
 * the same topic: the engine's birth in the slot, its retirement, and a merge that frees it
 * drop the label (births.c calls slda_labels_event), a birth in any other slot leaves it.
 * Those are decisions of the global update, so every replica applying the same log drops the
 * same labels. The labels travel in the snapshot's optional header key "labels"
 * (io/snapshot_header.c). A label is 1..SLDA_LABEL_MAX bytes of UTF-8 without control
 * characters (it is shown on pages and in JSON); setting an empty one removes it. The model's
 * thread only.
 */
#include "engine/model_priv.h"
#include "engine/labels.h"
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

slda_err_t slda_label_check(const char *text, char *errstr, size_t errstr_size)
{
    size_t len = text ? strlen(text) : 0;
    if (len > SLDA_LABEL_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE, "label: %zu bytes, at most %d",
                            len, SLDA_LABEL_MAX);
    slda_err_t err = slda_utf8_check(text ? text : "", len, "label", errstr, errstr_size);
    if (err)
        return err;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "label: a control character at byte %zu", i);
    return SLDA_OK;
}

slda_err_t slda_model_set_label(slda_model_t *model, uint32_t k, const char *text,
                                char *errstr, size_t errstr_size)
{
    if (k >= model->K)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "label: topic %u out of range (the model has %u topics: 0..%u)", k,
                            model->K, model->K - 1);
    size_t len = text ? strlen(text) : 0;
    slda_err_t err = slda_label_check(text, errstr, errstr_size);
    if (err)
        return err;
    if (!model->labels)
        model->labels = slda_xcalloc(model->K, sizeof *model->labels);
    free(model->labels[k]);
    model->labels[k] = len ? slda_xstrdup(text) : NULL;
    return SLDA_OK;
}

const char *slda_model_label(const slda_model_t *model, uint32_t k)
{
    return model->labels && k < model->K ? model->labels[k] : NULL;
}

size_t slda_model_label_count(const slda_model_t *model)
{
    size_t n = 0;
    for (uint32_t k = 0; model->labels && k < model->K; k++)
        n += model->labels[k] != NULL;
    return n;
}

void slda_labels_event(slda_model_t *model, slda_event_kind_t kind, uint32_t topic)
{
    (void)kind; /* birth, death and merge each free or re-seed `topic` */
    if (model->labels && topic < model->K) {
        free(model->labels[topic]);
        model->labels[topic] = NULL;
    }
}

void slda_labels_free(slda_model_t *model)
{
    for (uint32_t k = 0; model->labels && k < model->K; k++)
        free(model->labels[k]);
    free(model->labels);
    model->labels = NULL;
}
