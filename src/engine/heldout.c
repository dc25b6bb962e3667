/* heldout.c - held-out documents kept by word key, re-resolved against the vocabulary at scoring.
 *
 * Why: an open vocabulary evicts its rarest words when it is full and gives
 * their ids to new words, and words that occur only in held-out documents
 * are the rarest of all (they never reach training). Documents kept as word
 * ids across minibatches would then be scored on whatever words took those
 * ids. A held-out set therefore stores each document as (key, count) pairs,
 * the key being the word's XXH3-64 under the vocabulary's hash seed
 * (slda_vocab_key, the same value the vocabulary is keyed by), and maps keys
 * back to ids (slda_vocab_find_key) each time it is scored. A word the model
 * does not hold at that moment (evicted, or never trained on) is left out of
 * the document and its tokens are counted as unseen, exactly as a fixed
 * vocabulary leaves out words it does not have; the evaluation itself is
 * slda_eval_completion, so with nothing evicted the figures are those of
 * scoring the original documents.
 *
 * Invariants: every stored document has keys of one hash seed (the set's
 * seed, taken from the first model that adds to it; models from snapshots of
 * that model keep it), pairs in the document's order, counts >= 1.
 * Threads: a set belongs to the thread that owns its model.
 */
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct held_doc_s {
    uint64_t *key;
    uint32_t *count;
    uint32_t npairs;
    char **author;     /* model.kind=atm: the document's authors (their prior at scoring) */
    uint32_t nauthor;
} held_doc_t;

struct slda_heldout_s {
    held_doc_t *docs;
    size_t n, cap;
    uint64_t seed;
    int has_seed;
};

slda_heldout_t *slda_heldout_new(void)
{
    return slda_xcalloc(1, sizeof(slda_heldout_t));
}

static void held_doc_clear(held_doc_t *d)
{
    free(d->key);
    free(d->count);
    for (uint32_t i = 0; i < d->nauthor; i++)
        free(d->author[i]);
    free(d->author);
    memset(d, 0, sizeof *d);
}

void slda_heldout_destroy(slda_heldout_t *held)
{
    if (!held)
        return;
    for (size_t i = 0; i < held->n; i++)
        held_doc_clear(&held->docs[i]);
    free(held->docs);
    free(held);
}

size_t slda_heldout_count(const slda_heldout_t *held)
{
    return held ? held->n : 0;
}

/* Checks slot against the set and seed against the set's hash seed. */
static slda_err_t check_put(const slda_heldout_t *held, size_t slot, uint64_t seed,
                            char *errstr, size_t errstr_size)
{
    if (slot > held->n)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "held-out set: slot %zu is past its %zu documents", slot, held->n);
    if (held->has_seed && seed != held->seed)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "held-out set: the model's hash seed %llu is not the set's %llu",
                            (unsigned long long)seed, (unsigned long long)held->seed);
    return SLDA_OK;
}

/* Stores d (taken over) in slot: a new last document or over an old one. */
static void store(slda_heldout_t *held, size_t slot, uint64_t seed, held_doc_t d)
{
    if (slot == held->n) {
        if (held->n == held->cap) {
            held->cap = held->cap ? 2 * held->cap : 64;
            held->docs = slda_xrealloc(held->docs, held->cap * sizeof *held->docs);
        }
        held->n++;
    } else {
        held_doc_clear(&held->docs[slot]);
    }
    held->docs[slot] = d;
    held->seed = seed;
    held->has_seed = 1;
}

/* Room for n (key, count) pairs. */
static held_doc_t doc_alloc(uint32_t n)
{
    held_doc_t d = {slda_xmalloc(((size_t)n + 1) * sizeof *d.key),
                    slda_xmalloc(((size_t)n + 1) * sizeof *d.count), n, NULL, 0};
    return d;
}

slda_err_t slda_heldout_put(slda_heldout_t *held, size_t slot, const slda_model_t *model,
                            const slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    const slda_vocab_t *vocab = model->vocab;
    uint64_t seed = slda_vocab_seed(vocab);
    slda_err_t err = check_put(held, slot, seed, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    for (uint32_t u = 0; u < doc->npairs; u++)
        if (!slda_vocab_word(vocab, doc->word[u]) || doc->count[u] == 0)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                "document \"%s\": word id %u is not in the vocabulary",
                                doc->id ? doc->id : "", doc->word[u]);
    held_doc_t d = doc_alloc(doc->npairs);
    for (uint32_t u = 0; u < doc->npairs; u++) {
        d.key[u] = slda_vocab_key(vocab, doc->word[u]);
        d.count[u] = doc->count[u];
    }
    if (doc->nauthor) {
        d.author = slda_xmalloc(doc->nauthor * sizeof *d.author);
        for (uint32_t i = 0; i < doc->nauthor; i++)
            d.author[i] = slda_xstrdup(doc->author[i]);
        d.nauthor = doc->nauthor;
    }
    store(held, slot, seed, d);
    return SLDA_OK;
}

