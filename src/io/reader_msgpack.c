/* reader_msgpack.c - the MessagePack message format: a map with "id", "text" or "tokens", "lang",
 * and the authors' field (input.author.field, "author": model.kind=atm).
 *
 * A message format only (no file reader): its row of format.c's table decodes a value
 * with the core MessagePack reader (core/msgpack.h), in two passes. The first checks the
 * value is exactly one well-formed object nesting at most MAX_DEPTH deep, every declared
 * length and count within the bytes left (nothing is allocated from a hostile size); the
 * second reads the map: the first "id", "text" and "tokens" win, other keys and values are
 * skipped. Every string taken out (id, text, tokens) is copied into the record. Messages
 * read "MessagePack: <problem> at byte N" as they always have, whatever the reader's own
 * wording (the fault kinds say which).
 */
#include "io/format.h"

#include "core/msgpack.h"
#include "core/utf8.h"

#include <stdio.h>
#include <string.h>

/* Our documents nest two deep (map -> tokens array). */
#define MAX_DEPTH 16
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

/* ---- the check ---- */

/* Exactly one well-formed object in s[0..len) (see the top), with this format's messages. */
static slda_err_t check(const unsigned char *s, size_t len, char *errstr, size_t errstr_size)
{
    slda_msgpack_t mp;
    slda_msgpack_init(&mp, s, 0, len, NULL, NULL, 0);
    mp.max_depth = MAX_DEPTH;
    if (slda_msgpack_skip(&mp, "message") == 0) {
        if (slda_msgpack_left(&mp) == 0)
            return SLDA_OK;
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: %zu bytes after the object", slda_msgpack_left(&mp));
    }
    const char *why = "truncated";
    if (mp.fault == SLDA_MSGPACK_TYPE)
        why = "invalid type byte";
    else if (mp.fault == SLDA_MSGPACK_DEPTH)
        why = "nesting too deep";
    else if (mp.fault == SLDA_MSGPACK_TOO_LARGE && mp.err_at < len) {
        unsigned b = s[mp.err_at]; /* a count, not a length: the container's fault */
        if ((b >= 0x80 && b <= 0x9f) || (b >= 0xdc && b <= 0xdf))
            why = "container larger than the message";
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE, "MessagePack: %s at byte %zu", why,
                        mp.err_at);
}

/* ---- the map ---- */

/* The wording of the values a field must not be (as the messages always had it). */
static const char *type_name(slda_msgpack_type_t t)
{
    switch (t) {
    case SLDA_MSGPACK_NIL: return "nil";
    case SLDA_MSGPACK_BOOL: return "a boolean";
    case SLDA_MSGPACK_INT: return "an integer";
    case SLDA_MSGPACK_FLOAT: return "a float";
    case SLDA_MSGPACK_STR: return "a string";
    case SLDA_MSGPACK_ARRAY: return "an array";
    case SLDA_MSGPACK_MAP: return "a map";
    case SLDA_MSGPACK_BIN: return "binary";
    case SLDA_MSGPACK_EXT: return "an extension";
    default: return "unknown";
    }
}

static slda_err_t read_id(slda_record_t *rec, slda_msgpack_t *mp, char *errstr,
                          size_t errstr_size)
{
    char buf[24];
    const unsigned char *s;
    size_t len;
    uint64_t v;
    int neg;
    switch (slda_msgpack_type(mp)) {
    case SLDA_MSGPACK_NIL:
        return SLDA_OK;
    case SLDA_MSGPACK_INT:
        slda_msgpack_integer(mp, "id", &v, &neg);
        if (neg)
            snprintf(buf, sizeof buf, "%lld", (long long)v);
        else
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
        id_set(rec, buf, strlen(buf));
        return SLDA_OK;
    case SLDA_MSGPACK_STR:
        slda_msgpack_str(mp, "id", &s, &len);
        if (!id_ok((const char *)s, len))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"id\": empty, not UTF-8 or contains a NUL character");
        id_set(rec, (const char *)s, len);
        return SLDA_OK;
    default:
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"id\": must be a string or an integer, found %s",
                            type_name(slda_msgpack_type(mp)));
    }
}

