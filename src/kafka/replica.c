/* replica.c - the replicated update log: many instances, one model (issue 10).
 *
 * Instances of one model (same model.name and updates.topic) split the input
 * partitions in one consumer group. Each runs the local half of its own
 * minibatches against its replica (update.c) and publishes the record to
 * updates.topic, a topic of one partition, in a Kafka transaction that also
 * commits the minibatch's input offsets (send_offsets_to_transaction, fenced
 * by the group's generation: KIP-447). Every instance reads updates.topic
 * read_committed and applies each record in log order, its own included: a
 * replica changes only by applying the log, so replicas that applied the same
 * prefix hold the same model, bit for bit (docs/replication.md). Hence:
 *  - a document enters the log exactly once: its offset is committed in the
 *    transaction that publishes the record of its minibatch, and the next
 *    owner of its partition starts from the committed (stable) offset;
 *  - a minibatch whose transaction aborts (a rebalance fenced it, a broker
 *    timed out) is dropped whole and its partitions are read again;
 *  - staleness is bounded: a minibatch starts only after every record fetched
 *    is applied and at most updates.staleness of this instance's own records
 *    are still on their way back;
 *  - a snapshot records the log position (an offsets entry: updates.topic,
 *    partition 0, next offset); a restarted instance restores it and replays
 *    the log from there; the snapshot writer (service.c: the holder of the
 *    snapshot.dir lock) prunes the log below its oldest kept snapshot.
 * This file owns the log's consumer and admin requests; the producer is the
 * service's transactional data producer (kafka_sink.c).
 */
#include "kafka/kafka.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ADMIN_TIMEOUT_MS 30000
#define RECORD_MAX_BYTES "67108864" /* max.message.bytes of a topic this file creates */

struct slda_replica_s {
    rd_kafka_t *rk; /* the log's consumer (no group: assigned partition 0) */
    volatile int *stop; /* while starting: ends the waits for the broker (kafka.h) */
    slda_metrics_t *metrics;
    char *topic;
    char id[400];          /* this instance: the key prefix of its records */
    uint64_t produced;     /* its records produced (the next key's sequence number) */
    uint64_t pending;      /* ... in the open transaction */
    uint64_t committed;    /* ... committed */
    uint64_t own_applied;  /* ... and applied back from the log */
    int64_t next;          /* next log offset to apply */
    int eof;               /* the last fetch reached the log's end */
    int gone;              /* the next record to apply was pruned (apply failed) */
    slda_offset_t *offs;   /* input offsets covered by applied records + the log's */
    size_t noffs, capoffs;
    uint64_t bytes;        /* bytes of records published */
    void **buf;            /* the open transaction's records, produced at its commit */
    size_t *len, nbuf, capbuf;
    char fatal[512];
};

static void set_offset(slda_replica_t *r, const char *topic, int32_t partition, int64_t next)
{
    for (size_t i = 0; i < r->noffs; i++)
        if (r->offs[i].partition == partition && !strcmp(r->offs[i].topic, topic)) {
            if (next > r->offs[i].offset)
                r->offs[i].offset = next;
            return;
        }
    if (r->noffs == r->capoffs) {
        r->capoffs = r->capoffs ? 2 * r->capoffs : 16;
        r->offs = slda_xrealloc(r->offs, r->capoffs * sizeof *r->offs);
    }
    slda_offset_t *o = &r->offs[r->noffs++];
    memset(o, 0, sizeof *o);
    snprintf(o->topic, sizeof o->topic, "%s", topic);
    o->partition = partition;
    o->offset = next;
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    slda_replica_t *r = rd_kafka_opaque(rk);
    if (level <= 4)
        slda_log(r->metrics, SLDA_LOG_WARN, "replica-kafka", "updates log: %s: %s", fac, buf);
}

