/* service_int.h - the service's state, shared by src/kafka/service*.c (private to the service). */
#ifndef SLDA_SERVICE_INT_H
#define SLDA_SERVICE_INT_H

#include "core/slda_int.h"
#include "engine/heldout.h"
#include "engine/model.h"
#include "engine/update.h"
#include "io/format.h"
#include "io/snapdir.h"
#include "kafka/kafka.h"
#include "kafka/metrics.h"
#include "kafka/mockbroker.h"
#include "text/bag.h"
#include "track/track.h"

#define POLL_MAX_MS 100       /* longest consumer wait, so the stop flag is seen */
#define DECODE_MAX 256        /* messages polled at once and decoded on the worker threads */
#define PAGE_S 1.0            /* shortest interval between two live-page publications */

typedef struct doc_meta_s {
    char topic[128];
    int32_t partition;
    int64_t offset;
    int64_t timestamp_ms;
    int replayed; /* output already delivered by an earlier run: train only */
    int64_t event_ms; /* event time (message timestamp or input.time.field) */
} doc_meta_t;

/* One message of those polled together, decoded on a worker thread (slda_svc_decode_item). */
typedef struct decoded_s {
    slda_bag_t *bag;         /* its words (kept across polls) */
    slda_doc_t doc;          /* its id, and its words when the hints found them all */
    slda_err_t code;         /* of decoding and tokenising */
    char err[512];
    slda_err_t time_code;    /* input.time.field read from its value (when set) */
    int64_t time_ms;
    char time_err[300];
} decoded_t;

struct slda_service_s {
    /* the decode stage: the messages polled together, decoded on the threads */
    decoded_t dec[DECODE_MAX];
    slda_kmsg_t *dec_msgs;        /* the messages being decoded (the caller's array) */
    size_t ndec;                  /* how many: items [0, ndec) decode them */
    size_t dec_nrel;              /* items [0, dec_nrel) release rel[] too (slda_svc_train_full) */
    slda_record_t *recs;          /* one per thread: the message it decodes */
    uint32_t nrecs;
    /* messages slda_svc_train_full handled, released on the threads by the next one's
     * hand-over (or by slda_svc_release_pending) */
    slda_kmsg_t rel[DECODE_MAX];
    size_t nrel;
    slda_conf_t *conf;
    slda_metrics_t *metrics;
    slda_http_t *http;
    slda_mock_t *mock; /* embedded cluster, or NULL */
    slda_model_t *model;
    slda_ksource_t *src;
    slda_ksink_t *sink;
    uint64_t events_seen; /* topic events (births.c) logged so far */
    /* open minibatch */
    slda_doc_t *docs;
    doc_meta_t *meta;
    size_t ndocs, cap;
    float *thetas;
    double batch_start;
    /* held-out reservoir, kept by word key (ids go stale once the vocabulary evicts) */
    slda_heldout_t *held;
    size_t nheld;
    uint64_t heldseen, held_eval_t;
    /* replicas: held-out documents read but not committed yet (their minibatch
     * is open: in_txn 0, or in the open transaction: 1); they join held when
     * the transaction commits and are forgotten when it is dropped, as the
     * trained documents are, so a document read again is held out once */
    struct staged_held_s {
        uint64_t *key;
        uint32_t *count;
        uint32_t n;
        int in_txn;
    } *staged;
    size_t nstaged, capstaged;
    slda_rng_t rng;
    /* snapshots */
    uint32_t batches_since;
    double last_snapshot, last_status;
    int dirty;          /* consumed anything since the last snapshot */
    int deferred;       /* a due snapshot waits for the data producer or the disk */
    int awaiting;       /* ... for the data producer: hold training and consumption, or
                           continuous output would starve the snapshot */
    double awaiting_since; /* when the hold began */
    double min_gap;     /* the last hold's length: the next time-driven snapshot comes no
                           sooner (the service trains at least as long as it held) */
    double retry_at;    /* when a deferred snapshot is tried again */
    uint64_t *good;     /* update counts of this model's snapshot files known to load */
    size_t ngood, capgood;
    int lock_fd;        /* flock on <snapshot.dir>/<model.name>.lock, or -1 */
    int failed;         /* run ended in error: don't wait long for the producers */
    volatile int *stop; /* slda_service_run's flag (NULL before): slda_stop_now */
    uint64_t refused_seen; /* the vocabulary's refusals counted in /metrics so far */
    /* flow */
    int paused;         /* consumption paused: the producer has a backlog */
    double paused_since, last_msg_t;
    double health_t;    /* when slda_svc_flow() last judged the stall health */
    /* tracking (src/track): event time always; prevalence, drift, page when conf->track */
    slda_track_t *track;
    slda_page_t *page;
    slda_track_words_t *words; /* K, scratch for the page and comparisons */
    double *mass;              /* K */
    double last_page;
    double words_t, words_cost; /* last look-up of the topics' words: when, how long it took */
    double examples_t;          /* when /api/examples was last published */
    uint64_t page_updates;     /* update count the topics JSON was made at (+1; 0 = never) */
    uint64_t words_evictions;  /* the vocabulary's evictions when words were looked up */
    uint64_t compared_updates; /* update count of the last drift comparison (+1; 0 = never) */
    char restored[4096];       /* the snapshot restored from, "" if none */
    int64_t restored_event_ms; /* its header's newest event time, 0 = none */
    uint64_t restored_updates; /* its update count */
    double rescore_t0, rescore_spent; /* scoring windows again: since when, time it took */
    double rate_t;             /* documents/s of the page: since (rate_t, rate_docs) */
    uint64_t rate_docs;
    /* replicas (updates.topic; replica.c, docs/replication.md) */
    slda_replica_t *replica;
    slda_update_scratch_t *scratch; /* the open minibatch's words */
    uint64_t batch_gen;        /* the consumer's rebalances when the minibatch began */
    slda_offset_t *inputs;     /* per input partition of the minibatch: first offset */
    int64_t *input_last;       /* ... and last offset */
    size_t ninputs, capinputs;
    slda_offset_t *txn_offs;   /* the open transaction's offsets to commit */
    size_t ntxn_offs, captxn;
    size_t txn_docs;           /* documents of the records in the open transaction */
    double txn_start;          /* when the open transaction got its first minibatch, or 0 */
    int writer;                /* holds the snapshot.dir lock: writes snapshots, prunes the log */
    int64_t kept_log[64];      /* log positions of the snapshots kept, oldest first */
    size_t nkept;
    int64_t pruned;            /* the log was pruned below this offset */
    int labels_applied;        /* a label record came back from the log: look the labels up */
};


