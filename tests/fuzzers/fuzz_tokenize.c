/* fuzz_tokenize.c - fuzz target: UTF-8 validation, tokenising and token normalisation.
 *
 * Input: byte 0 picks the stop-word list (bits 0-1: none, smart, snowball,
 * onix), the minimum length (bits 2-3: 0..3 characters) and the text.*
 * cleanup rules (bits 4-7: an entry of rule_sets[], 0 = every rule off, as
 * in snapshots made before them); the rest is the text. Checked against a
 * second, plain implementation written here:
 *   - slda_utf8_valid agrees with an independent validator on every bad
 *     sequence (the offset of the first, then again after it); the ASCII,
 *     Latin-1, Greek and Cyrillic case rules hold for every code point seen,
 *     and lower-casing is idempotent, keeps letters and never lengthens;
 *     slda_tokenize fails (SLDA_ERR_UTF8, before
 *     any callback) exactly when the text is not UTF-8;
 *   - with no span rule on (URLs, HTML, mentions and hashtags kept), the
 *     tokens are exactly the maximal runs of word characters (letters; ASCII
 *     digits unless text.digits=split; ' or U+2019 between two of them when
 *     text.apostrophes=keep, stored as ', a final 's removed), lower-cased
 *     code point by code point, without the short ones, the stop words and
 *     the ones text.digits drops, in order; with every rule off that is the
 *     maximal runs of letters;
 *   - with span rules on, every token still obeys those rules: made of such
 *     characters (no apostrophe first or last), not dropped by text.digits,
 *     not short, not a stop word; the tokens hold no more bytes than the
 *     text; each token is valid UTF-8 and a fixed point of
 *     slda_token_normalise;
 *   - slda_token_normalise of the whole text is its lower-cased form (never
 *     longer than the input), or 0 exactly when the text is empty, not UTF-8,
 *     too short or a stop word.
 * The tokenizers are built once per (list, length) pair; they are read-only.
 */
#include "fuzzutil.h"
#include "core/utf8.h"
#include "text/tokenize.h"

#include <stdlib.h>
#include <string.h>

static const char *const lists[4] = {"none", "smart", "snowball", "onix"};

#define U_DROP SLDA_TEXT_URLS_DROP
#define U_KEEP SLDA_TEXT_URLS_KEEP
#define H_DEC SLDA_TEXT_HTML_DECODE
#define H_KEEP SLDA_TEXT_HTML_KEEP
#define M_DROP SLDA_TEXT_MENTIONS_DROP
#define M_KEEP SLDA_TEXT_MENTIONS_KEEP
#define T_KEEP SLDA_TEXT_HASHTAGS_KEEP
#define T_DROP SLDA_TEXT_HASHTAGS_DROP
#define A_KEEP SLDA_TEXT_APOS_KEEP
#define A_SPLIT SLDA_TEXT_APOS_SPLIT
#define D_DROP SLDA_TEXT_DIGITS_DROP
#define D_MIXED SLDA_TEXT_DIGITS_MIXED
#define D_KEEP SLDA_TEXT_DIGITS_KEEP
#define D_SPLIT SLDA_TEXT_DIGITS_SPLIT
#define S_SIMPLE SLDA_TEXT_SEGMENT_SIMPLE /* the reference model below is the simple rule's */
/* urls, html, mentions, hashtags, apostrophes, digits, segment */
static const slda_text_rules_t rule_sets[16] = {
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_SPLIT, D_SPLIT, S_SIMPLE, 50, 0}, /* every rule off */
    {U_DROP, H_DEC, M_DROP, T_KEEP, A_KEEP, D_DROP, S_SIMPLE, 50, 0},    /* the defaults */
    {U_DROP, H_DEC, M_DROP, T_KEEP, A_KEEP, D_MIXED, S_SIMPLE, 50, 0},
    {U_DROP, H_DEC, M_DROP, T_KEEP, A_KEEP, D_KEEP, S_SIMPLE, 50, 0},
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_KEEP, D_DROP, S_SIMPLE, 50, 0},   /* word rules only */
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_KEEP, D_MIXED, S_SIMPLE, 50, 0},
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_KEEP, D_KEEP, S_SIMPLE, 50, 0},
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_SPLIT, D_KEEP, S_SIMPLE, 50, 0},
    {U_KEEP, H_KEEP, M_KEEP, T_KEEP, A_SPLIT, D_DROP, S_SIMPLE, 50, 0},
    {U_KEEP, H_DEC, M_KEEP, T_KEEP, A_KEEP, D_KEEP, S_SIMPLE, 50, 0},    /* one span rule each */
    {U_DROP, H_KEEP, M_KEEP, T_KEEP, A_KEEP, D_KEEP, S_SIMPLE, 50, 0},
    {U_KEEP, H_KEEP, M_DROP, T_DROP, A_SPLIT, D_MIXED, S_SIMPLE, 50, 0},
    {U_DROP, H_DEC, M_DROP, T_DROP, A_KEEP, D_MIXED, S_SIMPLE, 50, 0},
    {U_KEEP, H_DEC, M_KEEP, T_KEEP, A_SPLIT, D_SPLIT, S_SIMPLE, 50, 0},
    {U_DROP, H_KEEP, M_DROP, T_KEEP, A_KEEP, D_SPLIT, S_SIMPLE, 50, 0},
    {U_DROP, H_DEC, M_DROP, T_DROP, A_KEEP, D_DROP, S_SIMPLE, 50, 0},
};

