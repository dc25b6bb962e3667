/* kafka_sink.c - the producers: dead letters, per-document outputs, snapshot chunks.
 *
 * Two producer handles. The data producer carries dead letters and outputs.
 * Nothing it is given is lost and nothing blocks the service thread:
 *  - a record librdkafka cannot take now (local queue full) waits in the
 *    sink's backlog and is handed over on a later poll, in order;
 *  - a record whose delivery fails with an error that may pass (topic missing
 *    for a while, timeouts, broker errors) goes back to the backlog and is
 *    produced again after a backoff (100 ms doubling to 5 s), forever;
 *  - a record that can never be delivered (too large even without its value,
 *    not authorised, invalid) makes the sink fatal: the service stops with that
 *    error and commits nothing;
 *  - dead letters carry what fits under the producer's message.max.bytes: an
 *    oversized value is cut (or left out), with headers saying so.
 * The service drains the sink (every record delivered, backlog empty) before a
 * snapshot's offsets are stored or committed, and pauses consumption while the
 * backlog is not empty, so undelivered records bound memory. Counters count
 * delivered records. With kafka.transactional.id and output.topic the data
 * producer is transactional: records and the group's offsets commit together,
 * and a failed delivery fails the transaction (no retry: the service stops and
 * a restart resumes from its last snapshot). The snapshot producer publishes
 * encoded snapshots in chunks; its failures never hold the service back: at
 * most one publication is in flight, a newer one is skipped until the previous
 * one is delivered. All record keys of one model go to one partition of
 * snapshot.topic (XXH3-64 of the model name modulo the partition count), so
 * chunks always arrive before their manifest.
 * Delivery reports run inside rd_kafka_poll/flush on the service thread.
 */
#include "core/json.h"
#include "kafka/kafka.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SNAPSHOT_FORMAT 1 /* manifest format version (docs/service.md) */
#define TXN_TIMEOUT_MS 30000
#define RETRY_FIRST_S 0.1 /* backoff of a failed record: doubles up to RETRY_MAX_S */
#define RETRY_MAX_S 5.0
#define RECORD_SLACK 512  /* bytes a record needs beyond key, value and headers */

/* What a data record is, for counting on delivery (msg_opaque). */
enum { KIND_DEADLETTER = 1, KIND_OUTPUT = 2, KIND_EVENT = 3, KIND_UPDATE = 4 };
typedef struct rec_meta_s {
    int kind;
    slda_err_t code;      /* dead-letter reason */
    int value_omitted;    /* dead letter already sent without its value */
    uint32_t attempts;
} rec_meta_t;

/* A record waiting to be (re)produced. */
typedef struct pending_s {
    char *topic;
    void *key, *val;
    size_t keylen, len;
    rd_kafka_headers_t *hdrs; /* owned */
    int64_t ts;
    rec_meta_t *meta;         /* owned until produced */
    double next_try;          /* monotonic seconds */
} pending_t;

/* msg_opaque tags of snapshot records. */
#define TAG_CHUNK ((void *)1)
#define TAG_MANIFEST ((void *)2)

struct slda_ksink_s {
    rd_kafka_t *data;         /* dead letters + outputs */
    rd_kafka_t *snap;         /* snapshot chunks (NULL when snapshot.topic is off) */
    rd_kafka_topic_t *snap_rkt;
    slda_metrics_t *metrics;
    volatile int *stop;       /* slda_ksink_set_stop's flag (NULL before): slda_stop_now */
    char *deadletter_topic, *output_topic;
    size_t chunk_bytes;
    int transactional, txn_open;
    uint64_t data_inflight;   /* produced minus reported */
    pending_t *backlog;       /* FIFO of records not in librdkafka's hands */
    size_t bl_head, bl_n, bl_cap;
    size_t max_bytes;         /* the data producer's message.max.bytes */
    double progress_at;       /* last delivery, or when undelivered records appeared */
    char fatal[512];          /* non-empty: a record can never be delivered */
    int txn_failed;           /* transactional: a record failed, the transaction must abort */
    uint64_t snap_inflight;
    double publish_start; /* slda_mono_s() */
};

static void set_fatal(slda_ksink_t *sink, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_fatal(slda_ksink_t *sink, const char *fmt, ...)
{
    if (sink->fatal[0])
        return; /* the first cause is the one to report */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sink->fatal, sizeof sink->fatal, fmt, ap);
    va_end(ap);
    slda_log(sink->metrics, SLDA_LOG_ERR, NULL, "%s", sink->fatal);
}

/* Errors no retry can cure for this record. Everything else (unknown topic,
 * timeouts, leader changes, transport, throttling) is retried. */
static int delivery_permanent(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__FENCED:
        return 1;
    default:
        return 0;
    }
}

/* Seconds to wait before attempt n+1 of a record: 0.1 s doubling to 5 s. */
static double retry_backoff(uint32_t attempts)
{
    double backoff = RETRY_FIRST_S;
    for (uint32_t i = 1; i < attempts && backoff < RETRY_MAX_S; i++)
        backoff *= 2;
    return backoff < RETRY_MAX_S ? backoff : RETRY_MAX_S;
}

