/* unit_atm.c - the author-topic model (model.kind=atm, engine/authors.c, docs/models.md): the
 * local step against the exact posterior of a tiny document, the author step against its
 * formula, the split of a document of several authors, determinism over thread counts,
 * recovery of known author mixtures from a synthetic stream (and held-out perplexity against
 * LDA on it), snapshots, eviction, and what the kind refuses. */
#include "testutil.h"
#include "testcorpus.h"
#include "engine/authors.h"
#include "engine/batch.h"
#include "engine/local.h"
#include "engine/step.h"
#include "io/docmsg.h"
#include "io/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KT 3 /* topics of the exact checks */

static slda_params_t atm_params(uint32_t K)
{
    slda_params_t p = base_params(K);
    p.kind = SLDA_KIND_ATM;
    p.authors_capacity = 1000;
    p.vocab_capacity = 1024; /* a snapshot's parameters are range-checked */
    return p;
}

static void add_author(slda_doc_t *doc, const char *name)
{
    CHECK_INT(slda_doc_add_author(doc, name, strlen(name)), SLDA_OK);
}

/* One minibatch of one document by `author` with the given (word, count) pairs. */
static void train_doc(slda_model_t *m, const char *author, const uint32_t *w,
                      const uint32_t *n, uint32_t np)
{
    char err[256];
    slda_doc_t doc;
    slda_doc_init(&doc);
    for (uint32_t u = 0; u < np; u++)
        slda_doc_add(&doc, w[u], n[u]);
    slda_doc_finish(&doc);
    add_author(&doc, author);
    CHECK_OK(slda_model_train(m, &doc, 1, NULL, NULL, err, sizeof err), err);
    slda_doc_clear(&doc);
}

static double phi_of(const slda_model_t *m, uint32_t w, uint32_t k)
{
    double weta = m->W * m->p.eta;
    return (m->sigma * m->A[(size_t)w * m->Kp + k] + m->p.eta) / (m->NZ[k] + weta);
}

/* The exact posterior marginals of 3 sampled tokens of one document under the prior pr
 * (Dirichlet-multinomial over the document's topics) and the frozen topics. */
static void exact_marginals(const slda_model_t *m, const uint32_t *tok, const double *pr,
                            double marg[3][KT])
{
    double total = 0;
    memset(marg, 0, sizeof(double) * 3 * KT);
    for (uint32_t s = 0; s < KT * KT * KT; s++) {
        uint32_t z[3] = {s / (KT * KT), (s / KT) % KT, s % KT}, c[KT] = {0};
        double p = 1;
        for (int i = 0; i < 3; i++) {
            /* the sequential Polya urn: (pr_k + earlier tokens of k) / (sum pr + i) */
            double sum = 0;
            for (uint32_t k = 0; k < KT; k++)
                sum += pr[k];
            p *= phi_of(m, tok[i], z[i]) * (pr[z[i]] + c[z[i]]) / (sum + i);
            c[z[i]]++;
        }
        total += p;
        for (int i = 0; i < 3; i++)
            marg[i][z[i]] += p;
    }
    for (int i = 0; i < 3; i++)
        for (uint32_t k = 0; k < KT; k++)
            marg[i][k] /= total;
}

/* A document of one author runs LDA's local step with the prior alpha_k + N_a[k]: its
 * statistics are those of an LDA model whose alpha is that prior, bit for bit, and average
 * to the exact marginals of the author-topic posterior. */
