/* report.h - `streamlda report`: what is gathered from a snapshot directory, then written out.
 *
 * cli_report.c (the command) fills the options of an slda_report_t, slda_report_collect
 * gathers everything the report shows (report_collect.c: the snapshots, their weights, drift
 * and events; report_sidecar.c: the tracker's states beside them), and the writers render it
 * without reading anything else: report_json.c, report_html.c. A writer needs only this struct
 * (and the model in ref for words), so a new rendering or a new section of data touches one
 * side of this header.
 */
#ifndef SLDA_CLI_REPORT_H
#define SLDA_CLI_REPORT_H

#include "engine/model.h"
#include "track/track.h"

#include <stdint.h>
#include <stdio.h>

/* One snapshot used: a point of every chart. */
typedef struct slda_report_point_s {
    char *file;      /* owned: its base name */
    uint64_t t, docs; /* update count, documents */
    int64_t time_ms; /* on the report's axis: event time, or the last update's wall clock */
    int event_time;  /* time_ms is an event time (else the last update's wall clock) */
    int64_t updated_ms;
    int gap_before;  /* a snapshot is missing (skipped, or a step much longer than usual) */
} slda_report_point_t;

/* An event found between two consecutive points (change, taken, drift, moved, rise, fall). */
typedef struct slda_report_event_s {
    size_t point;          /* the later point of the step */
    uint32_t topic, other; /* other: UINT32_MAX unless moved */
    char kind[8];
    double js, w0, w1;     /* distance; the topic's weight before and after */
    char words[400];
} slda_report_event_t;

/* A topic's share rising or falling over event time (track/changes.c). */
typedef struct slda_report_change_s {
    char kind[8];          /* "rise" or "fall" */
    uint32_t topic;
    int64_t start_ms;      /* the start of the window block where it shows */
    double before, after;  /* the share in the baseline and in the block */
    double z;              /* the test statistic */
    double docs_before, docs_after;
} slda_report_change_t;

/* An author-topic model's report names each topic's authors who wrote most of it (this many). */
#define SLDA_REPORT_AUTHORS 5

typedef struct slda_report_s {
    /* asked: set by the caller before slda_report_collect */
    const char *dir;
    uint32_t nwords, top; /* words shown per topic; words per topic in the distances (0: all) */
    double change;        /* drift that makes a change event */
    uint64_t warmup;      /* no events while the earlier snapshot of a step has fewer documents */
    /* gathered */
    char *model_name;
    uint32_t K;
    slda_report_point_t *pts; /* by update count */
    size_t npts;
    double *weights; /* npts x K */
    double *drift;   /* npts x K, NAN at the first point */
    slda_report_event_t *ev;
    size_t nev, evcap;
    char **skipped;  /* "file: reason" */
    size_t nskipped, skipcap;
    slda_model_t *ref; /* the newest usable snapshot, once every point is in */
    /* the tracker's prevalence windows (sidecars <snapshot>.track.json) at each resolution it
     * keeps, merged over every snapshot's sidecar, a newer sidecar's value of a window
     * winning; a window's share is under the model of its sidecar's snapshot where the tracker
     * scored it again (now), else the model's at training time */
    struct slda_report_tier_s {
        int64_t ms;        /* window width */
        int64_t *start;
        double *docs;
        double *share;     /* n x K */
        unsigned char *now;/* n: the share is under a later model than the training's */
        size_t n, cap;
        uint64_t beyond;   /* documents older than this ring when they came (newest sidecar) */
    } tiers[8];
    size_t ntiers;
    /* the tier the charts show (the finest holding the whole span in at most
     * SLDA_TRACK_POINTS windows; set by slda_report_collect): aliases into tiers[] */
    int64_t win_ms;
    int64_t *win_start;
    double *win_docs;
    double *win_share; /* nwin x K */
    unsigned char *win_now;
    size_t nwin;
    double win_outside; /* documents of the stream outside these windows (stray times) */
    size_t nsidecars;
    /* the events the tracker recorded while training (in the sidecars; merged, oldest first) */
    slda_track_event_t *tev;
    size_t ntev, tevcap;
    /* rises and falls of topics' shares over the charts' windows (track/changes.c) */
    slda_report_change_t *chg;
    size_t nchg, chgcap;
    /* the newest model's labels (K each): the user's (NULL: none) and the automatic ones */
    char **label, **autolabel;
    /* each topic's representative documents, from the newest sidecar holding them (or NULL) */
    struct slda_report_examples_s *examples;
} slda_report_t;

