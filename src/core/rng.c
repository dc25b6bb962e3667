/* rng.c - xoshiro256** seeded with splitmix64: fast, seedable, identical everywhere. */
#include "core/slda_int.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void slda_rng_seed(slda_rng_t *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

void slda_rng_seed3(slda_rng_t *rng, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a;
    uint64_t h = splitmix64(&x);
    x = h ^ b;
    h = splitmix64(&x);
    x = h ^ c;
    slda_rng_seed(rng, splitmix64(&x));
}

uint32_t slda_rng_below(slda_rng_t *rng, uint32_t n)
{
    /* Lemire's multiply-shift; the bias (< n / 2^32) is irrelevant here. */
    return (uint32_t)(((slda_rng_next(rng) >> 32) * (uint64_t)n) >> 32);
}