static void test_local_exact(void)
{
    slda_params_t p = atm_params(KT);
    p.vb = SLDA_VB_NONE; /* every token sampled: the chain's statistics are unbiased */
    p.hybrid = 0;
    p.burnin = 5;
    p.samples = 10;
    slda_model_t *m = make_model(&p, 6);
    const uint32_t w0[] = {0, 1, 2}, n0[] = {4, 3, 1};
    train_doc(m, "ann", w0, n0, 3); /* ann's counts: mostly the topics of words 0-2 */
    slda_model_flush(m);
    uint32_t id = slda_authors_lookup(m->authors, "ann", 3);
    CHECK(id != UINT32_MAX);
    const float *Na = slda_authors_counts(m->authors, id);
    double pr[KT], tot = 0;
    for (uint32_t k = 0; k < KT; k++) {
        pr[k] = m->alpha[k] + Na[k];
        tot += Na[k];
    }
    /* the first step: rho(0) (T / L) S, T = L = 8 */
    CHECK_NEAR(tot, slda_rho(&m->p, 0) * 8.0, 1e-4);

    /* the twin: LDA whose alpha is ann's prior */
    slda_params_t q = p;
    q.kind = SLDA_KIND_LDA;
    slda_model_t *lda = make_model(&q, 6);
    memcpy(lda->A, m->A, (size_t)m->W * m->Kp * sizeof(float));
    memcpy(lda->NZ, m->NZ, KT * sizeof(double));
    lda->sigma = m->sigma;
    lda->alpha_sum = 0;
    for (uint32_t k = 0; k < KT; k++) {
        lda->alpha[k] = pr[k];
        lda->alpha_sum += pr[k];
    }
    slda_frozen_t fa, fl;
    CHECK_INT(slda_frozen_init(&fa, m, NULL, 0), SLDA_OK);
    CHECK_INT(slda_frozen_init(&fl, lda, NULL, 0), SLDA_OK);
    slda_local_t *la = slda_local_new(KT), *ll = slda_local_new(KT);
    slda_doc_t doc;
    slda_doc_init(&doc);
    slda_doc_add(&doc, 3, 1);
    slda_doc_add(&doc, 4, 1);
    slda_doc_add(&doc, 5, 1);
    slda_doc_finish(&doc);
    add_author(&doc, "ann");
    const uint32_t tok[3] = {3, 4, 5}, ones[3] = {1, 1, 1};
    double marg[3][KT], got[3][KT] = {{0}};
    exact_marginals(m, tok, pr, marg);
    uint32_t runs = 3000, same = 1;
    float ta[KT], tl[KT];
    for (uint32_t r = 0; r < runs; r++) {
        slda_authors_doc_prior(m, &doc, la);
        CHECK(la->prior != NULL);
        slda_local_run(la, &fa, tok, ones, 3, 1, r, 1, ta);
        slda_local_run(ll, &fl, tok, ones, 3, 1, r, 1, tl);
        same &= !memcmp(la->stats, ll->stats, 3 * la->Kp * sizeof(float)) &&
                !memcmp(ta, tl, sizeof ta);
        for (int i = 0; i < 3; i++)
            for (uint32_t k = 0; k < KT; k++)
                got[i][k] += la->stats[(size_t)i * la->Kp + k];
    }
    CHECK(same);
    double worst = 0;
    for (int i = 0; i < 3; i++)
        for (uint32_t k = 0; k < KT; k++) {
            double d = fabs(got[i][k] / runs - marg[i][k]);
            worst = d > worst ? d : worst;
        }
    fprintf(stderr, "atm local step: largest error of a token's marginal %.4f\n", worst);
    CHECK_LT(worst, 0.02);
    /* an author the model does not hold: alpha alone */
    slda_doc_t other;
    slda_doc_init(&other);
    add_author(&other, "nobody");
    la->prior = NULL;
    slda_authors_doc_prior(m, &other, la);
    CHECK(la->prior == NULL);
    slda_doc_clear(&other);
    slda_doc_clear(&doc);
    slda_local_destroy(la);
    slda_local_destroy(ll);
    slda_frozen_clear(&fa);
    slda_frozen_clear(&fl);
    slda_model_destroy(lda);
    slda_model_destroy(m);
}

