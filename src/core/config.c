/* config.c - the property table: one row per property, with its type, default, range and flags.
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
#include "core/config_priv.h"

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
_Static_assert(sizeof(slda_sparse_mode_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_rows_kind_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_infmt_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_vb_kind_t) == sizeof(int), "enum size");
_Static_assert(sizeof(slda_model_kind_t) == sizeof(int), "enum size");

/* ---- the table ---- */

static const char *const alpha_learn_values[] = {"off", "fixedpoint", "newton", NULL};
/* cgs, each variant alone, each variant with +cgs (config.h's list) */
#define LOCAL_ALONE(id, name) #name,
#define LOCAL_HYBRID(id, name) #name "+cgs",
static const char *const local_values[] = {"cgs", SLDA_VB_VARIANTS(LOCAL_ALONE)
                                           SLDA_VB_VARIANTS(LOCAL_HYBRID) NULL};
static const char *const stats_values[] = {"rb", "sample", NULL};
#define KIND_NAME(id, name) #name,
static const char *const kind_values[] = {SLDA_MODEL_KINDS(KIND_NAME) NULL};
#undef KIND_NAME
static const char *const sparse_values[] = {"auto", "on", "off", NULL};
static const char *const replay_values[] = {"auto", "on", "off", NULL};
static const char *const rows_values[] = {"counts", "decay", NULL};
static const char *const stopwords_values[] = {"auto", "none", "smart", "snowball", "onix", NULL};
#define INFMT_NAME(id, name) #name,
static const char *const infmt_values[] = {"auto", SLDA_INPUT_FORMATS(INFMT_NAME) NULL};
#undef INFMT_NAME
static const char *const update_values[] = {"float32", "float16", "q8", NULL};
/* text.* cleanup rules: the order is slda_text_rules_t's (slda_int.h), default first. */
static const char *const urls_values[] = {"drop", "keep", NULL};
static const char *const html_values[] = {"decode", "keep", NULL};
static const char *const mentions_values[] = {"drop", "keep", NULL};
static const char *const hashtags_values[] = {"keep", "drop", NULL};
static const char *const apostrophes_values[] = {"keep", "split", NULL};
static const char *const digits_values[] = {"drop", "mixed", "keep", "split", NULL};
static const char *const segment_values[] = {"unicode", "simple", NULL};
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

