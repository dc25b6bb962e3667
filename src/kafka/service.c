/* service.c - `streamlda run`: the service's life cycle and its main loop.
 *
 * One thread (the caller of slda_service_run) owns the model, the consumer
 * and the producers; the model's worker threads decode messages and run
 * local steps in its hand-overs (service_decode.c, service_batch.c);
 * librdkafka and libmicrohttpd run their own threads but only touch the
 * metrics (atomics) and the logger (mutex).
 * Invariants:
 *  - a document enters the model at most once: the model's offsets (one per
 *    partition, the next offset to read) are written into every snapshot
 *    together with the counts they produced, and on restart every partition
 *    is positioned at the restored snapshot's offset;
 *  - a document is never lost: Kafka's committed offsets only move to the
 *    offsets of a snapshot already on disk (or, transactional, committed
 *    with the records of the same interval); snapshots are taken only at
 *    minibatch boundaries, after every dead-letter and output record of the
 *    interval was delivered;
 *  - a bad message never enters the model: it goes to deadletter.topic and
 *    its offset still advances.
 * The library otherwise never prints; the service logs through metrics.c
 * (stderr by default), rate-limited per cause. The service's files:
 * service_decode.c (messages -> documents, dead letters), service_batch.c
 * (minibatches, output records), service_checkpoint.c (restore, snapshots,
 * offsets, commits), service_replica.c (replicas: publish, apply),
 * service_heldout.c (the held-out reservoir), service_track.c (event time,
 * the live page, drift), service_flow.c (backpressure, health, status);
 * service_int.h holds the state they share.
 */
#include "kafka/service_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMBEDDED_PARTITIONS 4 /* partitions of each topic of the embedded cluster */

/* ---- life cycle ---- */

static slda_err_t start_embedded(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    svc->mock = slda_mock_new(1, errstr, errstr_size);
    if (!svc->mock)
        return SLDA_ERR_KAFKA;
    const slda_conf_t *c = svc->conf;
    const char *topics[] = {c->input_topics, c->snapshot_topic, c->deadletter_topic,
                            c->output_topic, c->track_events_topic};
    for (size_t i = 0; i < 5; i++)
        if (topics[i] && *topics[i] &&
            slda_mock_topics_create(svc->mock, topics[i], EMBEDDED_PARTITIONS, errstr,
                                    errstr_size))
            return SLDA_ERR_KAFKA;
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "bootstrap: %s", slda_mock_bootstraps(svc->mock));
    return SLDA_OK;
}

slda_service_t *slda_service_new(const slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    return slda_service_start(conf, NULL, errstr, errstr_size);
}

