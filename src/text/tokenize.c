/* tokenize.c - UTF-8 checks, text cleanup (text.*), lower-casing, stop words, minimum length.
 *
 * A text is validated as a whole first (strict UTF-8: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated or stray continuation
 * bytes), so a bad document is rejected with the byte offset before any
 * token reaches the caller. One pass then cuts tokens, each lower-cased code
 * point by code point; docs/text.md has the rules with examples.
 *
 * Cleanup (slda_text_rules_t, each rule off in the "keep"/"split" setting
 * that reproduces the tokenizer of snapshots written before the rules):
 *   - recognised in the raw bytes where no token is open: HTML tags
 *     (text.html=decode: '<' + letter, '/' or '!', up to the next '>' within
 *     TAG_MAX bytes), URLs (text.urls=drop: http://, https://, ftp://, www.,
 *     to the next space, '<', '>', '"', non-ASCII byte or escaped quote),
 *     e-mail addresses (text.urls=drop: local@domain.tld, ASCII), @mentions
 *     (text.mentions=drop: '@' + [A-Za-z0-9_]+, optionally @domain) and
 *     #hashtags (text.hashtags=drop). Such a span is skipped whole;
 *   - character references (text.html=decode) are decoded as the text is
 *     read, so they may sit inside a word (caf&eacute;, don&#39;t): the 253
 *     HTML 4 / XML names, &#N; and &#xH; (0, surrogates and values above
 *     U+10FFFF become U+FFFD; 128-159 are read as windows-1252, as HTML5
 *     does); a reference that decodes to '&' followed by another reference
 *     ("&amp;lt;", text escaped twice) decodes that one as well;
 *   - word characters are the letters below, plus ASCII digits unless
 *     text.digits=split, plus an apostrophe (' or U+2019, stored as ')
 *     between two word characters when text.apostrophes=keep; a final
 *     possessive 's is then removed. A token with a digit is kept or dropped
 *     whole by text.digits, never cut.
 * Every decoded or cleaned form is no longer in UTF-8 than the bytes it came
 * from (a reference is at least 4 bytes and decodes to at most 4; U+2019 is
 * 3 bytes and becomes 1), so the tokens of a text never hold more bytes than
 * the text.
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
 * Stop words (text.stopwords: built-in lists from stopwords.c, files and
 * inline word lists joined by '+') are normalised the same way and kept in
 * an open-addressing hash set, so a lookup is one XXH3 hash and usually one
 * compare. A tokenizer is read-only after slda_tokenizer_new and may be
 * shared by threads.
 */
#include "text/tokenize.h"
#include "core/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Stop-word hash seed: in-memory only, never persisted. */
#define STOP_SEED 0x5d1a5709u
/* Tokens up to this many bytes are built on the stack. */
#define TOKEN_STACK 256
/* A tag longer than this is not taken for one: "a < b ... c > d" in plain
 * text stays text unless the two signs are this close. */
#define TAG_MAX 1024
/* Longest HTML 4 entity name is 8 ("thetasym"); longer runs are not looked up. */
#define ENTITY_NAME_MAX 8
/* Digits read in a numeric reference before it is left as text (values
 * saturate above U+10FFFF long before). */
#define ENTITY_DIGITS_MAX 16
#define APOSTROPHE_RIGHT 0x2019 /* ’ RIGHT SINGLE QUOTATION MARK, the typographic apostrophe */

typedef struct stop_entry_s {
    uint64_t hash;
    char *word; /* NULL = empty slot */
    size_t len;
} stop_entry_t;

struct slda_tokenizer_s {
    uint32_t min_length;
    uint32_t max_bytes;  /* text.max.bytes (0 = no limit): larger texts are refused */
    char *stop_spec;     /* text.stopwords as given (NULL = none), for messages */
    slda_text_rules_t rules;
    unsigned char ascii_class[128]; /* C_* of each ASCII byte under the rules */
    stop_entry_t *stop; /* nslots, power of two, load <= 1/2 */
    size_t nslots;
    size_t nstop;
};

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

/* Normalise (lower-case, and U+2019 -> ' when apostrophes are kept, as in
 * tokens; input is valid UTF-8) and add one stop word. */
static void stop_add(slda_tokenizer_t *tok, const char *word, size_t len)
{
    char *norm = slda_xmalloc(len + 1);
    size_t n = 0, i = 0;
    while (i < len) {
        uint32_t cp = slda_char_lower(slda_utf8_decode((const unsigned char *)word, &i));
        if (cp == APOSTROPHE_RIGHT && tok->rules.apostrophes == SLDA_TEXT_APOS_KEEP)
            cp = '\'';
        n += slda_utf8_encode(cp, norm + n);
    }
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

/* ---- stop-word lists: text.stopwords is parts joined by '+' ---- */

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

static slda_err_t stop_load_file(slda_tokenizer_t *tok, const char *spec, const char *path,
                                 char *errstr, size_t errstr_size)
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
                            "onix) and cannot open it as a file: %s%s%s%s",
                            path, strerror(errno), strcmp(spec, path) ? " (in \"" : "",
                            strcmp(spec, path) ? spec : "", strcmp(spec, path) ? "\")" : "");
    while (err == SLDA_OK && (n = getline(&line, &cap, f)) >= 0)
        err = stop_file_line(tok, line, (size_t)n, path, ++lineno, errstr, errstr_size);
    if (err == SLDA_OK && ferror(f))
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "stop words \"%s\": read error: %s",
                           path, strerror(errno));
    free(line);
    fclose(f);
    return err;
}

