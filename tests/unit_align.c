/* unit_align.c - src/track/align.c: the Hungarian assignment against brute force (square,
 * rectangular, ties), Jensen-Shannon distance properties, and topic alignment between models
 * (identical topics at distance 0, a permuted copy with other word ids recovered exactly,
 * top-M lists against full rows).
 */
#include "track/align.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <stdint.h>

static char errbuf[1024];

/* ---- assignment ---- */

/* Smallest total over every injection of the smaller side into the larger (brute force). */
static double brute_rec(const double *c, uint32_t n, uint32_t m, uint32_t i, uint32_t used)
{
    if (i == n)
        return 0;
    double best = INFINITY;
    for (uint32_t j = 0; j < m; j++) {
        if (used & (1u << j))
            continue;
        double v = c[i * m + j] + brute_rec(c, n, m, i + 1, used | (1u << j));
        if (v < best)
            best = v;
    }
    return best;
}

static double brute(const double *c, uint32_t n, uint32_t m)
{
    if (n <= m)
        return brute_rec(c, n, m, 0, 0);
    double t[64];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < m; j++)
            t[j * n + i] = c[i * m + j];
    return brute_rec(t, m, n, 0, 0);
}

/* The assignment is one-to-one, has min(n, m) pairs, and its cost is what was returned. */
static void check_valid(const double *c, uint32_t n, uint32_t m, const int32_t *r2c, double total)
{
    uint32_t pairs = 0, seen = 0;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (r2c[i] < 0)
            continue;
        CHECK_LT(r2c[i], (int32_t)m);
        CHECK_TRUE(!(seen & (1u << r2c[i])), "column %d given to row %u and an earlier one",
                   r2c[i], i);
        seen |= 1u << r2c[i];
        sum += c[i * m + (uint32_t)r2c[i]];
        pairs++;
    }
    CHECK_INT(pairs, n < m ? n : m);
    CHECK_NEAR(sum, total, 1e-9);
}

static void test_assign_known(void)
{
    /* rows 0->1, 1->0, 2->2: 1 + 2 + 2 = 5 (the greedy row minima 1, 0 collide on column 1) */
    const double c[9] = {4, 1, 3, 2, 0, 5, 3, 2, 2};
    int32_t r2c[3];
    double total = slda_align_assign(c, 3, 3, r2c);
    CHECK_NEAR(total, 5, 1e-12);
    CHECK_INT(r2c[0], 1);
    CHECK_INT(r2c[1], 0);
    CHECK_INT(r2c[2], 2);

    /* 2 x 3: row 0 -> 2 (1), row 1 -> 0 (2); column 1 left over */
    const double w[6] = {5, 9, 1, 2, 3, 8};
    int32_t r2[2];
    CHECK_NEAR(slda_align_assign(w, 2, 3, r2), 3, 1e-12);
    CHECK_INT(r2[0], 2);
    CHECK_INT(r2[1], 0);

    /* 3 x 2 (the transpose): row 1 gets nothing */
    const double t[6] = {5, 2, 9, 3, 1, 8};
    int32_t r3[3];
    CHECK_NEAR(slda_align_assign(t, 3, 2, r3), 3, 1e-12);
    CHECK_INT(r3[0], 1);
    CHECK_INT(r3[1], -1);
    CHECK_INT(r3[2], 0);

    /* all ties: any permutation is optimal; it must still be one */
    double z[16];
    for (int i = 0; i < 16; i++)
        z[i] = 0.25;
    int32_t r4[4];
    double total4 = slda_align_assign(z, 4, 4, r4);
    check_valid(z, 4, 4, r4, total4);
    CHECK_NEAR(total4, 1.0, 1e-12);

    /* empty sides */
    int32_t r5[2] = {7, 7};
    CHECK_NEAR(slda_align_assign(NULL, 2, 0, r5), 0, 0);
    CHECK_INT(r5[0], -1);
    CHECK_INT(r5[1], -1);
}

static void test_assign_random(void)
{
    slda_rng_t rng;
    slda_rng_seed(&rng, 7);
    int bad = 0;
    for (int trial = 0; trial < 600; trial++) {
        uint32_t n = 1 + (uint32_t)(slda_rng_next(&rng) % 6), m = 1 + (uint32_t)(slda_rng_next(&rng) % 6);
        double c[36];
        int ties = trial % 2; /* half the matrices from {0..3}: many ties */
        for (uint32_t i = 0; i < n * m; i++)
            c[i] = ties ? (double)(slda_rng_next(&rng) % 4) : slda_rng_float(&rng) * 10 - 3;
        int32_t r2c[6];
        double total = slda_align_assign(c, n, m, r2c);
        int before = slda_test_failures;
        check_valid(c, n, m, r2c, total);
        double want = brute(c, n, m);
        CHECK_NEAR(total, want, 1e-9);
        if (slda_test_failures != before && bad++ < 3)
            fprintf(stderr, "  trial %d: %ux%u\n", trial, n, m);
    }
}

