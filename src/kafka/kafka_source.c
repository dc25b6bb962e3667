/* kafka_source.c - the consumer: group membership, positions, commits, health.
 *
 * Invariants: enable.auto.commit and enable.auto.offset.store are off, so
 * Kafka only learns offsets through slda_ksource_commit, which the service
 * calls for documents already inside a durable snapshot. `pos` holds, per
 * partition, the next offset after everything handed to the service (seeded
 * from the restored snapshot): on every assignment a partition is positioned
 * there, so a rebalance never skips or repeats a message. All callbacks
 * (rebalance, error, stats, offset commit) are served from
 * rd_kafka_consumer_poll on the service thread, except the log callback,
 * which librdkafka calls from its own threads (slda_log is thread-safe).
 * rd_kafka_consumer_close serves them too, while the group is closing: so no
 * callback calls into the group (rd_kafka_assignment waits for the group's
 * thread, which waits for the close: a replica that could not reach its
 * broker never exited). The statistics callback's lag, pausing and
 * rewinding read `owned`, the assignment as the rebalance callback left it.
 * A second signal (SLDA_STOP_NOW) cuts a synchronous commit and the close short;
 * rd_kafka_destroy would still wait for the group's coordinator (until the
 * session times out), so the handle is then left to the process's exit,
 * detached: its log callback, the only one librdkafka calls by itself, does
 * nothing from then on and slda_ksource_destroy waits until none runs.
 */
#include "kafka/kafka.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct slda_ksource_s {
    rd_kafka_t *rk;
    slda_metrics_t *metrics;
    slda_offset_t *pos; /* next offset per (topic, partition) */
    int64_t *replay_end; /* per pos entry: the group's committed offset when the
                            partition was assigned, if ahead of pos (else -1) */
    size_t npos, cappos;
    int brokers_up;     /* from the last statistics: brokers in state UP */
    int have_stats;
    rd_kafka_topic_partition_list_t *owned; /* the assignment, kept by on_rebalance */
    double assigned_t;  /* slda_mono_s() of the last assignment by the group, or of the last
                           resume if later (a paused partition is not fetched) */
    double renewed_t;   /* the last renewal by renew_unfetched */
    int unfetched;      /* owned partitions with no fetch response yet (consumer_lag) */
    double refetch_s;   /* health.stall.ms: unfetched this long, the assignment is renewed */
    int paused;         /* consumption paused (the service's backpressure) */
    int replica;        /* updates.topic: one of the model's replicas (replica.c) */
    uint64_t generation; /* rebalances seen (assignments and revocations) */
    int gapless;        /* the embedded cluster: an offset past a position is a loss */
    volatile int *stop; /* slda_ksource_set_stop's flag (NULL before): slda_stop_now */
    atomic_int detached; /* the handle is left to the process's exit: on_log does nothing */
    atomic_int in_log;   /* on_log calls running (librdkafka's threads) */
    char fatal[600];    /* non-empty after a fatal consumer error */
};

/* Index of (topic, partition) in pos, adding it with offset -1 when absent. */
static size_t pos_find(slda_ksource_t *src, const char *topic, int32_t partition, int add)
{
    for (size_t i = 0; i < src->npos; i++)
        if (src->pos[i].partition == partition && !strcmp(src->pos[i].topic, topic))
            return i;
    if (!add)
        return SIZE_MAX;
    if (src->npos == src->cappos) {
        src->cappos = src->cappos ? 2 * src->cappos : 16;
        src->pos = slda_xrealloc(src->pos, src->cappos * sizeof *src->pos);
        src->replay_end = slda_xrealloc(src->replay_end, src->cappos * sizeof *src->replay_end);
    }
    src->replay_end[src->npos] = -1;
    slda_offset_t *o = &src->pos[src->npos];
    memset(o, 0, sizeof *o);
    snprintf(o->topic, sizeof o->topic, "%s", topic);
    o->partition = partition;
    o->offset = -1;
    return src->npos++;
}

/* For assigned partitions positioned from our table (a restored snapshot):
 * the group's committed offset, when it is ahead. Messages below it are
 * replays whose dead letters and outputs were already delivered (committed
 * offsets never pass undelivered records; in transactional mode they were
 * committed with them), so the service trains them without producing again. */
