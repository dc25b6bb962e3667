/* unit_snapshot.c - snapshots: round trip, refusals, atomic writes, the v1 fixture, .npy export.
 *
 * `t_unit_snapshot --write-fixture PATH` writes the tiny K=3 fixture model
 * (scripts/gen_fixtures.sh uses it); without arguments the checks run.
 */
#include "engine/births.h"
#include "core/config.h"
#include "io/snapshot.h"
#include "testutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <msgpack.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE_NAME "snapshot-v1-k3.slda"

static char errbuf[1024];

/* ---- helpers ---- */

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;
    *len = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return buf;
}

static int spit(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    int rc;
    if (!f)
        return -1;
    rc = fwrite(buf, 1, len, f) == len ? 0 : -1;
    if (fclose(f))
        rc = -1;
    return rc;
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Recompute the XXH3-64 trailer after a deliberate edit of the contents. */
static void fix_checksum(unsigned char *buf, size_t len)
{
    uint64_t h = slda_hash64(buf, len - 8, 0);
    for (int i = 0; i < 8; i++)
        buf[len - 8 + i] = (unsigned char)(h >> (56 - 8 * i));
}

static unsigned char *find(unsigned char *buf, size_t len, const void *pat, size_t plen)
{
    return memmem(buf, len, pat, plen);
}

static slda_params_t base_params(uint32_t K, uint32_t capacity)
{
    slda_params_t p;
    memset(&p, 0, sizeof p);
    p.topics = K;
    p.alpha = 0.25;
    p.eta = 0.125;
    p.alpha_learn = SLDA_ALPHA_FIXEDPOINT;
    p.vb = SLDA_VB_CVB0;
    p.hybrid = 1;
    p.threshold = 1;
    p.burnin = 5;
    p.samples = 5;
    p.tolerance = 0.001;
    p.stats = SLDA_STATS_RB;
    p.rho_s = 1;
    p.rho_tau = 10;
    p.rho_kappa = 0.7;
    p.rho_min = 0;
    p.corpus_tokens = 1000;
    p.init_scale = 0.5;
    p.vocab_capacity = capacity;
    p.vocab_file = NULL;
    p.seed = 42;
    p.threads = 1;
    p.stopwords = "none";
    p.min_length = 2;
    p.max_doc_bytes = 1048576;
    return p;
}

static void set_name(slda_model_t *model, const char *name)
{
    free(model->name);
    model->name = slda_xstrdup(name);
}

/* A model with every field away from its default: K topics, W rows, nwords
 * words at ids with holes (every id = 3 mod 5 unused), some rows not ready,
 * a vocabulary hash seed different from the training seed. */
static slda_model_t *make_model(uint32_t K, uint32_t W, uint32_t nwords, int fixed)
{
    slda_params_t p = base_params(K, fixed ? 4096 : W);
    slda_model_t *model;
    slda_rng_t rng;
    slda_offset_t offs[2] = {{"docs", 0, 42}, {"docs-b", 3, (int64_t)1 << 40}};
    char word[64];
    uint32_t id = 0;
    p.alpha = 0.3;
    p.eta = 0.05;
    p.alpha_learn = SLDA_ALPHA_NEWTON;
    p.vb = SLDA_VB_CVB;
    p.threshold = 2;
    p.burnin = 7;
    p.samples = 4;
    p.stats = SLDA_STATS_SAMPLE;
    p.rho_s = 0.9;
    p.rho_tau = 64;
    p.rho_kappa = 0.6;
    p.rho_min = 0.01;
    p.corpus_tokens = 5.5e6;
    p.init_scale = 0.02;
    p.vocab_file = fixed ? "/nonexistent/words.txt" : NULL;
    p.seed = 0x0123456789abcdefull; /* becomes the vocabulary hash seed */
    p.stopwords = "smart";
    p.min_length = 3;
    p.max_doc_bytes = 65536;
    model = slda_model_alloc(&p, W, fixed, (&p)->seed, NULL, errbuf, sizeof errbuf);
    if (!model) {
        fprintf(stderr, "slda_model_alloc: %s\n", errbuf);
        exit(1);
    }
    model->p.seed = 777; /* training seed differs from the hash seed */
    slda_rng_seed(&rng, K * 1000003u + W);
    for (uint32_t i = 0; i < nwords; i++, id++) {
        if (!fixed && id % 5 == 3)
            id++;
        snprintf(word, sizeof word, i % 3 ? "w%u" : "w\xc3\xb6rd%u", i);
        if (slda_vocab_put(model->vocab, id, word, strlen(word), slda_rng_double(&rng) * 10,
                           errbuf, sizeof errbuf) != SLDA_OK) {
            fprintf(stderr, "slda_vocab_put: %s\n", errbuf);
            exit(1);
        }
        slda_model_row_written(model, id); /* as the snapshot loader does */
        for (uint32_t k = 0; k < K; k++)
            model->A[(size_t)id * model->Kp + k] = slda_rng_float(&rng) * 3;
        if (id % 7 != 0)
            slda_model_mark_row(model, id);
    }
    model->sigma = 0.37171717;
    model->alpha_sum = 0;
    for (uint32_t k = 0; k < K; k++) {
        model->NZ[k] = 1000 * slda_rng_double(&rng);
        model->alpha[k] = 0.01 + slda_rng_double(&rng);
        model->alpha_sum += model->alpha[k];
    }
    model->alpha_sum += 1e-12; /* stored, not recomputed */
    model->t = 12345;
    model->docs = 999;
    model->tokens = 123456789012ull;
    model->corpus_tokens = 4.25e6;
    model->created_ms = 1700000000123;
    model->updated_ms = 1700000999456;
    set_name(model, "round-trip");
    slda_model_set_offsets(model, offs, 2);
    return model;
}

static int same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static void check_params_equal(const slda_params_t *a, const slda_params_t *b)
{
    CHECK_INT(a->topics, b->topics);
    CHECK_MEM(&a->alpha, &b->alpha, sizeof a->alpha);
    CHECK_MEM(&a->eta, &b->eta, sizeof a->eta);
    CHECK_INT(a->alpha_learn, b->alpha_learn);
    CHECK_INT(a->vb, b->vb);
    CHECK_INT(a->hybrid, b->hybrid);
    CHECK_INT(a->threshold, b->threshold);
    CHECK_INT(a->burnin, b->burnin);
    CHECK_INT(a->samples, b->samples);
    CHECK_MEM(&a->tolerance, &b->tolerance, sizeof(double));
    CHECK_INT(a->stats, b->stats);
    CHECK_MEM(&a->rho_s, &b->rho_s, sizeof(double));
    CHECK_MEM(&a->rho_tau, &b->rho_tau, sizeof(double));
    CHECK_MEM(&a->rho_kappa, &b->rho_kappa, sizeof(double));
    CHECK_MEM(&a->rho_min, &b->rho_min, sizeof(double));
    CHECK_MEM(&a->corpus_tokens, &b->corpus_tokens, sizeof(double));
    CHECK_MEM(&a->init_scale, &b->init_scale, sizeof(double));
    CHECK_INT(a->vocab_capacity, b->vocab_capacity);
    if (a->vocab_file || b->vocab_file)
        CHECK_STR(a->vocab_file, b->vocab_file);
    CHECK_INT(a->seed, b->seed);
    CHECK_INT(a->threads, b->threads);
    if (a->stopwords || b->stopwords)
        CHECK_STR(a->stopwords, b->stopwords);
    CHECK_INT(a->min_length, b->min_length);
    CHECK_INT(a->max_doc_bytes, b->max_doc_bytes);
}

/* The births states of a and b (births.c), field by field, bit for bit. */
static void check_births_equal(const slda_model_t *a, const slda_model_t *b)
{
    slda_births_state_t x, y;
    CHECK_INT(a->births != NULL, b->births != NULL);
    if (!a->births || !b->births)
        return;
    slda_births_export(a->births, &x);
    slda_births_export(b->births, &y);
    CHECK_INT(x.K, y.K);
    CHECK_MEM(&x.mu, &y.mu, sizeof x.mu);
    CHECK_MEM(&x.var, &y.var, sizeof x.var);
    CHECK_INT(x.nbase, y.nbase);
    CHECK_INT(x.tokens, y.tokens);
    CHECK_INT(x.windowed, y.windowed);
    CHECK_INT(x.counted, y.counted);
    if (x.K == y.K) { /* checked above */
        CHECK_MEM(x.share, y.share, x.K * sizeof *x.share);
        CHECK_MEM(x.since, y.since, x.K * sizeof *x.since);
        CHECK_MEM(x.is_free, y.is_free, x.K);
    }
    CHECK_INT(x.cap, y.cap);
    CHECK_INT(x.nbuf, y.nbuf);
    for (uint32_t i = 0; i < x.nbuf && i < y.nbuf; i++) {
        const slda_births_doc_t *d = &x.buf[i], *e = &y.buf[i];
        CHECK_EQ(d->n, e->n);
        CHECK_EQ(d->t, e->t);
        CHECK_EQ(d->mark, e->mark);
        if (d->n == e->n) {
            CHECK_MEM(d->word, e->word, d->n * sizeof *d->word);
            CHECK_MEM(d->count, e->count, d->n * sizeof *d->count);
            CHECK_MEM(d->pw, e->pw, d->n * sizeof *d->pw);
        }
    }
    CHECK_MEM(&x.counts, &y.counts, sizeof x.counts);
    CHECK_INT(x.nev, y.nev);
    CHECK_INT(x.nkept, y.nkept);
    for (uint32_t i = 0; i < x.nkept && i < y.nkept; i++) {
        const slda_event_t *e = &x.ev[i], *f = &y.ev[i];
        CHECK_EQ(e->seq, f->seq);
        CHECK_EQ(e->update, f->update);
        CHECK_EQ(e->doc, f->doc);
        CHECK_EQ(e->kind, f->kind);
        CHECK_EQ(e->topic, f->topic);
        CHECK_EQ(e->other, f->other);
        CHECK_EQ(e->docs, f->docs);
        CHECK_MEM(&e->value, &f->value, sizeof e->value);
    }
    slda_births_export_clear(&x);
    slda_births_export_clear(&y);
}

/* Every persisted field, bit for bit; every row of A (padding included). */
static void check_models_equal(const slda_model_t *a, const slda_model_t *b)
{
    size_t na, nb, bad_rows = 0, bad_words = 0;
    const slda_offset_t *oa = slda_model_offsets(a, &na), *ob = slda_model_offsets(b, &nb);
    check_params_equal(&a->p, &b->p);
    CHECK_INT(a->K, b->K);
    CHECK_INT(a->Kp, b->Kp);
    CHECK_INT(a->W, b->W);
    CHECK_MEM(&a->sigma, &b->sigma, sizeof(double));
    CHECK_MEM(a->NZ, b->NZ, a->K * sizeof(double));
    CHECK_MEM(a->alpha, b->alpha, a->K * sizeof(double));
    CHECK_MEM(&a->alpha_sum, &b->alpha_sum, sizeof(double));
    CHECK_MEM(&a->corpus_tokens, &b->corpus_tokens, sizeof(double));
    CHECK_INT(a->t, b->t);
    CHECK_INT(a->docs, b->docs);
    CHECK_INT(a->tokens, b->tokens);
    CHECK_INT(a->created_ms, b->created_ms);
    CHECK_INT(a->updated_ms, b->updated_ms);
    CHECK_STR(a->name, b->name);
    CHECK_INT(na, nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK_STR(oa[i].topic, ob[i].topic);
        CHECK_INT(oa[i].partition, ob[i].partition);
        CHECK_INT(oa[i].offset, ob[i].offset);
    }
    CHECK_INT(slda_vocab_size(a->vocab), slda_vocab_size(b->vocab));
    CHECK_INT(slda_vocab_max_id(a->vocab), slda_vocab_max_id(b->vocab));
    CHECK_INT(slda_vocab_capacity(a->vocab), slda_vocab_capacity(b->vocab));
    CHECK_INT(slda_vocab_is_fixed(a->vocab), slda_vocab_is_fixed(b->vocab));
    CHECK_INT(slda_vocab_seed(a->vocab), slda_vocab_seed(b->vocab));
    check_births_equal(a, b);
    if (a->W != b->W || a->Kp != b->Kp)
        return;
    for (uint32_t w = 0; w < a->W; w++) {
        const char *wa = slda_vocab_word(a->vocab, w), *wb = slda_vocab_word(b->vocab, w);
        double fa = slda_vocab_freq(a->vocab, w), fb = slda_vocab_freq(b->vocab, w);
        if ((wa || wb) && (!wa || !wb || strcmp(wa, wb) || !same_bits(&fa, &fb, sizeof fa) ||
                           a->row_ready[w] != b->row_ready[w])) {
            if (bad_words++ == 0)
                fprintf(stderr, "  first differing word: id %u \"%s\" vs \"%s\"\n", w,
                        wa ? wa : "(null)", wb ? wb : "(null)");
        }
        if (!same_bits(a->A + (size_t)w * a->Kp, b->A + (size_t)w * b->Kp, a->Kp * 4)) {
            if (bad_rows++ == 0)
                fprintf(stderr, "  first differing row: id %u\n", w);
        }
    }
    CHECK_INT(bad_words, 0);
    CHECK_INT(bad_rows, 0);
}

/* No "<name>.tmp.<pid>" (or any .tmp.) left in dir. */
static int count_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* Remove the (flat) test directory. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4400];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* ---- round trip ---- */

