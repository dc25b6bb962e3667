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
#include "core/json.h"
#include "kafka/kafka.h"
#include "kafka/metrics.h"
#include "kafka/mockbroker.h"
#include "core/pool.h"
#include "engine/model.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "io/docmsg.h"
#include "core/slda_int.h"
#include "track/track.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define HELDOUT_MAX 1000      /* documents kept for held-out perplexity */
#define EMBEDDED_PARTITIONS 4 /* partitions of each topic of the embedded cluster */
#define POLL_MAX_MS 100       /* longest consumer wait, so the stop flag is seen */
#define DECODE_MAX 256        /* messages polled at once and decoded on the worker threads */
#define RETRY_S 0.5           /* pause before a deferred snapshot is tried again */
#define PAGE_S 1.0            /* shortest interval between two live-page publications */
#define PAGE_WORDS_COST 20.0  /* the topics' top words (K passes over the model) are looked up
                                 again after at least 20x the time the last look-up took: <= 5% */
#define TRACK_SUFFIX ".track.json" /* tracking state beside each snapshot (docs/tracking.md) */

typedef struct doc_meta_s {
    char topic[128];
    int32_t partition;
    int64_t offset;
    int64_t timestamp_ms;
    int replayed; /* output already delivered by an earlier run: train only */
    int64_t event_ms; /* event time (message timestamp or input.time.field) */
} doc_meta_t;

/* One message of those polled together, decoded on a worker thread (decode_item). */
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
    size_t dec_nrel;              /* items [0, dec_nrel) release rel[] too (train_full) */
    slda_record_t *recs;          /* one per thread: the message it decodes */
    uint32_t nrecs;
    /* messages train_full handled, released on the threads by the next one's
     * hand-over (or by release_pending) */
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
    double retry_at;    /* when a deferred snapshot is tried again */
    uint64_t *good;     /* update counts of this model's snapshot files known to load */
    size_t ngood, capgood;
    int lock_fd;        /* flock on <snapshot.dir>/<model.name>.lock, or -1 */
    int failed;         /* run ended in error: don't wait long for the producers */
    /* flow */
    int paused;         /* consumption paused: the producer has a backlog */
    double paused_since, last_msg_t;
    double health_t;    /* when flow() last judged the stall health */
    /* tracking (src/track): event time always; prevalence, drift, page when conf->track */
    slda_track_t *track;
    slda_page_t *page;
    slda_track_words_t *words; /* K, scratch for the page and comparisons */
    double *mass;              /* K */
    double last_page;
    double words_t, words_cost; /* last look-up of the topics' words: when, how long it took */
    uint64_t page_updates;     /* update count the topics JSON was made at (+1; 0 = never) */
    uint64_t compared_updates; /* update count of the last drift comparison (+1; 0 = never) */
    char restored[4096];       /* the snapshot restored from, "" if none */
    int64_t restored_event_ms; /* its header's newest event time, 0 = none */
    uint64_t restored_updates; /* its update count */
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
};

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

/* 1 when name is "<model>-<20 digits>.slda" followed by suffix (exactly, when
 * suffix is "") or by suffix and anything (a temp file "...slda.tmp.<pid>"). */
static int is_model_file(const char *name, const char *model, const char *suffix)
{
    size_t plen = strlen(model), len = strlen(name);
    if (len < plen + 26 || strncmp(name, model, plen) || name[plen] != '-')
        return 0;
    for (size_t i = plen + 1; i < plen + 21; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    if (strncmp(name + plen + 21, ".slda", 5))
        return 0;
    const char *rest = name + plen + 26;
    return *suffix ? !strncmp(rest, suffix, strlen(suffix)) : !*rest;
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
        if (!is_model_file(name, model, ""))
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
    if (*n > 1)
        qsort(files, *n, sizeof *files, snapfile_cmp);
    return files;
}

static void snapfiles_free(snapfile_t *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i].path);
    free(files);
}

/* Remove temp files left by a writer of this model killed mid-write
 * ("<model>-<20 digits>.slda.tmp.<pid>"; never another model's). Called with
 * the model's lock held, so no live writer owns them. */
static void remove_stale_temps(slda_service_t *svc, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_model_file(de->d_name, svc->conf->model_name, ".tmp.") &&
            !is_model_file(de->d_name, svc->conf->model_name, TRACK_SUFFIX ".tmp."))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!unlink(path))
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "removed stale temp file %s", path);
    }
    closedir(d);
}

/* One model, one writer: an exclusive flock on <dir>/<model>.lock for the
 * service's life, holding "pid P host H" of the holder. */
static slda_err_t lock_model(slda_service_t *svc, const char *dir, int *busy, char *errstr,
                             size_t errstr_size)
{
    *busy = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.lock", dir, svc->conf->model_name);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot.dir lock %s: %s", path,
                            strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        char holder[256] = "";
        ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        close(fd);
        *busy = e == EWOULDBLOCK;
        if (e == EWOULDBLOCK)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                                "model \"%s\" in snapshot.dir \"%s\" is in use by another "
                                "streamlda (%s; lock %s): one model, one writer",
                                svc->conf->model_name, dir, *holder ? holder : "holder unknown",
                                path);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot.dir lock %s: %s", path,
                            strerror(e));
    }
    char host[256] = "?", info[400];
    gethostname(host, sizeof host - 1);
    int len = snprintf(info, sizeof info, "pid %ld on host %s\n", (long)getpid(), host);
    if (ftruncate(fd, 0) || pwrite(fd, info, (size_t)len, 0) != len)
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "lock file %s: %s", path, strerror(errno));
    svc->lock_fd = fd;
    return SLDA_OK;
}

static void good_add(slda_service_t *svc, uint64_t updates)
{
    for (size_t i = 0; i < svc->ngood; i++)
        if (svc->good[i] == updates)
            return;
    if (svc->ngood == svc->capgood) {
        svc->capgood = svc->capgood ? 2 * svc->capgood : 16;
        svc->good = slda_xrealloc(svc->good, svc->capgood * sizeof *svc->good);
    }
    svc->good[svc->ngood++] = updates;
}

static int good_has(const slda_service_t *svc, uint64_t updates)
{
    for (size_t i = 0; i < svc->ngood; i++)
        if (svc->good[i] == updates)
            return 1;
    return 0;
}

