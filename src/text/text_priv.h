/* text_priv.h - what the text folder's files share: the tokenizer's fields, the scan state, limits.
 *
 * Private to src/text/ (tests/0002-layers.py keeps other folders out). The
 * tokenizer (struct slda_tokenizer_s) is written only by slda_tokenizer_new
 * and the stop-word loader it calls, then read by any thread; a scan_t
 * belongs to one call of slda_tokenize.
 */
#ifndef SLDA_TEXT_PRIV_H
#define SLDA_TEXT_PRIV_H

#include "text/tokenize.h"
#include "core/utf8.h"

#include <stddef.h>
#include <stdint.h>

/* Stop-word hash seed: in-memory only, never persisted. */
#define STOP_SEED 0x5d1a5709u
/* Tokens up to this many bytes are built on the stack. */
#define TOKEN_STACK 256
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

/* ---- stop words (stopset.c) ---- */

/* Normalise (as tokens are) and add one stop word (valid UTF-8). */
void slda_stop_add(slda_tokenizer_t *tok, const char *word, size_t len);
/* Fill tok's set from text.stopwords (parts joined by '+'); errors name the part. */
slda_err_t slda_stop_load(slda_tokenizer_t *tok, const char *spec, char *errstr,
                          size_t errstr_size);
/* Free the set's words and table. */
void slda_stop_free(slda_tokenizer_t *tok);

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
} scan_t;

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
/* Bytes to skip at s[i], where no token is open: 0 when nothing starts here. */
size_t slda_scan_span(scan_t *sc, size_t i);
/* The same, with the common case (a space, a non-ASCII byte: no span starts
 * there) decided without a call. */
static inline size_t scan_span(scan_t *sc, size_t i)
{
    unsigned c = sc->s[i];
    return c >= 0x80 || c == ' ' ? 0 : slda_scan_span(sc, i);
}

#endif /* SLDA_TEXT_PRIV_H */
