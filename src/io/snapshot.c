/* snapshot.c - model snapshots: MessagePack, atomic write, XXH3-64 checked load.
 *
 * Layout (docs/snapshot-format.md): "SLDASNAP", uint32 big-endian format
 * version, a MessagePack header map, body blocks of at most
 * SLDA_SNAP_BLOCK_ROWS vocabulary rows, an end-marker map, and a big-endian
 * XXH3-64 (seed 0) of every byte before it. Rows hold the raw lazy-scaled A
 * (Nphi = sigma * A), and the optional header key "births" the births state
 * (births.c), so a restored model continues training bit for bit, births
 * decisions included.
 *
 * Writing packs through a msgpack_packer into a snap_sink_t that either grows
 * one memory buffer (encode) or is flushed to the temp file after every block
 * (write): the same bytes either way, and a file write holds at most about one
 * block in memory. The file's checksum is computed over a read-only mapping of
 * the temp file once the body is out (hash.c offers no streaming state yet), so
 * a FIFO, device or standard output, which cannot be re-read, gets the whole
 * encoded buffer instead.
 *
 * Reading never trusts its input: envelope, version and checksum are checked
 * before anything is parsed, and the MessagePack is then walked with a
 * bounds-checked cursor rather than msgpack_unpack, which allocates whatever an
 * array header claims (4 bytes can ask for 96 GB). Every count is bounded by the
 * bytes that remain, nesting is bounded, and anything unexpected is refused
 * with SLDA_ERR_CORRUPT naming the field and byte offset. Strings are copied
 * out of the input buffer before it is released.
 *
 * The file goes through slda_outfile (outfile.c): a regular file is replaced
 * atomically (temp file, fsync, rename, directory fsync), a FIFO, device or
 * "-" is written straight. The writer only reads the model; the caller owns a
 * decoded model. Two writers in one process must not write the same path at
 * the same time (the temp name is "<target>.tmp.<pid>").
 */
#include "io/snapshot.h"
#include "io/outfile.h"

#include "engine/births.h"
#include "core/config.h"
#include "engine/model.h"
#include "text/tokenize.h"
#include "core/msgpack.h"

#include <msgpack.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SNAP_HEAD_LEN (SLDA_SNAP_MAGIC_LEN + 4)
#define SNAP_MIN_LEN (SNAP_HEAD_LEN + SLDA_SNAP_TRAILER_LEN)
#define SNAP_FLUSH_BYTES ((size_t)1 << 20) /* file mode: write out every 1 MiB */
#define SNAP_MEM_NAME "<memory>"

/* ------------------------------------------------------------------------ */
/* Field names: one table each for the writer and the reader.               */

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

typedef enum {
    PT_U32, PT_U64, PT_DBL, PT_STR, PT_LOCAL, PT_ALPHA_LEARN, PT_STATS,
    PT_CHOICE, /* an int: index into the config table row's values */
    PT_BOOL    /* an int, 0 or 1 */
} snap_ptype_t;

/* Every engine parameter under its configuration key (config.c's table). */
static const struct snap_param {
    const char *key;
    snap_ptype_t type;
    size_t off; /* into slda_params_t; unused for PT_LOCAL (vb + hybrid) */
} snap_params[] = {
    {"topics", PT_U32, offsetof(slda_params_t, topics)},
    {"alpha", PT_DBL, offsetof(slda_params_t, alpha)},
    {"eta", PT_DBL, offsetof(slda_params_t, eta)},
    {"alpha.learn", PT_ALPHA_LEARN, offsetof(slda_params_t, alpha_learn)},
    {"local", PT_LOCAL, 0},
    {"local.threshold", PT_U32, offsetof(slda_params_t, threshold)},
    {"local.burnin", PT_U32, offsetof(slda_params_t, burnin)},
    {"local.samples", PT_U32, offsetof(slda_params_t, samples)},
    {"local.tolerance", PT_DBL, offsetof(slda_params_t, tolerance)},
    {"local.stats", PT_STATS, offsetof(slda_params_t, stats)},
    {"rho.s", PT_DBL, offsetof(slda_params_t, rho_s)},
    {"rho.tau", PT_DBL, offsetof(slda_params_t, rho_tau)},
    {"rho.kappa", PT_DBL, offsetof(slda_params_t, rho_kappa)},
    {"rho.min", PT_DBL, offsetof(slda_params_t, rho_min)},
    {"global.rows", PT_CHOICE, offsetof(slda_params_t, rows)},
    {"global.stale", PT_U32, offsetof(slda_params_t, stale)},
    {"corpus.tokens", PT_DBL, offsetof(slda_params_t, corpus_tokens)},
    {"init.scale", PT_DBL, offsetof(slda_params_t, init_scale)},
    {"vocab.capacity", PT_U32, offsetof(slda_params_t, vocab_capacity)},
    {"vocab.file", PT_STR, offsetof(slda_params_t, vocab_file)},
    {"seed", PT_U64, offsetof(slda_params_t, seed)},
    {"threads", PT_U32, offsetof(slda_params_t, threads)},
    {"text.stopwords", PT_STR, offsetof(slda_params_t, stopwords)},
    {"text.min.length", PT_U32, offsetof(slda_params_t, min_length)},
    {"text.max.bytes", PT_U32, offsetof(slda_params_t, max_doc_bytes)},
    {"text.urls", PT_CHOICE, offsetof(slda_params_t, text.urls)},
    {"text.html", PT_CHOICE, offsetof(slda_params_t, text.html)},
    {"text.mentions", PT_CHOICE, offsetof(slda_params_t, text.mentions)},
    {"text.hashtags", PT_CHOICE, offsetof(slda_params_t, text.hashtags)},
    {"text.apostrophes", PT_CHOICE, offsetof(slda_params_t, text.apostrophes)},
    {"text.digits", PT_CHOICE, offsetof(slda_params_t, text.digits)},
    {"births", PT_BOOL, offsetof(slda_params_t, births)},
    {"births.docs", PT_U32, offsetof(slda_params_t, births_docs)},
    {"births.z", PT_DBL, offsetof(slda_params_t, births_z)},
    {"births.gain", PT_DBL, offsetof(slda_params_t, births_gain)},
    {"births.floor", PT_DBL, offsetof(slda_params_t, births_floor)},
    {"births.merge", PT_DBL, offsetof(slda_params_t, births_merge)},
};
#define SNAP_NPARAMS (sizeof snap_params / sizeof snap_params[0])

/* Keys added within version 1, and what a snapshot without them means: the
 * cleanup rules off, so an older model tokenises as it was trained, and the
 * plain global step (global.rows=decay, global.stale=0) it was trained with.
 * births.* (NULL: the configuration table's default) were not stored before
 * the births state was; a restoring service takes them from its
 * configuration anyway (reconcile.c). */
static const struct {
    const char *key, *absent;
} snap_optional[] = {
    {"text.urls", "keep"},     {"text.html", "keep"},        {"text.mentions", "keep"},
    {"text.hashtags", "keep"}, {"text.apostrophes", "split"}, {"text.digits", "split"},
    {"global.rows", "decay"},  {"global.stale", "0"},       {"births", NULL},
    {"births.docs", NULL},     {"births.z", NULL},           {"births.gain", NULL},
    {"births.floor", NULL},    {"births.merge", NULL},
};

static const char *const alpha_learn_names[] = {
    [SLDA_ALPHA_FIXED] = "off", [SLDA_ALPHA_FIXEDPOINT] = "fixedpoint",
    [SLDA_ALPHA_NEWTON] = "newton"};
static const char *const stats_names[] = {[SLDA_STATS_RB] = "rb",
                                          [SLDA_STATS_SAMPLE] = "sample"};

/* ------------------------------------------------------------------------ */
/* Output sink: a memory buffer that grows (encode) or is flushed to a file. */

typedef struct snap_sink_s {
    unsigned char *buf;
    size_t len, cap;
    FILE *fp;       /* NULL: memory mode, buf keeps everything */
    uint64_t total; /* bytes emitted */
    int err;        /* errno of the first failure, 0 if none */
} snap_sink_t;

static int sink_flush(snap_sink_t *sink)
{
    if (sink->err)
        return -1;
    if (sink->fp && sink->len) {
        if (fwrite(sink->buf, 1, sink->len, sink->fp) != sink->len) {
            sink->err = errno ? errno : EIO;
            return -1;
        }
        sink->len = 0;
    }
    return 0;
}

