/* reader_json.c - JSON records {"id", "text"|"tokens", "lang", "author"}: a message value, or a line (JSON lines).
 *
 * Invariants. A record is an object with a "text" string or a "tokens" array
 * of strings ("text" wins when both are there; other fields are ignored) and
 * an optional "id", a string (non-empty, without NUL) or a number (its text
 * as written); null is no id. An optional "lang" (or "language"; the key
 * input.lang.field names instead) string names the document's language
 * (slda_record_lang reads it; a value that is not a string, or longer than
 * SLDA_LANG_FIELD_MAX, is ignored: the language is
 * then identified from the text). Its strings are unescaped into the record's
 * buffer: nothing points into the value afterwards. The checks come in one
 * order (the object, text or tokens present, the id, then text's or tokens'
 * types), so a record has one error whatever else is wrong with it, all
 * SLDA_ERR_PARSE naming the field. In a file every non-blank line is a
 * record and a document, its id the "id" field, else its line number; lines
 * are decoded and tokenised on the worker threads and looked up in order
 * (reader_ahead.c), errors get the "path:line: " prefix and are counted
 * (reader.c).
 */
#include "io/reader.h"

#include <string.h>

/* ---- the record ---- */

static void json_lang(slda_record_t *rec, const slda_json_t *js)
{
    const char *name = slda_record_name(rec, SLDA_FIELD_LANG); /* input.lang.field */
    uint32_t node = slda_json_object_get(js, 0, name ? name : "lang");
    if (node == SLDA_JSON_NONE && !name)
        node = slda_json_object_get(js, 0, "language");
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_STRING ||
        slda_json_raw_len(js, node) > SLDA_LANG_FIELD_MAX)
        return;
    char *buf = slda_record_room(rec, slda_json_raw_len(js, node) + 1);
    size_t n = slda_json_string(js, node, buf);
    rec->field[SLDA_FIELD_LANG] = (slda_field_t){slda_record_take(rec, n + 1), n};
}

static slda_err_t json_id(slda_record_t *rec, const slda_json_t *js, uint32_t node,
                          const char *name, char *errstr, size_t errstr_size)
{
    const slda_json_node_t *nd = &js->nodes[node];
    if (nd->type == SLDA_JSON_NULL)
        return SLDA_OK;
    if (nd->type == SLDA_JSON_NUMBER) {
        size_t n = nd->end - nd->start;
        const char *s = slda_record_copy(rec, js->src + nd->start, n);
        rec->field[SLDA_FIELD_ID] = (slda_field_t){s, n};
        return SLDA_OK;
    }
    if (nd->type == SLDA_JSON_STRING) {
        char *buf = slda_record_room(rec, slda_json_raw_len(js, node) + 1);
        size_t n = slda_json_string(js, node, buf);
        if (n == 0 || memchr(buf, '\0', n))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"%s\": empty or contains a NUL character", name);
        rec->field[SLDA_FIELD_ID] = (slda_field_t){slda_record_take(rec, n + 1), n};
        return SLDA_OK;
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                        "field \"%s\": must be a string or a number, found %s", name,
                        slda_json_type_name(nd->type));
}

/* The text field(s) named (a comma list: their strings joined by newlines) found in the
 * object: SLDA_OK with the text set, SLDA_ERR_EOF when none is there. */
static slda_err_t json_text(slda_record_t *rec, const slda_json_t *js, const char *names,
                            char *errstr, size_t errstr_size)
{
    size_t start = rec->blen, len = 0;
    int found = 0;
    char name[256];
    for (const char *p = names; (p = slda_record_list_next(p, name, sizeof name));) {
        uint32_t node = slda_json_object_get(js, 0, name);
        if (node == SLDA_JSON_NONE)
            continue;
        if (js->nodes[node].type != SLDA_JSON_STRING)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"%s\": must be a string, found %s", name,
                                slda_json_type_name(js->nodes[node].type));
        char *buf = slda_record_room(rec, slda_json_raw_len(js, node) + 2);
        if (found++)
            buf[0] = '\n', buf++, len++;
        size_t n = slda_json_string(js, node, buf);
        len += n;
        rec->blen = start + len; /* the joined text grows in place */
    }
    if (!found)
        return SLDA_ERR_EOF;
    char *end = slda_record_room(rec, 1);
    *end = '\0';
    rec->blen = start + len + 1;
    rec->field[SLDA_FIELD_TEXT] = (slda_field_t){rec->buf + start, len};
    return SLDA_OK;
}

/* A string or a number of the object's field `name` as role's field (the time);
 * absent or null: left absent; another type: SLDA_ERR_PARSE. */
