/* reader_input.c - what every file format's reader uses: lines, rejected records, names.
 *
 * Input is streamed line by line with getline (any line length, never the
 * whole file; a UCI file in blocks, reader_uci.c); rd->line holds the current
 * line without its line end, and rd->pending makes the next
 * slda_reader_getline return it again (format sniffing, the UCI reader's
 * look-ahead). Every rejected record is counted in rd->errors[code] exactly
 * once (slda_reader_fail) and reported as "path:line: <problem>". The
 * formats' files (reader_uci.c, reader_ldac.c, reader_text.c, reader_json.c)
 * sit on these; reader.c, which opens a file and dispatches through
 * format.c's table, sits on the formats.
 */
#include "io/reader.h"

#include "io/gzfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

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

