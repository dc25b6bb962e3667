/* kafka_sink.c - the producers: dead letters, per-document outputs, snapshot chunks.
 *
 * Two producer handles. The data producer carries dead letters and outputs;
 * it never times a message out (message.timeout.ms=0 unless the user sets it)
 * and the service drains it before each snapshot, so every record of a
 * document inside a snapshot has been delivered before the snapshot's offsets
 * are committed (at-least-once). With kafka.transactional.id and output.topic
 * it is transactional: records and the group's offsets commit together. The
 * snapshot producer publishes encoded snapshots in chunks; its failures never
 * hold the service back: at most one publication is in flight, a newer one is
 * skipped until the previous one is delivered. All record keys of one model
 * go to one partition of snapshot.topic (XXH3-64 of the model name modulo the
 * partition count), so chunks always arrive before their manifest.
 * Delivery reports run inside rd_kafka_poll/flush on the service thread.
 */
#include "json.h"
#include "kafka.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAPSHOT_FORMAT 1 /* manifest format version (docs/service.md) */
#define TXN_TIMEOUT_MS 30000

/* msg_opaque tags of snapshot records. */
#define TAG_CHUNK ((void *)1)
#define TAG_MANIFEST ((void *)2)

struct slda_ksink_s {
    rd_kafka_t *data;         /* dead letters + outputs */
    rd_kafka_t *snap;         /* snapshot chunks (NULL when snapshot.topic is off) */
    rd_kafka_topic_t *snap_rkt;
    slda_metrics_t *metrics;
    char *deadletter_topic, *output_topic;
    size_t chunk_bytes;
    int transactional, txn_open;
    uint64_t data_inflight;   /* produced minus reported */
    uint64_t snap_inflight;
    struct timespec publish_start;
};

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void data_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    slda_ksink_t *sink = opaque;
    sink->data_inflight--;
    if (!m->err) {
        slda_log_reset(sink->metrics, "kafka-deliver");
        return;
    }
    slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
    slda_log(sink->metrics, SLDA_LOG_ERR, "kafka-deliver", "kafka: record to %s lost: %s",
             rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
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
        slda_metrics_set(sink->metrics, SLDA_G_PUBLISH_SECONDS, seconds_since(&sink->publish_start));
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
                                int forever, slda_ksink_t *sink,
                                void (*dr)(rd_kafka_t *, const rd_kafka_message_t *, void *),
                                char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *rconf = rd_kafka_conf_new();
    if (forever && conf_set(rconf, "message.timeout.ms", "0", errstr, errstr_size))
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
    sink->snap = producer_new(conf, bootstrap, 0, 0, sink, snap_dr, errstr, errstr_size);
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

slda_ksink_t *slda_ksink_new(const slda_conf_t *conf, const char *bootstrap,
                             slda_metrics_t *metrics, char *errstr, size_t errstr_size)
{
    slda_ksink_t *sink = slda_xcalloc(1, sizeof *sink);
    sink->metrics = metrics;
    sink->deadletter_topic = slda_xstrdup(conf->deadletter_topic ? conf->deadletter_topic : "");
    sink->output_topic = slda_xstrdup(conf->output_topic ? conf->output_topic : "");
    sink->chunk_bytes = conf->snapshot_chunk_bytes ? conf->snapshot_chunk_bytes : 900000;
    sink->transactional = conf_has(conf, "transactional.id") && *sink->output_topic;
    if (conf_has(conf, "transactional.id") && !*sink->output_topic)
        slda_log(metrics, SLDA_LOG_WARN, NULL,
                 "kafka.transactional.id is ignored without output.topic");
    sink->data = producer_new(conf, bootstrap, sink->transactional, 1, sink, data_dr, errstr,
                              errstr_size);
    if (!sink->data)
        goto fail;
    if (conf->snapshot_topic && *conf->snapshot_topic &&
        snap_setup(sink, conf, bootstrap, errstr, errstr_size))
        goto fail;
    if (sink->transactional) {
        if (txn_call(sink, rd_kafka_init_transactions(sink->data, TXN_TIMEOUT_MS),
                     "init", errstr, errstr_size) ||
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
    if (sink->data) {
        if (sink->txn_open)
            rd_kafka_error_destroy(rd_kafka_abort_transaction(sink->data, flush_ms));
        else
            rd_kafka_flush(sink->data, flush_ms);
        if (sink->data_inflight)
            slda_log(sink->metrics, SLDA_LOG_ERR, NULL,
                     "kafka: %" PRIu64 " dead-letter/output record(s) not delivered at exit",
                     sink->data_inflight);
        rd_kafka_destroy(sink->data);
    }
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

/* Produce on the data producer, waiting while the local queue is full. */
static slda_err_t data_produce(slda_ksink_t *sink, const char *topic, const void *key,
                               size_t keylen, const void *val, size_t len,
                               rd_kafka_headers_t *hdrs, int64_t ts)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            sink->data, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, keylen),
            RD_KAFKA_V_VALUE((void *)val, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
        if (!err) {
            sink->data_inflight++;
            return SLDA_OK;
        }
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_headers_destroy(hdrs);
            slda_metrics_add(sink->metrics, SLDA_M_KAFKA_ERRORS, 1);
            slda_log(sink->metrics, SLDA_LOG_ERR, "kafka-produce", "kafka: produce to %s: %s",
                     topic, rd_kafka_err2str(err));
            return SLDA_ERR_KAFKA;
        }
        slda_log(sink->metrics, SLDA_LOG_WARN, "kafka-queue-full",
                 "kafka: producer queue full, waiting for the brokers");
        rd_kafka_poll(sink->data, 100);
    }
}

slda_err_t slda_ksink_deadletter(slda_ksink_t *sink, const slda_kmsg_t *msg, slda_err_t code,
                                 const char *reason)
{
    if (!*sink->deadletter_topic)
        return SLDA_OK;
    rd_kafka_headers_t *orig = NULL, *hdrs;
    if (msg->handle && !rd_kafka_message_headers(msg->handle, &orig) && orig)
        hdrs = rd_kafka_headers_copy(orig);
    else
        hdrs = rd_kafka_headers_new(8);
    hdr_add(hdrs, "error", reason);
    hdr_add(hdrs, "error.code", slda_err_name(code));
    hdr_source(hdrs, msg);
    return data_produce(sink, sink->deadletter_topic, msg->key, msg->keylen, msg->value,
                        msg->len, hdrs, msg->timestamp_ms);
}

slda_err_t slda_ksink_output(slda_ksink_t *sink, const slda_kmsg_t *msg, const char *key,
                             size_t keylen, const char *json, size_t len)
{
    if (!*sink->output_topic)
        return SLDA_OK;
    rd_kafka_headers_t *hdrs = rd_kafka_headers_new(4);
    hdr_source(hdrs, msg);
    return data_produce(sink, sink->output_topic, key, keylen, json, len, hdrs,
                        msg->timestamp_ms);
}

void slda_ksink_poll(slda_ksink_t *sink)
{
    rd_kafka_poll(sink->data, 0);
    if (sink->snap)
        rd_kafka_poll(sink->snap, 0);
}

int slda_ksink_drain(slda_ksink_t *sink, int timeout_ms)
{
    if (sink->data_inflight)
        rd_kafka_flush(sink->data, timeout_ms);
    else
        rd_kafka_poll(sink->data, 0);
    return sink->data_inflight == 0;
}

slda_err_t slda_ksink_txn_commit(slda_ksink_t *sink, slda_ksource_t *src,
                                 const slda_offset_t *offs, size_t n, char *errstr,
                                 size_t errstr_size)
{
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
        if (rd_kafka_error_txn_requires_abort(e))
            rd_kafka_error_destroy(rd_kafka_abort_transaction(sink->data, TXN_TIMEOUT_MS));
        sink->txn_open = 0;
        return txn_call(sink, e, "commit", errstr, errstr_size);
    }
    sink->txn_open = 0;
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
    clock_gettime(CLOCK_MONOTONIC, &sink->publish_start);
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
