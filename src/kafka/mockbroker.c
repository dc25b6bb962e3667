/* mockbroker.c - librdkafka's in-process mock cluster behind a small API.
 *
 * The mock cluster needs an rd_kafka_t for bookkeeping: we create an idle
 * producer that owns it. Everything the cluster does runs on librdkafka's
 * threads; the functions here are called from one thread (the CLI's main loop
 * or the service's), librdkafka's mock setters take their own locks. The mock
 * does not implement Admin requests or transaction semantics, and keeps only
 * about 5 MiB per partition: appending a message set drops the oldest ones
 * until the partition is within 5 MiB again (rdkafka_mock.c,
 * rd_kafka_mock_msgset_new, librdkafka 2.0.2). When that drops every older set,
 * the partition's start moves past the new set as well (its "log start = log
 * end" when the last set goes): one set over 5 MiB, or two that make more than
 * 5 MiB together, wipe the partition, the new messages with it. So the cluster
 * refuses requests over SLDA_MOCK_MAX_REQUEST (the handle's
 * receive.message.max.bytes, which the mock checks each request's size
 * against): every set it takes is below half a partition, and appending one
 * never drops more than older sets. A larger request is not answered (the
 * connection closes and the producer retries until its message.timeout.ms);
 * every producer with default settings (message.max.bytes 1,000,000) stays
 * below it. Older sets still go when a partition holds more than 5 MiB: the
 * embedded service counts what its consumer never saw (kafka_source.c).
 */
#include "kafka/mockbroker.h"
#include "core/slda_int.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct slda_mock_s {
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mcluster;
};

slda_mock_t *slda_mock_new(int nbrokers, char *errstr, size_t errstr_size)
{
    char rderr[512];
    rd_kafka_conf_t *rconf = rd_kafka_conf_new();
    char maxreq[32];
    snprintf(maxreq, sizeof maxreq, "%d", SLDA_MOCK_MAX_REQUEST);
    /* The handle never talks to a cluster; keep it quiet. */
    if (rd_kafka_conf_set(rconf, "log_level", "3", rderr, sizeof rderr) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(rconf, "receive.message.max.bytes", maxreq, rderr, sizeof rderr) !=
            RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(rconf);
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "mock cluster: %s", rderr);
        return NULL;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, rconf, rderr, sizeof rderr);
    if (!rk) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "mock cluster: %s", rderr);
        return NULL;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, nbrokers > 0 ? nbrokers : 1);
    if (!mc) {
        rd_kafka_destroy(rk);
        slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA,
                     "mock cluster: cannot start %d brokers", nbrokers);
        return NULL;
    }
    slda_mock_t *mock = slda_xcalloc(1, sizeof *mock);
    mock->rk = rk;
    mock->mcluster = mc;
    return mock;
}

void slda_mock_destroy(slda_mock_t *mock)
{
    if (!mock)
        return;
    rd_kafka_mock_cluster_destroy(mock->mcluster);
    rd_kafka_destroy(mock->rk);
    free(mock);
}

const char *slda_mock_bootstraps(const slda_mock_t *mock)
{
    return rd_kafka_mock_cluster_bootstraps(mock->mcluster);
}

slda_err_t slda_mock_topic_create(slda_mock_t *mock, const char *topic, int partitions,
                                  char *errstr, size_t errstr_size)
{
    if (!topic || !*topic || partitions < 1)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "topic \"%s\": needs a name and at least one partition",
                            topic ? topic : "");
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mock->mcluster, topic, partitions, 1);
    if (err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "topic \"%s\": %s", topic,
                            rd_kafka_err2str(err));
    return SLDA_OK;
}

slda_err_t slda_mock_topics_create(slda_mock_t *mock, const char *list,
                                   int default_partitions, char *errstr,
                                   size_t errstr_size)
{
    char *copy = slda_xstrdup(list), *save = NULL;
    slda_err_t err = SLDA_OK;
    for (char *tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        if (!*tok)
            continue;
        int parts = default_partitions;
        char *colon = strrchr(tok, ':');
        if (colon) {
            *colon = '\0';
            char *end;
            long n = strtol(colon + 1, &end, 10);
            if (*end || n < 1 || n > 10000) {
                err = slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                   "topic \"%s\": bad partition count \"%s\"", tok, colon + 1);
                break;
            }
            parts = (int)n;
        }
        err = slda_mock_topic_create(mock, tok, parts, errstr, errstr_size);
    }
    free(copy);
    return err;
}

