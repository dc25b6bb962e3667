/* utf8.h - strict UTF-8: validation, decoding, encoding. */
#ifndef SLDA_UTF8_H
#define SLDA_UTF8_H

#include "core/slda_int.h"

#include <stddef.h>
#include <stdint.h>

/* Strict UTF-8 check (no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence). Returns 1 if s[0..len) is valid; else 0
 * with the offset of the first bad byte in *bad_off and a short reason in
 * *why (both may be NULL). */
int slda_utf8_valid(const char *s, size_t len, size_t *bad_off, const char **why);
/* SLDA_OK, or SLDA_ERR_UTF8 with "<what>: invalid UTF-8 at byte N (reason)". */
slda_err_t slda_utf8_check(const char *s, size_t len, const char *what, char *errstr,
                           size_t errstr_size);
/* Write code point cp (< 0x110000, not a surrogate) as UTF-8; returns 1..4. */
size_t slda_utf8_encode(uint32_t cp, char *out);
/* Inline: the tokenizer decodes every non-ASCII character with it. Decode one code point of already validated UTF-8 at s[*i], advancing *i. */
static inline uint32_t slda_utf8_decode(const unsigned char *s, size_t *i)
{
    uint32_t c = s[*i];
    if (c < 0x80) {
        *i += 1;
        return c;
    }
    if (c < 0xE0) {
        c = ((c & 0x1F) << 6) | (s[*i + 1] & 0x3F);
        *i += 2;
    } else if (c < 0xF0) {
        c = ((c & 0x0F) << 12) | ((uint32_t)(s[*i + 1] & 0x3F) << 6) | (s[*i + 2] & 0x3F);
        *i += 3;
    } else {
        c = ((c & 0x07) << 18) | ((uint32_t)(s[*i + 1] & 0x3F) << 12) |
            ((uint32_t)(s[*i + 2] & 0x3F) << 6) | (s[*i + 3] & 0x3F);
        *i += 4;
    }
    return c;
}


#endif /* SLDA_UTF8_H */
