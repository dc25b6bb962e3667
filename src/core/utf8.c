/* utf8.c - strict UTF-8 validation and encoding, for every layer that reads outside text.
 *
 * Strict: no overlong forms, no surrogates, nothing above U+10FFFF, no
 * truncated sequence or stray continuation byte. The tokenizer validates a
 * whole text with it before it cuts tokens (so its own decoding,
 * slda_utf8_decode, may assume valid input); JSON, message ids and token
 * lists are checked with it too.
 */
#include "core/utf8.h"

/* Second-byte range allowed after lead byte c (tighter for E0, ED, F0, F4). */
static void second_range(unsigned c, unsigned *lo, unsigned *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c == 0xE0)
        *lo = 0xA0; /* below: overlong */
    else if (c == 0xED)
        *hi = 0x9F; /* above: UTF-16 surrogates */
    else if (c == 0xF0)
        *lo = 0x90; /* below: overlong */
    else if (c == 0xF4)
        *hi = 0x8F; /* above: beyond U+10FFFF */
}

/* Why the multi-byte sequence at s[i] (lead c, need continuation bytes) is
 * bad, or NULL if it is fine. */
static const char *bad_sequence(const unsigned char *s, size_t len, size_t i, unsigned c,
                                size_t need)
{
    unsigned lo, hi;
    second_range(c, &lo, &hi);
    for (size_t k = 1; k <= need; k++) {
        unsigned b;
        if (i + k >= len)
            return "truncated sequence";
        b = s[i + k];
        if (b < 0x80 || b > 0xBF)
            return "truncated sequence";
        if (k == 1 && b < lo)
            return "overlong encoding";
        if (k == 1 && b > hi)
            return c == 0xED ? "surrogate code point" : "code point above U+10FFFF";
    }
    return NULL;
}

int slda_utf8_valid(const char *str, size_t len, size_t *bad_off, const char **why)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t need = 0;
        const char *reason = NULL;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c < 0xC0)
            reason = "unexpected continuation byte";
        else if (c < 0xC2)
            reason = "overlong encoding";
        else if (c < 0xF5)
            need = c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
        else
            reason = "byte not allowed in UTF-8";
        if (!reason)
            reason = bad_sequence(s, len, i, c, need);
        if (reason) {
            if (bad_off)
                *bad_off = i;
            if (why)
                *why = reason;
            return 0;
        }
        i += need + 1;
    }
    return 1;
}

slda_err_t slda_utf8_check(const char *s, size_t len, const char *what, char *errstr,
                           size_t errstr_size)
{
    size_t off = 0;
    const char *why = NULL;
    if (slda_utf8_valid(s, len, &off, &why))
        return SLDA_OK;
    return slda_set_err(errstr, errstr_size, SLDA_ERR_UTF8, "%s: invalid UTF-8 at byte %zu (%s)",
                        what, off, why);
}

size_t slda_utf8_encode(uint32_t c, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xC0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

