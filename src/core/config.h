/* config.h - the configuration: parameters, the conf struct, the property table of slda_conf_*. */
#ifndef SLDA_CONFIG_H
#define SLDA_CONFIG_H

#include "core/slda_int.h"

/* The local step's variational variants, one line each (docs/algorithm.md "Local step"): the
 * kind, the name `local=` takes (alone, or NAME+cgs for the hybrid that samples the pairs
 * of count <= local.threshold). The rules of each are in src/engine/local_NAME.c, its row
 * of the variant table in src/engine/local_step.c is made from this list: a new variant is
 * a line here and its file (docs/engine.md, "Adding a local-step variant"). */
#define SLDA_VB_VARIANTS(X) \
    X(CVB0, cvb0)           \
    X(CVB, cvb)             \
    X(SVB, svb)
typedef enum {
    SLDA_VB_NONE = 0, /* pure CGS: every token sampled */
#define SLDA_VB_KIND(id, name) SLDA_VB_##id,
    SLDA_VB_VARIANTS(SLDA_VB_KIND)
#undef SLDA_VB_KIND
    SLDA_VB__COUNT
} slda_vb_kind_t;

typedef enum { SLDA_ALPHA_FIXED = 0, SLDA_ALPHA_FIXEDPOINT, SLDA_ALPHA_NEWTON } slda_alpha_learn_t;
/* replay (second visits, src/engine/replay.c): the engine treats auto as off */
typedef enum { SLDA_REPLAY_AUTO = 0, SLDA_REPLAY_ON, SLDA_REPLAY_OFF } slda_replay_mode_t;
#define SLDA_REPLAY_ACTIVE(p) ((p)->replay == SLDA_REPLAY_ON && (p)->replay_docs > 0)
typedef enum { SLDA_STATS_RB = 0, SLDA_STATS_SAMPLE } slda_stats_kind_t;
/* local.sparse: the sparse path (docs/engine.md, "The sparse path"); auto picks it by K */
typedef enum { SLDA_SPARSE_AUTO = 0, SLDA_SPARSE_ON, SLDA_SPARSE_OFF } slda_sparse_mode_t;
/* model.kind: the topic model, one line each (docs/models.md): LDA, the author-topic model
 * (each token's topic drawn from the mixture of one of its document's authors), or 4-level
 * pachinko allocation (super-topics over sub-topics over words). */
#define SLDA_MODEL_KINDS(X) \
    X(LDA, lda)             \
    X(ATM, atm)             \
    X(PAM, pam)
typedef enum {
#define SLDA_KIND_ID(id, name) SLDA_KIND_##id,
    SLDA_MODEL_KINDS(SLDA_KIND_ID)
#undef SLDA_KIND_ID
    SLDA_KIND__COUNT
} slda_model_kind_t;
/* global.rows: how the global step sets each word's row total (global_step.c) */
typedef enum { SLDA_ROWS_COUNTS = 0, SLDA_ROWS_DECAY } slda_rows_kind_t;
/* input.format: the formats a message value may be in, one line each (id, name); auto,
 * first, detects each message's. Each is a row of src/io/format.c's table, defined in its
 * format's file as slda_format_<name> (format.c's top says how to add a format): this
 * list is the names the configuration accepts, and the table's index by input.format is
 * made from it. */
#define SLDA_INPUT_FORMATS(X) \
    X(TEXT, text)             \
    X(JSON, json)             \
    X(MSGPACK, msgpack)
typedef enum {
    SLDA_INFMT_AUTO = 0,
#define SLDA_INFMT_ID(id, name) SLDA_INFMT_##id,
    SLDA_INPUT_FORMATS(SLDA_INFMT_ID)
#undef SLDA_INFMT_ID
    SLDA_INFMT__COUNT
} slda_infmt_t;

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
enum { SLDA_TEXT_SEGMENT_UNICODE = 0, SLDA_TEXT_SEGMENT_SIMPLE };
typedef struct slda_text_rules_s {
    int urls;        /* text.urls: drop | keep (URLs and e-mail addresses) */
    int html;        /* text.html: decode | keep (entities decoded, tags dropped) */
    int mentions;    /* text.mentions: drop | keep */
    int hashtags;    /* text.hashtags: keep (#debt -> debt) | drop */
    int apostrophes; /* text.apostrophes: keep (don't) | split (don, t) */
    int digits;      /* text.digits: drop | mixed | keep | split */
    int segment;     /* text.segment: unicode (ICU word boundaries) | simple (the old rule) */
    uint32_t token_max; /* text.token.max: longer tokens are dropped and counted (unicode) */
    uint32_t icu;    /* text.icu: ICU major version the words came through (0: none) */
} slda_text_rules_t;