static void note_replays(slda_ksource_t *src, const rd_kafka_topic_partition_list_t *parts)
{
    rd_kafka_topic_partition_list_t *ask = rd_kafka_topic_partition_list_new(parts->cnt + 1);
    for (int i = 0; i < parts->cnt; i++) {
        size_t k = pos_find(src, parts->elems[i].topic, parts->elems[i].partition, 0);
        if (k != SIZE_MAX && src->pos[k].offset >= 0)
            rd_kafka_topic_partition_list_add(ask, parts->elems[i].topic,
                                              parts->elems[i].partition);
    }
    if (ask->cnt) {
        rd_kafka_resp_err_t err = rd_kafka_committed(src->rk, ask, 10000);
        if (err)
            slda_log(src->metrics, SLDA_LOG_WARN, NULL,
                     "kafka: committed offsets unknown (%s): records of replayed messages may "
                     "be produced twice", rd_kafka_err2str(err));
        for (int i = 0; !err && i < ask->cnt; i++) {
            const rd_kafka_topic_partition_t *p = &ask->elems[i];
            size_t k = pos_find(src, p->topic, p->partition, 0);
            if (p->err || p->offset < 0 || k == SIZE_MAX)
                continue;
            src->replay_end[k] = p->offset > src->pos[k].offset ? p->offset : -1;
            if (src->replay_end[k] >= 0)
                slda_log(src->metrics, SLDA_LOG_INFO, NULL,
                         "kafka: %s [%d] offsets %" PRId64 "..%" PRId64 " are replayed from the "
                         "snapshot; their records were already delivered",
                         p->topic, (int)p->partition, src->pos[k].offset, p->offset - 1);
        }
    }
    rd_kafka_topic_partition_list_destroy(ask);
}

/* Each partition of parts to start at our position, or where the group committed
 * (RD_KAFKA_OFFSET_INVALID) when we have none. */
static void set_positions(slda_ksource_t *src, rd_kafka_topic_partition_list_t *parts)
{
    for (int i = 0; i < parts->cnt; i++) {
        rd_kafka_topic_partition_t *p = &parts->elems[i];
        size_t k = pos_find(src, p->topic, p->partition, 0);
        p->offset = (k != SIZE_MAX && src->pos[k].offset >= 0) ? src->pos[k].offset
                                                               : RD_KAFKA_OFFSET_INVALID;
    }
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    slda_ksource_t *src = opaque;
    int cooperative = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
    src->generation++;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        note_replays(src, parts);
        set_positions(src, parts);
        rd_kafka_error_t *e = NULL;
        rd_kafka_resp_err_t r = RD_KAFKA_RESP_ERR_NO_ERROR;
        if (cooperative)
            e = rd_kafka_incremental_assign(rk, parts);
        else
            r = rd_kafka_assign(rk, parts);
        if (e || r) {
            slda_log(src->metrics, SLDA_LOG_ERR, "kafka-assign", "kafka: assign failed: %s",
                     e ? rd_kafka_error_string(e) : rd_kafka_err2str(r));
            slda_metrics_add(src->metrics, SLDA_M_KAFKA_ERRORS, 1);
            rd_kafka_error_destroy(e);
        }
        if (!cooperative || !src->owned) {
            if (src->owned)
                rd_kafka_topic_partition_list_destroy(src->owned);
            src->owned = rd_kafka_topic_partition_list_copy(parts);
        } else {
            for (int i = 0; i < parts->cnt; i++)
                if (!rd_kafka_topic_partition_list_find(src->owned, parts->elems[i].topic,
                                                        parts->elems[i].partition))
                    rd_kafka_topic_partition_list_add(src->owned, parts->elems[i].topic,
                                                      parts->elems[i].partition);
        }
        /* librdkafka keeps a partition's pause through a revocation and its assignment
         * again: a resume while nothing was assigned (a session timed out during a hold)
         * left it paused for good (0013 once read nothing more for 4 minutes) */
        if (src->paused)
            rd_kafka_pause_partitions(rk, parts);
        else
            rd_kafka_resume_partitions(rk, parts);
        slda_metrics_set_health(src->metrics, 1, NULL);
        src->assigned_t = slda_mono_s();
        slda_log(src->metrics, SLDA_LOG_INFO, NULL, "kafka: assigned %d partition(s)", parts->cnt);
    } else {
        if (cooperative)
            rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
        else
            rd_kafka_assign(rk, NULL);
        for (int i = 0; src->owned && i < parts->cnt; i++)
            rd_kafka_topic_partition_list_del(src->owned, parts->elems[i].topic,
                                              parts->elems[i].partition);
        /* A replica's model holds what the updates log holds, and the group's committed
         * offsets are exactly what that is: a revoked partition assigned again starts from
         * them, not from where this member left it. Ahead of them are documents it read
         * but dropped (kept, they were never read again while later offsets of the
         * partition were committed: documents lost); behind them, documents another member
         * has published since (kept, they were trained twice). */
        for (int i = 0; src->replica && i < parts->cnt; i++) {
            size_t k = pos_find(src, parts->elems[i].topic, parts->elems[i].partition, 0);
            if (k != SIZE_MAX)
                src->pos[k].offset = -1;
        }
        slda_log(src->metrics, SLDA_LOG_INFO, NULL, "kafka: revoked %d partition(s)", parts->cnt);
    }
    slda_metrics_set(src->metrics, SLDA_G_PARTITIONS, slda_ksource_assigned(src));
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    slda_ksource_t *src = opaque;
    char key[64];
    snprintf(key, sizeof key, "kafka-error-%s", rd_kafka_err2name((rd_kafka_resp_err_t)err));
    slda_metrics_add(src->metrics, SLDA_M_KAFKA_ERRORS, 1);
    slda_log(src->metrics, SLDA_LOG_WARN, key, "kafka consumer: %s: %s",
             rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        slda_metrics_set_health(src->metrics, 0, "all brokers down");
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char why[512];
        rd_kafka_fatal_error(rk, why, sizeof why);
        snprintf(src->fatal, sizeof src->fatal, "fatal Kafka consumer error: %s", why);
        slda_metrics_set_health(src->metrics, 0, src->fatal);
    }
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    slda_ksource_t *src = rd_kafka_opaque(rk);
    atomic_fetch_add(&src->in_log, 1);
    if (!atomic_load(&src->detached)) {
        char key[64];
        snprintf(key, sizeof key, "rdkafka-consumer-%s", fac);
        slda_log(src->metrics, level <= 3 ? SLDA_LOG_ERR : SLDA_LOG_WARN, key,
                 "kafka consumer: %s: %s", fac, buf);
    }
    atomic_fetch_sub(&src->in_log, 1);
}

