/* stopset.c - the stop-word set (an open-addressing hash set) and text.stopwords' parts that fill it.
 *
 * text.stopwords is parts joined by '+': none, a built-in list (stopwords.c),
 * a part with a comma (inline words), or a file (one word a line, '#'
 * comments). Each word is normalised as tokens are (lower case, U+2019 -> '
 * when apostrophes are kept) and stored once, so a lookup is one hash
 * (slda_stop_hash) and usually one compare. The set is filled by slda_tokenizer_new only;
 * after that it is read-only and threads share it.
 *
 * The auto lists (58 languages, some 10,000 words) are normalised once a
 * process for each text mode (unicode or not, apostrophes kept or not) and
 * kept: a tokenizer without explicit stop words reads that set itself, one
 * with them gets a copy of it and adds its own (the copy points at the cached
 * words). Building them anew for every tokenizer cost more than reading a
 * short input (a model made per message, or per fuzz input).
 */
#include "text/text_priv.h"
#include "text/icu.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static void stop_grow(slda_tokenizer_t *tok)
{
    size_t n = tok->nslots ? tok->nslots * 2 : 64;
    stop_entry_t *tab = slda_xcalloc(n, sizeof *tab);
    for (size_t i = 0; i < tok->nslots; i++) {
        stop_entry_t *e = &tok->stop[i];
        if (e->word)
            *slda_stop_slot(tab, n, e->word, e->len, e->hash) = *e;
    }
    free(tok->stop);
    tok->stop = tab;
    tok->nslots = n;
}

/* Normalise as tokens are (lower-case, or NFKC_Casefold in the unicode mode;
 * U+2019 -> ' when apostrophes are kept; input is valid UTF-8) and add one
 * stop word to the lists in mask. */
static void stop_add_mask(slda_tokenizer_t *tok, const char *word, size_t len, uint64_t mask)
{
    char *norm, *folded = NULL;
    size_t n = 0, i = 0;
    int apos = tok->rules.apostrophes == SLDA_TEXT_APOS_KEEP;
    size_t k = 0;
    while (k < len && (unsigned char)word[k] < 0x80)
        k++;
    if (tok->unicode && k < len) /* NFKC_Casefold of ASCII is its lower case: ICU for the rest */
        len = slda_icu_fold_utf8(word, len, &folded);
    const unsigned char *src = (const unsigned char *)(folded ? folded : word);
    norm = slda_xmalloc(len + 1);
    while (i < len) {
        uint32_t cp = slda_utf8_decode(src, &i);
        if (!tok->unicode || k == len)
            cp = slda_char_lower(cp);
        if (cp == APOSTROPHE_RIGHT && apos)
            cp = '\'';
        n += slda_utf8_encode(cp, norm + n);
    }
    norm[n] = '\0';
    free(folded);
    if (tok->borrowed) { /* the cached auto lists: this tokenizer's own copy from here */
        stop_entry_t *own = slda_xmalloc(tok->nslots * sizeof *own);
        memcpy(own, tok->stop, tok->nslots * sizeof *own);
        tok->stop = own;
        tok->borrowed = 0;
    }
    if ((tok->nstop + 1) * 2 > tok->nslots)
        stop_grow(tok);
    uint64_t h = slda_stop_hash(norm, n);
    stop_entry_t *e = slda_stop_slot(tok->stop, tok->nslots, norm, n, h);
    if (e->word) {
        free(norm);
    } else {
        e->hash = h;
        e->word = norm;
        e->len = n;
        tok->nstop++;
    }
    if ((mask & STOP_EXPLICIT) && !(e->mask & STOP_EXPLICIT))
        tok->nexplicit++;
    e->mask |= mask;
}

void slda_stop_add(slda_tokenizer_t *tok, const char *word, size_t len)
{
    stop_add_mask(tok, word, len, STOP_EXPLICIT);
}

int slda_tokenizer_is_stopword(const slda_tokenizer_t *tok, const char *word, size_t len)
{
    if (tok->nexplicit == 0)
        return 0;
    return (slda_stop_mask(tok, word, len) & STOP_EXPLICIT) != 0;
}

