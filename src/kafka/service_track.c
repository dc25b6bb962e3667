/* service_track.c - tracking glue: event-time gauges, the live page, drift, engine events.
 *
 * The tracker (src/track) gets each trained document's event time and
 * mixture (service_batch.c); here its gauges, its page documents (served by
 * the HTTP thread from copies), its drift comparison and state file at each
 * snapshot, and the engine's topic births, deaths and merges as events.
 */
#include "kafka/service_int.h"

#include "core/json.h"
#include "text/vocab.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_WORDS_COST 20.0  /* the topics' top words (K passes over the model) are looked up
                                 again after at least 20x the time the last look-up took: <= 5% */
#define RESCORE_SHARE 0.02    /* scoring the windows' samples again takes at most 2% of the
                                 service thread's time while documents flow (the Kafka path's
                                 documents/s: within 5% with the rest of tracking) */
#define RESCORE_SLICE_S 0.005 /* ... in slices of at most 5 ms, so a minibatch never waits long;
                                 an idle service (no message for a second) takes 20 ms slices */
#define EXAMPLES_S 10.0       /* /api/examples made again at most this often (K x track.examples
                                 documents of up to 300 bytes: 1.5 MB at K=1000) */

/* An engine topic event (births.c) into the tracker, with the topic's top words. */
static void engine_event(slda_service_t *svc, const slda_event_t *ev)
{
    uint32_t ids[10];
    float probs[10]; /* slda_model_top_words writes them: NULL is not accepted */
    char words[400] = "";
    size_t n = slda_model_top_words(svc->model, ev->topic, 10, ids, probs), len = 0;
    for (size_t j = 0; j < n && len < sizeof words - 1; j++) {
        const char *w = slda_model_word(svc->model, ids[j]);
        int r = snprintf(words + len, sizeof words - len, "%s%s", j ? " " : "", w ? w : "?");
        len += r > 0 ? (size_t)r : 0;
    }
    slda_track_engine_event(svc->track, slda_event_kind_name(ev->kind), ev->topic, words,
                            ev->update);
}

/* births.c's topic births, deaths and merges since the last call: one line each. */
void slda_svc_engine_events(slda_service_t *svc)
{
    slda_event_t ev[16];
    size_t nev;
    while ((nev = slda_model_events(svc->model, svc->events_seen, ev, 16)) > 0) {
        for (size_t i = 0; i < nev; i++) {
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "topic %s topic=%u other=%u update=%llu doc=%llu docs=%u value=%.4f",
                     slda_event_kind_name(ev[i].kind), ev[i].topic, ev[i].other,
                     (unsigned long long)ev[i].update, (unsigned long long)ev[i].doc,
                     ev[i].docs, ev[i].value);
            if (svc->conf->track && svc->track) /* the tracker publishes them as events */
                engine_event(svc, &ev[i]);
        }
        svc->events_seen = ev[nev - 1].seq;
    }
}

/* ---- tracking: event-time gauges, the live page, drift at snapshots ---- */

void slda_svc_event_gauges(slda_service_t *svc)
{
    int64_t newest = slda_track_newest(svc->track);
    slda_metrics_set(svc->metrics, SLDA_G_EVENT_TIME, newest / 1000.0);
    slda_metrics_set(svc->metrics, SLDA_G_EVENT_LAG,
                     newest ? (slda_now_ms() - newest) / 1000.0 : 0);
}

static void track_event_log(const slda_track_event_t *ev, void *opaque)
{
    slda_service_t *svc = opaque;
    int engine = ev->engine; /* births.c's, carried by the tracker */
    char iso[40];
    slda_time_format(ev->event_ms, iso, sizeof iso);
    if (ev->other != UINT32_MAX)
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "topic event: %s of topics %u and %u at %s (JS %.2f): %s", ev->kind, ev->topic,
                 ev->other, iso, ev->js, ev->words);
    else if (ev->before >= 0) /* rise, fall: the shares */
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "topic event: %s of topic %u at %s (share %.3f -> %.3f): %s", ev->kind,
                 ev->topic, iso, ev->before, ev->after, ev->words);
    else
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "topic event: %s of topic %u at %s%s: %s",
                 ev->kind, ev->topic, iso, engine ? " (engine)" : "", ev->words);
    const char *topic = svc->conf->track_events_topic;
    if (!topic || !*topic || !svc->sink)
        return;
    char *json = NULL, key[300];
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    fprintf(f, "{\"model\":");
    slda_json_write_string(f, svc->conf->model_name);
    fprintf(f, ",\"kind\":");
    slda_json_write_string(f, ev->kind);
    fprintf(f, ",\"topic\":%u", ev->topic);
    if (ev->other != UINT32_MAX)
        fprintf(f, ",\"other\":%u", ev->other);
    fprintf(f, ",\"event_time\":");
    slda_json_write_string(f, iso);
    fprintf(f, ",\"event_ms\":%lld,\"update\":%llu,\"engine\":%s", (long long)ev->event_ms,
            (unsigned long long)ev->update, engine ? "true" : "false");
    if (ev->js >= 0)
        fprintf(f, ",\"js\":%.4f", ev->js);
    if (ev->before >= 0)
        fprintf(f, ",\"before\":%.4f,\"after\":%.4f", ev->before, ev->after);
    fprintf(f, ",\"words\":");
    slda_json_write_string(f, ev->words);
    fprintf(f, "}");
    fclose(f);
    snprintf(key, sizeof key, "%s/%u", svc->conf->model_name, ev->topic);
    slda_ksink_event(svc->sink, topic, key, json, len, ev->event_ms > 0 ? ev->event_ms : 0);
    free(json);
}

