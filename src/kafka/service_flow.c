/* service_flow.c - flow and health: backpressure, stall health, the status line. */
#include "kafka/service_int.h"

#include <stdio.h>

/* ---- flow: backpressure and stall health ---- */

/* A snapshot that waits for its records holds the service: the loop reads no message
 * (librdkafka keeps fetching ahead, so training goes on at once when they are delivered);
 * after this long the partitions are paused as for a backlog, so that the consumer is polled
 * again (group membership, max.poll.interval.ms). */
#define HOLD_UNPAUSED_S 5.0

/* An assigned partition with no fetch response is a stall after this many health.stall.ms
 * (its renewal comes after one: kafka_source.c): on a loaded machine an idle partition's first
 * answer took over 2 s while the others' messages flowed (0051 under AddressSanitizer: 503 for
 * that, not for the producer stall it waited for). */
#define UNFETCHED_STALLS 5

/* Pause consumption while the producer has a backlog (records waiting for
 * room or for a retry) or a snapshot's hold lasts, resume when it is gone;
 * /healthz turns 503 when records stay undelivered, consumption stays paused,
 * lagging partitions yield nothing, or an assigned partition has had no fetch
 * response, for health.stall.ms. */
void slda_svc_flow(slda_service_t *svc, double t)
{
    size_t backlog = slda_ksink_backlog(svc->sink);
    int hold = backlog || (svc->awaiting && t - svc->awaiting_since >= HOLD_UNPAUSED_S);
    if (hold && !svc->paused) {
        if (!slda_ksource_pause(svc->src, 1)) {
            svc->paused = 1;
            svc->paused_since = t;
            if (backlog)
                slda_log(svc->metrics, SLDA_LOG_WARN, "flow-pause",
                         "consumption paused: %zu dead-letter/output record(s) wait for the "
                         "brokers", backlog);
        }
    } else if (!hold && svc->paused) {
        if (!slda_ksource_pause(svc->src, 0)) {
            svc->paused = 0;
            svc->last_msg_t = t;
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "consumption resumed");
            slda_log_reset(svc->metrics, "flow-pause");
        }
    }
    if (t - svc->health_t < 0.1) /* the loop turns once a message: judge health 10x a second */
        return;
    svc->health_t = t;
    double stall = svc->conf->health_stall_ms / 1000.0, lag = slda_metrics_gauge(svc->metrics,
                                                                                SLDA_G_LAG);
    double undelivered_s = slda_ksink_stalled_s(svc->sink), assigned_t;
    int unfetched = slda_ksource_unfetched(svc->src, &assigned_t);
    char why[256] = "";
    if (undelivered_s >= stall)
        snprintf(why, sizeof why, "producer stalled: %zu record(s) undelivered, none delivered "
                 "for %.0f s", slda_ksink_undelivered(svc->sink), undelivered_s);
    else if (svc->paused && t - svc->paused_since >= stall)
        snprintf(why, sizeof why, "consumption paused for %.0f s: the producer has a backlog",
                 t - svc->paused_since);
    else if (!svc->paused && lag > 0 && slda_ksource_assigned(svc->src) &&
             t - svc->last_msg_t >= stall)
        snprintf(why, sizeof why, "consumer stalled: lag %.0f, no message for %.0f s", lag,
                 t - svc->last_msg_t);
    else if (!svc->paused && unfetched > 0 && t - assigned_t >= UNFETCHED_STALLS * stall)
        snprintf(why, sizeof why, "consumer stalled: %d of %d assigned partition(s) not fetched "
                 "in the %.0f s since the assignment (lag unknown)", unfetched,
                 slda_ksource_assigned(svc->src), t - assigned_t);
    slda_metrics_set_flow_health(svc->metrics, !why[0], why);
    slda_metrics_set(svc->metrics, SLDA_G_UNDELIVERED, (double)slda_ksink_undelivered(svc->sink));
}

void slda_svc_status(slda_service_t *svc)
{
    if (svc->nheld && svc->held_eval_t != slda_model_updates(svc->model)) {
        double pp;
        if (!slda_heldout_perplexity(svc->model, svc->held, NULL, svc->conf->p.seed, &pp, NULL))
            slda_metrics_set(svc->metrics, SLDA_G_PERPLEXITY, pp);
        svc->held_eval_t = slda_model_updates(svc->model);
    }
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    slda_svc_event_gauges(svc);
    char line[512];
    slda_metrics_status_line(svc->metrics, line, sizeof line);
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "status: %s", line);
}
