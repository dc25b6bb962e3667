/* kafka.h - the Kafka edges of the service (kafka_source.c, kafka_sink.c) behind
 * an API without librdkafka types, so only those files include rdkafka.h. */
#ifndef SLDA_KAFKA_H
#define SLDA_KAFKA_H

#include "kafka/metrics.h"
#include "core/config.h"

/* client.id prefix of replicas (updates.topic) in the model's consumer group. */
#define SLDA_REPLICA_CLIENT "streamlda-replica/"

/* One consumed message; every pointer is borrowed until slda_ksource_release. */
typedef struct slda_kmsg_s {
    const char *topic;
    int32_t partition;
    int64_t offset;
    const void *key;
    size_t keylen;
    const void *value;
    size_t len;
    int64_t timestamp_ms; /* message timestamp, 0 if none */
    void *handle;         /* the librdkafka message */
} slda_kmsg_t;

/* Start-up waits for the brokers (below: stop, may be NULL) end early with
 * SLDA_ERR_STOPPED once *stop is non-zero (a signal handler's flag). */
static inline int slda_stopping(volatile int *stop)
{
    return stop && *stop;
}

/* *stop negative (SLDA_STOP_NOW, public header: a second signal): the
 * shutdown's waits (deliveries, a replica's catch-up) end at once. */
static inline int slda_stop_now(volatile int *stop)
{
    return stop && *stop < 0;
}

/* A start-up wait's next call, in ms: what is left until deadline
 * (slda_mono_s), at most a second so that a stop request is seen, at least
 * floor_ms. */
static inline int slda_slice_ms(double deadline, int floor_ms)
{
    int left = (int)((deadline - slda_mono_s()) * 1000);
    return left < floor_ms ? floor_ms : left < 1000 ? left : 1000;
}

/* ---- kafka_source.c: the consumer ---- */
typedef struct slda_ksource_s slda_ksource_t;

/* Consumer group member subscribed to conf's input.topics. bootstrap (may be
 * NULL) overrides kafka.bootstrap.servers: the embedded cluster's address, whose
 * partitions number their messages from 0 without gaps, so (outside replicas) a
 * message past a partition's position (0 when none is known) means the ones between
 * were dropped by the cluster before they were read (it keeps about 5 MiB per
 * partition: mockbroker.c): they are counted (streamlda_lost_messages_total) and
 * logged as errors. positions (the offsets a restored
 * snapshot includes, may be NULL) decide where each partition starts when it
 * is assigned; partitions without one start from the committed offset or
 * auto.offset.reset (default earliest). */
slda_ksource_t *slda_ksource_new(const slda_conf_t *conf, const char *bootstrap,
                                 const slda_offset_t *positions, size_t npositions,
                                 slda_metrics_t *metrics, volatile int *stop, char *errstr,
                                 size_t errstr_size);
/* The flag (borrowed until slda_ksource_destroy; may be NULL) whose SLDA_STOP_NOW ends a
 * synchronous commit's wait and the close's at once. */
void slda_ksource_set_stop(slda_ksource_t *src, volatile int *stop);
/* Close (leave the group) and free. NULL is fine. */
void slda_ksource_destroy(slda_ksource_t *src);
/* Wait up to timeout_ms for a message: 1 and *msg filled, or 0. Error
 * events are logged, counted and not returned. Each returned message moves
 * its partition's position to offset + 1. */
int slda_ksource_poll(slda_ksource_t *src, int timeout_ms, slda_kmsg_t *msg);
void slda_ksource_release(slda_ksource_t *src, slda_kmsg_t *msg);
/* Next offset per partition of everything returned so far (and restored).
 * Borrowed until the next poll. */
const slda_offset_t *slda_ksource_positions(const slda_ksource_t *src, size_t *n);
/* Commit offsets to the group: asynchronously (failures are logged and the
 * next snapshot commits again) or, with sync, waiting for the answer
 * (SLDA_ERR_STOPPED when SLDA_STOP_NOW ended the wait: slda_ksource_set_stop). */
slda_err_t slda_ksource_commit(slda_ksource_t *src, const slda_offset_t *offs, size_t n,
                               int sync, char *errstr, size_t errstr_size);
/* The consumer's group metadata for a transactional producer (caller frees
 * with rd_kafka_consumer_group_metadata_destroy). */
struct rd_kafka_consumer_group_metadata_s *slda_ksource_group_metadata(slda_ksource_t *src);
/* Number of partitions currently assigned. */
int slda_ksource_assigned(const slda_ksource_t *src);
/* Assigned partitions with no fetch response since the last assignment (as of the last
 * statistics, once a second), and in *since when that assignment came, or consumption last
 * resumed if later (slda_mono_s). */