static slda_err_t read_tokens(slda_record_t *rec, slda_msgpack_t *mp, char *errstr,
                              size_t errstr_size)
{
    uint32_t n;
    size_t room = 0;
    if (slda_msgpack_type(mp) != SLDA_MSGPACK_ARRAY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "field \"tokens\": must be an array of strings, found %s",
                            type_name(slda_msgpack_type(mp)));
    slda_msgpack_array(mp, "tokens", &n);
    const unsigned char *first = mp->p;
    for (uint32_t i = 0; i < n; i++) { /* the types, and one allocation for them all */
        const unsigned char *s;
        size_t len;
        if (slda_msgpack_type(mp) != SLDA_MSGPACK_STR)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"tokens\": element %u is %s, not a string", i,
                                type_name(slda_msgpack_type(mp)));
        slda_msgpack_str(mp, "token", &s, &len);
        room += len + 1;
    }
    slda_record_room(rec, room);
    rec->has_tokens = 1;
    mp->p = first;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s;
        size_t len;
        slda_msgpack_str(mp, "token", &s, &len);
        slda_record_add_token(rec, slda_record_copy(rec, (const char *)s, len), len);
    }
    return SLDA_OK;
}

/* The map, once check() passed: a value's every read below succeeds. */
/* The authors' field (input.author.field, model.kind=atm): a string or an array of strings,
 * joined by newlines as the JSON reader joins them (io/record.h); nil: absent. */
static slda_err_t read_authors(slda_record_t *rec, slda_msgpack_t *mp, const unsigned char *at,
                               const char *name, char *errstr, size_t errstr_size)
{
    const unsigned char *s;
    size_t len;
    uint32_t n = 1;
    mp->p = at;
    int array = slda_msgpack_type(mp) == SLDA_MSGPACK_ARRAY;
    if (slda_msgpack_type(mp) == SLDA_MSGPACK_NIL)
        return SLDA_OK;
    if (array)
        slda_msgpack_array(mp, name, &n);
    size_t start = rec->blen, total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (slda_msgpack_type(mp) != SLDA_MSGPACK_STR)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"%s\": must be a string or an array of strings, found "
                                "%s", name, type_name(slda_msgpack_type(mp)));
        slda_msgpack_str(mp, name, &s, &len);
        char *buf = slda_record_room(rec, len + 2);
        if (i)
            *buf++ = '\n', total++;
        memcpy(buf, s, len);
        total += len;
        rec->blen = start + total;
    }
    *slda_record_room(rec, 1) = '\0';
    rec->blen = start + total + 1;
    rec->field[SLDA_FIELD_AUTHOR] = (slda_field_t){rec->buf + start, total};
    return SLDA_OK;
}

