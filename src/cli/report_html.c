/* report_html.c - `streamlda report --html`: the gathered report as one self-contained page.
 *
 * One file with inline CSS and SVG and no external resource (no script, link, font or image:
 * it opens from a mail attachment or an air-gapped disk, and tests/0072 checks it): the topics
 * of the newest snapshot by weight, the events, the tracker's events and documents per
 * event-time window when the sidecars have them, and one card per topic with its weight over
 * time (dashed across gaps), drift bars and, with sidecars, its share per window. Every chart
 * of a report shares one time axis, so cards line up; text from files (model, words, paths) is
 * escaped. Times print in UTC. Reads only the slda_report_t (report.h) and the newest model in
 * it for words.
 */
#include "cli/cli.h"
#include "cli/cli_snap.h"
#include "cli/report.h"
#include "core/slda_int.h"
#include "engine/authors.h"
#include "engine/model.h"
#include "io/evtime.h"
#include "track/ticks.h"
#include "track/track.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TICK_FONT 8.0 /* the time ticks' labels, in the charts' units */
#define SHRINK_DOCS 10.0 /* a window's share on a chart: shrunk toward the topic's mean by the
                            weight of this many documents (sparse windows do not spike) */

static void html_text(FILE *f, const char *s)
{
    slda_cli_html_text(f, s);
}

/* UTC date, with the time when the report spans less than three days (seconds under an
 * hour). */
static void fmt_time(int64_t ms, int64_t span_ms, char *buf, size_t size)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, size, span_ms < 3600LL * 1000 ? "%Y-%m-%d %H:%M:%S"
                        : span_ms < 3LL * 86400 * 1000 ? "%Y-%m-%d %H:%M" : "%Y-%m-%d", &tm);
}

/* Calendar ticks across a plot (track/ticks.c: the finest step whose labels fit, years named):
 * faint lines with a label at the top, class "tick" (tests/0077 measures them). */
static void html_ticks(FILE *f, int64_t t0, int64_t t1, double L, double pw, double T, double ph)
{
    slda_tick_t tk[SLDA_TICKS_MAX];
    size_t n = slda_ticks(t0, t1, pw, TICK_FONT * 0.62, tk);
    for (size_t i = 0; i < n; i++) {
        double x = L + tk[i].x;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e3e6ea\"/>",
                x, T, x, T + ph);
        if (tk[i].labelled)
            fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" font-size=\"%g\" "
                       "fill=\"#6b7480\">%s</text>", x + 2, T + TICK_FONT, TICK_FONT, tk[i].label);
        fputc('\n', f);
    }
}

/* The top of a chart's scale for data up to max over a plot ph high: the data stay below the
 * band the ticks' labels take at the top (html_ticks), so no line or bar covers a label. */
