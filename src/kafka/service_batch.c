/* service_batch.c - minibatches: trained with the next one's messages decoded meanwhile; outputs.
 *
 * A minibatch is trained as the engine's job (engine/model.h: begin, items,
 * end) in one hand-over to the model's threads; when it is full, the decode
 * stage's items for the next minibatch's messages (service_decode.c) run in
 * the same hand-over, claimed after the documents, so the threads decode
 * while the last documents train. Then its records: the output topic's
 * mixtures, the tracker's prevalence, the engine's topic events.
 */
#include "kafka/service_int.h"

#include "core/json.h"
#include "core/pool.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One hand-over to the threads: the minibatch's training job (its items
 * first, at their own indices, the caller preparing the pending update
 * meanwhile: engine/model.h), then ndecode items of the decode stage (cost
 * 0: claimed after the documents, as the last documents train). */
typedef struct batch_job_s {
    slda_train_t *train;
    size_t ntrain;
    slda_service_t *svc;
} batch_job_t;

static uint64_t batch_cost(size_t i, void *opaque)
{
    const batch_job_t *job = opaque;
    return i < job->ntrain ? slda_train_cost(job->train, i) : 0;
}

static void batch_item(size_t i, uint32_t worker, void *opaque)
{
    batch_job_t *job = opaque;
    if (i < job->ntrain)
        slda_train_item(job->train, i, worker);
    else
        slda_svc_decode_item(job->svc, i - job->ntrain, worker);
}

static void batch_pre(void *opaque)
{
    slda_train_pre(((batch_job_t *)opaque)->train);
}

/* Train the open minibatch; ndecode items of the decode stage (svc->ndec
 * messages set up by slda_svc_decode_setup, svc->dec_nrel releases) run in the same
 * hand-over (slda_svc_train_full). When the training is refused before its hand-over,
 * they do not run. */
slda_err_t slda_svc_train_batch(slda_service_t *svc, size_t ndecode, char *errstr,
                                size_t errstr_size)
{
    if (!svc->ndocs)
        return SLDA_OK;
    uint32_t K = slda_model_topics(svc->model);
    int output = svc->conf->output_topic && *svc->conf->output_topic;
    int want = output || svc->conf->track; /* the mixtures feed the prevalence too */
    /* documents trained before the model settled (track.warmup.docs) are flagged */
    int warmup = slda_model_docs(svc->model) < svc->conf->track_warmup_docs;
    if (want)
        svc->thetas = slda_xrealloc(svc->thetas, svc->ndocs * K * sizeof *svc->thetas);
    slda_train_stats_t stats;
    memset(&stats, 0, sizeof stats);
    slda_train_t *train;
    slda_err_t err = slda_train_begin(svc->model, svc->docs, svc->ndocs,
                                      want ? svc->thetas : NULL, &train, errstr, errstr_size);
    if (err)
        return err;
    batch_job_t job = {train, slda_train_items(train), svc};
    slda_pool_run_longest(slda_model_pool(svc->model), job.ntrain + ndecode, batch_cost,
                          batch_item, batch_pre, &job);
    err = slda_train_end(train, &stats, errstr, errstr_size);
    if (err)
        return err;
    slda_metrics_add(svc->metrics, SLDA_M_DOCS, stats.docs);
    slda_metrics_add(svc->metrics, SLDA_M_TOKENS, stats.tokens);
    slda_metrics_add(svc->metrics, SLDA_M_UPDATES, 1);
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_UPDATES, (double)slda_model_updates(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_DOCS, (double)slda_model_docs(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_RHO, stats.rho);
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    for (size_t i = 0; svc->conf->track && i < svc->ndocs; i++)
        if (svc->docs[i].ntokens) /* an empty document was not trained */
            slda_track_add_doc(svc->track, svc->meta[i].event_ms, svc->thetas + i * K,
                               svc->model, &svc->docs[i]);
    slda_svc_engine_events(svc);
    for (size_t i = 0; output && i < svc->ndocs; i++)
        slda_svc_produce_output(svc, i, K, warmup);
    slda_docs_clear(svc->docs, svc->ndocs);
    svc->ndocs = 0;
    svc->batches_since++;
    slda_svc_event_gauges(svc);
    if (svc->page && slda_mono_s() - svc->last_page >= PAGE_S)
        slda_svc_page_publish(svc);
    return SLDA_OK;
}

/* The open minibatch is full: train it, and decode what Kafka has ready for
 * the next one (up to a minibatch, not waiting) in the same hand-over to the
 * threads, after the documents (slda_svc_train_batch runs the training's job and the
 * decode stage's items together); then handle those messages as
 * slda_svc_handle_messages does. Their words are looked up after the training, in
 * message order, as if they had been polled after it (decoding only reads
 * the vocabulary, and the bags' hints are checked against evictions), and
 * nothing polls between (no rebalance) and nothing snapshots positions
 * before they are handled: the same minibatches, model and records as
 * polling after the training. One hand-over per minibatch instead of two
 * (docs/engine.md, "Threads"). The same hand-over releases the messages the
 * previous slda_svc_train_full handled (librdkafka's destroy, about 0.3 us each, off
 * the thread every message passes). Not for replicas (slda_svc_publish_batch). */
slda_err_t slda_svc_train_full(slda_service_t *svc, size_t batch_docs, char *errstr,
                               size_t errstr_size)
{
    slda_kmsg_t msgs[DECODE_MAX];
    size_t n = 0;
    /* A snapshot due after this minibatch (snapshot.every.batches) would train the
     * documents read ahead as a minibatch of its own, cut wherever the reading got to
     * meanwhile: read none ahead then, so the minibatches are cut by count alone. */
    uint32_t every = svc->conf->snapshot_every_batches;
    int snap_next = every && svc->batches_since + 1 >= every;
    while (!snap_next && n < batch_docs && n < DECODE_MAX &&
           slda_ksource_poll(svc->src, 0, &msgs[n]))
        n++;
    slda_svc_decode_setup(svc, msgs, n);
    svc->dec_nrel = svc->nrel;
    slda_err_t err = slda_svc_train_batch(svc, n > svc->nrel ? n : svc->nrel, errstr, errstr_size);
    slda_svc_release_pending(svc); /* those a failed training did not reach */
    if (!err && n)
        svc->last_msg_t = slda_mono_s();
    slda_svc_handle_decoded(svc, !err, 1);
    return err;
}