/* A part with a comma is a list of words: "rt,via", "amp," (one word). */
static slda_err_t stop_load_words(slda_tokenizer_t *tok, const char *spec, const char *part,
                                  size_t len, char *errstr, size_t errstr_size)
{
    size_t off = 0, start = 0;
    const char *why = NULL;
    if (!slda_utf8_valid(part, len, &off, &why))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_UTF8,
                            "text.stopwords \"%s\": invalid UTF-8 at byte %zu (%s)", spec,
                            (size_t)(part - spec) + off, why);
    while (start < len) {
        const char *comma = memchr(part + start, ',', len - start);
        size_t end = comma ? (size_t)(comma - part) : len, a = start, b = end;
        while (a < b && strchr(" \t", part[a]))
            a++;
        while (b > a && strchr(" \t", part[b - 1]))
            b--;
        if (b > a)
            stop_add(tok, part + a, b - a);
        start = end + 1;
    }
    return SLDA_OK;
}

static const slda_stoplist_t *stop_builtin(const char *part, size_t len)
{
    for (size_t l = 0; l < slda_nstoplists; l++)
        if (strlen(slda_stoplists[l].name) == len && !memcmp(part, slda_stoplists[l].name, len))
            return &slda_stoplists[l];
    return NULL;
}

typedef enum { PART_EMPTY, PART_NONE, PART_BUILTIN, PART_WORDS, PART_FILE } part_kind_t;

static part_kind_t part_kind(const char *part, size_t len)
{
    if (len == 0)
        return PART_EMPTY;
    if (len == 4 && !memcmp(part, "none", 4))
        return PART_NONE;
    if (stop_builtin(part, len))
        return PART_BUILTIN;
    return memchr(part, ',', len) ? PART_WORDS : PART_FILE;
}

static slda_err_t stop_load_part(slda_tokenizer_t *tok, const char *spec, const char *part,
                                 size_t len, char *errstr, size_t errstr_size)
{
    const slda_stoplist_t *list;
    char *path;
    slda_err_t err;
    switch (part_kind(part, len)) {
    case PART_EMPTY:
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "text.stopwords \"%s\": empty part at byte %zu (parts are joined "
                            "by a single +)", spec, (size_t)(part - spec));
    case PART_NONE: return SLDA_OK;
    case PART_BUILTIN:
        list = stop_builtin(part, len);
        for (size_t i = 0; i < list->n; i++)
            stop_add(tok, list->words[i], strlen(list->words[i]));
        return SLDA_OK;
    case PART_WORDS: return stop_load_words(tok, spec, part, len, errstr, errstr_size);
    case PART_FILE: break;
    }
    path = slda_xstrndup(part, len);
    err = stop_load_file(tok, spec, path, errstr, errstr_size);
    free(path);
    return err;
}

static slda_err_t stop_load(slda_tokenizer_t *tok, const char *spec, char *errstr,
                            size_t errstr_size)
{
    const char *part = spec;
    if (!spec || !*spec)
        return SLDA_OK;
    for (;;) {
        const char *plus = strchr(part, '+');
        size_t len = plus ? (size_t)(plus - part) : strlen(part);
        slda_err_t err = stop_load_part(tok, spec, part, len, errstr, errstr_size);
        if (err != SLDA_OK)
            return err;
        if (!plus)
            return SLDA_OK;
        part = plus + 1;
    }
}

char *slda_stopwords_without_files(const char *spec)
{
    size_t n = 0, cap = spec ? strlen(spec) + 5 : 5;
    char *out = slda_xmalloc(cap);
    const char *part = spec;
    while (part && *part) {
        const char *plus = strchr(part, '+');
        size_t len = plus ? (size_t)(plus - part) : strlen(part);
        part_kind_t kind = part_kind(part, len);
        if (kind == PART_BUILTIN || kind == PART_WORDS) {
            if (n)
                out[n++] = '+';
            memcpy(out + n, part, len);
            n += len;
        }
        part = plus ? plus + 1 : NULL;
    }
    if (n == 0) {
        memcpy(out, "none", 4);
        n = 4;
    }
    out[n] = '\0';
    return out;
}

/* ---- HTML character references ---- */

/* The HTML 4.01 entities plus XML's apos (Python's html.entities.name2codepoint
 * + apos), sorted by name in byte order for bsearch. */
