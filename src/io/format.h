/* format.h - one table of input formats for files and messages (format.c). */
#ifndef SLDA_FORMAT_H
#define SLDA_FORMAT_H

#include "io/record.h"

/* ---- the table ---- */

struct slda_reader_s;

/* One input format: a row of format.c's table, defined in the format's own
 * file as slda_format_NAME. A file format has next (and may have by_name,
 * by_line, vocab, open, close); a message format has decode (and, to be
 * detected by input.format=auto, sniff). */
typedef struct slda_format_row_s {
    const char *name;        /* slda_format_parse; input.format (core/config.h's list) */
    const char *alias;       /* another name slda_format_parse accepts, or NULL */
    const char *title;       /* in messages: "the lda-c format needs ..." */
    int file;                /* its slda_format_t value, or -1: not a file format */
    int needs_vocab;         /* word ids, not words: needs a fixed vocabulary (vocab.file) */
    int fields;              /* its records have named fields: the roles' names apply (time,
                                group, text and id fields: io/record.h) */
    /* Files. Detection, tried row by row in table order when the format is
     * auto: from the path's name, then from the first non-empty line (a row
     * without them is never detected; text is the fallback). fixed: the
     * model's vocabulary is fixed. */
    int (*by_name)(const char *path, int fixed);
    int (*by_line)(const char *line, size_t len, int fixed);
    /* The vocabulary file that belongs beside path (malloc'ed, existing or
     * not; named: the format was given, not guessed), or NULL. */
    char *(*vocab)(const char *path, int named);
    slda_err_t (*open)(struct slda_reader_s *rd, char *errstr, size_t errstr_size);
    slda_err_t (*next)(struct slda_reader_s *rd, slda_doc_t *doc, char *errstr,
                       size_t errstr_size);
    void (*close)(struct slda_reader_s *rd);
    /* The next record of text (rd->rec, decoded, not yet looked up; a file of records of
     * text: JSON lines, CSV/TSV, raw text), for a caller that does not add to the
     * vocabulary (`timeline`, which scores documents under a snapshot). Optional. */
    slda_err_t (*next_record)(struct slda_reader_s *rd, char *errstr, size_t errstr_size);
    /* Messages. sniff: 1 when val is of this format (input.format=auto; it may
     * leave its parse in rec for decode). decode: val -> rec (rec emptied
     * already); SLDA_ERR_PARSE when it is not a record of this format. Any
     * thread. */
    int (*sniff)(slda_record_t *rec, const char *val, size_t len);
    slda_err_t (*decode)(slda_record_t *rec, const char *val, size_t len, char *errstr,
                         size_t errstr_size);
} slda_format_row_t;

/* The table: *n rows, in the order detection tries them. */
const slda_format_row_t *const *slda_format_rows(size_t *n);
/* The row of a file format (NULL for auto, or a value that is none). */
const slda_format_row_t *slda_format_file(slda_format_t format);
/* The row of input.format's value (NULL for auto: slda_format_decode detects). */
const slda_format_row_t *slda_format_message(slda_infmt_t format);
/* Detection of a file's format from its name, or from its first non-empty
 * line (always a format: text when no row claims it). */
slda_format_t slda_format_by_name(const char *path, int fixed);
slda_format_t slda_format_by_line(const char *line, size_t len, int fixed);
/* The vocabulary file beside the data file at path, when it exists
 * (slda_reader_guess_vocab, reader.h). */
char *slda_format_vocab(const char *path, slda_format_t fmt);
/* Decode val[0..len) into rec with row's decoder, or with the decoder of the
 * first row whose sniff claims it (row NULL: auto; text when none does). */
slda_err_t slda_format_decode(const slda_format_row_t *row, slda_record_t *rec, const char *val,
                              size_t len, char *errstr, size_t errstr_size);

#endif /* SLDA_FORMAT_H */