/* Is any rule on that cuts spans out of the text (so the word reference does not apply)? */
static int spans_on(const slda_text_rules_t *r)
{
    return r->urls == U_DROP || r->html == H_DEC || r->mentions == M_DROP || r->hashtags == T_DROP;
}

static const slda_tokenizer_t *tokenizer(unsigned list, unsigned min_length, unsigned rules)
{
    static slda_tokenizer_t *cache[4][4][16];
    char err[512];
    if (!cache[list][min_length][rules]) {
        slda_params_t p;
        memset(&p, 0, sizeof p);
        p.stopwords = (char *)lists[list];
        p.min_length = min_length;
        p.text = rule_sets[rules];
        cache[list][min_length][rules] = slda_tokenizer_new(&p, err, sizeof err);
        FUZZ_ASSERT(cache[list][min_length][rules] != NULL, "harness: tokenizer: %s", err);
    }
    return cache[list][min_length][rules];
}

/* The word-character classes of the documented rules. */
enum { W_SEP, W_LETTER, W_DIGIT, W_APOS };
static int word_class(const slda_text_rules_t *r, uint32_t cp)
{
    if (slda_char_is_letter(cp))
        return W_LETTER;
    if (cp >= '0' && cp <= '9')
        return r->digits == D_SPLIT ? W_SEP : W_DIGIT;
    if (cp == '\'' || cp == 0x2019)
        return r->apostrophes == A_KEEP ? W_APOS : W_SEP;
    return W_SEP;
}

/* Does text.digits drop a token with this many letters and digits? */
static int digits_drop(const slda_text_rules_t *r, uint32_t nletters, uint32_t ndigits)
{
    return ndigits > 0 && (r->digits == D_DROP || (r->digits == D_MIXED && nletters == 0));
}

/* Decode one code point of valid UTF-8 at s[*i] (a second decoder). */
static uint32_t next_cp(const unsigned char *s, size_t *i)
{
    uint32_t c = s[*i];
    size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n > 1)
        c &= 0x7F >> n;
    for (size_t k = 1; k < n; k++)
        c = (c << 6) | (s[*i + k] & 0x3F);
    *i += n;
    return c;
}

/* The documented character rules (tokenize.c), on the code points of a valid
 * text: ASCII letters are exactly A-Z and a-z, and ASCII, Latin-1, basic
 * Greek and Cyrillic capitals lower-case by their fixed offsets; for every
 * code point, lower-casing keeps letters letters, is idempotent and never
 * lengthens the UTF-8. */
static uint32_t ref_lower(uint32_t cp)
{
    if ((cp >= 'A' && cp <= 'Z') || (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ||
        (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) || (cp >= 0x410 && cp <= 0x42F))
        return cp + 0x20;
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 0x50;
    if (cp < 0x100 || (cp >= 0x3AC && cp < 0x400) || (cp >= 0x430 && cp < 0x460))
        return cp; /* already lower case or not a letter */
    return UINT32_MAX; /* not pinned down here */
}

static void check_code_points(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        char a[4], b[4];
        uint32_t cp = next_cp(s, &i), lo = slda_char_lower(cp), want = ref_lower(cp);
        if (cp < 0x80)
            FUZZ_ASSERT(slda_char_is_letter(cp) == ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z'),
                        "U+%04X: is_letter %d", cp, slda_char_is_letter(cp));
        FUZZ_ASSERT(want == UINT32_MAX || lo == want, "U+%04X lower-cases to U+%04X, not U+%04X",
                    cp, lo, want);
        FUZZ_ASSERT(slda_char_lower(lo) == lo, "U+%04X -> U+%04X -> U+%04X", cp, lo,
                    slda_char_lower(lo));
        FUZZ_ASSERT(!slda_char_is_letter(cp) || slda_char_is_letter(lo),
                    "letter U+%04X lower-cases to non-letter U+%04X", cp, lo);
        FUZZ_ASSERT(slda_utf8_encode(lo, b) <= slda_utf8_encode(cp, a),
                    "U+%04X lower-cases to the longer U+%04X", cp, lo);
    }
}

