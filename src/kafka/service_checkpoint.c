/* service_checkpoint.c - restore, snapshots (model + offsets), commits; snapshot.dir and its lock.
 *
 * At start the model's lock is taken and the newest snapshot that loads is
 * restored. A snapshot is taken at a minibatch boundary: the open minibatch
 * trained, every dead-letter and output record delivered, the consumer's
 * positions stored in the model, (transactional) the transaction committed,
 * the file written atomically and older ones pruned, the snapshot published,
 * (otherwise) exactly its offsets committed. A replica that holds the lock
 * writes the replica's snapshots and prunes the update log behind them.
 */
#include "kafka/service_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RETRY_S 0.5           /* pause before a deferred snapshot is tried again */

/* ---- snapshot files: <dir>/<model>-<updates, 20 digits>.slda (io/snapdir.h) ---- */

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
        if (!slda_snapdir_is_temp(de->d_name, svc->conf->model_name))
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

/* Lock the model's snapshots, then restore the newest one that loads. Every
 * file of the model is tried (newest first): the ones that load are noted as
 * prunable, the others are left alone with a warning. When files exist and
 * none loads, starting a new model would retrain from the committed offsets
 * and drop what they hold: refused unless snapshot.fresh. *model stays NULL
 * when there is nothing to restore. */
slda_err_t slda_svc_restore_newest(slda_service_t *svc, slda_model_t **out, char *errstr,
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
    return slda_svc_load_newest(svc, 0, out, errstr, errstr_size);
}

/* slda_svc_restore_newest's reading: the newest snapshot of the model in snapshot.dir
 * that loads (the others noted as prunable or left alone), reconciled with
 * this run's configuration, and recorded as the one restored (svc->restored).
 * Only one of at least min_updates updates is taken (a restarting replica's
 * second look, reload_newer): else *out stays NULL and nothing is recorded. */
