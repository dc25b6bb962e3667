/* fuzz_snapshot.c - fuzz target: slda_snapshot_decode on untrusted bytes (docs/snapshot-format.md).
 *
 * Two targets come from this file. fuzz_snapshot decodes the input as is, so
 * most mutations stop at the XXH3-64 trailer; fuzz_snapshot_fixsum (built
 * with -DSLDA_FUZZ_FIX_CHECKSUM) first rewrites the trailer to the checksum
 * of the mutated bytes, so mutations reach the MessagePack parser.
 * Checked:
 *   - the envelope checks come in the documented order: bad magic ->
 *     SLDA_ERR_CORRUPT, under 20 bytes -> SLDA_ERR_TRUNCATED, version 0 ->
 *     CORRUPT, newer version -> SLDA_ERR_VERSION, trailer mismatch ->
 *     CORRUPT "checksum mismatch"; any other failure is one of the
 *     documented codes with a "snapshot "<memory>": " message;
 *   - a decoded model is consistent: K, Kp, W, vocabulary capacity and
 *     size agree; every word in use is non-empty and found again under its
 *     id; rows are finite, padding and the rows of unused ids are zero;
 *     sigma, eta, alpha and NZ are in range;
 *   - it round-trips: slda_snapshot_encode succeeds, the encoding decodes to
 *     a model equal to it field by field and bit by bit, and encoding that
 *     model again gives the same bytes.
 * slda_fuzz_generate hands replay.c snapshots of the current format encoded
 * from models trained here (open and fixed vocabulary, K = 1, 3, 17), after
 * checking that each decodes to a model equal to the one encoded.
 */
#include "fuzzutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "SLDASNAP"
#define HEAD_LEN 12
#define TRAILER_LEN 8
#define MEM_PREFIX "snapshot \"<memory>\": "

static uint64_t get_be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

#ifdef SLDA_FUZZ_FIX_CHECKSUM
static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}
#endif

/* ---- envelope: what the documented check order predicts ---- */

static void check_envelope(const uint8_t *buf, size_t len, slda_err_t err, const char *msg)
{
    size_t m = len < 8 ? len : 8;
    uint32_t version;
    if (len > 0 && memcmp(buf, MAGIC, m) != 0) {
        FUZZ_ASSERT(err == SLDA_ERR_CORRUPT && strstr(msg, "bad magic"),
                    "bad magic gave %s: %s", slda_err_name(err), msg);
        return;
    }
    if (len < HEAD_LEN + TRAILER_LEN) {
        FUZZ_ASSERT(err == SLDA_ERR_TRUNCATED, "%zu bytes gave %s: %s", len, slda_err_name(err),
                    msg);
        return;
    }
    version = (uint32_t)get_be(buf + 8, 4);
    if (version != 1) {
        FUZZ_ASSERT(err == (version == 0 ? SLDA_ERR_CORRUPT : SLDA_ERR_VERSION),
                    "version %u gave %s: %s", version, slda_err_name(err), msg);
        return;
    }
    if (get_be(buf + len - TRAILER_LEN, TRAILER_LEN) != slda_hash64(buf, len - TRAILER_LEN, 0))
        FUZZ_ASSERT(err == SLDA_ERR_CORRUPT && strstr(msg, "checksum mismatch"),
                    "a wrong trailer gave %s: %s", slda_err_name(err), msg);
}

static void check_failure(slda_err_t err, const char *msg)
{
    FUZZ_ASSERT(err == SLDA_ERR_CORRUPT || err == SLDA_ERR_TRUNCATED || err == SLDA_ERR_VERSION ||
                    err == SLDA_ERR_NOMEM || err == SLDA_ERR_INVALID,
                "undocumented failure %s: %s", slda_err_name(err), msg);
    FUZZ_ASSERT(strncmp(msg, MEM_PREFIX, strlen(MEM_PREFIX)) == 0, "message \"%s\"", msg);
}

/* ---- a decoded model ---- */

static int finite_pos(double v)
{
    return isfinite(v) && v > 0;
}

