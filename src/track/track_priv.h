/* track_priv.h - the tracker's state, shared by track.c, track_state.c and page_json.c. */
#ifndef SLDA_TRACK_PRIV_H
#define SLDA_TRACK_PRIV_H

#include "track/groups.h"
#include "track/prev.h"
#include "track/sample.h"
#include "track/subject.h"
#include "track/track.h"

#define MERGED_MAX 4096 /* close pairs remembered (so a merge is reported once) */

typedef struct tw_s {  /* one topic's kept words */
    size_t n;
    char *word[SLDA_TRACK_TOP];
    float prob[SLDA_TRACK_TOP];
} tw_t;

typedef struct topic_s {
    tw_t words;          /* at the last comparison */
    double mass;         /* share of the model's tokens then */
    double drift;        /* JS distance at the last comparison, -1 = none */
    int dead;            /* a death was reported and the topic has not come back */
    uint32_t about;      /* documents since the last comparison with at least
                            SLDA_EXAMPLE_MIN of this topic (UINT32_MAX: unknown, an older state) */
    /* top-10 changes at the last comparison: lists of words, each ended by a NUL, the
     * list by an empty one (a word may hold spaces: a JSON "tokens" field) */
    char entered[200], left[200];
} topic_t;

/* A representative document of a topic (examples.c). */
#define SLDA_EXAMPLE_MIN 0.25 /* the least share of a document that makes it one of a topic's */
#define SLDA_SUBJECT_DOCS 2   /* documents about a slot's new words that make them a subject */
typedef struct slda_example_s {
    double score;            /* the topic's share of the document's mixture when trained */
    int64_t ms;              /* its event time */
    uint64_t seq;            /* the tracker's documents before it (0: restored from a state) */
    uint64_t scored_at;      /* the model's update count when score was computed */
    slda_sdoc_t *doc;        /* its words by key, to score it again (NULL: restored) */
    char id[96];             /* its id (cut at 95 bytes) */
    char text[SLDA_DOC_SNIPPET + 1]; /* the start of its text */
} slda_example_t;

struct slda_track_s {
    uint32_t K;
    slda_track_opts_t o;
    /* event time */
    int64_t newest_ms;
    uint64_t clamped, late, dropped, docs;
    /* prevalence at several resolutions (prev.h): tier 0 is track.window x track.windows */
    slda_prev_t *prev;
    /* drift */
    topic_t *topics;
    int compared;
    int settled;            /* the model has settled (slda_track_compare): events may be raised */
    int64_t *chg_ms;        /* 2 K: the event time of each topic's last rise, fall raised */
    uint64_t compared_docs; /* documents trained at the last comparison */
    uint32_t (*merged)[2];
    size_t nmerged;
    /* events */
    slda_track_event_t ev[SLDA_TRACK_EVENTS];
    size_t nev, ev_first; /* ring: nev kept, oldest at ev_first */
    slda_track_event_cb cb;
    void *cb_opaque;
    /* representative documents (examples.c): K lists of o.examples, nex[k] used */
    slda_example_t *ex;
    uint32_t *nex;
    uint64_t ex_compared;   /* the tracker's documents at the last comparison */
    uint32_t ex_cursor;     /* the topic the next rescoring starts at */
    /* groups (groups.c), NULL without them; group_src: their source (owned) */
    slda_groups_t *groups;
    char *group_src;
    /* new subjects from the words (subject.h), NULL when track.subject.docs is 0 */
    slda_subjects_t *subjects;
    uint64_t *subject_keys; /* scratch: a document's keys */
    size_t subject_cap;
};

/* examples.c */
void slda_track_examples_init(slda_track_t *track);
void slda_track_examples_free(slda_track_t *track);
/* A trained document (its id, the start of its text) for the lists of the topics holding at
 * least SLDA_EXAMPLE_MIN of its mixture. */
void slda_track_examples_offer(slda_track_t *track, int64_t ms, const float *theta,
                               const slda_model_t *model, const slda_doc_t *doc);
/* Score again, under model, the documents scored at an update count a quarter or more behind,
 * topic after topic from where the last call stopped, until deadline (slda_mono_s; 0: all):
 * a topic's list is then re-sorted and loses the documents under SLDA_EXAMPLE_MIN. */
void slda_track_examples_rescore(slda_track_t *track, const slda_model_t *model,
                                 double deadline);
/* One document into topic k's list (by decreasing score; the weakest goes when full). */
void slda_track_examples_put(slda_track_t *track, uint32_t k, double score, int64_t ms,
                             const char *id, const char *text, slda_sdoc_t *doc,
                             uint64_t scored_at);
/* Topic k's slot holds another topic now: its documents offered before the tracker had seen
 * `before` documents go (the later ones are of the topic it holds now). */
void slda_track_examples_forget(slda_track_t *track, uint32_t k, uint64_t before);
/* Topic k's documents, best first (borrowed); returns how many. */
size_t slda_track_examples(const slda_track_t *track, uint32_t k, const slda_example_t **out);
/* "examples":[{"topic","score","event_ms","time","id","text"}...] (the state), or with
 * by_topic "topics":[[...topic 0's...],...] (the page). */
void slda_track_write_examples(const slda_track_t *track, FILE *f, int by_topic);

/* track.c: a new event at the ring's end (the oldest dropped when full), time the newest. */
slda_track_event_t *slda_track_event_push(slda_track_t *track);
/* track_state.c: a space separated word list, a NUL separated one (topic_t's entered,
 * left) and an event as JSON arrays (the page's documents write them too). */
void slda_track_write_words(FILE *f, const char *s);
void slda_track_write_list(FILE *f, const char *list);
void slda_track_write_event(FILE *f, const slda_track_event_t *ev);

#endif /* SLDA_TRACK_PRIV_H */
