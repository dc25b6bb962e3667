/* unit_batch_models.c - batch mode for the author-topic model and pachinko allocation: convergence on data drawn from a known model, bookkeeping, refusals. */
#include "engine/batch.h"
#include "engine/batch_priv.h"
#include "engine/pam_priv.h"
#include "testdraw.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define NT 3     /* true topics */
#define NW 30    /* vocabulary */
#define NA 12    /* authors */
#define NDOCS 240

typedef struct corpus_s {
    slda_doc_t docs[NDOCS];
    uint64_t tokens;
    double ref_perplexity; /* of the generating model on every token */
} corpus_t;

/* Author a writes topic a % NT with weight 0.85, the others 0.075 each; document j is by
 * author j % NA (its only author), 40..79 tokens. As an LDA corpus (each document's mixture
 * its author's), it is also what a pachinko allocation with S >= 1 super-topics can fit. */
static void make_corpus(corpus_t *c)
{
    slda_rng_t rng;
    slda_rng_seed(&rng, 777);
    double ll = 0.0;
    c->tokens = 0;
    for (int j = 0; j < NDOCS; j++) {
        int a = j % NA;
        double theta[NT], pw[NW], phik[NW];
        for (int k = 0; k < NT; k++)
            theta[k] = k == a % NT ? 0.85 : 0.075;
        for (int w = 0; w < NW; w++) {
            pw[w] = 0.0;
            for (int k = 0; k < NT; k++)
                pw[w] += theta[k] * test_true_phi(k, w);
        }
        slda_doc_init(&c->docs[j]);
        char name[16];
        int n = snprintf(name, sizeof name, "author%d", a);
        CHECK_INT(slda_doc_add_author(&c->docs[j], name, (size_t)n), SLDA_OK);
        int len = 40 + (int)slda_rng_below(&rng, 40);
        for (int t = 0; t < len; t++) {
            int k = test_draw(&rng, theta, NT);
            for (int w = 0; w < NW; w++)
                phik[w] = test_true_phi(k, w);
            int w = test_draw(&rng, phik, NW);
            slda_doc_add(&c->docs[j], (uint32_t)w, 1);
            ll += log(pw[w]);
        }
        slda_doc_finish(&c->docs[j]);
        c->tokens += len;
    }
    c->ref_perplexity = exp(-ll / (double)c->tokens);
}

static void set_params(slda_conf_t *conf, slda_model_kind_t kind, slda_vb_kind_t vb, int hybrid)
{
    memset(conf, 0, sizeof *conf);
    conf->p.kind = kind;
    conf->p.topics = NT;
    conf->p.pam_super = 2;
    conf->p.alpha = 0.1;
    conf->p.eta = 0.1;
    conf->p.vb = vb;
    conf->p.hybrid = hybrid;
    conf->p.threshold = 1;
    conf->p.seed = 5;
}

static const struct {
    const char *name;
    slda_vb_kind_t vb;
    int hybrid;
} variants[] = {{"cgs", SLDA_VB_NONE, 0}, {"cvb0", SLDA_VB_CVB0, 0}, {"cvb0+cgs", SLDA_VB_CVB0, 1},
                {"cvb", SLDA_VB_CVB, 0}};

/* Every variant of kind: the counts stay what the assignments say, the test perplexity falls
 * over the iterations to near the generating model's. */
static void test_converges(const corpus_t *c, slda_model_kind_t kind)
{
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        slda_conf_t conf;
        char err[256];
        slda_batch_t *batch = NULL;
        set_params(&conf, kind, variants[v].vb, variants[v].hybrid);
        CHECK_INT(slda_batch_new(&conf.p, c->docs, NDOCS, NW, &batch, err, sizeof err), SLDA_OK);
        if (!batch) {
            printf("  %s\n", err);
            continue;
        }
        slda_batch_sizes_t sz;
        slda_batch_sizes(batch, &sz);
        double first = 0, mid = 0;
        for (uint32_t it = 1; it <= 60; it++) {
            slda_batch_iterate(batch);
            if (it == 2)
                first = slda_batch_perplexity(batch);
            if (it == 20)
                mid = slda_batch_perplexity(batch);
            if (it == 1 || it == 30 || it == 60) {
                CHECK_NEAR(slda_batch_check(batch), 0.0, 1e-6);
                CHECK_NEAR(slda_batch_topic_total(batch), (double)sz.train_tokens, 1e-3);
            }
        }
        double final = slda_batch_perplexity(batch);
        printf("%s %s: perplexity after 2 iterations %.3f, 20 %.3f, 60 %.3f (generating model "
               "%.3f)\n", kind == SLDA_KIND_ATM ? "atm" : "pam", variants[v].name, first, mid,
               final, c->ref_perplexity);
        CHECK_LT(final, first);
        CHECK_LT(final, 0.6 * NW);
        CHECK_LT(final, 1.2 * c->ref_perplexity);
        slda_batch_destroy(batch);
    }
}

