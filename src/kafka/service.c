/* service.c - `streamlda run`: consume, minibatch, train, snapshot, commit.
 *
 * One thread (the caller of slda_service_run) owns the model, the consumer
 * and the producers; librdkafka and libmicrohttpd run their own threads but
 * only touch the metrics (atomics) and the logger (mutex).
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
 * (stderr by default), rate-limited per cause.
 */
#include "json.h"
#include "kafka.h"
#include "metrics.h"
#include "mockbroker.h"
#include "slda_int.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HELDOUT_MAX 1000      /* documents kept for held-out perplexity */
#define EMBEDDED_PARTITIONS 4 /* partitions of each topic of the embedded cluster */
#define POLL_MAX_MS 100       /* longest consumer wait, so the stop flag is seen */
#define FINAL_FLUSH_MS 30000  /* how long shutdown waits for the producers */
#define RETRY_S 0.5           /* pause before a deferred snapshot is tried again */

typedef struct doc_meta_s {
    char topic[128];
    int32_t partition;
    int64_t offset;
    int64_t timestamp_ms;
} doc_meta_t;

struct slda_service_s {
    slda_conf_t *conf;
    slda_metrics_t *metrics;
    slda_http_t *http;
    slda_mock_t *mock; /* embedded cluster, or NULL */
    slda_model_t *model;
    slda_ksource_t *src;
    slda_ksink_t *sink;
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
    slda_rng_t rng;
    /* snapshots */
    uint32_t batches_since;
    double last_snapshot, last_status;
    int dirty;          /* consumed anything since the last snapshot */
    int deferred;       /* a due snapshot waits for the data producer or the disk */
    double retry_at;    /* when a deferred snapshot is tried again */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- snapshot files: <dir>/<model>-<updates, 20 digits>.slda ---- */

typedef struct snapfile_s {
    char *path;
    uint64_t updates;
} snapfile_t;

static int snapfile_cmp(const void *a, const void *b)
{
    uint64_t x = ((const snapfile_t *)a)->updates, y = ((const snapfile_t *)b)->updates;
    return x < y ? 1 : x > y ? -1 : 0; /* newest first */
}

/* Snapshot files of model in dir, newest first. */
static snapfile_t *snapfiles_list(const char *dir, const char *model, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t cap = 0, plen = strlen(model);
    snapfile_t *files = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        size_t len = strlen(name);
        if (len != plen + 1 + 20 + 5 || strncmp(name, model, plen) || name[plen] != '-' ||
            strcmp(name + len - 5, ".slda"))
            continue;
        int digits = 1;
        for (size_t i = plen + 1; i < plen + 21; i++)
            digits &= name[i] >= '0' && name[i] <= '9';
        if (!digits)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            files = slda_xrealloc(files, cap * sizeof *files);
        }
        size_t plen2 = strlen(dir) + len + 2;
        files[*n].path = slda_xmalloc(plen2);
        snprintf(files[*n].path, plen2, "%s/%s", dir, name);
        files[*n].updates = strtoull(name + plen + 1, NULL, 10);
        (*n)++;
    }
    closedir(d);
    qsort(files, *n, sizeof *files, snapfile_cmp);
    return files;
}

static void snapfiles_free(snapfile_t *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i].path);
    free(files);
}

/* Remove temp files left by a writer killed mid-write ("<name>.slda.tmp.<pid>"). */
static void remove_stale_temps(slda_service_t *svc, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t plen = strlen(svc->conf->model_name);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, svc->conf->model_name, plen) || de->d_name[plen] != '-' ||
            !strstr(de->d_name + plen, ".slda.tmp."))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!unlink(path))
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "removed stale temp file %s", path);
    }
    closedir(d);
}

/* The newest snapshot of dir that loads; corrupt ones are skipped with a warning. */
static slda_model_t *restore_newest(slda_service_t *svc)
{
    const char *dir = svc->conf->snapshot_dir;
    if (!dir || !*dir)
        return NULL;
    remove_stale_temps(svc, dir);
    size_t n;
    snapfile_t *files = snapfiles_list(dir, svc->conf->model_name, &n);
    slda_model_t *model = NULL;
    for (size_t i = 0; i < n && !model; i++) {
        char err[512];
        slda_err_t code = SLDA_OK;
        model = slda_snapshot_read(files[i].path, &code, err, sizeof err);
        if (!model)
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "skipping snapshot %s: %s (%s)",
                     files[i].path, err, slda_err_name(code));
        else
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "restored %s: %" PRIu64 " updates, %" PRIu64 " documents", files[i].path,
                     slda_model_updates(model), slda_model_docs(model));
    }
    snapfiles_free(files, n);
    /* text.* come from this service's configuration (snapshots never open
     * the stop-word file they name) */
    char err[512];
    if (model && slda_model_set_tokenizer(model, svc->conf, err, sizeof err) != SLDA_OK)
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "tokenizer of the restored model: %s", err);
    return model;
}

