/* streamlda.h - the public API of streamlda: streaming hybrid LDA. */
#ifndef STREAMLDA_H
#define STREAMLDA_H

/*
 * streamlda learns LDA topic models from a never-ending stream of documents.
 * Each document gets a hybrid local step (collapsed Gibbs sampling for the
 * word-document pairs that occur at most r times, collapsed variational
 * updates for the rest); each minibatch then moves the global topic-word
 * counts by a stochastic step rho_t (SCVB0-style). The math the code follows
 * is docs/algorithm.md; docs/architecture.md maps the code.
 *
 * The three examples below compile and run as they are (tests/0004: CMake
 * builds each into a program, header_example_N, from this comment; link
 * slda, or slda_kafka for the service). Each is the body of a function that
 * returns an exit code.
 *
 * Example 1 - train from a file and write a snapshot:
 *
 *     char err[512];
 *     slda_conf_t *conf = slda_conf_new();
 *     if (slda_conf_set(conf, "topics", "20", err, sizeof err) != SLDA_OK)
 *         return fprintf(stderr, "%s\n", err), 2;
 *     slda_model_t *model = slda_model_new(conf, err, sizeof err);
 *     slda_reader_t *rd = model ? slda_reader_open(conf, model, "docs.txt",
 *                                                  SLDA_FORMAT_TEXT, err, sizeof err) : NULL;
 *     if (!rd)
 *         return fprintf(stderr, "%s\n", err), 1;
 *     slda_doc_t docs[64];
 *     size_t n = 0;
 *     for (;;) {
 *         slda_doc_init(&docs[n]);
 *         slda_err_t e = slda_reader_next(rd, &docs[n], err, sizeof err);
 *         if (e == SLDA_ERR_EOF)
 *             break;
 *         if (e != SLDA_OK) {                 // a rejected record: "docs.txt:LINE: why"
 *             fprintf(stderr, "%s\n", err);
 *             continue;
 *         }
 *         if (++n == 64) {                    // a minibatch: one global update
 *             slda_model_train(model, docs, n, NULL, NULL, err, sizeof err);
 *             slda_docs_clear(docs, n);
 *             n = 0;
 *         }
 *     }
 *     if (n > 0)
 *         slda_model_train(model, docs, n, NULL, NULL, err, sizeof err);
 *     slda_docs_clear(docs, n);
 *     slda_model_flush(model);                // the pending update (global.stale)
 *     slda_err_t e = slda_snapshot_write(model, "model.slda", err, sizeof err);
 *     if (e != SLDA_OK)
 *         fprintf(stderr, "%s\n", err);
 *     slda_reader_close(rd);
 *     slda_model_destroy(model);
 *     slda_conf_destroy(conf);
 *     return e == SLDA_OK ? 0 : 1;
 *
 * Example 2 - run the Kafka service on a topic (what `streamlda run` does;
 * "embedded" starts librdkafka's in-process mock cluster, a broker's address
 * goes there instead; stop is set from a signal handler, here before it runs,
 * so the service starts, writes its final snapshot and returns):
 *
 *     static volatile int stop;
 *     char err[512];
 *     slda_conf_t *conf = slda_conf_new();
 *     slda_conf_set(conf, "input.topics", "docs", err, sizeof err);
 *     slda_conf_set(conf, "kafka.bootstrap.servers", "embedded", err, sizeof err);
 *     slda_conf_set(conf, "snapshot.dir", "snaps", err, sizeof err);
 *     slda_service_t *svc = slda_service_new(conf, err, sizeof err);
 *     slda_conf_destroy(conf);                // the service keeps its own copy
 *     if (!svc)
 *         return fprintf(stderr, "%s\n", err), 1;
 *     stop = 1;
 *     slda_err_t e = slda_service_run(svc, &stop, err, sizeof err);  // until stop is set
 *     if (e != SLDA_OK)
 *         fprintf(stderr, "%s\n", err);
 *     slda_service_destroy(svc);
 *     return e == SLDA_OK ? 0 : 1;
 *
 * Example 3 - load a snapshot and query it:
 *
 *     char err[512];
 *     slda_err_t e;
 *     slda_model_t *model = slda_snapshot_read("model.slda", &e, err, sizeof err);
 *     if (!model)
 *         return fprintf(stderr, "%s (%s)\n", err, slda_err_name(e)), 1;
 *     float theta[SLDA_MAX_TOPICS];
 *     slda_doc_t doc;
 *     const char *text = "the stock market fell";
 *     e = slda_doc_from_text(model, text, strlen(text), &doc, err, sizeof err);
 *     if (e == SLDA_OK)
 *         e = slda_model_infer(model, &doc, theta, 42);
 *     for (uint32_t k = 0; e == SLDA_OK && k < slda_model_topics(model); k++) {
 *         uint32_t ids[5];
 *         float probs[5];
 *         size_t nw = slda_model_top_words(model, k, 5, ids, probs);
 *         printf("topic %u (%.3f):", k, theta[k]);
 *         for (size_t i = 0; i < nw; i++)
 *             printf(" %s", slda_model_word(model, ids[i]));
 *         printf("\n");
 *     }
 *     if (e != SLDA_OK)
 *         fprintf(stderr, "%s\n", err);
 *     slda_doc_clear(&doc);
 *     slda_model_destroy(model);
 *     return e == SLDA_OK ? 0 : 1;
 *
 * Conventions: every _destroy/_clear accepts NULL. Functions that can fail on
 * user input return slda_err_t and write a human reason into errstr (of
 * errstr_size bytes), formatted `<what> "<name>": <problem>` so the caller can
 * prefix `file:line: `. The library never prints and never exits.
 * Configuration is read during the call only: slda_model_new, slda_reader_open,
 * slda_service_new, slda_model_set_tokenizer, slda_model_reconcile and the
 * batch functions copy what they keep (slda_service_new the whole conf), so a
 * conf may be changed or destroyed as soon as they return.
 * Thread safety: a model is used by one thread at a time; slda_model_train
 * may fan out to its own worker threads (`threads=`).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @name Version @{ */
