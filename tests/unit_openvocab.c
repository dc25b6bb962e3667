/* unit_openvocab.c - the open-vocabulary path: smoothing over the words the model holds,
 * no persistent noise in late words' rows, held-out documents scored on the right words
 * after eviction.
 *
 * Documents are built from text ("t3w17" ...) through the model's own vocabulary, as the
 * readers and the Kafka service build them, so ids are the open vocabulary's.
 */
#include "engine/model.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static slda_params_t base_params(uint32_t K, uint32_t capacity)
{
    slda_params_t p;
    memset(&p, 0, sizeof p);
    p.topics = K;
    p.alpha = 0.1;
    p.eta = 0.1;
    p.vb = SLDA_VB_CVB0;
    p.hybrid = 1;
    p.threshold = 1;
    p.burnin = 5;
    p.samples = 5;
    p.stats = SLDA_STATS_RB;
    p.rho_s = 1;
    p.rho_tau = 1;
    p.rho_kappa = 0.7;
    p.init_scale = 1;
    p.corpus_tokens = 20000;
    p.vocab_capacity = capacity;
    p.seed = 11;
    p.threads = 1;
    p.min_length = 1;
    p.stopwords = "none";
    return p;
}

static slda_model_t *open_model(const slda_params_t *p)
{
    char err[256];
    slda_model_t *model = slda_model_alloc(p, p->vocab_capacity, 0, (p)->seed, NULL, err, sizeof err);
    if (!model) {
        fprintf(stderr, "slda_model_alloc: %s\n", err);
        exit(1);
    }
    return model;
}

/* Document d of a synthetic stream as text: 4 topics of 60 words each
 * (Zipf-like within a topic), 2 topics a document, 40 tokens; from document
 * `fresh_from` on, one token in four is a word never seen before, so the
 * vocabulary keeps growing. */
static size_t doc_text(uint64_t seed, size_t d, size_t fresh_from, char *buf, size_t cap)
{
    slda_rng_t rng;
    slda_rng_seed3(&rng, seed, 0x646f63, d);
    uint32_t ka = slda_rng_below(&rng, 4), kb = slda_rng_below(&rng, 4);
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t k = slda_rng_below(&rng, 2) ? ka : kb;
        double u = slda_rng_double(&rng);
        uint32_t w = (uint32_t)(60 * u * u * u);
        if (d >= fresh_from && i % 4 == 3)
            n += slda_test_spell(buf + n, cap - n, 'n', (uint64_t)d * 64 + (uint64_t)i);
        else
            n += slda_test_spell(buf + n, cap - n, 't', k * 100 + w);
    }
    return n;
}

static void make_doc(slda_model_t *model, uint64_t seed, size_t d, size_t fresh_from,
                     slda_doc_t *doc)
{
    char buf[2048], err[256];
    size_t n = doc_text(seed, d, fresh_from, buf, sizeof buf);
    slda_doc_init(doc);
    if (slda_doc_from_text(model, buf, n, doc, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "slda_doc_from_text: %s\n", err);
        exit(1);
    }
}

