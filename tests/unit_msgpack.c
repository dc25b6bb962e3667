/* unit_msgpack.c - the MessagePack reader: every type and encoding, truncation at every byte, hostile sizes, nesting.
 *
 * Inputs are read against a guard page (picohttpparser's test): the bytes end
 * where an inaccessible page begins, so a read past the end crashes the test
 * instead of passing unnoticed. Streams come from msgpack-c's packer (what
 * the snapshot and update writers use) and from hand-written bytes for the
 * encodings the packer never chooses (str 8 for short strings, non-minimal
 * integers, float32, ext).
 */
#include "core/msgpack.h"
#include "testutil.h"

#include <msgpack.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char err[512];

/* ---- guard page ---- */

static unsigned char *guard_base;
static size_t guard_page;

/* A copy of buf[0..len) that ends where a PROT_NONE page begins. */
static const unsigned char *guarded(const void *buf, size_t len)
{
    if (!guard_base) {
        guard_page = (size_t)sysconf(_SC_PAGESIZE);
        guard_base = mmap(NULL, 512 * guard_page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (guard_base == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        mprotect(guard_base + 511 * guard_page, guard_page, PROT_NONE);
    }
    if (len > 511 * guard_page) {
        fprintf(stderr, "guarded: %zu bytes is too long\n", len);
        exit(1);
    }
    unsigned char *dst = guard_base + 511 * guard_page - len;
    if (len)
        memcpy(dst, buf, len);
    return dst;
}

static void init(slda_msgpack_t *mp, const void *buf, size_t len, const char *prefix)
{
    err[0] = '\0';
    slda_msgpack_init(mp, guarded(buf, len), 0, len, prefix, err, sizeof err);
}

/* ---- a byte writer for hand-made streams ---- */

typedef struct {
    unsigned char b[4096];
    size_t n;
} bytes_t;

static void put(bytes_t *o, const char *s, size_t n)
{
    memcpy(o->b + o->n, s, n);
    o->n += n;
}
#define PUT(o, lit) put(o, lit, sizeof lit - 1)

/* ---- every type, read with the typed reads ---- */

/* Read one value of any type with the read for its type, containers by
 * their elements; -1 at the first failure. */
static int walk(slda_msgpack_t *mp, int depth)
{
    const unsigned char *s;
    size_t len;
    uint32_t n;
    uint64_t u;
    int neg, b;
    double d;
    if (depth > 40)
        return -1;
    switch (slda_msgpack_type(mp)) {
    case SLDA_MSGPACK_NIL: return slda_msgpack_nil(mp) ? 0 : -1;
    case SLDA_MSGPACK_BOOL: return slda_msgpack_bool(mp, "bool", &b);
    case SLDA_MSGPACK_INT: return slda_msgpack_integer(mp, "int", &u, &neg);
    case SLDA_MSGPACK_FLOAT: return slda_msgpack_double(mp, "float", &d);
    case SLDA_MSGPACK_STR: return slda_msgpack_str(mp, "str", &s, &len);
    case SLDA_MSGPACK_BIN: return slda_msgpack_bin(mp, "bin", &s, &len);
    case SLDA_MSGPACK_ARRAY:
        if (slda_msgpack_array(mp, "array", &n))
            return -1;
        for (uint32_t i = 0; i < n; i++)
            if (walk(mp, depth + 1))
                return -1;
        return 0;
    case SLDA_MSGPACK_MAP:
        if (slda_msgpack_map(mp, "map", &n))
            return -1;
        for (uint32_t i = 0; i < 2 * n; i++)
            if (walk(mp, depth + 1))
                return -1;
        return 0;
    case SLDA_MSGPACK_EXT: return slda_msgpack_skip(mp, "ext");
    case SLDA_MSGPACK_END: return slda_msgpack_fail(mp, "walk: the end");
    case SLDA_MSGPACK_RESERVED: return slda_msgpack_skip(mp, "reserved");
    }
    return -1;
}

/* Every encoding of the format, hand-written, as one array. */
static void all_encodings(bytes_t *o)
{
    o->n = 0;
    PUT(o, "\xdc\x00\x27");                   /* array 16 of 39 */
    PUT(o, "\x05\xcc\xc8\xcd\x12\x34\xce\x12\x34\x56\x78");             /* 5, 200, ... */
    PUT(o, "\xcf\x01\x02\x03\x04\x05\x06\x07\x08");                     /* uint 64 */
    PUT(o, "\xff\xd0\x80\xd1\x80\x00\xd2\x80\x00\x00\x00");             /* -1, -128, ... */
    PUT(o, "\xd3\x80\x00\x00\x00\x00\x00\x00\x00");                     /* int64 min */
    PUT(o, "\xca\x3f\xc0\x00\x00\xcb\x40\x09\x21\xfb\x54\x44\x2d\x18"); /* 1.5f, pi */
    PUT(o, "\xc0\xc2\xc3");                                             /* nil, false, true */
    PUT(o, "\xa3" "abc\xd9\x02" "de\xda\x00\x01" "f\xdb\x00\x00\x00\x00"); /* str */
    PUT(o, "\xc4\x01\x07\xc5\x00\x00\xc6\x00\x00\x00\x02\x08\x09");     /* bin */
    PUT(o, "\x92\x01\x02\xdc\x00\x00\xdd\x00\x00\x00\x01\xc0");         /* arrays */
    PUT(o, "\x81\xa1k\x01\xde\x00\x00\xdf\x00\x00\x00\x01\x01\x02");    /* maps */
    PUT(o, "\xd4\x01\xaa\xd5\x01\xaa\xbb\xd6\x01\x00\x00\x00\x00");     /* fixext 1, 2, 4 */
    PUT(o, "\xd7\x01\x00\x00\x00\x00\x00\x00\x00\x00");                 /* fixext 8 */
    PUT(o, "\xd8\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00");
    PUT(o, "\xc7\x02\x05xy\xc8\x00\x01\x05z\xc9\x00\x00\x00\x00\x05"); /* ext 8, 16, 32 */
    PUT(o, "\x80\x90\xa0");                                             /* empty map, array, str */
}

static void test_types(void)
{
    slda_msgpack_t mp;
    bytes_t o;
    uint64_t u;
    int64_t i64;
    uint32_t n, u32;
    int neg, b;
    double d;
    float f;
    const unsigned char *s;
    size_t len;
    all_encodings(&o);
    init(&mp, o.b, o.n, "t: ");
    CHECK_INT(slda_msgpack_array(&mp, "all", &n), 0);
    CHECK_EQ(n, 39);
    CHECK_INT(slda_msgpack_u32(&mp, "a", &u32), 0);
    CHECK_EQ(u32, 5);
    CHECK_INT(slda_msgpack_u32(&mp, "a", &u32), 0);
    CHECK_EQ(u32, 200);
    CHECK_INT(slda_msgpack_uint(&mp, "a", &u), 0);
    CHECK_EQ(u, 0x1234);
    CHECK_INT(slda_msgpack_u32(&mp, "a", &u32), 0);
    CHECK_EQ(u32, 0x12345678);
    CHECK_INT(slda_msgpack_uint(&mp, "a", &u), 0);
    CHECK_EQ(u, 0x0102030405060708ull);
    CHECK_INT(slda_msgpack_int(&mp, "a", &i64), 0);
    CHECK_EQ(i64, -1);
    CHECK_INT(slda_msgpack_int(&mp, "a", &i64), 0);
    CHECK_EQ(i64, -128);
    CHECK_INT(slda_msgpack_int(&mp, "a", &i64), 0);
    CHECK_EQ(i64, -32768);
    CHECK_INT(slda_msgpack_integer(&mp, "a", &u, &neg), 0);
    CHECK_EQ((int64_t)u, INT32_MIN);
    CHECK_EQ(neg, 1);
    CHECK_INT(slda_msgpack_int(&mp, "a", &i64), 0);
    CHECK_EQ(i64, INT64_MIN);
    CHECK_INT(slda_msgpack_float(&mp, "a", &f), 0);
    CHECK_EQ(f, 1.5f);
    CHECK_INT(slda_msgpack_double(&mp, "a", &d), 0);
    CHECK_EQ(d, 3.141592653589793);
    CHECK_EQ(slda_msgpack_type(&mp), SLDA_MSGPACK_NIL);
    CHECK_EQ(slda_msgpack_nil(&mp), 1);
    CHECK_EQ(slda_msgpack_nil(&mp), 0); /* not nil: nothing consumed */
    CHECK_INT(slda_msgpack_bool(&mp, "a", &b), 0);
    CHECK_EQ(b, 0);
    CHECK_INT(slda_msgpack_bool(&mp, "a", &b), 0);
    CHECK_EQ(b, 1);
    CHECK_INT(slda_msgpack_str(&mp, "a", &s, &len), 0);
    CHECK_TRUE(slda_msgpack_eq(s, len, "abc"), "%.*s", (int)len, (const char *)s);
    CHECK_INT(slda_msgpack_str(&mp, "a", &s, &len), 0);
    CHECK_TRUE(slda_msgpack_eq(s, len, "de"), "%.*s", (int)len, (const char *)s);
    CHECK_INT(slda_msgpack_str(&mp, "a", &s, &len), 0);
    CHECK_TRUE(slda_msgpack_eq(s, len, "f"), "%.*s", (int)len, (const char *)s);
    CHECK_INT(slda_msgpack_str(&mp, "a", &s, &len), 0);
    CHECK_EQ(len, 0);
    CHECK_INT(slda_msgpack_bin(&mp, "a", &s, &len), 0);
    CHECK_EQ(len, 1);
    CHECK_EQ(s[0], 7);
    CHECK_INT(slda_msgpack_bin(&mp, "a", &s, &len), 0);
    CHECK_EQ(len, 0);
    CHECK_INT(slda_msgpack_bin(&mp, "a", &s, &len), 0);
    CHECK_EQ(len, 2);
    CHECK_EQ(s[1], 9);
    CHECK_INT(slda_msgpack_array(&mp, "a", &n), 0);
    CHECK_EQ(n, 2);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_array(&mp, "a", &n), 0);
    CHECK_EQ(n, 0);
    CHECK_INT(slda_msgpack_array(&mp, "a", &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(slda_msgpack_nil(&mp), 1);
    CHECK_INT(slda_msgpack_map(&mp, "a", &n), 0);
    CHECK_EQ(n, 1);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_map(&mp, "a", &n), 0);
    CHECK_EQ(n, 0);
    CHECK_INT(slda_msgpack_map(&mp, "a", &n), 0);
    CHECK_EQ(n, 1);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    for (int k = 0; k < 8; k++) { /* fixext 1..16, ext 8/16/32 */
        CHECK_EQ(slda_msgpack_type(&mp), SLDA_MSGPACK_EXT);
        CHECK_INT(slda_msgpack_skip(&mp, "ext"), 0);
    }
    CHECK_INT(slda_msgpack_map(&mp, "a", &n), 0);
    CHECK_INT(slda_msgpack_array(&mp, "a", &n), 0);
    CHECK_INT(slda_msgpack_str(&mp, "a", &s, &len), 0);
    CHECK_EQ(slda_msgpack_left(&mp), 0);
    CHECK_EQ(slda_msgpack_type(&mp), SLDA_MSGPACK_END);
    CHECK_INT(mp.err, SLDA_OK);
    CHECK_STR(err, "");

    /* the whole stream again, by walk and by skip */
    init(&mp, o.b, o.n, "t: ");
    CHECK_INT(walk(&mp, 0), 0);
    CHECK_EQ(slda_msgpack_left(&mp), 0);
    init(&mp, o.b, o.n, "t: ");
    CHECK_INT(slda_msgpack_skip(&mp, "all"), 0);
    CHECK_EQ(slda_msgpack_left(&mp), 0);
    CHECK_STR(err, "");

    /* numbers read as doubles; integer conversions */
    static const char nums[] = "\x07\xff\xcd\x01\x00\xd3\xff\xff\xff\xff\xff\xff\xff\xfe";
    init(&mp, nums, sizeof nums - 1, NULL);
    double want[] = {7, -1, 256, -2};
    for (int k = 0; k < 4; k++) {
        CHECK_INT(slda_msgpack_double(&mp, "n", &d), 0);
        CHECK_EQ(d, want[k]);
    }
    /* a positive signed encoding is a uint; enum; strdup */
    static const char misc[] = "\xd0\x05\xa2on\xa3off\xa2zz\xc0\xa2hi";
    init(&mp, misc, sizeof misc - 1, "m: ");
    CHECK_INT(slda_msgpack_uint(&mp, "u", &u), 0);
    CHECK_EQ(u, 5);
    static const char *const names[] = {"off", "on"};
    int idx;
    CHECK_INT(slda_msgpack_enum(&mp, "e", names, 2, &idx), 0);
    CHECK_EQ(idx, 1);
    CHECK_INT(slda_msgpack_enum(&mp, "e", names, 2, &idx), 0);
    CHECK_EQ(idx, 0);
    CHECK_INT(slda_msgpack_enum(&mp, "e", names, 2, &idx), -1);
    CHECK_STR(err, "m: e: unknown value \"zz\" at byte 12"); /* past the string */
    init(&mp, misc + 12, 4, NULL);
    char *dup = (char *)"x";
    CHECK_INT(slda_msgpack_strdup(&mp, "d", 1, &dup), 0);
    CHECK_NULL(dup);
    CHECK_INT(slda_msgpack_strdup(&mp, "d", 0, &dup), 0);
    CHECK_STR(dup, "hi");
    free(dup);
    static const char nul[] = "\xa3" "a\0b";
    init(&mp, nul, sizeof nul - 1, "n: ");
    CHECK_INT(slda_msgpack_strdup(&mp, "d", 0, &dup), -1);
    CHECK_NULL(dup);
    CHECK_STR(err, "n: d: string holds a NUL byte at byte 4");
}

/* msgpack-c's packer writes it, the reader reads it back. */
static void test_packer(void)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    slda_msgpack_t mp;
    static const uint64_t us[] = {0, 127, 128, 255, 256, 65535, 65536, 4294967295ull,
                                  4294967296ull, UINT64_MAX};
    static const int64_t is[] = {-1, -32, -33, -128, -129, -32768, -32769, INT32_MIN,
                                 (int64_t)INT32_MIN - 1, INT64_MIN, INT64_MAX};
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++)
        msgpack_pack_uint64(&pk, us[i]);
    for (size_t i = 0; i < sizeof is / sizeof is[0]; i++)
        msgpack_pack_int64(&pk, is[i]);
    msgpack_pack_double(&pk, -0.125);
    msgpack_pack_float(&pk, 0.1f);
    static char big[70000];
    memset(big, 'q', sizeof big);
    size_t lens[] = {0, 31, 32, 255, 256, 65535, 65536};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        msgpack_pack_str_with_body(&pk, big, lens[i]);
        msgpack_pack_bin_with_body(&pk, big, lens[i]);
    }
    msgpack_pack_array(&pk, 16);
    for (int i = 0; i < 16; i++)
        msgpack_pack_nil(&pk);
    msgpack_pack_map(&pk, 16);
    for (int i = 0; i < 16; i++) {
        msgpack_pack_int(&pk, i);
        msgpack_pack_true(&pk);
    }
    init(&mp, sb.data, sb.size, NULL);
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        uint64_t u = 0;
        CHECK_INT(slda_msgpack_uint(&mp, "u", &u), 0);
        CHECK_EQ(u, us[i]);
    }
    for (size_t i = 0; i < sizeof is / sizeof is[0]; i++) {
        int64_t v = 0;
        CHECK_INT(slda_msgpack_int(&mp, "i", &v), 0);
        CHECK_EQ(v, is[i]);
    }
    double d;
    float f;
    CHECK_INT(slda_msgpack_double(&mp, "d", &d), 0);
    CHECK_EQ(d, -0.125);
    CHECK_INT(slda_msgpack_float(&mp, "f", &f), 0);
    CHECK_EQ(f, 0.1f);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        const unsigned char *s;
        size_t len;
        CHECK_INT(slda_msgpack_str(&mp, "s", &s, &len), 0);
        CHECK_EQ(len, lens[i]);
        CHECK_INT(slda_msgpack_bin(&mp, "b", &s, &len), 0);
        CHECK_EQ(len, lens[i]);
        CHECK_TRUE(len == 0 || (s[0] == 'q' && s[len - 1] == 'q'), "payload of %zu", len);
    }
    uint32_t n;
    CHECK_INT(slda_msgpack_array(&mp, "a", &n), 0);
    CHECK_EQ(n, 16);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ(slda_msgpack_nil(&mp), 1);
    CHECK_INT(slda_msgpack_map(&mp, "m", &n), 0);
    CHECK_EQ(n, 16);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k;
        int b;
        CHECK_INT(slda_msgpack_u32(&mp, "k", &k), 0);
        CHECK_EQ(k, i);
        CHECK_INT(slda_msgpack_bool(&mp, "v", &b), 0);
        CHECK_EQ(b, 1);
    }
    CHECK_EQ(slda_msgpack_left(&mp), 0);
    CHECK_STR(err, "");
    msgpack_sbuffer_destroy(&sb);
}

