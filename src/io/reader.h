/* reader.h - document readers: what reader.c and the formats' files share (not installed). */
#ifndef SLDA_READER_H
#define SLDA_READER_H

#include "core/config.h"
#include "engine/model.h"
#include "io/format.h"

#include <stdio.h>

/* A vocabulary file that belongs next to the data file at path, if one exists
 * there: docword.X.txt -> vocab.X.txt (UCI), X.dat -> vocab.txt in the same
 * directory (lda-c). fmt narrows the guess (SLDA_FORMAT_AUTO tries both;
 * TEXT and JSONL have none). Returns a malloc'ed path (caller frees) or NULL
 * when there is no such readable file. The CLI uses it to set vocab.file
 * before the model is created. */
char *slda_reader_guess_vocab(const char *path, slda_format_t fmt);

/* The next record of a file of records of text (JSON lines, CSV/TSV, raw text), decoded but
 * not looked up in the vocabulary (*rec valid until the next read; "path:line: " errors as
 * slda_reader_next's, a time field named and unreadable among them); SLDA_ERR_EOF at the end;
 * SLDA_ERR_INVALID for a format of word ids. For callers that must not add words to the
 * model (scoring under a snapshot). */
slda_err_t slda_reader_next_record(slda_reader_t *rd, const slda_record_t **rec, char *errstr,
                                   size_t errstr_size);

/* ---- between reader.c and the per-format files ---- */

struct slda_reader_s {
    char *path;               /* as given; "<stdin>" for "-" */
    FILE *f;
    int owns_f;
    slda_format_t format;
    const slda_format_row_t *row; /* the format's row of format.c's table */
    slda_model_t *model;      /* borrowed */
    char *line;               /* current line, without its "\n" / "\r\n" */
    size_t linecap, linelen;
    uint64_t lineno;          /* number of the current line, 1-based */
    int pending;              /* the current line is to be returned again */
    int eof;                  /* end of input (or a read error) was reached */
    int read_errno;           /* errno of the read error, for the message */
    int ioerr_pending;        /* a read error met while sniffing, still to report */
    char read_why[160];       /* why a read failed when errno does not say (gzfile.c) */
    uint64_t docs;
    uint64_t errors[SLDA_ERR__COUNT];
    slda_record_t rec;        /* JSON lines, CSV/TSV: the record's fields */
    void *fmt;                /* a format's own state (reader_csv.c) */
    uint64_t record_line;     /* CSV/TSV: the first line of the record next_record read */
    struct text_ahead_s *ahead; /* text, JSON, CSV: records read ahead, tokenised in parallel */
    uint32_t ahead_max;       /* records per read-ahead (reader_ahead.c) */
    int ahead_pipeline;       /* a regular file: reading, tokenising, lookups overlap */
    /* UCI state */
    uint64_t uci_ndocs, uci_nwords, uci_nnz; /* header D, W, NNZ */
    uint64_t uci_seen;        /* entry lines read */
    uint64_t uci_doc;         /* docID of the document being gathered (0 = none) */
    slda_doc_t uci_cur;       /* the document being gathered */
    int uci_done;             /* truncation was reported */
    struct uci_ahead_s *uci_ahead; /* entry lines read ahead and parsed in parallel */
};

/* Records of text read ahead and tokenised on the model's workers (reader_ahead.c): the
 * next/close of the text, JSON lines and CSV/TSV rows. */
slda_err_t slda_reader_ahead_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                                  size_t errstr_size);
void slda_reader_ahead_close(slda_reader_t *rd);

/* Next line into rd->line: 1, 0 at the end, or -1 after a read error. */
int slda_reader_getline(slda_reader_t *rd);
/* Read up to the next line that is not blank (spaces, tabs, CR): SLDA_OK,
 * SLDA_ERR_EOF or the read error. */
slda_err_t slda_reader_next_nonblank(slda_reader_t *rd, char *errstr, size_t errstr_size);
/* Count an error for the current line and write "path:line: <msg>". */
slda_err_t slda_reader_fail(slda_reader_t *rd, slda_err_t code, char *errstr,
                            size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The read-error result for a -1 from slda_reader_getline. */
slda_err_t slda_reader_io_error(slda_reader_t *rd, char *errstr, size_t errstr_size);
/* Give doc the id "<n>" (a line or document number). */
void slda_reader_set_id(slda_doc_t *doc, uint64_t n);
/* Highest usable word id + 1 of the model's (fixed) vocabulary. */
uint32_t slda_reader_vocab_limit(const slda_reader_t *rd);

/* Does a line look like lda-c ("N id:count ...")? / like a lone integer? */
int slda_reader_line_is_ldac(const char *line, size_t len);
int slda_reader_line_is_count(const char *line, size_t len);
const char *slda_reader_skip_space(const char *p, const char *end); /* spaces and tabs */
/* The current line as printable ASCII for messages (at most size-1 bytes,
 * other bytes shown as '?', "..." when cut); returns out. */
const char *slda_reader_excerpt(const slda_reader_t *rd, char *out, size_t size);
/* The same for any line (len bytes at line). */
const char *slda_reader_excerpt_of(const char *line, size_t len, char *out, size_t size);
/* The file name of path (after its last '/'); whether s ends with suffix;
 * the path of name in path's directory (malloc'ed). */
const char *slda_reader_base_name(const char *path);
int slda_reader_ends_with(const char *s, const char *suffix);
char *slda_reader_sibling(const char *path, const char *name, size_t namelen);
/* Strict decimal integer at *p (optional '-', digits), advancing *p; 0 if
 * there is none or it overflows. */
int slda_reader_parse_int(const char **p, const char *end, int64_t *out);

#endif