static const struct entity_s {
    const char *name;
    uint32_t cp;
} entities[] = {
    {"AElig", 0x00C6}, {"Aacute", 0x00C1}, {"Acirc", 0x00C2}, {"Agrave", 0x00C0},
    {"Alpha", 0x0391}, {"Aring", 0x00C5}, {"Atilde", 0x00C3}, {"Auml", 0x00C4},
    {"Beta", 0x0392}, {"Ccedil", 0x00C7}, {"Chi", 0x03A7}, {"Dagger", 0x2021},
    {"Delta", 0x0394}, {"ETH", 0x00D0}, {"Eacute", 0x00C9}, {"Ecirc", 0x00CA},
    {"Egrave", 0x00C8}, {"Epsilon", 0x0395}, {"Eta", 0x0397}, {"Euml", 0x00CB},
    {"Gamma", 0x0393}, {"Iacute", 0x00CD}, {"Icirc", 0x00CE}, {"Igrave", 0x00CC},
    {"Iota", 0x0399}, {"Iuml", 0x00CF}, {"Kappa", 0x039A}, {"Lambda", 0x039B}, {"Mu", 0x039C},
    {"Ntilde", 0x00D1}, {"Nu", 0x039D}, {"OElig", 0x0152}, {"Oacute", 0x00D3},
    {"Ocirc", 0x00D4}, {"Ograve", 0x00D2}, {"Omega", 0x03A9}, {"Omicron", 0x039F},
    {"Oslash", 0x00D8}, {"Otilde", 0x00D5}, {"Ouml", 0x00D6}, {"Phi", 0x03A6}, {"Pi", 0x03A0},
    {"Prime", 0x2033}, {"Psi", 0x03A8}, {"Rho", 0x03A1}, {"Scaron", 0x0160}, {"Sigma", 0x03A3},
    {"THORN", 0x00DE}, {"Tau", 0x03A4}, {"Theta", 0x0398}, {"Uacute", 0x00DA},
    {"Ucirc", 0x00DB}, {"Ugrave", 0x00D9}, {"Upsilon", 0x03A5}, {"Uuml", 0x00DC},
    {"Xi", 0x039E}, {"Yacute", 0x00DD}, {"Yuml", 0x0178}, {"Zeta", 0x0396}, {"aacute", 0x00E1},
    {"acirc", 0x00E2}, {"acute", 0x00B4}, {"aelig", 0x00E6}, {"agrave", 0x00E0},
    {"alefsym", 0x2135}, {"alpha", 0x03B1}, {"amp", 0x0026}, {"and", 0x2227}, {"ang", 0x2220},
    {"apos", 0x0027}, {"aring", 0x00E5}, {"asymp", 0x2248}, {"atilde", 0x00E3},
    {"auml", 0x00E4}, {"bdquo", 0x201E}, {"beta", 0x03B2}, {"brvbar", 0x00A6}, {"bull", 0x2022},
    {"cap", 0x2229}, {"ccedil", 0x00E7}, {"cedil", 0x00B8}, {"cent", 0x00A2}, {"chi", 0x03C7},
    {"circ", 0x02C6}, {"clubs", 0x2663}, {"cong", 0x2245}, {"copy", 0x00A9}, {"crarr", 0x21B5},
    {"cup", 0x222A}, {"curren", 0x00A4}, {"dArr", 0x21D3}, {"dagger", 0x2020}, {"darr", 0x2193},
    {"deg", 0x00B0}, {"delta", 0x03B4}, {"diams", 0x2666}, {"divide", 0x00F7},
    {"eacute", 0x00E9}, {"ecirc", 0x00EA}, {"egrave", 0x00E8}, {"empty", 0x2205},
    {"emsp", 0x2003}, {"ensp", 0x2002}, {"epsilon", 0x03B5}, {"equiv", 0x2261}, {"eta", 0x03B7},
    {"eth", 0x00F0}, {"euml", 0x00EB}, {"euro", 0x20AC}, {"exist", 0x2203}, {"fnof", 0x0192},
    {"forall", 0x2200}, {"frac12", 0x00BD}, {"frac14", 0x00BC}, {"frac34", 0x00BE},
    {"frasl", 0x2044}, {"gamma", 0x03B3}, {"ge", 0x2265}, {"gt", 0x003E}, {"hArr", 0x21D4},
    {"harr", 0x2194}, {"hearts", 0x2665}, {"hellip", 0x2026}, {"iacute", 0x00ED},
    {"icirc", 0x00EE}, {"iexcl", 0x00A1}, {"igrave", 0x00EC}, {"image", 0x2111},
    {"infin", 0x221E}, {"int", 0x222B}, {"iota", 0x03B9}, {"iquest", 0x00BF}, {"isin", 0x2208},
    {"iuml", 0x00EF}, {"kappa", 0x03BA}, {"lArr", 0x21D0}, {"lambda", 0x03BB}, {"lang", 0x2329},
    {"laquo", 0x00AB}, {"larr", 0x2190}, {"lceil", 0x2308}, {"ldquo", 0x201C}, {"le", 0x2264},
    {"lfloor", 0x230A}, {"lowast", 0x2217}, {"loz", 0x25CA}, {"lrm", 0x200E},
    {"lsaquo", 0x2039}, {"lsquo", 0x2018}, {"lt", 0x003C}, {"macr", 0x00AF}, {"mdash", 0x2014},
    {"micro", 0x00B5}, {"middot", 0x00B7}, {"minus", 0x2212}, {"mu", 0x03BC}, {"nabla", 0x2207},
    {"nbsp", 0x00A0}, {"ndash", 0x2013}, {"ne", 0x2260}, {"ni", 0x220B}, {"not", 0x00AC},
    {"notin", 0x2209}, {"nsub", 0x2284}, {"ntilde", 0x00F1}, {"nu", 0x03BD}, {"oacute", 0x00F3},
    {"ocirc", 0x00F4}, {"oelig", 0x0153}, {"ograve", 0x00F2}, {"oline", 0x203E},
    {"omega", 0x03C9}, {"omicron", 0x03BF}, {"oplus", 0x2295}, {"or", 0x2228}, {"ordf", 0x00AA},
    {"ordm", 0x00BA}, {"oslash", 0x00F8}, {"otilde", 0x00F5}, {"otimes", 0x2297},
    {"ouml", 0x00F6}, {"para", 0x00B6}, {"part", 0x2202}, {"permil", 0x2030}, {"perp", 0x22A5},
    {"phi", 0x03C6}, {"pi", 0x03C0}, {"piv", 0x03D6}, {"plusmn", 0x00B1}, {"pound", 0x00A3},
    {"prime", 0x2032}, {"prod", 0x220F}, {"prop", 0x221D}, {"psi", 0x03C8}, {"quot", 0x0022},
    {"rArr", 0x21D2}, {"radic", 0x221A}, {"rang", 0x232A}, {"raquo", 0x00BB}, {"rarr", 0x2192},
    {"rceil", 0x2309}, {"rdquo", 0x201D}, {"real", 0x211C}, {"reg", 0x00AE}, {"rfloor", 0x230B},
    {"rho", 0x03C1}, {"rlm", 0x200F}, {"rsaquo", 0x203A}, {"rsquo", 0x2019}, {"sbquo", 0x201A},
    {"scaron", 0x0161}, {"sdot", 0x22C5}, {"sect", 0x00A7}, {"shy", 0x00AD}, {"sigma", 0x03C3},
    {"sigmaf", 0x03C2}, {"sim", 0x223C}, {"spades", 0x2660}, {"sub", 0x2282}, {"sube", 0x2286},
    {"sum", 0x2211}, {"sup", 0x2283}, {"sup1", 0x00B9}, {"sup2", 0x00B2}, {"sup3", 0x00B3},
    {"supe", 0x2287}, {"szlig", 0x00DF}, {"tau", 0x03C4}, {"there4", 0x2234}, {"theta", 0x03B8},
    {"thetasym", 0x03D1}, {"thinsp", 0x2009}, {"thorn", 0x00FE}, {"tilde", 0x02DC},
    {"times", 0x00D7}, {"trade", 0x2122}, {"uArr", 0x21D1}, {"uacute", 0x00FA},
    {"uarr", 0x2191}, {"ucirc", 0x00FB}, {"ugrave", 0x00F9}, {"uml", 0x00A8}, {"upsih", 0x03D2},
    {"upsilon", 0x03C5}, {"uuml", 0x00FC}, {"weierp", 0x2118}, {"xi", 0x03BE},
    {"yacute", 0x00FD}, {"yen", 0x00A5}, {"yuml", 0x00FF}, {"zeta", 0x03B6}, {"zwj", 0x200D},
    {"zwnj", 0x200C},
};

