/* 0071-track_diff.c - `streamlda diff`: identical snapshots pair every topic with itself at
 * distance 0; a copy whose topics were permuted (and whose words carry other ids) is recovered
 * exactly; two seeds of the same corpus pair up with small distances; different K leaves the
 * extra topics unmatched; unreadable snapshots and bad usage give exit codes 1 and 2.
 *
 * Models are trained by the program (`streamlda train` on examples/janeausten); the permuted
 * copy is made here through the library, the output read back with the JSON parser.
 */
#include "core/json.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <sys/wait.h>

static char errbuf[1024];
static const char *S, *SRC;
static char *T;

static double num(const slda_json_t *js, uint32_t node)
{
    if (node == SLDA_JSON_NONE || js->nodes[node].type != SLDA_JSON_NUMBER)
        return NAN;
    return strtod(js->src + js->nodes[node].start, NULL);
}

static double get(const slda_json_t *js, uint32_t obj, const char *key)
{
    return num(js, slda_json_object_get(js, obj, key));
}

/* diff --json A B parsed into js (text owned by *text). */
static int diff_json(slda_json_t *js, char **text, const char *a, const char *b)
{
    int rc = slda_test_run(text, "\"%s\" diff --json \"%s/%s\" \"%s/%s\" 2>%s/err", S, T, a, T, b,
                           T);
    CHECK_INT(rc, 0);
    if (slda_json_parse(js, *text, strlen(*text), errbuf, sizeof errbuf) != SLDA_OK) {
        fprintf(stderr, "diff %s %s: not JSON (%s): %.300s\n", a, b, errbuf, *text);
        slda_test_failures++;
        return -1;
    }
    return 0;
}

/* A copy of `from` with topic k = from's topic perm[k], its words added in reverse order. */
static void write_permuted(const char *from, const char *to, const uint32_t *perm)
{
    slda_model_t *m = slda_snapshot_read(from, NULL, errbuf, sizeof errbuf);
    CHECK_TRUE(m != NULL, "%s", errbuf);
    if (!m)
        return;
    slda_conf_t *conf = slda_conf_new();
    char kbuf[16];
    snprintf(kbuf, sizeof kbuf, "%u", m->K);
    slda_conf_set(conf, "topics", kbuf, errbuf, sizeof errbuf);
    slda_model_t *c = slda_model_new(conf, errbuf, sizeof errbuf);
    slda_conf_destroy(conf);
    uint32_t n;
    uint32_t *held = slda_model_ids_held(m, &n);
    for (uint32_t x = n; x-- > 0;) {
        const char *w = slda_model_word(m, held[x]);
        uint32_t id = slda_vocab_get_or_add(c->vocab, w, strlen(w), NULL);
        CHECK_NE(id, UINT32_MAX);
        for (uint32_t k = 0; k < m->K; k++)
            c->A[(size_t)id * c->Kp + k] = m->A[(size_t)held[x] * m->Kp + perm[k]];
        slda_model_mark_row(c, id);
    }
    c->sigma = m->sigma;
    for (uint32_t k = 0; k < m->K; k++) {
        c->NZ[k] = m->NZ[perm[k]];
        c->alpha[k] = m->alpha[perm[k]];
    }
    CHECK_OK(slda_snapshot_write(c, to, errbuf, sizeof errbuf), errbuf);
    free(held);
    slda_model_destroy(c);
    slda_model_destroy(m);
}

