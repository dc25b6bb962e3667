/* reader_csv.c - CSV and TSV files with a header: each row a record, its fields by column name.
 *
 * Invariants. The first non-blank line is the header: the columns' names (quotes removed,
 * spaces around them trimmed, a UTF-8 byte order mark dropped). The record's roles are read
 * from the columns the configuration names (io/record.h: input.text.field, input.id.field,
 * input.time.field; the text may join several columns, "title,body", by a newline); opening
 * fails, naming the columns there are, when the text's column or a named time column is
 * missing, so a delimited file is never read as something else. A document's language is its
 * column input.lang.field names (missing: an error, as the time's), else a column "lang", else
 * one named "language", when the header has one; an empty value, or one longer than
 * SLDA_LANG_FIELD_MAX, leaves the language to identification.
 * CSV follows RFC 4180: fields separated by commas, a field in double quotes may hold commas,
 * line breaks and doubled quotes (""); a quote that closes before something other than a
 * comma or the line's end did not open a quoted field (the field is taken as written). TSV
 * separates by tabs; a field in quotes is unquoted when it is quoted whole, and a quote never
 * spans lines (IANA's TSV has no quoting: a text beginning with a quote stays as written). A
 * row with another number of fields than the header is rejected with its line. A row's id is
 * its id column when it has one and the row a value there, else its line number. One thread.
 */
#include "io/reader.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define CSV_NAME_MAX 64            /* a header's column name: longer is not a header */
#define CSV_RECORD_MAX (64u << 20) /* a quoted field spanning lines: at most 64 MiB of them */

typedef struct csv_s {
    char delim;
    char **cols;          /* the header's names */
    size_t ncols;
    size_t *text;         /* the text's columns, in the order named */
    size_t ntext;
    long id, time, lang, author, group; /* their columns, or -1 */
    char *rec;            /* the record's lines, joined (a quoted field may span lines) */
    size_t rlen, rcap;
    char *fbuf;           /* the fields unquoted, each NUL-terminated */
    size_t fcap;
    size_t *off, *len;    /* each field's offset and length in fbuf */
    size_t nf, fmax;
    uint64_t line0;       /* the record's first line */
} csv_t;

/* ---- splitting ---- */

static void add_field(csv_t *c, size_t off, size_t len)
{
    if (c->nf == c->fmax) {
        c->fmax = c->fmax ? 2 * c->fmax : 16;
        c->off = slda_xrealloc(c->off, c->fmax * sizeof *c->off);
        c->len = slda_xrealloc(c->len, c->fmax * sizeof *c->len);
    }
    c->off[c->nf] = off;
    c->len[c->nf++] = len;
}

/* Split s[0..n) into fields (unquoted into c->fbuf). Returns 1 when a quoted field is still
 * open at the end (CSV: the record goes on on the next line), else 0. */
static int split(csv_t *c, const char *s, size_t n)
{
    if (c->fcap < n + 1 + n / 2 + 16) {
        c->fcap = n + 1 + n / 2 + 16;
        c->fbuf = slda_xrealloc(c->fbuf, c->fcap);
    }
    c->nf = 0;
    size_t i = 0, o = 0;
    for (;;) {
        size_t start = o;
        if (i < n && s[i] == '"') { /* a quoted field, if it closes right */
            size_t j = i + 1, q = o;
            int closed = 0;
            while (j < n) {
                if (s[j] == '"') {
                    if (j + 1 < n && s[j + 1] == '"') {
                        c->fbuf[q++] = '"';
                        j += 2;
                        continue;
                    }
                    closed = 1;
                    break;
                }
                c->fbuf[q++] = s[j++];
            }
            if (!closed && c->delim == ',')
                return 1;
            if (closed && (j + 1 == n || s[j + 1] == c->delim)) {
                c->fbuf[q] = '\0';
                add_field(c, start, q - start);
                o = q + 1;
                i = j + 1;
                if (i == n)
                    return 0;
                i++; /* the delimiter */
                continue;
            }
            /* not a quoted field after all: taken as written, below */
        }
        size_t j = i;
        while (j < n && s[j] != c->delim)
            j++;
        memcpy(c->fbuf + o, s + i, j - i);
        o += j - i;
        c->fbuf[o] = '\0';
        add_field(c, start, o - start);
        o++;
        if (j == n)
            return 0;
        i = j + 1;
    }
}