/* Numeric references 128..159 as windows-1252, as HTML5 reads them (0 = no
 * mapping: the C1 control itself). */
static const uint16_t cp1252[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

static int is_ascii_alnum(unsigned c)
{
    return (c | 0x20) - 'a' < 26u || c - '0' < 10u;
}

static int hex_value(unsigned c)
{
    if (c - '0' < 10u)
        return (int)(c - '0');
    if ((c | 0x20) - 'a' < 6u)
        return (int)((c | 0x20) - 'a' + 10);
    return -1;
}

static uint32_t numeric_cp(uint64_t v)
{
    if (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0xFFFD;
    if (v >= 0x80 && v <= 0x9F && cp1252[v - 0x80])
        return cp1252[v - 0x80];
    return (uint32_t)v;
}

/* The reference whose body starts at s[j] (just after its '&'): 1 with its
 * code point and the index after its ';', or 0 when there is none. */
static int entity_body(const unsigned char *s, size_t len, size_t j, uint32_t *cp, size_t *end)
{
    size_t start;
    if (j < len && s[j] == '#') {
        uint64_t v = 0;
        int hex = j + 1 < len && (s[j + 1] | 0x20) == 'x', d;
        j += hex ? 2 : 1;
        start = j;
        while (j < len && j - start < ENTITY_DIGITS_MAX &&
               (d = hex ? hex_value(s[j]) : ((unsigned)s[j] - '0' < 10u ? s[j] - '0' : -1)) >= 0) {
            v = v * (hex ? 16 : 10) + (uint64_t)d;
            if (v > 0x10FFFF)
                v = 0x110000; /* saturate: stays out of range */
            j++;
        }
        if (j == start || j >= len || s[j] != ';')
            return 0;
        *cp = numeric_cp(v);
        *end = j + 1;
        return 1;
    }
    start = j;
    while (j < len && j - start <= ENTITY_NAME_MAX && is_ascii_alnum(s[j]))
        j++;
    if (j == start || j - start > ENTITY_NAME_MAX || j >= len || s[j] != ';')
        return 0;
    size_t lo = 0, hi = sizeof entities / sizeof entities[0], n = j - start;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *name = entities[mid].name;
        size_t m = strlen(name);
        int c = memcmp(s + start, name, n < m ? n : m);
        if (c == 0)
            c = n < m ? -1 : n > m;
        if (c == 0) {
            *cp = entities[mid].cp;
            *end = j + 1;
            return 1;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* ---- cleanup: spans recognised in the raw bytes ---- */

typedef struct scan_s {
    const slda_tokenizer_t *tok;
    const unsigned char *s;
    size_t len;
    int decode;   /* text.html=decode: references decoded, tags skipped */
    int digits;   /* digits are word characters (text.digits != split) */
    int apos;     /* apostrophes between word characters are kept */
    int specials; /* some span rule is on (tags, URLs, mentions, hashtags) */
    int has_at;   /* the text holds '@' and e-mails or mentions are dropped */
    size_t next_at; /* offset of the next '@' at or after the scan (len: none) */
} scan_t;

/* The next code point at s[*i] (valid UTF-8), a reference decoded. */
static uint32_t next_cp_slow(const scan_t *sc, size_t *i)
{
    uint32_t cp, again;
    size_t end, end2;
    if (sc->s[*i] != '&' || !sc->decode)
        return slda_utf8_decode(sc->s, i);
    if (!entity_body(sc->s, sc->len, *i + 1, &cp, &end)) {
        *i += 1;
        return '&';
    }
    /* "&amp;lt;": an escaped reference is a reference too. */
    while (cp == '&' && entity_body(sc->s, sc->len, end, &again, &end2)) {
        cp = again;
        end = end2;
    }
    *i = end;
    return cp;
}

static inline uint32_t next_cp(const scan_t *sc, size_t *i)
{
    unsigned c = sc->s[*i];
    if (c < 0x80 && c != '&') {
        *i += 1;
        return c;
    }
    return next_cp_slow(sc, i);
}

static int is_local_char(unsigned c) /* e-mail local part */
{
    return is_ascii_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

static int is_handle_char(unsigned c) /* @mention */
{
    return is_ascii_alnum(c) || c == '_';
}

/* Length of a domain (two or more labels of [A-Za-z0-9-] joined by single
 * dots) at s[i], or 0; a final dot is left out. */
static size_t domain_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i, end = i, labels = 0;
    for (;;) {
        size_t k = j;
        while (k < len && (is_ascii_alnum(s[k]) || s[k] == '-'))
            k++;
        if (k == j)
            break;
        labels++;
        end = k;
        if (k + 1 >= len || s[k] != '.')
            break;
        j = k + 1;
    }
    return labels >= 2 ? end - i : 0;
}

/* local@domain starting at s[i]. */
static size_t email_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i, d;
    while (j < len && is_local_char(s[j]))
        j++;
    if (j == i || j >= len || s[j] != '@')
        return 0;
    d = domain_len(s, len, j + 1);
    return d ? j + 1 + d - i : 0;
}

/* A reference for a character that ends a URL in HTML ("&quot;", "&gt;")? */
static int url_stop_entity(const scan_t *sc, size_t j)
{
    uint32_t cp;
    size_t end;
    return sc->decode && entity_body(sc->s, sc->len, j + 1, &cp, &end) &&
           (cp == '"' || cp == '<' || cp == '>' || cp == '\'');
}

/* Does s[i..len) start with prefix (lower-case ASCII), in any case? */
static int has_prefix(const unsigned char *s, size_t len, size_t i, const char *prefix)
{
    for (; *prefix; prefix++, i++)
        if (i >= len || (s[i] | (*prefix >= 'a' ? 0x20 : 0)) != (unsigned char)*prefix)
            return 0;
    return 1;
}

static size_t url_len(const scan_t *sc, size_t i)
{
    static const char *const prefixes[] = {"http://", "https://", "ftp://", "www."};
    const unsigned char *s = sc->s;
    unsigned c = s[i] | 0x20;
    size_t j = 0;
    if (c != 'h' && c != 'f' && c != 'w')
        return 0;
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0] && !j; k++)
        if (has_prefix(s, sc->len, i, prefixes[k]))
            j = i + strlen(prefixes[k]);
    if (!j)
        return 0;
    while (j < sc->len && s[j] > ' ' && s[j] < 0x7F && s[j] != '<' && s[j] != '>' &&
           s[j] != '"' && !(s[j] == '&' && url_stop_entity(sc, j)))
        j++;
    return j - i;
}

/* '@' + handle (+ "@domain" for the user@host form). */
static size_t mention_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1, d;
    while (j < len && is_handle_char(s[j]))
        j++;
    if (j == i + 1)
        return 0;
    if (j + 1 < len && s[j] == '@' && (d = domain_len(s, len, j + 1)) > 0)
        j += 1 + d;
    return j - i;
}

