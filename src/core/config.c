/* config.c - the property table and what it drives: set/get, config files, environment, listings.
 *
 * Invariants: every table key always holds a valid value in a conf, because
 * slda_conf_new applies each row's default text through the same parser as
 * slda_conf_set (a default that does not parse is a bug in the table, caught
 * by tests/unit_config.c). String fields are owned and never NULL, except
 * vocab.file, where NULL means "open vocabulary". kafka.* properties live in
 * kafka_names/kafka_values: nkafka owned strings, names without the "kafka."
 * prefix, unique, in the order they were first set. slda_conf_load_file and
 * slda_conf_load_env are all or nothing: they apply to a copy and replace
 * conf only when every setting was accepted. A conf belongs to one thread.
 *
 * Adding a parameter. A field (config.h, in slda_params_t for the engine's)
 * and a row here give a key that slda_conf_set, config files, the
 * environment, -X, `streamlda config` and config/CONFIGURATION.md (regenerate
 * it: streamlda config --markdown) all know. An engine parameter's flags say
 * what snapshots and restores do with it, and the code that reads them
 * iterates this table, so nothing else needs to list it: SLDA_PF_SNAPSHOT
 * stores it in the snapshot's "params" map (io/snapshot_params.c); as older
 * snapshots lack the key, add SLDA_PF_OPTIONAL and the row's absent value,
 * the one that reproduces what they were trained with (NULL: the default),
 * so they still load. Then one restore class (engine/reconcile.c):
 * SLDA_PF_TUNABLE (this run's value applies, logged), SLDA_PF_DEFINING (an
 * explicit value that differs is an error), SLDA_PF_TEXT (the snapshot's
 * unless set explicitly), SLDA_PF_RUN (this run's, silently), or none (the
 * snapshot's value stays). A stored, tunable step-size parameter is thus the
 * field in config.h, a P_DBL row with TUNABLE | SLDA_PF_OPTIONAL and its
 * absent value, and its use in the step's schedule (engine/step.c).
 */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* A slda_params_t can stand for a conf in slda_prop_set/_get/_copy on the p.* rows. */
_Static_assert(offsetof(struct slda_conf_s, p) == 0, "params first in a conf");
/* Enum fields are written through int pointers. */
_Static_assert(sizeof(slda_alpha_learn_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_stats_kind_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_rows_kind_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_infmt_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_vb_kind_t) == sizeof(int), "enum size");

#define KAFKA_PREFIX "kafka."
#define KAFKA_PREFIX_LEN 6
#define ENV_PREFIX "SLDA_"
#define ENV_KAFKA_PREFIX "SLDA_KAFKA_"
#define MAX_SUGGEST_DIST 2 /* "did you mean": at most this many edits away */

/* ---- the table ---- */

static const char *const alpha_learn_values[] = {"off", "fixedpoint", "newton", NULL};
/* cgs, each variant alone, each variant with +cgs (config.h's list) */
#define LOCAL_ALONE(id, name) #name,
#define LOCAL_HYBRID(id, name) #name "+cgs",
static const char *const local_values[] = {"cgs", SLDA_VB_VARIANTS(LOCAL_ALONE)
                                           SLDA_VB_VARIANTS(LOCAL_HYBRID) NULL};
static const char *const stats_values[] = {"rb", "sample", NULL};
static const char *const replay_values[] = {"auto", "on", "off", NULL};
static const char *const rows_values[] = {"counts", "decay", NULL};
static const char *const stopwords_values[] = {"none", "smart", "snowball", "onix", NULL};
#define INFMT_NAME(id, name) #name,
static const char *const infmt_values[] = {"auto", SLDA_INPUT_FORMATS(INFMT_NAME) NULL};
#undef INFMT_NAME
static const char *const update_values[] = {"float32", "float16", "q8", NULL};
static const char *const bool_values[] = {"false", "true", NULL};
/* text.* cleanup rules: the order is slda_text_rules_t's (slda_int.h), default first. */
static const char *const urls_values[] = {"drop", "keep", NULL};
static const char *const html_values[] = {"decode", "keep", NULL};
static const char *const mentions_values[] = {"drop", "keep", NULL};
static const char *const hashtags_values[] = {"keep", "drop", NULL};
static const char *const apostrophes_values[] = {"keep", "split", NULL};
static const char *const digits_values[] = {"drop", "mixed", "keep", "split", NULL};
static const char *const track_window_values[] = {"minute", "hour", "day", "week", NULL};

#define OFF(field) offsetof(struct slda_conf_s, field)
#define ROW(name_, type_, field, def_, lo, hi, values_, flags_, absent_, desc_)              \
    {.name = name_, .type = type_, .offset = OFF(field), .def = def_, .min = lo, .max = hi,   \
     .values = values_, .flags = flags_, .absent = absent_, .desc = desc_}
#define NUM(name, type, field, def, lo, hi, flags, desc)                                   \
    ROW(name, type, field, def, lo, hi, NULL, flags, NULL, desc)
#define UINT(name, field, def, lo, hi, desc) NUM(name, SLDA_PT_UINT, field, def, lo, hi, 0, desc)
#define DBL(name, field, def, lo, hi, flags, desc)                                         \
    NUM(name, SLDA_PT_DOUBLE, field, def, lo, hi, flags, desc)
#define STR(name, field, def, flags, desc)                                                 \
    ROW(name, SLDA_PT_STRING, field, def, 0, 0, NULL, flags, NULL, desc)
#define ENUM(name, field, def, values, desc)                                               \
    ROW(name, SLDA_PT_ENUM, field, def, 0, 0, values, 0, NULL, desc)
#define BOOL(name, field, def, desc) ROW(name, SLDA_PT_BOOL, field, def, 0, 0, NULL, 0, NULL, desc)
/* Engine parameters (p.*) with their snapshot and restore flags (SLDA_PF_*, config.h) and, for
 * keys stored since after snapshots began, the value an older snapshot means (absent). */
#define P_UINT(name, field, def, lo, hi, flags, absent, desc)                              \
    ROW(name, SLDA_PT_UINT, p.field, def, lo, hi, NULL, flags, absent, desc)
#define P_DBL(name, field, def, lo, hi, flags, absent, desc)                               \
    ROW(name, SLDA_PT_DOUBLE, p.field, def, lo, hi, NULL, flags, absent, desc)
#define P_ENUM(name, field, def, values, flags, absent, desc)                              \
    ROW(name, SLDA_PT_ENUM, p.field, def, 0, 0, values, flags, absent, desc)
#define P_BOOL(name, field, def, flags, absent, desc)                                      \
    ROW(name, SLDA_PT_BOOL, p.field, def, 0, 0, NULL, flags, absent, desc)
/* Flag sets of the kinds of stored parameters (config.h), and of the births group. */
#define DEFINING (SLDA_PF_SNAPSHOT | SLDA_PF_DEFINING)
#define TUNABLE (SLDA_PF_SNAPSHOT | SLDA_PF_TUNABLE)
#define TOKENIZER (SLDA_PF_SNAPSHOT | SLDA_PF_TEXT)
#define BIRTHS (SLDA_PF_SNAPSHOT | SLDA_PF_OPTIONAL | SLDA_PF_RUN)