/* ---- the header ---- */

static const char *trim(char *s, size_t *len)
{
    while (*len && isspace((unsigned char)s[*len - 1]))
        s[--*len] = '\0';
    while (*len && isspace((unsigned char)*s))
        s++, (*len)--;
    return s;
}

/* Is s a column name of a header: 1 to CSV_NAME_MAX characters, a letter or '_' first, then
 * letters, digits, '_', '.', '-' (and, loose: spaces inside, for TSV)? */
static int name_like(const char *s, size_t n, int loose)
{
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
        s++, n -= 2;
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n || n > CSV_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!(isalnum(ch) || ch == '_' || ch == '.' || ch == '-' || (loose && ch == ' ')))
            return 0;
    }
    return 1;
}

/* A first line that is a header of at least two such names separated by delim. */
static int header_like(const char *line, size_t len, char delim, int loose)
{
    if (len >= 3 && (unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB &&
        (unsigned char)line[2] == 0xBF)
        line += 3, len -= 3;
    size_t fields = 0, i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && line[j] != delim)
            j++;
        if (!name_like(line + i, j - i, loose))
            return 0;
        fields++;
        if (j == len)
            break;
        i = j + 1;
    }
    return fields >= 2;
}

static int csv_by_line(const char *line, size_t len, int fixed)
{
    (void)fixed;
    return header_like(line, len, ',', 0);
}

static int tsv_by_line(const char *line, size_t len, int fixed)
{
    (void)fixed;
    return memchr(line, '\t', len) && header_like(line, len, '\t', 1);
}

static int csv_by_name(const char *path, int fixed)
{
    const char *base = slda_reader_base_name(path);
    (void)fixed;
    return slda_reader_ends_with(base, ".csv") || slda_reader_ends_with(base, ".csv.gz");
}

static int tsv_by_name(const char *path, int fixed)
{
    const char *base = slda_reader_base_name(path);
    (void)fixed;
    return slda_reader_ends_with(base, ".tsv") || slda_reader_ends_with(base, ".tsv.gz") ||
           slda_reader_ends_with(base, ".tab");
}

static long column(const csv_t *c, const char *name)
{
    for (size_t i = 0; name && i < c->ncols; i++)
        if (!strcmp(c->cols[i], name))
            return (long)i;
    return -1;
}

/* "a, b, c" (the header's columns) into buf. */
static const char *columns_text(const csv_t *c, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->ncols && used + 1 < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", c->cols[i]);
        if (n < 0 || (size_t)n >= size - used) {
            snprintf(buf + (size > 4 ? size - 4 : 0), size > 4 ? 4 : size, "...");
            break;
        }
        used += (size_t)n;
    }
    return buf;
}

static void csv_close(slda_reader_t *rd)
{
    csv_t *c = rd->fmt;
    slda_reader_ahead_close(rd);
    if (!c)
        return;
    for (size_t i = 0; i < c->ncols; i++)
        free(c->cols[i]);
    free(c->cols);
    free(c->text);
    free(c->rec);
    free(c->fbuf);
    free(c->off);
    free(c->len);
    free(c);
    rd->fmt = NULL;
}