/* The author step: N = (1 - rho) N + rho (T / L) S with T the tokens written so far. */
static void test_step(void)
{
    slda_params_t p = atm_params(KT);
    p.stale = 0;
    slda_model_t *m = make_model(&p, 6);
    const uint32_t w[] = {0, 1}, n1[] = {3, 2}, n2[] = {1, 1};
    train_doc(m, "bo", w, n1, 2);
    uint32_t id = slda_authors_lookup(m->authors, "bo", 2);
    float before[KT];
    memcpy(before, slda_authors_counts(m->authors, id), sizeof before);
    CHECK_NEAR(slda_authors_tokens(m->authors, id), 5.0, 1e-5);
    CHECK_INT(slda_authors_updates(m->authors, id), 1);
    /* the second document's statistics: its mean topic counts, from the local step */
    slda_doc_t doc;
    slda_doc_init(&doc);
    slda_doc_add(&doc, 0, 1);
    slda_doc_add(&doc, 1, 1);
    slda_doc_finish(&doc);
    add_author(&doc, "bo");
    uint32_t aoff[2] = {0, 1}, aid[1] = {id};
    float nt[KT];
    slda_frozen_t fz;
    CHECK_INT(slda_frozen_init(&fz, m, NULL, 0), SLDA_OK);
    slda_local_t *loc = slda_local_new(KT);
    slda_authors_doc_prior(m, &doc, loc);
    slda_local_run(loc, &fz, w, n2, 2, m->t, 0, 1, NULL);
    memcpy(nt, loc->ntheta_sum, sizeof nt);
    double rho = slda_rho(&m->p, 1), L = 0;
    for (uint32_t k = 0; k < KT; k++)
        L += nt[k];
    CHECK_NEAR(L, 2.0, 1e-5);
    slda_authors_step(m->authors, &m->p, aoff, aid, 1, nt, m->alpha, m->alpha_sum);
    const float *after = slda_authors_counts(m->authors, id);
    for (uint32_t k = 0; k < KT; k++)
        CHECK_NEAR(after[k], (1 - rho) * before[k] + rho * (7.0 / L) * nt[k], 1e-4);
    CHECK_NEAR(slda_authors_tokens(m->authors, id), 7.0, 1e-6);
    CHECK_INT(slda_authors_updates(m->authors, id), 2);

    /* two authors: the document's counts split by r(x | k), all of them handed out */
    slda_doc_t two;
    slda_doc_init(&two);
    add_author(&two, "bo");
    add_author(&two, "cy");
    add_author(&two, "bo"); /* named twice: once */
    CHECK_INT(two.nauthor, 2);
    uint32_t cid;
    uint32_t *ao, *ai;
    slda_doc_add(&two, 2, 1);
    slda_doc_finish(&two);
    slda_authors_map(m->authors, &two, 1, &ao, &ai);
    CHECK_INT(ao[1], 2);
    cid = ai[1];
    float bo0[KT];
    memcpy(bo0, slda_authors_counts(m->authors, id), sizeof bo0);
    float nt2[KT] = {1.0f, 2.0f, 3.0f};
    slda_authors_step(m->authors, &m->p, ao, ai, 1, nt2, m->alpha, m->alpha_sum);
    double sum_c = 0;
    const float *cn = slda_authors_counts(m->authors, cid);
    for (uint32_t k = 0; k < KT; k++)
        sum_c += cn[k];
    /* cy's first step: rho(0) (T / L) S with T = L, the tokens of its share */
    double rho0 = slda_rho(&m->p, 0), L_cy = slda_authors_tokens(m->authors, cid);
    CHECK_NEAR(sum_c, rho0 * L_cy, 1e-4);
    double r_bo = slda_authors_tokens(m->authors, id) - 7.0;
    CHECK_NEAR(r_bo + L_cy, 6.0, 1e-4);
    /* cy's share of topic 0 against bo's: (N[0] + a) / (|N| + A), cy's row empty before */
    double tb = 0;
    for (uint32_t k = 0; k < KT; k++)
        tb += bo0[k];
    double rb0 = (bo0[0] + m->alpha[0]) / (tb + m->alpha_sum);
    double rc0 = m->alpha[0] / m->alpha_sum;
    CHECK_NEAR(cn[0], rho0 * 1.0 * rc0 / (rb0 + rc0), 1e-4);
    /* the prior of a document of both: alpha + c m, c their mean total */
    float pr[KT];
    uint32_t both[2] = {id, cid};
    double s = slda_authors_prior(m->authors, both, 2, m->alpha, m->alpha_sum, pr);
    double tc = sum_c, tbn = 0;
    for (uint32_t k = 0; k < KT; k++)
        tbn += slda_authors_counts(m->authors, id)[k];
    CHECK_NEAR(s, m->alpha_sum + (tbn + tc) / 2, 1e-3);
    free(ao);
    free(ai);
    slda_doc_clear(&two);
    slda_doc_clear(&doc);
    slda_local_destroy(loc);
    slda_frozen_clear(&fz);
    slda_model_destroy(m);
}

/* A synthetic author-topic stream: A authors, each writing from a mixture on one or two of
 * K topics (make_corpus's topics), documents of `len` tokens by one author (every fifth by
 * two). */
typedef struct atm_corpus_s {
    corpus_t c;
    uint32_t A;
    double *theta; /* A x K */
} atm_corpus_t;

