/* testutil.h - assertions that print what they compared, and small fixtures. */
#ifndef SLDA_TESTUTIL_H
#define SLDA_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int slda_test_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
#define CHECK_INT(a, b)                                                                \
    do {                                                                               \
        long long va_ = (long long)(a), vb_ = (long long)(b);                          \
        if (va_ != vb_) {                                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,        \
                    __LINE__, #a, #b, va_, vb_);                                       \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                          \
    do {                                                                               \
        double va_ = (double)(a), vb_ = (double)(b), vt_ = (double)(tol);              \
        if (!(fabs(va_ - vb_) <= vt_)) {                                               \
            fprintf(stderr, "%s:%d: |%s - %s| <= %s failed: %.9g vs %.9g (tol %.3g)\n",\
                    __FILE__, __LINE__, #a, #b, #tol, va_, vb_, vt_);                  \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
#define CHECK_STR(a, b)                                                                \
    do {                                                                               \
        const char *va_ = (a), *vb_ = (b);                                             \
        if (!va_ || !vb_ || strcmp(va_, vb_)) {                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,    \
                    __LINE__, #a, #b, va_ ? va_ : "(null)", vb_ ? vb_ : "(null)");     \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                                    \
    do {                                                                               \
        const char *vh_ = (hay), *vn_ = (needle);                                      \
        if (!vh_ || !strstr(vh_, vn_)) {                                               \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__,       \
                    __LINE__, vh_ ? vh_ : "(null)", vn_);                              \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)

/* Print a summary line and return the exit code for main. */
int slda_test_done(const char *name);
/* A fresh temporary directory (under $TMPDIR or /tmp), malloc'ed path. */
char *slda_test_tmpdir(void);
/* Write prefix then n spelt in letters a-z (tokenizers keep letters; digits
 * may split or drop a token) and a space into buf (cap >= 4 bytes), NUL
 * terminated; returns the characters written, the NUL not counted. */
size_t slda_test_spell(char *buf, size_t cap, char prefix, uint64_t n);
/* Write a string to a file; returns 0 on success. */
int slda_test_write_file(const char *path, const char *content);

#endif
