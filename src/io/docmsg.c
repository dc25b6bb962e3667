/* docmsg.c - one message value (text, JSON or MessagePack) -> document.
 *
 * Invariants. A message is checked against max_bytes before anything else.
 * JSON is parsed by json.c; MessagePack is first walked by check_msgpack(),
 * which verifies the bytes hold exactly one well-formed object whose
 * containers declare no more elements than bytes remain and nest at most
 * MSGPACK_MAX_DEPTH deep, so msgpack-c's unpacker (which allocates a
 * container's slots from its declared size) never sees a hostile size. Every
 * string taken out of a decoded message (id, text, tokens) is used within
 * the call or copied: nothing points into the zone or the value afterwards.
 * The id comes from the "id" field, else from the message key when it is
 * valid UTF-8 without NUL bytes, else stays NULL.
 */
#include "io/reader.h"
#include "core/utf8.h"
#include "text/tokenize.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

/* Our documents nest two deep (map -> tokens array); msgpack-c's own stack
 * holds 32 levels. */
#define MSGPACK_MAX_DEPTH 16

/* ---- ids ---- */

/* A copy of s[0..len) if it is usable as an id (valid UTF-8, no NUL), else NULL. */
static char *id_copy(const char *s, size_t len)
{
    if (len == 0 || memchr(s, '\0', len) || !slda_utf8_valid(s, len, NULL, NULL))
        return NULL;
    return slda_xstrndup(s, len);
}

/* ---- JSON ---- */

static slda_err_t json_id(const slda_json_t *js, uint32_t node, char **id, char *errstr,
                          size_t errstr_size)
{
    const slda_json_node_t *nd = &js->nodes[node];
    *id = NULL;
    if (nd->type == SLDA_JSON_NULL)
        return SLDA_OK;
    if (nd->type == SLDA_JSON_NUMBER) {
        *id = slda_xstrndup(js->src + nd->start, nd->end - nd->start);
        return SLDA_OK;
    }
    if (nd->type == SLDA_JSON_STRING) {
        char *buf = slda_xmalloc(slda_json_raw_len(js, node) + 1);
        size_t n = slda_json_string(js, node, buf);
        if (n == 0 || memchr(buf, '\0', n)) {
            free(buf);
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"id\": empty or contains a NUL character");
        }
        *id = buf;
        return SLDA_OK;
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                        "field \"id\": must be a string or a number, found %s",
                        slda_json_type_name(nd->type));
}

static slda_err_t json_text(slda_model_t *model, const slda_json_t *js, uint32_t node,
                            slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    char *buf;
    size_t n;
    slda_err_t err;
    if (js->nodes[node].type != SLDA_JSON_STRING)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"text\": must be a string, found %s",
                            slda_json_type_name(js->nodes[node].type));
    buf = slda_xmalloc(slda_json_raw_len(js, node) + 1);
    n = slda_json_string(js, node, buf);
    err = slda_doc_from_text(model, buf, n, doc, errstr, errstr_size);
    free(buf);
    return err;
}

static slda_err_t json_tokens(slda_model_t *model, const slda_json_t *js, uint32_t node,
                              slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    uint32_t n = js->nodes[node].size, i = 0;
    size_t room = 0, used = 0;
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
    char *buf = slda_xmalloc(room + 1);
    const char **toks = slda_xmalloc((n ? n : 1) * sizeof *toks);
    size_t *lens = slda_xmalloc((n ? n : 1) * sizeof *lens);
    i = 0;
    for (uint32_t e = slda_json_first(js, node); e != SLDA_JSON_NONE && i < n;
         e = js->nodes[e].next, i++) {
        toks[i] = buf + used;
        lens[i] = slda_json_string(js, e, buf + used);
        used += lens[i] + 1;
    }
    slda_err_t err = slda_doc_from_tokens(model, toks, lens, n, doc, errstr, errstr_size);
    free(buf);
    free(toks);
    free(lens);
    return err;
}

