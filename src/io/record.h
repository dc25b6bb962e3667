/* record.h - a decoded record: what a message value or a line holds before tokenising. */
#ifndef SLDA_RECORD_H
#define SLDA_RECORD_H

#include "core/config.h"
#include "core/json.h"
#include "engine/model.h"
#include "text/bag.h"

/* len bytes at s, not NUL-terminated; s NULL: the field is absent. */
typedef struct slda_field_s {
    const char *s;
    size_t len;
} slda_field_t;

/* What a record's fields are for. A decoder fills each role from the field the
 * record names for it (rec->name[role], from the configuration: input.id.field,
 * input.text.field, input.time.field; slda_record_names), and the record's user
 * reads by role; nothing else in the record knows what
 * the roles mean. JSON (objects: the named keys) and CSV/TSV (the header's
 * columns) honour every name; MessagePack and raw text fill the id and the text
 * as they always did. A new role (issue 28's author, issue 30's language) is a
 * line here, its name's property, and its user: the decoders fill it as they
 * fill the time. */
typedef enum {
    SLDA_FIELD_ID = 0, /* the document's id ("id"; a message's key when there is none) */
    SLDA_FIELD_TEXT,   /* its text ("text"; absent when the words come as tokens); its name
                          may list fields ("title,body"), whose values are joined by a newline */
    SLDA_FIELD_TIME,   /* its event time as written (no name: none; parsed by slda_record_time) */
    SLDA_FIELD_LANG,   /* its language ("de", "pt-BR"; no name: "lang", else "language";
                          MessagePack always so; absent: identified from the text) */
    SLDA_FIELD_AUTHOR, /* its authors (input.author.field, "author"; read by model.kind=atm):
                          names separated by ';' or newlines (a JSON array's elements are
                          joined by newlines) */
    SLDA_FIELD_GROUP,  /* its group for tracking (input.group.field: a string or a number;
                          no name, or one starting with '@': not read from the record) */
    SLDA_FIELD__COUNT
} slda_field_role_t;

/* The longest language value kept (longer ones are ignored: the language is identified): a
 * BCP 47 tag's primary, script and region subtags. */
#define SLDA_LANG_FIELD_MAX 35

/* A decoded record. Its fields point into the value decoded (borrowed: valid
 * while the value is) or into the record's own buffer (valid until the next
 * decode into the record, or slda_record_clear); a string out of a msgpack
 * zone is copied. A record belongs to one thread at a time and is reused:
 * its buffers grow to the largest record decoded into it. */
typedef struct slda_record_s {
    slda_field_t field[SLDA_FIELD__COUNT];
    /* the field each role is read from (borrowed: the configuration's strings, or literals;
     * NULL or "": the role is not read); slda_record_init sets "id" and "text" */
    const char *name[SLDA_FIELD__COUNT];
    /* "tokens": the words split already (read only when the text is absent) */
    const char **tokens;
    size_t *token_len;
    uint32_t ntokens;
    int has_tokens;
    int group_list;  /* the group field is a JSON array: its elements joined by newlines */
    int64_t time_ms; /* the message's timestamp (the service's event time starts there), or 0 */
    int authors_optional; /* slda_record_authors: a record without authors is not an error
                             (infer: such a document is folded in with alpha alone) */
    int keep_text;   /* documents made of it keep the start of the text (slda_record_text) */
    /* the decoders' scratch */
    char *buf;
    size_t blen, bcap;
    uint32_t tcap;
    slda_json_t js;
    int js_parsed;   /* js holds the tree of the value being decoded (auto-detection parsed it) */
} slda_record_t;

void slda_record_init(slda_record_t *rec);
/* Frees the record's buffers (its names stay); accepts NULL. */
void slda_record_clear(slda_record_t *rec);
/* The roles' field names from conf (borrowed for as long as conf lives): input.id.field,
 * input.text.field, input.time.field, input.lang.field; keep_text with a time field,
 * tracking and track.examples (train's tracker; the service sets it itself). */
void slda_record_names(slda_record_t *rec, const slda_conf_t *conf);
/* The name of role's field, or NULL when the role is not read. */
const char *slda_record_name(const slda_record_t *rec, slda_field_role_t role);
/* The names of a comma list ("title,body": input.text.field), one a call: the next into name
 * (cut to size - 1), returning where the rest starts; NULL at the list's end.
 *     for (const char *p = list; (p = slda_record_list_next(p, name, sizeof name));) ... */