static pending_t *backlog_push(slda_ksink_t *sink)
{
    if (sink->bl_n == sink->bl_cap) { /* grow and unwrap the ring */
        size_t cap = sink->bl_cap ? 2 * sink->bl_cap : 64;
        pending_t *b = slda_xmalloc(cap * sizeof *b);
        for (size_t i = 0; i < sink->bl_n; i++)
            b[i] = sink->backlog[(sink->bl_head + i) % sink->bl_cap];
        free(sink->backlog);
        sink->backlog = b;
        sink->bl_cap = cap;
        sink->bl_head = 0;
    }
    if (!sink->bl_n && !sink->data_inflight)
        sink->progress_at = slda_mono_s();
    pending_t *p = &sink->backlog[(sink->bl_head + sink->bl_n++) % sink->bl_cap];
    memset(p, 0, sizeof *p);
    return p;
}

static void pending_free(pending_t *p)
{
    free(p->topic);
    free(p->key);
    free(p->val);
    if (p->hdrs)
        rd_kafka_headers_destroy(p->hdrs);
    free(p->meta);
}

static void *memdup_or_null(const void *p, size_t n)
{
    if (!p)
        return NULL;
    void *q = slda_xmalloc(n ? n : 1);
    memcpy(q, p, n);
    return q;
}

static void count_delivered(slda_ksink_t *sink, const rec_meta_t *meta)
{
    if (meta->kind == KIND_DEADLETTER)
        slda_metrics_deadletter(sink->metrics, meta->code);
    else if (meta->kind == KIND_EVENT)
        slda_metrics_add(sink->metrics, SLDA_M_EVENTS, 1);
    else if (meta->kind == KIND_UPDATE)
        ; /* counted when its transaction commits (replica.c) */
    else
        slda_metrics_add(sink->metrics, SLDA_M_OUTPUTS, 1);
}

static void data_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    slda_ksink_t *sink = opaque;
    rec_meta_t *meta = m->_private;
    /* A failed record stays undelivered (back to the backlog below): counted
     * in flight until then, so the stall clock keeps running. */
    if (!m->err) {
        sink->data_inflight--;
        sink->progress_at = slda_mono_s();
        count_delivered(sink, meta);
        free(meta);
        slda_log_reset(sink->metrics, "kafka-deliver");
        return;
    }
    const char *topic = rd_kafka_topic_name(m->rkt);
    if (m->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || m->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT) {
        sink->data_inflight--;
        free(meta); /* shutting down: counted as undelivered at exit */
        return;
    }
    slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
    if (sink->transactional) {
        sink->txn_failed = 1;
        set_fatal(sink, "kafka: record to %s failed inside the transaction: %s (the transaction "
                  "is aborted; a restart resumes from the last snapshot)", topic,
                  rd_kafka_err2str(m->err));
        sink->data_inflight--;
        free(meta);
        return;
    }
    int oversize = m->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
                   m->err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE;
    if (delivery_permanent(m->err) &&
        !(oversize && meta->kind == KIND_DEADLETTER && !meta->value_omitted)) {
        set_fatal(sink, "kafka: a %s record to %s can never be delivered: %s",
                  meta->kind == KIND_DEADLETTER ? "dead-letter"
                  : meta->kind == KIND_EVENT ? "topic event"
                  : meta->kind == KIND_UPDATE ? "update" : "output", topic,
                  rd_kafka_err2str(m->err));
        sink->data_inflight--;
        free(meta);
        return;
    }
    /* Produce it again later, from a copy (the message is librdkafka's). */
    pending_t *p = backlog_push(sink);
    p->topic = slda_xstrdup(topic);
    p->key = memdup_or_null(m->key, m->key_len);
    p->keylen = m->key_len;
    rd_kafka_headers_t *h = NULL;
    if (!rd_kafka_message_headers(m, &h) && h)
        p->hdrs = rd_kafka_headers_copy(h);
    else
        p->hdrs = rd_kafka_headers_new(8);
    if (oversize) { /* the broker's limit is lower than the producer's: drop the value */
        char num[32];
        snprintf(num, sizeof num, "%zu", m->len);
        rd_kafka_header_remove(p->hdrs, "value.truncated");
        rd_kafka_header_add(p->hdrs, "value.omitted", -1, num, -1);
        meta->value_omitted = 1;
    } else {
        p->val = memdup_or_null(m->payload, m->len);
        p->len = m->len;
    }
    rd_kafka_timestamp_type_t tstype;
    int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    p->ts = ts > 0 ? ts : 0;
    meta->attempts++;
    p->next_try = slda_mono_s() + retry_backoff(meta->attempts);
    p->meta = meta;
    sink->data_inflight--;
    slda_log(sink->metrics, SLDA_LOG_WARN, "kafka-deliver",
             "kafka: record to %s not delivered: %s; retrying (attempt %u), offsets wait for it",
             topic, rd_kafka_err2str(m->err), meta->attempts + 1);
}

