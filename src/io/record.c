/* record.c - a decoded record: the fields a format's decoder fills, tokenised, looked up.
 *
 * A decoder leaves each string of a record either in the value
 * it decodes (text: the whole value) or in the record's buffer; the buffer
 * grows as strings are added, and the fields that point into it move with it
 * (rebase), so a decoder needs no bound on what it adds. Tokenising
 * (slda_record_tokenize) only reads the record and the tokenizer: any
 * thread; looking the words up (slda_record_doc, or the caller's own
 * slda_doc_from_bag) is the vocabulary's thread's.
 */
#include "io/record.h"

#include "io/evtime.h"
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

void slda_record_init(slda_record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    slda_json_init(&rec->js);
    rec->name[SLDA_FIELD_ID] = "id";
    rec->name[SLDA_FIELD_TEXT] = "text";
    rec->name[SLDA_FIELD_AUTHOR] = "author";
}

void slda_record_clear(slda_record_t *rec)
{
    if (!rec)
        return;
    const char *names[SLDA_FIELD__COUNT];
    memcpy(names, rec->name, sizeof names);
    free(rec->buf);
    free(rec->tokens);
    free(rec->token_len);
    slda_json_clear(&rec->js);
    slda_record_init(rec);
    memcpy(rec->name, names, sizeof names);
}

void slda_record_names(slda_record_t *rec, const slda_conf_t *conf)
{
    if (!conf)
        return;
    rec->name[SLDA_FIELD_ID] = conf->input_id_field && *conf->input_id_field ? conf->input_id_field
                                                                             : "id";
    rec->name[SLDA_FIELD_TEXT] = conf->input_text_field && *conf->input_text_field
                                     ? conf->input_text_field : "text";
    rec->name[SLDA_FIELD_TIME] = conf->input_time_field;
    rec->name[SLDA_FIELD_LANG] = conf->input_lang_field;
    rec->name[SLDA_FIELD_AUTHOR] = conf->input_author_field && *conf->input_author_field
                                       ? conf->input_author_field : "author";
    rec->name[SLDA_FIELD_GROUP] = conf->input_group_field && conf->input_group_field[0] != '@'
                                      ? conf->input_group_field : NULL; /* @lang ...: the tracker's */
    rec->keep_text = conf->track && conf->track_examples && conf->input_time_field &&
                     *conf->input_time_field;
}

slda_err_t slda_record_authors(const slda_record_t *rec, const slda_model_t *model,
                               slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    if (slda_model_params(model)->kind != SLDA_KIND_ATM)
        return SLDA_OK;
    const char *name = slda_record_name(rec, SLDA_FIELD_AUTHOR);
    const slda_field_t *f = &rec->field[SLDA_FIELD_AUTHOR];
    size_t i = 0;
    while (f->s && i < f->len) {
        size_t j = i;
        while (j < f->len && f->s[j] != ';' && f->s[j] != '\n')
            j++;
        size_t a = i, b = j;
        while (a < b && (f->s[a] == ' ' || f->s[a] == '\t' || f->s[a] == '\r'))
            a++;
        while (b > a && (f->s[b - 1] == ' ' || f->s[b - 1] == '\t' || f->s[b - 1] == '\r'))
            b--;
        if (b > a && !memchr(f->s + a, '\0', b - a) &&
            slda_doc_add_author(doc, f->s + a, b - a) != SLDA_OK)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                "field \"%s\": more than %d authors", name ? name : "",
                                SLDA_MAX_DOC_AUTHORS);
        i = j + 1;
    }
    if (doc->nauthor == 0 && !rec->authors_optional)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"%s\": %s (model.kind=atm trains documents with authors: "
                            "input.author.field, --author-field)",
                            name ? name : "", f->s ? "no author named" : "missing");
    return SLDA_OK;
}

/* Append s[0..len) to out (o bytes used, room for SLDA_DOC_SNIPPET): white space runs as one
 * space; returns the new length, stopping before a character that would not fit whole. */
static size_t snippet_add(char *out, size_t o, const char *s, size_t len)
{
    for (size_t i = 0; i < len && o < SLDA_DOC_SNIPPET;) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ') {
            if (o && out[o - 1] != ' ')
                out[o++] = ' ';
            i++;
            continue;
        }
        size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        if (o + n > SLDA_DOC_SNIPPET || i + n > len)
            break;
        memcpy(out + o, s + i, n);
        o += n;
        i += n;
    }
    return o;
}

