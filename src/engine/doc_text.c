/* doc_text.c - text or token lists -> documents through the model's tokenizer and vocabulary.
 *
 * Invariants. A rejected document never touches the vocabulary: the size
 * limit and UTF-8 are checked before the first word is looked up, so only
 * documents that come out non-empty (or empty for want of known words) add
 * words or frequency. Words the vocabulary cannot give an id (unknown in
 * fixed mode, or every word pinned in open mode) are dropped from the
 * document. The output doc is initialised first (whatever it held is not
 * freed) and is left empty on every error. Runs on the thread that owns the
 * model's vocabulary: the two steps (tokenising into a bag, looking the
 * bag's words up: text/bag.h) in one call, through the model's own bag. A
 * caller that tokenises on other threads (the service's decoding, the text
 * reader) calls those steps itself.
 */
#include "engine/model_priv.h"
#include "text/bag.h"
#include "text/tokenize.h"

/* The model's bag for the thread that owns it (bag.c). */
static slda_bag_t *model_bag(slda_model_t *model)
{
    if (!model->bag)
        model->bag = slda_bag_new();
    return model->bag;
}

slda_err_t slda_doc_from_text(slda_model_t *model, const char *text, size_t len,
                              slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    return slda_doc_from_text_lang(model, text, len, NULL, doc, errstr, errstr_size);
}

slda_err_t slda_doc_from_text_lang(slda_model_t *model, const char *text, size_t len,
                                   const char *lang, slda_doc_t *doc, char *errstr,
                                   size_t errstr_size)
{
    slda_bag_t *bag = model_bag(model);
    slda_doc_init(doc);
    slda_err_t err = slda_bag_tokenize_doc(model->tok, slda_vocab_seed(model->vocab), bag, text,
                                           len, lang, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return slda_doc_from_bag(model->tok, model->vocab, bag, doc, errstr, errstr_size);
}

slda_err_t slda_doc_from_tokens(slda_model_t *model, const char *const *tokens,
                                const size_t *lens, size_t n, slda_doc_t *doc,
                                char *errstr, size_t errstr_size)
{
    return slda_doc_from_tokens_lang(model, tokens, lens, n, NULL, doc, errstr, errstr_size);
}

slda_err_t slda_doc_from_tokens_lang(slda_model_t *model, const char *const *tokens,
                                     const size_t *lens, size_t n, const char *lang,
                                     slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    slda_bag_t *bag = model_bag(model);
    slda_doc_init(doc);
    slda_err_t err = slda_bag_tokens_doc(model->tok, slda_vocab_seed(model->vocab), bag, tokens,
                                         lens, n, lang, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    return slda_doc_from_bag(model->tok, model->vocab, bag, doc, errstr, errstr_size);
}