static rd_kafka_t *log_consumer(slda_replica_t *r, const slda_conf_t *conf,
                                const char *bootstrap, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *rc = rd_kafka_conf_new();
    char rderr[512], group[300];
    snprintf(group, sizeof group, "streamlda-updates-%s", conf->model_name);
    /* the user's connection settings; nothing of the group or the producer */
    for (size_t i = 0; i < slda_conf_kafka_count(conf); i++) {
        const char *n, *v;
        slda_conf_kafka_get(conf, i, &n, &v);
        if (!strcmp(n, "transactional.id") || !strcmp(n, "group.id") ||
            !strcmp(n, "group.instance.id") || !strncmp(n, "enable.", 7) ||
            !strcmp(n, "partition.assignment.strategy") || !strncmp(n, "session.", 8) ||
            !strncmp(n, "heartbeat.", 10) || !strncmp(n, "transaction.", 12) ||
            !strcmp(n, "isolation.level") || !strcmp(n, "auto.offset.reset") ||
            !strcmp(n, "message.max.bytes") || !strcmp(n, "client.id") ||
            (bootstrap && !strcmp(n, "bootstrap.servers")))
            continue;
        if (rd_kafka_conf_set(rc, n, v, rderr, sizeof rderr) != RD_KAFKA_CONF_OK)
            goto bad;
    }
    const char *set[][2] = {{"isolation.level", "read_committed"},
                            {"enable.auto.commit", "false"},
                            {"enable.partition.eof", "true"},
                            {"auto.offset.reset", "error"},
                            {"fetch.wait.max.ms", "10"},
                            {"client.id", "streamlda-updates"},
                            {"group.id", group}, /* never joined: assign() only, no commits */
                            {"bootstrap.servers", bootstrap}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        if (set[i][1] && rd_kafka_conf_set(rc, set[i][0], set[i][1], rderr, sizeof rderr) !=
                             RD_KAFKA_CONF_OK)
            goto bad;
    rd_kafka_conf_set_log_cb(rc, on_log);
    rd_kafka_conf_set_opaque(rc, r);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, rc, rderr, sizeof rderr);
    if (rk)
        return rk;
bad:
    rd_kafka_conf_destroy(rc);
    slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates log consumer: %s", rderr);
    return NULL;
}

/* The topic's partition count: > 0, 0 when it does not exist, -1 (errstr) on error. */
static int partitions(slda_replica_t *r, char *errstr, size_t errstr_size)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(r->rk, r->topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err;
    double deadline = slda_mono_s() + ADMIN_TIMEOUT_MS / 1000.0;
    do /* a second at a time, so a stop request is seen */
        err = rd_kafka_metadata(r->rk, 0, rkt, &md, 1000);
    while (err == RD_KAFKA_RESP_ERR__TIMED_OUT && slda_mono_s() < deadline &&
           !slda_stopping(r->stop));
    rd_kafka_topic_destroy(rkt);
    if (err && slda_stopping(r->stop)) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                     "stopped while asking for updates.topic \"%s\"'s metadata", r->topic);
        return -1;
    }
    if (err) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates.topic \"%s\": metadata: %s",
                     r->topic, rd_kafka_err2str(err));
        return -1;
    }
    int n = 0;
    if (md->topic_cnt == 1 && !md->topics[0].err)
        n = md->topics[0].partition_cnt;
    else if (md->topic_cnt == 1 && md->topics[0].err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates.topic \"%s\": %s", r->topic,
                     rd_kafka_err2str(md->topics[0].err));
        n = -1;
    }
    rd_kafka_metadata_destroy(md);
    return n;
}

/* Wait for one admin result event on q (destroyed by the caller): NULL when
 * none came in time or a stop request came first. */
static rd_kafka_event_t *admin_wait(slda_replica_t *r, rd_kafka_queue_t *q)
{
    double deadline = slda_mono_s() + (ADMIN_TIMEOUT_MS + 5000) / 1000.0;
    rd_kafka_event_t *ev = NULL;
    while (!ev && slda_mono_s() < deadline && !slda_stopping(r->stop))
        ev = rd_kafka_queue_poll(q, 200);
    return ev;
}

