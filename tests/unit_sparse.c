/* unit_sparse.c - the sparse path (local.sparse): the Metropolis-Hastings chain against the exact
 * Gibbs posterior, its Rao-Blackwellised statistics against the exact marginals, the row lists
 * against the rows, determinism over thread counts, topic recovery. */
#include "testutil.h"
#include "testcorpus.h"
#include "engine/births.h"
#include "engine/rows_nz.h"
#include "engine/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KT 4 /* topics of the small exact checks */

/* A model over 6 words whose rows 2 and 5 hold counts on some topics only
 * (others zero: the smoothing part of the proposal matters), its frozen view
 * and proposal tables for a document of the given words. */
typedef struct fixture_s {
    slda_model_t *model;
    slda_frozen_t fz;
    slda_wtabs_t tabs;
} fixture_t;

static void fixture_init(fixture_t *f, const slda_params_t *p, const uint32_t *w, uint32_t np)
{
    f->model = make_model(p, 6);
    slda_model_t *m = f->model;
    const float row2[KT] = {3.0f, 0.0f, 0.5f, 0.0f}, row5[KT] = {0.0f, 2.0f, 1.0f, 0.0f};
    memcpy(m->A + 2 * (size_t)m->Kp, row2, sizeof row2);
    memcpy(m->A + 5 * (size_t)m->Kp, row5, sizeof row5);
    m->rows_used = 6;
    for (uint32_t k = 0; k < KT; k++)
        m->NZ[k] = 10.0 + k;
    m->nz_valid = 0;
    slda_rows_nz_ensure(m);
    CHECK_INT(m->nzn[2], 2);
    CHECK_INT(m->nzn[5], 2);
    CHECK_INT(slda_frozen_init(&f->fz, m, NULL, 0), SLDA_OK);
    slda_doc_t doc;
    slda_doc_init(&doc);
    for (uint32_t u = 0; u < np; u++)
        slda_doc_add(&doc, w[u], 1);
    slda_doc_finish(&doc);
    memset(&f->tabs, 0, sizeof f->tabs);
    slda_wtabs_build(&f->tabs, m, &f->fz, &doc, 1);
    f->fz.tabs = &f->tabs;
    slda_docs_clear(&doc, 1);
}

static void fixture_clear(fixture_t *f)
{
    slda_wtabs_free(&f->tabs);
    slda_frozen_clear(&f->fz);
    slda_model_destroy(f->model);
}

/* phi_w[k] as docs/algorithm.md writes it. */
static double phi(const slda_model_t *m, uint32_t w, uint32_t k)
{
    double weta = m->W * m->p.eta;
    return (m->sigma * m->A[(size_t)w * m->Kp + k] + m->p.eta) / (m->NZ[k] + weta);
}

/* The document {2, 2, 5} (word 2 twice): the exact joint posterior of its
 * three topics, prod_i phi_{w_i}[z_i] x the Polya urn of alpha, over KT^3. */
static void exact_joint(const slda_model_t *m, const uint32_t *tok, double *joint)
{
    double alpha = m->p.alpha, total = 0;
    for (uint32_t s = 0; s < KT * KT * KT; s++) {
        uint32_t z[3] = {s / (KT * KT), (s / KT) % KT, s % KT}, n[KT] = {0};
        double v = 1;
        for (int i = 0; i < 3; i++) {
            v *= phi(m, tok[i], z[i]) * (alpha + n[z[i]]) / (KT * alpha + i);
            n[z[i]]++;
        }
        joint[s] = v;
        total += v;
    }
    for (uint32_t s = 0; s < KT * KT * KT; s++)
        joint[s] /= total;
}

/* The chain's state after 20 sweeps is distributed as the exact posterior:
 * a chi-square test over the 64 joint states of 30,000 independent runs
 * (a wrong acceptance ratio in either step fails it). */