int main(void)
{
    S = getenv("STREAMLDA");
    SRC = getenv("SLDA_SOURCE_DIR");
    if (!S || !SRC) {
        fprintf(stderr, "STREAMLDA and SLDA_SOURCE_DIR must be set\n");
        return 1;
    }
    T = slda_test_tmpdir();
    const char *austen = "examples/janeausten/northangerabbey.txt examples/janeausten/persuasion.txt";
    CHECK_INT(slda_test_run(NULL,
                            "cd \"%s\" && \"%s\" train -q -k 10 -X seed=1 "
                            "-o \"%s/a.slda\" %s 2>/dev/null",
                            SRC, S, T, austen),
              0);
    CHECK_INT(slda_test_run(NULL,
                            "cd \"%s\" && \"%s\" train -q -k 10 -X seed=2 "
                            "-o \"%s/b.slda\" %s 2>/dev/null",
                            SRC, S, T, austen),
              0);
    CHECK_INT(slda_test_run(NULL,
                            "cd \"%s\" && \"%s\" train -q -k 6 -X seed=3 "
                            "-o \"%s/c.slda\" %s 2>/dev/null",
                            SRC, S, T, austen),
              0);
    const uint32_t perm[10] = {7, 2, 9, 0, 4, 1, 8, 3, 6, 5};
    char from[4200], to[4200];
    snprintf(from, sizeof from, "%s/a.slda", T);
    snprintf(to, sizeof to, "%s/p.slda", T);
    write_permuted(from, to, perm);

    slda_json_t js;
    char *text;
    slda_json_init(&js);

    /* identical */
    if (diff_json(&js, &text, "a.slda", "a.slda") == 0) {
        uint32_t sum = slda_json_object_get(&js, 0, "summary");
        CHECK_INT(get(&js, sum, "pairs"), 10);
        CHECK_INT(get(&js, sum, "identical"), 10);
        CHECK_INT(get(&js, sum, "moved"), 0);
        CHECK_EQ(get(&js, sum, "max_js"), 0.0);
        uint32_t pairs = slda_json_object_get(&js, 0, "pairs"), p = slda_json_first(&js, pairs);
        for (uint32_t i = 0; i < js.nodes[pairs].size; i++, p = js.nodes[p].next) {
            CHECK_INT(get(&js, p, "a"), get(&js, p, "b"));
            CHECK_EQ(get(&js, p, "js"), 0.0);
        }
    }
    free(text);

    /* permuted: a's topic i is p's topic j with perm[j] == i, at distance 0 */
    if (diff_json(&js, &text, "a.slda", "p.slda") == 0) {
        uint32_t sum = slda_json_object_get(&js, 0, "summary");
        CHECK_INT(get(&js, sum, "identical"), 10);
        CHECK_INT(get(&js, sum, "moved"), 10 - 1); /* perm[4] == 4 */
        uint32_t pairs = slda_json_object_get(&js, 0, "pairs"), p = slda_json_first(&js, pairs);
        CHECK_INT(js.nodes[pairs].size, 10);
        for (uint32_t i = 0; i < js.nodes[pairs].size; i++, p = js.nodes[p].next) {
            int a = (int)get(&js, p, "a"), b = (int)get(&js, p, "b");
            CHECK_GE(b, 0);
            CHECK_LT(b, 10);
            if (b >= 0 && b < 10)
                CHECK_INT(perm[b], a);
            CHECK_EQ(get(&js, p, "js"), 0.0);
            CHECK_INT(js.nodes[slda_json_object_get(&js, p, "gained")].size, 0);
            CHECK_INT(js.nodes[slda_json_object_get(&js, p, "lost")].size, 0);
        }
    }
    free(text);

    /* two seeds: every topic paired, distances in (0, 1), and the pairing beats the identity */
    if (diff_json(&js, &text, "a.slda", "b.slda") == 0) {
        uint32_t sum = slda_json_object_get(&js, 0, "summary");
        CHECK_INT(get(&js, sum, "pairs"), 10);
        CHECK_INT(get(&js, sum, "identical"), 0);
        CHECK_GT(get(&js, sum, "mean_js"), 0);
        CHECK_LT(get(&js, sum, "max_js"), 1);
        CHECK_INT(get(&js, sum, "unmatched_a"), 0);
    }
    free(text);

    /* K=10 against K=6: six pairs, four topics of a unmatched */
    if (diff_json(&js, &text, "a.slda", "c.slda") == 0) {
        uint32_t sum = slda_json_object_get(&js, 0, "summary");
        CHECK_INT(get(&js, sum, "pairs"), 6);
        CHECK_INT(get(&js, sum, "unmatched_a"), 4);
        CHECK_INT(get(&js, sum, "unmatched_b"), 0);
        CHECK_INT(js.nodes[slda_json_object_get(&js, 0, "unmatched_a")].size, 4);
    }
    free(text);
    /* ... and the other way round, as text */
    CHECK_INT(slda_test_run(&text, "\"%s\" diff \"%s/c.slda\" \"%s/a.slda\"", S, T, T), 0);
    CHECK_CONTAINS(text, "summary pairs=6 ");
    CHECK_CONTAINS(text, "unmatched_a=0 unmatched_b=4");
    CHECK_CONTAINS(text, "unmatched b ");
    free(text);

    /* a corrupt and a missing snapshot: exit 1, the path named; usage: exit 2 */
    snprintf(to, sizeof to, "%s/bad.slda", T);
    slda_test_write_file(to, "SLDASNAP not really a snapshot, long enough to be checked");
    CHECK_INT(slda_test_run(&text, "\"%s\" diff \"%s/a.slda\" \"%s/bad.slda\" 2>&1", S, T, T), 1);
    CHECK_CONTAINS(text, "bad.slda");
    free(text);
    CHECK_INT(slda_test_run(&text, "\"%s\" diff \"%s/missing.slda\" \"%s/a.slda\" 2>&1", S, T, T),
              1);
    CHECK_CONTAINS(text, "missing.slda");
    free(text);
    CHECK_INT(slda_test_run(NULL, "\"%s\" diff \"%s/a.slda\" 2>/dev/null", S, T), 2);
    CHECK_INT(slda_test_run(NULL, "\"%s\" diff --top x \"%s/a.slda\" \"%s/a.slda\" 2>/dev/null", S,
                            T, T),
              2);

    slda_json_clear(&js);
    slda_test_run(NULL, "rm -rf \"%s\"", T);
    free(T);
    return slda_test_done("0071-track_diff");
}