static double chart_top(double max, double ph)
{
    return max * ph / (ph - TICK_FONT - 3);
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>streamlda report</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;"
    "padding:16px 20px;color:#1d2430;background:#f6f7f9}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px}\n"
    ".meta{color:#5b6472;margin:0 0 10px}\n"
    "table{border-collapse:collapse;background:#fff;width:100%}\n"
    "td,th{border-bottom:1px solid #e3e6ea;padding:3px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#eef0f3;font-weight:600}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}\n"
    ".bar{display:inline-block;height:9px;background:#3b6fb6;vertical-align:middle}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:10px}\n"
    ".card{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:8px 10px}\n"
    ".card h3{font-size:13px;margin:0 0 2px}.card .w{color:#5b6472;font-size:12px;"
    "margin:0 0 4px;min-height:32px}\n"
    "svg{display:block;width:100%;height:auto}\n"
    ".ev-change,.ev-taken,.ev-drift{color:#b3261e}.ev-moved{color:#7a4cb0}.ev-rise{color:#1e7a3c}"
    ".ev-fall{color:#9a6a00}\n"
    ".skip{color:#b3261e}.legend{color:#5b6472;font-size:12px}\n"
    ".lbl{font-weight:600}.auto{color:#5b6472}.by{color:#5b6472;font-size:90%}td{overflow-wrap:anywhere}\n"
    "details{font-size:12px;color:#3a4350}details li{margin:2px 0}\n"
    ".tw{overflow-x:auto}\n"
    /* a phone (390 px): the topics table drops its bar column and narrows, the events drop
     * the snapshot's file name (its time is beside it) and keep their words whole (a column
     * of 4 letters a line, cut inside words, was unreadable), every other table scrolls inside
     * its own box (.tw) rather than widening the page */
    "@media (max-width:600px){body{padding:10px 8px}td,th{padding:3px 4px}.bc,.sn{display:none}"
    "td.n{white-space:normal;overflow-wrap:normal}td.wd{overflow-wrap:normal;min-width:7em}"
    "td[class^=ev-]{overflow-wrap:normal}"
    "#groups th{display:none}#groups tr{display:block;border-bottom:1px solid #e3e6ea}"
    "#groups td{display:inline-block;border:0}#groups td.t{display:block}}\n"
    "</style></head><body>\n";

/* An author-topic model's topic k: the authors who wrote most of it (docs/models.md). */
static void html_authors(FILE *f, const slda_report_t *r, uint32_t k)
{
    const slda_authors_t *a = slda_model_authors(r->ref);
    uint32_t aid[SLDA_REPORT_AUTHORS], n = a ? slda_authors_top(a, k, SLDA_REPORT_AUTHORS, aid) : 0;
    if (!n)
        return;
    fputs("<div class=\"by\">by ", f);
    for (uint32_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        html_text(f, slda_authors_name(a, aid[i]));
    }
    fputs("</div>", f);
}

/* Topic k's representative documents, folded (<details>: no script): id, event time, its
 * share of the document, the start of the text. */
static void html_examples(FILE *f, const slda_report_t *r, uint32_t k)
{
    size_t n = slda_report_examples_count(r->examples, k);
    if (!n)
        return;
    fprintf(f, "<details><summary>%zu representative document%s</summary><ul>", n,
            n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const char *id, *text;
        int64_t ms;
        double score;
        char iso[40];
        slda_report_examples_get(r->examples, k, i, &id, &ms, &score, &text);
        slda_time_format(ms, iso, sizeof iso);
        fputs("<li class=\"doc\"><b>", f);
        html_text(f, id);
        fprintf(f, "</b> %s %.0f%%: ", iso, 100 * score);
        html_text(f, text);
        fputs("</li>", f);
    }
    fputs("</ul></details>", f);
}

/* One topic's chart: weight over time (blue; gaps dashed), drift bars (orange, 0..1 on the
 * lower band), events as red dots. Fixed viewBox so every chart has the same axes size. */
static void html_chart(FILE *f, const slda_report_t *r, uint32_t k, int64_t t0, int64_t t1)
{
    const double Wd = 320, Hd = 120, L = 40, R = 8, T = 8, B = 20, band = 22;
    double pw = Wd - L - R, ph = Hd - T - B - band - 4;
    uint32_t K = r->K;
    double ymax = 0;
    for (size_t p = 0; p < r->npts; p++)
        if (r->weights[p * K + k] > ymax)
            ymax = r->weights[p * K + k];
    ymax = ymax > 0 ? chart_top(ymax, ph) : 1.0 / K;
    double span = (double)(t1 - t0);
#define XOF(p) (span > 0 ? L + pw * (double)(r->pts[p].time_ms - t0) / span : L + pw / 2)
#define YOF(v) (T + ph - ph * (v) / ymax)
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"topic %u weight over "
               "time\" class=\"chart\" data-topic=\"%u\">\n", Wd, Hd, k, k);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfcfd\" "
               "stroke=\"#d5d9df\"/>\n", L, T, pw, ph);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%.1f%%</text>\n", L - 3, T + 8, 100 * ymax);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">0</text>\n", L - 3, T + ph);
    html_ticks(f, t0, t1, L, pw, T, ph);
    /* drift band */
    double by = T + ph + 4;
    fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fdf8f2\" "
               "stroke=\"#eadccb\"/>\n", L, by, pw, band);
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"8\" text-anchor=\"end\" "
               "fill=\"#a0652a\">drift</text>\n", L - 3, by + band / 2 + 3);
    for (size_t p = 1; p < r->npts; p++) {
        double dv = r->drift[p * K + k];
        if (!isfinite(dv))
            continue;
        double h = band * (dv > 1 ? 1 : dv);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"%.1f\" fill=\"%s\">"
                   "<title>drift %.3f</title></rect>\n",
                XOF(p) - 1, by + band - h, h, dv >= r->change ? "#b3261e" : "#e08a2c", dv);
    }
    /* the weight line, dashed across gaps */
    for (size_t p = 1; p < r->npts; p++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#3b6fb6\" "
                   "stroke-width=\"1.6\"%s/>\n",
                XOF(p - 1), YOF(r->weights[(p - 1) * K + k]), XOF(p), YOF(r->weights[p * K + k]),
                r->pts[p].gap_before ? " stroke-dasharray=\"3 3\"" : "");
    for (size_t p = 0; p < r->npts; p++) {
        int event = 0;
        for (size_t e = 0; e < r->nev && !event; e++)
            event = r->ev[e].point == p && r->ev[e].topic == k;
        if (!event && r->npts > 60)
            continue;
        fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>%s: "
                   "%.2f%%</title></circle>\n",
                XOF(p), YOF(r->weights[p * K + k]), event ? "2.8" : "1.8",
                event ? "#b3261e" : "#3b6fb6", r->pts[p].file, 100 * r->weights[p * K + k]);
    }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" fill=\"#5b6472\">%s</text>\n", L,
            Hd - 4, a);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%s</text>\n</svg>\n", Wd - R, Hd - 4, b);
