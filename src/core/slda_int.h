/* slda_int.h - internal types shared by the streamlda modules (not installed). */
#ifndef SLDA_INT_H
#define SLDA_INT_H

#include "streamlda.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- alloc.c: small allocations abort with the size; model-sized ones fail softly ---- */
void *slda_xmalloc(size_t n);
void *slda_xcalloc(size_t n, size_t size);
void *slda_xrealloc(void *p, size_t n);
char *slda_xstrdup(const char *s);
char *slda_xstrndup(const char *s, size_t n);
/* The rest of f, malloc'ed (NUL-terminated, never NULL), its length in *len;
 * check ferror(f) for a read error. */
char *slda_read_all(FILE *f, size_t *len);
/* 64-byte aligned, zeroed; NULL (and errstr "<what>: cannot allocate N bytes") on failure. */
void *slda_big_alloc(size_t n, const char *what, char *errstr, size_t errstr_size);
/* p (a block of slda_big_alloc or slda_big_grow, or NULL) grown to at least n bytes, its
 * contents kept and the rest zero; never shrinks; aborts when it cannot, as slda_xrealloc. */
void *slda_big_grow(void *p, size_t n);
void slda_big_free(void *p);

/* ---- err.c ---- */
/* snprintf into errstr (if errstr_size > 0); returns err. */
slda_err_t slda_set_err(char *errstr, size_t errstr_size, slda_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- hash.c: the only file that includes xxhash.h ---- */
uint64_t slda_hash64(const void *data, size_t len, uint64_t seed);

/* ---- rng.c: xoshiro256** seeded by splitmix64 ---- */
typedef struct slda_rng_s {
    uint64_t s[4];
} slda_rng_t;
void slda_rng_seed(slda_rng_t *rng, uint64_t seed);
/* Seed from several values (e.g. seed, update number, document index). */
void slda_rng_seed3(slda_rng_t *rng, uint64_t a, uint64_t b, uint64_t c);
static inline uint64_t slda_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}
static inline uint64_t slda_rng_next(slda_rng_t *rng) /* inline: the samplers draw per token */
{
    uint64_t *s = rng->s;
    uint64_t result = slda_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = slda_rng_rotl(s[3], 45);
    return result;
}
static inline float slda_rng_float(slda_rng_t *rng) /* uniform [0,1) */
{
    return (float)(slda_rng_next(rng) >> 40) * (1.0f / 16777216.0f);
}
static inline double slda_rng_double(slda_rng_t *rng) /* uniform [0,1) */
{
    return (double)(slda_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}
uint32_t slda_rng_below(slda_rng_t *rng, uint32_t n);

/* ---- clock.c: wall-clock ms since the epoch (recorded times), monotonic seconds
 * (durations) ---- */
int64_t slda_now_ms(void);
double slda_mono_s(void);

/* ---- mathx.c ---- */
double slda_digamma(double x);

#endif /* SLDA_INT_H */
