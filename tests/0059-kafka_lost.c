/* 0059-kafka_lost - messages the embedded cluster dropped before they were read are counted
 * (streamlda_lost_messages_total) and logged as an error naming the offsets.
 *
 * librdkafka's mock cluster keeps about 5 MiB per partition (mockbroker.c): appending a
 * message set drops the partition's oldest sets until it is within the limit again. So eight
 * messages of 900,000 bytes produced one request at a time to one partition, before any
 * consumer reads, leave the newest five (4.5 MB): offsets 3..7, log start 3. The service's
 * consumer (of the embedded cluster: its partitions number messages from 0 without gaps)
 * then reads offset 3 first and must count offsets 0..2 as lost, with one error naming them
 * and the metric in /metrics' text; reading on counts nothing more. Deterministic: nothing
 * reads while the messages are produced, and the mock drops by size, not by time.
 */
#include "kafka/kafka.h"
#include "kafka/metrics.h"
#include "core/slda_int.h"
#include "testmock.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LIMIT_S: how long the consumer may take to read the five, far above the second it needs:
 * a count of polls was no limit (a poll that returns an error event at once used up 12,000
 * of them quickly; it flaked once under load). */
enum { MSGS = 8, SIZE = 900000, LIMIT_S = 300 };

static char logged[4096]; /* the error lines of the consumer */

static void on_line(int level, const char *line, void *opaque)
{
    (void)opaque;
    if (level == SLDA_LOG_ERR && strlen(logged) + strlen(line) + 2 < sizeof logged) {
        strcat(logged, line);
        strcat(logged, "\n");
    }
}

/* MSGS messages of SIZE bytes to partition 0, each delivered before the next is produced
 * (one request each); returns the partition's log start offset afterwards. */
static int64_t produce(const char *bootstrap, const char *topic)
{
    rd_kafka_t *p = test_producer(bootstrap);
    if (!p)
        return -1;
    char *value = malloc(SIZE);
    for (int i = 0; i < MSGS; i++) {
        memset(value, 'a' + i, SIZE);
        test_produce(p, topic, value, SIZE);
        CHECK_INT(rd_kafka_flush(p, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    free(value);
    int64_t lo = -1, hi = -1;
    CHECK_INT(rd_kafka_query_watermark_offsets(p, topic, 0, &lo, &hi, 60000),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    CHECK_INT(hi, MSGS);
    rd_kafka_destroy(p);
    return lo;
}

int main(void)
{
    char err[1024];
    slda_mock_t *mock = test_mock_new(1);
    if (!mock)
        return 1;
    const char *bootstrap = slda_mock_bootstraps(mock);
    CHECK_INT(slda_mock_topic_create(mock, "big", 1, err, sizeof err), SLDA_OK);
    int64_t start = produce(bootstrap, "big");
    /* the mock's limit (about 5 MiB) holds five of the eight */
    CHECK_INT(start, MSGS - 5);

    slda_conf_t *conf = slda_conf_new();
    CHECK_INT(slda_conf_set(conf, "input.topics", "big", err, sizeof err), SLDA_OK);
    CHECK_INT(slda_conf_set(conf, "model.name", "lost", err, sizeof err), SLDA_OK);
    slda_metrics_t *metrics = slda_metrics_new();
    slda_metrics_set_log_sink(metrics, on_line, NULL);
    volatile int stop = 0;
    slda_ksource_t *src =
        slda_ksource_new(conf, bootstrap, NULL, 0, metrics, &stop, err, sizeof err);
    CHECK_TRUE(src != NULL, "%s", err);
    int64_t first = -1, last = -1;
    double limit = slda_mono_s() + LIMIT_S;
    while (src && last < MSGS - 1 && slda_mono_s() < limit) {
        slda_kmsg_t msg;
        if (slda_ksource_poll(src, 10, &msg)) {
            if (first < 0)
                first = msg.offset;
            last = msg.offset;
            CHECK_INT(msg.len, SIZE);
            slda_ksource_release(src, &msg);
        }
    }
    CHECK_INT(first, start);
    CHECK_INT(last, MSGS - 1);
    if (last != MSGS - 1) /* what the consumer said meanwhile */
        fprintf(stderr, "errors logged:\n%s", logged);
    CHECK_INT(slda_metrics_get(metrics, SLDA_M_LOST), start);
    CHECK_CONTAINS(logged, "3 message(s) of big [0] (offsets 0..2) were deleted before they "
                           "were read");
    size_t len = 0;
    char *text = slda_metrics_prometheus(metrics, "lost", &len);
    char want[128];
    snprintf(want, sizeof want, "\nstreamlda_lost_messages_total{model=\"lost\"} %lld\n",
             (long long)start);
    CHECK_CONTAINS(text, want);
    free(text);
    slda_ksource_destroy(src);
    slda_metrics_destroy(metrics);
    slda_conf_destroy(conf);
    slda_mock_destroy(mock);
    return slda_test_done("0059-kafka_lost");
}