static void test_mh_posterior(void)
{
    slda_params_t p = base_params(KT);
    p.sparse = SLDA_SPARSE_ON;
    p.alpha = 0.5;
    p.burnin = 20;
    p.samples = 1;
    const uint32_t w[] = {2, 5}, n[] = {2, 1}, tok[] = {2, 2, 5};
    fixture_t f;
    fixture_init(&f, &p, w, 2);
    double joint[KT * KT * KT];
    exact_joint(f.model, tok, joint);
    slda_local_t *loc = slda_local_new(KT);
    uint32_t hist[KT * KT * KT] = {0}, runs = 30000;
    for (uint32_t r = 0; r < runs; r++) {
        slda_sparse_run(loc, &f.fz, w, n, 2, 5, r, 0, NULL, NULL);
        hist[loc->z[0] * KT * KT + loc->z[1] * KT + loc->z[2]]++;
    }
    double chi2 = 0;
    int cells = 0;
    for (uint32_t s = 0; s < KT * KT * KT; s++) {
        double e = runs * joint[s];
        if (e < 5) { /* pooled below */
            continue;
        }
        chi2 += (hist[s] - e) * (hist[s] - e) / e;
        cells++;
    }
    /* the pooled rare cells as one */
    double e = 0, o = 0;
    for (uint32_t s = 0; s < KT * KT * KT; s++)
        if (runs * joint[s] < 5)
            e += runs * joint[s], o += hist[s];
    if (e > 0)
        chi2 += (o - e) * (o - e) / e, cells++;
    /* critical value of chi-square at p = 0.001 with up to 63 degrees of freedom: 103.4 */
    fprintf(stderr, "sparse MH: chi-square %.2f over %d cells (critical 103.4)\n", chi2, cells);
    CHECK_LT(chi2, 103.4);
    slda_local_destroy(loc);
    fixture_clear(&f);
}

/* The statistics of a run (entries, the prior entry expanded as the global
 * step does) average to the exact marginals of the word's tokens: word 2's
 * statistic in topic k is E[#{i: w_i = 2, z_i = k}] under the posterior. */
static void test_rb_statistics(void)
{
    slda_params_t p = base_params(KT);
    p.sparse = SLDA_SPARSE_ON;
    p.alpha = 0.5;
    p.burnin = 10;
    p.samples = 20;
    const uint32_t w[] = {2, 5}, n[] = {2, 1}, tok[] = {2, 2, 5};
    fixture_t f;
    fixture_init(&f, &p, w, 2);
    const slda_model_t *m = f.model;
    double joint[KT * KT * KT], want[2][KT] = {{0}};
    exact_joint(m, tok, joint);
    for (uint32_t s = 0; s < KT * KT * KT; s++) {
        want[0][s / (KT * KT)] += joint[s];
        want[0][(s / KT) % KT] += joint[s];
        want[1][s % KT] += joint[s];
    }
    slda_local_t *loc = slda_local_new(KT);
    slda_sentry_t out[2 * (KT + 1)];
    double got[2][KT] = {{0}};
    uint32_t runs = 2000;
    for (uint32_t r = 0; r < runs; r++) {
        uint32_t ne = slda_sparse_run(loc, &f.fz, w, n, 2, 6, r, 1, NULL, out);
        CHECK(ne <= 2 * (KT + 1));
        for (uint32_t e = 0; e < ne; e++) {
            int u = out[e].word == 5;
            if (out[e].topic != SLDA_SPARSE_PRIOR) {
                got[u][out[e].topic] += out[e].x;
                continue;
            }
            /* the prior part over the row's listed topics, as global_sparse.c expands it */
            for (uint32_t j = 0; j < m->nzn[out[e].word]; j++) {
                uint32_t k = m->nzt[out[e].word][j];
                got[u][k] += out[e].x * m->alpha[k] * phi(m, out[e].word, k);
            }
        }
    }
    for (int u = 0; u < 2; u++)
        for (uint32_t k = 0; k < KT; k++) {
            got[u][k] /= runs;
            fprintf(stderr, "sparse RB: word %d topic %u: %.4f exact %.4f\n", u ? 5 : 2, k,
                    got[u][k], want[u][k]);
            /* the prior part's eta share on unlisted topics is left out: a few percent */
            CHECK_NEAR(got[u][k], want[u][k], 0.05 * n[u]);
        }
    slda_local_destroy(loc);
    fixture_clear(&f);
}

