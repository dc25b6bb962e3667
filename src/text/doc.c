/* doc.c - documents as sorted (word id, count) bags. */
#include "core/slda_int.h"

#include <stdlib.h>
#include <string.h>

void slda_doc_init(slda_doc_t *doc)
{
    memset(doc, 0, sizeof *doc);
}

void slda_doc_clear(slda_doc_t *doc)
{
    if (!doc)
        return;
    free(doc->id);
    free(doc->text);
    free(doc->group);
    free(doc->word);
    free(doc->count);
    for (uint32_t i = 0; i < doc->nauthor; i++)
        free(doc->author[i]);
    free(doc->author);
    slda_doc_init(doc);
}

slda_err_t slda_doc_add_author(slda_doc_t *doc, const char *name, size_t len)
{
    for (uint32_t i = 0; i < doc->nauthor; i++)
        if (strlen(doc->author[i]) == len && !memcmp(doc->author[i], name, len))
            return SLDA_OK;
    if (doc->nauthor == SLDA_MAX_DOC_AUTHORS)
        return SLDA_ERR_RANGE;
    doc->author = slda_xrealloc(doc->author, (doc->nauthor + 1) * sizeof *doc->author);
    char *copy = slda_xmalloc(len + 1);
    memcpy(copy, name, len);
    copy[len] = '\0';
    doc->author[doc->nauthor++] = copy;
    return SLDA_OK;
}

void slda_docs_clear(slda_doc_t *docs, size_t n)
{
    for (size_t i = 0; docs && i < n; i++)
        slda_doc_clear(&docs[i]);
}

void slda_doc_add(slda_doc_t *doc, uint32_t word, uint32_t count)
{
    if (doc->npairs == doc->cap) {
        doc->cap = doc->cap ? doc->cap * 2 : 16;
        doc->word = slda_xrealloc(doc->word, doc->cap * sizeof *doc->word);
        doc->count = slda_xrealloc(doc->count, doc->cap * sizeof *doc->count);
    }
    doc->word[doc->npairs] = word;
    doc->count[doc->npairs] = count;
    doc->npairs++;
    doc->ntokens += count;
}

/* Sorting (word, count) packed in one uint64: insertion sort for the short
 * documents that are most of a stream (no call per comparison), a stable
 * least-significant-digit radix sort on the word id beyond: a byte a pass,
 * skipping the bytes no id has set (three passes below 2^24 ids), O(n) for
 * any input (qsort's call per comparison was a few percent of the thread that
 * looks words up, which the others wait for). Pairs with equal ids are
 * merged by slda_doc_finish, which adds their counts: any order among them
 * gives the same document. */
#define INSERTION_MAX 64

/* a[0..n) by bits 32..63, tmp[0..n) scratch: returns a or tmp, whichever
 * holds the result. */
static const uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, uint32_t n)
{
    uint32_t any = 0;
    for (uint32_t i = 0; i < n; i++)
        any |= (uint32_t)(a[i] >> 32);
    for (int shift = 32; shift < 64 && (any >> (shift - 32)); shift += 8) {
        uint32_t count[257] = {0};
        for (uint32_t i = 0; i < n; i++)
            count[((a[i] >> shift) & 0xff) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (uint32_t i = 0; i < n; i++)
            tmp[count[(a[i] >> shift) & 0xff]++] = a[i];
        uint64_t *x = a;
        a = tmp;
        tmp = x;
    }
    return a;
}

static void sort_pairs(uint32_t *w, uint32_t *c, uint32_t n)
{
    uint64_t stack[INSERTION_MAX];
    uint64_t *packed = n <= INSERTION_MAX ? stack : slda_xmalloc(2 * (size_t)n * sizeof *packed);
    const uint64_t *sorted = packed;
    for (uint32_t i = 0; i < n; i++)
        packed[i] = ((uint64_t)w[i] << 32) | c[i];
    if (n <= INSERTION_MAX) {
        for (uint32_t i = 1; i < n; i++) {
            uint64_t v = packed[i];
            uint32_t j = i;
            for (; j > 0 && packed[j - 1] > v; j--)
                packed[j] = packed[j - 1];
            packed[j] = v;
        }
    } else {
        sorted = radix_sort(packed, packed + n, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        w[i] = (uint32_t)(sorted[i] >> 32);
        c[i] = (uint32_t)sorted[i];
    }
    if (packed != stack)
        free(packed);
}

void slda_doc_finish(slda_doc_t *doc)
{
    uint32_t n = doc->npairs, out = 0;
    uint64_t total = 0;
    for (uint32_t i = 1; i < n; i++) {
        if (doc->word[i - 1] >= doc->word[i]) {
            sort_pairs(doc->word, doc->count, n);
            break;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (out > 0 && doc->word[out - 1] == doc->word[i]) {
            uint64_t merged = (uint64_t)doc->count[out - 1] + doc->count[i];
            doc->count[out - 1] = merged > UINT32_MAX ? UINT32_MAX : (uint32_t)merged;
        } else {
            doc->word[out] = doc->word[i];
            doc->count[out] = doc->count[i];
            out++;
        }
        total += doc->count[i];
    }
    doc->npairs = out;
    doc->ntokens = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

slda_err_t slda_doc_check(const slda_doc_t *doc, uint32_t W, char *errstr, size_t errstr_size)
{
    const char *id = doc->id ? doc->id : "?";
    uint64_t total = 0;
    if (doc->npairs == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY, "document \"%s\": no words", id);
    for (uint32_t u = 0; u < doc->npairs; u++) {
        if (doc->word[u] >= W)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                "document \"%s\": word id %u out of range 0..%u", id,
                                doc->word[u], W - 1);
        if (doc->count[u] == 0)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                "document \"%s\": word id %u has count 0", id, doc->word[u]);
        total += doc->count[u];
    }
    if (total > SLDA_MAX_DOC_TOKENS)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "document \"%s\": %llu tokens, over the limit %u", id,
                            (unsigned long long)total, SLDA_MAX_DOC_TOKENS);
    if (total != doc->ntokens)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                            "document \"%s\": ntokens %u is not the sum of its counts %llu", id,
                            doc->ntokens, (unsigned long long)total);
    return SLDA_OK;
}
