/* metrics.c - service counters, health, Prometheus text, status line, rate-limited log.
 *
 * Counters and gauges are C11 atomics: the service thread writes them, the
 * HTTP thread (http.c) reads them, so no lock is needed for a scrape; a gauge
 * is a double stored as its bit pattern. The health reason and the log's
 * backoff table sit under one mutex because librdkafka's threads log too.
 * The status line keeps the previous counter values to print rates; only the
 * service thread calls it.
 */
#include "kafka/metrics.h"
#include "core/slda_int.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_KEYS 64           /* distinct keys with a backoff in force */
#define LOG_BACKOFF_MIN 1.0   /* seconds a repeated key is first held back */
#define LOG_BACKOFF_MAX 60.0  /* at most one line a minute per key */

typedef struct log_key_s {
    char key[64];
    double next_at;      /* monotonic seconds: print again after this */
    double backoff;      /* current hold-back interval */
    uint64_t suppressed; /* lines held back since the last printed one */
} log_key_t;

struct slda_metrics_s {
    _Atomic uint64_t counter[SLDA_M__COUNT];
    _Atomic uint64_t gauge[SLDA_G__COUNT]; /* double bits */
    _Atomic uint64_t dead[SLDA_ERR__COUNT];
    _Atomic int healthy;     /* consumer */
    _Atomic int svc_failing; /* service (snapshots) */
    _Atomic int flow_failing; /* stalled producer or consumer */
    pthread_mutex_t lock;    /* reasons, keys, sink */
    char reason[256], svc_reason[256], flow_reason[256];
    log_key_t keys[LOG_KEYS];
    slda_log_sink_cb sink;
    void *sink_opaque;
    /* status line state (service thread only) */
    double last_time;
    uint64_t last_docs, last_tokens;
};

static void stderr_sink(int level, const char *line, void *opaque)
{
    const char *name = level <= SLDA_LOG_ERR ? "error" : level == SLDA_LOG_WARN ? "warning" : "info";
    fprintf(stderr, "streamlda: %s: %s\n", name, line);
}

slda_metrics_t *slda_metrics_new(void)
{
    slda_metrics_t *m = slda_xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    m->sink = stderr_sink;
    snprintf(m->reason, sizeof m->reason, "starting");
    m->last_time = slda_mono_s();
    slda_metrics_set(m, SLDA_G_LAG, -1);
    return m;
}

