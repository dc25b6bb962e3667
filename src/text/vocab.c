/* vocab.c - word ids keyed by XXH3, bounded, with batched eviction of rare words.
 *
 * Invariants. Ids are 0..capacity-1. An id is in use iff words[id] != NULL;
 * max_id is 1 + the highest id ever used, and every id below it that is not in
 * use is free. The lookup table is open addressing with linear probing over
 * a power-of-two number of slots (at least twice the capacity, so the load
 * stays <= 1/2); a slot holds an id in use or EMPTY, and deletion shifts the
 * following run back instead of leaving tombstones, so lookups never degrade.
 * The key of a slot is hashes[id] = XXH3-64(word, seed); a hash hit is
 * confirmed by comparing the stored word.
 *
 * Free ids live on a stack; onfree[id] says an id is on it. An id can be
 * taken off the free list by slda_vocab_put while its stack entry stays: pop
 * skips entries whose id is in use again, and onfree keeps each id on the
 * stack at most once, so the stack never holds more than capacity entries.
 *
 * Eviction (open mode, no free id left): one O(W) pass collects the unpinned
 * ids, a quickselect finds the lowest-frequency 1% of them (at least one),
 * and they are released together onto the free list after the evict callback
 * ran for each. So a full vocabulary pays O(W) once per W/100 new words:
 * amortised O(1)-ish per insert. A word is pinned while stamp[id] >= epoch - 1,
 * i.e. it was returned by get_or_add in this epoch or the one before (an
 * epoch is a minibatch: the model calls slda_vocab_new_epoch after each); its
 * id therefore stays valid for the documents of the current minibatch and for
 * the previous one, whose global update may still be pending (train.c). When
 * every word is pinned (a full vocabulary within one epoch, e.g. a whole
 * corpus read before training), new words are refused and counted, and the
 * rest of that epoch refuses them at once instead of rescanning all W.
 *
 * Keys: hashes[id] doubles as the word's key (slda_vocab_key). Held-out
 * documents keep keys rather than ids, because an id is reused for another
 * word after an eviction while a key never changes its word.
 *
 * Threads: a vocabulary belongs to one thread (the one building documents).
 */
#include "text/vocab.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX
/* Evict this fraction of the capacity at once: small enough not to throw away
 * useful words, large enough to make the O(W) selection pass rare. */
#define EVICT_FRACTION 100

typedef struct evict_cand_s {
    double freq;
    uint32_t id;
} evict_cand_t;

struct slda_vocab_s {
    uint32_t capacity;
    uint64_t seed;
    int fixed;
    uint32_t used;          /* ids in use */
    uint32_t max_id;        /* 1 + highest id ever used */
    char **words;           /* capacity; NULL = free */
    uint32_t *lens;         /* capacity */
    uint64_t *hashes;       /* capacity */
    double *freq;           /* capacity */
    uint64_t *stamp;        /* capacity: epoch of the last get_or_add */
    uint64_t epoch;
    uint32_t *slots;        /* nslots: id or EMPTY */
    size_t mask;            /* nslots - 1 */
    uint32_t *freelist;     /* stack of free ids */
    uint32_t nfree;
    uint8_t *onfree;        /* capacity */
    evict_cand_t *cand;     /* capacity, scratch for eviction */
    slda_evict_cb evict_cb;
    void *evict_opaque;
    uint64_t evictions;
    uint64_t refused;       /* new words refused: full and every word pinned */
    uint64_t full_epoch;    /* epoch in which eviction found every word pinned, or 0 */
};