static void check_model(const slda_model_t *model)
{
    uint32_t used = 0, top = 0;
    FUZZ_ASSERT(model->K >= 1 && model->K <= SLDA_MAX_TOPICS && model->Kp == ((model->K + 15) & ~15u),
                "K %u Kp %u", model->K, model->Kp);
    FUZZ_ASSERT(model->p.topics == model->K, "params topics %u, K %u", model->p.topics, model->K);
    FUZZ_ASSERT(model->W >= 1 && slda_vocab_capacity(model->vocab) == model->W,
                "W %u, vocabulary capacity %u", model->W, slda_vocab_capacity(model->vocab));
    FUZZ_ASSERT(slda_vocab_max_id(model->vocab) <= model->W, "max id %u > W %u",
                slda_vocab_max_id(model->vocab), model->W);
    FUZZ_ASSERT(finite_pos(model->sigma) && finite_pos(model->p.eta), "sigma %g eta %g",
                model->sigma, model->p.eta);
    for (uint32_t k = 0; k < model->K; k++)
        FUZZ_ASSERT(finite_pos(model->alpha[k]) && isfinite(model->NZ[k]) && model->NZ[k] >= 0,
                    "topic %u: alpha %g NZ %g", k, model->alpha[k], model->NZ[k]);
    for (uint32_t w = 0; w < model->W; w++) {
        const char *word = slda_vocab_word(model->vocab, w);
        const float *row = model->A + (size_t)w * model->Kp;
        for (uint32_t k = 0; k < model->Kp; k++)
            FUZZ_ASSERT(word && k < model->K ? isfinite(row[k]) : row[k] == 0.0f,
                        "id %u (%s): A[%u] = %g", w, word ? "in use" : "unused", k, row[k]);
        if (!word) {
            FUZZ_ASSERT(model->row_ready[w] == 0, "unused id %u marked ready", w);
            continue;
        }
        used++;
        top = w + 1;
        FUZZ_ASSERT(word[0] != '\0', "id %u: empty word", w);
        FUZZ_ASSERT(slda_vocab_find(model->vocab, word, strlen(word)) == w,
                    "id %u: word \"%s\" looks up as %u", w, word,
                    slda_vocab_find(model->vocab, word, strlen(word)));
        FUZZ_ASSERT(isfinite(slda_vocab_freq(model->vocab, w)) &&
                        slda_vocab_freq(model->vocab, w) >= 0,
                    "id %u: freq %g", w, slda_vocab_freq(model->vocab, w));
    }
    FUZZ_ASSERT(used == slda_vocab_size(model->vocab), "%u ids in use, vocabulary size %u", used,
                slda_vocab_size(model->vocab));
    FUZZ_ASSERT(top <= slda_vocab_max_id(model->vocab), "id %u in use, max id %u", top - 1,
                slda_vocab_max_id(model->vocab));
    if (slda_vocab_is_fixed(model->vocab))
        FUZZ_ASSERT(used == model->W, "fixed vocabulary with %u of W=%u words", used, model->W);
}

