/* reader.c - document readers: opening a file, detecting its format, reading through its row.
 *
 * A file (or "-", standard input; gzip read transparently) is opened here, its
 * format taken from the caller, else detected from its name and its first
 * non-empty line (format.c's table), and read through that row's
 * open/next/close: reader_uci.c, reader_ldac.c, reader_text.c, reader_json.c,
 * which sit on reader_input.c's lines and rejected-record counting. Empty
 * lines separate records in UCI, lda-c and JSON lines and are skipped; in
 * text every line is a document, so an empty line is an empty document
 * (SLDA_ERR_EMPTY). A reader belongs to one thread; the model is borrowed.
 */
#include "io/reader.h"

#include "io/gzfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *slda_reader_guess_vocab(const char *path, slda_format_t fmt)
{
    return slda_format_vocab(path, fmt);
}

/* Decide from the first non-empty line, which stays pending for the reader
 * (empty lines before it are consumed here, so a sniffed text file does not
 * report them as empty documents). */
static slda_format_t format_by_content(slda_reader_t *rd)
{
    int r;
    while ((r = slda_reader_getline(rd)) == 1 && rd->linelen == 0)
        ;
    if (r < 0)
        rd->ioerr_pending = 1; /* reported by the first slda_reader_next */
    if (r != 1)
        return SLDA_FORMAT_TEXT;
    rd->pending = 1;
    return slda_format_by_line(rd->line, rd->linelen,
                               slda_vocab_is_fixed(slda_model_vocab(rd->model)));
}

/* ---- open / next / close ---- */

/* gzip input (magic 1f 8b) is read through zlib, transparently (gzfile.c). */
static slda_err_t open_gzip(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    FILE *f = slda_gz_open(rd->f, rd->owns_f, rd->read_why, sizeof rd->read_why);
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "reader \"%s\": %s", rd->path,
                            strerror(errno));
    if (f != rd->f) {
        rd->f = f;
        rd->owns_f = 1; /* the wrapper; it closes the file under it only if that was ours */
    }
    /* one thread reads a file of ours (see the top): no lock per getline
     * (with the digits' overflow check, 8% of reading KOS's instructions) */
    if (rd->owns_f)
        __fsetlocking(rd->f, FSETLOCKING_BYCALLER);
    return SLDA_OK;
}

static slda_err_t open_input(slda_reader_t *rd, const char *path, char *errstr,
                             size_t errstr_size)
{
    struct stat st;
    if (strcmp(path, "-") == 0) {
        rd->f = stdin;
        rd->path = slda_xstrdup("<stdin>");
        return open_gzip(rd, errstr, errstr_size);
    }
    rd->path = slda_xstrdup(path);
    rd->f = fopen(path, "rb");
    if (!rd->f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "reader \"%s\": cannot open: %s",
                            path, strerror(errno));
    rd->owns_f = 1;
    if (fstat(fileno(rd->f), &st) == 0 && S_ISDIR(st.st_mode))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                            "reader \"%s\": is a directory", path);
    return open_gzip(rd, errstr, errstr_size);
}

static slda_err_t check_vocab(slda_reader_t *rd, const char *path, char *errstr,
                              size_t errstr_size)
{
    char *guess;
    if (!rd->row->needs_vocab)
        return SLDA_OK;
    if (slda_vocab_is_fixed(slda_model_vocab(rd->model)))
        return SLDA_OK;
    guess = slda_reader_guess_vocab(path, rd->format);
    slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                 "reader \"%s\": the %s format needs a fixed vocabulary: set vocab.file%s%s%s",
                 path, rd->row->title, guess ? " (found " : "", guess ? guess : "",
                 guess ? ")" : "");
    free(guess);
    return SLDA_ERR_INVALID;
}

