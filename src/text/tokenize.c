/* tokenize.c - the tokenizer: its rules as made, and a document's text or token list through them.
 *
 * A text is validated as a whole first (strict UTF-8: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated or stray continuation
 * bytes), so a bad document is rejected with the byte offset before any
 * token reaches the caller. Then one scan skips the cleanup spans
 * (cleanup.c) and cuts words by the mode's rule: text.segment=simple
 * (simple.c: runs of letters), or unicode (segment.c: ICU's word boundaries,
 * ASCII words by the simple rule). Tokens go through the sink (sink.c:
 * language votes, length rules, stop words) whenever languages are
 * identified; with text.segment=simple and an explicit stop list they take
 * the old path, so a snapshot made before text.segment tokenizes as it did.
 * docs/text.md has the rules with examples. A tokenizer is read-only after
 * slda_tokenizer_new and may be shared by threads.
 */
#include "text/text_priv.h"
#include "text/icu.h"

#include <stdlib.h>
#include <string.h>

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
        {"text.segment", offsetof(slda_text_rules_t, segment), 2},
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
    tok->unicode = p->text.segment == SLDA_TEXT_SEGMENT_UNICODE;
    tok->rules.icu = tok->unicode ? slda_icu_major() : 0;
    if (tok->unicode && p->text.icu && p->text.icu != tok->rules.icu)
        tok->icu_trained = p->text.icu;
    if (tok->rules.token_max == 0)
        tok->rules.token_max = 50; /* a params struct from before text.token.max */
    for (unsigned c = 0; c < 128; c++) {
        int cls = ascii_classes[c];
        if ((cls == C_DIGIT && p->text.digits == SLDA_TEXT_DIGITS_SPLIT) ||
            (cls == C_APOS && p->text.apostrophes != SLDA_TEXT_APOS_KEEP))
            cls = C_SEP;
        tok->ascii_class[c] = (unsigned char)cls;
    }
    slda_scan_starts(tok);
    if (slda_stop_load(tok, p->stopwords, errstr, errstr_size) != SLDA_OK) {
        slda_tokenizer_destroy(tok);
        return NULL;
    }
    tok->detect = tok->unicode || tok->autolists;
    if (tok->detect) {
        tok->nlang = slda_nautolists < LANG_MAX ? (uint32_t)slda_nautolists : LANG_MAX;
        slda_stop_load_languages(tok);
        slda_lang_scripts(tok);
        slda_lang_hints(tok);
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

uint32_t slda_tokenizer_icu_trained(const slda_tokenizer_t *tok)
{
    return tok->icu_trained;
}

uint64_t slda_tokenizer_capped(const slda_tokenizer_t *tok)
{
    return atomic_load(&tok->capped);
}

uint32_t slda_tokenizer_icu_major(void)
{
    return slda_icu_major();
}

slda_err_t slda_tokenize_doc(const slda_tokenizer_t *tok, const char *text, size_t len,
                             const char *lang, slda_text_info_t *info, slda_token_cb cb,
                             void *opaque, char *errstr, size_t errstr_size)
{
    scan_t sc;
    tokbuf_t tb;
    sink_t sink;
    slda_err_t err = slda_utf8_check(text, len, "text", errstr, errstr_size);
    if (info)
        memset(info, 0, sizeof *info);
    if (err != SLDA_OK)
        return err;
    slda_scan_init(&sc, tok, text, len);
    sc.cb = cb;
    sc.opaque = opaque;
    tb_init(&tb);
    if (tok->detect || (lang && *lang)) {
        slda_sink_init(&sink, tok, lang, cb, opaque);
        sc.sink = &sink;
    }
    if (tok->unicode)
        slda_segment_text(&sc, &tb);
    else
        slda_simple_text(&sc, &tb);
    if (sc.sink)
        slda_sink_finish(&sink, info);
    free(tb.heap);
    return SLDA_OK;
}

slda_err_t slda_tokenize(const slda_tokenizer_t *tok, const char *text, size_t len,
                         slda_token_cb cb, void *opaque, char *errstr, size_t errstr_size)
{
    return slda_tokenize_doc(tok, text, len, NULL, NULL, cb, opaque, errstr, errstr_size);
}

/* One listed token normalised into tb (lower case, or NFKC_Casefold in the
 * unicode mode; U+2019 -> ' when apostrophes are kept); its length in
 * characters, and whether it holds a character of a wide script. */
static uint32_t normalise_into(const slda_tokenizer_t *tok, const char *in, size_t len,
                               tokbuf_t *tb, int *wide)
{
    char *folded = NULL;
    size_t i = 0;
    uint32_t nchars = 0;
    int apos = tok->rules.apostrophes == SLDA_TEXT_APOS_KEEP;
    *wide = 0;
    tb->n = 0;
    if (tok->unicode)
        len = slda_icu_fold_utf8(in, len, &folded);
    const unsigned char *s = (const unsigned char *)(folded ? folded : in);
    while (i < len) {
        uint32_t cp = slda_utf8_decode(s, &i);
        if (!tok->unicode)
            cp = slda_char_lower(cp);
        else if (slda_script_wide(slda_script_of(cp)))
            *wide = 1;
        if (cp == APOSTROPHE_RIGHT && apos)
            cp = '\'';
        tb_put(tb, cp);
        nchars++;
    }
    free(folded);
    return nchars;
}

void slda_tokenize_list(const slda_tokenizer_t *tok, const char *const *tokens,
                        const size_t *lens, size_t n, const char *lang, slda_text_info_t *info,
                        slda_token_cb cb, void *opaque)
{
    tokbuf_t tb;
    sink_t sink;
    int use_sink = tok->detect || (lang && *lang);
    if (info)
        memset(info, 0, sizeof *info);
    tb_init(&tb);
    if (use_sink)
        slda_sink_init(&sink, tok, lang, cb, opaque);
    for (size_t k = 0; k < n; k++) {
        size_t len = lens ? lens[k] : strlen(tokens[k]);
        int wide;
        uint32_t nchars = normalise_into(tok, tokens[k], len, &tb, &wide);
        if (use_sink) {
            slda_sink_token(&sink, tb.buf, tb.n, nchars, wide);
        } else if (nchars >= tok->min_length && nchars > 0 &&
                   !slda_tokenizer_is_stopword(tok, tb.buf, tb.n)) {
            tb.buf[tb.n] = '\0';
            cb(tb.buf, tb.n, opaque);
        }
    }
    if (use_sink)
        slda_sink_finish(&sink, info);
    free(tb.heap);
}

size_t slda_token_normalise(const slda_tokenizer_t *tok, const char *in, size_t len, char *out)
{
    tokbuf_t tb;
    int wide;
    uint32_t nchars;
    size_t n = 0;
    if (len == 0 || !slda_utf8_valid(in, len, NULL, NULL))
        return 0;
    tb_init(&tb);
    uint32_t min = tok->min_length;
    nchars = normalise_into(tok, in, len, &tb, &wide);
    if (wide && tok->unicode && min > 2)
        min = 2; /* the wide scripts' minimum (sink.c) */
    if (nchars >= min && !(tok->unicode && nchars > tok->rules.token_max) &&
        tb.n <= 4 * len && !slda_tokenizer_is_stopword(tok, tb.buf, tb.n)) {
        memcpy(out, tb.buf, tb.n);
        n = tb.n;
    }
    out[n] = '\0';
    free(tb.heap);
    return n;
}

int slda_lang_normalise(const char *s, size_t len, char out[SLDA_LANG_LEN])
{
    size_t n = 0;
    while (n < len && ((unsigned)(s[n] | 0x20) - 'a') < 26u)
        n++;
    if (n < 2 || n > 3 || (n < len && s[n] != '-' && s[n] != '_'))
        return 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)(s[i] | 0x20);
    out[n] = '\0';
    return strcmp(out, "und") != 0;
}