char *slda_record_text(const slda_record_t *rec)
{
    const slda_field_t *text = &rec->field[SLDA_FIELD_TEXT];
    char out[SLDA_DOC_SNIPPET + 1];
    size_t o = 0;
    if (text->s)
        o = snippet_add(out, 0, text->s, text->len);
    else
        for (uint32_t i = 0; i < rec->ntokens && o < SLDA_DOC_SNIPPET; i++) {
            if (o)
                o = snippet_add(out, o, " ", 1);
            o = snippet_add(out, o, rec->tokens[i], rec->token_len[i]);
        }
    while (o && out[o - 1] == ' ')
        o--;
    if (!o)
        return NULL;
    out[o] = '\0';
    return slda_xstrdup(out);
}

const char *slda_record_name(const slda_record_t *rec, slda_field_role_t role)
{
    const char *n = (unsigned)role < SLDA_FIELD__COUNT ? rec->name[role] : NULL;
    return n && *n ? n : NULL;
}

const char *slda_record_list_next(const char *p, char *name, size_t size)
{
    if (!p || !*p)
        return NULL;
    size_t n = strcspn(p, ",");
    snprintf(name, size, "%.*s", (int)(n < size ? n : size - 1), p);
    return p + n + (p[n] == ',');
}

slda_err_t slda_record_time(const slda_record_t *rec, int64_t *ms, char *errstr,
                            size_t errstr_size)
{
    const char *name = slda_record_name(rec, SLDA_FIELD_TIME);
    const slda_field_t *f = &rec->field[SLDA_FIELD_TIME];
    if (!f->s)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE, "time field \"%s\": missing",
                            name ? name : "");
    if (slda_time_parse(f->s, f->len, ms) != SLDA_OK)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "time field \"%s\": \"%.*s\" is not an ISO 8601 date-time or epoch "
                            "seconds/milliseconds", name ? name : "", (int)(f->len < 40 ? f->len : 40),
                            f->s);
    return SLDA_OK;
}

void slda_record_reset(slda_record_t *rec)
{
    memset(rec->field, 0, sizeof rec->field);
    rec->ntokens = 0;
    rec->has_tokens = 0;
    rec->group_list = 0;
    rec->time_ms = 0;
    rec->blen = 0;
    rec->js_parsed = 0;
}

/* p, if it pointed into the buffer before it moved from old, into the new one. */
static const char *rebase(const char *p, uintptr_t old, size_t len, char *buf)
{
    uintptr_t a = (uintptr_t)p;
    return p && a >= old && a < old + len ? buf + (a - old) : p;
}

char *slda_record_room(slda_record_t *rec, size_t n)
{
    if (rec->blen + n > rec->bcap) {
        uintptr_t old = (uintptr_t)rec->buf;
        size_t cap = rec->bcap ? rec->bcap : 256;
        while (rec->blen + n > cap)
            cap *= 2;
        rec->buf = slda_xrealloc(rec->buf, cap);
        rec->bcap = cap;
        if ((uintptr_t)rec->buf != old) {
            for (size_t i = 0; i < SLDA_FIELD__COUNT; i++)
                rec->field[i].s = rebase(rec->field[i].s, old, rec->blen, rec->buf);
            for (uint32_t i = 0; i < rec->ntokens; i++)
                rec->tokens[i] = rebase(rec->tokens[i], old, rec->blen, rec->buf);
        }
    }
    return rec->buf + rec->blen;
}

const char *slda_record_take(slda_record_t *rec, size_t len)
{
    const char *s = rec->buf + rec->blen;
    rec->blen += len;
    return s;
}

const char *slda_record_copy(slda_record_t *rec, const char *s, size_t len)
{
    char *out = slda_record_room(rec, len + 1);
    memcpy(out, s, len);
    out[len] = '\0';
    slda_record_take(rec, len + 1);
    return out;
}

void slda_record_add_token(slda_record_t *rec, const char *s, size_t len)
{
    if (rec->ntokens == rec->tcap) {
        rec->tcap = rec->tcap ? 2 * rec->tcap : 64;
        rec->tokens = slda_xrealloc(rec->tokens, rec->tcap * sizeof *rec->tokens);
        rec->token_len = slda_xrealloc(rec->token_len, rec->tcap * sizeof *rec->token_len);
    }
    rec->tokens[rec->ntokens] = s;
    rec->token_len[rec->ntokens++] = len;
    rec->has_tokens = 1;
}

void slda_record_assign(slda_record_t *dst, const slda_record_t *src)
{
    slda_record_reset(dst);
    for (size_t i = 0; i < SLDA_FIELD__COUNT; i++)
        if (src->field[i].s)
            dst->field[i] = (slda_field_t){slda_record_copy(dst, src->field[i].s, src->field[i].len),
                                           src->field[i].len};
    for (uint32_t i = 0; i < src->ntokens; i++)
        slda_record_add_token(dst, slda_record_copy(dst, src->tokens[i], src->token_len[i]),
                              src->token_len[i]);
    dst->has_tokens = src->has_tokens;
    dst->group_list = src->group_list;
}