#define SLDA_VERSION 0x000100 /* 0.1.0: 0xMMmmpp */
#define SLDA_VERSION_STR "0.1.0"
const char *slda_version_str(void);
/** @} */

#define SLDA_MAX_TOPICS 16384
/* Tokens in one document at most: counts stay exact in float32 (2^24).
 * Readers, slda_model_train and slda_model_infer refuse longer documents. */
#define SLDA_MAX_DOC_TOKENS 16777216u

/** @name Errors @{ */
typedef enum {
    SLDA_OK = 0,
    SLDA_ERR_INVALID,   /* invalid argument or configuration value */
    SLDA_ERR_UNKNOWN,   /* unknown configuration key or name */
    SLDA_ERR_NOMEM,     /* model-sized allocation failed */
    SLDA_ERR_IO,        /* open/read/write/fsync/rename failed */
    SLDA_ERR_PARSE,     /* malformed input line or record */
    SLDA_ERR_UTF8,      /* invalid UTF-8 */
    SLDA_ERR_EMPTY,     /* empty document (no tokens after tokenising) */
    SLDA_ERR_RANGE,     /* id or value out of range */
    SLDA_ERR_TRUNCATED, /* input ended early */
    SLDA_ERR_CORRUPT,   /* checksum mismatch, bad magic, inconsistent data */
    SLDA_ERR_VERSION,   /* format version newer than this build understands */
    SLDA_ERR_TOO_LARGE, /* over a configured size limit */
    SLDA_ERR_KAFKA,     /* a Kafka client error */
    SLDA_ERR_EOF,       /* no more input (not a failure) */
    SLDA_ERR_STOPPED,   /* stopped on request (*stop set) before it was done */
    SLDA_ERR__COUNT
} slda_err_t;

/** Stable identifier of the code, e.g. "SLDA_ERR_PARSE". Never NULL. */
const char *slda_err_name(slda_err_t err);
/** One-line description of the code. Never NULL. */
const char *slda_err_desc(slda_err_t err);
/** @} */

/** @name Configuration
 * One property table drives slda_conf_set, --help, `-X list` and
 * config/CONFIGURATION.md. Keys starting with "kafka." are stored verbatim and
 * passed to librdkafka unchanged. Precedence: defaults < config file <
 * environment (SLDA_<KEY> with '.' -> '_', upper case) < -X.
 * @{ */
typedef struct slda_conf_s slda_conf_t;

slda_conf_t *slda_conf_new(void);
slda_conf_t *slda_conf_dup(const slda_conf_t *conf);
void slda_conf_destroy(slda_conf_t *conf);
/** Set one property. SLDA_ERR_UNKNOWN for unknown keys, SLDA_ERR_INVALID for a
 *  value that does not parse or is out of range; errstr says which. */
slda_err_t slda_conf_set(slda_conf_t *conf, const char *name, const char *value,
                         char *errstr, size_t errstr_size);
/** Current value as text into dest. SLDA_ERR_UNKNOWN if no such key,
 *  SLDA_ERR_TOO_LARGE (with a truncated copy) if dest is too small. */
slda_err_t slda_conf_get(const slda_conf_t *conf, const char *name, char *dest,
                         size_t dest_size);
/** Read a flat key=value file ('#' comments, blank lines). Errors carry
 *  "path:line: ". */
slda_err_t slda_conf_load_file(slda_conf_t *conf, const char *path, char *errstr,
                               size_t errstr_size);
/** Apply SLDA_* environment variables (see above); SLDA_KAFKA_<NAME> sets
 *  kafka.<name> (lower case, '_' -> '.'). All or nothing. */