/* Every proper prefix of a valid stream is refused, by walk and by skip,
 * with the offset inside the prefix and nothing read past it (guard page). */
static void test_truncation(void)
{
    bytes_t o;
    slda_msgpack_t mp;
    size_t refused = 0;
    all_encodings(&o);
    for (size_t len = 0; len < o.n; len++) {
        for (int how = 0; how < 2; how++) {
            init(&mp, o.b, len, "cut: ");
            int rc = how ? slda_msgpack_skip(&mp, "v") : walk(&mp, 0);
            CHECK_TRUE(rc == -1, "prefix of %zu bytes accepted (%s)", len, how ? "skip" : "walk");
            CHECK_INT(mp.err, SLDA_ERR_CORRUPT);
            CHECK_TRUE(mp.err_at <= len, "prefix of %zu: error at byte %zu", len, mp.err_at);
            CHECK_TRUE(mp.fault == SLDA_MSGPACK_TRUNCATED || mp.fault == SLDA_MSGPACK_TOO_LARGE ||
                           (how == 0 && mp.fault == SLDA_MSGPACK_CALLER),
                       "prefix of %zu: fault %d: %s", len, (int)mp.fault, err);
            CHECK_TRUE(strncmp(err, "cut: ", 5) == 0 && strstr(err, " at byte "), "%s", err);
            CHECK_TRUE(mp.p <= mp.end, "prefix of %zu: cursor past the end", len);
            refused += rc == -1;
        }
    }
    printf("truncation: %zu of %zu prefixes refused\n", refused, 2 * o.n);
    /* each scalar cut inside: typed reads refuse it at its first byte */
    static const struct {
        const char *bytes;
        size_t n;
        int kind; /* 0 uint, 1 double, 2 str, 3 bin, 4 array, 5 map */
        const char *msg;
    } cuts[] = {
        {"\xcd\x01", 2, 0, "cut: x: data ends inside a value at byte 0"},
        {"\xcf\x01\x02\x03", 4, 0, "cut: x: data ends inside a value at byte 0"},
        {"\xcb\x01\x02", 3, 1, "cut: x: data ends inside a value at byte 0"},
        {"\xa5" "ab", 3, 2, "cut: x: string runs past the end of the data at byte 0"},
        {"\xd9\x05" "ab", 4, 2, "cut: x: length 5 runs past the end of the data at byte 0"},
        {"\xda\x00", 2, 2, "cut: x: data ends inside a value at byte 0"},
        {"\xc4\x03\x01", 3, 3, "cut: x: length 3 runs past the end of the data at byte 0"},
        {"\x93\x01", 2, 4, "cut: x: 3 entries cannot fit in the 2 bytes left at byte 0"},
        {"\x82\x01\x02\x03", 4, 5, "cut: x: 2 entries cannot fit in the 4 bytes left at byte 0"},
        {"", 0, 0, "cut: x: expected an integer, found the end of the data at byte 0"},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        const unsigned char *s;
        size_t len;
        uint32_t n;
        uint64_t u;
        double d;
        init(&mp, cuts[i].bytes, cuts[i].n, "cut: ");
        switch (cuts[i].kind) {
        case 0: CHECK_INT(slda_msgpack_uint(&mp, "x", &u), -1); break;
        case 1: CHECK_INT(slda_msgpack_double(&mp, "x", &d), -1); break;
        case 2: CHECK_INT(slda_msgpack_str(&mp, "x", &s, &len), -1); break;
        case 3: CHECK_INT(slda_msgpack_bin(&mp, "x", &s, &len), -1); break;
        case 4: CHECK_INT(slda_msgpack_array(&mp, "x", &n), -1); break;
        default: CHECK_INT(slda_msgpack_map(&mp, "x", &n), -1); break;
        }
        CHECK_STR(err, cuts[i].msg);
        CHECK_EQ(slda_msgpack_pos(&mp), 0); /* the cursor stays on the value */
    }
}

