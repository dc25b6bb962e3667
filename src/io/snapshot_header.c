/* snapshot_header.c - the snapshot's header map: written, read, checked; the model built.
 *
 * The header (docs/snapshot-format.md, "Header") holds the model's state
 * besides its rows: K, W, the vocabulary's kind and seed, alpha, sigma, NZ,
 * the counters, the times, the parameters (snapshot_params.c), the consumer
 * offsets, and the optional "event_ms", "births" (snapshot_births.c) and
 * "labels" (snapshot_labels.c). Reading: every key but "producer" and the
 * optional ones is required, a
 * key given twice is refused and an unknown one skipped; the values are
 * checked against each other (params.topics == K, W against vocab.capacity
 * or vocab_size, eta, sigma, alpha and NZ finite and in range) before the
 * model is allocated, so a header cannot ask for a model its own numbers
 * contradict. The parsed header owns its arrays and strings until
 * slda_snap_header_clear.
 */
#include "io/snapshot_priv.h"
#include "engine/labels.h"
#include "engine/model.h"
#include "text/tokenize.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    HDR_FORMAT, HDR_PRODUCER, HDR_NAME, HDR_K, HDR_W, HDR_VOCAB_SIZE, HDR_VOCAB_FIXED,
    HDR_VOCAB_CAPACITY, HDR_HASH_SEED, HDR_ALPHA, HDR_ALPHA_SUM, HDR_ETA, HDR_SIGMA,
    HDR_NZ, HDR_T, HDR_DOCS, HDR_TOKENS, HDR_CORPUS_TOKENS, HDR_CREATED_MS,
    HDR_UPDATED_MS, HDR_PARAMS, HDR_OFFSETS, HDR__COUNT
};

static const char *const hdr_keys[HDR__COUNT] = {
    [HDR_FORMAT] = "format",         [HDR_PRODUCER] = "producer",
    [HDR_NAME] = "name",             [HDR_K] = "K",
    [HDR_W] = "W",                   [HDR_VOCAB_SIZE] = "vocab_size",
    [HDR_VOCAB_FIXED] = "vocab_fixed", [HDR_VOCAB_CAPACITY] = "vocab_capacity",
    [HDR_HASH_SEED] = "hash_seed",   [HDR_ALPHA] = "alpha",
    [HDR_ALPHA_SUM] = "alpha_sum",   [HDR_ETA] = "eta",
    [HDR_SIGMA] = "sigma",           [HDR_NZ] = "NZ",
    [HDR_T] = "t",                   [HDR_DOCS] = "docs",
    [HDR_TOKENS] = "tokens",         [HDR_CORPUS_TOKENS] = "corpus_tokens",
    [HDR_CREATED_MS] = "created_ms", [HDR_UPDATED_MS] = "updated_ms",
    [HDR_PARAMS] = "params",         [HDR_OFFSETS] = "offsets",
};

/* Optional header key (absent in older snapshots; readers skip what they do
 * not know): the service's newest event time (docs/tracking.md). */
#define HDR_OPT_EVENT_MS "event_ms"

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

static void snap_write_offsets(msgpack_packer *pk, const slda_model_t *model)
{
    size_t noffsets;
    const slda_offset_t *offsets = slda_model_offsets(model, &noffsets);
    msgpack_pack_array(pk, noffsets);
    for (size_t i = 0; i < noffsets; i++) {
        const slda_offset_t *o = &offsets[i];
        msgpack_pack_array(pk, 3);
        msgpack_pack_str_with_body(pk, o->topic, strnlen(o->topic, sizeof o->topic));
        msgpack_pack_int32(pk, o->partition);
        msgpack_pack_int64(pk, o->offset);
    }
}