static void good_remove(slda_service_t *svc, uint64_t updates)
{
    for (size_t i = 0; i < svc->ngood; i++)
        if (svc->good[i] == updates) {
            svc->good[i] = svc->good[--svc->ngood];
            return;
        }
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

static void reconcile_log(void *opaque, const char *line)
{
    slda_log(((slda_service_t *)opaque)->metrics, SLDA_LOG_INFO, NULL, "restore: %s", line);
}

static slda_err_t load_newest(slda_service_t *svc, uint64_t min_updates, slda_model_t **out,
                              char *errstr, size_t errstr_size);

/* Lock the model's snapshots, then restore the newest one that loads. Every
 * file of the model is tried (newest first): the ones that load are noted as
 * prunable, the others are left alone with a warning. When files exist and
 * none loads, starting a new model would retrain from the committed offsets
 * and drop what they hold: refused unless snapshot.fresh. *model stays NULL
 * when there is nothing to restore. */
static slda_err_t restore_newest(slda_service_t *svc, slda_model_t **out, char *errstr,
                                 size_t errstr_size)
{
    *out = NULL;
    const char *dir = svc->conf->snapshot_dir;
    if (!dir || !*dir)
        return SLDA_OK;
    int busy = 0;
    slda_err_t e = mkdir_p(dir, errstr, errstr_size);
    if (!e)
        e = lock_model(svc, dir, &busy, errstr, errstr_size);
    if (e && busy && svc->conf->updates_topic && *svc->conf->updates_topic) {
        /* a replica: another replica is the snapshot writer; read its files */
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "replica: not the snapshot writer (%s)",
                 errstr);
        e = SLDA_OK;
    } else if (!e && svc->conf->updates_topic && *svc->conf->updates_topic) {
        svc->writer = 1;
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "replica: snapshot writer (lock %s/%s.lock)",
                 dir, svc->conf->model_name);
    }
    if (e)
        return e;
    if (svc->lock_fd >= 0)
        remove_stale_temps(svc, dir); /* only the lock holder: others' may be in progress */
    return load_newest(svc, 0, out, errstr, errstr_size);
}

/* restore_newest's reading: the newest snapshot of the model in snapshot.dir
 * that loads (the others noted as prunable or left alone), reconciled with
 * this run's configuration, and recorded as the one restored (svc->restored).
 * Only one of at least min_updates updates is taken (a restarting replica's
 * second look, reload_newer): else *out stays NULL and nothing is recorded. */
static slda_err_t load_newest(slda_service_t *svc, uint64_t min_updates, slda_model_t **out,
                              char *errstr, size_t errstr_size)
{
    const char *dir = svc->conf->snapshot_dir;
    slda_err_t e;
    *out = NULL;
    size_t n, bad = 0;
    snapfile_t *files = snapfiles_list(dir, svc->conf->model_name, &n);
    slda_model_t *model = NULL;
    char first_err[700] = "";
    for (size_t i = 0; i < n; i++) {
        char err[512];
        slda_err_t code = SLDA_OK;
        slda_snapshot_meta_t meta;
        slda_model_t *m = slda_snapshot_read_meta(files[i].path, &meta, &code, err, sizeof err);
        if (!m) {
            bad++;
            if (!first_err[0])
                snprintf(first_err, sizeof first_err, "%s: %s", files[i].path, err);
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                     "snapshot %s does not load: %s (%s); it is left in place and never pruned",
                     files[i].path, err, slda_err_name(code));
            continue;
        }
        good_add(svc, files[i].updates);
        if (model || slda_model_updates(m) < min_updates) {
            slda_model_destroy(m);
            continue;
        }
        model = m;
        snprintf(svc->restored, sizeof svc->restored, "%s", files[i].path);
        svc->restored_event_ms = meta.event_ms;
        svc->restored_updates = slda_model_updates(m);
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "restored %s: %" PRIu64 " updates, %" PRIu64 " documents", files[i].path,
                 slda_model_updates(model), slda_model_docs(model));
    }
    snapfiles_free(files, n);
    if (!model && bad && !min_updates) {
        if (!svc->conf->snapshot_fresh)
            return slda_set_err(
                errstr, errstr_size, SLDA_ERR_CORRUPT,
                "snapshot.dir \"%s\" holds %zu snapshot(s) of model \"%s\" and none loads "
                "(newest: %s); a new model would restart from the group's committed offsets and "
                "lose what they hold. Repair or move them, or start a new model beside them with "
                "--fresh (-X snapshot.fresh=true)",
                dir, bad, svc->conf->model_name, first_err);
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "snapshot.fresh: starting a new model beside %zu unloadable snapshot(s)", bad);
    }
    if (!model)
        return SLDA_OK;
    /* text.* left at their defaults keep the snapshot's values: they decide
     * which words the model's vocabulary holds */
    char err[512];
    slda_conf_t *text = slda_model_text_conf(model, svc->conf, reconcile_log, svc);
    if (slda_model_set_tokenizer(model, text, err, sizeof err) != SLDA_OK)
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL, "tokenizer of the restored model: %s", err);
    slda_conf_destroy(text);
    e = slda_model_reconcile(model, svc->conf, reconcile_log, svc, errstr, errstr_size);
    if (e) {
        slda_model_destroy(model);
        return e;
    }
    *out = model;
    return SLDA_OK;
}

/* Keep the newest `keep` snapshots of the model that are known to load
 * (restored, verified at start, or written by this process); files that do
 * not load, and other models' files, are never touched. */
static void prune_snapshots(slda_service_t *svc)
{
    size_t n, kept = 0, keep = svc->conf->snapshot_keep ? svc->conf->snapshot_keep : 1;
    snapfile_t *files = snapfiles_list(svc->conf->snapshot_dir, svc->conf->model_name, &n);
    for (size_t i = 0; i < n; i++) { /* newest first */
        if (!good_has(svc, files[i].updates) || ++kept <= keep)
            continue;
        if (unlink(files[i].path) && errno != ENOENT)
            slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-prune", "cannot remove %s: %s",
                     files[i].path, strerror(errno));
        else {
            good_remove(svc, files[i].updates);
            char side[4200];
            snprintf(side, sizeof side, "%s" TRACK_SUFFIX, files[i].path);
            unlink(side); /* its tracking state, if any */
        }
    }
    snapfiles_free(files, n);
}

