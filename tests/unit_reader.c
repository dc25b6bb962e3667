/* unit_reader.c - readers: UCI, lda-c, text and JSON lines, format detection, bad records. */
#include "engine/model.h"
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;

/* A model put together by hand: only what the readers use (p, vocab, tok).
 * fixed_words non-NULL gives a fixed vocabulary with those words at ids 0... */
static slda_model_t *make_model(const char *stop, uint32_t min_length, uint32_t max_bytes,
                                const char *const *fixed_words, uint32_t nfixed)
{
    slda_model_t *model = calloc(1, sizeof *model);
    char err[256] = "";
    model->p.stopwords = (char *)stop;
    model->p.min_length = min_length;
    model->p.max_doc_bytes = max_bytes;
    model->vocab = slda_vocab_new(fixed_words ? nfixed : 1000, 99, fixed_words != NULL);
    for (uint32_t i = 0; fixed_words && i < nfixed; i++)
        slda_vocab_put(model->vocab, i, fixed_words[i], strlen(fixed_words[i]), 0, err,
                       sizeof err);
    model->tok = slda_tokenizer_new(&model->p, err, sizeof err);
    if (!model->tok)
        fprintf(stderr, "tokenizer: %s\n", err);
    return model;
}

static void free_model(slda_model_t *model)
{
    slda_tokenizer_destroy(model->tok);
    slda_vocab_destroy(model->vocab);
    slda_bag_free(model->bag);
    free(model);
}

static const char *path_of(const char *name)
{
    static char buf[8][4200];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

static const char *write_file(const char *name, const char *content)
{
    const char *p = path_of(name);
    if (slda_test_write_file(p, content) != 0)
        fprintf(stderr, "cannot write %s\n", p);
    return p;
}

/* "word:count word:count" in id order (static buffer). */
static const char *words(const slda_model_t *model, const slda_doc_t *doc)
{
    static char buf[1024];
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < doc->npairs && n < sizeof buf - 64; i++) {
        const char *w = slda_vocab_word(model->vocab, doc->word[i]);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%u", i ? " " : "",
                              w ? w : "?", doc->count[i]);
    }
    return buf;
}

typedef struct expect_s {
    slda_err_t err;
    const char *id;       /* SLDA_OK: the document id */
    const char *content;  /* SLDA_OK: words(); else a substring of errstr */
} expect_t;

/* Read rd to the end, checking each result against want[] (then EOF twice). */
static void expect_all(slda_reader_t *rd, const slda_model_t *model, const expect_t *want,
                       size_t n, const char *label)
{
    for (size_t i = 0; i <= n + 1; i++) {
        slda_doc_t doc;
        char err[512] = "";
        slda_err_t e = slda_reader_next(rd, &doc, err, sizeof err);
        slda_err_t we = i < n ? want[i].err : SLDA_ERR_EOF;
        if (e != we)
            fprintf(stderr, "%s: record %zu: got %s (%s)\n", label, i, slda_err_name(e), err);
        CHECK_INT(e, we);
        if (i < n && e == SLDA_OK) {
            CHECK_STR(doc.id, want[i].id);
            CHECK_STR(words(model, &doc), want[i].content);
        } else if (i < n && e == we) {
            CHECK_CONTAINS(err, want[i].content);
            CHECK_INT(doc.npairs, 0);
        }
        slda_doc_clear(&doc);
    }
}