void slda_snap_header_write(msgpack_packer *pk, const slda_model_t *model, uint32_t nrows,
                            const slda_snapshot_meta_t *meta)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    const slda_births_t *bstate = slda_model_births(model);
    slda_model_state_t st;
    slda_model_state(model, &st);
    int event = meta && meta->event_ms > 0, births = bstate != NULL;
    int authors = slda_model_authors(model) != NULL, pam = slda_model_pam(model) != NULL;
    int labels = slda_model_label_count(model) > 0;
    msgpack_pack_map(pk, HDR__COUNT + event + births + authors + pam + labels);
    if (event) {
        pack_key(pk, HDR_OPT_EVENT_MS);
        msgpack_pack_int64(pk, meta->event_ms);
    }
    pack_key(pk, hdr_keys[HDR_FORMAT]);
    msgpack_pack_uint32(pk, slda_snap_version_of(model));
    pack_key(pk, hdr_keys[HDR_PRODUCER]);
    pack_key(pk, "streamlda " SLDA_VERSION_STR);
    pack_key(pk, hdr_keys[HDR_NAME]);
    pack_str_or_nil(pk, st.name);
    pack_key(pk, hdr_keys[HDR_K]);
    msgpack_pack_uint32(pk, st.K);
    pack_key(pk, hdr_keys[HDR_W]);
    msgpack_pack_uint32(pk, slda_model_rows(model));
    pack_key(pk, hdr_keys[HDR_VOCAB_SIZE]);
    msgpack_pack_uint32(pk, nrows);
    pack_key(pk, hdr_keys[HDR_VOCAB_FIXED]);
    pack_bool(pk, slda_vocab_is_fixed(vocab));
    pack_key(pk, hdr_keys[HDR_VOCAB_CAPACITY]);
    msgpack_pack_uint32(pk, slda_vocab_capacity(vocab));
    pack_key(pk, hdr_keys[HDR_HASH_SEED]);
    msgpack_pack_uint64(pk, slda_vocab_seed(vocab));
    pack_key(pk, hdr_keys[HDR_ALPHA]);
    pack_doubles(pk, st.alpha, st.K);
    pack_key(pk, hdr_keys[HDR_ALPHA_SUM]);
    msgpack_pack_double(pk, st.alpha_sum);
    pack_key(pk, hdr_keys[HDR_ETA]);
    msgpack_pack_double(pk, slda_model_params(model)->eta);
    pack_key(pk, hdr_keys[HDR_SIGMA]);
    msgpack_pack_double(pk, st.sigma);
    pack_key(pk, hdr_keys[HDR_NZ]);
    pack_doubles(pk, st.NZ, st.K);
    pack_key(pk, hdr_keys[HDR_T]);
    msgpack_pack_uint64(pk, st.t);
    pack_key(pk, hdr_keys[HDR_DOCS]);
    msgpack_pack_uint64(pk, st.docs);
    pack_key(pk, hdr_keys[HDR_TOKENS]);
    msgpack_pack_uint64(pk, st.tokens);
    pack_key(pk, hdr_keys[HDR_CORPUS_TOKENS]);
    msgpack_pack_double(pk, st.corpus_tokens);
    pack_key(pk, hdr_keys[HDR_CREATED_MS]);
    msgpack_pack_int64(pk, st.created_ms);
    pack_key(pk, hdr_keys[HDR_UPDATED_MS]);
    msgpack_pack_int64(pk, st.updated_ms);
    pack_key(pk, hdr_keys[HDR_PARAMS]);
    slda_params_t p = *slda_model_params(model);
    p.text = *slda_tokenizer_rules(slda_model_tokenizer(model)); /* what the words came through */
    slda_snap_params_write(pk, &p);
    pack_key(pk, hdr_keys[HDR_OFFSETS]);
    snap_write_offsets(pk, model);
    if (births) {
        pack_key(pk, SLDA_SNAP_KEY_BIRTHS);
        slda_snap_births_write(pk, bstate);
    }
    if (authors) {
        pack_key(pk, SLDA_SNAP_KEY_AUTHORS);
        slda_snap_authors_write(pk, model);
    }
    if (pam) {
        pack_key(pk, SLDA_SNAP_KEY_PAM);
        slda_snap_pam_write(pk, model);
    }
    if (labels) {
        pack_key(pk, SLDA_SNAP_KEY_LABELS);
        slda_snap_labels_write(pk, model);
    }
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */

void slda_snap_header_clear(slda_snap_header_t *h)
{
    free(h->name);
    free(h->alpha);
    free(h->NZ);
    free(h->p.vocab_file);
    free(h->p.stopwords);
    free(h->offs);
    slda_snap_births_clear(&h->births);
    slda_snap_authors_clear(&h->authors);
    slda_snap_pam_clear(&h->pam);
    slda_snap_labels_clear(&h->labels);
    memset(h, 0, sizeof *h);
}


