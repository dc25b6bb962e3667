/* cli_snapshots.c - train --snapshot-dir: snapshots along the way, the tracker's state beside each.
 *
 * `train --snapshot-dir DIR [--snapshot-every N] [--time-field NAME]` (cli_train.c calls
 * slda_cli_snaps_*) writes a snapshot <DIR>/<model>-<updates, 20 digits>.slda (io/snapdir.h)
 * each time the model's documents reach the next multiple of N (without N, none) and one at the
 * end; an update count already written is not written again. With a time field, every trained
 * document's mixture is added to the tracker of src/track at its event time (far-future times
 * clamped, late ones counted, as the service does), each snapshot gets the newest event time in
 * its header
 * (event_ms) and the tracker compares the topics and saves its state beside it
 * (<snapshot>.track.json): the prevalence by event time that `report` charts. One thread: the
 * trainer's. The directory is made and probed before training starts, so a bad one costs
 * nothing; a snapshot that cannot be written later stops the run.
 */
#include "cli/cli.h"
#include "core/slda_int.h"
#include "engine/model.h"
#include "io/snapdir.h"
#include "track/groups.h"
#include "track/track.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slda_cli_snaps_s {
    char *dir, *name;
    uint64_t every, next;   /* a snapshot when the model's documents reach next */
    uint64_t written_t;     /* update count of the last snapshot written (UINT64_MAX: none) */
    slda_track_t *track;    /* with --time-field: prevalence by event time, drift, events */
    slda_track_words_t *words;
    double *mass;
    float *thetas;
    size_t thetas_cap;
    uint32_t K;
    uint32_t windows; /* track.windows, for the summary */
};

slda_cli_snaps_t *slda_cli_snaps_new(const slda_conf_t *conf, const slda_model_t *model,
                                           const char *dir, uint64_t every, int timed)
{
    size_t err_size = strlen(dir) + 1024; /* the directory in full, as given */
    char *err = slda_xmalloc(err_size);
    const char *name = slda_model_name(model) ? slda_model_name(model) : conf->model_name;
    if (slda_snapdir_make("--snapshot-dir", dir, err, err_size) != SLDA_OK ||
        slda_snapdir_check(dir, name, err, 1024) != SLDA_OK) {
        fprintf(stderr, "streamlda train: %s\n", err);
        free(err);
        return NULL;
    }
    free(err);
    slda_cli_snaps_t *tl = slda_xcalloc(1, sizeof *tl);
    tl->dir = slda_xstrdup(dir);
    tl->name = slda_xstrdup(name);
    tl->every = every;
    tl->next = every ? every : UINT64_MAX;
    tl->written_t = UINT64_MAX;
    tl->K = slda_model_topics(model);
    if (timed) {
        slda_track_opts_t opts;
        slda_track_opts_from_conf(&opts, conf);
        tl->track = slda_track_new(tl->K, &opts);
        tl->windows = opts.windows;
        tl->words = slda_xcalloc(tl->K, sizeof *tl->words);
        tl->mass = slda_xcalloc(tl->K, sizeof *tl->mass);
    }
    return tl;
}

void slda_cli_snaps_destroy(slda_cli_snaps_t *tl)
{
    if (!tl)
        return;
    slda_track_destroy(tl->track);
    free(tl->words);
    free(tl->mass);
    free(tl->thetas);
    free(tl->dir);
    free(tl->name);
    free(tl);
}

float *slda_cli_snaps_thetas(slda_cli_snaps_t *tl, size_t n)
{
    if (!tl || !tl->track)
        return NULL;
    if (n * tl->K > tl->thetas_cap) {
        tl->thetas_cap = n * tl->K;
        tl->thetas = slda_xrealloc(tl->thetas, tl->thetas_cap * sizeof *tl->thetas);
    }
    return tl->thetas;
}

static int snaps_write(slda_cli_snaps_t *tl, slda_model_t *model)
{
    char path[4200], err[1024];
    slda_model_flush(model); /* a snapshot holds every update so far (global.stale) */
    uint64_t t = slda_model_updates(model);
    if (t == tl->written_t)
        return 0;
    slda_snapdir_path(path, sizeof path, tl->dir, tl->name, t);
    slda_snapshot_meta_t meta = {0};
    if (tl->track)
        meta.event_ms = slda_track_newest(tl->track);
    if (slda_snapshot_write_meta(model, &meta, path, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "streamlda train: %s\n", err);
        return -1;
    }
    tl->written_t = t;
    if (tl->track) {
        slda_track_model_words(model, tl->words, tl->mass);
        slda_track_compare(tl->track, tl->words, tl->mass, slda_model_docs(model), t);
        /* the windows' samples scored again under this snapshot's model: the prevalence the
         * report shows is then the timeline under one model */
        slda_track_rescore(tl->track, model, 0);
        char side[4200];
        slda_snapdir_track_path(side, sizeof side, path);
        if (slda_track_save(tl->track, side, tl->name, t, err, sizeof err) != SLDA_OK) {
            fprintf(stderr, "streamlda train: %s\n", err);
            return -1;
        }
    }
    return 0;
}

void slda_cli_snaps_compare(slda_cli_snaps_t *tl, slda_model_t *model)
{
    if (!tl || !tl->track)
        return;
    /* no flush: the model trains on exactly as without it (its last update, still pending,
     * is in the final snapshot's comparison) */
    slda_track_model_words(model, tl->words, tl->mass);
    slda_track_compare(tl->track, tl->words, tl->mass, slda_model_docs(model),
                       slda_model_updates(model));
}

int slda_cli_snaps_step(slda_cli_snaps_t *tl, slda_model_t *model, const slda_doc_t *docs,
                           size_t n, const float *thetas, int final)
{
    if (!tl)
        return 0;
    if (tl->track && thetas)
        for (size_t i = 0; i < n; i++) {
            /* as the service does: far-future times clamped, late ones counted */
            int clamped;
            int64_t ms = slda_track_time(tl->track, docs[i].time_ms, slda_now_ms(), &clamped);
            slda_track_add_doc(tl->track, ms, thetas + i * tl->K, model, &docs[i]);
        }
    uint64_t d = slda_model_docs(model);
    if (!final && d < tl->next)
        return 0;
    while (tl->next <= d)
        tl->next += tl->every;
    int rc = snaps_write(tl, model);
    if (final && tl->track) {
        /* what happened to the event times (docs/tracking.md, "Event time") */
        char newest[40] = "none";
        if (slda_track_newest(tl->track))
            slda_time_format(slda_track_newest(tl->track), newest, sizeof newest);
        fprintf(stderr,
                "streamlda train: event time: newest %s, %llu late (older than the newest before "
                "them), %llu in the far future (clamped); prevalence: %llu documents, %llu left "
                "out (no mixture), %llu older than the %u finest windows kept (counted in the "
                "coarser ones)\n",
                newest, (unsigned long long)slda_track_late(tl->track),
                (unsigned long long)slda_track_clamped(tl->track),
                (unsigned long long)slda_track_docs(tl->track),
                (unsigned long long)slda_track_dropped(tl->track),
                (unsigned long long)slda_track_beyond(tl->track), tl->windows);
        const slda_groups_t *g = slda_track_groups(tl->track);
        if (g) /* docs/tracking.md, "Groups" */
            fprintf(stderr,
                    "streamlda train: groups by %s: %u kept, %llu evicted into \"%s\" "
                    "(track.group.capacity)\n",
                    slda_groups_source(g), slda_groups_count(g),
                    (unsigned long long)slda_groups_evicted(g), SLDA_GROUP_OTHER);
    }
    return rc;
}