/* ---- output records ---- */

/* {"id","time","event_time","event_ms","topics":[[k,w],...],"model","update"[,"warmup"]}
 * for document i; topic k is the model's slot, the id tracking keeps (docs/tracking.md). */
static void produce_output(slda_service_t *svc, size_t i, uint32_t K, int warmup)
{
    if (svc->meta[i].replayed)
        return;
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
    char iso[40];
    slda_time_format(svc->meta[i].event_ms, iso, sizeof iso);
    fprintf(f, ",\"time\":%lld,\"event_time\":\"%s\",\"event_ms\":%lld,\"topics\":[",
            (long long)svc->docs[i].time_ms, iso, (long long)svc->meta[i].event_ms);
    for (uint32_t j = 0; j < top; j++)
        fprintf(f, "%s[%u,%.6g]", j ? "," : "", best[j], (double)theta[best[j]]);
    fprintf(f, "],\"model\":");
    slda_json_write_string(f, svc->conf->model_name);
    fprintf(f, ",\"update\":%" PRIu64 "%s}", slda_model_updates(svc->model),
            warmup ? ",\"warmup\":true" : "");
    fclose(f);
    const doc_meta_t *m = &svc->meta[i];
    slda_kmsg_t msg = {.topic = m->topic, .partition = m->partition, .offset = m->offset,
                       .timestamp_ms = m->timestamp_ms};
    slda_ksink_output(svc->sink, &msg, svc->docs[i].id, strlen(svc->docs[i].id), json, len);
    free(json); /* counted on delivery; a fatal sink stops the loop */
}

/* ---- minibatches ---- */

static void event_gauges(slda_service_t *svc);
static void page_publish(slda_service_t *svc);

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

static void engine_events(slda_service_t *svc);

static void decode_item(slda_service_t *svc, size_t i, uint32_t worker);

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
        decode_item(job->svc, i - job->ntrain, worker);
}

static void batch_pre(void *opaque)
{
    slda_train_pre(((batch_job_t *)opaque)->train);
}

/* Train the open minibatch; ndecode items of the decode stage (svc->ndec
 * messages set up by decode_setup, svc->dec_nrel releases) run in the same
 * hand-over (train_full). When the training is refused before its hand-over,
 * they do not run. */
static slda_err_t train_batch(slda_service_t *svc, size_t ndecode, char *errstr,
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
    slda_metrics_set(svc->metrics, SLDA_G_RHO, stats.rho);
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
    for (size_t i = 0; svc->conf->track && i < svc->ndocs; i++)
        if (svc->docs[i].ntokens) /* an empty document was not trained */
            slda_track_add(svc->track, svc->meta[i].event_ms, svc->thetas + i * K);
    engine_events(svc);
    for (size_t i = 0; output && i < svc->ndocs; i++)
        produce_output(svc, i, K, warmup);
    slda_docs_clear(svc->docs, svc->ndocs);
    svc->ndocs = 0;
    svc->batches_since++;
    event_gauges(svc);
    if (svc->page && slda_mono_s() - svc->last_page >= PAGE_S)
        page_publish(svc);
    return SLDA_OK;
}

/* births.c's topic births, deaths and merges since the last call: one line each. */
static void engine_events(slda_service_t *svc)
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

/* Counts a held-out document and picks its reservoir slot (a uniform
 * sample of at most HELDOUT_MAX); SIZE_MAX: not kept. */
static size_t heldout_slot(slda_service_t *svc)
{
    svc->heldseen++;
    slda_metrics_add(svc->metrics, SLDA_M_HELDOUT, 1);
    if (svc->nheld < HELDOUT_MAX)
        return svc->nheld++;
    uint64_t j = slda_rng_next(&svc->rng) % svc->heldseen;
    return j < HELDOUT_MAX ? (size_t)j : SIZE_MAX;
}

static void heldout_failed(slda_service_t *svc, const char *err)
{
    slda_log(svc->metrics, SLDA_LOG_WARN, "heldout", "held-out document dropped: %s", err);
    svc->nheld = slda_heldout_count(svc->held);
}

/* A held-out document: into the reservoir by its ids; for a replica (whose
 * vocabulary only the update log changes) staged by its bag's word keys. */
static void heldout_add(slda_service_t *svc, slda_doc_t *doc, const slda_bag_t *bag)
{
    char err[256];
    if (bag) {
        if (svc->nstaged == svc->capstaged) {
            svc->capstaged = svc->capstaged ? 2 * svc->capstaged : 16;
            svc->staged = slda_xrealloc(svc->staged, svc->capstaged * sizeof *svc->staged);
        }
        struct staged_held_s *h = &svc->staged[svc->nstaged++];
        h->key = slda_xmalloc(((size_t)bag->n + 1) * sizeof *h->key);
        h->count = slda_xmalloc(((size_t)bag->n + 1) * sizeof *h->count);
        memcpy(h->key, bag->hash, bag->n * sizeof *h->key);
        memcpy(h->count, bag->count, bag->n * sizeof *h->count);
        h->n = bag->n;
        h->in_txn = 0;
    } else {
        size_t slot = heldout_slot(svc);
        if (slot != SIZE_MAX &&
            slda_heldout_put(svc->held, slot, svc->model, doc, err, sizeof err) != SLDA_OK)
            heldout_failed(svc, err);
    }
    slda_doc_clear(doc);
}

/* Replicas: what becomes of the staged held-out documents when the open
 * minibatch joins the open transaction (TO_TXN: its documents then wait with
 * the transaction's), when the transaction commits (COMMIT: its documents
 * join the reservoir) or when both are dropped (DROP: all are forgotten). */
typedef enum { STAGED_TO_TXN, STAGED_COMMIT, STAGED_DROP } staged_event_t;