static const slda_prop_t props[] = {
    /* model */
    P_UINT("topics", topics, "100", 1, SLDA_MAX_TOPICS, DEFINING, NULL, "Number of topics K."),
    P_DBL("alpha", alpha, "0.1", 0, INFINITY, SLDA_PF_MIN_OPEN | TUNABLE, NULL,
          "Initial symmetric Dirichlet prior alpha_k on each document's topic mixture."),
    P_DBL("eta", eta, "0.1", 0, INFINITY, SLDA_PF_MIN_OPEN | DEFINING, NULL,
          "Symmetric Dirichlet prior eta on each topic's word distribution (fixed)."),
    P_ENUM("alpha.learn", alpha_learn, "off", alpha_learn_values, TUNABLE, NULL,
           "Re-estimation of alpha after each minibatch: off keeps it fixed; fixedpoint (Minka) or "
           "newton estimate it from the minibatch and blend it in with step rho_t."),
    /* local step */
    ROW("local", SLDA_PT_LOCAL, p.vb, "cvb0+cgs", 0, 0, local_values, TUNABLE, NULL,
        "Per-document inference: cgs samples every token; cvb0, cvb and svb are collapsed "
        "variational (zero order, second order, standard VB); the +cgs hybrids sample the words "
        "that occur at most local.threshold times in the document and use the variational update "
        "for the rest."),
    P_UINT("local.threshold", threshold, "1", 0, 1000000, TUNABLE, NULL,
           "Threshold r of the +cgs hybrids: word-document pairs with count <= r are sampled; "
           "ignored by the other variants."),
    P_UINT("local.burnin", burnin, "5", 0, 1000, TUNABLE, NULL,
           "Burn-in sweeps over each document before statistics are collected."),
    P_UINT("local.samples", samples, "5", 1, 1000, TUNABLE, NULL,
           "Collection sweeps averaged into each document's statistics and topic mixture."),
    P_DBL("local.tolerance", tolerance, "0", 0, 1, TUNABLE, NULL,
          "End burn-in early once the document's topic counts change by less than this per token "
          "(mean absolute change); 0 = always run all burn-in sweeps."),
    P_ENUM("local.stats", stats, "rb", stats_values, TUNABLE, NULL,
           "What sampled tokens contribute to the statistics: rb = their sampling distributions "
           "(Rao-Blackwellised), sample = the one-hot samples."),
    /* schedule */
    P_DBL("rho.s", rho_s, "1", 0, 1e6, SLDA_PF_MIN_OPEN | TUNABLE, NULL,
          "Scale s of the step size rho_t = max(rho.min, s (tau + t)^-kappa) of update t."),
    P_DBL("rho.tau", rho_tau, "1", 0, 1e9, TUNABLE, NULL,
          "Delay tau of the step size; larger values make the first updates smaller."),
    P_DBL("rho.kappa", rho_kappa, "0.7", 0.5, 1, TUNABLE, NULL,
          "Forgetting rate kappa of the step size: the larger, the faster the steps shrink and the "
          "sooner the model settles."),
    P_DBL("rho.min", rho_min, "0", 0, 1, TUNABLE, NULL,
          "Floor of the step size; above 0 the model keeps forgetting old documents and tracks "
          "drifting topics."),
    /* global.rows stays the snapshot's on restore; older snapshots had the plain step */
    P_ENUM("global.rows", rows, "counts", rows_values, SLDA_PF_SNAPSHOT | SLDA_PF_OPTIONAL,
           "decay",
           "Row totals of the global step: counts keeps each word's total at its running token "
           "count (scaled to C) and moves only its split over topics by rho_t; decay moves the "
           "whole row by rho_t and decays absent words (the plain SVI step)."),
    P_UINT("global.stale", stale, "1", 0, 1, TUNABLE | SLDA_PF_OPTIONAL, "0",
           "Updates the local steps may lag behind: 1 = a minibatch's global update is applied "
           "while the next minibatch's local steps run (they see the model one update old, for "
           "any thread count: results stay bit-identical across threads); 0 = each update before "
           "the next minibatch starts."),
    P_DBL("corpus.tokens", corpus_tokens, "0", 0, INFINITY, TUNABLE, NULL,
          "Tokens C the model stands for (each minibatch's statistics are scaled to C); 0 = the "
          "training set's size when known, else 1000000."),
    /* births, retirement and merges of topics (src/engine/births.c, docs/engine.md): stored
     * for readers without a configuration, a restore takes them from its own */
    P_BOOL("births", births, "true", BIRTHS, NULL,
           "Give documents the topics explain poorly a topic of their own: re-seed a free, dead or "
           "merged slot from them when it predicts them better (births.gain); retire dead topics."),
    P_UINT("births.docs", births_docs, "64", 8, 100000, BIRTHS | SLDA_PF_BIRTHS_ONLY, NULL,
           "Poorly explained documents buffered before a birth is proposed."),
    P_DBL("births.z", births_z, "1.5", 0, 100, BIRTHS | SLDA_PF_BIRTHS_ONLY, NULL,
          "A document is poorly explained when its per-token log-likelihood is this many "
          "standard deviations below the running baseline."),
    P_DBL("births.gain", births_gain, "0.08", 0, 100, BIRTHS | SLDA_PF_BIRTHS_ONLY, NULL,
          "Held-out nats per token a proposed topic must gain on the documents it was not built "
          "from for the birth to be kept."),
    P_DBL("births.floor", births_floor, "0.05", 0, 1, BIRTHS | SLDA_PF_BIRTHS_ONLY, NULL,
          "A topic whose decayed share of the tokens stays below births.floor / K is retired."),
    P_DBL("births.merge", births_merge, "0.3", 0, 1, BIRTHS | SLDA_PF_BIRTHS_ONLY, NULL,
          "Two topics closer than this Jensen-Shannon divergence (nats) are merged to free a slot "
          "for a birth."),
    /* second visits: not stored (the documents waiting are not), always this run's */
    P_ENUM("replay", replay, "auto", replay_values, SLDA_PF_RUN, NULL,
           "Second visits: train each document again once the model has seen about as many "
           "documents again as before it (at most replay.docs later; in streamlda train, after "
           "the whole input when all its documents fit in replay.docs), its first visit with half "
           "of local.burnin and local.samples, the second with replay.burnin + replay.samples. "
           "auto = on in streamlda train (the documents still waiting are visited at the end of "
           "the input, shuffled), off in the service and the library (waiting documents are not in "
           "snapshots, so a restart could not reproduce the run); off = one visit, all sweeps."),
    P_UINT("replay.docs", replay_docs, "20000", 0, 100000000, SLDA_PF_RUN, NULL,
           "Documents waiting for their second visit at most (kept in memory as word keys and "
           "counts); 0 = off. streamlda train keeps every document until the end of its input "
           "when they all fit (all passes counted)."),
    P_UINT("replay.burnin", replay_burnin, "2", 0, 1000, SLDA_PF_RUN, NULL,
           "Burn-in sweeps of a document's second visit (replay)."),
    P_UINT("replay.samples", replay_samples, "1", 1, 1000, SLDA_PF_RUN, NULL,
           "Collection sweeps of a document's second visit (replay)."),
    P_DBL("init.scale", init_scale, "1", 0, INFINITY, TUNABLE, NULL,
          "Mean of the random initial topic-word counts that break the symmetry between topics; "
          "0 starts from zero counts."),
    /* vocabulary and text */
    P_UINT("vocab.capacity", vocab_capacity, "131072", 16, 268435456, DEFINING, NULL,
           "Vocabulary rows W in open-vocabulary mode; when all are in use the rarest words are "
           "evicted."),
    ROW("vocab.file", SLDA_PT_STRING, p.vocab_file, "", 0, 0, NULL,
        SLDA_PF_EMPTY_NULL | DEFINING, NULL,
        "Fixed vocabulary file, one word a line; other words are dropped. Empty = an open "
        "vocabulary grown from the input."),
    ROW("seed", SLDA_PT_UINT64, p.seed, "42", 0, 0, NULL, DEFINING, NULL,
        "Seed of the random initialisation and sampling; the same seed and input give the same "
        "model."),
    P_UINT("threads", threads, "1", 1, 256, TUNABLE, NULL,
           "Worker threads for tokenising text, parsing UCI files, the local steps and, "
           "overlapped with them, the global step (global.stale); the model is the same for any "
           "thread count. More threads than the CPUs the process may run on are slower than as "
           "many (they then wait blocked instead of polling: docs/engine.md \"Threads\")."),
    ROW("text.stopwords", SLDA_PT_STRING, p.stopwords, "smart", 0, 0, stopwords_values,
        SLDA_PF_NONEMPTY | SLDA_PF_OR_PATH | TOKENIZER, NULL,
        "Stop words removed from text: none, one of the built-in lists smart, snowball or onix, "
        "the path of a file with one word a line, or several of these joined by + (smart+FILE); "
        "a part with a comma is a list of words (smart+rt,via); a leading + adds to the default "
        "list (+FILE, +amp,)."),
    P_UINT("text.min.length", min_length, "3", 1, 64, TOKENIZER, NULL,
           "Tokens shorter than this many characters are dropped."),
    P_UINT("text.max.bytes", max_doc_bytes, "1048576", 0, 2147483648.0, TOKENIZER, NULL,
           "Documents longer than this many bytes are rejected; 0 = no limit."),
    /* the cleanup rules: older snapshots were made without them (keep, split) */
    P_ENUM("text.urls", text.urls, "drop", urls_values, TOKENIZER | SLDA_PF_OPTIONAL, "keep",
           "URLs (http://, https://, ftp://, www.) and e-mail addresses: drop removes them "
           "before tokenizing; keep tokenizes them like other text (https, com, ...)."),
    P_ENUM("text.html", text.html, "decode", html_values, TOKENIZER | SLDA_PF_OPTIONAL, "keep",
           "HTML in text: decode turns character references (&amp; &lt; &#39; &#x2019; &nbsp; "
           "...) into their characters and removes tags (<b>, </p>, <!-- -->); keep leaves both "
           "as text (amp, quot, ...)."),
    P_ENUM("text.mentions", text.mentions, "drop", mentions_values,
           TOKENIZER | SLDA_PF_OPTIONAL, "keep",
           "@mentions (@user): drop removes them; keep keeps the name as a word."),
    P_ENUM("text.hashtags", text.hashtags, "keep", hashtags_values,
           TOKENIZER | SLDA_PF_OPTIONAL, "keep",
           "#hashtags: keep makes #debt the word debt; drop removes them."),
    P_ENUM("text.apostrophes", text.apostrophes, "keep", apostrophes_values,
           TOKENIZER | SLDA_PF_OPTIONAL, "split",
           "Apostrophes (' and U+2019) between letters: keep makes don't one token and removes a "
           "final possessive 's (obama's -> obama); split cuts words there (don, t)."),
    P_ENUM("text.digits", text.digits, "drop", digits_values, TOKENIZER | SLDA_PF_OPTIONAL,
           "split",
           "Tokens with digits are kept whole or dropped whole: drop removes every token with a "
           "digit (2024, abc123); mixed keeps those with a letter (abc123, mp3); keep keeps all; "
           "split cuts tokens at digits (abc123 -> abc), as snapshots made before this rule did."),
    /* training */
    UINT("minibatch.docs", minibatch_docs, "16", 1, 1000000,
         "Documents per minibatch; each minibatch makes one global update."),
    UINT("minibatch.ms", minibatch_ms, "1000", 1, 3600000,
         "A minibatch that is not full is closed after this many milliseconds (stream input)."),
    UINT("heldout.modulo", heldout_modulo, "0", 0, 4294967295.0,
         "Documents whose XXH3(id) % m == 0 are held out of training to measure perplexity; "
         "0 = none (1 would hold out every document)."),
    UINT("progress.ms", progress_ms, "2000", 0, 86400000,
         "Milliseconds between progress lines on standard error while training; 0 = off."),
    /* service */
    STR("model.name", model_name, "streamlda", SLDA_PF_NONEMPTY | SLDA_PF_NAME,
        "Name of the model, stored in snapshots and reported in metrics: 1 to 100 of "
        "A-Z a-z 0-9 . _ - (not starting with . or -), as it names snapshot files, metric "
        "labels and Kafka keys."),
    STR("input.topics", input_topics, "documents", SLDA_PF_NONEMPTY | SLDA_PF_TOPICS,
        "Kafka topics to read documents from, comma separated."),
    ENUM("input.format", input_format, "auto", infmt_values,
         "Format of input message values: text, json ({\"id\", \"text\" or \"tokens\"}), "
         "msgpack (a map with the same fields), or auto to detect it for each message."),
    UINT("input.max.bytes", input_max_bytes, "1048576", 0, 2147483648.0,
         "Input messages longer than this many bytes are rejected; 0 = no limit."),
    STR("snapshot.dir", snapshot_dir, "snapshots", SLDA_PF_NONEMPTY,
        "Directory of the snapshot files."),
    UINT("snapshot.keep", snapshot_keep, "3", 1, 1000,
         "Number of newest snapshot files kept in snapshot.dir; older ones are deleted."),
    UINT("snapshot.every.batches", snapshot_every_batches, "100", 0, 4294967295.0,
         "Write a snapshot after this many minibatches; 0 = off."),
    UINT("snapshot.every.ms", snapshot_every_ms, "60000", 0, 4294967295.0,
         "Write a snapshot once this many milliseconds have passed since the last one; 0 = off."),
    STR("snapshot.topic", snapshot_topic, "streamlda.snapshots", SLDA_PF_TOPICS,
        "Kafka topic each snapshot is also published to, in chunks; empty = off."),
    UINT("snapshot.chunk.bytes", snapshot_chunk_bytes, "900000", 1024, 100000000,
         "Largest chunk of a snapshot on snapshot.topic; the default fits consumers with "
         "Kafka's default 1 MB message limit."),
    STR("output.topic", output_topic, "", SLDA_PF_TOPICS,
        "Kafka topic receiving each trained document's topic mixture; empty = off."),
    UINT("output.top", output_top, "5", 1, 100,
         "Most probable topics listed per document on output.topic."),
    STR("deadletter.topic", deadletter_topic, "streamlda.deadletter",
        SLDA_PF_NONEMPTY | SLDA_PF_TOPICS,
        "Kafka topic receiving input messages that cannot be decoded or tokenised, with the "
        "reason."),
    NUM("http.port", SLDA_PT_INT, http_port, "-1", -1, 65535, 0,
        "Port of the HTTP endpoint serving /metrics and /healthz; -1 = off, 0 = any free port."),
    UINT("status.ms", status_ms, "5000", 0, 86400000,
         "Milliseconds between status lines on standard error while running; 0 = off."),
    BOOL("snapshot.fresh", snapshot_fresh, "false",
         "Start a new model even though snapshot.dir holds snapshots of model.name and none of "
         "them loads (they are left in place); without it the service refuses to start."),
    UINT("shutdown.timeout.ms", shutdown_timeout_ms, "10000", 0, 3600000,
         "On SIGTERM, how long the service waits for undelivered dead-letter/output records "
         "before it exits without a final snapshot (nothing is lost: their offsets stay "
         "uncommitted)."),
    UINT("health.stall.ms", health_stall_ms, "10000", 100, 86400000,
         "/healthz turns 503 when records stay undelivered, consumption stays paused, or "
         "lagging partitions yield no message for this many milliseconds."),
    /* replicas (docs/replication.md) */
    STR("updates.topic", updates_topic, "", SLDA_PF_TOPICS,
        "Kafka topic (one partition) of the replicated update log: instances of model.name with "
        "it share the input partitions and all hold the same model; empty = one instance."),
    UINT("updates.staleness", updates_staleness, "1", 0, 1000,
         "Replicas: records this instance published that it may not have applied yet when it "
         "starts a minibatch (0 = wait for each to come back through the log)."),
    ENUM("updates.values", updates_values, "float32", update_values,
         "Replicas: encoding of the statistics in update records: float32 (exact), float16 or "
         "q8 (smaller records, see docs/replication.md for their perplexity cost)."),
    BOOL("updates.prune", updates_prune, "true",
         "Replicas: the snapshot writer deletes update records older than the oldest snapshot it "
         "keeps (Kafka DeleteRecords); false leaves the log to the topic's retention."),
    /* tracking (docs/tracking.md) */
    STR("input.time.field", input_time_field, "", 0,
        "JSON field holding each document's event time (ISO 8601 or epoch seconds/ms); empty = "
        "the message timestamp."),
    BOOL("track", track, "true",
         "Track topics over event time: prevalence windows, drift and events at each snapshot, "
         "the live page at / of http.port."),
    ENUM("track.window", track_window, "hour", track_window_values,
         "Width of a prevalence window of event time: minute, hour, day or week."),
    UINT("track.windows", track_windows, "168", 2, 100000,
         "Prevalence windows kept (a ring); older documents are dropped from the prevalence."),
    NUM("track.warmup.docs", SLDA_PT_UINT64, track_warmup_docs, "1000", 0, 0, 0,
        "Documents trained before the model counts as settled: earlier output records carry "
        "\"warmup\": true and no drift events are raised."),
    DBL("track.change.js", track_change_js, "0.5", 0, 1, 0,
        "A topic whose Jensen-Shannon distance to the previous snapshot is at least this raises a "
        "change event."),
    DBL("track.birth.js", track_birth_js, "0.8", 0, 1, 0,
        "A birth (a slot taken over) needs at least this Jensen-Shannon distance ..."),
    UINT("track.birth.keep", track_birth_keep, "3", 0, 10,
         "... and at most this many of the previous top 10 words still in the top 10."),
    DBL("track.merge.js", track_merge_js, "0.3", 0, 1, 0,
        "Two topics closer than this Jensen-Shannon distance raise a merge event."),
    DBL("track.death.floor", track_death_floor, "0.002", 0, 1, 0,
        "A topic whose share of the documents stays below this ..."),
    UINT("track.death.windows", track_death_windows, "3", 1, 1000,
         "... for this many windows raises a death event."),
    UINT("track.trend.windows", track_trend_windows, "4", 2, 256,
         "Windows over which a topic's share is fitted by a line for emerging/fading (no flag before there are this many)."),
    DBL("track.trend.slope", track_trend_slope, "0.02", 0, 1, SLDA_PF_MIN_OPEN,
        "A slope of at least this share per window flags a topic emerging (at most minus it: "
        "fading)."),
    STR("track.events.topic", track_events_topic, "", SLDA_PF_TOPICS,
        "Kafka topic receiving each topic event (birth, death, merge, change, and the engine's) "
        "as a JSON record keyed by model/topic; empty = off."),
};

