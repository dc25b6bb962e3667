/* tokenize.c - the tokenizer: its rules as made, and the simple segmentation of a text into tokens.
 *
 * A text is validated as a whole first (strict UTF-8: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated or stray continuation
 * bytes), so a bad document is rejected with the byte offset before any
 * token reaches the caller. One pass then skips the cleanup spans
 * (cleanup.c) and cuts tokens, each lower-cased code point by code point
 * (chars.c); docs/text.md has the rules with examples.
 *
 * Word characters are the letters of chars.c, plus ASCII digits unless
 * text.digits=split, plus an apostrophe (' or U+2019, stored as ') between
 * two word characters when text.apostrophes=keep; a final possessive 's is
 * then removed. A token with a digit is kept or dropped whole by
 * text.digits, never cut. Every decoded or cleaned form is no longer in
 * UTF-8 than the bytes it came from (a reference is at least 4 bytes and
 * decodes to at most 4; U+2019 is 3 bytes and becomes 1), so the tokens of a
 * text never hold more bytes than the text. Each rule off in its
 * "keep"/"split" setting reproduces the tokenizer of snapshots written before
 * the rules. A tokenizer is read-only after slda_tokenizer_new and may be
 * shared by threads.
 */
#include "text/text_priv.h"

#include <stdlib.h>
#include <string.h>

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
    if (slda_stop_load(tok, p->stopwords, errstr, errstr_size) != SLDA_OK) {
        slda_tokenizer_destroy(tok);
        return NULL;
    }
    return tok;
}

void slda_tokenizer_destroy(slda_tokenizer_t *tok)
{
    if (!tok)
        return;
    slda_stop_free(tok);
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
    scan_t sc;
    tokbuf_t tb;
    size_t i = 0;
    slda_err_t err = slda_utf8_check(text, len, "text", errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_scan_init(&sc, tok, text, len);
    tb.buf = tb.stack;
    tb.cap = TOKEN_STACK;
    tb.heap = NULL;
    while (i < len) {
        size_t j = i, skip;
        int cls;
        if (sc.specials && (skip = scan_span(&sc, i)) > 0) {
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