static int snap_read_offset(slda_msgpack_t *mp, slda_offset_t *o)
{
    const unsigned char *s;
    size_t len;
    uint32_t n;
    int64_t partition;
    if (slda_msgpack_array(mp, "offsets entry", &n))
        return -1;
    if (n != 3)
        return slda_msgpack_fail(mp, "offsets entry: %u values, expected [topic, partition, "
                                 "offset]", n);
    if (slda_msgpack_str(mp, "offsets topic", &s, &len))
        return -1;
    if (len == 0 || len >= sizeof o->topic || memchr(s, '\0', len))
        return slda_msgpack_fail(mp, "offsets topic: %zu bytes (1..%zu without NUL allowed)", len,
                                 sizeof o->topic - 1);
    memset(o->topic, 0, sizeof o->topic);
    memcpy(o->topic, s, len);
    if (slda_msgpack_int(mp, "offsets partition", &partition) ||
        slda_msgpack_int(mp, "offsets offset", &o->offset))
        return -1;
    if (partition < 0 || partition > INT32_MAX)
        return slda_msgpack_fail(mp, "offsets partition: %" PRId64 " is out of range", partition);
    o->partition = (int32_t)partition;
    return 0;
}

static int snap_read_offsets(slda_msgpack_t *mp, slda_snap_header_t *h)
{
    uint32_t n;
    size_t cap = 0;
    if (slda_msgpack_array(mp, "header \"offsets\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (h->noffs == cap) { /* grow with what was parsed, not with the claim */
            cap = cap ? 2 * cap : 8;
            h->offs = slda_xrealloc(h->offs, cap * sizeof *h->offs);
        }
        if (snap_read_offset(mp, &h->offs[h->noffs]))
            return -1;
        h->noffs++;
    }
    return 0;
}

static int snap_read_header_field(slda_msgpack_t *mp, slda_snap_header_t *h, int f)
{
    char what[64];
    snprintf(what, sizeof what, "header \"%s\"", hdr_keys[f]);
    switch (f) {
    case HDR_FORMAT: return slda_msgpack_uint(mp, what, &h->format);
    case HDR_PRODUCER: {
        const unsigned char *s;
        size_t len;
        return slda_msgpack_str(mp, what, &s, &len);
    }
    case HDR_NAME: return slda_msgpack_strdup(mp, what, 1, &h->name);
    case HDR_K: return slda_msgpack_u32(mp, what, &h->K);
    case HDR_W: return slda_msgpack_u32(mp, what, &h->W);
    case HDR_VOCAB_SIZE: return slda_msgpack_u32(mp, what, &h->nrows);
    case HDR_VOCAB_FIXED: return slda_msgpack_bool(mp, what, &h->fixed);
    case HDR_VOCAB_CAPACITY: return slda_msgpack_u32(mp, what, &h->capacity);
    case HDR_HASH_SEED: return slda_msgpack_uint(mp, what, &h->hash_seed);
    case HDR_ALPHA: return slda_msgpack_doubles(mp, what, SLDA_MAX_TOPICS, "topics", &h->alpha, &h->nalpha);
    case HDR_ALPHA_SUM: return slda_msgpack_double(mp, what, &h->alpha_sum);
    case HDR_ETA: return slda_msgpack_double(mp, what, &h->eta);
    case HDR_SIGMA: return slda_msgpack_double(mp, what, &h->sigma);
    case HDR_NZ: return slda_msgpack_doubles(mp, what, SLDA_MAX_TOPICS, "topics", &h->NZ, &h->nNZ);
    case HDR_T: return slda_msgpack_uint(mp, what, &h->t);
    case HDR_DOCS: return slda_msgpack_uint(mp, what, &h->docs);
    case HDR_TOKENS: return slda_msgpack_uint(mp, what, &h->tokens);
    case HDR_CORPUS_TOKENS: return slda_msgpack_double(mp, what, &h->corpus_tokens);
    case HDR_CREATED_MS: return slda_msgpack_int(mp, what, &h->created_ms);
    case HDR_UPDATED_MS: return slda_msgpack_int(mp, what, &h->updated_ms);
    case HDR_PARAMS: return slda_snap_params_read(mp, &h->p);
    case HDR_OFFSETS: return snap_read_offsets(mp, h);
    }
    return -1;
}

