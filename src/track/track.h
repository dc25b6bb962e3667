/* track.h - topic tracking over event time: prevalence windows, drift, events (not installed).
 *
 * The tracker is owned by the service thread: it is fed each trained
 * document's event time and topic mixture (slda_track_add), and at each
 * snapshot the topics' top words (slda_track_compare), from which it records
 * drift and emits events. Nothing in it is thread-safe; what the HTTP thread
 * serves is JSON text made here and handed over through page.c.
 * docs/tracking.md describes what is tracked, the events and the formats.
 */
#ifndef SLDA_TRACK_H
#define SLDA_TRACK_H

#include "core/config.h"
#include "engine/model.h"
#include "io/evtime.h"
#include "io/outfile.h"

#include <stdio.h>

#define SLDA_TRACK_TOP 50       /* words kept per topic for drift (with their mass) */
#define SLDA_TRACK_SHOW 10      /* words shown per topic, compared for entered/left */
#define SLDA_TRACK_EVENTS 256   /* events kept (ring) */
#define SLDA_TRACK_FUTURE_MS (24LL * 3600 * 1000) /* later than now + 1 day: clamped */

typedef struct slda_track_opts_s {
    int64_t window_ms;     /* track.window: the finest resolution */
    uint32_t windows;      /* track.windows: windows kept at the finest resolution */
    uint32_t sample_docs;  /* track.sample.docs: documents kept per window to score again */
    uint64_t warmup_docs;  /* track.warmup.docs: no events before this many documents */
    double change_js;      /* track.change.js */
    double birth_js;       /* track.birth.js */
    uint32_t birth_keep;   /* track.birth.keep: at most this many of the top 10 kept = taken over */
    double merge_js;       /* track.merge.js */
    double death_floor;    /* track.death.floor: share of documents */
    uint32_t death_windows;/* track.death.windows */
    uint32_t trend_windows;/* track.trend.windows: windows of the slope */
    double trend_slope;    /* track.trend.slope: share per window for emerging/fading */
    uint32_t examples;     /* track.examples: representative documents kept per topic */
    const char *group_source;   /* input.group.field (borrowed), @lang, @author, @key; NULL:
                                   no groups (groups.h) */
    uint32_t group_capacity;    /* track.group.capacity: 0 = no groups */
    uint32_t subject_docs;      /* track.subject.docs: block of the new-subject test, 0 = off */
    uint32_t subject_words;     /* track.subject.words: words it counts at most */
} slda_track_opts_t;

/* Whether input.group.field names a source of groups this run has: a field, @lang, @author
 * (model.kind=atm: the authors the model reads), @key (keyed: the service's messages; train's
 * files have no key). SLDA_ERR_INVALID with the reason otherwise. */
slda_err_t slda_track_group_check(const slda_conf_t *conf, slda_model_kind_t kind, int keyed,
                                  char *errstr, size_t errstr_size);
/* The defaults of the property table (for tests and tools). */
void slda_track_opts_default(slda_track_opts_t *opts);
/* From a configuration's track.* keys. */
void slda_track_opts_from_conf(slda_track_opts_t *opts, const slda_conf_t *conf);

typedef struct slda_track_s slda_track_t;

/* A tracker for K topics. */
slda_track_t *slda_track_new(uint32_t K, const slda_track_opts_t *opts);
void slda_track_destroy(slda_track_t *track);
uint32_t slda_track_topics(const slda_track_t *track);

/* ---- event time ---- */
/* The event time to use for a message stamped ts_ms (0 = none: now_ms is
 * used) when the wall clock says now_ms: later than now + 1 day is clamped to
 * the newest event time seen (now when none) and counted (*clamped = 1);
 * earlier than the newest seen is late data, accepted and counted. Moves the
 * newest event time. */
int64_t slda_track_time(slda_track_t *track, int64_t ts_ms, int64_t now_ms, int *clamped);
int64_t slda_track_newest(const slda_track_t *track);  /* 0 = none yet */
/* Start from a newest event time known elsewhere (a snapshot's header). */
void slda_track_set_newest(slda_track_t *track, int64_t ms);
uint64_t slda_track_clamped(const slda_track_t *track);
uint64_t slda_track_late(const slda_track_t *track);

