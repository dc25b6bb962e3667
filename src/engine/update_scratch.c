/* update_scratch.c - a replica minibatch's words, kept outside the vocabulary.
 *
 * A replica's vocabulary must change only by applying records (update.c,
 * "Replicas"), so its documents are tokenised with the model's tokenizer
 * and name their words by index into a scratch table instead of by id: each
 * distinct word once, in first-appearance order, its bytes copied. The table
 * is open addressing over the words' XXH3 keys (the vocabulary's seed), at
 * most half full; slda_update_scratch_clear empties it for the next
 * minibatch and keeps its memory. The model is only read.
 */
#include "engine/update_priv.h"
#include "engine/model_priv.h"

#include <stdlib.h>
#include <string.h>

slda_update_scratch_t *slda_update_scratch_new(void)
{
    slda_update_scratch_t *s = slda_xcalloc(1, sizeof *s);
    s->bag = slda_bag_new();
    return s;
}

void slda_update_scratch_clear(slda_update_scratch_t *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        free(s->word[i]);
    s->n = 0;
    if (s->table)
        memset(s->table, 0xff, (size_t)s->tcap * sizeof *s->table);
}

void slda_update_scratch_destroy(slda_update_scratch_t *s)
{
    if (!s)
        return;
    slda_update_scratch_clear(s);
    slda_bag_free(s->bag);
    free(s->word);
    free(s->len);
    free(s->hash);
    free(s->table);
    free(s);
}

uint32_t slda_update_scratch_words(const slda_update_scratch_t *s)
{
    return s->n;
}

static uint32_t scratch_slot(const slda_update_scratch_t *s, const char *w, uint32_t len,
                             uint64_t h)
{
    uint32_t i = (uint32_t)h & (s->tcap - 1);
    while (s->table[i] != UINT32_MAX &&
           !(s->hash[s->table[i]] == h && s->len[s->table[i]] == len &&
             !memcmp(s->word[s->table[i]], w, len)))
        i = (i + 1) & (s->tcap - 1);
    return i;
}

static uint32_t scratch_intern(slda_update_scratch_t *s, const char *w, uint32_t len, uint64_t h)
{
    if (2 * ((uint64_t)s->n + 1) > s->tcap) {
        uint32_t tcap = s->tcap ? 2 * s->tcap : 1024;
        free(s->table);
        s->table = slda_xmalloc((size_t)tcap * sizeof *s->table);
        memset(s->table, 0xff, (size_t)tcap * sizeof *s->table);
        s->tcap = tcap;
        for (uint32_t i = 0; i < s->n; i++)
            s->table[scratch_slot(s, s->word[i], s->len[i], s->hash[i])] = i;
    }
    uint32_t slot = scratch_slot(s, w, len, h);
    if (s->table[slot] != UINT32_MAX)
        return s->table[slot];
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->word = slda_xrealloc(s->word, s->cap * sizeof *s->word);
        s->len = slda_xrealloc(s->len, s->cap * sizeof *s->len);
        s->hash = slda_xrealloc(s->hash, s->cap * sizeof *s->hash);
    }
    s->word[s->n] = slda_xstrndup(w, len);
    s->len[s->n] = len;
    s->hash[s->n] = h;
    s->table[slot] = s->n;
    return s->n++;
}

slda_err_t slda_update_doc_from_text(const slda_model_t *model, slda_update_scratch_t *scratch,
                                     const char *text, size_t len, slda_doc_t *doc,
                                     char *errstr, size_t errstr_size)
{
    slda_doc_init(doc);
    slda_bag_t *bag = scratch->bag;
    slda_err_t err = slda_bag_tokenize(model->tok, slda_vocab_seed(model->vocab), bag, text, len,
                                       errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return slda_update_doc_from_bag(model, scratch, bag, doc, errstr, errstr_size);
}

slda_err_t slda_update_doc_from_bag(const slda_model_t *model, slda_update_scratch_t *scratch,
                                    const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                                    size_t errstr_size)
{
    if (bag->n == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: no tokens (after the text.* cleanup rules, stop words "
                            "\"%s\" and text.min.length=%u)",
                            model->p.stopwords ? model->p.stopwords : "none",
                            model->p.min_length);
    for (uint32_t i = 0; i < bag->n; i++)
        slda_doc_add(doc, scratch_intern(scratch, bag->arena + bag->off[i], bag->len[i],
                                         bag->hash[i]),
                     bag->count[i]);
    slda_doc_finish(doc);
    return SLDA_OK;
}
