/* unit_update.c - the global update as data (update.c): local + apply equals train bit for
 * bit, replicas that apply one log of records agree bit for bit, the codec round trip and
 * its refusal of damaged records.
 *
 * Models come from a configuration as the program builds them (open vocabulary, births on
 * by default) and documents from text through each model's own vocabulary, so word ids
 * differ between replicas and the comparisons go by word.
 */
#include "engine/births.h"
#include "engine/model.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "engine/update_priv.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static slda_conf_t *make_conf(const char *const *kv)
{
    char err[256];
    slda_conf_t *conf = slda_conf_new();
    static const char *const base[] = {"topics", "8", "vocab.capacity", "4096", "seed", "5",
                                       "global.stale", "0", "corpus.tokens", "40000",
                                       "births.docs", "8", "births.gain", "0.01", "text.min.length", "1",
                                       "text.stopwords", "none", NULL};
    for (int pass = 0; pass < 2; pass++) {
        const char *const *p = pass ? kv : base;
        for (; p && *p; p += 2)
            if (slda_conf_set(conf, p[0], p[1], err, sizeof err) != SLDA_OK) {
                fprintf(stderr, "slda_conf_set %s=%s: %s\n", p[0], p[1], err);
                exit(1);
            }
    }
    return conf;
}

static slda_model_t *make_model(const char *const *kv)
{
    char err[256];
    slda_conf_t *conf = make_conf(kv);
    slda_model_t *model = slda_model_new(conf, err, sizeof err);
    if (!model) {
        fprintf(stderr, "slda_model_new: %s\n", err);
        exit(1);
    }
    slda_conf_destroy(conf);
    return model;
}

/* Document d: 2 of 4 topics (6 from batch 60 on, after the births warm-up of 50 updates, so births have a new
 * theme to find), 40 tokens; one token in eight a fresh word spelt with
 * `fresh` (each replica its own letter: words only one of them sees). */
static size_t doc_text(size_t d, char fresh, char *buf, size_t cap)
{
    slda_rng_t rng;
    slda_rng_seed3(&rng, 99, 0x646f63, d);
    uint32_t nt = d >= 60 * 16 ? 6 : 4;
    uint32_t ka = slda_rng_below(&rng, nt), kb = slda_rng_below(&rng, nt);
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t k = slda_rng_below(&rng, 2) ? ka : kb;
        double u = slda_rng_double(&rng);
        uint32_t w = (uint32_t)(50 * u * u * u);
        if (i % 8 == 7)
            n += slda_test_spell(buf + n, cap - n, fresh, (uint64_t)d * 64 + (uint64_t)i);
        else
            n += slda_test_spell(buf + n, cap - n, 't', k * 100 + w);
    }
    return n;
}

static void make_doc(slda_model_t *model, size_t d, char fresh, slda_doc_t *doc)
{
    char buf[2048], err[256];
    size_t n = doc_text(d, fresh, buf, sizeof buf);
    slda_doc_init(doc);
    if (slda_doc_from_text(model, buf, n, doc, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "slda_doc_from_text: %s\n", err);
        exit(1);
    }
}

/* The same document over a replica's scratch words (the vocabulary untouched). */
static void make_sdoc(const slda_model_t *model, slda_update_scratch_t *scratch, size_t d,
                      char fresh, slda_doc_t *doc)
{
    char buf[2048], err[256];
    size_t n = doc_text(d, fresh, buf, sizeof buf);
    if (slda_update_doc_from_text(model, scratch, buf, n, doc, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "slda_update_doc_from_text: %s\n", err);
        exit(1);
    }
}

static size_t make_sbatch(const slda_model_t *model, slda_update_scratch_t *scratch, size_t b,
                          char fresh, slda_doc_t *docs)
{
    slda_update_scratch_clear(scratch);
    for (size_t i = 0; i < 16; i++)
        make_sdoc(model, scratch, b * 16 + i, fresh, &docs[i]);
    if (b % 5 == 2) {
        slda_doc_clear(&docs[0]);
        slda_doc_init(&docs[0]);
    }
    return 16;
}

/* A fixed vocabulary of the stream's topic words (its fresh words are
 * dropped, as slda_doc_from_text drops unknown words); its path. */
static char fixed_dir[4096], fixed_path[4200];