static void test_text(void)
{
    slda_model_t *model = make_model("smart", 2, 40, NULL, 0);
    const char *p = write_file("docs.txt", "Brown FOX brown\n"
                                           "\n"
                                           "the and of\n"
                                           "bad \xff utf\r\n"
                                           "Cats and DOGS x\r\n"
                                           "this line is far too long for the forty byte limit\n"
                                           "final words");
    char err[512] = "";
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_TEXT, err, sizeof err);
    char loc[4300];
    CHECK_TRUE(rd != NULL, "%s", err);
    if (!rd) {
        fprintf(stderr, "open: %s\n", err);
        free_model(model);
        return;
    }
    snprintf(loc, sizeof loc, "%s:3: document: no tokens", p);
    const expect_t want[] = {
        {SLDA_OK, "1", "brown:2 fox:1"},
        /* line 2 is blank: a paragraph break, skipped without a record */
        {SLDA_ERR_EMPTY, NULL, loc},
        {SLDA_ERR_UTF8, NULL, ":4: text: invalid UTF-8 at byte 4 (byte not allowed in UTF-8)"},
        {SLDA_OK, "5", "cats:1 dogs:1"},
        {SLDA_ERR_TOO_LARGE, NULL, ":6: document: 50 bytes is over text.max.bytes=40"},
        {SLDA_OK, "7", "final:1 words:1"},
    };
    expect_all(rd, model, want, 6, "text");
    CHECK_INT(slda_reader_docs(rd), 3);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_EMPTY), 1);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_UTF8), 1);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_TOO_LARGE), 1);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_PARSE), 0);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR__COUNT), 0);
    slda_reader_close(rd);
    slda_reader_close(NULL);
    free_model(model);
}

/* A 300 kB line: getline handles any length. */
static void test_long_line(void)
{
    slda_model_t *model = make_model("none", 1, 0, NULL, 0);
    size_t n = 300000;
    char *text = malloc(n + 16);
    for (size_t i = 0; i < n; i += 6)
        memcpy(text + i, "alpha ", 6);
    memcpy(text + n, "omega\n", 7);
    const char *p = write_file("long.txt", text);
    char err[256] = "";
    slda_doc_t doc;
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    if (rd) {
        CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_OK);
        CHECK_STR(words(model, &doc), "alpha:50000 omega:1");
        CHECK_INT(doc.ntokens, 50001);
        slda_doc_clear(&doc);
    }
    slda_reader_close(rd);
    free(text);
    free_model(model);
}

static void test_jsonl(void)
{
    slda_model_t *model = make_model("smart", 1, 0, NULL, 0);
    const char *p = write_file(
        "docs.jsonl",
        "{\"id\": \"a1\", \"text\": \"Alpha beta\"}\n"
        "{\"id\": 42, \"tokens\": [\"Gamma\", \"delta\", \"the\", \"New_York\"]}\n"
        "  {\"text\": \"no id here\", \"other\": {\"x\": [1, 2, {\"y\": null}]}}  \n"
        "not json at all\n"
        "{\"id\": \"x\"}\n"
        "\n"
        "{\"id\": [1], \"text\": \"a b\"}\n"
        "{\"text\": 5}\n"
        "{\"tokens\": [\"ok\", 3]}\n"
        "{\"text\": \"\\ud800\"}\n"
        "{\"text\": \"bad \xff\"}\n"
        "{\"text\": \"the and of\"}\n"
        "[\"text\"]\n"
        "{\"id\": \"\\u00e9t\\u00e9\", \"text\": \"Sommer \\u00c9T\\u00c9\"}\n");
    char err[512] = "";
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    if (!rd) {
        free_model(model);
        return;
    }
    const expect_t want[] = {
        {SLDA_OK, "a1", "alpha:1 beta:1"},
        {SLDA_OK, "42", "gamma:1 delta:1 new_york:1"},
        {SLDA_OK, "3", "id:1"}, /* "no" and "here" are SMART stop words */
        {SLDA_ERR_PARSE, NULL, ":4: JSON: invalid literal at byte 0"},
        {SLDA_ERR_PARSE, NULL, ":5: JSON: object has no \"text\" or \"tokens\" field"},
        {SLDA_ERR_PARSE, NULL, ":7: field \"id\": must be a string or a number, found array"},
        {SLDA_ERR_PARSE, NULL, ":8: field \"text\": must be a string, found number"},
        {SLDA_ERR_PARSE, NULL, ":9: field \"tokens\": element 1 is number, not a string"},
        {SLDA_ERR_PARSE, NULL, ":10: JSON: high surrogate"},
        {SLDA_ERR_PARSE, NULL, ":11: JSON: invalid UTF-8 in string"},
        {SLDA_ERR_EMPTY, NULL, ":12: document: no tokens"},
        {SLDA_ERR_PARSE, NULL, ":13: JSON: expected an object, found array"},
        {SLDA_OK, "été", "sommer:1 été:1"},
    };
    expect_all(rd, model, want, sizeof want / sizeof want[0], "jsonl");
    CHECK_INT(slda_reader_docs(rd), 4);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_PARSE), 8);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_EMPTY), 1);
    slda_reader_close(rd);
    free_model(model);
}