/* The expected token stream: each token NUL-separated in out, count in *ntok. */
typedef struct expect_s {
    char *buf;      /* tokens, each followed by NUL */
    size_t len;     /* bytes used */
    size_t ntok;
} expect_t;

static void expected_tokens(const slda_tokenizer_t *tok, const slda_text_rules_t *r,
                            unsigned min_length, const unsigned char *s, size_t len,
                            expect_t *ex)
{
    size_t i = 0;
    /* Room for the worst case (4 bytes a code point), so the reference does
     * not rely on the property it checks (lower-casing never lengthens). */
    char *cur = slda_xmalloc(4 * len + 1);
    ex->buf = slda_xmalloc(5 * len + 1);
    ex->len = ex->ntok = 0;
    while (i < len) {
        size_t n = 0, j = i;
        uint32_t nchars = 0, nletters = 0, ndigits = 0, cp = next_cp(s, &j);
        int c = word_class(r, cp);
        if (c != W_LETTER && c != W_DIGIT) {
            i = j;
            continue;
        }
        while (i < len) {
            j = i;
            cp = next_cp(s, &j);
            c = word_class(r, cp);
            if (c == W_APOS) { /* kept only between two word characters */
                size_t k = j;
                int after = k < len ? word_class(r, next_cp(s, &k)) : W_SEP;
                if (after != W_LETTER && after != W_DIGIT)
                    break;
                cp = '\'';
            } else if (c == W_SEP) {
                break;
            }
            n += slda_utf8_encode(slda_char_lower(cp), cur + n);
            nchars++;
            nletters += c == W_LETTER;
            ndigits += c == W_DIGIT;
            i = j;
        }
        if (n >= 3 && cur[n - 2] == '\'' && cur[n - 1] == 's') { /* possessive */
            n -= 2;
            nchars -= 2;
            nletters--;
        }
        if (digits_drop(r, nletters, ndigits) || nchars < min_length ||
            slda_tokenizer_is_stopword(tok, cur, n))
            continue;
        memcpy(ex->buf + ex->len, cur, n);
        ex->buf[ex->len + n] = '\0';
        ex->len += n + 1;
        ex->ntok++;
    }
    free(cur);
}

typedef struct seen_s {
    const slda_tokenizer_t *tok;
    const slda_text_rules_t *rules;
    unsigned min_length;
    const expect_t *ex; /* NULL: properties only (span rules on) */
    size_t pos;   /* offset in ex->buf of the next expected token */
    size_t ntok;  /* tokens received */
    size_t total; /* their bytes */
} seen_t;

static void on_token(const char *t, size_t len, void *opaque)
{
    seen_t *sn = opaque;
    const expect_t *ex = sn->ex;
    char *again = slda_xmalloc(4 * len + 1);
    size_t i = 0, n;
    FUZZ_ASSERT(len > 0, "empty token %zu", sn->ntok);
    FUZZ_ASSERT(t[len] == '\0', "token %zu is not NUL-terminated", sn->ntok);
    FUZZ_ASSERT(slda_fuzz_utf8_ok((const unsigned char *)t, len, NULL),
                "token %zu is not UTF-8", sn->ntok);
    uint32_t nchars = 0, nletters = 0, ndigits = 0;
    while (i < len) {
        size_t at = i;
        uint32_t cp = next_cp((const unsigned char *)t, &i);
        int c = word_class(sn->rules, cp);
        FUZZ_ASSERT(c != W_SEP && cp != 0x2019 && (c != W_LETTER || slda_char_lower(cp) == cp),
                    "token %zu holds U+%04X, not a lower-case word character", sn->ntok, cp);
        FUZZ_ASSERT(c != W_APOS || (at > 0 && i < len), "token %zu \"%s\": apostrophe at an end",
                    sn->ntok, t);
        nchars++;
        nletters += c == W_LETTER;
        ndigits += c == W_DIGIT;
    }
    FUZZ_ASSERT(!digits_drop(sn->rules, nletters, ndigits),
                "token %zu \"%s\": text.digits drops it", sn->ntok, t);
    FUZZ_ASSERT(nchars >= sn->min_length && !slda_tokenizer_is_stopword(sn->tok, t, len),
                "token %zu \"%s\": short or a stop word", sn->ntok, t);
    n = slda_token_normalise(sn->tok, t, len, again);
    FUZZ_ASSERT(n == len && memcmp(again, t, len) == 0,
                "token %zu \"%s\" normalises to \"%.*s\" (%zu bytes)", sn->ntok, t, (int)n,
                again, n);
    free(again);
    if (ex) {
        FUZZ_ASSERT(sn->ntok < ex->ntok, "more tokens than word runs: token %zu \"%s\"",
                    sn->ntok, t);
        FUZZ_ASSERT(strlen(ex->buf + sn->pos) == len && memcmp(ex->buf + sn->pos, t, len) == 0,
                    "token %zu is \"%s\", expected \"%s\"", sn->ntok, t, ex->buf + sn->pos);
        sn->pos += len + 1;
    }
    sn->ntok++;
    sn->total += len;
}

