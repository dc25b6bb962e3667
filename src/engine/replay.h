/* replay.h - documents kept for their second visit (replay.docs; replay.c). */
#ifndef SLDA_REPLAY_H
#define SLDA_REPLAY_H

#include "engine/model_priv.h"
#include "engine/local.h"

/* Keep the trained documents of docs (those with tokens) as one stored
 * minibatch, by word key. Creates model->replay on first use. */
void slda_replay_push(slda_model_t *model, const slda_doc_t *docs, size_t ndocs);

/* slda_replay_push in three steps, so the copying runs on the pool (train.c:
 * each document is copied by the thread that trains it). reserve sizes the
 * minibatch of the trained documents of docs (NULL when there is none);
 * fill copies document i (of docs) in, on any thread, while the vocabulary
 * is only read; store, on the model's thread once every document is in,
 * adds the minibatch to the store (what slda_replay_push does). */
typedef struct slda_replay_fill_s slda_replay_fill_t;
slda_replay_fill_t *slda_replay_reserve(const slda_model_t *model, const slda_doc_t *docs,
                                        size_t ndocs);
void slda_replay_fill(slda_replay_fill_t *f, const slda_model_t *model, size_t i,
                      const slda_doc_t *doc);
void slda_replay_store(slda_model_t *model, slda_replay_fill_t *f);

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

/* Outside a drain, before a first visit's local steps: when storing f (its
 * reservation, or NULL) will make the oldest stored minibatch due, that
 * minibatch is set up to be resolved ahead, as slda_replay_ahead does:
 * returns its number of documents, else 0. The items run with that call's
 * documents (the vocabulary and the rows ready do not change from there to
 * the pop after the store: the update evicts nothing, and no document is
 * read in between); the pop right after the store takes them. */
size_t slda_replay_ahead_due(slda_model_t *model, const slda_replay_fill_t *f);

/* Documents stored. */
size_t slda_replay_stored(const slda_model_t *model);

/* Minibatches slda_replay_pop has handed out as resolved ahead (either way). */
uint64_t slda_replay_popped_ahead(const slda_model_t *model);

void slda_replay_free(struct slda_replay_s *rp);

#endif