static const char *const five[] = {"w0", "w1", "w2", "w3", "w4"};

static void test_uci(void)
{
    slda_model_t *model = make_model("none", 1, 0, five, 5);
    const char *p = write_file("docword.test.txt",
                               "3\n5\n14\n"      /* lines 1-3 */
                               "1 1 2\n"          /* 4 */
                               "1 3 1\n"          /* 5 */
                               "2 2 1\n"          /* 6 */
                               "2 9 1\n"          /* 7: word id out of range */
                               "2 4 3\n"          /* 8 */
                               "3 1 x\n"          /* 9: not a number */
                               "3 1 0\n"          /* 10: zero count */
                               "3 1 -2\n"         /* 11: negative count */
                               "7 1 1\n"          /* 12: doc id out of range */
                               "3 0 1\n"          /* 13: word id 0 */
                               "\n"               /* 14: blank */
                               "3 5 1 9\n"        /* 15: extra field */
                               "3 5 1\n");        /* 16 */
    char err[512] = "";
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    if (!rd) {
        fprintf(stderr, "open: %s\n", err);
        free_model(model);
        return;
    }
    const expect_t want[] = {
        {SLDA_OK, "1", "w0:2 w2:1"},
        {SLDA_ERR_RANGE, NULL, ":7: word id 9 out of range 1..5"},
        {SLDA_ERR_PARSE, NULL, ":9: expected \"docID wordID count\", found \"3 1 x\""},
        {SLDA_ERR_RANGE, NULL, ":10: count 0 out of range 1.."},
        {SLDA_ERR_RANGE, NULL, ":11: count -2 out of range"},
        {SLDA_ERR_RANGE, NULL, ":12: doc id 7 out of range 1..3"},
        {SLDA_ERR_RANGE, NULL, ":13: word id 0 out of range 1..5"},
        {SLDA_ERR_PARSE, NULL, ":15: expected \"docID wordID count\""},
        {SLDA_OK, "2", "w1:1 w3:3"}, /* the bad line 7 dropped, the rest kept */
        {SLDA_OK, "3", "w4:1"},
        {SLDA_ERR_TRUNCATED, NULL, ":16: file ends after 12 of 14 entries (NNZ)"},
    };
    expect_all(rd, model, want, sizeof want / sizeof want[0], "uci");
    CHECK_INT(slda_reader_docs(rd), 3);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_RANGE), 5);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_PARSE), 2);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_TRUNCATED), 1);
    slda_reader_close(rd);

    /* Lines the fast path leaves to the general one read the same: tabs and
     * runs of spaces, a number of 20 digits (leading zeros), a sign. */
    p = write_file("docword.spaces.txt", "2\n5\n4\n"
                                         "1\t2 \t 3\n"            /* 4 */
                                         "  1 00000000000000000004 1 \n" /* 5 */
                                         "2 +1 1\n"                 /* 6: a plus sign */
                                         "2 -0 2\n");               /* 7: word id 0 */
    rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    if (rd) {
        const expect_t spaced[] = {
            {SLDA_ERR_PARSE, NULL, ":6: expected \"docID wordID count\", found \"2 +1 1\""},
            {SLDA_ERR_RANGE, NULL, ":7: word id 0 out of range 1..5"},
            {SLDA_OK, "1", "w1:3 w3:1"}, /* then the end: 4 entry lines, as NNZ says */
        };
        expect_all(rd, model, spaced, sizeof spaced / sizeof spaced[0], "uci spaces");
        slda_reader_close(rd);
    }

    /* Bad headers fail the open with path:line. */
    p = write_file("docword.bad.txt", "3\nfive\n4\n");
    CHECK_NULL(slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err));
    CHECK_CONTAINS(err, "docword.bad.txt:2: UCI header: expected the number of words W");
    p = write_file("docword.short.txt", "3\n5\n");
    CHECK_NULL(slda_reader_open(NULL, model, p, SLDA_FORMAT_UCI, err, sizeof err));
    CHECK_CONTAINS(err, "UCI header: file ends before the number of entries NNZ");
    free_model(model);

    /* An open vocabulary cannot map UCI ids. */
    model = make_model("none", 1, 0, NULL, 0);
    write_file("vocab.test.txt", "w0\nw1\n");
    p = path_of("docword.test.txt");
    CHECK_NULL(slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err));
    CHECK_CONTAINS(err, "format needs a fixed vocabulary: set vocab.file (found ");
    CHECK_CONTAINS(err, "vocab.test.txt)");
    free_model(model);
}

