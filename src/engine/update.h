/* update.h - update records: what only the service needs beside streamlda.h (update.c). */
#ifndef SLDA_UPDATE_H
#define SLDA_UPDATE_H

#include "text/bag.h"

/* The words of bag as a document over scratch's words (replicas,
 * whose vocabulary changes only by applying records); the model is only read. */
slda_err_t slda_update_doc_from_bag(const slda_model_t *model, slda_update_scratch_t *scratch,
                                    const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                                    size_t errstr_size);
#endif /* SLDA_UPDATE_H */
