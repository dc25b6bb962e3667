/* text_priv.h - what the text folder's files share: the tokenizer's fields, the scan state, limits.
 *
 * Private to src/text/ (tests/0002-layers.py keeps other folders out). The
 * tokenizer (struct slda_tokenizer_s) is written only by slda_tokenizer_new
 * and the stop-word loader it calls, then read by any thread (but for its
 * atomic count of over-long tokens); a scan_t
 * belongs to one call of slda_tokenize.
 */
#ifndef SLDA_TEXT_PRIV_H
#define SLDA_TEXT_PRIV_H

#include "text/tokenize.h"
#include "core/utf8.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Tokens up to this many bytes are built on the stack. */
#define TOKEN_STACK 256
#define APOSTROPHE_RIGHT 0x2019 /* ’ RIGHT SINGLE QUOTATION MARK, the typographic apostrophe */

/* A stop word's mask: bit 0, an explicit list holds it (text.stopwords' parts
 * other than auto); bit i+1, the auto list of language i (slda_autolists
 * order) holds it. A token is dropped when its mask meets the document's
 * drop mask: bit 0, and with auto the bit of the document's language. */
#define STOP_EXPLICIT ((uint64_t)1)
#define LANG_BIT(i) ((uint64_t)1 << ((i) + 1))
#define LANG_MAX 62    /* languages the masks have room for */
#define HINTS_MAX 96   /* letters that tell languages apart (langid.c) */

typedef struct stop_entry_s {
    uint64_t hash;
    char *word; /* NULL = empty slot */
    size_t len;
    uint64_t mask;
    int shared; /* word belongs to the process's cache of the auto lists (stopset.c): not freed */
} stop_entry_t;

/* Scripts, as language identification counts them (langid.c). */
enum {
    SCRIPT_NONE = 0, SCRIPT_LATIN, SCRIPT_CYRILLIC, SCRIPT_GREEK, SCRIPT_ARMENIAN,
    SCRIPT_HEBREW, SCRIPT_ARABIC, SCRIPT_DEVANAGARI, SCRIPT_BENGALI, SCRIPT_GUJARATI,
    SCRIPT_THAI, SCRIPT_HANGUL, SCRIPT_KANA, SCRIPT_HAN, SCRIPT__COUNT
};

struct slda_tokenizer_s {
    uint32_t min_length;
    uint32_t max_bytes;  /* text.max.bytes (0 = no limit): larger texts are refused */
    char *stop_spec;     /* text.stopwords as given (NULL = none), for messages */
    slda_text_rules_t rules; /* .icu: this program's ICU in the unicode mode, else 0 */
    unsigned char ascii_class[128]; /* C_* of each ASCII byte under the rules */
    unsigned char span_start[128];  /* SPAN_* of each ASCII byte under the rules (cleanup.c) */
    stop_entry_t *stop; /* nslots, power of two, load <= 1/2 */
    size_t nslots;
    size_t nstop;
    size_t nexplicit;   /* words of the explicit lists (slda_tokenizer_stopword_count) */
    int borrowed;       /* stop is the process's cached auto lists (stopset.c): read-only */
    int unicode;        /* text.segment=unicode */
    int autolists;      /* text.stopwords has auto: each document's language's list applies */
    int detect;         /* documents' languages are identified (unicode mode, or auto) */
    uint32_t nlang;     /* languages known: the first nlang of slda_autolists */
    unsigned char lang_script[LANG_MAX]; /* SCRIPT_* of each language's list */
    uint16_t lang_rank[LANG_MAX]; /* order among languages tied in votes (langid.c) */
    uint32_t nhints;
    uint32_t hint_cp[HINTS_MAX];
    uint64_t hint_mask[HINTS_MAX];
    uint32_t icu_trained; /* text.icu of the parameters when it is not this ICU (else 0) */
    _Atomic uint64_t capped; /* tokens over text.token.max so far: the one field written
                                after slda_tokenizer_new (sink.c), by any thread */
};

/* The token classes of the simple scan. */
enum { C_SEP, C_LETTER, C_DIGIT, C_APOS };

/* ---- stop words (stopset.c) ---- */

/* Normalise (as tokens are) and add one stop word (valid UTF-8). */
void slda_stop_add(slda_tokenizer_t *tok, const char *word, size_t len);
/* Fill tok's set from text.stopwords (parts joined by '+'); errors name the part. */
slda_err_t slda_stop_load(slda_tokenizer_t *tok, const char *spec, char *errstr,
                          size_t errstr_size);
/* Free the set's words and table. */
void slda_stop_free(slda_tokenizer_t *tok);
/* Add every known language's auto list, each word with its language's bit. */
void slda_stop_load_languages(slda_tokenizer_t *tok);
/* The stop set's hash of a word: in memory only, never persisted. Cheaper than
 * XXH3 for the short words every token is looked up as (a lookup per token
 * cost English text 3%): the first and last 8 bytes (4, or 3 single bytes,
 * for shorter words) and the length, mixed; a longer word's middle is left
 * to the compare. */