#define NPROPS (sizeof props / sizeof props[0])
_Static_assert(NPROPS <= SLDA_CONF_MAX_PROPS, "raise SLDA_CONF_MAX_PROPS");

const slda_prop_t *slda_conf_props(size_t *n)
{
    *n = NPROPS;
    return props;
}

const slda_prop_t *slda_conf_prop_find(const char *name)
{
    for (size_t i = 0; i < NPROPS; i++)
        if (strcmp(props[i].name, name) == 0)
            return &props[i];
    return NULL;
}

const char *slda_prop_type_name(slda_prop_type_t type)
{
    switch (type) {
    case SLDA_PT_INT: return "int";
    case SLDA_PT_UINT: return "uint";
    case SLDA_PT_UINT64: return "uint64";
    case SLDA_PT_DOUBLE: return "double";
    case SLDA_PT_STRING: return "string";
    case SLDA_PT_ENUM:
    case SLDA_PT_LOCAL: return "enum";
    case SLDA_PT_BOOL: return "bool";
    }
    return "?";
}

/* ---- local step names ---- */

#define LOCAL_NAME(id, name) {#name, SLDA_VB_##id, 0},
#define LOCAL_NAME_HYBRID(id, name) {#name "+cgs", SLDA_VB_##id, 1},
static const struct {
    const char *name;
    slda_vb_kind_t vb;
    int hybrid;
} local_names[] = {
    {"cgs", SLDA_VB_NONE, 0},
    SLDA_VB_VARIANTS(LOCAL_NAME) SLDA_VB_VARIANTS(LOCAL_NAME_HYBRID)
};