/* ---- Jensen-Shannon ---- */

static void test_js(void)
{
    const double p[2] = {1, 0}, q[2] = {0.5, 0.5}, r[2] = {0, 1};
    /* JSD = (KL(p||m) + KL(q||m)) / 2 with m = (0.75, 0.25), in bits */
    double want = sqrt(0.5 * (log2(4.0 / 3) + 0.5 * log2(2.0 / 3) + 0.5 * log2(2.0)));
    CHECK_NEAR(slda_js_distance(p, q, 2), want, 1e-12);
    CHECK_NEAR(slda_js_distance(q, p, 2), want, 1e-12);
    CHECK_NEAR(slda_js_distance(p, r, 2), 1.0, 1e-12); /* disjoint supports: the maximum */
    CHECK_EQ(slda_js_distance(q, q, 2), 0.0);

    slda_rng_t rng;
    slda_rng_seed(&rng, 11);
    for (int trial = 0; trial < 200; trial++) {
        double a[8], b[8], c[8], sa = 0, sb = 0, sc = 0;
        for (int i = 0; i < 8; i++) {
            a[i] = slda_rng_float(&rng) * (i % 3 != 0);
            b[i] = slda_rng_float(&rng);
            c[i] = slda_rng_float(&rng) * (i % 2);
            sa += a[i], sb += b[i], sc += c[i];
        }
        for (int i = 0; i < 8; i++)
            a[i] /= sa, b[i] /= sb, c[i] /= sc;
        double ab = slda_js_distance(a, b, 8), ba = slda_js_distance(b, a, 8);
        double bc = slda_js_distance(b, c, 8), ac = slda_js_distance(a, c, 8);
        CHECK_EQ(ab, ba);                /* symmetric */
        CHECK_GT(ab, 0);
        CHECK_LE(ab, 1);                 /* bounded */
        CHECK_LE(ac, ab + bc + 1e-12);   /* a metric: triangle inequality */
        CHECK_EQ(slda_js_distance(a, a, 8), 0.0);
    }
}

/* ---- models ---- */

#define NTHEMES 5
static const char *themes[NTHEMES] = {
    "apple banana cherry fruit orchard pear juice harvest plum grape",
    "engine piston turbine motor gearbox fuel torque diesel exhaust valve",
    "violin cello orchestra symphony concerto sonata melody tempo conductor opera",
    "goal striker referee penalty stadium league match keeper tackle offside",
    "senate ballot election candidate vote campaign governor congress poll debate"};

/* A K=5 model trained on documents drawn from the five themes. */
static slda_model_t *train_themes(uint64_t seed)
{
    slda_conf_t *conf = slda_conf_new();
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)seed);
    CHECK_OK(slda_conf_set(conf, "topics", "5", errbuf, sizeof errbuf), errbuf);
    CHECK_OK(slda_conf_set(conf, "seed", sbuf, errbuf, sizeof errbuf), errbuf);
    CHECK_OK(slda_conf_set(conf, "text.stopwords", "none", errbuf, sizeof errbuf), errbuf);
    CHECK_OK(slda_conf_set(conf, "threads", "1", errbuf, sizeof errbuf), errbuf);
    /* the plain global step these seeds were chosen with: under global.rows=counts
     * seed 1 merges two themes (a pair at distance 0.505) */
    CHECK_OK(slda_conf_set(conf, "global.rows", "decay", errbuf, sizeof errbuf), errbuf);
    /* and each update applied before the next minibatch, as then (with global.stale=1
     * one theme of seeds 1/2 is no longer 0.3 farther from the others than from its match) */
    CHECK_OK(slda_conf_set(conf, "global.stale", "0", errbuf, sizeof errbuf), errbuf);
    slda_model_t *model = slda_model_new(conf, errbuf, sizeof errbuf);
    CHECK_TRUE(model != NULL, "%s", errbuf);
    slda_rng_t rng;
    slda_rng_seed(&rng, seed + 100);
    slda_doc_t docs[50];
    for (int batch = 0; batch < 40; batch++) {
        for (int d = 0; d < 50; d++) {
            char text[512];
            const char *t = themes[slda_rng_next(&rng) % NTHEMES];
            snprintf(text, sizeof text, "%s %s", t, t);
            slda_doc_init(&docs[d]);
            CHECK_OK(slda_doc_from_text(model, text, strlen(text), &docs[d], errbuf, sizeof errbuf),
                     errbuf);
        }
        CHECK_OK(slda_model_train(model, docs, 50, NULL, NULL, errbuf, sizeof errbuf), errbuf);
        slda_docs_clear(docs, 50);
    }
    slda_model_flush(model);
    slda_conf_destroy(conf);
    return model;
}