const char *slda_record_list_next(const char *p, char *name, size_t size);
/* The record's event time from its time field (io/evtime.h: ISO 8601, epoch, ...):
 * SLDA_ERR_PARSE "time field \"NAME\": missing" or "...: \"VALUE\" is not a time". */
slda_err_t slda_record_time(const slda_record_t *rec, int64_t *ms, char *errstr,
                            size_t errstr_size);
/* The record's authors into doc (slda_doc_add_author) when model is an author-topic model
 * (model.kind=atm; else nothing): SLDA_ERR_PARSE 'field "author": missing' when the record
 * has none (a rejected record: model.kind=atm trains only documents with authors),
 * SLDA_ERR_RANGE past SLDA_MAX_DOC_AUTHORS. */
slda_err_t slda_record_authors(const slda_record_t *rec, const slda_model_t *model,
                               slda_doc_t *doc, char *errstr, size_t errstr_size);
/* The record's words into bag, as slda_doc_from_text / slda_doc_from_tokens
 * tokenise them (slda_bag_tokenize / slda_bag_tokens, seed: the vocabulary's):
 * any thread, it only reads tok. Errors: SLDA_ERR_UTF8, SLDA_ERR_TOO_LARGE. */
slda_err_t slda_record_tokenize(const slda_tokenizer_t *tok, uint64_t seed,
                                const slda_record_t *rec, slda_bag_t *bag, char *errstr,
                                size_t errstr_size);
/* The record's language as a code (slda_lang_normalise) in out: 1, or 0 when
 * it has none or not a tag (then identification decides). */
int slda_record_lang(const slda_record_t *rec, char out[SLDA_LANG_LEN]);
/* dst becomes a copy of src's fields and tokens (in dst's own buffer; dst's
 * role names kept), for a record kept beyond src's next read. */
void slda_record_assign(slda_record_t *dst, const slda_record_t *src);
/* The start of the record's text (its tokens joined by spaces when it has none), at most
 * SLDA_DOC_SNIPPET bytes cut at a character, runs of white space as one space: malloc'ed, or
 * NULL when it has none. slda_record_doc puts it in the document when rec->keep_text is set
 * (slda_record_names sets it for the tracker's representative documents). */
char *slda_record_text(const slda_record_t *rec);
/* The record's group (input.group.field) as a malloc'ed string: trimmed, at most
 * SLDA_GROUP_MAX bytes cut at a character, control characters as spaces, bytes that are not
 * UTF-8 as '?'; NULL without one. A JSON array (tags) gives each of its non-empty elements so,
 * joined by newlines (at most SLDA_GROUPS_MAX elements: more is a rejected record). */
#define SLDA_GROUP_MAX 120
#define SLDA_GROUPS_MAX 64
char *slda_record_group(const slda_record_t *rec);
/* A malloc'ed, NUL-terminated copy of the record's id, or NULL without one. */
char *slda_record_id(const slda_record_t *rec);
/* The record as a document through model's tokenizer and vocabulary, on the
 * vocabulary's thread (slda_doc_from_text, or slda_doc_from_tokens), with
 * the record's id: the errors and the document of those functions. */
slda_err_t slda_record_doc(slda_model_t *model, const slda_record_t *rec, slda_doc_t *doc,
                           char *errstr, size_t errstr_size);

/* For decoders: empty the record for the next value (its buffers kept). */
void slda_record_reset(slda_record_t *rec);
/* For decoders: room for n bytes at the end of the record's buffer (fields
 * already set stay valid: they move with it), then slda_record_take(rec, len)
 * makes the len bytes written there the next string and returns it. */
char *slda_record_room(slda_record_t *rec, size_t n);
const char *slda_record_take(slda_record_t *rec, size_t len);
/* For decoders: a copy of s[0..len) in the record's buffer. */
const char *slda_record_copy(slda_record_t *rec, const char *s, size_t len);
/* For decoders: one more token (len bytes at s, which the record must hold
 * or outlive), and marking the record as one of tokens. */
void slda_record_add_token(slda_record_t *rec, const char *s, size_t len);

#endif /* SLDA_RECORD_H */