slda_service_t *slda_service_start(const slda_conf_t *conf, volatile int *stop, char *errstr,
                                   size_t errstr_size)
{
    slda_service_t *svc = slda_xcalloc(1, sizeof *svc);
    svc->conf = slda_conf_dup(conf);
    svc->metrics = slda_metrics_new();
    svc->lock_fd = -1;
    svc->held = slda_heldout_new();
    slda_rng_seed3(&svc->rng, conf->p.seed, 0x68656c64 /* "held" */, 0);
    if (!svc->conf->model_name || !*svc->conf->model_name) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"model.name\": empty");
        goto fail;
    }
    if (svc->conf->http_port >= 0) {
        svc->http = slda_http_start(svc->metrics, svc->conf->model_name, svc->conf->http_port,
                                    errstr, errstr_size);
        if (!svc->http)
            goto fail;
        int port = slda_http_port(svc->http);
        char page[80] = "";
        if (svc->conf->track)
            snprintf(page, sizeof page, "the live page http://127.0.0.1:%d/, ", port);
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "http: 127.0.0.1:%d (%s/metrics, /healthz; http.port sets the port, -1 none)",
                 port, page);
    }
    const char *bootstrap = slda_conf_kafka_find(svc->conf, "bootstrap.servers");
    int replica = svc->conf->updates_topic && *svc->conf->updates_topic;
    if (replica && (!bootstrap || !strcmp(bootstrap, "embedded"))) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "updates.topic needs a Kafka broker with transactions (set "
                     "kafka.bootstrap.servers); the embedded cluster has none");
        goto fail;
    }
    if (replica && SLDA_REPLAY_ACTIVE(&svc->conf->p)) {
        /* the local steps would run the first visit's half of the sweeps and no
         * second visit would ever come: refuse rather than learn worse */
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "replay=on is not supported with updates.topic yet: replicas publish "
                     "no second visits; leave replay at auto (off in the service)");
        goto fail;
    }
    if ((!bootstrap || !strcmp(bootstrap, "embedded")) &&
        start_embedded(svc, errstr, errstr_size))
        goto fail;
    const char *override = svc->mock ? slda_mock_bootstraps(svc->mock) : NULL;
    if (slda_svc_restore_newest(svc, &svc->model, errstr, errstr_size))
        goto fail;
    if (svc->conf->snapshot_dir && *svc->conf->snapshot_dir) { /* where they go, in full */
        char *abs = realpath(svc->conf->snapshot_dir, NULL);
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "snapshots: %s (snapshot.dir; the newest %u kept, and %u older ones thinned "
                 "with age: snapshot.keep, snapshot.history)",
                 abs ? abs : svc->conf->snapshot_dir, svc->conf->snapshot_keep,
                 svc->conf->snapshot_history);
        free(abs);
    }
    if (!svc->model && !(svc->model = slda_model_new(svc->conf, errstr, errstr_size)))
        goto fail;
    if (replica && slda_model_params(svc->model)->kind != SLDA_KIND_LDA) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "model.kind=%s is not supported with updates.topic: update records carry "
                     "only LDA's statistics (docs/models.md); run one instance",
                     slda_kind_name(slda_model_params(svc->model)->kind));
        goto fail;
    }
    if (svc->conf->track &&
        slda_track_group_check(svc->conf, slda_model_params(svc->model)->kind, 1, errstr,
                               errstr_size) != SLDA_OK)
        goto fail;
    slda_svc_track_start(svc);
    if (svc->http && svc->conf->track) {
        svc->page = slda_page_new();
        slda_page_set_topics(svc->page, slda_model_topics(svc->model));
        slda_svc_page_publish(svc); /* the page has data to show from the first request */
        slda_http_set_page(svc->http, svc->page);
    }
    size_t noffs;
    const slda_offset_t *offs = slda_model_offsets(svc->model, &noffs);
    /* replicas start every partition at the group's committed offset: the
     * offsets of the records in the log, committed with them; the embedded
     * cluster is new, every message in it unread: its partitions start at 0 (a
     * restored snapshot's offsets are the previous cluster's, and would skip
     * the messages below them) */
    int seed = !replica && !svc->mock;
    svc->src = slda_ksource_new(svc->conf, override, seed ? offs : NULL, seed ? noffs : 0,
                                svc->metrics, stop, errstr, errstr_size);
    if (!svc->src)
        goto fail;
    svc->sink = slda_ksink_new(svc->conf, override, svc->metrics, stop, errstr, errstr_size);
    if (!svc->sink)
        goto fail;
    if (replica) {
        if (slda_svc_replica_open(svc, stop, errstr, errstr_size))
            goto fail;
        svc->scratch = slda_update_scratch_new();
        svc->batch_gen = slda_ksource_generation(svc->src);
    }
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_UPDATES, (double)slda_model_updates(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_DOCS, (double)slda_model_docs(svc->model));
    return svc;
fail:
    slda_service_destroy(svc);
    return NULL;
}

/* A fatal error of either client: the service stops without a snapshot. */
static slda_err_t fatal(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    slda_err_t e = slda_ksink_fatal(svc->sink, errstr, errstr_size);
    return e ? e : slda_ksource_fatal(svc->src, errstr, errstr_size);
}