/* A column that births free while an update is pending (global.stale=1)
 * gets nothing back from it: its entries are dropped and so is its share of
 * the words' prior entries (it came back as alpha_k eta inv_k on every row
 * that listed it); a merged column's entries go to the other topic. */
static void test_pending_column(void)
{
    slda_params_t p = base_params(KT);
    p.sparse = SLDA_SPARSE_ON;
    p.corpus_tokens = 1000;
    const uint32_t w[] = {2, 5};
    fixture_t f;
    fixture_init(&f, &p, w, 2);
    slda_model_t *m = f.model;
    for (int merge = 0; merge < 2; merge++) {
        slda_sacc_t acc;
        memset(&acc, 0, sizeof acc);
        slda_sacc_frozen(&acc, &f.fz, KT);
        const slda_sentry_t ent[] = {{2, 1, 1.0f}, {2, 2, 0.5f}, {2, SLDA_SPARSE_PRIOR, 50.0f},
                                     {5, 1, 0.7f}, {5, SLDA_SPARSE_PRIOR, 40.0f}};
        const size_t eoff[] = {0, 3};
        const uint32_t ecount[] = {3, 2};
        int32_t slot_of[6];
        memset(slot_of, 0xff, sizeof slot_of);
        slda_sacc_merge(&acc, slot_of, ent, eoff, ecount, 2, KT);
        /* births frees topic 0 (row 2 holds 3.0 there: still listed once zeroed) or
         * merges 1 into 2 (row 5 holds 2.0 in 1), zeroing the column as free_slot does */
        uint32_t from = merge ? 1 : 0, to = merge ? 2 : UINT32_MAX;
        slda_sacc_column(&acc, from, to);
        for (uint32_t v = 0; v < 6; v++)
            m->A[(size_t)v * m->Kp + from] = 0;
        m->NZ[from] = 0;
        m->t = 10;
        slda_sparse_update(m, &acc, 3, 1000);
        for (uint32_t v = 0; v < 6; v++) {
            CHECK_EQ(m->A[(size_t)v * m->Kp + from], 0.0f);
            for (uint32_t j = 0; j < m->nzn[v]; j++)
                CHECK(m->nzt[v][j] != from || m->A[(size_t)v * m->Kp + from] != 0);
        }
        CHECK_EQ(m->NZ[from], 0.0);

        slda_sacc_free(&acc);
    }
    fixture_clear(&f);
}

/* After training, every row's list holds exactly the topics where the row is
 * not zero, increasing (the global step keeps the lists with the rows). */
static void check_lists(const slda_model_t *m)
{
    uint32_t bad = 0;
    for (uint32_t w = 0; w < m->rows_used; w++) {
        const float *a = m->A + (size_t)w * m->Kp;
        uint32_t j = 0;
        for (uint32_t k = 0; k < m->K; k++) {
            if (a[k] == 0)
                continue;
            if (j >= m->nzn[w] || m->nzt[w][j] != k)
                bad++;
            else
                j++;
        }
        bad += j != m->nzn[w];
    }
    CHECK_INT(bad, 0);
}

/* The same model bit for bit with 1, 2 and 3 threads, with global.stale 0
 * and 1 and both row rules, and the lists follow the rows. */
