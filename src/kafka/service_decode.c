/* service_decode.c - the decode stage: messages -> documents, dead letters, event times.
 *
 * Three steps per message: decode (the message's bytes -> a record: id, text
 * or tokens; io/docmsg.c) and tokenise (the record -> a bag; io/format.c) on
 * a worker thread, with its event time field and its words' hints; then, on
 * the service's thread and in message order, the lookup (the bag -> a
 * document through the vocabulary) and what becomes of it: a dead letter, a
 * held-out document, or one more document of the open minibatch. The
 * workers run the stage in a hand-over of its own (messages polled while the
 * minibatch is open) or in the training's (service_batch.c: the next
 * minibatch's messages while this one trains). Each message has its slot
 * (decoded_t) and each thread its record; nothing else is written there.
 */
#include "kafka/service_int.h"

#include "core/pool.h"
#include "io/docmsg.h"
#include "text/vocab.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void deadletter(slda_service_t *svc, const slda_kmsg_t *msg, slda_err_t code,
                       const char *reason)
{
    char key[64];
    snprintf(key, sizeof key, "deadletter-%s", slda_err_name(code));
    if (slda_ksource_replayed(svc->src, msg->topic, msg->partition, msg->offset))
        return; /* delivered by an earlier run */
    slda_log(svc->metrics, SLDA_LOG_WARN, key, "dead letter %s [%d] @%" PRId64 ": %s",
             msg->topic, (int)msg->partition, msg->offset, reason);
    slda_ksink_deadletter(svc->sink, msg, code, reason); /* counted on delivery */
}

/* The event time of msg (decoded in d): input.time.field when set (when the field is missing
 * or unreadable, the newest event time seen, else the message timestamp;
 * counted and logged), else the message timestamp; later than a day ahead of
 * the clock is clamped to the newest event time seen (counted, logged). */
static int64_t event_time(slda_service_t *svc, const slda_kmsg_t *msg, const decoded_t *d)
{
    int64_t ts = msg->timestamp_ms, now = slda_now_ms();
    const char *field = svc->conf->input_time_field;
    if (field && *field) {
        const char *err = d->time_err; /* read on the worker (slda_svc_decode_item) */
        if (d->time_code == SLDA_OK)
            ts = d->time_ms;
        else { /* the newest event time seen: the stream's time, not the producer's */
            if (slda_track_newest(svc->track))
                ts = slda_track_newest(svc->track);
            slda_metrics_add(svc->metrics, SLDA_M_TIME_MISSING, 1);
            slda_log(svc->metrics, SLDA_LOG_WARN, "event-time-field",
                     "%s [%d] @%" PRId64 ": %s; the newest event time seen (else the message "
                     "timestamp) is used", msg->topic, (int)msg->partition, msg->offset, err);
        }
    }
    int clamped;
    uint64_t late = slda_track_late(svc->track);
    int64_t t = slda_track_time(svc->track, ts, now, &clamped);
    if (clamped) {
        char iso[40];
        slda_time_format(ts, iso, sizeof iso);
        slda_metrics_add(svc->metrics, SLDA_M_TIME_CLAMPED, 1);
        slda_log(svc->metrics, SLDA_LOG_WARN, "event-time-future",
                 "%s [%d] @%" PRId64 ": event time %s is more than a day ahead of the clock; "
                 "clamped to the newest event time seen", msg->topic, (int)msg->partition,
                 msg->offset, iso);
    }
    if (slda_track_late(svc->track) != late)
        slda_metrics_add(svc->metrics, SLDA_M_TIME_LATE, 1);
    return t;
}

/* The decode stage. The messages polled together are decoded on the worker
 * threads (slda_svc_decode_item): each into its thread's record (docmsg.c), then
 * tokenised into its own bag (slda_record_tokenize); its event time field is
 * read there too. Its words are looked up in the vocabulary afterwards, on
 * this thread and in message order (handle_message): the documents and the
 * vocabulary are those of decoding one message at a time, whatever the
 * thread count. While they decode, nothing changes the vocabulary, so each
 * worker also finds its bag's words there (slda_bag_hint): the lookups in
 * message order then only count and pin the words found, unless an eviction
 * came between (bag.c); a message whose words were all found is made into its
 * document (sorted) there too. Replicas look words up by string through the
 * update log instead. */

/* The threads claim the longest messages first (pool.c). */
static uint64_t decode_cost(size_t i, void *opaque)
{
    const slda_service_t *svc = opaque;
    return svc->dec_msgs[i].len;
}

/* Message i of the decode stage, on any thread (worker: its record); first
 * the release of rel[i] when slda_svc_train_full handed that over too. */