static slda_err_t csv_open(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    csv_t *c = slda_xcalloc(1, sizeof *c);
    rd->fmt = c;
    c->delim = rd->row->name[0] == 't' ? '\t' : ',';
    c->id = c->time = c->lang = c->author = c->group = -1;
    slda_err_t err = slda_reader_next_nonblank(rd, errstr, errstr_size);
    if (err == SLDA_ERR_EOF)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "reader \"%s\": no header line (a %s file starts with its columns' "
                            "names)", rd->path, rd->row->title);
    if (err != SLDA_OK)
        return err;
    char *line = rd->line;
    size_t n = rd->linelen;
    if (n >= 3 && (unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB &&
        (unsigned char)line[2] == 0xBF)
        line += 3, n -= 3;
    split(c, line, n);
    c->ncols = c->nf;
    c->cols = slda_xcalloc(c->ncols, sizeof *c->cols);
    for (size_t i = 0; i < c->ncols; i++) {
        size_t len = c->len[i];
        c->cols[i] = slda_xstrdup(trim(c->fbuf + c->off[i], &len));
    }
    char cols[600];
    const char *names = slda_record_name(&rd->rec, SLDA_FIELD_TEXT);
    char name[256];
    for (const char *p = names ? names : "text"; (p = slda_record_list_next(p, name, sizeof name));) {
        long col = column(c, name);
        if (col < 0)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "reader \"%s\": %s with the columns %s and no text column "
                                "\"%s\": name the text's column(s) with --text-field NAME[,NAME] "
                                "(input.text.field), or read the file as raw text with -f text",
                                rd->path, rd->row->title, columns_text(c, cols, sizeof cols),
                                name);
        c->text = slda_xrealloc(c->text, (c->ntext + 1) * sizeof *c->text);
        c->text[c->ntext++] = (size_t)col;
    }
    static const struct {
        slda_field_role_t role;
        const char *prop, *opt;
    } named[] = {{SLDA_FIELD_TIME, "input.time.field", "--time-field"},
                 {SLDA_FIELD_LANG, "input.lang.field", "--lang-field"},
                 {SLDA_FIELD_GROUP, "input.group.field", "--group-field"}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        const char *field = slda_record_name(&rd->rec, named[i].role);
        long col = column(c, field);
        if (field && col < 0)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "reader \"%s\": no column \"%s\" (%s, %s) among %s", rd->path,
                                field, named[i].prop, named[i].opt,
                                columns_text(c, cols, sizeof cols));
        *(named[i].role == SLDA_FIELD_TIME   ? &c->time
          : named[i].role == SLDA_FIELD_LANG ? &c->lang
                                             : &c->group) = col;
    }
    if (!slda_record_name(&rd->rec, SLDA_FIELD_LANG)) { /* optional, by its usual names */
        c->lang = column(c, "lang");
        if (c->lang < 0)
            c->lang = column(c, "language");
    }
    c->id = column(c, slda_record_name(&rd->rec, SLDA_FIELD_ID)); /* optional */
    c->author = column(c, slda_record_name(&rd->rec, SLDA_FIELD_AUTHOR)); /* model.kind=atm */
    return SLDA_OK;
}

/* ---- rows ---- */

/* The next row's fields (c->nf of them), its lines joined while a quoted field spans them. */
static slda_err_t read_row(slda_reader_t *rd, csv_t *c, char *errstr, size_t errstr_size)
{
    slda_err_t err = slda_reader_next_nonblank(rd, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    c->line0 = rd->record_line = rd->lineno;
    c->rlen = 0;
    const char *s = rd->line;
    size_t n = rd->linelen;
    while (split(c, s, n)) { /* a quoted field goes on: the next line belongs to it */
        if (c->rlen == 0) {
            if (c->rcap < n + 1) {
                c->rcap = 2 * n + 64;
                c->rec = slda_xrealloc(c->rec, c->rcap);
            }
            memcpy(c->rec, rd->line, n);
            c->rlen = n;
        }
        int r = slda_reader_getline(rd);
        if (r < 0)
            return slda_reader_io_error(rd, errstr, errstr_size);
        if (r == 0 || c->rlen + rd->linelen + 1 > CSV_RECORD_MAX) {
            rd->lineno = c->line0;
            return slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                                    "a quoted field opened here is not closed%s",
                                    r == 0 ? " before the end of the file" : " within 64 MiB");
        }
        if (c->rcap < c->rlen + rd->linelen + 2) {
            c->rcap = 2 * (c->rlen + rd->linelen) + 64;
            c->rec = slda_xrealloc(c->rec, c->rcap);
        }
        c->rec[c->rlen++] = '\n';
        memcpy(c->rec + c->rlen, rd->line, rd->linelen);
        c->rlen += rd->linelen;
        s = c->rec;
        n = c->rlen;
    }
    if (c->nf != c->ncols) {
        uint64_t at = rd->lineno;
        rd->lineno = c->line0;
        slda_err_t e = slda_reader_fail(rd, SLDA_ERR_PARSE, errstr, errstr_size,
                                        "%zu field%s, the header has %zu", c->nf,
                                        c->nf == 1 ? "" : "s", c->ncols);
        rd->lineno = at;
        return e;
    }
    return SLDA_OK;
}