static int sink_grow(snap_sink_t *sink, size_t n)
{
    size_t cap = sink->cap ? sink->cap : 65536;
    void *p;
    while (cap - sink->len < n) {
        if (cap > SIZE_MAX / 2) {
            sink->err = ENOMEM;
            return -1;
        }
        cap *= 2;
    }
    p = realloc(sink->buf, cap); /* model-sized: fail softly, never abort */
    if (!p) {
        sink->err = ENOMEM;
        return -1;
    }
    sink->buf = p;
    sink->cap = cap;
    return 0;
}

/* msgpack_packer_write: 0 on success, -1 once anything has failed. */
static int sink_write(void *data, const char *bytes, size_t n)
{
    snap_sink_t *sink = data;
    if (sink->err)
        return -1;
    if (sink->fp && n > sink->cap - sink->len && sink_flush(sink))
        return -1;
    if (sink->fp && n > sink->cap) {
        if (fwrite(bytes, 1, n, sink->fp) != n) {
            sink->err = errno ? errno : EIO;
            return -1;
        }
    } else {
        if (n > sink->cap - sink->len && sink_grow(sink, n))
            return -1;
        memcpy(sink->buf + sink->len, bytes, n);
        sink->len += n;
    }
    sink->total += n;
    return 0;
}

static slda_err_t sink_error(const snap_sink_t *sink, const char *name, char *errstr,
                             size_t errstr_size)
{
    if (sink->fp)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                            name, strerror(sink->err));
    return slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM,
                        "snapshot \"%s\": cannot allocate the %" PRIu64 "-byte encoding",
                        name, sink->total);
}

static void put_be(unsigned char *dst, uint64_t v, unsigned nbytes)
{
    for (unsigned i = 0; i < nbytes; i++)
        dst[i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
}

static uint64_t get_be(const unsigned char *src, unsigned nbytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++)
        v = (v << 8) | src[i];
    return v;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

uint32_t *slda_model_ids_in_use(const slda_model_t *model, uint32_t *n)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    uint32_t max = slda_vocab_max_id(vocab), count = 0, *ids;
    for (uint32_t id = 0; id < max; id++)
        count += slda_vocab_word(vocab, id) != NULL;
    ids = slda_xmalloc((size_t)count * sizeof *ids);
    count = 0;
    for (uint32_t id = 0; id < max; id++)
        if (slda_vocab_word(vocab, id))
            ids[count++] = id;
    *n = count;
    return ids;
}

static void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

static void pack_str_or_nil(msgpack_packer *pk, const char *s)
{
    if (s)
        msgpack_pack_str_with_body(pk, s, strlen(s));
    else
        msgpack_pack_nil(pk);
}

static void pack_bool(msgpack_packer *pk, int v)
{
    if (v)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

static void pack_doubles(msgpack_packer *pk, const double *v, uint32_t n)
{
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_double(pk, v[i]);
}

/* births.docs, .z, .gain, .floor and .merge are written only with births on:
 * a model built without the configuration (slda_model_alloc with births off)
 * may hold zeros there that a reader would refuse as out of range, and with
 * births off they mean nothing (absent, they read as the table's defaults). */
static int snap_param_written(const struct snap_param *sp, const slda_params_t *p)
{
    return p->births || strncmp(sp->key, "births.", 7) != 0;
}

static void snap_write_params(msgpack_packer *pk, const slda_params_t *p)
{
    uint32_t n = 0;
    for (size_t i = 0; i < SNAP_NPARAMS; i++)
        n += snap_param_written(&snap_params[i], p);
    msgpack_pack_map(pk, n);
    for (size_t i = 0; i < SNAP_NPARAMS; i++) {
        const char *field = (const char *)p + snap_params[i].off;
        if (!snap_param_written(&snap_params[i], p))
            continue;
        pack_key(pk, snap_params[i].key);
        switch (snap_params[i].type) {
        case PT_U32: msgpack_pack_uint32(pk, *(const uint32_t *)field); break;
        case PT_U64: msgpack_pack_uint64(pk, *(const uint64_t *)field); break;
        case PT_DBL: msgpack_pack_double(pk, *(const double *)field); break;
        case PT_STR: pack_str_or_nil(pk, *(char *const *)field); break;
        case PT_LOCAL: pack_key(pk, slda_local_name(p->vb, p->hybrid)); break;
        case PT_ALPHA_LEARN: pack_key(pk, alpha_learn_names[p->alpha_learn]); break;
        case PT_STATS: pack_key(pk, stats_names[p->stats]); break;
        case PT_CHOICE:
            pack_key(pk, slda_conf_prop_find(snap_params[i].key)->values[*(const int *)field]);
            break;
        case PT_BOOL: pack_bool(pk, *(const int *)field); break;
        }
    }
}

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

/* Optional header keys (absent in older snapshots; readers skip what they do
 * not know): "event_ms", the service's newest event time (docs/tracking.md),
 * and "births", the births state (births.c) of a model that has one. */
#define HDR_OPT_EVENT_MS "event_ms"
#define HDR_OPT_BIRTHS "births"

/* The topic counters of the births state, by name. */
static const struct {
    const char *key;
    size_t off;
} births_counts[] = {
    {"births", offsetof(slda_topic_counts_t, births)},
    {"deaths", offsetof(slda_topic_counts_t, deaths)},
    {"merges", offsetof(slda_topic_counts_t, merges)},
    {"proposals", offsetof(slda_topic_counts_t, proposals)},
    {"rejected", offsetof(slda_topic_counts_t, rejected)},
    {"no_cluster", offsetof(slda_topic_counts_t, no_cluster)},
    {"no_gain", offsetof(slda_topic_counts_t, no_gain)},
    {"no_slot", offsetof(slda_topic_counts_t, no_slot)},
    {"flagged", offsetof(slda_topic_counts_t, flagged)},
};
#define BIRTHS_NCOUNTS (sizeof births_counts / sizeof births_counts[0])

/* One buffered document: {"t", "mark", "words", "counts", "pw": bin of LE float32}. */
static void snap_write_births_doc(msgpack_packer *pk, const slda_births_doc_t *d)
{
    unsigned char *le = slda_xmalloc((size_t)d->n * 4 + 1);
    msgpack_pack_map(pk, 5);
    pack_key(pk, "t");
    msgpack_pack_uint64(pk, d->t);
    pack_key(pk, "mark");
    msgpack_pack_uint64(pk, d->mark);
    pack_key(pk, "words");
    msgpack_pack_array(pk, d->n);
    for (uint32_t u = 0; u < d->n; u++)
        msgpack_pack_uint32(pk, d->word[u]);
    pack_key(pk, "counts");
    msgpack_pack_array(pk, d->n);
    for (uint32_t u = 0; u < d->n; u++)
        msgpack_pack_uint32(pk, d->count[u]);
    pack_key(pk, "pw");
    slda_floats_to_le(d->pw, d->n, le);
    msgpack_pack_bin_with_body(pk, le, (size_t)d->n * 4);
    free(le);
}

/* The births state: everything births.c decides from besides the model, so a
 * restored model (or a replica) makes the decisions of one that never stopped. */
static void snap_write_births(msgpack_packer *pk, const slda_births_t *b)
{
    slda_births_state_t st;
    slda_births_export(b, &st);
    msgpack_pack_map(pk, 14);
    pack_key(pk, "mu");
    msgpack_pack_double(pk, st.mu);
    pack_key(pk, "var");
    msgpack_pack_double(pk, st.var);
    pack_key(pk, "nbase");
    msgpack_pack_uint64(pk, st.nbase);
    pack_key(pk, "tokens");
    msgpack_pack_uint64(pk, st.tokens);
    pack_key(pk, "windowed");
    if (st.windowed)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
    pack_key(pk, "counted");
    msgpack_pack_uint64(pk, st.counted);
    pack_key(pk, "share");
    pack_doubles(pk, st.share, st.K);
    pack_key(pk, "since");
    msgpack_pack_array(pk, st.K);
    for (uint32_t k = 0; k < st.K; k++)
        msgpack_pack_uint64(pk, st.since[k]);
    pack_key(pk, "free");
    msgpack_pack_bin_with_body(pk, st.is_free, st.K);
    pack_key(pk, "capacity");
    msgpack_pack_uint32(pk, st.cap);
    pack_key(pk, "counts");
    msgpack_pack_map(pk, BIRTHS_NCOUNTS);
    for (size_t i = 0; i < BIRTHS_NCOUNTS; i++) {
        pack_key(pk, births_counts[i].key);
        msgpack_pack_uint64(pk, *(const uint64_t *)((const char *)&st.counts +
                                                    births_counts[i].off));
    }
    pack_key(pk, "events");
    msgpack_pack_uint64(pk, st.nev);
    pack_key(pk, "kept");
    msgpack_pack_array(pk, st.nkept);
    for (uint32_t i = 0; i < st.nkept; i++) {
        const slda_event_t *e = &st.ev[i];
        msgpack_pack_array(pk, 8);
        msgpack_pack_uint64(pk, e->seq);
        msgpack_pack_uint64(pk, e->update);
        msgpack_pack_uint64(pk, e->doc);
        pack_key(pk, slda_event_kind_name(e->kind));
        msgpack_pack_uint32(pk, e->topic);
        msgpack_pack_uint32(pk, e->other);
        msgpack_pack_uint32(pk, e->docs);
        msgpack_pack_double(pk, e->value);
    }
    pack_key(pk, "buffer");
    msgpack_pack_array(pk, st.nbuf);
    for (uint32_t i = 0; i < st.nbuf; i++)
        snap_write_births_doc(pk, &st.buf[i]);
    slda_births_export_clear(&st);
}

static void snap_write_header(msgpack_packer *pk, const slda_model_t *model, uint32_t nrows,
                              const slda_snapshot_meta_t *meta)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    const slda_births_t *bstate = slda_model_births(model);
    slda_model_state_t st;
    slda_model_state(model, &st);
    int event = meta && meta->event_ms > 0, births = bstate != NULL;
    msgpack_pack_map(pk, HDR__COUNT + event + births);
    if (event) {
        pack_key(pk, HDR_OPT_EVENT_MS);
        msgpack_pack_int64(pk, meta->event_ms);
    }
    pack_key(pk, hdr_keys[HDR_FORMAT]);
    msgpack_pack_uint32(pk, SLDA_SNAP_VERSION);
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
    snap_write_params(pk, &p);
    pack_key(pk, hdr_keys[HDR_OFFSETS]);
    snap_write_offsets(pk, model);
    if (births) {
        pack_key(pk, HDR_OPT_BIRTHS);
        snap_write_births(pk, bstate);
    }
}