static int check_doubles(slda_msgpack_t *mp, const char *what, const double *v, uint32_t n,
                         uint32_t K, int positive)
{
    if (n != K)
        return slda_msgpack_fail(mp, "header \"%s\": %u values for K=%u", what, n, K);
    for (uint32_t k = 0; k < n; k++)
        if (!isfinite(v[k]) || (positive ? v[k] <= 0 : v[k] < 0))
            return slda_msgpack_fail(mp, "header \"%s\": value %u is %g", what, k, v[k]);
    return 0;
}

/* The header's values agree with each other and with the format. */
static int snap_check_header(slda_msgpack_t *mp, const slda_snap_header_t *h)
{
    if (h->format != h->envelope)
        return slda_msgpack_fail(mp, "header \"format\": %" PRIu64 ", but the file says version %u",
                                 h->format, h->envelope);
    if ((h->p.kind == SLDA_KIND_LDA) != (h->format == SLDA_SNAP_VERSION_LDA))
        return slda_msgpack_fail(mp, "header: format version %" PRIu64 " with params "
                                 "\"model.kind\" %s (version %d is LDA's)", h->format,
                                 slda_kind_name(h->p.kind), SLDA_SNAP_VERSION_LDA);
    if (h->authors.present && h->p.kind != SLDA_KIND_ATM)
        return slda_msgpack_fail(mp, "header \"authors\" with params \"model.kind\" %s",
                                 slda_kind_name(h->p.kind));
    if (h->K == 0 || h->K > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "header \"K\": %u is outside 1..%d", h->K, SLDA_MAX_TOPICS);
    if (h->p.topics != h->K)
        return slda_msgpack_fail(mp, "K mismatch: header \"K\" is %u, params \"topics\" is %u",
                                 h->K, h->p.topics);
    if (h->W == 0 || h->nrows > h->W)
        return slda_msgpack_fail(mp, "header: vocab_size %u with W=%u", h->nrows, h->W);
    /* slda_model_new: an open vocabulary has vocab.capacity rows; a fixed
     * one has exactly its words. This also bounds W before any allocation. */
    if (!h->fixed && h->W != h->p.vocab_capacity)
        return slda_msgpack_fail(mp, "header: open vocabulary with W=%u but params "
                                 "\"vocab.capacity\" %u", h->W, h->p.vocab_capacity);
    if (h->fixed && h->nrows != h->W)
        return slda_msgpack_fail(mp, "header: fixed vocabulary with W=%u but vocab_size %u", h->W,
                                 h->nrows);
    if (!isfinite(h->sigma) || h->sigma <= 0)
        return slda_msgpack_fail(mp, "header \"sigma\": %g is not a positive number", h->sigma);
    if (!isfinite(h->eta) || h->eta <= 0 || h->eta != h->p.eta)
        return slda_msgpack_fail(mp, "header \"eta\": %g (params \"eta\" %g)", h->eta, h->p.eta);
    if (!isfinite(h->alpha_sum) || !isfinite(h->corpus_tokens))
        return slda_msgpack_fail(mp, "header: alpha_sum %g, corpus_tokens %g", h->alpha_sum,
                                 h->corpus_tokens);
    if (check_doubles(mp, "alpha", h->alpha, h->nalpha, h->K, 1) ||
        check_doubles(mp, "NZ", h->NZ, h->nNZ, h->K, 0))
        return -1;
    return 0;
}