slda_err_t slda_conf_load_env(slda_conf_t *conf, char *errstr, size_t errstr_size);
/** Print the property table: markdown=0 for `-X list`, 1 for CONFIGURATION.md. */
void slda_conf_print_table(FILE *out, int markdown);
/** Print every table key and then every kafka.* key as key=value (`-X dump`). */
void slda_conf_dump(const slda_conf_t *conf, FILE *out);
/** Number of kafka.* properties; name i (without "kafka.") and value i are
 *  borrowed and live as long as conf is not modified. */
size_t slda_conf_kafka_count(const slda_conf_t *conf);
void slda_conf_kafka_get(const slda_conf_t *conf, size_t i, const char **name,
                         const char **value);
/** @} */

/** @name Documents
 * A document is a bag of (word id, count) pairs with unique word ids.
 * @{ */
#define SLDA_LANG_LEN 4 /* a language code (ISO 639-1, or 639-3) and its NUL */
typedef struct slda_doc_s {
    char *id;          /* owned, NUL-terminated; may be NULL */
    int64_t time_ms;   /* message/document time, 0 if unknown */
    uint32_t npairs;   /* number of distinct words */
    uint32_t ntokens;  /* sum of counts */
    uint32_t *word;    /* npairs word ids (owned) */
    uint32_t *count;   /* npairs counts >= 1 (owned) */
    uint32_t cap;      /* allocated length of word/count */
    char lang[SLDA_LANG_LEN]; /* its language: given with the record or identified from the
                                 text ("de", "zh"; "und": none could be; "": not identified,
                                 as with text.segment=simple and an explicit stop list) */
    char **author;     /* model.kind=atm: its authors' names (owned, NUL-terminated, distinct) */
    uint32_t nauthor;
    char *text;        /* owned, may be NULL: the start of its text (at most SLDA_DOC_SNIPPET
                          bytes, cut at a character), kept by readers when tracking keeps
                          representative documents (track.examples) */
    char *group;       /* owned, may be NULL: its group for tracking (input.group.field: a
                          source, a channel; docs/tracking.md "Groups"), when one is read */
} slda_doc_t;
#define SLDA_DOC_SNIPPET 200

void slda_doc_init(slda_doc_t *doc);
/** Free what doc owns and re-initialise it. */
void slda_doc_clear(slda_doc_t *doc);
void slda_docs_clear(slda_doc_t *docs, size_t n);
/** Add an author's name to doc (copied; a name already there is not added again; at most
 *  SLDA_MAX_DOC_AUTHORS): SLDA_OK, or SLDA_ERR_RANGE when the document has that many. */
slda_err_t slda_doc_add_author(slda_doc_t *doc, const char *name, size_t len);
#define SLDA_MAX_DOC_AUTHORS 64
/** Append count occurrences of word (merging duplicates at the end:
 *  call slda_doc_finish once all words are in). */
void slda_doc_add(slda_doc_t *doc, uint32_t word, uint32_t count);
/** Sort pairs by word id and merge duplicates; sets ntokens (merged counts
 *  and ntokens saturate at UINT32_MAX instead of wrapping). */
void slda_doc_finish(slda_doc_t *doc);
/** SLDA_OK if doc is well formed for a model of W rows: 1..SLDA_MAX_DOC_TOKENS
 *  tokens, ntokens equal to the sum of the counts, every count >= 1, every
 *  word id < W; else SLDA_ERR_RANGE / SLDA_ERR_EMPTY with the reason. */
slda_err_t slda_doc_check(const slda_doc_t *doc, uint32_t W, char *errstr,
                          size_t errstr_size);
/** @} */

/** @name Model
 * @{ */
typedef struct slda_model_s slda_model_t;

/** A new empty model from the engine keys of conf (topics, alpha, eta,
 *  local.*, rho.*, vocab.*, seed, threads). Fixed vocabulary when
 *  vocab.file is set. Returns NULL with errstr set on failure (an impossible
 *  size fails here with SLDA_ERR_NOMEM's text, not mid-stream). */
slda_model_t *slda_model_new(const slda_conf_t *conf, char *errstr, size_t errstr_size);
void slda_model_destroy(slda_model_t *model);

uint32_t slda_model_topics(const slda_model_t *model);
/** Words the model holds: the fixed vocabulary's size, or in an open vocabulary
 *  the words that have reached training and were not evicted (words only
 *  tokenised, e.g. held-out ones, do not count). It is the W of the smoothing
 *  (NZ[k] + W eta) and the number of columns of slda_model_phi. */
uint32_t slda_model_vocab_size(const slda_model_t *model);
/** Updates applied so far (t). */
uint64_t slda_model_updates(const slda_model_t *model);
/** Training documents / tokens absorbed so far. */
uint64_t slda_model_docs(const slda_model_t *model);
uint64_t slda_model_tokens(const slda_model_t *model);
/** The word of id, borrowed until the vocabulary next changes; NULL if unused. */
const char *slda_model_word(const slda_model_t *model, uint32_t id);
/** Id of a (normalised) word, or UINT32_MAX if unknown. */
uint32_t slda_model_word_id(const slda_model_t *model, const char *word, size_t len);
/** Current alpha (K values) into out. */
void slda_model_alpha(const slda_model_t *model, double *out);