static void heldout_staged(slda_service_t *svc, staged_event_t ev)
{
    size_t m = 0;
    char err[256];
    for (size_t i = 0; i < svc->nstaged; i++) {
        struct staged_held_s *h = &svc->staged[i];
        if (ev == STAGED_TO_TXN) {
            h->in_txn = 1;
            m++;
        } else if (ev == STAGED_COMMIT && !h->in_txn) {
            svc->staged[m++] = *h; /* the open minibatch's: still waiting */
        } else {
            size_t slot = ev == STAGED_COMMIT ? heldout_slot(svc) : SIZE_MAX;
            if (slot != SIZE_MAX && slda_heldout_put_keys(svc->held, slot, svc->model, h->key,
                                                          h->count, h->n, err, sizeof err))
                heldout_failed(svc, err);
            free(h->key);
            free(h->count);
        }
    }
    svc->nstaged = m;
}

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
        const char *err = d->time_err; /* read on the worker (decode_item) */
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
 * threads (decode_item): each into its thread's record (docmsg.c), then
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
 * the release of rel[i] when train_full handed that over too. */
static void decode_item(slda_service_t *svc, size_t i, uint32_t worker)
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
    if (d->code != SLDA_OK)
        return;
    d->doc.id = slda_record_id(rec);
    if (!d->doc.id) {
        /* no id field and no key: the Kafka coordinates are unique */
        char id[200];
        snprintf(id, sizeof id, "%s:%d:%" PRId64, msg->topic, (int)msg->partition, msg->offset);
        d->doc.id = slda_xstrdup(id);
    }
    if (!svc->replica)
        slda_bag_hint(vocab, d->bag, &d->doc);
}

static void decode_one(size_t i, uint32_t worker, void *opaque)
{
    decode_item(opaque, i, worker);
}

static void note_input(slda_service_t *svc, const slda_kmsg_t *msg);

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
        note_input(svc, msg);
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
    doc.time_ms = msg->timestamp_ms; /* doc.id: the message's, or decode_item's */
    uint32_t m = svc->conf->heldout_modulo;
    if (m && slda_hash64(doc.id, strlen(doc.id), 0) % m == 0) {
        heldout_add(svc, &doc, svc->replica ? bag : NULL);
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
 * empty (as they stay if they are never decoded: train_full when training
 * fails), a record for each thread. */
static void decode_setup(slda_service_t *svc, slda_kmsg_t *msgs, size_t n)
{
    uint32_t threads = slda_pool_threads(slda_model_pool(svc->model));
    if (svc->nrecs < threads) { /* one record per thread: decoding writes it */
        svc->recs = slda_xrealloc(svc->recs, threads * sizeof *svc->recs);
        for (uint32_t w = svc->nrecs; w < threads; w++)
            slda_record_init(&svc->recs[w]);
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

/* Release what train_full left for the next hand-over (a no-op for the
 * messages that hand-over released already). */
static void release_pending(slda_service_t *svc)
{
    for (size_t i = 0; i < svc->nrel; i++)
        slda_ksource_release(svc->src, &svc->rel[i]);
    svc->nrel = 0;
}

/* The decoded messages handled in order (ok), or dropped (the service stops
 * and reads them again from the last snapshot); then released, or with defer
 * left to the next train_full's hand-over (svc->rel, empty before). */
static void handle_decoded(slda_service_t *svc, int ok, int defer)
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
}

/* Messages polled while the minibatch is open: decoded in a hand-over of
 * their own, handled and released. */
static void handle_messages(slda_service_t *svc, slda_kmsg_t *msgs, size_t n)
{
    decode_setup(svc, msgs, n);
    slda_pool_run_longest(slda_model_pool(svc->model), n, decode_cost, decode_one, NULL, svc);
    handle_decoded(svc, 1, 0);
}

/* The open minibatch is full: train it, and decode what Kafka has ready for
 * the next one (up to a minibatch, not waiting) in the same hand-over to the
 * threads, after the documents (train_batch runs the training's job and the
 * decode stage's items together); then handle those messages as
 * handle_messages does. Their words are looked up after the training, in
 * message order, as if they had been polled after it (decoding only reads
 * the vocabulary, and the bags' hints are checked against evictions), and
 * nothing polls between (no rebalance) and nothing snapshots positions
 * before they are handled: the same minibatches, model and records as
 * polling after the training. One hand-over per minibatch instead of two
 * (docs/engine.md, "Threads"). The same hand-over releases the messages the
 * previous train_full handled (librdkafka's destroy, about 0.3 us each, off
 * the thread every message passes). Not for replicas (publish_batch). */
static slda_err_t train_full(slda_service_t *svc, size_t batch_docs, char *errstr,
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
    decode_setup(svc, msgs, n);
    svc->dec_nrel = svc->nrel;
    slda_err_t err = train_batch(svc, n > svc->nrel ? n : svc->nrel, errstr, errstr_size);
    release_pending(svc); /* those a failed training did not reach */
    if (!err && n)
        svc->last_msg_t = slda_mono_s();
    handle_decoded(svc, !err, 1);
    return err;
}

/* ---- tracking: event-time gauges, the live page, drift at snapshots ---- */

static void event_gauges(slda_service_t *svc)
{
    int64_t newest = slda_track_newest(svc->track);
    slda_metrics_set(svc->metrics, SLDA_G_EVENT_TIME, newest / 1000.0);
    slda_metrics_set(svc->metrics, SLDA_G_EVENT_LAG,
                     newest ? (slda_now_ms() - newest) / 1000.0 : 0);
}

static void track_event_log(const slda_track_event_t *ev, void *opaque)
{
    slda_service_t *svc = opaque;
    char iso[40];
    slda_time_format(ev->event_ms, iso, sizeof iso);
    if (ev->other != UINT32_MAX)
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                 "topic event: %s of topics %u and %u at %s (JS %.2f): %s", ev->kind, ev->topic,
                 ev->other, iso, ev->js, ev->words);
    else
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "topic event: %s of topic %u at %s%s: %s",
                 ev->kind, ev->topic, iso, ev->js >= 0 ? "" : " (engine)", ev->words);
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
            (unsigned long long)ev->update, ev->js >= 0 ? "false" : "true");
    if (ev->js >= 0)
        fprintf(f, ",\"js\":%.4f", ev->js);
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
            ",\"lag\":%.0f,\"event_ms\":%lld,\"event_lag_s\":%.3f,\"perplexity\":%.6g,"
            "\"vocab\":%u,\"warmup\":%s,\"deadletters\":%" PRIu64 ",\"late\":%" PRIu64
            ",\"clamped\":%" PRIu64 ",\"rho\":%.6g}",
            docs, rate, slda_model_updates(svc->model),
            slda_metrics_gauge(svc->metrics, SLDA_G_LAG), (long long)newest,
            newest ? (slda_now_ms() - newest) / 1000.0 : -1.0,
            slda_metrics_gauge(svc->metrics, SLDA_G_PERPLEXITY),
            slda_model_vocab_size(svc->model),
            slda_model_docs(svc->model) < svc->conf->track_warmup_docs ? "true" : "false",
            slda_metrics_deadletters(svc->metrics, SLDA_OK), slda_track_late(svc->track),
            slda_track_clamped(svc->track), slda_metrics_gauge(svc->metrics, SLDA_G_RHO));
    fclose(f);
    slda_page_set(svc->page, SLDA_PAGE_STATUS, json, len);
}