/* Declared sizes beyond the data are refused before anything trusts them. */
static void test_huge(void)
{
    static const struct {
        const char *bytes;
        size_t n;
        int kind; /* 0 array, 1 map, 2 str, 3 bin, 4 skip */
        slda_msgpack_fault_t fault;
    } cases[] = {
        {"\xdd\xff\xff\xff\xff\x00\x00", 7, 0, SLDA_MSGPACK_TOO_LARGE},
        {"\xdc\xff\xff\x00", 4, 0, SLDA_MSGPACK_TOO_LARGE},
        {"\xdf\xff\xff\xff\xff\x00\x00", 7, 1, SLDA_MSGPACK_TOO_LARGE},
        {"\xdf\x00\x00\x00\x02\x01\x02\x03", 8, 1, SLDA_MSGPACK_TOO_LARGE}, /* 2 entries, 3 bytes */
        {"\xdb\xff\xff\xff\xff" "abc", 8, 2, SLDA_MSGPACK_TOO_LARGE},
        {"\xc6\xff\xff\xff\xff" "abc", 8, 3, SLDA_MSGPACK_TOO_LARGE},
        {"\xc9\xff\xff\xff\xff\x01" "ab", 8, 4, SLDA_MSGPACK_TOO_LARGE},
        {"\x91\xdd\xff\xff\xff\xff\x00", 7, 4, SLDA_MSGPACK_TOO_LARGE},
    };
    slda_msgpack_t mp;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const unsigned char *s;
        size_t len;
        uint32_t n = 12345;
        int rc;
        init(&mp, cases[i].bytes, cases[i].n, "huge: ");
        switch (cases[i].kind) {
        case 0: rc = slda_msgpack_array(&mp, "x", &n); break;
        case 1: rc = slda_msgpack_map(&mp, "x", &n); break;
        case 2: rc = slda_msgpack_str(&mp, "x", &s, &len); break;
        case 3: rc = slda_msgpack_bin(&mp, "x", &s, &len); break;
        default: rc = slda_msgpack_skip(&mp, "x"); break;
        }
        CHECK_INT(rc, -1);
        CHECK_EQ(mp.fault, cases[i].fault);
        CHECK_EQ(n, 12345); /* no count handed out */
        printf("huge %zu: %s\n", i, err);
    }
    init(&mp, cases[0].bytes, cases[0].n, "huge: ");
    uint32_t n;
    slda_msgpack_array(&mp, "x", &n);
    CHECK_STR(err, "huge: x: 4294967295 entries cannot fit in the 7 bytes left at byte 0");
}

