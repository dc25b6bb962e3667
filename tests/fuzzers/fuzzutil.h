/* fuzzutil.h - helpers shared by the fuzz targets: invariant checks, small models, temp files.
 *
 * Every target defines LLVMFuzzerTestOneInput and is linked either with
 * libFuzzer (-fsanitize=fuzzer, SLDA_FUZZ=ON) or with tests/fuzzers/replay.c,
 * whose main() feeds it the seed corpus and generated inputs as a plain ctest
 * test. A target checks invariants, not just "no crash": a broken invariant
 * prints what was compared and aborts, which both drivers report as a failure.
 * A target may also define slda_fuzz_generate() to hand replay.c structured
 * inputs of its own (valid snapshots of the current format, say).
 */
#ifndef SLDA_FUZZUTIL_H
#define SLDA_FUZZUTIL_H

#include "core/slda_int.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "fuzz invariant broken: file:line: cond: message" and abort(). */
void slda_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));

#define FUZZ_ASSERT(cond, ...)                                                         \
    do {                                                                               \
        if (!(cond))                                                                   \
            slda_fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                    \
    } while (0)

/* Structured inputs for replay.c: a target calls feed for each one. */
typedef void (*slda_fuzz_feed_fn)(const uint8_t *data, size_t size, const char *label);
void slda_fuzz_generate(slda_fuzz_feed_fn feed);

/* A model built the way the program builds it (slda_model_new from a
 * configuration): K = 2 topics, one thread, and either an open vocabulary of
 * `capacity` ids (fixed_words NULL) or the fixed vocabulary fixed_words[0..n)
 * (written to a temporary vocab.file). stopwords is a built-in list name;
 * max_bytes 0 = no limit. Aborts on failure: that is a harness bug. */
slda_model_t *slda_fuzz_model(uint32_t capacity, const char *const *fixed_words, uint32_t n,
                              const char *stopwords, uint32_t min_length, uint32_t max_bytes);

/* The invariants of a document that came out SLDA_OK through model: at least
 * one pair; ids strictly increasing (sorted, unique) and naming words the
 * vocabulary holds (so each is < its capacity); counts >= 1; ntokens equal to
 * the sum of the counts; the id, if any, non-empty UTF-8 without NUL. `what`
 * names the call for the message. */
void slda_fuzz_check_doc(const slda_model_t *model, const slda_doc_t *doc, const char *what);
/* A document left behind by a failed call: nothing in it. */
void slda_fuzz_check_empty_doc(const slda_doc_t *doc, const char *what);
/* Two documents hold the same pairs and ids (1 = equal). */
int slda_fuzz_docs_equal(const slda_doc_t *a, const slda_doc_t *b);

/* A private directory for the process's temporary files (created on first
 * use, removed with its files at exit); `name` inside it, in a static buffer
 * of 8 rotating slots. */
const char *slda_fuzz_path(const char *name);
/* Write data to path (replacing it); aborts on failure. */
void slda_fuzz_write_file(const char *path, const void *data, size_t size);

/* Independent strict UTF-8 validation (a second implementation to compare
 * slda_utf8_valid with): 1 if valid, else 0 with the first bad offset. */
int slda_fuzz_utf8_ok(const unsigned char *s, size_t len, size_t *bad_off);

#endif /* SLDA_FUZZUTIL_H */
