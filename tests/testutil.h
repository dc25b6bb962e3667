/* testutil.h - assertions that print what they compared, and small fixtures. */
#ifndef SLDA_TESTUTIL_H
#define SLDA_TESTUTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamlda.h"

extern int slda_test_failures;

/* Every check prints, when it fails, file:line, the expression and the values it compared.
 * CHECK(cond) prints only the expression: for a predicate whose text says everything. */

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

/* Numbers of any arithmetic type compared as long double, which holds every 64-bit integer
 * and every double exactly (x86-64, aarch64): CHECK_EQ .. CHECK_GE print both values. */
#define SLDA_CHECK_CMP_(a, op, b)                                                      \
    do {                                                                               \
        long double va_ = (long double)(a), vb_ = (long double)(b);                    \
        if (!(va_ op vb_))                                                             \
            slda_test_fail_cmp(__FILE__, __LINE__, #a, #op, #b, va_, vb_);             \
    } while (0)
#define CHECK_EQ(a, b) SLDA_CHECK_CMP_(a, ==, b)
#define CHECK_NE(a, b) SLDA_CHECK_CMP_(a, !=, b)
#define CHECK_LT(a, b) SLDA_CHECK_CMP_(a, <, b)
#define CHECK_LE(a, b) SLDA_CHECK_CMP_(a, <=, b)
#define CHECK_GT(a, b) SLDA_CHECK_CMP_(a, >, b)
#define CHECK_GE(a, b) SLDA_CHECK_CMP_(a, >=, b)
/* Any condition, with a printf-style message of the values behind it. */
#define CHECK_TRUE(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond))                                                                   \
            slda_test_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                    \
    } while (0)
#define CHECK_NULL(p)                                                                  \
    do {                                                                               \
        const void *vp_ = (const void *)(p);                                           \
        if (vp_) {                                                                     \
            fprintf(stderr, "%s:%d: %s == NULL failed: %p\n", __FILE__, __LINE__, #p,  \
                    vp_);                                                              \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
#define CHECK_NONNULL(p)                                                               \
    do {                                                                               \
        if (!(p)) {                                                                    \
            fprintf(stderr, "%s:%d: %s != NULL failed: NULL\n", __FILE__, __LINE__, #p);\
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
/* Pointers: the same object (CHECK_PTR_EQ) or not (CHECK_PTR_NE). */
#define SLDA_CHECK_PTR_(a, op, b)                                                      \
    do {                                                                               \
        const void *va_ = (const void *)(a), *vb_ = (const void *)(b);                 \
        if (!(va_ op vb_)) {                                                           \
            fprintf(stderr, "%s:%d: %s %s %s failed: %p vs %p\n", __FILE__, __LINE__,  \
                    #a, #op, #b, va_, vb_);                                            \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
#define CHECK_PTR_EQ(a, b) SLDA_CHECK_PTR_(a, ==, b)
#define CHECK_PTR_NE(a, b) SLDA_CHECK_PTR_(a, !=, b)
/* A call returning slda_err_t: SLDA_OK (CHECK_OK), or the error wanted (CHECK_ERR); a failure
 * prints the error names and errstr, the message buffer the call filled ("" for a call
 * without one). */
#define CHECK_OK(call, errstr) CHECK_ERR(call, SLDA_OK, errstr)
#define CHECK_ERR(call, want, errstr)                                                  \
    do {                                                                               \
        slda_err_t ve_ = (slda_err_t)(call), vw_ = (slda_err_t)(want);                 \
        if (ve_ != vw_) {                                                              \
            fprintf(stderr, "%s:%d: %s failed: %s, wanted %s: \"%s\"\n", __FILE__,       \
                    __LINE__, #call, slda_err_name(ve_), slda_err_name(vw_), (errstr)); \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)
/* n bytes equal; a failure prints the first byte that differs. */
#define CHECK_MEM(a, b, n)                                                             \
    do {                                                                               \
        const unsigned char *va_ = (const unsigned char *)(a);                         \
        const unsigned char *vb_ = (const unsigned char *)(b);                         \
        size_t vn_ = (size_t)(n), vi_ = 0;                                             \
        while (vi_ < vn_ && va_[vi_] == vb_[vi_])                                      \
            vi_++;                                                                     \
        if (vi_ < vn_) {                                                               \
            fprintf(stderr, "%s:%d: %s == %s (%zu bytes) failed: byte %zu is 0x%02x vs " \
                    "0x%02x\n", __FILE__, __LINE__, #a, #b, vn_, vi_, va_[vi_], vb_[vi_]); \
            slda_test_failures++;                                                      \
        }                                                                              \
    } while (0)

/* Count a failure of CHECK_EQ .. CHECK_GE and print both values: integers in full, other
 * numbers to 17 significant digits. */
void slda_test_fail_cmp(const char *file, int line, const char *a, const char *op, const char *b,
                        long double va, long double vb);
/* Count a failure and print "file:line: expr failed: " and the message (CHECK_TRUE). */
void slda_test_fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Print a summary line and return the exit code for main. */
int slda_test_done(const char *name);
/* A fresh temporary directory (under $TMPDIR or /tmp), malloc'ed path. */
char *slda_test_tmpdir(void);
/* Run a shell command (printf-style); its standard output into *out (malloc'ed; out may be
 * NULL), its exit status returned (128 when it did not exit). */
int slda_test_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write prefix then n spelt in letters a-z (tokenizers keep letters; digits
 * may split or drop a token) and a space into buf (cap >= 4 bytes), NUL
 * terminated; returns the characters written, the NUL not counted. */
size_t slda_test_spell(char *buf, size_t cap, char prefix, uint64_t n);
/* Write a string to a file; returns 0 on success. */
int slda_test_write_file(const char *path, const char *content);
/* The tokens a tokenizer hands its callback (slda_token_cb): joined by '|' in out (those that
 * fit), how many, how many empty, the longest's bytes. Zero it before use. */
typedef struct slda_test_tokens_s {
    char out[8192];
    size_t len, longest;
    int calls, empty;
} slda_test_tokens_t;
void slda_test_on_token(const char *tok, size_t len, void *opaque);

#endif