/* Kafka protocol ApiKeys by name (the ones worth failing in tests). */
static int api_key(const char *name)
{
    static const struct {
        const char *name;
        int key;
    } apis[] = {{"Produce", 0},       {"Fetch", 1},         {"ListOffsets", 2},
                {"Metadata", 3},      {"OffsetCommit", 8},  {"OffsetFetch", 9},
                {"FindCoordinator", 10}, {"JoinGroup", 11}, {"Heartbeat", 12},
                {"LeaveGroup", 13},   {"SyncGroup", 14},    {"ApiVersions", 18},
                {"InitProducerId", 22}, {"AddPartitionsToTxn", 24},
                {"AddOffsetsToTxn", 25}, {"EndTxn", 26},     {"TxnOffsetCommit", 28}};
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++)
        if (!strcasecmp(name, apis[i].name))
            return apis[i].key;
    char *end;
    long n = strtol(name, &end, 10);
    return (*name && !*end && n >= 0 && n < 100) ? (int)n : -1;
}

/* A broker-side error code by name ("NOT_LEADER_FOR_PARTITION") or number. */
static int resp_err(const char *name, rd_kafka_resp_err_t *out)
{
    char *end;
    long n = strtol(name, &end, 10);
    if (*name && !*end) {
        *out = (rd_kafka_resp_err_t)n;
        return 1;
    }
    const struct rd_kafka_err_desc *descs;
    size_t cnt;
    rd_kafka_get_err_descs(&descs, &cnt);
    for (size_t i = 0; i < cnt; i++)
        if (descs[i].name && !strcasecmp(descs[i].name, name)) {
            *out = descs[i].code;
            return 1;
        }
    return 0;
}

static slda_err_t control_errors(slda_mock_t *mock, int argc, char **argv, char *errstr,
                                 size_t errstr_size)
{
    int api = argc >= 2 ? api_key(argv[1]) : -1;
    long n = argc >= 3 ? strtol(argv[2], NULL, 10) : 0;
    rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT;
    if (api < 0 || n < 1 || n > 100000 || (argc >= 4 && !resp_err(argv[3], &code)))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "control \"errors\": expected: errors API COUNT [ERROR]");
    rd_kafka_resp_err_t *errs = slda_xcalloc((size_t)n, sizeof *errs);
    for (long i = 0; i < n; i++)
        errs[i] = code;
    rd_kafka_mock_push_request_errors_array(mock->mcluster, (int16_t)api, (size_t)n, errs);
    free(errs);
    return SLDA_OK;
}

slda_err_t slda_mock_control(slda_mock_t *mock, const char *line, char *errstr,
                             size_t errstr_size)
{
    char buf[512], *argv[8], *save = NULL;
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok_r(buf, " \t\r\n", &save); t && argc < 8;
         t = strtok_r(NULL, " \t\r\n", &save))
        argv[argc++] = t;
    if (argc == 0 || argv[0][0] == '#')
        return SLDA_OK;
    int32_t id = argc >= 2 ? (int32_t)strtol(argv[1], NULL, 10) : -1;
    rd_kafka_resp_err_t err;
    if (!strcmp(argv[0], "down") && argc == 2)
        err = rd_kafka_mock_broker_set_down(mock->mcluster, id);
    else if (!strcmp(argv[0], "up") && argc == 2)
        err = rd_kafka_mock_broker_set_up(mock->mcluster, id);
    else if (!strcmp(argv[0], "rtt") && argc == 3)
        err = rd_kafka_mock_broker_set_rtt(mock->mcluster, id, (int)strtol(argv[2], NULL, 10));
    else if (!strcmp(argv[0], "leader") && argc == 4) /* TOPIC PARTITION ID; -1: none */
        err = rd_kafka_mock_partition_set_leader(mock->mcluster, argv[1],
                                                 (int32_t)strtol(argv[2], NULL, 10),
                                                 (int32_t)strtol(argv[3], NULL, 10));
    else if (!strcmp(argv[0], "errors"))
        return control_errors(mock, argc, argv, errstr, errstr_size);
    else if (!strcmp(argv[0], "topic-error") && (argc == 2 || argc == 3)) {
        rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        if (argc == 3 && !resp_err(argv[2], &code))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "control \"%s\": unknown error \"%s\"", line, argv[2]);
        rd_kafka_mock_topic_set_error(mock->mcluster, argv[1], code);
        return SLDA_OK;
    }
    else if (!strcmp(argv[0], "clear") && argc == 2 && api_key(argv[1]) >= 0) {
        rd_kafka_mock_clear_request_errors(mock->mcluster, (int16_t)api_key(argv[1]));
        return SLDA_OK;
    } else
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "control \"%s\": unknown command or wrong arguments (down ID, "
                            "up ID, rtt ID MS, leader TOPIC PARTITION ID, errors API N [ERR], "
                            "clear API, "
                            "topic-error TOPIC [ERR])", line);
    if (err)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_KAFKA, "control \"%s\": %s", line,
                            rd_kafka_err2str(err));
    return SLDA_OK;
}
