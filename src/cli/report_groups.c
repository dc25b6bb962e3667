/* report_groups.c - `streamlda report`: the groups of the newest tracking state (track/groups.h).
 *
 * With input.group.field (a source, a channel), @lang or @author (the default of an
 * author-topic model) the tracker keeps each group's documents over event time and its topic
 * mix, in the state beside each snapshot. The report shows the newest state's largest groups:
 * in JSON the tracker's own object ("groups", docs/tracking.md), in HTML a table of each
 * group's documents, its share of each window of the groups' time axis (a sparkline on the
 * report's scale: 0 to the group's largest share) and its largest topics by label.
 */
#include "cli/cli.h"
#include "cli/report.h"
#include "io/evtime.h"
#include "track/groups.h"
#include "core/topn.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const slda_groups_t *groups_of(const slda_report_t *r)
{
    return r->examples ? slda_report_examples_groups(r->examples) : NULL;
}

void slda_report_groups_json(FILE *f, const slda_report_t *r)
{
    const slda_groups_t *g = groups_of(r);
    fputs(",\"groups\":", f);
    if (g)
        slda_groups_write_json(g, f, 0);
    else
        fputs("null", f);
}

/* A group's share of each window (its documents over all documents, shrunk toward its mean
 * share by SHRINK_DOCS documents' weight as the prevalence charts: a window of two documents
 * cannot spike) as an inline SVG line. */
#define SHRINK_DOCS 10.0
static double shrunk(double docs, double total, double mean)
{
    return (docs + SHRINK_DOCS * mean) / (total + SHRINK_DOCS);
}

static void sparkline(FILE *f, const double *series, const double *total, int n, double mean)
{
    const double w = 160, h = 26;
    double max = 0;
    for (int i = 0; i < n; i++)
        if (total[i] > 0 && shrunk(series[i], total[i], mean) > max)
            max = shrunk(series[i], total[i], mean);
    if (max <= 0)
        max = 1;
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" style=\"width:%.0fpx;max-width:100%%\" role=\"img\" "
               "aria-label=\"share over time, at most %.0f%%\"><polyline fill=\"none\" "
               "stroke=\"#3b6fb6\" stroke-width=\"1.5\" points=\"",
            w, h, w, 100 * max);
    for (int i = 0; i < n; i++)
        if (total[i] > 0)
            fprintf(f, "%.1f,%.1f ", n > 1 ? 1 + i * (w - 2) / (n - 1) : w / 2,
                    h - 2 - (h - 4) * shrunk(series[i], total[i], mean) / max);
    fputs("\"/></svg>", f);
}

static void group_row(FILE *f, const slda_report_t *r, const slda_groups_t *g, uint32_t slot,
                      double all, const double *total, int n)
{
    double docs;
    const double *series, *mix;
    const char *name = slda_groups_get(g, slot, &docs, &series, &mix);
    fputs("<tr><td>", f);
    slda_cli_html_text(f, name);
    fprintf(f, "</td><td class=\"n\">%.0f (%.1f%%)</td><td>", docs, all > 0 ? 100 * docs / all : 0);
    sparkline(f, series, total, n, all > 0 ? docs / all : 0);
    fputs("</td><td class=\"t\">", f);
    uint32_t top[3], have = 0;
    double key[3];
    for (uint32_t k = 0; k < r->K; k++) /* its three largest topics */
        if (mix[k] > 0)
            slda_topn_push(top, key, &have, 3, k, mix[k]);
    for (uint32_t i = 0; i < have; i++) {
        fprintf(f, "%s#%u ", i ? " &middot; " : "", top[i]);
        const char *lab = slda_report_label(r, top[i]);
        if (lab)
            slda_cli_html_text(f, lab);
        fprintf(f, " %.0f%%", docs > 0 ? 100 * key[i] / docs : 0);
    }
    fputs("</td></tr>\n", f);
}

void slda_report_groups_html(FILE *f, const slda_report_t *r)
{
    const slda_groups_t *g = groups_of(r);
    if (!g || !slda_groups_count(g))
        return;
    int64_t base, width;
    const double *total;
    int n = slda_groups_axis(g, &base, &width, &total);
    double all = 0;
    for (int i = 0; i < n; i++)
        all += total[i];
    uint32_t slot[SLDA_GROUP_SHOW];
    uint32_t m = slda_groups_largest(g, SLDA_GROUP_SHOW, slot);
    double other;
    slda_groups_get(g, SLDA_GROUPS_OTHER, &other, NULL, NULL);
    const char *src = slda_groups_source(g);
    char from[40] = "", to[40] = "";
    slda_time_format(base, from, sizeof from);
    slda_time_format(base + width * n, to, sizeof to);
    fprintf(f, "<h2>%s (%u; the %u largest)</h2>\n<p class=\"legend\">Grouped by ",
            !strcmp(src, "@author") ? "Authors" : !strcmp(src, "@lang") ? "Languages" : "Groups",
            slda_groups_count(g), m);
    slda_cli_html_text(f, src);
    fprintf(f, " (the newest tracking state; at most track.group.capacity groups, %" PRIu64
               " evicted into %s). Each line: the group's share of the documents of each of %d "
               "windows of %.10s from %.10s to %.10s, from 0 to its own largest share (shrunk "
               "toward its mean share by the weight of 10 documents); its topics: the shares of its documents' topic mixtures.</p>\n<div class=\"tw\">"
               "<table id=\"groups\"><tr><th>group</th><th>documents</th><th>share over "
               "time</th><th>largest topics</th></tr>\n",
            slda_groups_evicted(g), SLDA_GROUP_OTHER, n,
            width >= 7 * 86400000LL ? "weeks" : width >= 86400000LL ? "days" : "hours", from, to);
    for (uint32_t i = 0; i < m; i++)
        group_row(f, r, g, slot[i], all, total, n);
    if (other > 0)
        group_row(f, r, g, SLDA_GROUPS_OTHER, all, total, n);
    fputs("</table></div>\n", f);
}
