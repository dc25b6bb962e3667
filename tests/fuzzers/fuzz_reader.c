/* fuzz_reader.c - fuzz target: the file readers (slda_reader_open / _next) in every format.
 *
 * The input is written to a temporary file (named without a telling
 * extension, so "auto" sniffs the content) and read to the end in each
 * format: UCI and lda-c with a fixed vocabulary of 8 words, text and JSON
 * lines with an open vocabulary of 64 ids, and auto with the fixed one (so
 * all four formats can be sniffed). Checked for each:
 *   - every SLDA_OK document is valid (fuzzutil.h: ids in use and below the
 *     vocabulary capacity, counts >= 1, ntokens = sum of counts) and has an
 *     id; a text or lda-c document's id is its line number, and line numbers
 *     increase;
 *   - every failure is an input error with a "path:line: " message and
 *     leaves the document empty; the reader's counters equal the documents
 *     and errors returned;
 *   - reading ends: SLDA_ERR_EOF comes within a bound set by the number of
 *     lines, and stays; text returns one result per line, lda-c one per
 *     non-empty line and JSON lines one per non-blank line.
 * A failed open (a bad UCI header) must come with a message.
 */
#include "fuzzutil.h"
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

#define OPEN_CAPACITY 64

static const char *const vocab_words[] = {"apple", "banana", "cherry", "date",
                                          "elder", "fig",    "grape",  "stock"};
#define NWORDS (sizeof vocab_words / sizeof vocab_words[0])

/* Lines as getline sees them: all of them, the non-empty ones, the non-blank ones. */
typedef struct lines_s {
    uint64_t all, nonempty, nonblank;
} lines_t;

static lines_t count_lines(const uint8_t *data, size_t size)
{
    lines_t n = {0, 0, 0};
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        size_t len, k;
        int blank = 1;
        if (i < size && data[i] != '\n')
            continue;
        if (i == size && start == size)
            break; /* no partial last line */
        len = i - start;
        if (len > 0 && data[start + len - 1] == '\r')
            len--;
        for (k = start; k < start + len; k++)
            if (data[k] != ' ' && data[k] != '\t' && data[k] != '\r')
                blank = 0;
        n.all++;
        n.nonempty += len > 0;
        n.nonblank += !blank;
        start = i + 1;
    }
    return n;
}

static int input_error(slda_err_t err)
{
    return err == SLDA_ERR_PARSE || err == SLDA_ERR_UTF8 || err == SLDA_ERR_EMPTY ||
           err == SLDA_ERR_RANGE || err == SLDA_ERR_TRUNCATED || err == SLDA_ERR_TOO_LARGE;
}