static slda_err_t read_map(slda_record_t *rec, const unsigned char *val, size_t len,
                           char *errstr, size_t errstr_size)
{
    slda_msgpack_t mp;
    slda_msgpack_init(&mp, val, 0, len, NULL, NULL, 0);
    mp.max_depth = MAX_DEPTH;
    uint32_t n;
    if (slda_msgpack_type(&mp) != SLDA_MSGPACK_MAP)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: expected a map, found %s",
                            type_name(slda_msgpack_type(&mp)));
    slda_msgpack_map(&mp, "message", &n);
    const unsigned char *id = NULL, *text = NULL, *tokens = NULL, *lang = NULL, *author = NULL,
                        *group = NULL;
    const char *aname = slda_record_name(rec, SLDA_FIELD_AUTHOR); /* the first of each */
    const char *gname = slda_record_name(rec, SLDA_FIELD_GROUP);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s = NULL;
        size_t klen = 0;
        if (slda_msgpack_type(&mp) == SLDA_MSGPACK_STR)
            slda_msgpack_str(&mp, "key", &s, &klen);
        else
            slda_msgpack_skip(&mp, "key");
        const unsigned char **slot = !s                                     ? NULL
                                     : slda_msgpack_eq(s, klen, "id")     ? &id
                                     : slda_msgpack_eq(s, klen, "text")   ? &text
                                     : slda_msgpack_eq(s, klen, "tokens") ? &tokens
                                     : slda_msgpack_eq(s, klen, "lang")   ? &lang
                                     : slda_msgpack_eq(s, klen, "language") ? &lang
                                     : aname && slda_msgpack_eq(s, klen, aname) ? &author
                                     : gname && slda_msgpack_eq(s, klen, gname) ? &group
                                                                          : NULL;
        if (slot && !*slot)
            *slot = mp.p;
        slda_msgpack_skip(&mp, "value");
    }
    if (!text && !tokens)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "MessagePack: map has no \"text\" or \"tokens\" field");
    if (text) {
        mp.p = text;
        if (slda_msgpack_type(&mp) != SLDA_MSGPACK_STR)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"text\": must be a string, found %s",
                                type_name(slda_msgpack_type(&mp)));
    }
    slda_err_t err;
    if (id) {
        mp.p = id;
        if ((err = read_id(rec, &mp, errstr, errstr_size)) != SLDA_OK)
            return err;
    }
    if (lang) { /* a string of at most SLDA_LANG_FIELD_MAX bytes; anything else is ignored */
        const unsigned char *ls;
        size_t llen;
        mp.p = lang;
        if (slda_msgpack_type(&mp) == SLDA_MSGPACK_STR &&
            slda_msgpack_str(&mp, "lang", &ls, &llen) == 0 && llen <= SLDA_LANG_FIELD_MAX)
            rec->field[SLDA_FIELD_LANG] =
                (slda_field_t){slda_record_copy(rec, (const char *)ls, llen), llen};
    }
    if (group) { /* input.group.field: a string */
        const unsigned char *gs;
        size_t glen;
        mp.p = group;
        if (slda_msgpack_type(&mp) != SLDA_MSGPACK_STR)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                                "field \"%s\": must be a string, found %s", gname,
                                type_name(slda_msgpack_type(&mp)));
        if (slda_msgpack_str(&mp, "group", &gs, &glen) == 0)
            rec->field[SLDA_FIELD_GROUP] =
                (slda_field_t){slda_record_copy(rec, (const char *)gs, glen), glen};
    }
    if (author && (err = read_authors(rec, &mp, author, aname, errstr, errstr_size)) != SLDA_OK)
        return err;
    if (!text) {
        mp.p = tokens;
        return read_tokens(rec, &mp, errstr, errstr_size);
    }
    const unsigned char *s;
    size_t tlen;
    mp.p = text;
    slda_msgpack_str(&mp, "text", &s, &tlen);
    rec->field[SLDA_FIELD_TEXT] =
        (slda_field_t){slda_record_copy(rec, (const char *)s, tlen), tlen};
    return SLDA_OK;
}

static slda_err_t msgpack_decode(slda_record_t *rec, const char *val, size_t len,
                                 char *errstr, size_t errstr_size)
{
    slda_err_t err = check((const unsigned char *)val, len, errstr, errstr_size);
    return err ? err : read_map(rec, (const unsigned char *)val, len, errstr, errstr_size);
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
    return check((const unsigned char *)val, len, NULL, 0) == SLDA_OK ||
           !slda_utf8_valid(val, len, NULL, NULL);
}

/* MessagePack's row of format.c's table (a message format only). */
const slda_format_row_t slda_format_msgpack = {
    .name = "msgpack", .title = "MessagePack", .file = -1, .sniff = msgpack_sniff,
    .decode = msgpack_decode};
