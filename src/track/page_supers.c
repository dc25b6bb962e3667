/* page_supers.c - /api/supers: how a pachinko allocation model groups its topics, for the page.
 *
 * model.kind=pam (docs/models.md): each super-topic with the topics holding the largest shares
 * of its prior alpha_x (slda_pam_super_top, as `topics` and `report` list them). Built on the
 * service thread with the topics' words (kafka/service_track.c), published to page.c's store;
 * O(S K) per build.
 */
#include "track/track.h"
#include "engine/model.h"
#include "engine/pam.h"

#include <stdio.h>

#define SUPER_TOPICS 5

char *slda_track_json_supers(const slda_model_t *model, size_t *len)
{
    const slda_pam_t *pam = slda_model_pam(model);
    if (!pam)
        return NULL;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    uint32_t S = slda_pam_supers(pam);
    fprintf(f, "{\"S\":%u,\"K\":%u,\"supers\":[", S, slda_model_topics(model));
    for (uint32_t x = 0; x < S; x++) {
        uint32_t ids[SUPER_TOPICS];
        double share[SUPER_TOPICS];
        uint32_t m = slda_pam_super_top(pam, x, SUPER_TOPICS, ids, share);
        fprintf(f, "%s{\"super\":%u,\"topics\":[", x ? "," : "", x);
        for (uint32_t i = 0; i < m; i++)
            fprintf(f, "%s[%u,%.4f]", i ? "," : "", ids[i], share[i]);
        fputs("]}", f);
    }
    fputs("]}", f);
    fclose(f);
    if (len)
        *len = size;
    return buf;
}