static slda_err_t json_value(slda_record_t *rec, const slda_json_t *js, slda_field_role_t role,
                             char *errstr, size_t errstr_size)
{
    const char *name = slda_record_name(rec, role);
    if (!name)
        return SLDA_OK;
    uint32_t node = slda_json_object_get(js, 0, name);
    if (node == SLDA_JSON_NONE || js->nodes[node].type == SLDA_JSON_NULL)
        return SLDA_OK;
    const slda_json_node_t *nd = &js->nodes[node];
    if (nd->type == SLDA_JSON_NUMBER) {
        size_t n = nd->end - nd->start;
        rec->field[role] = (slda_field_t){slda_record_copy(rec, js->src + nd->start, n), n};
        return SLDA_OK;
    }
    if (nd->type != SLDA_JSON_STRING)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"%s\": must be a string or a number, found %s", name,
                            slda_json_type_name(nd->type));
    char *buf = slda_record_room(rec, slda_json_raw_len(js, node) + 1);
    size_t n = slda_json_string(js, node, buf);
    rec->field[role] = (slda_field_t){slda_record_take(rec, n + 1), n};
    return SLDA_OK;
}

/* The authors' or the group's field: a string, a number, or an array of them (joined by
 * newlines; a group's at most SLDA_GROUPS_MAX: tags); absent or null: left absent; another
 * type: SLDA_ERR_PARSE. */
static slda_err_t json_list(slda_record_t *rec, const slda_json_t *js, slda_field_role_t role,
                            char *errstr, size_t errstr_size)
{
    const char *name = slda_record_name(rec, role);
    uint32_t node = name ? slda_json_object_get(js, 0, name) : SLDA_JSON_NONE;
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_ARRAY)
        return json_value(rec, js, role, errstr, errstr_size);
    size_t room = 1, len = 0;
    uint32_t n = js->nodes[node].size, i = 0;
    if (role == SLDA_FIELD_GROUP && n > SLDA_GROUPS_MAX)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"%s\": %u groups, at most %d", name, n, SLDA_GROUPS_MAX);
    for (uint32_t e = slda_json_first(js, node); e != SLDA_JSON_NONE && i < n;
         e = js->nodes[e].next, i++) {
        int t = js->nodes[e].type;
        if (t != SLDA_JSON_STRING && t != SLDA_JSON_NUMBER)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"%s\": element %u is %s, not a string", name, i,
                                slda_json_type_name(t));
        room += slda_json_raw_len(js, e) + 1;
    }
    char *buf = slda_record_room(rec, room);
    i = 0;
    for (uint32_t e = slda_json_first(js, node); e != SLDA_JSON_NONE && i < n;
         e = js->nodes[e].next, i++) {
        if (len)
            buf[len++] = '\n';
        if (js->nodes[e].type == SLDA_JSON_STRING) {
            size_t m = slda_json_string(js, e, buf + len);
            for (size_t k = len; role == SLDA_FIELD_GROUP && k < len + m; k++)
                if (buf[k] == '\n') /* a group's own newline is a space, not a second group */
                    buf[k] = ' ';
            len += m;
        } else {
            size_t m = js->nodes[e].end - js->nodes[e].start;
            memcpy(buf + len, js->src + js->nodes[e].start, m);
            len += m;
        }
    }
    buf[len] = '\0';
    rec->field[role] = (slda_field_t){slda_record_take(rec, len + 1), len};
    rec->group_list |= role == SLDA_FIELD_GROUP;
    return SLDA_OK;
}

static slda_err_t json_tokens(slda_record_t *rec, const slda_json_t *js, uint32_t node,
                              char *errstr, size_t errstr_size)
{
    uint32_t n = js->nodes[node].size, i = 0;
    size_t room = 0;
    if (js->nodes[node].type != SLDA_JSON_ARRAY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"tokens\": must be an array of strings, found %s",
                            slda_json_type_name(js->nodes[node].type));
    for (uint32_t e = slda_json_first(js, node); e != SLDA_JSON_NONE && i < n;
         e = js->nodes[e].next, i++) {
        if (js->nodes[e].type != SLDA_JSON_STRING)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"tokens\": element %u is %s, not a string", i,
                                slda_json_type_name(js->nodes[e].type));
        room += slda_json_raw_len(js, e) + 1;
    }
    slda_record_room(rec, room); /* one allocation for them all */
    rec->has_tokens = 1;
    i = 0;
    for (uint32_t e = slda_json_first(js, node); e != SLDA_JSON_NONE && i < n;
         e = js->nodes[e].next, i++) {
        size_t len = slda_json_string(js, e, slda_record_room(rec, slda_json_raw_len(js, e) + 1));
        slda_record_add_token(rec, slda_record_take(rec, len + 1), len);
    }
    return SLDA_OK;
}

/* The record in a parsed JSON tree: the id, text (or tokens) and time from the fields
 * the record names (io/record.h). */
