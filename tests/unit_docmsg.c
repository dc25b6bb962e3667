/* unit_docmsg.c - message values -> documents: text, JSON, MessagePack, auto, every error. */
#include "io/reader.h"
#include "core/slda_int.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

static slda_model_t *model;

static slda_model_t *make_model(uint32_t max_bytes, int fixed)
{
    slda_model_t *m = calloc(1, sizeof *m);
    char err[256] = "";
    m->p.stopwords = "snowball";
    m->p.min_length = 2;
    m->p.max_doc_bytes = max_bytes;
    m->vocab = slda_vocab_new(fixed ? 2 : 1000, 5, fixed);
    if (fixed) {
        slda_vocab_put(m->vocab, 0, "apple", 5, 0, err, sizeof err);
        slda_vocab_put(m->vocab, 1, "pear", 4, 0, err, sizeof err);
    }
    m->tok = slda_tokenizer_new(&m->p, err, sizeof err);
    return m;
}

static void free_model(slda_model_t *m)
{
    slda_tokenizer_destroy(m->tok);
    slda_vocab_destroy(m->vocab);
    slda_bag_free(m->bag);
    free(m);
}

/* Result of decoding: "id=<id> words" or "<ERR name>: <errstr>" (static buffer). */
static const char *decode(slda_infmt_t fmt, const void *val, size_t len, const char *key,
                          uint32_t max_bytes)
{
    static char out[1024];
    char err[512] = "";
    slda_doc_t doc;
    slda_err_t e = slda_doc_from_message(model, fmt, val, len, key, key ? strlen(key) : 0,
                                         max_bytes, &doc, err, sizeof err);
    if (e != SLDA_OK) {
        if (doc.npairs != 0 || doc.id != NULL)
            snprintf(out, sizeof out, "error left a non-empty doc");
        else
            snprintf(out, sizeof out, "%s: %s", slda_err_name(e), err);
        slda_doc_clear(&doc);
        return out;
    }
    size_t n = (size_t)snprintf(out, sizeof out, "id=%s", doc.id ? doc.id : "(null)");
    for (uint32_t i = 0; i < doc.npairs && n < sizeof out - 64; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, " %s:%u",
                              slda_vocab_word(model->vocab, doc.word[i]), doc.count[i]);
    slda_doc_clear(&doc);
    return out;
}
#define DECODE(fmt, s, key) decode(fmt, s, strlen(s), key, 0)

/* A MessagePack buffer built with msgpack-c's packer. */
typedef struct mp_s {
    msgpack_sbuffer sb;
    msgpack_packer pk;
} mp_t;

static void mp_begin(mp_t *m)
{
    msgpack_sbuffer_init(&m->sb);
    msgpack_packer_init(&m->pk, &m->sb, msgpack_sbuffer_write);
}

static void mp_str(mp_t *m, const char *s)
{
    msgpack_pack_str(&m->pk, strlen(s));
    msgpack_pack_str_body(&m->pk, s, strlen(s));
}

static const char *mp_decode(mp_t *m, slda_infmt_t fmt, const char *key)
{
    const char *r = decode(fmt, m->sb.data, m->sb.size, key, 0);
    msgpack_sbuffer_destroy(&m->sb);
    return r;
}

static void test_text(void)
{
    CHECK_STR(DECODE(SLDA_INFMT_TEXT, "The Apple and the PEAR apple", "k1"),
              "id=k1 apple:2 pear:1");
    CHECK_STR(DECODE(SLDA_INFMT_TEXT, "{\"text\": \"json as text\"}", NULL),
              "id=(null) text:2 json:1");
    /* Key that is not UTF-8, or contains NUL, gives no id. */
    CHECK_STR(DECODE(SLDA_INFMT_TEXT, "apple", "bad\xff"), "id=(null) apple:1");
    CHECK_STR(decode(SLDA_INFMT_TEXT, "apple", 5, "", 0), "id=(null) apple:1");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_TEXT, "ok \xC3", NULL),
                   "SLDA_ERR_UTF8: text: invalid UTF-8 at byte 3 (truncated sequence)");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_TEXT, "the a 42 !!", NULL),
                   "SLDA_ERR_EMPTY: document: no tokens");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_TEXT, "", NULL), "SLDA_ERR_EMPTY");
    CHECK_CONTAINS(decode(SLDA_INFMT_TEXT, NULL, 0, NULL, 0), "SLDA_ERR_EMPTY");
    CHECK_CONTAINS(decode(SLDA_INFMT_TEXT, "apple pear", 10, NULL, 9),
                   "SLDA_ERR_TOO_LARGE: message: 10 bytes is over input.max.bytes=9");
}

