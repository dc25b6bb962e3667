/* docmsg.c - one message value -> a record (input.format, the key as id); MessagePack's decoder.
 *
 * Invariants. A message is checked against max_bytes before anything else;
 * then input.format's row of the format table decodes it (format.c; auto:
 * the first row whose sniff claims it, else text). The id comes from the
 * record's "id" field, else from the message key when it is valid UTF-8
 * without NUL bytes, else stays absent. Decoding only reads the value and
 * writes the record: any thread (the service decodes on its workers);
 * tokenising and the vocabulary's lookups are the caller's next steps
 * (slda_record_tokenize, slda_doc_from_bag; slda_doc_from_message does all
 * three on the vocabulary's thread).
 *
 * MessagePack (until it moves onto the core MessagePack reader): a value is
 * first walked by check_msgpack(), which verifies the bytes hold exactly one
 * well-formed object whose containers declare no more elements than bytes
 * remain and nest at most MSGPACK_MAX_DEPTH deep, so msgpack-c's unpacker
 * (which allocates a container's slots from its declared size) never sees a
 * hostile size. Every string taken out of a decoded map (id, text, tokens)
 * is copied into the record: nothing points into the zone afterwards.
 */
#include "io/docmsg.h"

#include "core/utf8.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

/* Our documents nest two deep (map -> tokens array); msgpack-c's own stack
 * holds 32 levels. */
#define MSGPACK_MAX_DEPTH 16

/* ---- ids ---- */

/* Is s[0..len) usable as an id (non-empty, valid UTF-8, no NUL)? */
static int id_ok(const char *s, size_t len)
{
    return len > 0 && !memchr(s, '\0', len) && slda_utf8_valid(s, len, NULL, NULL);
}

/* The record's id: a copy of s[0..len). */
static void id_set(slda_record_t *rec, const char *s, size_t len)
{
    rec->field[SLDA_FIELD_ID] = (slda_field_t){slda_record_copy(rec, s, len), len};
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

static slda_err_t mp_id(slda_record_t *rec, const msgpack_object *v, char *errstr,
                        size_t errstr_size)
{
    char buf[24];
    switch (v->type) {
    case MSGPACK_OBJECT_NIL:
        return SLDA_OK;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->via.u64);
        id_set(rec, buf, strlen(buf));
        return SLDA_OK;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)v->via.i64);
        id_set(rec, buf, strlen(buf));
        return SLDA_OK;
    case MSGPACK_OBJECT_STR:
        if (!id_ok(v->via.str.ptr, v->via.str.size))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"id\": empty, not UTF-8 or contains a NUL character");
        id_set(rec, v->via.str.ptr, v->via.str.size);
        return SLDA_OK;
    default:
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"id\": must be a string or an integer, found %s",
                            mp_type_name(v->type));
    }
}

static slda_err_t mp_tokens(slda_record_t *rec, const msgpack_object *v, char *errstr,
                            size_t errstr_size)
{
    uint32_t n;
    size_t room = 0;
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
        room += v->via.array.ptr[i].via.str.size + 1;
    }
    slda_record_room(rec, room); /* one allocation for them all */
    rec->has_tokens = 1;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object_str *t = &v->via.array.ptr[i].via.str;
        slda_record_add_token(rec, slda_record_copy(rec, t->ptr, t->size), t->size);
    }
    return SLDA_OK;
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

static slda_err_t mp_record(slda_record_t *rec, const msgpack_object *root, char *errstr,
                            size_t errstr_size)
{
    mp_fields_t f;
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
    if (f.id && (err = mp_id(rec, f.id, errstr, errstr_size)) != SLDA_OK)
        return err;
    if (!f.text)
        return mp_tokens(rec, f.tokens, errstr, errstr_size);
    const msgpack_object_str *t = &f.text->via.str;
    rec->field[SLDA_FIELD_TEXT] = (slda_field_t){slda_record_copy(rec, t->ptr, t->size), t->size};
    return SLDA_OK;
}

static slda_err_t msgpack_decode(slda_record_t *rec, const char *val, size_t len,
                                 char *errstr, size_t errstr_size)
{
    msgpack_unpacked up;
    size_t off = 0;
    slda_err_t err;
    if ((err = check_msgpack((const unsigned char *)val, len, errstr, errstr_size)) != SLDA_OK)
        return err;
    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, val, len, &off) != MSGPACK_UNPACK_SUCCESS || off != len)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                           "MessagePack: cannot decode the message");
    else
        err = mp_record(rec, &up.data, errstr, errstr_size);
    msgpack_unpacked_destroy(&up);
    return err;
}

static int is_map_byte(unsigned char b)
{
    return (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf;
}

/* input.format=auto: a value that starts with a map byte, unless it is not
 * well-formed MessagePack and is valid UTF-8 (then it is text). */
static int msgpack_sniff(slda_record_t *rec, const char *val, size_t len)
{
    (void)rec;
    if (len == 0 || !is_map_byte((unsigned char)val[0]))
        return 0;
    return check_msgpack((const unsigned char *)val, len, NULL, 0) == SLDA_OK ||
           !slda_utf8_valid(val, len, NULL, NULL);
}

/* MessagePack's row of format.c's table (a message format only). */
const slda_format_row_t slda_format_msgpack = {
    .name = "msgpack", .title = "MessagePack", .file = -1, .sniff = msgpack_sniff,
    .decode = msgpack_decode};

/* ---- messages ---- */

slda_err_t slda_docmsg_decode(slda_infmt_t fmt, const slda_message_t *msg, uint32_t max_bytes,
                              slda_record_t *rec, char *errstr, size_t errstr_size)
{
    const char *v = msg->value ? (const char *)msg->value : "";
    slda_err_t err;
    if (max_bytes > 0 && msg->len > max_bytes) {
        slda_record_reset(rec);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TOO_LARGE,
                            "message: %zu bytes is over input.max.bytes=%u", msg->len,
                            max_bytes);
    }
    err = slda_format_decode(slda_format_message(fmt), rec, v, msg->len, errstr, errstr_size);
    rec->time_ms = msg->timestamp_ms;
    if (err == SLDA_OK && !rec->field[SLDA_FIELD_ID].s && msg->key &&
        id_ok(msg->key, msg->keylen))
        id_set(rec, msg->key, msg->keylen);
    return err;
}

slda_err_t slda_doc_from_message(slda_model_t *model, slda_infmt_t fmt, const void *val,
                                 size_t len, const void *key, size_t keylen,
                                 uint32_t max_bytes, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size)
{
    slda_message_t msg = {.value = val, .len = len, .key = key, .keylen = keylen};
    slda_record_t rec;
    slda_doc_init(doc);
    slda_record_init(&rec);
    slda_err_t err = slda_docmsg_decode(fmt, &msg, max_bytes, &rec, errstr, errstr_size);
    if (err == SLDA_OK)
        err = slda_record_doc(model, &rec, doc, errstr, errstr_size);
    slda_record_clear(&rec);
    return err;
}