static void snap_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    slda_ksink_t *sink = opaque;
    sink->snap_inflight--;
    if (m->err) {
        slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
        slda_log(sink->metrics, SLDA_LOG_WARN, "snapshot-publish",
                 "snapshot topic %s: delivery failed: %s (the snapshot stays in snapshot.dir)",
                 rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
    } else if (m->_private == TAG_MANIFEST) {
        slda_metrics_add(sink->metrics, SLDA_M_PUBLISHED, 1);
        slda_metrics_set(sink->metrics, SLDA_G_PUBLISH_SECONDS,
                         slda_mono_s() - sink->publish_start);
        slda_log_reset(sink->metrics, "snapshot-publish");
    }
}

static void sink_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    slda_ksink_t *sink = opaque;
    char key[64];
    snprintf(key, sizeof key, "kafka-perror-%s", rd_kafka_err2name((rd_kafka_resp_err_t)err));
    slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
    slda_log(sink->metrics, SLDA_LOG_WARN, key, "kafka producer: %s: %s",
             rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char why[512];
        rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof why);
        set_fatal(sink, "fatal Kafka producer error: %s: %s", rd_kafka_err2name(orig), why);
    }
}

static void sink_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    slda_ksink_t *sink = rd_kafka_opaque(rk);
    char key[64];
    snprintf(key, sizeof key, "rdkafka-producer-%s", fac);
    slda_log(sink->metrics, level <= 3 ? SLDA_LOG_ERR : SLDA_LOG_WARN, key,
             "kafka producer: %s: %s", fac, buf);
}

static int conf_set(rd_kafka_conf_t *rconf, const char *name, const char *value, char *errstr,
                    size_t errstr_size)
{
    char rderr[512];
    if (rd_kafka_conf_set(rconf, name, value, rderr, sizeof rderr) == RD_KAFKA_CONF_OK)
        return 0;
    slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"kafka.%s\": %s", name, rderr);
    return -1;
}

/* Producer handle with the user's kafka.* (transactional.id only if txn). */
static rd_kafka_t *producer_new(const slda_conf_t *conf, const char *bootstrap, int txn,
                                const char *const *defaults, int forever, slda_ksink_t *sink,
                                void (*dr)(rd_kafka_t *, const rd_kafka_message_t *, void *),
                                char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *rconf = rd_kafka_conf_new();
    if (forever && conf_set(rconf, "message.timeout.ms", "0", errstr, errstr_size))
        goto fail;
    for (size_t i = 0; defaults && defaults[i]; i += 2) /* name, value, ...: the user's win */
        if (conf_set(rconf, defaults[i], defaults[i + 1], errstr, errstr_size))
            goto fail;
    for (size_t i = 0; i < slda_conf_kafka_count(conf); i++) {
        const char *n, *v;
        slda_conf_kafka_get(conf, i, &n, &v);
        if ((!txn && !strcmp(n, "transactional.id")) ||
            (bootstrap && !strcmp(n, "bootstrap.servers")))
            continue;
        /* consumer-only keys would make librdkafka warn on every start */
        if (!strcmp(n, "group.id") || !strncmp(n, "enable.auto.", 12) ||
            !strcmp(n, "auto.offset.reset") || !strncmp(n, "session.timeout", 15) ||
            !strncmp(n, "heartbeat.", 10) || !strcmp(n, "isolation.level") ||
            !strcmp(n, "partition.assignment.strategy") || !strncmp(n, "fetch.", 6) ||
            !strcmp(n, "max.poll.interval.ms") || !strcmp(n, "group.instance.id"))
            continue;
        if (conf_set(rconf, n, v, errstr, errstr_size))
            goto fail;
    }
    if (bootstrap && conf_set(rconf, "bootstrap.servers", bootstrap, errstr, errstr_size))
        goto fail;
    rd_kafka_conf_set_dr_msg_cb(rconf, dr);
    rd_kafka_conf_set_error_cb(rconf, sink_error);
    rd_kafka_conf_set_log_cb(rconf, sink_log);
    rd_kafka_conf_set_opaque(rconf, sink);
    char rderr[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, rconf, rderr, sizeof rderr);
    if (!rk) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "kafka producer: %s", rderr);
        goto fail;
    }
    return rk;
fail:
    rd_kafka_conf_destroy(rconf);
    return NULL;
}

/* All records of one model to one partition: XXH3-64 of the key up to '/'. */
static int32_t model_partitioner(const rd_kafka_topic_t *rkt, const void *key, size_t keylen,
                                 int32_t partition_cnt, void *rkt_opaque, void *msg_opaque)
{
    const char *slash = key ? memchr(key, '/', keylen) : NULL;
    size_t n = slash ? (size_t)(slash - (const char *)key) : keylen;
    if (partition_cnt <= 0)
        return RD_KAFKA_PARTITION_UA;
    return (int32_t)(slda_hash64(key, n, 0) % (uint64_t)partition_cnt);
}