/* Messages between each assigned partition's position and its high
 * watermark, summed over the partitions fetched at least once; -1 when none
 * has been. A partition librdkafka has no watermarks for (no fetch response
 * since it was assigned: its leader unreachable, its fetcher stuck) has no
 * known lag: it is counted in src->unfetched instead of passing for 0, so
 * /healthz can name it (service_flow.c) rather than report a caught-up
 * consumer while one partition is never read. */
static int64_t consumer_lag(slda_ksource_t *src)
{
    const rd_kafka_topic_partition_list_t *parts = src->owned;
    src->unfetched = 0;
    if (!parts)
        return -1;
    int64_t lag = 0;
    int known = 0;
    for (int i = 0; i < parts->cnt; i++) {
        int64_t lo, hi;
        const rd_kafka_topic_partition_t *p = &parts->elems[i];
        size_t k = pos_find(src, p->topic, p->partition, 0);
        if (rd_kafka_get_watermark_offsets(src->rk, p->topic, p->partition, &lo, &hi) || hi < 0) {
            src->unfetched++;
            continue;
        }
        int64_t pos = k != SIZE_MAX && src->pos[k].offset >= 0 ? src->pos[k].offset : lo;
        lag += hi > pos ? hi - pos : 0;
        known = 1;
    }
    return known ? lag : -1;
}

int slda_ksource_unfetched(const slda_ksource_t *src, double *since)
{
    if (since)
        *since = src->assigned_t;
    return src->owned ? src->unfetched : 0;
}

/* Statistics (statistics.interval.ms): broker states for /healthz and the
 * lag gauge. */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    slda_ksource_t *src = opaque;
    int up = 0;
    for (const char *p = strstr(json, "\"nodeid\":"); p; p = strstr(p + 9, "\"nodeid\":")) {
        if (strtol(p + 9, NULL, 10) < 0)
            continue; /* bootstrap placeholder */
        const char *st = strstr(p, "\"state\":\"");
        if (st && !strncmp(st + 9, "UP", 2))
            up++;
    }
    src->brokers_up = up;
    src->have_stats = 1;
    slda_metrics_set(src->metrics, SLDA_G_LAG, (double)consumer_lag(src));
    slda_metrics_set(src->metrics, SLDA_G_UNFETCHED, (double)src->unfetched);
    if (up > 0) {
        slda_metrics_set_health(src->metrics, 1, NULL);
        slda_log_reset(src->metrics, "kafka-error-_ALL_BROKERS_DOWN");
        slda_log_reset(src->metrics, "kafka-error-_TRANSPORT");
    } else
        slda_metrics_set_health(src->metrics, 0, "no broker connection");
    return 0; /* librdkafka frees json */
}

static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    slda_ksource_t *src = opaque;
    if (err == RD_KAFKA_RESP_ERR__NO_OFFSET)
        return;
    if (err) {
        slda_metrics_add(src->metrics, SLDA_M_KAFKA_ERRORS, 1);
        slda_log(src->metrics, SLDA_LOG_WARN, "kafka-commit",
                 "kafka: offset commit failed: %s (retried with the next snapshot)",
                 rd_kafka_err2str(err));
    } else
        slda_log_reset(src->metrics, "kafka-commit");
}

/* Set name=value, reporting librdkafka's reason under the full key. */
static int conf_set(rd_kafka_conf_t *rconf, const char *name, const char *value, char *errstr,
                    size_t errstr_size)
{
    char rderr[512];
    if (rd_kafka_conf_set(rconf, name, value, rderr, sizeof rderr) == RD_KAFKA_CONF_OK)
        return 0;
    slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"kafka.%s\": %s", name, rderr);
    return -1;
}

