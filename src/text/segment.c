/* segment.c - the unicode segmentation: ICU's word boundaries after NFKC and case folding, ASCII words by the simple rule.
 *
 * The scan runs the cleanup rules (cleanup.c) as the simple mode does. An
 * ASCII word between ASCII separators (all of an English text, nearly) is cut
 * by the simple rule (simple.c): the fast path, as cheap as before. Anything
 * else starts a chunk: the code points (references decoded) up to the next
 * ASCII space or punctuation, or up to a URL, e-mail or mention glued to
 * non-ASCII text (看这个https://t.co/x), in UTF-16, at most CHUNK_MAX units
 * (a longer run is cut after its last space or punctuation past the half,
 * else at the limit). A chunk is normalised (NFKC_Casefold: fullwidth forms,
 * ligatures, full case folding as ß -> ss, ZWJ, bidi controls and variation
 * selectors removed) and cut by ICU's word break iterator (UAX #29 with the
 * dictionaries of Chinese and Japanese, Thai, Lao, Khmer and Burmese); the
 * pieces ICU marks as words (letters, numbers, kana, ideographs) become
 * tokens, the rest (spaces, punctuation, emoji) is dropped. A token then
 * follows the same rules as a simple one: apostrophes (U+2019 stored as ';
 * split cuts there), the possessive 's, text.digits (any Unicode digit), and
 * the sink's length and stop-word rules. Every token is at most
 * text.token.max characters (sink.c), never empty. Runs on the caller's
 * thread with that thread's ICU iterator (icu.c); reads the tokenizer only.
 */
#include "text/text_priv.h"
#include "text/icu.h"

#include <unicode/ubrk.h>
#include <unicode/uchar.h>

/* UTF-16 units given to ICU at once: long enough for any paragraph, short
 * enough that a text without spaces (a Chinese article) is cut in pieces. */
#define CHUNK_MAX 4096

/* A part of a word is complete: its rules, then the sink. */
static void flush(const scan_t *sc, tokbuf_t *tb, uint32_t nchars, uint32_t nletters,
                  uint32_t ndigits, int wide)
{
    char *buf = tb->buf;
    size_t len = tb->n;
    tb->n = 0;
    if (nchars > 0 && word_rules(sc, buf, &len, &nchars, nletters, ndigits))
        slda_sink_token(sc->sink, buf, len, nchars, wide);
}

/* One word ICU found, w[0..n) (normalised). */
static void emit_word(const scan_t *sc, tokbuf_t *tb, const uint16_t *w, size_t n)
{
    int split_digits = sc->tok->rules.digits == SLDA_TEXT_DIGITS_SPLIT;
    uint32_t nchars = 0, nletters = 0, ndigits = 0;
    int wide = 0;
    tb->n = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t cp = w[k];
        if (cp >= 0xD800 && cp < 0xDC00 && k + 1 < n && w[k + 1] >= 0xDC00 && w[k + 1] < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (w[k + 1] - 0xDC00u);
            k++;
        } else if (cp >= 0xD800 && cp < 0xE000) {
            continue; /* a lone surrogate cannot come from valid UTF-8 */
        }
        if (cp == '\'' || cp == APOSTROPHE_RIGHT) {
            if (!sc->apos) { /* text.apostrophes=split: cut here */
                flush(sc, tb, nchars, nletters, ndigits, wide);
                nchars = nletters = ndigits = 0;
                wide = 0;
                continue;
            }
            cp = '\'';
        } else if (u_isdigit((UChar32)cp)) {
            if (split_digits) { /* text.digits=split: digits separate words */
                flush(sc, tb, nchars, nletters, ndigits, wide);
                nchars = nletters = ndigits = 0;
                wide = 0;
                continue;
            }
            ndigits++;
        } else {
            nletters++;
            if (cp >= 0x0E00 && slda_script_wide(slda_script_of(cp)))
                wide = 1;
        }
        tb_put(tb, cp);
        nchars++;
    }
    flush(sc, tb, nchars, nletters, ndigits, wide);
}

