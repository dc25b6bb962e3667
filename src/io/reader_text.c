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
 */
#include "reader.h"

#include <string.h>

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

slda_err_t slda_reader_text_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size)
{
    char msg[512] = "";
    slda_err_t err = next_nonblank(rd, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    err = slda_doc_from_text(rd->model, rd->line, rd->linelen, doc, msg, sizeof msg);
    if (err != SLDA_OK)
        return reject(rd, err, msg, errstr, errstr_size);
    slda_reader_set_id(doc, rd->lineno);
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