static rd_kafka_conf_t *consumer_conf(const slda_conf_t *conf, const char *bootstrap,
                                      slda_ksource_t *src, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *rconf = rd_kafka_conf_new();
    char group[300];
    snprintf(group, sizeof group, "streamlda-%s", conf->model_name ? conf->model_name : "default");
    /* Defaults first, so the user's kafka.* win; then what correctness needs. */
    if (conf_set(rconf, "group.id", group, errstr, errstr_size) ||
        conf_set(rconf, "auto.offset.reset", "earliest", errstr, errstr_size) ||
        conf_set(rconf, "statistics.interval.ms", "1000", errstr, errstr_size))
        goto fail;
    for (size_t i = 0; i < slda_conf_kafka_count(conf); i++) {
        const char *n, *v;
        slda_conf_kafka_get(conf, i, &n, &v);
        if (!strcmp(n, "transactional.id") || !strncmp(n, "transaction.", 12) ||
            (bootstrap && !strcmp(n, "bootstrap.servers")))
            continue; /* producer-only / replaced by the embedded cluster */
        if (conf_set(rconf, n, v, errstr, errstr_size))
            goto fail;
    }
    if ((bootstrap && conf_set(rconf, "bootstrap.servers", bootstrap, errstr, errstr_size)) ||
        conf_set(rconf, "enable.auto.commit", "false", errstr, errstr_size) ||
        conf_set(rconf, "enable.auto.offset.store", "false", errstr, errstr_size) ||
        conf_set(rconf, "enable.partition.eof", "false", errstr, errstr_size))
        goto fail;
    if (conf->updates_topic && *conf->updates_topic) {
        /* Replicas: members are told apart from other instances of the model by
         * client.id (check_alone); committed offsets are read only once stable
         * (read_committed: KIP-447), and a rebalance revokes every partition so
         * a dropped minibatch is read again from the committed offsets. */
        char cid[300];
        snprintf(cid, sizeof cid, "%s%s", SLDA_REPLICA_CLIENT, conf->model_name);
        char strategy[200] = "";
        size_t ss = sizeof strategy;
        rd_kafka_conf_get(rconf, "partition.assignment.strategy", strategy, &ss);
        if (strstr(strategy, "cooperative")) {
            slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                         "kafka.partition.assignment.strategy=%s: replicas (updates.topic) need "
                         "an eager strategy (range, roundrobin)", strategy);
            goto fail;
        }
        if (conf_set(rconf, "client.id", cid, errstr, errstr_size) ||
            conf_set(rconf, "isolation.level", "read_committed", errstr, errstr_size))
            goto fail;
    }
    rd_kafka_conf_set_rebalance_cb(rconf, on_rebalance);
    rd_kafka_conf_set_error_cb(rconf, on_error);
    rd_kafka_conf_set_log_cb(rconf, on_log);
    rd_kafka_conf_set_offset_commit_cb(rconf, on_commit);
    rd_kafka_conf_set_stats_cb(rconf, on_stats);
    rd_kafka_conf_set_opaque(rconf, src);
    return rconf;
fail:
    rd_kafka_conf_destroy(rconf);
    return NULL;
}

static rd_kafka_topic_partition_list_t *topic_list(const char *topics)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(4);
    char *copy = slda_xstrdup(topics), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        rd_kafka_topic_partition_list_add(list, t, RD_KAFKA_PARTITION_UA);
    free(copy);
    return list;
}

/* One model, one instance: a second `streamlda run` in the model's consumer
 * group would be handed part of the input partitions and learn a second,
 * different model from them, while each commits what it read (issue seen:
 * two instances, one killed -9, counted 30,541 and 30,207 of 30,000
 * documents). So before joining, the group must have no member: members that
 * stay longer than session.timeout.ms (plus 3 s) belong to a live instance
 * and the start is refused; a killed instance's membership lapses within that
 * time. Replicas (updates.topic, replica_id = their client.id) share the
 * group with replicas of the same model and refuse any other member; an
 * instance without updates.topic refuses replicas too. A broker without DescribeGroups (librdkafka's mock cluster) or one
 * that cannot answer now lets the start go on, with a log line. The question
 * goes through a probe handle of its own with socket.timeout.ms=5000:
 * rd_kafka_list_groups waits for its requests without a deadline of its own,
 * so on the consumer (default 60 s) one lost request held the start for a
 * minute (seen once against a broker just started). */
