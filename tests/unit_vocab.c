/* unit_vocab.c - vocabulary: lookup, capacity, batched eviction, pinning, fixed mode, put. */
#include "core/slda_int.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <stdio.h>
#include <string.h>

typedef struct evicted_s {
    uint32_t ids[64];
    char words[64][32];
    size_t n;
    slda_vocab_t *vocab;
} evicted_t;

/* Record each evicted id and the word it still held when the callback ran. */
static void on_evict(uint32_t id, void *opaque)
{
    evicted_t *ev = opaque;
    const char *w = slda_vocab_word(ev->vocab, id);
    if (ev->n < 64) {
        ev->ids[ev->n] = id;
        snprintf(ev->words[ev->n], sizeof ev->words[0], "%s", w ? w : "(null)");
    }
    ev->n++;
}

static uint32_t add(slda_vocab_t *vocab, const char *w, bool *added)
{
    return slda_vocab_get_or_add(vocab, w, strlen(w), added);
}

static void test_add_find(void)
{
    slda_vocab_t *vocab = slda_vocab_new(100, 42, 0);
    bool added = false;
    CHECK_NONNULL(vocab);
    CHECK_INT(add(vocab, "apple", &added), 0);
    CHECK(added);
    CHECK_INT(add(vocab, "banana", &added), 1);
    CHECK_INT(add(vocab, "apple", &added), 0);
    CHECK(!added);
    CHECK_INT(slda_vocab_find(vocab, "banana", 6), 1);
    CHECK_INT(slda_vocab_find(vocab, "cherry", 6), UINT32_MAX);
    /* A prefix of a stored word is a different word. */
    CHECK_INT(slda_vocab_find(vocab, "app", 3), UINT32_MAX);
    CHECK_STR(slda_vocab_word(vocab, 0), "apple");
    CHECK_NULL(slda_vocab_word(vocab, 2));
    CHECK_NULL(slda_vocab_word(vocab, 99999));
    CHECK_INT(slda_vocab_size(vocab), 2);
    CHECK_INT(slda_vocab_max_id(vocab), 2);
    CHECK_INT(slda_vocab_capacity(vocab), 100);
    CHECK_INT(slda_vocab_seed(vocab), 42);
    CHECK_NEAR(slda_vocab_freq(vocab, 0), 2.0, 0);
    slda_vocab_touch(vocab, 0, 0.5);
    CHECK_NEAR(slda_vocab_freq(vocab, 0), 2.5, 1e-12);
    CHECK_INT(slda_vocab_is_fixed(vocab), 0);
    slda_vocab_destroy(vocab);
    slda_vocab_destroy(NULL);
    CHECK_NULL(slda_vocab_new(0, 1, 0));
}

/* Many words through a small table: every word stays findable. */
static void test_many(void)
{
    slda_vocab_t *vocab = slda_vocab_new(5000, 7, 0);
    char w[32];
    int bad = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(w, sizeof w, "w%d", i);
        if (add(vocab, w, NULL) != (uint32_t)i)
            bad++;
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(w, sizeof w, "w%d", i);
        if (slda_vocab_find(vocab, w, strlen(w)) != (uint32_t)i)
            bad++;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(slda_vocab_size(vocab), 5000);
    CHECK_INT(slda_vocab_evictions(vocab), 0);
    slda_vocab_destroy(vocab);
}

/* Capacity 4 (batch = 1 word): the rarest unpinned word goes, the callback
 * sees it before its id is reused. */
static void test_evict_rarest(void)
{
    slda_vocab_t *vocab = slda_vocab_new(4, 1, 0);
    evicted_t ev = {.vocab = vocab};
    bool added;
    slda_vocab_set_evict_cb(vocab, on_evict, &ev);
    add(vocab, "a", NULL);
    add(vocab, "b", NULL);
    add(vocab, "c", NULL);
    add(vocab, "d", NULL);
    slda_vocab_touch(vocab, 0, 5); /* a: 6 */
    slda_vocab_touch(vocab, 1, 1); /* b: 2 */
    slda_vocab_touch(vocab, 3, 3); /* d: 4; c stays 1 */
    slda_vocab_new_epoch(vocab);
    /* the words of the previous epoch are still pinned (their minibatch's
     * global update may be pending, train.c): nothing can be evicted */
    uint32_t id = add(vocab, "e", &added);
    CHECK(!added);
    CHECK_INT(id, UINT32_MAX);
    CHECK_INT(ev.n, 0);
    slda_vocab_new_epoch(vocab);
    id = add(vocab, "e", &added);
    CHECK(added);
    CHECK_INT(ev.n, 1);
    CHECK_INT(ev.ids[0], 2);
    CHECK_STR(ev.words[0], "c");
    CHECK_INT(id, 2);
    CHECK_STR(slda_vocab_word(vocab, 2), "e");
    CHECK_INT(slda_vocab_find(vocab, "c", 1), UINT32_MAX);
    CHECK_INT(slda_vocab_find(vocab, "a", 1), 0);
    CHECK_INT(slda_vocab_find(vocab, "b", 1), 1);
    CHECK_INT(slda_vocab_find(vocab, "d", 1), 3);
    CHECK_INT(slda_vocab_evictions(vocab), 1);
    CHECK_INT(slda_vocab_size(vocab), 4);
    CHECK_NEAR(slda_vocab_freq(vocab, 2), 1.0, 0);
    slda_vocab_destroy(vocab);
}