/* '#' + a run of letters, digits and '_'. */
static size_t hashtag_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1;
    while (j < len) {
        size_t k = j;
        uint32_t cp = slda_utf8_decode(s, &k);
        if (!slda_char_is_letter(cp) && cp - '0' >= 10u && cp != '_')
            break;
        j = k;
    }
    return j - i - 1 ? j - i : 0;
}

/* '<' + letter, '/' + letter, '!' or '?', up to the next '>'. */
static size_t tag_len(const unsigned char *s, size_t len, size_t i)
{
    size_t j = i + 1;
    if (j < len && s[j] == '/')
        j++;
    if (j >= len ||
        !(((unsigned)s[j] | 0x20) - 'a' < 26u || (j == i + 1 && (s[j] == '!' || s[j] == '?'))))
        return 0;
    for (; j < len && j - i < TAG_MAX; j++) {
        if (s[j] == '>')
            return j + 1 - i;
        if (s[j] == '<')
            return 0;
    }
    return 0;
}

/* An e-mail address's local part is at most 64 bytes (RFC 5321): further
 * from the next '@' than that, no address starts here. */
#define LOCAL_MAX 64

/* Bytes to skip at s[i], where no token is open: 0 when nothing starts here. */
static size_t span_at(scan_t *sc, size_t i)
{
    const slda_text_rules_t *r = &sc->tok->rules;
    const unsigned char *s = sc->s;
    unsigned c = s[i], prev = i ? s[i - 1] : ' ';
    size_t n;
    if (c >= 0x80 || c == ' ')
        return 0;
    if (c == '<')
        return sc->decode ? tag_len(s, sc->len, i) : 0;
    if (c == '#')
        return r->hashtags == SLDA_TEXT_HASHTAGS_DROP && !is_ascii_alnum(prev)
                   ? hashtag_len(s, sc->len, i)
                   : 0;
    if (c == '@')
        return sc->has_at && r->mentions == SLDA_TEXT_MENTIONS_DROP && !is_handle_char(prev)
                   ? mention_len(s, sc->len, i)
                   : 0;
    if (r->urls != SLDA_TEXT_URLS_DROP || !is_local_char(c))
        return 0;
    if (!is_ascii_alnum(prev) && (n = url_len(sc, i)) > 0)
        return n;
    if (!sc->has_at || is_local_char(prev))
        return 0;
    if (sc->next_at < i) {
        const unsigned char *at = memchr(s + i, '@', sc->len - i);
        sc->next_at = at ? (size_t)(at - s) : sc->len;
    }
    return sc->next_at - i <= LOCAL_MAX ? email_len(s, sc->len, i) : 0;
}

