/* text.c - text or token lists -> documents through the model's tokenizer and vocabulary.
 *
 * Invariants. A rejected document never touches the vocabulary: the size
 * limit and UTF-8 are checked before the first word is looked up, so only
 * documents that come out non-empty (or empty for want of known words) add
 * words or frequency. Words the vocabulary cannot give an id (unknown in
 * fixed mode, or every word pinned in open mode) are dropped from the
 * document. The output doc is initialised first (whatever it held is not
 * freed) and is left empty on every error. Runs on the thread that owns the
 * model's vocabulary.
 */
#include "slda_int.h"
#include "tokenize.h"

#include <stdlib.h>
#include <string.h>

typedef struct text_ctx_s {
    slda_vocab_t *vocab;
    slda_doc_t *doc;
    uint32_t ntokens;  /* tokens after tokenising */
    uint32_t nunknown; /* of which the vocabulary gave no id */
} text_ctx_t;

static void add_word(const char *word, size_t len, void *opaque)
{
    text_ctx_t *ctx = opaque;
    uint32_t id = slda_vocab_get_or_add(ctx->vocab, word, len, NULL);
    ctx->ntokens++;
    if (id == UINT32_MAX) {
        ctx->nunknown++;
        return;
    }
    slda_doc_add(ctx->doc, id, 1);
}

/* Finish the document, or explain why it came out empty. */
static slda_err_t finish(const slda_model_t *model, const text_ctx_t *ctx, char *errstr,
                         size_t errstr_size)
{
    if (ctx->doc->npairs > 0) {
        slda_doc_finish(ctx->doc);
        return SLDA_OK;
    }
    slda_doc_clear(ctx->doc);
    if (ctx->ntokens == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: no tokens (after the text.* cleanup rules, stop words "
                            "\"%s\" and text.min.length=%u)",
                            model->p.stopwords ? model->p.stopwords : "none",
                            model->p.min_length);
    if (slda_vocab_is_fixed(model->vocab))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "document: none of its %u tokens is in the vocabulary",
                            ctx->ntokens);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                        "document: vocabulary full (%u words, all in use by the current "
                        "minibatch): its %u tokens were dropped",
                        slda_vocab_capacity(model->vocab), ctx->ntokens);
}

static slda_err_t check_size(const slda_model_t *model, size_t len, char *errstr,
                             size_t errstr_size)
{
    if (model->p.max_doc_bytes > 0 && len > model->p.max_doc_bytes)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "document: %zu bytes is over text.max.bytes=%u", len,
                            model->p.max_doc_bytes);
    return SLDA_OK;
}

slda_err_t slda_doc_from_text(slda_model_t *model, const char *text, size_t len,
                              slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    text_ctx_t ctx = {model->vocab, doc, 0, 0};
    slda_err_t err;
    slda_doc_init(doc);
    if ((err = check_size(model, len, errstr, errstr_size)) != SLDA_OK)
        return err;
    err = slda_tokenize(model->tok, text, len, add_word, &ctx, errstr, errstr_size);
    if (err != SLDA_OK) {
        slda_doc_clear(doc);
        return err;
    }
    return finish(model, &ctx, errstr, errstr_size);
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
    return check_size(model, total, errstr, errstr_size);
}

slda_err_t slda_doc_from_tokens(slda_model_t *model, const char *const *tokens,
                                const size_t *lens, size_t n, slda_doc_t *doc,
                                char *errstr, size_t errstr_size)
{
    text_ctx_t ctx = {model->vocab, doc, 0, 0};
    size_t maxlen;
    char *buf;
    slda_err_t err;
    slda_doc_init(doc);
    err = check_tokens(model, tokens, lens, n, &maxlen, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    buf = slda_xmalloc(4 * maxlen + 1); /* slda_token_normalise's contract */
    for (size_t i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(tokens[i]);
        size_t out = slda_token_normalise(model->tok, tokens[i], len, buf);
        if (out > 0)
            add_word(buf, out, &ctx);
    }
    free(buf);
    return finish(model, &ctx, errstr, errstr_size);
}
