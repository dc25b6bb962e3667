/* unit_format.c - the input-format table (names, input.format, detection) and the record path. */
#include "io/docmsg.h"
#include "io/format.h"
#include "core/slda_int.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "text/bag.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

static slda_model_t *make_model(int fixed)
{
    slda_model_t *m = calloc(1, sizeof *m);
    char err[256] = "";
    m->p.stopwords = "snowball";
    m->p.min_length = 2;
    m->p.max_doc_bytes = 64;
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

/* Every row is reachable by its name: a file format through slda_format_parse
 * and slda_format_file, a message format through input.format. */
static void test_table(void)
{
    size_t n;
    const slda_format_row_t *const *rows = slda_format_rows(&n);
    size_t files = 0, messages = 0;
    slda_conf_t *conf = slda_conf_new();
    char err[256], name[64];
    CHECK_EQ(n, 7);
    for (size_t i = 0; i < n; i++) {
        const slda_format_row_t *r = rows[i];
        if (r->next) {
            files++;
            CHECK_INT(slda_format_parse(r->name), r->file);
            if (r->alias)
                CHECK_INT(slda_format_parse(r->alias), r->file);
            CHECK_TRUE(slda_format_file((slda_format_t)r->file) == r, "row %s", r->name);
        } else {
            CHECK_INT(slda_format_parse(r->name), (slda_format_t)-1); /* not a file format */
        }
        if (r->decode) {
            messages++;
            CHECK_INT(slda_conf_set(conf, "input.format", r->name, err, sizeof err), SLDA_OK);
            CHECK_TRUE(slda_format_message(conf->input_format) == r, "row %s", r->name);
        }
        CHECK_TRUE(r->title && r->name, "row %zu", i);
    }
    CHECK_EQ(files, 6);
    CHECK_EQ(messages, 3);
    /* input.format's values are the message rows, auto first; each value has its row */
    for (int f = 0; f < SLDA_INFMT__COUNT; f++) {
        const slda_format_row_t *r = slda_format_message((slda_infmt_t)f);
        conf->input_format = (slda_infmt_t)f;
        CHECK_INT(slda_conf_get(conf, "input.format", name, sizeof name), SLDA_OK);
        CHECK_STR(name, f == SLDA_INFMT_AUTO ? "auto" : r ? r->name : "(no row)");
        CHECK_TRUE(f == SLDA_INFMT_AUTO ? !r : r && r->decode, "input.format %s", name);
    }
    slda_conf_destroy(conf);
    /* the public values keep theirs */
    CHECK_STR(slda_format_file(SLDA_FORMAT_UCI)->name, "uci");
    CHECK_STR(slda_format_file(SLDA_FORMAT_LDAC)->name, "ldac");
    CHECK_STR(slda_format_file(SLDA_FORMAT_TEXT)->name, "text");
    CHECK_STR(slda_format_file(SLDA_FORMAT_JSONL)->name, "json");
    CHECK_STR(slda_format_file(SLDA_FORMAT_CSV)->name, "csv");
    CHECK_STR(slda_format_file(SLDA_FORMAT_TSV)->name, "tsv");
    CHECK_TRUE(!slda_format_file(SLDA_FORMAT_AUTO) && !slda_format_file((slda_format_t)7),
               "no rows for auto and 7");
    CHECK_INT(slda_format_parse("msgpack"), (slda_format_t)-1);
    CHECK_INT(slda_format_parse("JSONL"), SLDA_FORMAT_JSONL);
}

static void test_detection(void)
{
    CHECK_INT(slda_format_by_name("data/docword.kos.txt", 0), SLDA_FORMAT_UCI);
    CHECK_INT(slda_format_by_name("a/b.jsonl", 0), SLDA_FORMAT_JSONL);
    CHECK_INT(slda_format_by_name("b.json", 1), SLDA_FORMAT_JSONL);
    CHECK_INT(slda_format_by_name("/nonexistent/ap.dat", 1), SLDA_FORMAT_LDAC);
    CHECK_INT(slda_format_by_name("/nonexistent/ap.dat", 0), SLDA_FORMAT_AUTO); /* no vocab */
    CHECK_INT(slda_format_by_name("notes.txt", 1), SLDA_FORMAT_AUTO);
    CHECK_INT(slda_format_by_name("-", 1), SLDA_FORMAT_AUTO);
#define LINE(s, fixed) slda_format_by_line(s, strlen(s), fixed)
    CHECK_INT(LINE("  {\"text\": \"x\"}", 0), SLDA_FORMAT_JSONL);
    CHECK_INT(LINE("3430", 1), SLDA_FORMAT_UCI);
    CHECK_INT(LINE("3430", 0), SLDA_FORMAT_TEXT);
    CHECK_INT(LINE("0", 1), SLDA_FORMAT_UCI); /* a count first: UCI before lda-c */
    CHECK_INT(LINE("0", 0), SLDA_FORMAT_LDAC);
    CHECK_INT(LINE("2 0:1 5:3", 0), SLDA_FORMAT_LDAC);
    CHECK_INT(LINE("the stock market", 1), SLDA_FORMAT_TEXT);
#undef LINE
}

/* A record's strings stay right while its buffer grows under them. */
static void test_record(void)
{
    slda_record_t rec;
    char err[256] = "", json[8192];
    size_t len = (size_t)snprintf(json, sizeof json, "{\"id\": \"r\\u00e9c\", \"tokens\": [");
    for (int i = 0; i < 400; i++)
        len += (size_t)snprintf(json + len, sizeof json - len, "%s\"w%d\"", i ? "," : "", i);
    len += (size_t)snprintf(json + len, sizeof json - len, "]}");
    slda_record_init(&rec);
    CHECK_INT(slda_format_decode(NULL, &rec, json, len, err, sizeof err), SLDA_OK);
    CHECK_INT(rec.ntokens, 400);
    CHECK_TRUE(rec.has_tokens && !rec.field[SLDA_FIELD_TEXT].s, "tokens, no text");
    char *id = slda_record_id(&rec);
    CHECK_STR(id, "r\xc3\xa9"
                  "c");
    free(id);
    int good = 1;
    for (uint32_t i = 0; i < rec.ntokens; i++) {
        char want[16];
        snprintf(want, sizeof want, "w%u", i);
        good &= rec.token_len[i] == strlen(want) && !memcmp(rec.tokens[i], want, strlen(want));
    }
    CHECK_TRUE(good, "the 400 tokens as written");
    /* the same record reused: a text message, borrowed from the value */
    const char *text = "plain words";
    CHECK_INT(slda_format_decode(slda_format_file(SLDA_FORMAT_TEXT), &rec, text, strlen(text),
                                 err, sizeof err),
              SLDA_OK);
    CHECK_TRUE(rec.field[SLDA_FIELD_TEXT].s == text && !rec.has_tokens && !rec.field[0].s,
               "text borrowed, no tokens, no id");
    /* a message: the key is the id when there is none, the timestamp the time */
    slda_message_t msg = {.value = "{\"text\": \"x\"}", .len = 13, .key = "k-1", .keylen = 3,
                          .timestamp_ms = 42};
    CHECK_INT(slda_docmsg_decode(SLDA_INFMT_AUTO, &msg, 0, &rec, err, sizeof err), SLDA_OK);
    id = slda_record_id(&rec);
    CHECK_STR(id, "k-1");
    free(id);
    CHECK_EQ(rec.time_ms, 42);
    CHECK_INT(slda_docmsg_decode(SLDA_INFMT_AUTO, &msg, 12, &rec, err, sizeof err),
              SLDA_ERR_TOO_LARGE);
    slda_record_clear(&rec);
    slda_record_clear(NULL);
}

/* "id=<id> words" or "<ERR>: <errstr>". */
static void show(char *out, size_t size, const slda_model_t *m, slda_err_t e, const char *err,
                 const slda_doc_t *doc)
{
    if (e != SLDA_OK) {
        snprintf(out, size, "%s: %s", slda_err_name(e), err);
        return;
    }
    size_t n = (size_t)snprintf(out, size, "id=%s", doc->id ? doc->id : "(null)");
    for (uint32_t i = 0; i < doc->npairs && n < size - 64; i++)
        n += (size_t)snprintf(out + n, size - n, " %s:%u", slda_vocab_word(m->vocab, doc->word[i]),
                              doc->count[i]);
}

/* The service's steps (decode on a worker, tokenise, hint; look up in
 * message order) make what slda_doc_from_message makes, errors included. */
static void test_steps(int fixed)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "id", 2);
    msgpack_pack_int(&pk, -3);
    msgpack_pack_str(&pk, 6);
    msgpack_pack_str_body(&pk, "tokens", 6);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str(&pk, 5);
    msgpack_pack_str_body(&pk, "Apple", 5);
    msgpack_pack_str(&pk, 4);
    msgpack_pack_str_body(&pk, "pear", 4);
    msgpack_pack_str(&pk, 3);
    msgpack_pack_str_body(&pk, "the", 3);
    static const struct {
        slda_infmt_t fmt;
        const char *val, *key;
    } cases[] = {
        {SLDA_INFMT_TEXT, "The apple and the PEAR apple", "k1"},
        {SLDA_INFMT_AUTO, "{\"id\": 7, \"text\": \"pear kiwi pear\"}", NULL},
        {SLDA_INFMT_JSON, "{\"tokens\": [\"Pear\", \"the\", \"mango\"]}", "k2"},
        {SLDA_INFMT_JSON, "{\"id\": true, \"text\": 3}", NULL},
        {SLDA_INFMT_JSON, "{\"tokens\": [\"ok\", \"\\udc00\"]}", NULL},
        {SLDA_INFMT_AUTO, "{not json apple", "k3"},
        {SLDA_INFMT_TEXT, "ok \xC3", NULL},
        {SLDA_INFMT_TEXT, "the a !!", NULL},
        {SLDA_INFMT_TEXT, "apple pear apple pear apple pear apple pear apple pear apple pear "
                          "apple pear", NULL},
        {SLDA_INFMT_MSGPACK, NULL, "mk"},
        {SLDA_INFMT_AUTO, NULL, NULL},
    };
    slda_model_t *a = make_model(fixed), *b = make_model(fixed);
    slda_bag_t *bags[16];
    slda_doc_t docs[16];
    slda_err_t codes[16];
    char errs[16][512];
    slda_record_t rec;
    size_t n = sizeof cases / sizeof cases[0];
    slda_record_init(&rec);
    /* the worker's part, every message first (nothing looks words up meanwhile) */
    for (size_t i = 0; i < n; i++) {
        const char *val = cases[i].val ? cases[i].val : sb.data;
        size_t len = cases[i].val ? strlen(val) : sb.size;
        slda_message_t msg = {val, len, cases[i].key, cases[i].key ? strlen(cases[i].key) : 0, 0};
        bags[i] = slda_bag_new();
        slda_doc_init(&docs[i]);
        errs[i][0] = '\0';
        codes[i] = slda_docmsg_decode(cases[i].fmt, &msg, 0, &rec, errs[i], sizeof errs[i]);
        if (codes[i] == SLDA_OK)
            codes[i] = slda_record_tokenize(b->tok, slda_vocab_seed(b->vocab), &rec, bags[i],
                                            errs[i], sizeof errs[i]);
        if (codes[i] == SLDA_OK) {
            docs[i].id = slda_record_id(&rec);
            slda_bag_hint(b->vocab, bags[i], &docs[i]);
        }
    }
    /* the vocabulary's thread, in message order */
    for (size_t i = 0; i < n; i++) {
        const char *val = cases[i].val ? cases[i].val : sb.data;
        size_t len = cases[i].val ? strlen(val) : sb.size;
        char want[1024], got[1024], err[512] = "";
        slda_doc_t doc;
        slda_err_t e = slda_doc_from_message(a, cases[i].fmt, val, len, cases[i].key,
                                             cases[i].key ? strlen(cases[i].key) : 0, 0, &doc,
                                             err, sizeof err);
        show(want, sizeof want, a, e, err, &doc);
        slda_doc_clear(&doc);
        if (codes[i] == SLDA_OK)
            codes[i] = slda_doc_from_bag(b->tok, b->vocab, bags[i], &docs[i], errs[i],
                                         sizeof errs[i]);
        show(got, sizeof got, b, codes[i], errs[i], &docs[i]);
        CHECK_STR(got, want);
        slda_doc_clear(&docs[i]);
        slda_bag_free(bags[i]);
    }
    CHECK_EQ(slda_vocab_size(b->vocab), slda_vocab_size(a->vocab));
    slda_record_clear(&rec);
    msgpack_sbuffer_destroy(&sb);
    free_model(a);
    free_model(b);
}

int main(void)
{
    test_table();
    test_detection();
    test_record();
    test_steps(0);
    test_steps(1);
    return slda_test_done("unit_format");
}
