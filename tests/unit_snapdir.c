/* unit_snapdir.c - snapshot directories: names, parsing, listing one model in update order,
 * names of other models and look-alikes ignored, pruning to the newest N with their states
 * (and states whose snapshot is missing). */
#include "io/snapdir.h"
#include "testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;

static void touch(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_TRUE(slda_test_write_file(path, "x") == 0, "cannot write %s", path);
}

static int exists(const char *name)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static void test_names(void)
{
    char buf[256];
    CHECK_INT(slda_snapdir_name(buf, sizeof buf, "news", 1200), 30);
    CHECK_STR(buf, "news-00000000000000001200.slda");
    slda_snapdir_name(buf, sizeof buf, "m", UINT64_MAX);
    CHECK_STR(buf, "m-18446744073709551615.slda");
    slda_snapdir_path(buf, sizeof buf, "/a/b", "news", 0);
    CHECK_STR(buf, "/a/b/news-00000000000000000000.slda");
    slda_snapdir_track_path(buf, sizeof buf, "/a/b/news-00000000000000000007.slda");
    CHECK_STR(buf, "/a/b/news-00000000000000000007.slda.track.json");
    /* truncated as snprintf truncates, the length wanted returned */
    char small[8];
    CHECK_INT(slda_snapdir_name(small, sizeof small, "news", 5), 30);
    CHECK_STR(small, "news-00");
}