int slda_local_parse(const char *name, slda_vb_kind_t *vb, int *hybrid)
{
    for (size_t i = 0; i < sizeof local_names / sizeof local_names[0]; i++) {
        if (strcasecmp(name, local_names[i].name) == 0) {
            *vb = local_names[i].vb;
            *hybrid = local_names[i].hybrid;
            return 1;
        }
    }
    return 0;
}

const char *slda_local_name(slda_vb_kind_t vb, int hybrid)
{
    if (vb == SLDA_VB_NONE)
        return "cgs"; /* every token is sampled: "hybrid" means nothing */
    for (size_t i = 0; i < sizeof local_names / sizeof local_names[0]; i++)
        if (local_names[i].vb == vb && local_names[i].hybrid == (hybrid != 0))
            return local_names[i].name;
    return "invalid";
}

/* ---- params ---- */

static char *strdup_or_null(const char *s)
{
    return s ? slda_xstrdup(s) : NULL;
}

void slda_params_copy(slda_params_t *dst, const slda_params_t *src)
{
    *dst = *src;
    dst->vocab_file = strdup_or_null(src->vocab_file);
    dst->stopwords = strdup_or_null(src->stopwords);
}

void slda_params_clear(slda_params_t *p)
{
    if (!p)
        return;
    free(p->vocab_file);
    free(p->stopwords);
    p->vocab_file = NULL;
    p->stopwords = NULL;
}

/* ---- parsing and formatting one value ---- */

static void *field_of(const slda_prop_t *prop, void *base)
{
    return (char *)base + prop->offset;
}

static void fmt_double(double v, char *buf, size_t n)
{
    /* Shortest of the two precisions that reads back as the same double. */
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, n, "%.17g", v);
}