static void read_all(slda_model_t *model, const char *path, slda_format_t fmt, const char *name,
                     const lines_t *lines)
{
    char err[1024] = "", prefix[4200];
    slda_reader_t *rd = slda_reader_open(NULL, model, path, fmt, err, sizeof err);
    uint64_t ok = 0, failed = 0, calls = 0, last_line = 0;
    /* Each call consumes a line or ends; UCI may hand a document over
     * before reading on, and reports truncation once. */
    uint64_t bound = 2 * lines->all + 4;
    slda_err_t rc;
    if (!rd) {
        FUZZ_ASSERT(err[0] != '\0', "%s: open failed without a message", name);
        FUZZ_ASSERT(fmt == SLDA_FORMAT_UCI || fmt == SLDA_FORMAT_AUTO,
                    "%s: open failed: %s", name, err);
        return;
    }
    snprintf(prefix, sizeof prefix, "%s:", path);
    for (;;) {
        slda_doc_t doc;
        char what[64];
        err[0] = '\0';
        rc = slda_reader_next(rd, &doc, err, sizeof err);
        calls++;
        FUZZ_ASSERT(calls <= bound, "%s: no end after %llu calls for %llu lines", name,
                    (unsigned long long)calls, (unsigned long long)lines->all);
        snprintf(what, sizeof what, "%s: document %llu", name, (unsigned long long)ok + 1);
        if (rc == SLDA_ERR_EOF) {
            slda_fuzz_check_empty_doc(&doc, what);
            break;
        }
        if (rc == SLDA_OK) {
            slda_fuzz_check_doc(model, &doc, what);
            FUZZ_ASSERT(doc.id != NULL, "%s: no id", what);
            if (fmt == SLDA_FORMAT_TEXT || fmt == SLDA_FORMAT_LDAC) {
                uint64_t line = strtoull(doc.id, NULL, 10);
                FUZZ_ASSERT(line > last_line && line <= lines->all,
                            "%s: id \"%s\" after line %llu of %llu", what, doc.id,
                            (unsigned long long)last_line, (unsigned long long)lines->all);
                last_line = line;
            }
            ok++;
        } else {
            FUZZ_ASSERT(input_error(rc), "%s: %s: %s", what, slda_err_name(rc), err);
            FUZZ_ASSERT(strncmp(err, prefix, strlen(prefix)) == 0, "%s: message \"%s\"", what,
                        err);
            slda_fuzz_check_empty_doc(&doc, what);
            failed++;
        }
        slda_doc_clear(&doc);
        slda_vocab_new_epoch(model->vocab); /* one document per minibatch */
    }
    {
        slda_doc_t doc;
        FUZZ_ASSERT(slda_reader_next(rd, &doc, err, sizeof err) == SLDA_ERR_EOF,
                    "%s: reading on after the end", name);
    }
    uint64_t counted = 0;
    for (int e = 0; e < SLDA_ERR__COUNT; e++)
        counted += slda_reader_errors(rd, (slda_err_t)e);
    FUZZ_ASSERT(slda_reader_docs(rd) == ok && counted == failed,
                "%s: counters say %llu documents / %llu errors, %llu / %llu were returned", name,
                (unsigned long long)slda_reader_docs(rd), (unsigned long long)counted,
                (unsigned long long)ok, (unsigned long long)failed);
    if (fmt == SLDA_FORMAT_LDAC)
        FUZZ_ASSERT(ok + failed == lines->nonempty, "%s: %llu results for %llu non-empty lines",
                    name, (unsigned long long)(ok + failed), (unsigned long long)lines->nonempty);
    if (fmt == SLDA_FORMAT_JSONL || fmt == SLDA_FORMAT_TEXT) /* blank lines are skipped */
        FUZZ_ASSERT(ok + failed == lines->nonblank, "%s: %llu results for %llu non-blank lines",
                    name, (unsigned long long)(ok + failed), (unsigned long long)lines->nonblank);
    slda_reader_close(rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static slda_model_t *fixed;
    static const struct {
        slda_format_t fmt;
        int open_vocab;
        const char *name;
    } runs[] = {
        {SLDA_FORMAT_UCI, 0, "uci"},      {SLDA_FORMAT_LDAC, 0, "ldac"},
        {SLDA_FORMAT_TEXT, 1, "text"},    {SLDA_FORMAT_JSONL, 1, "jsonl"},
        {SLDA_FORMAT_AUTO, 0, "auto"},
    };
    const char *path = slda_fuzz_path("input");
    lines_t lines = count_lines(data, size);
    if (!fixed) /* a fixed vocabulary never changes: one model serves every input */
        fixed = slda_fuzz_model(0, vocab_words, NWORDS, "smart", 2, 0);
    slda_fuzz_write_file(path, data, size);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        slda_model_t *model = runs[i].open_vocab
                                  ? slda_fuzz_model(OPEN_CAPACITY, NULL, 0, "smart", 2, 4096)
                                  : fixed;
        read_all(model, path, runs[i].fmt, runs[i].name, &lines);
        if (runs[i].open_vocab)
            slda_model_destroy(model);
    }
    return 0;
}
