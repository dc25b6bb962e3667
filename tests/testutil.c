/* testutil.c - shared test helpers: summary line, temporary files. */
#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int slda_test_failures = 0;

static void print_number(long double v)
{
    if (v == truncl(v) && fabsl(v) < 1e20L)
        fprintf(stderr, "%.0Lf", v);
    else
        fprintf(stderr, "%.17Lg", v);
}

void slda_test_fail_cmp(const char *file, int line, const char *a, const char *op, const char *b,
                        long double va, long double vb)
{
    fprintf(stderr, "%s:%d: %s %s %s failed: ", file, line, a, op, b);
    print_number(va);
    fputs(" vs ", stderr);
    print_number(vb);
    fputc('\n', stderr);
    slda_test_failures++;
}

void slda_test_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: %s failed: ", file, line, expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    slda_test_failures++;
}

int slda_test_done(const char *name)
{
    if (slda_test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, slda_test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

char *slda_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/slda-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        perror("mkdtemp");
        exit(1);
    }
    return path;
}

int slda_test_run(char **out, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    size_t len = 0, cap = 4096, n;
    char *buf = malloc(cap);
    while (p && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int st = p ? pclose(p) : -1;
    if (out)
        *out = buf;
    else
        free(buf);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

void slda_test_on_token(const char *tok, size_t len, void *opaque)
{
    slda_test_tokens_t *c = opaque;
    c->empty += len == 0;
    if (len > c->longest)
        c->longest = len;
    if (c->len + len + 2 < sizeof c->out) {
        if (c->calls)
            c->out[c->len++] = '|';
        memcpy(c->out + c->len, tok, len);
        c->len += len;
        c->out[c->len] = '\0';
    }
    c->calls++;
}

int slda_test_write_file(const char *path, const char *content)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(content);
    int rc = fwrite(content, 1, n, f) == n ? 0 : -1;
    if (fclose(f))
        rc = -1;
    return rc;
}

size_t slda_test_spell(char *buf, size_t cap, char prefix, uint64_t n)
{
    size_t len = 0;
    buf[len++] = prefix;
    do {
        buf[len++] = (char)('a' + n % 26);
        n /= 26;
    } while (n && len + 2 < cap);
    buf[len++] = ' ';
    buf[len] = '\0';
    return len;
}