/* Replicas: what becomes of the staged held-out documents when the open
 * minibatch joins the open transaction (TO_TXN: its documents then wait with
 * the transaction's), when the transaction commits (COMMIT: its documents
 * join the reservoir) or when both are dropped (DROP: all are forgotten). */
typedef enum { STAGED_TO_TXN, STAGED_COMMIT, STAGED_DROP } staged_event_t;

/* ---- between the service's files (slda_svc_: the service's own) ---- */


/* service_decode.c: the decode stage. setup: n messages polled together to
 * decode (msgs borrowed until handled); item i on any thread (worker: the
 * pool's index of the thread); handled: each in message order (ok), or
 * dropped, then released (or, defer, left for the next full minibatch's
 * hand-over to release); handle_messages: all three, in a hand-over of their
 * own; release_pending: what was left for a hand-over, released now. */
void slda_svc_decode_setup(slda_service_t *svc, slda_kmsg_t *msgs, size_t n);
void slda_svc_decode_item(slda_service_t *svc, size_t i, uint32_t worker);
void slda_svc_handle_decoded(slda_service_t *svc, int ok, int defer);
void slda_svc_handle_messages(slda_service_t *svc, slda_kmsg_t *msgs, size_t n);
void slda_svc_release_pending(slda_service_t *svc);

/* service_batch.c: the open minibatch trained (with ndecode items of the
 * decode stage in its hand-over); a full one trained with the next one's
 * messages decoded meanwhile; document i's output record. */
slda_err_t slda_svc_train_batch(slda_service_t *svc, size_t ndecode, char *errstr,
                                size_t errstr_size);
slda_err_t slda_svc_train_full(slda_service_t *svc, size_t batch_docs, char *errstr,
                               size_t errstr_size);
void slda_svc_produce_output(slda_service_t *svc, size_t i, uint32_t K, int warmup);

/* service_heldout.c: the held-out reservoir. */
void slda_svc_heldout_add(slda_service_t *svc, slda_doc_t *doc, const slda_bag_t *bag);
void slda_svc_heldout_staged(slda_service_t *svc, staged_event_t ev);

/* service_checkpoint.c: restoring, snapshots (model + offsets) and commits. */
slda_err_t slda_svc_restore_newest(slda_service_t *svc, slda_model_t **out, char *errstr,
                                   size_t errstr_size);
slda_err_t slda_svc_load_newest(slda_service_t *svc, uint64_t min_updates, slda_model_t **out,
                                char *errstr, size_t errstr_size);
int slda_svc_snapshot_due(const slda_service_t *svc, double t);
slda_err_t slda_svc_snapshot(slda_service_t *svc, int final, char *errstr, size_t errstr_size);
slda_err_t slda_svc_replica_snapshot(slda_service_t *svc, char *errstr, size_t errstr_size);

/* service_replica.c: replicas' minibatches, transactions and the update log. */
void slda_svc_note_input(slda_service_t *svc, const slda_kmsg_t *msg);
slda_err_t slda_svc_publish_batch(slda_service_t *svc, char *errstr, size_t errstr_size);
slda_err_t slda_svc_commit_txn(slda_service_t *svc, char *errstr, size_t errstr_size);
slda_err_t slda_svc_replica_apply(slda_service_t *svc, int wait_ms, char *errstr,
                                  size_t errstr_size);
slda_err_t slda_svc_replica_catch_up(slda_service_t *svc, volatile int *stop, double max_s,
                                     char *errstr, size_t errstr_size);
slda_err_t slda_svc_replica_open(slda_service_t *svc, volatile int *stop, char *errstr,
                                 size_t errstr_size);
slda_err_t slda_svc_replica_start(slda_service_t *svc, volatile int *stop, char *errstr,
                                  size_t errstr_size);

/* service_track.c: tracking glue (event time, the live page, drift, engine events). */
void slda_svc_event_gauges(slda_service_t *svc);
void slda_svc_page_publish(slda_service_t *svc);
void slda_svc_track_snapshot(slda_service_t *svc, const char *path);
void slda_svc_track_start(slda_service_t *svc);
void slda_svc_track_rescore(slda_service_t *svc, double t);
void slda_svc_track_stop(slda_service_t *svc);
void slda_svc_engine_events(slda_service_t *svc);

/* service_flow.c: backpressure, stall health, the status line. */
void slda_svc_flow(slda_service_t *svc, double t);
void slda_svc_status(slda_service_t *svc);

#endif /* SLDA_SERVICE_INT_H */