static int join_values(const char *const *values, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; values[i]; i++)
        len += snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s",
                        i ? ", " : "", values[i]);
    return (int)len;
}

/* The accepted values of a row as text, e.g. "0.5..1", "> 0", "off, fixedpoint, newton". */
static void range_text(const slda_prop_t *prop, char *buf, size_t n)
{
    char lo[40], hi[40];
    switch (prop->type) {
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
        snprintf(buf, n, "%.0f..%.0f", prop->min, prop->max);
        return;
    case SLDA_PT_UINT64:
        snprintf(buf, n, "0..%llu", (unsigned long long)UINT64_MAX);
        return;
    case SLDA_PT_DOUBLE:
        fmt_double(prop->min, lo, sizeof lo);
        fmt_double(prop->max, hi, sizeof hi);
        if (isinf(prop->max))
            snprintf(buf, n, "%s %s", prop->flags & SLDA_PF_MIN_OPEN ? ">" : ">=", lo);
        else if (prop->flags & SLDA_PF_MIN_OPEN)
            snprintf(buf, n, "> %s and <= %s", lo, hi);
        else
            snprintf(buf, n, "%s..%s", lo, hi);
        return;
    case SLDA_PT_STRING:
        if (prop->values) {
            size_t len = (size_t)join_values(prop->values, buf, n);
            if (prop->flags & SLDA_PF_OR_PATH && len < n)
                snprintf(buf + len, n - len, ", a path, or parts joined by +");
        } else {
            snprintf(buf, n, "%s", prop->flags & SLDA_PF_NONEMPTY ? "non-empty" : "any");
        }
        return;
    case SLDA_PT_ENUM:
    case SLDA_PT_LOCAL:
        join_values(prop->values, buf, n);
        return;
    case SLDA_PT_BOOL:
        join_values(bool_values, buf, n);
        return;
    }
}

static slda_err_t out_of_range(const slda_prop_t *prop, const char *value, char *errstr,
                               size_t errstr_size)
{
    char range[160];
    range_text(prop, range, sizeof range);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" out of range %s", prop->name, value, range);
}

static slda_err_t not_a(const slda_prop_t *prop, const char *value, const char *what,
                        char *errstr, size_t errstr_size)
{
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" is not %s", prop->name, value, what);
}

/* A whole-string decimal integer: 1, 0 if it is not one, -1 if it overflows. */
static int parse_ll(const char *s, long long *out)
{
    char *end;
    if (!(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
        return 0; /* strtoll would skip leading blanks */
    errno = 0;
    *out = strtoll(s, &end, 10);
    if (end == s || *end)
        return 0;
    return errno == ERANGE ? -1 : 1;
}

static slda_err_t set_integer(const slda_prop_t *prop, void *field, const char *value,
                              char *errstr, size_t errstr_size)
{
    long long v;
    int ok = parse_ll(value, &v);
    if (ok == 0)
        return not_a(prop, value, "an integer", errstr, errstr_size);
    if (ok < 0 || (double)v < prop->min || (double)v > prop->max)
        return out_of_range(prop, value, errstr, errstr_size);
    if (prop->type == SLDA_PT_INT)
        *(int32_t *)field = (int32_t)v;
    else
        *(uint32_t *)field = (uint32_t)v;
    return SLDA_OK;
}

static slda_err_t set_uint64(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char *end;
    unsigned long long v;
    if (!(isdigit((unsigned char)*value) || *value == '+'))
        return *value == '-' && isdigit((unsigned char)value[1])
                   ? out_of_range(prop, value, errstr, errstr_size)
                   : not_a(prop, value, "an integer", errstr, errstr_size);
    errno = 0;
    v = strtoull(value, &end, 10);
    if (end == value || *end)
        return not_a(prop, value, "an integer", errstr, errstr_size);
    if (errno == ERANGE)
        return out_of_range(prop, value, errstr, errstr_size);
    *(uint64_t *)field = v;
    return SLDA_OK;
}

static slda_err_t set_double(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char *end;
    double v;
    if (!*value || !(isdigit((unsigned char)*value) || strchr("+-.", *value)))
        return not_a(prop, value, "a number", errstr, errstr_size);
    v = strtod(value, &end);
    if (end == value || *end)
        return not_a(prop, value, "a number", errstr, errstr_size);
    if (!isfinite(v))
        return not_a(prop, value, "a finite number", errstr, errstr_size);
    if (prop->flags & SLDA_PF_MIN_OPEN ? !(v > prop->min) : !(v >= prop->min))
        return out_of_range(prop, value, errstr, errstr_size);
    if (v > prop->max)
        return out_of_range(prop, value, errstr, errstr_size);
    *(double *)field = v;
    return SLDA_OK;
}

static int name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int slda_conf_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SLDA_NAME_MAX || name[0] == '.' || name[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)name[i]))
            return 0;
    return 1;
}

/* Kafka's rule for a topic name: 1..249 of [A-Za-z0-9._-], not "." or "..". */
static int topic_valid(const char *s, size_t n)
{
    if (n == 0 || n > 249 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* value with control and non-ASCII bytes shown as \xNN (at most size-1 bytes). */
static const char *printable(const char *value, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)value; *p && o + 5 < size; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
    }
    out[o] = '\0';
    return out;
}

/* SLDA_PF_NAME and SLDA_PF_TOPICS: the value's characters and lengths. */
static slda_err_t check_names(const slda_prop_t *prop, const char *value, char *errstr,
                              size_t errstr_size)
{
    char shown[160];
    if (prop->flags & SLDA_PF_NAME && !slda_conf_name_valid(value))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": \"%s\" is not a name: 1 to %d of A-Z a-z 0-9 . _ - "
                            "(not starting with . or -), as it names files, metrics and Kafka keys",
                            prop->name, printable(value, shown, sizeof shown), SLDA_NAME_MAX);
    if (prop->flags & SLDA_PF_TOPICS) {
        for (const char *p = value; *value;) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            if (!topic_valid(p, n))
                return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                    "property \"%s\": \"%s\" is not a Kafka topic name "
                                    "(1 to 249 of A-Z a-z 0-9 . _ -, comma separated)",
                                    prop->name, printable(value, shown, sizeof shown));
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    return SLDA_OK;
}

static slda_err_t set_string(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char **slot = field;
    if (!*value && prop->flags & SLDA_PF_NONEMPTY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": value must not be empty", prop->name);
    slda_err_t err = check_names(prop, value, errstr, errstr_size);
    if (err)
        return err;
    free(*slot);
    *slot = !*value && prop->flags & SLDA_PF_EMPTY_NULL ? NULL : slda_xstrdup(value);
    if (*value == '+' && prop->flags & SLDA_PF_OR_PATH) {
        /* "+x" adds to the default list: stored as "<default>+x", so a
         * snapshot keeps its meaning if the default ever changes. */
        size_t n = strlen(prop->def) + strlen(value) + 1;
        free(*slot);
        *slot = slda_xmalloc(n);
        snprintf(*slot, n, "%s%s", prop->def, value);
    }
    return SLDA_OK;
}

/* Index of value in a NULL-terminated list (case-insensitive), or -1. */
static int find_value(const char *const *values, const char *value)
{
    for (int i = 0; values[i]; i++)
        if (strcasecmp(values[i], value) == 0)
            return i;
    return -1;
}

