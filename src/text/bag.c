/* bag.c - a text's tokens as a bag of distinct words, so tokenising can run on any thread.
 *
 * Why: turning text into a document has two halves. Tokenising (UTF-8
 * checks, cleanup rules, lower-casing, stop words) depends only on the text
 * and the tokenizer, which is read-only; looking words up in the vocabulary
 * gives ids in first-come order, may evict and must run on the one thread
 * that owns the vocabulary, in document order. slda_bag_tokenize does the
 * first half on any thread: the distinct words in the order of their first
 * occurrence, each with its count and its vocabulary hash (XXH3 with the
 * vocabulary's seed). slda_doc_from_bag does the second: one lookup per
 * distinct word, in that order, adding count occurrences. That is the
 * document, the ids and the vocabulary state (frequencies, pins, evictions,
 * refusals) a lookup per token gave: a later occurrence of a word is only
 * ever a lookup of an id already pinned in this epoch, and eviction only
 * looks at words not pinned. slda_doc_from_text goes through a bag too, so
 * every text path (files, standard input, Kafka) makes the same documents.
 * A token list (JSON or MessagePack "tokens") goes into a bag the same way
 * (slda_bag_tokens: each token normalised, none split).
 *
 * Hints. Where nothing changes the vocabulary while the bags are made (the
 * service's decoding, standard input's batches), slda_bag_hint finds each
 * word's id on the worker too. slda_doc_from_bag then only counts and pins a
 * word found (slda_vocab_use) instead of searching for it, as long as the
 * vocabulary's eviction count is the one the hints saw: only an eviction
 * gives an id to another word (adding a word does not move the others, and a
 * word missing then is searched for now, so one added since is found). So
 * the ids, frequencies and pins are those of searching every word, and the
 * search (hashing a probe run, comparing strings) leaves the thread every
 * other one waits for. When every word is found and the caller passes the
 * document (the service's decoding), slda_bag_hint also adds the words to it
 * and sorts them there; slda_doc_from_bag then only counts and pins them, or,
 * after an eviction, empties the document and searches as without hints.
 */
#include "text/bag.h"

#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT UINT32_MAX

slda_bag_t *slda_bag_new(void)
{
    return slda_xcalloc(1, sizeof(slda_bag_t));
}

void slda_bag_free(slda_bag_t *bag)
{
    if (!bag)
        return;
    free(bag->arena);
    free(bag->off);
    free(bag->len);
    free(bag->count);
    free(bag->hash);
    free(bag->table);
    free(bag->hint);
    free(bag);
}

void slda_bag_clear(slda_bag_t *bag, uint64_t seed)
{
    bag->alen = 0;
    bag->n = 0;
    bag->ntokens = 0;
    bag->lang[0] = '\0';
    bag->capped = 0;
    bag->seed = seed;
    bag->hinted = 0;
    bag->built = 0;
    if (bag->table)
        memset(bag->table, 0xff, (size_t)bag->tcap * sizeof *bag->table);
}

/* Double the lookup table (a power of two, at least twice the distinct words). */
static void table_grow(slda_bag_t *bag)
{
    uint32_t cap = bag->tcap ? bag->tcap * 2 : 64;
    free(bag->table);
    bag->table = slda_xmalloc((size_t)cap * sizeof *bag->table);
    memset(bag->table, 0xff, (size_t)cap * sizeof *bag->table);
    bag->tcap = cap;
    for (uint32_t i = 0; i < bag->n; i++) {
        uint32_t s = (uint32_t)bag->hash[i] & (cap - 1);
        while (bag->table[s] != EMPTY_SLOT)
            s = (s + 1) & (cap - 1);
        bag->table[s] = i;
    }
}

static void add_word(const char *word, size_t len, void *opaque);

void slda_bag_add(slda_bag_t *bag, const char *word, size_t len)
{
    add_word(word, len, bag);
}

static void add_word(const char *word, size_t len, void *opaque)
{
    slda_bag_t *bag = opaque;
    uint64_t h = slda_hash64(word, len, bag->seed);
    bag->ntokens++;
    if (2 * (bag->n + 1) > bag->tcap)
        table_grow(bag);
    uint32_t mask = bag->tcap - 1, s = (uint32_t)h & mask;
    for (; bag->table[s] != EMPTY_SLOT; s = (s + 1) & mask) {
        uint32_t i = bag->table[s];
        if (bag->hash[i] == h && bag->len[i] == len &&
            !memcmp(bag->arena + bag->off[i], word, len)) {
            bag->count[i]++;
            return;
        }
    }
    if (bag->n == bag->cap) {
        bag->cap = bag->cap ? bag->cap * 2 : 64;
        bag->off = slda_xrealloc(bag->off, bag->cap * sizeof *bag->off);
        bag->len = slda_xrealloc(bag->len, bag->cap * sizeof *bag->len);
        bag->count = slda_xrealloc(bag->count, bag->cap * sizeof *bag->count);
        bag->hash = slda_xrealloc(bag->hash, bag->cap * sizeof *bag->hash);
    }
    if (bag->alen + len + 1 > bag->acap) {
        while (bag->alen + len + 1 > bag->acap)
            bag->acap = bag->acap ? bag->acap * 2 : 1024;
        bag->arena = slda_xrealloc(bag->arena, bag->acap);
    }
    memcpy(bag->arena + bag->alen, word, len);
    bag->arena[bag->alen + len] = '\0';
    bag->off[bag->n] = bag->alen;
    bag->len[bag->n] = (uint32_t)len;
    bag->count[bag->n] = 1;
    bag->hash[bag->n] = h;
    bag->table[s] = bag->n++;
    bag->alen += len + 1;
}