/* Delete all but the newest `keep` snapshots of the model. */
static void prune_snapshots(slda_service_t *svc)
{
    size_t n, keep = svc->conf->snapshot_keep ? svc->conf->snapshot_keep : 1;
    snapfile_t *files = snapfiles_list(svc->conf->snapshot_dir, svc->conf->model_name, &n);
    for (size_t i = keep; i < n; i++)
        if (unlink(files[i].path) && errno != ENOENT)
            slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-prune", "cannot remove %s: %s",
                     files[i].path, strerror(errno));
    snapfiles_free(files, n);
}

static slda_err_t mkdir_p(const char *dir, char *errstr, size_t errstr_size)
{
    char *copy = slda_xstrdup(dir);
    for (char *p = copy + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(copy, 0777) && errno != EEXIST) {
                slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot.dir \"%s\": %s", copy,
                             strerror(errno));
                free(copy);
                return SLDA_ERR_IO;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    free(copy);
    return SLDA_OK;
}

/* ---- output records ---- */

/* {"id","time","topics":[[k,w],...],"model","update"} for document i. */
static void produce_output(slda_service_t *svc, size_t i, uint32_t K)
{
    const float *theta = svc->thetas + i * K;
    uint32_t top = svc->conf->output_top ? svc->conf->output_top : 3;
    if (top > K)
        top = K;
    uint32_t best[64];
    if (top > 64)
        top = 64;
    for (uint32_t j = 0; j < top; j++) { /* selection: top is small */
        uint32_t arg = UINT32_MAX;
        for (uint32_t k = 0; k < K; k++) {
            int taken = 0;
            for (uint32_t q = 0; q < j; q++)
                taken |= best[q] == k;
            if (!taken && (arg == UINT32_MAX || theta[k] > theta[arg]))
                arg = k;
        }
        best[j] = arg;
    }
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    fprintf(f, "{\"id\":");
    slda_json_write_string(f, svc->docs[i].id);
    fprintf(f, ",\"time\":%lld,\"topics\":[", (long long)svc->docs[i].time_ms);
    for (uint32_t j = 0; j < top; j++)
        fprintf(f, "%s[%u,%.6g]", j ? "," : "", best[j], (double)theta[best[j]]);
    fprintf(f, "],\"model\":");
    slda_json_write_string(f, svc->conf->model_name);
    fprintf(f, ",\"update\":%" PRIu64 "}", slda_model_updates(svc->model));
    fclose(f);
    const doc_meta_t *m = &svc->meta[i];
    slda_kmsg_t msg = {.topic = m->topic, .partition = m->partition, .offset = m->offset,
                       .timestamp_ms = m->timestamp_ms};
    if (!slda_ksink_output(svc->sink, &msg, svc->docs[i].id, strlen(svc->docs[i].id), json, len))
        slda_metrics_add(svc->metrics, SLDA_M_OUTPUTS, 1);
    free(json);
}

/* ---- minibatches ---- */

static slda_err_t train_batch(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    if (!svc->ndocs)
        return SLDA_OK;
    uint32_t K = slda_model_topics(svc->model);
    int output = svc->conf->output_topic && *svc->conf->output_topic;
    if (output)
        svc->thetas = slda_xrealloc(svc->thetas, svc->ndocs * K * sizeof *svc->thetas);
    slda_train_stats_t stats;
    memset(&stats, 0, sizeof stats);
    slda_err_t err = slda_model_train(svc->model, svc->docs, svc->ndocs,
                                      output ? svc->thetas : NULL, &stats, errstr, errstr_size);
    if (err)
        return err;
    slda_metrics_add(svc->metrics, SLDA_M_DOCS, stats.docs);
    slda_metrics_add(svc->metrics, SLDA_M_TOKENS, stats.tokens);
    slda_metrics_add(svc->metrics, SLDA_M_UPDATES, 1);
    slda_metrics_set(svc->metrics, SLDA_G_RHO, stats.rho);
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    for (size_t i = 0; output && i < svc->ndocs; i++)
        produce_output(svc, i, K);
    slda_docs_clear(svc->docs, svc->ndocs);
    svc->ndocs = 0;
    svc->batches_since++;
    return SLDA_OK;
}

