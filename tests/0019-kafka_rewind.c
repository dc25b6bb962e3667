/* 0019-kafka_rewind - a replica's partition that is revoked and assigned to it again starts
 * from the group's committed offset (mock cluster).
 *
 * A replica's model holds what the updates log holds, and the committed offsets say exactly
 * what that is. The consumer used to restart a partition that came back at the position it
 * had left it at: ahead of the committed offset when the documents read from it were dropped
 * (a rebalance while a minibatch was open: service.c drop_all), so those documents were read
 * by no one while later offsets were committed (test 0106 once ended with 8,969 of 9,000
 * documents in every replica, every offset committed); behind it when another member had
 * published more of the partition meanwhile, so those documents would be trained twice.
 * Here a consumer of the service's kind (updates.topic set) reads 5 of 10 messages of a
 * one-partition topic and pauses; a second member joins the group, which revokes the
 * partition (the strategy is eager); then the second leaves and the partition comes back
 * (at once or then):
 * - dropped: nothing was committed, the first rewinds as drop_all does while the partition
 *   is away, and must read it again from offset 0 (the old code: nothing more to read);
 * - published meanwhile: the first had committed 5; once the group has settled, the second
 *   member commits 10 (as when it publishes 5..9), then leaves, and the first must read
 *   message 10, produced once the partition is back (the old code: 5..9 again).
 * Every wait is on a condition (a generation, an assignment, a commit accepted), bounded by
 * a number of polls far above what a loaded machine needs. While the two members share the
 * group in "published", the mock broker answers 2 s late: librdkafka 2.0.2's mock answers a
 * follower's SyncGroup that comes after the leader's with INVALID_REQUEST (the group is Up
 * already, rdkafka_mock_cgrp.c) and the follower rejoins; the leader asks for metadata
 * before its SyncGroup (two round trips against the follower's one), and under load it still
 * won every round: 27 rebalances in 260 s, every commit of the second member refused with
 * ILLEGAL_GENERATION (AddressSanitizer build, both cores busy). With the late answers the
 * follower's SyncGroup arrives 2 s ahead of the leader's.
 */
#include "kafka/kafka.h"
#include "kafka/metrics.h"
#include "core/slda_int.h"
#include "testmock.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

enum { N = 10, READ = 5, ROUNDS = 12000 /* polls of at least 10 ms: 120 s or more */ };

/* Messages "doc FROM" .. "doc TO-1" to partition 0 (their offsets on a new topic). */
static void produce(const char *bootstrap, const char *topic, int from, int to)
{
    rd_kafka_t *p = test_producer(bootstrap);
    for (int i = from; p && i < to; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "doc %d", i);
        test_produce(p, topic, v, (size_t)len);
    }
    if (p) {
        CHECK_INT(rd_kafka_flush(p, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_destroy(p);
    }
}

/* The second member's rebalances: *opaque counts the assignments it was given (each one
 * follows a SyncGroup the broker accepted). */
static void second_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
        ++*(int *)opaque;
    } else
        rd_kafka_assign(rk, NULL);
}

/* The second member (client.id rdkafka: first in the group's id order). */
static rd_kafka_t *second_member(const char *bootstrap, const char *group, const char *topic,
                                 int *assigns)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err);
    rd_kafka_conf_set(c, "group.id", group, err, sizeof err);
    rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_conf_set(c, "auto.offset.reset", "earliest", err, sizeof err);
    rd_kafka_conf_set(c, "session.timeout.ms", "6000", err, sizeof err);
    rd_kafka_conf_set(c, "heartbeat.interval.ms", "500", err, sizeof err);
    rd_kafka_conf_set_rebalance_cb(c, second_rebalance);
    rd_kafka_conf_set_opaque(c, assigns);
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
    CHECK_TRUE(k != NULL, "%s", err);
    rd_kafka_poll_set_consumer(k);
    rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(t, topic, RD_KAFKA_PARTITION_UA);
    CHECK_INT(rd_kafka_subscribe(k, t), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(t);
    return k;
}

/* One poll of the second member (its messages are dropped, nothing committed). */
static void serve(rd_kafka_t *k)
{
    rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 0);
    if (m)
        rd_kafka_message_destroy(m);
}

static void commit(slda_ksource_t *src, const char *topic, int64_t offset)
{
    char err[512];
    slda_offset_t off = {.partition = 0, .offset = offset};
    snprintf(off.topic, sizeof off.topic, "%s", topic);
    CHECK_INT(slda_ksource_commit(src, &off, 1, 1, err, sizeof err), SLDA_OK);
}


/* A poll of both members that must return no message from the first (it is paused). */
static void serve_both(slda_ksource_t *src, rd_kafka_t *other)
{
    slda_kmsg_t msg;
    serve(other);
    CHECK_TRUE(!slda_ksource_poll(src, 10, &msg), "a message: partition %d offset %lld",
               (int)msg.partition, (long long)msg.offset);
}

static void mock_rtt(slda_mock_t *mock, int ms)
{
    char line[64], err[512];
    snprintf(line, sizeof line, "rtt 1 %d", ms);
    CHECK_INT(slda_mock_control(mock, line, err, sizeof err), SLDA_OK);
}

/* The second member, once the group has settled (both members synced in one generation: its
 * assignment came and the first member's came after its revocation), commits N for the
 * partition (as when it publishes READ..N-1). A commit refused while a rebalance runs is asked
 * again: the condition is the broker's acceptance. */
