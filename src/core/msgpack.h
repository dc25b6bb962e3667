/* msgpack.h - a bounds-checked MessagePack reader: a cursor over a borrowed buffer (not installed).
 *
 * Usage (a map {"K": uint, "name": str}):
 *     slda_msgpack_t mp;
 *     uint32_t n, K;
 *     const unsigned char *s;
 *     size_t len;
 *     slda_msgpack_init(&mp, buf, 0, len, "update record: ", errstr, errstr_size);
 *     if (slda_msgpack_map(&mp, "header", &n))
 *         return mp.err;                         (errstr: "update record: header: ... at byte 0")
 *     for (uint32_t i = 0; i < n; i++) {
 *         if (slda_msgpack_str(&mp, "header key", &s, &len))
 *             return mp.err;
 *         if (slda_msgpack_eq(s, len, "K") ? slda_msgpack_u32(&mp, "K", &K)
 *                                          : slda_msgpack_skip(&mp, "header value"))
 *             return mp.err;
 *     }
 *
 * Every read checks the bytes left before it looks at them, and a declared
 * size (a string's, a container's element count) is checked against the bytes
 * left before the caller can allocate anything for it: each element takes at
 * least one byte (two for a map entry), so a count larger than that is refused
 * (4 bytes cannot ask for 96 GB, as they can of msgpack_unpack). Nothing is
 * allocated here except by slda_msgpack_strdup; strings and binary data are
 * borrowed from the buffer and live as long as it does.
 *
 * Errors. A read returns 0, or -1 after its first failure; the reader then
 * holds the failure (err, err_at, fault) and errstr reads
 * "<prefix><what>: <problem> at byte <offset>" (or "... (at byte <offset>)"
 * with paren set; snapshots have always put it so), the offset counted from
 * base. Only the first failure is reported: once err is set, every call fails
 * without reading. A value that is not there, not of the type asked for or
 * cut short leaves the cursor where it starts, and so does an integer out of
 * the range asked for and a container too deep for slda_msgpack_skip; a
 * well-formed string that is not allowed (slda_msgpack_enum's unknown name,
 * slda_msgpack_strdup's NUL byte) leaves it past the string.
 */
#ifndef SLDA_MSGPACK_H
#define SLDA_MSGPACK_H

#include "core/slda_int.h"

#include <stddef.h>
#include <stdint.h>

#define SLDA_MSGPACK_MAX_DEPTH 32 /* default nesting slda_msgpack_skip allows */

/* The type of the next value, from its first byte. */
typedef enum {
    SLDA_MSGPACK_END = 0, /* no bytes left */
    SLDA_MSGPACK_NIL,
    SLDA_MSGPACK_BOOL,
    SLDA_MSGPACK_INT,     /* any integer encoding, signed or not */
    SLDA_MSGPACK_FLOAT,   /* float32 or float64 */
    SLDA_MSGPACK_STR,
    SLDA_MSGPACK_BIN,
    SLDA_MSGPACK_ARRAY,
    SLDA_MSGPACK_MAP,
    SLDA_MSGPACK_EXT,
    SLDA_MSGPACK_RESERVED /* 0xc1, never valid */
} slda_msgpack_type_t;

/* What went wrong, for callers that word their own messages (errstr NULL). */
typedef enum {
    SLDA_MSGPACK_OK = 0,
    SLDA_MSGPACK_TRUNCATED, /* the data ends inside or before a value */
    SLDA_MSGPACK_TOO_LARGE, /* a declared length or count exceeds the bytes left */
    SLDA_MSGPACK_TYPE,      /* another type than the one asked for (0xc1 included) */
    SLDA_MSGPACK_RANGE,     /* an integer out of the range asked for; a string not allowed */
    SLDA_MSGPACK_DEPTH,     /* nested deeper than max_depth */
    SLDA_MSGPACK_CALLER     /* slda_msgpack_fail: the caller's own check */
} slda_msgpack_fault_t;

typedef struct slda_msgpack_s {
    const unsigned char *base; /* byte offsets in messages count from here */
    const unsigned char *p;    /* the next value */
    const unsigned char *end;  /* one past the last byte that may be read */
    const char *prefix;        /* put before every message, e.g. "update record: " */
    int paren;                 /* offsets as " (at byte N)" rather than " at byte N" */
    int max_depth;             /* levels slda_msgpack_skip descends, at most */
    slda_err_t code;           /* the error code of a failure: SLDA_ERR_CORRUPT unless set */
    char *errstr;              /* may be NULL */
    size_t errstr_size;
    slda_err_t err;            /* the first failure's code, SLDA_OK while there is none */
    size_t err_at;             /* its byte offset */
    slda_msgpack_fault_t fault;
} slda_msgpack_t;

