/* service_replica.c - replicas (updates.topic): minibatches published to the update log, applied.
 *
 * A replica trains nothing itself: each minibatch's local steps make an
 * update record (engine/update.h) that goes into the open transaction with
 * the minibatch's input offsets, outputs and dead letters; every replica,
 * this one included, applies the log's records in order (replica.c). A
 * rebalance or an aborted transaction drops the open transaction and the
 * open minibatch, whose partitions are read again from the committed
 * offsets (docs/replication.md).
 */
#include "kafka/service_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- replicas: minibatches published to the update log (replica.c) ---- */

/* Forget the open minibatch (after publishing it, or to drop it). */
static void clear_batch(slda_service_t *svc)
{
    slda_docs_clear(svc->docs, svc->ndocs);
    svc->ndocs = 0;
    svc->ninputs = 0;
    slda_update_scratch_clear(svc->scratch);
    if (!slda_replica_pending(svc->replica) && !svc->ntxn_offs)
        svc->batch_gen = slda_ksource_generation(svc->src);
}

/* Nothing of the open transaction and the open minibatch becomes visible:
 * abort the transaction (unless already aborted), forget both, and read
 * their partitions again from the committed offsets. */
static slda_err_t drop_all(slda_service_t *svc, const char *why, int abort_txn, char *errstr,
                           size_t errstr_size)
{
    size_t docs = svc->ndocs + svc->txn_docs;
    slda_log(svc->metrics, SLDA_LOG_WARN, "replica-drop",
             "replica: %zu document(s) dropped (%s): %" PRIu64 " record(s) of the open "
             "transaction and the open minibatch; their partitions are read again from the "
             "committed offsets", docs, why, slda_replica_pending(svc->replica));
    slda_metrics_add(svc->metrics, SLDA_M_DROPPED, docs);
    if (abort_txn && slda_ksink_txn_abort(svc->sink, errstr, errstr_size))
        return SLDA_ERR_KAFKA;
    slda_replica_aborted(svc->replica);
    svc->ntxn_offs = 0;
    svc->txn_docs = 0;
    slda_svc_heldout_staged(svc, STAGED_DROP);
    clear_batch(svc);
    slda_err_t e = slda_ksource_rewind(svc->src, errstr, errstr_size);
    svc->batch_gen = slda_ksource_generation(svc->src);
    return e;
}

/* The open minibatch's offsets (and held-out documents) join the open transaction's. */
static void txn_offsets_add(slda_service_t *svc)
{
    slda_svc_heldout_staged(svc, STAGED_TO_TXN);
    for (size_t i = 0; i < svc->ninputs; i++) {
        size_t k = 0;
        while (k < svc->ntxn_offs && (svc->txn_offs[k].partition != svc->inputs[i].partition ||
                                      strcmp(svc->txn_offs[k].topic, svc->inputs[i].topic)))
            k++;
        if (!svc->ntxn_offs)
            svc->txn_start = slda_mono_s();
        if (k == svc->ntxn_offs) {
            if (svc->ntxn_offs == svc->captxn) {
                svc->captxn = svc->captxn ? 2 * svc->captxn : 16;
                svc->txn_offs = slda_xrealloc(svc->txn_offs, svc->captxn * sizeof *svc->txn_offs);
            }
            svc->txn_offs[svc->ntxn_offs++] = svc->inputs[i];
            svc->txn_offs[k].offset = -1;
        }
        if (svc->input_last[i] + 1 > svc->txn_offs[k].offset)
            svc->txn_offs[k].offset = svc->input_last[i] + 1;
    }
}

/* Commit the open transaction: its records, dead letters and outputs with the
 * input offsets of its minibatches. Only at minibatch boundaries (no dead
 * letter of an unpublished minibatch may commit without its offsets). */
slda_err_t slda_svc_commit_txn(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    if (!slda_replica_pending(svc->replica) && !svc->ntxn_offs)
        return SLDA_OK;
    if (slda_ksource_generation(svc->src) != svc->batch_gen)
        return drop_all(svc, "the consumer group rebalanced", 1, errstr, errstr_size);
    int aborted = 0;
    slda_err_t e = slda_replica_commit(svc->replica, svc->sink, svc->src, svc->txn_offs,
                                       svc->ntxn_offs, &aborted, errstr, errstr_size);
    if (!e && aborted) {
        char why[600];
        snprintf(why, sizeof why, "%s", errstr);
        return drop_all(svc, why, 0, errstr, errstr_size);
    }
    if (e)
        return e;
    slda_log_reset(svc->metrics, "replica-drop");
    svc->ntxn_offs = 0;
    svc->txn_docs = 0;
    slda_svc_heldout_staged(svc, STAGED_COMMIT);
    if (!svc->ndocs && !svc->ninputs)
        svc->batch_gen = slda_ksource_generation(svc->src);
    return SLDA_OK;
}

