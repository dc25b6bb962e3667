/* heldout.h - held-out sets kept by word key (heldout.c; the public half is in streamlda.h). */
#ifndef SLDA_HELDOUT_H
#define SLDA_HELDOUT_H

#include "core/slda_int.h"

/* Held-out document slot of held from (word key, count) pairs,
 * e.g. a bag's hashes and counts (the bag's hashes are the vocabulary's keys):
 * for replicas, whose vocabulary changes only through the update log, so a
 * held-out document cannot add to it (the service stages their pairs until
 * their input offsets commit). */
slda_err_t slda_heldout_put_keys(slda_heldout_t *held, size_t slot, const slda_model_t *model,
                                 const uint64_t *keys, const uint32_t *counts, uint32_t n,
                                 char *errstr, size_t errstr_size);
#endif /* SLDA_HELDOUT_H */