/* Words returned in this epoch or the previous one are pinned even when they are rarest. */
static void test_pinning(void)
{
    slda_vocab_t *vocab = slda_vocab_new(3, 1, 0);
    evicted_t ev = {.vocab = vocab};
    slda_vocab_set_evict_cb(vocab, on_evict, &ev);
    add(vocab, "x", NULL);
    add(vocab, "y", NULL);
    add(vocab, "z", NULL);
    slda_vocab_touch(vocab, 0, 10);
    slda_vocab_touch(vocab, 1, 10);
    slda_vocab_new_epoch(vocab); /* x, y, z still pinned: the previous epoch */
    slda_vocab_new_epoch(vocab);
    add(vocab, "z", NULL); /* z (rarest) is pinned now */
    add(vocab, "w", NULL);
    CHECK_INT(ev.n, 1);
    CHECK_STR(ev.words[0], "x"); /* x and y tie at 11; lower id first */
    CHECK_INT(slda_vocab_find(vocab, "z", 1), 2);
    /* Everything is pinned now (y was not, so it goes next). */
    add(vocab, "z", NULL);
    add(vocab, "w", NULL);
    uint32_t v = add(vocab, "v", NULL);
    CHECK_INT(ev.n, 2);
    CHECK_STR(ev.words[1], "y");
    CHECK_NE(v, UINT32_MAX);
    /* z, w, v all pinned: no room for u. */
    CHECK_INT(add(vocab, "u", NULL), UINT32_MAX);
    CHECK_INT(ev.n, 2);
    CHECK_INT(slda_vocab_find(vocab, "u", 1), UINT32_MAX);
    slda_vocab_new_epoch(vocab); /* z, w, v were used in the previous epoch: still pinned */
    CHECK_INT(add(vocab, "u", NULL), UINT32_MAX);
    CHECK_INT(ev.n, 2);
    slda_vocab_new_epoch(vocab);
    CHECK_NE(add(vocab, "u", NULL), UINT32_MAX);
    CHECK_INT(ev.n, 3);
    slda_vocab_destroy(vocab);
}

/* Capacity 1000: one eviction pass frees 10 ids (1%), the 10 rarest. */
static void test_evict_batch(void)
{
    slda_vocab_t *vocab = slda_vocab_new(1000, 3, 0);
    evicted_t ev = {.vocab = vocab};
    char w[32];
    int wrong = 0;
    slda_vocab_set_evict_cb(vocab, on_evict, &ev);
    for (int i = 0; i < 1000; i++) {
        snprintf(w, sizeof w, "word%d", i);
        uint32_t id = add(vocab, w, NULL);
        /* Frequency rises with i except for ten rare words at 500..509. */
        slda_vocab_touch(vocab, id, (i >= 500 && i < 510) ? 0 : (double)i + 1);
    }
    slda_vocab_new_epoch(vocab);
    slda_vocab_new_epoch(vocab);
    for (int i = 0; i < 11; i++) {
        snprintf(w, sizeof w, "new%d", i);
        add(vocab, w, NULL);
    }
    CHECK_INT(ev.n, 20); /* 11 new words: two passes of 10 */
    for (size_t i = 0; i < 10; i++) {
        if (ev.ids[i] < 500 || ev.ids[i] >= 510)
            wrong++;
    }
    CHECK_INT(wrong, 0);
    CHECK_INT(slda_vocab_evictions(vocab), 20);
    CHECK_INT(slda_vocab_size(vocab), 991);
    /* The second pass took the next-rarest: ids 0..9 (freq 2..11). */
    wrong = 0;
    for (size_t i = 10; i < 20; i++) {
        if (ev.ids[i] >= 10)
            wrong++;
    }
    CHECK_INT(wrong, 0);
    for (int i = 0; i < 11; i++) {
        snprintf(w, sizeof w, "new%d", i);
        if (slda_vocab_find(vocab, w, strlen(w)) == UINT32_MAX)
            wrong++;
    }
    CHECK_INT(wrong, 0);
    slda_vocab_destroy(vocab);
}