static atm_corpus_t make_atm_corpus(uint32_t K, uint32_t W, uint32_t A, size_t ndocs,
                                    uint32_t len, uint64_t seed)
{
    atm_corpus_t ac;
    ac.c = make_corpus(K, W, 1, 1, seed); /* its topics; its one document replaced */
    slda_docs_clear(ac.c.docs, 1);
    free(ac.c.docs);
    ac.c.docs = calloc(ndocs, sizeof *ac.c.docs);
    ac.c.n = ndocs;
    ac.A = A;
    ac.theta = calloc((size_t)A * K, sizeof *ac.theta);
    slda_rng_t rng;
    slda_rng_seed(&rng, seed + 1);
    for (uint32_t a = 0; a < A; a++) {
        uint32_t k1 = a % K, k2 = (a / K) % K;
        ac.theta[a * K + k1] += k1 == k2 ? 0.9 : 0.6;
        ac.theta[a * K + k2] += k1 == k2 ? 0.0 : 0.3;
        for (uint32_t k = 0; k < K; k++)
            ac.theta[a * K + k] += 0.1 / K;
    }
    for (size_t d = 0; d < ndocs; d++) {
        slda_doc_t *doc = &ac.c.docs[d];
        slda_doc_init(doc);
        char name[32];
        uint32_t a1 = (uint32_t)(slda_rng_next(&rng) % A), a2 = a1;
        if (d % 5 == 4)
            a2 = (uint32_t)(slda_rng_next(&rng) % A);
        snprintf(name, sizeof name, "a%u", a1);
        add_author(doc, name);
        snprintf(name, sizeof name, "a%u", a2);
        add_author(doc, name);
        snprintf(name, sizeof name, "d%zu", d);
        doc->id = strdup(name);
        for (uint32_t i = 0; i < len; i++) {
            uint32_t a = (i % 2 && a2 != a1) ? a2 : a1;
            double u = slda_rng_double(&rng), acc = 0;
            uint32_t k = 0;
            for (; k < K - 1; k++)
                if ((acc += ac.theta[a * K + k]) > u)
                    break;
            double v = slda_rng_double(&rng);
            uint32_t w = 0;
            acc = 0;
            for (; w < W - 1; w++)
                if ((acc += ac.c.phi[k * W + w]) > v)
                    break;
            slda_doc_add(doc, w, 1);
        }
        slda_doc_finish(doc);
    }
    return ac;
}

static void free_atm_corpus(atm_corpus_t *ac)
{
    free_corpus(&ac->c);
    free(ac->theta);
}

/* Author mixtures recovered: the learned topics matched to the true ones by the closest phi
 * (each within L1 0.4, out of 2), each author's learned mixture within L1 0.3 of its true one
 * on average; the held-out documents (short: 12 tokens) of known authors have a lower
 * perplexity than under LDA trained on the same stream. */
static void test_recovery(void)
{
    const uint32_t K = 5, W = 100, A = 40;
    atm_corpus_t ac = make_atm_corpus(K, W, A, 2300, 40, 21);
    atm_corpus_t test = make_atm_corpus(K, W, A, 400, 12, 21); /* same topics and authors */
    slda_model_t *m[2];
    for (int kind = 0; kind < 2; kind++) {
        slda_params_t p = kind ? atm_params(K) : base_params(K);
        p.corpus_tokens = 2300.0 * 40;
        m[kind] = make_model(&p, W);
        train_passes(m[kind], &ac.c, 0, 2300, 2, 50);
        slda_model_flush(m[kind]);
    }
    float *phi = malloc(sizeof(float) * K * W);
    CHECK_INT(slda_model_phi(m[1], phi, NULL), SLDA_OK);
    uint32_t match[16]; /* true topic -> learned topic */
    for (uint32_t t = 0; t < K; t++) {
        double best = 3;
        for (uint32_t k = 0; k < K; k++) {
            double l1 = 0;
            for (uint32_t w = 0; w < W; w++)
                l1 += fabs(phi[k * W + w] - ac.c.phi[t * W + w]);
            if (l1 < best)
                best = l1, match[t] = k;
        }
        CHECK_LT(best, 0.4);
    }
    double mean_l1 = 0;
    float th[16];
    for (uint32_t a = 0; a < A; a++) {
        char name[32];
        int n = snprintf(name, sizeof name, "a%u", a);
        uint32_t id = slda_authors_lookup(m[1]->authors, name, (size_t)n);
        CHECK(id != UINT32_MAX);
        if (id == UINT32_MAX)
            continue;
        slda_author_mixture(m[1], id, th);
        double l1 = 0;
        for (uint32_t t = 0; t < K; t++)
            l1 += fabs(th[match[t]] - ac.theta[a * K + t]);
        mean_l1 += l1 / A;
    }
    fprintf(stderr, "atm recovery: mean L1 of the author mixtures %.3f (of 2)\n", mean_l1);
    CHECK_LT(mean_l1, 0.3);
    double perp[2];
    for (int kind = 0; kind < 2; kind++)
        CHECK_INT(slda_eval_perplexity(m[kind], test.c.docs, 400, 3, &perp[kind], NULL),
                  SLDA_OK);
    fprintf(stderr, "atm recovery: held-out perplexity lda %.2f atm %.2f\n", perp[0], perp[1]);
    CHECK_LT(perp[1], perp[0]);
    /* a held-out set keeps its documents' authors: the same figure as the documents */
    slda_heldout_t *held = slda_heldout_new();
    char err[256];
    for (size_t i = 0; i < 400; i++)
        CHECK_OK(slda_heldout_put(held, i, m[1], &test.c.docs[i], err, sizeof err), err);
    double hp;
    CHECK_INT(slda_heldout_perplexity(m[1], held, NULL, 3, &hp, NULL), SLDA_OK);
    CHECK_NEAR(hp, perp[1], 1e-9 * perp[1]);
    slda_heldout_destroy(held);
    free(phi);
    slda_model_destroy(m[0]);
    slda_model_destroy(m[1]);
    free_atm_corpus(&test);
    free_atm_corpus(&ac);
}