/* Nested arrays around an integer: depth arrays deep. */
static size_t nested(unsigned char *buf, int depth)
{
    memset(buf, 0x91, (size_t)depth);
    buf[depth] = 0x01;
    return (size_t)depth + 1;
}

static void test_depth(void)
{
    unsigned char buf[128];
    slda_msgpack_t mp;
    size_t n = nested(buf, SLDA_MSGPACK_MAX_DEPTH); /* the integer 32 levels down */
    init(&mp, buf, n, "d: ");
    CHECK_INT(slda_msgpack_skip(&mp, "v"), 0);
    n = nested(buf, SLDA_MSGPACK_MAX_DEPTH + 1);
    init(&mp, buf, n, "d: ");
    CHECK_INT(slda_msgpack_skip(&mp, "v"), -1);
    CHECK_EQ(mp.fault, SLDA_MSGPACK_DEPTH);
    CHECK_STR(err, "d: v: values nested deeper than 32 at byte 32"); /* the array at depth 32 */
    n = nested(buf, 100);
    init(&mp, buf, n, "d: ");
    mp.max_depth = 4;
    CHECK_INT(slda_msgpack_skip(&mp, "v"), -1);
    CHECK_EQ(mp.err_at, 4);
    n = nested(buf, 4);
    init(&mp, buf, n, "d: ");
    mp.max_depth = 4;
    CHECK_INT(slda_msgpack_skip(&mp, "v"), 0);
    /* maps count too: {1: {1: 1}} with max_depth 1 */
    static const char maps[] = "\x81\x01\x81\x01\x01";
    init(&mp, maps, sizeof maps - 1, "d: ");
    mp.max_depth = 1;
    CHECK_INT(slda_msgpack_skip(&mp, "v"), -1);
    CHECK_EQ(mp.err_at, 2);
}