/* The status document of the live page. */
static void page_status(slda_service_t *svc)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    if (!f)
        return;
    double t = slda_mono_s();
    uint64_t docs = slda_metrics_get(svc->metrics, SLDA_M_DOCS);
    double rate = svc->rate_t > 0 && t > svc->rate_t
                      ? (docs - svc->rate_docs) / (t - svc->rate_t) : 0;
    if (!svc->rate_t || t - svc->rate_t >= 2.0) { /* a rate over at least 2 s */
        svc->rate_t = t;
        svc->rate_docs = docs;
    }
    int64_t newest = slda_track_newest(svc->track);
    fprintf(f, "{\"model\":");
    slda_json_write_string(f, svc->conf->model_name);
    fprintf(f, ",\"docs\":%" PRIu64 ",\"docs_per_s\":%.3f,\"updates\":%" PRIu64
            ",\"lag\":%.0f,\"event_ms\":%lld,\"event_lag_s\":%.3f,\"perplexity\":",
            docs, rate, slda_model_updates(svc->model),
            slda_metrics_gauge(svc->metrics, SLDA_G_LAG), (long long)newest,
            newest ? (slda_now_ms() - newest) / 1000.0 : -1.0);
    double perplexity = slda_metrics_gauge(svc->metrics, SLDA_G_PERPLEXITY);
    if (perplexity > 0)
        fprintf(f, "%.6g", perplexity);
    else
        fputs("null", f); /* not measured: no held-out documents (heldout.modulo) yet */
    fprintf(f, ",\"vocab\":%u,\"warmup\":%s,\"deadletters\":%" PRIu64 ",\"late\":%" PRIu64
            ",\"clamped\":%" PRIu64 ",\"rho\":%.6g}",
            slda_model_vocab_size(svc->model),
            slda_model_docs(svc->model) < svc->conf->track_warmup_docs ? "true" : "false",
            slda_metrics_deadletters(svc->metrics, SLDA_OK), slda_track_late(svc->track),
            slda_track_clamped(svc->track), slda_metrics_gauge(svc->metrics, SLDA_G_RHO));
    /* the other documents' versions: the page fetches only those that changed */
    fseek(f, -1, SEEK_CUR);
    fprintf(f, ",\"versions\":{\"topics\":%" PRIu64 ",\"chart\":%" PRIu64
               ",\"events\":%" PRIu64 ",\"examples\":%" PRIu64 ",\"groups\":%" PRIu64 ",\"authors\":%" PRIu64 ",\"prevalence\":%" PRIu64
               ",\"supers\":%" PRIu64 "}}",
            slda_page_version(svc->page, SLDA_PAGE_TOPICS),
            slda_page_version(svc->page, SLDA_PAGE_CHART),
            slda_page_version(svc->page, SLDA_PAGE_EVENTS),
            slda_page_version(svc->page, SLDA_PAGE_EXAMPLES),
            slda_page_version(svc->page, SLDA_PAGE_GROUPS),
            slda_page_version(svc->page, SLDA_PAGE_AUTHORS),
            slda_page_version(svc->page, SLDA_PAGE_PREVALENCE),
            slda_page_version(svc->page, SLDA_PAGE_SUPERS));
    fclose(f);
    slda_page_set(svc->page, SLDA_PAGE_STATUS, json, len);
}

/* The topics' words (borrowed from the vocabulary until it evicts a word), and the
 * evictions they are valid for. */