/* 1, 2 and 3 threads give the same model and author counts, bit for bit; a snapshot holds
 * the authors (version 2), and a model read back trains on as the one that never stopped. */
static void test_threads_snapshot(void)
{
    atm_corpus_t ac = make_atm_corpus(4, 80, 12, 300, 30, 5);
    slda_model_t *m[3];
    for (int i = 0; i < 3; i++) {
        slda_params_t p = atm_params(4);
        p.threads = (uint32_t)i + 1;
        p.corpus_tokens = 300.0 * 30;
        m[i] = make_model(&p, 80);
        train_passes(m[i], &ac.c, 0, 200, 1, 16);
    }
    for (int i = 0; i < 3; i++)
        slda_model_flush(m[i]);
    for (int i = 1; i < 3; i++) {
        CHECK_MEM(m[0]->A, m[i]->A, (size_t)m[0]->W * m[0]->Kp * sizeof(float));
        uint32_t max = slda_authors_max_id(m[0]->authors);
        CHECK_INT(slda_authors_max_id(m[i]->authors), max);
        for (uint32_t id = 0; id < max; id++)
            CHECK_MEM(slda_authors_counts(m[0]->authors, id),
                      slda_authors_counts(m[i]->authors, id), 4 * sizeof(float));
    }
    void *buf = NULL;
    size_t len = 0;
    char err[512];
    CHECK_OK(slda_snapshot_encode(m[0], &buf, &len, err, sizeof err), err);
    CHECK(len > 12 && ((unsigned char *)buf)[11] == 2); /* format version 2 */
    slda_err_t code;
    slda_model_t *back = slda_snapshot_decode(buf, len, &code, err, sizeof err);
    if (!back)
        fprintf(stderr, "decode: %s\n", err);
    CHECK_NONNULL(back);
    if (back) {
        CHECK_INT(slda_authors_size(back->authors), slda_authors_size(m[0]->authors));
        train_passes(m[0], &ac.c, 200, 100, 1, 16);
        train_passes(back, &ac.c, 200, 100, 1, 16);
        slda_model_flush(m[0]);
        slda_model_flush(back);
        CHECK_MEM(m[0]->A, back->A, (size_t)m[0]->W * m[0]->Kp * sizeof(float));
        uint32_t max = slda_authors_max_id(m[0]->authors);
        for (uint32_t id = 0; id < max; id++)
            CHECK_MEM(slda_authors_counts(m[0]->authors, id),
                      slda_authors_counts(back->authors, id), 4 * sizeof(float));
        slda_model_destroy(back);
    }
    /* every byte of the snapshot changed in turn (checksum fixed): read or refused, never a
     * crash (the authors map's checks under ASan in the full suite) */
    unsigned char *b = buf;
    uint32_t refused = 0, tried = 0;
    for (size_t at = 12; at + 8 < len; at += 1 + at / 64) {
        unsigned char was = b[at];
        b[at] ^= 0xa5;
        uint64_t h = slda_hash64(b, len - 8, 0);
        for (int i = 0; i < 8; i++)
            b[len - 8 + i] = (unsigned char)(h >> (56 - 8 * i));
        slda_model_t *x = slda_snapshot_decode(b, len, &code, err, sizeof err);
        refused += x == NULL;
        tried++;
        slda_model_destroy(x);
        b[at] = was;
    }
    fprintf(stderr, "atm snapshot: %u of %u corrupted copies refused\n", refused, tried);
    CHECK_GT(refused, tried / 4);
    free(buf);
    for (int i = 0; i < 3; i++)
        slda_model_destroy(m[i]);
    /* an LDA model's snapshots stay version 1 */
    slda_params_t p = base_params(4);
    slda_model_t *lda = make_model(&p, 80);
    CHECK_OK(slda_snapshot_encode(lda, &buf, &len, err, sizeof err), err);
    CHECK(len > 12 && ((unsigned char *)buf)[11] == 1);
    free(buf);
    slda_model_destroy(lda);
    free_atm_corpus(&ac);
}

