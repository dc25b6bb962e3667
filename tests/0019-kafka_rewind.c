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
 *   nothing (the old code: 5..9 again).
 */
#include "kafka/kafka.h"
#include "kafka/metrics.h"
#include "kafka/mockbroker.h"
#include "core/slda_int.h"
#include "testutil.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

enum { N = 10, READ = 5, ROUNDS = 3000 /* polls of 10 ms: 30 s */ };

static void produce(const char *bootstrap, const char *topic)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    CHECK_TRUE(p != NULL, "%s", err);
    for (int i = 0; p && i < N; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "doc %d", i);
        CHECK_INT(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                    RD_KAFKA_V_VALUE(v, (size_t)len),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    if (p) {
        CHECK_INT(rd_kafka_flush(p, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_destroy(p);
    }
}

/* The second member (client.id rdkafka: first in the group's id order). */
static rd_kafka_t *second_member(const char *bootstrap, const char *group, const char *topic)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err);
    rd_kafka_conf_set(c, "group.id", group, err, sizeof err);
    rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_conf_set(c, "auto.offset.reset", "earliest", err, sizeof err);
    rd_kafka_conf_set(c, "session.timeout.ms", "6000", err, sizeof err);
    rd_kafka_conf_set(c, "heartbeat.interval.ms", "500", err, sizeof err);
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


/* published: the group's offset is READ, then N from the second member. Returns the offset
 * of the first message the first member reads once the partition is back (-1: none in
 * 3 s). */
static int64_t scenario(const char *bootstrap, slda_mock_t *mock, const char *name,
                        int published)
{
    char err[1024], topic[64], group[96];
    snprintf(topic, sizeof topic, "docs-%s", name);
    snprintf(group, sizeof group, "streamlda-%s", name);
    CHECK_INT(slda_mock_topic_create(mock, topic, 1, err, sizeof err), SLDA_OK);
    produce(bootstrap, topic);
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
    uint64_t gen = slda_ksource_generation(src);
    rd_kafka_t *other = second_member(bootstrap, group, topic);
    int away = 0;
    for (int i = 0; i < ROUNDS && !away; i++) {
        serve(other);
        CHECK_TRUE(!slda_ksource_poll(src, 10, &msg), "a message: partition %d offset %lld",
                   (int)msg.partition, (long long)msg.offset);
        if (slda_ksource_generation(src) != gen && slda_ksource_assigned(src) == 0) {
            away = 1;
            if (!published) /* as drop_all does */
                CHECK_INT(slda_ksource_rewind(src, err, sizeof err), SLDA_OK);
        }
    }
    CHECK(away);
    if (published) { /* the group settles (the partition goes to one of the two) */
        int settled = 0;
        for (int i = 0; i < ROUNDS && !settled; i++) {
            rd_kafka_topic_partition_list_t *a = NULL;
            serve(other);
            CHECK_TRUE(!slda_ksource_poll(src, 10, &msg), "a message: partition %d offset %lld",
                       (int)msg.partition, (long long)msg.offset);
            if (!rd_kafka_assignment(other, &a))
                settled = a->cnt == 1 || slda_ksource_assigned(src) == 1;
            if (a)
                rd_kafka_topic_partition_list_destroy(a);
        }
        CHECK(settled);
        rd_kafka_resp_err_t r = RD_KAFKA_RESP_ERR__FAIL;
        for (int i = 0; i < 100 && r; i++) { /* the second member publishes READ..N-1 */
            rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
            rd_kafka_topic_partition_list_add(t, topic, 0)->offset = N;
            r = rd_kafka_commit(other, t, 0);
            rd_kafka_topic_partition_list_destroy(t);
            serve(other);
            CHECK_TRUE(!slda_ksource_poll(src, 10, &msg), "a message: partition %d offset %lld",
                       (int)msg.partition, (long long)msg.offset);
        }
        CHECK_INT(r, RD_KAFKA_RESP_ERR_NO_ERROR);
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
    CHECK_INT(slda_ksource_pause(src, 0), SLDA_OK);
    first = -1;
    for (int i = 0; i < 300 && first < 0; i++)
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
    char err[1024];
    slda_mock_t *mock = slda_mock_new(1, err, sizeof err);
    if (!mock) {
        fprintf(stderr, "mock cluster: %s\n", err);
        return 1;
    }
    const char *bootstrap = slda_mock_bootstraps(mock);
    /* dropped: read again from the committed offset (none: the earliest) */
    CHECK_INT(scenario(bootstrap, mock, "dropped", 0), 0);
    /* published meanwhile by the other member: nothing left to read */
    CHECK_INT(scenario(bootstrap, mock, "published", 1), -1);
    slda_mock_destroy(mock);
    return slda_test_done("0019-kafka_rewind");
}