static slda_err_t check_alone(slda_ksource_t *src, rd_kafka_t *rk, const char *group,
                              const char *replica_id, double session_s, volatile int *stop,
                              char *errstr, size_t errstr_size)
{
    double deadline = slda_mono_s() + session_s + 3.0;
    int waited = 0;
    for (;;) {
        if (slda_stopping(stop))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                                "stopped while waiting for consumer group %s to have no "
                                "other member", group);
        const struct rd_kafka_group_list *gl = NULL;
        rd_kafka_resp_err_t e;
        double asked = slda_mono_s();
        do /* up to 5 s, a second at a time so a stop request is seen */
            e = rd_kafka_list_groups(rk, group, &gl, 1000);
        while (e == RD_KAFKA_RESP_ERR__TIMED_OUT && slda_mono_s() < asked + 5.0 &&
               !slda_stopping(stop));
        if (e && slda_stopping(stop))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                                "stopped while asking whether consumer group %s has other "
                                "members", group);
        if (e) {
            slda_log(src->metrics, e == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE ? SLDA_LOG_INFO
                                                                          : SLDA_LOG_WARN,
                     NULL, "kafka: cannot check that consumer group %s has no other member: %s",
                     group, rd_kafka_err2str(e));
            return SLDA_OK;
        }
        int members = 0;
        char who[512] = "";
        for (int i = 0; i < gl->group_cnt; i++) {
            const struct rd_kafka_group_info *g = &gl->groups[i];
            if (strcmp(g->group, group) || g->err || !strcmp(g->state, "Empty") ||
                !strcmp(g->state, "Dead"))
                continue;
            for (int j = 0; j < g->member_cnt; j++) {
                /* replicas share the group with replicas of the same model only */
                if (replica_id && !strcmp(g->members[j].client_id, replica_id))
                    continue;
                members++;
                size_t used = strlen(who);
                snprintf(who + used, sizeof who - used, "%s%s@%s", used ? ", " : "",
                         g->members[j].client_id, g->members[j].client_host);
            }
        }
        rd_kafka_group_list_destroy(gl);
        if (members == 0) {
            if (waited)
                slda_log(src->metrics, SLDA_LOG_INFO, NULL,
                         "kafka: consumer group %s is empty now: starting", group);
            return SLDA_OK;
        }
        if (slda_mono_s() >= deadline)
            return slda_set_err(
                errstr, errstr_size, SLDA_ERR_INVALID,
                "consumer group %s already has %d member(s) (%s) after %.0f s: another instance "
                "of this model is running%s. One instance learns a model; a second one in the "
                "same group would learn a second, different model from part of the input. Stop "
                "the other instance, give this one another model.name, or run every instance "
                "as a replica with the same updates.topic (docs/service.md, \"One instance per "
                "model\"; docs/replication.md)",
                group, members, who, session_s + 3.0,
                replica_id ? " without updates.topic" : "");
        if (!waited)
            slda_log(src->metrics, SLDA_LOG_WARN, NULL,
                     "kafka: consumer group %s has %d member(s) (%s): waiting up to %.0f s for "
                     "them to leave (a stopped instance's membership lasts session.timeout.ms)",
                     group, members, who, session_s + 3.0);
        waited = 1;
        for (int i = 0; i < 10 && !slda_stopping(stop); i++)
            usleep(100000);
    }
}

slda_ksource_t *slda_ksource_new(const slda_conf_t *conf, const char *bootstrap,
                                 const slda_offset_t *positions, size_t npositions,
                                 slda_metrics_t *metrics, volatile int *stop, char *errstr,
                                 size_t errstr_size)
{
    slda_ksource_t *src = slda_xcalloc(1, sizeof *src);
    src->metrics = metrics;
    for (size_t i = 0; i < npositions; i++)
    {
        size_t k = pos_find(src, positions[i].topic, positions[i].partition, 1);
        src->pos[k].offset = positions[i].offset;
    }
    src->replica = conf->updates_topic && *conf->updates_topic;
    src->refetch_s = conf->health_stall_ms / 1000.0;
    src->gapless = bootstrap && !src->replica; /* (a replica's log holds transaction markers) */
    rd_kafka_conf_t *rconf = consumer_conf(conf, bootstrap, src, errstr, errstr_size);
    if (!rconf)
        goto fail;
    char rderr[512], group[300] = "", session[32] = "45000";
    size_t gsize = sizeof group, ssize = sizeof session;
    rd_kafka_conf_get(rconf, "group.id", group, &gsize);
    rd_kafka_conf_get(rconf, "session.timeout.ms", session, &ssize);
    rd_kafka_conf_t *pconf = rd_kafka_conf_dup(rconf); /* the probe of check_alone */
    rd_kafka_t *probe = NULL;
    if (rd_kafka_conf_set(pconf, "socket.timeout.ms", "5000", rderr, sizeof rderr) ==
            RD_KAFKA_CONF_OK &&
        (probe = rd_kafka_new(RD_KAFKA_CONSUMER, pconf, rderr, sizeof rderr)) != NULL) {
        char cid[300];
        snprintf(cid, sizeof cid, "%s%s", SLDA_REPLICA_CLIENT, conf->model_name);
        slda_err_t alone = check_alone(src, probe, group, src->replica ? cid : NULL,
                                       atof(session) / 1000.0, stop, errstr, errstr_size);
        rd_kafka_destroy(probe);
        if (alone != SLDA_OK)
            goto fail;
    } else {
        rd_kafka_conf_destroy(pconf);
        slda_log(metrics, SLDA_LOG_WARN, NULL,
                 "kafka: cannot check that consumer group %s has no other member: %s", group,
                 rderr);
    }
    src->rk = rd_kafka_new(RD_KAFKA_CONSUMER, rconf, rderr, sizeof rderr);
    if (!src->rk) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "kafka consumer: %s", rderr);
        goto fail; /* rd_kafka_new freed nothing: the conf is ours on failure */
    }
    rd_kafka_poll_set_consumer(src->rk);
    rd_kafka_topic_partition_list_t *list = topic_list(conf->input_topics ? conf->input_topics : "");
    if (list->cnt == 0) {
        rd_kafka_topic_partition_list_destroy(list);
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"input.topics\": empty");
        goto fail;
    }
    rd_kafka_resp_err_t err = rd_kafka_subscribe(src->rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (err) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "input.topics \"%s\": %s",
                     conf->input_topics, rd_kafka_err2str(err));
        goto fail;
    }
    return src;
