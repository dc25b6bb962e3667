/* doc_text.c - text or token lists -> documents through the model's tokenizer and vocabulary.
 *
 * Invariants. A rejected document never touches the vocabulary: the size
 * limit and UTF-8 are checked before the first word is looked up, so only
 * documents that come out non-empty (or empty for want of known words) add
 * words or frequency. Words the vocabulary cannot give an id (unknown in
 * fixed mode, or every word pinned in open mode) are dropped from the
 * document. The output doc is initialised first (whatever it held is not
 * freed) and is left empty on every error. Runs on the thread that owns the
 * model's vocabulary - except under slda_text_defer (the service's parallel
 * decoding), where a worker thread only tokenises into its bag and the
 * owner looks the words up afterwards with slda_doc_from_bag.
 */
#include "engine/model_priv.h"
#include "core/utf8.h"
#include "text/bag.h"
#include "text/tokenize.h"

#include <stdlib.h>
#include <string.h>

/* The model's bag for the thread that owns it (bag.c). */
static slda_bag_t *model_bag(slda_model_t *model)
{
    if (!model->bag)
        model->bag = slda_bag_new();
    return model->bag;
}

/* Set by slda_text_defer on a worker thread: tokenise into it, look up nothing. */
static _Thread_local slda_bag_t *deferred;

void slda_text_defer(slda_bag_t *bag)
{
    deferred = bag;
    if (bag)
        bag->deferred = 0;
}

/* The words in bag become the document: now, or (deferred) later on the
 * vocabulary's thread. */
static slda_err_t bag_to_doc(slda_model_t *model, slda_bag_t *bag, slda_doc_t *doc,
                             char *errstr, size_t errstr_size)
{
    if (bag == deferred) {
        bag->deferred = 1;
        return SLDA_OK;
    }
    return slda_doc_from_bag(model->tok, model->vocab, bag, doc, errstr, errstr_size);
}

slda_err_t slda_doc_from_text(slda_model_t *model, const char *text, size_t len,
                              slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    slda_bag_t *bag = deferred ? deferred : model_bag(model);
    slda_doc_init(doc);
    slda_err_t err = slda_bag_tokenize(model->tok, slda_vocab_seed(model->vocab), bag, text, len,
                                       errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return bag_to_doc(model, bag, doc, errstr, errstr_size);
}

/* All tokens valid UTF-8 and within the size limit? */
static slda_err_t check_tokens(const slda_model_t *model, const char *const *tokens,
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
    return slda_tokenizer_check_size(model->tok, total, errstr, errstr_size);
}

slda_err_t slda_doc_from_tokens(slda_model_t *model, const char *const *tokens,
                                const size_t *lens, size_t n, slda_doc_t *doc,
                                char *errstr, size_t errstr_size)
{
    slda_bag_t *bag = deferred ? deferred : model_bag(model);
    uint64_t seed = slda_vocab_seed(model->vocab);
    size_t maxlen;
    char *buf;
    slda_err_t err;
    slda_doc_init(doc);
    err = check_tokens(model, tokens, lens, n, &maxlen, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_bag_clear(bag, seed);
    buf = slda_xmalloc(4 * maxlen + 1); /* slda_token_normalise's contract */
    for (size_t i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(tokens[i]);
        size_t out = slda_token_normalise(model->tok, tokens[i], len, buf);
        if (out > 0)
            slda_bag_add(bag, buf, out);
    }
    free(buf);
    return bag_to_doc(model, bag, doc, errstr, errstr_size);
}
