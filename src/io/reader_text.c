/* reader_text.c - raw text: one document per line of a file, or one per message value.
 *
 * Invariants. In a file, every non-blank line is a document (a line left
 * with no tokens - only stop words, digits or punctuation - is an empty
 * document: SLDA_ERR_EMPTY, counted); blank lines separate paragraphs and are
 * skipped. Lines are tokenised through the model's tokenizer and vocabulary
 * (bag.c), so lower-casing, stop words, the size limit and vocabulary
 * handling are the same as for Kafka messages, whose whole value is a text
 * (slda_reader_text_decode). A line's document id is its line number. Errors
 * get the "path:line: " prefix and are counted. Text is what format detection
 * falls back to (format.c). Lines are read ahead and tokenised in parallel
 * (reader_ahead.c).
 */
#include "io/reader.h"

#include <stdio.h>

/* A message value in input.format=text: the whole value is the text. */
static slda_err_t text_decode(slda_record_t *rec, const char *val, size_t len, char *errstr,
                              size_t errstr_size)
{
    (void)errstr;
    (void)errstr_size;
    rec->field[SLDA_FIELD_TEXT] = (slda_field_t){val, len};
    return SLDA_OK;
}

/* One line as a record (its text; its id the line number), not looked up: for callers that
 * score documents without adding to the vocabulary (slda_reader_next_record). */
static slda_err_t text_next_record(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    int r = slda_reader_getline(rd);
    if (r < 0)
        return slda_reader_io_error(rd, errstr, errstr_size);
    if (r == 0)
        return SLDA_ERR_EOF;
    char id[24];
    int n = snprintf(id, sizeof id, "%llu", (unsigned long long)rd->lineno);
    slda_record_reset(&rd->rec);
    rd->rec.field[SLDA_FIELD_ID] = (slda_field_t){slda_record_copy(&rd->rec, id, (size_t)n),
                                                  (size_t)n};
    rd->rec.field[SLDA_FIELD_TEXT] = (slda_field_t){rd->line, rd->linelen};
    return SLDA_OK;
}

/* Its row of format.c's table: no detector (what no other row claims). */
const slda_format_row_t slda_format_text = {
    .name = "text", .alias = "txt", .title = "text", .file = SLDA_FORMAT_TEXT,
    .next = slda_reader_ahead_next, .close = slda_reader_ahead_close,
    .next_record = text_next_record, .decode = text_decode};
