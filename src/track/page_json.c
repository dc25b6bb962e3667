/* page_json.c - the live page's JSON documents (topics, prevalence, events) from the tracker.
 *
 * Built on the service thread from the tracker and the model's words, then published to
 * page.c's store, which the HTTP thread serves; nothing here runs on that thread.
 */
#include "track/track_priv.h"

#include "core/topn.h"

#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- page JSON ---- */

char *slda_track_json_topics(const slda_track_t *track, const slda_track_words_t *words,
                             const double *mass, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "{\"K\":%u,\"topics\":[", track->K);
    for (uint32_t k = 0; k < track->K; k++) {
        const topic_t *t = &track->topics[k];
        fprintf(f, "%s{\"id\":%u,\"weight\":%.6g,\"label\":", k ? "," : "", k, mass[k]);
        if (words[k].label)
            slda_json_write_string(f, words[k].label);
        else
            fputs("null", f);
        fprintf(f, ",\"auto\":");
        slda_json_write_string(f, words[k].autolabel);
        fprintf(f, ",\"examples\":%zu,\"words\":[",
                slda_track_example(track, k, 0, NULL, NULL, NULL, NULL));
        for (size_t i = 0; i < words[k].n && i < SLDA_TRACK_SHOW; i++) {
            fprintf(f, "%s[", i ? "," : "");
            slda_json_write_string(f, words[k].word[i]);
            fprintf(f, ",%.5g]", (double)words[k].prob[i]);
        }
        const char *flag = slda_track_flag(track, k);
        fprintf(f, "],\"drift\":");
        if (t->drift >= 0)
            fprintf(f, "%.4f", t->drift);
        else
            fprintf(f, "null");
        fprintf(f, ",\"trend\":%.5g,\"flag\":%s%s%s,\"dead\":%s,\"entered\":",
                slda_track_slope(track, k), flag ? "\"" : "", flag ? flag : "null",
                flag ? "\"" : "", t->dead ? "true" : "false");
        slda_track_write_list(f, t->entered); /* each word its own string, spaces kept */
        fprintf(f, ",\"left\":");
        slda_track_write_list(f, t->left);
        fputc('}', f);
    }
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

/* The windows the charts show (the tier of slda_prev_pick), oldest first: malloc'ed, *n of
 * them; their tier and width. */
static const slda_pwin_t **shown_windows(const slda_prev_t *p, size_t *tier, int64_t *width,
                                         size_t *n)
{
    *tier = slda_prev_pick(p, SLDA_TRACK_POINTS);
    *width = slda_prev_width(p, *tier);
    *n = slda_prev_list(p, *tier, NULL, 0);
    const slda_pwin_t **w = slda_xmalloc((*n ? *n : 1) * sizeof *w);
    slda_prev_list(p, *tier, w, *n);
    return w;
}

char *slda_track_json_prevalence(const slda_track_t *track, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    const slda_prev_t *p = track->prev;
    size_t tier, n;
    int64_t width, first, last;
    const slda_pwin_t **w = shown_windows(p, &tier, &width, &n);
    slda_prev_span(p, &first, &last);
    fprintf(f, "{\"K\":%u,\"window_ms\":%lld,\"newest_ms\":%lld,\"first_ms\":%lld,"
               "\"last_ms\":%lld,\"tier\":%zu,\"outside\":%.0f,\"tiers\":[", track->K,
            (long long)width, (long long)track->newest_ms, (long long)first, (long long)last,
            tier, slda_prev_outside(p, tier));
    for (size_t t = 0; t < p->ntiers; t++)
        fprintf(f, "%s{\"window_ms\":%lld,\"windows\":%u,\"beyond\":%llu}", t ? "," : "",
                (long long)slda_prev_width(p, t), p->tier[t].conf.windows,
                (unsigned long long)p->tier[t].beyond);
    fprintf(f, "],\"windows\":[");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"start\":%lld,\"docs\":%.0f,\"rescored\":%s,\"share\":[",
                i ? "," : "", (long long)(w[i]->win * width), w[i]->docs,
                w[i]->now ? "true" : "false");
        for (uint32_t k = 0; k < track->K; k++)
            fprintf(f, "%s%.4g", k ? "," : "", slda_prev_share(p, w[i], k));
        fprintf(f, "]}");
    }
    free(w);
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

