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

/* Documents stored. */
size_t slda_replay_stored(const slda_model_t *model);

void slda_replay_free(struct slda_replay_s *rp);

#endif