static void heldout_add(slda_service_t *svc, slda_doc_t *doc)
{
    svc->heldseen++;
    slda_metrics_add(svc->metrics, SLDA_M_HELDOUT, 1);
    size_t slot = svc->nheld;
    if (svc->nheld == HELDOUT_MAX) { /* reservoir sampling: keep a uniform sample */
        uint64_t j = slda_rng_next(&svc->rng) % svc->heldseen;
        if (j >= HELDOUT_MAX) {
            slda_doc_clear(doc);
            return;
        }
        slot = (size_t)j;
    } else
        svc->nheld++;
    char err[256];
    if (slda_heldout_put(svc->held, slot, svc->model, doc, err, sizeof err) != SLDA_OK) {
        slda_log(svc->metrics, SLDA_LOG_WARN, "heldout", "held-out document dropped: %s", err);
        svc->nheld = slda_heldout_count(svc->held);
    }
    slda_doc_clear(doc);
}

static void deadletter(slda_service_t *svc, const slda_kmsg_t *msg, slda_err_t code,
                       const char *reason)
{
    char key[64];
    snprintf(key, sizeof key, "deadletter-%s", slda_err_name(code));
    slda_metrics_deadletter(svc->metrics, code);
    slda_log(svc->metrics, SLDA_LOG_WARN, key, "dead letter %s [%d] @%" PRId64 ": %s",
             msg->topic, (int)msg->partition, msg->offset, reason);
    slda_ksink_deadletter(svc->sink, msg, code, reason);
}

static void handle_message(slda_service_t *svc, slda_kmsg_t *msg)
{
    char err[512];
    slda_doc_t doc;
    slda_doc_init(&doc);
    svc->dirty = 1;
    slda_err_t code = slda_doc_from_message(svc->model, svc->conf->input_format, msg->value,
                                            msg->value ? msg->len : 0, msg->key, msg->keylen,
                                            svc->conf->input_max_bytes, &doc, err, sizeof err);
    if (code) {
        slda_doc_clear(&doc);
        deadletter(svc, msg, code, err);
        return;
    }
    doc.time_ms = msg->timestamp_ms;
    if (!doc.id) { /* no id field and no key: the Kafka coordinates are unique */
        char id[200];
        snprintf(id, sizeof id, "%s:%d:%" PRId64, msg->topic, (int)msg->partition, msg->offset);
        doc.id = slda_xstrdup(id);
    }
    uint32_t m = svc->conf->heldout_modulo;
    if (m && slda_hash64(doc.id, strlen(doc.id), 0) % m == 0) {
        heldout_add(svc, &doc);
        return;
    }
    if (svc->ndocs == svc->cap) {
        svc->cap = svc->cap ? 2 * svc->cap : 64;
        svc->docs = slda_xrealloc(svc->docs, svc->cap * sizeof *svc->docs);
        svc->meta = slda_xrealloc(svc->meta, svc->cap * sizeof *svc->meta);
    }
    if (!svc->ndocs)
        svc->batch_start = now_s();
    svc->docs[svc->ndocs] = doc;
    doc_meta_t *meta = &svc->meta[svc->ndocs++];
    snprintf(meta->topic, sizeof meta->topic, "%s", msg->topic);
    meta->partition = msg->partition;
    meta->offset = msg->offset;
    meta->timestamp_ms = msg->timestamp_ms;
}

/* ---- snapshots ---- */

static int snapshot_due(const slda_service_t *svc, double t)
{
    const slda_conf_t *c = svc->conf;
    if (!svc->dirty && !svc->ndocs)
        return 0;
    if (svc->deferred)
        return t >= svc->retry_at;
    return (c->snapshot_every_batches && svc->batches_since >= c->snapshot_every_batches) ||
           (c->snapshot_every_ms && (t - svc->last_snapshot) * 1000.0 >= c->snapshot_every_ms);
}

static void publish_snapshot(slda_service_t *svc, double *bytes)
{
    char err[512];
    void *buf = NULL;
    size_t len = 0;
    if (slda_snapshot_encode(svc->model, &buf, &len, err, sizeof err) ||
        slda_ksink_snapshot(svc->sink, svc->conf->model_name, slda_model_updates(svc->model),
                            buf, len, err, sizeof err))
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-publish", "%s", err);
    if (len)
        *bytes = (double)len;
    free(buf);
}

