/* tokenize.c - UTF-8 validation, lower-casing, stop words and minimum length.
 *
 * A text is validated as a whole first (strict UTF-8: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated or stray continuation
 * bytes), so a bad document is rejected with the byte offset before any
 * token reaches the caller. Tokens are then the maximal runs of letters,
 * each lower-cased code point by code point.
 *
 * What counts as a letter (slda_char_is_letter; a deliberate approximation
 * without Unicode tables):
 *   - ASCII a-z and A-Z; digits, apostrophes, punctuation and controls split;
 *   - in U+0080..U+00BF only the feminine/masculine ordinals and micro sign;
 *   - U+00C0..U+036F except the multiplication and division signs: Latin-1
 *     letters, Latin Extended-A/B, IPA, modifier letters and combining marks
 *     (so a decomposed accent stays inside its word);
 *   - everything from U+0370 on, except the punctuation, digit and symbol
 *     ranges listed in nonletters[] below (general punctuation to the
 *     misc-symbol blocks U+2000-U+2BFF, CJK punctuation U+3000-U+303F,
 *     fullwidth punctuation and digits, private use, emoji, ...).
 *   Scripts written without spaces (CJK, Thai) therefore come out as one
 *   token per run; there is no word segmentation.
 * Lower-casing (slda_char_lower) covers ASCII, Latin-1 (U+00C0-U+00DE except
 * U+00D7), Latin Extended-A (case pairs, U+0130 -> i, U+0178 -> U+00FF),
 * Greek (U+0391-U+03AB and the accented capitals) and Cyrillic
 * (U+0400-U+042F); other code points are kept. No mapping makes the UTF-8
 * longer, so a normalised token never exceeds its raw bytes.
 *
 * Stop words (built-in lists from stopwords.c, or a file) are normalised the
 * same way and kept in an open-addressing hash set, so a lookup is one XXH3
 * hash and usually one compare. A tokenizer is read-only after
 * slda_tokenizer_new and may be shared by threads.
 */
#include "tokenize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Stop-word hash seed: in-memory only, never persisted. */
#define STOP_SEED 0x5d1a5709u
/* Tokens up to this many bytes are built on the stack. */
#define TOKEN_STACK 256

typedef struct stop_entry_s {
    uint64_t hash;
    char *word; /* NULL = empty slot */
    size_t len;
} stop_entry_t;

struct slda_tokenizer_s {
    uint32_t min_length;
    stop_entry_t *stop; /* nslots, power of two, load <= 1/2 */
    size_t nslots;
    size_t nstop;
};

/* ---- UTF-8 ---- */

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

/* Decode one code point of already validated UTF-8 at s[*i], advancing *i. */
static uint32_t decode(const unsigned char *s, size_t *i)
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

/* ---- character classes ---- */

/* Code points >= U+0370 that are not letters: punctuation, digits, symbols,
 * format and private-use ranges. Sorted, non-overlapping. */
static const struct {
    uint32_t lo, hi;
} nonletters[] = {
    {0x037E, 0x037E},   {0x0387, 0x0387},   /* Greek question mark, ano teleia */
    {0x055A, 0x055F},   {0x0589, 0x058A},   /* Armenian punctuation */
    {0x05BE, 0x05BE},   {0x05C0, 0x05C0},   {0x05C3, 0x05C3}, {0x05C6, 0x05C6},
    {0x05F3, 0x05F4},                       /* Hebrew punctuation */
    {0x0600, 0x060F},   {0x061B, 0x061F},   /* Arabic signs and punctuation */
    {0x0660, 0x066D},   {0x06D4, 0x06D4},   {0x06F0, 0x06F9}, /* Arabic digits, stop */
    {0x0964, 0x096F},                       /* Devanagari danda, digits */
    {0x0E50, 0x0E59},                       /* Thai digits */
    {0x1680, 0x1680},                       /* Ogham space */
    {0x2000, 0x2BFF},                       /* General Punctuation .. Misc Symbols/Arrows */
    {0x2E00, 0x2E7F},                       /* Supplemental Punctuation */
    {0x3000, 0x303F},                       /* CJK Symbols and Punctuation */
    {0xD800, 0xF8FF},                       /* surrogates, Private Use Area */
    {0xFD3E, 0xFD3F},                       /* ornate parentheses */
    {0xFE00, 0xFE1F},                       /* variation selectors, vertical forms */
    {0xFE30, 0xFE6F},                       /* CJK compatibility, small form variants */
    {0xFEFF, 0xFEFF},                       /* byte order mark */
    {0xFF00, 0xFF20},   {0xFF3B, 0xFF40},   {0xFF5B, 0xFF65}, /* fullwidth punct/digits */
    {0xFFE0, 0xFFFF},                       /* fullwidth signs, specials */
    {0x1F000, 0x1FBFF},                     /* Mahjong .. Legacy Computing (emoji) */
    {0xE0000, 0xE01EF},                     /* tags, variation selectors supplement */
    {0xF0000, 0x10FFFF},                    /* supplementary private use */
};

