/* alloc.c - the two allocation paths: small ones abort, model-sized ones fail softly.
 *
 * A failed small allocation (a token, a document, a config string) leaves no
 * sensible way on, so it prints the size and aborts. Model-sized arrays (K x W)
 * return NULL with the size in errstr, so an impossible K or W fails at start-up
 * with a message instead of mid-stream.
 *
 * Model-sized arrays are zeroed. From 1 MiB on they are mapped anonymous
 * memory, which the kernel hands out zeroed page by page as it is first
 * touched: the open vocabulary's 131,072 x K rows (58 MB at K=100) cost
 * nothing until rows are used, and are touched by the thread that uses
 * them, instead of one memset on the main thread at start. A 64-byte header
 * before the block records how it was allocated, for slda_big_free.
 *
 * Arrays that grow (the minibatch's accumulator, the slices, a local step's
 * document rows) are mapped from their first size on and grow by mremap
 * (slda_big_grow): the pages they touched move with them, no copy and no new
 * fault, and capacity never used is never touched. Allocating each new size
 * zeroed (memset) and copying faulted every page in again, at about 1.5 us
 * a page on these machines: a KOS run's faults 4,138 -> 3,277 with one
 * thread, 5,196 -> 3,866 with two.
 */
#include "core/slda_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BIG_HEADER 64                 /* keeps the 64-byte alignment */
#define BIG_MMAP_MIN ((size_t)1 << 20) /* from here on: mapped memory */

static void oom(size_t n)
{
    fprintf(stderr, "streamlda: out of memory allocating %zu bytes\n", n);
    abort();
}

void *slda_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *slda_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *slda_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *slda_xstrdup(const char *s)
{
    return slda_xstrndup(s, strlen(s));
}

char *slda_xstrndup(const char *s, size_t n)
{
    char *p = slda_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* The header: the block's size in bytes (header included), and whether it is mapped. */
typedef struct big_header_s {
    size_t total;
    int mapped;
} big_header_t;

static void *big_map(size_t total)
{
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void *big_block(void *p, size_t total, int mapped)
{
    big_header_t *h = p;
    h->total = total;
    h->mapped = mapped;
    return (char *)p + BIG_HEADER;
}

/* A block of n bytes with its header, rounded to 64 bytes, in *total; 0 when
 * that overflows. */
static int big_total(size_t n, size_t *total)
{
    size_t rounded = (n + 63) & ~(size_t)63;
    *total = rounded + BIG_HEADER;
    return rounded >= n && *total >= rounded;
}

void *slda_big_alloc(size_t n, const char *what, char *errstr, size_t errstr_size)
{
    void *p = NULL;
    size_t total;
    if (!big_total(n, &total))
        goto fail;
    if (total >= BIG_MMAP_MIN) {
        if (!(p = big_map(total)))
            goto fail;
        return big_block(p, total, 1);
    }
    if (posix_memalign(&p, 64, total) != 0)
        goto fail;
    memset(p, 0, total);
    return big_block(p, total, 0);
fail:
    slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM, "%s: cannot allocate %zu bytes", what, n);
    return NULL;
}

void *slda_big_grow(void *q, size_t n)
{
    size_t total;
    if (!big_total(n, &total))
        oom(n);
    if (!q) {
        void *p = big_map(total);
        if (!p)
            oom(n);
        return big_block(p, total, 1);
    }
    big_header_t *h = (big_header_t *)((char *)q - BIG_HEADER);
    if (total <= h->total)
        return q;
    if (h->mapped) {
        void *p = mremap(h, h->total, total, MREMAP_MAYMOVE);
        if (p == MAP_FAILED)
            oom(n);
        return big_block(p, total, 1);
    }
    void *p = big_map(total); /* a block of slda_big_alloc's: mapped from now on */
    if (!p)
        oom(n);
    memcpy((char *)p + BIG_HEADER, q, h->total - BIG_HEADER);
    slda_big_free(q);
    return big_block(p, total, 1);
}

void slda_big_free(void *q)
{
    if (!q)
        return;
    big_header_t *h = (big_header_t *)((char *)q - BIG_HEADER);
    if (h->mapped)
        munmap(h, h->total);
    else
        free(h);
}

char *slda_read_all(FILE *f, size_t *len)
{
    size_t cap = 65536, n;
    char *buf = slda_xmalloc(cap + 1);
    *len = 0;
    while ((n = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += n;
        if (*len == cap) {
            cap *= 2;
            buf = slda_xrealloc(buf, cap + 1);
        }
    }
    buf[*len] = '\0';
    return buf;
}