void slda_svc_decode_item(slda_service_t *svc, size_t i, uint32_t worker)
{
    if (i < svc->dec_nrel) /* librdkafka's message destroy is thread-safe */
        slda_ksource_release(svc->src, &svc->rel[i]);
    if (i >= svc->ndec)
        return;
    const slda_kmsg_t *msg = &svc->dec_msgs[i];
    decoded_t *d = &svc->dec[i];
    slda_record_t *rec = &svc->recs[worker];
    slda_message_t m = {.value = msg->value, .len = msg->value ? msg->len : 0, .key = msg->key,
                        .keylen = msg->keylen, .timestamp_ms = msg->timestamp_ms};
    slda_vocab_t *vocab = slda_model_vocab(svc->model);
    const char *field = svc->conf->input_time_field;
    if (field && *field) /* used in message order by event_time */
        d->time_code = msg->value ? slda_time_from_json(msg->value, msg->len, field,
                                                        &d->time_ms, d->time_err,
                                                        sizeof d->time_err)
                                  : slda_set_err(d->time_err, sizeof d->time_err,
                                                 SLDA_ERR_PARSE, "time field \"%s\": no value",
                                                 field);
    d->code = slda_docmsg_decode(svc->conf->input_format, &m, svc->conf->input_max_bytes, rec,
                                 d->err, sizeof d->err);
    if (d->code == SLDA_OK)
        d->code = slda_record_tokenize(slda_model_tokenizer(svc->model), slda_vocab_seed(vocab),
                                       rec, d->bag, d->err, sizeof d->err);
    if (d->code == SLDA_OK && slda_model_authors(svc->model)) { /* model.kind=atm */
        const char *an = slda_record_name(rec, SLDA_FIELD_AUTHOR);
        if (an && !strcmp(an, "@key")) /* the message's key names its author */
            rec->field[SLDA_FIELD_AUTHOR] = (slda_field_t){msg->key, msg->key ? msg->keylen : 0};
        d->code = slda_record_authors(rec, svc->model, &d->doc, d->err, sizeof d->err);
    }
    if (d->code != SLDA_OK)
        return;
    d->doc.id = slda_record_id(rec);
    if (!d->doc.id) {
        /* no id field and no key: the Kafka coordinates are unique */
        char id[200];
        snprintf(id, sizeof id, "%s:%d:%" PRId64, msg->topic, (int)msg->partition, msg->offset);
        d->doc.id = slda_xstrdup(id);
    }
    if (rec->keep_text) /* the tracker's representative documents show it */
        d->doc.text = slda_record_text(rec);
    const char *gf = svc->conf->input_group_field;
    if (gf && !strcmp(gf, "@key") && msg->key) /* the message's key names its group */
        rec->field[SLDA_FIELD_GROUP] = (slda_field_t){msg->key, msg->keylen};
    d->doc.group = slda_record_group(rec);
    if (!svc->replica)
        slda_bag_hint(vocab, d->bag, &d->doc);
}

static void decode_one(size_t i, uint32_t worker, void *opaque)
{
    slda_svc_decode_item(opaque, i, worker);
}

/* A decoded message, on this thread in message order: its words looked up
 * (the document moves out of d), then dead-lettered, held out or added to
 * the open minibatch. */
static void handle_message(slda_service_t *svc, slda_kmsg_t *msg, decoded_t *d)
{
    slda_err_t code = d->code;
    slda_doc_t doc = d->doc;
    const slda_bag_t *bag = d->bag;
    char *err = d->err;
    slda_doc_init(&d->doc);
    if (svc->replica) { /* words by string: the replica changes only by the log */
        slda_svc_note_input(svc, msg);
        if (!code)
            code = slda_update_doc_from_bag(svc->model, svc->scratch, bag, &doc, err, 512);
    } else {
        svc->dirty = 1;
        if (!code) /* its words, in message order */
            code = slda_doc_from_bag(slda_model_tokenizer(svc->model), slda_model_vocab(svc->model),
                                     bag, &doc, err, 512);
    }
    if (code) {
        slda_doc_clear(&doc);
        deadletter(svc, msg, code, err);
        return;
    }
    doc.time_ms = msg->timestamp_ms; /* doc.id: the message's, or slda_svc_decode_item's */
    if (bag->capped)
        slda_metrics_add(svc->metrics, SLDA_M_CAPPED, bag->capped);
    uint32_t m = svc->conf->heldout_modulo;
    if (m && slda_hash64(doc.id, strlen(doc.id), 0) % m == 0) {
        slda_svc_heldout_add(svc, &doc, svc->replica ? bag : NULL);
        return;
    }
    if (svc->ndocs == svc->cap) {
        svc->cap = svc->cap ? 2 * svc->cap : 64;
        svc->docs = slda_xrealloc(svc->docs, svc->cap * sizeof *svc->docs);
        svc->meta = slda_xrealloc(svc->meta, svc->cap * sizeof *svc->meta);
    }
    if (!svc->ndocs)
        svc->batch_start = slda_mono_s();
    svc->docs[svc->ndocs] = doc;
    doc_meta_t *meta = &svc->meta[svc->ndocs++];
    snprintf(meta->topic, sizeof meta->topic, "%s", msg->topic);
    meta->partition = msg->partition;
    meta->offset = msg->offset;
    meta->timestamp_ms = msg->timestamp_ms;
    meta->replayed = slda_ksource_replayed(svc->src, msg->topic, msg->partition, msg->offset);
    meta->event_ms = event_time(svc, msg, d);
}