/* The document in an already parsed JSON tree. */
static slda_err_t json_doc(slda_model_t *model, const slda_json_t *js, slda_doc_t *doc,
                           char *errstr, size_t errstr_size)
{
    uint32_t idn, text, tokens;
    char *id = NULL;
    slda_err_t err;
    if (js->nodes[0].type != SLDA_JSON_OBJECT)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "JSON: expected an object, found %s",
                            slda_json_type_name(js->nodes[0].type));
    idn = slda_json_object_get(js, 0, "id");
    text = slda_json_object_get(js, 0, "text");
    tokens = slda_json_object_get(js, 0, "tokens");
    if (text == SLDA_JSON_NONE && tokens == SLDA_JSON_NONE)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "JSON: object has no \"text\" or \"tokens\" field");
    if (idn != SLDA_JSON_NONE && (err = json_id(js, idn, &id, errstr, errstr_size)) != SLDA_OK)
        return err;
    if (text != SLDA_JSON_NONE)
        err = json_text(model, js, text, doc, errstr, errstr_size);
    else
        err = json_tokens(model, js, tokens, doc, errstr, errstr_size);
    if (err != SLDA_OK) {
        free(id);
        return err;
    }
    doc->id = id;
    return SLDA_OK;
}

slda_err_t slda_doc_from_json(slda_model_t *model, slda_json_t *js, const char *src, size_t len,
                              slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    slda_err_t err;
    slda_doc_init(doc);
    if ((err = slda_json_parse(js, src, len, errstr, errstr_size)) != SLDA_OK)
        return err;
    return json_doc(model, js, doc, errstr, errstr_size);
}

/* ---- MessagePack ---- */

/* Bytes after the type byte that give a length or count, for the variable
 * types; 0 for types whose size is fixed. */
static size_t len_bytes(unsigned b)
{
    switch (b) {
    case 0xc4: case 0xc7: case 0xd9: return 1;
    case 0xc5: case 0xc8: case 0xda: case 0xdc: case 0xde: return 2;
    case 0xc6: case 0xc9: case 0xdb: case 0xdd: case 0xdf: return 4;
    default: return 0;
    }
}

/* Fixed total size of scalar types (type byte included), 0 if not fixed. */
static size_t fixed_size(unsigned b)
{
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return 1;
    switch (b) {
    case 0xcc: case 0xd0: return 2;
    case 0xcd: case 0xd1: return 3;
    case 0xd4: return 3;
    case 0xd5: return 4;
    case 0xca: case 0xce: case 0xd2: return 5;
    case 0xd6: return 6;
    case 0xcb: case 0xcf: case 0xd3: return 9;
    case 0xd7: return 10;
    case 0xd8: return 18;
    default: return 0;
    }
}

static uint64_t read_be(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

typedef struct mp_item_s {
    size_t size;     /* bytes of this item's own header and payload */
    uint64_t elems;  /* children that follow (containers) */
} mp_item_t;

/* Size and child count of the item at s[pos]; 0 on a bad or cut item. */
static int mp_item(const unsigned char *s, size_t len, size_t pos, mp_item_t *it,
                   const char **why)
{
    unsigned b = s[pos];
    size_t lb = len_bytes(b), avail = len - pos;
    uint64_t n;
    it->elems = 0;
    if ((it->size = fixed_size(b)) > 0)
        goto check;
    if (b >= 0x80 && b <= 0x8f) {
        it->size = 1;
        it->elems = 2 * (uint64_t)(b & 0x0f);
    } else if (b >= 0x90 && b <= 0x9f) {
        it->size = 1;
        it->elems = b & 0x0f;
    } else if (b >= 0xa0 && b <= 0xbf) {
        it->size = 1 + (size_t)(b & 0x1f);
    } else if (lb == 0) {
        *why = "invalid type byte";
        return 0;
    } else {
        if (avail < 1 + lb) {
            *why = "truncated";
            return 0;
        }
        n = read_be(s + pos + 1, lb);
        if (b == 0xdc || b == 0xdd) {
            it->size = 1 + lb;
            it->elems = n;
        } else if (b == 0xde || b == 0xdf) {
            it->size = 1 + lb;
            it->elems = 2 * n;
        } else {
            /* bin, str, ext: payload n bytes (ext has one more: its type) */
            uint64_t extra = (b >= 0xc7 && b <= 0xc9) ? 1 : 0;
            if (n > avail) {
                *why = "truncated";
                return 0;
            }
            it->size = 1 + lb + (size_t)extra + (size_t)n;
        }
    }
check:
    if (it->size > avail) {
        *why = "truncated";
        return 0;
    }
    if (it->elems > avail - it->size) {
        *why = "container larger than the message";
        return 0;
    }
    return 1;
}

/* Exactly one well-formed object in s[0..len)? (see the file comment) */
static slda_err_t check_msgpack(const unsigned char *s, size_t len, char *errstr,
                                size_t errstr_size)
{
    uint64_t rem[MSGPACK_MAX_DEPTH + 1];
    int depth = 0;
    size_t pos = 0;
    const char *why = "empty";
    rem[0] = 1;
    while (depth >= 0) {
        mp_item_t it;
        if (rem[depth] == 0) {
            depth--;
            continue;
        }
        if (pos >= len || !mp_item(s, len, pos, &it, &why))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "MessagePack: %s at byte %zu", pos >= len ? "truncated" : why,
                                pos);
        rem[depth]--;
        pos += it.size;
        if (it.elems > 0) {
            if (depth == MSGPACK_MAX_DEPTH)
                return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                    "MessagePack: nesting too deep at byte %zu", pos - it.size);
            rem[++depth] = it.elems;
        }
    }
    if (pos != len)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: %zu bytes after the object", len - pos);
    return SLDA_OK;
}