static inline uint64_t slda_stop_hash(const char *w, size_t len)
{
    uint64_t a, b, h;
    if (len >= 8) {
        memcpy(&a, w, 8);
        memcpy(&b, w + len - 8, 8);
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, w, 4);
        memcpy(&y, w + len - 4, 4);
        a = x;
        b = y;
    } else {
        const unsigned char *u = (const unsigned char *)w;
        a = len ? u[0] | (uint64_t)u[len / 2] << 8 | (uint64_t)u[len - 1] << 16 : 0;
        b = 0;
    }
    h = a * 0x9e3779b97f4a7c15u + ((b * 0xc2b2ae3d27d4eb4fu) >> 31 | (b * 0xc2b2ae3d27d4eb4fu) << 33) + len;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

/* The slot of word w (hash h) in a table of nslots (a power of two, never full): its entry,
 * or the empty slot where it would go. */
static inline stop_entry_t *slda_stop_slot(stop_entry_t *tab, size_t nslots, const char *w,
                                           size_t len, uint64_t h)
{
    size_t i = (size_t)h & (nslots - 1);
    while (tab[i].word &&
           !(tab[i].hash == h && tab[i].len == len && memcmp(tab[i].word, w, len) == 0))
        i = (i + 1) & (nslots - 1);
    return &tab[i];
}

/* The mask of word (normalised), 0 when no list holds it. */
static inline uint64_t slda_stop_mask(const slda_tokenizer_t *tok, const char *word, size_t len)
{
    if (!tok->nslots)
        return 0;
    const stop_entry_t *e =
        slda_stop_slot(tok->stop, tok->nslots, word, len, slda_stop_hash(word, len));
    return e->word ? e->mask : 0;
}

/* ---- languages (langid.c) ---- */

/* SCRIPT_* of a code point; whether a script is written without spaces or
 * with a syllable a character (the unicode mode's shorter minimum length). */
int slda_script_of(uint32_t cp);
int slda_script_wide(int script);
/* The index of lang in slda_autolists (first tok->nlang), or -1. */
int slda_lang_index(const slda_tokenizer_t *tok, const char *lang);
/* Made once by slda_tokenizer_new: each language's script and tie rank, the hint letters. */
void slda_lang_scripts(slda_tokenizer_t *tok);
void slda_lang_hints(slda_tokenizer_t *tok);
/* The languages a letter hints at (a mask of language bits), or 0. */
uint64_t slda_lang_hint(const slda_tokenizer_t *tok, uint32_t cp);
/* weight added to vote[bit] for each of mask's bits. */
void slda_lang_vote(double *vote, uint64_t mask, double weight);
/* The language (index) of a document with these letter counts per script and
 * votes per bit, or -1 (und: no letters, or none of a known language's script). */
int slda_lang_decide(const slda_tokenizer_t *tok, const uint32_t *script, const double *vote);

/* ---- a document's tokens on their way out (sink.c) ---- */

typedef struct held_s {
    size_t off;
    uint32_t len;
    uint64_t mask;
} held_t;

typedef struct sink_s {
    const slda_tokenizer_t *tok;
    slda_token_cb cb;
    void *opaque;
    int detect;       /* scripts and votes are counted */
    int defer;        /* tokens wait in held[] until the language is known */
    uint64_t drop;    /* a token whose mask meets this is dropped at once */
    int lang;         /* the language given (index), or -1 */
    char given[SLDA_LANG_LEN]; /* the language given ("" none) */
    uint32_t script[SCRIPT__COUNT];
    double vote[64];
    char *arena;
    size_t alen, acap;
    held_t *held;
    size_t nheld, hcap;
    uint32_t capped;
} sink_t;

/* Start a document: lang is the language given with it (normalised, or NULL). */
void slda_sink_init(sink_t *sink, const slda_tokenizer_t *tok, const char *lang,
                    slda_token_cb cb, void *opaque);
/* One token (buf[len], room for a NUL after it; nchars code points; wide: in
 * a script with a syllable a character): votes, length rules, stop words. */
void slda_sink_token(sink_t *sink, char *buf, size_t len, uint32_t nchars, int wide);
/* End the document: its language decided, the held tokens passed on; info
 * (may be NULL) gets the language and the count of over-long tokens. Frees
 * what the sink holds. */
void slda_sink_finish(sink_t *sink, slda_text_info_t *info);

/* ---- HTML character references (html_ref.c) ---- */

static inline int is_ascii_alnum(unsigned c)
{
    return (c | 0x20) - 'a' < 26u || c - '0' < 10u;
}

/* The reference whose body starts at s[j] (just after its '&'): 1 with its
 * code point and the index after its ';', or 0 when there is none. */
int slda_html_ref(const unsigned char *s, size_t len, size_t j, uint32_t *cp, size_t *end);