typedef struct slda_train_stats_s {
    uint64_t docs, tokens;      /* trained on in this call */
    uint64_t skipped_empty;     /* documents with no tokens, not trained */
    double rho;                 /* step size used */
    double seconds;             /* wall time of the call */
} slda_train_stats_t;

/** One minibatch: local step on every document (global state frozen), then
 *  one global update. Documents are borrowed. thetas (may be NULL) receives
 *  each document's topic mixture, ndocs x K floats. stats may be NULL.
 *  With global.stale=1 (the default) the update is left pending and applied
 *  by the next call, while its local steps run (docs/engine.md, "Threads");
 *  call slda_model_flush before reading, saving or evaluating the model. */
slda_err_t slda_model_train(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_stats_t *stats, char *errstr,
                            size_t errstr_size);
/** Apply the pending global update, if any (returns its rho, else 0). Flushing
 *  is part of the sequence of steps: the same calls at the same points give
 *  the same model, whatever the thread count. */
double slda_model_flush(slda_model_t *model);
/** Train every document still waiting for its second visit (replay=on: each
 *  trained document is trained again later, docs/engine.md "Second visits"),
 *  at the end of a finite input, before slda_model_flush; the waiting
 *  documents are shuffled across the waiting minibatches first (seeded by
 *  seed). */
slda_err_t slda_model_replay_drain(slda_model_t *model, char *errstr, size_t errstr_size);
/** Topic mixture theta (K floats) of doc under the frozen model; seed makes
 *  the sampled part reproducible. */
slda_err_t slda_model_infer(const slda_model_t *model, const slda_doc_t *doc,
                            float *theta, uint64_t seed);
/** The n most probable words of topic k: ids and probabilities phi[w][k].
 *  Returns how many were written (<= n). */
size_t slda_model_top_words(const slda_model_t *model, uint32_t k, size_t n,
                            uint32_t *ids, float *probs);
/** phi[k][w] = (Nphi[w][k]+eta)/(NZ[k]+W eta) for the words held, written
 *  row-major K x slda_model_vocab_size() into out; ids_out (may be NULL)
 *  receives the word id of each column. */
slda_err_t slda_model_phi(const slda_model_t *model, float *out, uint32_t *ids_out);
/** Topic totals NZ[k] (K doubles). */
void slda_model_topic_totals(const slda_model_t *model, double *out);

/** A user label of topic slot k (1..SLDA_LABEL_MAX bytes of UTF-8, no control
 *  characters; NULL or "" removes it): kept in snapshots, dropped when the
 *  engine re-seeds, retires or merges away that slot (docs/tracking.md,
 *  "Labels"). SLDA_ERR_RANGE / SLDA_ERR_INVALID / SLDA_ERR_UTF8 with the reason. */
#define SLDA_LABEL_MAX 120
slda_err_t slda_model_set_label(slda_model_t *model, uint32_t k, const char *text,
                                char *errstr, size_t errstr_size);
/** Topic k's label, borrowed until it is next set; NULL when it has none. */
const char *slda_model_label(const slda_model_t *model, uint32_t k);

/** Topic events (births=true; docs/engine.md "Streams that change"): a birth
 *  re-seeds a slot from documents the model explained poorly, a death retires
 *  a topic whose share of the tokens stayed below births.floor / K, a merge
 *  folds topic `topic` into `other` (Jensen-Shannon divergence below
 *  births.merge) to free `topic` for a birth. Decisions of the global update:
 *  the same seed and input give the same events. */
typedef enum { SLDA_EVENT_BIRTH = 1, SLDA_EVENT_DEATH = 2, SLDA_EVENT_MERGE = 3 } slda_event_kind_t;
typedef struct slda_event_s {
    uint64_t seq;           /* 1, 2, ... in the order they were made */
    uint64_t update;        /* the global update (slda_model_updates) that made it */
    uint64_t doc;           /* documents trained on before that update's minibatch */
    slda_event_kind_t kind;
    uint32_t topic;         /* the slot born, retired, or freed by a merge */
    uint32_t other;         /* merge: the topic that absorbed it; else = topic */
    uint32_t docs;          /* birth: documents it was seeded from */
    double value;           /* birth: held-out gain (nats/token); death: share; merge: JS */
} slda_event_t;
/** Copy up to max events with seq > since into out, oldest first; returns how
 *  many. The model keeps its last 1024 events; none when births=false. */
size_t slda_model_events(const slda_model_t *model, uint64_t since, slda_event_t *out,
                         size_t max);
