/* json.c - strict JSON (RFC 8259) parser into a flat, reusable node array.
 *
 * Invariants. Parsing is recursive descent over src[0..len) with every read
 * bounds-checked against len (the input need not be NUL-terminated and is
 * fuzzed). Nodes are appended in document order, so a container's children
 * follow it directly and nodes[i].next (set once its subtree is done) skips
 * the subtree. Containers nest at most SLDA_JSON_MAX_DEPTH deep, which bounds
 * the recursion. Strings are validated while parsing (UTF-8, control bytes,
 * escapes, surrogate pairs) but unescaped only by slda_json_string, into the
 * caller's buffer: an unescaped string is never longer than its escaped form.
 * After a failed parse the node array holds garbage and must not be read.
 */
#include "core/json.h"
#include "core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser_s {
    slda_json_t *js;
    const unsigned char *s;
    size_t len, pos;
    char *errstr;
    size_t errstr_size;
} parser_t;

static slda_err_t parse_value(parser_t *ps, unsigned depth);

static slda_err_t fail(parser_t *ps, size_t at, const char *problem)
{
    return slda_set_err(ps->errstr, ps->errstr_size, SLDA_ERR_PARSE, "JSON: %s at byte %zu",
                        problem, at);
}

static uint32_t new_node(parser_t *ps, slda_json_type_t type, size_t start)
{
    slda_json_t *js = ps->js;
    if (js->n == js->cap) {
        js->cap = js->cap ? js->cap * 2 : 32;
        js->nodes = slda_xrealloc(js->nodes, (size_t)js->cap * sizeof *js->nodes);
    }
    slda_json_node_t *node = &js->nodes[js->n];
    memset(node, 0, sizeof *node);
    node->type = type;
    node->start = node->end = (uint32_t)start;
    return js->n++;
}

