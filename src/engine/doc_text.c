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
#include "engine/model_int.h"
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

slda_err_t slda_doc_from_tokens(slda_model_t *model, const char *const *tokens,
                                const size_t *lens, size_t n, slda_doc_t *doc,
                                char *errstr, size_t errstr_size)
{
    slda_bag_t *bag = deferred ? deferred : model_bag(model);
    slda_doc_init(doc);
    slda_err_t err = slda_bag_tokens(model->tok, slda_vocab_seed(model->vocab), bag, tokens,
                                     lens, n, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return bag_to_doc(model, bag, doc, errstr, errstr_size);
}
