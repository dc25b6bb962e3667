/* labels.h - the engine's side of topic labels (labels.c; the public calls are in streamlda.h). */
#ifndef SLDA_LABELS_H
#define SLDA_LABELS_H

#include "engine/model.h"

/* The rules of a label's text (1..SLDA_LABEL_MAX bytes of UTF-8, no control character; ""
 * removes one): SLDA_OK, or the error with the reason. Any thread. */
slda_err_t slda_label_check(const char *text, char *errstr, size_t errstr_size);
/* The number of topics with a label. */
size_t slda_model_label_count(const slda_model_t *model);
/* births.c: the slot `topic` was re-seeded (birth), retired (death) or freed by a merge: its
 * label no longer names what it holds and is dropped. */
void slda_labels_event(slda_model_t *model, slda_event_kind_t kind, uint32_t topic);
/* model_new.c's slda_model_destroy. */
void slda_labels_free(slda_model_t *model);

#endif /* SLDA_LABELS_H */