static int key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           memcmp(k->via.str.ptr, name, n) == 0;
}

static const char *mp_type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "an integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "a float";
    case MSGPACK_OBJECT_STR: return "a string";
    case MSGPACK_OBJECT_ARRAY: return "an array";
    case MSGPACK_OBJECT_MAP: return "a map";
    case MSGPACK_OBJECT_BIN: return "binary";
    case MSGPACK_OBJECT_EXT: return "an extension";
    default: return "unknown";
    }
}

static slda_err_t mp_id(const msgpack_object *v, char **id, char *errstr, size_t errstr_size)
{
    char buf[24];
    *id = NULL;
    switch (v->type) {
    case MSGPACK_OBJECT_NIL:
        return SLDA_OK;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->via.u64);
        *id = slda_xstrdup(buf);
        return SLDA_OK;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)v->via.i64);
        *id = slda_xstrdup(buf);
        return SLDA_OK;
    case MSGPACK_OBJECT_STR:
        *id = id_copy(v->via.str.ptr, v->via.str.size);
        if (!*id)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"id\": empty, not UTF-8 or contains a NUL character");
        return SLDA_OK;
    default:
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"id\": must be a string or an integer, found %s",
                            mp_type_name(v->type));
    }
}

static slda_err_t mp_tokens(slda_model_t *model, const msgpack_object *v, slda_doc_t *doc,
                            char *errstr, size_t errstr_size)
{
    uint32_t n;
    if (v->type != MSGPACK_OBJECT_ARRAY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"tokens\": must be an array of strings, found %s",
                            mp_type_name(v->type));
    n = v->via.array.size;
    for (uint32_t i = 0; i < n; i++) {
        if (v->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"tokens\": element %u is %s, not a string", i,
                                mp_type_name(v->via.array.ptr[i].type));
    }
    const char **toks = slda_xmalloc((n ? n : 1) * sizeof *toks);
    size_t *lens = slda_xmalloc((n ? n : 1) * sizeof *lens);
    for (uint32_t i = 0; i < n; i++) {
        toks[i] = v->via.array.ptr[i].via.str.ptr;
        lens[i] = v->via.array.ptr[i].via.str.size;
    }
    slda_err_t err = slda_doc_from_tokens(model, toks, lens, n, doc, errstr, errstr_size);
    free(toks);
    free(lens);
    return err;
}

/* The "id", "text" and "tokens" values of a map (first of each wins). */
typedef struct mp_fields_s {
    const msgpack_object *id, *text, *tokens;
} mp_fields_t;

static void mp_find_fields(const msgpack_object *map, mp_fields_t *f)
{
    memset(f, 0, sizeof *f);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object_kv *kv = &map->via.map.ptr[i];
        if (!f->id && key_is(&kv->key, "id"))
            f->id = &kv->val;
        else if (!f->text && key_is(&kv->key, "text"))
            f->text = &kv->val;
        else if (!f->tokens && key_is(&kv->key, "tokens"))
            f->tokens = &kv->val;
    }
}