/* A copy of model whose topic k is model's topic perm[k], with every word given another id
 * (the vocabulary is filled in reverse order first). */
static slda_model_t *permuted_copy(const slda_model_t *model, const uint32_t *perm)
{
    slda_conf_t *conf = slda_conf_new();
    CHECK_OK(slda_conf_set(conf, "topics", "5", errbuf, sizeof errbuf), errbuf);
    CHECK_OK(slda_conf_set(conf, "text.stopwords", "none", errbuf, sizeof errbuf), errbuf);
    slda_model_t *copy = slda_model_new(conf, errbuf, sizeof errbuf);
    slda_conf_destroy(conf);
    uint32_t n;
    uint32_t *held = slda_model_ids_held(model, &n);
    for (uint32_t x = n; x-- > 0;) {
        const char *w = slda_model_word(model, held[x]);
        slda_doc_t doc;
        slda_doc_init(&doc);
        CHECK_OK(slda_doc_from_text(copy, w, strlen(w), &doc, errbuf, sizeof errbuf), errbuf);
        slda_doc_clear(&doc);
    }
    int moved = 0;
    for (uint32_t x = 0; x < n; x++) {
        const char *w = slda_model_word(model, held[x]);
        uint32_t id = slda_model_word_id(copy, w, strlen(w));
        CHECK_NE(id, UINT32_MAX);
        moved += id != held[x];
        for (uint32_t k = 0; k < 5; k++)
            copy->A[(size_t)id * copy->Kp + k] = model->A[(size_t)held[x] * model->Kp + perm[k]];
        slda_model_mark_row(copy, id);
    }
    CHECK_GT(moved, 0); /* the ids really differ */
    copy->sigma = model->sigma;
    for (uint32_t k = 0; k < 5; k++) {
        copy->NZ[k] = model->NZ[perm[k]];
        copy->alpha[k] = model->alpha[perm[k]];
    }
    free(held);
    return copy;
}

/* The exact full-row distance of topic i of a and topic j of b over the union of their words
 * (matched by string), with slda_js_distance: what the tabulated matrix must reproduce. */
static double exact_full(const slda_model_t *a, uint32_t i, const slda_model_t *b, uint32_t j)
{
    uint32_t na, nb;
    uint32_t *ha = slda_model_ids_held(a, &na), *hb = slda_model_ids_held(b, &nb);
    double *p = calloc(na + nb + 1, sizeof *p), *q = calloc(na + nb + 1, sizeof *q);
    double da = a->NZ[i] + slda_model_smoothing_words(a) * a->p.eta;
    double db = b->NZ[j] + slda_model_smoothing_words(b) * b->p.eta;
    size_t n = 0;
    for (uint32_t x = 0; x < na; x++, n++) {
        const char *w = slda_model_word(a, ha[x]);
        uint32_t ob = slda_model_word_id(b, w, strlen(w));
        p[n] = (a->sigma * a->A[(size_t)ha[x] * a->Kp + i] + a->p.eta) / da;
        q[n] = ob == UINT32_MAX ? 0 : (b->sigma * b->A[(size_t)ob * b->Kp + j] + b->p.eta) / db;
    }
    for (uint32_t x = 0; x < nb; x++) {
        const char *w = slda_model_word(b, hb[x]);
        if (slda_model_word_id(a, w, strlen(w)) != UINT32_MAX)
            continue;
        q[n++] = (b->sigma * b->A[(size_t)hb[x] * b->Kp + j] + b->p.eta) / db;
    }
    double d = slda_js_distance(p, q, n);
    free(ha);
    free(hb);
    free(p);
    free(q);
    return d;
}