static int conf_has(const slda_conf_t *conf, const char *name)
{
    for (size_t i = 0; i < slda_conf_kafka_count(conf); i++) {
        const char *n, *v;
        slda_conf_kafka_get(conf, i, &n, &v);
        if (!strcmp(n, name))
            return v && *v;
    }
    return 0;
}

static slda_err_t txn_call(slda_ksink_t *sink, rd_kafka_error_t *e, const char *what,
                           char *errstr, size_t errstr_size)
{
    if (!e)
        return SLDA_OK;
    slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "transaction: %s: %s", what,
                 rd_kafka_error_string(e));
    slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
    rd_kafka_error_destroy(e);
    return SLDA_ERR_KAFKA;
}

static slda_err_t snap_setup(slda_ksink_t *sink, const slda_conf_t *conf, const char *bootstrap,
                             char *errstr, size_t errstr_size)
{
    sink->snap = producer_new(conf, bootstrap, 0, NULL, 0, sink, snap_dr, errstr, errstr_size);
    if (!sink->snap)
        return SLDA_ERR_KAFKA;
    rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();
    rd_kafka_topic_conf_set_partitioner_cb(tconf, model_partitioner);
    sink->snap_rkt = rd_kafka_topic_new(sink->snap, conf->snapshot_topic, tconf);
    if (!sink->snap_rkt)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "snapshot.topic \"%s\": %s",
                            conf->snapshot_topic, rd_kafka_err2str(rd_kafka_last_error()));
    return SLDA_OK;
}

/* rd_kafka_init_transactions in slices of at most a second (the call resumes
 * where a timed-out one left off), so a stop request ends the wait; up to
 * TXN_TIMEOUT_MS in all, as one call would wait. Every retriable error is
 * asked again within that time, as one long call retries internally: a
 * broker just started answers "Coordinator load in progress" for a while
 * (seen in 0106, which failed when only timeouts were asked again). */
static slda_err_t init_transactions(slda_ksink_t *sink, volatile int *stop, char *errstr,
                                    size_t errstr_size)
{
    double deadline = slda_mono_s() + TXN_TIMEOUT_MS / 1000.0;
    for (;;) {
        double asked = slda_mono_s();
        rd_kafka_error_t *e = rd_kafka_init_transactions(sink->data, slda_slice_ms(deadline, 1));
        if (e && rd_kafka_error_is_retriable(e) && slda_mono_s() < deadline) {
            rd_kafka_error_destroy(e);
            if (slda_mono_s() - asked < 0.1 && !slda_stopping(stop))
                usleep(100000); /* an answer at once: not a busy loop */
            if (slda_stopping(stop))
                return slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                                    "stopped while waiting for the transaction coordinator");
            continue;
        }
        return txn_call(sink, e,
                        "init (no transaction coordinator answered: is a broker with "
                        "transactions reachable at kafka.bootstrap.servers?)",
                        errstr, errstr_size);
    }
}

slda_ksink_t *slda_ksink_new(const slda_conf_t *conf, const char *bootstrap,
                             slda_metrics_t *metrics, volatile int *stop, char *errstr,
                             size_t errstr_size)
{
    slda_ksink_t *sink = slda_xcalloc(1, sizeof *sink);
    sink->metrics = metrics;
    sink->deadletter_topic = slda_xstrdup(conf->deadletter_topic ? conf->deadletter_topic : "");
    sink->output_topic = slda_xstrdup(conf->output_topic ? conf->output_topic : "");
    sink->chunk_bytes = conf->snapshot_chunk_bytes ? conf->snapshot_chunk_bytes : 900000;
    int replica = conf->updates_topic && *conf->updates_topic;
    sink->transactional = replica || (conf_has(conf, "transactional.id") && *sink->output_topic);
    if (conf_has(conf, "transactional.id") && !sink->transactional)
        slda_log(metrics, SLDA_LOG_WARN, NULL,
                 "kafka.transactional.id is ignored without output.topic");
    /* Replicas (replica.c) publish every minibatch in a transaction: unless
     * set, a transactional.id of their own (fencing is by the consumer group's
     * generation, KIP-447), a short transaction timeout (a killed replica's
     * open transaction holds the updates log's readers until it ends), room
     * for an update record, and no linger (a transaction's records are
     * produced together just before its commit, which waits for them). */
    char txn_id[512];
    char host[128] = "host";
    gethostname(host, sizeof host - 1);
    snprintf(txn_id, sizeof txn_id, "%s%s/%s/%ld/%016" PRIx64, SLDA_REPLICA_CLIENT,
             conf->model_name ? conf->model_name : "", host, (long)getpid(),
             slda_hash64(&sink, sizeof sink, (uint64_t)time(NULL)));
    const char *replica_defaults[] = {"transactional.id", txn_id, "transaction.timeout.ms",
                                      "10000", "message.max.bytes", "67108864", "linger.ms", "0",
                                      NULL};
    sink->data = producer_new(conf, bootstrap, sink->transactional,
                              replica ? replica_defaults : NULL, 1, sink, data_dr, errstr,
                              errstr_size);
    if (!sink->data)
        goto fail;
    char mmb[32];
    size_t mmb_len = sizeof mmb;
    sink->max_bytes = 1000000;
    if (rd_kafka_conf_get(rd_kafka_conf(sink->data), "message.max.bytes", mmb, &mmb_len) ==
        RD_KAFKA_CONF_OK)
        sink->max_bytes = strtoull(mmb, NULL, 10);
    if (conf->snapshot_topic && *conf->snapshot_topic &&
        snap_setup(sink, conf, bootstrap, errstr, errstr_size))
        goto fail;
    if (sink->transactional) {
        if (init_transactions(sink, stop, errstr, errstr_size) ||
            txn_call(sink, rd_kafka_begin_transaction(sink->data), "begin", errstr,
                     errstr_size))
            goto fail;
        sink->txn_open = 1;
    }
    return sink;
fail:
    slda_ksink_destroy(sink, 0);
    return NULL;
}