/* ---- tokenizer ---- */

enum { C_SEP, C_LETTER, C_DIGIT, C_APOS };

/* ASCII classes before the rules: letters, digits, the apostrophe. */
static const unsigned char ascii_classes[128] = {
    ['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
    ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
    ['\''] = C_APOS,
    ['A'] = C_LETTER, ['B'] = C_LETTER, ['C'] = C_LETTER, ['D'] = C_LETTER, ['E'] = C_LETTER,
    ['F'] = C_LETTER, ['G'] = C_LETTER, ['H'] = C_LETTER, ['I'] = C_LETTER, ['J'] = C_LETTER,
    ['K'] = C_LETTER, ['L'] = C_LETTER, ['M'] = C_LETTER, ['N'] = C_LETTER, ['O'] = C_LETTER,
    ['P'] = C_LETTER, ['Q'] = C_LETTER, ['R'] = C_LETTER, ['S'] = C_LETTER, ['T'] = C_LETTER,
    ['U'] = C_LETTER, ['V'] = C_LETTER, ['W'] = C_LETTER, ['X'] = C_LETTER, ['Y'] = C_LETTER,
    ['Z'] = C_LETTER,
    ['a'] = C_LETTER, ['b'] = C_LETTER, ['c'] = C_LETTER, ['d'] = C_LETTER, ['e'] = C_LETTER,
    ['f'] = C_LETTER, ['g'] = C_LETTER, ['h'] = C_LETTER, ['i'] = C_LETTER, ['j'] = C_LETTER,
    ['k'] = C_LETTER, ['l'] = C_LETTER, ['m'] = C_LETTER, ['n'] = C_LETTER, ['o'] = C_LETTER,
    ['p'] = C_LETTER, ['q'] = C_LETTER, ['r'] = C_LETTER, ['s'] = C_LETTER, ['t'] = C_LETTER,
    ['u'] = C_LETTER, ['v'] = C_LETTER, ['w'] = C_LETTER, ['x'] = C_LETTER, ['y'] = C_LETTER,
    ['z'] = C_LETTER,
};

static slda_err_t check_rules(const slda_text_rules_t *r, char *errstr, size_t errstr_size)
{
    static const struct {
        const char *key;
        size_t off;
        int n;
    } rules[] = {
        {"text.urls", offsetof(slda_text_rules_t, urls), 2},
        {"text.html", offsetof(slda_text_rules_t, html), 2},
        {"text.mentions", offsetof(slda_text_rules_t, mentions), 2},
        {"text.hashtags", offsetof(slda_text_rules_t, hashtags), 2},
        {"text.apostrophes", offsetof(slda_text_rules_t, apostrophes), 2},
        {"text.digits", offsetof(slda_text_rules_t, digits), 4},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        int v = *(const int *)((const char *)r + rules[i].off);
        if (v < 0 || v >= rules[i].n)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "%s: invalid setting %d", rules[i].key, v);
    }
    return SLDA_OK;
}