static void test_models(void)
{
    slda_model_t *a = train_themes(1), *b = train_themes(2);
    double d[25], full[25];
    int32_t r2c[5];

    /* identical: every diagonal pair at exactly 0, the identity recovered */
    CHECK_OK(slda_align_distances(a, a, SLDA_ALIGN_TOP_DEFAULT, d, errbuf, sizeof errbuf), errbuf);
    for (uint32_t k = 0; k < 5; k++) {
        CHECK_EQ(d[k * 5 + k], 0.0);
        for (uint32_t j = 0; j < 5; j++)
            /* the themes share no word */
            CHECK_TRUE(j == k || d[k * 5 + j] > 0.5, "d[%u][%u] = %g", k, j, d[k * 5 + j]);
    }
    slda_align_assign(d, 5, 5, r2c);
    for (uint32_t k = 0; k < 5; k++)
        CHECK_INT(r2c[k], k);

    /* a permuted copy with other word ids: recovered exactly, at distance 0 */
    const uint32_t perm[5] = {3, 0, 4, 1, 2};
    slda_model_t *p = permuted_copy(a, perm);
    for (uint32_t top = 0; top <= 10; top += 5) {
        CHECK_OK(slda_align_distances(a, p, top, d, errbuf, sizeof errbuf), errbuf);
        double total = slda_align_assign(d, 5, 5, r2c);
        CHECK_EQ(total, 0.0);
        for (uint32_t k = 0; k < 5; k++) {
            CHECK_INT(perm[r2c[k]], k); /* a's topic k is the copy's topic j with perm[j] == k */
            CHECK_EQ(d[k * 5 + (uint32_t)r2c[k]], 0.0);
        }
    }

    /* two seeds learn the same five themes in some order: each pair close, the rest far */
    CHECK_OK(slda_align_distances(a, b, SLDA_ALIGN_TOP_DEFAULT, d, errbuf, sizeof errbuf), errbuf);
    CHECK_OK(slda_align_distances(a, b, 0, full, errbuf, sizeof errbuf), errbuf);
    slda_align_assign(d, 5, 5, r2c);
    for (uint32_t k = 0; k < 5; k++) {
        double dk = d[k * 5 + (uint32_t)r2c[k]];
        double far = 1;
        for (uint32_t j = 0; j < 5; j++)
            if ((int32_t)j != r2c[k] && d[k * 5 + j] < far)
                far = d[k * 5 + j];
        if (getenv("ALIGN_DEBUG"))
            fprintf(stderr, "a %u -> b %d: %.3f, nearest other %.3f\n", k, r2c[k], dk, far);
        CHECK_LT(dk, 0.45);
        CHECK_GT(far, dk + 0.3);
        for (uint32_t j = 0; j < 5; j++) {
            /* a top-M list is a coarse-graining: never above the full rows' distance */
            CHECK_LE(d[k * 5 + j], full[k * 5 + j] + 1e-6);
        }
    }
    /* the tabulated terms against exact logarithms on full rows */
    for (uint32_t k = 0; k < 5; k++)
        for (uint32_t j = 0; j < 5; j++)
            CHECK_NEAR(full[k * 5 + j], exact_full(a, k, b, j), 1e-5);

    /* the same matrix from 1, 2 and 3 worker threads (rows split unevenly), bit for bit */
    for (uint32_t nt = 1; nt <= 3; nt++) {
        double par[25];
        slda_align_threads = nt;
        CHECK_OK(slda_align_distances(a, b, 0, par, errbuf, sizeof errbuf), errbuf);
        CHECK_MEM(par, full, sizeof par);
        CHECK_OK(slda_align_distances(a, a, 0, par, errbuf, sizeof errbuf), errbuf);
        for (uint32_t k = 0; k < 5; k++)
            CHECK_EQ(par[k * 5 + k], 0.0);
    }
    slda_align_threads = 0;

    /* top-3 lists: a coarser support, still a lower bound and still the same matching */
    double coarse[25];
    int32_t r3[5];
    CHECK_OK(slda_align_distances(a, b, 3, coarse, errbuf, sizeof errbuf), errbuf);
    slda_align_assign(coarse, 5, 5, r3);
    for (uint32_t k = 0; k < 5; k++) {
        CHECK_INT(r3[k], r2c[k]);
        for (uint32_t j = 0; j < 5; j++)
            CHECK_LE(coarse[k * 5 + j], full[k * 5 + j] + 1e-6);
    }

    /* weights: shares of NZ */
    double wt[5], sum = 0, nz = 0;
    slda_align_weights(a, wt);
    for (uint32_t k = 0; k < 5; k++)
        sum += wt[k], nz += a->NZ[k];
    CHECK_NEAR(sum, 1, 1e-12);
    CHECK_NEAR(wt[2], a->NZ[2] / nz, 1e-12);

    slda_model_destroy(a);
    slda_model_destroy(b);
    slda_model_destroy(p);
}

int main(void)
{
    test_assign_known();
    test_assign_random();
    test_js();
    test_models();
    return slda_test_done("unit_align");
}