/* Publish what the live page shows (the HTTP thread serves copies). The
 * topics' words are looked up again only when the model moved, and not more
 * often than keeps the look-ups under 1/PAGE_WORDS_COST of the time (and at
 * each snapshot). */
static void page_publish(slda_service_t *svc)
{
    if (!svc->page)
        return;
    size_t len;
    char *json;
    double t = slda_mono_s();
    if (svc->page_updates != slda_model_updates(svc->model) + 1 &&
        t - svc->words_t >= PAGE_WORDS_COST * svc->words_cost) {
        slda_track_model_words(svc->model, svc->words, svc->mass);
        svc->page_updates = slda_model_updates(svc->model) + 1;
        svc->words_t = slda_mono_s();
        svc->words_cost = svc->words_t - t;
    }
    if ((json = slda_track_json_topics(svc->track, svc->words, svc->mass, &len)))
        slda_page_set(svc->page, SLDA_PAGE_TOPICS, json, len);
    if ((json = slda_track_json_prevalence(svc->track, &len)))
        slda_page_set(svc->page, SLDA_PAGE_PREVALENCE, json, len);
    if ((json = slda_track_json_events(svc->track, &len)))
        slda_page_set(svc->page, SLDA_PAGE_EVENTS, json, len);
    page_status(svc);
    svc->last_page = slda_mono_s();
}

/* At a snapshot: drift and events against the previous one, and the tracking
 * state written beside the snapshot file (path, or NULL without snapshot.dir). */
static void track_snapshot(slda_service_t *svc, const char *path)
{
    if (!svc->conf->track)
        return;
    uint64_t updates = slda_model_updates(svc->model);
    if (svc->compared_updates != updates + 1) { /* not again when a deferred one is retried */
        slda_track_model_words(svc->model, svc->words, svc->mass);
        svc->page_updates = svc->compared_updates = updates + 1;
        slda_track_compare(svc->track, svc->words, svc->mass, slda_model_docs(svc->model),
                           updates);
    }
    if (path) {
        char side[4200], err[600];
        snprintf(side, sizeof side, "%s" TRACK_SUFFIX, path);
        if (slda_track_save(svc->track, side, svc->conf->model_name,
                            slda_model_updates(svc->model), err, sizeof err))
            slda_log(svc->metrics, SLDA_LOG_WARN, "track-save", "%s", err);
    }
    page_publish(svc);
}

/* The tracker of the restored snapshot's state, or a fresh one (with the
 * reason logged) when its state is missing, corrupt or for another K. */
static void track_stop(slda_service_t *svc)
{
    slda_track_destroy(svc->track);
    free(svc->words);
    free(svc->mass);
    svc->track = NULL;
    svc->words = NULL;
    svc->mass = NULL;
}

static void track_start(slda_service_t *svc)
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
    snprintf(side, sizeof side, "%s" TRACK_SUFFIX, svc->restored);
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
    slda_snapshot_meta_t meta = {.event_ms = slda_track_newest(svc->track)};
    if (slda_snapshot_encode_meta(svc->model, &meta, &buf, &len, err, sizeof err) ||
        slda_ksink_snapshot(svc->sink, svc->conf->model_name, slda_model_updates(svc->model),
                            buf, len, err, sizeof err))
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-publish", "%s", err);
    if (len)
        *bytes = (double)len;
    free(buf);
}

static void defer(slda_service_t *svc)
{
    svc->deferred = 1;
    svc->retry_at = slda_mono_s() + RETRY_S;
}

/* Write the model (with the offsets it holds) to snapshot.dir as
 * MODEL-<updates>.slda, the tracker's state first (a snapshot never lacks its
 * state for long); then keep snapshot.keep files. On failure the service turns
 * unhealthy and the snapshot is deferred: returns -1. */
static int write_snapshot_file(slda_service_t *svc, double *bytes)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s-%020" PRIu64 ".slda", svc->conf->snapshot_dir,
             svc->conf->model_name, slda_model_updates(svc->model));
    track_snapshot(svc, path);
    slda_snapshot_meta_t meta = {.event_ms = slda_track_newest(svc->track)};
    if (slda_snapshot_write_meta(svc->model, &meta, path, err, sizeof err)) {
        slda_metrics_set_service_health(svc->metrics, 0, "cannot write snapshots");
        slda_log(svc->metrics, SLDA_LOG_ERR, "snapshot-write", "snapshot: %s", err);
        defer(svc);
        return -1;
    }
    slda_metrics_set_service_health(svc->metrics, 1, NULL);
    slda_log_reset(svc->metrics, "snapshot-write");
    struct stat st;
    if (!stat(path, &st))
        *bytes = (double)st.st_size;
    slda_metrics_add(svc->metrics, SLDA_M_SNAPSHOTS, 1);
    good_add(svc, slda_model_updates(svc->model));
    prune_snapshots(svc);
    return 0;
}

/* Checkpoint: train the open minibatch, wait for the data producer, write the
 * snapshot (model + offsets) and commit the offsets. A failure to write is
 * logged and retried later; only a failed transaction is fatal. */
