/* page_authors.c - /api/authors: an author-topic model's authors for the live page's API.
 *
 * model.kind=atm (docs/models.md): the most prolific authors with their largest topics, and
 * for each topic the authors who wrote most of it (N_a[k], the authors who drive it). Built on
 * the service thread when the model has moved (kafka/service_track.c), published to page.c's
 * store; the HTTP thread serves copies. O(A K) per build: the page's words are looked up at
 * most as often.
 */
#include "track/track.h"
#include "core/json.h"
#include "core/topn.h"
#include "engine/authors.h"
#include "engine/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTHORS_LISTED 100 /* the most prolific authors listed */
#define AUTHORS_PER_TOPIC 5
#define TOPICS_PER_AUTHOR 3

char *slda_track_json_authors(const slda_model_t *model, size_t *len)
{
    const slda_authors_t *a = slda_model_authors(model);
    if (!a)
        return NULL;
    uint32_t K = slda_model_topics(model), max = slda_authors_max_id(a), nlist = 0;
    uint32_t list[AUTHORS_LISTED], *top = slda_xcalloc((size_t)K * AUTHORS_PER_TOPIC, 4);
    uint32_t *ntop = slda_xcalloc(K, sizeof *ntop);
    double lkey[AUTHORS_LISTED], *tkey = slda_xcalloc((size_t)K * AUTHORS_PER_TOPIC, 8);
    for (uint32_t id = 0; id < max; id++) {
        if (!slda_authors_name(a, id))
            continue;
        slda_topn_push(list, lkey, &nlist, AUTHORS_LISTED, id, slda_authors_tokens(a, id));
        const float *N = slda_authors_counts(a, id);
        for (uint32_t k = 0; k < K; k++)
            if (N[k] > 0)
                slda_topn_push(top + (size_t)k * AUTHORS_PER_TOPIC,
                               tkey + (size_t)k * AUTHORS_PER_TOPIC, &ntop[k], AUTHORS_PER_TOPIC,
                               id, N[k]);
    }
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    float *theta = slda_xmalloc(K * sizeof *theta);
    if (f) {
        fprintf(f, "{\"authors\":%u,\"capacity\":%u,\"evicted\":%llu,\"list\":[",
                slda_authors_size(a), slda_authors_capacity(a),
                (unsigned long long)slda_authors_evicted(a));
        for (uint32_t i = 0; i < nlist; i++) {
            uint32_t best[TOPICS_PER_AUTHOR], nb = 0;
            double bkey[TOPICS_PER_AUTHOR];
            slda_author_mixture(model, list[i], theta);
            for (uint32_t k = 0; k < K; k++)
                slda_topn_push(best, bkey, &nb, TOPICS_PER_AUTHOR, k, theta[k]);
            fprintf(f, "%s{\"author\":", i ? "," : "");
            slda_json_write_string(f, slda_authors_name(a, list[i]));
            fprintf(f, ",\"tokens\":%.6g,\"topics\":[", lkey[i]);
            for (uint32_t j = 0; j < nb; j++)
                fprintf(f, "%s[%u,%.4g]", j ? "," : "", best[j], bkey[j]);
            fprintf(f, "]}");
        }
        fprintf(f, "],\"topics\":[");
        for (uint32_t k = 0; k < K; k++) {
            fprintf(f, "%s{\"topic\":%u,\"authors\":[", k ? "," : "", k);
            for (uint32_t j = 0; j < ntop[k]; j++) {
                fprintf(f, "%s[", j ? "," : "");
                slda_json_write_string(f, slda_authors_name(a, top[(size_t)k * AUTHORS_PER_TOPIC
                                                               + j]));
                fprintf(f, ",%.6g]", tkey[(size_t)k * AUTHORS_PER_TOPIC + j]);
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]}");
        if (fclose(f) != 0) {
            free(buf);
            buf = NULL;
        }
    }
    free(theta);
    free(top);
    free(ntop);
    free(tkey);
    *len = buf ? size : 0;
    return buf;
}
