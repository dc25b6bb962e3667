/* msgpack.c - the bounds-checked MessagePack reader every decoder of outside bytes walks.
 *
 * Invariants. mp->p never passes mp->end: every read compares what it needs
 * (its tag, a length field, a payload, a container's minimum size) with
 * slda_msgpack_left() before it touches a byte or moves the cursor, and a
 * read that fails puts the cursor back where the value starts, so err_at
 * points at it (for nesting, at the container whose elements would lie too
 * deep). A declared count is refused when its elements could not fit
 * in the bytes left at one byte each (two per map entry), which bounds
 * anything a caller allocates from it by the input's size. Skipping is
 * recursive, bounded by max_depth. Only the first failure is kept (later
 * calls fail at once), so a message names the first defect and not a
 * consequence of it. Nothing here allocates except slda_msgpack_strdup, and
 * nothing prints; a reader belongs to one thread. Snapshots (io/snapshot*.c)
 * and update records (engine/update_codec.c) read through it.
 */
#include "core/msgpack.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void slda_msgpack_init(slda_msgpack_t *mp, const void *base, size_t from, size_t to,
                       const char *prefix, char *errstr, size_t errstr_size)
{
    memset(mp, 0, sizeof *mp);
    mp->base = base;
    mp->p = mp->base + from;
    mp->end = mp->base + (to < from ? from : to);
    mp->prefix = prefix ? prefix : "";
    mp->max_depth = SLDA_MSGPACK_MAX_DEPTH;
    mp->code = SLDA_ERR_CORRUPT;
    mp->errstr = errstr;
    mp->errstr_size = errstr ? errstr_size : 0;
}

static int fault_v(slda_msgpack_t *mp, slda_msgpack_fault_t kind, const char *fmt, va_list ap)
{
    char msg[400];
    if (mp->err)
        return -1;
    vsnprintf(msg, sizeof msg, fmt, ap);
    mp->fault = kind;
    mp->err_at = slda_msgpack_pos(mp);
    mp->err = slda_set_err(mp->errstr, mp->errstr_size, mp->code,
                           mp->paren ? "%s%s (at byte %zu)" : "%s%s at byte %zu", mp->prefix,
                           msg, mp->err_at);
    return -1;
}

__attribute__((format(printf, 3, 4))) static int fault(slda_msgpack_t *mp,
                                                       slda_msgpack_fault_t kind,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_v(mp, kind, fmt, ap);
    va_end(ap);
    return -1;
}

int slda_msgpack_fail(slda_msgpack_t *mp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_v(mp, SLDA_MSGPACK_CALLER, fmt, ap);
    va_end(ap);
    return -1;
}

slda_msgpack_type_t slda_msgpack_type(const slda_msgpack_t *mp)
{
    int tag = slda_msgpack_peek(mp);
    if (tag < 0)
        return SLDA_MSGPACK_END;
    if (tag <= 0x7f || tag >= 0xe0 || (tag >= 0xcc && tag <= 0xd3))
        return SLDA_MSGPACK_INT;
    if (tag <= 0x8f || tag == 0xde || tag == 0xdf)
        return SLDA_MSGPACK_MAP;
    if (tag <= 0x9f || tag == 0xdc || tag == 0xdd)
        return SLDA_MSGPACK_ARRAY;
    if (tag <= 0xbf || (tag >= 0xd9 && tag <= 0xdb))
        return SLDA_MSGPACK_STR;
    switch (tag) {
    case 0xc0: return SLDA_MSGPACK_NIL;
    case 0xc2: case 0xc3: return SLDA_MSGPACK_BOOL;
    case 0xc4: case 0xc5: case 0xc6: return SLDA_MSGPACK_BIN;
    case 0xca: case 0xcb: return SLDA_MSGPACK_FLOAT;
    case 0xc1: return SLDA_MSGPACK_RESERVED;
    default: return SLDA_MSGPACK_EXT; /* 0xc7..0xc9, 0xd4..0xd8 */
    }
}

const char *slda_msgpack_type_name(slda_msgpack_type_t type)
{
    switch (type) {
    case SLDA_MSGPACK_END: return "the end of the data";
    case SLDA_MSGPACK_NIL: return "nil";
    case SLDA_MSGPACK_BOOL: return "a boolean";
    case SLDA_MSGPACK_INT: return "an integer";
    case SLDA_MSGPACK_FLOAT: return "a float";
    case SLDA_MSGPACK_STR: return "a string";
    case SLDA_MSGPACK_BIN: return "binary data";
    case SLDA_MSGPACK_ARRAY: return "an array";
    case SLDA_MSGPACK_MAP: return "a map";
    case SLDA_MSGPACK_EXT: return "an extension value";
    case SLDA_MSGPACK_RESERVED: return "the reserved byte 0xc1";
    }
    return "?";
}

