/* fuzzutil.c - helpers shared by the fuzz targets: invariant checks, small models, temp files.
 *
 * Invariants. Nothing here keeps state between inputs except the temporary
 * directory (one per process, removed at exit with the files made in it), so
 * an input gives the same result whichever inputs ran before it. Checks abort
 * through slda_fuzz_fail, which libFuzzer and replay.c both report.
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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void slda_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz invariant broken: %s:%d: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* ---- temporary files ---- */

#define MAX_TMP_FILES 32

static char tmp_dir[4096];
static char *tmp_files[MAX_TMP_FILES];
static int ntmp_files;

static void remove_tmp(void)
{
    for (int i = 0; i < ntmp_files; i++) {
        unlink(tmp_files[i]);
        free(tmp_files[i]);
    }
    ntmp_files = 0;
    if (tmp_dir[0])
        rmdir(tmp_dir);
    tmp_dir[0] = '\0';
}

const char *slda_fuzz_path(const char *name)
{
    static char slots[8][4200];
    static int next;
    char *out = slots[next++ % 8];
    if (!tmp_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/slda-fuzz-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmp_dir)) {
            perror("slda fuzz: mkdtemp");
            abort();
        }
        atexit(remove_tmp);
    }
    snprintf(out, 4200, "%s/%s", tmp_dir, name);
    for (int i = 0; i < ntmp_files; i++)
        if (strcmp(tmp_files[i], out) == 0)
            return out;
    FUZZ_ASSERT(ntmp_files < MAX_TMP_FILES, "more than %d temporary names", MAX_TMP_FILES);
    tmp_files[ntmp_files++] = slda_xstrdup(out);
    return out;
}

void slda_fuzz_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    FUZZ_ASSERT(f != NULL, "cannot create %s", path);
    FUZZ_ASSERT(fwrite(data, 1, size, f) == size, "cannot write %zu bytes to %s", size, path);
    FUZZ_ASSERT(fclose(f) == 0, "cannot close %s", path);
}

/* ---- models ---- */

static void conf_set(slda_conf_t *conf, const char *key, const char *value)
{
    char err[512];
    FUZZ_ASSERT(slda_conf_set(conf, key, value, err, sizeof err) == SLDA_OK,
                "harness: %s=%s: %s", key, value, err);
}

static void conf_set_u32(slda_conf_t *conf, const char *key, uint32_t v)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", v);
    conf_set(conf, key, buf);
}

slda_model_t *slda_fuzz_model(uint32_t capacity, const char *const *fixed_words, uint32_t n,
                              const char *stopwords, uint32_t min_length, uint32_t max_bytes)
{
    char err[512];
    slda_conf_t *conf = slda_conf_new();
    slda_model_t *model;
    conf_set(conf, "topics", "2");
    conf_set(conf, "threads", "1");
    conf_set(conf, "text.stopwords", stopwords);
    conf_set_u32(conf, "text.min.length", min_length);
    conf_set_u32(conf, "text.max.bytes", max_bytes);
    if (fixed_words) {
        const char *path = slda_fuzz_path("vocab.txt");
        size_t len = 0;
        for (uint32_t i = 0; i < n; i++)
            len += strlen(fixed_words[i]) + 1;
        char *text = slda_xmalloc(len + 1), *p = text;
        for (uint32_t i = 0; i < n; i++)
            p += sprintf(p, "%s\n", fixed_words[i]);
        slda_fuzz_write_file(path, text, (size_t)(p - text));
        free(text);
        conf_set(conf, "vocab.file", path);
    } else {
        conf_set_u32(conf, "vocab.capacity", capacity);
    }
    model = slda_model_new(conf, err, sizeof err);
    FUZZ_ASSERT(model != NULL, "harness: slda_model_new: %s", err);
    slda_conf_destroy(conf);
    return model;
}

/* ---- documents ---- */

void slda_fuzz_check_doc(const slda_model_t *model, const slda_doc_t *doc, const char *what)
{
    uint64_t sum = 0;
    uint32_t cap = slda_vocab_capacity(model->vocab);
    FUZZ_ASSERT(doc->npairs > 0, "%s: SLDA_OK with an empty document", what);
    FUZZ_ASSERT(doc->npairs <= doc->cap, "%s: npairs %u > cap %u", what, doc->npairs, doc->cap);
    FUZZ_ASSERT(doc->word && doc->count, "%s: pairs without arrays", what);
    for (uint32_t i = 0; i < doc->npairs; i++) {
        uint32_t w = doc->word[i];
        FUZZ_ASSERT(w < cap, "%s: pair %u: word id %u >= vocabulary capacity %u", what, i, w, cap);
        FUZZ_ASSERT(i == 0 || doc->word[i - 1] < w,
                    "%s: pair %u: word ids not strictly increasing (%u then %u)", what, i,
                    doc->word[i - 1], w);
        FUZZ_ASSERT(slda_vocab_word(model->vocab, w) != NULL,
                    "%s: pair %u: word id %u is not in use in the vocabulary", what, i, w);
        FUZZ_ASSERT(doc->count[i] >= 1, "%s: pair %u (word %u): count %u", what, i, w,
                    doc->count[i]);
        sum += doc->count[i];
    }
    FUZZ_ASSERT(sum == doc->ntokens, "%s: ntokens %u but the counts sum to %llu", what,
                doc->ntokens, (unsigned long long)sum);
    if (doc->id) {
        size_t n = strlen(doc->id);
        FUZZ_ASSERT(n > 0, "%s: empty document id", what);
        FUZZ_ASSERT(slda_fuzz_utf8_ok((const unsigned char *)doc->id, n, NULL),
                    "%s: document id is not UTF-8", what);
    }
}

void slda_fuzz_check_empty_doc(const slda_doc_t *doc, const char *what)
{
    FUZZ_ASSERT(doc->npairs == 0 && doc->ntokens == 0 && doc->id == NULL && doc->word == NULL &&
                    doc->count == NULL,
                "%s: failed but left npairs=%u ntokens=%u id=%s", what, doc->npairs,
                doc->ntokens, doc->id ? doc->id : "(null)");
}

int slda_fuzz_docs_equal(const slda_doc_t *a, const slda_doc_t *b)
{
    if (a->npairs != b->npairs || a->ntokens != b->ntokens || !a->id != !b->id)
        return 0;
    if (a->id && strcmp(a->id, b->id) != 0)
        return 0;
    for (uint32_t i = 0; i < a->npairs; i++)
        if (a->word[i] != b->word[i] || a->count[i] != b->count[i])
            return 0;
    return 1;
}

/* ---- UTF-8, written from the Unicode tables (not from tokenize.c) ---- */

int slda_fuzz_utf8_ok(const unsigned char *s, size_t len, size_t *bad_off)
{
    size_t i = 0;
    while (i < len) {
        uint32_t cp, min;
        size_t n;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        if ((s[i] & 0xE0) == 0xC0) {
            n = 2, cp = s[i] & 0x1F, min = 0x80;
        } else if ((s[i] & 0xF0) == 0xE0) {
            n = 3, cp = s[i] & 0x0F, min = 0x800;
        } else if ((s[i] & 0xF8) == 0xF0) {
            n = 4, cp = s[i] & 0x07, min = 0x10000;
        } else {
            goto bad;
        }
        if (len - i < n)
            goto bad;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                goto bad;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            goto bad;
        i += n;
    }
    return 1;
bad:
    if (bad_off)
        *bad_off = i;
    return 0;
}