/* ---- prevalence (track/prev.h: several resolutions at once) ---- */
#define SLDA_TRACK_POINTS 400 /* windows a chart shows at most (slda_track_pick) */
/* Add one trained document's mixture (K floats) at event time ms to its window
 * of every resolution (tier). With model and doc (its words, ids of model's
 * vocabulary), the document may be kept in the windows' samples, to be scored
 * again under a later model (slda_track_rescore). Nothing is dropped: the last
 * tier doubles its windows to hold any span; a finer tier's ring forgets its
 * oldest windows and counts the documents that came older than it
 * (slda_track_beyond). slda_track_dropped counts mixtures that were not ones
 * (zero or not finite). */
void slda_track_add(slda_track_t *track, int64_t ms, const float *theta);
void slda_track_add_doc(slda_track_t *track, int64_t ms, const float *theta,
                        const slda_model_t *model, const slda_doc_t *doc);
uint64_t slda_track_dropped(const slda_track_t *track);
/* Words the new-subject test found no room for (track.subject.words: subject.h). */
uint64_t slda_track_subject_skipped(const slda_track_t *track);
uint64_t slda_track_beyond(const slda_track_t *track);
uint64_t slda_track_docs(const slda_track_t *track);
/* Tiers, finest first; a tier's window (ms) now (the last one's grows). */
size_t slda_track_tiers(const slda_track_t *track);
int64_t slda_track_tier_width(const slda_track_t *track, size_t tier);
/* The finest tier that shows the whole span in at most max_points windows. */
size_t slda_track_pick(const slda_track_t *track, size_t max_points);
/* Windows with documents of a tier, oldest first: start times (ms), document
 * counts and K mean shares each (under the current model where the window was
 * scored again, else at training time); arrays may be NULL (then only counted).
 * Returns the number of windows. slda_track_windows: the finest tier. */
size_t slda_track_tier_windows(const slda_track_t *track, size_t tier, int64_t *start,
                               double *docs, double *share);
size_t slda_track_windows(const slda_track_t *track, int64_t *start, double *docs,
                          double *share);
/* Score again the windows whose sample was scored by a model that has moved
 * since (a quarter more updates), those of the chart's tier first, until
 * deadline (slda_mono_s(); 0: all of them). Returns how many were scored. */
size_t slda_track_rescore(slda_track_t *track, const slda_model_t *model, double deadline);
/* Trend of topic k over the last trend.windows windows with documents: the
 * least-squares slope of its share per window; 0 with fewer than 2. */
double slda_track_slope(const slda_track_t *track, uint32_t k);
/* "emerging", "fading" or NULL, from the slope and track.trend.slope. */
const char *slda_track_flag(const slda_track_t *track, uint32_t k);

/* ---- drift and events ---- */
/* A topic's words at one snapshot: up to SLDA_TRACK_TOP words (NUL-terminated,
 * borrowed for the call) with their probabilities, highest first. */
typedef struct slda_track_words_s {
    size_t n;
    const char *word[SLDA_TRACK_TOP];
    float prob[SLDA_TRACK_TOP];
    const char *label;  /* the topic's user label (borrowed from the model), or NULL */
    char autolabel[100];/* its automatic label (slda_track_autolabel) */
} slda_track_words_t;

typedef struct slda_track_event_s {
    char kind[12];        /* birth, death, merge, change, or an engine kind */
    uint32_t topic, other;/* other: merge partner, else UINT32_MAX */
    int64_t event_ms;     /* newest event time when it was seen */
    uint64_t update;      /* the model's update count */
    double js;            /* drift (change, birth) or distance (merge); -1: none */
    double before, after; /* rise, fall: the topic's share before and after (-1: none) */
    int engine;           /* the engine's own (slda_track_engine_event) */
    char words[200];      /* top words, space separated */
} slda_track_event_t;

/* Called for each new event (may be NULL): the service logs and publishes it. */
typedef void (*slda_track_event_cb)(const slda_track_event_t *ev, void *opaque);
void slda_track_set_event_cb(slda_track_t *track, slda_track_event_cb cb, void *opaque);