static void test_fixed(void)
{
    slda_vocab_t *vocab = slda_vocab_new(10, 9, 1);
    char err[256] = "";
    CHECK_INT(slda_vocab_put(vocab, 0, "alpha", 5, 0, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_vocab_put(vocab, 1, "beta", 4, 3, err, sizeof err), SLDA_OK);
    CHECK_INT(add(vocab, "gamma", NULL), UINT32_MAX);
    CHECK_INT(slda_vocab_size(vocab), 2);
    CHECK_INT(add(vocab, "beta", NULL), 1);
    CHECK_NEAR(slda_vocab_freq(vocab, 1), 4.0, 0);
    CHECK_INT(slda_vocab_is_fixed(vocab), 1);
    slda_vocab_destroy(vocab);
}

static void test_put(void)
{
    slda_vocab_t *vocab = slda_vocab_new(10, 9, 0);
    char err[256] = "";
    CHECK_INT(slda_vocab_put(vocab, 5, "five", 4, 2.0, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_vocab_put(vocab, 2, "two", 3, 1.0, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_vocab_max_id(vocab), 6);
    CHECK_INT(slda_vocab_size(vocab), 2);
    CHECK_NEAR(slda_vocab_freq(vocab, 5), 2.0, 0);
    CHECK_INT(slda_vocab_put(vocab, 10, "ten", 3, 0, err, sizeof err), SLDA_ERR_RANGE);
    CHECK_CONTAINS(err, "out of range");
    CHECK_INT(slda_vocab_put(vocab, 5, "other", 5, 0, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "already holds \"five\"");
    CHECK_INT(slda_vocab_put(vocab, 7, "two", 3, 0, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "duplicate");
    /* Free ids below max_id (0, 1, 3, 4) are used before new ones. */
    uint32_t got[4], seen = 0;
    got[0] = add(vocab, "p", NULL);
    got[1] = add(vocab, "q", NULL);
    got[2] = add(vocab, "r", NULL);
    got[3] = add(vocab, "s", NULL);
    for (int i = 0; i < 4; i++) {
        if (got[i] < 32)
            seen |= 1u << got[i];
    }
    CHECK_INT(seen, (1u << 0) | (1u << 1) | (1u << 3) | (1u << 4));
    CHECK_INT(slda_vocab_max_id(vocab), 6);
    CHECK_INT(add(vocab, "t", NULL), 6);
    CHECK_INT(slda_vocab_max_id(vocab), 7);
    CHECK_INT(slda_vocab_size(vocab), 7);
    slda_vocab_destroy(vocab);
}

/* Keys name words, not ids: after an eviction hands a word's id to another
 * word, the old key finds nothing and the new word's key finds the id. */
static void test_keys(void)
{
    slda_vocab_t *vocab = slda_vocab_new(16, 99, 0);
    bool added;
    uint32_t rare = add(vocab, "rare", &added);
    uint64_t key = slda_vocab_key(vocab, rare);
    CHECK_NE(key, 0);
    CHECK_INT(key, slda_hash64("rare", 4, 99));
    CHECK_INT(slda_vocab_find_key(vocab, key), rare);
    for (int i = 0; i < 15; i++) { /* fill it up: "rare" is the rarest */
        char w[16];
        snprintf(w, sizeof w, "common%d", i);
        add(vocab, w, &added);
        slda_vocab_touch(vocab, slda_vocab_find(vocab, w, strlen(w)), 5);
    }
    slda_vocab_new_epoch(vocab);
    slda_vocab_new_epoch(vocab);
    uint32_t fresh = add(vocab, "fresh", &added); /* evicts "rare", reuses its id */
    CHECK(added);
    CHECK_INT(fresh, rare);
    CHECK_INT(slda_vocab_find_key(vocab, key), UINT32_MAX);
    CHECK_INT(slda_vocab_find_key(vocab, slda_vocab_key(vocab, fresh)), fresh);
    CHECK_INT(slda_vocab_key(vocab, 1000), 0); /* out of range: no key */
    slda_vocab_destroy(vocab);
}

/* A full vocabulary whose words are all pinned (one epoch: a corpus read
 * before any training) refuses new words and counts them; two epochs later
 * it can evict again. */
static void test_refused_when_all_pinned(void)
{
    slda_vocab_t *vocab = slda_vocab_new(16, 5, 0);
    bool added;
    char w[16];
    for (int i = 0; i < 16; i++) {
        snprintf(w, sizeof w, "pinned%d", i);
        CHECK_NE(add(vocab, w, &added), UINT32_MAX);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(w, sizeof w, "late%d", i);
        CHECK_INT(add(vocab, w, &added), UINT32_MAX);
        CHECK(!added);
    }
    CHECK_INT(slda_vocab_refused(vocab), 5);
    CHECK_INT(slda_vocab_evictions(vocab), 0);
    CHECK_NE(add(vocab, "pinned3", &added), UINT32_MAX); /* known words still resolve */
    slda_vocab_new_epoch(vocab); /* still pinned: used in the previous epoch */
    CHECK_INT(add(vocab, "late0", &added), UINT32_MAX);
    CHECK_INT(slda_vocab_refused(vocab), 6);
    slda_vocab_new_epoch(vocab);
    CHECK_NE(add(vocab, "late0", &added), UINT32_MAX);
    CHECK(added);
    CHECK_INT(slda_vocab_evictions(vocab), 1);
    CHECK_INT(slda_vocab_refused(vocab), 6);
    slda_vocab_destroy(vocab);
}

int main(void)
{
    test_add_find();
    test_many();
    test_evict_rarest();
    test_pinning();
    test_evict_batch();
    test_fixed();
    test_put();
    test_keys();
    test_refused_when_all_pinned();
    return slda_test_done("unit_vocab");
}
