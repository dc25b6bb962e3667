/* icu.h - ICU behind a few calls (icu.c): version, NFKC_Casefold, a word break iterator per thread. */
#ifndef SLDA_ICU_H
#define SLDA_ICU_H

#include "core/utf8.h"

#include <stddef.h>
#include <stdint.h>

/* A thread's ICU state (one per thread, made on first use, freed when the
 * thread exits): its word break iterator and scratch buffers. raw holds a
 * chunk of text in UTF-16 with off[k] the byte offset in the source of raw[k]
 * (cap units each); norm holds the chunk after slda_icu_fold (ncap units). */
typedef struct slda_icu_scratch_s {
    void *bi;          /* UBreakIterator * (word rules, root locale) */
    uint16_t *raw;
    uint32_t *off;
    size_t cap;
    uint16_t *norm;
    size_t ncap;
} slda_icu_scratch_t;

/* The calling thread's scratch (never NULL). */
slda_icu_scratch_t *slda_icu_scratch(void);
/* Room for n UTF-16 units in raw and off (contents kept). */
void slda_icu_reserve(slda_icu_scratch_t *sc, size_t n);
/* NFKC_Casefold of src[0..n) into sc->norm; returns its length in units. */
size_t slda_icu_fold(slda_icu_scratch_t *sc, const uint16_t *src, size_t n);
/* NFKC_Casefold of valid UTF-8 in[0..len) as UTF-8 in *out (malloc'ed,
 * NUL-terminated); returns its length. */
size_t slda_icu_fold_utf8(const char *in, size_t len, char **out);
/* The ICU major version this program runs with (72 for ICU 72.1). */
uint32_t slda_icu_major(void);

#endif /* SLDA_ICU_H */