int slda_ksource_unfetched(const slda_ksource_t *src, double *since);
/* Pause (1) or resume (0) fetching on every assigned partition, and on any
 * assigned later while paused. Polling goes on (group membership, callbacks);
 * positions are unchanged, so nothing is skipped or repeated. */
slda_err_t slda_ksource_pause(slda_ksource_t *src, int pause);
/* 1 when the message at offset is a replay (below the group's committed offset
 * at assignment, the snapshot being older): its records were delivered before. */
int slda_ksource_replayed(slda_ksource_t *src, const char *topic, int32_t partition,
                          int64_t offset);
/* Rebalances seen so far (each assignment and each revocation counts). */
uint64_t slda_ksource_generation(const slda_ksource_t *src);
/* Replicas: fetch every assigned partition again from the group's committed
 * offset (after a dropped minibatch; the strategy is eager, so nothing of a
 * partition is kept past its committed offset). */
slda_err_t slda_ksource_rewind(slda_ksource_t *src, char *errstr, size_t errstr_size);
/* SLDA_ERR_KAFKA (errstr says why) after a fatal consumer error. */
slda_err_t slda_ksource_fatal(const slda_ksource_t *src, char *errstr, size_t errstr_size);

/* ---- kafka_sink.c: the producers ---- */
typedef struct slda_ksink_s slda_ksink_t;

/* The data producer (dead letters, outputs; transactional when
 * kafka.transactional.id and output.topic are set) and the snapshot producer. */
slda_ksink_t *slda_ksink_new(const slda_conf_t *conf, const char *bootstrap,
                             slda_metrics_t *metrics, volatile int *stop, char *errstr,
                             size_t errstr_size);
/* Flush for up to flush_ms (aborting an open transaction) and free. */
void slda_ksink_destroy(slda_ksink_t *sink, int flush_ms);
int slda_ksink_transactional(const slda_ksink_t *sink);
/* Dead letter of msg to deadletter.topic: its key, value and headers as far as
 * they fit under the producer's message.max.bytes (an oversized value is cut
 * to fit, or left out: headers value.truncated / value.omitted carry the
 * original size), plus the headers error, error.code, source.topic,
 * source.partition, source.offset and original.size. Never blocks; counted
 * in streamlda_deadletters_total when delivered. SLDA_ERR_KAFKA only when
 * the sink is fatal. */
slda_err_t slda_ksink_deadletter(slda_ksink_t *sink, const slda_kmsg_t *msg, slda_err_t code,
                                 const char *reason);
/* One output record (key = document id, value = json) with the source.*
 * headers of msg. Never blocks; counted when delivered. */
slda_err_t slda_ksink_output(slda_ksink_t *sink, const slda_kmsg_t *msg, const char *key,
                             size_t keylen, const char *json, size_t len);
/* One topic event (key model/topic, value json) to topic, like an output record:
 * never blocks, retried until delivered, counted when delivered. */
slda_err_t slda_ksink_event(slda_ksink_t *sink, const char *topic, const char *key,
                            const char *json, size_t len, int64_t ts);
/* Serve delivery reports; hand waiting records to librdkafka. */
void slda_ksink_poll(slda_ksink_t *sink);
/* The flag (borrowed until slda_ksink_destroy; may be NULL) whose SLDA_STOP_NOW
 * ends slda_ksink_drain at once and makes slda_ksink_destroy flush nothing. */
void slda_ksink_set_stop(slda_ksink_t *sink, volatile int *stop);
/* Up to timeout_ms: serve reports and the backlog until every data record is
 * delivered: 1 when none is left undelivered (and the sink is not fatal); ends
 * at once at SLDA_STOP_NOW (slda_ksink_set_stop). */
int slda_ksink_drain(slda_ksink_t *sink, int timeout_ms);
/* Data records not yet delivered (in librdkafka's hands or waiting here). */
size_t slda_ksink_undelivered(const slda_ksink_t *sink);
/* Records waiting in the sink (queue full, or a retry's backoff): the service
 * pauses consumption while there are any. */
size_t slda_ksink_backlog(const slda_ksink_t *sink);
/* Seconds since the last delivery while records are undelivered, else 0. */
double slda_ksink_stalled_s(const slda_ksink_t *sink);
/* SLDA_ERR_KAFKA (errstr says why) once a record can never be delivered or a
 * producer hit a fatal error: the service must stop without committing. */
