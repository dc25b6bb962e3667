/* fuzz_json.c - fuzz target: the strict JSON parser of src/core/json.h.
 *
 * The whole input is one JSON text. Checked:
 *   - acceptance agrees with a small reference recogniser written here
 *     (RFC 8259, strict UTF-8, paired surrogates, nesting limit);
 *   - a failure is SLDA_ERR_PARSE with "JSON: <problem> at byte N", N <= len;
 *   - an accepted tree is well formed: every node lies inside the input and
 *     its parent, `next` skips exactly its subtree, a container has as many
 *     children as its size says, object members are string keys, literals
 *     and numbers cover exactly their text;
 *   - every string unescapes to valid UTF-8 no longer than its escaped form,
 *     and an unescaped one is its source bytes;
 *   - slda_json_object_get finds each of the first members of each object;
 *   - writing the tree back out as JSON and parsing that gives the same tree
 *     (types, sizes, strings, number texts), and re-parsing the input with
 *     the reused node array gives the same tree again.
 */
#include "fuzzutil.h"
#include "core/json.h"
#include "text/tokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reference recogniser ---- */

typedef struct ref_s {
    const unsigned char *s;
    size_t len, pos;
} ref_t;

static int ref_value(ref_t *r, unsigned depth);

static void ref_ws(ref_t *r)
{
    while (r->pos < r->len && strchr(" \t\n\r", r->s[r->pos]) && r->s[r->pos])
        r->pos++;
}