slda_tokenizer_t *slda_tokenizer_new(const slda_params_t *p, char *errstr, size_t errstr_size)
{
    slda_tokenizer_t *tok;
    if (check_rules(&p->text, errstr, errstr_size) != SLDA_OK)
        return NULL;
    tok = slda_xcalloc(1, sizeof *tok);
    tok->min_length = p->min_length;
    tok->max_bytes = p->max_doc_bytes;
    tok->stop_spec = p->stopwords ? slda_xstrdup(p->stopwords) : NULL;
    tok->rules = p->text;
    for (unsigned c = 0; c < 128; c++) {
        int cls = ascii_classes[c];
        if ((cls == C_DIGIT && p->text.digits == SLDA_TEXT_DIGITS_SPLIT) ||
            (cls == C_APOS && p->text.apostrophes != SLDA_TEXT_APOS_KEEP))
            cls = C_SEP;
        tok->ascii_class[c] = (unsigned char)cls;
    }
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
    free(tok->stop_spec);
    free(tok);
}

uint32_t slda_tokenizer_min_length(const slda_tokenizer_t *tok)
{
    return tok->min_length;
}

const char *slda_tokenizer_stopwords(const slda_tokenizer_t *tok)
{
    return tok->stop_spec ? tok->stop_spec : "none";
}

slda_err_t slda_tokenizer_check_size(const slda_tokenizer_t *tok, size_t len, char *errstr,
                                     size_t errstr_size)
{
    if (tok->max_bytes > 0 && len > tok->max_bytes)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "document: %zu bytes is over text.max.bytes=%u", len,
                            tok->max_bytes);
    return SLDA_OK;
}

const slda_text_rules_t *slda_tokenizer_rules(const slda_tokenizer_t *tok)
{
    return &tok->rules;
}

/* The token being built: on the stack up to TOKEN_STACK bytes, then on the
 * heap (kept for the rest of the text). */
typedef struct tokbuf_s {
    char *buf;
    size_t n, cap; /* cap leaves room for the NUL */
    char *heap;
    char stack[TOKEN_STACK + 1];
} tokbuf_t;

static void tb_put(tokbuf_t *tb, uint32_t cp)
{
    if (tb->n + 4 > tb->cap) {
        size_t cap = tb->cap * 2;
        if (tb->buf == tb->stack) {
            tb->heap = slda_xrealloc(tb->heap, cap + 1);
            memcpy(tb->heap, tb->stack, tb->n);
        } else {
            tb->heap = slda_xrealloc(tb->heap, cap + 1);
        }
        tb->buf = tb->heap;
        tb->cap = cap;
    }
    tb->n += slda_utf8_encode(cp, tb->buf + tb->n);
}

static inline int ascii_class(const scan_t *sc, unsigned c)
{
    return sc->tok->ascii_class[c];
}

static int char_class(const scan_t *sc, uint32_t cp)
{
    if (cp < 0x80)
        return ascii_class(sc, cp);
    if (cp == APOSTROPHE_RIGHT)
        return sc->apos ? C_APOS : C_SEP;
    return slda_char_is_letter(cp) ? C_LETTER : C_SEP;
}