slda_err_t slda_ksink_fatal(const slda_ksink_t *sink, char *errstr, size_t errstr_size);
/* Transactional mode: commit the open transaction with offs as the group's
 * offsets, then begin the next one. SLDA_ERR_KAFKA when the transaction had
 * to be aborted or the producer is fenced (the service must stop and restart
 * from its last snapshot). With aborted non-NULL, an abortable failure (the
 * group rebalanced, a broker timed out) is not an error: the transaction is
 * aborted, the next one begun, *aborted = 1 and errstr says why. */
slda_err_t slda_ksink_txn_commit(slda_ksink_t *sink, slda_ksource_t *src,
                                 const slda_offset_t *offs, size_t n, int *aborted,
                                 char *errstr, size_t errstr_size);
/* Abort the open transaction (its records are never visible) and begin the next. */
slda_err_t slda_ksink_txn_abort(slda_ksink_t *sink, char *errstr, size_t errstr_size);
/* Replicas: one encoded update record to topic, inside the open transaction
 * (copied; delivered by the next slda_ksink_txn_commit). */
slda_err_t slda_ksink_update(slda_ksink_t *sink, const char *topic, const char *key,
                             size_t keylen, const void *buf, size_t len);
/* Publish an encoded snapshot to snapshot.topic: chunks of chunk_bytes, then a
 * manifest (docs/service.md). Skipped (SLDA_ERR_KAFKA, errstr says why) while
 * the previous publication is still in flight. */
slda_err_t slda_ksink_snapshot(slda_ksink_t *sink, const char *model, uint64_t id,
                               const void *buf, size_t len, char *errstr,
                               size_t errstr_size);

/* ---- replica.c: the replicated update log (docs/replication.md) ---- */
typedef struct slda_replica_s slda_replica_t;
/* Called for each record applied (after the model took it). */
typedef void (*slda_replica_applied_cb)(void *opaque, const slda_update_t *upd);

/* Open updates.topic (created with one partition when missing; refused with
 * another count) at the log position among restored (a snapshot's offsets;
 * none: offset 0). Refused when the log was pruned past that position, and
 * then *pruned = 1 (a newer snapshot may help: service.c). */
slda_replica_t *slda_replica_new(const slda_conf_t *conf, const char *bootstrap,
                                 slda_metrics_t *metrics, const slda_offset_t *restored,
                                 size_t nrestored, volatile int *stop, int *pruned,
                                 char *errstr, size_t errstr_size);
void slda_replica_destroy(slda_replica_t *r);
/* Apply the records fetched, in log order, waiting up to wait_ms for the
 * first: the number applied, or -1 (errstr) when the replica cannot go on. */
int slda_replica_apply(slda_replica_t *r, slda_model_t *model, int wait_ms,
                       slda_replica_applied_cb cb, void *opaque, char *errstr,
                       size_t errstr_size);
/* This instance's records in the open transaction or committed, and not yet
 * applied back (its staleness budget: updates.staleness). */
uint64_t slda_replica_unapplied(const slda_replica_t *r);
/* Records in the open transaction. */
uint64_t slda_replica_pending(const slda_replica_t *r);
/* 1 when slda_replica_apply failed because the next record was pruned. */
int slda_replica_gone(const slda_replica_t *r);
/* 1 when the last fetch reached the log's end and every own record is applied. */
int slda_replica_at_end(const slda_replica_t *r);
/* Produce upd (encoded with values) into the open transaction. */
slda_err_t slda_replica_add(slda_replica_t *r, slda_ksink_t *sink, const slda_update_t *upd,
                            slda_update_values_t values, char *errstr, size_t errstr_size);
/* Commit the open transaction (its records, dead letters, outputs) with commit
 * as the group's offsets. *aborted = 1 when it was aborted (a rebalance, a
 * timeout): nothing of it is visible; the caller drops its minibatches and
 * rewinds. SLDA_ERR_* when the service must stop. */
slda_err_t slda_replica_commit(slda_replica_t *r, slda_ksink_t *sink, slda_ksource_t *src,
                               const slda_offset_t *commit, size_t ncommit, int *aborted,
                               char *errstr, size_t errstr_size);
/* The open transaction was aborted by the caller (slda_ksink_txn_abort). */
void slda_replica_aborted(slda_replica_t *r);
/* For snapshots: the input offsets covered by the records applied, and the
 * log's (updates.topic, partition 0, next offset to apply). */
const slda_offset_t *slda_replica_offsets(const slda_replica_t *r, size_t *n);
int64_t slda_replica_position(const slda_replica_t *r);
uint64_t slda_replica_bytes(const slda_replica_t *r);
/* Delete the log's records below offset below (the snapshot writer). */
slda_err_t slda_replica_prune(slda_replica_t *r, int64_t below, char *errstr, size_t errstr_size);

#endif
