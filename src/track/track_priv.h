/* track_priv.h - the tracker's state, shared by track.c, track_state.c and page_json.c. */
#ifndef SLDA_TRACK_PRIV_H
#define SLDA_TRACK_PRIV_H

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
    /* top-10 changes at the last comparison: lists of words, each ended by a NUL, the
     * list by an empty one (a word may hold spaces: a JSON "tokens" field) */
    char entered[200], left[200];
} topic_t;

typedef struct slot_s {
    int64_t win;  /* window index (start / window_ms); INT64_MIN = empty */
    double docs;
    double *sum;  /* K */
} slot_t;

struct slda_track_s {
    uint32_t K;
    slda_track_opts_t o;
    /* event time */
    int64_t newest_ms;
    uint64_t clamped, late, dropped, docs;
    /* prevalence ring */
    slot_t *slots;
    int64_t newest_win; /* INT64_MIN = none */
    /* drift */
    topic_t *topics;
    int compared;
    uint64_t compared_docs; /* documents trained at the last comparison */
    uint32_t (*merged)[2];
    size_t nmerged;
    /* events */
    slda_track_event_t ev[SLDA_TRACK_EVENTS];
    size_t nev, ev_first; /* ring: nev kept, oldest at ev_first */
    slda_track_event_cb cb;
    void *cb_opaque;
};

/* The ring slot of window win. */
static inline slot_t *slot_of(const slda_track_t *track, int64_t win)
{
    int64_t n = track->o.windows, i = win % n;
    return &track->slots[i < 0 ? i + n : i];
}

/* track.c: a new event at the ring's end (the oldest dropped when full), time the newest. */
slda_track_event_t *slda_track_event_push(slda_track_t *track);
/* track_state.c: a space separated word list, a NUL separated one (topic_t's entered,
 * left) and an event as JSON arrays (the page's documents write them too). */
void slda_track_write_words(FILE *f, const char *s);
void slda_track_write_list(FILE *f, const char *list);
void slda_track_write_event(FILE *f, const slda_track_event_t *ev);

#endif /* SLDA_TRACK_PRIV_H */