static slda_err_t json_record(slda_record_t *rec, const slda_json_t *js, char *errstr,
                              size_t errstr_size)
{
    uint32_t idn, tokens;
    slda_err_t err;
    const char *id_name = slda_record_name(rec, SLDA_FIELD_ID);
    const char *text_name = slda_record_name(rec, SLDA_FIELD_TEXT);
    if (js->nodes[0].type != SLDA_JSON_OBJECT)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "JSON: expected an object, found %s",
                            slda_json_type_name(js->nodes[0].type));
    idn = id_name ? slda_json_object_get(js, 0, id_name) : SLDA_JSON_NONE;
    tokens = slda_json_object_get(js, 0, "tokens");
    int has_text = 0; /* the checks keep their order: text or tokens present, id, types */
    char name[256];
    for (const char *p = text_name ? text_name : "text";
         !has_text && (p = slda_record_list_next(p, name, sizeof name));)
        has_text = slda_json_object_get(js, 0, name) != SLDA_JSON_NONE;
    if (!has_text && tokens == SLDA_JSON_NONE) {
        if (!text_name || !strcmp(text_name, "text"))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "JSON: object has no \"text\" or \"tokens\" field");
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "JSON: object has no \"%s\" field (input.text.field) or \"tokens\"",
                            text_name);
    }
    if (idn != SLDA_JSON_NONE &&
        (err = json_id(rec, js, idn, id_name, errstr, errstr_size)) != SLDA_OK)
        return err;
    if ((err = json_value(rec, js, SLDA_FIELD_TIME, errstr, errstr_size)) != SLDA_OK)
        return err;
    if ((err = json_list(rec, js, SLDA_FIELD_AUTHOR, errstr, errstr_size)) != SLDA_OK)
        return err;
    if ((err = json_list(rec, js, SLDA_FIELD_GROUP, errstr, errstr_size)) != SLDA_OK)
        return err;
    json_lang(rec, js);
    err = json_text(rec, js, text_name ? text_name : "text", errstr, errstr_size);
    if (err != SLDA_ERR_EOF) /* "text" wins over "tokens" */
        return err;
    return json_tokens(rec, js, tokens, errstr, errstr_size);
}

/* input.format=auto: a value whose first non-blank byte is '{' and that
 * parses (the tree stays in rec for the decoder); one that does not parse
 * is text. */
static int json_sniff(slda_record_t *rec, const char *val, size_t len)
{
    size_t i = 0;
    while (i < len && (val[i] == ' ' || val[i] == '\t' || val[i] == '\r' || val[i] == '\n'))
        i++;
    if (i == len || val[i] != '{' || slda_json_parse(&rec->js, val, len, NULL, 0) != SLDA_OK)
        return 0;
    rec->js_parsed = 1;
    return 1;
}

static slda_err_t json_decode(slda_record_t *rec, const char *val, size_t len, char *errstr,
                              size_t errstr_size)
{
    slda_err_t err;
    if (!rec->js_parsed && (err = slda_json_parse(&rec->js, val, len, errstr, errstr_size)))
        return err;
    rec->js_parsed = 0;
    return json_record(rec, &rec->js, errstr, errstr_size);
}

/* ---- files ---- */

static int json_by_name(const char *path, int fixed)
{
    const char *base = slda_reader_base_name(path);
    (void)fixed;
    return slda_reader_ends_with(base, ".jsonl") || slda_reader_ends_with(base, ".json");
}

static int json_by_line(const char *line, size_t len, int fixed)
{
    const char *p = slda_reader_skip_space(line, line + len);
    (void)fixed;
    return p < line + len && *p == '{';
}

/* The next line's record (time read when a time field is named: a record without one is
 * rejected before any word touches the vocabulary). */
static slda_err_t jsonl_next_record(slda_reader_t *rd, char *errstr, size_t errstr_size)
{
    char msg[512] = "";
    slda_err_t err = slda_reader_next_nonblank(rd, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    slda_record_reset(&rd->rec);
    err = json_decode(&rd->rec, rd->line, rd->linelen, msg, sizeof msg);
    int64_t ms;
    if (err == SLDA_OK && slda_record_name(&rd->rec, SLDA_FIELD_TIME))
        err = slda_record_time(&rd->rec, &ms, msg, sizeof msg);
    if (err != SLDA_OK)
        return slda_reader_fail(rd, err, errstr, errstr_size, "%s", msg);
    return SLDA_OK;
}

/* Its row of format.c's table. */
const slda_format_row_t slda_format_json = {
    .name = "json", .alias = "jsonl", .title = "JSON lines", .file = SLDA_FORMAT_JSONL,
    .fields = 1, .by_name = json_by_name, .by_line = json_by_line, .next = slda_reader_ahead_next,
    .close = slda_reader_ahead_close, .next_record = jsonl_next_record, .sniff = json_sniff, .decode = json_decode};