static void replica_applied(void *opaque, const slda_update_t *upd)
{
    slda_service_t *svc = opaque;
    uint32_t k;
    const char *text;
    uint32_t n = slda_update_labels(upd, 0, &k, &text);
    for (uint32_t i = 0; i < n; i++) {
        slda_update_labels(upd, i, &k, &text);
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "label of topic %u: \"%s\"%s (update log)",
                 k, text, *text ? "" : " (removed)");
        svc->labels_applied = 1; /* the page looks the labels up again */
        svc->dirty = 1;          /* the next snapshot keeps them */
    }
    if (n && !slda_update_tokens(upd) && !slda_update_docs(upd))
        return; /* labels only: the model made no update */
    slda_metrics_add(svc->metrics, SLDA_M_DOCS, slda_update_docs(upd));
    slda_metrics_add(svc->metrics, SLDA_M_TOKENS, slda_update_tokens(upd));
    slda_metrics_add(svc->metrics, SLDA_M_UPDATES, 1);
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_UPDATES, (double)slda_model_updates(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_DOCS, (double)slda_model_docs(svc->model));
    slda_svc_engine_events(svc);
    svc->dirty = 1;
    svc->batches_since++;
}

slda_err_t slda_svc_replica_apply(slda_service_t *svc, int wait_ms, char *errstr,
                                  size_t errstr_size)
{
    return slda_replica_apply(svc->replica, svc->model, wait_ms, replica_applied, svc, errstr,
                              errstr_size) < 0 ? SLDA_ERR_KAFKA : SLDA_OK;
}

/* The open minibatch: its local steps against the replica as it is, the
 * record into the open transaction (with the minibatch's outputs; its dead
 * letters are there already). Then the staleness bound for the next one: when
 * more than updates.staleness of this instance's records are not applied back
 * (in the open transaction or on their way), commit and wait for them. A
 * transaction also commits once it is minibatch.ms old. */
slda_err_t slda_svc_publish_batch(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    if (!svc->ndocs && !svc->ninputs)
        return SLDA_OK;
    if (slda_ksource_generation(svc->src) != svc->batch_gen)
        return drop_all(svc, "the consumer group rebalanced while it was read", 1, errstr,
                        errstr_size);
    slda_err_t e = slda_svc_replica_apply(svc, 0, errstr, errstr_size);
    if (e)
        return e;
    uint32_t K = slda_model_topics(svc->model);
    int output = svc->conf->output_topic && *svc->conf->output_topic;
    int want = output || svc->conf->track;
    int warmup = slda_model_docs(svc->model) < svc->conf->track_warmup_docs;
    if (want)
        svc->thetas = slda_xrealloc(svc->thetas, (svc->ndocs + 1) * K * sizeof *svc->thetas);
    slda_update_t *upd = NULL;
    if (svc->ndocs) {
        e = slda_update_local(svc->model, svc->scratch, svc->docs, svc->ndocs, 0,
                              want ? svc->thetas : NULL, &upd, errstr, errstr_size);
        if (e)
            return e;
        if (!slda_update_tokens(upd)) { /* every word dropped (fixed vocabulary) */
            slda_update_destroy(upd);
            upd = NULL;
        }
    }
    if (upd) {
        for (size_t i = 0; i < svc->ninputs; i++)
            slda_update_add_input(upd, svc->inputs[i].topic, svc->inputs[i].partition,
                                  svc->inputs[i].offset, svc->input_last[i]);
        for (size_t i = 0; output && i < svc->ndocs; i++)
            slda_svc_produce_output(svc, i, K, warmup);
        slda_update_thin(upd, svc->conf->updates_thin);
        e = slda_replica_add(svc->replica, svc->sink, upd,
                             (slda_update_values_t)svc->conf->updates_values, errstr,
                             errstr_size);
        for (size_t i = 0; !e && svc->conf->track && i < svc->ndocs; i++)
            if (svc->docs[i].ntokens)
                slda_track_add(svc->track, svc->meta[i].event_ms, svc->thetas + i * K);
        slda_update_destroy(upd);
        if (e)
            return e;
    }
    txn_offsets_add(svc);
    svc->txn_docs += svc->ndocs;
    clear_batch(svc);
    slda_svc_event_gauges(svc);
    if (svc->page && slda_mono_s() - svc->last_page >= PAGE_S)
        slda_svc_page_publish(svc);
    uint64_t S = svc->conf->updates_staleness;
    if (slda_replica_unapplied(svc->replica) > S ||
        (slda_mono_s() - svc->txn_start) * 1000.0 >= svc->conf->minibatch_ms) {
        e = slda_svc_commit_txn(svc, errstr, errstr_size);
        double t0 = slda_mono_s();
        /* a stop request ends this wait: the shutdown's catch-up waits for the log (up to
         * shutdown.timeout.ms, a second signal ends it); it held SIGTERM off for 120 s */
        while (!e && slda_replica_unapplied(svc->replica) > S && !slda_stopping(svc->stop)) {
            if (slda_mono_s() - t0 > 120)
                return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                                    "replica: %" PRIu64 " update record(s) committed by this "
                                    "instance did not come back through updates.topic %s in "
                                    "120 s", slda_replica_unapplied(svc->replica),
                                    svc->conf->updates_topic);
            e = slda_svc_replica_apply(svc, POLL_MAX_MS, errstr, errstr_size);
        }
    }
    return e;
}