/* A full author table evicts the least active and counts them; memory stays capacity x K. */
static void test_eviction(void)
{
    slda_params_t p = atm_params(KT);
    p.authors_capacity = 100;
    slda_model_t *m = make_model(&p, 6);
    const uint32_t w[] = {0, 3}, n[] = {2, 1};
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "writer%d", i);
        train_doc(m, name, w, n, 2);
    }
    CHECK_LE(slda_authors_size(m->authors), 100);
    CHECK_GE(slda_authors_evicted(m->authors), 198);
    CHECK_INT(slda_authors_size(m->authors) + slda_authors_evicted(m->authors), 300);
    CHECK(slda_authors_lookup(m->authors, "writer299", 9) != UINT32_MAX);
    slda_model_destroy(m);
}

/* What model.kind=atm refuses, each with its reason. */
static void test_refusals(void)
{
    char err[256];
    slda_params_t p = atm_params(KT);
    p.alpha_learn = SLDA_ALPHA_NEWTON;
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "alpha.learn");
    p = atm_params(KT);
    p.sparse = SLDA_SPARSE_ON;
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "local.sparse");
    p = atm_params(KT);
    p.replay = SLDA_REPLAY_ON;
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "replay");
    p = atm_params(KT);
    p.authors_capacity = 0;
    CHECK_NULL(slda_model_alloc(&p, 10, 0, 1, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "authors.capacity");
    p = atm_params(2000);
    CHECK(!slda_params_sparse(&p)); /* auto: the dense step */
    p = atm_params(KT);
    p.births = 1;
    slda_model_t *m = make_model(&p, 6);
    CHECK_INT(m->p.births, 0);
    slda_model_destroy(m);
    check_kind_refusals(&p, "atm");
}

/* A MessagePack message names its authors like a JSON record: a string or an array. */
static void test_msgpack_authors(void)
{
    static const unsigned char val[] = {
        0x82, 0xa4, 't', 'e', 'x', 't', 0xaa, 'g', 'o', 'a', 'l', ' ', 'm', 'a', 't', 'c', 'h',
        0xa6, 'a', 'u', 't', 'h', 'o', 'r', 0x92, 0xa3, 'a', 'n', 'n', 0xa3, 'b', 'o', 'b'};
    slda_params_t p = atm_params(KT);
    slda_model_t *m = make_model(&p, 6);
    slda_record_t rec;
    slda_record_init(&rec);
    slda_message_t msg = {.value = (const char *)val, .len = sizeof val};
    char err[256];
    CHECK_OK(slda_docmsg_decode(SLDA_INFMT_MSGPACK, &msg, 1 << 20, &rec, err, sizeof err), err);
    slda_doc_t doc;
    slda_doc_init(&doc);
    CHECK_OK(slda_record_authors(&rec, m, &doc, err, sizeof err), err);
    CHECK_INT(doc.nauthor, 2);
    if (doc.nauthor == 2) {
        CHECK_STR(doc.author[0], "ann");
        CHECK_STR(doc.author[1], "bob");
    }
    slda_doc_clear(&doc);
    slda_record_clear(&rec);
    slda_model_destroy(m);
}

int main(void)
{
    test_msgpack_authors();
    test_local_exact();
    test_step();
    test_recovery();
    test_threads_snapshot();
    test_eviction();
    test_refusals();
    return slda_test_done("unit_atm");
}