slda_err_t slda_heldout_put_keys(slda_heldout_t *held, size_t slot, const slda_model_t *model,
                                 const uint64_t *keys, const uint32_t *counts, uint32_t n,
                                 char *errstr, size_t errstr_size)
{
    uint64_t seed = slda_vocab_seed(model->vocab);
    slda_err_t err = check_put(held, slot, seed, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    held_doc_t d = doc_alloc(n);
    for (uint32_t i = 0; i < n; i++) {
        d.key[i] = keys[i];
        d.count[i] = counts[i];
    }
    store(held, slot, seed, d);
    return SLDA_OK;
}

/* Documents of held in model's current ids (words held only, sorted by id);
 * *unseen += the tokens of the other words. Caller frees with
 * slda_docs_clear + free. */
static slda_doc_t *resolve(const slda_heldout_t *held, const slda_model_t *model,
                           uint64_t *unseen)
{
    slda_doc_t *docs = slda_xcalloc(held->n + 1, sizeof *docs);
    for (size_t j = 0; j < held->n; j++) {
        const held_doc_t *d = &held->docs[j];
        for (uint32_t u = 0; u < d->npairs; u++) {
            uint32_t id = slda_vocab_find_key(model->vocab, d->key[u]);
            if (id < model->W && model->row_ready[id])
                slda_doc_add(&docs[j], id, d->count[u]);
            else
                *unseen += d->count[u];
        }
        slda_doc_finish(&docs[j]);
        for (uint32_t i = 0; i < d->nauthor; i++)
            slda_doc_add_author(&docs[j], d->author[i], strlen(d->author[i]));
    }
    return docs;
}

static void free_docs(slda_doc_t *docs, size_t n)
{
    slda_docs_clear(docs, n);
    free(docs);
}

static slda_err_t check_seed(const slda_heldout_t *held, const slda_model_t *model)
{
    if (held && held->has_seed && held->seed != slda_vocab_seed(model->vocab))
        return SLDA_ERR_INVALID;
    return SLDA_OK;
}

slda_err_t slda_heldout_perplexity(const slda_model_t *model, const slda_heldout_t *obs,
                                   const slda_heldout_t *test, uint64_t seed,
                                   double *perplexity, slda_heldout_stats_t *stats)
{
    uint64_t unseen_obs = 0, unseen_test = 0, scored = 0;
    size_t n = obs ? obs->n : 0;
    slda_err_t err;
    *perplexity = NAN;
    if (test && test->n < n)
        n = test->n;
    if (check_seed(obs, model) != SLDA_OK || check_seed(test, model) != SLDA_OK)
        return SLDA_ERR_INVALID;
    if (n == 0) {
        err = SLDA_ERR_EMPTY;
    } else {
        slda_doc_t *o = resolve(obs, model, &unseen_obs);
        slda_doc_t *t = test ? resolve(test, model, &unseen_test) : NULL;
        err = slda_eval_completion(model, o, t, n, seed, perplexity, &scored);
        free_docs(o, obs->n);
        if (t)
            free_docs(t, test->n);
    }
    if (stats) {
        stats->docs = n;
        stats->scored = scored;
        /* with a random split: every token left out, observed or scored alike */
        stats->unseen = test ? unseen_test : unseen_obs;
    }
    return err;
}

slda_err_t slda_heldout_umass(const slda_model_t *model, const slda_heldout_t *held, size_t n,
                              double *mean, double *per_topic)
{
    uint64_t unseen = 0;
    if (!held || held->n == 0)
        return SLDA_ERR_EMPTY;
    if (check_seed(held, model) != SLDA_OK)
        return SLDA_ERR_INVALID;
    slda_doc_t *docs = resolve(held, model, &unseen);
    slda_err_t err = slda_eval_umass(model, docs, held->n, n, mean, per_topic);
    free_docs(docs, held->n);
    return err;
}
