/* replay.h - documents kept for their second visit (replay.docs; replay.c). */
#ifndef SLDA_REPLAY_H
#define SLDA_REPLAY_H

#include "model.h"

/* Keep the trained documents of docs (those with tokens) as one stored
 * minibatch, by word key. Creates model->replay on first use. */
void slda_replay_push(slda_model_t *model, const slda_doc_t *docs, size_t ndocs);

/* The oldest stored minibatch when it is due for its second visit (drain:
 * the waiting documents are shuffled first, seeded by seed), in the model's
 * current word ids (words the model no longer holds are left out; documents
 * left empty are dropped), removed from the store. Returns NULL when none is due;
 * *ndocs receives its documents, which the caller frees with
 * slda_docs_clear + free. */
slda_doc_t *slda_replay_pop(slda_model_t *model, int drain, size_t *ndocs);

/* During a drain, the minibatch after the one slda_replay_pop returned last,
 * set up to be resolved ahead: returns its number of documents (0 when the
 * drain has no more, or one is set up already), each resolved by
 * slda_replay_ahead_item(i, worker, model) on any thread while the model and
 * its vocabulary are only read (train.c runs them as extra items of the
 * current minibatch's local steps, in the tail where a thread would wait).
 * Every item must have run before the next slda_replay_pop, which then pins
 * and hands out those documents instead of resolving them again. The drain's
 * vocabulary does not change between the two (no new documents are read),
 * so the documents are the ones slda_replay_pop would resolve. */
size_t slda_replay_ahead(slda_model_t *model);
void slda_replay_ahead_item(size_t i, uint32_t worker, void *opaque);

/* Documents stored. */
size_t slda_replay_stored(const slda_model_t *model);

void slda_replay_free(struct slda_replay_s *rp);

#endif
