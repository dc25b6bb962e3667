/* mockbroker.h - an in-process Kafka cluster (librdkafka's mock) for `streamlda broker`,
 * embedded mode and tests. Opaque: no librdkafka types leak out of mockbroker.c. */
#ifndef SLDA_MOCKBROKER_H
#define SLDA_MOCKBROKER_H

#include "streamlda.h"

typedef struct slda_mock_s slda_mock_t;

/* The largest request the cluster takes, in bytes: half of the about 5 MiB it keeps
 * per partition, so that no message set it accepts drops another one's messages
 * whole (mockbroker.c). Larger requests are refused (not answered). */
#define SLDA_MOCK_MAX_REQUEST (5 * 1024 * 1024 / 2)

/* A cluster of nbrokers brokers (ids 1..nbrokers) listening on 127.0.0.1
 * ephemeral ports. Runs on librdkafka's own threads until destroyed. */
slda_mock_t *slda_mock_new(int nbrokers, char *errstr, size_t errstr_size);
void slda_mock_destroy(slda_mock_t *mock);
/* "host:port,host:port,..." - borrowed, lives as long as mock. */
const char *slda_mock_bootstraps(const slda_mock_t *mock);
/* Create topic with partitions partitions (replication factor 1, leaders
 * spread over the brokers). Creating an existing topic is not an error. */
slda_err_t slda_mock_topic_create(slda_mock_t *mock, const char *topic, int partitions,
                                  char *errstr, size_t errstr_size);
/* Create each "name" or "name:partitions" of a comma separated list, with
 * default_partitions when no count is given. */
slda_err_t slda_mock_topics_create(slda_mock_t *mock, const char *list,
                                   int default_partitions, char *errstr,
                                   size_t errstr_size);
/* Fault injection, one command per line (the broker's --control FIFO):
 *   down ID | up ID          broker ID (-1 = all) refuses / accepts connections
 *   rtt ID MS                broker ID answers MS milliseconds late (0 = normal)
 *   leader TOPIC PART ID     the partition's leader becomes broker ID (-1 = none)
 *   errors API N [ERR]       the next N requests of API (Produce, Fetch, Metadata,
 *                            OffsetCommit, ... or a number) fail with ERR (a
 *                            librdkafka error name such as NOT_LEADER_FOR_PARTITION
 *                            or a number; default REQUEST_TIMED_OUT)
 *   clear API                drop the pending errors of API
 *   topic-error TOPIC [ERR]  metadata requests report ERR for TOPIC (default
 *                            UNKNOWN_TOPIC_OR_PART: the topic looks missing;
 *                            0 = no error)
 * Blank lines and '#' comments are accepted and ignored. */
slda_err_t slda_mock_control(slda_mock_t *mock, const char *line, char *errstr,
                             size_t errstr_size);

#endif