static void test_parse(void)
{
    size_t mlen = 0;
    uint64_t t = 0;
    CHECK_INT(slda_snapdir_parse("news-00000000000000001200.slda", &mlen, &t), 1);
    CHECK_INT(mlen, 4);
    CHECK_EQ(t, 1200);
    CHECK_INT(slda_snapdir_parse("m-18446744073709551615.slda", &mlen, &t), 1);
    CHECK_EQ(t, UINT64_MAX);
    /* the model is everything before the last "-<20 digits>.slda", dashes and digits too */
    CHECK_INT(slda_snapdir_parse("a-00000000000000000001-00000000000000000002.slda", &mlen, &t),
              1);
    CHECK_INT(mlen, 22);
    CHECK_EQ(t, 2);
    /* look-alikes */
    static const char *const no[] = {
        "news-1200.slda",                          /* not 20 digits */
        "news-0000000000000000001200.slda",        /* 22 digits */
        "news-0000000000000000120x.slda",          /* a letter among the digits */
        "news-00000000000000001200.sld",           /* another extension */
        "news-00000000000000001200.slda.tmp.42",   /* a writer's temp file */
        "news-00000000000000001200.slda.track.json", /* the tracker's state */
        "news_00000000000000001200.slda",          /* no dash */
        "-00000000000000001200.slda",              /* no model */
        "news-18446744073709551616.slda",          /* 2^64: no writer makes it */
        "news-99999999999999999999.slda",
        "notes.slda",
        ".slda",
        "",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK_TRUE(!slda_snapdir_parse(no[i], &mlen, &t), "\"%s\" parsed as a snapshot name",
                   no[i]);
    /* "news-00" is a model of its own */
    CHECK_INT(slda_snapdir_parse("news-00-00000000000000000001.slda", &mlen, &t), 1);
    CHECK_INT(mlen, 7);
    CHECK_EQ(t, 1);
}

static void test_match(void)
{
    const char *snap = "news-00000000000000001200.slda";
    CHECK_INT(slda_snapdir_match(snap, "news", ""), 1);
    CHECK_INT(slda_snapdir_match(snap, "new", ""), 0);
    CHECK_INT(slda_snapdir_match(snap, "news-0", ""), 0);
    CHECK_INT(slda_snapdir_match("a-00000000000000000001-00000000000000000002.slda", "a", ""), 0);
    CHECK_INT(slda_snapdir_match("news-00000000000000001200.slda.tmp.7", "news", ""), 0);
    CHECK_INT(slda_snapdir_match("news-00000000000000001200.slda.tmp.7", "news", ".tmp."), 1);
    CHECK_INT(slda_snapdir_is_temp("news-00000000000000001200.slda.tmp.7", "news"), 1);
    CHECK_INT(slda_snapdir_is_temp("news-00000000000000001200.slda.track.json.tmp.7", "news"), 1);
    CHECK_INT(slda_snapdir_is_temp("news-00000000000000001200.slda.track.json", "news"), 0);
    CHECK_INT(slda_snapdir_is_temp(snap, "news"), 0);
    CHECK_INT(slda_snapdir_is_temp("sport-00000000000000001200.slda.tmp.7", "news"), 0);
    CHECK_INT(slda_snapdir_is_temp("news-1200.slda.tmp.7", "news"), 0);
}

/* A directory of two models, their states, temp files and look-alikes. */
static void fill(void)
{
    static const char *const files[] = {
        "news-00000000000000000030.slda", "news-00000000000000000030.slda.track.json",
        "news-00000000000000000010.slda", "news-00000000000000000010.slda.track.json",
        "news-00000000000000000200.slda", /* no state */
        "news-00000000000000000020.slda", "news-00000000000000000020.slda.track.json",
        "news-00000000000000000040.slda", "news-00000000000000000040.slda.track.json",
        "sport-00000000000000000025.slda", "sport-00000000000000000025.slda.track.json",
        "sport-00000000000000000005.slda",
        "news-sport-00000000000000000015.slda", /* model "news-sport" */
        "news-00000000000000000050.slda.tmp.123", "news-00000000000000000050.slda.track.json.tmp.9",
        "news-50.slda", "notes.slda", "news-0000000000000000005x.slda", "news.lock", "README",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        touch(files[i]);
}

static void test_list(void)
{
    char err[512] = "";
    slda_snapdir_list_t list;
    CHECK_OK(slda_snapdir_list(&list, dir, "news", err, sizeof err), err);
    static const uint64_t want[] = {10, 20, 30, 40, 200}; /* numerically, oldest first */
    CHECK_INT(list.n, 5);
    for (size_t i = 0; i < list.n && i < 5; i++) {
        char name[64], path[4200];
        slda_snapdir_name(name, sizeof name, "news", want[i]);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        CHECK_EQ(list.ents[i].updates, want[i]);
        CHECK_STR(list.ents[i].model, "news");
        CHECK_STR(list.ents[i].file, name);
        CHECK_STR(list.ents[i].path, path);
    }
    CHECK_INT(list.nodd, 0); /* only a scan collects odd names */
    slda_snapdir_list_clear(&list);
    CHECK_INT(list.n, 0);

    CHECK_OK(slda_snapdir_list(&list, dir, "sport", err, sizeof err), err);
    CHECK_INT(list.n, 2);
    if (list.n == 2) {
        CHECK_EQ(list.ents[0].updates, 5);
        CHECK_EQ(list.ents[1].updates, 25);
    }
    slda_snapdir_list_clear(&list);
    CHECK_OK(slda_snapdir_list(&list, dir, "news-sport", err, sizeof err), err);
    CHECK_INT(list.n, 1);
    slda_snapdir_list_clear(&list);
    CHECK_OK(slda_snapdir_list(&list, dir, "nobody", err, sizeof err), err);
    CHECK_INT(list.n, 0);
    slda_snapdir_list_clear(&list);

    /* a scan: every model's snapshots, and the other .slda names */
    CHECK_OK(slda_snapdir_scan(&list, dir, err, sizeof err), err);
    CHECK_INT(list.n, 8);
    size_t news = 0, sport = 0, both = 0;
    for (size_t i = 0; i < list.n; i++) {
        news += !strcmp(list.ents[i].model, "news");
        sport += !strcmp(list.ents[i].model, "sport");
        both += !strcmp(list.ents[i].model, "news-sport");
    }
    CHECK_INT(news, 5);
    CHECK_INT(sport, 2);
    CHECK_INT(both, 1);
    CHECK_INT(list.nodd, 3);
    for (size_t i = 0; i < list.nodd; i++)
        CHECK_TRUE(!strcmp(list.odd[i], "news-50.slda") || !strcmp(list.odd[i], "notes.slda") ||
                       !strcmp(list.odd[i], "news-0000000000000000005x.slda"),
                   "odd name %s", list.odd[i]);
    slda_snapdir_sort(list.ents, list.n);
    for (size_t i = 1; i < list.n; i++)
        CHECK_LE(list.ents[i - 1].updates, list.ents[i].updates);
    slda_snapdir_list_clear(&list);

    /* a directory that cannot be read */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    CHECK_ERR(slda_snapdir_list(&list, missing, "news", err, sizeof err), SLDA_ERR_IO, err);
    CHECK_CONTAINS(err, "snapshot directory \"");
    CHECK_CONTAINS(err, "/missing\": No such file or directory");
    CHECK_INT(list.n, 0);
    slda_snapdir_list_clear(&list);
}

typedef struct seen_s {
    uint64_t removed[16];
    size_t nremoved, nerrors;
} seen_t;

static int prunable_not_20(void *opaque, uint64_t updates)
{
    (void)opaque;
    return updates != 20; /* as the service: a snapshot not known to load is never touched */
}

static void on_removed(void *opaque, uint64_t updates, const char *error)
{
    seen_t *seen = opaque;
    if (error)
        seen->nerrors++;
    else if (seen->nremoved < 16)
        seen->removed[seen->nremoved++] = updates;
}

static void test_prune(void)
{
    char err[512] = "";
    seen_t seen = {{0}, 0, 0};
    slda_snapdir_prune_cb_t cb = {prunable_not_20, on_removed, &seen};
    /* keep 2 of the prunable 10, 30, 40, 200: 40 and 200 stay, 30 and 10 go (newest first) */
    CHECK_OK(slda_snapdir_prune(dir, "news", 2, &cb, err, sizeof err), err);
    CHECK_INT(seen.nremoved, 2);
    CHECK_EQ(seen.removed[0], 30);
    CHECK_EQ(seen.removed[1], 10);
    CHECK_INT(seen.nerrors, 0);
    CHECK(exists("news-00000000000000000200.slda"));
    CHECK(exists("news-00000000000000000040.slda"));
    CHECK(exists("news-00000000000000000040.slda.track.json"));
    CHECK(exists("news-00000000000000000020.slda")); /* not prunable */
    CHECK(exists("news-00000000000000000020.slda.track.json"));
    CHECK(!exists("news-00000000000000000030.slda"));
    CHECK(!exists("news-00000000000000000030.slda.track.json"));
    CHECK(!exists("news-00000000000000000010.slda"));
    CHECK(!exists("news-00000000000000000010.slda.track.json"));
    /* other models, temp files and look-alikes untouched */
    static const char *const kept[] = {
        "sport-00000000000000000025.slda", "sport-00000000000000000025.slda.track.json",
        "sport-00000000000000000005.slda", "news-sport-00000000000000000015.slda",
        "news-00000000000000000050.slda.tmp.123", "news-00000000000000000050.slda.track.json.tmp.9",
        "news-50.slda", "notes.slda", "news-0000000000000000005x.slda", "news.lock", "README",
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        CHECK_TRUE(exists(kept[i]), "%s was removed", kept[i]);

    /* every snapshot prunable (cb NULL), keep 1: the newest stays with its state */
    CHECK_OK(slda_snapdir_prune(dir, "news", 1, NULL, err, sizeof err), err);
    CHECK(exists("news-00000000000000000200.slda"));
    CHECK(!exists("news-00000000000000000040.slda"));
    CHECK(!exists("news-00000000000000000040.slda.track.json"));
    CHECK(!exists("news-00000000000000000020.slda"));
    CHECK(!exists("news-00000000000000000020.slda.track.json"));
    CHECK(exists("sport-00000000000000000005.slda"));

    /* a file that cannot be removed (a non-empty directory by a snapshot's name) is reported
     * and left; the others are still pruned */
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/news-00000000000000000100.slda", dir);
    CHECK_INT(mkdir(sub, 0777), 0);
    snprintf(sub, sizeof sub, "%s/news-00000000000000000100.slda/x", dir);
    CHECK_INT(slda_test_write_file(sub, "x"), 0);
    touch("news-00000000000000000090.slda");
    touch("news-00000000000000000090.slda.track.json");
    seen_t seen2 = {{0}, 0, 0};
    slda_snapdir_prune_cb_t cb2 = {NULL, on_removed, &seen2};
    CHECK_ERR(slda_snapdir_prune(dir, "news", 1, &cb2, err, sizeof err), SLDA_ERR_IO, err);
    CHECK_CONTAINS(err, "cannot remove ");
    CHECK_CONTAINS(err, "news-00000000000000000100.slda: ");
    CHECK_INT(seen2.nerrors, 1);
    CHECK_INT(seen2.nremoved, 1);
    CHECK_EQ(seen2.removed[0], 90);
    CHECK(!exists("news-00000000000000000090.slda"));
    CHECK(!exists("news-00000000000000000090.slda.track.json"));
    CHECK(exists("news-00000000000000000200.slda"));
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/news-00000000000000000100.slda", dir);
    rmdir(sub);

    /* tracker states without their snapshot (a writer that failed or died between the two:
     * the service writes the state first) go with the next pruning, older or newer than the
     * snapshots kept; a state with its snapshot, another model's and temp files stay */
    touch("news-00000000000000000150.slda.track.json");
    touch("news-00000000000000000300.slda.track.json");
    touch("news-00000000000000000200.slda.track.json");
    touch("sport-00000000000000000099.slda.track.json");
    CHECK_OK(slda_snapdir_prune(dir, "news", 1, NULL, err, sizeof err), err);
    CHECK(!exists("news-00000000000000000150.slda.track.json"));
    CHECK(!exists("news-00000000000000000300.slda.track.json"));
    CHECK(exists("news-00000000000000000200.slda"));
    CHECK(exists("news-00000000000000000200.slda.track.json"));
    CHECK(exists("sport-00000000000000000099.slda.track.json"));
    CHECK(exists("news-00000000000000000050.slda.track.json.tmp.9"));
}

/* snapshot.history: 3,000 snapshots (every 10 updates) arrive one at a time and the directory
 * is thinned after each, as the service prunes: never more than keep + history, the first
 * snapshot always kept, and at the end the kept ones spread over the whole run: one in each
 * halving of the age, [span/2^(i+1), span/2^i), down to the dense recent ones. history 0 is
 * the old rule (the newest keep). */
static void test_thin(void)
{
    enum { N = 3000, KEEP = 3, HIST = 10 };
    uint64_t *u = malloc(N * sizeof *u), *nu = malloc(N * sizeof *nu);
    unsigned char *stay = malloc(N);
    size_t n = 0, most = 0, first_kept = 1;
    for (size_t a = 0; a < N; a++) {
        memmove(u + 1, u, n * sizeof *u); /* newest first */
        u[0] = 10 * (a + 1);
        n++;
        slda_snapdir_thin(u, n, KEEP, HIST, stay);
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (stay[j])
                nu[m++] = u[j];
        memcpy(u, nu, m * sizeof *u);
        n = m;
        most = n > most ? n : most;
        first_kept &= u[n - 1] == 10;
    }
    printf("thinned over %d snapshots: at most %zu kept, now %zu:", N, most, n);
    for (size_t j = 0; j < n; j++)
        printf(" %" PRIu64, u[j]);
    printf("\n");
    CHECK_LE(most, (size_t)(KEEP + HIST));
    CHECK_INT(first_kept, 1);
    CHECK_INT(u[0], 10 * N);
    CHECK_INT(u[KEEP - 1], 10 * (N - KEEP + 1)); /* the newest keep, dense */
    uint64_t span = u[0] - 10;
    for (int i = 0; i < 4; i++) {
        int found = 0;
        for (size_t j = 0; j < n; j++) {
            uint64_t age = u[0] - u[j];
            found |= age >= span >> (i + 1) && age < (span >> i) + (i == 0);
        }
        CHECK_TRUE(found, "no snapshot kept with an age in [span/%d, span/%d)", 2 << i, 1 << i);
    }
    slda_snapdir_thin(u, n, KEEP, 0, stay);
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        m += stay[j];
    CHECK_INT(m, KEEP);
    free(u);
    free(nu);
    free(stay);
}

static void test_make_check(void)
{
    char err[512] = "", path[4200];
    snprintf(path, sizeof path, "%s/made", dir);
    CHECK_OK(slda_snapdir_make("--snapshot-dir", path, err, sizeof err), err);
    CHECK_OK(slda_snapdir_make("--snapshot-dir", path, err, sizeof err), err); /* again: there */
    CHECK_OK(slda_snapdir_check(path, "news", err, sizeof err), err);
    CHECK(rmdir(path) == 0); /* the check created nothing in it */
    snprintf(path, sizeof path, "%s/no/such", dir);
    CHECK_ERR(slda_snapdir_make("--snapshot-dir", path, err, sizeof err), SLDA_ERR_IO, err);
    CHECK_CONTAINS(err, "--snapshot-dir \"");
    CHECK_CONTAINS(err, "/no/such\": No such file or directory");
    snprintf(path, sizeof path, "%s/README", dir);
    CHECK_ERR(slda_snapdir_make("--snapshot-dir", path, err, sizeof err), SLDA_ERR_IO, err);
    CHECK_CONTAINS(err, "/README\": not a directory");
    /* a directory where the first snapshot's name is taken by a directory */
    snprintf(path, sizeof path, "%s/news-00000000000000000000.slda", dir);
    CHECK_INT(mkdir(path, 0777), 0);
    CHECK_ERR(slda_snapdir_check(dir, "news", err, sizeof err), SLDA_ERR_IO, err);
    CHECK_CONTAINS(err, "snapshot \"");
    CHECK_CONTAINS(err, "news-00000000000000000000.slda\": cannot write: Is a directory");
    rmdir(path);
}

int main(void)
{
    dir = slda_test_tmpdir();
    test_names();
    test_parse();
    test_match();
    fill();
    test_list();
    test_prune();
    test_thin();
    test_make_check();
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
    return slda_test_done("unit_snapdir");
}