static void test_ldac(void)
{
    slda_model_t *model = make_model("none", 1, 0, five, 5);
    const char *p = write_file("corpus.dat", "2 0:1 3:2\n"   /* 1 */
                                             "2 0:1\n"       /* 2: N mismatch */
                                             "1 7:1\n"       /* 3: id out of range */
                                             "1 2:0\n"       /* 4: zero count */
                                             "1 2-1\n"       /* 5: no colon */
                                             "0\n"           /* 6: empty */
                                             "\n"            /* 7 */
                                             "x 1:1\n"       /* 8 */
                                             "3 4:5  1:1 4:1 \n" /* 9: duplicate id merged */
                                             "1 1:1:1\n"     /* 10 */
                                             "1 4:1");       /* 11, no newline */
    char err[512] = "";
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    if (!rd) {
        fprintf(stderr, "open: %s\n", err);
        free_model(model);
        return;
    }
    const expect_t want[] = {
        {SLDA_OK, "1", "w0:1 w3:2"},
        {SLDA_ERR_PARSE, NULL, ":2: N is 2 but the line has 1 pairs"},
        {SLDA_ERR_RANGE, NULL, ":3: pair 1: word id 7 out of range 0..4"},
        {SLDA_ERR_RANGE, NULL, ":4: pair 1: count 0 out of range"},
        {SLDA_ERR_PARSE, NULL, ":5: pair 1: expected \"id:count\""},
        {SLDA_ERR_EMPTY, NULL, ":6: document: no words"},
        {SLDA_ERR_PARSE, NULL, ":8: expected \"N id:count ...\", found \"x 1:1\""},
        {SLDA_OK, "9", "w1:1 w4:6"},
        {SLDA_ERR_PARSE, NULL, ":10: pair 1: expected"},
        {SLDA_OK, "11", "w4:1"},
    };
    expect_all(rd, model, want, sizeof want / sizeof want[0], "ldac");
    CHECK_INT(slda_reader_docs(rd), 3);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_PARSE), 4);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_RANGE), 2);
    CHECK_INT(slda_reader_errors(rd, SLDA_ERR_EMPTY), 1);
    slda_reader_close(rd);
    free_model(model);
}

/* Open p with AUTO and return the first document's words (or the error name). */
static const char *first_doc(slda_model_t *model, const char *p)
{
    static char out[1100];
    char err[512] = "";
    slda_doc_t doc;
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    if (!rd) {
        snprintf(out, sizeof out, "open: %s", err);
        return out;
    }
    slda_err_t e = slda_reader_next(rd, &doc, err, sizeof err);
    if (e == SLDA_OK)
        snprintf(out, sizeof out, "%s", words(model, &doc));
    else
        snprintf(out, sizeof out, "%s: %s", slda_err_name(e), err);
    slda_doc_clear(&doc);
    slda_reader_close(rd);
    return out;
}