static slda_err_t mp_doc(slda_model_t *model, const msgpack_object *root, slda_doc_t *doc,
                         char *errstr, size_t errstr_size)
{
    mp_fields_t f;
    char *id = NULL;
    slda_err_t err;
    if (root->type != MSGPACK_OBJECT_MAP)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: expected a map, found %s", mp_type_name(root->type));
    mp_find_fields(root, &f);
    if (!f.text && !f.tokens)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: map has no \"text\" or \"tokens\" field");
    if (f.text && f.text->type != MSGPACK_OBJECT_STR)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"text\": must be a string, found %s",
                            mp_type_name(f.text->type));
    if (f.id && (err = mp_id(f.id, &id, errstr, errstr_size)) != SLDA_OK)
        return err;
    if (f.text)
        err = slda_doc_from_text(model, f.text->via.str.ptr, f.text->via.str.size, doc, errstr,
                                 errstr_size);
    else
        err = mp_tokens(model, f.tokens, doc, errstr, errstr_size);
    if (err != SLDA_OK) {
        free(id);
        return err;
    }
    doc->id = id;
    return SLDA_OK;
}

static slda_err_t from_msgpack(slda_model_t *model, const char *val, size_t len,
                               slda_doc_t *doc, char *errstr, size_t errstr_size)
{
    msgpack_unpacked up;
    size_t off = 0;
    slda_err_t err;
    slda_doc_init(doc);
    if ((err = check_msgpack((const unsigned char *)val, len, errstr, errstr_size)) != SLDA_OK)
        return err;
    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, val, len, &off) != MSGPACK_UNPACK_SUCCESS || off != len)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                           "MessagePack: cannot decode the message");
    else
        err = mp_doc(model, &up.data, doc, errstr, errstr_size);
    msgpack_unpacked_destroy(&up);
    return err;
}

/* ---- dispatch ---- */

static int is_map_byte(unsigned char b)
{
    return (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf;
}

/* SLDA_INFMT_AUTO: JSON if it starts with '{' and parses, MessagePack if it
 * starts with a map byte (text if that fails and the value is UTF-8). */
static slda_err_t from_auto(slda_model_t *model, const char *val, size_t len, slda_doc_t *doc,
                            char *errstr, size_t errstr_size)
{
    size_t i = 0;
    slda_err_t err;
    while (i < len && (val[i] == ' ' || val[i] == '\t' || val[i] == '\r' || val[i] == '\n'))
        i++;
    if (i < len && val[i] == '{') {
        slda_json_t js;
        slda_json_init(&js);
        if (slda_json_parse(&js, val, len, NULL, 0) == SLDA_OK)
            err = json_doc(model, &js, doc, errstr, errstr_size);
        else
            err = slda_doc_from_text(model, val, len, doc, errstr, errstr_size);
        slda_json_clear(&js);
        return err;
    }
    if (len > 0 && is_map_byte((unsigned char)val[0])) {
        if (check_msgpack((const unsigned char *)val, len, NULL, 0) != SLDA_OK &&
            slda_utf8_valid(val, len, NULL, NULL))
            return slda_doc_from_text(model, val, len, doc, errstr, errstr_size);
        return from_msgpack(model, val, len, doc, errstr, errstr_size);
    }
    return slda_doc_from_text(model, val, len, doc, errstr, errstr_size);
}

slda_err_t slda_doc_from_message(slda_model_t *model, slda_infmt_t fmt, const void *val,
                                 size_t len, const void *key, size_t keylen,
                                 uint32_t max_bytes, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size)
{
    const char *v = val ? (const char *)val : "";
    slda_err_t err;
    slda_doc_init(doc);
    if (max_bytes > 0 && len > max_bytes)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "message: %zu bytes is over input.max.bytes=%u", len, max_bytes);
    switch (fmt) {
    case SLDA_INFMT_TEXT: err = slda_doc_from_text(model, v, len, doc, errstr, errstr_size); break;
    case SLDA_INFMT_JSON: {
        slda_json_t js;
        slda_json_init(&js);
        err = slda_doc_from_json(model, &js, v, len, doc, errstr, errstr_size);
        slda_json_clear(&js);
        break;
    }
    case SLDA_INFMT_MSGPACK: err = from_msgpack(model, v, len, doc, errstr, errstr_size); break;
    default: err = from_auto(model, v, len, doc, errstr, errstr_size); break;
    }
    if (err == SLDA_OK && !doc->id && key && keylen > 0)
        doc->id = id_copy(key, keylen);
    return err;
}