static void test_json(void)
{
    CHECK_STR(DECODE(SLDA_INFMT_JSON, "{\"id\": \"j1\", \"text\": \"Apple pie\"}", "key"),
              "id=j1 apple:1 pie:1");
    CHECK_STR(DECODE(SLDA_INFMT_JSON, "{\"text\": \"apple\"}", "key"), "id=key apple:1");
    CHECK_STR(DECODE(SLDA_INFMT_JSON, "{\"id\": -7.5, \"tokens\": [\"Pear\", \"the\", \"pear\"]}",
                     NULL),
              "id=-7.5 pear:2");
    CHECK_STR(DECODE(SLDA_INFMT_JSON, "{\"id\": null, \"text\": \"apple\"}", "k"), "id=k apple:1");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"text\": \"apple\"", NULL),
                   "SLDA_ERR_PARSE: JSON: expected ',' or '}' in object at byte 16");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "apple", NULL), "SLDA_ERR_PARSE: JSON:");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"id\": true, \"text\": \"x\"}", NULL),
                   "field \"id\": must be a string or a number, found true");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"id\": \"a\\u0000b\", \"text\": \"apple\"}", NULL),
                   "field \"id\": empty or contains a NUL character");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"tokens\": \"apple\"}", NULL),
                   "field \"tokens\": must be an array of strings, found string");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"tokens\": [\"the\"]}", NULL), "SLDA_ERR_EMPTY");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"tokens\": []}", NULL), "SLDA_ERR_EMPTY");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"x\": 1}", NULL),
                   "object has no \"text\" or \"tokens\" field");
}

static void test_msgpack(void)
{
    mp_t m;
    /* {"id": "m1", "text": "..."} */
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 3);
    mp_str(&m, "id");
    mp_str(&m, "m1");
    mp_str(&m, "extra");
    msgpack_pack_array(&m.pk, 2);
    msgpack_pack_nil(&m.pk);
    msgpack_pack_double(&m.pk, 1.5);
    mp_str(&m, "text");
    mp_str(&m, "Pear and apple, pear");
    CHECK_STR(mp_decode(&m, SLDA_INFMT_MSGPACK, "key"), "id=m1 apple:1 pear:2");

    /* integer ids and tokens */
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "tokens");
    msgpack_pack_array(&m.pk, 3);
    mp_str(&m, "Cherry");
    mp_str(&m, "it");
    mp_str(&m, "CHERRY");
    mp_str(&m, "id");
    msgpack_pack_uint64(&m.pk, 18446744073709551615ull);
    CHECK_STR(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL), "id=18446744073709551615 cherry:2");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "id");
    msgpack_pack_int64(&m.pk, -12);
    mp_str(&m, "text");
    mp_str(&m, "apple");
    CHECK_STR(mp_decode(&m, SLDA_INFMT_AUTO, NULL), "id=-12 apple:1");

    /* no id: the key */
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "text");
    mp_str(&m, "apple");
    CHECK_STR(mp_decode(&m, SLDA_INFMT_MSGPACK, "the-key"), "id=the-key apple:1");

    /* wrong types */
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "text");
    msgpack_pack_int(&m.pk, 3);
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "SLDA_ERR_PARSE: field \"text\": must be a string, found an integer");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "id");
    msgpack_pack_array(&m.pk, 0);
    mp_str(&m, "text");
    mp_str(&m, "apple");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "field \"id\": must be a string or an integer, found an array");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "tokens");
    msgpack_pack_array(&m.pk, 2);
    mp_str(&m, "apple");
    msgpack_pack_true(&m.pk);
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "field \"tokens\": element 1 is a boolean, not a string");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "tokens");
    mp_str(&m, "apple");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "field \"tokens\": must be an array of strings, found a string");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "title");
    mp_str(&m, "apple");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "MessagePack: map has no \"text\" or \"tokens\" field");
    mp_begin(&m);
    msgpack_pack_array(&m.pk, 1);
    mp_str(&m, "apple");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "MessagePack: expected a map, found an array");
    /* text that is not UTF-8 / id that is not UTF-8 */
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "text");
    mp_str(&m, "apple \xed\xa0\x80");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "SLDA_ERR_UTF8: text: invalid UTF-8 at byte 6 (surrogate code point)");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "id");
    mp_str(&m, "\xff");
    mp_str(&m, "text");
    mp_str(&m, "apple");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "field \"id\": empty, not UTF-8 or contains a NUL character");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "tokens");
    msgpack_pack_array(&m.pk, 2);
    mp_str(&m, "apple");
    mp_str(&m, "p\xc3");
    CHECK_CONTAINS(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL),
                   "SLDA_ERR_UTF8: tokens[1]: invalid UTF-8 at byte 1 (truncated sequence)");
}

