/* replay.c - runs a fuzz target without libFuzzer: corpus files, their mutations, generated inputs.
 *
 * Usage: fuzz_replay_<target> [--emit DIR] PATH...
 * Every regular file named on the command line, or found directly inside a
 * directory named there (in name order), goes to LLVMFuzzerTestOneInput as
 * is, then as a few deterministic variants: prefixes, single-byte changes
 * and a doubled copy. Then come generated inputs: the empty input, each
 * single byte, pseudo-random buffers from a fixed seed, and whatever the
 * target's slda_fuzz_generate() hands over. So the same targets run as plain
 * ctest tests, with the same invariant checks, in every build. With --emit,
 * the target's generated inputs are also written to DIR (to refresh a seed
 * corpus); nothing else changes.
 *
 * Exit status: 0 when every input ran (a broken invariant or a sanitizer
 * finding aborts the process), 2 on a usage error or an empty corpus.
 */
#include "fuzzutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Variants of each corpus file (bounded so a test stays within seconds). */
#define MAX_PREFIXES 48
#define MAX_BYTE_EDITS 192
#define RANDOM_INPUTS 256
#define RANDOM_MAX_LEN 512

__attribute__((weak)) void slda_fuzz_generate(slda_fuzz_feed_fn feed)
{
    (void)feed;
}

static unsigned long long ninputs;
static const char *emit_dir;
static unsigned emitted;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void) /* splitmix64: deterministic, no dependency */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One input, in its own heap buffer of exactly size bytes so ASan sees any
 * over-read. */
static void run(const uint8_t *data, size_t size)
{
    static const uint8_t empty[1];
    uint8_t *copy;
    ninputs++;
    if (size == 0) {
        LLVMFuzzerTestOneInput(empty, 0);
        return;
    }
    copy = malloc(size);
    if (!copy) {
        fprintf(stderr, "replay: out of memory for %zu bytes\n", size);
        exit(1);
    }
    memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
}

static void run_variants(const uint8_t *data, size_t size);

/* A target's generated input: run like a corpus file (with its variants). */
static void feed_generated(const uint8_t *data, size_t size, const char *label)
{
    if (emit_dir) {
        char path[4200];
        FILE *f;
        snprintf(path, sizeof path, "%s/gen-%03u-%s", emit_dir, emitted++, label);
        f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
            fprintf(stderr, "replay: cannot write %s: %s\n", path, strerror(errno));
            exit(1);
        }
    }
    run_variants(data, size);
}

/* The file itself, then its prefixes, byte edits and a doubled copy. */
static void run_variants(const uint8_t *data, size_t size)
{
    static const uint8_t edits[] = {0x00, 0xff, 0x7f, 0x80, 0xc0, '"', '\\', '\n', '{', ':'};
    uint8_t *buf = malloc(2 * size + 1);
    size_t step;
    if (!buf) {
        fprintf(stderr, "replay: out of memory\n");
        exit(1);
    }
    run(data, size);
    step = size / MAX_PREFIXES + 1;
    for (size_t n = 0; n < size; n += step)
        run(data, n);
    for (unsigned i = 0; size > 0 && i < MAX_BYTE_EDITS; i++) {
        size_t at = (size_t)(rng_next() % size);
        uint64_t r = rng_next();
        memcpy(buf, data, size);
        if (r & 1)
            buf[at] ^= (uint8_t)(1u << ((r >> 1) % 8));
        else
            buf[at] = edits[(r >> 1) % sizeof edits];
        run(buf, size);
    }
    memcpy(buf, data, size);
    memcpy(buf + size, data, size);
    run(buf, 2 * size);
    free(buf);
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    if (!f || !buf) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        free(buf);
        if (f)
            fclose(f);
        return -1;
    }
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
        if (!buf) {
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    *out = buf;
    *len = n;
    return 0;
}

static int run_file(const char *path)
{
    uint8_t *data;
    size_t len;
    if (read_file(path, &data, &len) != 0)
        return -1;
    run_variants(data, len);
    free(data);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file directly in dir, in name order; returns how many. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    long done = 0;
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(path);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (run_file(names[i]) == 0)
            done++;
        else
            done = -1 - (long)n; /* stays negative: an unreadable file is an error */
        free(names[i]);
    }
    free(names);
    return done;
}

static void run_generated(void)
{
    uint8_t buf[RANDOM_MAX_LEN];
    run(buf, 0);
    for (unsigned b = 0; b < 256; b++) {
        buf[0] = (uint8_t)b;
        run(buf, 1);
    }
    for (unsigned i = 0; i < RANDOM_INPUTS; i++) {
        size_t len = (size_t)(rng_next() % RANDOM_MAX_LEN);
        uint64_t r = rng_next();
        for (size_t k = 0; k < len; k++) {
            if (k % 8 == 0)
                r = rng_next();
            /* Half the buffers are printable ASCII, where text and JSON live. */
            buf[k] = (i & 1) ? (uint8_t)(0x20 + (r & 0xff) % 0x5f) : (uint8_t)(r & 0xff);
            r >>= 8;
        }
        run(buf, len);
    }
    slda_fuzz_generate(feed_generated);
}

int main(int argc, char **argv)
{
    long files = 0;
    int bad = 0, paths = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "--emit") == 0 && i + 1 < argc) {
            emit_dir = argv[++i];
            continue;
        }
        paths++;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            long n = run_dir(argv[i]);
            if (n <= 0) {
                fprintf(stderr, "replay: %s: %s\n", argv[i],
                        n == 0 ? "no corpus files" : "unreadable corpus file");
                bad = 1;
            } else {
                files += n;
            }
        } else if (run_file(argv[i]) == 0) {
            files++;
        } else {
            bad = 1;
        }
    }
    if (paths == 0) {
        fprintf(stderr, "usage: %s [--emit DIR] CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    run_generated();
    printf("%s: %ld corpus files, %llu inputs, all invariants held%s\n", argv[0], files,
           ninputs, bad ? " (but see the errors above)" : "");
    return bad ? 2 : 0;
}
