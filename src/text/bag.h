/* bag.h - a text's tokens as a bag of distinct words, made on any thread (bag.c). */
#ifndef SLDA_BAG_H
#define SLDA_BAG_H

#include "text/tokenize.h"
#include "text/vocab.h"

/* A text's distinct words in first-occurrence order, with counts and
 * vocabulary hashes. slda_bag_tokenize runs on any thread (it only reads the
 * tokenizer); slda_doc_from_bag looks the words up on the vocabulary's
 * thread. */
typedef struct slda_bag_s {
    char *arena;            /* the words, each NUL-terminated, back to back */
    size_t alen, acap;
    size_t *off;            /* n: each word's offset in arena */
    uint32_t *len, *count;  /* n */
    uint64_t *hash;         /* n: XXH3-64 with seed */
    uint32_t n, cap;
    uint32_t ntokens;       /* tokens after tokenising (sum of count) */
    char lang[SLDA_LANG_LEN]; /* the text's language (slda_text_info_t), "" unknown */
    uint32_t capped;        /* tokens dropped as longer than text.token.max */
    uint32_t *table;        /* tcap slots: index of a word, or UINT32_MAX */
    uint32_t tcap;
    uint64_t seed;
    uint32_t *hint;         /* hcap: each word's id when slda_bag_hint ran, or UINT32_MAX */
    uint32_t hcap;
    int hinted;             /* hint[] holds the ids as of hint_evictions */
    uint64_t hint_evictions;
    int built;              /* every word was found: slda_bag_hint made the document too */
} slda_bag_t;
slda_bag_t *slda_bag_new(void);
void slda_bag_free(slda_bag_t *bag);
void slda_bag_clear(slda_bag_t *bag, uint64_t seed);
void slda_bag_add(slda_bag_t *bag, const char *word, size_t len);
/* The tokens of text (text.max.bytes checked first) into bag, hashed with
 * seed (the vocabulary's: slda_vocab_seed). */
slda_err_t slda_bag_tokenize(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                             const char *text, size_t len, char *errstr, size_t errstr_size);
/* The same with the language given with the record (normalised: slda_lang_normalise; NULL
 * or "" to identify it): it overrides identification and picks text.stopwords=auto's list. */
slda_err_t slda_bag_tokenize_doc(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                                 const char *text, size_t len, const char *lang, char *errstr,
                                 size_t errstr_size);
/* The n tokens (lens[i] bytes each, or NUL-terminated when lens is NULL)
 * into bag, each normalised as the tokenizer would (lower-case; stop words
 * and short words dropped), hashed with seed. Checked first: every token
 * valid UTF-8 (SLDA_ERR_UTF8 "tokens[i]: ..."), their total within
 * text.max.bytes (SLDA_ERR_TOO_LARGE). Any thread (only reads tok). */
slda_err_t slda_bag_tokens(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                           const char *const *tokens, const size_t *lens, size_t n,
                           char *errstr, size_t errstr_size);
slda_err_t slda_bag_tokens_doc(const slda_tokenizer_t *tok, uint64_t seed, slda_bag_t *bag,
                               const char *const *tokens, const size_t *lens, size_t n,
                               const char *lang, char *errstr, size_t errstr_size);
/* Adds the words to doc through vocab (on the vocabulary's thread), doc
 * holding no pairs yet (its id and time stay; its lang becomes the bag's); on an error doc is cleared
 * (tok names the rules in the message for an empty document). */
slda_err_t slda_doc_from_bag(const slda_tokenizer_t *tok, slda_vocab_t *vocab,
                             const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                             size_t errstr_size);
/* Find the bag's words in the vocabulary now (only reads it: on a worker
 * thread while nothing changes the vocabulary), so slda_doc_from_bag later
 * skips the search for the words found, as long as no eviction came between:
 * the same ids, frequencies and pins as searching then. With doc (no pairs
 * yet, or NULL) and every word found, the words are added to doc and sorted
 * now, and slda_doc_from_bag given that doc only counts and pins them. */
void slda_bag_hint(const slda_vocab_t *vocab, slda_bag_t *bag, slda_doc_t *doc);
#endif /* SLDA_BAG_H */