typedef struct slda_topic_counts_s {
    uint64_t births, deaths, merges;
    uint64_t proposals, rejected; /* birth proposals made / turned down, of which: */
    uint64_t no_cluster, no_gain, no_slot; /* no cluster of 8, gain < births.gain, no slot */
    uint64_t flagged;             /* documents flagged as poorly explained */
} slda_topic_counts_t;
void slda_model_topic_counts(const slda_model_t *model, slda_topic_counts_t *counts);
/** "birth", "death", "merge" (static string). */
const char *slda_event_kind_name(slda_event_kind_t kind);

/** Consumer positions that the model's state includes: for each
 *  (topic, partition) the next offset to read. Stored in snapshots. */
typedef struct slda_offset_s {
    char topic[128];
    int32_t partition;
    int64_t offset;
} slda_offset_t;
slda_err_t slda_model_set_offsets(slda_model_t *model, const slda_offset_t *offs, size_t n);
/** Borrowed array, valid until the next set; *n receives the count. */
const slda_offset_t *slda_model_offsets(const slda_model_t *model, size_t *n);
/** @} */

/** @name Update records (replicas of one model; docs/replication.md)
 *  slda_model_train = slda_update_local + slda_update_apply, bit for bit with
 *  global.stale=0. Replicas that apply the same records in the same order
 *  hold the same model; each names words by string, so vocabularies built in
 *  different orders agree.
 * @{ */
typedef struct slda_update_s slda_update_t;
/** Values of the statistics in an encoded record (update.values). */
typedef enum { SLDA_UPDATE_F32 = 0, SLDA_UPDATE_F16, SLDA_UPDATE_Q8 } slda_update_values_t;
/** Words of one minibatch by string, for replicas: documents made with
 *  slda_update_doc_from_text name their words by index into it and leave the
 *  model's vocabulary alone (it changes only by applying records). */
typedef struct slda_update_scratch_s slda_update_scratch_t;
slda_update_scratch_t *slda_update_scratch_new(void);
/** Forget the words: the next minibatch starts (documents made against the
 *  words forgotten must not be used after). */
void slda_update_scratch_clear(slda_update_scratch_t *scratch);
void slda_update_scratch_destroy(slda_update_scratch_t *scratch);
uint32_t slda_update_scratch_words(const slda_update_scratch_t *scratch);
/** Tokenise text with the model's tokenizer (as slda_doc_from_text) into doc,
 *  whose word ids are scratch indices. The model is only read. */
slda_err_t slda_update_doc_from_text(const slda_model_t *model, slda_update_scratch_t *scratch,
                                     const char *text, size_t len, slda_doc_t *doc,
                                     char *errstr, size_t errstr_size);
/** The local steps of one minibatch against the model as it is (after
 *  slda_model_updates() updates, the record's base), leaving the model as it
 *  was; *out receives the record (caller frees with slda_update_destroy).
 *  scratch NULL: documents over the model's word ids, as slda_model_train
 *  takes them; else documents over scratch's words (replicas: the record then
 *  also counts its words into the vocabulary when applied). revisit: the
 *  documents' second visit (no births inputs). thetas (may be NULL) receives
 *  ndocs x K topic mixtures as slda_model_train's (0 for an empty document).
 *  Documents are borrowed and checked as slda_model_train checks them. */
slda_err_t slda_update_local(slda_model_t *model, const slda_update_scratch_t *scratch,
                             const slda_doc_t *docs, size_t ndocs, int revisit, float *thetas,
                             slda_update_t **out, char *errstr, size_t errstr_size);
/** The global step of one record (a pending update is flushed first). Words
 *  the model does not hold are added (open vocabulary) or refused (fixed). */
slda_err_t slda_update_apply(slda_model_t *model, const slda_update_t *upd, char *errstr,
                             size_t errstr_size);
/** Encode into *buf (malloc'ed, caller frees; *len bytes). */
slda_err_t slda_update_encode(const slda_update_t *upd, slda_update_values_t values, void **buf,
                              size_t *len, char *errstr, size_t errstr_size);
/** Make the statistics sparser before encoding (updates.thin): in each row,
 *  the values under share x the row's sum are rounded, without bias, to 0 or
 *  to one common unit (systematic sampling seeded by the record itself), so
 *  every value's expectation and each row's sum are kept. share 0: nothing
 *  changes; at most 0.5. Encode the record afterwards; every replica, the
 *  writer included, applies the decoded record. */
void slda_update_thin(slda_update_t *upd, double share);
/** Decode len bytes (only read); any defect is refused with SLDA_ERR_CORRUPT,
 *  _TRUNCATED or _VERSION and the reason. *out: caller frees. */
slda_err_t slda_update_decode(const void *buf, size_t len, slda_update_t **out, char *errstr,
                              size_t errstr_size);
void slda_update_destroy(slda_update_t *upd);
/** Input offsets covered, [from, to] per (topic, partition): opaque to the
 *  engine, carried for the Kafka half. topic at most 256 bytes. */
slda_err_t slda_update_add_input(slda_update_t *upd, const char *topic, int32_t partition,
                                 int64_t from, int64_t to);