static slda_err_t not_one_of(const slda_prop_t *prop, const char *const *values,
                             const char *value, char *errstr, size_t errstr_size)
{
    char list[160];
    join_values(values, list, sizeof list);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" is not one of %s", prop->name, value, list);
}

static slda_err_t set_choice(const slda_prop_t *prop, void *base, const char *value,
                             char *errstr, size_t errstr_size)
{
    const char *const *values = prop->type == SLDA_PT_BOOL ? bool_values : prop->values;
    int i = find_value(values, value);
    if (i < 0)
        return not_one_of(prop, values, value, errstr, errstr_size);
    if (prop->type == SLDA_PT_LOCAL) {
        struct slda_conf_s *conf = base;
        slda_local_parse(values[i], &conf->p.vb, &conf->p.hybrid);
    } else {
        *(int *)field_of(prop, base) = i;
    }
    return SLDA_OK;
}

slda_err_t slda_prop_set(const slda_prop_t *prop, void *base, const char *value, char *errstr,
                         size_t errstr_size)
{
    void *field = field_of(prop, base);
    switch (prop->type) {
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
        return set_integer(prop, field, value, errstr, errstr_size);
    case SLDA_PT_UINT64:
        return set_uint64(prop, field, value, errstr, errstr_size);
    case SLDA_PT_DOUBLE:
        return set_double(prop, field, value, errstr, errstr_size);
    case SLDA_PT_STRING:
        return set_string(prop, field, value, errstr, errstr_size);
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL:
    case SLDA_PT_LOCAL:
        return set_choice(prop, base, value, errstr, errstr_size);
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"%s\": bad type",
                        prop->name);
}

static const char *choice_name(const slda_prop_t *prop, const void *base)
{
    const struct slda_conf_s *conf = base;
    int i;
    if (prop->type == SLDA_PT_LOCAL)
        return slda_local_name(conf->p.vb, conf->p.hybrid);
    i = *(const int *)field_of(prop, (void *)base);
    if (prop->type == SLDA_PT_BOOL)
        return bool_values[i != 0];
    for (int j = 0; j <= i && prop->values[j]; j++)
        if (j == i)
            return prop->values[j];
    return "invalid";
}

/* The field's value as text: borrowed from base or written into num. */
static const char *prop_text(const slda_prop_t *prop, const void *base, char *num, size_t n)
{
    const void *field = field_of(prop, (void *)base);
    switch (prop->type) {
    case SLDA_PT_INT: snprintf(num, n, "%d", (int)*(const int32_t *)field); return num;
    case SLDA_PT_UINT: snprintf(num, n, "%u", (unsigned)*(const uint32_t *)field); return num;
    case SLDA_PT_UINT64:
        snprintf(num, n, "%llu", (unsigned long long)*(const uint64_t *)field);
        return num;
    case SLDA_PT_DOUBLE: fmt_double(*(const double *)field, num, n); return num;
    case SLDA_PT_STRING: return *(char *const *)field ? *(char *const *)field : "";
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL:
    case SLDA_PT_LOCAL: return choice_name(prop, base);
    }
    return "invalid";
}

/* Copy text into dest; SLDA_ERR_TOO_LARGE (with a truncated copy) if it does not fit. */
static slda_err_t copy_out(const char *text, char *dest, size_t dest_size)
{
    if (dest_size == 0 || (size_t)snprintf(dest, dest_size, "%s", text) >= dest_size)
        return SLDA_ERR_TOO_LARGE;
    return SLDA_OK;
}

void slda_prop_copy(const slda_prop_t *prop, void *dst, const void *src)
{
    const void *from = field_of(prop, (void *)src);
    void *to = field_of(prop, dst);
    switch (prop->type) {
    case SLDA_PT_STRING: {
        char **slot = to;
        free(*slot);
        *slot = strdup_or_null(*(char *const *)from);
        return;
    }
    case SLDA_PT_LOCAL: { /* p.vb and p.hybrid */
        struct slda_conf_s *d = dst;
        const struct slda_conf_s *s = src;
        d->p.vb = s->p.vb;
        d->p.hybrid = s->p.hybrid;
        return;
    }
    case SLDA_PT_UINT64: memcpy(to, from, sizeof(uint64_t)); return;
    case SLDA_PT_DOUBLE: memcpy(to, from, sizeof(double)); return;
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL: memcpy(to, from, sizeof(int32_t)); return; /* enums are int-sized */
    }
}

slda_err_t slda_prop_get(const slda_prop_t *prop, const void *base, char *dest, size_t dest_size)
{
    char num[40];
    return copy_out(prop_text(prop, base, num, sizeof num), dest, dest_size);
}

/* ---- conf objects ---- */

/* Free what conf owns (its string fields and kafka.* pairs), not conf itself. */
static void conf_free_fields(slda_conf_t *conf)
{
    for (size_t i = 0; i < NPROPS; i++) {
        if (props[i].type == SLDA_PT_STRING) {
            char **slot = field_of(&props[i], conf);
            free(*slot);
            *slot = NULL;
        }
    }
    for (size_t i = 0; i < conf->nkafka; i++) {
        free(conf->kafka_names[i]);
        free(conf->kafka_values[i]);
    }
    free(conf->kafka_names);
    free(conf->kafka_values);
    conf->kafka_names = conf->kafka_values = NULL;
    conf->nkafka = 0;
}

slda_conf_t *slda_conf_new(void)
{
    slda_conf_t *conf = slda_xcalloc(1, sizeof *conf);
    for (size_t i = 0; i < NPROPS; i++) {
        /* A default that does not parse is a bug in the table above. */
        if (slda_prop_set(&props[i], conf, props[i].def, NULL, 0) != SLDA_OK)
            abort();
    }
    return conf;
}

slda_conf_t *slda_conf_dup(const slda_conf_t *conf)
{
    slda_conf_t *dup = slda_xmalloc(sizeof *dup);
    *dup = *conf;
    for (size_t i = 0; i < NPROPS; i++) {
        if (props[i].type == SLDA_PT_STRING) {
            char **slot = field_of(&props[i], dup);
            *slot = strdup_or_null(*slot);
        }
    }
    dup->kafka_names = slda_xcalloc(conf->nkafka, sizeof(char *));
    dup->kafka_values = slda_xcalloc(conf->nkafka, sizeof(char *));
    for (size_t i = 0; i < conf->nkafka; i++) {
        dup->kafka_names[i] = slda_xstrdup(conf->kafka_names[i]);
        dup->kafka_values[i] = slda_xstrdup(conf->kafka_values[i]);
    }
    return dup;
}

void slda_conf_destroy(slda_conf_t *conf)
{
    if (!conf)
        return;
    conf_free_fields(conf);
    free(conf);
}

/* Move the contents of src into conf and free src's shell. */
static void conf_replace(slda_conf_t *conf, slda_conf_t *src)
{
    conf_free_fields(conf);
    *conf = *src;
    free(src);
}

/* ---- kafka.* pass-through ---- */

static ssize_t kafka_find(const slda_conf_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->nkafka; i++)
        if (strcmp(conf->kafka_names[i], name) == 0)
            return (ssize_t)i;
    return -1;
}