/* ICU's words of the chunk in is->raw[0..n). */
static void cut_chunk(const scan_t *sc, tokbuf_t *tb, slda_icu_scratch_t *is, size_t n)
{
    size_t m = slda_icu_fold(is, is->raw, n);
    UErrorCode st = U_ZERO_ERROR;
    UBreakIterator *bi = is->bi;
    if (m == 0)
        return;
    ubrk_setText(bi, is->norm, (int32_t)m, &st);
    if (U_FAILURE(st))
        return;
    int32_t a = ubrk_first(bi), b;
    while ((b = ubrk_next(bi)) != UBRK_DONE) {
        if (ubrk_getRuleStatus(bi) >= UBRK_WORD_NONE_LIMIT)
            emit_word(sc, tb, is->norm + a, (size_t)(b - a));
        a = b;
    }
}

/* Where a full chunk of n units is cut: after its last space or punctuation
 * past the half (not inside a surrogate pair), else at n. */
static size_t cut_point(const slda_icu_scratch_t *is, size_t n)
{
    for (size_t k = n; k > n / 2; k--) {
        UChar32 c = is->raw[k - 1];
        if (c < 0xD800 || c >= 0xE000)
            if (u_isUWhiteSpace(c) || u_ispunct(c))
                return k;
    }
    return (is->raw[n - 1] >= 0xD800 && is->raw[n - 1] < 0xDC00) ? n - 1 : n;
}

/* The chunk that starts at s[i]; returns where the scan goes on. */
static size_t chunk(scan_t *sc, size_t i, tokbuf_t *tb, slda_icu_scratch_t *is)
{
    const unsigned char *s = sc->s;
    size_t n = 0, j = i, end;
    slda_icu_reserve(is, CHUNK_MAX + 2);
    while (j < sc->len && n + 2 <= CHUNK_MAX) {
        unsigned c = s[j];
        if (j > i && c < 0x80) {
            if (!is_ascii_alnum(c) && c != '\'' && c != '&')
                break;
            if (sc->specials && s[j - 1] >= 0x80 && is_ascii_alnum(c) &&
                slda_scan_span(sc, j) > 0)
                break; /* a URL, e-mail or mention right after non-ASCII text */
        }
        size_t at = j;
        uint32_t cp = next_cp(sc, &j);
        is->off[n] = (uint32_t)at;
        if (cp >= 0x10000) {
            is->raw[n++] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
            is->off[n] = (uint32_t)at;
            is->raw[n++] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            is->raw[n++] = (uint16_t)cp;
        }
    }
    end = j;
    if (n + 2 > CHUNK_MAX && j < sc->len) { /* full: cut where a word cannot go on */
        size_t k = cut_point(is, n);
        if (k > 0 && k < n) {
            end = is->off[k];
            n = k;
        }
    }
    cut_chunk(sc, tb, is, n);
    return end > i ? end : i + 1;
}

void slda_segment_text(scan_t *sc, tokbuf_t *tb)
{
    const unsigned char *s = sc->s;
    size_t i = 0, len = sc->len;
    slda_icu_scratch_t *is = NULL;
    while (i < len) {
        size_t skip;
        unsigned c = s[i];
        if (sc->specials && (skip = scan_span(sc, i)) > 0) {
            i += skip;
            continue;
        }
        if (c < 0x80 && c != '&') {
            int cls = sc->tok->ascii_class[c];
            if (cls != C_LETTER && cls != C_DIGIT) {
                i++;
                continue;
            }
            size_t j = slda_simple_ascii_token(sc, i, tb); /* the fast path: an ASCII word */
            if (j != SIZE_MAX) {                           /* ending at an ASCII separator */
                i = j;
                continue;
            }
        }
        if (!is)
            is = slda_icu_scratch();
        i = chunk(sc, i, tb, is);
    }
}