/* One body block: ids, words, freqs, ready flags (one byte each) and rows as
 * one bin of n*K LE floats. scratch holds max(K*4, n) bytes. */
static void snap_write_block(msgpack_packer *pk, const slda_model_t *model,
                             const uint32_t *ids, uint32_t n, unsigned char *scratch)
{
    const slda_vocab_t *vocab = slda_model_vocab(model);
    uint32_t K = slda_model_topics(model);
    size_t rowbytes = (size_t)K * 4;
    msgpack_pack_map(pk, 5);
    pack_key(pk, "ids");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_uint32(pk, ids[i]);
    pack_key(pk, "words");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        pack_key(pk, slda_vocab_word(vocab, ids[i]));
    pack_key(pk, "freqs");
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++)
        msgpack_pack_double(pk, slda_vocab_freq(vocab, ids[i]));
    pack_key(pk, "ready");
    for (uint32_t i = 0; i < n; i++)
        scratch[i] = (unsigned char)slda_model_row_ready(model, ids[i]);
    msgpack_pack_bin_with_body(pk, scratch, n);
    pack_key(pk, "rows");
    msgpack_pack_bin(pk, n * rowbytes);
    for (uint32_t i = 0; i < n; i++) {
        slda_floats_to_le(slda_model_row(model, ids[i]), K, scratch);
        msgpack_pack_bin_body(pk, scratch, rowbytes);
    }
}

/* Parameters the writer cannot name are a caller bug, refused before output. */
static slda_err_t snap_check_writable(const slda_model_t *model, const char *name,
                                      char *errstr, size_t errstr_size)
{
    const slda_params_t *p = slda_model_params(model);
    uint32_t K = slda_model_topics(model), W = slda_model_rows(model);
    if (K == 0 || K > SLDA_MAX_TOPICS)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": model has K=%u", name, K);
    if (!slda_local_name(p->vb, p->hybrid) || (unsigned)p->alpha_learn > SLDA_ALPHA_NEWTON ||
        (unsigned)p->stats > SLDA_STATS_SAMPLE)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": model has an unnamed local/alpha.learn/"
                            "local.stats value (%d/%d/%d)",
                            name, (int)p->vb, (int)p->alpha_learn, (int)p->stats);
    if (slda_vocab_max_id(slda_model_vocab(model)) > W)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": vocabulary ids reach %u but W=%u", name,
                            slda_vocab_max_id(slda_model_vocab(model)), W);
    return SLDA_OK;
}

/* Envelope head, header and body (everything but the trailer) into sink. */
static slda_err_t snap_emit(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                            snap_sink_t *sink, const char *name, char *errstr,
                            size_t errstr_size)
{
    unsigned char head[SNAP_HEAD_LEN];
    msgpack_packer pk;
    uint32_t nrows, *ids;
    unsigned char *scratch;
    slda_err_t err = snap_check_writable(model, name, errstr, errstr_size);
    if (err)
        return err;
    memcpy(head, SLDA_SNAP_MAGIC, SLDA_SNAP_MAGIC_LEN);
    put_be(head + SLDA_SNAP_MAGIC_LEN, SLDA_SNAP_VERSION, 4);
    sink_write(sink, (const char *)head, sizeof head);
    msgpack_packer_init(&pk, sink, sink_write);
    ids = slda_model_ids_in_use(model, &nrows);
    size_t rowbytes = (size_t)slda_model_topics(model) * 4;
    scratch = slda_xmalloc(rowbytes > SLDA_SNAP_BLOCK_ROWS ? rowbytes : SLDA_SNAP_BLOCK_ROWS);
    snap_write_header(&pk, model, nrows, meta);
    for (uint32_t start = 0; start < nrows && !sink->err; start += SLDA_SNAP_BLOCK_ROWS) {
        uint32_t n = nrows - start < SLDA_SNAP_BLOCK_ROWS ? nrows - start : SLDA_SNAP_BLOCK_ROWS;
        snap_write_block(&pk, model, ids + start, n, scratch);
        sink_flush(sink);
    }
    msgpack_pack_map(&pk, 2);
    pack_key(&pk, "end");
    msgpack_pack_true(&pk);
    pack_key(&pk, "rows");
    msgpack_pack_uint32(&pk, nrows);
    free(scratch);
    free(ids);
    if (sink->err)
        return sink_error(sink, name, errstr, errstr_size);
    return SLDA_OK;
}

/* XXH3-64 of the first len bytes of the (flushed) file behind fp: through a
 * read-only mapping, or by reading it back where mapping is not possible. */
static int file_hash(FILE *fp, uint64_t len, uint64_t *hash)
{
    int fd = fileno(fp);
    void *map = len <= SIZE_MAX ? mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0)
                                : MAP_FAILED;
    unsigned char *buf;
    size_t got = 0;
    if (map != MAP_FAILED) {
        *hash = slda_hash64(map, (size_t)len, 0);
        munmap(map, (size_t)len);
        return 0;
    }
    buf = len <= SIZE_MAX ? malloc((size_t)len) : NULL;
    if (!buf)
        return ENOMEM;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, (size_t)len - got, (off_t)got);
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            return e;
        }
        got += (size_t)r;
    }
    *hash = slda_hash64(buf, (size_t)len, 0);
    free(buf);
    return 0;
}

static slda_err_t snap_write_file(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                  FILE *fp, const char *path, char *errstr, size_t errstr_size)
{
    snap_sink_t sink = {0};
    unsigned char trailer[SLDA_SNAP_TRAILER_LEN];
    uint64_t hash = 0;
    int e;
    slda_err_t err;
    sink.fp = fp;
    sink.cap = SNAP_FLUSH_BYTES;
    sink.buf = slda_xmalloc(sink.cap);
    err = snap_emit(model, meta, &sink, path, errstr, errstr_size);
    if (!err && sink_flush(&sink))
        err = sink_error(&sink, path, errstr, errstr_size);
    free(sink.buf);
    if (err)
        return err;
    e = fflush(fp) != 0 ? errno : file_hash(fp, sink.total, &hash);
    if (e)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                            "snapshot \"%s\": checksum pass: %s", path, strerror(e));
    put_be(trailer, hash, sizeof trailer);
    if (fwrite(trailer, 1, sizeof trailer, fp) != sizeof trailer)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                            path, strerror(errno));
    return SLDA_OK;
}