/** Entry i (if i < the count) into the out-parameters; returns the count. */
size_t slda_update_input(const slda_update_t *upd, size_t i, const char **topic,
                         int32_t *partition, int64_t *from, int64_t *to);
uint64_t slda_update_base(const slda_update_t *upd);   /* updates the local half read */
uint64_t slda_update_tokens(const slda_update_t *upd); /* tokens of the minibatch */
uint32_t slda_update_docs(const slda_update_t *upd);   /* documents trained on */
/** The minibatch statistics: *nslots rows of *K values (borrowed, as long as upd). */
const float *slda_update_stats(const slda_update_t *upd, uint32_t *nslots, uint32_t *K);
/** XXH3 digest of what replicas must agree on: the update index, documents,
 *  tokens, alpha, the topic totals, and every held word's key, frequency and
 *  row, words in key order (so word ids, which are per process, do not
 *  matter). Equal digests: the same model. */
uint64_t slda_model_digest(const slda_model_t *model);
/** "float32" | "float16" | "q8" -> *out; -1 for anything else. */
int slda_update_values_parse(const char *name, slda_update_values_t *out);
/** @} */

/** @name Text
 * @{ */
/** Rebuild the model's tokenizer from conf's text.* keys (stop words, minimum
 *  length, size limit, cleanup rules; docs/text.md). Snapshots record the
 *  rules of the tokenizer in use, and never open a stop-word file named in
 *  them: a model decoded from a snapshot tokenises with the built-in and
 *  inline parts of text.stopwords only, until this is called. The
 *  vocabulary is unchanged. */
slda_err_t slda_model_set_tokenizer(slda_model_t *model, const slda_conf_t *conf, char *errstr,
                                    size_t errstr_size);
/** Tokenise UTF-8 text with the model's tokenizer settings (cleanup rules,
 *  lower-casing, stop words, minimum length) and map the tokens to word ids,
 *  adding new words in open-vocabulary mode (unknown words are dropped in
 *  fixed mode).
 *  doc is (re)initialised. SLDA_ERR_UTF8 / SLDA_ERR_EMPTY on bad input. */
slda_err_t slda_doc_from_text(slda_model_t *model, const char *text, size_t len,
                              slda_doc_t *doc, char *errstr, size_t errstr_size);
/** Same, from already separated tokens (each normalised like text tokens). */
slda_err_t slda_doc_from_tokens(slda_model_t *model, const char *const *tokens,
                                const size_t *lens, size_t n, slda_doc_t *doc,
                                char *errstr, size_t errstr_size);
/** The same two with the document's language given ("de", "zh": ISO 639-1; NULL or "" to
 *  identify it from the text): it is doc->lang and picks text.stopwords=auto's list. */
slda_err_t slda_doc_from_text_lang(slda_model_t *model, const char *text, size_t len,
                                   const char *lang, slda_doc_t *doc, char *errstr,
                                   size_t errstr_size);
slda_err_t slda_doc_from_tokens_lang(slda_model_t *model, const char *const *tokens,
                                     const size_t *lens, size_t n, const char *lang,
                                     slda_doc_t *doc, char *errstr, size_t errstr_size);
/** @} */

/** @name Readers
 * @{ */
typedef enum {
    SLDA_FORMAT_AUTO = 0, /* by file name / first line */
    SLDA_FORMAT_UCI,      /* docword.*.txt with vocab (vocab.file) */
    SLDA_FORMAT_LDAC,     /* lda-c: "N id:count ..." per line, vocab.file */
    SLDA_FORMAT_TEXT,     /* raw text, one document per line */
    SLDA_FORMAT_JSONL,    /* {"id":..,"text":..} or {"id":..,"tokens":[..]} */
    SLDA_FORMAT_CSV,      /* CSV with a header: the columns of input.text.field, ... */
    SLDA_FORMAT_TSV       /* TSV with a header, the same */
} slda_format_t;

typedef struct slda_reader_s slda_reader_t;

/** Open path ("-" = standard input). The reader maps words through model's
 *  vocabulary; model is borrowed for the reader's life. */
slda_reader_t *slda_reader_open(const slda_conf_t *conf, slda_model_t *model,
                                const char *path, slda_format_t format, char *errstr,
                                size_t errstr_size);
/** Read the next document into doc. SLDA_OK, SLDA_ERR_EOF at the end, or an
 *  input error (errstr has "path:line: ..."): the bad record is skipped and
 *  counted, and the next call continues after it. */
slda_err_t slda_reader_next(slda_reader_t *rd, slda_doc_t *doc, char *errstr,
                            size_t errstr_size);
/** Counters: documents read, and records rejected for each error code. */
uint64_t slda_reader_docs(const slda_reader_t *rd);
uint64_t slda_reader_errors(const slda_reader_t *rd, slda_err_t code);
void slda_reader_close(slda_reader_t *rd);
slda_format_t slda_format_parse(const char *name); /* -1 cast if unknown */
/** @} */

/** @name Evaluation
 * @{ */
