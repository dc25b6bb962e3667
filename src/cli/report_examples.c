/* report_examples.c - the representative documents of a snapshot's topics, from its tracking state.
 *
 * The tracker keeps each topic's documents (track/examples.c) and writes them in the state
 * beside each snapshot (<snapshot>.track.json, "examples"); `topics --docs` and `report` read
 * them back through the tracker's own reader, so what is accepted (K, the entries' types and
 * ranges) is checked in one place. A state without examples (written before them, or with
 * track.examples=0) gives topics without documents.
 */
#include "cli/report.h"
#include "core/json.h"
#include "io/evtime.h"
#include "io/snapdir.h"

#include <stdio.h>
#include <stdlib.h>

struct slda_report_examples_s {
    slda_track_t *track;
};

slda_report_examples_t *slda_report_examples_load(const char *snapshot_path, uint32_t K,
                                                  int quiet)
{
    char path[4200], err[600];
    slda_snapdir_track_path(path, sizeof path, snapshot_path);
    slda_track_opts_t opts;
    slda_track_opts_default(&opts);
    opts.examples = 50; /* the property's largest value: every entry of the state */
    slda_track_t *track = slda_track_new(K, &opts);
    slda_err_t e = slda_track_load(track, path, err, sizeof err);
    if (e != SLDA_OK) {
        if (!quiet || e != SLDA_ERR_IO)
            fprintf(stderr, "streamlda: no representative documents: %s\n", err);
        slda_track_destroy(track);
        return NULL;
    }
    slda_report_examples_t *ex = slda_xcalloc(1, sizeof *ex);
    ex->track = track;
    return ex;
}

const struct slda_groups_s *slda_report_examples_groups(const slda_report_examples_t *ex)
{
    return ex ? slda_track_groups(ex->track) : NULL;
}

size_t slda_report_examples_count(const slda_report_examples_t *ex, uint32_t k)
{
    return ex ? slda_track_example(ex->track, k, 0, NULL, NULL, NULL, NULL) : 0;
}

void slda_report_examples_get(const slda_report_examples_t *ex, uint32_t k, size_t i,
                              const char **id, int64_t *ms, double *score, const char **text)
{
    slda_track_example(ex->track, k, i, id, ms, score, text);
}

/* One document with its event time as text. */
typedef struct example_s {
    const char *id, *text;
    int64_t ms;
    double score;
    char iso[40];
} example_t;

static void example_at(const slda_report_examples_t *ex, uint32_t k, size_t i, example_t *e)
{
    slda_report_examples_get(ex, k, i, &e->id, &e->ms, &e->score, &e->text);
    slda_time_format(e->ms, e->iso, sizeof e->iso);
}

void slda_report_examples_json(FILE *f, const slda_report_examples_t *ex, uint32_t k)
{
    size_t n = slda_report_examples_count(ex, k);
    example_t e;
    fprintf(f, ",\"examples\":[");
    for (size_t i = 0; i < n; i++) {
        example_at(ex, k, i, &e);
        fprintf(f, "%s{\"id\":", i ? "," : "");
        slda_json_write_string(f, e.id);
        fprintf(f, ",\"event_ms\":%lld,\"time\":\"%s\",\"score\":%.4f,\"text\":",
                (long long)e.ms, e.iso, e.score);
        slda_json_write_string(f, e.text);
        fputc('}', f);
    }
    fputc(']', f);
}

void slda_report_examples_text(FILE *f, const slda_report_examples_t *ex, uint32_t k)
{
    size_t n = slda_report_examples_count(ex, k);
    example_t e;
    for (size_t i = 0; i < n; i++) {
        example_at(ex, k, i, &e);
        fprintf(f, "  %.2f %s %s: %s\n", e.score, e.iso, e.id, e.text);
    }
}

void slda_report_examples_free(slda_report_examples_t *ex)
{
    if (!ex)
        return;
    slda_track_destroy(ex->track);
    free(ex);
}
