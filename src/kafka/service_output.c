/* service_output.c - output records: each trained document's topic mixture on output.topic.
 *
 * One JSON record per document after its minibatch's training (service_batch.c) or, on a
 * replica, after its record is published (service_replica.c): the document's most probable
 * topics (output.top) by the model's slots, its event time and the update that made it.
 * Keyed by the document id; delivered through the sink, whose delivery reports hold the
 * snapshot back until every record of its minibatches is delivered.
 */
#include "kafka/service_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {"id"[,"lang"],"time","event_time","event_ms","topics":[[k,w],...],"model","update"[,"warmup"]}
 * for document i; topic k is the model's slot, the id tracking keeps (docs/tracking.md). */
void slda_svc_produce_output(slda_service_t *svc, size_t i, uint32_t K, int warmup)
{
    if (svc->meta[i].replayed)
        return;
    const float *theta = svc->thetas + i * K;
    uint32_t top = svc->conf->output_top ? svc->conf->output_top : 3;
    if (top > K)
        top = K;
    uint32_t best[64];
    if (top > 64)
        top = 64;
    for (uint32_t j = 0; j < top; j++) { /* selection: top is small */
        uint32_t arg = UINT32_MAX;
        for (uint32_t k = 0; k < K; k++) {
            int taken = 0;
            for (uint32_t q = 0; q < j; q++)
                taken |= best[q] == k;
            if (!taken && (arg == UINT32_MAX || theta[k] > theta[arg]))
                arg = k;
        }
        best[j] = arg;
    }
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    fprintf(f, "{\"id\":");
    slda_json_write_string(f, svc->docs[i].id);
    if (svc->docs[i].lang[0])
        fprintf(f, ",\"lang\":\"%s\"", svc->docs[i].lang); /* a code of ASCII letters */
    char iso[40];
    slda_time_format(svc->meta[i].event_ms, iso, sizeof iso);
    fprintf(f, ",\"time\":%lld,\"event_time\":\"%s\",\"event_ms\":%lld,\"topics\":[",
            (long long)svc->docs[i].time_ms, iso, (long long)svc->meta[i].event_ms);
    for (uint32_t j = 0; j < top; j++)
        fprintf(f, "%s[%u,%.6g]", j ? "," : "", best[j], (double)theta[best[j]]);
    fprintf(f, "],\"model\":");
    slda_json_write_string(f, svc->conf->model_name);
    fprintf(f, ",\"update\":%" PRIu64 "%s}", slda_model_updates(svc->model),
            warmup ? ",\"warmup\":true" : "");
    fclose(f);
    const doc_meta_t *m = &svc->meta[i];
    slda_kmsg_t msg = {.topic = m->topic, .partition = m->partition, .offset = m->offset,
                       .timestamp_ms = m->timestamp_ms};
    slda_ksink_output(svc->sink, &msg, svc->docs[i].id, strlen(svc->docs[i].id), json, len);
    free(json); /* counted on delivery; a fatal sink stops the loop */
}