fail:
    if (src->rk)
        rd_kafka_destroy(src->rk);
    else if (rconf)
        rd_kafka_conf_destroy(rconf);
    if (src->owned)
        rd_kafka_topic_partition_list_destroy(src->owned);
    free(src->pos);
    free(src->replay_end);
    free(src);
    return NULL;
}

void slda_ksource_set_stop(slda_ksource_t *src, volatile int *stop)
{
    src->stop = stop;
}

/* rd_kafka_consumer_close waits for the group coordinator without a limit of its own (with
 * every broker down: until the session times out, 45 s by default), so the close goes through
 * a queue served here in slices, and a second signal (SLDA_STOP_NOW) ends the wait. Returns 1
 * when it did: the close is unfinished (the group drops the member when its session times
 * out; the offsets were committed, or not, before). */
static int close_consumer(slda_ksource_t *src)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(src->rk);
    rd_kafka_error_t *e = rd_kafka_consumer_close_queue(src->rk, q);
    if (e) {
        slda_log(src->metrics, SLDA_LOG_WARN, NULL, "kafka: consumer close: %s",
                 rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        rd_kafka_queue_destroy(q);
        return 0;
    }
    /* the consumer's whole queue comes here (messages and errors too, dropped): events, as
     * rd_kafka_consumer_close serves them, the revocation passed to on_rebalance */
    while (!rd_kafka_consumer_closed(src->rk) && !slda_stop_now(src->stop)) {
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 100);
        if (ev && rd_kafka_event_type(ev) == RD_KAFKA_EVENT_REBALANCE)
            on_rebalance(src->rk, rd_kafka_event_error(ev),
                         rd_kafka_event_topic_partition_list(ev), src);
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(q);
    return !rd_kafka_consumer_closed(src->rk);
}

void slda_ksource_destroy(slda_ksource_t *src)
{
    if (!src)
        return;
    int cut = close_consumer(src);
    if (src->owned)
        rd_kafka_topic_partition_list_destroy(src->owned);
    free(src->pos);
    free(src->replay_end);
    if (cut) { /* the handle (and src, its opaque) left to the process's exit */
        slda_log(src->metrics, SLDA_LOG_WARN, NULL,
                 "kafka: consumer close cut short by a second signal (the group drops this "
                 "member when its session times out)");
        atomic_store(&src->detached, 1);
        while (atomic_load(&src->in_log))
            sched_yield();
        return;
    }
    rd_kafka_destroy(src->rk);
    free(src);
}

/* msg came after a gap in its partition: from pos, the next offset expected (-1: none yet).
 * Counted lost (streamlda_lost_messages_total, an error in the log) are the messages the
 * cluster deleted before this consumer read them:
 *  - the embedded cluster numbers a partition's messages without gaps, from 0 (a new cluster):
 *    every offset skipped is a message its 5 MiB per partition pushed out unread;
 *  - a Kafka cluster has gaps of its own (transaction markers, compaction), but none below a
 *    partition's log start: when the position the service holds is below it, retention
 *    deleted those messages unread (librdkafka then resets to the earliest and says only
 *    "offset reset" in its log). Without a position (a model's first run) the stream starts
 *    at the log start and nothing is lost, but where it starts is said once: a cluster that
 *    deleted messages produced for this model just before (tests/0053 once lost 1,647 of its
 *    backlog so to the mock broker's retention, with nothing in the log) shows there. */
static void note_lost(slda_ksource_t *src, const slda_kmsg_t *msg, int64_t pos)
{
    int64_t from = pos >= 0 ? pos : 0, to = msg->offset, lo, hi;
    if (!src->gapless) {
        if (rd_kafka_get_watermark_offsets(src->rk, msg->topic, msg->partition, &lo, &hi) ||
            lo <= from)
            return;
        if (pos < 0) {
            slda_log(src->metrics, SLDA_LOG_INFO, NULL,
                     "kafka: %s [%d] starts at offset %" PRId64 ", its log start: the %" PRId64
                     " message(s) before it were deleted by the cluster before this model's "
                     "first run", msg->topic, (int)msg->partition, to, lo);
            return;
        }
        to = lo < to ? lo : to;
    }
    slda_metrics_add(src->metrics, SLDA_M_LOST, (uint64_t)(to - from));
    slda_log(src->metrics, SLDA_LOG_ERR, "kafka-lost",
             "%" PRId64 " message(s) of %s [%d] (offsets %" PRId64 "..%" PRId64 ") were "
             "deleted before they were read: %s (counted in streamlda_lost_messages_total)",
             to - from, msg->topic, (int)msg->partition, from, to - 1,
             src->gapless ? "the embedded cluster keeps about 5 MiB per partition; produce "
                            "more slowly or use a Kafka cluster"
                          : "the partition's log starts past them (retention.ms or "
                            "retention.bytes went faster than the service read)");
}

