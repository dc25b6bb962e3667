/* format.c - one table of the input formats of files and messages.
 *
 * Adding a format (reader_csv.c is the latest). 1. Its file, src/io/reader_NAME.c:
 * its functions and its row, `const slda_format_row_t slda_format_NAME`
 * (format.h): its names, how it is detected (from a file's name and first
 * line; from a message's first bytes), its file reader on slda_reader_t
 * (open, next, close) if it has one, its message decoder into a
 * slda_record_t if it has one; reader_json.c has both. 2. Its line in the
 * table below, whose order is the order detection tries the rows. Its
 * `file` is its slda_format_t value, the next free one (include/streamlda.h
 * names the first five and may name a new one). A file format is then read
 * by slda_reader_open, detected when the format is auto and named by
 * slda_format_parse. 3. A message format also takes its line in
 * SLDA_INPUT_FORMATS (core/config.h: input.format's names; the configuration
 * is in the core layer, below this one), from which the table's index by
 * input.format is made: a line there without its row does not link, and
 * unit_format checks every row against input.format's names. Fields a format
 * brings (a time, a group, an author) are roles of the record (io/record.h)
 * that its decoder fills.
 */
#include "io/format.h"

#include "io/reader.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- the table ---- */

/* Each format's row, defined in its file; the message formats' named as in
 * core/config.h's list. */
extern const slda_format_row_t slda_format_uci, slda_format_ldac, slda_format_csv,
    slda_format_tsv;
#define ROW_DECLARE(id, name) extern const slda_format_row_t slda_format_##name;
SLDA_INPUT_FORMATS(ROW_DECLARE)
#undef ROW_DECLARE

/* The table: every format, in the order detection tries them. */
static const slda_format_row_t *const rows[] = {
    &slda_format_uci,  /* docword*.txt; a lone count first with a fixed vocabulary */
    &slda_format_ldac, /* *.dat with its vocabulary; "N id:count ..." */
    &slda_format_text, /* no detector: what no other row claims */
    &slda_format_json, /* *.jsonl, *.json; '{' first */
    &slda_format_csv,  /* *.csv; a header of names and commas first */
    &slda_format_tsv,  /* *.tsv, *.tab; a header of names and tabs first */
    &slda_format_msgpack, /* messages only: a map byte first */
};
#define NROWS (sizeof rows / sizeof rows[0])

/* The row of each input.format value, made from core/config.h's list. */
#define MESSAGE_ROW(id, name) [SLDA_INFMT_##id] = &slda_format_##name,
static const slda_format_row_t *const by_infmt[SLDA_INFMT__COUNT] = {
    [SLDA_INFMT_AUTO] = NULL, SLDA_INPUT_FORMATS(MESSAGE_ROW)};
#undef MESSAGE_ROW

/* What no detector claims. */
static const slda_format_row_t *const fallback = &slda_format_text;

const slda_format_row_t *const *slda_format_rows(size_t *n)
{
    *n = NROWS;
    return rows;
}

const slda_format_row_t *slda_format_file(slda_format_t format)
{
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->next && rows[i]->file == (int)format)
            return rows[i];
    return NULL;
}

const slda_format_row_t *slda_format_message(slda_infmt_t format)
{
    return (unsigned)format < SLDA_INFMT__COUNT ? by_infmt[format] : NULL;
}

slda_format_t slda_format_by_name(const char *path, int fixed)
{
    if (strcmp(path, "-") == 0) /* standard input: by its first line */
        return SLDA_FORMAT_AUTO;
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->by_name && rows[i]->by_name(path, fixed))
            return (slda_format_t)rows[i]->file;
    return SLDA_FORMAT_AUTO;
}

slda_format_t slda_format_by_line(const char *line, size_t len, int fixed)
{
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->by_line && rows[i]->by_line(line, len, fixed))
            return (slda_format_t)rows[i]->file;
    return (slda_format_t)fallback->file;
}

slda_format_t slda_format_parse(const char *name)
{
    if (name && strcasecmp(name, "auto") == 0)
        return SLDA_FORMAT_AUTO;
    for (size_t i = 0; name && i < NROWS; i++) {
        if (!rows[i]->next)
            continue; /* not a file format */
        if (strcasecmp(name, rows[i]->name) == 0 ||
            (rows[i]->alias && strcasecmp(name, rows[i]->alias) == 0))
            return (slda_format_t)rows[i]->file;
    }
    return (slda_format_t)-1;
}

char *slda_format_vocab(const char *path, slda_format_t fmt)
{
    char *guess = NULL;
    if (!path || strcmp(path, "-") == 0)
        return NULL;
    if (fmt == SLDA_FORMAT_AUTO) { /* the first row whose name pattern fits */
        for (size_t i = 0; !guess && i < NROWS; i++)
            if (rows[i]->vocab)
                guess = rows[i]->vocab(path, 0);
    } else {
        const slda_format_row_t *row = slda_format_file(fmt);
        if (row && row->vocab)
            guess = row->vocab(path, 1);
    }
    if (guess && access(guess, R_OK) != 0) {
        free(guess);
        guess = NULL;
    }
    return guess;
}

slda_err_t slda_format_decode(const slda_format_row_t *row, slda_record_t *rec, const char *val,
                              size_t len, char *errstr, size_t errstr_size)
{
    slda_record_reset(rec);
    for (size_t i = 0; !row && i < NROWS; i++)
        if (rows[i]->sniff && rows[i]->sniff(rec, val, len))
            row = rows[i];
    if (!row)
        row = fallback;
    return row->decode(rec, val, len, errstr, errstr_size);
}