static void check_round_trip(slda_model_t *model, const char *dir, const char *fname)
{
    char path[4096];
    size_t flen = 0, mlen = 0;
    void *mem = NULL;
    unsigned char *file;
    slda_err_t err = SLDA_ERR__COUNT;
    slda_model_t *back;
    snprintf(path, sizeof path, "%s/%s", dir, fname);
    CHECK_INT(slda_snapshot_write(model, path, errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(count_temp_files(dir), 0);
    back = slda_snapshot_read(path, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    CHECK_TRUE(back != NULL, "%s", errbuf);
    if (!back) {
        fprintf(stderr, "  read: %s\n", errbuf);
        return;
    }
    check_models_equal(model, back);
    slda_model_destroy(back);

    /* encode gives the file's bytes; decode gives the same model */
    file = slurp(path, &flen);
    CHECK_INT(slda_snapshot_encode(model, &mem, &mlen, errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(mlen, flen);
    CHECK_NONNULL(file);
    CHECK_NONNULL(mem);
    if (file && mem && mlen == flen) /* the lengths: checked above */
        CHECK_MEM(file, mem, flen);
    back = slda_snapshot_decode(mem, mlen, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    if (back)
        check_models_equal(model, back);
    else
        fprintf(stderr, "  decode: %s\n", errbuf);
    slda_model_destroy(back);
    printf("round trip %s: K=%u W=%u words=%u -> %zu bytes\n", fname, model->K, model->W,
           slda_vocab_size(model->vocab), flen);
    free(file);
    free(mem);
}

/* A restored model trains on to the same bits as the original. */
static void check_continues_exactly(slda_model_t *model, const char *dir)
{
    char path[4096];
    slda_doc_t docs[6];
    uint32_t nids, *ids = slda_model_ids_in_use(model, &nids);
    slda_model_t *back;
    slda_err_t err;
    slda_err_t e1, e2;
    snprintf(path, sizeof path, "%s/continue.slda", dir);
    CHECK_INT(slda_snapshot_write(model, path, errbuf, sizeof errbuf), SLDA_OK);
    back = slda_snapshot_read(path, &err, errbuf, sizeof errbuf);
    CHECK_TRUE(back != NULL, "%s", errbuf);
    if (!back) {
        free(ids);
        return;
    }
    for (int d = 0; d < 6; d++) {
        slda_doc_init(&docs[d]);
        for (uint32_t j = 0; j < 12; j++)
            slda_doc_add(&docs[d], ids[(d * 37u + j * j * 11u) % nids], 1 + (j % 4));
        slda_doc_finish(&docs[d]);
    }
    e1 = slda_model_train(model, docs, 6, NULL, NULL, errbuf, sizeof errbuf);
    e2 = slda_model_train(back, docs, 6, NULL, NULL, errbuf, sizeof errbuf);
    CHECK_INT(e1, SLDA_OK);
    CHECK_INT(e2, SLDA_OK);
    CHECK_INT(model->t, back->t);
    /* training stamps the wall clock, which may tick between the two calls */
    CHECK_LT(llabs(model->updated_ms - back->updated_ms), 60000);
    back->updated_ms = model->updated_ms;
    check_models_equal(model, back);
    slda_docs_clear(docs, 6);
    slda_model_destroy(back);
    free(ids);
}

static void test_round_trip(const char *dir)
{
    /* three body blocks (4096 + 4096 + 808 rows), holes, K not a multiple of 16 */
    slda_model_t *model = make_model(5, 12000, 9000, 0);
    check_round_trip(model, dir, "open.slda");
    check_continues_exactly(model, dir);
    slda_model_destroy(model);
    /* fixed vocabulary, K=17 so rows have 15 floats of padding */
    model = make_model(17, 40, 40, 1);
    check_round_trip(model, dir, "fixed.slda");
    slda_model_destroy(model);
    /* empty vocabulary: the body is just the end marker */
    model = make_model(1, 16, 0, 0);
    set_name(model, "");
    slda_model_set_offsets(model, NULL, 0);
    check_round_trip(model, dir, "empty.slda");
    slda_model_destroy(model);
}

/* The header is plain MessagePack (msgpack-c reads it too) and its params are
 * keyed by configuration names. */
static void test_header_is_msgpack(void)
{
    slda_model_t *model = make_model(3, 16, 3, 0);
    void *mem = NULL;
    size_t len = 0, off = 0, nparams = 0;
    msgpack_unpacked up;
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    msgpack_unpacked_init(&up);
    CHECK_INT(msgpack_unpack_next(&up, (const char *)mem + 12, len - 20, &off),
              MSGPACK_UNPACK_SUCCESS);
    CHECK_INT(up.data.type, MSGPACK_OBJECT_MAP);
    for (uint32_t i = 0; up.data.type == MSGPACK_OBJECT_MAP && i < up.data.via.map.size; i++) {
        const msgpack_object_kv *kv = &up.data.via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR || kv->key.via.str.size != 6 ||
            memcmp(kv->key.via.str.ptr, "params", 6) != 0)
            continue;
        CHECK_INT(kv->val.type, MSGPACK_OBJECT_MAP);
        for (uint32_t j = 0; j < kv->val.via.map.size; j++) {
            const msgpack_object *key = &kv->val.via.map.ptr[j].key;
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)key->via.str.size, key->via.str.ptr);
            if (!slda_conf_prop_find(name))
                fprintf(stderr, "  params key \"%s\" is not a configuration key\n", name);
            CHECK_NONNULL(slda_conf_prop_find(name));
            nparams++;
        }
    }
    /* 23 + the six text.* cleanup rules + global.rows, global.stale + births (births.* only
     * with births on) + text.segment, text.token.max, text.icu + local.sparse + model.kind,
     * authors.capacity, pam.super, pam.alpha.step, pam.alpha.warmup */
    CHECK_INT(nparams, 41);
    msgpack_unpacked_destroy(&up);
    free(mem);
    slda_model_destroy(model);
}

/* ---- refusals ---- */

static void check_refused(const unsigned char *buf, size_t len, slda_err_t want,
                          const char *needle, const char *what)
{
    slda_err_t err = SLDA_OK;
    slda_model_t *model;
    errbuf[0] = '\0';
    model = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
    if (model || err != want || (needle && !strstr(errbuf, needle)))
        fprintf(stderr, "  case: %s\n", what);
    CHECK_NULL(model);
    CHECK_INT(err, want);
    if (needle)
        CHECK_CONTAINS(errbuf, needle);
    slda_model_destroy(model);
}

/* One flipped byte: refused by the checksum, both values named. */
static void check_flip(const unsigned char *orig, size_t len, size_t at, const char *what)
{
    unsigned char *buf = malloc(len);
    char expected[32], found[32];
    memcpy(buf, orig, len);
    buf[at] ^= 0x20;
    snprintf(expected, sizeof expected, "expected 0x%016" PRIx64, get_be64(buf + len - 8));
    snprintf(found, sizeof found, "found 0x%016" PRIx64, slda_hash64(buf, len - 8, 0));
    check_refused(buf, len, SLDA_ERR_CORRUPT, expected, what);
    CHECK_CONTAINS(errbuf, found);
    printf("flip at %zu (%s): %s\n", at, what, errbuf);
    free(buf);
}

static void test_corrupt(const char *dir)
{
    slda_model_t *model = make_model(4, 16, 5, 0);
    void *mem;
    size_t len;
    unsigned char *buf, *rows;
    char path[4096];
    slda_err_t err = SLDA_OK;
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    buf = mem;
    rows = find(buf, len, "\xa4rows\xc4", 6);
    CHECK_NONNULL(rows);
    check_flip(buf, len, 20, "header");
    if (rows)
        check_flip(buf, len, (size_t)(rows - buf) + 7 + 9, "row");
    check_flip(buf, len, len - 3, "trailer");

    /* through the file API: the message names the path */
    snprintf(path, sizeof path, "%s/corrupt.slda", dir);
    buf[30] ^= 1;
    CHECK_INT(spit(path, buf, len), 0);
    CHECK_NULL(slda_snapshot_read(path, &err, errbuf, sizeof errbuf));
    CHECK_INT(err, SLDA_ERR_CORRUPT);
    CHECK_CONTAINS(errbuf, path);
    CHECK_CONTAINS(errbuf, "checksum mismatch");
    buf[30] ^= 1;

    /* bad magic: garbage and a near miss */
    buf[3] = 'x';
    check_refused(buf, len, SLDA_ERR_CORRUPT, "bad magic", "magic");
    CHECK_INT(spit(path, buf, len), 0);
    CHECK_NULL(slda_snapshot_read(path, &err, errbuf, sizeof errbuf));
    CHECK_CONTAINS(errbuf, "snapshot \"");
    CHECK_CONTAINS(errbuf, "\": bad magic");
    free(mem);
    slda_model_destroy(model);
}

static void test_truncated(const char *dir)
{
    slda_model_t *model = make_model(4, 16, 5, 0);
    void *mem;
    size_t len;
    char path[4096];
    slda_err_t err = SLDA_OK;
    size_t short_cuts[] = {0, 1, 7, 8, 11, 12, 19};
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    for (size_t i = 0; i < sizeof short_cuts / sizeof short_cuts[0]; i++)
        check_refused(mem, short_cuts[i], SLDA_ERR_TRUNCATED, "truncated", "short cut");
    size_t long_cuts[] = {20, 21, 100, len / 2, len - 9, len - 8, len - 1};
    for (size_t i = 0; i < sizeof long_cuts / sizeof long_cuts[0]; i++)
        check_refused(mem, long_cuts[i], SLDA_ERR_CORRUPT, "checksum mismatch", "long cut");
    /* cut inside the MessagePack with a valid checksum: the parser refuses */
    for (size_t cut = 12; cut < len - 8; cut++) {
        unsigned char *buf = malloc(cut + 8);
        memcpy(buf, mem, cut);
        fix_checksum(buf, cut + 8);
        check_refused(buf, cut + 8, SLDA_ERR_CORRUPT, NULL, "re-checksummed cut");
        free(buf);
    }
    snprintf(path, sizeof path, "%s/empty.slda", dir);
    CHECK_INT(spit(path, "", 0), 0);
    CHECK_NULL(slda_snapshot_read(path, &err, errbuf, sizeof errbuf));
    CHECK_INT(err, SLDA_ERR_TRUNCATED);
    snprintf(path, sizeof path, "%s/missing.slda", dir);
    CHECK_NULL(slda_snapshot_read(path, &err, errbuf, sizeof errbuf));
    CHECK_INT(err, SLDA_ERR_IO);
    CHECK_CONTAINS(errbuf, "No such file");
    free(mem);
    slda_model_destroy(model);
}

static void test_version(void)
{
    slda_model_t *model = make_model(4, 16, 5, 0);
    void *mem;
    size_t len;
    unsigned char *buf;
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    buf = mem;
    CHECK_MEM(buf, "SLDASNAP\0\0\0\1", 12);
    buf[11] = 2; /* version 2 is the author-topic model's: an LDA header inside is refused */
    fix_checksum(buf, len);
    check_refused(buf, len, SLDA_ERR_CORRUPT, "header \"format\": 1, but the file says version 2",
                  "version 2 envelope, version 1 header");
    buf[11] = 3;
    fix_checksum(buf, len);
    check_refused(buf, len, SLDA_ERR_VERSION, "version 3", "version 3");
    CHECK_CONTAINS(errbuf, "version 2");
    printf("newer version: %s\n", errbuf);
    buf[8] = 0x7f; /* refused before the checksum is even looked at */
    check_refused(buf, len, SLDA_ERR_VERSION, "version 2130706435", "version huge");
    memset(buf + 8, 0, 4);
    fix_checksum(buf, len);
    check_refused(buf, len, SLDA_ERR_CORRUPT, "version 0", "version 0");
    free(mem);
    slda_model_destroy(model);
}

static void test_garbage(void)
{
    slda_rng_t rng;
    unsigned char buf[1000];
    void *mem;
    size_t len, loaded = 0;
    slda_model_t *model = make_model(3, 16, 4, 0);
    slda_rng_seed(&rng, 99);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)slda_rng_next(&rng);
    check_refused(buf, sizeof buf, SLDA_ERR_CORRUPT, "bad magic", "random bytes");
    /* valid envelope around random MessagePack */
    for (int iter = 0; iter < 2000; iter++) {
        size_t n = 20 + slda_rng_below(&rng, sizeof buf - 20);
        for (size_t i = 12; i < n; i++)
            buf[i] = (unsigned char)slda_rng_next(&rng);
        memcpy(buf, "SLDASNAP\0\0\0\1", 12);
        if (iter % 2) /* start with a plausible map header */
            buf[12] = 0x80 | (iter & 0x0f);
        fix_checksum(buf, n);
        check_refused(buf, n, SLDA_ERR_CORRUPT, NULL, "random body");
    }
    /* mutations of a valid snapshot, re-checksummed: load or refuse, never crash */
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    for (int iter = 0; iter < 4000; iter++) {
        unsigned char *m = malloc(len);
        slda_err_t err = SLDA_OK;
        slda_model_t *back;
        memcpy(m, mem, len);
        for (uint32_t j = 0, nflip = 1 + slda_rng_below(&rng, 4); j < nflip; j++) {
            size_t at = 12 + slda_rng_below(&rng, (uint32_t)(len - 20));
            m[at] = slda_rng_below(&rng, 3) ? (unsigned char)slda_rng_next(&rng)
                                            : (unsigned char)(m[at] ^ 1);
        }
        fix_checksum(m, len);
        errbuf[0] = '\0';
        back = slda_snapshot_decode(m, len, &err, errbuf, sizeof errbuf);
        if (back) {
            loaded++;
            CHECK_INT(err, SLDA_OK);
        } else {
            CHECK_TRUE(err == SLDA_ERR_CORRUPT || err == SLDA_ERR_INVALID,
                       "mutation refused with %s: %s", slda_err_name(err), errbuf);
            CHECK_TRUE(strncmp(errbuf, "snapshot \"", 10) == 0, "%s", errbuf);
        }
        slda_model_destroy(back);
        free(m);
    }
    printf("mutations: %zu of 4000 still loaded (values changed), the rest refused\n", loaded);
    free(mem);
    slda_model_destroy(model);
}

/* Edit the bytes after pattern pat (at offset delta from its start) to val,
 * fix the checksum, and expect SLDA_ERR_CORRUPT with needle. */
static void check_patch(const void *orig, size_t len, const char *pat, size_t plen,
                        size_t delta, unsigned char val, const char *needle)
{
    unsigned char *buf = malloc(len);
    unsigned char *at;
    memcpy(buf, orig, len);
    at = find(buf, len, pat, plen);
    CHECK_NONNULL(at);
    if (at) {
        at[delta] = val;
        fix_checksum(buf, len);
        check_refused(buf, len, SLDA_ERR_CORRUPT, needle, needle);
        printf("patched: %s\n", errbuf);
    } else {
        fprintf(stderr, "  pattern for \"%s\" not found\n", needle);
    }
    free(buf);
}

static void test_inconsistent(void)
{
    slda_params_t p = base_params(3, 16);
    void *mem;
    size_t len;
    unsigned char *buf;
    slda_model_t *model = slda_model_alloc(&p, 16, 0, (&p)->seed, NULL, errbuf, sizeof errbuf);
    CHECK_TRUE(model != NULL, "%s", errbuf);
    if (!model)
        return;
    slda_vocab_put(model->vocab, 0, "apple", 5, 1, errbuf, sizeof errbuf);
    slda_vocab_put(model->vocab, 2, "banana", 6, 1, errbuf, sizeof errbuf);
    slda_vocab_put(model->vocab, 5, "cherry", 6, 1, errbuf, sizeof errbuf);
    slda_model_mark_row(model, 0);
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    check_patch(mem, len, "\xa1K\x03", 3, 2, 4, "K mismatch");
    check_patch(mem, len, "\xa4rows\xc4\x24", 7, 6, 0x20, "body \"rows\": 32 bytes, expected 36");
    check_patch(mem, len, "\xa3ids\x93\x00\x02\x05", 8, 7, 16, "id 16 >= W=16");
    check_patch(mem, len, "\xa3ids\x93\x00\x02\x05", 8, 6, 0, "duplicate id 0");
    check_patch(mem, len, "\xa3ids\x93\x00\x02\x05", 8, 6, 7, "id 5 after id 7");
    check_patch(mem, len, "\xa5sigma", 6, 5, 'b', "missing key \"sigma\"");
    check_patch(mem, len, "\xa5sigma\xcb", 7, 6, 0xc0, "\"sigma\": expected a number, found nil");
    check_patch(mem, len, "\xa1W\x10", 3, 2, 0x11, "W=17 but params \"vocab.capacity\" 16");
    check_patch(mem, len, "\xa7threads\x01", 9, 8, 0, "\"threads\": 0 is outside 1..256");
    check_patch(mem, len, "\xa5ready\xc4\x03\x01", 9, 8, 2, "ready flag 2");
    check_patch(mem, len, "\xa5local\xa8", 7, 8, 'X', "unknown variant \"cXb0+cgs\"");
    check_patch(mem, len, "\xa5words\x93\xa5", 8, 8, 0, "empty or holds a NUL");
    check_patch(mem, len, "\xa3""end\xc3", 5, 4, 0xc2, "\"end\" is false");
    check_patch(mem, len, "\xa3""end\xc3\xa4rows\x03", 11, 10, 2, "end marker: rows 2");
    check_patch(mem, len, "\xa4name\xa9", 6, 5, 0xdc, "header \"name\": expected a string");

    /* an unknown key is skipped: rename "producer" */
    buf = malloc(len);
    memcpy(buf, mem, len);
    unsigned char *at = find(buf, len, "\xa8producer", 9);
    CHECK_NONNULL(at);
    if (at) {
        at[8] = 'X';
        fix_checksum(buf, len);
        slda_err_t err = SLDA_ERR__COUNT;
        slda_model_t *back = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
        CHECK_INT(err, SLDA_OK);
        CHECK_TRUE(back != NULL, "%s", errbuf);
        slda_model_destroy(back);
    }
    /* bytes after the end marker */
    buf = realloc(buf, len + 1);
    memcpy(buf, mem, len - 8);
    buf[len - 8] = 0xc0;
    fix_checksum(buf, len + 1);
    check_refused(buf, len + 1, SLDA_ERR_CORRUPT, "1 bytes after the end marker", "trailing");
    free(buf);
    free(mem);
    slda_model_destroy(model);
}

/* ---- the births state (births.c; optional header key "births") ---- */

/* A births state for make_model(5, 64, 40, 0) with every field away from its
 * default: 3 buffered documents, 1030 events made of which the ring keeps
 * the last 1024 (so it has wrapped), a retired slot. */
static void attach_births(slda_model_t *model)
{
    static uint32_t w0[] = {1, 2, 4}, c0[] = {3, 1, 2}, w1[] = {0, 5, 6, 7}, c1[] = {1, 1, 1, 9},
                    w2[] = {12}, c2[] = {4};
    static float p0[] = {0.01f, 0.002f, 1e-7f}, p1[] = {0.5f, 0.25f, 0.125f, 3e-5f},
                 p2[] = {0.0625f};
    double share[5] = {0.31, 0.0, 0.2, 0.25, 0.24000000000000002};
    uint64_t since[5] = {0, 12000, 0, 300, 12345};
    uint8_t is_free[5] = {0, 1, 0, 0, 0};
    slda_births_doc_t buf[3] = {
        {3, w0, c0, p0, 12300, 1000}, {4, w1, c1, p1, 12340, 5000}, {1, w2, c2, p2, 12345, 9000}};
    slda_event_t *ev = calloc(1024, sizeof *ev);
    for (uint32_t i = 0; i < 1024; i++)
        ev[i] = (slda_event_t){.seq = 7 + i, .update = 100 + i, .doc = 2000 + 20 * i,
                               .kind = (slda_event_kind_t)(1 + i % 3), .topic = i % 5,
                               .other = (i + 1) % 5, .docs = i % 3 == 0 ? 17 : 0,
                               .value = 0.1 + i / 3.0};
    slda_births_state_t st = {.K = 5, .mu = -4.625, .var = 0.3, .nbase = 777, .tokens = 10000,
                              .windowed = 1, .counted = 0x10000, .share = share, .since = since, .is_free = is_free, .cap = 128,
                              .nbuf = 3, .buf = buf,
                              .counts = {11, 2, 3, 40, 29, 5, 6, 7, 4321},
                              .nev = 1030, .nkept = 1024, .ev = ev};
    model->p.births = 1;
    model->p.births_docs = 64;
    model->p.births_z = 1.25;
    model->p.births_gain = 0.07;
    model->p.births_floor = 0.04;
    model->p.births_merge = 0.2;
    model->births = slda_births_import(model, &st, errbuf, sizeof errbuf);
    if (!model->births)
        fprintf(stderr, "  slda_births_import: %s\n", errbuf);
    CHECK_NONNULL(model->births);
    free(ev);
}

static void test_births_state(const char *dir)
{
    slda_model_t *model = make_model(5, 64, 40, 0), *back;
    slda_event_t ev[4];
    void *mem;
    size_t len, nev;
    slda_err_t err = SLDA_ERR__COUNT;
    unsigned char *buf, *at, *end;
    attach_births(model);
    if (!model->births) {
        slda_model_destroy(model);
        return;
    }
    nev = slda_model_events(model, 1025, ev, 4); /* the ring wrapped: seq 1026..1029 */
    CHECK_INT(nev, 4);
    CHECK_INT(ev[0].seq, 1026);
    CHECK_INT(ev[3].seq, 1029);
    check_round_trip(model, dir, "births.slda"); /* the state too (check_births_equal) */
    CHECK_INT(slda_snapshot_encode(model, &mem, &len, errbuf, sizeof errbuf), SLDA_OK);
    back = slda_snapshot_decode(mem, len, &err, errbuf, sizeof errbuf);
    CHECK_TRUE(back != NULL, "%s", errbuf);
    if (back) { /* the settings travel with it, and the events read back the same */
        CHECK_INT(back->p.births, 1);
        CHECK_INT(back->p.births_docs, 64);
        CHECK_EQ(back->p.births_z, 1.25);
        CHECK_EQ(back->p.births_gain, 0.07);
        CHECK_EQ(back->p.births_floor, 0.04);
        CHECK_EQ(back->p.births_merge, 0.2);
        CHECK_INT(slda_model_events(back, 1025, ev, 4), 4);
        CHECK_INT(ev[3].seq, 1029);
        CHECK_INT(ev[3].kind, SLDA_EVENT_BIRTH + 1022 % 3);
        slda_model_destroy(back);
    }
    /* refusals, each naming the field; values are checked against the model */
    check_patch(mem, len, "\xa5words\x93\x01\x02\x04", 10, 9, 0x7f,
                "header \"births\": buffered document 0, word 2: id 127 (W=64)");
    check_patch(mem, len, "\xa8""capacity\xcc\x80", 11, 10, 0x02,
                "3 documents buffered of 2");
    check_patch(mem, len, "\xa5""birth", 6, 2, 'X', "births event kind: unknown value \"bXrth\"");
    check_patch(mem, len, "\xa4mark", 5, 3, 'X', "keys t, mark, words, counts and pw are required");
    check_patch(mem, len, "\xa4""free\xc4\x05\x00\x01", 9, 8, 2, "free flag 2");
    check_patch(mem, len, "\xa5share\x95", 7, 4, 'X', "births: missing key \"share\"");
    check_patch(mem, len, "\xa6""events\xcd\x04\x06", 10, 9, 0x07,
                "event 0: seq 7 (expected 8)");
    check_patch(mem, len, "\xa6""events\xcd\x04\x06", 10, 8, 0x03,
                "1024 events kept of 774 made, expected 774");
    check_patch(mem, len, "\xa7""flagged", 8, 1, 'X', "births \"counts\": missing key \"flagged\"");
    /* a windowed running count (slda_births_count_start) needs tokens in it */
    check_patch(mem, len, "\xa7""counted\xce\x00\x01\x00\x00", 13, 10, 0x00,
                "windowed 1 with 0 tokens counted");
    check_patch(mem, len, "\xa8""windowed\xc3", 10, 9, 0xc0,
                "births \"windowed\": expected");
    /* an older reader skips the key it does not know: rename it, the model loads without it */
    buf = malloc(len);
    memcpy(buf, mem, len);
    at = find(buf, len, "\xa6""births\x8e", 8);
    CHECK_NONNULL(at);
    if (at) {
        at[6] = 'X';
        fix_checksum(buf, len);
        back = slda_snapshot_decode(buf, len, &err, errbuf, sizeof errbuf);
        CHECK_INT(err, SLDA_OK);
        CHECK_TRUE(back != NULL, "%s", errbuf);
        if (back)
            CHECK_NULL(back->births);
        slda_model_destroy(back);
        at[6] = 's';
    }
    /* every cut and mutation inside the births map, re-checksummed: refused or loaded,
     * never a crash or a leak (the sanitizer build checks) */
    end = at ? find(at, len - (size_t)(at - buf), "\xa3ids", 4) : NULL;
    CHECK_NONNULL(end);
    if (at && end) {
        size_t from = (size_t)(at - buf), to = (size_t)(end - buf), loaded = 0, refused = 0;
        slda_rng_t rng;
        for (size_t cut = from; cut < to; cut++) {
            unsigned char *c = malloc(cut + 8);
            memcpy(c, buf, cut);
            fix_checksum(c, cut + 8);
            check_refused(c, cut + 8, SLDA_ERR_CORRUPT, NULL, "re-checksummed cut in births");
            free(c);
        }
        slda_rng_seed(&rng, 2024);
        for (int iter = 0; iter < 3000; iter++) {
            unsigned char *m = malloc(len);
            memcpy(m, buf, len);
            for (uint32_t j = 0, nflip = 1 + slda_rng_below(&rng, 3); j < nflip; j++) {
                size_t pos = from + slda_rng_below(&rng, (uint32_t)(to - from));
                m[pos] = slda_rng_below(&rng, 2) ? (unsigned char)slda_rng_next(&rng)
                                                 : (unsigned char)(m[pos] ^ 1);
            }
            fix_checksum(m, len);
            err = SLDA_OK;
            back = slda_snapshot_decode(m, len, &err, errbuf, sizeof errbuf);
            if (back) {
                loaded++;
                CHECK_INT(err, SLDA_OK);
            } else {
                refused++;
                CHECK_TRUE(err == SLDA_ERR_CORRUPT || err == SLDA_ERR_INVALID, "%s: %s",
                           slda_err_name(err), errbuf);
                CHECK_TRUE(strncmp(errbuf, "snapshot \"", 10) == 0, "%s", errbuf);
            }
            slda_model_destroy(back);
            free(m);
        }
        printf("births state: %zu bytes; mutations: %zu loaded, %zu refused\n", to - from, loaded,
               refused);
    }
    free(buf);
    free(mem);
    slda_model_destroy(model);
}

/* ---- atomic write ---- */

static void test_atomic(const char *dir)
{
    char path[4096], tmp[4200], bad[4096];
    slda_model_t *a = make_model(3, 16, 4, 0), *b = make_model(4, 16, 6, 0);
    unsigned char *before, *after;
    size_t nbefore, nafter;
    slda_err_t err;
    snprintf(bad, sizeof bad, "%s/no-such-dir/model.slda", dir);
    err = slda_snapshot_write(a, bad, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_ERR_IO);
    CHECK_CONTAINS(errbuf, bad);
    CHECK_CONTAINS(errbuf, "No such file or directory");
    printf("write into a missing directory: %s\n", errbuf);

    /* the old snapshot survives a failed write: block the temp name */
    snprintf(path, sizeof path, "%s/atomic.slda", dir);
    CHECK_INT(slda_snapshot_write(a, path, errbuf, sizeof errbuf), SLDA_OK);
    before = slurp(path, &nbefore);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK_INT(mkdir(tmp, 0700), 0);
    err = slda_snapshot_write(b, path, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_ERR_IO);
    CHECK_CONTAINS(errbuf, path);
    printf("write with the temp name blocked: %s\n", errbuf);
    after = slurp(path, &nafter);
    CHECK_INT(nafter, nbefore);
    CHECK_NONNULL(before);
    CHECK_NONNULL(after);
    if (before && after && nafter == nbefore) /* the lengths: checked above */
        CHECK_MEM(before, after, nbefore);
    CHECK_INT(rmdir(tmp), 0);
    free(after);
    /* and is replaced by a successful one, leaving no temp file */
    CHECK_INT(slda_snapshot_write(b, path, errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(count_temp_files(dir), 0);
    after = slurp(path, &nafter);
    CHECK_NONNULL(after);
    CHECK_TRUE(after && (nafter != nbefore || memcmp(before, after, nbefore) != 0),
               "%s holds the old snapshot's %zu bytes", path, nbefore);
    free(after);
    free(before);

    /* exports go through the same path */
    snprintf(bad, sizeof bad, "%s/no-such-dir/phi.npy", dir);
    CHECK_INT(slda_export_npy(a, bad, errbuf, sizeof errbuf), SLDA_ERR_IO);
    CHECK_CONTAINS(errbuf, "export \"");
    CHECK_INT(slda_export_vocab(a, bad, errbuf, sizeof errbuf), SLDA_ERR_IO);
    slda_model_destroy(a);
    slda_model_destroy(b);
}

/* ---- the v1 fixture ---- */

static const char *const fx_words[] = {"apple", "banana", "ch\xc3\xa9rie"};
static const uint32_t fx_ids[] = {0, 2, 5};
static const double fx_freqs[] = {3.5, 1.25, 0};
static const uint8_t fx_ready[] = {1, 1, 0};
static const float fx_rows[3][3] = {{1.0f, 2.0f, 3.0f}, {0.5f, 0.25f, 0.125f}, {0, 0, 0}};
static const double fx_alpha[] = {0.25, 0.5, 0.75};
static const double fx_NZ[] = {10.5, 20.25, 30.125};

static slda_model_t *fixture_model(void)
{
    slda_params_t p = base_params(3, 16);
    slda_offset_t offs[2] = {{"docs", 0, 17}, {"docs", 1, 23}};
    slda_model_t *model = slda_model_alloc(&p, 16, 0, (&p)->seed, NULL, errbuf, sizeof errbuf);
    if (!model)
        return NULL;
    for (int i = 0; i < 3; i++) {
        slda_vocab_put(model->vocab, fx_ids[i], fx_words[i], strlen(fx_words[i]), fx_freqs[i],
                       errbuf, sizeof errbuf);
        memcpy(model->A + (size_t)fx_ids[i] * model->Kp, fx_rows[i], sizeof fx_rows[i]);
        if (fx_ready[i])
            slda_model_mark_row(model, fx_ids[i]);
    }
    model->sigma = 0.5;
    memcpy(model->alpha, fx_alpha, sizeof fx_alpha);
    memcpy(model->NZ, fx_NZ, sizeof fx_NZ);
    model->alpha_sum = 1.5;
    model->t = 7;
    model->docs = 21;
    model->tokens = 420;
    model->corpus_tokens = 1000;
    model->created_ms = 1700000000000;
    model->updated_ms = 1700000123456;
    set_name(model, "fixture-k3");
    slda_model_set_offsets(model, offs, 2);
    return model;
}

/* The fixture's values, spelled out (not taken from fixture_model). */
static void check_fixture_values(const slda_model_t *model)
{
    size_t noffs;
    const slda_offset_t *offs = slda_model_offsets(model, &noffs);
    CHECK_INT(model->K, 3);
    CHECK_INT(model->W, 16);
    CHECK_STR(model->name, "fixture-k3");
    CHECK_NEAR(model->sigma, 0.5, 0);
    CHECK_NEAR(model->alpha[0], 0.25, 0);
    CHECK_NEAR(model->alpha[1], 0.5, 0);
    CHECK_NEAR(model->alpha[2], 0.75, 0);
    CHECK_NEAR(model->alpha_sum, 1.5, 0);
    CHECK_NEAR(model->NZ[0], 10.5, 0);
    CHECK_NEAR(model->NZ[1], 20.25, 0);
    CHECK_NEAR(model->NZ[2], 30.125, 0);
    CHECK_NEAR(model->p.eta, 0.125, 0);
    CHECK_NEAR(model->p.alpha, 0.25, 0);
    CHECK_STR(slda_local_name(model->p.vb, model->p.hybrid), "cvb0+cgs");
    CHECK_INT(model->p.alpha_learn, SLDA_ALPHA_FIXEDPOINT);
    CHECK_INT(model->p.stats, SLDA_STATS_RB);
    CHECK_NEAR(model->p.rho_kappa, 0.7, 0);
    CHECK_INT(model->p.vocab_capacity, 16);
    CHECK_NULL(model->p.vocab_file);
    CHECK_STR(model->p.stopwords, "none");
    CHECK_INT(model->p.seed, 42);
    CHECK_INT(model->p.max_doc_bytes, 1048576);
    CHECK_INT(model->t, 7);
    CHECK_INT(model->docs, 21);
    CHECK_INT(model->tokens, 420);
    CHECK_NEAR(model->corpus_tokens, 1000, 0);
    CHECK_INT(model->created_ms, 1700000000000);
    CHECK_INT(model->updated_ms, 1700000123456);
    CHECK_INT(noffs, 2);
    if (noffs == 2) {
        CHECK_STR(offs[0].topic, "docs");
        CHECK_INT(offs[0].partition, 0);
        CHECK_INT(offs[0].offset, 17);
        CHECK_INT(offs[1].partition, 1);
        CHECK_INT(offs[1].offset, 23);
    }
    CHECK_INT(slda_vocab_size(model->vocab), 3);
    CHECK_INT(slda_vocab_max_id(model->vocab), 6);
    CHECK_INT(slda_vocab_seed(model->vocab), 42);
    CHECK_INT(slda_vocab_is_fixed(model->vocab), 0);
    CHECK_INT(slda_model_word_id(model, "banana", 6), 2);
    CHECK_INT(slda_model_word_id(model, "ch\xc3\xa9rie", 7), 5);
    CHECK_STR(slda_model_word(model, 0), "apple");
    CHECK_NULL(slda_model_word(model, 1));
    CHECK_NEAR(slda_vocab_freq(model->vocab, 0), 3.5, 0);
    CHECK_NEAR(slda_vocab_freq(model->vocab, 2), 1.25, 0);
    CHECK_INT(model->row_ready[0], 1);
    CHECK_INT(model->row_ready[2], 1);
    CHECK_INT(model->row_ready[5], 0);
    CHECK_NEAR(model->A[0 * model->Kp + 2], 3.0, 0);
    CHECK_NEAR(model->A[2 * model->Kp + 1], 0.25, 0);
    CHECK_NEAR(model->A[2 * model->Kp + 2], 0.125, 0);
    for (uint32_t w = 0; w < model->W; w++)
        for (uint32_t k = (w == 0 || w == 2) ? 3 : 0; k < model->Kp; k++)
            CHECK_TRUE(model->A[(size_t)w * model->Kp + k] == 0, "A[%u][%u] = %g, expected 0", w,
                       k, model->A[(size_t)w * model->Kp + k]);
}

static void fixture_path(char *out, size_t size)
{
    const char *src = getenv("SLDA_SOURCE_DIR");
    if (src && *src) {
        snprintf(out, size, "%s/tests/fixtures/" FIXTURE_NAME, src);
    } else { /* next to this source file */
        const char *slash = strrchr(__FILE__, '/');
        snprintf(out, size, "%.*s/fixtures/" FIXTURE_NAME,
                 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
    }
}

static void test_fixture(void)
{
    char path[4096];
    slda_err_t err = SLDA_ERR__COUNT;
    slda_model_t *model, *fresh;
    fixture_path(path, sizeof path);
    model = slda_snapshot_read(path, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    CHECK_TRUE(model != NULL, "fixture %s: %s", path, errbuf);
    if (!model)
        return;
    check_fixture_values(model);
    /* written before global.rows existed: loads with the step it was trained with */
    CHECK_INT(model->p.rows, SLDA_ROWS_DECAY);
    fresh = fixture_model(); /* what --write-fixture writes matches the frozen file */
    if (fresh)
        check_models_equal(fresh, model);
    slda_model_destroy(fresh);
    slda_model_destroy(model);
    printf("fixture %s: loaded\n", path);
}

/* ---- .npy export ---- */

static void test_npy(const char *dir)
{
    slda_model_t *model = make_model(4, 32, 20, 0);
    char path[4096], vpath[4096], want[128];
    unsigned char *buf;
    size_t len;
    uint32_t V, *ids = slda_model_ids_held(model, &V), hlen; /* the columns: words held */
    float *phi = malloc((size_t)model->K * V * sizeof *phi);
    uint32_t *phi_ids = malloc(V * sizeof *phi_ids);
    size_t bad = 0, bad_api = 0;
    snprintf(path, sizeof path, "%s/phi.npy", dir);
    snprintf(vpath, sizeof vpath, "%s/phi.vocab", dir);
    CHECK_INT(V, model->nready); /* 20 words, those with id % 7 == 0 not ready */
    CHECK_INT(V, 16);
    CHECK_INT(slda_export_npy(model, path, errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(slda_export_vocab(model, vpath, errbuf, sizeof errbuf), SLDA_OK);
    CHECK_INT(count_temp_files(dir), 0);
    buf = slurp(path, &len);
    CHECK_NONNULL(buf);
    CHECK_GT(len, 10);
    if (!buf || len <= 10)
        return;
    CHECK_MEM(buf, "\x93NUMPY\x01\x00", 8);
    hlen = buf[8] | (uint32_t)buf[9] << 8;
    CHECK_INT((10 + hlen) % 64, 0);
    CHECK_INT(buf[10 + hlen - 1], '\n');
    snprintf(want, sizeof want, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, %u), }",
             V);
    CHECK_LE(10 + hlen, len);
    if (10 + hlen <= len)
        CHECK_TRUE(strncmp((char *)buf + 10, want, strlen(want)) == 0,
                   "header \"%.*s\", wanted \"%s\"", (int)hlen, (char *)buf + 10, want);
    for (size_t i = 10 + strlen(want); i < 10 + hlen - 1 && i < len; i++)
        CHECK_INT(buf[i], ' ');
    CHECK_INT(len, 10 + hlen + (size_t)4 * V * 4);
    CHECK_INT(slda_model_phi(model, phi, phi_ids), SLDA_OK);
    for (uint32_t k = 0; k < model->K && len == 10 + hlen + (size_t)4 * V * 4; k++) {
        double denom = model->NZ[k] + (double)slda_model_smoothing_words(model) * model->p.eta;
        for (uint32_t c = 0; c < V; c++) {
            const unsigned char *q = buf + 10 + hlen + ((size_t)k * V + c) * 4;
            uint32_t u = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            float got, expect;
            memcpy(&got, &u, 4);
            expect = (float)((model->sigma * model->A[(size_t)ids[c] * model->Kp + k] +
                              model->p.eta) / denom);
            if (fabsf(got - expect) > 1e-7f * expect) {
                if (bad++ == 0)
                    fprintf(stderr, "  phi[%u][%u]: file %.9g, formula %.9g\n", k, c, got,
                            expect);
            }
            bad_api += got != phi[(size_t)k * V + c];
        }
    }
    CHECK_INT(bad, 0);
    CHECK_INT(bad_api, 0);
    CHECK_MEM(ids, phi_ids, V * sizeof *ids);
    free(buf);
    /* the vocabulary file: the column words in order */
    buf = slurp(vpath, &len);
    if (buf) {
        char *line = (char *)buf, *end = (char *)buf + len;
        uint32_t c = 0;
        while (line < end) {
            char *nl = memchr(line, '\n', (size_t)(end - line));
            if (!nl)
                break;
            *nl = '\0';
            if (c < V)
                CHECK_STR(line, slda_vocab_word(model->vocab, ids[c]));
            c++;
            line = nl + 1;
        }
        CHECK_INT(c, V);
        CHECK_PTR_EQ(line, end);
    }
    free(buf);
    printf("npy: K=%u V=%u, header %u bytes, values match the formula\n", model->K, V, 10 + hlen);
    free(phi);
    free(phi_ids);
    free(ids);
    slda_model_destroy(model);
}

int main(int argc, char **argv)
{
    char *dir;
    if (argc == 3 && strcmp(argv[1], "--write-fixture") == 0) {
        slda_model_t *model = fixture_model();
        slda_err_t err = model ? slda_snapshot_write(model, argv[2], errbuf, sizeof errbuf)
                               : SLDA_ERR_INVALID;
        slda_model_destroy(model);
        if (err != SLDA_OK) {
            fprintf(stderr, "unit_snapshot: %s\n", errbuf);
            return 1;
        }
        printf("wrote %s\n", argv[2]);
        return 0;
    }
    dir = slda_test_tmpdir();
    test_round_trip(dir);
    test_header_is_msgpack();
    test_corrupt(dir);
    test_truncated(dir);
    test_version();
    test_garbage();
    test_inconsistent();
    test_atomic(dir);
    test_fixture();
    test_births_state(dir);
    test_npy(dir);
    remove_dir(dir);
    free(dir);
    return slda_test_done("unit_snapshot");
}