slda_reader_t *slda_reader_open(const slda_conf_t *conf, slda_model_t *model,
                                const char *path, slda_format_t format, char *errstr,
                                size_t errstr_size)
{
    slda_reader_t *rd;
    slda_err_t err;
    /* everything else the readers need is in the model */
    if (!model || !path || (format != SLDA_FORMAT_AUTO && !slda_format_file(format))) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "reader \"%s\": invalid arguments", path ? path : "(null)");
        return NULL;
    }
    rd = slda_xcalloc(1, sizeof *rd);
    rd->model = model;
    slda_record_init(&rd->rec);
    slda_record_names(&rd->rec, conf); /* the fields JSON lines and CSV/TSV are read from */
    slda_doc_init(&rd->uci_cur);
    err = open_input(rd, path, errstr, errstr_size);
    if (err == SLDA_OK) {
        /* records tokenised ahead, in parallel (reader_ahead.c): many from a
         * file, one minibatch from a pipe (a live stream is not held back) */
        struct stat st;
        int regular = strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
        uint32_t mb = conf && conf->minibatch_docs ? conf->minibatch_docs : 32;
        rd->ahead_max = regular ? (mb > 256 ? mb : 256) : mb;
        rd->ahead_pipeline = regular;
        int fixed = slda_vocab_is_fixed(slda_model_vocab(model));
        rd->format = format != SLDA_FORMAT_AUTO ? format : slda_format_by_name(path, fixed);
        if (rd->format == SLDA_FORMAT_AUTO)
            rd->format = format_by_content(rd);
        rd->row = slda_format_file(rd->format);
        err = check_vocab(rd, path, errstr, errstr_size);
        if (err == SLDA_OK && !rd->row->fields && slda_record_name(&rd->rec, SLDA_FIELD_TIME))
            err = slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                               "reader \"%s\": a time field is named (input.time.field) but the "
                               "%s format has no fields: give JSON lines or CSV/TSV with a header "
                               "(-f jsonl, csv, tsv)", path, rd->row->title);
    }
    if (err == SLDA_OK && rd->row->open)
        err = rd->row->open(rd, errstr, errstr_size);
    if (err != SLDA_OK) {
        slda_reader_close(rd);
        return NULL;
    }
    return rd;
}

slda_err_t slda_reader_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                            size_t errstr_size)
{
    slda_err_t err;
    slda_doc_init(doc);
    err = rd->row->next(rd, doc, errstr, errstr_size);
    if (err == SLDA_OK && doc->ntokens > SLDA_MAX_DOC_TOKENS) {
        /* counts are summed saturating: anything past the limit is refused here */
        char id[64];
        snprintf(id, sizeof id, "%s", doc->id ? doc->id : "?");
        slda_doc_clear(doc);
        return slda_reader_fail(rd, SLDA_ERR_RANGE, errstr, errstr_size,
                                "document \"%s\": more than %u tokens", id, SLDA_MAX_DOC_TOKENS);
    }
    if (err == SLDA_OK)
        rd->docs++;
    return err;
}

slda_err_t slda_reader_next_record(slda_reader_t *rd, const slda_record_t **rec, char *errstr,
                                   size_t errstr_size)
{
    if (!rd->row->next_record)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "reader \"%s\": the %s format has no records of text", rd->path,
                            rd->row->title);
    slda_err_t err = rd->row->next_record(rd, errstr, errstr_size);
    *rec = err == SLDA_OK ? &rd->rec : NULL;
    return err;
}

uint64_t slda_reader_docs(const slda_reader_t *rd)
{
    return rd->docs;
}

uint64_t slda_reader_errors(const slda_reader_t *rd, slda_err_t code)
{
    return (unsigned)code < SLDA_ERR__COUNT ? rd->errors[code] : 0;
}

void slda_reader_close(slda_reader_t *rd)
{
    if (!rd)
        return;
    if (rd->owns_f && rd->f)
        fclose(rd->f);
    free(rd->path);
    free(rd->line);
    slda_record_clear(&rd->rec);
    slda_doc_clear(&rd->uci_cur);
    if (rd->row && rd->row->close)
        rd->row->close(rd); /* the format's read-ahead state */
    free(rd);
}