static void test_auto(void)
{
    slda_model_t *fixed = make_model("none", 1, 0, five, 5);
    slda_model_t *open = make_model("none", 1, 0, NULL, 0);
    /* By content: JSON object, lda-c pattern, lone count (UCI), text. */
    const char *json = write_file("a.txt", "\n  {\"text\": \"json doc\"}\n");
    const char *ldac = write_file("b.txt", "2 1:1 2:4\n");
    const char *uci = write_file("c.txt", "1\n5\n1\n1 5 2\n");
    const char *text = write_file("d.txt", "2 apples: 3 pears\n");
    CHECK_STR(first_doc(open, json), "json:1 doc:1");
    CHECK_STR(first_doc(fixed, ldac), "w1:1 w2:4");
    CHECK_STR(first_doc(fixed, uci), "w4:2");
    CHECK_STR(first_doc(open, text), "apples:1 pears:1");
    /* A lone count with an open vocabulary is just (empty) text. */
    CHECK_CONTAINS(first_doc(open, uci), "SLDA_ERR_EMPTY");
    /* By name: .dat next to vocab.txt is lda-c even if it looks like text. */
    write_file("vocab.txt", "w0\nw1\nw2\nw3\nw4\n");
    const char *dat = write_file("e.dat", "1 0:3\n");
    CHECK_STR(first_doc(fixed, dat), "w0:3");
    CHECK_CONTAINS(first_doc(open, dat), "lda-c format needs a fixed vocabulary");

    /* Standard input: the sniffed first line is still the first record. */
    const char *in = write_file("stdin.jsonl", "{\"id\": \"s\", \"text\": \"from stdin\"}\n"
                                               "{\"id\": \"t\", \"text\": \"second\"}\n");
    if (freopen(in, "r", stdin)) {
        char err[512] = "";
        slda_doc_t doc;
        slda_reader_t *rd = slda_reader_open(NULL, open, "-", SLDA_FORMAT_AUTO, err, sizeof err);
        CHECK_TRUE(rd != NULL, "%s", err);
        if (rd) {
            CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_OK);
            CHECK_STR(doc.id, "s");
            CHECK_STR(words(open, &doc), "from:1 stdin:1");
            slda_doc_clear(&doc);
            CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_OK);
            CHECK_STR(doc.id, "t");
            slda_doc_clear(&doc);
            CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_ERR_EOF);
            slda_reader_close(rd);
        }
    } else {
        CHECK(!"freopen stdin");
    }

    /* Opening failures. */
    char err[512] = "";
    CHECK_NULL(slda_reader_open(NULL, open, path_of("missing.txt"), SLDA_FORMAT_TEXT, err,
                                sizeof err));
    CHECK_CONTAINS(err, "missing.txt\": cannot open: No such file");
    CHECK_NULL(slda_reader_open(NULL, open, dir, SLDA_FORMAT_TEXT, err, sizeof err));
    CHECK_CONTAINS(err, "is a directory");
    CHECK_NULL(slda_reader_open(NULL, open, json, (slda_format_t)99, err, sizeof err));
    CHECK_CONTAINS(err, "invalid arguments");
    free_model(fixed);
    free_model(open);
}

/* Every result of reading rd to the end as one string per result (errors
 * without the path before their line number). */
static char **read_events(slda_reader_t *rd, const slda_model_t *model, size_t *n)
{
    size_t cap = 1024;
    char **ev = malloc(cap * sizeof *ev);
    *n = 0;
    for (;;) {
        slda_doc_t doc;
        char err[512] = "", line[1600];
        slda_err_t e = slda_reader_next(rd, &doc, err, sizeof err);
        if (e == SLDA_ERR_EOF)
            break;
        if (e == SLDA_OK)
            snprintf(line, sizeof line, "doc %s %u %s", doc.id, doc.ntokens, words(model, &doc));
        else
            snprintf(line, sizeof line, "%s %s", slda_err_name(e),
                     strchr(err, ':') ? strchr(err, ':') : err);
        slda_doc_clear(&doc);
        if (*n == cap)
            ev = realloc(ev, (cap *= 2) * sizeof *ev);
        ev[(*n)++] = strdup(line);
    }
    return ev;
}