/* An assigned partition with no fetch response for health.stall.ms has been seen stuck in
 * librdkafka's start (0058 under load: one partition of four never fetched in 120 s, its
 * broker up, nothing logged; librdkafka has known states a partition does not leave, e.g.
 * an offset query whose answer was lost). The assignment is renewed from our positions, as
 * a rebalance would (the unfetched partitions only under the cooperative protocol; all
 * under the eager one, whose assign replaces the whole assignment): nothing is read twice
 * or skipped, since every partition starts at the next offset the model has not seen. Once
 * per stall period; a partition without a leader stays unfetched and /healthz says so. */
static void renew_unfetched(slda_ksource_t *src)
{
    double last = src->renewed_t > src->assigned_t ? src->renewed_t : src->assigned_t;
    if (!src->owned || src->unfetched == 0 || src->refetch_s <= 0 || src->paused ||
        slda_mono_s() - last < src->refetch_s)
        return;
    int cooperative = !strcmp(rd_kafka_rebalance_protocol(src->rk), "COOPERATIVE");
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(src->owned->cnt);
    char names[256] = "";
    size_t used = 0;
    for (int i = 0; i < src->owned->cnt; i++) {
        const rd_kafka_topic_partition_t *p = &src->owned->elems[i];
        int64_t lo, hi;
        int stuck = rd_kafka_get_watermark_offsets(src->rk, p->topic, p->partition, &lo, &hi) ||
                    hi < 0;
        if (stuck && used < sizeof names - 1)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s [%d]",
                                     used ? ", " : "", p->topic, (int)p->partition);
        if (stuck || !cooperative)
            rd_kafka_topic_partition_list_add(parts, p->topic, p->partition);
    }
    src->renewed_t = slda_mono_s();
    if (parts->cnt == 0) {
        rd_kafka_topic_partition_list_destroy(parts);
        return;
    }
    set_positions(src, parts);
    rd_kafka_error_t *e = NULL;
    rd_kafka_resp_err_t r = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (cooperative) {
        e = rd_kafka_incremental_unassign(src->rk, parts);
        if (!e)
            e = rd_kafka_incremental_assign(src->rk, parts);
    } else
        r = rd_kafka_assign(src->rk, parts);
    if (src->paused)
        rd_kafka_pause_partitions(src->rk, parts);
    slda_log(src->metrics, SLDA_LOG_WARN, "kafka-refetch",
             "kafka: %s had no fetch response in %.0f s (health.stall.ms): assigned again from "
             "the model's positions%s%s", names, src->refetch_s, e || r ? ": failed: " : "",
             e ? rd_kafka_error_string(e) : r ? rd_kafka_err2str(r) : "");
    rd_kafka_error_destroy(e);
    rd_kafka_topic_partition_list_destroy(parts);
}

int slda_ksource_poll(slda_ksource_t *src, int timeout_ms, slda_kmsg_t *msg)
{
    renew_unfetched(src);
    rd_kafka_message_t *m = rd_kafka_consumer_poll(src->rk, timeout_ms);
    if (!m)
        return 0;
    if (m->err) {
        char key[64];
        snprintf(key, sizeof key, "kafka-consume-%s", rd_kafka_err2name(m->err));
        slda_metrics_add(src->metrics, SLDA_M_KAFKA_ERRORS, 1);
        slda_log(src->metrics, SLDA_LOG_WARN, key, "kafka consumer: %s%s%s [%d]: %s",
                 rd_kafka_err2name(m->err), m->rkt ? " on " : "",
                 m->rkt ? rd_kafka_topic_name(m->rkt) : "", (int)m->partition,
                 rd_kafka_message_errstr(m));
        rd_kafka_message_destroy(m);
        return 0;
    }
    memset(msg, 0, sizeof *msg);
    msg->topic = rd_kafka_topic_name(m->rkt);
    msg->partition = m->partition;
    msg->offset = m->offset;
    msg->key = m->key;
    msg->keylen = m->key_len;
    msg->value = m->payload;
    msg->len = m->len;
    rd_kafka_timestamp_type_t tstype;
    int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    msg->timestamp_ms = ts > 0 ? ts : 0;
    msg->handle = m;
    size_t k = pos_find(src, msg->topic, msg->partition, 1); /* may move pos */
    if (m->offset > (src->pos[k].offset >= 0 ? src->pos[k].offset : 0))
        note_lost(src, msg, src->pos[k].offset);
    src->pos[k].offset = m->offset + 1;
    return 1;
}

void slda_ksource_release(slda_ksource_t *src, slda_kmsg_t *msg)
{
    if (msg && msg->handle) {
        rd_kafka_message_destroy(msg->handle);
        msg->handle = NULL;
    }
}

const slda_offset_t *slda_ksource_positions(const slda_ksource_t *src, size_t *n)
{
    *n = src->npos;
    return src->pos;
}

/* commit_wait's answer. */
typedef struct {
    int done;
    rd_kafka_resp_err_t err;
} commit_answer_t;