/* Messages: prefix, problem, offset; parentheses; the first failure wins;
 * no errstr; the error code. */
static void test_errors(void)
{
    slda_msgpack_t mp;
    static const char s[] = "\x01\xc0\xff\xcf\xff\xff\xff\xff\xff\xff\xff\xff\xce\x00\x00\x00\x01";
    uint64_t u;
    uint32_t u32;
    int64_t i64;
    int b;
    init(&mp, s, sizeof s - 1, "update record: ");
    CHECK_INT(slda_msgpack_uint(&mp, "a", &u), 0);
    CHECK_INT(slda_msgpack_uint(&mp, "base", &u), -1);
    CHECK_STR(err, "update record: base: expected an integer, found nil at byte 1");
    CHECK_EQ(mp.err_at, 1);
    CHECK_EQ(mp.fault, SLDA_MSGPACK_TYPE);
    CHECK_INT(mp.err, SLDA_ERR_CORRUPT);
    CHECK_EQ(slda_msgpack_nil(&mp), 0); /* after a failure nothing is read */
    CHECK_INT(slda_msgpack_skip(&mp, "x"), -1);
    CHECK_INT(slda_msgpack_fail(&mp, "later"), -1);
    CHECK_STR(err, "update record: base: expected an integer, found nil at byte 1");
    CHECK_EQ(slda_msgpack_pos(&mp), 1);

    init(&mp, s, sizeof s - 1, "snapshot \"x.slda\": ");
    mp.paren = 1;
    slda_msgpack_skip(&mp, "a");
    slda_msgpack_skip(&mp, "a");
    CHECK_INT(slda_msgpack_uint(&mp, "u", &u), -1);
    CHECK_STR(err, "snapshot \"x.slda\": u: -1 is negative (at byte 2)");
    init(&mp, s + 3, sizeof s - 4, "p: ");
    CHECK_INT(slda_msgpack_int(&mp, "i", &i64), -1);
    CHECK_STR(err, "p: i: 18446744073709551615 is over 2^63-1 at byte 0");
    init(&mp, s + 3, sizeof s - 4, "p: ");
    CHECK_INT(slda_msgpack_u32(&mp, "v", &u32), -1);
    CHECK_STR(err, "p: v: 18446744073709551615 is over 2^32-1 at byte 0");
    CHECK_EQ(mp.fault, SLDA_MSGPACK_RANGE);
    init(&mp, s, sizeof s - 1, "p: ");
    CHECK_INT(slda_msgpack_bool(&mp, "flag", &b), -1);
    CHECK_STR(err, "p: flag: expected a boolean, found an integer at byte 0");
    static const char r[] = "\xc1";
    init(&mp, r, 1, "p: ");
    CHECK_EQ(slda_msgpack_type(&mp), SLDA_MSGPACK_RESERVED);
    CHECK_INT(slda_msgpack_skip(&mp, "v"), -1);
    CHECK_STR(err, "p: v: the reserved byte 0xc1 at byte 0");
    init(&mp, r, 1, "p: ");
    CHECK_INT(slda_msgpack_map(&mp, "m", &u32), -1);
    CHECK_STR(err, "p: m: expected a map, found the reserved byte 0xc1 at byte 0");

    /* offsets count from base, not from where reading starts */
    slda_msgpack_init(&mp, guarded(s, sizeof s - 1), 12, sizeof s - 1, "p: ", err, sizeof err);
    CHECK_INT(slda_msgpack_u32(&mp, "v", &u32), 0);
    CHECK_EQ(u32, 1);
    CHECK_INT(slda_msgpack_fail(&mp, "%d extra", 3), -1);
    CHECK_STR(err, "p: 3 extra at byte 17");
    CHECK_EQ(mp.fault, SLDA_MSGPACK_CALLER);

    /* no errstr: the failure is kept all the same; another code */
    slda_msgpack_init(&mp, guarded(s, 2), 0, 2, NULL, NULL, 0);
    mp.code = SLDA_ERR_PARSE;
    CHECK_INT(slda_msgpack_skip(&mp, "a"), 0);
    CHECK_INT(slda_msgpack_str(&mp, "s", &(const unsigned char *){0}, &(size_t){0}), -1);
    CHECK_INT(mp.err, SLDA_ERR_PARSE);
    CHECK_EQ(mp.err_at, 1);
    for (int t = SLDA_MSGPACK_END; t <= SLDA_MSGPACK_RESERVED; t++)
        CHECK_TRUE(strlen(slda_msgpack_type_name((slda_msgpack_type_t)t)) > 2, "type %d", t);
}