static void skip_ws(parser_t *ps)
{
    while (ps->pos < ps->len) {
        unsigned char c = ps->s[ps->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        ps->pos++;
    }
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* Four hex digits at s[at..at+4), or -1. */
static long hex4(const unsigned char *s, size_t len, size_t at)
{
    long v = 0;
    if (at > len || len - at < 4)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        int h = hexval(s[at + i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Check a \u escape at s[pos] (the backslash); returns its length (6 or 12
 * for a surrogate pair) or 0 with *problem set. */
static size_t check_u_escape(const unsigned char *s, size_t len, size_t pos,
                             const char **problem)
{
    long hi = hex4(s, len, pos + 2), lo;
    if (hi < 0) {
        *problem = "invalid \\u escape (need 4 hex digits)";
        return 0;
    }
    if (hi >= 0xDC00 && hi <= 0xDFFF) {
        *problem = "unpaired low surrogate in \\u escape";
        return 0;
    }
    if (hi < 0xD800 || hi > 0xDBFF)
        return 6;
    if (pos + 7 >= len || s[pos + 6] != '\\' || s[pos + 7] != 'u' ||
        (lo = hex4(s, len, pos + 8)) < 0xDC00 || lo > 0xDFFF) {
        *problem = "high surrogate in \\u escape not followed by a low surrogate";
        return 0;
    }
    return 12;
}

/* One escape at ps->pos (the backslash): advance past it, or fail. */
static slda_err_t string_escape(parser_t *ps, uint32_t node)
{
    const char *problem = NULL;
    size_t at = ps->pos, n;
    ps->js->nodes[node].escaped = 1;
    if (at + 1 >= ps->len)
        return fail(ps, at, "unterminated string");
    switch (ps->s[at + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        ps->pos += 2;
        return SLDA_OK;
    case 'u':
        n = check_u_escape(ps->s, ps->len, at, &problem);
        if (!n)
            return fail(ps, at, problem);
        ps->pos += n;
        return SLDA_OK;
    default:
        return fail(ps, at, "invalid escape in string");
    }
}

static slda_err_t parse_string(parser_t *ps)
{
    size_t start = ++ps->pos, bad = 0;
    const char *why = NULL;
    uint32_t node = new_node(ps, SLDA_JSON_STRING, start);
    for (;;) {
        unsigned char c;
        if (ps->pos >= ps->len)
            return fail(ps, start - 1, "unterminated string");
        c = ps->s[ps->pos];
        if (c == '"')
            break;
        if (c < 0x20)
            return fail(ps, ps->pos, "control character in string");
        if (c == '\\') {
            slda_err_t err = string_escape(ps, node);
            if (err != SLDA_OK)
                return err;
        } else {
            ps->pos++;
        }
    }
    if (!slda_utf8_valid((const char *)ps->s + start, ps->pos - start, &bad, &why)) {
        char msg[96];
        snprintf(msg, sizeof msg, "invalid UTF-8 in string (%s)", why);
        return fail(ps, start + bad, msg);
    }
    ps->js->nodes[node].end = (uint32_t)ps->pos;
    ps->js->nodes[node].next = ps->js->n;
    ps->pos++;
    return SLDA_OK;
}

static size_t skip_digits(parser_t *ps)
{
    size_t n = 0;
    while (ps->pos < ps->len && ps->s[ps->pos] >= '0' && ps->s[ps->pos] <= '9') {
        ps->pos++;
        n++;
    }
    return n;
}

static int peek_is(parser_t *ps, char c)
{
    return ps->pos < ps->len && ps->s[ps->pos] == (unsigned char)c;
}

static slda_err_t parse_number(parser_t *ps)
{
    size_t start = ps->pos;
    uint32_t node = new_node(ps, SLDA_JSON_NUMBER, start);
    if (peek_is(ps, '-'))
        ps->pos++;
    if (peek_is(ps, '0'))
        ps->pos++;
    else if (skip_digits(ps) == 0)
        return fail(ps, start, "invalid number");
    if (peek_is(ps, '.')) {
        ps->pos++;
        if (skip_digits(ps) == 0)
            return fail(ps, start, "invalid number (no digits after '.')");
    }
    if (peek_is(ps, 'e') || peek_is(ps, 'E')) {
        ps->pos++;
        if (peek_is(ps, '+') || peek_is(ps, '-'))
            ps->pos++;
        if (skip_digits(ps) == 0)
            return fail(ps, start, "invalid number (no digits in exponent)");
    }
    ps->js->nodes[node].end = (uint32_t)ps->pos;
    ps->js->nodes[node].next = ps->js->n;
    return SLDA_OK;
}

static slda_err_t parse_literal(parser_t *ps, const char *word, slda_json_type_t type)
{
    size_t n = strlen(word), start = ps->pos;
    if (ps->len - ps->pos < n || memcmp(ps->s + ps->pos, word, n) != 0)
        return fail(ps, start, "invalid literal");
    uint32_t node = new_node(ps, type, start);
    ps->pos += n;
    ps->js->nodes[node].end = (uint32_t)ps->pos;
    ps->js->nodes[node].next = ps->js->n;
    return SLDA_OK;
}

/* After an element: ',' (more follow, returns 1), close (done, 0) or fail (-1). */
static int list_sep(parser_t *ps, char close, slda_err_t *err)
{
    skip_ws(ps);
    if (peek_is(ps, ',')) {
        ps->pos++;
        skip_ws(ps);
        return 1;
    }
    if (peek_is(ps, close)) {
        ps->pos++;
        return 0;
    }
    *err = fail(ps, ps->pos, close == ']' ? "expected ',' or ']' in array"
                                          : "expected ',' or '}' in object");
    return -1;
}

static slda_err_t parse_array(parser_t *ps, unsigned depth)
{
    uint32_t node = new_node(ps, SLDA_JSON_ARRAY, ps->pos);
    slda_err_t err = SLDA_OK;
    int more = 1;
    ps->pos++;
    skip_ws(ps);
    if (peek_is(ps, ']')) {
        ps->pos++;
        more = 0;
    }
    while (more > 0) {
        if ((err = parse_value(ps, depth + 1)) != SLDA_OK)
            return err;
        ps->js->nodes[node].size++;
        more = list_sep(ps, ']', &err);
    }
    if (more < 0)
        return err;
    ps->js->nodes[node].end = (uint32_t)ps->pos;
    ps->js->nodes[node].next = ps->js->n;
    return SLDA_OK;
}

static slda_err_t parse_member(parser_t *ps, unsigned depth)
{
    slda_err_t err;
    if (!peek_is(ps, '"'))
        return fail(ps, ps->pos, "expected a string key in object");
    if ((err = parse_string(ps)) != SLDA_OK)
        return err;
    skip_ws(ps);
    if (!peek_is(ps, ':'))
        return fail(ps, ps->pos, "expected ':' after an object key");
    ps->pos++;
    skip_ws(ps);
    return parse_value(ps, depth + 1);
}

static slda_err_t parse_object(parser_t *ps, unsigned depth)
{
    uint32_t node = new_node(ps, SLDA_JSON_OBJECT, ps->pos);
    slda_err_t err = SLDA_OK;
    int more = 1;
    ps->pos++;
    skip_ws(ps);
    if (peek_is(ps, '}')) {
        ps->pos++;
        more = 0;
    }
    while (more > 0) {
        if ((err = parse_member(ps, depth)) != SLDA_OK)
            return err;
        ps->js->nodes[node].size++;
        more = list_sep(ps, '}', &err);
    }
    if (more < 0)
        return err;
    ps->js->nodes[node].end = (uint32_t)ps->pos;
    ps->js->nodes[node].next = ps->js->n;
    return SLDA_OK;
}

static slda_err_t parse_value(parser_t *ps, unsigned depth)
{
    unsigned char c;
    if (ps->pos >= ps->len)
        return fail(ps, ps->pos, "unexpected end of input");
    c = ps->s[ps->pos];
    if ((c == '[' || c == '{') && depth >= SLDA_JSON_MAX_DEPTH)
        return fail(ps, ps->pos, "nesting too deep");
    switch (c) {
    case '{': return parse_object(ps, depth);
    case '[': return parse_array(ps, depth);
    case '"': return parse_string(ps);
    case 't': return parse_literal(ps, "true", SLDA_JSON_TRUE);
    case 'f': return parse_literal(ps, "false", SLDA_JSON_FALSE);
    case 'n': return parse_literal(ps, "null", SLDA_JSON_NULL);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(ps);
        return fail(ps, ps->pos, "unexpected character");
    }
}

void slda_json_init(slda_json_t *js)
{
    memset(js, 0, sizeof *js);
}

void slda_json_clear(slda_json_t *js)
{
    if (!js)
        return;
    free(js->nodes);
    slda_json_init(js);
}

slda_err_t slda_json_parse(slda_json_t *js, const char *src, size_t len, char *errstr,
                           size_t errstr_size)
{
    parser_t ps = {js, (const unsigned char *)src, len, 0, errstr, errstr_size};
    slda_err_t err;
    js->n = 0;
    js->src = src;
    js->len = len;
    if (len >= UINT32_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "JSON: input of %zu bytes is too large", len);
    skip_ws(&ps);
    if (ps.pos == len)
        return fail(&ps, ps.pos, "empty input");
    if ((err = parse_value(&ps, 0)) != SLDA_OK)
        return err;
    skip_ws(&ps);
    if (ps.pos != len)
        return fail(&ps, ps.pos, "unexpected data after the value");
    return SLDA_OK;
}

size_t slda_json_string(const slda_json_t *js, uint32_t node, char *out)
{
    const unsigned char *s = (const unsigned char *)js->src;
    size_t i = js->nodes[node].start, end = js->nodes[node].end, n = 0;
    static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
    if (!js->nodes[node].escaped) {
        memcpy(out, s + i, end - i);
        out[end - i] = '\0';
        return end - i;
    }
    while (i < end) {
        if (s[i] != '\\') {
            out[n++] = (char)s[i++];
        } else if (s[i + 1] != 'u') {
            out[n++] = esc_out[strchr(esc_in, s[i + 1]) - esc_in];
            i += 2;
        } else {
            uint32_t cp = (uint32_t)hex4(s, end, i + 2);
            i += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)hex4(s, end, i + 2) - 0xDC00);
                i += 6;
            }
            n += slda_utf8_encode(cp, out + n);
        }
    }
    out[n] = '\0';
    return n;
}

/* Does string node equal key? Unescapes only when the key has escapes. */
static int key_equals(const slda_json_t *js, uint32_t node, const char *key, size_t klen)
{
    const slda_json_node_t *nd = &js->nodes[node];
    char stackbuf[128], *buf = stackbuf;
    size_t n;
    int eq;
    if (!nd->escaped)
        return nd->end - nd->start == klen && memcmp(js->src + nd->start, key, klen) == 0;
    if (slda_json_raw_len(js, node) + 1 > sizeof stackbuf)
        buf = slda_xmalloc(slda_json_raw_len(js, node) + 1);
    n = slda_json_string(js, node, buf);
    eq = n == klen && memcmp(buf, key, klen) == 0;
    if (buf != stackbuf)
        free(buf);
    return eq;
}

uint32_t slda_json_object_get(const slda_json_t *js, uint32_t obj, const char *key)
{
    size_t klen = strlen(key);
    uint32_t k = obj + 1;
    if (js->nodes[obj].type != SLDA_JSON_OBJECT)
        return SLDA_JSON_NONE;
    for (uint32_t i = 0; i < js->nodes[obj].size; i++) {
        if (key_equals(js, k, key, klen))
            return k + 1;
        k = js->nodes[k + 1].next;
    }
    return SLDA_JSON_NONE;
}

uint32_t slda_json_first(const slda_json_t *js, uint32_t node)
{
    slda_json_type_t t = js->nodes[node].type;
    if ((t != SLDA_JSON_ARRAY && t != SLDA_JSON_OBJECT) || js->nodes[node].size == 0)
        return SLDA_JSON_NONE;
    return node + 1;
}

const char *slda_json_type_name(slda_json_type_t type)
{
    static const char *const names[] = {"null", "false", "true", "number",
                                        "string", "array", "object"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "?";
}

void slda_json_write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