/* Apply the log until this replica is at its end (every own record back), for
 * up to max_s seconds or until *stop, or the service's flag says stop now. */
slda_err_t slda_svc_replica_catch_up(slda_service_t *svc, volatile int *stop, double max_s,
                                     char *errstr, size_t errstr_size)
{
    double end = slda_mono_s() + max_s;
    while (!slda_replica_at_end(svc->replica) && !(stop && *stop) && !slda_stop_now(svc->stop) &&
           slda_mono_s() < end) {
        slda_err_t e = slda_svc_replica_apply(svc, POLL_MAX_MS, errstr, errstr_size);
        if (e)
            return e;
    }
    if (!slda_replica_at_end(svc->replica))
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "replica: not at the end of updates.topic after %.0f s (%" PRIu64
                 " own record(s) not back)", max_s, slda_replica_unapplied(svc->replica));
    return SLDA_OK;
}

/* How many times a starting replica restores a newer snapshot because the
 * log was pruned past the one it restored (slda_svc_replica_open). */
#define REPLICA_RELOADS 5

/* A starting replica whose log position the snapshot writer (another replica)
 * pruned meanwhile: the writer wrote snapshot.keep newer snapshots between
 * this one's restore and its reading of the log (a second apart in
 * tests/0106, and a replica's start took longer there under
 * AddressSanitizer). The newest snapshot of snapshot.dir replaces the model
 * when it is newer than the one restored (0), else nothing changes (1).
 * Only while the replica starts: nothing of its own is in the log or the
 * model yet, and the tracking state starts again from the new snapshot. */
static int reload_newer(slda_service_t *svc)
{
    char err[700], was[4096];
    slda_model_t *model = NULL;
    snprintf(was, sizeof was, "%s", svc->restored[0] ? svc->restored : "none");
    if (slda_svc_load_newest(svc, svc->restored[0] ? svc->restored_updates + 1 : 0, &model, err,
                             sizeof err) ||
        !model)
        return 1;
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
             "replica: updates.topic was pruned past the snapshot restored (%s) while this "
             "replica started; restoring the newer %s", was, svc->restored);
    slda_replica_destroy(svc->replica);
    svc->replica = NULL;
    slda_model_destroy(svc->model);
    svc->model = model;
    slda_svc_track_stop(svc);
    slda_svc_track_start(svc);
    if (svc->page) {
        svc->page_updates = 0;
        slda_svc_page_publish(svc);
    }
    return 0;
}

/* Open the update log at the model's position; when it was pruned past it
 * while this replica started, restore a newer snapshot and try again. */
slda_err_t slda_svc_replica_open(slda_service_t *svc, volatile int *stop, char *errstr,
                                 size_t errstr_size)
{
    for (int tries = 0;; tries++) {
        size_t noffs;
        const slda_offset_t *offs = slda_model_offsets(svc->model, &noffs);
        int pruned = 0;
        svc->replica = slda_replica_new(svc->conf, slda_conf_kafka_find(svc->conf, "bootstrap.servers"), svc->metrics,
                                        offs, noffs, stop, &pruned, errstr, errstr_size);
        if (svc->replica || !pruned || tries == REPLICA_RELOADS || reload_newer(svc))
            break;
    }
    if (!svc->replica)
        return SLDA_ERR_INVALID; /* errstr: the refusal */
    svc->nkept = 0;
    if (svc->restored[0])
        svc->kept_log[svc->nkept++] = slda_replica_position(svc->replica);
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_UPDATES, (double)slda_model_updates(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_DOCS, (double)slda_model_docs(svc->model));
    return SLDA_OK;
}

/* The first catch-up, from the restored position to the log's end; the log
 * may be pruned past the replica while it reads (as in slda_svc_replica_open). */
slda_err_t slda_svc_replica_start(slda_service_t *svc, volatile int *stop, char *errstr,
                                  size_t errstr_size)
{
    slda_err_t e = slda_svc_replica_catch_up(svc, stop, 1e9, errstr, errstr_size);
    for (int tries = 0; e && svc->replica && slda_replica_gone(svc->replica) && !*stop &&
                        tries < REPLICA_RELOADS;
         tries++) { /* (svc->replica is NULL when a reopening was refused) */
        if (reload_newer(svc))
            break;
        e = slda_svc_replica_open(svc, stop, errstr, errstr_size);
        if (!e)
            e = slda_svc_replica_catch_up(svc, stop, 1e9, errstr, errstr_size);
    }
    return e;
}