static int type_fail(slda_msgpack_t *mp, const char *what, const char *want)
{
    return fault(mp, SLDA_MSGPACK_TYPE, "%s: expected %s, found %s", what, want,
                 slda_msgpack_type_name(slda_msgpack_type(mp)));
}

static uint64_t get_be(const unsigned char *src, unsigned nbytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++)
        v = (v << 8) | src[i];
    return v;
}

/* Consume the tag byte and the nbytes big-endian length or value after it. */
static int tagged(slda_msgpack_t *mp, const char *what, unsigned nbytes, uint64_t *v)
{
    *v = 0;
    if (mp->err)
        return -1;
    if (slda_msgpack_left(mp) < 1 + (size_t)nbytes)
        return fault(mp, SLDA_MSGPACK_TRUNCATED, "%s: data ends inside a value", what);
    *v = get_be(mp->p + 1, nbytes);
    mp->p += 1 + nbytes;
    return 0;
}

int slda_msgpack_integer(slda_msgpack_t *mp, const char *what, uint64_t *v, int *neg)
{
    int tag = slda_msgpack_peek(mp);
    *neg = 0;
    *v = 0;
    if (mp->err)
        return -1;
    if (tag >= 0 && tag <= 0x7f) {
        mp->p++;
        *v = (uint64_t)tag;
        return 0;
    }
    if (tag >= 0xe0) {
        mp->p++;
        *v = (uint64_t)(int64_t)(int8_t)tag;
        *neg = 1;
        return 0;
    }
    if (tag >= 0xcc && tag <= 0xcf)
        return tagged(mp, what, 1u << (tag - 0xcc), v);
    if (tag >= 0xd0 && tag <= 0xd3) {
        unsigned nbytes = 1u << (tag - 0xd0);
        uint64_t x;
        int64_t s;
        if (tagged(mp, what, nbytes, &x))
            return -1;
        s = nbytes == 1 ? (int8_t)x : nbytes == 2 ? (int16_t)x
          : nbytes == 4 ? (int32_t)x : (int64_t)x;
        *v = (uint64_t)s;
        *neg = s < 0;
        return 0;
    }
    return type_fail(mp, what, "an integer");
}

int slda_msgpack_uint(slda_msgpack_t *mp, const char *what, uint64_t *v)
{
    int neg;
    const unsigned char *at = mp->p;
    if (slda_msgpack_integer(mp, what, v, &neg))
        return -1;
    if (neg) {
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_RANGE, "%s: %" PRId64 " is negative", what, (int64_t)*v);
    }
    return 0;
}

int slda_msgpack_u32(slda_msgpack_t *mp, const char *what, uint32_t *v)
{
    uint64_t x;
    const unsigned char *at = mp->p;
    if (slda_msgpack_uint(mp, what, &x))
        return -1;
    if (x > UINT32_MAX) {
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_RANGE, "%s: %" PRIu64 " is over 2^32-1", what, x);
    }
    *v = (uint32_t)x;
    return 0;
}

int slda_msgpack_int(slda_msgpack_t *mp, const char *what, int64_t *v)
{
    int neg;
    uint64_t x;
    const unsigned char *at = mp->p;
    if (slda_msgpack_integer(mp, what, &x, &neg))
        return -1;
    if (!neg && x > INT64_MAX) {
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_RANGE, "%s: %" PRIu64 " is over 2^63-1", what, x);
    }
    *v = (int64_t)x;
    return 0;
}

int slda_msgpack_double(slda_msgpack_t *mp, const char *what, double *v)
{
    int tag = slda_msgpack_peek(mp);
    uint64_t x;
    if (tag == 0xcb) {
        if (tagged(mp, what, 8, &x))
            return -1;
        memcpy(v, &x, sizeof *v);
        return 0;
    }
    if (tag == 0xca) {
        uint32_t u;
        float f;
        if (tagged(mp, what, 4, &x))
            return -1;
        u = (uint32_t)x;
        memcpy(&f, &u, sizeof f);
        *v = f;
        return 0;
    }
    if (slda_msgpack_type(mp) == SLDA_MSGPACK_INT) {
        int neg;
        if (slda_msgpack_integer(mp, what, &x, &neg))
            return -1;
        *v = neg ? (double)(int64_t)x : (double)x;
        return 0;
    }
    return type_fail(mp, what, "a number");
}