static slda_err_t kafka_set(slda_conf_t *conf, const char *name, const char *value,
                            char *errstr, size_t errstr_size)
{
    ssize_t i;
    if (!*name)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": no librdkafka property after the prefix",
                            KAFKA_PREFIX);
    i = kafka_find(conf, name);
    if (i >= 0) {
        free(conf->kafka_values[i]);
        conf->kafka_values[i] = slda_xstrdup(value);
        return SLDA_OK;
    }
    conf->kafka_names = slda_xrealloc(conf->kafka_names, (conf->nkafka + 1) * sizeof(char *));
    conf->kafka_values = slda_xrealloc(conf->kafka_values, (conf->nkafka + 1) * sizeof(char *));
    conf->kafka_names[conf->nkafka] = slda_xstrdup(name);
    conf->kafka_values[conf->nkafka] = slda_xstrdup(value);
    conf->nkafka++;
    return SLDA_OK;
}

const char *slda_conf_kafka_find(const slda_conf_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->nkafka; i++)
        if (!strcmp(conf->kafka_names[i], name))
            return conf->kafka_values[i];
    return NULL;
}

size_t slda_conf_kafka_count(const slda_conf_t *conf)
{
    return conf->nkafka;
}

void slda_conf_kafka_get(const slda_conf_t *conf, size_t i, const char **name,
                         const char **value)
{
    int ok = i < conf->nkafka;
    *name = ok ? conf->kafka_names[i] : NULL;
    *value = ok ? conf->kafka_values[i] : NULL;
}

/* ---- set / get ---- */

/* Levenshtein distance, or MAX_SUGGEST_DIST + 1 when it is larger or a word is too long. */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b), row[MAXLEN + 1];
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > MAX_SUGGEST_DIST)
        return MAX_SUGGEST_DIST + 1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The table key closest to name within MAX_SUGGEST_DIST edits (and closer
 * than name's own length, so short keys do not match everything), or NULL. */
static const char *suggest(const char *name)
{
    const char *best = NULL;
    size_t best_d = MAX_SUGGEST_DIST + 1, len = strlen(name);
    for (size_t i = 0; i < NPROPS; i++) {
        size_t d = edit_distance(name, props[i].name);
        if (d < best_d && d < len) {
            best = props[i].name;
            best_d = d;
        }
    }
    return best;
}

static slda_err_t unknown_property(const char *name, char *errstr, size_t errstr_size)
{
    const char *dot = strchr(name, '.');
    const char *near = suggest(name);
    char prefix[MAX_SUGGEST_DIST + KAFKA_PREFIX_LEN + 1];
    if (near)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN,
                            "unknown property \"%s\" (did you mean \"%s\"?)", name, near);
    /* "kafak.acks" -> "kafka.acks" */
    if (dot && (size_t)(dot - name) < sizeof prefix) {
        snprintf(prefix, sizeof prefix, "%.*s", (int)(dot - name), name);
        if (edit_distance(prefix, "kafka") <= MAX_SUGGEST_DIST)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN,
                                "unknown property \"%s\" (did you mean \"%s%s\"?)", name,
                                KAFKA_PREFIX, dot + 1);
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN, "unknown property \"%s\"", name);
}

static int is_kafka_key(const char *name)
{
    return strncmp(name, KAFKA_PREFIX, KAFKA_PREFIX_LEN) == 0;
}

slda_err_t slda_conf_set(slda_conf_t *conf, const char *name, const char *value,
                         char *errstr, size_t errstr_size)
{
    const slda_prop_t *prop;
    if (is_kafka_key(name))
        return kafka_set(conf, name + KAFKA_PREFIX_LEN, value, errstr, errstr_size);
    prop = slda_conf_prop_find(name);
    if (!prop)
        return unknown_property(name, errstr, errstr_size);
    slda_err_t err = slda_prop_set(prop, conf, value, errstr, errstr_size);
    if (err == SLDA_OK)
        conf->set[prop - props] = 1;
    return err;
}

int slda_conf_is_set(const slda_conf_t *conf, const char *name)
{
    const slda_prop_t *prop = slda_conf_prop_find(name);
    return prop && conf->set[prop - props];
}

slda_err_t slda_conf_get(const slda_conf_t *conf, const char *name, char *dest,
                         size_t dest_size)
{
    const slda_prop_t *prop;
    if (is_kafka_key(name)) {
        ssize_t i = kafka_find(conf, name + KAFKA_PREFIX_LEN);
        if (i < 0)
            return SLDA_ERR_UNKNOWN;
        return copy_out(conf->kafka_values[i], dest, dest_size);
    }
    prop = slda_conf_prop_find(name);
    if (!prop)
        return SLDA_ERR_UNKNOWN;
    return slda_prop_get(prop, conf, dest, dest_size);
}

/* ---- config files ---- */

static char *trim(char *s)
{
    char *end = s + strlen(s);
    while (isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/* Apply one line of a config file; errors without the "path:line: " prefix. */
static slda_err_t apply_line(slda_conf_t *conf, char *line, char *errstr, size_t errstr_size)
{
    char *s = trim(line), *eq, *key;
    if (!*s || *s == '#')
        return SLDA_OK;
    eq = strchr(s, '=');
    if (!eq)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "line \"%s\": expected key=value", s);
    *eq = '\0';
    key = trim(s);
    if (!*key)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "line \"=%s\": no property name before '='", eq + 1);
    return slda_conf_set(conf, key, trim(eq + 1), errstr, errstr_size);
}

/* Apply every line of f to conf; on error errstr has "path:line: ...". */
static slda_err_t apply_file(slda_conf_t *conf, FILE *f, const char *path, char *errstr,
                             size_t errstr_size)
{
    char *line = NULL, msg[1024];
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    slda_err_t err = SLDA_OK;
    while (err == SLDA_OK && (len = getline(&line, &cap, f)) >= 0) {
        char *s = line;
        lineno++;
        if (lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3; /* UTF-8 byte order mark */
        if (strlen(line) != (size_t)len)
            err = slda_set_err(msg, sizeof msg, SLDA_ERR_PARSE, "line contains a NUL byte");
        else
            err = apply_line(conf, s, msg, sizeof msg);
        if (err != SLDA_OK)
            slda_set_err(errstr, errstr_size, err, "%s:%lu: %s", path, lineno, msg);
    }
    if (err == SLDA_OK && ferror(f))
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "config file \"%s\": %s", path,
                           strerror(errno));
    free(line);
    return err;
}

slda_err_t slda_conf_load_file(slda_conf_t *conf, const char *path, char *errstr,
                               size_t errstr_size)
{
    FILE *f = fopen(path, "r");
    slda_conf_t *tmp;
    slda_err_t err;
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "config file \"%s\": %s", path,
                            strerror(errno));
    tmp = slda_conf_dup(conf);
    err = apply_file(tmp, f, path, errstr, errstr_size);
    fclose(f);
    if (err != SLDA_OK) {
        slda_conf_destroy(tmp);
        return err;
    }
    conf_replace(conf, tmp);
    return SLDA_OK;
}

/* ---- environment ---- */

void slda_conf_env_name(const char *key, char *out, size_t out_size)
{
    size_t n = snprintf(out, out_size, ENV_PREFIX "%s", key);
    for (size_t i = strlen(ENV_PREFIX); i < n && i + 1 < out_size; i++)
        out[i] = out[i] == '.' ? '_' : (char)toupper((unsigned char)out[i]);
}

