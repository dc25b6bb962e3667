/* sink.c - a document's tokens on their way out: language votes, length rules, stop words, and waiting for the language.
 *
 * Both segmentation modes hand every token they cut to slda_sink_token
 * (the simple mode only when it identifies languages: with an explicit stop
 * list alone it keeps its old path, bit for bit). One lookup in the stop set
 * gives the token's mask (text_priv.h): its language bits are votes
 * (langid.c; not a token of one letter in a script with spaces), and its
 * letters are counted by script. Then the length rules:
 * text.min.length characters, or at most 2 for a token in a script with a
 * syllable a character (Han, Kana, Hangul, Thai: 北京, 東京, 서울 are
 * words), and, in the unicode mode, at most text.token.max characters (longer
 * ones are counted in capped). A token in an explicit list goes; with
 * text.stopwords=auto and no language given, a token in some language's list
 * waits in the sink (held[], its bytes in arena) until slda_sink_finish knows
 * the language and drops those of its list; the others go on at once (so
 * with auto the callback sees a document's tokens in text order, less the
 * waiting ones, then those of them that stay: a bag of words does not mind,
 * and copying every token twice cost English text 5%). A sink belongs to one
 * call (one thread).
 */
#include "text/text_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void slda_sink_init(sink_t *sink, const slda_tokenizer_t *tok, const char *lang,
                    slda_token_cb cb, void *opaque)
{
    memset(sink, 0, sizeof *sink);
    sink->tok = tok;
    sink->cb = cb;
    sink->opaque = opaque;
    sink->lang = -1;
    sink->drop = STOP_EXPLICIT;
    if (lang && *lang) {
        snprintf(sink->given, sizeof sink->given, "%s", lang);
        sink->lang = slda_lang_index(tok, lang);
        if (tok->autolists && sink->lang >= 0)
            sink->drop |= LANG_BIT(sink->lang);
        return;
    }
    sink->detect = tok->detect;
    sink->defer = tok->autolists;
}

/* Count a token's letters by script, and the votes of its telling letters. */
static void count_letters(sink_t *sink, const char *buf, size_t len, uint32_t nchars)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0;
    if (len == nchars) { /* a byte a character: ASCII letters and perhaps digits */
        sink->script[SCRIPT_LATIN] += nchars;
        return;
    }
    while (i < len) {
        uint32_t cp = slda_utf8_decode(s, &i);
        sink->script[slda_script_of(cp)]++;
        if (cp >= 0xC0) {
            uint64_t m = slda_lang_hint(sink->tok, cp);
            if (m)
                slda_lang_vote(sink->vote, m, 1.0);
        }
    }
}

static void hold(sink_t *sink, const char *buf, size_t len, uint64_t mask)
{
    if (sink->nheld == sink->hcap) {
        sink->hcap = sink->hcap ? 2 * sink->hcap : 64;
        sink->held = slda_xrealloc(sink->held, sink->hcap * sizeof *sink->held);
    }
    if (sink->alen + len + 1 > sink->acap) {
        while (sink->alen + len + 1 > sink->acap)
            sink->acap = sink->acap ? 2 * sink->acap : 1024;
        sink->arena = slda_xrealloc(sink->arena, sink->acap);
    }
    memcpy(sink->arena + sink->alen, buf, len);
    sink->arena[sink->alen + len] = '\0';
    sink->held[sink->nheld++] = (held_t){.off = sink->alen, .len = (uint32_t)len, .mask = mask};
    sink->alen += len + 1;
}

void slda_sink_token(sink_t *sink, char *buf, size_t len, uint32_t nchars, int wide)
{
    const slda_tokenizer_t *tok = sink->tok;
    uint64_t mask = tok->nstop ? slda_stop_mask(tok, buf, len) : 0;
    uint32_t min = tok->min_length;
    if (sink->detect) {
        /* a letter alone does not vote: option letters (-u, -s), initials and list marks are
         * in many lists (u, s, y, z, k are stop words of Spanish, German, French ...) */
        if ((mask & ~STOP_EXPLICIT) && (nchars > 1 || wide))
            slda_lang_vote(sink->vote, mask & ~STOP_EXPLICIT, 1.0);
        count_letters(sink, buf, len, nchars);
    }
    if (wide && min > 2)
        min = 2;
    if (nchars < min || len == 0) /* empty: a listed token of ignorables (ZWJ) folds to nothing */
        return;
    if (tok->unicode && nchars > tok->rules.token_max) {
        sink->capped++;
        return;
    }
    if (mask & sink->drop)
        return;
    if (sink->defer && (mask & ~STOP_EXPLICIT)) { /* some language's stop word: wait */
        hold(sink, buf, len, mask);
        return;
    }
    buf[len] = '\0';
    sink->cb(buf, len, sink->opaque);
}

void slda_sink_finish(sink_t *sink, slda_text_info_t *info)
{
    const slda_tokenizer_t *tok = sink->tok;
    int lang = sink->lang;
    char code[SLDA_LANG_LEN] = "";
    if (sink->given[0]) {
        memcpy(code, sink->given, sizeof code);
    } else if (sink->detect) {
        lang = slda_lang_decide(tok, sink->script, sink->vote);
        snprintf(code, sizeof code, "%s", lang >= 0 ? slda_autolists[lang].lang : "und");
    }
    if (sink->defer) {
        uint64_t drop = STOP_EXPLICIT | (lang >= 0 ? LANG_BIT(lang) : 0);
        for (size_t i = 0; i < sink->nheld; i++)
            if (!(sink->held[i].mask & drop))
                sink->cb(sink->arena + sink->held[i].off, sink->held[i].len, sink->opaque);
    }
    if (sink->capped) /* the count is the tokenizer's one mutable field: atomic, any thread */
        atomic_fetch_add(&((slda_tokenizer_t *)tok)->capped, sink->capped);
    if (info) {
        memcpy(info->lang, code, sizeof info->lang);
        info->capped = sink->capped;
    }
    free(sink->arena);
    free(sink->held);
    sink->arena = NULL;
    sink->held = NULL;
}
