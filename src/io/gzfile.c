/* gzfile.c - transparent gzip input: a FILE* that inflates, for the document readers.
 *
 * The readers stream lines with getline from a FILE*; rather than teach each
 * format about compression, a gzip file is put behind a glibc cookie stream
 * (fopencookie) whose read function inflates, so getline, format sniffing
 * (on the decompressed first line) and line numbers work unchanged. Detection
 * is by the magic bytes 1f 8b, never by the name, so standard input and
 * files without ".gz" work too; the sniffed bytes are handed to zlib (or
 * replayed) rather than pushed back, so pipes work. Errors never crash and
 * never pass damaged bytes on silently: zlib's CRC-32 and length check at the
 * end of each member, and a stream that ends inside a member, fail the read
 * (EIO) with the reason in the caller's buffer. A stream belongs to the one
 * thread that reads it.
 */
#include "io/gzfile.h"

#include "core/slda_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define GZ_IN_BYTES 65536
#define GZ_WINDOW (15 + 16) /* 32 KiB window, gzip header and trailer only */

typedef struct gz_s {
    FILE *in;
    int owns_in;
    int inflate;            /* 1: gzip; 0: replay prefix, then copy in */
    unsigned char prefix[2]; /* bytes read while sniffing, not yet consumed */
    size_t nprefix, prefix_at;
    int in_eof;             /* in has no more bytes */
    int failed;             /* a read failed: every later read fails too */
    int member_ended;       /* the last inflate ended a member */
    unsigned long members;  /* members ended so far */
    char *why;
    size_t why_size;
    z_stream z;
    unsigned char buf[GZ_IN_BYTES];
} gz_t;

static ssize_t gz_fail(gz_t *gz, const char *fmt, const char *detail)
{
    if (!gz->failed && gz->why_size)
        snprintf(gz->why, gz->why_size, fmt, detail);
    gz->failed = 1;
    errno = EIO;
    return -1;
}

/* Next chunk of in (sniffed bytes first) into buf; 0 at the end, -1 on error. */
static ssize_t fill(gz_t *gz, unsigned char *buf, size_t size)
{
    size_t n;
    if (gz->prefix_at < gz->nprefix) {
        n = gz->nprefix - gz->prefix_at < size ? gz->nprefix - gz->prefix_at : size;
        memcpy(buf, gz->prefix + gz->prefix_at, n);
        gz->prefix_at += n;
        return (ssize_t)n;
    }
    if (gz->in_eof)
        return 0;
    n = fread(buf, 1, size, gz->in);
    if (n == 0 && ferror(gz->in))
        return -1; /* errno from the failed read */
    if (n == 0)
        gz->in_eof = 1;
    return (ssize_t)n;
}

static ssize_t gz_read(void *cookie, char *out, size_t size)
{
    gz_t *gz = cookie;
    ssize_t got;
    if (gz->failed) {
        errno = EIO;
        return -1;
    }
    if (!gz->inflate)
        return fill(gz, (unsigned char *)out, size);
    uInt want = (uInt)(size > UINT32_MAX ? UINT32_MAX : size);
    gz->z.next_out = (unsigned char *)out;
    gz->z.avail_out = want;
    while (want > 0 && gz->z.avail_out == want) { /* until some output */
        int rc;
        if (gz->z.avail_in == 0) {
            got = fill(gz, gz->buf, sizeof gz->buf);
            if (got < 0)
                return -1;
            if (got == 0) {
                if (gz->member_ended)
                    return 0; /* clean end after a whole member */
                return gz_fail(gz, "truncated gzip data: the input ends inside a compressed "
                                   "member%s", "");
            }
            gz->z.next_in = gz->buf;
            gz->z.avail_in = (uInt)got;
        }
        if (gz->member_ended) { /* more bytes after a member: the next member */
            if (inflateReset(&gz->z) != Z_OK)
                return gz_fail(gz, "corrupt gzip data: %s", "cannot restart inflate");
            gz->member_ended = 0;
        }
        rc = inflate(&gz->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            gz->member_ended = 1;
            gz->members++;
        } else if (rc == Z_DATA_ERROR && gz->members > 0 && gz->z.total_in <= 2) {
            return gz_fail(gz, "corrupt gzip data: bytes after the last member are not gzip "
                               "data (%s)", gz->z.msg ? gz->z.msg : "bad header");
        } else if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR ||
                   rc == Z_MEM_ERROR) {
            return gz_fail(gz, "corrupt gzip data: %s",
                           gz->z.msg ? gz->z.msg : rc == Z_MEM_ERROR ? "out of memory"
                                                                    : "invalid stream");
        }
    }
    return (ssize_t)(want - gz->z.avail_out);
}

static int gz_close(void *cookie)
{
    gz_t *gz = cookie;
    int rc = 0;
    if (gz->inflate)
        inflateEnd(&gz->z);
    if (gz->owns_in)
        rc = fclose(gz->in);
    free(gz);
    return rc;
}

FILE *slda_gz_open(FILE *in, int owns_in, char *why, size_t why_size)
{
    static const cookie_io_functions_t io = {gz_read, NULL, NULL, gz_close};
    int c1 = getc(in), c2;
    gz_t *gz;
    FILE *f;
    if (c1 == EOF)
        return in; /* empty, or a read error the first getline reports */
    if (c1 != 0x1f) {
        ungetc(c1, in); /* one byte of push-back is always allowed */
        return in;
    }
    c2 = getc(in);
    gz = slda_xcalloc(1, sizeof *gz);
    gz->in = in;
    gz->owns_in = owns_in;
    gz->why = why;
    gz->why_size = why_size;
    gz->prefix[gz->nprefix++] = 0x1f;
    if (c2 != EOF)
        gz->prefix[gz->nprefix++] = (unsigned char)c2;
    gz->inflate = c2 == 0x8b;
    if (gz->inflate && inflateInit2(&gz->z, GZ_WINDOW) != Z_OK) {
        free(gz);
        errno = ENOMEM;
        return NULL;
    }
    f = fopencookie(gz, "rb", io);
    if (!f) {
        int e = errno;
        if (gz->inflate)
            inflateEnd(&gz->z);
        free(gz);
        errno = e;
        return NULL;
    }
    return f;
}