size_t slda_tokenizer_stopword_count(const slda_tokenizer_t *tok)
{
    return tok->nexplicit;
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
    slda_stop_add(tok, line + start, len - start);
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
                            "text.stopwords \"%s\": not a built-in list (auto, none, smart, "
                            "snowball, onix, a language code) and cannot open it as a file: "
                            "%s%s%s%s",
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
            slda_stop_add(tok, part + a, b - a);
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

typedef enum { PART_EMPTY, PART_NONE, PART_AUTO, PART_BUILTIN, PART_WORDS, PART_FILE } part_kind_t;

static part_kind_t part_kind(const char *part, size_t len)
{
    if (len == 0)
        return PART_EMPTY;
    if (len == 4 && !memcmp(part, "none", 4))
        return PART_NONE;
    if (len == 4 && !memcmp(part, "auto", 4))
        return PART_AUTO;
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
    case PART_AUTO: tok->autolists = 1; return SLDA_OK; /* the lists: slda_stop_load_languages */
    case PART_BUILTIN:
        list = stop_builtin(part, len);
        for (size_t i = 0; i < list->n; i++)
            slda_stop_add(tok, list->words[i], strlen(list->words[i]));
        return SLDA_OK;
    case PART_WORDS: return stop_load_words(tok, spec, part, len, errstr, errstr_size);
    case PART_FILE: break;
    }
    path = slda_xstrndup(part, len);
    err = stop_load_file(tok, spec, path, errstr, errstr_size);
    free(path);
    return err;
}

slda_err_t slda_stop_load(slda_tokenizer_t *tok, const char *spec, char *errstr,
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
        if (kind == PART_AUTO || kind == PART_BUILTIN || kind == PART_WORDS) {
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

/* The auto lists' set of one text mode, built once (lang_lock) and never freed. */
typedef struct lang_cache_s {
    stop_entry_t *stop; /* nslots, as a tokenizer's; every entry shared */
    size_t nslots, nstop;
    int built;
} lang_cache_t;

static lang_cache_t lang_cache[2][2]; /* [unicode][apostrophes kept] */
static pthread_mutex_t lang_lock = PTHREAD_MUTEX_INITIALIZER;

static const lang_cache_t *lang_cache_get(const slda_tokenizer_t *tok)
{
    int apos = tok->rules.apostrophes == SLDA_TEXT_APOS_KEEP;
    lang_cache_t *c = &lang_cache[tok->unicode != 0][apos];
    pthread_mutex_lock(&lang_lock);
    if (!c->built) { /* tok->nlang is the same in every tokenizer (tokenize.c) */
        slda_tokenizer_t tmp; /* only what stop_add_mask reads: the mode and a set */
        memset(&tmp, 0, sizeof tmp);
        tmp.unicode = tok->unicode;
        tmp.rules = tok->rules;
        for (uint32_t l = 0; l < tok->nlang; l++) {
            const slda_stoplist_t *list = stop_builtin(slda_autolists[l].list,
                                                       strlen(slda_autolists[l].list));
            for (size_t i = 0; list && i < list->n; i++)
                stop_add_mask(&tmp, list->words[i], strlen(list->words[i]), LANG_BIT(l));
        }
        for (size_t i = 0; i < tmp.nslots; i++)
            tmp.stop[i].shared = 1;
        c->stop = tmp.stop;
        c->nslots = tmp.nslots;
        c->nstop = tmp.nstop;
        c->built = 1;
    }
    pthread_mutex_unlock(&lang_lock);
    return c;
}

void slda_stop_load_languages(slda_tokenizer_t *tok)
{
    const lang_cache_t *c = lang_cache_get(tok);
    if (tok->nstop == 0) { /* no explicit words: the cached set itself, read-only */
        free(tok->stop);
        tok->stop = c->stop;
        tok->nslots = c->nslots;
        tok->nstop = c->nstop;
        tok->borrowed = 1;
        return;
    }
    /* The explicit words (a few hundred) go into a copy of the cached set. */
    stop_entry_t *mine = tok->stop;
    size_t nmine = tok->nslots;
    tok->stop = slda_xmalloc(c->nslots * sizeof *tok->stop);
    memcpy(tok->stop, c->stop, c->nslots * sizeof *tok->stop);
    tok->nslots = c->nslots;
    tok->nstop = c->nstop;
    for (size_t i = 0; i < nmine; i++) {
        stop_entry_t *e;
        if (!mine[i].word)
            continue;
        if ((tok->nstop + 1) * 2 > tok->nslots)
            stop_grow(tok);
        e = slda_stop_slot(tok->stop, tok->nslots, mine[i].word, mine[i].len, mine[i].hash);
        if (e->word) {
            e->mask |= mine[i].mask; /* a language's word that is also an explicit one */
            free(mine[i].word);
        } else {
            *e = mine[i];
            tok->nstop++;
        }
    }
    free(mine);
}

void slda_stop_free(slda_tokenizer_t *tok)
{
    if (!tok->borrowed) {
        for (size_t i = 0; i < tok->nslots; i++)
            if (!tok->stop[i].shared)
                free(tok->stop[i].word);
        free(tok->stop);
    }
    tok->borrowed = 0;
    tok->stop = NULL;
    tok->nslots = tok->nstop = tok->nexplicit = 0;
}

