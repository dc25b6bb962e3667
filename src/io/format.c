/* format.c - one table of the input formats of files and messages; the record decoders fill.
 *
 * Adding a format (issue 25's CSV, say). 1. Its file, src/io/reader_NAME.c:
 * its functions and its row, `const slda_format_row_t slda_format_NAME`
 * (format.h): its names, how it is detected (from a file's name and first
 * line; from a message's first bytes), its file reader on slda_reader_t
 * (open, next, close) if it has one, its message decoder into a
 * slda_record_t if it has one; reader_json.c has both. 2. Its line in the
 * table below, whose order is the order detection tries the rows. Its
 * `file` is its slda_format_t value, the next free one (include/streamlda.h
 * names the first five and may name a new one). A file format is then read
 * by slda_reader_open, detected when the format is auto and named by
 * slda_format_parse. 3. A message format also takes its line in
 * SLDA_INPUT_FORMATS (core/config.h: input.format's names; the configuration
 * is in the core layer, below this one), from which the table's index by
 * input.format is made: a line there without its row does not link, and
 * unit_format checks every row against input.format's names. Fields a format
 * brings (a time, a group, an author) are roles of the record (format.h)
 * that its decoder fills. MessagePack's row and decoder are in docmsg.c
 * until they move onto the core MessagePack reader.
 *
 * The record. A decoder leaves each string of a record either in the value
 * it decodes (text: the whole value) or in the record's buffer; the buffer
 * grows as strings are added, and the fields that point into it move with it
 * (rebase), so a decoder needs no bound on what it adds. Tokenising
 * (slda_record_tokenize) only reads the record and the tokenizer: any
 * thread; looking the words up (slda_record_doc, or the caller's own
 * slda_doc_from_bag) is the vocabulary's thread's.
 */
#include "io/format.h"

#include "io/reader.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- the table ---- */

/* Each format's row, defined in its file; the message formats' named as in
 * core/config.h's list. */
extern const slda_format_row_t slda_format_uci, slda_format_ldac;
#define ROW_DECLARE(id, name) extern const slda_format_row_t slda_format_##name;
SLDA_INPUT_FORMATS(ROW_DECLARE)
#undef ROW_DECLARE

/* The table: every format, in the order detection tries them. */
static const slda_format_row_t *const rows[] = {
    &slda_format_uci,  /* docword*.txt; a lone count first with a fixed vocabulary */
    &slda_format_ldac, /* *.dat with its vocabulary; "N id:count ..." */
    &slda_format_text, /* no detector: what no other row claims */
    &slda_format_json, /* *.jsonl, *.json; '{' first */
    &slda_format_msgpack, /* messages only: a map byte first */
};
#define NROWS (sizeof rows / sizeof rows[0])

/* The row of each input.format value, made from core/config.h's list. */
#define MESSAGE_ROW(id, name) [SLDA_INFMT_##id] = &slda_format_##name,
static const slda_format_row_t *const by_infmt[SLDA_INFMT__COUNT] = {
    [SLDA_INFMT_AUTO] = NULL, SLDA_INPUT_FORMATS(MESSAGE_ROW)};
#undef MESSAGE_ROW

/* What no detector claims. */
static const slda_format_row_t *const fallback = &slda_format_text;

const slda_format_row_t *const *slda_format_rows(size_t *n)
{
    *n = NROWS;
    return rows;
}

const slda_format_row_t *slda_format_file(slda_format_t format)
{
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->next && rows[i]->file == (int)format)
            return rows[i];
    return NULL;
}

const slda_format_row_t *slda_format_message(slda_infmt_t format)
{
    return (unsigned)format < SLDA_INFMT__COUNT ? by_infmt[format] : NULL;
}

slda_format_t slda_format_by_name(const char *path, int fixed)
{
    if (strcmp(path, "-") == 0) /* standard input: by its first line */
        return SLDA_FORMAT_AUTO;
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->by_name && rows[i]->by_name(path, fixed))
            return (slda_format_t)rows[i]->file;
    return SLDA_FORMAT_AUTO;
}

slda_format_t slda_format_by_line(const char *line, size_t len, int fixed)
{
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i]->by_line && rows[i]->by_line(line, len, fixed))
            return (slda_format_t)rows[i]->file;
    return (slda_format_t)fallback->file;
}

