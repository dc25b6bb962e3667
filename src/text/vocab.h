/* vocab.h - word <-> id keyed by XXH3-64 of the normalised token, bounded (vocab.c). */
#ifndef SLDA_VOCAB_H
#define SLDA_VOCAB_H

#include "core/slda_int.h"

typedef struct slda_vocab_s slda_vocab_t;
/* Called when row id is evicted (so the model can drop its counts). */
typedef void (*slda_evict_cb)(uint32_t id, void *opaque);
slda_vocab_t *slda_vocab_new(uint32_t capacity, uint64_t seed, int fixed);
void slda_vocab_destroy(slda_vocab_t *vocab);
void slda_vocab_set_evict_cb(slda_vocab_t *vocab, slda_evict_cb cb, void *opaque);
/* Id of word; in open mode adds it (evicting the rarest unpinned words when
 * full). *added (may be NULL) is set when the word is new. UINT32_MAX when the
 * word is unknown in fixed mode or nothing could be evicted. */
uint32_t slda_vocab_get_or_add(slda_vocab_t *vocab, const char *word, size_t len, bool *added);
/* The same for count occurrences of a word whose XXH3 hash with the
 * vocabulary's seed is hash (bag.c): frequency += count, and a refusal
 * counts count occurrences. */
uint32_t slda_vocab_get_or_add_n(slda_vocab_t *vocab, const char *word, size_t len,
                                 uint64_t hash, uint32_t count);
uint32_t slda_vocab_find(const slda_vocab_t *vocab, const char *word, size_t len);
/* The same with the word's hash given (only reads: threads may call it while
 * nothing changes the vocabulary). */
uint32_t slda_vocab_find_hashed(const slda_vocab_t *vocab, const char *word, size_t len,
                                uint64_t hash);
/* What slda_vocab_get_or_add_n does for a word the vocabulary holds at id
 * (frequency += count, pinned): for an id found earlier, valid while
 * slda_vocab_evictions is unchanged (only an eviction gives an id another
 * word). */
void slda_vocab_use(slda_vocab_t *vocab, uint32_t id, uint32_t count);
/* Pin id for this epoch and the next, as a lookup does, without counting an
 * occurrence (replay.c: the words of a second visit, whose update may be
 * pending, train.c). */
void slda_vocab_pin(slda_vocab_t *vocab, uint32_t id);
/* Add with a given id (snapshot load / fixed vocabulary). */
slda_err_t slda_vocab_put(slda_vocab_t *vocab, uint32_t id, const char *word, size_t len,
                          double freq, char *errstr, size_t errstr_size);
const char *slda_vocab_word(const slda_vocab_t *vocab, uint32_t id); /* NULL if unused */
uint32_t slda_vocab_size(const slda_vocab_t *vocab);     /* ids in use */
uint32_t slda_vocab_capacity(const slda_vocab_t *vocab);
uint32_t slda_vocab_max_id(const slda_vocab_t *vocab);   /* 1 + highest id ever used */
int slda_vocab_is_fixed(const slda_vocab_t *vocab);
uint64_t slda_vocab_seed(const slda_vocab_t *vocab);
/* Frequency bookkeeping used for eviction (decayed document frequency). */
void slda_vocab_touch(slda_vocab_t *vocab, uint32_t id, double weight);
double slda_vocab_freq(const slda_vocab_t *vocab, uint32_t id);
/* Words touched in the current minibatch are pinned: not evicted until the
 * next slda_vocab_new_epoch. */
void slda_vocab_new_epoch(slda_vocab_t *vocab);
uint64_t slda_vocab_evictions(const slda_vocab_t *vocab);
/* New words refused because the vocabulary was full and every word pinned
 * (all returned since the last slda_vocab_new_epoch). */
uint64_t slda_vocab_refused(const slda_vocab_t *vocab);
/* The key of id's word: XXH3-64 of the word with the vocabulary's seed (0 if
 * id is unused). Keys outlive ids: an evicted id is reused for another word,
 * a key always names the same word. */
uint64_t slda_vocab_key(const slda_vocab_t *vocab, uint32_t id);
/* Id of the word whose key is key, or UINT32_MAX if it is not held. */
uint32_t slda_vocab_find_key(const slda_vocab_t *vocab, uint64_t key);

#endif /* SLDA_VOCAB_H */