int slda_msgpack_doubles(slda_msgpack_t *mp, const char *what, uint32_t max, const char *unit,
                         double **out, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > max)
        return slda_msgpack_fail(mp, "%s: %u values, more than %u %s", what, *n, max, unit);
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_double(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

int slda_msgpack_float(slda_msgpack_t *mp, const char *what, float *v)
{
    double d;
    if (slda_msgpack_double(mp, what, &d))
        return -1;
    *v = (float)d; /* a float32 went to double exactly and comes back the same */
    return 0;
}

int slda_msgpack_bool(slda_msgpack_t *mp, const char *what, int *v)
{
    int tag = slda_msgpack_peek(mp);
    if (tag != 0xc2 && tag != 0xc3)
        return type_fail(mp, what, "a boolean");
    if (mp->err)
        return -1;
    mp->p++;
    *v = tag == 0xc3;
    return 0;
}

int slda_msgpack_nil(slda_msgpack_t *mp)
{
    if (mp->err || slda_msgpack_peek(mp) != 0xc0)
        return 0;
    mp->p++;
    return 1;
}

/* A length-prefixed value whose bytes follow (str 8/16/32, bin): borrowed. */
static int bytes(slda_msgpack_t *mp, const char *what, unsigned nbytes, const unsigned char **s,
                 size_t *len)
{
    const unsigned char *at = mp->p;
    uint64_t n;
    if (tagged(mp, what, nbytes, &n))
        return -1;
    if (n > slda_msgpack_left(mp)) {
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_TOO_LARGE,
                     "%s: length %" PRIu64 " runs past the end of the data", what, n);
    }
    *s = mp->p;
    *len = (size_t)n;
    mp->p += n;
    return 0;
}

int slda_msgpack_str(slda_msgpack_t *mp, const char *what, const unsigned char **s, size_t *len)
{
    int tag = slda_msgpack_peek(mp);
    *s = NULL;
    *len = 0;
    if (mp->err)
        return -1;
    if (tag >= 0xa0 && tag <= 0xbf) {
        size_t n = (size_t)(tag & 0x1f);
        if (n > slda_msgpack_left(mp) - 1)
            return fault(mp, SLDA_MSGPACK_TOO_LARGE, "%s: string runs past the end of the data",
                         what);
        *s = mp->p + 1;
        *len = n;
        mp->p += 1 + n;
        return 0;
    }
    if (tag >= 0xd9 && tag <= 0xdb)
        return bytes(mp, what, 1u << (tag - 0xd9), s, len);
    return type_fail(mp, what, "a string");
}

int slda_msgpack_bin(slda_msgpack_t *mp, const char *what, const unsigned char **s, size_t *len)
{
    int tag = slda_msgpack_peek(mp);
    *s = NULL;
    *len = 0;
    if (tag >= 0xc4 && tag <= 0xc6)
        return bytes(mp, what, 1u << (tag - 0xc4), s, len);
    return type_fail(mp, what, "binary data");
}

int slda_msgpack_eq(const unsigned char *s, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(s, want, len) == 0;
}

int slda_msgpack_strdup(slda_msgpack_t *mp, const char *what, int nullable, char **out)
{
    const unsigned char *s;
    size_t len;
    *out = NULL;
    if (nullable && slda_msgpack_nil(mp))
        return 0;
    if (slda_msgpack_str(mp, what, &s, &len))
        return -1;
    if (memchr(s, '\0', len))
        return fault(mp, SLDA_MSGPACK_RANGE, "%s: string holds a NUL byte", what);
    *out = slda_xstrndup((const char *)s, len);
    return 0;
}

int slda_msgpack_enum(slda_msgpack_t *mp, const char *what, const char *const *names, int n,
                      int *idx)
{
    const unsigned char *s;
    size_t len;
    *idx = 0;
    if (slda_msgpack_str(mp, what, &s, &len))
        return -1;
    for (int i = 0; i < n; i++) {
        if (slda_msgpack_eq(s, len, names[i])) {
            *idx = i;
            return 0;
        }
    }
    return fault(mp, SLDA_MSGPACK_RANGE, "%s: unknown value \"%.*s\"", what,
                 (int)(len > 40 ? 40 : len), (const char *)s);
}

