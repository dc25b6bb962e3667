/* slda_int.h - internal types shared by the streamlda modules (not installed). */
#ifndef SLDA_INT_H
#define SLDA_INT_H

#include "streamlda.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- alloc.c: small allocations abort with the size; model-sized ones fail softly ---- */
void *slda_xmalloc(size_t n);
void *slda_xcalloc(size_t n, size_t size);
void *slda_xrealloc(void *p, size_t n);
char *slda_xstrdup(const char *s);
char *slda_xstrndup(const char *s, size_t n);
/* The rest of f, malloc'ed (NUL-terminated, never NULL), its length in *len;
 * check ferror(f) for a read error. */
char *slda_read_all(FILE *f, size_t *len);
/* 64-byte aligned, zeroed; NULL (and errstr "<what>: cannot allocate N bytes") on failure. */
void *slda_big_alloc(size_t n, const char *what, char *errstr, size_t errstr_size);
/* p (a block of slda_big_alloc or slda_big_grow, or NULL) grown to at least n bytes, its
 * contents kept and the rest zero; never shrinks; aborts when it cannot, as slda_xrealloc. */
void *slda_big_grow(void *p, size_t n);
void slda_big_free(void *p);

/* ---- err.c ---- */
/* snprintf into errstr (if errstr_size > 0); returns err. */
slda_err_t slda_set_err(char *errstr, size_t errstr_size, slda_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- hash.c: the only file that includes xxhash.h ---- */
uint64_t slda_hash64(const void *data, size_t len, uint64_t seed);

/* ---- rng.c: xoshiro256** seeded by splitmix64 ---- */
typedef struct slda_rng_s {
    uint64_t s[4];
} slda_rng_t;
void slda_rng_seed(slda_rng_t *rng, uint64_t seed);
/* Seed from several values (e.g. seed, update number, document index). */
void slda_rng_seed3(slda_rng_t *rng, uint64_t a, uint64_t b, uint64_t c);
static inline uint64_t slda_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}
static inline uint64_t slda_rng_next(slda_rng_t *rng) /* inline: the samplers draw per token */
{
    uint64_t *s = rng->s;
    uint64_t result = slda_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = slda_rng_rotl(s[3], 45);
    return result;
}
static inline float slda_rng_float(slda_rng_t *rng) /* uniform [0,1) */
{
    return (float)(slda_rng_next(rng) >> 40) * (1.0f / 16777216.0f);
}
static inline double slda_rng_double(slda_rng_t *rng) /* uniform [0,1) */
{
    return (double)(slda_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}
uint32_t slda_rng_below(slda_rng_t *rng, uint32_t n);

/* ---- clock.c: wall-clock ms since the epoch (recorded times), monotonic seconds
 * (durations) ---- */
int64_t slda_now_ms(void);
double slda_mono_s(void);

/* ---- mathx.c ---- */
double slda_digamma(double x);

/* ---- configuration (config.c owns the property table) ---- */
typedef enum {
    SLDA_VB_NONE = 0, /* pure CGS: every token sampled */
    SLDA_VB_CVB0,
    SLDA_VB_CVB,
    SLDA_VB_SVB
} slda_vb_kind_t;

typedef enum { SLDA_ALPHA_FIXED = 0, SLDA_ALPHA_FIXEDPOINT, SLDA_ALPHA_NEWTON } slda_alpha_learn_t;
/* replay (second visits, src/engine/replay.c): the engine treats auto as off */
typedef enum { SLDA_REPLAY_AUTO = 0, SLDA_REPLAY_ON, SLDA_REPLAY_OFF } slda_replay_mode_t;
#define SLDA_REPLAY_ACTIVE(p) ((p)->replay == SLDA_REPLAY_ON && (p)->replay_docs > 0)
typedef enum { SLDA_STATS_RB = 0, SLDA_STATS_SAMPLE } slda_stats_kind_t;
/* global.rows: how the global step sets each word's row total (global_step.c) */
typedef enum { SLDA_ROWS_COUNTS = 0, SLDA_ROWS_DECAY } slda_rows_kind_t;
typedef enum { SLDA_INFMT_AUTO = 0, SLDA_INFMT_TEXT, SLDA_INFMT_JSON, SLDA_INFMT_MSGPACK } slda_infmt_t;

/* text.* cleanup rules (tokenize.c, docs/text.md). Each field is the index of
 * its value in the row's list in config.c, the new default first; snapshots
 * written before the rules existed mean the *_KEEP/_SPLIT values. */
enum { SLDA_TEXT_URLS_DROP = 0, SLDA_TEXT_URLS_KEEP };
enum { SLDA_TEXT_HTML_DECODE = 0, SLDA_TEXT_HTML_KEEP };
enum { SLDA_TEXT_MENTIONS_DROP = 0, SLDA_TEXT_MENTIONS_KEEP };
enum { SLDA_TEXT_HASHTAGS_KEEP = 0, SLDA_TEXT_HASHTAGS_DROP };
enum { SLDA_TEXT_APOS_KEEP = 0, SLDA_TEXT_APOS_SPLIT };
enum { SLDA_TEXT_DIGITS_DROP = 0, SLDA_TEXT_DIGITS_MIXED, SLDA_TEXT_DIGITS_KEEP,
       SLDA_TEXT_DIGITS_SPLIT };
typedef struct slda_text_rules_s {
    int urls;        /* text.urls: drop | keep (URLs and e-mail addresses) */
    int html;        /* text.html: decode | keep (entities decoded, tags dropped) */
    int mentions;    /* text.mentions: drop | keep */
    int hashtags;    /* text.hashtags: keep (#debt -> debt) | drop */
    int apostrophes; /* text.apostrophes: keep (don't) | split (don, t) */
    int digits;      /* text.digits: drop | mixed | keep | split */
} slda_text_rules_t;

/* Engine parameters: everything the model and its steps read. */
typedef struct slda_params_s {
    uint32_t topics;            /* topics: K */
    double alpha;               /* alpha: symmetric initial alpha_k */
    double eta;                 /* eta */
    slda_alpha_learn_t alpha_learn; /* alpha.learn: off | fixedpoint | newton */
    slda_vb_kind_t vb;          /* local: cgs | cvb0 | cvb | svb | cvb0+cgs | cvb+cgs | svb+cgs */
    int hybrid;                 /* 1 for the "+cgs" variants */
    uint32_t threshold;         /* local.threshold: r of the hybrids; pairs with count <= r are
                                   sampled. Use slda_params_r() for the effective value. */
    uint32_t burnin;            /* local.burnin sweeps */
    uint32_t samples;           /* local.samples collection sweeps */
    double tolerance;           /* local.tolerance: stop burn-in early when mean |dNtheta|/L < tol */
    slda_stats_kind_t stats;    /* local.stats: rb | sample */
    double rho_s, rho_tau, rho_kappa, rho_min; /* rho.s, rho.tau, rho.kappa, rho.min */
    slda_rows_kind_t rows;      /* global.rows: counts | decay */
    uint32_t stale;             /* global.stale: updates the local steps lag behind (0 or 1) */
    double corpus_tokens;       /* corpus.tokens: C; 0 = number of training tokens when known */
    double init_scale;          /* init.scale: mean of the random initial Nphi entries */
    uint32_t vocab_capacity;    /* vocab.capacity: W in open-vocabulary mode */
    char *vocab_file;           /* vocab.file: fixed vocabulary, one word a line (NULL = open) */
    uint64_t seed;              /* seed */
    uint32_t threads;           /* threads */
    /* tokenizer */
    char *stopwords;            /* text.stopwords: "none", "smart", "snowball", "onix" or a path */
    uint32_t min_length;        /* text.min.length: minimum token length in characters */
    uint32_t max_doc_bytes;     /* text.max.bytes: larger documents are rejected */
    slda_text_rules_t text;     /* text.urls, .html, .mentions, .hashtags, .apostrophes, .digits */
    /* births, retirement and merges of topics (src/engine/births.c) */
    int births;                 /* births: on/off */
    uint32_t births_docs;       /* births.docs: flagged documents per proposal */
    double births_z;            /* births.z: flag a document this many deviations below */
    double births_gain;         /* births.gain: held-out nats per token a birth must gain */
    double births_floor;        /* births.floor: dead below floor / K of the tokens */
    double births_merge;        /* births.merge: merge two topics closer than this (JS, nats) */
    slda_replay_mode_t replay;  /* replay: auto (on in `streamlda train`, else off) | on | off */
    uint32_t replay_docs;       /* replay.docs: at most this many documents wait for a visit */
    uint32_t replay_burnin;     /* replay.burnin: burn-in sweeps of the second visit */
    uint32_t replay_samples;    /* replay.samples: collection sweeps of the second visit */
} slda_params_t;

#define SLDA_CONF_MAX_PROPS 256
/* 1 when name (a table key) was set explicitly rather than left at its default. */
int slda_conf_is_set(const slda_conf_t *conf, const char *name);

struct slda_conf_s {
    slda_params_t p;
    /* training CLI */
    uint32_t minibatch_docs;    /* minibatch.docs */
    uint32_t minibatch_ms;      /* minibatch.ms */
    uint32_t heldout_modulo;    /* heldout.modulo: doc held out when hash(id) % m == 0; 0 = none */
    uint32_t progress_ms;       /* progress.ms: status line interval */
    /* service */
    char *model_name;           /* model.name */
    char *input_topics;         /* input.topics: comma separated */
    slda_infmt_t input_format;  /* input.format: auto | text | json | msgpack */
    uint32_t input_max_bytes;   /* input.max.bytes */
    char *snapshot_dir;         /* snapshot.dir */
    uint32_t snapshot_keep;     /* snapshot.keep */
    uint32_t snapshot_every_batches; /* snapshot.every.batches (0 = off) */
    uint32_t snapshot_every_ms; /* snapshot.every.ms (0 = off) */
    char *snapshot_topic;       /* snapshot.topic ("" = off) */
    uint32_t snapshot_chunk_bytes; /* snapshot.chunk.bytes */
    char *output_topic;         /* output.topic ("" = off) */
    uint32_t output_top;        /* output.top: topics per document in the output */
    char *deadletter_topic;     /* deadletter.topic */
    int32_t http_port;          /* http.port (-1 = off, 0 = ephemeral) */
    uint32_t status_ms;         /* status.ms */
    int snapshot_fresh;         /* snapshot.fresh: start a new model beside unloadable snapshots */
    uint32_t shutdown_timeout_ms; /* shutdown.timeout.ms: longest wait for deliveries at stop */
    uint32_t health_stall_ms;   /* health.stall.ms: undelivered / unconsumed this long = unhealthy */
    /* replicas (src/kafka/replica.c, docs/replication.md) */
    char *updates_topic;        /* updates.topic: the replicated update log ("" = one instance) */
    uint32_t updates_staleness; /* updates.staleness: own records unapplied when a minibatch starts */
    int updates_values;         /* updates.values: slda_update_values_t */
    int updates_prune;          /* updates.prune: the snapshot writer deletes the log it no longer needs */
    /* tracking (src/track, docs/tracking.md) */
    char *input_time_field;     /* input.time.field: JSON field with the event time ("" = timestamp) */
    int track;                  /* track: prevalence, drift, events, the live page */
    int track_window;           /* track.window: 0 minute, 1 hour, 2 day, 3 week */
    uint32_t track_windows;     /* track.windows: ring length */
    uint64_t track_warmup_docs; /* track.warmup.docs */
    double track_change_js, track_birth_js, track_merge_js, track_death_floor, track_trend_slope;
    uint32_t track_birth_keep, track_death_windows, track_trend_windows;
    char *track_events_topic;   /* track.events.topic: events as JSON records ("" = off) */
    /* properties given explicitly (slda_conf_set: file, environment, -X), by
     * index in the property table; see slda_conf_is_set */
    unsigned char set[SLDA_CONF_MAX_PROPS];
    /* kafka.* pass-through, in insertion order */
    size_t nkafka;
    char **kafka_names;         /* without the "kafka." prefix */
    char **kafka_values;
};

/* ---- vocab.c: word <-> id keyed by XXH3-64 of the normalised token, bounded ---- */
typedef struct slda_vocab_s slda_vocab_t;
/* Called when row id is evicted (so the model can drop its counts). */
typedef void (*slda_evict_cb)(uint32_t id, void *opaque);
slda_vocab_t *slda_vocab_new(uint32_t capacity, uint64_t seed, int fixed);
void slda_vocab_destroy(slda_vocab_t *vocab);
void slda_vocab_set_evict_cb(slda_vocab_t *vocab, slda_evict_cb cb, void *opaque);
/* Id of word; in open mode adds it (evicting the rarest unpinned words when
 * full). *added (may be NULL) is set when the word is new. UINT32_MAX when the
 * word is unknown in fixed mode or nothing could be evicted. */
uint32_t slda_vocab_get_or_add(slda_vocab_t *vocab, const char *word, size_t len, bool *added);
/* The same for count occurrences of a word whose XXH3 hash with the
 * vocabulary's seed is hash (bag.c): frequency += count, and a refusal
 * counts count occurrences. */
uint32_t slda_vocab_get_or_add_n(slda_vocab_t *vocab, const char *word, size_t len,
                                 uint64_t hash, uint32_t count);
uint32_t slda_vocab_find(const slda_vocab_t *vocab, const char *word, size_t len);
/* The same with the word's hash given (only reads: threads may call it while
 * nothing changes the vocabulary). */
uint32_t slda_vocab_find_hashed(const slda_vocab_t *vocab, const char *word, size_t len,
                                uint64_t hash);
/* What slda_vocab_get_or_add_n does for a word the vocabulary holds at id
 * (frequency += count, pinned): for an id found earlier, valid while
 * slda_vocab_evictions is unchanged (only an eviction gives an id another
 * word). */
void slda_vocab_use(slda_vocab_t *vocab, uint32_t id, uint32_t count);
/* Pin id for this epoch and the next, as a lookup does, without counting an
 * occurrence (replay.c: the words of a second visit, whose update may be
 * pending, train.c). */
void slda_vocab_pin(slda_vocab_t *vocab, uint32_t id);
/* Add with a given id (snapshot load / fixed vocabulary). */
slda_err_t slda_vocab_put(slda_vocab_t *vocab, uint32_t id, const char *word, size_t len,
                          double freq, char *errstr, size_t errstr_size);
const char *slda_vocab_word(const slda_vocab_t *vocab, uint32_t id); /* NULL if unused */
uint32_t slda_vocab_size(const slda_vocab_t *vocab);     /* ids in use */
uint32_t slda_vocab_capacity(const slda_vocab_t *vocab);
uint32_t slda_vocab_max_id(const slda_vocab_t *vocab);   /* 1 + highest id ever used */
int slda_vocab_is_fixed(const slda_vocab_t *vocab);
uint64_t slda_vocab_seed(const slda_vocab_t *vocab);
/* Frequency bookkeeping used for eviction (decayed document frequency). */
void slda_vocab_touch(slda_vocab_t *vocab, uint32_t id, double weight);
double slda_vocab_freq(const slda_vocab_t *vocab, uint32_t id);
/* Words touched in the current minibatch are pinned: not evicted until the
 * next slda_vocab_new_epoch. */
void slda_vocab_new_epoch(slda_vocab_t *vocab);
uint64_t slda_vocab_evictions(const slda_vocab_t *vocab);
/* New words refused because the vocabulary was full and every word pinned
 * (all returned since the last slda_vocab_new_epoch). */
uint64_t slda_vocab_refused(const slda_vocab_t *vocab);
/* The key of id's word: XXH3-64 of the word with the vocabulary's seed (0 if
 * id is unused). Keys outlive ids: an evicted id is reused for another word,
 * a key always names the same word. */
uint64_t slda_vocab_key(const slda_vocab_t *vocab, uint32_t id);
/* Id of the word whose key is key, or UINT32_MAX if it is not held. */
uint32_t slda_vocab_find_key(const slda_vocab_t *vocab, uint64_t key);

/* ---- tokenize.c ---- */
typedef struct slda_tokenizer_s slda_tokenizer_t;
slda_tokenizer_t *slda_tokenizer_new(const slda_params_t *p, char *errstr, size_t errstr_size);
void slda_tokenizer_destroy(slda_tokenizer_t *tok);
/* Calls cb for each normalised token (text.* cleanup applied, lower-cased UTF-8,
 * stop words and short tokens removed). SLDA_ERR_UTF8 (with byte offset in errstr) on invalid UTF-8,
 * before any callback is made. */
typedef void (*slda_token_cb)(const char *tok, size_t len, void *opaque);
slda_err_t slda_tokenize(const slda_tokenizer_t *tok, const char *text, size_t len,
                         slda_token_cb cb, void *opaque, char *errstr, size_t errstr_size);
/* Normalise one token as the tokenizer would (lower-case); returns 0 if it is
 * dropped (stop word, too short, invalid). out has room for 4*len+1 bytes. */
size_t slda_token_normalise(const slda_tokenizer_t *tok, const char *in, size_t len, char *out);

/* ---- docmsg.c: one Kafka message value -> document ---- */
/* Decode val (text, JSON {"id","text"|"tokens"} or MessagePack map with the
 * same fields; SLDA_INFMT_AUTO sniffs) and tokenise it through model. The id
 * comes from the "id" field, else from key (may be NULL), else stays NULL.
 * Errors: SLDA_ERR_PARSE (undecodable), SLDA_ERR_UTF8, SLDA_ERR_EMPTY,
 * SLDA_ERR_TOO_LARGE (len > max_bytes, when max_bytes > 0). */
slda_err_t slda_doc_from_message(slda_model_t *model, slda_infmt_t fmt, const void *val,
                                 size_t len, const void *key, size_t keylen,
                                 uint32_t max_bytes, slda_doc_t *doc, char *errstr,
                                 size_t errstr_size);

/* ---- model.c: global state ---- */
/*
 * Nphi[w][k] = sigma * A[w*Kp + k] (lazy scale, ALGORITHM.md "Global step").
 * Rows are Kp floats (K rounded up to 16) and 64-byte aligned, so the K loops
 * vectorise; padding entries stay 0. NZ[k] = sum_w Nphi[w][k] is kept dense.
 */
/* bag.c: a text's distinct words in first-occurrence order, with counts and
 * vocabulary hashes. slda_bag_tokenize runs on any thread (it only reads the
 * model's tokenizer and vocabulary seed); slda_doc_from_bag looks the words
 * up on the vocabulary's thread. */
typedef struct slda_bag_s {
    char *arena;            /* the words, each NUL-terminated, back to back */
    size_t alen, acap;
    size_t *off;            /* n: each word's offset in arena */
    uint32_t *len, *count;  /* n */
    uint64_t *hash;         /* n: XXH3-64 with seed */
    uint32_t n, cap;
    uint32_t ntokens;       /* tokens after tokenising (sum of count) */
    uint32_t *table;        /* tcap slots: index of a word, or UINT32_MAX */
    uint32_t tcap;
    uint64_t seed;
    int deferred;           /* slda_text_defer: the lookup is still to be done */
    uint32_t *hint;         /* hcap: each word's id when slda_bag_hint ran, or UINT32_MAX */
    uint32_t hcap;
    int hinted;             /* hint[] holds the ids as of hint_evictions */
    uint64_t hint_evictions;
    int built;              /* every word was found: slda_bag_hint made the document too */
} slda_bag_t;
slda_bag_t *slda_bag_new(void);
void slda_bag_free(slda_bag_t *bag);
void slda_bag_clear(slda_bag_t *bag, uint64_t seed);
void slda_bag_add(slda_bag_t *bag, const char *word, size_t len);
/* SLDA_ERR_TOO_LARGE when len bytes are over text.max.bytes (a text, or a
 * token list's total). */
slda_err_t slda_doc_size_check(const slda_model_t *model, size_t len, char *errstr,
                               size_t errstr_size);
slda_err_t slda_bag_tokenize(const slda_model_t *model, slda_bag_t *bag, const char *text,
                             size_t len, char *errstr, size_t errstr_size);
/* Adds the words to doc, which holds no pairs yet (its id and time stay);
 * on an error doc is cleared. */
slda_err_t slda_doc_from_bag(slda_model_t *model, const slda_bag_t *bag, slda_doc_t *doc,
                             char *errstr, size_t errstr_size);
/* Find the bag's words in the vocabulary now (only reads it: on a worker
 * thread while nothing changes the vocabulary), so slda_doc_from_bag later
 * skips the search for the words found, as long as no eviction came between:
 * the same ids, frequencies and pins as searching then. With doc (no pairs
 * yet, or NULL) and every word found, the words are added to doc and sorted
 * now, and slda_doc_from_bag given that doc only counts and pins them. */
void slda_bag_hint(const slda_vocab_t *vocab, slda_bag_t *bag, slda_doc_t *doc);
/* Held-out document slot of held (heldout.c) from (word key, count) pairs,
 * e.g. a bag's hashes and counts (the bag's hashes are the vocabulary's keys):
 * for replicas, whose vocabulary changes only through the update log, so a
 * held-out document cannot add to it (the service stages their pairs until
 * their input offsets commit). */
slda_err_t slda_heldout_put_keys(slda_heldout_t *held, size_t slot, const slda_model_t *model,
                                 const uint64_t *keys, const uint32_t *counts, uint32_t n,
                                 char *errstr, size_t errstr_size);
/* The words of bag as a document over scratch's words (update.c: replicas,
 * whose vocabulary changes only by applying records); the model is only read. */
slda_err_t slda_update_doc_from_bag(const slda_model_t *model, slda_update_scratch_t *scratch,
                                    const slda_bag_t *bag, slda_doc_t *doc, char *errstr,
                                    size_t errstr_size);
/* text.c: on this thread, until called with NULL, slda_doc_from_text and
 * slda_doc_from_tokens only tokenise into bag and set bag->deferred (the
 * document is left without words); the vocabulary's thread then calls
 * slda_doc_from_bag. Lets message decoding run on worker threads. */
void slda_text_defer(slda_bag_t *bag);
/* train.c: slda_model_train, with nextra more items in the pool run of the
 * local steps: extra(i, worker, opaque) for i < nextra, claimed after every
 * document (the service decodes the next minibatch's messages there while
 * the last documents train). extra must only read what the local steps read
 * (the model, its vocabulary and tokenizer) and write its own results; it
 * does not run when the documents are refused before training. */
slda_err_t slda_model_train_with(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                                 float *thetas, slda_train_stats_t *stats, size_t nextra,
                                 void (*extra)(size_t i, uint32_t worker, void *opaque),
                                 void *opaque, char *errstr, size_t errstr_size);
/* model.c: slda_model_top_words for every topic in one pass over the rows
 * (K calls read the matrix down its columns: 10 ms for K=100 and 38,000
 * words, against 2 ms): topic k's list in ids and probs [k n, k n + n), its
 * length in have[k]; the same lists as slda_model_top_words. */
void slda_model_top_words_all(const slda_model_t *model, size_t n, uint32_t *ids, float *probs,
                              size_t *have);
struct slda_model_s {
    slda_params_t p;            /* own copy (strings owned) */
    uint32_t K, Kp;
    uint32_t W;                 /* rows allocated: fixed vocabulary size or vocab.capacity */
    float *A;                   /* W * Kp */
    double sigma;
    double *NZ;                 /* K */
    double *alpha;              /* K */
    double alpha_sum;
    uint64_t t;                 /* global updates applied */
    uint64_t docs, tokens;      /* trained on */
    double corpus_tokens;       /* C in use */
    slda_vocab_t *vocab;
    slda_tokenizer_t *tok;
    slda_offset_t *offsets;
    size_t noffsets;
    char *name;                 /* model.name */
    int64_t created_ms, updated_ms;
    uint8_t *row_ready;         /* W: 1 once the row holds its initial or learned counts */
    uint32_t nready;            /* rows with row_ready set: the words the model holds */
    uint32_t rows_used;         /* 1 + the highest id whose row was ever written: the rows
                                 * from here on are zero (pages never touched), so loops
                                 * over all rows of A stop here (slda_model_row_written) */
    uint32_t rows_paged;        /* rows below this were written at least once (model.c,
                                 * slda_model_page_in): their pages are writable */
    uint64_t init_t;            /* init_weight is prod_{s < init_t} (1 - rho_s) (model.c) */
    double init_weight;
    struct slda_pool_s *pool;   /* worker threads (core/pool.h), NULL when threads == 1 */
    struct slda_pending_s *pend[2]; /* minibatch statistics, used in turn (train.c) */
    struct slda_pending_s *pending; /* the one whose global update is not applied yet */
    struct slda_local_s **locals; /* per worker local-step scratch (train.c) */
    uint32_t nlocals;
    struct slda_births_s *births; /* births.c state, NULL unless births=true */
    struct slda_replay_s *replay; /* replay.c: documents waiting for their second visit */
    uint64_t replay_tokens;     /* tokens of second visits trained on (not in tokens) */
    uint64_t replay_input_docs; /* documents a finite input will train on, when known before
                                 * training (streamlda train holds its files); 0 = a stream */
    slda_bag_t *bag;            /* text.c's scratch for slda_doc_from_text */
};
typedef struct slda_births_s slda_births_t;

/* Build a model from params without a vocabulary file (snapshot loader). */
slda_model_t *slda_model_alloc(const slda_params_t *p, uint32_t W, int fixed_vocab,
                               char *errstr, size_t errstr_size);
/* Row id of A is about to be written. Every writer of a row that may be
 * zero goes through here: a row gets counts only after its word reaches
 * training (slda_model_mark_row) or from a snapshot; the updates, births
 * and evictions write rows marked before, and the whole-matrix loops
 * (scaling, clearing, a topic's column) leave zero rows zero. */
static inline void slda_model_row_written(slda_model_t *model, uint32_t id)
{
    if (id >= model->rows_used)
        model->rows_used = id + 1;
}
/* Mark a row as holding counts (the snapshot loader calls it for each row). */
static inline void slda_model_mark_row(slda_model_t *model, uint32_t id)
{
    slda_model_row_written(model, id);
    model->nready += !model->row_ready[id];
    model->row_ready[id] = 1;
}
/* W of the word factor's denominator NZ[k] + W eta (ALGORITHM.md "Notation"):
 * the fixed vocabulary's size, or the number of words the model holds (rows
 * ready) in open-vocabulary mode; at least 1. */
uint32_t slda_model_smoothing_words(const slda_model_t *model);
/* The ids of those words in increasing order (malloc'ed, *n of them): the
 * columns of slda_model_phi and the exports. */
uint32_t *slda_model_ids_held(const slda_model_t *model, uint32_t *n);
/* reconcile.c: a restored model against this run's configuration: an explicit
 * model-defining setting that differs is an error; tunables are applied; each
 * difference is reported through log. */
slda_err_t slda_model_reconcile(slda_model_t *model, const slda_conf_t *conf,
                                void (*log)(void *opaque, const char *line), void *opaque,
                                char *errstr, size_t errstr_size);
/* The configuration a restored model should tokenise with: conf, with every
 * text.* setting left at its default replaced by the snapshot's (each
 * difference reported through log). Caller destroys it. */
slda_conf_t *slda_model_text_conf(const slda_model_t *model, const slda_conf_t *conf,
                                  void (*log)(void *opaque, const char *line), void *opaque);
/* Fold sigma into A (O(W K)); done when sigma falls below SLDA_SIGMA_FOLD. */
void slda_model_fold_scale(slda_model_t *model);
#define SLDA_SIGMA_FOLD 1e-6
/* Copy a params struct, duplicating its strings / free them. */
void slda_params_copy(slda_params_t *dst, const slda_params_t *src);
void slda_params_clear(slda_params_t *p);
/* Parse "cvb0+cgs" etc. into vb/threshold; returns 0 on unknown name. */
int slda_local_parse(const char *name, slda_vb_kind_t *vb, int *hybrid);
const char *slda_local_name(slda_vb_kind_t vb, int hybrid);
/* Effective singleton threshold: UINT32_MAX for cgs, 0 for pure VB, else r. */
static inline uint32_t slda_params_r(const slda_params_t *p)
{
    if (p->vb == SLDA_VB_NONE)
        return UINT32_MAX;
    return p->hybrid ? p->threshold : 0;
}

/* ---- outfile.c: every file the program writes (snapshots, exports, the CLI's files) ---- */
/*
 * open -> write to fp -> commit (or abort). A regular or missing path (after
 * following symlinks) is replaced atomically: temp file beside the target,
 * fsync, rename over the target, directory fsync; on failure the target is
 * left as it was. "-" is standard output and a FIFO, device or socket is
 * written straight, never renamed over or fsync'd. A directory is refused.
 * Errors: SLDA_ERR_IO, messages start with `<what> "<path>": `.
 */
typedef struct slda_outfile_s {
    FILE *fp;         /* write here; "w+b" (seekable) when replacing */
    const char *what; /* borrowed: "snapshot", "export", ... */
    char *path;       /* owned: as given */
    char *target;     /* owned: path with symlinks followed (NULL for "-") */
    char *tmp;        /* owned: the temp file when replacing, else NULL */
    int replace;      /* 1: atomic replacement; 0: straight write */
} slda_outfile_t;
slda_err_t slda_outfile_open(slda_outfile_t *out, const char *what, const char *path,
                             char *errstr, size_t errstr_size);
/* Always releases out. */
slda_err_t slda_outfile_commit(slda_outfile_t *out, char *errstr, size_t errstr_size);
/* After a failed write: removes the temp file (a straight write stays as
 * written). Accepts a zeroed out. */
void slda_outfile_abort(slda_outfile_t *out);
/* 1 when fp may be re-read or mapped (the atomic path), 0 for straight writes. */
int slda_outfile_seekable(const slda_outfile_t *out);
/* Would slda_outfile_open fail for sure (a directory, a missing or unwritable
 * directory for the temp file)? Opens nothing, so a long run can refuse a bad
 * output path before it starts; SLDA_ERR_IO with the reason. */
slda_err_t slda_outfile_check(const char *what, const char *path, char *errstr,
                              size_t errstr_size);

#endif /* SLDA_INT_H */