void slda_ksink_destroy(slda_ksink_t *sink, int flush_ms)
{
    if (!sink)
        return;
    if (slda_stop_now(sink->stop))
        flush_ms = 0; /* asked to stop now: what is undelivered is purged and reported */
    if (sink->data) {
        if (sink->txn_open)
            rd_kafka_error_destroy(rd_kafka_abort_transaction(sink->data, flush_ms));
        else if (!sink->fatal[0])
            slda_ksink_drain(sink, flush_ms);
        /* Purge what is left so every delivery report (and its meta) is served. */
        rd_kafka_purge(sink->data, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        /* purged: each report comes without the broker, 30 s at most (100 polls of 10 ms
         * was the bound: under load a warning and reports served by rd_kafka_destroy) */
        double until = slda_mono_s() + 30.0;
        while (sink->data_inflight && slda_mono_s() < until)
            rd_kafka_poll(sink->data, 100);
        if (sink->data_inflight || sink->bl_n)
            slda_log(sink->metrics, SLDA_LOG_WARN, NULL,
                     "kafka: %zu dead-letter/output record(s) not delivered at exit (their "
                     "offsets were not committed: they are produced again after a restart)",
                     (size_t)sink->data_inflight + sink->bl_n);
        rd_kafka_destroy(sink->data); /* reports what is left: free their meta */
    }
    for (size_t i = 0; i < sink->bl_n; i++)
        pending_free(&sink->backlog[(sink->bl_head + i) % sink->bl_cap]);
    free(sink->backlog);
    if (sink->snap) {
        rd_kafka_flush(sink->snap, flush_ms);
        if (sink->snap_rkt)
            rd_kafka_topic_destroy(sink->snap_rkt);
        rd_kafka_destroy(sink->snap);
    }
    free(sink->deadletter_topic);
    free(sink->output_topic);
    free(sink);
}

int slda_ksink_transactional(const slda_ksink_t *sink)
{
    return sink->transactional;
}

static void hdr_add(rd_kafka_headers_t *h, const char *name, const char *value)
{
    rd_kafka_header_add(h, name, -1, value, -1);
}

static void hdr_source(rd_kafka_headers_t *h, const slda_kmsg_t *msg)
{
    char num[32];
    hdr_add(h, "source.topic", msg->topic);
    snprintf(num, sizeof num, "%d", (int)msg->partition);
    hdr_add(h, "source.partition", num);
    snprintf(num, sizeof num, "%" PRId64, msg->offset);
    hdr_add(h, "source.offset", num);
}

/* Hand p to librdkafka: 1 taken (its headers and meta are librdkafka's now:
 * p->hdrs and p->meta are cleared; its buffers were copied), 0 not taken now
 * (queue full, or an error that may pass: p->next_try set for the retry),
 * -1 refused for good (the sink turned fatal). Frees nothing. */
static int handoff(slda_ksink_t *sink, pending_t *p)
{
    rd_kafka_resp_err_t err = rd_kafka_producev(
        sink->data, RD_KAFKA_V_TOPIC(p->topic), RD_KAFKA_V_KEY(p->key, p->keylen),
        RD_KAFKA_V_VALUE(p->val, p->len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(p->ts), RD_KAFKA_V_HEADERS(p->hdrs), RD_KAFKA_V_OPAQUE(p->meta),
        RD_KAFKA_V_END);
    if (!err) {
        if (!sink->data_inflight && !sink->bl_n)
            sink->progress_at = slda_mono_s();
        sink->data_inflight++;
        p->hdrs = NULL;
        p->meta = NULL;
        return 1;
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
        return 0;
    slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
    if (delivery_permanent(err)) {
        set_fatal(sink, "kafka: cannot produce to %s: %s", p->topic, rd_kafka_err2str(err));
        return -1;
    }
    p->meta->attempts++; /* e.g. the topic is unknown for now */
    p->next_try = slda_mono_s() + retry_backoff(p->meta->attempts);
    slda_log(sink->metrics, SLDA_LOG_WARN, "kafka-deliver",
             "kafka: cannot produce to %s now: %s; retrying, offsets wait for it", p->topic,
             rd_kafka_err2str(err));
    return 0;
}

/* Produce what is due from the front of the backlog, in order, until
 * librdkafka's queue is full or the front record waits for its backoff. */
static void backlog_pump(slda_ksink_t *sink)
{
    double t = sink->bl_n ? slda_mono_s() : 0;
    while (sink->bl_n && !sink->fatal[0]) {
        pending_t *p = &sink->backlog[sink->bl_head];
        if (p->next_try > t || handoff(sink, p) == 0)
            return;
        pending_free(p); /* its copies; or all of it, refused */
        sink->bl_head = (sink->bl_head + 1) % sink->bl_cap;
        sink->bl_n--;
    }
}

/* Queue one record (buffers copied, hdrs and meta taken): straight to
 * librdkafka unless earlier records wait, else to the backlog. Never blocks. */
static slda_err_t data_produce(slda_ksink_t *sink, const char *topic, const void *key,
                               size_t keylen, const void *val, size_t len,
                               rd_kafka_headers_t *hdrs, int64_t ts, rec_meta_t *meta)
{
    pending_t tmp = {.topic = (char *)topic, .key = (void *)key, .keylen = keylen,
                     .val = (void *)val, .len = len, .hdrs = hdrs, .ts = ts, .meta = meta};
    int r = sink->fatal[0] ? -1 : sink->bl_n ? 0 : handoff(sink, &tmp);
    if (r == 1)
        return SLDA_OK;
    if (r < 0) { /* the buffers are the caller's */
        rd_kafka_headers_destroy(hdrs);
        free(meta);
        return SLDA_ERR_KAFKA;
    }
    pending_t *p = backlog_push(sink);
    *p = tmp;
    p->topic = slda_xstrdup(topic);
    p->key = memdup_or_null(key, keylen);
    p->val = memdup_or_null(val, len);
    if (!tmp.next_try)
        slda_log(sink->metrics, SLDA_LOG_WARN, "kafka-queue-full",
                 "kafka: producer queue full; records wait and consumption pauses");
    return SLDA_OK;
}

static size_t headers_bytes(const rd_kafka_headers_t *h)
{
    size_t total = 0, vlen;
    const char *name;
    const void *val;
    for (size_t i = 0; h && !rd_kafka_header_get_all(h, i, &name, &val, &vlen); i++)
        total += strlen(name) + vlen + 8;
    return total;
}

slda_err_t slda_ksink_deadletter(slda_ksink_t *sink, const slda_kmsg_t *msg, slda_err_t code,
                                 const char *reason)
{
    rd_kafka_headers_t *orig = NULL, *hdrs = NULL;
    char num[32];
    size_t keylen = msg->keylen, len = msg->value ? msg->len : 0;
    /* What fits under message.max.bytes: our headers, then the original
     * headers, key and value in that order of importance. */
    size_t budget = sink->max_bytes > RECORD_SLACK ? sink->max_bytes - RECORD_SLACK : 0;
    int headers_dropped = 0;
    if (msg->handle && !rd_kafka_message_headers(msg->handle, &orig) && orig) {
        if (headers_bytes(orig) <= budget / 4)
            hdrs = rd_kafka_headers_copy(orig);
        else
            headers_dropped = 1;
    }
    if (!hdrs)
        hdrs = rd_kafka_headers_new(10);
    hdr_add(hdrs, "error", reason);
    hdr_add(hdrs, "error.code", slda_err_name(code));
    hdr_source(hdrs, msg);
    snprintf(num, sizeof num, "%zu", len);
    hdr_add(hdrs, "original.size", num);
    if (headers_dropped)
        hdr_add(hdrs, "headers.omitted", "true");
    size_t used = headers_bytes(hdrs) + 64;
    if (keylen > budget / 4) {
        snprintf(num, sizeof num, "%zu", keylen);
        hdr_add(hdrs, "key.truncated", num);
        keylen = budget / 4;
        used += 64;
    }
    used += keylen;
    size_t room = budget > used ? budget - used : 0;
    if (len > room) {
        snprintf(num, sizeof num, "%zu", len);
        hdr_add(hdrs, room ? "value.truncated" : "value.omitted", num);
        len = room;
    }
    rec_meta_t *meta = slda_xcalloc(1, sizeof *meta);
    meta->kind = KIND_DEADLETTER;
    meta->code = code;
    meta->value_omitted = len == 0;
    return data_produce(sink, sink->deadletter_topic, msg->key, keylen, len ? msg->value : NULL,
                        len, hdrs, msg->timestamp_ms, meta);
}

slda_err_t slda_ksink_output(slda_ksink_t *sink, const slda_kmsg_t *msg, const char *key,
                             size_t keylen, const char *json, size_t len)
{
    if (!*sink->output_topic)
        return SLDA_OK;
    rd_kafka_headers_t *hdrs = rd_kafka_headers_new(4);
    hdr_source(hdrs, msg);
    rec_meta_t *meta = slda_xcalloc(1, sizeof *meta);
    meta->kind = KIND_OUTPUT;
    return data_produce(sink, sink->output_topic, key, keylen, json, len, hdrs,
                        msg->timestamp_ms, meta);
}

slda_err_t slda_ksink_event(slda_ksink_t *sink, const char *topic, const char *key,
                            const char *json, size_t len, int64_t ts)
{
    rec_meta_t *meta = slda_xcalloc(1, sizeof *meta);
    meta->kind = KIND_EVENT;
    return data_produce(sink, topic, key, strlen(key), json, len, rd_kafka_headers_new(1), ts,
                        meta);
}

slda_err_t slda_ksink_update(slda_ksink_t *sink, const char *topic, const char *key,
                             size_t keylen, const void *buf, size_t len)
{
    rec_meta_t *meta = slda_xcalloc(1, sizeof *meta);
    meta->kind = KIND_UPDATE;
    return data_produce(sink, topic, key, keylen, buf, len, NULL, 0, meta);
}

void slda_ksink_poll(slda_ksink_t *sink)
{
    rd_kafka_poll(sink->data, 0);
    backlog_pump(sink);
    if (sink->snap)
        rd_kafka_poll(sink->snap, 0);
}

size_t slda_ksink_undelivered(const slda_ksink_t *sink)
{
    return (size_t)sink->data_inflight + sink->bl_n;
}

size_t slda_ksink_backlog(const slda_ksink_t *sink)
{
    return sink->bl_n;
}

double slda_ksink_stalled_s(const slda_ksink_t *sink)
{
    if (!slda_ksink_undelivered(sink))
        return 0;
    return slda_mono_s() - sink->progress_at;
}

slda_err_t slda_ksink_fatal(const slda_ksink_t *sink, char *errstr, size_t errstr_size)
{
    if (!sink->fatal[0])
        return SLDA_OK;
    return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "%s", sink->fatal);
}

void slda_ksink_set_stop(slda_ksink_t *sink, volatile int *stop)
{
    sink->stop = stop;
}

int slda_ksink_drain(slda_ksink_t *sink, int timeout_ms)
{
    double end = slda_mono_s() + timeout_ms / 1000.0;
    for (;;) {
        rd_kafka_poll(sink->data, 0);
        backlog_pump(sink);
        if (!slda_ksink_undelivered(sink) || sink->fatal[0] || slda_stop_now(sink->stop))
            break;
        double left = end - slda_mono_s();
        if (left <= 0)
            break;
        rd_kafka_poll(sink->data, left < 0.05 ? (int)(left * 1000) + 1 : 50);
    }
    return !slda_ksink_undelivered(sink) && !sink->fatal[0];
}

slda_err_t slda_ksink_txn_commit(slda_ksink_t *sink, slda_ksource_t *src,
                                 const slda_offset_t *offs, size_t n, int *aborted,
                                 char *errstr, size_t errstr_size)
{
    if (aborted)
        *aborted = 0;
    if (sink->txn_failed || sink->fatal[0]) {
        rd_kafka_error_destroy(rd_kafka_abort_transaction(sink->data, TXN_TIMEOUT_MS));
        sink->txn_open = 0;
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "transaction aborted: %s",
                            sink->fatal[0] ? sink->fatal : "a record failed");
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n + 1);
    for (size_t i = 0; i < n; i++)
        if (offs[i].offset >= 0)
            rd_kafka_topic_partition_list_add(list, offs[i].topic, offs[i].partition)->offset =
                offs[i].offset;
    rd_kafka_consumer_group_metadata_t *cgmd = slda_ksource_group_metadata(src);
    rd_kafka_error_t *e = NULL;
    if (list->cnt)
        e = rd_kafka_send_offsets_to_transaction(sink->data, list, cgmd, TXN_TIMEOUT_MS);
    rd_kafka_consumer_group_metadata_destroy(cgmd);
    rd_kafka_topic_partition_list_destroy(list);
    if (!e)
        e = rd_kafka_commit_transaction(sink->data, TXN_TIMEOUT_MS);
    if (e) {
        int abortable = rd_kafka_error_txn_requires_abort(e);
        if (abortable)
            rd_kafka_error_destroy(rd_kafka_abort_transaction(sink->data, TXN_TIMEOUT_MS));
        sink->txn_open = 0;
        slda_err_t r = txn_call(sink, e, "commit", errstr, errstr_size);
        if (!aborted || !abortable || sink->fatal[0])
            return r;
        /* e.g. a rebalance fenced our generation: nothing of it is visible */
        *aborted = 1;
        if (txn_call(sink, rd_kafka_begin_transaction(sink->data), "begin", errstr, errstr_size))
            return SLDA_ERR_KAFKA;
        sink->txn_open = 1;
        return SLDA_OK;
    }
    sink->txn_open = 0;
    if (txn_call(sink, rd_kafka_begin_transaction(sink->data), "begin", errstr, errstr_size))
        return SLDA_ERR_KAFKA;
    sink->txn_open = 1;
    return SLDA_OK;
}

slda_err_t slda_ksink_txn_abort(slda_ksink_t *sink, char *errstr, size_t errstr_size)
{
    if (sink->txn_open) {
        sink->txn_open = 0;
        if (txn_call(sink, rd_kafka_abort_transaction(sink->data, TXN_TIMEOUT_MS), "abort",
                     errstr, errstr_size))
            return SLDA_ERR_KAFKA;
    }
    if (txn_call(sink, rd_kafka_begin_transaction(sink->data), "begin", errstr, errstr_size))
        return SLDA_ERR_KAFKA;
    sink->txn_open = 1;
    return SLDA_OK;
}

/* One snapshot record on the snapshot producer (payload copied). */
static slda_err_t snap_produce(slda_ksink_t *sink, const char *key, const void *val, size_t len,
                               rd_kafka_headers_t *hdrs, void *tag, char *errstr,
                               size_t errstr_size)
{
    rd_kafka_resp_err_t err = rd_kafka_producev(
        sink->snap, RD_KAFKA_V_RKT(sink->snap_rkt), RD_KAFKA_V_KEY(key, strlen(key)),
        RD_KAFKA_V_VALUE((void *)val, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(tag), RD_KAFKA_V_END);
    if (err) {
        rd_kafka_headers_destroy(hdrs);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "snapshot.topic \"%s\": %s",
                            rd_kafka_topic_name(sink->snap_rkt), rd_kafka_err2str(err));
    }
    sink->snap_inflight++;
    return SLDA_OK;
}

static rd_kafka_headers_t *snap_headers(const char *model, uint64_t id, const char *type)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(6);
    char num[32];
    hdr_add(h, "model", model);
    snprintf(num, sizeof num, "%" PRIu64, id);
    hdr_add(h, "snapshot", num);
    hdr_add(h, "type", type);
    return h;
}