/* One group value s[0..len) into out at o: trimmed, capped, sanitised; returns the new o. */
static size_t group_one(const char *s, size_t len, char *out, size_t o)
{
    size_t a = 0, b = len < SLDA_GROUP_MAX ? len : SLDA_GROUP_MAX;
    while (b > 0 && b < len && ((unsigned char)s[b] & 0xc0) == 0x80) /* at a character */
        b--;
    while (a < b && (unsigned char)s[a] <= ' ')
        a++;
    while (b > a && (unsigned char)s[b - 1] <= ' ')
        b--;
    for (size_t i = a; i < b;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        if (c >= 0x80 && (i + n > b || !slda_utf8_valid(s + i, n, NULL, NULL))) {
            out[o++] = '?'; /* not UTF-8 (a CSV column is not checked): the state stays JSON */
            i++;
        } else if (c < ' ' || c == 0x7f) { /* control characters (a NUL, a newline) as spaces */
            out[o++] = ' ';
            i++;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        }
    }
    return o;
}

char *slda_record_group(const slda_record_t *rec)
{
    const slda_field_t *g = &rec->field[SLDA_FIELD_GROUP];
    if (!g->s)
        return NULL;
    char *out = slda_xmalloc(g->len + 1);
    size_t o = 0;
    if (!rec->group_list) {
        o = group_one(g->s, g->len, out, 0);
    } else { /* tags: each element a group, the empty ones left out */
        for (size_t a = 0; a <= g->len;) {
            const char *nl = memchr(g->s + a, '\n', g->len - a);
            size_t b = nl ? (size_t)(nl - g->s) : g->len, at = o + (o > 0);
            size_t end = group_one(g->s + a, b - a, out, at);
            if (end > at) {
                if (o > 0)
                    out[o] = '\n';
                o = end;
            }
            a = b + 1;
        }
    }
    out[o] = '\0';
    return out;
}

char *slda_record_id(const slda_record_t *rec)
{
    const slda_field_t *id = &rec->field[SLDA_FIELD_ID];
    return id->s ? slda_xstrndup(id->s, id->len) : NULL;
}

/* The words of a record without text: its tokens (none when it has neither). */
static const char *const no_tokens[1];
static const size_t no_lens[1];

int slda_record_lang(const slda_record_t *rec, char out[SLDA_LANG_LEN])
{
    const slda_field_t *lang = &rec->field[SLDA_FIELD_LANG];
    out[0] = '\0';
    return lang->s && slda_lang_normalise(lang->s, lang->len, out);
}

slda_err_t slda_record_tokenize(const slda_tokenizer_t *tok, uint64_t seed,
                                const slda_record_t *rec, slda_bag_t *bag, char *errstr,
                                size_t errstr_size)
{
    const slda_field_t *text = &rec->field[SLDA_FIELD_TEXT];
    char lang[SLDA_LANG_LEN];
    slda_record_lang(rec, lang);
    if (text->s || !rec->has_tokens)
        return slda_bag_tokenize_doc(tok, seed, bag, text->s ? text->s : "", text->len, lang,
                                     errstr, errstr_size);
    return slda_bag_tokens_doc(tok, seed, bag, rec->ntokens ? rec->tokens : no_tokens,
                               rec->ntokens ? rec->token_len : no_lens, rec->ntokens, lang,
                               errstr, errstr_size);
}

slda_err_t slda_record_doc(slda_model_t *model, const slda_record_t *rec, slda_doc_t *doc,
                           char *errstr, size_t errstr_size)
{
    const slda_field_t *text = &rec->field[SLDA_FIELD_TEXT];
    char lang[SLDA_LANG_LEN];
    slda_err_t err;
    slda_record_lang(rec, lang);
    if (text->s || !rec->has_tokens)
        err = slda_doc_from_text_lang(model, text->s ? text->s : "", text->len, lang, doc,
                                      errstr, errstr_size);
    else
        err = slda_doc_from_tokens_lang(model, rec->ntokens ? rec->tokens : no_tokens,
                                        rec->ntokens ? rec->token_len : no_lens, rec->ntokens,
                                        lang, doc, errstr, errstr_size);
    if (err == SLDA_OK)
        err = slda_record_authors(rec, model, doc, errstr, errstr_size);
    if (err == SLDA_OK) {
        doc->id = slda_record_id(rec);
        doc->group = slda_record_group(rec);
        if (rec->keep_text)
            doc->text = slda_record_text(rec);
    } else {
        slda_doc_clear(doc);
    }
    return err;
}
