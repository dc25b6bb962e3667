/* icu.c - ICU behind a few calls: its version, NFKC with full case folding, a word break iterator per thread.
 *
 * Only this file and segment.c include ICU's headers. The normaliser
 * (NFKC_Casefold: compatibility forms, full case folding, default ignorables
 * such as ZWJ, ZWNJ, soft hyphen and variation selectors removed) is a
 * process-wide read-only ICU singleton. A break iterator is not thread-safe,
 * so each thread opens its own on first use (word rules of the root locale:
 * UAX #29 with ICU's dictionaries for Chinese/Japanese, Thai, Lao, Khmer and
 * Burmese) and keeps it, with its scratch buffers, until the thread exits
 * (a pthread key's destructor closes it). Nothing here holds a tokenizer's
 * state: the iterator's rules do not depend on any text.* setting.
 */
#include "text/icu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
    slda_icu_scratch_t *sc = p;
    if (!sc)
        return;
    if (sc->bi)
        ubrk_close(sc->bi);
    free(sc->raw);
    free(sc->off);
    free(sc->norm);
    free(sc);
}

static void scratch_key_make(void)
{
    if (pthread_key_create(&scratch_key, scratch_free) != 0)
        abort();
}

uint32_t slda_icu_major(void)
{
    UVersionInfo v;
    u_getVersion(v);
    return v[0];
}

slda_icu_scratch_t *slda_icu_scratch(void)
{
    slda_icu_scratch_t *sc;
    pthread_once(&scratch_once, scratch_key_make);
    sc = pthread_getspecific(scratch_key);
    if (sc)
        return sc;
    sc = slda_xcalloc(1, sizeof *sc);
    UErrorCode st = U_ZERO_ERROR;
    sc->bi = ubrk_open(UBRK_WORD, "", NULL, 0, &st);
    if (U_FAILURE(st)) /* ICU's data is part of libicudata: missing only if broken */
        abort(); /* ICU without its data: a broken installation, as fatal as no memory */
    pthread_setspecific(scratch_key, sc);
    return sc;
}

void slda_icu_reserve(slda_icu_scratch_t *sc, size_t n)
{
    if (n <= sc->cap)
        return;
    size_t cap = sc->cap ? sc->cap : 256;
    while (cap < n)
        cap *= 2;
    sc->raw = slda_xrealloc(sc->raw, cap * sizeof *sc->raw);
    sc->off = slda_xrealloc(sc->off, (cap + 1) * sizeof *sc->off);
    sc->cap = cap;
}

size_t slda_icu_fold(slda_icu_scratch_t *sc, const uint16_t *src, size_t n)
{
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2 *nfkc_cf = unorm2_getNFKCCasefoldInstance(&st);
    if (U_FAILURE(st))
        abort(); /* ICU without its data: a broken installation, as fatal as no memory */
    if (sc->ncap < 2 * n + 16) {
        sc->ncap = 2 * n + 16;
        sc->norm = slda_xrealloc(sc->norm, sc->ncap * sizeof *sc->norm);
    }
    for (;;) {
        st = U_ZERO_ERROR;
        int32_t m = unorm2_normalize(nfkc_cf, (const UChar *)src, (int32_t)n, sc->norm,
                                     (int32_t)sc->ncap, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR) { /* NFKC can expand a code point 18-fold */
            sc->ncap = (size_t)m + 16;
            sc->norm = slda_xrealloc(sc->norm, sc->ncap * sizeof *sc->norm);
            continue;
        }
        return U_FAILURE(st) ? 0 : (size_t)m;
    }
}

size_t slda_icu_fold_utf8(const char *in, size_t len, char **out)
{
    slda_icu_scratch_t *sc = slda_icu_scratch();
    size_t n = 0, i = 0, m, o = 0;
    slda_icu_reserve(sc, len + 1);
    while (i < len) {
        uint32_t cp = slda_utf8_decode((const unsigned char *)in, &i);
        if (cp >= 0x10000) {
            sc->raw[n++] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
            sc->raw[n++] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            sc->raw[n++] = (uint16_t)cp;
        }
    }
    m = slda_icu_fold(sc, sc->raw, n);
    *out = slda_xmalloc(3 * m + 1);
    for (size_t k = 0; k < m; k++) {
        uint32_t cp = sc->norm[k];
        if (cp >= 0xD800 && cp < 0xDC00 && k + 1 < m && sc->norm[k + 1] >= 0xDC00 &&
            sc->norm[k + 1] < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (sc->norm[k + 1] - 0xDC00u);
            k++;
        }
        o += slda_utf8_encode(cp, *out + o);
    }
    (*out)[o] = '\0';
    return o;
}