/* A FIFO, device or standard output cannot be re-read for the checksum: the
 * snapshot is encoded in memory (its whole size) and written in one go. */
static slda_err_t snap_write_stream(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                    FILE *fp, const char *path, char *errstr,
                                    size_t errstr_size)
{
    void *buf;
    size_t len;
    slda_err_t err = slda_snapshot_encode_meta(model, meta, &buf, &len, errstr, errstr_size);
    if (err)
        return err;
    if (fwrite(buf, 1, len, fp) != len)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                           path, strerror(errno ? errno : EIO));
    free(buf);
    return err;
}

slda_err_t slda_snapshot_write(const slda_model_t *model, const char *path, char *errstr,
                               size_t errstr_size)
{
    return slda_snapshot_write_meta(model, NULL, path, errstr, errstr_size);
}

slda_err_t slda_snapshot_write_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                    const char *path, char *errstr, size_t errstr_size)
{
    slda_outfile_t out;
    slda_err_t err;
    if (!model || !path)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": no model or path", path ? path : "(null)");
    err = slda_outfile_open(&out, "snapshot", path, errstr, errstr_size);
    if (err)
        return err;
    if (slda_outfile_seekable(&out))
        err = snap_write_file(model, meta, out.fp, path, errstr, errstr_size);
    else
        err = snap_write_stream(model, meta, out.fp, path, errstr, errstr_size);
    if (err) {
        slda_outfile_abort(&out);
        return err;
    }
    return slda_outfile_commit(&out, errstr, errstr_size);
}

slda_err_t slda_snapshot_encode(const slda_model_t *model, void **buf, size_t *len,
                                char *errstr, size_t errstr_size)
{
    return slda_snapshot_encode_meta(model, NULL, buf, len, errstr, errstr_size);
}

slda_err_t slda_snapshot_encode_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                     void **buf, size_t *len, char *errstr, size_t errstr_size)
{
    snap_sink_t sink = {0};
    unsigned char trailer[SLDA_SNAP_TRAILER_LEN];
    slda_err_t err;
    *buf = NULL;
    *len = 0;
    if (!model)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"" SNAP_MEM_NAME "\": no model");
    err = snap_emit(model, meta, &sink, SNAP_MEM_NAME, errstr, errstr_size);
    if (!err) {
        put_be(trailer, slda_hash64(sink.buf, sink.len, 0), sizeof trailer);
        if (sink_write(&sink, (const char *)trailer, sizeof trailer))
            err = sink_error(&sink, SNAP_MEM_NAME, errstr, errstr_size);
    }
    if (err) {
        free(sink.buf);
        return err;
    }
    *buf = sink.buf;
    *len = sink.len;
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Header                                                                    */

/* The optional "births" header key as parsed: st's arrays are owned here.
 * Its values are checked against the model (K, W, updates) once the header
 * is complete (slda_births_import), from where the map starts. */
typedef struct snap_births_s {
    int present;
    size_t at;                /* byte offset of the map, for messages */
    slda_births_state_t st;
} snap_births_t;

static void snap_births_clear(snap_births_t *sb)
{
    for (uint32_t i = 0; sb->st.buf && i < sb->st.nbuf; i++) {
        free(sb->st.buf[i].word);
        free(sb->st.buf[i].count);
        free(sb->st.buf[i].pw);
    }
    free(sb->st.buf);
    free(sb->st.share);
    free(sb->st.since);
    free(sb->st.is_free);
    free(sb->st.ev);
    memset(sb, 0, sizeof *sb);
}

typedef struct snap_hdr_s {
    uint64_t format;
    char *name;
    uint32_t K, W, nrows, capacity;
    int fixed;
    uint64_t hash_seed;
    double *alpha, *NZ;
    uint32_t nalpha, nNZ;
    double alpha_sum, eta, sigma, corpus_tokens;
    uint64_t t, docs, tokens;
    int64_t created_ms, updated_ms;
    int64_t event_ms; /* optional "event_ms", 0 when absent */
    snap_births_t births; /* optional "births" */
    slda_params_t p;
    slda_offset_t *offs;
    size_t noffs;
} snap_hdr_t;

static void snap_hdr_clear(snap_hdr_t *h)
{
    free(h->name);
    free(h->alpha);
    free(h->NZ);
    free(h->p.vocab_file);
    free(h->p.stopwords);
    free(h->offs);
    snap_births_clear(&h->births);
    memset(h, 0, sizeof *h);
}