slda_err_t slda_bag_tokenize_doc(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                                 const char *text, size_t len, const char *lang, char *errstr,
                                 size_t errstr_size)
{
    slda_text_info_t info;
    slda_bag_clear(bag, seed);
    slda_err_t err = slda_tokenizer_check_size(tok, len, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    err = slda_tokenize_doc(tok, text, len, lang, &info, add_word, bag, errstr, errstr_size);
    memcpy(bag->lang, info.lang, sizeof bag->lang);
    bag->capped = info.capped;
    return err;
}

slda_err_t slda_bag_tokenize(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                             const char *text, size_t len, char *errstr, size_t errstr_size)
{
    return slda_bag_tokenize_doc(tok, seed, bag, text, len, NULL, errstr, errstr_size);
}

/* All tokens valid UTF-8 and within the size limit? */
static slda_err_t check_tokens(const slda_tokenizer_t *tok, const char *const *tokens,
                               const size_t *lens, size_t n, size_t *maxlen, char *errstr,
                               size_t errstr_size)
{
    size_t total = 0, off = 0;
    const char *why = NULL;
    *maxlen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(tokens[i]);
        if (!slda_utf8_valid(tokens[i], len, &off, &why))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_UTF8,
                                "tokens[%zu]: invalid UTF-8 at byte %zu (%s)", i, off, why);
        total += len;
        if (len > *maxlen)
            *maxlen = len;
    }
    return slda_tokenizer_check_size(tok, total, errstr, errstr_size);
}

slda_err_t slda_bag_tokens_doc(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                               const char *const *tokens, const size_t *lens, size_t n,
                               const char *lang, char *errstr, size_t errstr_size)
{
    size_t maxlen;
    slda_text_info_t info;
    slda_err_t err = check_tokens(tok, tokens, lens, n, &maxlen, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_bag_clear(bag, seed);
    slda_tokenize_list(tok, tokens, lens, n, lang, &info, add_word, bag);
    memcpy(bag->lang, info.lang, sizeof bag->lang);
    bag->capped = info.capped;
    return SLDA_OK;
}

slda_err_t slda_bag_tokens(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                           const char *const *tokens, const size_t *lens, size_t n,
                           char *errstr, size_t errstr_size)
{
    return slda_bag_tokens_doc(tok, seed, bag, tokens, lens, n, NULL, errstr, errstr_size);
}

void slda_bag_hint(const slda_vocab_t *vocab, slda_bag_t *bag, slda_doc_t *doc)
{
    if (bag->hcap < bag->n) {
        bag->hcap = bag->n;
        free(bag->hint);
        bag->hint = slda_xmalloc((size_t)bag->hcap * sizeof *bag->hint);
    }
    uint32_t found = 0;
    for (uint32_t i = 0; i < bag->n; i++) {
        uint32_t id = slda_vocab_find_hashed(vocab, bag->arena + bag->off[i], bag->len[i],
                                             bag->hash[i]);
        bag->hint[i] = id; /* UINT32_MAX (EMPTY) when the word is not there */
        found += id != UINT32_MAX;
    }
    bag->hint_evictions = slda_vocab_evictions(vocab);
    bag->hinted = 1;
    bag->built = 0;
    if (doc && found == bag->n && bag->n > 0 && doc->npairs == 0) {
        for (uint32_t i = 0; i < bag->n; i++)
            slda_doc_add(doc, bag->hint[i], bag->count[i]);
        slda_doc_finish(doc); /* the sort, off the thread that looks words up */
        bag->built = 1;
    }
}

slda_err_t slda_doc_from_bag(const slda_tokenizer_t *tok, slda_vocab_t *vocab,
                             const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                             size_t errstr_size)
{
    /* hints hold while no eviction has given an id to another word since */
    int hinted = bag->hinted && bag->hint_evictions == slda_vocab_evictions(vocab);
    memcpy(doc->lang, bag->lang, sizeof doc->lang);
    if (bag->built) { /* slda_bag_hint made doc's words */
        if (hinted && doc->npairs == bag->n) {
            for (uint32_t i = 0; i < bag->n; i++)
                slda_vocab_use(vocab, bag->hint[i], bag->count[i]);
            return SLDA_OK;
        }
        doc->npairs = 0; /* an eviction came between: search, as below */
        doc->ntokens = 0;
    }
    for (uint32_t i = 0; i < bag->n; i++) {
        uint32_t id;
        if (hinted && bag->hint[i] != UINT32_MAX) {
            id = bag->hint[i];
            slda_vocab_use(vocab, id, bag->count[i]);
        } else {
            id = slda_vocab_get_or_add_n(vocab, bag->arena + bag->off[i], bag->len[i],
                                         bag->hash[i], bag->count[i]);
            if (hinted && bag->hint_evictions != slda_vocab_evictions(vocab))
                hinted = 0; /* adding this word evicted others: search for the rest */
        }
        if (id != UINT32_MAX) /* else: the vocabulary counted the refusal */
            slda_doc_add(doc, id, bag->count[i]);
    }
    if (doc->npairs > 0) {
        slda_doc_finish(doc);
        return SLDA_OK;
    }
    slda_doc_clear(doc);
    if (bag->ntokens == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: no tokens (after the text.* cleanup rules, stop words "
                            "\"%s\" and text.min.length=%u)",
                            slda_tokenizer_stopwords(tok), slda_tokenizer_min_length(tok));
    if (slda_vocab_is_fixed(vocab))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: none of its %u tokens is in the vocabulary",
                            bag->ntokens);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                        "document: vocabulary full (%u words, all in use by the current "
                        "or the previous minibatch): its %u tokens were dropped",
                        slda_vocab_capacity(vocab), bag->ntokens);
}