static int in_nonletters(uint32_t cp)
{
    size_t lo = 0, hi = sizeof nonletters / sizeof nonletters[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < nonletters[mid].lo)
            hi = mid;
        else if (cp > nonletters[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int slda_char_is_letter(uint32_t cp)
{
    if (cp < 0x80)
        return (uint32_t)((cp | 0x20) - 'a') < 26;
    if (cp < 0xC0)
        return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
    if (cp < 0x370)
        return cp != 0xD7 && cp != 0xF7;
    return !in_nonletters(cp);
}

static uint32_t lower_latin_ext_a(uint32_t cp)
{
    if (cp == 0x130)
        return 'i'; /* I with dot above: simple case mapping */
    if (cp == 0x178)
        return 0xFF; /* Y with diaeresis */
    if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E))
        return (cp & 1) ? cp + 1 : cp; /* odd capitals */
    if (cp <= 0x137 || (cp >= 0x14A && cp <= 0x177))
        return (cp & 1) ? cp : cp + 1; /* even capitals */
    return cp; /* U+0138, U+0149, U+017F are lower case already */
}

static uint32_t lower_greek(uint32_t cp)
{
    if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2)
        return cp + 0x20;
    switch (cp) {
    case 0x386: return 0x3AC;
    case 0x388: return 0x3AD;
    case 0x389: return 0x3AE;
    case 0x38A: return 0x3AF;
    case 0x38C: return 0x3CC;
    case 0x38E: return 0x3CD;
    case 0x38F: return 0x3CE;
    default: return cp;
    }
}

uint32_t slda_char_lower(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= 'A' && cp <= 'Z') ? cp + 0x20 : cp;
    if (cp < 0x100)
        return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 0x20 : cp;
    if (cp < 0x180)
        return lower_latin_ext_a(cp);
    if (cp >= 0x386 && cp <= 0x3AB)
        return lower_greek(cp);
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 0x50;
    if (cp >= 0x410 && cp <= 0x42F)
        return cp + 0x20;
    return cp;
}

/* ---- stop-word set ---- */

static stop_entry_t *stop_slot(stop_entry_t *tab, size_t nslots, const char *w, size_t len,
                               uint64_t h)
{
    size_t i = (size_t)h & (nslots - 1);
    while (tab[i].word &&
           !(tab[i].hash == h && tab[i].len == len && memcmp(tab[i].word, w, len) == 0))
        i = (i + 1) & (nslots - 1);
    return &tab[i];
}

static void stop_grow(slda_tokenizer_t *tok)
{
    size_t n = tok->nslots ? tok->nslots * 2 : 64;
    stop_entry_t *tab = slda_xcalloc(n, sizeof *tab);
    for (size_t i = 0; i < tok->nslots; i++) {
        stop_entry_t *e = &tok->stop[i];
        if (e->word)
            *stop_slot(tab, n, e->word, e->len, e->hash) = *e;
    }
    free(tok->stop);
    tok->stop = tab;
    tok->nslots = n;
}

/* Normalise (lower-case; input is valid UTF-8) and add one stop word. */
static void stop_add(slda_tokenizer_t *tok, const char *word, size_t len)
{
    char *norm = slda_xmalloc(len + 1);
    size_t n = 0, i = 0;
    while (i < len)
        n += slda_utf8_encode(slda_char_lower(decode((const unsigned char *)word, &i)), norm + n);
    norm[n] = '\0';
    if ((tok->nstop + 1) * 2 > tok->nslots)
        stop_grow(tok);
    uint64_t h = slda_hash64(norm, n, STOP_SEED);
    stop_entry_t *e = stop_slot(tok->stop, tok->nslots, norm, n, h);
    if (e->word) {
        free(norm);
        return;
    }
    e->hash = h;
    e->word = norm;
    e->len = n;
    tok->nstop++;
}

int slda_tokenizer_is_stopword(const slda_tokenizer_t *tok, const char *word, size_t len)
{
    if (tok->nstop == 0)
        return 0;
    uint64_t h = slda_hash64(word, len, STOP_SEED);
    return stop_slot(tok->stop, tok->nslots, word, len, h)->word != NULL;
}

size_t slda_tokenizer_stopword_count(const slda_tokenizer_t *tok)
{
    return tok->nstop;
}

/* One line of a stop-word file: strip a '#' comment and surrounding space. */
static slda_err_t stop_file_line(slda_tokenizer_t *tok, char *line, size_t len,
                                 const char *path, unsigned long lineno, char *errstr,
                                 size_t errstr_size)
{
    char *hash = memchr(line, '#', len);
    size_t start = 0, off = 0;
    const char *why = NULL;
    if (hash)
        len = (size_t)(hash - line);
    while (len > 0 && line[len - 1] && strchr(" \t\r\n\v\f", line[len - 1]))
        len--;
    while (start < len && line[start] && strchr(" \t\v\f", line[start]))
        start++;
    if (start == len)
        return SLDA_OK;
    if (!slda_utf8_valid(line + start, len - start, &off, &why))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_UTF8,
                            "stop words \"%s\": line %lu: invalid UTF-8 at byte %zu (%s)", path,
                            lineno, start + off, why);
    stop_add(tok, line + start, len - start);
    return SLDA_OK;
}