static void check_tokenize(const slda_tokenizer_t *tok, const slda_text_rules_t *r,
                           unsigned min_length, const unsigned char *s, size_t len, int valid)
{
    char err[512] = "";
    expect_t ex = {NULL, 0, 0};
    int exact = !spans_on(r);
    seen_t sn = {tok, r, min_length, exact ? &ex : NULL, 0, 0, 0};
    slda_err_t rc;
    if (valid && exact)
        expected_tokens(tok, r, min_length, s, len, &ex);
    rc = slda_tokenize(tok, (const char *)s, len, on_token, &sn, err, sizeof err);
    if (!valid) {
        FUZZ_ASSERT(rc == SLDA_ERR_UTF8, "invalid UTF-8 gave %s", slda_err_name(rc));
        FUZZ_ASSERT(sn.ntok == 0, "%zu tokens before the UTF-8 error", sn.ntok);
        FUZZ_ASSERT(strstr(err, "invalid UTF-8 at byte") != NULL, "message \"%s\"", err);
        return;
    }
    FUZZ_ASSERT(rc == SLDA_OK, "valid UTF-8 gave %s: %s", slda_err_name(rc), err);
    FUZZ_ASSERT(!exact || sn.ntok == ex.ntok, "%zu tokens, expected %zu", sn.ntok, ex.ntok);
    FUZZ_ASSERT(sn.total <= len, "tokens hold %zu bytes of a %zu-byte text", sn.total, len);
    free(ex.buf);
}

static void check_normalise(const slda_tokenizer_t *tok, const slda_text_rules_t *r,
                            unsigned min_length, const unsigned char *s, size_t len, int valid)
{
    char *out = slda_xmalloc(4 * len + 1), *want = slda_xmalloc(4 * len + 1);
    size_t n = slda_token_normalise(tok, (const char *)s, len, out), m = 0, i = 0;
    uint32_t nchars = 0;
    if (!valid || len == 0) {
        FUZZ_ASSERT(n == 0, "normalise of %s input gave %zu bytes", len ? "invalid" : "empty", n);
        goto out;
    }
    while (i < len) {
        uint32_t cp = slda_char_lower(next_cp(s, &i));
        if (cp == 0x2019 && r->apostrophes == A_KEEP)
            cp = '\''; /* as in tokens cut from text */
        m += slda_utf8_encode(cp, want + m);
        nchars++;
    }
    want[m] = '\0';
    if (nchars < min_length || slda_tokenizer_is_stopword(tok, want, m)) {
        FUZZ_ASSERT(n == 0, "short or stop word normalised to %zu bytes", n);
        goto out;
    }
    FUZZ_ASSERT(n == m && memcmp(out, want, m) == 0 && out[n] == '\0',
                "normalise gave %zu bytes, expected %zu", n, m);
    FUZZ_ASSERT(n <= len, "normalised form (%zu bytes) longer than the input (%zu)", n, len);
out:
    free(out);
    free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned list, min_length, rules;
    size_t bad = 0, ref_bad = 0;
    const char *why = NULL;
    int valid = 0, ref;
    if (size < 1)
        return 0;
    list = data[0] & 3;
    min_length = (data[0] >> 2) & 3;
    rules = data[0] >> 4;
    data++;
    size--;
    const slda_tokenizer_t *tok = tokenizer(list, min_length, rules);
    /* Each bad sequence in turn: restart after the first bad byte. */
    for (size_t off = 0;; off += bad + 1) {
        int v = slda_utf8_valid((const char *)data + off, size - off, &bad, &why);
        ref = slda_fuzz_utf8_ok(data + off, size - off, &ref_bad);
        FUZZ_ASSERT(v == ref, "slda_utf8_valid says %d, the reference %d (offset %zu)", v, ref,
                    off + (ref ? bad : ref_bad));
        FUZZ_ASSERT(v || (bad == ref_bad && why && *why),
                    "bad byte at %zu (%s), the reference says %zu", off + bad,
                    why ? why : "?", off + ref_bad);
        if (off == 0)
            valid = v;
        if (v)
            break;
    }
    if (valid)
        check_code_points(data, size);
    check_tokenize(tok, &rule_sets[rules], min_length, data, size, valid);
    check_normalise(tok, &rule_sets[rules], min_length, data, size, valid);
    return 0;
}