static void on_commit_answer(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk;
    commit_answer_t *a = opaque;
    a->err = err;
    for (int i = 0; !err && offsets && i < offsets->cnt; i++)
        if (offsets->elems[i].err)
            a->err = offsets->elems[i].err;
    a->done = 1;
}

/* A synchronous commit that a second signal ends: rd_kafka_commit waits for the coordinator
 * without a limit of its own (every broker down: until the session times out). The answer
 * comes on a queue served here in slices, its callback runs only while this serves it: cut
 * short, the queue goes unserved (a late answer is dropped with it) and *cut says so. */
static rd_kafka_resp_err_t commit_wait(slda_ksource_t *src,
                                       const rd_kafka_topic_partition_list_t *list, int *cut)
{
    commit_answer_t a = {0, RD_KAFKA_RESP_ERR_NO_ERROR};
    rd_kafka_queue_t *q = rd_kafka_queue_new(src->rk);
    rd_kafka_resp_err_t err = rd_kafka_commit_queue(src->rk, list, q, on_commit_answer, &a);
    while (!err && !a.done && !slda_stop_now(src->stop))
        rd_kafka_queue_poll_callback(q, 100);
    *cut = !err && !a.done;
    rd_kafka_queue_destroy(q);
    return err ? err : a.err;
}

slda_err_t slda_ksource_commit(slda_ksource_t *src, const slda_offset_t *offs, size_t n,
                               int sync, char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n + 1);
    for (size_t i = 0; i < n; i++)
        if (offs[i].offset >= 0)
            rd_kafka_topic_partition_list_add(list, offs[i].topic, offs[i].partition)->offset =
                offs[i].offset;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    int cut = 0;
    if (list->cnt > 0 && !sync)
        err = rd_kafka_commit(src->rk, list, 1); /* on_commit reports */
    else if (list->cnt > 0)
        err = commit_wait(src, list, &cut);
    rd_kafka_topic_partition_list_destroy(list);
    if (cut)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_STOPPED,
                            "offset commit: a second signal ended the wait for the group "
                            "coordinator (the offsets may not be committed)");
    if (err)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "offset commit: %s",
                            rd_kafka_err2str(err));
    return SLDA_OK;
}

struct rd_kafka_consumer_group_metadata_s *slda_ksource_group_metadata(slda_ksource_t *src)
{
    return rd_kafka_consumer_group_metadata(src->rk);
}

int slda_ksource_assigned(const slda_ksource_t *src)
{
    return src->owned ? src->owned->cnt : 0;
}

/* A copy of the assignment the rebalance callback keeps (`owned`: one list
 * for the callbacks and the service thread, no call into the group). */
static rd_kafka_topic_partition_list_t *owned_copy(const slda_ksource_t *src)
{
    return src->owned ? rd_kafka_topic_partition_list_copy(src->owned)
                      : rd_kafka_topic_partition_list_new(0);
}

slda_err_t slda_ksource_pause(slda_ksource_t *src, int pause)
{
    if (!!pause == src->paused)
        return SLDA_OK;
    rd_kafka_topic_partition_list_t *parts = owned_copy(src);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (parts->cnt)
        err = pause ? rd_kafka_pause_partitions(src->rk, parts)
                    : rd_kafka_resume_partitions(src->rk, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (err)
        return SLDA_ERR_KAFKA;
    src->paused = !!pause;
    if (!pause) /* the partitions' fetch clock starts again: paused, none was fetched */
        src->assigned_t = slda_mono_s();
    return SLDA_OK;
}

slda_err_t slda_ksource_fatal(const slda_ksource_t *src, char *errstr, size_t errstr_size)
{
    if (!src->fatal[0])
        return SLDA_OK;
    return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "%s", src->fatal);
}

int slda_ksource_replayed(slda_ksource_t *src, const char *topic, int32_t partition,
                          int64_t offset)
{
    size_t k = pos_find(src, topic, partition, 0);
    return k != SIZE_MAX && offset < src->replay_end[k];
}

uint64_t slda_ksource_generation(const slda_ksource_t *src)
{
    return src->generation;
}

slda_err_t slda_ksource_rewind(slda_ksource_t *src, char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *parts = owned_copy(src);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (parts->cnt)
        err = rd_kafka_committed(src->rk, parts, 30000);
    if (!err && parts->cnt)
        err = rd_kafka_assign(src->rk, parts); /* fetching restarts at the committed offsets */
    if (!err && src->paused && parts->cnt)
        rd_kafka_pause_partitions(src->rk, parts);
    for (int i = 0; !err && i < parts->cnt; i++) {
        size_t k = pos_find(src, parts->elems[i].topic, parts->elems[i].partition, 1);
        src->pos[k].offset = parts->elems[i].offset >= 0 ? parts->elems[i].offset : -1;
    }
    rd_kafka_topic_partition_list_destroy(parts);
    if (err)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                            "kafka: cannot rewind to the committed offsets: %s",
                            rd_kafka_err2str(err));
    return SLDA_OK;
}
