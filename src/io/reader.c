/* reader.c - document readers: opening, format detection, line input, error counting.
 *
 * Invariants. Input is streamed line by line with getline (any line length,
 * never the whole file; a UCI file in blocks, reader_uci.c); rd->line holds
 * the current line without its line end, and rd->pending makes the next
 * slda_reader_getline return it again (used for format sniffing and by the
 * UCI reader's look-ahead). Every
 * rejected record is counted in rd->errors[code] exactly once and reported as
 * "path:line: <problem>"; the reader then carries on with the next record.
 * Empty lines separate records in UCI, lda-c and JSON lines and are skipped;
 * in text every line is a document, so an empty line is an empty document
 * (SLDA_ERR_EMPTY). The formats are rows of format.c's table (how each is
 * detected, its open/next/close), each in its own file: reader_uci.c,
 * reader_ldac.c, reader_text.c, reader_json.c. A reader belongs to one
 * thread; the model is borrowed.
 */
#include "io/reader.h"

#include "io/gzfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int slda_reader_getline(slda_reader_t *rd)
{
    ssize_t n;
    if (rd->ioerr_pending) {
        rd->ioerr_pending = 0;
        return -1;
    }
    if (rd->pending) {
        rd->pending = 0;
        return 1;
    }
    if (rd->eof)
        return 0;
    n = getline(&rd->line, &rd->linecap, rd->f);
    if (n < 0) {
        rd->read_errno = errno;
        rd->eof = 1;
        return ferror(rd->f) ? -1 : 0;
    }
    if (n > 0 && rd->line[n - 1] != '\n' && ferror(rd->f)) {
        /* a line cut short by a read error (e.g. truncated gzip data) is not a line */
        rd->read_errno = errno;
        rd->eof = 1;
        return -1;
    }
    rd->lineno++;
    if (n > 0 && rd->line[n - 1] == '\n')
        n--;
    if (n > 0 && rd->line[n - 1] == '\r')
        n--;
    rd->line[n] = '\0';
    rd->linelen = (size_t)n;
    return 1;
}

slda_err_t slda_reader_fail(slda_reader_t *rd, slda_err_t code, char *errstr,
                            size_t errstr_size, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((unsigned)code < SLDA_ERR__COUNT)
        rd->errors[code]++;
    return slda_set_err(errstr, errstr_size, code, "%s:%llu: %s", rd->path,
                        (unsigned long long)rd->lineno, msg);
}

slda_err_t slda_reader_io_error(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    rd->errors[SLDA_ERR_IO]++;
    return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s:%llu: read error: %s", rd->path,
                        (unsigned long long)rd->lineno,
                        rd->read_why[0] ? rd->read_why : strerror(rd->read_errno));
}

void slda_reader_set_id(slda_doc_t *doc, uint64_t n)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
    free(doc->id);
    doc->id = slda_xstrdup(buf);
}

uint32_t slda_reader_vocab_limit(const slda_reader_t *rd)
{
    return slda_vocab_max_id(slda_model_vocab(rd->model));
}

int slda_reader_parse_int(const char **p, const char *end, int64_t *out)
{
    const char *s = *p;
    int neg = 0;
    uint64_t v = 0;
    if (s < end && *s == '-') {
        neg = 1;
        s++;
    }
    if (s >= end || *s < '0' || *s > '9')
        return 0;
    /* 18 digits cannot overflow: no check on them (the check per digit was
     * a fifth of reading a UCI file) */
    for (int i = 0; i < 18 && s < end && *s >= '0' && *s <= '9'; i++)
        v = v * 10 + (unsigned)(*s++ - '0');
    while (s < end && *s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s++ - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    *p = s;
    return 1;
}

const char *slda_reader_skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

const char *slda_reader_excerpt_of(const char *line, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < size; i++) {
        unsigned char c = (unsigned char)line[i];
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n < len && n + 4 <= size) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

const char *slda_reader_excerpt(const slda_reader_t *rd, char *out, size_t size)
{
    return slda_reader_excerpt_of(rd->line, rd->linelen, out, size);
}

int slda_reader_line_is_count(const char *line, size_t len)
{
    const char *p = slda_reader_skip_space(line, line + len), *end = line + len;
    int64_t v;
    if ((p < end && *p == '-') || !slda_reader_parse_int(&p, end, &v))
        return 0;
    return slda_reader_skip_space(p, end) == end;
}

int slda_reader_line_is_ldac(const char *line, size_t len)
{
    const char *end = line + len, *p = slda_reader_skip_space(line, end);
    int64_t n, id, count, pairs = 0;
    if ((p < end && *p == '-') || !slda_reader_parse_int(&p, end, &n))
        return 0;
    for (;;) {
        const char *q = slda_reader_skip_space(p, end);
        if (q == end)
            break;
        if (q == p || !slda_reader_parse_int(&q, end, &id) || q >= end || *q != ':')
            return 0;
        q++;
        if (!slda_reader_parse_int(&q, end, &count))
            return 0;
        p = q;
        pairs++;
    }
    return pairs > 0 || n == 0;
}

static int blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    }
    return 1;
}

slda_err_t slda_reader_next_nonblank(slda_reader_t *rd, char *errstr, size_t errstr_size)
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

/* ---- names (the formats' detection, format.c's table) ---- */

const char *slda_reader_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int slda_reader_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

char *slda_reader_sibling(const char *path, const char *name, size_t namelen)
{
    size_t dirlen = (size_t)(slda_reader_base_name(path) - path);
    char *out = slda_xmalloc(dirlen + namelen + 1);
    memcpy(out, path, dirlen);
    memcpy(out + dirlen, name, namelen);
    out[dirlen + namelen] = '\0';
    return out;
}

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
    slda_doc_init(&rd->uci_cur);
    err = open_input(rd, path, errstr, errstr_size);
    if (err == SLDA_OK) {
        /* text lines tokenised ahead, in parallel (reader_text.c): many from a
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