static slda_err_t create_topic(slda_replica_t *r, char *errstr, size_t errstr_size)
{
    char rderr[512];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(r->topic, 1, -1, rderr, sizeof rderr);
    if (!nt)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates.topic \"%s\": %s",
                            r->topic, rderr);
    rd_kafka_NewTopic_set_config(nt, "max.message.bytes", RECORD_MAX_BYTES);
    rd_kafka_queue_t *q = rd_kafka_queue_new(r->rk);
    rd_kafka_CreateTopics(r->rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = admin_wait(r, q);
    slda_err_t ret = SLDA_OK;
    const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
    size_t n = 0;
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
    if (!ev && slda_stopping(r->stop))
        ret = slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                           "stopped while creating updates.topic \"%s\"", r->topic);
    else if (!ev || rd_kafka_event_error(ev))
        ret = slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                           "updates.topic \"%s\" does not exist and cannot be created: %s",
                           r->topic, ev ? rd_kafka_event_error_string(ev) : "timed out");
    else if (n == 1 && rd_kafka_topic_result_error(tr[0]) &&
             rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        ret = slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                           "updates.topic \"%s\" does not exist and cannot be created: %s",
                           r->topic, rd_kafka_topic_result_error_string(tr[0]));
    else if (n == 1 && !rd_kafka_topic_result_error(tr[0]))
        slda_log(r->metrics, SLDA_LOG_INFO, NULL,
                 "replica: created updates.topic %s (1 partition, max.message.bytes "
                 RECORD_MAX_BYTES ")", r->topic);
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return ret;
}

slda_replica_t *slda_replica_new(const slda_conf_t *conf, const char *bootstrap,
                                 slda_metrics_t *metrics, const slda_offset_t *restored,
                                 size_t nrestored, volatile int *stop, int *pruned,
                                 char *errstr, size_t errstr_size)
{
    slda_replica_t *r = slda_xcalloc(1, sizeof *r);
    *pruned = 0;
    r->metrics = metrics;
    r->stop = stop;
    r->topic = slda_xstrdup(conf->updates_topic);
    snprintf(r->id, sizeof r->id, "%s/%llx", conf->model_name,
             (unsigned long long)slda_hash64(&r, sizeof r,
                                             (uint64_t)time(NULL) ^
                                                 (uint64_t)(slda_mono_s() * 1e9)));
    r->rk = log_consumer(r, conf, bootstrap, errstr, errstr_size);
    if (!r->rk)
        goto fail;
    int np = partitions(r, errstr, errstr_size);
    if (np < 0)
        goto fail;
    if (np == 0) {
        if (create_topic(r, errstr, errstr_size))
            goto fail;
        /* until the metadata catches up: 60 s at most (5 s was the bound; under load a
         * broker can take longer to show a topic it created) */
        double until = slda_mono_s() + 60.0;
        while ((np = partitions(r, errstr, errstr_size)) == 0 && slda_mono_s() < until &&
               !slda_stopping(r->stop))
            rd_kafka_poll(r->rk, 100);
        if (np <= 0) {
            if (np == 0 && slda_stopping(r->stop))
                slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                             "stopped while waiting for updates.topic \"%s\" to show", r->topic);
            else if (np == 0)
                slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                             "updates.topic \"%s\": created but not visible after 60 s",
                             r->topic);
            goto fail;
        }
    }
    if (np != 1) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "updates.topic \"%s\" has %d partitions: the update log must have exactly "
                     "one (records are applied in one order by every replica)", r->topic, np);
        goto fail;
    }
    /* Where the replica is: the restored snapshot's log position, else 0. */
    r->next = 0;
    int positioned = 0;
    for (size_t i = 0; i < nrestored; i++) {
        if (!strcmp(restored[i].topic, r->topic) && restored[i].partition == 0)
            r->next = restored[i].offset, positioned = 1;
        else
            set_offset(r, restored[i].topic, restored[i].partition, restored[i].offset);
    }
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t err;
    /* a log just created (here or by a replica starting beside this one) may
     * have no leader yet: the broker's "Not leader for partition" was seen in
     * tests. It is asked again until ADMIN_TIMEOUT_MS have passed in all
     * (librdkafka itself waits for a leader within each call's timeout). */
    double deadline = slda_mono_s() + ADMIN_TIMEOUT_MS / 1000.0;
    for (;;) { /* a second at a time, so a stop request is seen */
        err = rd_kafka_query_watermark_offsets(r->rk, r->topic, 0, &lo, &hi,
                                               slda_slice_ms(deadline, 100));
        if ((err != RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION &&
             err != RD_KAFKA_RESP_ERR__TIMED_OUT) ||
            slda_mono_s() + 0.1 >= deadline || slda_stopping(r->stop))
            break;
        if (err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
            rd_kafka_poll(r->rk, 100);
    }
    if (err && slda_stopping(r->stop)) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                     "stopped while asking for updates.topic \"%s\"'s offsets", r->topic);
        goto fail;
    }
    if (err) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates.topic \"%s\": offsets: %s",
                     r->topic, rd_kafka_err2str(err));
        goto fail;
    }
    if (nrestored && !positioned && hi > lo) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "the restored snapshot of model \"%s\" was not made by a replica of "
                     "updates.topic \"%s\" (it has no position in it) and the log is not "
                     "empty: applying the log to it would count documents twice. Start the "
                     "replicas from a replica's snapshot, or use a new updates.topic",
                     conf->model_name, r->topic);
        goto fail;
    }
    if (r->next < lo) {
        *pruned = 1;
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "updates.topic \"%s\" starts at offset %" PRId64 ": the records this "
                     "replica needs from offset %" PRId64 " (%s) were pruned. Restore a newer "
                     "snapshot of model \"%s\" into snapshot.dir (the snapshot writer's "
                     "snapshot.dir holds one) and start again",
                     r->topic, lo, r->next, nrestored ? "its snapshot's position" : "a new model",
                     conf->model_name);
        goto fail;
    }
    if (r->next > hi) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "updates.topic \"%s\" ends at offset %" PRId64 " but the snapshot was taken "
                     "at offset %" PRId64 ": the topic is not this model's update log (deleted "
                     "and created again?)", r->topic, hi, r->next);
        goto fail;
    }
    set_offset(r, r->topic, 0, r->next);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, r->topic, 0)->offset = r->next;
    err = rd_kafka_assign(r->rk, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (err) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "updates.topic \"%s\": assign: %s",
                     r->topic, rd_kafka_err2str(err));
        goto fail;
    }
    slda_log(metrics, SLDA_LOG_INFO, NULL,
             "replica: updates log %s from offset %" PRId64 " (log holds %" PRId64 "..%" PRId64
             "); this instance publishes as %s", r->topic, r->next, lo, hi, r->id);
    r->stop = NULL; /* the caller's flag: only the start looks at it */
    return r;
