/* docmsg.c - one message value -> a record (input.format, the key as id).
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
 * Each format's decoder is in its own file (MessagePack: reader_msgpack.c,
 * on the core MessagePack reader).
 */
#include "io/docmsg.h"

#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

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