static void look_up_words(slda_service_t *svc)
{
    slda_track_model_words(svc->model, svc->words, svc->mass);
    svc->words_evictions = slda_vocab_evictions(slda_model_vocab(svc->model));
    size_t len;
    char *json; /* the authors who drive each topic move with the words (a look-up at a snapshot
                   left /api/authors as it was before training when the stream then paused) */
    if (svc->page && (json = slda_track_json_authors(svc->model, &len))) /* model.kind=atm */
        slda_page_set(svc->page, SLDA_PAGE_AUTHORS, json, len);
    if (svc->page && (json = slda_track_json_supers(svc->model, &len))) /* model.kind=pam */
        slda_page_set(svc->page, SLDA_PAGE_SUPERS, json, len);
}

/* A replica's labels go through the update log (engine/update_labels.c): one record of the
 * labels posted since the last look, in the open transaction; every replica, this one
 * included, sets them when it applies the record (service_replica.c). */
static void publish_labels(slda_service_t *svc)
{
    uint32_t k;
    char *text, err[300];
    slda_update_t *upd = NULL;
    int n = 0;
    while (slda_page_label_take(svc->page, &k, &text)) {
        if (!upd)
            upd = slda_update_new_labels(svc->model);
        if (slda_update_add_label(upd, k, text, err, sizeof err) == SLDA_OK) {
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "label of topic %u: \"%s\"%s: to the "
                     "update log", k, text, *text ? "" : " (removed)");
            n++;
        } else {
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "POST /api/labels refused: %s", err);
        }
        free(text);
    }
    if (n) {
        if (!slda_replica_pending(svc->replica) && !svc->ntxn_offs)
            svc->txn_start = slda_mono_s(); /* committed within minibatch.ms (service.c) */
        if (slda_replica_add(svc->replica, svc->sink, upd,
                             (slda_update_values_t)svc->conf->updates_values, err, sizeof err))
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "labels not published: %s", err);
    }
    slda_update_destroy(upd);
}

/* Labels posted to /api/labels (the HTTP thread queued them): set on the model, which keeps
 * them in its snapshots (a replica's: through the update log); 1 when one was set (the
 * topics' labels are then looked up again). */
static int apply_labels(slda_service_t *svc)
{
    uint32_t k;
    char *text, err[300];
    int set = svc->labels_applied;
    svc->labels_applied = 0;
    if (svc->replica) {
        publish_labels(svc);
        return set;
    }
    while (slda_page_label_take(svc->page, &k, &text)) {
        if (slda_model_set_label(svc->model, k, text, err, sizeof err) == SLDA_OK) {
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "label of topic %u: \"%s\"%s", k, text,
                     *text ? "" : " (removed)");
            set = 1;
            svc->dirty = 1; /* the next snapshot keeps it, even with no document to train */
        } else {
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "POST /api/labels refused: %s", err);
        }
        free(text);
    }
    return set;
}

/* Publish what the live page shows (the HTTP thread serves copies). The
 * topics' words are looked up again when the model moved, and not more
 * often than keeps the look-ups under 1/PAGE_WORDS_COST of the time (and at
 * each snapshot); and always after the vocabulary evicted words (those looked
 * up may be freed: a full vocab.capacity evicts while documents are decoded). */
void slda_svc_page_publish(slda_service_t *svc)
{
    if (!svc->page)
        return;
    size_t len;
    char *json;
    double t = slda_mono_s();
    int freed = svc->words_evictions != slda_vocab_evictions(slda_model_vocab(svc->model));
    freed |= apply_labels(svc); /* the old label text is freed: look the labels up again */
    if (freed || (svc->page_updates != slda_model_updates(svc->model) + 1 &&
                  t - svc->words_t >= PAGE_WORDS_COST * svc->words_cost)) {
        look_up_words(svc);
        svc->page_updates = slda_model_updates(svc->model) + 1;
        svc->words_t = slda_mono_s();
        svc->words_cost = svc->words_t - t;
    }
    if ((json = slda_track_json_topics(svc->track, svc->words, svc->mass, &len)))
        slda_page_set(svc->page, SLDA_PAGE_TOPICS, json, len);
    if ((json = slda_track_json_prevalence(svc->track, &len)))
        slda_page_set(svc->page, SLDA_PAGE_PREVALENCE, json, len);
    if ((json = slda_track_json_chart(svc->track, SLDA_CHART_TOPICS, &len)))
        slda_page_set(svc->page, SLDA_PAGE_CHART, json, len);
    if ((json = slda_track_json_events(svc->track, &len)))
        slda_page_set(svc->page, SLDA_PAGE_EVENTS, json, len);
    if ((json = slda_track_json_groups(svc->track, &len))) /* input.group.field, @author */
        slda_page_set(svc->page, SLDA_PAGE_GROUPS, json, len);
    /* K lists of documents (1.5 MB at K=1000), fetched only when a topic's documents are
     * opened: made again at most every EXAMPLES_S */
    if ((t - svc->examples_t >= EXAMPLES_S || !svc->examples_t) &&
        (json = slda_track_json_examples(svc->track, &len))) {
        slda_page_set(svc->page, SLDA_PAGE_EXAMPLES, json, len);
        svc->examples_t = t;
    }
    page_status(svc);
    svc->last_page = slda_mono_s();
}