fail:
    slda_replica_destroy(r);
    return NULL;
}

static void drop_records(slda_replica_t *r)
{
    for (size_t i = 0; i < r->nbuf; i++)
        free(r->buf[i]);
    r->nbuf = 0;
    r->pending = 0;
}

void slda_replica_destroy(slda_replica_t *r)
{
    if (!r)
        return;
    if (r->rk) {
        rd_kafka_consumer_close(r->rk);
        rd_kafka_destroy(r->rk);
    }
    drop_records(r);
    free(r->buf);
    free(r->len);
    free(r->offs);
    free(r->topic);
    free(r);
}

/* Apply one log message (decode errors are the log's: every replica skips the
 * same record, with a log line and a counter). */
static slda_err_t apply_message(slda_replica_t *r, slda_model_t *model,
                                const rd_kafka_message_t *m, slda_replica_applied_cb cb,
                                void *opaque, char *errstr, size_t errstr_size)
{
    char err[512];
    slda_update_t *upd = NULL;
    slda_err_t code = slda_update_decode(m->payload, m->len, &upd, err, sizeof err);
    uint64_t t = slda_model_updates(model);
    if (!code && slda_update_base(upd) > t)
        code = slda_set_err(err, sizeof err, SLDA_ERR_CORRUPT,
                            "record read the model after %" PRIu64 " updates, the replica has "
                            "applied %" PRIu64, slda_update_base(upd), t);
    if (code) {
        slda_update_destroy(upd);
        slda_metrics_add(r->metrics, SLDA_M_KAFKA_ERRORS, 1);
        slda_log(r->metrics, SLDA_LOG_ERR, "replica-record",
                 "replica: %s @%" PRId64 ": not an update record of this model (%s: %s); skipped "
                 "by every replica", r->topic, m->offset, slda_err_name(code), err);
        r->next = m->offset + 1;
        set_offset(r, r->topic, 0, r->next);
        return SLDA_OK;
    }
    /* the model is refused only for what every replica refuses alike (the
     * record is valid): such an error stops the service */
    code = slda_update_apply(model, upd, errstr, errstr_size);
    if (code) {
        slda_update_destroy(upd);
        return code;
    }
    r->next = m->offset + 1;
    set_offset(r, r->topic, 0, r->next);
    const char *topic;
    int32_t part;
    int64_t from, to;
    for (size_t i = 0; i < slda_update_input(upd, i, &topic, &part, &from, &to); i++)
        set_offset(r, topic, part, to + 1);
    size_t idlen = strlen(r->id);
    if (m->key_len == idlen + 17 && !memcmp(m->key, r->id, idlen))
        r->own_applied++; /* keys are unique per process: id holds a random part */
    slda_metrics_set(r->metrics, SLDA_G_STALENESS, (double)(t - slda_update_base(upd)));
    if (cb)
        cb(opaque, upd);
    slda_update_destroy(upd);
    return SLDA_OK;
}