static void publish_meanwhile(slda_ksource_t *src, rd_kafka_t *other, const int *assigns,
                              uint64_t gen_away, const char *topic)
{
    int settled = 0;
    for (int i = 0; i < ROUNDS && !settled; i++) {
        serve_both(src, other);
        settled = *assigns > 0 && slda_ksource_generation(src) > gen_away;
    }
    CHECK_TRUE(settled, "group not settled: second member's assignments %d, generation %llu "
               "(%llu when the partition went)", *assigns,
               (unsigned long long)slda_ksource_generation(src), (unsigned long long)gen_away);
    rd_kafka_resp_err_t r = RD_KAFKA_RESP_ERR__FAIL;
    for (int i = 0; i < ROUNDS && r; i++) {
        rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(t, topic, 0)->offset = N;
        r = rd_kafka_commit(other, t, 0);
        rd_kafka_topic_partition_list_destroy(t);
        if (r && r != RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION &&
            r != RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS &&
            r != RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
            break;
        serve_both(src, other);
    }
    CHECK_TRUE(r == RD_KAFKA_RESP_ERR_NO_ERROR, "the second member's commit: %s",
               rd_kafka_err2name(r));
}

/* published: the group's offset is READ, then N from the second member. Returns the offset
 * of the first message the first member reads once the partition is back and one more
 * message (offset N) was produced (-1: none in ROUNDS polls). */
static int64_t scenario(const char *bootstrap, slda_mock_t *mock, const char *name,
                        int published)
{
    char err[1024], topic[64], group[96];
    snprintf(topic, sizeof topic, "docs-%s", name);
    snprintf(group, sizeof group, "streamlda-%s", name);
    CHECK_INT(slda_mock_topic_create(mock, topic, 1, err, sizeof err), SLDA_OK);
    produce(bootstrap, topic, 0, N);
    slda_conf_t *conf = slda_conf_new();
    CHECK_INT(slda_conf_set(conf, "input.topics", topic, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "model.name", name, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "updates.topic", "updates", err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "kafka.session.timeout.ms", "6000", err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "kafka.heartbeat.interval.ms", "500", err, sizeof err),
              SLDA_OK);
    slda_metrics_t *metrics = slda_metrics_new();
    volatile int stop = 0;
    slda_ksource_t *src =
        slda_ksource_new(conf, bootstrap, NULL, 0, metrics, &stop, err, sizeof err);
    CHECK_NONNULL(src);
    int64_t first = -2;
    if (!src)
        goto out;
    slda_kmsg_t msg;
    int got = 0;
    for (int i = 0; i < ROUNDS && got < READ; i++)
        if (slda_ksource_poll(src, 10, &msg)) {
            CHECK_INT(msg.offset, got);
            got++;
            slda_ksource_release(src, &msg);
        }
    CHECK_INT(got, READ);
    if (published)
        commit(src, topic, READ);
    CHECK_INT(slda_ksource_pause(src, 1), SLDA_OK); /* read no further */

    /* the second member joins: the partition is revoked (eager) */
    if (published)
        mock_rtt(mock, 2000); /* the follower's SyncGroup first (the opening comment) */
    uint64_t gen = slda_ksource_generation(src);
    int assigns = 0;
    rd_kafka_t *other = second_member(bootstrap, group, topic, &assigns);
    int away = 0;
    for (int i = 0; i < ROUNDS && !away; i++) {
        serve_both(src, other);
        if (slda_ksource_generation(src) != gen && slda_ksource_assigned(src) == 0) {
            away = 1;
            if (!published) /* as drop_all does */
                CHECK_INT(slda_ksource_rewind(src, err, sizeof err), SLDA_OK);
        }
    }
    CHECK(away);
    if (published) {
        publish_meanwhile(src, other, &assigns, slda_ksource_generation(src), topic);
        mock_rtt(mock, 0);
    }
    uint64_t gen2 = slda_ksource_generation(src);
    rd_kafka_consumer_close(other);
    rd_kafka_destroy(other);

    /* the partition comes back (or is assigned again) */
    for (int i = 0; i < ROUNDS && !(slda_ksource_generation(src) > gen2 &&
                                    slda_ksource_assigned(src) == 1); i++)
        CHECK_TRUE(!slda_ksource_poll(src, 10, &msg), "a message: partition %d offset %lld",
                   (int)msg.partition, (long long)msg.offset);
    CHECK_INT(slda_ksource_assigned(src), 1);
    produce(bootstrap, topic, N, N + 1); /* what the first member reads next tells where it is */
    CHECK_INT(slda_ksource_pause(src, 0), SLDA_OK);
    first = -1;
    for (int i = 0; i < ROUNDS && first < 0; i++)
        if (slda_ksource_poll(src, 10, &msg)) {
            first = msg.offset;
            slda_ksource_release(src, &msg);
        }
    slda_ksource_destroy(src);
out:
    slda_metrics_destroy(metrics);
    slda_conf_destroy(conf);
    return first;
}

int main(void)
{
    slda_mock_t *mock = test_mock_new(1);
    if (!mock)
        return 1;
    const char *bootstrap = slda_mock_bootstraps(mock);
    /* dropped: read again from the committed offset (none: the earliest) */
    CHECK_INT(scenario(bootstrap, mock, "dropped", 0), 0);
    /* published meanwhile by the other member: the message produced once it is back */
    CHECK_INT(scenario(bootstrap, mock, "published", 1), N);
    slda_mock_destroy(mock);
    return slda_test_done("0019-kafka_rewind");
}