static slda_err_t snapshot(slda_service_t *svc, int final, char *errstr, size_t errstr_size)
{
    /* Still waiting for the brokers: keep the minibatch open (its composition
     * should not depend on how long they are away). */
    if (svc->deferred && !final && !slda_ksink_drain(svc->sink, 0)) {
        defer(svc);
        return SLDA_OK;
    }
    slda_err_t err = train_batch(svc, 0, errstr, errstr_size);
    if (err || !svc->dirty)
        return err;
    if (!slda_ksink_drain(svc->sink, final ? (int)svc->conf->shutdown_timeout_ms : 100)) {
        defer(svc);
        svc->awaiting = 1; /* no new minibatch, consumption paused, until delivered */
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-deferred",
                 "snapshot deferred: dead-letter/output records not yet delivered");
        return SLDA_OK;
    }
    svc->deferred = svc->awaiting = 0;
    slda_log_reset(svc->metrics, "snapshot-deferred");
    slda_model_flush(svc->model); /* the snapshot holds every update (global.stale) */
    size_t n;
    const slda_offset_t *offs = slda_ksource_positions(svc->src, &n);
    slda_model_set_offsets(svc->model, offs, n);
    offs = slda_model_offsets(svc->model, &n);
    double t0 = slda_mono_s(), bytes = 0;
    if (slda_ksink_transactional(svc->sink) &&
        slda_ksink_txn_commit(svc->sink, svc->src, offs, n, NULL, errstr, errstr_size))
        return SLDA_ERR_KAFKA; /* restart from the last snapshot: nothing lost */
    const char *dir = svc->conf->snapshot_dir;
    if (dir && *dir) {
        if (write_snapshot_file(svc, &bytes))
            return SLDA_OK; /* deferred, retried */
    } else
        track_snapshot(svc, NULL);
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_SECONDS, slda_mono_s() - t0);
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
    svc->last_snapshot = slda_mono_s();
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
    event_gauges(svc);
    char line[512];
    slda_metrics_status_line(svc->metrics, line, sizeof line);
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "status: %s", line);
}

/* ---- replicas: minibatches published to the update log (replica.c) ---- */

/* The open minibatch covers msg (a document, a dead letter or a held-out one). */
static void note_input(slda_service_t *svc, const slda_kmsg_t *msg)
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
    heldout_staged(svc, STAGED_DROP);
    clear_batch(svc);
    slda_err_t e = slda_ksource_rewind(svc->src, errstr, errstr_size);
    svc->batch_gen = slda_ksource_generation(svc->src);
    return e;
}

/* The open minibatch's offsets (and held-out documents) join the open transaction's. */
static void txn_offsets_add(slda_service_t *svc)
{
    heldout_staged(svc, STAGED_TO_TXN);
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
static slda_err_t commit_txn(slda_service_t *svc, char *errstr, size_t errstr_size)
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
    heldout_staged(svc, STAGED_COMMIT);
    if (!svc->ndocs && !svc->ninputs)
        svc->batch_gen = slda_ksource_generation(svc->src);
    return SLDA_OK;
}

static void replica_applied(void *opaque, const slda_update_t *upd)
{
    slda_service_t *svc = opaque;
    slda_metrics_add(svc->metrics, SLDA_M_DOCS, slda_update_docs(upd));
    slda_metrics_add(svc->metrics, SLDA_M_TOKENS, slda_update_tokens(upd));
    slda_metrics_add(svc->metrics, SLDA_M_UPDATES, 1);
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_UPDATES, (double)slda_model_updates(svc->model));
    slda_metrics_set(svc->metrics, SLDA_G_MODEL_DOCS, (double)slda_model_docs(svc->model));
    engine_events(svc);
    svc->dirty = 1;
    svc->batches_since++;
}

static slda_err_t replica_apply(slda_service_t *svc, int wait_ms, char *errstr, size_t errstr_size)
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
static slda_err_t publish_batch(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    if (!svc->ndocs && !svc->ninputs)
        return SLDA_OK;
    if (slda_ksource_generation(svc->src) != svc->batch_gen)
        return drop_all(svc, "the consumer group rebalanced while it was read", 1, errstr,
                        errstr_size);
    slda_err_t e = replica_apply(svc, 0, errstr, errstr_size);
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
            produce_output(svc, i, K, warmup);
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
    event_gauges(svc);
    if (svc->page && slda_mono_s() - svc->last_page >= PAGE_S)
        page_publish(svc);
    uint64_t S = svc->conf->updates_staleness;
    if (slda_replica_unapplied(svc->replica) > S ||
        (slda_mono_s() - svc->txn_start) * 1000.0 >= svc->conf->minibatch_ms) {
        e = commit_txn(svc, errstr, errstr_size);
        double t0 = slda_mono_s();
        while (!e && slda_replica_unapplied(svc->replica) > S) {
            if (slda_mono_s() - t0 > 120)
                return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                                    "replica: %" PRIu64 " update record(s) committed by this "
                                    "instance did not come back through updates.topic %s in "
                                    "120 s", slda_replica_unapplied(svc->replica),
                                    svc->conf->updates_topic);
            e = replica_apply(svc, POLL_MAX_MS, errstr, errstr_size);
        }
    }
    return e;
}

/* Apply the log until this replica is at its end (every own record back), for
 * up to max_s seconds or until *stop. */
static slda_err_t replica_catch_up(slda_service_t *svc, volatile int *stop, double max_s,
                                   char *errstr, size_t errstr_size)
{
    double end = slda_mono_s() + max_s;
    while (!slda_replica_at_end(svc->replica) && !(stop && *stop) && slda_mono_s() < end) {
        slda_err_t e = replica_apply(svc, POLL_MAX_MS, errstr, errstr_size);
        if (e)
            return e;
    }
    if (!slda_replica_at_end(svc->replica))
        slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                 "replica: not at the end of updates.topic after %.0f s (%" PRIu64
                 " own record(s) not back)", max_s, slda_replica_unapplied(svc->replica));
    return SLDA_OK;
}

static const char *conf_bootstrap(const slda_conf_t *conf);

