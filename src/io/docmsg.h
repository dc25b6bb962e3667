/* docmsg.h - one message value -> a record, and -> a document (docmsg.c). */
#ifndef SLDA_DOCMSG_H
#define SLDA_DOCMSG_H

#include "core/config.h"
#include "io/format.h"

/* A message as the decoders see it (a Kafka message's parts, borrowed). */
typedef struct slda_message_s {
    const void *value; /* may be NULL: an empty value */
    size_t len;
    const void *key;   /* may be NULL */
    size_t keylen;
    int64_t timestamp_ms; /* the record's time_ms */
} slda_message_t;

/* Decode msg's value (text, JSON {"id","text"|"tokens"} or a MessagePack map
 * with the same fields; SLDA_INFMT_AUTO detects which) into rec, any thread.
 * The id comes from the "id" field, else from the key when it is valid UTF-8
 * without NUL, else is absent. Errors: SLDA_ERR_TOO_LARGE (len > max_bytes,
 * when max_bytes > 0), SLDA_ERR_PARSE (undecodable). Tokenising the record
 * (slda_record_tokenize) and looking its words up come next. */
slda_err_t slda_docmsg_decode(slda_infmt_t fmt, const slda_message_t *msg, uint32_t max_bytes,
                              slda_record_t *rec, char *errstr, size_t errstr_size);

/* The three steps at once on the vocabulary's thread: decode val (key may be
 * NULL), tokenise it through model and look its words up (slda_record_doc).
 * Errors: those of slda_docmsg_decode, SLDA_ERR_UTF8, SLDA_ERR_EMPTY. */
slda_err_t slda_doc_from_message(slda_model_t *model, slda_infmt_t fmt, const void *val,
                                 size_t len, const void *key, size_t keylen,
                                 uint32_t max_bytes, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size);

#endif /* SLDA_DOCMSG_H */