char *slda_track_json_chart(const slda_track_t *track, size_t n, size_t *len)
{
    const slda_prev_t *p = track->prev;
    size_t tier, nw, size = 0;
    int64_t width;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    const slda_pwin_t **w = shown_windows(p, &tier, &width, &nw);
    /* each topic's mean share over the windows shown (weighted by their documents), and how
     * far it moved: the standard deviation of its share over those windows, each window's share
     * shrunk toward the mean by SLDA_CHART_SHRINK documents' weight (as the page draws it), so
     * that the noise of windows of few documents does not count as moving */
    double *mean = slda_xcalloc(track->K, sizeof *mean), docs = 0;
    double *moved = slda_xcalloc(track->K, sizeof *moved);
    for (size_t i = 0; i < nw; i++) {
        docs += w[i]->docs;
        for (uint32_t k = 0; k < track->K; k++)
            mean[k] += slda_prev_share(p, w[i], k) * w[i]->docs;
    }
    for (uint32_t k = 0; k < track->K; k++)
        mean[k] = docs > 0 ? mean[k] / docs : 0;
    for (size_t i = 0; i < nw; i++)
        for (uint32_t k = 0; k < track->K; k++) {
            double d = w[i]->docs, x = slda_prev_share(p, w[i], k) * d;
            double v = (x + SLDA_CHART_SHRINK * mean[k]) / (d + SLDA_CHART_SHRINK) - mean[k];
            moved[k] += d * v * v;
        }
    for (uint32_t k = 0; k < track->K; k++)
        moved[k] = docs > 0 ? sqrt(moved[k] / docs) : 0;
    uint32_t top[SLDA_CHART_TOPICS];
    double key[SLDA_CHART_TOPICS];
    uint32_t m = 0;
    n = n < SLDA_CHART_TOPICS ? n : SLDA_CHART_TOPICS;
    for (uint32_t k = 0; n && k < track->K; k++)
        slda_topn_push(top, key, &m, (uint32_t)n, k, moved[k]);
    fprintf(f, "{\"K\":%u,\"window_ms\":%lld,\"newest_ms\":%lld,\"topics\":[", track->K,
            (long long)width, (long long)track->newest_ms);
    for (size_t j = 0; j < m; j++)
        fprintf(f, "%s%u", j ? "," : "", top[j]);
    fprintf(f, "],\"mean\":[");
    for (size_t j = 0; j < m; j++)
        fprintf(f, "%s%.4g", j ? "," : "", mean[top[j]]);
    fprintf(f, "],\"moved\":[");
    for (size_t j = 0; j < m; j++)
        fprintf(f, "%s%.4g", j ? "," : "", moved[top[j]]);
    fprintf(f, "],\"windows\":[");
    for (size_t i = 0; i < nw; i++) {
        fprintf(f, "%s{\"start\":%lld,\"docs\":%.0f,\"share\":[", i ? "," : "",
                (long long)(w[i]->win * width), w[i]->docs);
        for (size_t j = 0; j < m; j++)
            fprintf(f, "%s%.4g", j ? "," : "", slda_prev_share(p, w[i], top[j]));
        fprintf(f, "]}");
    }
    fprintf(f, "]}");
    free(mean);
    free(moved);
    free(w);
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

char *slda_track_json_events(const slda_track_t *track, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "{\"events\":[");
    for (size_t i = 0; i < track->nev; i++) {
        if (i)
            fputc(',', f);
        slda_track_write_event(f, &track->ev[(track->ev_first + i) % SLDA_TRACK_EVENTS]);
    }
    fprintf(f, "]}");
    fclose(f);
    if (len)
        *len = size;
    return buf;
}