static int snap_read_doubles(slda_msgpack_t *mp, const char *what, double **out, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "%s: %u values, more than %d topics", what, *n, SLDA_MAX_TOPICS);
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_double(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

static int snap_read_local(slda_msgpack_t *mp, const char *what, slda_params_t *p)
{
    const unsigned char *s;
    size_t len;
    char name[32];
    if (slda_msgpack_str(mp, what, &s, &len))
        return -1;
    if (len >= sizeof name)
        return slda_msgpack_fail(mp, "%s: unknown variant (%zu bytes)", what, len);
    memcpy(name, s, len);
    name[len] = '\0';
    if (!slda_local_parse(name, &p->vb, &p->hybrid))
        return slda_msgpack_fail(mp, "%s: unknown variant \"%s\"", what, name);
    return 0;
}

/* A number must lie in the range the configuration table allows for its key,
 * so a snapshot cannot smuggle in what slda_conf_set would refuse. */
static int check_param_range(slda_msgpack_t *mp, const char *what, const char *key, double v)
{
    const slda_prop_t *prop = slda_conf_prop_find(key);
    int open_min;
    if (!prop || (prop->type != SLDA_PT_UINT && prop->type != SLDA_PT_DOUBLE))
        return 0;
    open_min = (prop->flags & SLDA_PF_MIN_OPEN) != 0;
    if (!isfinite(v) || (open_min ? v <= prop->min : v < prop->min) || v > prop->max)
        return slda_msgpack_fail(mp, "%s: %g is outside %s%g..%g", what, v, open_min ? "(" : "",
                       prop->min, prop->max);
    return 0;
}

/* One of the values the configuration table's row for key allows. */
static int snap_read_choice(slda_msgpack_t *mp, const char *what, const char *key, int *idx)
{
    const slda_prop_t *prop = slda_conf_prop_find(key);
    int n = 0;
    while (prop->values[n])
        n++;
    return slda_msgpack_enum(mp, what, prop->values, n, idx);
}

/* A key the snapshot lacks: 0 after setting the value its absence means, -1
 * when the key is required. The value is set through the configuration
 * table's parser: a params struct sits first in a conf, the layout its
 * offsets are for. */
_Static_assert(offsetof(struct slda_conf_s, p) == 0, "params first in a conf");
static int snap_param_absent(const struct snap_param *sp, slda_params_t *p)
{
    for (size_t j = 0; j < sizeof snap_optional / sizeof snap_optional[0]; j++) {
        const slda_prop_t *prop = slda_conf_prop_find(sp->key);
        if (strcmp(snap_optional[j].key, sp->key) != 0)
            continue;
        const char *v = snap_optional[j].absent ? snap_optional[j].absent : prop->def;
        return slda_prop_set(prop, p, v, NULL, 0) == SLDA_OK ? 0 : -1;
    }
    return -1;
}

static int snap_read_param(slda_msgpack_t *mp, const struct snap_param *sp, slda_params_t *p)
{
    char what[64];
    char *field = (char *)p + sp->off;
    int idx;
    snprintf(what, sizeof what, "params \"%s\"", sp->key);
    switch (sp->type) {
    case PT_U32:
        if (slda_msgpack_u32(mp, what, (uint32_t *)field))
            return -1;
        return check_param_range(mp, what, sp->key, *(uint32_t *)field);
    case PT_U64: return slda_msgpack_uint(mp, what, (uint64_t *)field);
    case PT_DBL:
        if (slda_msgpack_double(mp, what, (double *)field))
            return -1;
        return check_param_range(mp, what, sp->key, *(double *)field);
    case PT_STR: return slda_msgpack_strdup(mp, what, 1, (char **)field);
    case PT_LOCAL: return snap_read_local(mp, what, p);
    case PT_ALPHA_LEARN:
        if (slda_msgpack_enum(mp, what, alpha_learn_names, 3, &idx))
            return -1;
        p->alpha_learn = (slda_alpha_learn_t)idx;
        return 0;
    case PT_STATS:
        if (slda_msgpack_enum(mp, what, stats_names, 2, &idx))
            return -1;
        p->stats = (slda_stats_kind_t)idx;
        return 0;
    case PT_CHOICE: return snap_read_choice(mp, what, sp->key, (int *)field);
    case PT_BOOL: return slda_msgpack_bool(mp, what, (int *)field);
    }
    return -1;
}

static int snap_read_params(slda_msgpack_t *mp, slda_params_t *p)
{
    uint32_t n;
    uint64_t seen = 0;
    if (slda_msgpack_map(mp, "header \"params\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len, j;
        if (slda_msgpack_str(mp, "params key", &key, &len))
            return -1;
        for (j = 0; j < SNAP_NPARAMS && !slda_msgpack_eq(key, len, snap_params[j].key); j++)
            ;
        if (j == SNAP_NPARAMS) { /* a later producer's extra parameter */
            if (slda_msgpack_skip(mp, "params value"))
                return -1;
            continue;
        }
        if (seen & ((uint64_t)1 << j))
            return slda_msgpack_fail(mp, "params: duplicate key \"%s\"", snap_params[j].key);
        seen |= (uint64_t)1 << j;
        if (snap_read_param(mp, &snap_params[j], p))
            return -1;
    }
    for (size_t j = 0; j < SNAP_NPARAMS; j++) {
        if (seen & ((uint64_t)1 << j))
            continue;
        if (snap_param_absent(&snap_params[j], p))
            return slda_msgpack_fail(mp, "params: missing key \"%s\"", snap_params[j].key);
    }
    return 0;
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
        return slda_msgpack_fail(mp, "offsets entry: %u values, expected [topic, partition, offset]", n);
    if (slda_msgpack_str(mp, "offsets topic", &s, &len))
        return -1;
    if (len == 0 || len >= sizeof o->topic || memchr(s, '\0', len))
        return slda_msgpack_fail(mp, "offsets topic: %zu bytes (1..%zu without NUL allowed)", len,
                       sizeof o->topic - 1);
    memset(o->topic, 0, sizeof o->topic);
    memcpy(o->topic, s, len);
    if (slda_msgpack_int(mp, "offsets partition", &partition) || slda_msgpack_int(mp, "offsets offset", &o->offset))
        return -1;
    if (partition < 0 || partition > INT32_MAX)
        return slda_msgpack_fail(mp, "offsets partition: %" PRId64 " is out of range", partition);
    o->partition = (int32_t)partition;
    return 0;
}

static int snap_read_offsets(slda_msgpack_t *mp, snap_hdr_t *h)
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

static int snap_read_header_field(slda_msgpack_t *mp, snap_hdr_t *h, int f)
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
    case HDR_ALPHA: return snap_read_doubles(mp, what, &h->alpha, &h->nalpha);
    case HDR_ALPHA_SUM: return slda_msgpack_double(mp, what, &h->alpha_sum);
    case HDR_ETA: return slda_msgpack_double(mp, what, &h->eta);
    case HDR_SIGMA: return slda_msgpack_double(mp, what, &h->sigma);
    case HDR_NZ: return snap_read_doubles(mp, what, &h->NZ, &h->nNZ);
    case HDR_T: return slda_msgpack_uint(mp, what, &h->t);
    case HDR_DOCS: return slda_msgpack_uint(mp, what, &h->docs);
    case HDR_TOKENS: return slda_msgpack_uint(mp, what, &h->tokens);
    case HDR_CORPUS_TOKENS: return slda_msgpack_double(mp, what, &h->corpus_tokens);
    case HDR_CREATED_MS: return slda_msgpack_int(mp, what, &h->created_ms);
    case HDR_UPDATED_MS: return slda_msgpack_int(mp, what, &h->updated_ms);
    case HDR_PARAMS: return snap_read_params(mp, &h->p);
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

/* ---- the births state (optional header key "births") ---- */

/* An array of uints of at most max entries into *out (malloc'ed). */
static int snap_read_u64s(slda_msgpack_t *mp, const char *what, uint32_t max, uint64_t **out, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > max)
        return slda_msgpack_fail(mp, "%s: %u values, at most %u", what, *n, max);
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_uint(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

static int snap_read_u32s(slda_msgpack_t *mp, const char *what, uint32_t **out, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    *out = slda_xmalloc((size_t)*n * sizeof **out + 1);
    for (uint32_t i = 0; i < *n; i++)
        if (slda_msgpack_u32(mp, what, &(*out)[i]))
            return -1;
    return 0;
}

static int snap_read_births_counts(slda_msgpack_t *mp, slda_topic_counts_t *c)
{
    uint32_t n;
    unsigned seen = 0;
    if (slda_msgpack_map(mp, "births \"counts\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len, j;
        if (slda_msgpack_str(mp, "births \"counts\" key", &key, &len))
            return -1;
        for (j = 0; j < BIRTHS_NCOUNTS && !slda_msgpack_eq(key, len, births_counts[j].key); j++)
            ;
        if (j == BIRTHS_NCOUNTS) {
            if (slda_msgpack_skip(mp, "births \"counts\" value"))
                return -1;
            continue;
        }
        if (seen & (1u << j))
            return slda_msgpack_fail(mp, "births \"counts\": duplicate key \"%s\"", births_counts[j].key);
        seen |= 1u << j;
        if (slda_msgpack_uint(mp, "births \"counts\" value", (uint64_t *)((char *)c + births_counts[j].off)))
            return -1;
    }
    for (size_t j = 0; j < BIRTHS_NCOUNTS; j++)
        if (!(seen & (1u << j)))
            return slda_msgpack_fail(mp, "births \"counts\": missing key \"%s\"", births_counts[j].key);
    return 0;
}

static const char *const event_kind_names[] = {"birth", "death", "merge"};

/* [seq, update, doc, kind, topic, other, docs, value] */
static int snap_read_births_event(slda_msgpack_t *mp, slda_event_t *e)
{
    uint32_t n;
    int kind;
    if (slda_msgpack_array(mp, "births event", &n))
        return -1;
    if (n != 8)
        return slda_msgpack_fail(mp, "births event: %u values, expected [seq, update, doc, kind, topic, "
                           "other, docs, value]", n);
    if (slda_msgpack_uint(mp, "births event seq", &e->seq) ||
        slda_msgpack_uint(mp, "births event update", &e->update) ||
        slda_msgpack_uint(mp, "births event doc", &e->doc) ||
        slda_msgpack_enum(mp, "births event kind", event_kind_names, 3, &kind) ||
        slda_msgpack_u32(mp, "births event topic", &e->topic) ||
        slda_msgpack_u32(mp, "births event other", &e->other) ||
        slda_msgpack_u32(mp, "births event docs", &e->docs) ||
        slda_msgpack_double(mp, "births event value", &e->value))
        return -1;
    e->kind = (slda_event_kind_t)(kind + 1);
    return 0;
}

static int snap_read_births_events(slda_msgpack_t *mp, slda_births_state_t *st)
{
    uint32_t n;
    if (slda_msgpack_array(mp, "births \"kept\"", &n))
        return -1;
    if (n > slda_births_events_kept())
        return slda_msgpack_fail(mp, "births \"kept\": %u events, a model keeps at most %u", n,
                       slda_births_events_kept());
    st->ev = slda_xcalloc((size_t)n + 1, sizeof *st->ev);
    for (; st->nkept < n; st->nkept++)
        if (snap_read_births_event(mp, &st->ev[st->nkept]))
            return -1;
    return 0;
}

/* {"t", "mark", "words", "counts", "pw"} into d (arrays owned by d). */
static int snap_read_births_doc(slda_msgpack_t *mp, slda_births_doc_t *d)
{
    uint32_t n, nwords = 0, ncounts = 0;
    unsigned seen = 0;
    const unsigned char *pw = NULL;
    size_t pwlen = 0;
    if (slda_msgpack_map(mp, "births buffered document", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        unsigned bit;
        int rc;
        if (slda_msgpack_str(mp, "births buffered document key", &key, &len))
            return -1;
        bit = slda_msgpack_eq(key, len, "t") ? 1 : slda_msgpack_eq(key, len, "mark") ? 2
            : slda_msgpack_eq(key, len, "words") ? 4 : slda_msgpack_eq(key, len, "counts") ? 8
            : slda_msgpack_eq(key, len, "pw") ? 16 : 0;
        if (!bit) {
            if (slda_msgpack_skip(mp, "births buffered document value"))
                return -1;
            continue;
        }
        if (seen & bit)
            return slda_msgpack_fail(mp, "births buffered document: duplicate key \"%.*s\"", (int)len,
                           (const char *)key);
        seen |= bit;
        switch (bit) {
        case 1: rc = slda_msgpack_uint(mp, "births buffered document \"t\"", &d->t); break;
        case 2: rc = slda_msgpack_uint(mp, "births buffered document \"mark\"", &d->mark); break;
        case 4: rc = snap_read_u32s(mp, "births buffered document \"words\"", &d->word, &nwords); break;
        case 8:
            rc = snap_read_u32s(mp, "births buffered document \"counts\"", &d->count, &ncounts);
            break;
        default: rc = slda_msgpack_bin(mp, "births buffered document \"pw\"", &pw, &pwlen); break;
        }
        if (rc)
            return -1;
    }
    if (seen != 31)
        return slda_msgpack_fail(mp, "births buffered document: keys t, mark, words, counts and pw are "
                           "required");
    if (ncounts != nwords || pwlen != (size_t)nwords * 4)
        return slda_msgpack_fail(mp, "births buffered document: %u words, %u counts, %zu bytes of pw",
                       nwords, ncounts, pwlen);
    d->n = nwords;
    d->pw = slda_xmalloc((size_t)nwords * sizeof *d->pw + 1);
    for (uint32_t u = 0; u < nwords; u++) {
        const unsigned char *src = pw + 4 * (size_t)u;
        uint32_t v = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
                     (uint32_t)src[3] << 24;
        memcpy(&d->pw[u], &v, sizeof v);
    }
    return 0;
}

static int snap_read_births_buffer(slda_msgpack_t *mp, slda_births_state_t *st)
{
    uint32_t n;
    if (slda_msgpack_array(mp, "births \"buffer\"", &n))
        return -1;
    st->buf = slda_xcalloc((size_t)n + 1, sizeof *st->buf);
    for (; st->nbuf < n;) {
        /* counted before it is read: a document that fails half way is freed too */
        if (snap_read_births_doc(mp, &st->buf[st->nbuf++]))
            return -1;
    }
    return 0;
}

enum { BS_MU, BS_VAR, BS_NBASE, BS_TOKENS, BS_SHARE, BS_SINCE, BS_FREE, BS_CAPACITY, BS_COUNTS,
       BS_EVENTS, BS_KEPT, BS_BUFFER, BS__REQUIRED,
       BS_WINDOWED = BS__REQUIRED, BS_COUNTED, BS__COUNT }; /* the last two optional (0 when absent) */
static const char *const births_keys[BS__COUNT] = {
    [BS_MU] = "mu",         [BS_VAR] = "var",         [BS_NBASE] = "nbase",
    [BS_TOKENS] = "tokens", [BS_SHARE] = "share",     [BS_SINCE] = "since",
    [BS_FREE] = "free",     [BS_CAPACITY] = "capacity", [BS_COUNTS] = "counts",
    [BS_EVENTS] = "events", [BS_KEPT] = "kept",       [BS_BUFFER] = "buffer",
    [BS_WINDOWED] = "windowed", [BS_COUNTED] = "counted",
};

static int snap_read_births_field(slda_msgpack_t *mp, slda_births_state_t *st, int f, uint32_t *nshare,
                                  uint32_t *nsince, size_t *nfree)
{
    const unsigned char *bytes;
    switch (f) {
    case BS_MU: return slda_msgpack_double(mp, "births \"mu\"", &st->mu);
    case BS_VAR: return slda_msgpack_double(mp, "births \"var\"", &st->var);
    case BS_NBASE: return slda_msgpack_uint(mp, "births \"nbase\"", &st->nbase);
    case BS_TOKENS: return slda_msgpack_uint(mp, "births \"tokens\"", &st->tokens);
    case BS_SHARE: return snap_read_doubles(mp, "births \"share\"", &st->share, nshare);
    case BS_SINCE: return snap_read_u64s(mp, "births \"since\"", SLDA_MAX_TOPICS, &st->since, nsince);
    case BS_FREE:
        if (slda_msgpack_bin(mp, "births \"free\"", &bytes, nfree))
            return -1;
        st->is_free = slda_xmalloc(*nfree + 1);
        memcpy(st->is_free, bytes, *nfree);
        return 0;
    case BS_CAPACITY: return slda_msgpack_u32(mp, "births \"capacity\"", &st->cap);
    case BS_COUNTS: return snap_read_births_counts(mp, &st->counts);
    case BS_EVENTS: return slda_msgpack_uint(mp, "births \"events\"", &st->nev);
    case BS_KEPT: return snap_read_births_events(mp, st);
    case BS_BUFFER: return snap_read_births_buffer(mp, st);
    case BS_WINDOWED: return slda_msgpack_bool(mp, "births \"windowed\"", &st->windowed);
    case BS_COUNTED: return slda_msgpack_uint(mp, "births \"counted\"", &st->counted);
    }
    return -1;
}

static int snap_read_births(slda_msgpack_t *mp, snap_births_t *sb)
{
    uint32_t n, nshare = 0, nsince = 0;
    size_t nfree = 0;
    unsigned seen = 0;
    if (sb->present)
        return slda_msgpack_fail(mp, "header: duplicate key \"" HDR_OPT_BIRTHS "\"");
    sb->present = 1;
    sb->at = (size_t)(mp->p - mp->base);
    if (slda_msgpack_map(mp, "header \"" HDR_OPT_BIRTHS "\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        int f;
        if (slda_msgpack_str(mp, "births key", &key, &len))
            return -1;
        for (f = 0; f < BS__COUNT && !slda_msgpack_eq(key, len, births_keys[f]); f++)
            ;
        if (f == BS__COUNT) {
            if (slda_msgpack_skip(mp, "births value"))
                return -1;
            continue;
        }
        if (seen & (1u << f))
            return slda_msgpack_fail(mp, "births: duplicate key \"%s\"", births_keys[f]);
        seen |= 1u << f;
        if (snap_read_births_field(mp, &sb->st, f, &nshare, &nsince, &nfree))
            return -1;
    }
    for (int f = 0; f < BS__REQUIRED; f++)
        if (!(seen & (1u << f)))
            return slda_msgpack_fail(mp, "births: missing key \"%s\"", births_keys[f]);
    if (nsince != nshare || nfree != nshare)
        return slda_msgpack_fail(mp, "births: %u shares, %u since, %zu free flags", nshare, nsince, nfree);
    sb->st.K = nshare;
    return 0;
}

/* The header's values agree with each other and with the format. */
static int snap_check_header(slda_msgpack_t *mp, const snap_hdr_t *h)
{
    if (h->format != SLDA_SNAP_VERSION)
        return slda_msgpack_fail(mp, "header \"format\": %" PRIu64 ", but the file says version %d",
                       h->format, SLDA_SNAP_VERSION);
    if (h->K == 0 || h->K > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "header \"K\": %u is outside 1..%d", h->K, SLDA_MAX_TOPICS);
    if (h->p.topics != h->K)
        return slda_msgpack_fail(mp, "K mismatch: header \"K\" is %u, params \"topics\" is %u", h->K,
                       h->p.topics);
    if (h->W == 0 || h->nrows > h->W)
        return slda_msgpack_fail(mp, "header: vocab_size %u with W=%u", h->nrows, h->W);
    /* slda_model_new: an open vocabulary has vocab.capacity rows; a fixed
     * one has exactly its words. This also bounds W before any allocation. */
    if (!h->fixed && h->W != h->p.vocab_capacity)
        return slda_msgpack_fail(mp, "header: open vocabulary with W=%u but params \"vocab.capacity\" %u",
                       h->W, h->p.vocab_capacity);
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

static int snap_read_header(slda_msgpack_t *mp, snap_hdr_t *h)
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
        if (f == HDR__COUNT && slda_msgpack_eq(key, len, HDR_OPT_BIRTHS)) {
            if (snap_read_births(mp, &h->births))
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

/* ------------------------------------------------------------------------ */
/* Model and body                                                            */

static slda_model_t *snap_build_model(slda_msgpack_t *mp, snap_hdr_t *h)
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
        slda_msgpack_fail(mp, "model built with K=%u W=%u hash seed %" PRIu64 ", header says K=%u W=%u "
                "hash seed %" PRIu64, K, W, seed, h->K, h->W, h->hash_seed);
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

/* One body map: a block {"ids","words","freqs","rows": bin} or the end
 * marker {"end": true, "rows": n}. Borrowed pointers into the input. */
typedef struct snap_block_s {
    uint32_t nids, nwords, nfreqs;
    uint32_t *ids;
    const unsigned char **words;
    size_t *wlens;
    double *freqs;
    const unsigned char *rows, *ready;
    size_t rows_len, ready_len;
    int has_rows, is_end;
    uint64_t end_rows;
} snap_block_t;

enum { BK_IDS = 1, BK_WORDS = 2, BK_FREQS = 4, BK_READY = 8, BK_ROWS = 16, BK_END = 32,
       BK_END_ROWS = 64 };

static int block_array(slda_msgpack_t *mp, const char *what, uint32_t *n)
{
    if (slda_msgpack_array(mp, what, n))
        return -1;
    if (*n > SLDA_SNAP_BLOCK_ROWS)
        return slda_msgpack_fail(mp, "%s: %u entries, a block holds at most %d", what, *n,
                       SLDA_SNAP_BLOCK_ROWS);
    return 0;
}

static int snap_read_block_field(slda_msgpack_t *mp, snap_block_t *b, const unsigned char *key,
                                 size_t len, unsigned *seen)
{
    unsigned bit = slda_msgpack_eq(key, len, "ids") ? BK_IDS : slda_msgpack_eq(key, len, "words") ? BK_WORDS
                 : slda_msgpack_eq(key, len, "freqs") ? BK_FREQS : slda_msgpack_eq(key, len, "end") ? BK_END
                 : slda_msgpack_eq(key, len, "ready") ? BK_READY
                 : slda_msgpack_eq(key, len, "rows") ? (slda_msgpack_peek(mp) >= 0xc4 && slda_msgpack_peek(mp) <= 0xc6
                                               ? BK_ROWS : BK_END_ROWS) : 0;
    if (!bit)
        return slda_msgpack_skip(mp, "body value");
    if (*seen & bit)
        return slda_msgpack_fail(mp, "body: duplicate key \"%.*s\"", (int)len, (const char *)key);
    *seen |= bit;
    switch (bit) {
    case BK_IDS:
        if (block_array(mp, "body \"ids\"", &b->nids))
            return -1;
        for (uint32_t i = 0; i < b->nids; i++)
            if (slda_msgpack_u32(mp, "body \"ids\"", &b->ids[i]))
                return -1;
        return 0;
    case BK_WORDS:
        if (block_array(mp, "body \"words\"", &b->nwords))
            return -1;
        for (uint32_t i = 0; i < b->nwords; i++)
            if (slda_msgpack_str(mp, "body \"words\"", &b->words[i], &b->wlens[i]))
                return -1;
        return 0;
    case BK_FREQS:
        if (block_array(mp, "body \"freqs\"", &b->nfreqs))
            return -1;
        for (uint32_t i = 0; i < b->nfreqs; i++)
            if (slda_msgpack_double(mp, "body \"freqs\"", &b->freqs[i]))
                return -1;
        return 0;
    case BK_READY: return slda_msgpack_bin(mp, "body \"ready\"", &b->ready, &b->ready_len);
    case BK_ROWS: return slda_msgpack_bin(mp, "body \"rows\"", &b->rows, &b->rows_len);
    case BK_END:
        if (slda_msgpack_bool(mp, "end marker \"end\"", &b->is_end))
            return -1;
        return b->is_end ? 0 : slda_msgpack_fail(mp, "end marker: \"end\" is false");
    default: return slda_msgpack_uint(mp, "end marker \"rows\"", &b->end_rows);
    }
}

static int snap_read_block(slda_msgpack_t *mp, snap_block_t *b, uint32_t K)
{
    uint32_t n;
    unsigned seen = 0;
    const unsigned need = BK_IDS | BK_WORDS | BK_FREQS | BK_READY | BK_ROWS;
    b->nids = b->nwords = b->nfreqs = 0;
    b->is_end = 0;
    if (slda_msgpack_map(mp, "body block", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        if (slda_msgpack_str(mp, "body key", &key, &len) ||
            snap_read_block_field(mp, b, key, len, &seen))
            return -1;
    }
    if (seen & BK_END) {
        if (seen != (BK_END | BK_END_ROWS))
            return slda_msgpack_fail(mp, "end marker: expected exactly \"end\" and a \"rows\" count");
        return 0;
    }
    if ((seen & need) != need || (seen & BK_END_ROWS))
        return slda_msgpack_fail(mp, "body block: keys ids, words, freqs, ready and rows (binary) "
                           "are required");
    if (b->nwords != b->nids || b->nfreqs != b->nids)
        return slda_msgpack_fail(mp, "body block: %u ids, %u words, %u freqs", b->nids, b->nwords,
                       b->nfreqs);
    if (b->ready_len != b->nids)
        return slda_msgpack_fail(mp, "body \"ready\": %zu bytes for %u ids", b->ready_len, b->nids);
    if (b->rows_len != (size_t)b->nids * K * 4)
        return slda_msgpack_fail(mp, "body \"rows\": %zu bytes, expected %zu (%u rows x K=%u x 4)",
                       b->rows_len, (size_t)b->nids * K * 4, b->nids, K);
    return 0;
}

static int snap_put_row(slda_msgpack_t *mp, slda_model_t *model, const snap_block_t *b,
                        uint32_t i)
{
    char msg[256];
    uint32_t id = b->ids[i], K = slda_model_topics(model);
    const unsigned char *src = b->rows + (size_t)i * K * 4;
    float row[SLDA_MAX_TOPICS];
    int wl = (int)(b->wlens[i] > 40 ? 40 : b->wlens[i]);
    if (b->wlens[i] == 0 || memchr(b->words[i], '\0', b->wlens[i]))
        return slda_msgpack_fail(mp, "body: id %u: the word is empty or holds a NUL byte", id);
    if (!isfinite(b->freqs[i]) || b->freqs[i] < 0)
        return slda_msgpack_fail(mp, "body: id %u: freq %g", id, b->freqs[i]);
    if (b->ready[i] > 1)
        return slda_msgpack_fail(mp, "body: id %u: ready flag %u is not 0 or 1", id, b->ready[i]);
    for (uint32_t k = 0; k < K; k++) {
        uint32_t u = (uint32_t)src[4 * k] | (uint32_t)src[4 * k + 1] << 8 |
                     (uint32_t)src[4 * k + 2] << 16 | (uint32_t)src[4 * k + 3] << 24;
        memcpy(&row[k], &u, sizeof u);
        if (!isfinite(row[k]))
            return slda_msgpack_fail(mp, "body: id %u: row value %u is not finite", id, k);
    }
    if (slda_vocab_put(slda_model_vocab(model), id, (const char *)b->words[i], b->wlens[i],
                       b->freqs[i], msg, sizeof msg) != SLDA_OK)
        return slda_msgpack_fail(mp, "body: id %u (\"%.*s\"): %s", id, wl, (const char *)b->words[i],
                       msg);
    slda_model_load_row(model, id, row, b->ready[i]);
    return 0;
}

/* Ids must increase strictly across the whole body, so duplicates show. */
static int snap_apply_block(slda_msgpack_t *mp, slda_model_t *model, const snap_block_t *b,
                            int64_t *prev)
{
    for (uint32_t i = 0; i < b->nids; i++) {
        uint32_t id = b->ids[i];
        if (id >= slda_model_rows(model))
            return slda_msgpack_fail(mp, "body: id %u >= W=%u", id, slda_model_rows(model));
        if ((int64_t)id == *prev)
            return slda_msgpack_fail(mp, "body: duplicate id %u", id);
        if ((int64_t)id < *prev)
            return slda_msgpack_fail(mp, "body: id %u after id %" PRId64 " (ids must increase)", id,
                           *prev);
        if (snap_put_row(mp, model, b, i))
            return -1;
        *prev = id;
    }
    return 0;
}

static int snap_read_body(slda_msgpack_t *mp, slda_model_t *model, uint32_t nrows)
{
    snap_block_t b = {0};
    int64_t prev = -1;
    uint64_t total = 0;
    int rc = -1;
    b.ids = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.ids);
    b.words = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.words);
    b.wlens = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.wlens);
    b.freqs = slda_xmalloc(SLDA_SNAP_BLOCK_ROWS * sizeof *b.freqs);
    for (;;) {
        if (mp->p == mp->end) {
            slda_msgpack_fail(mp, "body: data ends before the end marker");
            goto out;
        }
        if (snap_read_block(mp, &b, slda_model_topics(model)))
            goto out;
        if (b.is_end)
            break;
        if (total + b.nids > nrows) {
            slda_msgpack_fail(mp, "body: more rows than header \"vocab_size\" %u", nrows);
            goto out;
        }
        if (snap_apply_block(mp, model, &b, &prev))
            goto out;
        total += b.nids;
    }
    if (b.end_rows != total || total != nrows)
        slda_msgpack_fail(mp, "end marker: rows %" PRIu64 ", body held %" PRIu64 ", header vocab_size %u",
                b.end_rows, total, nrows);
    else if (mp->p != mp->end)
        slda_msgpack_fail(mp, "%zu bytes after the end marker", slda_msgpack_left(mp));
    else if (slda_vocab_size(slda_model_vocab(model)) != nrows)
        slda_msgpack_fail(mp, "vocabulary holds %u words after loading %u rows",
                slda_vocab_size(slda_model_vocab(model)), nrows);
    else
        rc = 0;
out:
    free(b.ids);
    free(b.words);
    free(b.wlens);
    free(b.freqs);
    return rc;
}

/* The births state of the header, checked against the model now that it is
 * built; a snapshot without one leaves the model without one, and the first
 * update with births=true starts a fresh baseline (births.c). */
static int snap_attach_births(slda_msgpack_t *mp, slda_model_t *model, snap_hdr_t *h)
{
    char msg[300];
    if (!h->births.present)
        return 0;
    if (slda_model_attach_births(model, &h->births.st, msg, sizeof msg) != SLDA_OK) {
        mp->p = mp->base + h->births.at;
        return slda_msgpack_fail(mp, "header \"" HDR_OPT_BIRTHS "\": %s", msg);
    }
    return 0;
}

/* The worker threads slda_model_new would have started (threads=). */
static int snap_start(slda_msgpack_t *mp, slda_model_t *model)
{
    char msg[256];
    slda_err_t err = slda_model_start_threads(model, msg, sizeof msg);
    if (err != SLDA_OK) {
        mp->err = slda_set_err(mp->errstr, mp->errstr_size, err, "%s%s", mp->prefix, msg);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Envelope and entry points                                                 */

static slda_err_t snap_check_envelope(const unsigned char *buf, size_t len, const char *name,
                                      char *errstr, size_t errstr_size)
{
    size_t m = len < SLDA_SNAP_MAGIC_LEN ? len : SLDA_SNAP_MAGIC_LEN;
    uint32_t version;
    uint64_t stored, computed;
    if (len > 0 && memcmp(buf, SLDA_SNAP_MAGIC, m) != 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": bad magic (not a streamlda snapshot)", name);
    if (len < SNAP_MIN_LEN)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TRUNCATED,
                            "snapshot \"%s\": truncated: %zu bytes, a snapshot has at least %d",
                            name, len, SNAP_MIN_LEN);
    version = (uint32_t)get_be(buf + SLDA_SNAP_MAGIC_LEN, 4);
    if (version == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": format version 0 does not exist", name);
    if (version > SLDA_SNAP_VERSION)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_VERSION,
                            "snapshot \"%s\": format version %" PRIu32
                            " is newer than this build reads (version %d)",
                            name, version, SLDA_SNAP_VERSION);
    stored = get_be(buf + len - SLDA_SNAP_TRAILER_LEN, SLDA_SNAP_TRAILER_LEN);
    computed = slda_hash64(buf, len - SLDA_SNAP_TRAILER_LEN, 0);
    if (stored != computed)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": checksum mismatch: expected 0x%016" PRIx64
                            " (trailer), found 0x%016" PRIx64 " (XXH3-64 of %zu bytes)",
                            name, stored, computed, len - SLDA_SNAP_TRAILER_LEN);
    return SLDA_OK;
}

static slda_model_t *decode_meta(const void *buf, size_t len, const char *name,
                                 slda_snapshot_meta_t *meta, slda_err_t *err_out, char *errstr,
                                 size_t errstr_size)
{
    slda_msgpack_t mp;
    snap_hdr_t h = {0};
    slda_model_t *model = NULL;
    slda_err_t err;
    if (!buf && len > 0)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "snapshot \"%s\": no data",
                           name);
    else
        err = snap_check_envelope(buf, len, name, errstr, errstr_size);
    if (!err) {
        size_t plen = strlen(name) + sizeof "snapshot \"\": ";
        char *prefix = slda_xmalloc(plen);
        snprintf(prefix, plen, "snapshot \"%s\": ", name);
        slda_msgpack_init(&mp, buf, SNAP_HEAD_LEN, len - SLDA_SNAP_TRAILER_LEN, prefix, errstr,
                          errstr_size);
        mp.paren = 1; /* "(at byte N)", as snapshot messages have always said */
        if (snap_read_header(&mp, &h) == 0 && (model = snap_build_model(&mp, &h)) != NULL &&
            (snap_read_body(&mp, model, h.nrows) != 0 || snap_attach_births(&mp, model, &h) != 0 ||
             snap_start(&mp, model) != 0)) {
            slda_model_destroy(model);
            model = NULL;
        }
        if (model && meta)
            meta->event_ms = h.event_ms;
        snap_hdr_clear(&h);
        free(prefix);
        err = model ? SLDA_OK : mp.err;
    }
    if (err_out)
        *err_out = err;
    return model;
}

slda_model_t *slda_snapshot_decode_named(const void *buf, size_t len, const char *name,
                                         slda_err_t *err_out, char *errstr, size_t errstr_size)
{
    return decode_meta(buf, len, name, NULL, err_out, errstr, errstr_size);
}

slda_model_t *slda_snapshot_decode(const void *buf, size_t len, slda_err_t *err_out,
                                   char *errstr, size_t errstr_size)
{
    return slda_snapshot_decode_named(buf, len, SNAP_MEM_NAME, err_out, errstr, errstr_size);
}

/* Whole contents of a non-regular file (a pipe, a device) into malloc'ed memory. */
static int read_all(int fd, unsigned char **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        ssize_t r;
        if (!buf)
            return ENOMEM;
        if (n == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *len = n;
    return 0;
}

slda_model_t *slda_snapshot_read(const char *path, slda_err_t *err_out, char *errstr,
                                 size_t errstr_size)
{
    return slda_snapshot_read_meta(path, NULL, err_out, errstr, errstr_size);
}

slda_model_t *slda_snapshot_read_meta(const char *path, slda_snapshot_meta_t *meta,
                                      slda_err_t *err_out, char *errstr, size_t errstr_size)
{
    struct stat st;
    unsigned char *data = NULL;
    void *map = MAP_FAILED;
    size_t len = 0;
    slda_model_t *model;
    int e = 0, fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0 || fstat(fd, &st) != 0) {
        e = path ? errno : EINVAL;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        len = (size_t)st.st_size;
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
            e = read_all(fd, &data, &len);
        else
            data = map;
    } else {
        e = read_all(fd, &data, &len);
    }
    if (fd >= 0)
        close(fd);
    if (e) {
        slda_err_t err = slda_set_err(errstr, errstr_size, e == ENOMEM ? SLDA_ERR_NOMEM
                                                                       : SLDA_ERR_IO,
                                      "snapshot \"%s\": cannot read: %s",
                                      path ? path : "(null)", strerror(e));
        if (err_out)
            *err_out = err;
        return NULL;
    }
    if (meta)
        memset(meta, 0, sizeof *meta);
    model = decode_meta(data, len, path, meta, err_out, errstr, errstr_size);
    if (map != MAP_FAILED)
        munmap(map, len);
    else
        free(data);
    return model;
}