/* ---- cleanup: spans recognised in the raw bytes (cleanup.c) ---- */

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
    sink_t *sink; /* where tokens go (NULL: straight to the callback, the old path) */
    slda_token_cb cb; /* with sink NULL */
    void *opaque;
} scan_t;

/* The token being built: on the stack up to TOKEN_STACK bytes, then on the
 * heap (kept for the rest of the text). */
typedef struct tokbuf_s {
    char *buf;
    size_t n, cap; /* cap leaves room for the NUL */
    char *heap;
    char stack[TOKEN_STACK + 1];
} tokbuf_t;

static inline void tb_init(tokbuf_t *tb)
{
    tb->buf = tb->stack;
    tb->cap = TOKEN_STACK;
    tb->heap = NULL;
    tb->n = 0;
}

static inline void tb_put(tokbuf_t *tb, uint32_t cp)
{
    if (tb->n + 4 > tb->cap) {
        size_t cap = tb->cap * 2;
        tb->heap = slda_xrealloc(tb->heap, cap + 1);
        if (tb->buf == tb->stack)
            memcpy(tb->heap, tb->stack, tb->n);
        tb->buf = tb->heap;
        tb->cap = cap;
    }
    tb->n += slda_utf8_encode(cp, tb->buf + tb->n);
}

/* ---- the simple scan (simple.c) and the unicode one (segment.c) ---- */

/* The word rules both modes apply to a cut token buf[*len] (*nchars code
 * points, nletters letters, ndigits digits): a final possessive 's removed
 * (obama's -> obama) when apostrophes are kept; then 0 when text.digits
 * drops it, else 1. */
static inline int word_rules(const scan_t *sc, const char *buf, size_t *len, uint32_t *nchars,
                             uint32_t nletters, uint32_t ndigits)
{
    int digits = sc->tok->rules.digits;
    if (sc->apos && *len >= 3 && buf[*len - 2] == '\'' && buf[*len - 1] == 's') {
        *len -= 2;
        *nchars -= 2;
        nletters--;
    }
    return !(ndigits > 0 && (digits == SLDA_TEXT_DIGITS_DROP ||
                             (digits == SLDA_TEXT_DIGITS_MIXED && nletters == 0)));
}

/* Cut the token of the simple rule that starts at s[i] (a word character),
 * pass it on; returns its end. */
size_t slda_simple_token(const scan_t *sc, size_t i, tokbuf_t *tb);
/* The unicode mode's fast path: the same when the run of ASCII letters,
 * digits and apostrophes that starts at s[i] ends at the text's end or at an
 * ASCII byte other than '&'; else SIZE_MAX, nothing passed on (ICU cuts it). */
size_t slda_simple_ascii_token(const scan_t *sc, size_t i, tokbuf_t *tb);
/* The whole text by the simple rule / by the unicode rule. */
void slda_simple_text(scan_t *sc, tokbuf_t *tb);
void slda_segment_text(scan_t *sc, tokbuf_t *tb);

/* Set up sc for text under tok's rules (valid UTF-8). */
void slda_scan_init(scan_t *sc, const slda_tokenizer_t *tok, const char *text, size_t len);
/* The next code point at s[*i] (valid UTF-8), a reference decoded. */
uint32_t slda_scan_cp_slow(const scan_t *sc, size_t *i);
static inline uint32_t next_cp(const scan_t *sc, size_t *i)
{
    unsigned c = sc->s[*i];
    if (c < 0x80 && c != '&') {
        *i += 1;
        return c;
    }
    return slda_scan_cp_slow(sc, i);
}
/* What may start at an ASCII byte under the rules: nothing; a tag, hashtag,
 * mention or URL (ask slda_scan_span); only an e-mail address (ask it when an
 * '@' is near). Filled by slda_tokenizer_new. */
enum { SPAN_NONE, SPAN_ANY, SPAN_MAIL };
void slda_scan_starts(slda_tokenizer_t *tok);
/* An e-mail address's local part is at most 64 bytes (RFC 5321): further
 * from the next '@' than that, no address starts here. */
#define LOCAL_MAX 64
/* Bytes to skip at s[i], where no token is open: 0 when nothing starts here. */
size_t slda_scan_span(scan_t *sc, size_t i);
/* The same, with the common cases (a space, a non-ASCII byte, punctuation or
 * a word's first letter with no '@' near: no span starts there) decided
 * without a call: one is made at most bytes of a text, and the call cost
 * English text 2%. */
static inline size_t scan_span(scan_t *sc, size_t i)
{
    unsigned c = sc->s[i];
    int kind = c < 0x80 ? sc->tok->span_start[c] : SPAN_NONE;
    if (kind == SPAN_NONE ||
        (kind == SPAN_MAIL && (!sc->has_at || (sc->next_at >= i && sc->next_at - i > LOCAL_MAX))))
        return 0;
    return slda_scan_span(sc, i);
}

#endif /* SLDA_TEXT_PRIV_H */