int slda_replica_apply(slda_replica_t *r, slda_model_t *model, int wait_ms,
                       slda_replica_applied_cb cb, void *opaque, char *errstr,
                       size_t errstr_size)
{
    int n = 0;
    double end = slda_mono_s() + wait_ms / 1000.0;
    for (;;) {
        double left = end - slda_mono_s();
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->rk, n || left <= 0 ? 0
                                                               : (int)(left * 1000) + 1);
        if (!m) {
            if (n || slda_mono_s() >= end)
                return n;
            continue;
        }
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            r->eof = 1;
            rd_kafka_message_destroy(m);
            if (n || slda_mono_s() >= end)
                return n;
            continue;
        }
        if (m->err) {
            slda_metrics_add(r->metrics, SLDA_M_KAFKA_ERRORS, 1);
            int fatal = m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
                        m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE;
            if (fatal) {
                r->gone = 1;
                slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                             "updates.topic %s: offset %" PRId64 " is gone (%s): the log was "
                             "pruned past this replica; restart it from a newer snapshot",
                             r->topic, r->next, rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                return -1;
            }
            slda_log(r->metrics, SLDA_LOG_WARN, "replica-fetch", "updates log: %s",
                     rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        r->eof = 0;
        slda_err_t e = SLDA_OK;
        if (m->offset >= r->next) /* (a fetch after a reassign may repeat) */
            e = apply_message(r, model, m, cb, opaque, errstr, errstr_size);
        rd_kafka_message_destroy(m);
        if (e)
            return -1;
        n++;
    }
}

uint64_t slda_replica_unapplied(const slda_replica_t *r)
{
    return r->committed + r->pending - r->own_applied;
}

uint64_t slda_replica_pending(const slda_replica_t *r)
{
    return r->pending;
}

int slda_replica_gone(const slda_replica_t *r)
{
    return r->gone;
}

int slda_replica_at_end(const slda_replica_t *r)
{
    return r->eof && !r->pending && r->committed == r->own_applied;
}

slda_err_t slda_replica_add(slda_replica_t *r, slda_ksink_t *sink, const slda_update_t *upd,
                            slda_update_values_t values, char *errstr, size_t errstr_size)
{
    void *buf = NULL;
    size_t len = 0;
    slda_err_t e = slda_update_encode(upd, values, &buf, &len, errstr, errstr_size);
    if (e)
        return e;
    (void)sink;
    if (r->nbuf == r->capbuf) {
        r->capbuf = r->capbuf ? 2 * r->capbuf : 8;
        r->buf = slda_xrealloc(r->buf, r->capbuf * sizeof *r->buf);
        r->len = slda_xrealloc(r->len, r->capbuf * sizeof *r->len);
    }
    r->buf[r->nbuf] = buf;
    r->len[r->nbuf++] = len;
    r->pending++;
    return SLDA_OK;
}