static int same(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define SAME_FIELD(f) FUZZ_ASSERT(same(&a->f, &b->f, sizeof a->f), "round trip: %s differs", #f)

static void check_params_equal(const slda_params_t *a, const slda_params_t *b)
{
    SAME_FIELD(topics); SAME_FIELD(alpha); SAME_FIELD(eta); SAME_FIELD(alpha_learn);
    SAME_FIELD(vb); SAME_FIELD(hybrid); SAME_FIELD(threshold); SAME_FIELD(burnin);
    SAME_FIELD(samples); SAME_FIELD(tolerance); SAME_FIELD(stats); SAME_FIELD(rho_s);
    SAME_FIELD(rho_tau); SAME_FIELD(rho_kappa); SAME_FIELD(rho_min); SAME_FIELD(corpus_tokens);
    SAME_FIELD(init_scale); SAME_FIELD(vocab_capacity); SAME_FIELD(seed); SAME_FIELD(threads);
    SAME_FIELD(min_length); SAME_FIELD(max_doc_bytes);
    FUZZ_ASSERT(same_str(a->vocab_file, b->vocab_file), "round trip: vocab.file differs");
    FUZZ_ASSERT(same_str(a->stopwords, b->stopwords), "round trip: text.stopwords differs");
}

static void check_models_equal(const slda_model_t *a, const slda_model_t *b)
{
    size_t na, nb;
    const slda_offset_t *oa = slda_model_offsets(a, &na), *ob = slda_model_offsets(b, &nb);
    check_params_equal(&a->p, &b->p);
    SAME_FIELD(K); SAME_FIELD(Kp); SAME_FIELD(W); SAME_FIELD(sigma); SAME_FIELD(alpha_sum);
    SAME_FIELD(t); SAME_FIELD(docs); SAME_FIELD(tokens); SAME_FIELD(corpus_tokens);
    SAME_FIELD(created_ms); SAME_FIELD(updated_ms);
    FUZZ_ASSERT(same(a->NZ, b->NZ, a->K * sizeof *a->NZ), "round trip: NZ differs");
    FUZZ_ASSERT(same(a->alpha, b->alpha, a->K * sizeof *a->alpha), "round trip: alpha differs");
    FUZZ_ASSERT(same_str(a->name, b->name), "round trip: name differs");
    FUZZ_ASSERT(na == nb, "round trip: %zu offsets, then %zu", na, nb);
    for (size_t i = 0; i < na; i++) /* field by field: the struct has padding */
        FUZZ_ASSERT(strcmp(oa[i].topic, ob[i].topic) == 0 && oa[i].partition == ob[i].partition &&
                        oa[i].offset == ob[i].offset,
                    "round trip: offset %zu differs", i);
    FUZZ_ASSERT(slda_vocab_size(a->vocab) == slda_vocab_size(b->vocab) &&
                    slda_vocab_max_id(a->vocab) == slda_vocab_max_id(b->vocab) &&
                    slda_vocab_is_fixed(a->vocab) == slda_vocab_is_fixed(b->vocab) &&
                    slda_vocab_seed(a->vocab) == slda_vocab_seed(b->vocab),
                "round trip: vocabulary size/max id/fixed/seed differ");
    for (uint32_t w = 0; w < a->W; w++) {
        double fa = slda_vocab_freq(a->vocab, w), fb = slda_vocab_freq(b->vocab, w);
        FUZZ_ASSERT(same_str(slda_vocab_word(a->vocab, w), slda_vocab_word(b->vocab, w)) &&
                        same(&fa, &fb, sizeof fa) && a->row_ready[w] == b->row_ready[w],
                    "round trip: id %u: word, freq or ready flag differs", w);
        FUZZ_ASSERT(same(a->A + (size_t)w * a->Kp, b->A + (size_t)w * b->Kp, a->Kp * 4),
                    "round trip: row %u differs", w);
    }
}

static void check_round_trip(const slda_model_t *m1)
{
    char err[512] = "";
    void *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    slda_err_t code = SLDA_OK;
    slda_model_t *m2;
    FUZZ_ASSERT(slda_snapshot_encode(m1, &b1, &n1, err, sizeof err) == SLDA_OK,
                "a decoded model does not encode: %s", err);
    m2 = slda_snapshot_decode(b1, n1, &code, err, sizeof err);
    FUZZ_ASSERT(m2 != NULL, "the re-encoded model does not decode: %s: %s", slda_err_name(code),
                err);
    check_model(m2);
    check_models_equal(m1, m2);
    FUZZ_ASSERT(slda_snapshot_encode(m2, &b2, &n2, err, sizeof err) == SLDA_OK,
                "the second model does not encode: %s", err);
    FUZZ_ASSERT(n1 == n2 && memcmp(b1, b2, n1) == 0,
                "encoding is not stable: %zu bytes, then %zu", n1, n2);
    free(b1);
    free(b2);
    slda_model_destroy(m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    slda_err_t code = SLDA_OK;
    slda_model_t *model;
    const uint8_t *buf = data;
#ifdef SLDA_FUZZ_FIX_CHECKSUM
    uint8_t *fixed = NULL;
    if (size >= HEAD_LEN + TRAILER_LEN) {
        fixed = slda_xmalloc(size);
        memcpy(fixed, data, size);
        put_be(fixed + size - TRAILER_LEN, slda_hash64(fixed, size - TRAILER_LEN, 0),
               TRAILER_LEN);
        buf = fixed;
    }
#endif
    model = slda_snapshot_decode(buf, size, &code, err, sizeof err);
    if (!model) {
        FUZZ_ASSERT(code != SLDA_OK, "NULL model with SLDA_OK");
        check_failure(code, err);
        check_envelope(buf, size, code, err);
    } else {
        FUZZ_ASSERT(code == SLDA_OK, "a model with %s", slda_err_name(code));
        check_model(model);
        check_round_trip(model);
        slda_model_destroy(model);
    }
#ifdef SLDA_FUZZ_FIX_CHECKSUM
    free(fixed);
#endif
    return 0;
}

/* ---- structured inputs for replay.c ---- */

static void conf_set(slda_conf_t *conf, const char *key, const char *value)
{
    char err[512];
    FUZZ_ASSERT(slda_conf_set(conf, key, value, err, sizeof err) == SLDA_OK, "harness: %s=%s: %s",
                key, value, err);
}

static const char *const texts[] = {
    "stock market fell sharply as bond yields rose",
    "the team won the match after a late goal",
    "caf\xc3\xa9 \xc3\xa9" "cole na\xc3\xaf" "ve stock match goal yields",
    "market bond stock yields investors fell rose",
    "goal match team league season player coach",
};

/* A model trained on texts[] (K topics; open vocabulary of 16 ids, or the
 * fixed vocabulary of the words in vocab_words). */
static slda_model_t *trained_model(const char *K, const char *local, const char *vocab_words,
                                   int offsets)
{
    char err[512];
    slda_conf_t *conf = slda_conf_new();
    slda_doc_t docs[5];
    size_t n = 0;
    slda_model_t *model;
    conf_set(conf, "topics", K);
    conf_set(conf, "local", local);
    conf_set(conf, "text.stopwords", "smart");
    conf_set(conf, "seed", "7");
    if (vocab_words) {
        const char *path = slda_fuzz_path("snapshot-vocab.txt");
        slda_fuzz_write_file(path, vocab_words, strlen(vocab_words));
        conf_set(conf, "vocab.file", path);
    } else {
        conf_set(conf, "vocab.capacity", "16");
        conf_set(conf, "alpha.learn", "newton");
        conf_set(conf, "model.name", "fuzz-seed");
    }
    model = slda_model_new(conf, err, sizeof err);
    FUZZ_ASSERT(model != NULL, "harness: model: %s", err);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (slda_doc_from_text(model, texts[i], strlen(texts[i]), &docs[n], err, sizeof err) ==
            SLDA_OK)
            n++;
    FUZZ_ASSERT(slda_model_train(model, docs, n, NULL, NULL, err, sizeof err) == SLDA_OK,
                "harness: train: %s", err);
    slda_docs_clear(docs, n);
    slda_vocab_new_epoch(model->vocab);
    if (offsets) {
        slda_offset_t offs[2] = {{"docs", 0, 42}, {"docs", 7, (int64_t)1 << 40}};
        FUZZ_ASSERT(slda_model_set_offsets(model, offs, 2) == SLDA_OK, "harness: offsets");
    }
    slda_conf_destroy(conf);
    return model;
}

void slda_fuzz_generate(slda_fuzz_feed_fn feed)
{
    static const struct {
        const char *K, *local, *vocab, *label;
        int offsets;
    } shapes[] = {
        {"3", "cvb0+cgs", NULL, "open-k3", 1},
        {"1", "cgs", NULL, "open-k1", 0},
        {"17", "svb", "stock\nmarket\nfell\ngoal\nmatch\nteam\n", "fixed-k17", 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char err[512];
        void *buf;
        size_t len;
        slda_model_t *model = trained_model(shapes[i].K, shapes[i].local, shapes[i].vocab,
                                            shapes[i].offsets);
        slda_model_t *back;
        slda_err_t code;
        FUZZ_ASSERT(slda_snapshot_encode(model, &buf, &len, err, sizeof err) == SLDA_OK,
                    "%s: encode: %s", shapes[i].label, err);
        back = slda_snapshot_decode(buf, len, &code, err, sizeof err);
        FUZZ_ASSERT(back != NULL, "%s: a trained model's snapshot does not decode: %s",
                    shapes[i].label, err);
        check_models_equal(model, back);
        slda_model_destroy(back);
        feed(buf, len, shapes[i].label);
        free(buf);
        slda_model_destroy(model);
    }
}