static void test_sparse_threads(void)
{
    corpus_t c = make_corpus(6, 120, 400, 40, 9);
    for (int rows = 0; rows < 2; rows++)
        for (int stale = 0; stale < 2; stale++) {
            slda_model_t *m[3];
            for (int i = 0; i < 3; i++) {
                slda_params_t p = base_params(6);
                p.sparse = SLDA_SPARSE_ON;
                p.threads = (uint32_t)i + 1;
                p.stale = stale;
                p.rows = rows ? SLDA_ROWS_DECAY : SLDA_ROWS_COUNTS;
                p.corpus_tokens = 400.0 * 40;
                m[i] = make_model(&p, 120);
                train_passes(m[i], &c, 0, 400, 1, 16);
                slda_model_flush(m[i]);
            }
            size_t bytes = (size_t)m[0]->W * m[0]->Kp * sizeof(float);
            for (int i = 1; i < 3; i++) {
                CHECK_MEM(m[0]->A, m[i]->A, bytes);
                CHECK_MEM(m[0]->NZ, m[i]->NZ, 6 * sizeof(double));
                CHECK_EQ(m[0]->sigma, m[i]->sigma);
            }
            CHECK_INT(slda_model_updates(m[0]), 25);
            check_lists(m[0]);
            for (int i = 0; i < 3; i++)
                slda_model_destroy(m[i]);
        }
    free_corpus(&c);
}

/* The sparse path learns the topics: held-out perplexity falls by a fifth
 * and every true topic has a learned one within L1 0.3 (out of 2); NZ stays
 * the column sums of sigma A. */
static void test_sparse_recovery(void)
{
    slda_params_t p = base_params(5);
    p.sparse = SLDA_SPARSE_ON;
    slda_model_t *model = check_recovery(p, 0.3, "sparse recovery");
    for (uint32_t k = 0; k < model->K; k++) {
        double col = 0;
        for (uint32_t w = 0; w < model->rows_used; w++)
            col += model->sigma * model->A[(size_t)w * model->Kp + k];
        CHECK_NEAR(col, model->NZ[k], 1e-3 * model->NZ[k]);
    }
    check_lists(model);
    slda_model_destroy(model);
}

/* A birth's merge looks for the closest pair of topics; from the rows' lists (the sparse path)
 * the search finds the pair the dense scan finds, at the same divergence to the bit, for any
 * threshold: a model of 14 topics over 6 true ones has near-twins. */
static void test_closest_pair(void)
{
    corpus_t c = make_corpus(6, 120, 400, 40, 5);
    slda_params_t p = base_params(14);
    p.sparse = SLDA_SPARSE_ON;
    births_params(&p, 1);
    p.corpus_tokens = 400.0 * 40;
    slda_model_t *m = make_model(&p, 120);
    train_passes(m, &c, 0, 400, 2, 16);
    slda_model_flush(m);
    slda_rows_nz_ensure(m);
    const double below[] = {0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7};
    uint32_t founds = 0;
    for (size_t t = 0; t < sizeof below / sizeof below[0]; t++) {
        uint32_t i0 = 0, j0 = 0, i1 = 1, j1 = 1;
        double d0 = -1, d1 = -2;
        uint32_t f0 = slda_births_closest_pair(m, below[t], 0, &i0, &j0, &d0);
        uint32_t f1 = slda_births_closest_pair(m, below[t], 1, &i1, &j1, &d1);
        CHECK_INT(f1, f0);
        if (f0) {
            CHECK_INT(i1, i0);
            CHECK_INT(j1, j0);
            CHECK_EQ(d1, d0);
            founds++;
        }
    }
    CHECK(founds >= 3); /* the thresholds above the closest pair's divergence found it */
    slda_model_destroy(m);
    free_corpus(&c);
}

/* local.sparse=auto takes the sparse path from SLDA_SPARSE_AUTO_K topics on. */
static void test_auto(void)
{
    slda_params_t p = base_params(SLDA_SPARSE_AUTO_K - 1);
    CHECK_INT(slda_params_sparse(&p), 0);
    p.topics = SLDA_SPARSE_AUTO_K;
    CHECK_INT(slda_params_sparse(&p), 1);
    p.sparse = SLDA_SPARSE_OFF;
    CHECK_INT(slda_params_sparse(&p), 0);
    p.topics = 2;
    p.sparse = SLDA_SPARSE_ON;
    CHECK_INT(slda_params_sparse(&p), 1);
}

int main(void)
{
    test_mh_posterior();
    test_rb_statistics();
    test_pending_column();
    test_sparse_threads();
    test_sparse_recovery();
    test_auto();
    test_closest_pair();
    return slda_test_done("unit_sparse");
}