static slda_err_t stop_load_file(slda_tokenizer_t *tok, const char *path, char *errstr,
                                 size_t errstr_size)
{
    FILE *f = fopen(path, "rb");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long lineno = 0;
    slda_err_t err = SLDA_OK;
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                            "text.stopwords \"%s\": not a built-in list (none, smart, snowball, "
                            "onix) and cannot open it as a file: %s",
                            path, strerror(errno));
    while (err == SLDA_OK && (n = getline(&line, &cap, f)) >= 0)
        err = stop_file_line(tok, line, (size_t)n, path, ++lineno, errstr, errstr_size);
    if (err == SLDA_OK && ferror(f))
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "stop words \"%s\": read error: %s",
                           path, strerror(errno));
    free(line);
    fclose(f);
    return err;
}

static slda_err_t stop_load(slda_tokenizer_t *tok, const char *spec, char *errstr,
                            size_t errstr_size)
{
    if (!spec || !*spec || strcmp(spec, "none") == 0)
        return SLDA_OK;
    for (size_t l = 0; l < slda_nstoplists; l++) {
        const slda_stoplist_t *list = &slda_stoplists[l];
        if (strcmp(spec, list->name) == 0) {
            for (size_t i = 0; i < list->n; i++)
                stop_add(tok, list->words[i], strlen(list->words[i]));
            return SLDA_OK;
        }
    }
    return stop_load_file(tok, spec, errstr, errstr_size);
}

/* ---- tokenizer ---- */

slda_tokenizer_t *slda_tokenizer_new(const slda_params_t *p, char *errstr, size_t errstr_size)
{
    slda_tokenizer_t *tok = slda_xcalloc(1, sizeof *tok);
    tok->min_length = p->min_length;
    if (stop_load(tok, p->stopwords, errstr, errstr_size) != SLDA_OK) {
        slda_tokenizer_destroy(tok);
        return NULL;
    }
    return tok;
}

void slda_tokenizer_destroy(slda_tokenizer_t *tok)
{
    if (!tok)
        return;
    for (size_t i = 0; i < tok->nslots; i++)
        free(tok->stop[i].word);
    free(tok->stop);
    free(tok);
}

/* Pass a finished token on unless it is too short or a stop word. */
static void emit(const slda_tokenizer_t *tok, char *buf, size_t len, uint32_t nchars,
                 slda_token_cb cb, void *opaque)
{
    if (nchars < tok->min_length || slda_tokenizer_is_stopword(tok, buf, len))
        return;
    buf[len] = '\0';
    cb(buf, len, opaque);
}

/* End of the run of letters that starts at s[start]. */
static size_t run_end(const unsigned char *s, size_t len, size_t start)
{
    size_t j = start;
    while (j < len) {
        size_t k = j;
        if (!slda_char_is_letter(decode(s, &k)))
            break;
        j = k;
    }
    return j;
}

slda_err_t slda_tokenize(const slda_tokenizer_t *tok, const char *text, size_t len,
                         slda_token_cb cb, void *opaque, char *errstr, size_t errstr_size)
{
    const unsigned char *s = (const unsigned char *)text;
    char stackbuf[TOKEN_STACK + 1], *heap = NULL;
    size_t i = 0;
    slda_err_t err = slda_utf8_check(text, len, "text", errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    while (i < len) {
        size_t start = i, end, n = 0;
        uint32_t nchars = 0;
        char *buf = stackbuf;
        if (!slda_char_is_letter(decode(s, &i)))
            continue;
        end = run_end(s, len, i);
        /* Lower-casing never lengthens the UTF-8: end - start bytes suffice. */
        if (end - start > TOKEN_STACK) {
            heap = slda_xrealloc(heap, end - start + 1);
            buf = heap;
        }
        for (i = start; i < end; nchars++)
            n += slda_utf8_encode(slda_char_lower(decode(s, &i)), buf + n);
        emit(tok, buf, n, nchars, cb, opaque);
    }
    free(heap);
    return SLDA_OK;
}

size_t slda_token_normalise(const slda_tokenizer_t *tok, const char *in, size_t len, char *out)
{
    size_t i = 0, n = 0;
    uint32_t nchars = 0;
    if (len == 0 || !slda_utf8_valid(in, len, NULL, NULL))
        return 0;
    while (i < len) {
        n += slda_utf8_encode(slda_char_lower(decode((const unsigned char *)in, &i)), out + n);
        nchars++;
    }
    out[n] = '\0';
    if (nchars < tok->min_length || slda_tokenizer_is_stopword(tok, out, n))
        return 0;
    return n;
}