void slda_metrics_destroy(slda_metrics_t *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void slda_metrics_add(slda_metrics_t *m, slda_metric_counter_t c, uint64_t n)
{
    atomic_fetch_add(&m->counter[c], n);
}

uint64_t slda_metrics_get(const slda_metrics_t *m, slda_metric_counter_t c)
{
    return atomic_load(&((slda_metrics_t *)m)->counter[c]);
}

void slda_metrics_set(slda_metrics_t *m, slda_metric_gauge_t g, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    atomic_store(&m->gauge[g], bits);
}

double slda_metrics_gauge(const slda_metrics_t *m, slda_metric_gauge_t g)
{
    uint64_t bits = atomic_load(&((slda_metrics_t *)m)->gauge[g]);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

void slda_metrics_deadletter(slda_metrics_t *m, slda_err_t reason)
{
    if ((unsigned)reason < SLDA_ERR__COUNT)
        atomic_fetch_add(&m->dead[reason], 1);
}

uint64_t slda_metrics_deadletters(const slda_metrics_t *m, slda_err_t reason)
{
    slda_metrics_t *mm = (slda_metrics_t *)m;
    if (reason != SLDA_OK)
        return (unsigned)reason < SLDA_ERR__COUNT ? atomic_load(&mm->dead[reason]) : 0;
    uint64_t sum = 0;
    for (int i = 0; i < SLDA_ERR__COUNT; i++)
        sum += atomic_load(&mm->dead[i]);
    return sum;
}

void slda_metrics_set_health(slda_metrics_t *m, int ok, const char *reason)
{
    pthread_mutex_lock(&m->lock);
    snprintf(m->reason, sizeof m->reason, "%s", ok ? "ok" : (reason ? reason : "unhealthy"));
    atomic_store(&m->healthy, ok);
    pthread_mutex_unlock(&m->lock);
}

void slda_metrics_set_service_health(slda_metrics_t *m, int ok, const char *reason)
{
    pthread_mutex_lock(&m->lock);
    snprintf(m->svc_reason, sizeof m->svc_reason, "%s", ok ? "" : (reason ? reason : "unhealthy"));
    atomic_store(&m->svc_failing, !ok);
    pthread_mutex_unlock(&m->lock);
}

void slda_metrics_set_flow_health(slda_metrics_t *m, int ok, const char *reason)
{
    pthread_mutex_lock(&m->lock);
    snprintf(m->flow_reason, sizeof m->flow_reason, "%s",
             ok ? "" : (reason ? reason : "unhealthy"));
    atomic_store(&m->flow_failing, !ok);
    pthread_mutex_unlock(&m->lock);
}

int slda_metrics_health(slda_metrics_t *m, char *reason, size_t reason_size)
{
    pthread_mutex_lock(&m->lock);
    int svc_failing = atomic_load(&m->svc_failing), flow_failing = atomic_load(&m->flow_failing);
    int healthy = atomic_load(&m->healthy);
    int ok = healthy && !svc_failing && !flow_failing;
    if (reason_size)
        snprintf(reason, reason_size, "%s",
                 svc_failing ? m->svc_reason : !healthy ? m->reason
                               : flow_failing ? m->flow_reason : m->reason);
    pthread_mutex_unlock(&m->lock);
    return ok;
}

/* Lower-case reason label from an error name: SLDA_ERR_UTF8 -> utf8. */
static void reason_label(slda_err_t e, char *out, size_t size)
{
    const char *name = slda_err_name(e);
    if (!strncmp(name, "SLDA_ERR_", 9))
        name += 9;
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    out[i] = '\0';
}

static void prom_metric(FILE *f, const char *name, const char *type, const char *help,
                        const char *model, double v)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s{model=\"%s\"} ", name, help, name, type, name,
            model);
    if (isnan(v))
        fputs("NaN\n", f); /* the exposition format's spelling */
    else
        fprintf(f, "%.17g\n", v);
}

char *slda_metrics_prometheus(slda_metrics_t *m, const char *model, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    static const struct {
        slda_metric_counter_t c;
        const char *name, *help;
    } counters[] = {
        {SLDA_M_DOCS, "streamlda_documents_total", "Documents trained on."},
        {SLDA_M_TOKENS, "streamlda_tokens_total", "Tokens trained on."},
        {SLDA_M_HELDOUT, "streamlda_heldout_documents_total", "Documents held out for perplexity."},
        {SLDA_M_UPDATES, "streamlda_updates_total",
         "Global updates (minibatches) this process trained since it started (a replica: "
         "published and applied); streamlda_model_updates is the model's own count."},
        {SLDA_M_SNAPSHOTS, "streamlda_snapshots_total", "Snapshots written to snapshot.dir."},
        {SLDA_M_PUBLISHED, "streamlda_snapshots_published_total", "Snapshots published to snapshot.topic."},
        {SLDA_M_KAFKA_ERRORS, "streamlda_kafka_errors_total", "Kafka client errors."},
        {SLDA_M_OUTPUTS, "streamlda_outputs_total", "Records produced to output.topic."},
        {SLDA_M_EVENTS, "streamlda_topic_events_total", "Topic events delivered to track.events.topic."},
        {SLDA_M_TIME_CLAMPED, "streamlda_event_time_clamped_total",
         "Event times more than a day ahead of the wall clock, clamped to the newest seen."},
        {SLDA_M_TIME_LATE, "streamlda_event_time_late_total",
         "Documents older than the newest event time seen (late data, accepted)."},
        {SLDA_M_TIME_MISSING, "streamlda_event_time_missing_total",
         "Documents whose input.time.field was missing or not a time (newest event time used)."},
        {SLDA_M_UPDATES_PUBLISHED, "streamlda_updates_published_total",
         "Replicas: update records this instance committed to updates.topic."},
        {SLDA_M_CAPPED, "streamlda_tokens_capped_total",
         "Tokens dropped as longer than text.token.max (docs/text.md)."},
        {SLDA_M_DROPPED, "streamlda_replica_dropped_documents_total",
         "Replicas: documents of minibatches dropped at a rebalance or an aborted transaction "
         "(read again from the committed offsets)."},
        {SLDA_M_RESCORED, "streamlda_track_rescored_windows_total",
         "Prevalence windows whose sample was scored again under the model of the moment."},
        {SLDA_M_LOST, "streamlda_lost_messages_total",
         "Input messages the cluster deleted before they were read: the embedded cluster "
         "keeps about 5 MiB per partition; a Kafka cluster's retention went past the "
         "service's position."},
        {SLDA_M_DROPPED_TOKENS, "streamlda_dropped_tokens_total",
         "Occurrences of new words left out of documents: the vocabulary (vocab.capacity) was "
         "full of words the current or the previous minibatch uses."},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        prom_metric(f, counters[i].name, "counter", counters[i].help, model,
                    (double)slda_metrics_get(m, counters[i].c));
    prom_metric(f, "streamlda_snapshot_wait_seconds_total", "counter",
                "Time due snapshots held training and consumption until the dead-letter and "
                "output records before them were delivered.", model,
                (double)slda_metrics_get(m, SLDA_M_SNAPSHOT_WAIT_US) / 1e6);
    fprintf(f, "# HELP streamlda_deadletters_total Messages sent to the dead-letter topic, by reason.\n"
               "# TYPE streamlda_deadletters_total counter\n");
    static const slda_err_t reasons[] = {SLDA_ERR_PARSE, SLDA_ERR_UTF8, SLDA_ERR_EMPTY,
                                         SLDA_ERR_TOO_LARGE, SLDA_ERR_RANGE, SLDA_ERR_INVALID};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        char label[32];
        reason_label(reasons[i], label, sizeof label);
        fprintf(f, "streamlda_deadletters_total{model=\"%s\",reason=\"%s\"} %llu\n", model, label,
                (unsigned long long)slda_metrics_deadletters(m, reasons[i]));
    }
    static const struct {
        slda_metric_gauge_t g;
        const char *name, *help;
    } gauges[] = {
        {SLDA_G_RHO, "streamlda_rho", "Step size of the last global update."},
        {SLDA_G_PERPLEXITY, "streamlda_perplexity",
         "Held-out per-word perplexity (NaN until measured: heldout.modulo=0 or nothing scored "
         "yet)."},
        {SLDA_G_VOCAB, "streamlda_vocabulary_words", "Vocabulary words in use."},
        {SLDA_G_LAG, "streamlda_consumer_lag",
         "Messages behind the high watermark, over the partitions fetched at least once "
         "(-1 = none yet; the others: streamlda_unfetched_partitions)."},
        {SLDA_G_SNAPSHOT_SECONDS, "streamlda_snapshot_seconds", "Wall time of the last snapshot."},
        {SLDA_G_SNAPSHOT_BYTES, "streamlda_snapshot_bytes", "Size of the last snapshot."},
        {SLDA_G_PUBLISH_SECONDS, "streamlda_snapshot_publish_seconds",
         "Publication of the last snapshot to snapshot.topic, first chunk to manifest acknowledged."},
        {SLDA_G_UNDELIVERED, "streamlda_undelivered_records",
         "Dead-letter and output records produced but not yet delivered (their offsets wait)."},
        {SLDA_G_EVENT_TIME, "streamlda_event_time_seconds",
         "Newest event time seen, seconds since the epoch (0 = none yet)."},
        {SLDA_G_EVENT_LAG, "streamlda_event_time_lag_seconds",
         "Event-time lag: wall clock minus the newest event time seen."},
        {SLDA_G_STALENESS, "streamlda_update_staleness",
         "Updates applied between the model a record's local steps read and the record."},
        {SLDA_G_MODEL_UPDATES, "streamlda_model_updates",
         "The model's update count: the global updates applied to it, those of the snapshot "
         "it was restored from included (with global.stale=1 the last minibatch's update is "
         "applied with the next one or at the next snapshot)."},
        {SLDA_G_MODEL_DOCS, "streamlda_model_documents",
         "Documents the model was trained on, those of the snapshot it was restored from "
         "included."},
        {SLDA_G_PARTITIONS, "streamlda_assigned_partitions",
         "Input partitions this instance is assigned in its consumer group."},
        {SLDA_G_UNFETCHED, "streamlda_unfetched_partitions",
         "Assigned partitions with no fetch response since their assignment (lag unknown; "
         "/healthz fails once one stays so for health.stall.ms)."},
    };
    for (size_t i = 0; i < sizeof gauges / sizeof gauges[0]; i++) {
        double v = slda_metrics_gauge(m, gauges[i].g);
        if (gauges[i].g == SLDA_G_PERPLEXITY && !(v > 0))
            v = NAN; /* no figure: not a perplexity of 0 */
        prom_metric(f, gauges[i].name, "gauge", gauges[i].help, model, v);
    }
    prom_metric(f, "streamlda_healthy", "gauge", "1 while the consumer is healthy.", model,
                slda_metrics_health(m, NULL, 0));
    fclose(f);
    if (len)
        *len = size;
    return buf;
}

void slda_metrics_status_line(slda_metrics_t *m, char *buf, size_t size)
{
    double t = slda_mono_s(), dt = t - m->last_time;
    uint64_t docs = slda_metrics_get(m, SLDA_M_DOCS), tokens = slda_metrics_get(m, SLDA_M_TOKENS);
    if (dt <= 0)
        dt = 1e-9;
    double lag = slda_metrics_gauge(m, SLDA_G_LAG);
    char lagtxt[64];
    double unfetched = slda_metrics_gauge(m, SLDA_G_UNFETCHED);
    if (lag < 0)
        snprintf(lagtxt, sizeof lagtxt, "?");
    else if (unfetched > 0) /* a partition never fetched: its lag is not in the sum */
        snprintf(lagtxt, sizeof lagtxt, "%.0f+? (%.0f unfetched)", lag, unfetched);
    else
        snprintf(lagtxt, sizeof lagtxt, "%.0f", lag);
    double perp = slda_metrics_gauge(m, SLDA_G_PERPLEXITY);
    char perptxt[32];
    if (perp > 0)
        snprintf(perptxt, sizeof perptxt, "%.1f", perp);
    else
        snprintf(perptxt, sizeof perptxt, "-"); /* no held-out documents (heldout.modulo) */
    double evt = slda_metrics_gauge(m, SLDA_G_EVENT_TIME);
    char evtxt[80] = "-";
    if (evt > 0) {
        time_t et = (time_t)evt;
        struct tm tm;
        char iso[32] = "?";
        if (gmtime_r(&et, &tm))
            strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(evtxt, sizeof evtxt, "%s (lag %.0f s)", iso,
                 slda_metrics_gauge(m, SLDA_G_EVENT_LAG));
    }
    snprintf(buf, size,
             "docs %llu (%.0f/s) tokens %llu (%.0f/s) lag %s updates %llu rho %.4g "
             "perplexity %s vocab %.0f deadletters %llu event time %s",
             (unsigned long long)docs, (double)(docs - m->last_docs) / dt,
             (unsigned long long)tokens, (double)(tokens - m->last_tokens) / dt, lagtxt,
             (unsigned long long)slda_metrics_get(m, SLDA_M_UPDATES),
             slda_metrics_gauge(m, SLDA_G_RHO), perptxt, slda_metrics_gauge(m, SLDA_G_VOCAB),
             (unsigned long long)slda_metrics_deadletters(m, SLDA_OK), evtxt);
    m->last_time = t;
    m->last_docs = docs;
    m->last_tokens = tokens;
}

void slda_metrics_set_log_sink(slda_metrics_t *m, slda_log_sink_cb cb, void *opaque)
{
    pthread_mutex_lock(&m->lock);
    m->sink = cb ? cb : stderr_sink;
    m->sink_opaque = opaque;
    pthread_mutex_unlock(&m->lock);
}

/* The backoff slot of key (the oldest slot is reused when the table is full). */
static log_key_t *log_slot(slda_metrics_t *m, const char *key)
{
    log_key_t *oldest = &m->keys[0];
    for (int i = 0; i < LOG_KEYS; i++) {
        if (!strncmp(m->keys[i].key, key, sizeof m->keys[i].key - 1))
            return &m->keys[i];
        if (m->keys[i].next_at < oldest->next_at)
            oldest = &m->keys[i];
    }
    memset(oldest, 0, sizeof *oldest);
    snprintf(oldest->key, sizeof oldest->key, "%s", key);
    return oldest;
}

void slda_log(slda_metrics_t *m, int level, const char *key, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&m->lock);
    if (key) {
        double t = slda_mono_s();
        log_key_t *slot = log_slot(m, key);
        if (t < slot->next_at) {
            slot->suppressed++;
            pthread_mutex_unlock(&m->lock);
            return;
        }
        if (slot->suppressed) {
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, " (%llu similar suppressed)",
                     (unsigned long long)slot->suppressed);
        }
        slot->backoff = slot->backoff ? slot->backoff * 2 : LOG_BACKOFF_MIN;
        if (slot->backoff > LOG_BACKOFF_MAX)
            slot->backoff = LOG_BACKOFF_MAX;
        slot->next_at = t + slot->backoff;
        slot->suppressed = 0;
    }
    m->sink(level, line, m->sink_opaque);
    pthread_mutex_unlock(&m->lock);
}

void slda_log_reset(slda_metrics_t *m, const char *key)
{
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < LOG_KEYS; i++)
        if (!strncmp(m->keys[i].key, key, sizeof m->keys[i].key - 1))
            memset(&m->keys[i], 0, sizeof m->keys[i]);
    pthread_mutex_unlock(&m->lock);
}