/* Checkpoint: train the open minibatch, wait for the data producer, write the
 * snapshot (model + offsets) and commit the offsets. A failure to write is
 * logged and retried later; only a failed transaction is fatal. */
static void defer(slda_service_t *svc)
{
    svc->deferred = 1;
    svc->retry_at = now_s() + RETRY_S;
}

static slda_err_t snapshot(slda_service_t *svc, int final, char *errstr, size_t errstr_size)
{
    /* Still waiting for the brokers: keep the minibatch open (its composition
     * should not depend on how long they are away). */
    if (svc->deferred && !final && !slda_ksink_drain(svc->sink, 0)) {
        defer(svc);
        return SLDA_OK;
    }
    slda_err_t err = train_batch(svc, errstr, errstr_size);
    if (err || !svc->dirty)
        return err;
    if (!slda_ksink_drain(svc->sink, final ? FINAL_FLUSH_MS : 1000)) {
        defer(svc);
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-deferred",
                 "snapshot deferred: dead-letter/output records not yet delivered");
        return SLDA_OK;
    }
    svc->deferred = 0;
    slda_log_reset(svc->metrics, "snapshot-deferred");
    size_t n;
    const slda_offset_t *offs = slda_ksource_positions(svc->src, &n);
    slda_model_set_offsets(svc->model, offs, n);
    offs = slda_model_offsets(svc->model, &n);
    double t0 = now_s(), bytes = 0;
    if (slda_ksink_transactional(svc->sink) &&
        slda_ksink_txn_commit(svc->sink, svc->src, offs, n, errstr, errstr_size))
        return SLDA_ERR_KAFKA; /* restart from the last snapshot: nothing lost */
    const char *dir = svc->conf->snapshot_dir;
    if (dir && *dir) {
        char path[4096], err2[512];
        snprintf(path, sizeof path, "%s/%s-%020" PRIu64 ".slda", dir, svc->conf->model_name,
                 slda_model_updates(svc->model));
        if (mkdir_p(dir, err2, sizeof err2) ||
            slda_snapshot_write(svc->model, path, err2, sizeof err2)) {
            slda_metrics_set_service_health(svc->metrics, 0, "cannot write snapshots");
            slda_log(svc->metrics, SLDA_LOG_ERR, "snapshot-write", "snapshot: %s", err2);
            defer(svc);
            return SLDA_OK;
        }
        slda_metrics_set_service_health(svc->metrics, 1, NULL);
        slda_log_reset(svc->metrics, "snapshot-write");
        struct stat st;
        if (!stat(path, &st))
            bytes = (double)st.st_size;
        slda_metrics_add(svc->metrics, SLDA_M_SNAPSHOTS, 1);
        prune_snapshots(svc);
    }
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_SECONDS, now_s() - t0);
    if (svc->conf->snapshot_topic && *svc->conf->snapshot_topic)
        publish_snapshot(svc, &bytes);
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_BYTES, bytes);
    if (!slda_ksink_transactional(svc->sink)) {
        char err3[512];
        if (slda_ksource_commit(svc->src, offs, n, final, err3, sizeof err3))
            slda_log(svc->metrics, SLDA_LOG_WARN, "kafka-commit", "%s", err3);
    }
    svc->dirty = 0;
    svc->batches_since = 0;
    svc->last_snapshot = now_s();
    return SLDA_OK;
}

static void status(slda_service_t *svc)
{
    if (svc->nheld && svc->held_eval_t != slda_model_updates(svc->model)) {
        double pp;
        if (!slda_heldout_perplexity(svc->model, svc->held, NULL, svc->conf->p.seed, &pp, NULL))
            slda_metrics_set(svc->metrics, SLDA_G_PERPLEXITY, pp);
        svc->held_eval_t = slda_model_updates(svc->model);
    }
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    char line[512];
    slda_metrics_status_line(svc->metrics, line, sizeof line);
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "status: %s", line);
}

/* ---- life cycle ---- */

/* kafka.bootstrap.servers, or NULL when unset. */
static const char *conf_bootstrap(const slda_conf_t *conf)
{
    for (size_t i = 0; i < slda_conf_kafka_count(conf); i++) {
        const char *n, *v;
        slda_conf_kafka_get(conf, i, &n, &v);
        if (!strcmp(n, "bootstrap.servers"))
            return v;
    }
    return NULL;
}