/* Pass a finished token on unless a rule drops it. */
static void emit(const scan_t *sc, tokbuf_t *tb, uint32_t nchars, uint32_t nletters,
                 uint32_t ndigits, slda_token_cb cb, void *opaque)
{
    const slda_tokenizer_t *tok = sc->tok;
    char *buf = tb->buf;
    size_t len = tb->n;
    if (sc->apos && len >= 3 && buf[len - 2] == '\'' && buf[len - 1] == 's') {
        len -= 2; /* possessive: obama's -> obama */
        nchars -= 2;
        nletters--;
    }
    if (ndigits > 0 && (tok->rules.digits == SLDA_TEXT_DIGITS_DROP ||
                        (tok->rules.digits == SLDA_TEXT_DIGITS_MIXED && nletters == 0)))
        return;
    if (nchars < tok->min_length || slda_tokenizer_is_stopword(tok, buf, len))
        return;
    buf[len] = '\0';
    cb(buf, len, opaque);
}

/* Cut the token that starts at s[i] (a word character); returns its end. */
static size_t scan_token(const scan_t *sc, size_t i, tokbuf_t *tb, slda_token_cb cb,
                         void *opaque)
{
    uint32_t nchars = 0, nletters = 0, ndigits = 0;
    tb->n = 0;
    while (i < sc->len) {
        unsigned c = sc->s[i];
        if (c < 0x80 && c != '&' && tb->n < tb->cap) { /* ASCII letters and digits */
            int cls = ascii_class(sc, c);
            if (cls == C_LETTER) {
                tb->buf[tb->n++] = (char)(c | 0x20);
                nletters++;
                nchars++;
                i++;
                continue;
            }
            if (cls == C_DIGIT) {
                tb->buf[tb->n++] = (char)c;
                ndigits++;
                nchars++;
                i++;
                continue;
            }
            if (cls == C_SEP)
                break;
        }
        size_t j = i;
        uint32_t cp = next_cp(sc, &j);
        int cls = char_class(sc, cp);
        if (cls == C_APOS) {
            size_t k = j;
            int next = k < sc->len ? char_class(sc, next_cp(sc, &k)) : C_SEP;
            if (next != C_LETTER && next != C_DIGIT)
                break;
            cp = '\'';
        } else if (cls == C_SEP) {
            break;
        }
        nletters += cls == C_LETTER;
        ndigits += cls == C_DIGIT;
        tb_put(tb, slda_char_lower(cp));
        nchars++;
        i = j;
    }
    emit(sc, tb, nchars, nletters, ndigits, cb, opaque);
    return i;
}

slda_err_t slda_tokenize(const slda_tokenizer_t *tok, const char *text, size_t len,
                         slda_token_cb cb, void *opaque, char *errstr, size_t errstr_size)
{
    const slda_text_rules_t *r = &tok->rules;
    scan_t sc;
    tokbuf_t tb;
    size_t i = 0;
    const char *at;
    slda_err_t err = slda_utf8_check(text, len, "text", errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    sc.tok = tok;
    sc.s = (const unsigned char *)text;
    sc.len = len;
    sc.decode = r->html == SLDA_TEXT_HTML_DECODE;
    sc.digits = r->digits != SLDA_TEXT_DIGITS_SPLIT;
    sc.apos = r->apostrophes == SLDA_TEXT_APOS_KEEP;
    sc.specials = sc.decode || r->urls == SLDA_TEXT_URLS_DROP ||
                  r->mentions == SLDA_TEXT_MENTIONS_DROP ||
                  r->hashtags == SLDA_TEXT_HASHTAGS_DROP;
    at = r->urls == SLDA_TEXT_URLS_DROP || r->mentions == SLDA_TEXT_MENTIONS_DROP
             ? memchr(text, '@', len)
             : NULL;
    sc.has_at = at != NULL;
    sc.next_at = at ? (size_t)(at - text) : len;
    tb.buf = tb.stack;
    tb.cap = TOKEN_STACK;
    tb.heap = NULL;
    while (i < len) {
        size_t j = i, skip;
        int cls;
        if (sc.specials && (skip = span_at(&sc, i)) > 0) {
            i += skip;
            continue;
        }
        if (sc.s[i] < 0x80 && sc.s[i] != '&') {
            j = i + 1;
            cls = ascii_class(&sc, sc.s[i]);
        } else {
            cls = char_class(&sc, next_cp(&sc, &j));
        }
        if (cls == C_LETTER || cls == C_DIGIT)
            j = scan_token(&sc, i, &tb, cb, opaque);
        i = j;
    }
    free(tb.heap);
    return SLDA_OK;
}

size_t slda_token_normalise(const slda_tokenizer_t *tok, const char *in, size_t len, char *out)
{
    size_t i = 0, n = 0;
    uint32_t nchars = 0;
    if (len == 0 || !slda_utf8_valid(in, len, NULL, NULL))
        return 0;
    while (i < len) {
        uint32_t cp = slda_char_lower(slda_utf8_decode((const unsigned char *)in, &i));
        if (cp == APOSTROPHE_RIGHT && tok->rules.apostrophes == SLDA_TEXT_APOS_KEEP)
            cp = '\'';
        n += slda_utf8_encode(cp, out + n);
        nchars++;
    }
    out[n] = '\0';
    if (nchars < tok->min_length || slda_tokenizer_is_stopword(tok, out, n))
        return 0;
    return n;
}