/** Held-out per-word perplexity by document completion (docs/algorithm.md,
 *  "Evaluation in stream mode"): for each doc, a random half of its tokens
 *  (seeded) folds in theta, the other half is scored. *ntokens_out (may be
 *  NULL) receives the number of scored tokens. */
slda_err_t slda_eval_perplexity(const slda_model_t *model, const slda_doc_t *docs,
                                size_t ndocs, uint64_t seed, double *perplexity,
                                uint64_t *ntokens_out);
/** Document completion with a given split: theta is folded in on obs_docs[j]
 *  and test_docs[j] is scored (same formula as slda_eval_perplexity). With
 *  test_docs NULL, each obs_docs[j] is split at random (that function). */
slda_err_t slda_eval_completion(const slda_model_t *model, const slda_doc_t *obs_docs,
                                const slda_doc_t *test_docs, size_t ndocs, uint64_t seed,
                                double *perplexity, uint64_t *ntokens_out);
/** UMass coherence of each topic's top n words over reference docs; mean
 *  into *mean, per-topic into per_topic (K doubles, may be NULL). */
slda_err_t slda_eval_umass(const slda_model_t *model, const slda_doc_t *docs,
                           size_t ndocs, size_t n, double *mean, double *per_topic);

/** A held-out set: documents kept by word key (XXH3-64 of the word under the
 *  vocabulary's hash seed), not by word id. An open vocabulary evicts its
 *  rarest words when full and reuses their ids, and words seen only in
 *  held-out documents are the rarest, so documents kept as ids across
 *  minibatches end up naming other words. A set looks every key up again
 *  when it is scored; words the model does not hold then (evicted, or never
 *  trained on) are left out and counted, as a fixed vocabulary leaves out the
 *  words it lacks. Use it for any document kept past the next
 *  slda_model_train. */
typedef struct slda_heldout_s slda_heldout_t;
slda_heldout_t *slda_heldout_new(void);
void slda_heldout_destroy(slda_heldout_t *held);
/** Number of documents in the set. */
size_t slda_heldout_count(const slda_heldout_t *held);
/** Store a copy of doc (borrowed; its ids must be those of model's vocabulary
 *  now, i.e. before the next slda_model_train) at slot: slot == count appends,
 *  slot < count replaces that document (reservoir sampling). SLDA_ERR_RANGE for
 *  an id not in the vocabulary or a slot past the end, SLDA_ERR_INVALID for a
 *  model whose hash seed is not the set's. */
slda_err_t slda_heldout_put(slda_heldout_t *held, size_t slot, const slda_model_t *model,
                            const slda_doc_t *doc, char *errstr, size_t errstr_size);
typedef struct slda_heldout_stats_s {
    size_t docs;        /* documents evaluated */
    uint64_t scored;    /* tokens scored */
    uint64_t unseen;    /* tokens of words the model does not hold, left out */
} slda_heldout_stats_t;
/** Document-completion perplexity of obs's documents under model, as
 *  slda_eval_perplexity (test NULL: each split at random) or
 *  slda_eval_completion (theta from obs[j], test[j] scored). stats may be
 *  NULL. SLDA_ERR_EMPTY when nothing could be scored. */
slda_err_t slda_heldout_perplexity(const slda_model_t *model, const slda_heldout_t *obs,
                                   const slda_heldout_t *test, uint64_t seed,
                                   double *perplexity, slda_heldout_stats_t *stats);
/** UMass coherence (slda_eval_umass) over the set's documents. */
slda_err_t slda_heldout_umass(const slda_model_t *model, const slda_heldout_t *held, size_t n,
                              double *mean, double *per_topic);
/** @} */

/** @name Snapshots
 * Format: docs/snapshot-format.md. A regular file (or a symlink's target) is
 * replaced atomically (temp file, fsync, rename, directory fsync); a FIFO,
 * device or "-" (standard output) is written straight; a directory is
 * refused. The same holds for slda_export_npy. Checked with XXH3-64 on load.
 * @{ */
slda_err_t slda_snapshot_write(const slda_model_t *model, const char *path, char *errstr,
                               size_t errstr_size);
/** A new model from a snapshot file; NULL with errstr on failure
 *  (SLDA_ERR_CORRUPT / _VERSION / _TRUNCATED / _IO; *err_out may be NULL). */
slda_model_t *slda_snapshot_read(const char *path, slda_err_t *err_out, char *errstr,
                                 size_t errstr_size);
/** Encode to a malloc'ed buffer (caller frees) / decode from memory. */
slda_err_t slda_snapshot_encode(const slda_model_t *model, void **buf, size_t *len,
                                char *errstr, size_t errstr_size);
slda_model_t *slda_snapshot_decode(const void *buf, size_t len, slda_err_t *err_out,
                                   char *errstr, size_t errstr_size);
/** Optional header fields of a snapshot (docs/snapshot-format.md), written by
 *  the _meta variants and read back by slda_snapshot_read_meta; snapshots
 *  without them (older ones, slda_snapshot_write) read as 0. */