static slda_err_t start_embedded(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    svc->mock = slda_mock_new(1, errstr, errstr_size);
    if (!svc->mock)
        return SLDA_ERR_KAFKA;
    const slda_conf_t *c = svc->conf;
    const char *topics[] = {c->input_topics, c->snapshot_topic, c->deadletter_topic,
                            c->output_topic};
    for (size_t i = 0; i < 4; i++)
        if (topics[i] && *topics[i] &&
            slda_mock_topics_create(svc->mock, topics[i], EMBEDDED_PARTITIONS, errstr,
                                    errstr_size))
            return SLDA_ERR_KAFKA;
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "bootstrap: %s", slda_mock_bootstraps(svc->mock));
    return SLDA_OK;
}

slda_service_t *slda_service_new(const slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    slda_service_t *svc = slda_xcalloc(1, sizeof *svc);
    svc->conf = slda_conf_dup(conf);
    svc->metrics = slda_metrics_new();
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
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "http: 127.0.0.1:%d", slda_http_port(svc->http));
    }
    const char *bootstrap = conf_bootstrap(svc->conf);
    if ((!bootstrap || !strcmp(bootstrap, "embedded")) &&
        start_embedded(svc, errstr, errstr_size))
        goto fail;
    const char *override = svc->mock ? slda_mock_bootstraps(svc->mock) : NULL;
    svc->model = restore_newest(svc);
    if (!svc->model && !(svc->model = slda_model_new(svc->conf, errstr, errstr_size)))
        goto fail;
    size_t noffs;
    const slda_offset_t *offs = slda_model_offsets(svc->model, &noffs);
    svc->src = slda_ksource_new(svc->conf, override, offs, noffs, svc->metrics, errstr,
                                errstr_size);
    if (!svc->src)
        goto fail;
    svc->sink = slda_ksink_new(svc->conf, override, svc->metrics, errstr, errstr_size);
    if (!svc->sink)
        goto fail;
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    return svc;
fail:
    slda_service_destroy(svc);
    return NULL;
}

slda_err_t slda_service_run(slda_service_t *svc, volatile int *stop, char *errstr,
                            size_t errstr_size)
{
    const slda_conf_t *c = svc->conf;
    uint32_t batch_docs = c->minibatch_docs ? c->minibatch_docs : 256;
    svc->last_snapshot = svc->last_status = now_s();
    slda_err_t err = SLDA_OK;
    while (!*stop && !err) {
        double t = now_s();
        int timeout = POLL_MAX_MS;
        if (svc->ndocs && c->minibatch_ms) {
            double left = svc->batch_start + c->minibatch_ms / 1000.0 - t;
            timeout = left <= 0 ? 0 : left * 1000 < timeout ? (int)(left * 1000) + 1 : timeout;
        }
        slda_kmsg_t msg;
        if (slda_ksource_poll(svc->src, timeout, &msg)) {
            handle_message(svc, &msg);
            slda_ksource_release(svc->src, &msg);
        }
        t = now_s();
        if (svc->ndocs >= batch_docs ||
            (svc->ndocs && c->minibatch_ms && (t - svc->batch_start) * 1000.0 >= c->minibatch_ms))
            err = train_batch(svc, errstr, errstr_size);
        if (!err && snapshot_due(svc, t))
            err = snapshot(svc, 0, errstr, errstr_size);
        slda_ksink_poll(svc->sink);
        if (c->status_ms && (t - svc->last_status) * 1000.0 >= c->status_ms) {
            status(svc);
            svc->last_status = t;
        }
    }
    if (err)
        return err; /* no final snapshot: the last good one stays authoritative */
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "stopping: final minibatch and snapshot");
    err = snapshot(svc, 1, errstr, errstr_size);
    if (!err && svc->deferred)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                           "final snapshot not written (records undelivered after %d ms, or "
                           "snapshot.dir not writable: see the log); the last snapshot stays "
                           "authoritative", FINAL_FLUSH_MS);
    status(svc);
    return err;
}

void slda_service_destroy(slda_service_t *svc)
{
    if (!svc)
        return;
    slda_ksource_destroy(svc->src);
    slda_ksink_destroy(svc->sink, FINAL_FLUSH_MS);
    slda_http_stop(svc->http);
    slda_mock_destroy(svc->mock);
    slda_docs_clear(svc->docs, svc->ndocs);
    free(svc->docs);
    free(svc->meta);
    free(svc->thetas);
    slda_heldout_destroy(svc->held);
    slda_model_destroy(svc->model);
    slda_metrics_destroy(svc->metrics);
    slda_conf_destroy(svc->conf);
    free(svc);
}
