/* docmsg.h - one Kafka message value -> document (docmsg.c). */
#ifndef SLDA_DOCMSG_H
#define SLDA_DOCMSG_H

#include "core/config.h"

/* Decode val (text, JSON {"id","text"|"tokens"} or MessagePack map with the
 * same fields; SLDA_INFMT_AUTO sniffs) and tokenise it through model. The id
 * comes from the "id" field, else from key (may be NULL), else stays NULL.
 * Errors: SLDA_ERR_PARSE (undecodable), SLDA_ERR_UTF8, SLDA_ERR_EMPTY,
 * SLDA_ERR_TOO_LARGE (len > max_bytes, when max_bytes > 0). */
slda_err_t slda_doc_from_message(slda_model_t *model, slda_infmt_t fmt, const void *val,
                                 size_t len, const void *key, size_t keylen,
                                 uint32_t max_bytes, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size);

#endif /* SLDA_DOCMSG_H */