/* A reader of base[from .. to), offsets counted from base. prefix (borrowed,
 * may be NULL) goes before every message; errstr may be NULL. The rest of
 * the fields can be changed after init: paren, max_depth, code. */
void slda_msgpack_init(slda_msgpack_t *mp, const void *base, size_t from, size_t to,
                       const char *prefix, char *errstr, size_t errstr_size);

/* Bytes not read yet; the offset of the cursor from base. */
static inline size_t slda_msgpack_left(const slda_msgpack_t *mp)
{
    return (size_t)(mp->end - mp->p);
}
static inline size_t slda_msgpack_pos(const slda_msgpack_t *mp)
{
    return (size_t)(mp->p - mp->base);
}
/* The first byte of the next value, -1 at the end. */
static inline int slda_msgpack_peek(const slda_msgpack_t *mp)
{
    return mp->p < mp->end ? *mp->p : -1;
}
slda_msgpack_type_t slda_msgpack_type(const slda_msgpack_t *mp);
/* "an integer", "a map", "binary data", "the end of the data", ... */
const char *slda_msgpack_type_name(slda_msgpack_type_t type);

/* Record a failure of the caller's own checks (fault SLDA_MSGPACK_CALLER) at
 * the cursor, as the reads do theirs: errstr gets prefix, the formatted
 * message and the offset. Returns -1. */
int slda_msgpack_fail(slda_msgpack_t *mp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Container headers: the element count (map: entries) into *n, the cursor on
 * the first element. what names the value in messages. */
int slda_msgpack_map(slda_msgpack_t *mp, const char *what, uint32_t *n);
int slda_msgpack_array(slda_msgpack_t *mp, const char *what, uint32_t *n);

/* A string / binary data: *s points into the buffer (borrowed), *len bytes. */
int slda_msgpack_str(slda_msgpack_t *mp, const char *what, const unsigned char **s, size_t *len);
int slda_msgpack_bin(slda_msgpack_t *mp, const char *what, const unsigned char **s, size_t *len);
/* A string copied out (malloc'ed, NUL-terminated; the caller frees it); one
 * holding a NUL byte is refused. With nullable, nil gives *out = NULL. */
int slda_msgpack_strdup(slda_msgpack_t *mp, const char *what, int nullable, char **out);
/* A string that is one of names[0 .. n): its index into *idx. */
int slda_msgpack_enum(slda_msgpack_t *mp, const char *what, const char *const *names, int n,
                      int *idx);
/* 1 when s[0 .. len) is the C string want. */
int slda_msgpack_eq(const unsigned char *s, size_t len, const char *want);

/* Integers, any encoding that holds the value: *v as a 64-bit two's
 * complement pattern and *neg whether it is negative (integer); a value >= 0
 * (uint, u32: also <= 2^32-1); a value that fits int64_t (int). */
int slda_msgpack_integer(slda_msgpack_t *mp, const char *what, uint64_t *v, int *neg);
int slda_msgpack_uint(slda_msgpack_t *mp, const char *what, uint64_t *v);
int slda_msgpack_u32(slda_msgpack_t *mp, const char *what, uint32_t *v);
int slda_msgpack_int(slda_msgpack_t *mp, const char *what, int64_t *v);
/* A number: float64, float32 or an integer (double: exactly where the
 * encoding allows; float: float32 exactly, others rounded to float). */
int slda_msgpack_double(slda_msgpack_t *mp, const char *what, double *v);
/* An array of at most max numbers into *out (malloc'ed, *n of them; the caller frees it,
 * also after a failure): more is "<what>: N values, more than MAX <unit>". */
int slda_msgpack_doubles(slda_msgpack_t *mp, const char *what, uint32_t max, const char *unit,
                         double **out, uint32_t *n);
int slda_msgpack_float(slda_msgpack_t *mp, const char *what, float *v);
int slda_msgpack_bool(slda_msgpack_t *mp, const char *what, int *v);
/* 1 (and the cursor past it) when the next value is nil, else 0; never fails. */
int slda_msgpack_nil(slda_msgpack_t *mp);

/* Skip one value of any type, containers included; a value nested more than
 * max_depth levels below the skipped one is refused (SLDA_MSGPACK_DEPTH, at
 * the non-empty container max_depth levels down). */
int slda_msgpack_skip(slda_msgpack_t *mp, const char *what);

#endif /* SLDA_MSGPACK_H */