/* Engine parameters: everything the model and its steps read. */
typedef struct slda_params_s {
    slda_model_kind_t kind;     /* model.kind: lda | atm */
    uint32_t authors_capacity;  /* authors.capacity: authors held (model.kind=atm) */
    uint32_t pam_super;         /* pam.super: super-topics S (model.kind=pam) */
    double pam_alpha_step;      /* pam.alpha.step: the super-topics' priors' step, times rho_t */
    uint32_t pam_alpha_warmup;  /* pam.alpha.warmup: updates before they are learned */
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
    slda_sparse_mode_t sparse;  /* local.sparse: auto | on | off (slda_params_sparse()) */
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
    char *stopwords;            /* text.stopwords: "auto", "none", a built-in list, a path, or
                                   several joined by + */
    uint32_t min_length;        /* text.min.length: minimum token length in characters */
    uint32_t max_doc_bytes;     /* text.max.bytes: larger documents are rejected */
    slda_text_rules_t text;     /* text.urls, .html, .mentions, .hashtags, .apostrophes, .digits,
                                   .segment, .token.max, .icu */
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
    uint32_t snapshot_history;  /* snapshot.history: older snapshots kept, thinned with age */
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
    double updates_thin;        /* updates.thin: share for slda_update_thin */
    int updates_prune;          /* updates.prune: the snapshot writer deletes the log it no longer needs */
    /* tracking (src/track, docs/tracking.md) */
    char *input_time_field;     /* input.time.field: JSON field with the event time ("" = timestamp) */
    char *input_lang_field;     /* input.lang.field: the language's field ("" = lang, language) */
    char *input_text_field;     /* input.text.field: the text's field(s) in JSON and CSV/TSV records */
    char *input_id_field;       /* input.id.field: the id's field */
    char *input_author_field;   /* input.author.field: the authors' field (model.kind=atm) */
    char *input_group_field;    /* input.group.field: the tracked group's field, or @lang, @author,
                                   @key ("" = none; @author for model.kind=atm) */
    int track;                  /* track: prevalence, drift, events, the live page */
    int track_window;           /* track.window: 0 minute, 1 hour, 2 day, 3 week */
    uint32_t track_windows;     /* track.windows: windows kept at the finest resolution */
    uint32_t track_sample_docs; /* track.sample.docs: documents kept per window to score again */
    uint32_t track_examples;    /* track.examples: representative documents per topic */
    uint32_t track_group_capacity; /* track.group.capacity: groups tracked (0 = none) */
    uint32_t track_subject_docs;   /* track.subject.docs: block of the new-subject test (0 off) */
    uint32_t track_subject_words;  /* track.subject.words: words it counts at most */
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
/* local.sparse=auto takes the sparse path from this many topics on (docs/engine.md, "The
 * sparse path"; docs/benchmarks.md: on KOS the two execute as many instructions at K=600, the
 * sparse path 1.42x fewer at 800 and 1.72x fewer at 1000). */
#define SLDA_SPARSE_AUTO_K 800
/* Whether the local and global steps take the sparse path. */
static inline int slda_params_sparse(const slda_params_t *p)
{
    if (p->kind != SLDA_KIND_LDA) /* the sparse path knows no per-document prior */
        return 0;
    if (p->sparse == SLDA_SPARSE_AUTO)
        return p->topics >= SLDA_SPARSE_AUTO_K;
    return p->sparse == SLDA_SPARSE_ON;
}


typedef enum {
    SLDA_PT_INT,    /* int32_t */
    SLDA_PT_UINT,   /* uint32_t */
    SLDA_PT_UINT64, /* uint64_t, full range */
    SLDA_PT_DOUBLE, /* double, finite */
    SLDA_PT_STRING, /* char *, owned */
    SLDA_PT_ENUM,   /* an int-sized enum: index into values[] */
    SLDA_PT_BOOL,   /* int: 0 or 1 */
    SLDA_PT_LOCAL   /* "local": sets p.vb and p.hybrid through slda_local_parse */
} slda_prop_type_t;

/* Row flags: values. */
#define SLDA_PF_MIN_OPEN 0x1   /* numbers: min itself is excluded (value > min) */
#define SLDA_PF_EMPTY_NULL 0x2 /* strings: "" is stored as NULL */
#define SLDA_PF_NONEMPTY 0x4   /* strings: "" is refused */
#define SLDA_PF_OR_PATH 0x8    /* strings: values[] names a choice, anything else is a path */
#define SLDA_PF_NAME 0x1000    /* strings: a name that becomes a file name, a metric label and
                                  a Kafka key: 1..SLDA_NAME_MAX of A-Z a-z 0-9 . _ -, not
                                  starting with . or - (slda_conf_name_valid) */
#define SLDA_PF_TOPICS 0x2000  /* strings: Kafka topic names, comma separated (or one, or
                                  none when empty): 1..249 of A-Z a-z 0-9 . _ -, not . or .. */