static slda_err_t env_set(slda_conf_t *conf, const char *var, const char *key,
                          const char *value, char *errstr, size_t errstr_size)
{
    char msg[1024];
    slda_err_t err = slda_conf_set(conf, key, value, msg, sizeof msg);
    if (err != SLDA_OK)
        slda_set_err(errstr, errstr_size, err, "environment %s: %s", var, msg);
    return err;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SLDA_KAFKA_SASL_MECHANISM=x sets kafka.sasl.mechanism, in sorted order of
 * the variables so the result does not depend on the environment's order. */
static slda_err_t env_kafka(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    const size_t plen = strlen(ENV_KAFKA_PREFIX);
    size_t n = 0, cap = 0;
    char **vars = NULL;
    slda_err_t err = SLDA_OK;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, ENV_KAFKA_PREFIX, plen) != 0 || !strchr(*e, '='))
            continue;
        if (n == cap)
            vars = slda_xrealloc(vars, (cap = cap ? 2 * cap : 8) * sizeof *vars);
        vars[n++] = *e;
    }
    if (n)
        qsort(vars, n, sizeof *vars, cmp_str);
    for (size_t i = 0; i < n && err == SLDA_OK; i++) {
        const char *eq = strchr(vars[i], '=');
        char *var = slda_xstrndup(vars[i], (size_t)(eq - vars[i]));
        size_t keylen = KAFKA_PREFIX_LEN + strlen(var) - plen;
        char *key = slda_xmalloc(keylen + 1);
        snprintf(key, keylen + 1, KAFKA_PREFIX "%s", var + plen);
        for (char *c = key + KAFKA_PREFIX_LEN; *c; c++)
            *c = *c == '_' ? '.' : (char)tolower((unsigned char)*c);
        err = env_set(conf, var, key, eq + 1, errstr, errstr_size);
        free(key);
        free(var);
    }
    free(vars);
    return err;
}

static slda_err_t env_apply(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    char var[128];
    for (size_t i = 0; i < NPROPS; i++) {
        const char *value;
        slda_err_t err;
        slda_conf_env_name(props[i].name, var, sizeof var);
        value = getenv(var);
        if (value && (err = env_set(conf, var, props[i].name, value, errstr, errstr_size)))
            return err;
    }
    return env_kafka(conf, errstr, errstr_size);
}

slda_err_t slda_conf_load_env(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    slda_conf_t *tmp = slda_conf_dup(conf);
    slda_err_t err = env_apply(tmp, errstr, errstr_size);
    if (err != SLDA_OK) {
        slda_conf_destroy(tmp);
        return err;
    }
    conf_replace(conf, tmp);
    return SLDA_OK;
}

/* ---- listings ---- */

/* The text shown for a row's default: "(empty)" rather than nothing. */
static const char *default_text(const slda_prop_t *prop)
{
    return *prop->def ? prop->def : "(empty)";
}

static const char kafka_desc[] = "Passed to librdkafka without the \"kafka.\" prefix.";

static void print_plain(FILE *out)
{
    static const char *const head[4] = {"NAME", "TYPE", "DEFAULT", "RANGE/VALUES"};
    char range[NPROPS][160];
    int w[4];
    for (int c = 0; c < 4; c++)
        w[c] = (int)strlen(head[c]);
    for (size_t i = 0; i < NPROPS; i++) {
        const char *cell[4] = {props[i].name, slda_prop_type_name(props[i].type),
                               default_text(&props[i]), range[i]};
        range_text(&props[i], range[i], sizeof range[i]);
        for (int c = 0; c < 4; c++)
            if ((int)strlen(cell[c]) > w[c])
                w[c] = (int)strlen(cell[c]);
    }
    fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], head[0], w[1], head[1], w[2], head[2],
            w[3], head[3], "DESCRIPTION");
    for (size_t i = 0; i < NPROPS; i++)
        fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], props[i].name, w[1],
                slda_prop_type_name(props[i].type), w[2], default_text(&props[i]), w[3],
                range[i], props[i].desc);
    fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], "kafka.*", w[1], "string", w[2], "", w[3],
            "", kafka_desc);
}

/* A markdown table cell: '|' escaped. */
static void md_cell(FILE *out, const char *s, int code)
{
    fputs(code ? " `" : " ", out);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputs(code ? "` |" : " |", out);
}

static const char md_intro[] =
    "# streamlda configuration\n"
    "\n"
    "<!-- Generated from the property table in src/core/config.c by\n"
    "     `streamlda config --markdown > config/CONFIGURATION.md`; do not edit. -->\n"
    "\n"
    "Every property has a default and can be set in four places; a later one wins:\n"
    "\n"
    "    defaults < config file < environment < -X\n"
    "\n"
    "- **Config file** (`-c FILE`): one `key=value` a line; blank lines and lines starting\n"
    "  with `#` are ignored; whitespace around keys and values is trimmed and values are taken\n"
    "  literally (no quotes; `key=` sets an empty value). config/streamlda.conf lists every\n"
    "  property with its default.\n"
    "- **Environment**: `SLDA_<KEY>`, the key upper-cased with `.` replaced by `_`, e.g.\n"
    "  `SLDA_RHO_KAPPA=0.6` sets `rho.kappa`. `SLDA_KAFKA_<NAME>` sets `kafka.<name>`, the name\n"
    "  lower-cased with `_` replaced by `.`, e.g. `SLDA_KAFKA_BOOTSTRAP_SERVERS` sets\n"
    "  `kafka.bootstrap.servers` (a librdkafka property containing `_` cannot be set this\n"
    "  way). Other `SLDA_*` variables are ignored.\n"
    "- **Command line**: `-X key=value`, repeatable. `-X list` prints this table and\n"
    "  `-X dump` the effective configuration.\n"
    "\n"
    "Properties starting with `kafka.` are passed to librdkafka without the prefix and are\n"
    "checked by librdkafka, e.g. `kafka.bootstrap.servers`, `kafka.security.protocol`,\n"
    "`kafka.sasl.mechanism`, `kafka.sasl.username`, `kafka.ssl.ca.location`; see librdkafka's\n"
    "CONFIGURATION.md.\n"
    "\n";

static void print_markdown(FILE *out)
{
    char range[160];
    fputs(md_intro, out);
    fputs("| Property | Type | Default | Range / values | Description |\n"
          "|---|---|---|---|---|\n",
          out);
    for (size_t i = 0; i < NPROPS; i++) {
        range_text(&props[i], range, sizeof range);
        fputc('|', out);
        md_cell(out, props[i].name, 1);
        md_cell(out, slda_prop_type_name(props[i].type), 0);
        md_cell(out, default_text(&props[i]), *props[i].def != '\0');
        md_cell(out, range, 0);
        md_cell(out, props[i].desc, 0);
        fputc('\n', out);
    }
    fprintf(out, "| `kafka.*` | string | | | %s |\n", kafka_desc);
}

void slda_conf_print_table(FILE *out, int markdown)
{
    if (markdown)
        print_markdown(out);
    else
        print_plain(out);
}

void slda_conf_dump(const slda_conf_t *conf, FILE *out)
{
    char num[40];
    for (size_t i = 0; i < NPROPS; i++)
        fprintf(out, "%s=%s\n", props[i].name, prop_text(&props[i], conf, num, sizeof num));
    for (size_t i = 0; i < conf->nkafka; i++)
        fprintf(out, KAFKA_PREFIX "%s=%s\n", conf->kafka_names[i], conf->kafka_values[i]);
}
