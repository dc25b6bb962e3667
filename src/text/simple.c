/* simple.c - the simple segmentation: tokens are runs of word characters, lower-cased code point by code point.
 *
 * text.segment=simple, and the ASCII words of the unicode mode (the fast
 * path: a word of ASCII letters, digits and apostrophes between ASCII
 * separators is cut here in both modes, so English costs what it did).
 * Word characters are the letters of chars.c, plus ASCII digits unless
 * text.digits=split, plus an apostrophe (' or U+2019, stored as ') between
 * two word characters when text.apostrophes=keep; a final possessive 's is
 * then removed. A token with a digit is kept or dropped whole by
 * text.digits, never cut. Every decoded or cleaned form is no longer in
 * UTF-8 than the bytes it came from (a reference is at least 4 bytes and
 * decodes to at most 4; U+2019 is 3 bytes and becomes 1), so the tokens of a
 * text never hold more bytes than the text. With the scan's sink NULL (an
 * explicit stop list, no language identification) a token goes straight to
 * the callback after the length and stop-word checks: the tokenizer of every
 * snapshot made before text.segment, bit for bit. Runs on the caller's
 * thread; reads the tokenizer only.
 */
#include "text/text_priv.h"

#include <stdlib.h>
#include <string.h>

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

/* A token's counts as cut. */
typedef struct cut_s {
    uint32_t nchars, nletters, ndigits;
    int slow; /* a non-ASCII character or a reference was met (not an ASCII word) */
    int sep;  /* the token ended at an ASCII byte that ends the run (not alnum, ' or &) */
} cut_t;

/* Pass a finished token on unless a rule drops it. */
static void emit(const scan_t *sc, tokbuf_t *tb, const cut_t *ct)
{
    const slda_tokenizer_t *tok = sc->tok;
    char *buf = tb->buf;
    size_t len = tb->n;
    uint32_t nchars = ct->nchars;
    if (!word_rules(sc, buf, &len, &nchars, ct->nletters, ct->ndigits))
        return;
    if (sc->sink) {
        slda_sink_token(sc->sink, buf, len, nchars, 0);
        return;
    }
    if (nchars < tok->min_length || slda_tokenizer_is_stopword(tok, buf, len))
        return;
    buf[len] = '\0';
    sc->cb(buf, len, sc->opaque);
}

/* Cut the token that starts at s[i] into tb; returns its end. Inlined in both callers: the
 * loop is the tokenizer's hottest, and a call per token costs English text 4% (callgrind). */
static inline __attribute__((always_inline)) size_t cut(const scan_t *sc, size_t i, tokbuf_t *tb,
                                                         cut_t *ct)
{
    uint32_t nchars = 0, nletters = 0, ndigits = 0;
    int slow = 0, sep = 0;
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
            if (cls == C_SEP) { /* a digit (split) or an apostrophe (split) is not the run's end */
                sep = !is_ascii_alnum(c) && c != '\'';
                break;
            }
        }
        size_t j = i;
        slow |= c >= 0x80 || c == '&';
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
    *ct = (cut_t){nchars, nletters, ndigits, slow, sep};
    return i;
}

size_t slda_simple_token(const scan_t *sc, size_t i, tokbuf_t *tb)
{
    cut_t ct;
    i = cut(sc, i, tb, &ct);
    emit(sc, tb, &ct);
    return i;
}

size_t slda_simple_ascii_token(const scan_t *sc, size_t i, tokbuf_t *tb)
{
    cut_t ct;
    size_t end = cut(sc, i, tb, &ct), j = end;
    const unsigned char *s = sc->s;
    if (ct.slow)
        return SIZE_MAX;
    if (ct.sep || end == sc->len) { /* the common case: the run ended where the token did */
        emit(sc, tb, &ct);
        return end;
    }
    /* the run of ASCII letters, digits and apostrophes from i must end at the text's end or
     * at an ASCII byte other than '&' (the token may have stopped inside it: a digit under
     * text.digits=split, an apostrophe) */
    while (j < sc->len && s[j] < 0x80 && (is_ascii_alnum(s[j]) || s[j] == '\''))
        j++;
    if (j < sc->len && (s[j] >= 0x80 || s[j] == '&'))
        return SIZE_MAX;
    emit(sc, tb, &ct);
    return end;
}

void slda_simple_text(scan_t *sc, tokbuf_t *tb)
{
    size_t i = 0, len = sc->len;
    while (i < len) {
        size_t j = i, skip;
        int cls;
        if (sc->specials && (skip = scan_span(sc, i)) > 0) {
            i += skip;
            continue;
        }
        if (sc->s[i] < 0x80 && sc->s[i] != '&') {
            j = i + 1;
            cls = ascii_class(sc, sc->s[i]);
        } else {
            cls = char_class(sc, next_cp(sc, &j));
        }
        if (cls == C_LETTER || cls == C_DIGIT)
            j = slda_simple_token(sc, i, tb);
        i = j;
    }
}