#define SLDA_NAME_MAX 100
/* Row flags of engine parameters (fields of slda_params_t): snapshots
 * (io/snapshot_params.c) and restores (engine/reconcile.c) read them. */
#define SLDA_PF_SNAPSHOT 0x10  /* stored in every snapshot's "params" map */
#define SLDA_PF_OPTIONAL 0x20  /* stored since after snapshots began: one without the key
                                  means the row's absent value (NULL: its default) */
#define SLDA_PF_BIRTHS_ONLY 0x40 /* stored only while births is on (a model built without a
                                  configuration may hold zeros a reader would refuse) */
/* What a restore does with the snapshot's value and this run's: at most one of */
#define SLDA_PF_DEFINING 0x100 /* the model depends on it: a value given explicitly that
                                  differs is an error, a default gives way to the snapshot's */
#define SLDA_PF_TUNABLE 0x200  /* this run's value applies (each change logged) */
#define SLDA_PF_TEXT 0x400     /* the tokenizer's: the snapshot's value, unless given
                                  explicitly (slda_model_text_conf, with a warning) */
#define SLDA_PF_RUN 0x800      /* this run's value, silently (stored ones serve readers
                                  without a configuration) */
/* and with none of them, a stored value stays the snapshot's. */

/* One configuration property. Numbers are checked against min..max (max may
 * be INFINITY for doubles); enum, bool and local values against values[]. */
typedef struct slda_prop_s {
    const char *name;
    slda_prop_type_t type;
    size_t offset;              /* of the field in struct slda_conf_s */
    const char *def;            /* default, as text slda_conf_set accepts */
    double min, max;
    const char *const *values;  /* NULL-terminated names, or NULL */
    unsigned flags;             /* SLDA_PF_* */
    const char *absent;         /* SLDA_PF_OPTIONAL: what a snapshot without the key means,
                                   as text slda_conf_set accepts; NULL: def */
    const char *desc;           /* one line, user-facing */
} slda_prop_t;

/* The value of kafka.<name> (name without the prefix), borrowed, or NULL when unset. */
const char *slda_conf_kafka_find(const slda_conf_t *conf, const char *name);
/* 1 when name may be a model's name (SLDA_PF_NAME's rule). */
int slda_conf_name_valid(const char *name);
/* The table, in documentation order; *n receives its length. */
const slda_prop_t *slda_conf_props(size_t *n);
/* The row named name, or NULL (kafka.* keys have no row). */
const slda_prop_t *slda_conf_prop_find(const char *name);
/* "int", "uint", "uint64", "double", "string", "enum" or "bool". */
const char *slda_prop_type_name(slda_prop_type_t type);
/* Parse value and store it in the row's field of base (a struct slda_conf_s,
 * or any struct laid out for the row). Errors as slda_conf_set. */
slda_err_t slda_prop_set(const slda_prop_t *prop, void *base, const char *value, char *errstr,
                         size_t errstr_size);
/* Copy the row's field from src to dst (both laid out as slda_prop_set's
 * base; a string is duplicated, the one it replaces freed). */
void slda_prop_copy(const slda_prop_t *prop, void *dst, const void *src);
/* The field's value as text that slda_prop_set accepts; SLDA_ERR_TOO_LARGE
 * (with a truncated copy) if dest is too small. */
slda_err_t slda_prop_get(const slda_prop_t *prop, const void *base, char *dest,
                         size_t dest_size);
/* The environment variable of a table key: "rho.kappa" -> "SLDA_RHO_KAPPA". */
void slda_conf_env_name(const char *key, char *out, size_t out_size);

#endif /* SLDA_CONFIG_H */