/* How many times a starting replica restores a newer snapshot because the
 * log was pruned past the one it restored (replica_open). */
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
    if (load_newest(svc, svc->restored[0] ? svc->restored_updates + 1 : 0, &model, err,
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
    track_stop(svc);
    track_start(svc);
    if (svc->page) {
        svc->page_updates = 0;
        page_publish(svc);
    }
    return 0;
}

/* Open the update log at the model's position; when it was pruned past it
 * while this replica started, restore a newer snapshot and try again. */
static slda_err_t replica_open(slda_service_t *svc, volatile int *stop, char *errstr,
                               size_t errstr_size)
{
    for (int tries = 0;; tries++) {
        size_t noffs;
        const slda_offset_t *offs = slda_model_offsets(svc->model, &noffs);
        int pruned = 0;
        svc->replica = slda_replica_new(svc->conf, conf_bootstrap(svc->conf), svc->metrics,
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
 * may be pruned past the replica while it reads (as in replica_open). */
static slda_err_t replica_start(slda_service_t *svc, volatile int *stop, char *errstr,
                                size_t errstr_size)
{
    slda_err_t e = replica_catch_up(svc, stop, 1e9, errstr, errstr_size);
    for (int tries = 0; e && svc->replica && slda_replica_gone(svc->replica) && !*stop &&
                        tries < REPLICA_RELOADS;
         tries++) { /* (svc->replica is NULL when a reopening was refused) */
        if (reload_newer(svc))
            break;
        e = replica_open(svc, stop, errstr, errstr_size);
        if (!e)
            e = replica_catch_up(svc, stop, 1e9, errstr, errstr_size);
    }
    return e;
}

/* The snapshot writer (the holder of snapshot.dir's lock; a replica that is
 * not tries to become it) writes the replica with its log position, keeps
 * snapshot.keep files and prunes the log below the oldest one it keeps. */
static slda_err_t replica_snapshot(slda_service_t *svc, char *errstr, size_t errstr_size)
{
    const char *dir = svc->conf->snapshot_dir;
    (void)errstr;
    (void)errstr_size;
    if (!svc->writer) {
        int busy;
        char err[700];
        if (!lock_model(svc, dir, &busy, err, sizeof err)) {
            svc->writer = 1;
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "replica: snapshot writer (lock %s/%s.lock taken over)", dir,
                     svc->conf->model_name);
            remove_stale_temps(svc, dir);
            size_t n; /* the previous writer's files: written whole (rename), prunable */
            snapfile_t *files = snapfiles_list(dir, svc->conf->model_name, &n);
            for (size_t i = 0; i < n; i++)
                good_add(svc, files[i].updates);
            snapfiles_free(files, n);
        } else if (!busy)
            slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-lock", "%s", err);
    }
    svc->last_snapshot = slda_mono_s();
    svc->batches_since = 0;
    if (!svc->writer || !svc->dirty)
        return SLDA_OK;
    size_t n;
    const slda_offset_t *offs = slda_replica_offsets(svc->replica, &n);
    slda_model_set_offsets(svc->model, offs, n);
    double t0 = slda_mono_s(), bytes = 0;
    if (write_snapshot_file(svc, &bytes))
        return SLDA_OK; /* deferred, retried at the next interval */
    svc->deferred = 0;
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_SECONDS, slda_mono_s() - t0);
    size_t keep = svc->conf->snapshot_keep ? svc->conf->snapshot_keep : 1;
    if (keep > sizeof svc->kept_log / sizeof svc->kept_log[0])
        keep = sizeof svc->kept_log / sizeof svc->kept_log[0];
    if (svc->nkept == keep) {
        memmove(svc->kept_log, svc->kept_log + 1, (keep - 1) * sizeof *svc->kept_log);
        svc->nkept--;
    }
    svc->kept_log[svc->nkept++] = slda_replica_position(svc->replica);
    if (svc->conf->updates_prune && svc->nkept == keep && svc->kept_log[0] > svc->pruned) {
        char err3[600];
        if (slda_replica_prune(svc->replica, svc->kept_log[0], err3, sizeof err3))
            slda_log(svc->metrics, SLDA_LOG_WARN, "replica-prune", "%s", err3);
        else
            svc->pruned = svc->kept_log[0];
    }
    if (svc->conf->snapshot_topic && *svc->conf->snapshot_topic)
        publish_snapshot(svc, &bytes);
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_BYTES, bytes);
    svc->dirty = 0;
    return SLDA_OK;
}

/* ---- flow: backpressure and stall health ---- */

/* Pause consumption while the producer has a backlog (records waiting for
 * room or for a retry), resume when it is gone; /healthz turns 503 when
 * records stay undelivered, consumption stays paused, or lagging partitions
 * yield nothing, for health.stall.ms. */
static void flow(slda_service_t *svc, double t)
{
    size_t backlog = slda_ksink_backlog(svc->sink);
    int hold = backlog || svc->awaiting;
    if (hold && !svc->paused) {
        if (!slda_ksource_pause(svc->src, 1)) {
            svc->paused = 1;
            svc->paused_since = t;
            if (backlog)
                slda_log(svc->metrics, SLDA_LOG_WARN, "flow-pause",
                         "consumption paused: %zu dead-letter/output record(s) wait for the "
                         "brokers", backlog);
        }
    } else if (!hold && svc->paused) {
        if (!slda_ksource_pause(svc->src, 0)) {
            svc->paused = 0;
            svc->last_msg_t = t;
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "consumption resumed");
            slda_log_reset(svc->metrics, "flow-pause");
        }
    }
    if (t - svc->health_t < 0.1) /* the loop turns once a message: judge health 10x a second */
        return;
    svc->health_t = t;
    double stall = svc->conf->health_stall_ms / 1000.0, lag = slda_metrics_gauge(svc->metrics,
                                                                                SLDA_G_LAG);
    double undelivered_s = slda_ksink_stalled_s(svc->sink);
    char why[256] = "";
    if (undelivered_s >= stall)
        snprintf(why, sizeof why, "producer stalled: %zu record(s) undelivered, none delivered "
                 "for %.0f s", slda_ksink_undelivered(svc->sink), undelivered_s);
    else if (svc->paused && t - svc->paused_since >= stall)
        snprintf(why, sizeof why, "consumption paused for %.0f s: the producer has a backlog",
                 t - svc->paused_since);
    else if (!svc->paused && lag > 0 && slda_ksource_assigned(svc->src) &&
             t - svc->last_msg_t >= stall)
        snprintf(why, sizeof why, "consumer stalled: lag %.0f, no message for %.0f s", lag,
                 t - svc->last_msg_t);
    slda_metrics_set_flow_health(svc->metrics, !why[0], why);
    slda_metrics_set(svc->metrics, SLDA_G_UNDELIVERED, (double)slda_ksink_undelivered(svc->sink));
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
        slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "http: 127.0.0.1:%d", slda_http_port(svc->http));
    }
    const char *bootstrap = conf_bootstrap(svc->conf);
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
    if (restore_newest(svc, &svc->model, errstr, errstr_size))
        goto fail;
    if (!svc->model && !(svc->model = slda_model_new(svc->conf, errstr, errstr_size)))
        goto fail;
    track_start(svc);
    if (svc->http && svc->conf->track) {
        svc->page = slda_page_new();
        page_publish(svc); /* the page has data to show from the first request */
        slda_http_set_page(svc->http, svc->page);
    }
    size_t noffs;
    const slda_offset_t *offs = slda_model_offsets(svc->model, &noffs);
    /* replicas start every partition at the group's committed offset: the
     * offsets of the records in the log, committed with them */
    svc->src = slda_ksource_new(svc->conf, override, replica ? NULL : offs, replica ? 0 : noffs,
                                svc->metrics, stop, errstr, errstr_size);
    if (!svc->src)
        goto fail;
    svc->sink = slda_ksink_new(svc->conf, override, svc->metrics, stop, errstr, errstr_size);
    if (!svc->sink)
        goto fail;
    if (replica) {
        if (replica_open(svc, stop, errstr, errstr_size))
            goto fail;
        svc->scratch = slda_update_scratch_new();
        svc->batch_gen = slda_ksource_generation(svc->src);
    }
    slda_metrics_set(svc->metrics, SLDA_G_VOCAB, slda_model_vocab_size(svc->model));
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
    slda_err_t err = SLDA_OK;
    if (svc->replica) { /* the first minibatch reads the model at the log's end */
        err = replica_start(svc, stop, errstr, errstr_size);
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
        if (!full) /* no train_full's hand-over to release them soon */
            release_pending(svc);
        if (full) /* train it, the next minibatch's messages decoded meanwhile */
            err = train_full(svc, batch_docs, errstr, errstr_size);
        else if (slda_ksource_poll(svc->src, timeout, &msgs[0])) { /* polls even while paused */
            /* and what else is there, up to the rest of the minibatch */
            size_t n = 1, room = svc->ndocs < batch_docs ? batch_docs - svc->ndocs : 1;
            while (n < room && n < DECODE_MAX && slda_ksource_poll(svc->src, 0, &msgs[n]))
                n++;
            svc->last_msg_t = slda_mono_s();
            handle_messages(svc, msgs, n); /* and releases them */
        }
        t = slda_mono_s();
        open = svc->ndocs || svc->ninputs;
        if (svc->replica && !err)
            err = replica_apply(svc, 0, errstr, errstr_size);
        /* a full minibatch waits for the next round's train_full, unless replicas' */
        if (!err && !svc->awaiting &&
            ((svc->replica && svc->ndocs >= batch_docs) ||
             (svc->ndocs < batch_docs && open && c->minibatch_ms &&
              (t - svc->batch_start) * 1000.0 >= c->minibatch_ms)))
            err = svc->replica ? publish_batch(svc, errstr, errstr_size)
                               : train_batch(svc, 0, errstr, errstr_size);
        if (!err && svc->replica && !svc->ndocs && !svc->ninputs && svc->ntxn_offs &&
            (t - svc->txn_start) * 1000.0 >= c->minibatch_ms)
            err = commit_txn(svc, errstr, errstr_size); /* a quiet stream: no record waits */
        if (!err && snapshot_due(svc, t))
            err = svc->replica ? replica_snapshot(svc, errstr, errstr_size)
                               : snapshot(svc, 0, errstr, errstr_size);
        slda_ksink_poll(svc->sink);
        if (!err)
            err = fatal(svc, errstr, errstr_size);
        flow(svc, t);
        if (c->status_ms && (t - svc->last_status) * 1000.0 >= c->status_ms) {
            status(svc);
            svc->last_status = t;
        }
        if (svc->page && t - svc->last_page >= 2 * PAGE_S)
            page_publish(svc); /* status and lags move while idle too */
    }
    release_pending(svc);
    if (err) { /* no final snapshot: the last good one stays authoritative */
        svc->failed = 1;
        return err;
    }
    slda_log(svc->metrics, SLDA_LOG_INFO, NULL, "stopping: final minibatch and snapshot");
    if (svc->replica) {
        err = publish_batch(svc, errstr, errstr_size);
        if (!err)
            err = commit_txn(svc, errstr, errstr_size);
        if (!err)
            err = replica_catch_up(svc, NULL, c->shutdown_timeout_ms / 1000.0, errstr,
                                   errstr_size);
        if (!err)
            err = replica_snapshot(svc, errstr, errstr_size);
        if (!err)
            slda_log(svc->metrics, SLDA_LOG_INFO, NULL,
                     "replica: final update=%" PRIu64 " docs=%" PRIu64 " tokens=%" PRIu64
                     " digest=%016" PRIx64, slda_model_updates(svc->model),
                     slda_model_docs(svc->model), slda_model_tokens(svc->model),
                     slda_model_digest(svc->model));
        if (!err)
            err = fatal(svc, errstr, errstr_size);
        svc->failed = err != SLDA_OK;
        status(svc);
        return err;
    }
    err = snapshot(svc, 1, errstr, errstr_size);
    if (!err)
        err = fatal(svc, errstr, errstr_size);
    if (!err && svc->deferred)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                           "final snapshot not written: %zu dead-letter/output record(s) still "
                           "undelivered after shutdown.timeout.ms=%u, or snapshot.dir not "
                           "writable (see the log); nothing was committed past the last "
                           "snapshot, which stays authoritative",
                           slda_ksink_undelivered(svc->sink), c->shutdown_timeout_ms);
    svc->failed = err != SLDA_OK;
    status(svc);
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
    track_stop(svc);
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
    heldout_staged(svc, STAGED_DROP);
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