/* A UCI file of many blocks and pieces (reader_uci.c), with rejected lines,
 * empty lines and "\r\n" ends here and there: read from the file with two
 * threads (pieces split and parsed on both, the documents between others in
 * a piece built there, blocks read while the last one is parsed) it gives
 * what reading it a line at a time from standard input gives, in the same
 * order, with the same line numbers. */
static void test_uci_blocks(void)
{
    enum { W = 500, D = 4000 };
    static char names[W][8];
    const char *vocab[W];
    for (int i = 0; i < W; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        vocab[i] = names[i];
    }
    slda_model_t *model = make_model("none", 1, 0, vocab, W);
    char err[256];
    model->p.threads = 2;
    CHECK_INT(slda_model_start_threads(model, err, sizeof err), SLDA_OK);
    size_t cap = 1 << 22, len = 0, nnz = 0, bad = 0;
    char *body = malloc(cap);
    slda_rng_t rng;
    slda_rng_seed(&rng, 17);
    for (int d = 1; d <= D; d++) {
        int w = 0, n = 5 + (int)slda_rng_below(&rng, 60);
        for (int k = 0; k < n && w < W; k++) {
            w += 1 + (int)slda_rng_below(&rng, 8);
            uint32_t r = slda_rng_below(&rng, 600);
            const char *end = r < 6 ? "\r\n" : "\n";
            if (r >= 6 && r < 9)
                len += (size_t)snprintf(body + len, cap - len, "\n"); /* an empty line */
            if (r >= 9 && r < 12) { /* rejected: a letter, word id 0, count 0 */
                len += (size_t)snprintf(body + len, cap - len, r == 9 ? "%d x 1%s"
                                        : r == 10 ? "%d 0 1%s" : "%d 7 0%s", d, end);
                nnz++, bad++;
            }
            len += (size_t)snprintf(body + len, cap - len, "%d %d %u%s", d, w < W ? w : W,
                                    1 + slda_rng_below(&rng, 4), end);
            nnz++;
        }
    }
    char head[64];
    snprintf(head, sizeof head, "%d\n%d\n%zu\n", D, W, nnz);
    char *all = malloc(strlen(head) + len + 1);
    strcpy(all, head);
    memcpy(all + strlen(head), body, len + 1);
    const char *p = write_file("docword.blocks.txt", all);
    CHECK_GT(len, 4 * (1 << 18)); /* several blocks */
    size_t nf = 0, ns = 0, docs = 0, errors = 0;
    slda_reader_t *rd = slda_reader_open(NULL, model, p, SLDA_FORMAT_AUTO, err, sizeof err);
    CHECK_TRUE(rd != NULL, "%s", err);
    char **fe = rd ? read_events(rd, model, &nf) : NULL;
    slda_reader_close(rd);
    char **se = NULL;
    if (freopen(p, "r", stdin)) {
        rd = slda_reader_open(NULL, model, "-", SLDA_FORMAT_UCI, err, sizeof err);
        CHECK_TRUE(rd != NULL, "%s", err);
        se = rd ? read_events(rd, model, &ns) : NULL;
        slda_reader_close(rd);
    }
    CHECK_INT(nf, ns);
    for (size_t i = 0; i < nf && i < ns; i++) {
        if (strcmp(fe[i], se[i]) != 0) {
            fprintf(stderr, "uci blocks: result %zu: file \"%s\", stdin \"%s\"\n", i, fe[i], se[i]);
            CHECK(!"the same results");
            break;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        docs += strncmp(fe[i], "doc ", 4) == 0;
        errors += strncmp(fe[i], "doc ", 4) != 0;
        free(fe[i]);
    }
    for (size_t i = 0; i < ns; i++)
        free(se[i]);
    free(fe);
    free(se);
    CHECK_INT(docs, D);
    CHECK_INT(errors, bad);
    free(all);
    free(body);
    free_model(model);
}

static void test_guess_vocab(void)
{
    char *g;
    write_file("docword.kos.txt", "0\n0\n0\n");
    write_file("vocab.kos.txt", "a\n");
    g = slda_reader_guess_vocab(path_of("docword.kos.txt"), SLDA_FORMAT_AUTO);
    CHECK_STR(g, path_of("vocab.kos.txt"));
    free(g);
    g = slda_reader_guess_vocab(path_of("docword.kos.txt"), SLDA_FORMAT_UCI);
    CHECK_STR(g, path_of("vocab.kos.txt"));
    free(g);
    /* vocab.txt exists (test_auto wrote it) */
    g = slda_reader_guess_vocab(path_of("ap.dat"), SLDA_FORMAT_AUTO);
    CHECK_STR(g, path_of("vocab.txt"));
    free(g);
    g = slda_reader_guess_vocab(path_of("anything.txt"), SLDA_FORMAT_LDAC);
    CHECK_STR(g, path_of("vocab.txt"));
    free(g);
    CHECK_NULL(slda_reader_guess_vocab(path_of("docword.nope.txt"), SLDA_FORMAT_AUTO));
    CHECK_NULL(slda_reader_guess_vocab(path_of("x.txt"), SLDA_FORMAT_TEXT));
    CHECK_NULL(slda_reader_guess_vocab(path_of("x.jsonl"), SLDA_FORMAT_AUTO));
    CHECK_NULL(slda_reader_guess_vocab("-", SLDA_FORMAT_AUTO));
    CHECK_NULL(slda_reader_guess_vocab(NULL, SLDA_FORMAT_AUTO));

    CHECK_INT(slda_format_parse("uci"), SLDA_FORMAT_UCI);
    CHECK_INT(slda_format_parse("lda-c"), SLDA_FORMAT_LDAC);
    CHECK_INT(slda_format_parse("ldac"), SLDA_FORMAT_LDAC);
    CHECK_INT(slda_format_parse("TEXT"), SLDA_FORMAT_TEXT);
    CHECK_INT(slda_format_parse("jsonl"), SLDA_FORMAT_JSONL);
    CHECK_INT(slda_format_parse("auto"), SLDA_FORMAT_AUTO);
    CHECK_INT(slda_format_parse("csv"), SLDA_FORMAT_CSV);
    CHECK_INT(slda_format_parse("tsv"), SLDA_FORMAT_TSV);
    CHECK_INT(slda_format_parse("xml"), (slda_format_t)-1);
    CHECK_INT(slda_format_parse(NULL), (slda_format_t)-1);
}

/* A read error (reading /proc/self/mem at offset 0 fails with EIO) is
 * reported once as SLDA_ERR_IO with the path, then the input ends; also when
 * it happens while the format is being sniffed. */
static void test_read_error(void)
{
    static const slda_format_t fmts[] = {SLDA_FORMAT_TEXT, SLDA_FORMAT_AUTO};
    slda_model_t *model = make_model("none", 1, 0, NULL, 0);
    FILE *probe = fopen("/proc/self/mem", "rb");
    if (!probe) {
        printf("unit_reader: /proc/self/mem not readable, read-error case skipped\n");
        free_model(model);
        return;
    }
    fclose(probe);
    for (size_t i = 0; i < 2; i++) {
        char err[512] = "";
        slda_doc_t doc;
        slda_reader_t *rd = slda_reader_open(NULL, model, "/proc/self/mem", fmts[i], err,
                                             sizeof err);
        CHECK_NONNULL(rd);
        if (!rd)
            continue;
        CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_ERR_IO);
        CHECK_CONTAINS(err, "/proc/self/mem:0: read error: ");
        CHECK_INT(slda_reader_next(rd, &doc, err, sizeof err), SLDA_ERR_EOF);
        CHECK_INT(slda_reader_errors(rd, SLDA_ERR_IO), 1);
        slda_reader_close(rd);
    }
    free_model(model);
}