/* The row's fields into the record, by role. */
static void fill_record(slda_reader_t *rd, csv_t *c)
{
    slda_record_t *rec = &rd->rec;
    slda_record_reset(rec);
    size_t tlen = c->ntext - 1;
    for (size_t i = 0; i < c->ntext; i++)
        tlen += c->len[c->text[i]];
    char *t = slda_record_room(rec, tlen + 1);
    size_t at = 0;
    for (size_t i = 0; i < c->ntext; i++) {
        if (i)
            t[at++] = '\n';
        memcpy(t + at, c->fbuf + c->off[c->text[i]], c->len[c->text[i]]);
        at += c->len[c->text[i]];
    }
    t[at] = '\0';
    rec->field[SLDA_FIELD_TEXT] = (slda_field_t){slda_record_take(rec, tlen + 1), tlen};
    if (c->id >= 0 && c->len[c->id]) {
        size_t n = c->len[c->id];
        rec->field[SLDA_FIELD_ID] = (slda_field_t){slda_record_copy(rec, c->fbuf + c->off[c->id], n),
                                                   n};
    } else {
        char id[24];
        int n = snprintf(id, sizeof id, "%llu", (unsigned long long)c->line0);
        rec->field[SLDA_FIELD_ID] = (slda_field_t){slda_record_copy(rec, id, (size_t)n),
                                                   (size_t)n};
    }
    if (c->time >= 0 && c->len[c->time]) {
        size_t n = c->len[c->time];
        rec->field[SLDA_FIELD_TIME] =
            (slda_field_t){slda_record_copy(rec, c->fbuf + c->off[c->time], n), n};
    }
    if (c->lang >= 0 && c->len[c->lang] && c->len[c->lang] <= SLDA_LANG_FIELD_MAX) {
        size_t n = c->len[c->lang];
        rec->field[SLDA_FIELD_LANG] =
            (slda_field_t){slda_record_copy(rec, c->fbuf + c->off[c->lang], n), n};
    }
    if (c->group >= 0 && c->len[c->group]) {
        size_t n = c->len[c->group];
        rec->field[SLDA_FIELD_GROUP] =
            (slda_field_t){slda_record_copy(rec, c->fbuf + c->off[c->group], n), n};
    }
    if (c->author >= 0 && c->len[c->author]) {
        size_t n = c->len[c->author];
        rec->field[SLDA_FIELD_AUTHOR] =
            (slda_field_t){slda_record_copy(rec, c->fbuf + c->off[c->author], n), n};
    }
}

static slda_err_t csv_next_record(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    csv_t *c = rd->fmt;
    char msg[512];
    slda_err_t err = read_row(rd, c, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    fill_record(rd, c);
    int64_t ms;
    if (c->time >= 0 && (err = slda_record_time(&rd->rec, &ms, msg, sizeof msg)) != SLDA_OK) {
        uint64_t at = rd->lineno;
        rd->lineno = c->line0;
        err = slda_reader_fail(rd, err, errstr, errstr_size, "%s", msg);
        rd->lineno = at;
    }
    return err;
}

/* Their rows of format.c's table. */
const slda_format_row_t slda_format_csv = {
    .name = "csv", .title = "CSV", .file = SLDA_FORMAT_CSV, .fields = 1,
    .by_name = csv_by_name, .by_line = csv_by_line, .open = csv_open, .next = slda_reader_ahead_next,
    .next_record = csv_next_record, .close = csv_close};
const slda_format_row_t slda_format_tsv = {
    .name = "tsv", .title = "TSV", .file = SLDA_FORMAT_TSV, .fields = 1,
    .by_name = tsv_by_name, .by_line = tsv_by_line, .open = csv_open, .next = slda_reader_ahead_next,
    .next_record = csv_next_record, .close = csv_close};
