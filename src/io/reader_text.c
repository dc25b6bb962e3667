/* reader_text.c - one document per line: raw text, or JSON lines {"id", "text"|"tokens"}.
 *
 * Invariants. In text, every non-blank line is a document (a line left with
 * no tokens - only stop words, digits or punctuation - is an empty document:
 * SLDA_ERR_EMPTY, counted); blank lines separate paragraphs and are skipped,
 * in text as in JSON lines. Records are tokenised through the
 * model (slda_doc_from_text / slda_doc_from_json), so lower-casing, stop
 * words, the size limit and vocabulary handling are the same as for Kafka
 * messages. A text document's id is its line number; a JSON document's id
 * is its "id" field, else its line number. Errors from the decoders get the
 * "path:line: " prefix and are counted.
 *
 * Text is read ahead: up to ahead_max non-blank lines (256 from a file, one
 * minibatch from a pipe) are read, then tokenised into bags on the model's
 * worker threads (bag.c: tokenising only reads the tokenizer), and each call
 * then looks one bag's words up in the vocabulary, on the caller's thread,
 * in line order - the documents and the vocabulary are those of reading one
 * line at a time. A read error or the end of input met while reading ahead
 * is returned after the lines read before it. JSON lines are decoded one at
 * a time.
 */
#include "model.h"
#include "reader.h"

#include <stdlib.h>
#include <string.h>

typedef struct ahead_item_s {
    uint64_t lineno;
    size_t off, len;        /* the line in buf */
    slda_err_t err;         /* of tokenising */
    char msg[256];
} ahead_item_t;

struct text_ahead_s {
    char *buf;
    size_t blen, bcap;
    ahead_item_t *items;
    slda_bag_t **bags;      /* one per item slot, kept */
    uint32_t n, pos, cap;
    slda_err_t end;         /* SLDA_OK, or what ended the read-ahead (EOF, I/O error) */
    char enderr[512];
    uint64_t lineno;        /* the reader's line number after the read-ahead */
    const slda_model_t *model;
};

void slda_reader_text_close(slda_reader_t *rd)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a)
        return;
    for (uint32_t i = 0; i < a->cap; i++)
        slda_bag_free(a->bags[i]);
    free(a->bags);
    free(a->items);
    free(a->buf);
    free(a);
    rd->ahead = NULL;
}

/* Count the decoder's error and prefix it with path:line. */
static slda_err_t reject(slda_reader_t *rd, slda_err_t err, const char *msg, char *errstr,
                         size_t errstr_size)
{
    return slda_reader_fail(rd, err, errstr, errstr_size, "%s", msg);
}

static int blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    }
    return 1;
}

/* Read up to the next line that is not blank: SLDA_OK, SLDA_ERR_EOF or an
 * I/O error. */
static slda_err_t next_nonblank(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    for (;;) {
        int r = slda_reader_getline(rd);
        if (r < 0)
            return slda_reader_io_error(rd, errstr, errstr_size);
        if (r == 0)
            return SLDA_ERR_EOF;
        if (!blank(rd->line, rd->linelen))
            return SLDA_OK;
    }
}

static void tokenize_item(size_t i, uint32_t worker, void *opaque)
{
    struct text_ahead_s *a = opaque;
    ahead_item_t *it = &a->items[i];
    (void)worker;
    it->err = slda_bag_tokenize(a->model, a->bags[i], a->buf + it->off, it->len, it->msg,
                                sizeof it->msg);
}

/* Read up to ahead_max non-blank lines and tokenise them (worker threads). */
static void fill(slda_reader_t *rd, struct text_ahead_s *a)
{
    a->n = a->pos = 0;
    a->blen = 0;
    rd->lineno = a->lineno;
    while (a->n < rd->ahead_max) {
        slda_err_t err = next_nonblank(rd, a->enderr, sizeof a->enderr);
        if (err != SLDA_OK) {
            a->end = err;
            break;
        }
        if (a->n == a->cap) {
            uint32_t cap = a->cap ? a->cap * 2 : 64;
            a->items = slda_xrealloc(a->items, cap * sizeof *a->items);
            a->bags = slda_xrealloc(a->bags, cap * sizeof *a->bags);
            for (uint32_t i = a->cap; i < cap; i++)
                a->bags[i] = slda_bag_new();
            a->cap = cap;
        }
        if (a->blen + rd->linelen + 1 > a->bcap) {
            while (a->blen + rd->linelen + 1 > a->bcap)
                a->bcap = a->bcap ? a->bcap * 2 : 65536;
            a->buf = slda_xrealloc(a->buf, a->bcap);
        }
        memcpy(a->buf + a->blen, rd->line, rd->linelen + 1);
        a->items[a->n] = (ahead_item_t){.lineno = rd->lineno, .off = a->blen, .len = rd->linelen};
        a->blen += rd->linelen + 1;
        a->n++;
    }
    a->lineno = rd->lineno;
    slda_pool_run(rd->model, a->n, tokenize_item, a);
}

slda_err_t slda_reader_text_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size)
{
    struct text_ahead_s *a = rd->ahead;
    if (!a) {
        a = rd->ahead = slda_xcalloc(1, sizeof *a);
        a->model = rd->model;
        a->lineno = rd->lineno;
    }
    if (a->pos == a->n) {
        if (a->end != SLDA_OK) { /* what ended the last read-ahead, then the end */
            slda_err_t end = a->end;
            if (end != SLDA_ERR_EOF)
                snprintf(errstr, errstr_size, "%s", a->enderr);
            a->end = SLDA_ERR_EOF;
            return end;
        }
        fill(rd, a);
        if (a->n == 0)
            return slda_reader_text_next(rd, doc, errstr, errstr_size);
    }
    ahead_item_t *it = &a->items[a->pos];
    slda_bag_t *bag = a->bags[a->pos++];
    char msg[512] = "";
    slda_err_t err = it->err;
    if (err == SLDA_OK)
        err = slda_doc_from_bag(rd->model, bag, doc, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "%s", it->msg);
    rd->lineno = it->lineno; /* for the error's path:line */
    if (err != SLDA_OK) {
        err = reject(rd, err, msg, errstr, errstr_size);
        rd->lineno = a->lineno;
        return err;
    }
    rd->lineno = a->lineno;
    slda_reader_set_id(doc, it->lineno);
    return SLDA_OK;
}

slda_err_t slda_reader_jsonl_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                  size_t errstr_size)
{
    char msg[512] = "";
    slda_err_t err = next_nonblank(rd, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    err = slda_doc_from_json(rd->model, &rd->js, rd->line, rd->linelen, doc, msg, sizeof msg);
    if (err != SLDA_OK)
        return reject(rd, err, msg, errstr, errstr_size);
    if (!doc->id)
        slda_reader_set_id(doc, rd->lineno);
    return SLDA_OK;
}