/* Score again, under the model as it is now, the windows whose sample was scored by a model
 * that has moved since (track/sample.c): the timeline under one model. Called on the service
 * thread between minibatches (the model is not training then, and inference only reads it),
 * within RESCORE_SHARE of the time while documents flow. */
void slda_svc_track_rescore(slda_service_t *svc, double t)
{
    if (!svc->conf->track || !svc->track || !svc->conf->track_sample_docs)
        return;
    if (!svc->rescore_t0) {
        svc->rescore_t0 = t;
        return;
    }
    int idle = !svc->ndocs && t - svc->last_msg_t > 1.0;
    double slice = idle ? 4 * RESCORE_SLICE_S : RESCORE_SLICE_S;
    if (!idle && svc->rescore_spent > RESCORE_SHARE * (t - svc->rescore_t0))
        return;
    double t0 = slda_mono_s();
    size_t n = slda_track_rescore(svc->track, svc->model, t0 + slice);
    double spent = slda_mono_s() - t0;
    svc->rescore_spent += spent;
    slda_metrics_add(svc->metrics, SLDA_M_RESCORED, n);
    if (n && svc->page && slda_mono_s() - svc->last_page >= PAGE_S)
        slda_svc_page_publish(svc);
}

/* At a snapshot: drift and events against the previous one, and the tracking
 * state written beside the snapshot file (path, or NULL without snapshot.dir). */
void slda_svc_track_snapshot(slda_service_t *svc, const char *path)
{
    if (!svc->conf->track)
        return;
    uint64_t updates = slda_model_updates(svc->model);
    if (svc->compared_updates != updates + 1) { /* not again when a deferred one is retried */
        look_up_words(svc);
        svc->page_updates = svc->compared_updates = updates + 1;
        slda_track_compare(svc->track, svc->words, svc->mass, slda_model_docs(svc->model),
                           updates);
    }
    if (path) {
        char side[4200], err[600];
        slda_snapdir_track_path(side, sizeof side, path);
        if (slda_track_save(svc->track, side, svc->conf->model_name,
                            slda_model_updates(svc->model), err, sizeof err))
            slda_log(svc->metrics, SLDA_LOG_WARN, "track-save", "%s", err);
    }
    slda_svc_page_publish(svc);
}

/* The tracker of the restored snapshot's state, or a fresh one (with the
 * reason logged) when its state is missing, corrupt or for another K. */
void slda_svc_track_stop(slda_service_t *svc)
{
    slda_track_destroy(svc->track);
    free(svc->words);
    free(svc->mass);
    svc->track = NULL;
    svc->words = NULL;
    svc->mass = NULL;
}

void slda_svc_track_start(slda_service_t *svc)
{
    slda_track_opts_t opts;
    slda_track_opts_from_conf(&opts, svc->conf);
    uint32_t K = slda_model_topics(svc->model);
    svc->track = slda_track_new(K, &opts);
    slda_track_set_event_cb(svc->track, track_event_log, svc);
    svc->words = slda_xcalloc(K, sizeof *svc->words);
    svc->mass = slda_xcalloc(K, sizeof *svc->mass);
    slda_track_set_newest(svc->track, svc->restored_event_ms); /* the state may know better */
    if (!svc->restored[0] || !svc->conf->track)
        return;
    char side[4200], err[700];
    slda_snapdir_track_path(side, sizeof side, svc->restored);
    if (access(side, F_OK)) {
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "no tracking state beside %s (%s missing): prevalence and drift start afresh "
                 "from this snapshot", svc->restored, side);
        return;
    }
    if (slda_track_load(svc->track, side, err, sizeof err))
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "%s; prevalence and drift start afresh from this snapshot", err);
    else {
        char iso[40];
        slda_time_format(slda_track_newest(svc->track), iso, sizeof iso);
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "tracking state loaded from %s: newest event time %s", side, iso);
    }
}