slda_err_t slda_service_run(slda_service_t *svc, volatile int *stop, char *errstr,
                            size_t errstr_size)
{
    const slda_conf_t *c = svc->conf;
    uint32_t batch_docs = c->minibatch_docs ? c->minibatch_docs : 256;
    svc->last_snapshot = svc->last_status = svc->last_msg_t = slda_mono_s();
    svc->stop = stop;
    slda_ksink_set_stop(svc->sink, stop);
    slda_ksource_set_stop(svc->src, stop);
    slda_err_t err = SLDA_OK;
    if (svc->replica) { /* the first minibatch reads the model at the log's end */
        err = slda_svc_replica_start(svc, stop, errstr, errstr_size);
        if (!err)
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "replica: at the end of updates.topic: %" PRIu64 " updates, %" PRIu64
                     " documents", slda_model_updates(svc->model), slda_model_docs(svc->model));
    }
    while (!*stop && !err) {
        double t = slda_mono_s();
        int open = svc->ndocs || svc->ninputs;
        if (svc->replica && !open)
            svc->batch_gen = slda_ksource_generation(svc->src);
        int timeout = POLL_MAX_MS;
        if (open && c->minibatch_ms) {
            double left = svc->batch_start + c->minibatch_ms / 1000.0 - t;
            timeout = left <= 0 ? 0 : left * 1000 < timeout ? (int)(left * 1000) + 1 : timeout;
        }
        slda_kmsg_t msgs[DECODE_MAX];
        int full = !svc->replica && !svc->awaiting && svc->ndocs >= batch_docs;
        if (!full) /* no slda_svc_train_full's hand-over to release them soon */
            slda_svc_release_pending(svc);
        if (full) /* train it, the next minibatch's messages decoded meanwhile */
            err = slda_svc_train_full(svc, batch_docs, errstr, errstr_size);
        else if (svc->awaiting && !svc->paused)
            /* a snapshot waits for its records: read nothing, let librdkafka fetch ahead
             * meanwhile (slda_svc_flow pauses the partitions if this lasts) */
            slda_ksink_drain(svc->sink, POLL_MAX_MS);
        else if (slda_ksource_poll(svc->src, timeout, &msgs[0])) { /* polls even while paused */
            /* and what else is there, up to the rest of the minibatch */
            size_t n = 1, room = svc->ndocs < batch_docs ? batch_docs - svc->ndocs : 1;
            while (n < room && n < DECODE_MAX && slda_ksource_poll(svc->src, 0, &msgs[n]))
                n++;
            svc->last_msg_t = slda_mono_s();
            slda_svc_handle_messages(svc, msgs, n); /* and releases them */
        }
        t = slda_mono_s();
        open = svc->ndocs || svc->ninputs;
        if (svc->replica && !err)
            err = slda_svc_replica_apply(svc, 0, errstr, errstr_size);
        /* a full minibatch waits for the next round's slda_svc_train_full, unless replicas' */
        if (!err && !svc->awaiting &&
            ((svc->replica && svc->ndocs >= batch_docs) ||
             (svc->ndocs < batch_docs && open && c->minibatch_ms &&
              (t - svc->batch_start) * 1000.0 >= c->minibatch_ms)))
            err = svc->replica ? slda_svc_publish_batch(svc, errstr, errstr_size)
                               : slda_svc_train_batch(svc, 0, errstr, errstr_size);
        if (!err && svc->replica && !svc->ndocs && !svc->ninputs &&
            (svc->ntxn_offs || slda_replica_pending(svc->replica)) &&
            (t - svc->txn_start) * 1000.0 >= c->minibatch_ms)
            /* a quiet stream (or labels only): no record waits */
            err = slda_svc_commit_txn(svc, errstr, errstr_size);
        if (!err && slda_svc_snapshot_due(svc, t))
            err = svc->replica ? slda_svc_replica_snapshot(svc, errstr, errstr_size)
                               : slda_svc_snapshot(svc, 0, errstr, errstr_size);
        slda_ksink_poll(svc->sink);
        if (!err)
            err = fatal(svc, errstr, errstr_size);
        slda_svc_flow(svc, t);
        if (c->status_ms && (t - svc->last_status) * 1000.0 >= c->status_ms) {
            slda_svc_status(svc);
            svc->last_status = t;
        }
        if (svc->page && t - svc->last_page >= 2 * PAGE_S)
            slda_svc_page_publish(svc); /* status and lags move while idle too */
        if (!err && !svc->replica)
            slda_svc_track_rescore(svc, t); /* the timeline under the model now, in slices */
    }
    slda_svc_release_pending(svc);
    if (err) { /* no final snapshot: the last good one stays authoritative */
        svc->failed = 1;
        return err;
    }
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "stopping: final minibatch and snapshot");
    if (svc->replica) {
        err = slda_svc_publish_batch(svc, errstr, errstr_size);
        if (!err)
            err = slda_svc_commit_txn(svc, errstr, errstr_size);
        if (!err)
            err = slda_svc_replica_catch_up(svc, NULL, c->shutdown_timeout_ms / 1000.0, errstr,
                                            errstr_size);
        if (!err)
            err = slda_svc_replica_snapshot(svc, errstr, errstr_size);
        if (!err)
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "replica: final update=%" PRIu64 " docs=%" PRIu64 " tokens=%" PRIu64
                     " digest=%016" PRIx64, slda_model_updates(svc->model),
                     slda_model_docs(svc->model), slda_model_tokens(svc->model),
                     slda_model_digest(svc->model));
        if (!err)
            err = fatal(svc, errstr, errstr_size);
        if (!err && slda_stop_now(stop)) /* its snapshot holds what it applied: safe */
            err = slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                               "a second signal ended the shutdown's wait for the update log");
        svc->failed = err != SLDA_OK;
        slda_svc_status(svc);
        return err;
    }
    err = slda_svc_snapshot(svc, 1, errstr, errstr_size);
    if (!err)
        err = fatal(svc, errstr, errstr_size);
    if (!err && svc->deferred && slda_stop_now(stop))
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                           "final snapshot not written: a second signal ended the wait for "
                           "%zu dead-letter/output record(s); nothing was committed past the "
                           "last snapshot, which stays authoritative",
                           slda_ksink_undelivered(svc->sink));
    else if (!err && svc->deferred)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                           "final snapshot not written: %zu dead-letter/output record(s) still "
                           "undelivered after shutdown.timeout.ms=%u, or snapshot.dir not "
                           "writable (see the log); nothing was committed past the last "
                           "snapshot, which stays authoritative",
                           slda_ksink_undelivered(svc->sink), c->shutdown_timeout_ms);
    svc->failed = err != SLDA_OK;
    slda_svc_status(svc);
    return err;
}