/* Array and map headers: the count is refused when its elements could not fit. */
static int container(slda_msgpack_t *mp, const char *what, int map, uint32_t *n)
{
    int tag = slda_msgpack_peek(mp);
    int fix = map ? 0x80 : 0x90, big = map ? 0xde : 0xdc;
    const unsigned char *at = mp->p;
    uint64_t x;
    if (mp->err)
        return -1;
    if (tag >= fix && tag <= fix + 0x0f) {
        mp->p++;
        x = (uint64_t)(tag & 0x0f);
    } else if (tag == big || tag == big + 1) {
        if (tagged(mp, what, tag == big ? 2 : 4, &x))
            return -1;
    } else {
        return type_fail(mp, what, map ? "a map" : "an array");
    }
    if (x * (map ? 2 : 1) > slda_msgpack_left(mp)) {
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_TOO_LARGE,
                     "%s: %" PRIu64 " entries cannot fit in the %zu bytes left", what, x,
                     slda_msgpack_left(mp));
    }
    *n = (uint32_t)x;
    return 0;
}

int slda_msgpack_map(slda_msgpack_t *mp, const char *what, uint32_t *n)
{
    return container(mp, what, 1, n);
}

int slda_msgpack_array(slda_msgpack_t *mp, const char *what, uint32_t *n)
{
    return container(mp, what, 0, n);
}

static int advance(slda_msgpack_t *mp, const char *what, size_t n)
{
    if (n > slda_msgpack_left(mp))
        return fault(mp, SLDA_MSGPACK_TRUNCATED, "%s: value runs past the end of the data", what);
    mp->p += n;
    return 0;
}

static int skip(slda_msgpack_t *mp, const char *what, int depth)
{
    int tag = slda_msgpack_peek(mp);
    const unsigned char *s;
    size_t len;
    uint64_t x;
    uint32_t n = 0; /* set by container() before any use; gcc cannot tell */
    if (mp->err)
        return -1;
    if (tag < 0)
        return fault(mp, SLDA_MSGPACK_TRUNCATED, "%s: data ends before a value", what);
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3)
        return advance(mp, what, 1);
    if ((tag >= 0xa0 && tag <= 0xbf) || (tag >= 0xd9 && tag <= 0xdb))
        return slda_msgpack_str(mp, what, &s, &len);
    if (tag >= 0xc4 && tag <= 0xc6)
        return slda_msgpack_bin(mp, what, &s, &len);
    if (tag >= 0xcc && tag <= 0xd3)
        return advance(mp, what, 1 + ((size_t)1 << ((tag - 0xcc) & 3)));
    if (tag == 0xca || tag == 0xcb)
        return advance(mp, what, tag == 0xca ? 5 : 9);
    if (tag >= 0xd4 && tag <= 0xd8) /* fixext: tag, type, 1..16 bytes */
        return advance(mp, what, 2 + ((size_t)1 << (tag - 0xd4)));
    if (tag >= 0xc7 && tag <= 0xc9) { /* ext 8/16/32: tag, length, type, data */
        const unsigned char *at = mp->p;
        if (tagged(mp, what, 1u << (tag - 0xc7), &x))
            return -1;
        if (x >= slda_msgpack_left(mp)) { /* the type byte, then x bytes */
            mp->p = at;
            return fault(mp, SLDA_MSGPACK_TOO_LARGE,
                         "%s: length %" PRIu64 " runs past the end of the data", what, x);
        }
        mp->p += 1 + x;
        return 0;
    }
    if (tag == 0xc1)
        return fault(mp, SLDA_MSGPACK_TYPE, "%s: the reserved byte 0xc1", what);
    int map = (tag >= 0x80 && tag <= 0x8f) || tag == 0xde || tag == 0xdf;
    const unsigned char *at = mp->p;
    if (container(mp, what, map, &n))
        return -1;
    if (n > 0 && depth >= mp->max_depth) { /* its elements would lie deeper */
        mp->p = at;
        return fault(mp, SLDA_MSGPACK_DEPTH, "%s: values nested deeper than %d", what,
                     mp->max_depth);
    }
    x = map ? 2 * (uint64_t)n : n;
    for (uint64_t i = 0; i < x; i++)
        if (skip(mp, what, depth + 1))
            return -1;
    return 0;
}

int slda_msgpack_skip(slda_msgpack_t *mp, const char *what)
{
    return skip(mp, what, 0);
}