/* Random bytes in every format: no crash, and every non-empty line is either
 * a document or one counted error. */
static void test_garbage(void)
{
    static const slda_format_t fmts[] = {SLDA_FORMAT_TEXT, SLDA_FORMAT_JSONL, SLDA_FORMAT_LDAC,
                                         SLDA_FORMAT_UCI};
    static const char alphabet[] = "{}[]\":,\\u0123456789 abcxyz-.e\t\xff\xc3\xa9\xed\xa0\x80";
    slda_model_t *model = make_model("none", 1, 0, five, 5);
    slda_rng_t rng;
    slda_rng_seed(&rng, 2024);
    for (int round = 0; round < 40; round++) {
        char buf[4096];
        size_t n = 0, lines = 0;
        slda_format_t fmt = fmts[round % 4];
        if (fmt == SLDA_FORMAT_UCI)
            n = (size_t)snprintf(buf, sizeof buf, "4\n5\n100\n");
        while (n < 3000) {
            size_t len = 1 + slda_rng_below(&rng, 60);
            for (size_t i = 0; i < len; i++)
                buf[n++] = alphabet[slda_rng_below(&rng, sizeof alphabet - 1)];
            if (fmt == SLDA_FORMAT_JSONL && slda_rng_below(&rng, 3) == 0)
                n += (size_t)snprintf(buf + n, sizeof buf - n, "{\"text\":\"ok %d\"}", round);
            buf[n++] = '\n';
            lines++;
        }
        buf[n] = '\0';
        const char *p = write_file("garbage.txt", buf);
        char err[512] = "";
        slda_reader_t *rd = slda_reader_open(NULL, model, p, fmt, err, sizeof err);
        CHECK_TRUE(rd != NULL, "%s", err);
        if (!rd)
            continue;
        uint64_t results = 0, errs = 0;
        slda_doc_t doc;
        slda_err_t e;
        while ((e = slda_reader_next(rd, &doc, err, sizeof err)) != SLDA_ERR_EOF) {
            if (e != SLDA_OK && !strstr(err, "garbage.txt:"))
                CHECK_CONTAINS(err, "garbage.txt:");
            results++;
            slda_doc_clear(&doc);
            if (results > 100000)
                break;
        }
        for (int c = 0; c < SLDA_ERR__COUNT; c++)
            errs += slda_reader_errors(rd, (slda_err_t)c);
        CHECK_INT(results, slda_reader_docs(rd) + errs);
        if (fmt != SLDA_FORMAT_UCI)
            CHECK_LE(slda_reader_docs(rd) + errs, lines);
        slda_reader_close(rd);
    }
    free_model(model);
}

