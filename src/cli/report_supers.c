/* report_supers.c - `streamlda report`: how a pachinko allocation model groups its topics.
 *
 * model.kind=pam (docs/models.md): each super-topic's prior alpha_x over the K topics says
 * which topics it draws together; the report lists, per super-topic, its largest shares with
 * the topics' labels (HTML) and in the JSON "supers", /api/supers' object (null for other
 * kinds), as `topics` prints them.
 */
#include "cli/cli.h"
#include "cli/report.h"
#include "engine/model.h"
#include "engine/pam.h"
#include "track/track.h"

#include <stdio.h>
#include <stdlib.h>

#define SUPER_TOPICS 5 /* topics listed per super-topic */

void slda_report_supers_json(FILE *f, const slda_report_t *r)
{
    size_t len = 0;
    char *json = r->ref ? slda_track_json_supers(r->ref, &len) : NULL; /* as /api/supers */
    fputs(",\"supers\":", f);
    if (json)
        fwrite(json, 1, len, f);
    else
        fputs("null", f);
    free(json);
}

void slda_report_supers_html(FILE *f, const slda_report_t *r)
{
    const slda_pam_t *pam = r->ref ? slda_model_pam(r->ref) : NULL;
    if (!pam)
        return;
    uint32_t S = slda_pam_supers(pam);
    fprintf(f, "<h2>Super-topics (%u): how the topics group</h2>\n<p class=\"legend\">Pachinko "
               "allocation: each super-topic draws its documents' topics from its own prior; "
               "listed, the %d topics with the largest shares of that prior (a uniform prior "
               "gives each of the %u topics %.1f%%).</p>\n<div class=\"tw\"><table id=\"supers\">"
               "<tr><th>super-topic</th><th>its topics</th></tr>\n",
            S, SUPER_TOPICS, r->K, r->K ? 100.0 / r->K : 0);
    for (uint32_t x = 0; x < S; x++) {
        uint32_t ids[SUPER_TOPICS];
        double share[SUPER_TOPICS];
        uint32_t m = slda_pam_super_top(pam, x, SUPER_TOPICS, ids, share);
        fprintf(f, "<tr><td class=\"n\">%u</td><td>", x);
        for (uint32_t i = 0; i < m; i++) {
            fprintf(f, "%s#%u ", i ? " &middot; " : "", ids[i]);
            const char *lab = slda_report_label(r, ids[i]);
            if (lab)
                slda_cli_html_text(f, lab);
            fprintf(f, " %.1f%%", 100 * share[i]);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
}
