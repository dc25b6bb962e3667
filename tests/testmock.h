/* testmock.h - the fixtures of the C scenario tests on librdkafka's mock cluster (0019, 0059):
 * a cluster, and a plain producer writing copies of values to one partition. */
#ifndef SLDA_TESTMOCK_H
#define SLDA_TESTMOCK_H

#include "kafka/mockbroker.h"
#include "testutil.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>

/* A mock cluster of `brokers` brokers; NULL after printing why (the test then exits 1). */
static inline slda_mock_t *test_mock_new(int brokers)
{
    char err[1024];
    slda_mock_t *mock = slda_mock_new(brokers, err, sizeof err);
    if (!mock)
        fprintf(stderr, "mock cluster: %s\n", err);
    return mock;
}

/* A producer with librdkafka's defaults on bootstrap (a failure is counted; NULL). */
static inline rd_kafka_t *test_producer(const char *bootstrap)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof err);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    CHECK_TRUE(p != NULL, "%s", err);
    return p;
}

/* A copy of value queued for partition 0 of topic (delivered by the caller's flush). */
static inline void test_produce(rd_kafka_t *p, const char *topic, const void *value, size_t len)
{
    CHECK_INT(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE((void *)value, len),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
}

#endif
