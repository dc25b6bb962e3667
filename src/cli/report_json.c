/* report_json.c - `streamlda report --json`: the gathered report as one JSON object.
 *
 * The same data as the HTML page, for scripts and tests: the snapshots used (file, updates,
 * documents, time on the axis, gaps), the topics of the newest snapshot with their weight and
 * drift at every snapshot (arrays indexed like "snapshots"), the report's events, the tracker's
 * prevalence windows and events from the sidecars, the skipped files. Numbers that are not
 * finite (the drift at the first snapshot) are null. Reads only the slda_report_t (report.h)
 * and the newest model in it for words; one object and a newline, nothing else.
 */
#include "cli/cli_snap.h"
#include "cli/report.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/authors.h"
#include "engine/model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void slda_report_write_json(const slda_report_t *r, FILE *f)
{
    uint32_t K = r->K;
    size_t last = r->npts - 1;
    fprintf(f, "{\"model\":");
    slda_json_write_string(f, r->model_name);
    fprintf(f, ",\"dir\":");
    slda_json_write_string(f, r->dir);
    fprintf(f, ",\"K\":%u,\"time\":\"%s\",\"snapshots\":[", K,
            r->pts[last].event_time ? "event" : "updated");
    for (size_t p = 0; p < r->npts; p++) {
        const slda_report_point_t *pt = &r->pts[p];
        fprintf(f, "%s{\"file\":", p ? "," : "");
        slda_json_write_string(f, pt->file);
        fprintf(f, ",\"updates\":%" PRIu64 ",\"docs\":%" PRIu64 ",\"time_ms\":%" PRId64
                   ",\"event_time\":%s,\"gap_before\":%s}",
                pt->t, pt->docs, pt->time_ms, pt->event_time ? "true" : "false",
                pt->gap_before ? "true" : "false");
    }
    fprintf(f, "],\"topics\":[");
    uint32_t *ids = slda_xmalloc(r->nwords * sizeof *ids);
    for (uint32_t k = 0; k < K; k++) {
        size_t m = slda_cli_top_words(r->ref, k, r->nwords, ids);
        fprintf(f, "%s{\"topic\":%u,\"weight\":", k ? "," : "", k);
        slda_cli_json_num(f, r->weights[last * K + k]);
        fprintf(f, ",\"label\":");
        if (r->label[k])
            slda_json_write_string(f, r->label[k]);
        else
            fputs("null", f);
        fprintf(f, ",\"auto\":");
        slda_json_write_string(f, r->autolabel[k]);
        slda_report_examples_json(f, r->examples, k);
        const slda_authors_t *au = slda_model_authors(r->ref); /* model.kind=atm */
        if (au) {
            uint32_t aid[SLDA_REPORT_AUTHORS], na = slda_authors_top(au, k, SLDA_REPORT_AUTHORS, aid);
            fprintf(f, ",\"authors\":[");
            for (uint32_t i = 0; i < na; i++) {
                fputs(i ? ",[" : "[", f);
                slda_json_write_string(f, slda_authors_name(au, aid[i]));
                fputc(',', f);
                slda_cli_json_num(f, slda_authors_counts(au, aid[i])[k]);
                fputc(']', f);
            }
            fputc(']', f);
        }
        fprintf(f, ",\"words\":");
        slda_cli_json_words(f, r->ref, ids, m);
        fprintf(f, ",\"weights\":[");
        for (size_t p = 0; p < r->npts; p++) {
            fputs(p ? "," : "", f);
            slda_cli_json_num(f, r->weights[p * K + k]);
        }
        fprintf(f, "],\"drift\":[");
        for (size_t p = 0; p < r->npts; p++) {
            fputs(p ? "," : "", f);
            slda_cli_json_num(f, r->drift[p * K + k]);
        }
        fprintf(f, "]}");
    }
    free(ids);
    fprintf(f, "],\"events\":[");
    for (size_t e = 0; e < r->nev; e++) {
        const slda_report_event_t *ev = &r->ev[e];
        fprintf(f, "%s{\"kind\":\"%s\",\"topic\":%u,", e ? "," : "", ev->kind, ev->topic);
        if (ev->other != UINT32_MAX)
            fprintf(f, "\"to\":%u,", ev->other);
        fprintf(f, "\"snapshot\":");
        slda_json_write_string(f, r->pts[ev->point].file);
        fprintf(f, ",\"time_ms\":%" PRId64 ",\"js\":", r->pts[ev->point].time_ms);
        slda_cli_json_num(f, ev->js);
        fprintf(f, ",\"weight_before\":");
        slda_cli_json_num(f, ev->w0);
        fprintf(f, ",\"weight_after\":");
        slda_cli_json_num(f, ev->w1);
        fprintf(f, ",\"words\":");
        slda_json_write_string(f, ev->words);
        fputc('}', f);
    }
    fprintf(f, "],\"prevalence\":{\"window_ms\":%" PRId64 ",\"outside\":%.0f,\"tiers\":[",
            r->win_ms, r->win_outside);
    for (size_t t = 0; t < r->ntiers; t++)
        fprintf(f, "%s{\"window_ms\":%" PRId64 ",\"windows\":%zu,\"beyond\":%" PRIu64 "}",
                t ? "," : "", r->tiers[t].ms, r->tiers[t].n, r->tiers[t].beyond);
    fprintf(f, "],\"windows\":[");
    for (size_t w = 0; w < r->nwin; w++) {
        fprintf(f, "%s{\"start_ms\":%" PRId64 ",\"rescored\":%s,\"docs\":", w ? "," : "",
                r->win_start[w], r->win_now[w] ? "true" : "false");
        slda_cli_json_num(f, r->win_docs[w]);
        fprintf(f, ",\"share\":[");
        for (uint32_t k = 0; k < K; k++) {
            fputs(k ? "," : "", f);
            slda_cli_json_num(f, r->win_share[w * K + k]);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]},\"tracker_events\":[");
    for (size_t e = 0; e < r->ntev; e++) {
        const slda_track_event_t *ev = &r->tev[e];
        fprintf(f, "%s{\"kind\":", e ? "," : "");
        slda_json_write_string(f, ev->kind);
        fprintf(f, ",\"topic\":%u", ev->topic);
        if (ev->other != UINT32_MAX)
            fprintf(f, ",\"other\":%u", ev->other);
        fprintf(f, ",\"event_ms\":%" PRId64 ",\"update\":%" PRIu64 ",\"js\":", ev->event_ms,
                ev->update);
        slda_cli_json_num(f, ev->js >= 0 ? ev->js : NAN);
        fprintf(f, ",\"words\":");
        slda_json_write_string(f, ev->words);
        fputc('}', f);
    }
    fprintf(f, "],\"changes\":[");
    for (size_t e = 0; e < r->nchg; e++) {
        const slda_report_change_t *c = &r->chg[e];
        char words[180] = "";
        if (r->ref)
            slda_cli_words_text(r->ref, c->topic, 8, words, sizeof words);
        fprintf(f, "%s{\"kind\":\"%s\",\"topic\":%u,\"start_ms\":%" PRId64 ",\"before\":",
                e ? "," : "", c->kind, c->topic, c->start_ms);
        slda_cli_json_num(f, c->before);
        fprintf(f, ",\"after\":");
        slda_cli_json_num(f, c->after);
        fprintf(f, ",\"z\":");
        slda_cli_json_num(f, c->z);
        fprintf(f, ",\"docs_before\":%.0f,\"docs_after\":%.0f,\"words\":", c->docs_before,
                c->docs_after);
        slda_json_write_string(f, words);
        fputc('}', f);
    }
    fputc(']', f);
    slda_report_groups_json(f, r);
    slda_report_supers_json(f, r);
    fprintf(f, ",\"skipped\":[");
    for (size_t i = 0; i < r->nskipped; i++) {
        fputs(i ? "," : "", f);
        slda_json_write_string(f, r->skipped[i]);
    }
    fprintf(f, "]}\n");
}