slda_format_t slda_format_parse(const char *name)
{
    if (name && strcasecmp(name, "auto") == 0)
        return SLDA_FORMAT_AUTO;
    for (size_t i = 0; name && i < NROWS; i++) {
        if (!rows[i]->next)
            continue; /* not a file format */
        if (strcasecmp(name, rows[i]->name) == 0 ||
            (rows[i]->alias && strcasecmp(name, rows[i]->alias) == 0))
            return (slda_format_t)rows[i]->file;
    }
    return (slda_format_t)-1;
}

char *slda_format_vocab(const char *path, slda_format_t fmt)
{
    char *guess = NULL;
    if (!path || strcmp(path, "-") == 0)
        return NULL;
    if (fmt == SLDA_FORMAT_AUTO) { /* the first row whose name pattern fits */
        for (size_t i = 0; !guess && i < NROWS; i++)
            if (rows[i]->vocab)
                guess = rows[i]->vocab(path, 0);
    } else {
        const slda_format_row_t *row = slda_format_file(fmt);
        if (row && row->vocab)
            guess = row->vocab(path, 1);
    }
    if (guess && access(guess, R_OK) != 0) {
        free(guess);
        guess = NULL;
    }
    return guess;
}

slda_err_t slda_format_decode(const slda_format_row_t *row, slda_record_t *rec, const char *val,
                              size_t len, char *errstr, size_t errstr_size)
{
    slda_record_reset(rec);
    for (size_t i = 0; !row && i < NROWS; i++)
        if (rows[i]->sniff && rows[i]->sniff(rec, val, len))
            row = rows[i];
    if (!row)
        row = fallback;
    return row->decode(rec, val, len, errstr, errstr_size);
}

/* ---- the record ---- */

void slda_record_init(slda_record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    slda_json_init(&rec->js);
}

void slda_record_clear(slda_record_t *rec)
{
    if (!rec)
        return;
    free(rec->buf);
    free(rec->tokens);
    free(rec->token_len);
    slda_json_clear(&rec->js);
    slda_record_init(rec);
}

void slda_record_reset(slda_record_t *rec)
{
    memset(rec->field, 0, sizeof rec->field);
    rec->ntokens = 0;
    rec->has_tokens = 0;
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

char *slda_record_id(const slda_record_t *rec)
{
    const slda_field_t *id = &rec->field[SLDA_FIELD_ID];
    return id->s ? slda_xstrndup(id->s, id->len) : NULL;
}

/* The words of a record without text: its tokens (none when it has neither). */
static const char *const no_tokens[1];
static const size_t no_lens[1];

slda_err_t slda_record_tokenize(const slda_tokenizer_t *tok, uint64_t seed,
                                const slda_record_t *rec, slda_bag_t *bag, char *errstr,
                                size_t errstr_size)
{
    const slda_field_t *text = &rec->field[SLDA_FIELD_TEXT];
    if (text->s || !rec->has_tokens)
        return slda_bag_tokenize(tok, seed, bag, text->s ? text->s : "", text->len, errstr,
                                 errstr_size);
    return slda_bag_tokens(tok, seed, bag, rec->ntokens ? rec->tokens : no_tokens,
                           rec->ntokens ? rec->token_len : no_lens, rec->ntokens, errstr,
                           errstr_size);
}

slda_err_t slda_record_doc(slda_model_t *model, const slda_record_t *rec, slda_doc_t *doc,
                           char *errstr, size_t errstr_size)
{
    const slda_field_t *text = &rec->field[SLDA_FIELD_TEXT];
    slda_err_t err;
    if (text->s || !rec->has_tokens)
        err = slda_doc_from_text(model, text->s ? text->s : "", text->len, doc, errstr,
                                 errstr_size);
    else
        err = slda_doc_from_tokens(model, rec->ntokens ? rec->tokens : no_tokens,
                                   rec->ntokens ? rec->token_len : no_lens, rec->ntokens, doc,
                                   errstr, errstr_size);
    if (err == SLDA_OK)
        doc->id = slda_record_id(rec);
    return err;
}