void slda_service_destroy(slda_service_t *svc)
{
    if (!svc)
        return;
    slda_replica_destroy(svc->replica);
    slda_update_scratch_destroy(svc->scratch);
    free(svc->inputs);
    free(svc->input_last);
    free(svc->txn_offs);
    slda_ksource_destroy(svc->src); /* slda_service_run released every message it held */
    /* Delivered already after a clean stop; after a failure, a short last try. */
    slda_ksink_destroy(svc->sink, svc->failed ? 1000 : (int)svc->conf->shutdown_timeout_ms);
    slda_http_stop(svc->http);
    slda_page_destroy(svc->page); /* after the server that reads it */
    slda_svc_track_stop(svc);
    slda_mock_destroy(svc->mock);
    slda_docs_clear(svc->docs, svc->ndocs);
    free(svc->docs);
    free(svc->meta);
    free(svc->thetas);
    for (size_t i = 0; i < DECODE_MAX; i++)
        slda_bag_free(svc->dec[i].bag);
    for (uint32_t w = 0; w < svc->nrecs; w++)
        slda_record_clear(&svc->recs[w]);
    free(svc->recs);
    slda_svc_heldout_staged(svc, STAGED_DROP);
    free(svc->staged);
    slda_heldout_destroy(svc->held);
    slda_model_destroy(svc->model);
    free(svc->good);
    if (svc->lock_fd >= 0)
        close(svc->lock_fd); /* releases the flock */
    slda_metrics_destroy(svc->metrics);
    slda_conf_destroy(svc->conf);
    free(svc);
}