slda_err_t slda_replica_commit(slda_replica_t *r, slda_ksink_t *sink, slda_ksource_t *src,
                               const slda_offset_t *commit, size_t ncommit, int *aborted,
                               char *errstr, size_t errstr_size)
{
    *aborted = 0;
    /* The records go to the log only now: a read_committed reader of the log
     * stops at the first record of an open transaction, so every replica's
     * reading waits while a transaction with records in the log is open;
     * producing them just before the commit keeps that window short. */
    for (size_t i = 0; i < r->nbuf; i++) {
        char key[sizeof r->id + 20];
        snprintf(key, sizeof key, "%s/%016" PRIx64, r->id, r->produced++);
        slda_err_t e = slda_ksink_update(sink, r->topic, key, strlen(key), r->buf[i], r->len[i]);
        if (e) {
            drop_records(r);
            return slda_ksink_fatal(sink, errstr, errstr_size);
        }
        r->bytes += r->len[i];
    }
    for (size_t i = 0; i < r->nbuf; i++)
        free(r->buf[i]);
    r->nbuf = 0;
    /* every record of the transaction delivered, then the commit */
    char ferr[512];
    if (!slda_ksink_drain(sink, 60000) && !slda_ksink_fatal(sink, ferr, sizeof ferr))
        slda_log(r->metrics, SLDA_LOG_WARN, "replica-drain",
                 "replica: records of the transaction undelivered after 60 s");
    slda_err_t e = slda_ksink_txn_commit(sink, src, commit, ncommit, aborted, errstr,
                                         errstr_size);
    uint64_t n = r->pending;
    r->pending = 0;
    if (e || *aborted)
        return e; /* its records never come back */
    r->committed += n;
    slda_metrics_add(r->metrics, SLDA_M_UPDATES_PUBLISHED, n);
    return SLDA_OK;
}

void slda_replica_aborted(slda_replica_t *r)
{
    drop_records(r);
}

const slda_offset_t *slda_replica_offsets(const slda_replica_t *r, size_t *n)
{
    *n = r->noffs;
    return r->offs;
}

int64_t slda_replica_position(const slda_replica_t *r)
{
    return r->next;
}

uint64_t slda_replica_bytes(const slda_replica_t *r)
{
    return r->bytes;
}

slda_err_t slda_replica_prune(slda_replica_t *r, int64_t below, char *errstr, size_t errstr_size)
{
    if (below <= 0)
        return SLDA_OK;
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, r->topic, 0)->offset = below;
    rd_kafka_DeleteRecords_t *del = rd_kafka_DeleteRecords_new(parts);
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_queue_t *q = rd_kafka_queue_new(r->rk);
    rd_kafka_DeleteRecords(r->rk, &del, 1, NULL, q);
    rd_kafka_event_t *ev = admin_wait(r, q);
    slda_err_t ret = SLDA_OK;
    const rd_kafka_DeleteRecords_result_t *res = ev ? rd_kafka_event_DeleteRecords_result(ev) : NULL;
    const rd_kafka_topic_partition_list_t *out =
        res ? rd_kafka_DeleteRecords_result_offsets(res) : NULL;
    if (!ev || rd_kafka_event_error(ev) || !out || out->cnt != 1 || out->elems[0].err)
        ret = slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                           "updates.topic %s: cannot delete records below %" PRId64 ": %s",
                           r->topic, below,
                           !ev ? "timed out"
                           : rd_kafka_event_error(ev) ? rd_kafka_event_error_string(ev)
                           : out && out->cnt == 1 ? rd_kafka_err2str(out->elems[0].err)
                                                 : "no result");
    else
        slda_log(r->metrics, SLDA_LOG_INFO, NULL,
                 "replica: pruned updates log %s below offset %" PRId64, r->topic, below);
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteRecords_destroy(del);
    return ret;
}