static int ref_hex4(ref_t *r, size_t at, unsigned *v)
{
    *v = 0;
    if (at + 4 > r->len)
        return 0;
    for (size_t i = at; i < at + 4; i++) {
        unsigned c = r->s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

static int ref_string(ref_t *r)
{
    size_t start = ++r->pos;
    for (;;) {
        unsigned c, u, lo;
        if (r->pos >= r->len)
            return 0;
        c = r->s[r->pos];
        if (c == '"')
            break;
        if (c < 0x20)
            return 0;
        if (c != '\\') {
            r->pos++;
            continue;
        }
        if (r->pos + 1 >= r->len)
            return 0;
        c = r->s[r->pos + 1];
        if (c != 'u') {
            if (!strchr("\"\\/bfnrt", (int)c) || c == 0)
                return 0;
            r->pos += 2;
            continue;
        }
        if (!ref_hex4(r, r->pos + 2, &u) || (u >= 0xDC00 && u <= 0xDFFF))
            return 0;
        r->pos += 6;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (r->pos + 1 >= r->len || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u' ||
                !ref_hex4(r, r->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                return 0;
            r->pos += 6;
        }
    }
    if (!slda_fuzz_utf8_ok(r->s + start, r->pos - start, NULL))
        return 0;
    r->pos++;
    return 1;
}

static size_t ref_digits(ref_t *r)
{
    size_t n = 0;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
        r->pos++, n++;
    return n;
}

static int ref_number(ref_t *r)
{
    if (r->s[r->pos] == '-')
        r->pos++;
    if (r->pos < r->len && r->s[r->pos] == '0')
        r->pos++;
    else if (!ref_digits(r))
        return 0;
    if (r->pos < r->len && r->s[r->pos] == '.') {
        r->pos++;
        if (!ref_digits(r))
            return 0;
    }
    if (r->pos < r->len && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
        r->pos++;
        if (r->pos < r->len && (r->s[r->pos] == '+' || r->s[r->pos] == '-'))
            r->pos++;
        if (!ref_digits(r))
            return 0;
    }
    return 1;
}

/* Elements of an array ('[' at pos) or members of an object ('{'). */
static int ref_container(ref_t *r, unsigned depth, int object)
{
    char close = object ? '}' : ']';
    r->pos++;
    ref_ws(r);
    if (r->pos < r->len && r->s[r->pos] == close) {
        r->pos++;
        return 1;
    }
    for (;;) {
        if (object) {
            if (r->pos >= r->len || r->s[r->pos] != '"' || !ref_string(r))
                return 0;
            ref_ws(r);
            if (r->pos >= r->len || r->s[r->pos] != ':')
                return 0;
            r->pos++;
            ref_ws(r);
        }
        if (!ref_value(r, depth + 1))
            return 0;
        ref_ws(r);
        if (r->pos < r->len && r->s[r->pos] == ',') {
            r->pos++;
            ref_ws(r);
            continue;
        }
        if (r->pos < r->len && r->s[r->pos] == close) {
            r->pos++;
            return 1;
        }
        return 0;
    }
}

static int ref_literal(ref_t *r, const char *w)
{
    size_t n = strlen(w);
    if (r->len - r->pos < n || memcmp(r->s + r->pos, w, n) != 0)
        return 0;
    r->pos += n;
    return 1;
}

static int ref_value(ref_t *r, unsigned depth)
{
    unsigned c;
    if (r->pos >= r->len)
        return 0;
    c = r->s[r->pos];
    if ((c == '[' || c == '{') && depth >= SLDA_JSON_MAX_DEPTH)
        return 0;
    switch (c) {
    case '[': return ref_container(r, depth, 0);
    case '{': return ref_container(r, depth, 1);
    case '"': return ref_string(r);
    case 't': return ref_literal(r, "true");
    case 'f': return ref_literal(r, "false");
    case 'n': return ref_literal(r, "null");
    default: return (c == '-' || (c >= '0' && c <= '9')) && ref_number(r);
    }
}

static int ref_accepts(const unsigned char *s, size_t len)
{
    ref_t r = {s, len, 0};
    ref_ws(&r);
    if (!ref_value(&r, 0))
        return 0;
    ref_ws(&r);
    return r.pos == len;
}

/* ---- tree checks ---- */

static char *decode(const slda_json_t *js, uint32_t i, size_t *n)
{
    char *buf = slda_xmalloc(slda_json_raw_len(js, i) + 1);
    *n = slda_json_string(js, i, buf);
    return buf;
}

static void check_string(const slda_json_t *js, uint32_t i)
{
    const slda_json_node_t *nd = &js->nodes[i];
    size_t n, raw = slda_json_raw_len(js, i);
    char *buf = decode(js, i, &n);
    FUZZ_ASSERT(nd->start >= 1 && js->src[nd->start - 1] == '"' && nd->end < js->len &&
                    js->src[nd->end] == '"',
                "string node %u [%u,%u) is not inside quotes", i, nd->start, nd->end);
    FUZZ_ASSERT(n <= raw, "string node %u unescapes to %zu bytes from %zu", i, n, raw);
    FUZZ_ASSERT(buf[n] == '\0', "string node %u: unescaped text not NUL-terminated", i);
    FUZZ_ASSERT(slda_fuzz_utf8_ok((const unsigned char *)buf, n, NULL),
                "string node %u unescapes to invalid UTF-8", i);
    FUZZ_ASSERT(nd->escaped == (memchr(js->src + nd->start, '\\', raw) != NULL),
                "string node %u: escaped flag %u disagrees with its text", i, nd->escaped);
    FUZZ_ASSERT(nd->escaped || (n == raw && memcmp(buf, js->src + nd->start, n) == 0),
                "string node %u without escapes differs from its source", i);
    free(buf);
}

static void check_scalar(const slda_json_t *js, uint32_t i)
{
    const slda_json_node_t *nd = &js->nodes[i];
    const char *t = js->src + nd->start;
    size_t n = nd->end - nd->start;
    static const char *const lit[] = {"null", "false", "true"};
    if (nd->type <= SLDA_JSON_TRUE) {
        FUZZ_ASSERT(n == strlen(lit[nd->type]) && memcmp(t, lit[nd->type], n) == 0,
                    "literal node %u covers \"%.*s\"", i, (int)n, t);
    } else {
        ref_t r = {(const unsigned char *)t, n, 0};
        FUZZ_ASSERT(n > 0 && ref_number(&r) && r.pos == n, "number node %u covers \"%.*s\"", i,
                    (int)n, t);
    }
}

/* Check node i and its subtree; returns the index after it. */
static uint32_t check_node(const slda_json_t *js, uint32_t i, uint32_t lo, uint32_t hi)
{
    const slda_json_node_t *nd;
    uint32_t c, want;
    FUZZ_ASSERT(i < js->n, "node index %u >= n %u", i, js->n);
    nd = &js->nodes[i];
    FUZZ_ASSERT(nd->start <= nd->end && nd->end <= js->len && nd->start >= lo && nd->end <= hi,
                "node %u [%u,%u) outside its parent [%u,%u) or the input (%zu)", i, nd->start,
                nd->end, lo, hi, js->len);
    FUZZ_ASSERT(nd->next > i && nd->next <= js->n, "node %u: next %u (n %u)", i, nd->next,
                js->n);
    switch (nd->type) {
    case SLDA_JSON_STRING: check_string(js, i); break;
    case SLDA_JSON_NULL: case SLDA_JSON_FALSE: case SLDA_JSON_TRUE: case SLDA_JSON_NUMBER:
        check_scalar(js, i);
        break;
    case SLDA_JSON_ARRAY: case SLDA_JSON_OBJECT:
        FUZZ_ASSERT(js->src[nd->start] == (nd->type == SLDA_JSON_ARRAY ? '[' : '{') &&
                        nd->end >= nd->start + 2 &&
                        js->src[nd->end - 1] == (nd->type == SLDA_JSON_ARRAY ? ']' : '}'),
                    "container node %u does not cover its brackets", i);
        want = nd->type == SLDA_JSON_OBJECT ? 2 * nd->size : nd->size;
        c = slda_json_first(js, i);
        FUZZ_ASSERT((c == SLDA_JSON_NONE) == (want == 0), "node %u: first %u with size %u", i,
                    c, nd->size);
        for (uint32_t k = 0; k < want; k++) {
            if (nd->type == SLDA_JSON_OBJECT && k % 2 == 0)
                FUZZ_ASSERT(c < js->n && js->nodes[c].type == SLDA_JSON_STRING,
                            "object node %u: member %u key is not a string", i, k / 2);
            uint32_t after = check_node(js, c, nd->start + 1, nd->end - 1);
            FUZZ_ASSERT(js->nodes[c].next == after, "node %u: next %u, subtree ends at %u", c,
                        js->nodes[c].next, after);
            c = after;
        }
        FUZZ_ASSERT((want ? c : i + 1) == nd->next,
                    "container node %u: children end at %u, next is %u", i, want ? c : i + 1,
                    nd->next);
        break;
    default: FUZZ_ASSERT(0, "node %u has type %d", i, (int)nd->type);
    }
    return nd->next;
}

/* slda_json_object_get finds the first member with each of the first keys. */
static void check_lookup(const slda_json_t *js)
{
    for (uint32_t o = 0; o < js->n; o++) {
        uint32_t k = o + 1;
        if (js->nodes[o].type != SLDA_JSON_OBJECT)
            continue;
        for (uint32_t m = 0; m < js->nodes[o].size && m < 8; m++) {
            size_t n;
            char *key = decode(js, k, &n);
            if (strlen(key) == n) { /* a key with \u0000 cannot be asked for */
                uint32_t first = o + 1, got = slda_json_object_get(js, o, key);
                for (;;) { /* the first member whose key equals this one */
                    size_t fn;
                    char *fk = decode(js, first, &fn);
                    int eq = fn == n && memcmp(fk, key, n) == 0;
                    free(fk);
                    if (eq)
                        break;
                    first = js->nodes[first + 1].next;
                }
                FUZZ_ASSERT(got == first + 1, "object %u: key \"%s\" found at %u, expected %u",
                            o, key, got, first + 1);
            }
            free(key);
            k = js->nodes[k + 1].next;
        }
    }
}

/* ---- writing the tree back ---- */

typedef struct out_s {
    char *buf;
    size_t len, cap;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        o->cap = (o->len + n + 1) * 2;
        o->buf = slda_xrealloc(o->buf, o->cap);
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put_string(out_t *o, const char *s, size_t n)
{
    put(o, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(o, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(o, esc, 6);
        } else {
            put(o, (const char *)&s[i], 1);
        }
    }
    put(o, "\"", 1);
}

static uint32_t write_node(const slda_json_t *js, uint32_t i, out_t *o)
{
    const slda_json_node_t *nd = &js->nodes[i];
    if (nd->type == SLDA_JSON_STRING) {
        size_t n;
        char *buf = decode(js, i, &n);
        put_string(o, buf, n);
        free(buf);
    } else if (nd->type == SLDA_JSON_ARRAY || nd->type == SLDA_JSON_OBJECT) {
        int obj = nd->type == SLDA_JSON_OBJECT;
        uint32_t c = i + 1, want = obj ? 2 * nd->size : nd->size;
        put(o, obj ? "{" : "[", 1);
        for (uint32_t k = 0; k < want; k++) {
            if (k > 0)
                put(o, obj && k % 2 ? ":" : ",", 1);
            c = write_node(js, c, o);
        }
        put(o, obj ? "}" : "]", 1);
    } else {
        put(o, js->src + nd->start, nd->end - nd->start);
    }
    return nd->next;
}

static void check_same_tree(const slda_json_t *a, const slda_json_t *b, const char *what)
{
    FUZZ_ASSERT(a->n == b->n, "%s: %u nodes, then %u", what, a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) {
        const slda_json_node_t *x = &a->nodes[i], *y = &b->nodes[i];
        FUZZ_ASSERT(x->type == y->type && x->size == y->size && x->next == y->next,
                    "%s: node %u: type %d/%d size %u/%u next %u/%u", what, i, (int)x->type,
                    (int)y->type, x->size, y->size, x->next, y->next);
        if (x->type == SLDA_JSON_STRING) {
            size_t n, m;
            char *s = decode(a, i, &n), *t = decode(b, i, &m);
            FUZZ_ASSERT(n == m && memcmp(s, t, n) == 0, "%s: string node %u differs", what, i);
            free(s);
            free(t);
        } else if (x->type == SLDA_JSON_NUMBER) {
            FUZZ_ASSERT(x->end - x->start == y->end - y->start &&
                            memcmp(a->src + x->start, b->src + y->start, x->end - x->start) == 0,
                        "%s: number node %u differs", what, i);
        }
    }
}

static void check_failure(const char *err, size_t len)
{
    const char *at = strstr(err, " at byte ");
    FUZZ_ASSERT(strncmp(err, "JSON: ", 6) == 0 && at, "message \"%s\"", err);
    FUZZ_ASSERT(strtoull(at + 9, NULL, 10) <= len, "message \"%s\" points past %zu bytes", err,
                len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static slda_json_t js, again; /* kept between inputs, as readers keep theirs */
    char err[512] = "";
    out_t o = {NULL, 0, 0};
    slda_err_t rc = slda_json_parse(&js, (const char *)data, size, err, sizeof err);
    int ref = ref_accepts(data, size);
    FUZZ_ASSERT((rc == SLDA_OK) == ref, "parser says %s (%s), the reference %s",
                slda_err_name(rc), err, ref ? "accepts" : "refuses");
    if (rc != SLDA_OK) {
        FUZZ_ASSERT(rc == SLDA_ERR_PARSE, "failure code %s", slda_err_name(rc));
        check_failure(err, size);
        return 0;
    }
    FUZZ_ASSERT(js.n >= 1 && js.nodes[0].next == js.n, "root next %u of %u nodes",
                js.n ? js.nodes[0].next : 0, js.n);
    check_node(&js, 0, 0, (uint32_t)size);
    check_lookup(&js);
    write_node(&js, 0, &o);
    rc = slda_json_parse(&again, o.buf, o.len, err, sizeof err);
    FUZZ_ASSERT(rc == SLDA_OK, "the written-back tree does not parse: %s", err);
    check_same_tree(&js, &again, "written back");
    rc = slda_json_parse(&again, (const char *)data, size, err, sizeof err);
    FUZZ_ASSERT(rc == SLDA_OK, "second parse failed: %s", err);
    check_same_tree(&js, &again, "parsed again");
    free(o.buf);
    return 0;
}