#undef XOF
#undef YOF
}

/* Topic k's share of the documents in each event-time window (k == UINT32_MAX: the number of
 * documents per window, as bars). Windows without documents are absent from the sidecars, so
 * the line breaks there instead of interpolating across them. */
static void html_prev_chart(FILE *f, const slda_report_t *r, uint32_t k, int64_t t0, int64_t t1)
{
    const double Wd = 320, Hd = 84, L = 40, R = 8, T = 6, B = 18;
    double pw = Wd - L - R, ph = Hd - T - B;
    uint32_t K = r->K;
    double span = t1 > t0 ? (double)(t1 - t0) : 1, ymax = 0, mean = 0, ndocs = 0;
    for (size_t w = 0; k != UINT32_MAX && w < r->nwin; w++) {
        mean += r->win_share[w * K + k] * r->win_docs[w];
        ndocs += r->win_docs[w];
    }
    mean = ndocs > 0 ? mean / ndocs : 0;
    /* a window's share shrunk toward the topic's mean by SHRINK_DOCS documents' weight: a
     * window of two documents cannot spike to 90% and set the scale */
#define SHARE(w) ((r->win_share[(w) * K + k] * r->win_docs[w] + SHRINK_DOCS * mean) / \
                  (r->win_docs[w] + SHRINK_DOCS))
    for (size_t w = 0; w < r->nwin; w++) {
        double v = k == UINT32_MAX ? r->win_docs[w] : SHARE(w);
        ymax = v > ymax ? v : ymax;
    }
    ymax = ymax > 0 ? chart_top(ymax, ph) : 1;
#define WX(w) (L + pw * ((double)(r->win_start[w] - t0) + 0.5 * r->win_ms) / span)
#define WY(v) (T + ph - ph * (v) / ymax)
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" class=\"prev\" aria-label=\"%s by "
               "event-time window\">\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
               "height=\"%.0f\" fill=\"#f7fbf8\" stroke=\"#cfe0d4\"/>\n",
            Wd, Hd, k == UINT32_MAX ? "documents" : "share of documents", L, T, pw, ph);
    if (k == UINT32_MAX)
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
                   "fill=\"#5b6472\">%.0f</text>\n", L - 3, T + 8, ymax);
    else
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
                   "fill=\"#5b6472\">%.1f%%</text>\n", L - 3, T + 8, 100 * ymax);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">0</text>\n", L - 3, T + ph);
    html_ticks(f, t0, t1, L, pw, T, ph);
    double bw = pw * (double)r->win_ms / span;
    for (size_t w = 0; w < r->nwin; w++) {
        if (k == UINT32_MAX) {
            double h = ph * r->win_docs[w] / ymax;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                       "fill=\"#2e8b57\"/>\n", WX(w) - bw / 2, T + ph - h, bw > 1 ? bw : 1, h);
        } else if (w > 0 && r->win_start[w] - r->win_start[w - 1] == r->win_ms) {
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "stroke=\"#2e8b57\" stroke-width=\"1.3\"/>\n",
                    WX(w - 1), WY(SHARE(w - 1)), WX(w), WY(SHARE(w)));
        }
    }
    if (k != UINT32_MAX) /* a lone window (no neighbour) still shows */
        for (size_t w = 0; w < r->nwin; w++) {
            int left = w > 0 && r->win_start[w] - r->win_start[w - 1] == r->win_ms;
            int right = w + 1 < r->nwin && r->win_start[w + 1] - r->win_start[w] == r->win_ms;
            if (!left && !right)
                fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"1.4\" fill=\"#2e8b57\"/>\n",
                        WX(w), WY(SHARE(w)));
        }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" fill=\"#5b6472\">%s</text>\n"
               "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"end\" "
               "fill=\"#5b6472\">%s</text>\n</svg>\n",
            L, Hd - 3, a, Wd - R, Hd - 3, b);