slda_err_t slda_svc_load_newest(slda_service_t *svc, uint64_t min_updates, slda_model_t **out,
                                char *errstr, size_t errstr_size)
{
    const char *dir = svc->conf->snapshot_dir;
    slda_err_t e;
    *out = NULL;
    size_t bad = 0;
    slda_snapdir_list_t list; /* oldest first: read from the newest */
    slda_snapdir_list(&list, dir, svc->conf->model_name, NULL, 0);
    const slda_snapdir_ent_t *files = list.ents;
    slda_model_t *model = NULL;
    char first_err[700] = "";
    for (size_t i = list.n; i-- > 0;) {
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
        uint32_t icu = slda_tokenizer_icu_trained(slda_model_tokenizer(model));
        if (icu)
            slda_log(svc->metrics, SLDA_LOG_WARN, NULL,
                     "%s was made with ICU %u, this program has ICU %u: Chinese, Japanese and "
                     "Thai words may be cut differently (text.segment=unicode)",
                     files[i].path, icu, slda_tokenizer_icu_major());
    }
    slda_snapdir_list_clear(&list);
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

static int prune_known(void *opaque, uint64_t updates)
{
    return good_has(opaque, updates);
}

static void prune_removed(void *opaque, uint64_t updates, const char *error)
{
    slda_service_t *svc = opaque;
    if (error)
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-prune", "%s", error);
    else
        good_remove(svc, updates);
}

/* Keep the newest `keep` snapshots of the model that are known to load
 * (restored, verified at start, or written by this process), each with its
 * tracking state, and snapshot.history older ones thinned with age (io/snapdir.c);
 * files that do not load, and other models' files, are never touched. (A
 * replica prunes the update log below its `keep`-th newest snapshot: an older
 * one kept for the history is for reports, not to restore from.) */
static void prune_snapshots(slda_service_t *svc)
{
    size_t keep = svc->conf->snapshot_keep ? svc->conf->snapshot_keep : 1;
    slda_snapdir_prune_cb_t cb = {prune_known, prune_removed, svc};
    slda_snapdir_prune_thin(svc->conf->snapshot_dir, svc->conf->model_name, keep,
                            svc->conf->snapshot_history, &cb, NULL, 0);
}

/* ---- snapshots ---- */

#define MIN_GAP_EVERY 4 /* the longest gap a hold imposes, in snapshot.every.ms intervals */

/* Due: snapshot.every.batches minibatches trained, or snapshot.every.ms passed and at least as
 * long as the last snapshot held the service for its deliveries (min_gap: when deliveries are
 * slow, holds and training alternate, and each hold costs at most as much time as the training
 * before it; else a hold of about a round trip to the brokers came after every minibatch or
 * two: 20 documents/s). A snapshot that holds the service is tried again as soon as its records
 * are delivered, one deferred for the disk every RETRY_S. */
int slda_svc_snapshot_due(const slda_service_t *svc, double t)
{
    const slda_conf_t *c = svc->conf;
    if (!svc->dirty && !svc->ndocs)
        return 0;
    if (svc->awaiting && !slda_ksink_undelivered(svc->sink))
        return 1;
    if (svc->deferred)
        return t >= svc->retry_at;
    double gap = c->snapshot_every_ms / 1000.0;
    if (gap < svc->min_gap)
        gap = svc->min_gap;
    return (c->snapshot_every_batches && svc->batches_since >= c->snapshot_every_batches) ||
           (c->snapshot_every_ms && t - svc->last_snapshot >= gap);
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
    slda_snapdir_path(path, sizeof path, svc->conf->snapshot_dir, svc->conf->model_name,
                      slda_model_updates(svc->model));
    slda_svc_track_snapshot(svc, path);
    slda_snapshot_meta_t meta = {.event_ms = slda_track_newest(svc->track)};
    if (slda_snapshot_write_meta(svc->model, &meta, path, err, sizeof err)) {
        char side[4200]; /* the state written for it: none without its snapshot */
        slda_snapdir_track_path(side, sizeof side, path);
        if (access(path, F_OK)) /* (one of the same update count may be there already) */
            unlink(side);
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
slda_err_t slda_svc_snapshot(slda_service_t *svc, int final, char *errstr, size_t errstr_size)
{
    /* Still waiting for the brokers: keep the minibatch open (its composition
     * should not depend on how long they are away). */
    if (svc->deferred && !final && !slda_ksink_drain(svc->sink, 0)) {
        defer(svc);
        return SLDA_OK;
    }
    slda_err_t err = slda_svc_train_batch(svc, 0, errstr, errstr_size);
    if (err || !svc->dirty)
        return err;
    if (!slda_ksink_drain(svc->sink, final ? (int)svc->conf->shutdown_timeout_ms : 100)) {
        defer(svc);
        if (!svc->awaiting) { /* no new minibatch or message until delivered (service.c) */
            svc->awaiting = 1;
            svc->awaiting_since = slda_mono_s();
        }
        slda_log(svc->metrics, SLDA_LOG_WARN, "snapshot-deferred",
                 "snapshot deferred: dead-letter/output records not yet delivered");
        return SLDA_OK;
    }
    double held = svc->awaiting ? slda_mono_s() - svc->awaiting_since : 0;
    /* (at most MIN_GAP_EVERY intervals: a hold through a broker outage says nothing about
     * how slow deliveries are once it is over) */
    double cap = MIN_GAP_EVERY * svc->conf->snapshot_every_ms / 1000.0;
    svc->min_gap = held < cap ? held : cap;
    if (held > 0)
        slda_metrics_add(svc->metrics, SLDA_M_SNAPSHOT_WAIT_US, (uint64_t)(held * 1e6));
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
        slda_svc_track_snapshot(svc, NULL);
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_SECONDS, slda_mono_s() - t0);
    if (svc->conf->snapshot_topic && *svc->conf->snapshot_topic)
        publish_snapshot(svc, &bytes);
    slda_metrics_set(svc->metrics, SLDA_G_SNAPSHOT_BYTES, bytes);
    slda_err_t committed = SLDA_OK;
    if (!slda_ksink_transactional(svc->sink)) {
        char err3[512];
        committed = slda_ksource_commit(svc->src, offs, n, final, err3, sizeof err3);
        if (committed)
            slda_log(svc->metrics, SLDA_LOG_WARN, "kafka-commit", "%s", err3);
    }
    svc->dirty = 0;
    svc->batches_since = 0;
    svc->last_snapshot = slda_mono_s();
    if (committed == SLDA_ERR_STOPPED) /* the final commit, cut short: say so in the exit */
        return slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                            "final snapshot written; a second signal ended the wait for the "
                            "group coordinator, so its offsets may not be committed (a restart "
                            "starts from the snapshot's offsets)");
    return SLDA_OK;
}

/* The snapshot writer (the holder of snapshot.dir's lock; a replica that is
 * not tries to become it) writes the replica with its log position, keeps
 * snapshot.keep files and prunes the log below the oldest one it keeps. */
slda_err_t slda_svc_replica_snapshot(slda_service_t *svc, char *errstr, size_t errstr_size)
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
            slda_snapdir_list_t list; /* the previous writer's files: written whole (rename),
                                       * prunable */
            slda_snapdir_list(&list, dir, svc->conf->model_name, NULL, 0);
            for (size_t i = list.n; i-- > 0;)
                good_add(svc, list.ents[i].updates);
            slda_snapdir_list_clear(&list);
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
