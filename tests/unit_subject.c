/* unit_subject.c - new subjects from the words (src/track/subject.c) on synthetic streams.
 *
 * The old stream: documents of 40 distinct words drawn from 3,000 (Zipf, exponent 1), each
 * given one of topics 0..4 by its first word. A stationary stream of 30 blocks raises nothing
 * (whatever the seed: several seeds). With a new subject from document 12,300 on (a fifth of
 * the documents draw half their words from 40 words the old stream never had, and the model
 * puts them in topic 7), one subject is found at the end of block 13 or 14: at least its
 * strongest words are new words, its topic is 7, its time is the first new document's or
 * within a few documents of it, it is reported once, and the same input gives the same
 * subjects, also with a table small enough to prune at every block. A table of 16 words counts
 * what finds no room as skipped.
 */
#include "testutil.h"
#include "track/subject.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1000
#define OLD 3000
#define NEW 40
#define DOCW 40
#define CHANGE 12300

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unif(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* Zipf over n ranks by inversion of the cumulative weights. */
static uint32_t zipf(const double *cum, uint32_t n, uint64_t *s)
{
    double u = unif(s) * cum[n - 1];
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cum[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t old_key(uint32_t r)
{
    return 0x1000000ULL + r;
}

static uint64_t new_key(uint32_t r)
{
    return 0x9000000ULL + r;
}

/* k appended to key[n] unless key[from..n) holds it already (a document's words are distinct). */
static void add_key(uint64_t *key, uint32_t *n, uint32_t from, uint64_t k)
{
    for (uint32_t i = from; i < *n; i++)
        if (key[i] == k)
            return;
    key[(*n)++] = k;
}

typedef struct found_s {
    uint64_t doc;          /* documents added when it was found */
    slda_subject_t subject;
} found_t;

/* Feed ndocs documents; a new subject from document `change` on (UINT64_MAX: never).
 * Returns the subjects found (at most max). */
static size_t stream(uint64_t seed, uint64_t ndocs, uint64_t change, uint32_t cap,
                     found_t *out, size_t max, uint64_t *skipped)
{
    static double cum[OLD], cumnew[NEW];
    double t = 0;
    for (uint32_t r = 0; r < OLD; r++)
        cum[r] = (t += 1.0 / (r + 1));
    t = 0;
    for (uint32_t r = 0; r < NEW; r++)
        cumnew[r] = (t += 1.0 / (r + 1));
    slda_subjects_t *s = slda_subjects_new(BLOCK, cap);
    uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 1;
    size_t nout = 0;
    for (uint64_t d = 0; d < ndocs; d++) {
        uint64_t key[DOCW];
        uint32_t n = 0, topic;
        int fresh = d >= change && unif(&rng) < 0.2;
        while (n < DOCW) {
            uint64_t k = fresh && n % 2 ? new_key(zipf(cumnew, NEW, &rng))
                                        : old_key(zipf(cum, OLD, &rng));
            add_key(key, &n, 0, k);
        }
        topic = fresh ? 7 : (uint32_t)(key[0] % 5);
        size_t nf = slda_subjects_add(s, key, n, topic, (int64_t)d * 1000);
        if (nf) {
            size_t m;
            const slda_subject_t *sj = slda_subjects_found(s, &m);
            CHECK_INT(m, nf);
            for (size_t i = 0; i < m && nout < max; i++) {
                out[nout].doc = d + 1;
                out[nout++].subject = sj[i];
            }
        }
    }
    CHECK_INT(slda_subjects_docs(s), ndocs);
    if (skipped)
        *skipped = slda_subjects_skipped(s);
    slda_subjects_destroy(s);
    return nout;
}

static void test_stationary(void)
{
    found_t f[8];
    for (uint64_t seed = 1; seed <= 4; seed++) {
        size_t n = stream(seed, 30 * BLOCK, UINT64_MAX, 100000, f, 8, NULL);
        CHECK_TRUE(n == 0, "seed %llu: a stationary stream raises no subject (%zu; first words "
                   "%llx)", (unsigned long long)seed, n,
                   n ? (unsigned long long)f[0].subject.key[0] : 0ULL);
    }
}

static void test_new_subject(void)
{
    found_t f[8], g[8];
    size_t n = stream(1, 20 * BLOCK, CHANGE, 100000, f, 8, NULL);
    CHECK_INT(n, 1);
    if (n < 1)
        return;
    const slda_subject_t *sj = &f[0].subject;
    CHECK_TRUE(f[0].doc == 13 * BLOCK || f[0].doc == 14 * BLOCK,
               "found at the end of block 13 or 14 (%llu documents)",
               (unsigned long long)f[0].doc);
    CHECK_TRUE(sj->nwords >= 3, "a subject of %u words", sj->nwords);
    uint32_t fresh = 0;
    for (uint32_t i = 0; i < sj->nwords; i++)
        fresh += sj->key[i] >= new_key(0) && sj->key[i] < new_key(NEW);
    CHECK_TRUE(sj->key[0] >= new_key(0) && sj->key[0] < new_key(NEW) && fresh >= 3,
               "its strongest word and 3 or more of its %u are new (%u)", sj->nwords, fresh);
    for (uint32_t i = 1; i < sj->nwords; i++)
        CHECK_TRUE(sj->g[i] <= sj->g[i - 1], "strongest first (%u)", i);
    CHECK_INT(sj->topic, 7);
    CHECK_TRUE(sj->first_ms >= CHANGE * 1000LL && sj->first_ms <= (CHANGE + 50) * 1000LL,
               "dated at the change: document %lld (the change at %d)",
               (long long)(sj->first_ms / 1000), CHANGE);
    CHECK_TRUE(sj->docs >= 5, "%u documents", sj->docs);
    /* the same input, the same subjects */
    CHECK_INT(stream(1, 20 * BLOCK, CHANGE, 100000, g, 8, NULL), n);
    CHECK_TRUE(!memcmp(&f[0].subject, &g[0].subject, sizeof f[0].subject) && f[0].doc == g[0].doc,
               "deterministic");

}

/* Blocks of 100 documents of 20 words from 300 (Zipf) and 3 words no other document has (typos,
 * ids); from block 30 on, 30% of the documents add 10 words of 20 new ones (topic 7). */
static size_t junk_stream(uint32_t cap, slda_subject_t *out, size_t max, uint64_t *at)
{
    static double cum[300], cumnew[20];
    double t = 0;
    for (uint32_t r = 0; r < 300; r++)
        cum[r] = (t += 1.0 / (r + 1));
    t = 0;
    for (uint32_t r = 0; r < 20; r++)
        cumnew[r] = (t += 1.0 / (r + 1));
    slda_subjects_t *s = slda_subjects_new(100, cap);
    uint64_t rng = 77, junk = 0x5000000000ULL;
    size_t nout = 0;
    for (uint64_t d = 0; d < 60 * 100; d++) {
        uint64_t key[33];
        uint32_t n = 0;
        int fresh = d >= 3000 && unif(&rng) < 0.3;
        while (n < 20) {
            add_key(key, &n, 0, old_key(zipf(cum, 300, &rng)));
        }
        for (int j = 0; j < 3; j++)
            key[n++] = junk++;
        for (uint32_t m = 0; fresh && m < 10; m++) {
            add_key(key, &n, 20, new_key(zipf(cumnew, 20, &rng)));
        }
        if (slda_subjects_add(s, key, n, fresh ? 7 : (uint32_t)(key[0] % 5), (int64_t)d)) {
            size_t m;
            const slda_subject_t *sj = slda_subjects_found(s, &m);
            for (size_t i = 0; i < m && nout < max; i++) {
                at[nout] = d + 1;
                out[nout++] = sj[i];
            }
        }
    }
    slda_subjects_destroy(s);
    return nout;
}

/* A table that prunes at every block's end finds what an unbounded one does: the window's
 * documents follow their words to their new slots (they kept the old slots, so the words a
 * subject was made of were other words' counts). */
static void test_prune(void)
{
    slda_subject_t a[8], b[8];
    uint64_t at_a[8], at_b[8];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    size_t na = junk_stream(1000000, a, 8, at_a), nb = junk_stream(5000, b, 8, at_b);
    CHECK_TRUE(na >= 1, "the new words are a subject (%zu)", na);
    CHECK_INT(nb, na);
    for (size_t i = 0; i < na && i < nb; i++)
        CHECK_TRUE(!memcmp(&a[i], &b[i], sizeof a[i]) && at_a[i] == at_b[i],
                   "subject %zu the same with a table that prunes (first word %llx / %llx, "
                   "%u / %u documents)", i, (unsigned long long)a[i].key[0],
                   (unsigned long long)b[i].key[0], a[i].docs, b[i].docs);
}

static void test_capacity(void)
{
    found_t f[8];
    uint64_t skipped = 0;
    size_t n = stream(2, 6 * BLOCK, UINT64_MAX, 16, f, 8, &skipped);
    CHECK_INT(n, 0);
    CHECK_TRUE(skipped > 100000, "a table of 16 words skips the others (%llu)",
               (unsigned long long)skipped);
    CHECK_TRUE(slda_subjects_new(0, 100) == NULL, "block 0: off");
}

int main(void)
{
    test_stationary();
    test_new_subject();
    test_prune();
    test_capacity();
    return slda_test_done("unit_subject");
}