const slda_prop_t slda_conf_table[] = {
    /* model */
    P_ENUM("model.kind", kind, "lda", kind_values, DEFINING | SLDA_PF_OPTIONAL, "lda",
           "The topic model: lda (each document its own topic mixture), or atm, the author-topic "
           "model (each document's tokens drawn from the mixtures of its authors, read from "
           "input.author.field), or pam, 4-level pachinko allocation (pam.super super-topics "
           "over the topics; docs/models.md). atm and pam take births=false, alpha.learn=off, "
           "the dense local step and no replay or replicas."),
    P_UINT("authors.capacity", authors_capacity, "100000", 0, 16777216,
           DEFINING | SLDA_PF_OPTIONAL, "100000",
           "Authors held by model.kind=atm (each one topic mixture of K floats); when all are in "
           "use the author least active recently is evicted and counted."),
    P_UINT("pam.super", pam_super, "10", 0, 1024, DEFINING | SLDA_PF_OPTIONAL, "10",
           "Super-topics S of model.kind=pam (4-level pachinko allocation): each document mixes "
           "S super-topics, each a learned Dirichlet over the K sub-topics (topics)."),
    P_DBL("pam.alpha.step", pam_alpha_step, "0.1", 0, 100, TUNABLE | SLDA_PF_OPTIONAL, "0.1",
          "model.kind=pam: each super-topic's prior over the topics is learned (a fixed-point "
          "step on the minibatch's documents) and blended in with this times rho_t; larger "
          "forms the super-topics' groups sooner at a cost in held-out perplexity "
          "(docs/models.md); 0 keeps them fixed."),
    P_UINT("pam.alpha.warmup", pam_alpha_warmup, "50", 0, 1000000000,
           TUNABLE | SLDA_PF_OPTIONAL, "50",
           "model.kind=pam: updates before the super-topics' priors are learned (the first "
           "estimates come from a model that has barely trained)."),
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
    P_ENUM("local.sparse", sparse, "auto", sparse_values, TUNABLE | SLDA_PF_OPTIONAL, "auto",
           "The sparse path for many topics: every token sampled by Metropolis-Hastings from "
           "per-minibatch word tables, its statistics Rao-Blackwellised over the topics its "
           "document and word hold (entries under 1/64 of a word's dropped, the rest "
           "renormalised), the global step over the topics each row holds: a token's cost grows "
           "with those, not with K. local, local.threshold, local.stats and local.tolerance do "
           "not apply to it; replicas run the dense hybrid. auto takes it from 800 topics on, "
           "where it executes fewer instructions than the dense hybrid (docs/engine.md)."),
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
    ROW("text.stopwords", SLDA_PT_STRING, p.stopwords, "auto", 0, 0, stopwords_values,
        SLDA_PF_NONEMPTY | SLDA_PF_OR_PATH | TOKENIZER, NULL,
        "Stop words removed from text: auto (each document's language's list: smart for "
        "English, stopwords-iso for the others), none, a built-in list (smart, snowball, onix, or "
        "a language code: de, fr, zh, ...), the path of a file with one word a line, or several "
        "of these joined by + (auto+FILE); a part with a comma is a list of words (auto+rt,via); "
        "a leading + adds to the default (+FILE, +amp,)."),
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
    /* word boundaries: older snapshots were made with the simple rule */
    P_ENUM("text.segment", text.segment, "unicode", segment_values,
           TOKENIZER | SLDA_PF_OPTIONAL, "simple",
           "Word boundaries: unicode cuts words by Unicode's rules with ICU (dictionaries for "
           "Chinese, Japanese, Thai, Lao, Khmer, Burmese), NFKC and full case folding, ASCII "
           "words as simple does; simple is the rule of snapshots made before this setting "
           "(runs of letters; Chinese and Japanese stay one token per clause)."),
    P_UINT("text.token.max", text.token_max, "50", 1, 1024, TOKENIZER | SLDA_PF_OPTIONAL, "50",
           "With text.segment=unicode, tokens longer than this many characters are dropped (and "
           "counted): base64, run-together junk, a script without word boundaries."),
    P_UINT("text.icu", text.icu, "0", 0, 100000, SLDA_PF_SNAPSHOT | SLDA_PF_OPTIONAL, "0",
           "Recorded, not a setting: the ICU major version a model's words came through "
           "(text.segment=unicode; 0 = none); a snapshot made with another version loads with a "
           "warning."),
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
         "Number of newest snapshot files kept in snapshot.dir (all of them); of the older "
         "ones snapshot.history stay, thinned with age, the rest are deleted."),
    UINT("snapshot.history", snapshot_history, "10", 0, 1000,
         "Older snapshot files kept besides the newest snapshot.keep, thinned with age (each "
         "at least half its age in updates from the next newer one kept, the first always kept), "
         "so that streamlda report covers the whole run on bounded disk; 0 = none."),
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
    NUM("http.port", SLDA_PT_INT, http_port, "0", -1, 65535, 0,
        "Port on 127.0.0.1 of the HTTP endpoint serving the live page (/), /metrics and /healthz; "
        "0 = any free port (the default; printed at start), -1 = off."),
    UINT("status.ms", status_ms, "5000", 0, 86400000,
         "Milliseconds between status lines on standard error while running; 0 = off."),
    BOOL("snapshot.fresh", snapshot_fresh, "false",
         "Start a new model even though snapshot.dir holds snapshots of model.name and none of "
         "them loads (they are left in place); without it the service refuses to start."),
    UINT("shutdown.timeout.ms", shutdown_timeout_ms, "10000", 0, 3600000,
         "On SIGTERM, SIGINT or SIGHUP, how long the service waits for undelivered "
         "dead-letter/output records before it exits without a final snapshot (nothing is "
         "lost: their offsets stay uncommitted); a second signal ends the wait at once."),
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
    DBL("updates.thin", updates_thin, "0", 0, 0.5, 0,
        "Replicas: in each row of an update record's statistics, values under this share of "
        "the row's sum are rounded without bias to 0 or one common unit (sparser records; 0 = "
        "exact, see docs/replication.md)."),
    BOOL("updates.prune", updates_prune, "true",
         "Replicas: the snapshot writer deletes update records older than the oldest snapshot it "
         "keeps (Kafka DeleteRecords); false leaves the log to the topic's retention."),
    /* tracking (docs/tracking.md) */
    STR("input.time.field", input_time_field, "", 0,
        "Field (JSON key or CSV/TSV column) holding each document's event time (ISO 8601, "
        "YYYYMMDD or epoch seconds/ms); empty = the message timestamp."),
    STR("input.text.field", input_text_field, "text", SLDA_PF_NONEMPTY,
        "Field (JSON key or CSV/TSV column) holding each document's text; a comma list joins "
        "several (title,body)."),
    STR("input.author.field", input_author_field, "author", SLDA_PF_NONEMPTY,
        "Field (JSON key or CSV/TSV column) holding each document's authors for "
        "model.kind=atm: a string, a JSON array of strings, or in CSV/TSV names separated by "
        "';'. A document without one is rejected."),
    STR("input.group.field", input_group_field, "", 0,
        "Field (JSON key or CSV/TSV column) naming each document's group for tracking (a source, "
        "a channel: its share of the stream over time and its topic mix), or @lang (the "
        "language), @author (the authors), @key (the Kafka key); empty = none (@author for "
        "model.kind=atm)."),
    STR("input.id.field", input_id_field, "id", SLDA_PF_NONEMPTY,
        "Field (JSON key or CSV/TSV column) holding each document's id."),
    STR("input.lang.field", input_lang_field, "", 0,
        "Field (JSON key or CSV/TSV column) holding each document's language (de, pt-BR), which "
        "overrides identification; empty = \"lang\", else \"language\", when there is one."),
    BOOL("track", track, "true",
         "Track topics over event time: prevalence windows, drift and events at each snapshot, "
         "the live page at / of http.port."),
    ENUM("track.window", track_window, "minute", track_window_values,
         "The finest prevalence window of event time: minute, hour, day or week; the coarser "
         "ones are kept as well (hours 3 weeks, days 3 years, weeks beyond, doubling)."),
    UINT("track.windows", track_windows, "240", 2, 100000,
         "Windows kept at the finest resolution; older documents stay in the coarser ones."),
    UINT("track.sample.docs", track_sample_docs, "32", 0, 4096,
         "Documents kept per window (hours and coarser) to score the timeline again under the "
         "current model; 0 = off (the shares stay the model's at training time)."),
    UINT("track.examples", track_examples, "5", 0, 50,
         "Representative documents kept per topic (id, event time, the start of the text) for "
         "the report, the page and topics --docs; 0 = none."),
    UINT("track.subject.docs", track_subject_docs, "1000", 0, 1000000,
         "New subjects from the words: at the end of each block of this many documents, words "
         "far more frequent than their baseline in the last two blocks, three or more in one "
         "topic's documents, raise a \"subject\" event; 0 = off."),
    UINT("track.subject.words", track_subject_words, "100000", 16, 10000000,
         "Words the new-subject test counts at most (the rarest are forgotten; the rest counted "
         "as skipped)."),
    UINT("track.group.capacity", track_group_capacity, "1000", 0, 1000000,
         "Groups tracked (input.group.field); when full, a sampled group with the fewest documents "
         "is evicted into \"(other)\" and counted; 0 = no groups."),
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

const size_t slda_conf_ntable = sizeof slda_conf_table / sizeof slda_conf_table[0];
_Static_assert(sizeof slda_conf_table / sizeof slda_conf_table[0] <= SLDA_CONF_MAX_PROPS,
               "raise SLDA_CONF_MAX_PROPS");

const slda_prop_t *slda_conf_props(size_t *n)
{
    *n = slda_conf_ntable;
    return slda_conf_table;
}

const slda_prop_t *slda_conf_prop_find(const char *name)
{
    for (size_t i = 0; i < slda_conf_ntable; i++)
        if (strcmp(slda_conf_table[i].name, name) == 0)
            return &slda_conf_table[i];
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