static const char *fixed_vocab(void)
{
    char *path = fixed_path;
    if (path[0])
        return path;
    size_t cap = 6 * 50 * 16, n = 0;
    char *text = malloc(cap), w[32];
    for (uint32_t k = 0; k < 6; k++)
        for (uint32_t i = 0; i < 50; i++) {
            size_t len = slda_test_spell(w, sizeof w, 't', k * 100 + i);
            w[len - 1] = '\n';
            memcpy(text + n, w, len);
            n += len;
        }
    text[n] = '\0';
    char *dir = slda_test_tmpdir();
    snprintf(fixed_dir, sizeof fixed_dir, "%s", dir);
    free(dir);
    snprintf(path, sizeof fixed_path, "%s/vocab.txt", fixed_dir);
    if (slda_test_write_file(path, text) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    free(text);
    return path;
}

/* Minibatch b (16 documents, the first of them empty in every fifth batch). */
static size_t make_batch(slda_model_t *model, size_t b, char fresh, slda_doc_t *docs)
{
    for (size_t i = 0; i < 16; i++)
        make_doc(model, b * 16 + i, fresh, &docs[i]);
    if (b % 5 == 2) { /* an empty document: counted, not trained */
        slda_doc_clear(&docs[0]);
        slda_doc_init(&docs[0]);
    }
    return 16;
}

/* Encode with values, decode: the record every replica applies. */
static slda_update_t *through_log(const slda_update_t *upd, slda_update_values_t values,
                                  size_t *bytes)
{
    char err[256];
    void *buf;
    size_t len;
    slda_update_t *out = NULL;
    CHECK_INT(slda_update_encode(upd, values, &buf, &len, err, sizeof err), SLDA_OK);
    if (slda_update_decode(buf, len, &out, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "decode: %s\n", err);
        exit(1);
    }
    if (bytes)
        *bytes += len;
    free(buf);
    return out;
}

/* Models a and b hold the same state, word by word: t, counts, sigma, NZ,
 * alpha, the words held and each one's row, births counts. Returns the
 * number of differences. */
static int compare_models(const slda_model_t *a, const slda_model_t *b)
{
    int diff = 0;
    diff += a->t != b->t;
    diff += a->docs != b->docs;
    diff += a->tokens != b->tokens;
    diff += a->replay_tokens != b->replay_tokens;
    diff += memcmp(&a->sigma, &b->sigma, sizeof a->sigma) != 0;
    diff += memcmp(&a->alpha_sum, &b->alpha_sum, sizeof a->alpha_sum) != 0;
    diff += memcmp(a->NZ, b->NZ, a->K * sizeof(double)) != 0;
    diff += memcmp(a->alpha, b->alpha, a->K * sizeof(double)) != 0;
    diff += a->nready != b->nready;
    uint32_t held = 0;
    for (uint32_t id = 0; id < a->W; id++) {
        if (!a->row_ready[id])
            continue;
        held++;
        const char *w = slda_vocab_word(a->vocab, id);
        uint32_t bid = slda_vocab_find(b->vocab, w, strlen(w));
        if (bid == UINT32_MAX || !b->row_ready[bid] ||
            memcmp(a->A + (size_t)id * a->Kp, b->A + (size_t)bid * b->Kp,
                   a->Kp * sizeof(float))) {
            if (diff < 5)
                fprintf(stderr, "word \"%s\": row differs or missing\n", w);
            diff++;
        }
    }
    diff += held != b->nready;
    slda_topic_counts_t ca, cb;
    slda_model_topic_counts(a, &ca);
    slda_model_topic_counts(b, &cb);
    diff += memcmp(&ca, &cb, sizeof ca) != 0;
    return diff;
}

/* 1. For one model, local + (encode, decode) + apply gives the model train gives. */
static void test_local_apply_equals_train(const char *const *kv, const char *what,
                                          int want_births)
{
    char err[256];
    slda_model_t *m1 = make_model(kv), *m2 = make_model(kv);
    slda_doc_t d1[16], d2[16];
    for (size_t b = 0; b < 100; b++) {
        size_t n1 = make_batch(m1, b, 'n', d1), n2 = make_batch(m2, b, 'n', d2);
        uint32_t K = slda_model_topics(m1);
        float *th1 = calloc(16 * K, sizeof *th1), *th2 = calloc(16 * K, sizeof *th2);
        CHECK_INT(slda_model_train(m1, d1, n1, th1, NULL, err, sizeof err), SLDA_OK);
        slda_update_t *upd = NULL;
        CHECK_INT(slda_update_local(m2, NULL, d2, n2, 0, th2, &upd, err, sizeof err), SLDA_OK);
        /* the documents' mixtures (outputs, tracking) are train's too */
        CHECK_MEM(th1, th2, n1 * K * sizeof *th1);
        free(th1);
        free(th2);
        CHECK_INT(slda_update_base(upd), b);
        slda_update_t *rec = through_log(upd, SLDA_UPDATE_F32, NULL);
        CHECK_INT(slda_update_apply(m2, rec, err, sizeof err), SLDA_OK);
        slda_update_destroy(rec);
        slda_update_destroy(upd);
        slda_docs_clear(d1, n1);
        slda_docs_clear(d2, n2);
    }
    slda_model_flush(m1);
    slda_topic_counts_t tc;
    slda_model_topic_counts(m1, &tc);
    if (getenv("UNIT_UPDATE_VERBOSE"))
        fprintf(stderr, "%s: births %llu deaths %llu merges %llu proposals %llu flagged %llu "
                "alpha0 %.6g\n", what, (unsigned long long)tc.births, (unsigned long long)tc.deaths,
                (unsigned long long)tc.merges, (unsigned long long)tc.proposals,
                (unsigned long long)tc.flagged, m1->alpha[0]);
    if (want_births) { /* the births decisions went through records too */
        CHECK_GT(tc.births, 0);
        CHECK_GT(tc.merges + tc.deaths, 0);
    }
    int diff = compare_models(m1, m2);
    if (diff)
        fprintf(stderr, "%s: %d differences\n", what, diff);
    CHECK_INT(diff, 0);
    CHECK_EQ(m1->t, 100);
    slda_model_destroy(m1);
    slda_model_destroy(m2);
}

/* The local half leaves the model as it was, bit for bit. */
static void test_local_changes_nothing(void)
{
    char err[256];
    slda_model_t *m = make_model(NULL);
    slda_doc_t d[16];
    size_t n = make_batch(m, 0, 'n', d);
    CHECK_INT(slda_model_train(m, d, n, NULL, NULL, err, sizeof err), SLDA_OK);
    slda_docs_clear(d, n);
    n = make_batch(m, 1, 'q', d); /* new words: rows initialised for the local steps only */
    size_t bytes = (size_t)m->W * m->Kp * sizeof(float);
    float *A = malloc(bytes);
    memcpy(A, m->A, bytes);
    double nz[8];
    memcpy(nz, m->NZ, sizeof nz);
    uint32_t nready = m->nready;
    slda_update_t *upd = NULL;
    CHECK_INT(slda_update_local(m, NULL, d, n, 0, NULL, &upd, err, sizeof err), SLDA_OK);
    CHECK_MEM(A, m->A, bytes);
    CHECK_MEM(nz, m->NZ, sizeof nz);
    CHECK_INT(m->nready, nready);
    CHECK_INT(m->t, 1);
    CHECK_INT(slda_update_docs(upd), 16);
    slda_update_destroy(upd);
    slda_docs_clear(d, n);
    free(A);
    slda_model_destroy(m);
}

/* The scratch path leaves the model as it was too, when every row is held
 * and new words must borrow rows of words held (restored afterwards). */
static void test_scratch_borrows_held_rows(void)
{
    char err[256];
    slda_model_t *m = make_model((const char *const[]){"vocab.capacity", "512", NULL});
    slda_update_scratch_t *s = slda_update_scratch_new();
    slda_doc_t d[16];
    for (size_t b = 0; b < 10; b++) { /* fill the vocabulary through records */
        size_t n = make_sbatch(m, s, b, 'n', d);
        slda_update_t *upd = NULL;
        if (slda_update_local(m, s, d, n, 0, NULL, &upd, err, sizeof err) != SLDA_OK ||
            slda_update_apply(m, upd, err, sizeof err) != SLDA_OK) {
            fprintf(stderr, "filling: %s\n", err);
            slda_test_failures++;
        }
        slda_update_destroy(upd);
        slda_docs_clear(d, n);
    }
    CHECK_INT(m->nready, 512); /* every row held */
    size_t n = make_sbatch(m, s, 10, 'q', d);
    size_t bytes = (size_t)m->W * m->Kp * sizeof(float);
    float *A = malloc(bytes);
    uint8_t ready[512];
    double nz[8];
    memcpy(A, m->A, bytes);
    memcpy(ready, m->row_ready, sizeof ready);
    memcpy(nz, m->NZ, sizeof nz);
    slda_update_t *upd = NULL;
    CHECK_INT(slda_update_local(m, s, d, n, 0, NULL, &upd, err, sizeof err), SLDA_OK);
    CHECK_MEM(A, m->A, bytes);
    CHECK_MEM(ready, m->row_ready, sizeof ready);
    CHECK_MEM(nz, m->NZ, sizeof nz);
    CHECK_INT(m->nready, 512);
    CHECK_INT(slda_update_apply(m, upd, err, sizeof err), SLDA_OK); /* evicts in apply */
    CHECK_GT(slda_vocab_evictions(m->vocab), 0);
    slda_update_destroy(upd);
    slda_docs_clear(d, n);
    free(A);
    slda_update_scratch_destroy(s);
    slda_model_destroy(m);
}

/* 2. Replicas A and B, each doing the local steps of its own minibatches
 * (even ones on A, odd ones on B, two at a time against the same update
 * index, so every second record is one update stale when applied), both
 * applying the one log of all records: identical models, including the words
 * only B ever tokenised. A third model trained by one instance through the
 * same records agrees too (item 4). */
static void test_replicas_agree(slda_update_values_t values, const char *const *kv, double thin)
{
    char err[256];
    slda_model_t *a = make_model(kv), *b = make_model(kv), *one = make_model(kv);
    int open = !slda_vocab_is_fixed(a->vocab);
    slda_update_scratch_t *sa = slda_update_scratch_new(), *sb = slda_update_scratch_new();
    slda_doc_t da[16], db[16];
    size_t bytes = 0;
    for (size_t pair = 0; pair < 50; pair++) {
        size_t na = make_sbatch(a, sa, 2 * pair, 'a', da);
        size_t nb = make_sbatch(b, sb, 2 * pair + 1, 'z', db);
        uint32_t words_a = slda_vocab_size(a->vocab);
        slda_update_t *ua = NULL, *ub = NULL;
        CHECK_INT(slda_update_local(a, sa, da, na, 0, NULL, &ua, err, sizeof err), SLDA_OK);
        CHECK_INT(slda_update_local(b, sb, db, nb, 0, NULL, &ub, err, sizeof err), SLDA_OK);
        CHECK_INT(slda_vocab_size(a->vocab), words_a); /* only apply changes it */
        slda_update_add_input(ua, "docs", 0, (int64_t)pair * 16, (int64_t)pair * 16 + 15);
        slda_update_add_input(ub, "docs", 1, (int64_t)pair * 16, (int64_t)pair * 16 + 15);
        slda_update_thin(ua, thin); /* thinned records too: a function of the record */
        slda_update_thin(ub, thin);
        slda_update_t *log[2] = {through_log(ua, values, &bytes), through_log(ub, values, &bytes)};
        for (int i = 0; i < 2; i++) { /* every replica applies the log in order */
            CHECK_INT(slda_update_apply(a, log[i], err, sizeof err), SLDA_OK);
            CHECK_INT(slda_update_apply(b, log[i], err, sizeof err), SLDA_OK);
            CHECK_INT(slda_update_apply(one, log[i], err, sizeof err), SLDA_OK);
            slda_update_destroy(log[i]);
        }
        slda_update_destroy(ua);
        slda_update_destroy(ub);
        slda_docs_clear(da, na);
        slda_docs_clear(db, nb);
    }
    CHECK_INT(a->t, 100);
    CHECK_INT(compare_models(a, b), 0);
    CHECK_INT(compare_models(b, a), 0);
    CHECK_INT(compare_models(a, one), 0);
    /* the digest the service logs at a stop says so too, and sees one float change */
    CHECK_EQ(slda_model_digest(a), slda_model_digest(b));
    CHECK_EQ(slda_model_digest(a), slda_model_digest(one));
    uint32_t held = 0;
    while (held < a->W && !a->row_ready[held])
        held++;
    CHECK_LT(held, a->W);
    float saved = a->A[(size_t)held * a->Kp + 1];
    a->A[(size_t)held * a->Kp + 1] = nextafterf(saved, 1e30f);
    CHECK_NE(slda_model_digest(a), slda_model_digest(b));
    a->A[(size_t)held * a->Kp + 1] = saved;
    CHECK_EQ(slda_model_digest(a), slda_model_digest(b));
    /* the vocabularies evicted (4096 words, ~9000 seen) the same words */
    CHECK_TRUE(slda_vocab_evictions(a->vocab) > 0 || !open, "open %d: %llu evictions", open,
               (unsigned long long)slda_vocab_evictions(a->vocab));
    CHECK_INT(slda_vocab_evictions(a->vocab), slda_vocab_evictions(b->vocab));
    CHECK_INT(slda_vocab_size(a->vocab), slda_vocab_size(b->vocab));
    /* a late word only B saw is held by A, and one only A saw by B (open
     * vocabulary; a fixed one dropped both) */
    char wz[16], wa[16];
    slda_test_spell(wz, sizeof wz, 'z', (uint64_t)(99 * 16) * 64 + 7);
    slda_test_spell(wa, sizeof wa, 'a', (uint64_t)(98 * 16) * 64 + 7);
    uint32_t zid = slda_vocab_find(a->vocab, wz, strlen(wz) - 1);
    uint32_t aid = slda_vocab_find(b->vocab, wa, strlen(wa) - 1);
    CHECK_TRUE(open ? zid != UINT32_MAX && a->row_ready[zid] : zid == UINT32_MAX,
               "open %d: id %u, row ready %d", open, zid,
               zid != UINT32_MAX ? (int)a->row_ready[zid] : -1);
    CHECK_TRUE(open ? aid != UINT32_MAX && b->row_ready[aid] : aid == UINT32_MAX,
               "open %d: id %u, row ready %d", open, aid,
               aid != UINT32_MAX ? (int)b->row_ready[aid] : -1);
    CHECK_EQ(a->docs, 100 * 16 - 20);
    CHECK_GT(a->tokens, 0); /* 20 of 100 batches hold an empty doc */
    slda_topic_counts_t tc;
    slda_model_topic_counts(a, &tc);
    if (getenv("UNIT_UPDATE_VERBOSE"))
        fprintf(stderr, "replicas: births %llu merges %llu deaths %llu\n",
                (unsigned long long)tc.births, (unsigned long long)tc.merges,
                (unsigned long long)tc.deaths);
    if (getenv("UNIT_UPDATE_VERBOSE"))
        fprintf(stderr, "replicas (%s): %.1f bytes per document, %llu evictions\n",
                values == SLDA_UPDATE_F32 ? "float32" : values == SLDA_UPDATE_F16 ? "float16" : "q8",
                (double)bytes / (100 * 16), (unsigned long long)slda_vocab_evictions(a->vocab));
    slda_update_scratch_destroy(sa);
    slda_update_scratch_destroy(sb);
    slda_model_destroy(a);
    slda_model_destroy(b);
    slda_model_destroy(one);
}

/* 3. Codec: float32 round trip exact (re-encoding gives the same bytes),
 * float16 and q8 within their resolution, inputs carried. */
static void test_codec(void)
{
    char err[256];
    slda_model_t *m = make_model((const char *const[]){"alpha.learn", "newton", NULL});
    slda_doc_t d[16];
    size_t n = make_batch(m, 0, 'n', d);
    slda_update_t *upd = NULL;
    CHECK_INT(slda_update_local(m, NULL, d, n, 0, NULL, &upd, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_update_add_input(upd, "docs", 3, 100, 115), SLDA_OK);
    CHECK_INT(slda_update_add_input(upd, "docs", 4, 7, 6), SLDA_ERR_INVALID);
    slda_update_values_t pv = SLDA_UPDATE_F32;
    CHECK_EQ(slda_update_values_parse("q8", &pv), 0);
    CHECK_EQ(pv, SLDA_UPDATE_Q8);
    CHECK_EQ(slda_update_values_parse("float64", &pv), -1);
    void *b1, *b2;
    size_t l1, l2;
    CHECK_INT(slda_update_encode(upd, SLDA_UPDATE_F32, &b1, &l1, err, sizeof err), SLDA_OK);
    slda_update_t *dec = NULL;
    CHECK_INT(slda_update_decode(b1, l1, &dec, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_update_encode(dec, SLDA_UPDATE_F32, &b2, &l2, err, sizeof err), SLDA_OK);
    CHECK_EQ(l1, l2);
    if (l1 == l2)
        CHECK_MEM(b1, b2, l1);
    const char *topic;
    int32_t part;
    int64_t from, to;
    CHECK_INT(slda_update_input(dec, 0, &topic, &part, &from, &to), 1);
    CHECK_STR(topic, "docs");
    CHECK_EQ(part, 3);
    CHECK_EQ(from, 100);
    CHECK_EQ(to, 115);
    CHECK_INT(slda_update_tokens(dec), slda_update_tokens(upd));
    slda_update_destroy(dec);
    dec = NULL;
    free(b2);
    for (int v = 1; v <= 2; v++) {
        slda_update_t *q = through_log(upd, (slda_update_values_t)v, NULL);
        double worst = 0;
        uint32_t ns, K, qns, qK;
        const float *x = slda_update_stats(upd, &ns, &K), *y = slda_update_stats(q, &qns, &qK);
        CHECK_EQ(ns, qns);
        CHECK_EQ(K, qK);
        CHECK_GT(ns, 0);
        for (uint32_t s = 0; s < ns; s++) {
            float mx = 0;
            for (uint32_t k = 0; k < K; k++)
                mx = fmaxf(mx, x[(size_t)s * K + k]);
            for (uint32_t k = 0; k < K; k++) {
                double e = fabs(y[(size_t)s * K + k] - x[(size_t)s * K + k]);
                worst = fmax(worst, mx > 0 ? e / mx : e);
            }
        }
        CHECK_LE(worst, (v == 1 ? 1e-3 : 0.5 / 255 + 1e-6));
        CHECK_GT(worst, 0);
        slda_update_destroy(q);
    }

    /* 4. damaged records: every truncation, single-byte flips, a wrong
     * version; then structural damage under a valid checksum */
    for (size_t cut = 0; cut < l1; cut += cut < 64 ? 1 : 37) {
        slda_update_t *x = NULL;
        slda_err_t rc = slda_update_decode(b1, cut, &x, err, sizeof err);
        CHECK_TRUE(rc != SLDA_OK && !x, "%zu of %zu bytes: %s, record %p", cut, l1,
                   slda_err_name(rc), (void *)x);
    }
    unsigned char *c = malloc(l1);
    for (size_t i = 0; i < l1; i += 13) {
        memcpy(c, b1, l1);
        c[i] ^= 0x40;
        slda_update_t *x = NULL;
        slda_err_t rc = slda_update_decode(c, l1, &x, err, sizeof err);
        CHECK_TRUE(rc != SLDA_OK && !x, "byte %zu flipped: %s, record %p", i, slda_err_name(rc),
                   (void *)x);
    }
    memcpy(c, b1, l1);
    c[7] = 9;
    CHECK_INT(slda_update_decode(c, l1, &dec, err, sizeof err), SLDA_ERR_VERSION);
    CHECK_CONTAINS(err, "format version 9");
    memcpy(c, b1, l1);
    c[0] = 'X';
    CHECK_INT(slda_update_decode(c, l1, &dec, err, sizeof err), SLDA_ERR_CORRUPT);
    CHECK_CONTAINS(err, "magic");
    memcpy(c, b1, l1);
    c[l1 - 20] ^= 1;
    CHECK_INT(slda_update_decode(c, l1, &dec, err, sizeof err), SLDA_ERR_CORRUPT);
    CHECK_CONTAINS(err, "checksum");
    /* every byte of the body changed, the checksum fixed: refused or decoded, never a crash */
    int refused = 0;
    for (size_t i = 8; i + 8 < l1; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(c, b1, l1);
            c[i] ^= (unsigned char)(1u << bit);
            uint64_t h = slda_hash64(c, l1 - 8, 0);
            for (int j = 0; j < 8; j++)
                c[l1 - 8 + j] = (unsigned char)(h >> (8 * (7 - j)));
            slda_update_t *x = NULL;
            if (slda_update_decode(c, l1, &x, err, sizeof err) != SLDA_OK)
                refused++;
            else
                CHECK_TRUE(x != NULL, "%s", err);
            slda_update_destroy(x);
        }
    }
    CHECK_GT(refused, 0);
    slda_update_destroy(dec);
    free(c);
    free(b1);

    /* a record for another K is refused by apply */
    slda_model_t *other = make_model((const char *const[]){"topics", "9", NULL});
    CHECK_INT(slda_update_apply(other, upd, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "topics");
    slda_model_destroy(other);
    slda_update_destroy(upd);
    slda_docs_clear(d, n);
    slda_model_destroy(m);
}

/* A stale record's columns follow the slots' events since it was made
 * (slda_births_remap, applied by slda_update_apply): a merge of 2 into 1 at
 * update 5, then at update 6 a death of 4 and a birth into 2. */
static void test_births_remap(void)
{
    slda_model_t *m = make_model(NULL);
    m->t = 10;
    slda_births_t *fresh = slda_births_new(m);
    slda_births_state_t st;
    slda_births_export(fresh, &st);
    slda_event_t ev[3] = {
        {.seq = 1, .update = 5, .kind = SLDA_EVENT_MERGE, .topic = 2, .other = 1},
        {.seq = 2, .update = 6, .kind = SLDA_EVENT_DEATH, .topic = 4, .other = 4},
        {.seq = 3, .update = 6, .kind = SLDA_EVENT_BIRTH, .topic = 2, .other = 2},
    };
    free(st.ev);
    st.ev = malloc(sizeof ev);
    memcpy(st.ev, ev, sizeof ev);
    st.nev = st.nkept = 3;
    char err[256];
    slda_births_t *b = slda_births_import(m, &st, err, sizeof err);
    if (!b)
        fprintf(stderr, "import: %s\n", err);
    CHECK_TRUE(b != NULL, "%s", err);
    slda_births_export_clear(&st);
    for (uint64_t base = 3; b && base <= 7; base++) {
        float x[2][9];
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 9; k++)
                x[r][k] = (float)(10 * r + k + 1);
        size_t n = slda_births_remap(b, base, &x[0][0], 2, 9);
        CHECK_INT(n, base < 5 ? 3 : base < 6 ? 2 : 0);
        for (int r = 0; r < 2; r++) {
            float one = (float)(10 * r + 2), two = (float)(10 * r + 3), four = (float)(10 * r + 5);
            CHECK_EQ(x[r][1], (base < 5 ? one + two : one)); /* merged into 1 */
            CHECK_EQ(x[r][2], (base < 6 ? 0 : two));         /* merged away, then reborn */
            CHECK_EQ(x[r][4], (base < 6 ? 0 : four));        /* died */
            CHECK_EQ(x[r][0], (float)(10 * r + 1));
            CHECK_EQ(x[r][8], (float)(10 * r + 9));
        }
    }
    slda_births_free(b);
    slda_births_free(fresh);
    slda_model_destroy(m);
}

/* 5. Version-1 records (the format before sparse rows; tests/fixtures/update-v1-*.sldu were
 * written by the version-1 encoder of commit bf6c0a7 from six documents against a K=8 model
 * with births and alpha.learn=newton, v1_conf below, then applied to a fresh such model, whose
 * slda_model_digest is recorded here): read, and applied to the very same model; their
 * statistics re-encoded as version 2 decode to the same values (q8: the same values as the
 * version-1 q8 record made from the same statistics). */
static const char *const v1_conf[] = {"corpus.tokens", "40000", "births.docs", "8",
                                      "births.gain", "0.08", "alpha.learn", "newton", NULL};

static void *read_fixture(const char *name, size_t *len)
{
    char path[4096];
    const char *src = getenv("SLDA_SOURCE_DIR");
    if (src && *src) {
        snprintf(path, sizeof path, "%s/tests/fixtures/%s", src, name);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        snprintf(path, sizeof path, "%.*s/fixtures/%s", slash ? (int)(slash - __FILE__) : 1,
                 slash ? __FILE__ : ".", name);
    }
    FILE *f = fopen(path, "rb");
    CHECK_TRUE(f != NULL, "cannot open %s", path);
    if (!f)
        exit(1);
    unsigned char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void same_stats(const slda_update_t *a, const slda_update_t *b, const char *what)
{
    uint32_t na, nb, K, Kb;
    const float *x = slda_update_stats(a, &na, &K), *y = slda_update_stats(b, &nb, &Kb);
    CHECK_TRUE(na == nb && K == Kb, "%s: %u x %u against %u x %u", what, na, K, nb, Kb);
    if (na == nb && K == Kb)
        CHECK_TRUE(!memcmp(x, y, (size_t)na * K * sizeof *x), "%s: values differ", what);
    CHECK_TRUE((a->ntheta == NULL) == (b->ntheta == NULL), "%s: ntheta", what);
    if (a->ntheta && b->ntheta)
        CHECK_TRUE(!memcmp(a->ntheta, b->ntheta, (size_t)a->ndocs * a->K * sizeof(float)),
                   "%s: ntheta differs", what);
}

static void test_version1_records(void)
{
    char err[256];
    static const char *const names[] = {"update-v1-f32.sldu", "update-v1-q8.sldu"};
    static const uint64_t digests[] = {0xd5b1c79a6f8a8ad5ull, 0xc4bbdabd69bdce5full};
    slda_update_t *v1[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        size_t len;
        unsigned char *buf = read_fixture(names[i], &len);
        CHECK_INT(buf[7], 1);
        CHECK_INT(slda_update_decode(buf, len, &v1[i], err, sizeof err), SLDA_OK);
        if (!v1[i]) {
            fprintf(stderr, "%s: %s\n", names[i], err);
            exit(1);
        }
        slda_model_t *m = make_model(v1_conf);
        CHECK_INT(slda_update_apply(m, v1[i], err, sizeof err), SLDA_OK);
        CHECK_TRUE(slda_model_digest(m) == digests[i], "%s: digest %016llx, version 1 gave %016llx",
                   names[i], (unsigned long long)slda_model_digest(m),
                   (unsigned long long)digests[i]);
        slda_model_destroy(m);
        /* a version this build does not know is named */
        buf[7] = 4;
        slda_update_t *x = NULL;
        CHECK_INT(slda_update_decode(buf, len, &x, err, sizeof err), SLDA_ERR_VERSION);
        CHECK_CONTAINS(err, "format version 4, this build reads 1 to 3");
        buf[7] = 0;
        CHECK_INT(slda_update_decode(buf, len, &x, err, sizeof err), SLDA_ERR_CORRUPT);
        CHECK_CONTAINS(err, "format version 0");
        free(buf);
    }
    slda_update_t *f32 = through_log(v1[0], SLDA_UPDATE_F32, NULL);
    same_stats(f32, v1[0], "version 1 float32 -> version 2 float32");
    slda_update_t *q8 = through_log(v1[0], SLDA_UPDATE_Q8, NULL);
    same_stats(q8, v1[1], "version 1 float32 -> version 2 q8 against version 1 q8");
    slda_model_t *m = make_model(v1_conf);
    CHECK_INT(slda_update_apply(m, f32, err, sizeof err), SLDA_OK);
    CHECK_TRUE(slda_model_digest(m) == digests[0], "version 2: digest %016llx",
               (unsigned long long)slda_model_digest(m));
    slda_model_destroy(m);
    slda_update_destroy(f32);
    slda_update_destroy(q8);
    slda_update_destroy(v1[0]);
    slda_update_destroy(v1[1]);
}

/* 6. Sparse rows: a row with zeros is written as its listed topics when that is shorter,
 * decodes to the same values bit for bit (float32, float16, q8), and the record shrinks
 * with the zeros; damaged sparse rows are refused. */
static void test_sparse_rows(void)
{
    char err[256];
    slda_model_t *m = make_model((const char *const[]){"topics", "200", NULL});
    slda_doc_t d[16];
    size_t n = make_batch(m, 0, 'n', d);
    slda_update_t *upd = NULL;
    CHECK_INT(slda_update_local(m, NULL, d, n, 0, NULL, &upd, err, sizeof err), SLDA_OK);
    uint32_t K = upd->K;
    CHECK_GT(upd->nslots, 4);
    size_t dense_len[3];
    for (int v = 0; v < 3; v++) {
        void *buf;
        CHECK_INT(slda_update_encode(upd, (slda_update_values_t)v, &buf, &dense_len[v], err,
                                     sizeof err),
                  SLDA_OK);
        free(buf);
    }
    /* the first row keeps every other topic (a bitmap row), the others 3 topics, -0 and a
     * subnormal among them (listed topics) */
    for (uint32_t k = 1; k < K; k += 2)
        upd->stats[k] = 0;
    for (uint32_t s = 1; s < upd->nslots; s++)
        for (uint32_t k = 0; k < K; k++) {
            float *x = &upd->stats[(size_t)s * K + k];
            if (k == 7 * s % K)
                *x = -0.0f;
            else if (k == (7 * s + 1) % K)
                *x = 1e-40f;
            else if (k != (7 * s + 2) % K)
                *x = 0;
        }
    for (int v = 0; v < 3; v++) {
        size_t bytes = 0;
        slda_update_t *dec = through_log(upd, (slda_update_values_t)v, &bytes);
        /* each sparse row: 1 count + 2 or 3 topics (<= 2 bytes each) + values */
        size_t vb = v == 0 ? 4 : v == 1 ? 2 : 1, most = (1 + 3 * (2 + vb) + (v == 2 ? 4 : 0));
        size_t dense = upd_dense_bytes((slda_update_values_t)v, K) * upd->nslots;
        size_t want = dense_len[v] - dense + (1 + K / 8 + 4 + vb * K / 2) +
                      most * (upd->nslots - 1) + upd->nslots;
        CHECK_TRUE(bytes <= want && bytes < dense_len[v] / 3,
                   "values %d: %zu bytes, at most %zu expected (dense %zu)", v, bytes, want,
                   dense_len[v]);
        if (v == 0) {
            same_stats(dec, upd, "sparse float32 rows");
            for (uint32_t s = 1; s < upd->nslots; s++) /* the sign of -0 kept */
                CHECK_TRUE(signbit(dec->stats[(size_t)s * K + 7 * s % K]), "slot %u: -0", s);
        } else {
            upd_buf_t b = {0};
            for (uint32_t s = 0; s < upd->nslots; s++) /* the dense row's values */
                upd_put_row(&b, upd->stats + (size_t)s * K, K, (slda_update_values_t)v, 1);
            float *y = malloc(K * sizeof *y);
            const unsigned char *p = b.p;
            for (uint32_t s = 0; s < upd->nslots; s++) {
                CHECK_TRUE(upd_get_row(&p, b.p + b.n, y, K, (slda_update_values_t)v, 1) == NULL,
                           "slot %u", s);
                CHECK_TRUE(!memcmp(y, dec->stats + (size_t)s * K, K * sizeof *y),
                           "values %d slot %u: sparse row decodes otherwise", v, s);
            }
            free(y);
            free(b.p);
        }
        slda_update_destroy(dec);
    }
    /* damaged sparse rows, each checked by the row reader */
    static const struct {
        unsigned char bytes[8];
        size_t n;
        const char *why;
    } bad[] = {
        {{4, 5, 0x80, 0x00}, 4, "bad topic"},           /* a non-minimal varint */
        {{4, 200, 1}, 3, "topic out of range"},          /* 200 >= K */
        {{4, 190, 9}, 3, "topic out of range"},          /* 190, then 200 */
        {{0xcd, 0x01}, 2, "more entries than topics"}, /* 203 entries */
        {{3, 5, 0, 0}, 4, "cut short"},
        {{3, 5, 0, 0, 0xc0, 0xff}, 6, "not finite"},    /* -NaN */
        {{1, 0xff, 0xff}, 3, "cut short"},              /* a bitmap of 25 bytes */
        {{0x80}, 1, "bad form"},
    };
    float *y = malloc(K * sizeof *y);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const unsigned char *p = bad[i].bytes;
        const char *why = upd_get_row(&p, bad[i].bytes + bad[i].n, y, K, SLDA_UPDATE_F32, 2);
        CHECK_TRUE(why && strstr(why, bad[i].why), "case %zu: %s", i, why ? why : "accepted");
    }
    /* K = 13: a bitmap bit past K; a bitmap row of 2 topics decodes to them */
    static const unsigned char past[] = {1, 0x01, 0x20, 0, 0, 0x80, 0x3f};
    const unsigned char *p = past;
    const char *why = upd_get_row(&p, past + sizeof past, y, 13, SLDA_UPDATE_F32, 2);
    CHECK_TRUE(why && strstr(why, "topic out of range"), "%s", why ? why : "accepted");
    static const unsigned char two[] = {1, 0x01, 0x10, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
    p = two;
    CHECK_TRUE(upd_get_row(&p, two + sizeof two, y, 13, SLDA_UPDATE_F32, 2) == NULL, "two");
    CHECK_TRUE(p == two + sizeof two && y[0] == 1.0f && y[12] == 2.0f && y[1] == 0 && y[11] == 0,
               "two: %g %g", y[0], y[12]);
    free(y);
    slda_update_destroy(upd);
    slda_docs_clear(d, n);
    slda_model_destroy(m);
}

/* 7. Thinning: every value's mean over seeds is its value (within 4 standard errors), each
 * row's sum is kept, values at or above the share are untouched, and rows get sparser. */
static void test_thin(void)
{
    enum { K = 64, RUNS = 4000 };
    float x[K];
    double mean[K] = {0}, sq[K] = {0};
    for (uint32_t k = 0; k < K; k++)
        x[k] = k < 4 ? 10.0f + (float)k : k % 5 == 4 ? 0.0f : 0.01f * (float)(1 + k % 7);
    double sum = 0;
    for (uint32_t k = 0; k < K; k++)
        sum += x[k];
    slda_update_t upd = {.K = K, .nwords = 1, .nslots = 1, .ntokens = 50};
    char word[] = "w";
    char *words[] = {word};
    uint32_t wlen = 1, slot = 0;
    upd.word = words;
    upd.wlen = &wlen;
    upd.slot = &slot;
    size_t listed = 0;
    for (uint32_t r = 0; r < RUNS; r++) {
        float y[K];
        memcpy(y, x, sizeof y);
        upd.stats = y;
        upd.base = r;
        slda_update_thin(&upd, 0.01);
        double s = 0;
        for (uint32_t k = 0; k < K; k++) {
            s += y[k];
            mean[k] += y[k];
            sq[k] += (double)y[k] * y[k];
            listed += y[k] != 0;
            if (x[k] >= 0.01 * sum || x[k] == 0)
                CHECK_TRUE(y[k] == x[k], "topic %u: %g became %g", k, x[k], y[k]);
        }
        CHECK_NEAR(s, sum, 1e-5 * sum);
    }
    for (uint32_t k = 0; k < K; k++) {
        double m = mean[k] / RUNS, var = sq[k] / RUNS - m * m, se = sqrt(var / RUNS);
        CHECK_TRUE(fabs(m - x[k]) <= 4 * se + 1e-7, "topic %u: mean %g, value %g (se %g)", k, m,
                   x[k], se);
    }
    size_t before = 0;
    for (uint32_t k = 0; k < K; k++)
        before += x[k] != 0;
    CHECK_TRUE(listed < before * RUNS / 4, "%zu listed of %zu", listed, before * (size_t)RUNS);
    /* share 0: nothing changes */
    float y[K];
    memcpy(y, x, sizeof y);
    upd.stats = y;
    slda_update_thin(&upd, 0);
    CHECK_MEM(y, x, sizeof y);
}

/* User labels through the log (update_labels.c): a record of labels only, version 3, sets
 * them on every model that applies it and moves nothing else (not the update count); bad
 * slots and texts refused when made and when read; a record without labels stays version 2. */
static void test_label_records(void)
{
    char err[256];
    slda_model_t *a = make_model(NULL);
    slda_doc_t docs[16];
    size_t n = make_batch(a, 0, 'a', docs);
    CHECK_OK(slda_model_train(a, docs, n, NULL, NULL, err, sizeof err), err);
    slda_docs_clear(docs, n);
    uint64_t t = slda_model_updates(a);
    uint64_t digest = slda_model_digest(a);

    slda_update_t *upd = slda_update_new_labels(a);
    CHECK_OK(slda_update_add_label(upd, 3, "elections", err, sizeof err), err);
    CHECK_OK(slda_update_add_label(upd, 5, "crash of 1987", err, sizeof err), err);
    CHECK_OK(slda_update_add_label(upd, 3, "vote \xc3\xa9lections", err, sizeof err), err);
    CHECK_ERR(slda_update_add_label(upd, 8, "x", err, sizeof err), SLDA_ERR_RANGE, err);
    CHECK_ERR(slda_update_add_label(upd, 1, "tab\there", err, sizeof err), SLDA_ERR_INVALID, err);
    CHECK_TRUE(slda_update_add_label(upd, 1, "\xff", err, sizeof err) != SLDA_OK, "bad UTF-8");
    void *buf;
    size_t len;
    CHECK_OK(slda_update_encode(upd, SLDA_UPDATE_Q8, &buf, &len, err, sizeof err), err);
    CHECK_INT(((unsigned char *)buf)[7], 3); /* format version 3 */
    slda_update_t *back = NULL;
    CHECK_OK(slda_update_decode(buf, len, &back, err, sizeof err), err);
    uint32_t k = 0;
    const char *text = NULL;
    CHECK_INT(slda_update_labels(back, 2, &k, &text), 3);
    CHECK_INT(k, 3);
    CHECK_STR(text, "vote \xc3\xa9lections");
    /* applied: the labels in record order, nothing else moved */
    CHECK_OK(slda_update_apply(a, back, err, sizeof err), err);
    CHECK_STR(slda_model_label(a, 3), "vote \xc3\xa9lections");
    CHECK_STR(slda_model_label(a, 5), "crash of 1987");
    CHECK_INT(slda_model_updates(a), t);
    CHECK_TRUE(slda_model_digest(a) == digest, "the statistics moved");
    slda_update_destroy(back);
    /* "" removes */
    slda_update_t *rm = slda_update_new_labels(a);
    CHECK_OK(slda_update_add_label(rm, 5, "", err, sizeof err), err);
    slda_update_t *rmback = through_log(rm, SLDA_UPDATE_F32, NULL);
    CHECK_OK(slda_update_apply(a, rmback, err, sizeof err), err);
    CHECK_NULL(slda_model_label(a, 5));
    slda_update_destroy(rm);
    slda_update_destroy(rmback);

    /* damaged: a slot past K (the byte after the label's array header), a control character;
     * the checksum recomputed so that the label is what is refused */
    unsigned char *c = malloc(len);
    const unsigned char *lab = memmem(buf, len, "labels", 6);
    CHECK_NONNULL(lab);
    if (lab) {
        size_t at = (size_t)(lab - (const unsigned char *)buf) + 6 + 2; /* array(3), array(2) */
        memcpy(c, buf, len);
        CHECK_INT(c[at], 3);
        c[at] = 9; /* topic 9 of 8 */
        uint64_t sum = slda_hash64(c, len - 8, 0);
        for (int i = 0; i < 8; i++)
            c[len - 8 + i] = (unsigned char)(sum >> (8 * (7 - i)));
        slda_update_t *bad = NULL;
        CHECK_ERR(slda_update_decode(c, len, &bad, err, sizeof err), SLDA_ERR_CORRUPT, err);
        CHECK_CONTAINS(err, "label");
        memcpy(c, buf, len);
        unsigned char *e = memmem(c, len, "elections", 9);
        e[1] = '\n';
        sum = slda_hash64(c, len - 8, 0);
        for (int i = 0; i < 8; i++)
            c[len - 8 + i] = (unsigned char)(sum >> (8 * (7 - i)));
        CHECK_ERR(slda_update_decode(c, len, &bad, err, sizeof err), SLDA_ERR_CORRUPT, err);
        CHECK_CONTAINS(err, "label text");
    }
    free(c);
    free(buf);
    slda_update_destroy(upd);

    /* a minibatch's record keeps version 2 */
    slda_update_t *plain = NULL;
    n = make_batch(a, 1, 'a', docs);
    CHECK_OK(slda_update_local(a, NULL, docs, n, 0, NULL, &plain, err, sizeof err), err);
    CHECK_OK(slda_update_encode(plain, SLDA_UPDATE_F32, &buf, &len, err, sizeof err), err);
    CHECK_INT(((unsigned char *)buf)[7], 2);
    free(buf);
    slda_update_destroy(plain);
    slda_docs_clear(docs, n);
    slda_model_destroy(a);
}

int main(void)
{
    test_label_records();
    test_births_remap();
    test_local_changes_nothing();
    test_scratch_borrows_held_rows();
    test_local_apply_equals_train(NULL, "births on", 1);
    test_local_apply_equals_train((const char *const[]){"alpha.learn", "newton", NULL},
                                  "births and alpha learning", 1);
    test_local_apply_equals_train((const char *const[]){"alpha.learn", "fixedpoint",
                                                        "births", "false", NULL},
                                  "alpha learning, no births", 0);
    test_local_apply_equals_train((const char *const[]){"threads", "2", "alpha.learn",
                                                        "newton", NULL},
                                  "two threads", 1);
    test_local_apply_equals_train((const char *const[]){"global.rows", "decay", NULL},
                                  "global.rows=decay", 0);
    test_local_apply_equals_train((const char *const[]){"vocab.file", fixed_vocab(),
                                                        "alpha.learn", "newton", NULL},
                                  "fixed vocabulary", 1);
    test_replicas_agree(SLDA_UPDATE_F32, NULL, 0);
    test_replicas_agree(SLDA_UPDATE_F16, NULL, 0);
    test_replicas_agree(SLDA_UPDATE_Q8, NULL, 0);
    test_replicas_agree(SLDA_UPDATE_F32, (const char *const[]){"vocab.file", fixed_vocab(), NULL},
                        0);
    test_replicas_agree(SLDA_UPDATE_F32, NULL, 0.05);
    test_replicas_agree(SLDA_UPDATE_Q8, NULL, 0.05);
    test_codec();
    test_version1_records();
    test_sparse_rows();
    test_thin();
    if (fixed_path[0]) {
        remove(fixed_path);
        remove(fixed_dir);
    }
    return slda_test_done("unit_update");
}