/* report_examples.c: the representative documents of each topic ("examples" of a tracking
 * state: docs/tracking.md) beside the snapshot at snapshot_path. NULL with the reason on
 * standard error when the state is missing or unusable (quiet: only when missing). */
typedef struct slda_report_examples_s slda_report_examples_t;
slda_report_examples_t *slda_report_examples_load(const char *snapshot_path, uint32_t K,
                                                  int quiet);
/* Topic k's documents: as ,"examples":[{"id","event_ms","time","score","text"}...] (JSON,
 * inside the topic's object), as indented lines (text), or how many there are. */
void slda_report_examples_json(FILE *f, const slda_report_examples_t *ex, uint32_t k);
void slda_report_examples_text(FILE *f, const slda_report_examples_t *ex, uint32_t k);
size_t slda_report_examples_count(const slda_report_examples_t *ex, uint32_t k);
/* Topic k's i-th document: id, event time (ms), score, text (borrowed). */
void slda_report_examples_get(const slda_report_examples_t *ex, uint32_t k, size_t i,
                              const char **id, int64_t *ms, double *score, const char **text);
void slda_report_examples_free(slda_report_examples_t *ex);
/* The groups of that state (track/groups.h), or NULL when it has none. */
struct slda_groups_s;
const struct slda_groups_s *slda_report_examples_groups(const slda_report_examples_t *ex);
/* report_groups.c: ,"groups":{...} (null without) for the JSON; the largest groups' table
 * for the HTML (nothing without). */
void slda_report_groups_json(FILE *f, const slda_report_t *r);
void slda_report_groups_html(FILE *f, const slda_report_t *r);
/* report_supers.c: a pachinko allocation model's super-topics with their largest topics:
 * ,"supers":{...as /api/supers...} (null for other kinds) for the JSON, a table for the HTML (nothing). */
void slda_report_supers_json(FILE *f, const slda_report_t *r);
void slda_report_supers_html(FILE *f, const slda_report_t *r);


/* report_collect.c: the snapshots of model (NULL: the one with most snapshots) in r->dir,
 * loaded in turn (at most two models in memory), into r. Prints on stderr what it skips and
 * why; -1 after printing why there is nothing to report. */
int slda_report_collect(slda_report_t *r, const char *model);
/* Free what r holds; accepts a zeroed r. */
void slda_report_clear(slda_report_t *r);

/* report_sidecar.c: the tracker's state beside the snapshot at snapshot_path (its model is
 * model, r->K set): its newest event time into *newest_ms, its prevalence windows and events
 * merged into r. 0 when there is none, 1 when used, -1 when it is there but unusable (printed,
 * and then ignored). */
int slda_report_sidecar_read(slda_report_t *r, const char *snapshot_path,
                             const slda_model_t *model, int64_t *newest_ms);
/* After the last sidecar: the tier the charts show, into r->win_*. */
void slda_report_pick_tier(slda_report_t *r);

/* report_collect.c: after the windows are picked, each topic's significant rises and falls
 * against its own recent baseline (track/changes.h) into r->chg, by time. */
void slda_report_changes(slda_report_t *r);
/* report_collect.c: topic k's label: the user's, else the automatic one (NULL before they are
 * read). */
const char *slda_report_label(const slda_report_t *r, uint32_t k);

/* report_json.c, report_html.c: the gathered report (at least one point). */
void slda_report_write_json(const slda_report_t *r, FILE *f);
void slda_report_write_html(const slda_report_t *r, FILE *f);

#endif /* SLDA_CLI_REPORT_H */
