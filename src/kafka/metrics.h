/* metrics.h - service counters (atomics), health, Prometheus text, the status
 * line and a rate-limited logger. No librdkafka types. */
#ifndef SLDA_METRICS_H
#define SLDA_METRICS_H

#include "streamlda.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum {
    SLDA_M_DOCS = 0,     /* documents trained on */
    SLDA_M_TOKENS,       /* tokens trained on */
    SLDA_M_HELDOUT,      /* documents held out for perplexity */
    SLDA_M_UPDATES,      /* global updates (minibatches) */
    SLDA_M_SNAPSHOTS,    /* snapshots written to snapshot.dir */
    SLDA_M_PUBLISHED,    /* snapshots published to snapshot.topic */
    SLDA_M_KAFKA_ERRORS, /* Kafka client errors (error events, failed deliveries, commits) */
    SLDA_M_OUTPUTS,      /* records produced to output.topic */
    SLDA_M_EVENTS,       /* topic events delivered to track.events.topic */
    SLDA_M_TIME_CLAMPED, /* event times more than a day ahead of the clock, clamped */
    SLDA_M_TIME_LATE,    /* documents older than the newest event time seen (late data) */
    SLDA_M_TIME_MISSING, /* input.time.field missing or unreadable: newest event time used */
    SLDA_M_UPDATES_PUBLISHED, /* replicas: update records this instance committed */
    SLDA_M_DROPPED,      /* replicas: documents of minibatches dropped (read again) */
    SLDA_M_RESCORED,     /* prevalence windows scored again under the model of the moment */
    SLDA_M_CAPPED,       /* tokens dropped as longer than text.token.max */
    SLDA_M_DROPPED_TOKENS, /* occurrences of new words a full vocabulary refused */
    SLDA_M_LOST,         /* input messages the cluster deleted before they were read */
    SLDA_M_SNAPSHOT_WAIT_US, /* microseconds snapshots held training for their deliveries */
    SLDA_M__COUNT
} slda_metric_counter_t;

typedef enum {
    SLDA_G_RHO = 0,          /* last step size */
    SLDA_G_PERPLEXITY,       /* held-out perplexity (0 until known: NaN in /metrics) */
    SLDA_G_VOCAB,            /* vocabulary words in use */
    SLDA_G_LAG,              /* consumer lag summed over assigned partitions (-1 unknown) */
    SLDA_G_SNAPSHOT_SECONDS, /* wall time of the last snapshot (encode + write) */
    SLDA_G_SNAPSHOT_BYTES,   /* size of the last snapshot */
    SLDA_G_PUBLISH_SECONDS,  /* last snapshot.topic publication: first chunk to manifest ack */
    SLDA_G_UNDELIVERED,      /* dead-letter/output records produced, not yet delivered */
    SLDA_G_EVENT_TIME,       /* newest event time seen, seconds since the epoch (0 = none) */
    SLDA_G_EVENT_LAG,        /* wall clock minus the newest event time, seconds */
    SLDA_G_STALENESS,        /* replicas: updates between a record's base and its apply */
    SLDA_G_MODEL_UPDATES,    /* the model's update count (restored ones included) */
    SLDA_G_MODEL_DOCS,       /* documents in the model (restored ones included) */
    SLDA_G_PARTITIONS,       /* input partitions assigned to this instance */
    SLDA_G_UNFETCHED,        /* of those, partitions with no fetch response yet (lag unknown) */
    SLDA_G__COUNT
} slda_metric_gauge_t;

/* Written by the service thread (and librdkafka's threads for the logger),
 * read by the HTTP thread: every field is atomic or under log_lock. */
typedef struct slda_metrics_s slda_metrics_t;

/* Where log lines go: default writes "streamlda: <level>: <text>\n" to stderr. */
typedef void (*slda_log_sink_cb)(int level, const char *line, void *opaque);

slda_metrics_t *slda_metrics_new(void);
void slda_metrics_destroy(slda_metrics_t *m);

void slda_metrics_add(slda_metrics_t *m, slda_metric_counter_t c, uint64_t n);
uint64_t slda_metrics_get(const slda_metrics_t *m, slda_metric_counter_t c);
void slda_metrics_set(slda_metrics_t *m, slda_metric_gauge_t g, double v);
double slda_metrics_gauge(const slda_metrics_t *m, slda_metric_gauge_t g);
void slda_metrics_deadletter(slda_metrics_t *m, slda_err_t reason);
uint64_t slda_metrics_deadletters(const slda_metrics_t *m, slda_err_t reason); /* SLDA_OK = all */
/* Health of the consumer: ok != 0, or a reason for /healthz (copied). */
void slda_metrics_set_health(slda_metrics_t *m, int ok, const char *reason);
/* Health of the service itself (snapshots); /healthz needs both. */
void slda_metrics_set_service_health(slda_metrics_t *m, int ok, const char *reason);
/* Health of the flow (stalled producer or consumer, paused consumption). */
void slda_metrics_set_flow_health(slda_metrics_t *m, int ok, const char *reason);
/* 1 when consumer, service and flow are healthy; else the reason. */
int slda_metrics_health(slda_metrics_t *m, char *reason, size_t reason_size);

/* Prometheus text exposition (version 0.0.4), malloc'ed, caller frees. */
char *slda_metrics_prometheus(slda_metrics_t *m, const char *model_name, size_t *len);
/* One status line (no newline) with rates since the previous call. */
void slda_metrics_status_line(slda_metrics_t *m, char *buf, size_t size);

/* Log levels (syslog numbers). */
#define SLDA_LOG_ERR 3
#define SLDA_LOG_WARN 4
#define SLDA_LOG_INFO 6
void slda_metrics_set_log_sink(slda_metrics_t *m, slda_log_sink_cb cb, void *opaque);
/* Log with backoff per key: the first line of a key is written; repeats are
 * suppressed for 1 s, doubling up to 60 s, and the next written line says how
 * many were suppressed. key NULL = never suppressed. Thread-safe. */
void slda_log(slda_metrics_t *m, int level, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Reset the backoff of key (the condition it reported is over). */
void slda_log_reset(slda_metrics_t *m, const char *key);

/* http.c: /metrics, /healthz and the live page on 127.0.0.1:port (0 = ephemeral), on a
 * thread of its own: bounded connections, total deadlines (http.c's top). */
typedef struct slda_http_s slda_http_t;
slda_http_t *slda_http_start(slda_metrics_t *m, const char *model_name, int port,
                             char *errstr, size_t errstr_size);
int slda_http_port(const slda_http_t *http);
/* Serve the live page at / and its JSON at /api/{topics,prevalence,events,status}
 * from page (track.h; borrowed, must outlive the server; set before requests). */
struct slda_page_s;
void slda_http_set_page(slda_http_t *http, struct slda_page_s *page);
void slda_http_stop(slda_http_t *http);

#endif