/* PAM's alpha_x under the AMF form, with more super-topics (10) than the corpus has structure
 * for: each document's responsibilities spread over every super-topic, and alpha_x learned
 * from those mean counts grew to a mean A_x = sum_y alpha_xy of 25.4 after 60 iterations (Gibbs:
 * 0.16; the start 0.3), flattening the super-topics' mixtures (KOS at K=50: test perplexity
 * 1717.6 against Gibbs' 1429.1). Learned from one draw of every token it stays under 10 (4.6). */
static void test_pam_alpha_amf(const corpus_t *c)
{
    double meanA[2];
    for (int v = 0; v < 2; v++) { /* cgs, cvb0 */
        slda_conf_t conf;
        char err[256];
        slda_batch_t *batch = NULL;
        set_params(&conf, SLDA_KIND_PAM, variants[v].vb, variants[v].hybrid);
        conf.p.pam_super = 10;
        CHECK_INT(slda_batch_new(&conf.p, c->docs, NDOCS, NW, &batch, err, sizeof err), SLDA_OK);
        if (!batch)
            return;
        for (uint32_t it = 1; it <= 60; it++)
            slda_batch_iterate(batch);
        double A = 0;
        for (size_t i = 0; i < (size_t)batch->S * batch->K; i++)
            A += batch->pam->alpha[i];
        meanA[v] = A / batch->S;
        slda_batch_destroy(batch);
    }
    printf("pam, 10 super-topics: mean A_x after 60 iterations: cgs %.3f, cvb0 %.3f\n", meanA[0],
           meanA[1]);
    CHECK_LT(meanA[1], 10.0);
}

/* The same seed gives the same perplexity bit for bit (PAM's alpha step included). */
static void test_determinism(const corpus_t *c, slda_model_kind_t kind)
{
    double p[2];
    for (int r = 0; r < 2; r++) {
        slda_conf_t conf;
        char err[256];
        slda_batch_t *batch = NULL;
        set_params(&conf, kind, SLDA_VB_CVB0, 1);
        CHECK_INT(slda_batch_new(&conf.p, c->docs, NDOCS, NW, &batch, err, sizeof err), SLDA_OK);
        for (int it = 0; batch && it < 15; it++)
            slda_batch_iterate(batch);
        p[r] = batch ? slda_batch_perplexity(batch) : -1;
        slda_batch_destroy(batch);
    }
    CHECK(p[0] == p[1]);
}

/* An author-topic batch needs exactly one author a document: none or two are refused, with
 * the document named. */
static void test_author_refusals(corpus_t *c)
{
    slda_conf_t conf;
    char err[256];
    slda_batch_t *batch = NULL;
    set_params(&conf, SLDA_KIND_ATM, SLDA_VB_CVB0, 1);
    CHECK_INT(slda_doc_add_author(&c->docs[7], "second", 6), SLDA_OK);
    CHECK_INT(slda_batch_new(&conf.p, c->docs, NDOCS, NW, &batch, err, sizeof err),
              SLDA_ERR_INVALID);
    CHECK(batch == NULL);
    CHECK_CONTAINS(err, "2 authors");
    CHECK_CONTAINS(err, "document 7");
    slda_doc_t bare;
    slda_doc_init(&bare);
    slda_doc_add(&bare, 1, 3);
    slda_doc_finish(&bare);
    CHECK_INT(slda_batch_new(&conf.p, &bare, 1, NW, &batch, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "0 authors");
    slda_doc_clear(&bare);
    /* PAM with no super-topic is refused by name */
    set_params(&conf, SLDA_KIND_PAM, SLDA_VB_CVB0, 1);
    conf.p.pam_super = 0;
    CHECK_INT(slda_batch_new(&conf.p, c->docs, NDOCS, NW, &batch, err, sizeof err),
              SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "pam.super");
}

int main(void)
{
    static corpus_t c;
    make_corpus(&c);
    printf("corpus: %d documents by %d authors, %llu tokens, generating-model perplexity "
           "%.3f\n", NDOCS, NA, (unsigned long long)c.tokens, c.ref_perplexity);
    test_converges(&c, SLDA_KIND_ATM);
    test_converges(&c, SLDA_KIND_PAM);
    test_pam_alpha_amf(&c);
    test_determinism(&c, SLDA_KIND_ATM);
    test_determinism(&c, SLDA_KIND_PAM);
    test_author_refusals(&c);
    slda_docs_clear(c.docs, NDOCS);
    return slda_test_done("unit_batch_models");
}