/* Train docs [from, to) of the stream in minibatches of 20. */
static void train_stream(slda_model_t *model, uint64_t seed, size_t from, size_t to,
                         size_t fresh_from)
{
    slda_doc_t docs[20];
    char err[256];
    for (size_t d = from; d < to;) {
        size_t n = 0;
        for (; n < 20 && d < to; n++, d++)
            make_doc(model, seed, d, fresh_from, &docs[n]);
        CHECK_INT(slda_model_train(model, docs, n, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_docs_clear(docs, n);
    }
}

/* Largest |row sum - 1| of phi over the columns slda_model_phi gives. */
static double phi_row_error(const slda_model_t *model)
{
    uint32_t V = slda_model_vocab_size(model), K = slda_model_topics(model);
    float *phi = malloc((size_t)K * V * sizeof *phi + 1);
    double worst = 0;
    CHECK_INT(slda_model_phi(model, phi, NULL), SLDA_OK);
    for (uint32_t k = 0; k < K; k++) {
        double s = 0;
        for (uint32_t c = 0; c < V; c++)
            s += phi[(size_t)k * V + c];
        worst = fmax(worst, fabs(s - 1));
    }
    free(phi);
    return worst;
}

/* Largest relative |NZ[k] - sum over held rows of Nphi[w][k]|. */
static double nz_error(const slda_model_t *model)
{
    double worst = 0;
    for (uint32_t k = 0; k < model->K; k++) {
        double s = 0;
        for (uint32_t w = 0; w < model->W; w++)
            if (model->row_ready[w])
                s += model->sigma * model->A[(size_t)w * model->Kp + k];
            else
                CHECK_EQ(model->A[(size_t)w * model->Kp + k], 0); /* rows not held are empty */
        worst = fmax(worst, fabs(s - model->NZ[k]) / model->NZ[k]);
    }
    return worst;
}

static double heldout_perplexity(slda_model_t *model, uint64_t seed, size_t from, size_t n)
{
    slda_doc_t *docs = calloc(n, sizeof *docs);
    double perp = NAN;
    for (size_t i = 0; i < n; i++)
        make_doc(model, seed, from + i, (size_t)-1, &docs[i]);
    CHECK_INT(slda_eval_perplexity(model, docs, n, 5, &perp, NULL), SLDA_OK);
    slda_docs_clear(docs, n);
    free(docs);
    return perp;
}

/* ---- 1. W of the smoothing is the number of words held, not the capacity ---- */

static void test_smoothing_over_words_held(void)
{
    double perp[2];
    const uint32_t caps[2] = {1024, 16384};
    for (int i = 0; i < 2; i++) {
        slda_params_t p = base_params(4, caps[i]);
        slda_model_t *model = open_model(&p);
        train_stream(model, 3, 0, 400, (size_t)-1);
        /* every word of the stream reached training: 4 topics x at most 60 words */
        CHECK_INT(slda_model_vocab_size(model), slda_vocab_size(model->vocab));
        CHECK_INT(slda_model_smoothing_words(model), slda_model_vocab_size(model));
        CHECK_GT(slda_model_vocab_size(model), 150);
        CHECK_LE(slda_model_vocab_size(model), 240);
        double rows = phi_row_error(model);
        fprintf(stderr, "capacity %u: %u words held, phi rows sum to 1 within %.2g\n", caps[i],
                slda_model_vocab_size(model), rows);
        CHECK_NEAR(rows, 0, 1e-4);
        perp[i] = heldout_perplexity(model, 3, 400, 60);
        slda_model_destroy(model);
    }
    /* the capacity is not reached: it must not matter at all (same ids, same W) */
    fprintf(stderr, "held-out perplexity: capacity %u %.4f, capacity %u %.4f\n", caps[0], perp[0],
            caps[1], perp[1]);
    CHECK_EQ(perp[0], perp[1]);
}

/* Eviction takes words (rows and their share of NZ) out of the smoothing;
 * a snapshot brings the same W back. */
static void test_smoothing_with_eviction_and_restart(void)
{
    slda_params_t p = base_params(4, 512);
    slda_model_t *model = open_model(&p);
    char err[256];
    train_stream(model, 9, 0, 300, 50); /* 10 new words a document: 2500 words > 512 */
    uint64_t evicted = slda_vocab_evictions(model->vocab);
    uint32_t held = 0;
    for (uint32_t w = 0; w < model->W; w++)
        held += model->row_ready[w];
    fprintf(stderr, "eviction: %llu evicted, %u words held of %u in the vocabulary\n",
            (unsigned long long)evicted, held, slda_vocab_size(model->vocab));
    CHECK_GT(evicted, 1000);
    CHECK_INT(slda_model_smoothing_words(model), held);
    CHECK_INT(slda_model_vocab_size(model), held);
    CHECK_NEAR(nz_error(model), 0, 1e-4);
    CHECK_NEAR(phi_row_error(model), 0, 1e-4);
    double before = heldout_perplexity(model, 9, 300, 40);
    void *buf;
    size_t len;
    CHECK_INT(slda_snapshot_encode(model, &buf, &len, err, sizeof err), SLDA_OK);
    slda_model_t *back = slda_snapshot_decode(buf, len, NULL, err, sizeof err);
    CHECK_TRUE(back != NULL, "%s", err);
    if (back) {
        /* (scoring tokenised new held-out words; they are not held: W is unchanged) */
        CHECK_INT(slda_model_smoothing_words(back), slda_model_smoothing_words(model));
        /* same model, same W: held-out documents tokenised against each score the same */
        double after = heldout_perplexity(back, 9, 300, 40);
        CHECK_EQ(before, after);
        slda_model_destroy(back);
    }
    free(buf);
    slda_model_destroy(model);
}

/* ---- 2. a late word's row carries no more initial noise than an early one's ---- */

/* The same rows in a fixed vocabulary (initial values at t = 0, decayed by
 * every update) and an open one (a word's row made when it first trains):
 * a row first made at update t must equal the fixed vocabulary's row that
 * no document touched, init * prod (1 - rho_s); with rho_0 = 1 that is 0,
 * and with global.rows=counts too whatever tau is (its first step has r = 1). */
static void test_late_rows(double tau, slda_rows_kind_t rows)
{
    slda_params_t p = base_params(5, 64);
    p.rho_tau = tau;
    p.rows = rows;
    char err[256], word[32];
    slda_model_t *fixed = slda_model_alloc(&p, 50, 1, (&p)->seed, NULL, err, sizeof err);
    slda_model_t *open = open_model(&p);
    for (uint32_t w = 0; w < 50; w++) {
        int n = snprintf(word, sizeof word, "v%u", w);
        CHECK_INT(slda_vocab_put(fixed->vocab, w, word, (size_t)n, 0, err, sizeof err), SLDA_OK);
        CHECK_INT(slda_vocab_put(open->vocab, w, word, (size_t)n, 0, err, sizeof err), SLDA_OK);
        slda_model_init_row(fixed, w);
    }
    slda_rng_t rng;
    slda_rng_seed(&rng, 4);
    slda_doc_t docs[10];
    for (int step = 0; step < 30; step++) { /* words 0..39 only */
        for (int i = 0; i < 10; i++) {
            slda_doc_init(&docs[i]);
            for (int t = 0; t < 12; t++)
                slda_doc_add(&docs[i], slda_rng_below(&rng, 40), 1);
            slda_doc_finish(&docs[i]);
        }
        CHECK_INT(slda_model_train(fixed, docs, 10, NULL, NULL, err, sizeof err), SLDA_OK);
        CHECK_INT(slda_model_train(open, docs, 10, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_docs_clear(docs, 10);
    }
    slda_model_init_row(open, 45); /* what the next minibatch does for a new word 45 */
    double worst = 0, size = 0;
    for (uint32_t k = 0; k < p.topics; k++) {
        double a = open->sigma * open->A[45 * open->Kp + k];
        double b = fixed->sigma * fixed->A[45 * fixed->Kp + k];
        worst = fmax(worst, fabs(a - b));
        size = fmax(size, b);
    }
    fprintf(stderr, "late row (rho.tau=%g, global.rows=%s): largest entry %.4g (the fixed "
            "vocabulary's), difference %.3g\n", tau, rows == SLDA_ROWS_COUNTS ? "counts" : "decay",
            size, worst);
    CHECK_NEAR(worst, 0, 1e-6 * (size + 1e-30));
    if (tau <= 1 || rows == SLDA_ROWS_COUNTS)
        CHECK_EQ(size, 0); /* rho_0 = 1 replaced the initial state entirely */
    else {
        CHECK_GT(size, 0);
        CHECK_LT(size, p.init_scale * 2 * 0.2); /* decayed, not gone */
    }
    slda_model_destroy(fixed);
    slda_model_destroy(open);
}

/* ---- 3. held-out documents after eviction ---- */

/* The held-out documents as they read now: their text mapped through the
 * vocabulary without adding words (words not held are dropped). */
static void current_docs(slda_model_t *model, uint64_t seed, size_t from, size_t n,
                         slda_doc_t *out, uint64_t *dropped)
{
    for (size_t i = 0; i < n; i++) {
        char buf[2048];
        size_t len = doc_text(seed, from + i, 0, buf, sizeof buf);
        slda_doc_init(&out[i]);
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            uint32_t id = slda_model_word_id(model, tok, strlen(tok));
            if (id != UINT32_MAX && model->row_ready[id])
                slda_doc_add(&out[i], id, 1);
            else
                (*dropped)++;
        }
        slda_doc_finish(&out[i]);
        (void)len;
    }
}

static void test_heldout_after_eviction(void)
{
    enum { NH = 30 };
    slda_params_t p = base_params(4, 700); /* holds the held-out documents (540 words) */
    slda_model_t *model = open_model(&p);
    slda_heldout_t *held = slda_heldout_new();
    slda_doc_t kept[NH], now[NH];
    char err[256];
    /* the held-out documents first (their own fresh words, like a stream's
     * held-out-only words), kept by key and, as before, by id */
    for (size_t i = 0; i < NH; i++) {
        make_doc(model, 21, 1000 + i, 0, &kept[i]);
        CHECK_INT(kept[i].ntokens, 40); /* every word found room in the vocabulary */
        CHECK_INT(slda_heldout_put(held, i, model, &kept[i], err, sizeof err), SLDA_OK);
    }
    CHECK_INT(slda_heldout_count(held), NH);
    /* a stream with new words in every document: the vocabulary fills and
     * evicts the rarest words - the held-out-only ones first - reusing ids */
    train_stream(model, 21, 0, 240, 60);
    CHECK_GT(slda_vocab_evictions(model->vocab), 500);
    uint64_t dropped = 0;
    current_docs(model, 21, 1000, NH, now, &dropped);

    double pset, pnow, pstale;
    slda_heldout_stats_t st;
    CHECK_INT(slda_heldout_perplexity(model, held, NULL, 5, &pset, &st), SLDA_OK);
    CHECK_INT(slda_eval_perplexity(model, now, NH, 5, &pnow, NULL), SLDA_OK);
    slda_eval_perplexity(model, kept, NH, 5, &pstale, NULL);
    fprintf(stderr, "held-out after %llu evictions: set %.3f, re-read %.3f, stale ids %.3f; "
            "%llu scored, %llu unseen tokens (re-read dropped %llu)\n",
            (unsigned long long)slda_vocab_evictions(model->vocab), pset, pnow, pstale,
            (unsigned long long)st.scored, (unsigned long long)st.unseen,
            (unsigned long long)dropped);
    CHECK_EQ(pset, pnow);            /* scored on the right words */
    CHECK_NE(pstale, pnow);          /* what keeping ids did: other words */
    CHECK_INT(st.unseen, dropped);   /* words no longer held are counted */
    CHECK_GT(st.unseen, 0);
    CHECK_GT(st.scored, 0);
    CHECK_INT(st.docs, NH);

    /* an explicit split: obs -> theta, test scored */
    slda_heldout_t *test = slda_heldout_new();
    for (size_t i = 0; i < NH; i++)
        CHECK_INT(slda_heldout_put(test, i, model, &now[NH - 1 - i], err, sizeof err), SLDA_OK);
    slda_doc_t rev[NH];
    for (size_t i = 0; i < NH; i++)
        rev[i] = now[NH - 1 - i];
    double a, b;
    CHECK_INT(slda_heldout_perplexity(model, held, test, 5, &a, NULL), SLDA_OK);
    CHECK_INT(slda_eval_completion(model, now, rev, NH, 5, &b, NULL), SLDA_OK);
    CHECK_EQ(a, b);
    double ua, ub;
    CHECK_INT(slda_heldout_umass(model, held, 5, &ua, NULL), SLDA_OK);
    CHECK_INT(slda_eval_umass(model, now, NH, 5, &ub, NULL), SLDA_OK);
    CHECK_EQ(ua, ub);

    /* replacing a slot (reservoir) keeps the count; a slot past the end is refused */
    CHECK_INT(slda_heldout_put(held, 3, model, &now[0], err, sizeof err), SLDA_OK);
    CHECK_INT(slda_heldout_count(held), NH);
    CHECK_INT(slda_heldout_put(held, NH + 1, model, &now[0], err, sizeof err), SLDA_ERR_RANGE);
    CHECK_CONTAINS(err, "slot");
    slda_heldout_destroy(test);
    slda_heldout_destroy(held);
    slda_heldout_destroy(NULL);
    slda_docs_clear(kept, NH);
    slda_docs_clear(now, NH);
    slda_model_destroy(model);
}

/* A replica's held-out set (slda_heldout_put_keys): keys straight from the
 * tokens, no vocabulary lookup. Scored exactly as the same documents put by
 * id; a word the model does not hold is counted unseen, not added. */
static void test_heldout_from_bags(void)
{
    enum { NH = 12 };
    slda_params_t p = base_params(4, 4096);
    slda_model_t *model = open_model(&p);
    train_stream(model, 31, 0, 200, (size_t)-1);
    slda_heldout_t *by_id = slda_heldout_new(), *by_key = slda_heldout_new();
    slda_bag_t *bag = slda_bag_new();
    slda_doc_t docs[NH];
    char buf[2048], err[256];
    for (size_t i = 0; i < NH; i++) {
        size_t n = doc_text(31, 500 + i, (size_t)-1, buf, sizeof buf);
        CHECK_INT(slda_bag_tokenize(model->tok, slda_vocab_seed(model->vocab), bag, buf, n, err, sizeof err), SLDA_OK);
        CHECK_INT(slda_heldout_put_keys(by_key, i, model, bag->hash, bag->count, bag->n, err,
                                        sizeof err), SLDA_OK);
        make_doc(model, 31, 500 + i, (size_t)-1, &docs[i]);
        CHECK_INT(slda_heldout_put(by_id, i, model, &docs[i], err, sizeof err), SLDA_OK);
    }
    double a, b;
    slda_heldout_stats_t sa, sb;
    CHECK_INT(slda_heldout_perplexity(model, by_id, NULL, 5, &a, &sa), SLDA_OK);
    CHECK_INT(slda_heldout_perplexity(model, by_key, NULL, 5, &b, &sb), SLDA_OK);
    CHECK_EQ(a, b);
    CHECK_TRUE(isfinite(a), "perplexity %g", a);
    CHECK_INT(sb.scored, sa.scored);
    CHECK_INT(sb.unseen, 0);
    /* a document of words the model never saw: unseen, and the vocabulary keeps its size */
    uint32_t V = slda_model_vocab_size(model);
    size_t n = (size_t)snprintf(buf, sizeof buf, "zzunseena zzunseenb zzunseenb ta");
    CHECK_INT(slda_bag_tokenize(model->tok, slda_vocab_seed(model->vocab), bag, buf, n, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_heldout_put_keys(by_key, 0, model, bag->hash, bag->count, bag->n, err,
                                    sizeof err), SLDA_OK);
    CHECK_INT(slda_model_vocab_size(model), V);
    CHECK_INT(slda_heldout_perplexity(model, by_key, NULL, 5, &b, &sb), SLDA_OK);
    CHECK_INT(sb.unseen, 3);
    /* past the end: refused, as by id */
    CHECK_INT(slda_heldout_put_keys(by_key, NH + 1, model, bag->hash, bag->count, bag->n, err,
                                    sizeof err), SLDA_ERR_RANGE);
    slda_bag_free(bag);
    slda_docs_clear(docs, NH);
    slda_heldout_destroy(by_id);
    slda_heldout_destroy(by_key);
    slda_model_destroy(model);
}

/* Hints (slda_bag_hint, the service's decoding): a batch of bags is tokenised and
 * its words found first, then looked up in order, epochs advancing between batches.
 * With a vocabulary small enough to evict inside a batch (hints gone stale), the
 * documents, ids, frequencies and eviction count equal those of searching every word:
 * model a's hints also make the documents of bags whose words were all found (and
 * some of those go stale before their lookup: emptied and searched again), model c's
 * only find the words (doc NULL: standard input's batches), model b searches. */
static void test_bag_hints(void)
{
    enum { NB = 8, BATCHES = 60 };
    slda_params_t p = base_params(4, 300);
    slda_model_t *a = open_model(&p), *b = open_model(&p), *c = open_model(&p);
    slda_model_t *m[3] = {a, b, c};
    slda_bag_t *bags[3][NB];
    slda_doc_t docs[3][NB];
    char buf[2048], err[256];
    int same = 1;
    uint64_t hits = 0, built = 0, built_stale = 0;
    for (size_t i = 0; i < NB; i++)
        for (int j = 0; j < 3; j++)
            bags[j][i] = slda_bag_new();
    for (size_t t = 0; t < BATCHES; t++) {
        for (size_t i = 0; i < NB; i++) {
            /* every other document has fresh words (evictions), the rest none */
            size_t n = doc_text(41, t * NB + i, i % 2 ? 0 : (size_t)-1, buf, sizeof buf);
            for (int j = 0; j < 3; j++) {
                slda_doc_init(&docs[j][i]);
                CHECK_INT(slda_bag_tokenize(m[j]->tok, slda_vocab_seed(m[j]->vocab), bags[j][i], buf, n, err, sizeof err), SLDA_OK);
            }
            slda_bag_hint(a->vocab, bags[0][i], &docs[0][i]);
            slda_bag_hint(c->vocab, bags[2][i], NULL);
            for (uint32_t u = 0; u < bags[0][i]->n; u++)
                hits += bags[0][i]->hint[u] != UINT32_MAX;
            built += bags[0][i]->built;
            CHECK_INT(bags[2][i]->built, 0);
        }
        for (size_t i = 0; i < NB; i++) {
            built_stale += bags[0][i]->built && bags[0][i]->hint_evictions !=
                                                    slda_vocab_evictions(a->vocab);
            slda_err_t e[3];
            for (int j = 0; j < 3; j++)
                e[j] = slda_doc_from_bag(m[j]->tok, m[j]->vocab, bags[j][i], &docs[j][i], err, sizeof err);
            for (int j = 0; j < 3; j += 2) {
                const slda_doc_t *x = &docs[j][i], *y = &docs[1][i];
                if (e[j] != e[1] || x->npairs != y->npairs || x->ntokens != y->ntokens ||
                    (x->npairs && (memcmp(x->word, y->word, x->npairs * sizeof *x->word) ||
                                   memcmp(x->count, y->count, x->npairs * sizeof *x->count))))
                    same = 0;
            }
            for (int j = 0; j < 3; j++)
                slda_doc_clear(&docs[j][i]);
        }
        for (int j = 0; j < 3; j++)
            slda_vocab_new_epoch(m[j]->vocab);
    }
    CHECK(same);
    CHECK_GT(hits, 0);
    CHECK_GT(built, 0);
    CHECK_GT(built_stale, 0);
    CHECK_GT(slda_vocab_evictions(a->vocab), 0);
    for (int j = 0; j < 3; j += 2) {
        CHECK_EQ(slda_vocab_evictions(m[j]->vocab), slda_vocab_evictions(b->vocab));
        for (uint32_t id = 0; id < slda_vocab_capacity(b->vocab); id++) {
            const char *wa = slda_vocab_word(m[j]->vocab, id), *wb = slda_vocab_word(b->vocab, id);
            if ((!wa) != (!wb) || (wa && strcmp(wa, wb)) ||
                slda_vocab_freq(m[j]->vocab, id) != slda_vocab_freq(b->vocab, id))
                same = 0;
        }
    }
    CHECK(same);
    printf("hints: %" PRIu64 " words found, %" PRIu64 " documents made ahead, %" PRIu64
           " of them searched again after an eviction\n", hits, built, built_stale);
    for (size_t i = 0; i < NB; i++)
        for (int j = 0; j < 3; j++)
            slda_bag_free(bags[j][i]);
    for (int j = 0; j < 3; j++)
        slda_model_destroy(m[j]);
}

/* The capacity's rows no word has used stay untouched: rows are paged in
 * (written with zeros, model.c "Paging in") a step ahead of the vocabulary,
 * and the first update's clearing and the lazy scale's fold stop at
 * rows_used (1 + the highest id ever written), so the pages past that step
 * are never faulted in (a model with vocab.capacity=131072 and K=100 kept
 * all 54 MB of A resident whatever its vocabulary), and they stay zero. */
static void test_rows_untouched(void)
{
    slda_params_t p = base_params(64, 65536); /* A: 16 MB */
    slda_model_t *model = open_model(&p);
    train_stream(model, 31, 0, 200, 100); /* from document 100 on, new words */
    model->sigma = 1.0001 * SLDA_SIGMA_FOLD; /* the next update folds the scale into A */
    train_stream(model, 31, 200, 240, 100);
    CHECK_GT(model->sigma, 0.5);          /* it did */
    uint32_t used = model->rows_used, paged = model->rows_paged, Kp = model->Kp;
    CHECK_GT(used, 300);
    CHECK_LE(used, slda_vocab_max_id(model->vocab));
    CHECK_GE(paged, used);
    CHECK_LE((size_t)(paged - used) * Kp * sizeof(float), SLDA_PAGE_IN_BYTES);
    /* from a 4 MB boundary past the rows paged in (a transparent huge page
     * may hold a few rows beside them) to the end of A */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), huge = (size_t)4 << 20;
    uintptr_t from = (uintptr_t)(model->A + (size_t)paged * Kp), to;
    from = (from + huge - 1) / huge * huge;
    to = (uintptr_t)(model->A + (size_t)model->W * Kp) / page * page;
    CHECK_GT(to, from + ((size_t)8 << 20));
    size_t npages = (to - from) / page, resident = 0;
    unsigned char *vec = malloc(npages + 1);
    CHECK_INT(mincore((void *)from, to - from, vec), 0);
    for (size_t i = 0; i < npages; i++)
        resident += vec[i] & 1;
    free(vec);
    CHECK_INT(resident, 0);
    size_t nonzero = 0;
    for (size_t i = (size_t)used * Kp; i < (size_t)model->W * Kp; i++)
        nonzero += model->A[i] != 0;
    CHECK_INT(nonzero, 0);
    slda_model_destroy(model);
}

int main(void)
{
    test_bag_hints();
    test_smoothing_over_words_held();
    test_heldout_from_bags();
    test_smoothing_with_eviction_and_restart();
    test_late_rows(1, SLDA_ROWS_DECAY);
    test_late_rows(10, SLDA_ROWS_DECAY);
    test_late_rows(10, SLDA_ROWS_COUNTS);
    test_heldout_after_eviction();
    test_rows_untouched();
    return slda_test_done("unit_openvocab");
}