/* What io/docmsg.c checks of a Kafka message (one well-formed value, nothing
 * after it, nesting 16 deep at most) with the offsets its messages give. */
static void test_message_checks(void)
{
    static const struct {
        const char *bytes;
        size_t len;
        slda_msgpack_fault_t fault;
        size_t at;
    } bad[] = {
        {"", 0, SLDA_MSGPACK_TRUNCATED, 0},
        {"\x81\xa4text", 6, SLDA_MSGPACK_TRUNCATED, 6},              /* value missing */
        {"\x81\xa4tex", 5, SLDA_MSGPACK_TOO_LARGE, 1},               /* key cut */
        {"\xdf\xff\xff\xff\xff", 5, SLDA_MSGPACK_TOO_LARGE, 0},     /* container */
        {"\x81\xa4text\xdb\xff\xff\xff\xf0" "abc", 12, SLDA_MSGPACK_TOO_LARGE, 6}, /* str32 */
        {"\x81\xa4text\xc1", 7, SLDA_MSGPACK_TYPE, 6},
        {"\xde\x00", 2, SLDA_MSGPACK_TRUNCATED, 0},
        {"\x81\xa4text\xc7\x05\x01" "ab", 10, SLDA_MSGPACK_TOO_LARGE, 6}, /* ext8 cut */
        {"\x81\xa4text\xcb\x00\x00", 9, SLDA_MSGPACK_TRUNCATED, 6},  /* float64 cut */
    };
    slda_msgpack_t mp;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        init(&mp, bad[i].bytes, bad[i].len, "MessagePack: ");
        mp.code = SLDA_ERR_PARSE;
        mp.max_depth = 16;
        CHECK_INT(slda_msgpack_skip(&mp, "message"), -1);
        CHECK_INT(mp.err, SLDA_ERR_PARSE);
        CHECK_TRUE(mp.fault == bad[i].fault && mp.err_at == bad[i].at,
                   "case %zu: fault %d at %zu, wanted %d at %zu (%s)", i, (int)mp.fault,
                   mp.err_at, (int)bad[i].fault, bad[i].at, err);
    }
    static const char trailing[] = "\x81\xa4text\xa1x\x00";
    init(&mp, trailing, sizeof trailing - 1, NULL);
    CHECK_INT(slda_msgpack_skip(&mp, "message"), 0);
    CHECK_EQ(slda_msgpack_left(&mp), 1);
    unsigned char deep[64];
    size_t n = 0;
    for (int i = 0; i < 17; i++) { /* {"k": {"k": ... nil}}, 17 maps */
        deep[n++] = 0x81;
        deep[n++] = 0xa1;
        deep[n++] = 'k';
    }
    deep[n++] = 0xc0;
    init(&mp, deep, n, NULL);
    mp.max_depth = 16;
    CHECK_INT(slda_msgpack_skip(&mp, "message"), -1);
    CHECK_EQ(mp.fault, SLDA_MSGPACK_DEPTH);
    CHECK_EQ(mp.err_at, 48); /* the 17th map */
    init(&mp, deep + 3, n - 3, NULL); /* 16 maps */
    mp.max_depth = 16;
    CHECK_INT(slda_msgpack_skip(&mp, "message"), 0);
}

int main(void)
{
    test_types();
    test_packer();
    test_truncation();
    test_huge();
    test_depth();
    test_errors();
    test_message_checks();
    return slda_test_done("unit_msgpack");
}
