/* update.h - update records: what only the service needs beside streamlda.h (update.c). */
#ifndef SLDA_UPDATE_H
#define SLDA_UPDATE_H

#include "text/bag.h"

/* The words of bag as a document over scratch's words (replicas,
 * whose vocabulary changes only by applying records); the model is only read. */
slda_err_t slda_update_doc_from_bag(const slda_model_t *model, slda_update_scratch_t *scratch,
                                    const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                                    size_t errstr_size);
/* User labels through the update log (update_labels.c), so that every replica of a model sets
 * them in log order: a record of labels only, made against the model as it is (its base);
 * slda_update_add_label checks the slot and the text as slda_model_set_label does (""
 * removes a label). slda_update_labels returns the record's count, and label i's slot and
 * text when i is below it. */
slda_update_t *slda_update_new_labels(const slda_model_t *model);
slda_err_t slda_update_add_label(slda_update_t *upd, uint32_t k, const char *text, char *errstr,
                                 size_t errstr_size);
uint32_t slda_update_labels(const slda_update_t *upd, uint32_t i, uint32_t *k,
                            const char **text);
#endif /* SLDA_UPDATE_H */