/* Hand-made hostile MessagePack: truncated, oversized counts, trailing bytes, depth. */
static void test_msgpack_bad(void)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *problem;
    } bad[] = {
        {"", 0, "MessagePack: truncated at byte 0"},
        {"\x81\xa4text", 6, "truncated at byte 6"},              /* value missing */
        {"\x81\xa4tex", 5, "truncated at byte 1"},               /* key cut */
        {"\xdf\xff\xff\xff\xff", 5, "container larger than the message at byte 0"},
        {"\xdd\xff\xff\xff\xff\x00", 6, "container larger than the message"},
        {"\x81\xa4text\xdb\xff\xff\xff\xf0" "abc", 12, "truncated at byte 6"}, /* str32 */
        {"\x81\xa4text\xa1x\x00", 9, "1 bytes after the object"},
        {"\x81\xa4text\xc1", 7, "invalid type byte at byte 6"},
        {"\xde\x00", 2, "truncated at byte 0"},
        {"\x81\xa4text\xc7\x05\x01" "ab", 10, "truncated at byte 6"}, /* ext8 cut */
        {"\x81\xa4text\xcb\x00\x00", 9, "truncated at byte 6"},  /* float64 cut */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *r = decode(SLDA_INFMT_MSGPACK, bad[i].bytes, bad[i].len, NULL, 0);
        CHECK_CONTAINS(r, "SLDA_ERR_PARSE: MessagePack: ");
        CHECK_CONTAINS(r, bad[i].problem);
    }
    /* 17 nested maps: refused for depth before msgpack-c sees it. */
    char deep[64];
    size_t n = 0;
    for (int i = 0; i < 17; i++) {
        deep[n++] = '\x81';
        deep[n++] = '\xa1';
        deep[n++] = 'k';
    }
    deep[n++] = '\xc0';
    CHECK_CONTAINS(decode(SLDA_INFMT_MSGPACK, deep, n, NULL, 0), "nesting too deep at byte 48");
    /* Every prefix of a valid message is rejected cleanly. */
    mp_t m;
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "id");
    msgpack_pack_uint32(&m.pk, 70000);
    mp_str(&m, "tokens");
    msgpack_pack_array(&m.pk, 2);
    mp_str(&m, "apple");
    mp_str(&m, "pear");
    int accepted = 0;
    for (size_t cut = 0; cut < m.sb.size; cut++) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, m.sb.data, cut);
        if (strncmp(decode(SLDA_INFMT_MSGPACK, copy, cut, NULL, 0), "id=", 3) == 0)
            accepted++;
        free(copy);
    }
    CHECK_INT(accepted, 0);
    CHECK_STR(mp_decode(&m, SLDA_INFMT_MSGPACK, NULL), "id=70000 apple:1 pear:1");
}

static void test_auto(void)
{
    mp_t m;
    CHECK_STR(DECODE(SLDA_INFMT_AUTO, "  {\"id\": 3, \"text\": \"apple\"}", NULL), "id=3 apple:1");
    /* Starts with '{' but is not JSON: plain text. */
    CHECK_STR(DECODE(SLDA_INFMT_AUTO, "{apple pear", "k"), "id=k apple:1 pear:1");
    /* JSON that parses but lacks fields is a JSON error, not text. */
    CHECK_CONTAINS(DECODE(SLDA_INFMT_AUTO, "{\"title\": \"apple\"}", NULL),
                   "SLDA_ERR_PARSE: JSON: object has no \"text\"");
    CHECK_STR(DECODE(SLDA_INFMT_AUTO, "plain apple", NULL), "id=(null) apple:1 plain:1");
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 1);
    mp_str(&m, "text");
    mp_str(&m, "apple");
    CHECK_STR(mp_decode(&m, SLDA_INFMT_AUTO, NULL), "id=(null) apple:1");
    /* U+07C0.. (NKo, lead byte 0xDF) looks like map32 but is UTF-8 text. */
    CHECK_STR(DECODE(SLDA_INFMT_AUTO, "\xdf\x8a\xdf\x8b apple", NULL),
              "id=(null) apple:1 \xdf\x8a\xdf\x8b:1");
    /* A map byte that is neither MessagePack nor UTF-8. */
    CHECK_CONTAINS(decode(SLDA_INFMT_AUTO, "\x82\xa1x", 3, NULL, 0),
                   "SLDA_ERR_PARSE: MessagePack: container larger than the message");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_AUTO, "bad \xff", NULL), "SLDA_ERR_UTF8");
}