/* At a snapshot: words[k] for every topic k, mass[k] = its share of the
 * model's tokens, docs = documents trained so far, update = the update count.
 * Records each topic's Jensen-Shannon distance to the previous comparison and
 * the words that entered/left its top 10, and emits birth, death, merge and
 * change events (none while docs < warmup, and no birth, change or merge when no document
 * was trained since the previous comparison: words that move then are the model refining on
 * documents it had, as train's replay of second visits at the end). The first comparison
 * only records. */
void slda_track_compare(slda_track_t *track, const slda_track_words_t *words,
                        const double *mass, uint64_t docs, uint64_t update);
/* The topic words of a model, for slda_track_compare (words borrowed from
 * the model until its vocabulary changes); mass from the topic totals.
 * words: K entries. */
void slda_track_model_words(const slda_model_t *model, slda_track_words_t *words,
                            double *mass);
/* label.c: topic k's automatic label from its words w (slda_track_model_words): its
 * SLDA_AUTOLABEL_WORDS most relevant words (LDAvis's relevance, lambda 0.6), space separated,
 * into out (truncated at a word to fit size). */
#define SLDA_AUTOLABEL_WORDS 3
void slda_track_autolabel(const slda_model_t *model, const slda_track_words_t *w, char *out,
                          size_t size);
/* The engine's own births/retirements of topic slots (a later engine reports
 * them here): recorded and emitted like the tracker's events. */
void slda_track_engine_event(slda_track_t *track, const char *kind, uint32_t topic,
                             const char *words, uint64_t update);
/* Events kept, oldest first: *n receives the count. Borrowed. */
const slda_track_event_t *slda_track_events(const slda_track_t *track, size_t *n,
                                            size_t *first);
/* Drift of topic k at the last comparison (-1 before two comparisons). */
double slda_track_drift(const slda_track_t *track, uint32_t k);

/* Jensen-Shannon distance (sqrt of the divergence, log base 2: 0..1) between
 * two truncated word distributions; the mass outside each list is one more
 * outcome ("other words"). */
double slda_track_js(const slda_track_words_t *a, const slda_track_words_t *b);

/* ---- state and JSON ---- */
/* The whole tracking state as JSON (docs/tracking.md, "Sidecar"). */
void slda_track_write_json(const slda_track_t *track, FILE *f, const char *model_name,
                           uint64_t update);
/* Restore from the sidecar text; SLDA_ERR_PARSE / SLDA_ERR_INVALID (other K,
 * other window) / SLDA_ERR_CORRUPT with the reason: the tracker is then
 * unchanged. */
slda_err_t slda_track_read_json(slda_track_t *track, const char *text, size_t len,
                                char *errstr, size_t errstr_size);
/* Write <path> atomically (slda_outfile) / read it. */
slda_err_t slda_track_save(const slda_track_t *track, const char *path, const char *model_name,
                           uint64_t update, char *errstr, size_t errstr_size);
slda_err_t slda_track_load(slda_track_t *track, const char *path, char *errstr,
                           size_t errstr_size);

/* Groups (track/groups.h: each group's share of the stream over time and its topic mix), fed
 * by slda_track_add_doc from the document's group (input.group.field, @key), its language
 * (@lang) or its authors (@author); NULL when the tracker keeps none. A state read with groups
 * of another source leaves them out. */
struct slda_groups_s;
const struct slda_groups_s *slda_track_groups(const slda_track_t *track);
/* /api/groups (malloc'ed; NULL without groups): groups.h's JSON of the largest groups. */
char *slda_track_json_groups(const slda_track_t *track, size_t *len);

/* Page JSON for /api/topics, /api/prevalence, /api/events (malloc'ed, caller frees). */
char *slda_track_json_topics(const slda_track_t *track, const slda_track_words_t *words,
                             const double *mass, size_t *len);
char *slda_track_json_prevalence(const slda_track_t *track, size_t *len);
/* /api/chart: what the page's chart draws, the n topics whose share moved most over the windows
 * shown (the standard deviation of their share, each window's shrunk toward the mean by
 * SLDA_CHART_SHRINK documents' weight), with their shares only: {"K","window_ms","newest_ms",
 * "topics":[ids],"mean":[n: each one's mean share over the windows, weighted by documents],
 * "moved":[n: that deviation],"windows":[{"start","docs","share":[n]}]} (at K=1000: 1/100 of
 * /api/prevalence). */