/* n messages polled together to decode: their bags ready and their documents
 * empty (as they stay if they are never decoded: slda_svc_train_full when training
 * fails), a record for each thread. */
void slda_svc_decode_setup(slda_service_t *svc, slda_kmsg_t *msgs, size_t n)
{
    uint32_t threads = slda_pool_threads(slda_model_pool(svc->model));
    if (svc->nrecs < threads) { /* one record per thread: decoding writes it */
        svc->recs = slda_xrealloc(svc->recs, threads * sizeof *svc->recs);
        for (uint32_t w = svc->nrecs; w < threads; w++) {
            slda_record_init(&svc->recs[w]);
            slda_record_names(&svc->recs[w], svc->conf); /* input.text.field, input.id.field */
            svc->recs[w].keep_text = svc->conf->track && svc->conf->track_examples;
        }
        svc->nrecs = threads;
    }
    for (size_t i = 0; i < n; i++) {
        if (!svc->dec[i].bag)
            svc->dec[i].bag = slda_bag_new();
        slda_doc_init(&svc->dec[i].doc);
    }
    svc->dec_msgs = msgs;
    svc->ndec = n;
    svc->dec_nrel = 0;
}

/* Release what slda_svc_train_full left for the next hand-over (a no-op for the
 * messages that hand-over released already). */
void slda_svc_release_pending(slda_service_t *svc)
{
    for (size_t i = 0; i < svc->nrel; i++)
        slda_ksource_release(svc->src, &svc->rel[i]);
    svc->nrel = 0;
}

/* Occurrences of new words the vocabulary refused while looking up the words of the
 * documents (full of words the current or the previous minibatch uses: vocab.c): counted,
 * and a warning the first time, as `train` does; such a word is left out of its document. */
static void count_refused(slda_service_t *svc)
{
    uint64_t refused = slda_vocab_refused(slda_model_vocab(svc->model));
    if (refused <= svc->refused_seen)
        return;
    if (!svc->refused_seen)
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "%" PRIu64 " occurrence(s) of new words left out of documents: the vocabulary "
                 "(vocab.capacity=%u) was full of words the current or the previous minibatch "
                 "uses; raise vocab.capacity (counted in streamlda_dropped_tokens_total; this "
                 "warning is not repeated)",
                 refused, slda_vocab_capacity(slda_model_vocab(svc->model)));
    slda_metrics_add(svc->metrics, SLDA_M_DROPPED_TOKENS, refused - svc->refused_seen);
    svc->refused_seen = refused;
}

/* The decoded messages handled in order (ok), or dropped (the service stops
 * and reads them again from the last snapshot); then released, or with defer
 * left to the next slda_svc_train_full's hand-over (svc->rel, empty before). */
void slda_svc_handle_decoded(slda_service_t *svc, int ok, int defer)
{
    for (size_t i = 0; i < svc->ndec; i++) {
        if (ok)
            handle_message(svc, &svc->dec_msgs[i], &svc->dec[i]);
        else
            slda_doc_clear(&svc->dec[i].doc);
        if (defer)
            svc->rel[svc->nrel++] = svc->dec_msgs[i];
        else
            slda_ksource_release(svc->src, &svc->dec_msgs[i]);
    }
    svc->dec_msgs = NULL;
    svc->ndec = svc->dec_nrel = 0;
    count_refused(svc);
}

/* Messages polled while the minibatch is open: decoded in a hand-over of
 * their own, handled and released. */
void slda_svc_handle_messages(slda_service_t *svc, slda_kmsg_t *msgs, size_t n)
{
    slda_svc_decode_setup(svc, msgs, n);
    slda_pool_run_longest(slda_model_pool(svc->model), n, decode_cost, decode_one, NULL, svc);
    slda_svc_handle_decoded(svc, 1, 0);
}

/* The open minibatch covers msg (a document, a dead letter or a held-out one). */
void slda_svc_note_input(slda_service_t *svc, const slda_kmsg_t *msg)
{
    for (size_t i = 0; i < svc->ninputs; i++)
        if (svc->inputs[i].partition == msg->partition && !strcmp(svc->inputs[i].topic, msg->topic)) {
            if (msg->offset > svc->input_last[i])
                svc->input_last[i] = msg->offset;
            if (msg->offset < svc->inputs[i].offset)
                svc->inputs[i].offset = msg->offset;
            return;
        }
    if (svc->ninputs == svc->capinputs) {
        svc->capinputs = svc->capinputs ? 2 * svc->capinputs : 16;
        svc->inputs = slda_xrealloc(svc->inputs, svc->capinputs * sizeof *svc->inputs);
        svc->input_last = slda_xrealloc(svc->input_last, svc->capinputs * sizeof *svc->input_last);
    }
    if (!svc->ninputs && !svc->ndocs)
        svc->batch_start = slda_mono_s();
    slda_offset_t *o = &svc->inputs[svc->ninputs];
    memset(o, 0, sizeof *o);
    snprintf(o->topic, sizeof o->topic, "%s", msg->topic);
    o->partition = msg->partition;
    o->offset = msg->offset;
    svc->input_last[svc->ninputs++] = msg->offset;
}