static void test_fixed_vocab(void)
{
    slda_model_t *saved = model;
    model = make_model(0, 1);
    CHECK_STR(DECODE(SLDA_INFMT_TEXT, "apple kiwi pear mango", NULL), "id=(null) apple:1 pear:1");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_TEXT, "kiwi mango", NULL),
                   "SLDA_ERR_EMPTY: document: none of its 2 tokens is in the vocabulary");
    CHECK_INT(slda_vocab_size(model->vocab), 2);
    free_model(model);
    /* text.max.bytes applies to the decoded text. */
    model = make_model(8, 0);
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"text\": \"apple pear\"}", NULL),
                   "SLDA_ERR_TOO_LARGE: document: 10 bytes is over text.max.bytes=8");
    CHECK_CONTAINS(DECODE(SLDA_INFMT_JSON, "{\"tokens\": [\"apple\", \"pear\"]}", NULL),
                   "SLDA_ERR_TOO_LARGE");
    CHECK_INT(slda_vocab_size(model->vocab), 0); /* rejected documents add no words */
    free_model(model);
    model = saved;
}

/* The language of the document a message makes (static buffer), or the error's name. */
static const char *lang_of(slda_infmt_t fmt, const void *val, size_t len)
{
    static char out[64];
    char err[512] = "";
    slda_doc_t doc;
    slda_err_t e = slda_doc_from_message(model, fmt, val, len, NULL, 0, 0, &doc, err, sizeof err);
    snprintf(out, sizeof out, "%s", e == SLDA_OK ? doc.lang : slda_err_name(e));
    slda_doc_clear(&doc);
    return out;
}
#define LANG_OF(fmt, s) lang_of(fmt, s, strlen(s))

/* A language in the record ("lang" or "language") overrides identification; one that is not
 * a tag, or not a string, is ignored. */
static void test_lang(void)
{
    static const char german[] = "Die Katze sitzt auf der Matte und schläft";
    char buf[256];
    CHECK_STR(LANG_OF(SLDA_INFMT_TEXT, german), "de");
    snprintf(buf, sizeof buf, "{\"text\": \"%s\"}", german);
    CHECK_STR(LANG_OF(SLDA_INFMT_JSON, buf), "de");
    snprintf(buf, sizeof buf, "{\"lang\": \"pt-BR\", \"text\": \"%s\"}", german);
    CHECK_STR(LANG_OF(SLDA_INFMT_JSON, buf), "pt");
    snprintf(buf, sizeof buf, "{\"language\": \"EN\", \"tokens\": [\"Katze\", \"Matte\"]}");
    CHECK_STR(LANG_OF(SLDA_INFMT_JSON, buf), "en");
    snprintf(buf, sizeof buf, "{\"lang\": 7, \"text\": \"%s\"}", german);
    CHECK_STR(LANG_OF(SLDA_INFMT_JSON, buf), "de");
    snprintf(buf, sizeof buf, "{\"lang\": \"German!\", \"text\": \"%s\"}", german);
    CHECK_STR(LANG_OF(SLDA_INFMT_JSON, buf), "de");
    mp_t m;
    mp_begin(&m);
    msgpack_pack_map(&m.pk, 2);
    mp_str(&m, "text");
    mp_str(&m, german);
    mp_str(&m, "lang");
    mp_str(&m, "fr");
    CHECK_STR(lang_of(SLDA_INFMT_MSGPACK, m.sb.data, m.sb.size), "fr");
    msgpack_sbuffer_destroy(&m.sb);
}

int main(void)
{
    model = make_model(0, 0);
    test_text();
    test_json();
    test_msgpack();
    test_msgpack_bad();
    test_auto();
    test_fixed_vocab();
    test_lang();
    free_model(model);
    return slda_test_done("unit_docmsg");
}