#define SLDA_CHART_TOPICS 8
#define SLDA_CHART_SHRINK 10.0
char *slda_track_json_chart(const slda_track_t *track, size_t n, size_t *len);
char *slda_track_json_events(const slda_track_t *track, size_t *len);
/* page_authors.c: /api/authors of an author-topic model ({"authors","capacity","evicted",
 * "list":[{"author","tokens","topics":[[k,share],...]}],"topics":[{"topic","authors":
 * [[name,tokens of the topic],...]}]}), malloc'ed; NULL for another kind. */
char *slda_track_json_authors(const slda_model_t *model, size_t *len);
/* page_supers.c: /api/supers of a pachinko allocation model ({"S","K","supers":[{"super",
 * "topics":[[k,share of its prior],...5]}]}), malloc'ed; NULL for another kind. */
char *slda_track_json_supers(const slda_model_t *model, size_t *len);
/* Topic k's representative documents (track.examples of them, best first; docs/tracking.md):
 * how many, and with i < that count the i-th one's id, event time, share and the start of its
 * text (borrowed until the tracker next changes; any pointer may be NULL). */
size_t slda_track_example(const slda_track_t *track, uint32_t k, size_t i, const char **id,
                          int64_t *ms, double *score, const char **text);
/* /api/examples: {"K","per_topic","topics":[[{"topic","score","update","event_ms","time",
 * "id","text"} ...topic 0's, best first], ...]} (examples.c). */
char *slda_track_json_examples(const slda_track_t *track, size_t *len);

/* Time values (event times from fields): io/evtime.h. */

/* ---- page.c: what the HTTP thread serves ---- */
typedef enum {
    SLDA_PAGE_TOPICS = 0,
    SLDA_PAGE_PREVALENCE,
    SLDA_PAGE_EVENTS,
    SLDA_PAGE_STATUS,
    SLDA_PAGE_EXAMPLES,
    SLDA_PAGE_CHART,       /* /api/chart: the prevalence of the topics the page draws */
    SLDA_PAGE_AUTHORS, /* model.kind=atm only (page_authors.c) */
    SLDA_PAGE_GROUPS,  /* /api/groups: with input.group.field (groups.c) */
    SLDA_PAGE_SUPERS,  /* /api/supers: model.kind=pam only (page_supers.c) */
    SLDA_PAGE__COUNT
} slda_page_doc_t;
typedef struct slda_page_s slda_page_t;
slda_page_t *slda_page_new(void);
/* Labels asked for through POST /api/labels (the HTTP thread queues them, the service thread
 * takes them and sets them on the model): at most SLDA_PAGE_LABELS waiting; 0 when full. */
#define SLDA_PAGE_LABELS 64
/* -1 when topic is not one of the model's (slda_page_set_topics). */
int slda_page_label_post(slda_page_t *page, uint32_t topic, const char *text);
void slda_page_set_topics(slda_page_t *page, uint32_t K);
/* The oldest waiting label (text malloc'ed, the caller frees): 1, or 0 when none waits. */
int slda_page_label_take(slda_page_t *page, uint32_t *topic, char **text);
void slda_page_destroy(slda_page_t *page);
/* Publish a new version of one document (takes ownership of json, malloc'ed).
 * Called by the service thread; readers keep the old one until they drop it. */
void slda_page_set(slda_page_t *page, slda_page_doc_t doc, char *json, size_t len);
/* A copy of the current document (malloc'ed, caller frees), or NULL when none
 * was published yet. Any thread. */
char *slda_page_get(slda_page_t *page, slda_page_doc_t doc, size_t *len);
/* The same gzip-compressed (made once per version, by the first thread asking: the HTTP
 * thread), or NULL. */
char *slda_page_get_gzip(slda_page_t *page, slda_page_doc_t doc, size_t *len);
/* The document's version: it moves only when a publication changes its text, so the page
 * fetches again only what changed (the status lists the versions). */
uint64_t slda_page_version(slda_page_t *page, slda_page_doc_t doc);
/* The live page: one self-contained HTML document (inline CSS and JS). */
const char *slda_page_html(size_t *len);

#endif