typedef struct slda_snapshot_meta_s {
    int64_t event_ms; /* the service's newest event time seen, ms since the epoch; 0 = none */
} slda_snapshot_meta_t;
/** slda_snapshot_write / _encode with meta (may be NULL) in the header. */
slda_err_t slda_snapshot_write_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                    const char *path, char *errstr, size_t errstr_size);
slda_err_t slda_snapshot_encode_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                     void **buf, size_t *len, char *errstr, size_t errstr_size);
/** slda_snapshot_read, and meta (may be NULL) filled from the header. */
slda_model_t *slda_snapshot_read_meta(const char *path, slda_snapshot_meta_t *meta,
                                      slda_err_t *err_out, char *errstr, size_t errstr_size);
/** K x W float32 phi as a NumPy .npy file (row k = topic k, column = row of
 *  slda_model_phi). */
slda_err_t slda_export_npy(const slda_model_t *model, const char *path, char *errstr,
                           size_t errstr_size);
/** @} */

/** @name Batch mode (the hybrid paper's experiment)
 * @{ */
typedef struct slda_batch_result_s {
    double perplexity;  /* on the withheld 10% of each document's tokens */
    double seconds;
    uint64_t train_tokens, test_tokens;
} slda_batch_result_t;
/** Run `iterations` in-place sweeps of the configured local variant
 *  (local=, local.threshold=) over docs, with 10% of each document's tokens
 *  withheld (seeded). progress (may be NULL) is called every `every`
 *  iterations with the current test perplexity. model.kind=atm: every
 *  document has exactly one author (doc->author; SLDA_ERR_INVALID naming the
 *  document otherwise) and is predicted by its author's mixture;
 *  model.kind=pam: pam.super super-topics, joint (super, sub) updates. */
slda_err_t slda_batch_run(const slda_conf_t *conf, const slda_doc_t *docs, size_t ndocs,
                          uint32_t nwords, uint32_t iterations,
                          void (*progress)(uint32_t iter, double perplexity, void *opaque),
                          uint32_t every, void *opaque, slda_batch_result_t *result,
                          char *errstr, size_t errstr_size);
/** slda_batch_run, then the final state's topic-word counts go into model
 *  (may be NULL): the model the documents were read through, so its
 *  vocabulary names their word ids (K = topics, at least nwords rows). Its
 *  rows become the batch's Nphi and the words with training tokens are held,
 *  so slda_snapshot_write, slda_model_infer and the exports work on it;
 *  updates (t) = iterations, documents, tokens and corpus.tokens = the training part;
 *  ATM: the authors' counts into its author table (authors.capacity must hold
 *  them all); PAM: the learned alpha_x. */
slda_err_t slda_batch_train(slda_model_t *model, const slda_conf_t *conf, const slda_doc_t *docs,
                            size_t ndocs, uint32_t nwords, uint32_t iterations,
                            void (*progress)(uint32_t iter, double perplexity, void *opaque),
                            uint32_t every, void *opaque, slda_batch_result_t *result,
                            char *errstr, size_t errstr_size);
/** @} */

/** @name Service
 * @{ */
typedef struct slda_service_s slda_service_t;
slda_service_t *slda_service_new(const slda_conf_t *conf, char *errstr, size_t errstr_size);
/** slda_service_new, but the start gives up as soon as *stop becomes non-zero
 *  (NULL, errstr saying what it was waiting for). Starting waits for the
 *  brokers: the consumer group to be empty of other instances (up to
 *  session.timeout.ms + 3 s), the transaction coordinator (up to 30 s), the
 *  update log's metadata and offsets (replicas, up to 30 s each); a signal
 *  handler setting *stop ends each wait within about a second. */
slda_service_t *slda_service_start(const slda_conf_t *conf, volatile int *stop, char *errstr,
                                   size_t errstr_size);
/** Runs until *stop becomes non-zero (set it from a signal handler), then
 *  finishes the minibatch, writes a final snapshot, commits and returns.
 *  Setting *stop to SLDA_STOP_NOW (a second signal) while it does so ends its
 *  waits (dead-letter/output deliveries, up to shutdown.timeout.ms; a replica's
 *  catch-up; the final offset commit and, in slda_service_destroy, the
 *  consumer's close: with the brokers down each waits up to the group's session
 *  timeout) at once: the final snapshot is written only if every record was
 *  delivered, nothing is committed past the last snapshot, and it returns
 *  SLDA_ERR_STOPPED when the cut left something undone. stop must stay valid
 *  until slda_service_destroy (which flushes nothing after SLDA_STOP_NOW, and
 *  leaves a consumer whose close it cut to the process's exit). */
#define SLDA_STOP_NOW (-1)
slda_err_t slda_service_run(slda_service_t *svc, volatile int *stop, char *errstr,
                            size_t errstr_size);
void slda_service_destroy(slda_service_t *svc);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* STREAMLDA_H */