slda_vocab_t *slda_vocab_new(uint32_t capacity, uint64_t seed, int fixed)
{
    size_t nslots = 16;
    if (capacity == 0)
        return NULL;
    while (nslots < (size_t)capacity * 2)
        nslots <<= 1;
    slda_vocab_t *vocab = calloc(1, sizeof *vocab);
    if (!vocab)
        return NULL;
    vocab->capacity = capacity;
    vocab->seed = seed;
    vocab->fixed = fixed;
    vocab->epoch = 1;
    vocab->mask = nslots - 1;
    vocab->words = calloc(capacity, sizeof *vocab->words);
    vocab->lens = calloc(capacity, sizeof *vocab->lens);
    vocab->hashes = calloc(capacity, sizeof *vocab->hashes);
    vocab->freq = calloc(capacity, sizeof *vocab->freq);
    vocab->stamp = calloc(capacity, sizeof *vocab->stamp);
    vocab->slots = malloc(nslots * sizeof *vocab->slots);
    vocab->freelist = malloc((size_t)capacity * sizeof *vocab->freelist);
    vocab->onfree = calloc(capacity, 1);
    if (!vocab->words || !vocab->lens || !vocab->hashes || !vocab->freq || !vocab->stamp ||
        !vocab->slots || !vocab->freelist || !vocab->onfree) {
        slda_vocab_destroy(vocab);
        return NULL;
    }
    memset(vocab->slots, 0xff, nslots * sizeof *vocab->slots);
    return vocab;
}

void slda_vocab_destroy(slda_vocab_t *vocab)
{
    if (!vocab)
        return;
    if (vocab->words) {
        for (uint32_t id = 0; id < vocab->max_id; id++)
            free(vocab->words[id]);
    }
    free(vocab->words);
    free(vocab->lens);
    free(vocab->hashes);
    free(vocab->freq);
    free(vocab->stamp);
    free(vocab->slots);
    free(vocab->freelist);
    free(vocab->onfree);
    free(vocab->cand);
    free(vocab);
}

void slda_vocab_set_evict_cb(slda_vocab_t *vocab, slda_evict_cb cb, void *opaque)
{
    vocab->evict_cb = cb;
    vocab->evict_opaque = opaque;
}

/* Slot holding word (hash h), or the empty slot where it would go. */
static size_t find_slot(const slda_vocab_t *vocab, const char *word, size_t len, uint64_t h)
{
    size_t i = (size_t)h & vocab->mask;
    for (;;) {
        uint32_t id = vocab->slots[i];
        if (id == EMPTY)
            return i;
        if (vocab->hashes[id] == h && vocab->lens[id] == len &&
            memcmp(vocab->words[id], word, len) == 0)
            return i;
        i = (i + 1) & vocab->mask;
    }
}

