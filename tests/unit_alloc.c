/* unit_alloc.c - model-sized blocks (alloc.c): slda_big_alloc zeroed and aligned,
 * slda_big_grow keeping contents and zeroing the rest, from NULL, from a small
 * (malloc'ed) block and from a mapped one, never shrinking; and a mapped block
 * growing without faulting its touched pages in again (the accumulator's and the
 * local step's growth: about 1.5 us a fault on these machines). */
#include "core/slda_int.h"
#include "testutil.h"

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
}

/* The offset of the first byte of p[0..n) that is not zero, n if none: CHECK_EQ(.., n). */
static size_t nonzero_at(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return i;
    return n;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

/* The offset of the first byte of p[0..n) that fill(p, n, seed) did not write, n if none. */
static size_t unfilled_at(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 31 + seed))
            return i;
    return n;
}

static void test_alloc(void)
{
    char err[128] = "";
    size_t sizes[] = {1, 100, 4096, 300000, (size_t)3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = slda_big_alloc(sizes[i], "test", err, sizeof err);
        CHECK_TRUE(p != NULL, "%s", err);
        CHECK_INT((uintptr_t)p % 64, 0);
        CHECK_EQ(nonzero_at(p, sizes[i]), sizes[i]);
        fill(p, sizes[i], 1);
        slda_big_free(p);
    }
    slda_big_free(NULL);
    CHECK_NULL(slda_big_alloc(SIZE_MAX - 8, "huge", err, sizeof err));
    CHECK_CONTAINS(err, "huge: cannot allocate");
}

static void test_grow(void)
{
    /* from NULL, then through sizes: contents kept, the rest zero */
    size_t steps[] = {1000, 50000, 50000, 200000, (size_t)5 << 20, (size_t)9 << 20};
    unsigned char *p = NULL;
    size_t have = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        p = slda_big_grow(p, steps[i]);
        CHECK_NONNULL(p);
        CHECK_INT((uintptr_t)p % 64, 0);
        CHECK_EQ(unfilled_at(p, have, 7), have);
        CHECK_EQ(nonzero_at(p + have, steps[i] - have), steps[i] - have);
        fill(p, steps[i], 7);
        have = steps[i];
    }
    CHECK_PTR_EQ(slda_big_grow(p, 10), p); /* never shrinks */
    CHECK_EQ(unfilled_at(p, have, 7), have);
    slda_big_free(p);

    /* a block of slda_big_alloc's, small (malloc'ed) then mapped */
    char err[128];
    unsigned char *q = slda_big_alloc(3000, "test", err, sizeof err);
    fill(q, 3000, 3);
    q = slda_big_grow(q, 70000);
    CHECK_EQ(unfilled_at(q, 3000, 3), 3000);
    CHECK_EQ(nonzero_at(q + 3000, 70000 - 3000), 70000 - 3000);
    slda_big_free(q);
    q = slda_big_alloc((size_t)2 << 20, "test", err, sizeof err);
    fill(q, (size_t)2 << 20, 5);
    q = slda_big_grow(q, (size_t)6 << 20);
    CHECK_EQ(unfilled_at(q, (size_t)2 << 20, 5), (size_t)2 << 20);
    CHECK_EQ(nonzero_at(q + ((size_t)2 << 20), (size_t)4 << 20), (size_t)4 << 20);
    slda_big_free(q);
}

/* Growing a mapped block moves its pages: touching the old part again is no
 * fault, and the new part is not touched until used (allocating the new size
 * and copying faulted the old part in again: 1,024 faults here). */
static void test_grow_keeps_pages(void)
{
    size_t old = (size_t)4 << 20;
    unsigned char *p = slda_big_grow(NULL, old);
    memset(p, 1, old); /* every page touched */
    long f0 = faults();
    p = slda_big_grow(p, (size_t)16 << 20);
    size_t sum = 0;
    for (size_t i = 0; i < old; i += 4096) {
        p[i] ^= 2;
        sum += p[i];
    }
    long f1 = faults();
    CHECK_INT(sum, 3 * (old / 4096));
    /* a few (and with AddressSanitizer 128 more, its shadow of the moved pages), not 1,024 */
    CHECK_LT(f1 - f0, 256);
    if (f1 - f0 >= 256)
        fprintf(stderr, "unit_alloc: %ld faults after growing 4 MB touched\n", f1 - f0);
    slda_big_free(p);
}

int main(void)
{
    test_alloc();
    test_grow();
    test_grow_keeps_pages();
    return slda_test_done("unit_alloc");
}