int slda_snap_header_read(slda_msgpack_t *mp, slda_snap_header_t *h)
{
    uint32_t n;
    uint64_t seen = 0;
    if (slda_msgpack_map(mp, "header", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        int f;
        if (slda_msgpack_str(mp, "header key", &key, &len))
            return -1;
        for (f = 0; f < HDR__COUNT && !slda_msgpack_eq(key, len, hdr_keys[f]); f++)
            ;
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, HDR_OPT_EVENT_MS)) {
            if (slda_msgpack_int(mp, "header \"" HDR_OPT_EVENT_MS "\"", &h->event_ms))
                return -1;
            continue;
        }
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, SLDA_SNAP_KEY_AUTHORS)) {
            if (h->authors.present)
                return slda_msgpack_fail(mp, "header: duplicate key \"authors\"");
            if (slda_snap_authors_read(mp, &h->authors))
                return -1;
            continue;
        }
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, SLDA_SNAP_KEY_PAM)) {
            if (h->pam.present)
                return slda_msgpack_fail(mp, "header: duplicate key \"pam\"");
            if (slda_snap_pam_read(mp, &h->pam))
                return -1;
            continue;
        }
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, SLDA_SNAP_KEY_BIRTHS)) {
            if (slda_snap_births_read(mp, &h->births))
                return -1;
            continue;
        }
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, SLDA_SNAP_KEY_LABELS)) {
            if (slda_snap_labels_read(mp, &h->labels))
                return -1;
            continue;
        }
        if (f == HDR__COUNT) {
            if (slda_msgpack_skip(mp, "header value"))
                return -1;
            continue;
        }
        if (seen & ((uint64_t)1 << f))
            return slda_msgpack_fail(mp, "header: duplicate key \"%s\"", hdr_keys[f]);
        seen |= (uint64_t)1 << f;
        if (snap_read_header_field(mp, h, f))
            return -1;
    }
    for (int f = 0; f < HDR__COUNT; f++)
        if (!(seen & ((uint64_t)1 << f)) && f != HDR_PRODUCER) /* producer: informational */
            return slda_msgpack_fail(mp, "header: missing key \"%s\"", hdr_keys[f]);
    return snap_check_header(mp, h);
}

slda_model_t *slda_snap_model_build(slda_msgpack_t *mp, slda_snap_header_t *h)
{
    char msg[256];
    slda_params_t p = h->p; /* shallow: strings stay h's */
    slda_model_t *model;
    /* Decoding never touches the file system: a stop-word file named in
     * text.stopwords is not opened (the bytes may come from anywhere, e.g.
     * the snapshot topic). The model keeps the whole setting in its
     * parameters, and its tokenizer uses the built-in and inline parts only
     * until a program that trusts the paths rebuilds it
     * (slda_model_set_tokenizer; the service does, from its own
     * configuration). Built-in lists are compiled in and safe. */
    char *safe_stop = slda_stopwords_without_files(p.stopwords);
    p.stopwords = safe_stop;
    model = slda_model_alloc(&h->p, h->W, h->fixed, h->hash_seed, &p, msg, sizeof msg);
    free(safe_stop);
    if (!model) {
        mp->err = slda_set_err(mp->errstr, mp->errstr_size,
                               strstr(msg, "cannot allocate") ? SLDA_ERR_NOMEM : SLDA_ERR_INVALID,
                               "%s%s", mp->prefix, msg);
        return NULL;
    }
    uint32_t K = slda_model_topics(model), W = slda_model_rows(model);
    uint64_t seed = slda_vocab_seed(slda_model_vocab(model));
    if (K != h->K || W != h->W || seed != h->hash_seed) {
        slda_msgpack_fail(mp, "model built with K=%u W=%u hash seed %" PRIu64
                          ", header says K=%u W=%u hash seed %" PRIu64,
                          K, W, seed, h->K, h->W, h->hash_seed);
        slda_model_destroy(model);
        return NULL;
    }
    slda_model_state_t st = {
        .K = h->K, .name = h->name, .alpha = h->alpha, .NZ = h->NZ,
        .alpha_sum = h->alpha_sum, .sigma = h->sigma, .corpus_tokens = h->corpus_tokens,
        .t = h->t, .docs = h->docs, .tokens = h->tokens, .created_ms = h->created_ms,
        .updated_ms = h->updated_ms};
    slda_model_set_state(model, &st);
    if (h->noffs && slda_model_set_offsets(model, h->offs, h->noffs) != SLDA_OK) {
        slda_msgpack_fail(mp, "header \"offsets\": %zu entries refused by the model", h->noffs);
        slda_model_destroy(model);
        return NULL;
    }
    return model;
}