/* Remove the slot of id, shifting the rest of its probe run back. */
static void table_remove(slda_vocab_t *vocab, uint32_t id)
{
    size_t mask = vocab->mask;
    size_t i = (size_t)vocab->hashes[id] & mask;
    while (vocab->slots[i] != id)
        i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; vocab->slots[j] != EMPTY; j = (j + 1) & mask) {
        size_t home = (size_t)vocab->hashes[vocab->slots[j]] & mask;
        /* The entry at j may move to i when i lies cyclically within [home, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            vocab->slots[i] = vocab->slots[j];
            i = j;
        }
    }
    vocab->slots[i] = EMPTY;
}

static void push_free(slda_vocab_t *vocab, uint32_t id)
{
    if (vocab->onfree[id])
        return;
    vocab->onfree[id] = 1;
    vocab->freelist[vocab->nfree++] = id;
}

/* A free id, or EMPTY. Skips stale entries whose id was reused by put. */
static uint32_t pop_free(slda_vocab_t *vocab)
{
    while (vocab->nfree > 0) {
        uint32_t id = vocab->freelist[--vocab->nfree];
        vocab->onfree[id] = 0;
        if (!vocab->words[id])
            return id;
    }
    if (vocab->max_id < vocab->capacity)
        return vocab->max_id;
    return EMPTY;
}

/* Store word at the free id, in the table slot found for it. */
static void install(slda_vocab_t *vocab, uint32_t id, size_t slot, const char *word,
                    size_t len, uint64_t h, double freq)
{
    vocab->words[id] = slda_xstrndup(word, len);
    vocab->lens[id] = (uint32_t)len;
    vocab->hashes[id] = h;
    vocab->freq[id] = freq;
    vocab->stamp[id] = 0;
    vocab->slots[slot] = id;
    vocab->used++;
    if (id >= vocab->max_id) {
        for (uint32_t gap = vocab->max_id; gap < id; gap++)
            push_free(vocab, gap);
        vocab->max_id = id + 1;
    }
}

static void release(slda_vocab_t *vocab, uint32_t id)
{
    if (vocab->evict_cb)
        vocab->evict_cb(id, vocab->evict_opaque);
    table_remove(vocab, id);
    free(vocab->words[id]);
    vocab->words[id] = NULL;
    vocab->lens[id] = 0;
    vocab->freq[id] = 0.0;
    vocab->stamp[id] = 0;
    vocab->used--;
    vocab->evictions++;
    push_free(vocab, id);
}

static int cand_less(const evict_cand_t *a, const evict_cand_t *b)
{
    /* Ties broken by id (ids are unique): a strict total order, so the
     * selection is deterministic for a given table state. */
    return a->freq < b->freq || (a->freq == b->freq && a->id < b->id);
}

static void cand_swap(evict_cand_t *cand, size_t i, size_t j)
{
    evict_cand_t t = cand[i];
    cand[i] = cand[j];
    cand[j] = t;
}

/* Quickselect (Lomuto partition, middle pivot): afterwards cand[0..k-1]
 * hold the k lowest entries, in no particular order. 1 <= k <= n. */
static void select_lowest(evict_cand_t *cand, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, target = k - 1;
    while (lo < hi) {
        size_t store = lo;
        cand_swap(cand, lo + (hi - lo) / 2, hi);
        for (size_t i = lo; i < hi; i++) {
            if (cand_less(&cand[i], &cand[hi]))
                cand_swap(cand, i, store++);
        }
        cand_swap(cand, store, hi);
        if (store == target)
            return;
        if (store < target)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* Evict the rarest ~1% of the unpinned words; 0 if every word is pinned. */
static int evict_batch(slda_vocab_t *vocab)
{
    size_t n = 0, k;
    if (!vocab->cand)
        vocab->cand = slda_xmalloc((size_t)vocab->capacity * sizeof *vocab->cand);
    for (uint32_t id = 0; id < vocab->max_id; id++) {
        if (vocab->words[id] && vocab->stamp[id] + 1 < vocab->epoch) {
            vocab->cand[n].freq = vocab->freq[id];
            vocab->cand[n].id = id;
            n++;
        }
    }
    if (n == 0)
        return 0;
    k = vocab->capacity / EVICT_FRACTION;
    if (k == 0)
        k = 1;
    if (k > n)
        k = n;
    select_lowest(vocab->cand, n, k);
    for (size_t i = 0; i < k; i++)
        release(vocab, vocab->cand[i].id);
    return 1;
}

uint32_t slda_vocab_find_hashed(const slda_vocab_t *vocab, const char *word, size_t len,
                                uint64_t hash)
{
    return vocab->slots[find_slot(vocab, word, len, hash)];
}

uint32_t slda_vocab_find(const slda_vocab_t *vocab, const char *word, size_t len)
{
    return slda_vocab_find_hashed(vocab, word, len, slda_hash64(word, len, vocab->seed));
}

static void mark(slda_vocab_t *vocab, uint32_t id, uint32_t count)
{
    vocab->freq[id] += count;
    vocab->stamp[id] = vocab->epoch;
}

void slda_vocab_use(slda_vocab_t *vocab, uint32_t id, uint32_t count)
{
    mark(vocab, id, count);
}

static uint32_t get_or_add(slda_vocab_t *vocab, const char *word, size_t len, uint64_t h,
                           uint32_t count, bool *added);

uint32_t slda_vocab_get_or_add(slda_vocab_t *vocab, const char *word, size_t len, bool *added)
{
    return get_or_add(vocab, word, len, slda_hash64(word, len, vocab->seed), 1, added);
}

uint32_t slda_vocab_get_or_add_n(slda_vocab_t *vocab, const char *word, size_t len,
                                 uint64_t hash, uint32_t count)
{
    return get_or_add(vocab, word, len, hash, count, NULL);
}

static uint32_t get_or_add(slda_vocab_t *vocab, const char *word, size_t len, uint64_t h,
                           uint32_t count, bool *added)
{
    size_t slot = find_slot(vocab, word, len, h);
    uint32_t id = vocab->slots[slot];
    if (added)
        *added = false;
    if (id != EMPTY) {
        mark(vocab, id, count);
        return id;
    }
    if (vocab->fixed || len > UINT32_MAX)
        return UINT32_MAX;
    id = pop_free(vocab);
    if (id == EMPTY) {
        if (vocab->full_epoch == vocab->epoch || !evict_batch(vocab)) {
            vocab->full_epoch = vocab->epoch;
            vocab->refused += count;
            return UINT32_MAX;
        }
        id = pop_free(vocab);
        /* Eviction moved entries in the table: look the slot up again. */
        slot = find_slot(vocab, word, len, h);
    }
    install(vocab, id, slot, word, len, h, 0.0);
    mark(vocab, id, count);
    if (added)
        *added = true;
    return id;
}

slda_err_t slda_vocab_put(slda_vocab_t *vocab, uint32_t id, const char *word, size_t len,
                          double freq, char *errstr, size_t errstr_size)
{
    uint64_t h;
    size_t slot;
    if (id >= vocab->capacity)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "vocabulary id %u: out of range 0..%u", id, vocab->capacity - 1);
    if (len == 0 || len > UINT32_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "vocabulary id %u: empty or oversized word", id);
    if (vocab->words[id])
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "vocabulary id %u: already holds \"%s\"", id, vocab->words[id]);
    h = slda_hash64(word, len, vocab->seed);
    slot = find_slot(vocab, word, len, h);
    if (vocab->slots[slot] != EMPTY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "vocabulary word \"%.*s\": duplicate (ids %u and %u)",
                            len > 200 ? 200 : (int)len, word, vocab->slots[slot], id);
    install(vocab, id, slot, word, len, h, freq);
    return SLDA_OK;
}

const char *slda_vocab_word(const slda_vocab_t *vocab, uint32_t id)
{
    return id < vocab->max_id ? vocab->words[id] : NULL;
}

uint32_t slda_vocab_size(const slda_vocab_t *vocab)
{
    return vocab->used;
}

uint32_t slda_vocab_capacity(const slda_vocab_t *vocab)
{
    return vocab->capacity;
}

uint32_t slda_vocab_max_id(const slda_vocab_t *vocab)
{
    return vocab->max_id;
}

int slda_vocab_is_fixed(const slda_vocab_t *vocab)
{
    return vocab->fixed;
}

uint64_t slda_vocab_seed(const slda_vocab_t *vocab)
{
    return vocab->seed;
}

void slda_vocab_touch(slda_vocab_t *vocab, uint32_t id, double weight)
{
    if (id < vocab->max_id && vocab->words[id])
        vocab->freq[id] += weight;
}

double slda_vocab_freq(const slda_vocab_t *vocab, uint32_t id)
{
    return id < vocab->max_id && vocab->words[id] ? vocab->freq[id] : 0.0;
}

void slda_vocab_pin(slda_vocab_t *vocab, uint32_t id)
{
    if (id < vocab->max_id && vocab->words[id])
        vocab->stamp[id] = vocab->epoch;
}

void slda_vocab_new_epoch(slda_vocab_t *vocab)
{
    vocab->epoch++;
}

uint64_t slda_vocab_evictions(const slda_vocab_t *vocab)
{
    return vocab->evictions;
}

uint64_t slda_vocab_refused(const slda_vocab_t *vocab)
{
    return vocab->refused;
}

uint64_t slda_vocab_key(const slda_vocab_t *vocab, uint32_t id)
{
    return id < vocab->max_id && vocab->words[id] ? vocab->hashes[id] : 0;
}

/* Probes the run of key's home slot like find_slot, comparing keys only:
 * two held words with the same 64-bit key would have to collide in XXH3-64
 * (about n^2 / 2^65 for n words: 5e-10 at 131,072). The first match wins. */
uint32_t slda_vocab_find_key(const slda_vocab_t *vocab, uint64_t key)
{
    for (size_t i = (size_t)key & vocab->mask;; i = (i + 1) & vocab->mask) {
        uint32_t id = vocab->slots[i];
        if (id == EMPTY || vocab->hashes[id] == key)
            return id;
    }
}