#undef WX
#undef WY
#undef SHARE
}

/* The topics in the order of how far their share of the documents moved over the report's
 * windows: the standard deviation of each window's share shrunk toward the topic's mean by
 * SHRINK_DOCS documents' weight (what the green lines draw), largest first, the weight's order
 * kept among equals. 0 (order untouched) without windows. */
static int moved_order(const slda_report_t *r, uint32_t *order)
{
    uint32_t K = r->K;
    if (!r->nwin)
        return 0;
    double *mean = slda_xcalloc(K, sizeof *mean), *moved = slda_xcalloc(K, sizeof *moved), docs = 0;
    for (size_t w = 0; w < r->nwin; w++) {
        docs += r->win_docs[w];
        for (uint32_t k = 0; k < K; k++)
            mean[k] += r->win_share[w * K + k] * r->win_docs[w];
    }
    for (uint32_t k = 0; k < K; k++)
        mean[k] = docs > 0 ? mean[k] / docs : 0;
    for (size_t w = 0; w < r->nwin; w++)
        for (uint32_t k = 0; k < K; k++) {
            double d = r->win_docs[w];
            double v = (r->win_share[w * K + k] * d + SHRINK_DOCS * mean[k]) / (d + SHRINK_DOCS);
            if (isfinite(v))
                moved[k] += d * (v - mean[k]) * (v - mean[k]);
        }
    for (uint32_t x = 1; x < K; x++) { /* insertion: stable, K is small enough here */
        uint32_t k = order[x], i = x;
        while (i > 0 && moved[order[i - 1]] < moved[k]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = k;
    }
    free(mean);
    free(moved);
    return 1;
}

static const char *window_name(int64_t ms)
{
    return ms == 60000 ? "minute" : ms == 3600000 ? "hour" : ms == 86400000 ? "day"
         : ms == 7 * 86400000LL ? "week" : "window";
}

void slda_report_write_html(const slda_report_t *r, FILE *f)
{
    uint32_t K = r->K;
    size_t last = r->npts - 1;
    int64_t t0 = r->pts[0].time_ms, t1 = r->pts[last].time_ms;
    for (size_t p = 0; p < r->npts; p++) {
        t0 = r->pts[p].time_ms < t0 ? r->pts[p].time_ms : t0;
        t1 = r->pts[p].time_ms > t1 ? r->pts[p].time_ms : t1;
    }
    if (r->nwin && r->pts[last].event_time) { /* one event-time axis for both kinds of chart */
        t0 = r->win_start[0] < t0 ? r->win_start[0] : t0;
        t1 = r->win_start[r->nwin - 1] + r->win_ms > t1 ? r->win_start[r->nwin - 1] + r->win_ms
                                                        : t1;
    }
    char a[40], b[40];
    fmt_time(t0, t1 - t0, a, sizeof a);
    fmt_time(t1, t1 - t0, b, sizeof b);
    fputs(html_head, f);
    fprintf(f, "<h1>Topics of model &ldquo;");
    html_text(f, r->model_name);
    fprintf(f, "&rdquo;</h1>\n<p class=\"meta\">%zu snapshot%s in <code>", r->npts,
            r->npts == 1 ? "" : "s");
    html_text(f, r->dir);
    fprintf(f, "</code>, %s to %s (%s), K = %u, %" PRIu64 " documents, %" PRIu64
               " updates; newest <code>",
            a, b, r->pts[last].event_time ? "event time" : "time of each snapshot's last update",
            K, r->pts[last].docs, r->pts[last].t);
    html_text(f, r->pts[last].file);
    fprintf(f, "</code>.</p>\n");
    if (r->nskipped) {
        fprintf(f, "<h2 class=\"skip\">Skipped files (%zu)</h2>\n<ul class=\"skip\">\n",
                r->nskipped);
        for (size_t i = 0; i < r->nskipped; i++) {
            fputs("<li>", f);
            html_text(f, r->skipped[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    /* topics of the newest snapshot, heaviest first */
    uint32_t *order = slda_xmalloc(K * sizeof *order);
    const double *wl = r->weights + last * K;
    for (uint32_t k = 0; k < K; k++) {
        uint32_t i = k;
        while (i > 0 && wl[order[i - 1]] < wl[k]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = k;
    }
    double wmax = K ? wl[order[0]] : 1;
    char words[800];
    fprintf(f, "<h2>Topics (newest snapshot, by weight)</h2>\n<table id=\"topics\"><tr>"
               "<th>topic</th><th>label</th><th>weight</th><th class=\"bc\"></th><th>drift</th>"
               "<th>top words</th></tr>\n");
    for (uint32_t x = 0; x < K; x++) {
        uint32_t k = order[x];
        slda_cli_words_text(r->ref, k, r->nwords, words, sizeof words);
        double dv = r->drift[last * K + k];
        fprintf(f, "<tr><td class=\"n\">%u</td><td class=\"%s\">", k,
                r->label[k] ? "lbl" : "auto");
        html_text(f, slda_report_label(r, k));
        fprintf(f, "</td><td class=\"n\">%.2f%%</td><td class=\"bc\"><span class=\"bar\" "
                   "style=\"width:%.0fpx\"></span></td><td class=\"n\">",
                100 * wl[k], wmax > 0 ? 120 * wl[k] / wmax : 0);
        if (isfinite(dv))
            fprintf(f, "%.3f", dv);
        fputs("</td><td>", f);
        html_text(f, words);
        html_authors(f, r, k);
        html_examples(f, r, k);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    slda_report_supers_html(f, r); /* model.kind=pam */
    slda_report_groups_html(f, r); /* input.group.field, @lang, @author */
    /* events */
    fprintf(f, "<h2>Events (%zu)</h2>\n", r->nev);
    if (r->nev) {
        fputs("<div class=\"tw\"><table><tr><th>time</th><th class=\"sn\">snapshot</th>"
              "<th>event</th><th>topic</th><th>js</th><th>weight</th><th>words</th></tr>\n", f);
        for (size_t e = 0; e < r->nev; e++) {
            const slda_report_event_t *ev = &r->ev[e];
            fmt_time(r->pts[ev->point].time_ms, t1 - t0, a, sizeof a);
            fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"sn\">", a);
            html_text(f, r->pts[ev->point].file);
            fprintf(f, "</td><td class=\"ev-%s\">%s", ev->kind, ev->kind);
            if (ev->other != UINT32_MAX)
                fprintf(f, " to %u", ev->other);
            fprintf(f, "</td><td class=\"n\">%u</td><td class=\"n\">%.3f</td><td class=\"n\">"
                       "%.2f%% &rarr; %.2f%%</td><td class=\"wd\">",
                    ev->topic, ev->js, 100 * ev->w0, 100 * ev->w1);
            html_text(f, ev->words);
            fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
    } else {
        fputs("<p class=\"meta\">None.</p>\n", f);
    }
    if (r->nchg) {
        fprintf(f, "<h2>Changes in prevalence (%zu)</h2>\n<p class=\"legend\">A topic's share of the "
                   "documents in a block of windows against its own baseline, the windows before "
                   "(a test on the documents' counts: z &ge; 5, at least 1.5 times or a third "
                   "less); the time is where the change shows.</p>\n<div class=\"tw\"><table>"
                   "<tr><th>time</th><th>event</th><th>topic</th><th>share</th><th>z</th><th>words</th></tr>\n",
                r->nchg);
        for (size_t e = 0; e < r->nchg; e++) {
            const slda_report_change_t *c = &r->chg[e];
            char cw[180] = "";
            if (r->ref)
                slda_cli_words_text(r->ref, c->topic, 8, cw, sizeof cw);
            fmt_time(c->start_ms, t1 - t0, a, sizeof a);
            fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"ev-%s\">%s</td><td class=\"n\">"
                       "%u</td><td class=\"n\">%.2f%% &rarr; %.2f%%</td><td class=\"n\">%.1f</td>"
                       "<td class=\"wd\">", a, c->kind, c->kind, c->topic, 100 * c->before,
                    100 * c->after, c->z);
            html_text(f, cw);
            fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    if (r->ntev) {
        fprintf(f, "<h2>Events recorded while training (%zu)</h2>\n<p class=\"legend\">From the "
                   "tracker's state beside the snapshots (docs/tracking.md: birth, change, merge, "
                   "death, rise, fall at the newest event time when each was seen; subject, new "
                   "words that came together, where their documents start; the engine's own)."
                   "</p>\n"
                   "<div class=\"tw\"><table><tr><th>time</th><th>update</th><th>event</th><th>topic</th><th>js</th>"
                   "<th>words</th></tr>\n", r->ntev);
        for (size_t e = 0; e < r->ntev; e++) {
            const slda_track_event_t *ev = &r->tev[e];
            fmt_time(ev->event_ms, t1 - t0, a, sizeof a);
            fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"n\">%" PRIu64 "</td><td>", a,
                    ev->update);
            html_text(f, ev->kind);
            if (ev->other != UINT32_MAX)
                fprintf(f, " with %u", ev->other);
            fprintf(f, "</td><td class=\"n\">%u</td><td class=\"n\">", ev->topic);
            if (ev->js >= 0)
                fprintf(f, "%.3f", ev->js);
            fputs("</td><td class=\"wd\">", f);
            html_text(f, ev->words);
            fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    if (r->nwin) {
        fprintf(f, "<h2>Documents per %s of event time</h2>\n<p class=\"legend\">From the "
                   "tracker's state beside %zu snapshot%s (%zu %ss with documents). Green lines "
                   "in each topic below: the topic's mean share of the documents of each %s, "
                   "shrunk toward its mean over the span by the weight of %.0f documents, so "
                   "that a %s of few documents cannot spike (broken where a %s has no "
                   "documents; the JSON has the shares as measured).</p>\n<div class=\"card\" "
                   "style=\"max-width:480px\">\n",
                window_name(r->win_ms), r->nsidecars, r->nsidecars == 1 ? "" : "s", r->nwin,
                window_name(r->win_ms), window_name(r->win_ms), SHRINK_DOCS,
                window_name(r->win_ms), window_name(r->win_ms));
        html_prev_chart(f, r, UINT32_MAX, t0, t1);
        fputs("</div>\n", f);
    }
    /* one chart per topic: with windows, the topics whose share moved most first */
    int by_moved = moved_order(r, order);
    fprintf(f, "<h2>Weight over %s%s</h2>\n<p class=\"legend\">Blue: the topic's share of the "
               "model's tokens at each snapshot (dashed across a gap). Orange bars: drift of the "
               "slot since the previous snapshot (Jensen-Shannon distance, 0 to 1; red at or "
               "above %.2f). Red dots: events.%s</p>\n<div class=\"grid\">\n",
            r->pts[last].event_time ? "event time" : "time",
            by_moved ? ", the topics that moved most first" : "", r->change,
            by_moved ? " The order: how far each topic's share of the documents moved over the "
                       "windows (the standard deviation of the green line)." : "");
    for (uint32_t x = 0; x < K; x++) {
        uint32_t k = order[x];
        slda_cli_words_text(r->ref, k, r->nwords, words, sizeof words);
        fprintf(f, "<div class=\"card\"><h3>Topic %u &middot; %.2f%% &middot; <span class=\"%s\">",
                k, 100 * wl[k], r->label[k] ? "lbl" : "auto");
        html_text(f, slda_report_label(r, k));
        fputs("</span></h3><p class=\"w\">", f);
        html_text(f, words);
        fputs("</p>\n", f);
        html_chart(f, r, k, t0, t1);
        if (r->nwin)
            html_prev_chart(f, r, k, t0, t1);
        fputs("</div>\n", f);
    }
    fputs("</div>\n<p class=\"legend\">Written by streamlda " SLDA_VERSION_STR
          " (streamlda report).</p>\n</body></html>\n", f);
    free(order);
}