/* slda_reader_parse_int: 18 digits go unchecked (they cannot overflow), the
 * digits after are checked: INT64_MAX and its negation parse, one more does
 * not, nor a 20-digit number (fails when the unchecked run is longer). */
static void test_parse_int(void)
{
    struct {
        const char *s;
        int ok;
        int64_t v;
    } cases[] = {
        {"0", 1, 0},
        {"-42 ", 1, -42},
        {"999999999999999999", 1, 999999999999999999LL},
        {"9223372036854775807", 1, INT64_MAX},
        {"-9223372036854775807", 1, -INT64_MAX},
        {"9223372036854775808", 0, 0},
        {"9999999999999999999", 0, 0},
        {"18446744073709551616", 0, 0},
        {"12345678901234567890", 0, 0},
        {"-", 0, 0},
        {"x1", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = cases[i].s, *end = p + strlen(p);
        int64_t v = -1;
        int ok = slda_reader_parse_int(&p, end, &v);
        CHECK_INT(ok, cases[i].ok);
        if (ok && cases[i].ok)
            CHECK_EQ(v, cases[i].v);
    }
}

int main(void)
{
    dir = slda_test_tmpdir();
    test_parse_int();
    test_uci_blocks();
    test_text();
    test_long_line();
    test_jsonl();
    test_uci();
    test_ldac();
    test_auto();
    test_guess_vocab();
    test_read_error();
    test_garbage();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
    return slda_test_done("unit_reader");
}