slda_err_t slda_ksink_snapshot(slda_ksink_t *sink, const char *model, uint64_t id,
                               const void *buf, size_t len, char *errstr, size_t errstr_size)
{
    if (!sink->snap)
        return SLDA_OK;
    rd_kafka_poll(sink->snap, 0);
    if (sink->snap_inflight)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                            "snapshot.topic \"%s\": previous snapshot still in flight "
                            "(%" PRIu64 " records); skipping snapshot %" PRIu64,
                            rd_kafka_topic_name(sink->snap_rkt), sink->snap_inflight, id);
    size_t nchunks = len ? (len + sink->chunk_bytes - 1) / sink->chunk_bytes : 1;
    char key[512], num[32];
    sink->publish_start = slda_mono_s();
    for (size_t i = 0; i < nchunks; i++) {
        size_t off = i * sink->chunk_bytes, n = len - off < sink->chunk_bytes ? len - off : sink->chunk_bytes;
        rd_kafka_headers_t *h = snap_headers(model, id, "chunk");
        snprintf(num, sizeof num, "%zu", i);
        hdr_add(h, "chunk", num);
        snprintf(num, sizeof num, "%zu", nchunks);
        hdr_add(h, "chunks", num);
        snprintf(key, sizeof key, "%s/%" PRIu64 "/%zu", model, id, i);
        if (snap_produce(sink, key, (const char *)buf + off, n, h, TAG_CHUNK, errstr, errstr_size))
            return SLDA_ERR_KAFKA;
    }
    char *json = NULL;
    size_t jlen = 0;
    FILE *f = open_memstream(&json, &jlen);
    fprintf(f, "{\"model\":");
    slda_json_write_string(f, model);
    fprintf(f, ",\"snapshot\":%" PRIu64 ",\"chunks\":%zu,\"bytes\":%zu,\"chunk_bytes\":%zu,"
               "\"xxh3\":\"%016" PRIx64 "\",\"format\":%d,\"time_ms\":%lld}",
            id, nchunks, len, sink->chunk_bytes, slda_hash64(buf, len, 0), SNAPSHOT_FORMAT,
            (long long)time(NULL) * 1000);
    fclose(f);
    rd_kafka_headers_t *h = snap_headers(model, id, "manifest");
    snprintf(num, sizeof num, "%zu", nchunks);
    hdr_add(h, "chunks", num);
    /* The manifest key must hash like the chunks: model name up to the '/'. */
    slda_err_t err = snap_produce(sink, model, json, jlen, h, TAG_MANIFEST, errstr, errstr_size);
    free(json);
    return err;
}
