/* cli_kafka.c - `streamlda run`, `streamlda produce` and `streamlda broker`.
 *
 * Signal handlers only set slda_cli_stop (a volatile sig_atomic_t); every loop here
 * and in the service polls with short timeouts and checks it. Data goes to
 * stdout (the broker's bootstrap address), diagnostics to stderr.
 */
#include "cli/cli.h"
#include "io/outfile.h"
#include "core/json.h"
#include "kafka/mockbroker.h"
#include "core/slda_int.h"
#include "track/track.h"

#include <librdkafka/rdkafka.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- run ---- */

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: streamlda run [-c FILE] [-X key=value ...] [--embedded] [--fresh]\n"
            "Consume documents from Kafka (input.topics), train in minibatches, write\n"
            "snapshots (snapshot.dir, snapshot.topic) and commit offsets; SIGTERM, SIGINT\n"
            "or SIGHUP finishes the minibatch, writes a final snapshot and exits 0 (1 when\n"
            "records stayed undelivered for shutdown.timeout.ms: nothing is committed past\n"
            "the last snapshot); a second one ends that wait at once (exit 1, no final\n"
            "snapshot unless every record was delivered). A fatal Kafka error or an\n"
            "undeliverable record exits 1.\n"
            "A signal while it starts (waiting for the brokers) stops it at once, exit 0.\n"
            "  -c, --config FILE   key=value configuration file\n"
            "  -X key=value        set a property (kafka.* go to librdkafka); -X list\n"
            "  --embedded          start an in-process mock Kafka cluster\n"
            "                      (same as -X kafka.bootstrap.servers=embedded)\n"
            "  --fresh             start a new model although snapshot.dir holds snapshots\n"
            "                      of model.name that do not load (-X snapshot.fresh=true)\n"
            "The settings people set first (-X key=value; `streamlda config` lists all):\n"
            "  kafka.bootstrap.servers  the brokers; input.topics  the topics to read\n"
            "  topics               K, the number of topics (default 100)\n"
            "  input.format         auto, json, msgpack, text; input.text.field, input.id.field\n"
            "                       the JSON fields of the text (default text) and the id\n"
            "  input.time.field     the JSON field with each document's event time (ISO 8601,\n"
            "                       epoch); empty: the message timestamp (docs/tracking.md)\n"
            "  input.group.field    each document's group, tracked over time with its topic mix:\n"
            "                       a JSON field (a source, a channel), @key (the message key),\n"
            "                       @lang, @author (model.kind=atm's default); /api/groups\n"
            "  http.port            the live page (/), /metrics and /healthz on 127.0.0.1;\n"
            "                       default 0: any free port, printed at start; -1: off\n"
            "  track, track.window, track.windows, track.sample.docs, track.warmup.docs,\n"
            "  track.examples       topic tracking over event time (docs/tracking.md)\n"
            "  snapshot.dir         where snapshots go (default ./snapshots, relative to the\n"
            "                       working directory, or $STATE_DIRECTORY/snapshots under\n"
            "                       systemd's StateDirectory=; the full path is printed at start)\n"
            "  snapshot.every.ms, snapshot.keep, snapshot.history   how often; the newest kept\n"
            "                       (default 3) and older ones thinned with age (default 10)\n"
            "See docs/service.md.\n");
}

/* Under systemd with StateDirectory= (the environment's STATE_DIRECTORY, the first of its
 * colon-separated paths), snapshot.dir left unset means <that>/snapshots: the unit's own
 * persistent directory (/var/lib/NAME), not the working directory (/ for a service). -1 with
 * the reason when it cannot be set. */
static int state_snapshot_dir(slda_conf_t *conf, char *err, size_t err_size)
{
    const char *state = getenv("STATE_DIRECTORY");
    if (!state || !*state || slda_conf_is_set(conf, "snapshot.dir"))
        return 0;
    size_t n = strcspn(state, ":");
    char dir[4200];
    snprintf(dir, sizeof dir, "%.*s/snapshots", (int)(n < 4000 ? n : 4000), state);
    return slda_conf_set(conf, "snapshot.dir", dir, err, err_size) != SLDA_OK ? -1 : 0;
}

int slda_cli_run(int argc, char **argv)
{
    static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
                                             {"embedded", no_argument, NULL, 'E'},
                                             {"fresh", no_argument, NULL, 'F'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    slda_cli_opts_t opts;
    memset(&opts, 0, sizeof opts);
    int embedded = 0, c, rc = SLDA_EXIT_OK, done = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:X:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': opts.config_path = optarg; break;
        case 'X': slda_cli_add_x(&opts, optarg); break;
        case 'E': embedded = 1; break;
        case 'F': slda_cli_add_x(&opts, "snapshot.fresh=true"); break;
        case 'h': run_usage(stdout); slda_cli_opts_clear(&opts); return SLDA_EXIT_OK;
        default: run_usage(stderr); slda_cli_opts_clear(&opts); return SLDA_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "streamlda run: unexpected argument \"%s\"\n", argv[optind]);
        slda_cli_opts_clear(&opts);
        return SLDA_EXIT_USAGE;
    }
    slda_conf_t *conf = slda_conf_new();
    char err[1024];
    rc = slda_cli_conf_apply(conf, &opts, &done);
    if (rc || done)
        goto out;
    if (embedded &&
        slda_conf_set(conf, "kafka.bootstrap.servers", "embedded", err, sizeof err)) {
        fprintf(stderr, "streamlda run: %s\n", err);
        rc = SLDA_EXIT_USAGE;
        goto out;
    }
    if (state_snapshot_dir(conf, err, sizeof err)) {
        fprintf(stderr, "streamlda run: %s\n", err);
        rc = SLDA_EXIT_USAGE;
        goto out;
    }
    slda_cli_install_signals();
    volatile int *stop = (volatile int *)&slda_cli_svc_stop;
    slda_service_t *svc = slda_service_start(conf, stop, err, sizeof err);
    if (!svc && slda_cli_stop) { /* a clean stop: nothing was read, nothing to save */
        fprintf(stderr, "streamlda run: %s: stopped by signal %d before reading any input\n",
                err, (int)slda_cli_stop);
        goto out;
    }
    if (!svc) {
        fprintf(stderr, "streamlda run: %s\n", err);
        rc = SLDA_EXIT_FAIL;
        goto out;
    }
    if (slda_service_run(svc, stop, err, sizeof err)) {
        fprintf(stderr, "streamlda run: %s\n", err);
        rc = SLDA_EXIT_FAIL;
    }
    slda_service_destroy(svc);
out:
    slda_conf_destroy(conf);
    slda_cli_opts_clear(&opts);
    return rc;
}

/* ---- produce ---- */

typedef struct produce_state_s {
    unsigned long delivered, failed;
    char first_error[256];
} produce_state_t;

static void produce_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    produce_state_t *st = opaque;
    if (m->err) {
        if (!st->failed++)
            snprintf(st->first_error, sizeof st->first_error, "%s", rd_kafka_err2str(m->err));
    } else
        st->delivered++;
}

static void produce_usage(FILE *f)
{
    fprintf(f,
            "usage: streamlda produce --brokers ADDR --topic T [--format text|jsonl]\n"
            "                         [--key-from-id | --key-field NAME] [--time-field NAME]\n"
            "                         [--partition N | --spread] [-X name=value] FILE...\n"
            "Send each non-empty line of each FILE (\"-\" = stdin) as one message; wait for\n"
            "every delivery report; exit 1 if any message failed.\n"
            "  --key-from-id  key = the \"id\" field (jsonl) or FILE:LINE (text)\n"
            "  --key-field NAME  key = the JSON field NAME (jsonl): one key's messages stay\n"
            "                 in one partition, in order\n"
            "  --time-field NAME  message timestamp = the JSON field NAME (ISO 8601, epoch\n"
            "                 seconds or ms); a line without a readable time is reported\n"
            "                 (FILE:LINE) and skipped; without --partition, --key-field or\n"
            "                 --spread every message goes to partition 0, so a stream in\n"
            "                 time order stays in order (said on stderr)\n"
            "  --spread       with --time-field: let the partitioner spread the messages\n"
            "                 (the service then counts documents behind the newest as late)\n"
            "  --partition N  send everything to partition N (default: partitioner); with\n"
            "                 --partition, --key-field or --time-field the producer is\n"
            "                 idempotent, so retries never reorder a partition\n"
            "  -X name=value  librdkafka property (a \"kafka.\" prefix is accepted)\n");
}

/* The value of the top-level-looking "id" field of a JSON line: a string (no
 * escapes) or a number. Returns its length, 0 if none. */
static size_t json_id(const char *line, const char **start)
{
    for (const char *p = strstr(line, "\"id\""); p; p = strstr(p + 4, "\"id\"")) {
        const char *q = p + 4;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != ':')
            continue;
        q++;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '"') {
            const char *end = strchr(q + 1, '"');
            if (!end)
                return 0;
            *start = q + 1;
            return (size_t)(end - q - 1);
        }
        const char *end = q;
        while ((*end >= '0' && *end <= '9') || *end == '-')
            end++;
        *start = q;
        return (size_t)(end - q);
    }
    return 0;
}

/* The value of top-level field `field` of a JSON line as a key (a string,
 * unescaped, or a number's text) into buf; its length, 0 if none. */
static size_t json_field_key(const char *line, size_t len, const char *field, char *buf,
                             size_t size)
{
    slda_json_t js;
    size_t n = 0;
    slda_json_init(&js);
    if (slda_json_parse(&js, line, len, NULL, 0) == SLDA_OK &&
        js.nodes[0].type == SLDA_JSON_OBJECT) {
        uint32_t v = slda_json_object_get(&js, 0, field);
        if (v != SLDA_JSON_NONE && js.nodes[v].type == SLDA_JSON_STRING &&
            slda_json_raw_len(&js, v) < size)
            n = slda_json_string(&js, v, buf);
        else if (v != SLDA_JSON_NONE && js.nodes[v].type == SLDA_JSON_NUMBER &&
                 js.nodes[v].end - js.nodes[v].start < size) {
            n = js.nodes[v].end - js.nodes[v].start;
            memcpy(buf, line + js.nodes[v].start, n);
        }
    }
    slda_json_clear(&js);
    return n;
}

static int produce_line(rd_kafka_t *rk, const char *topic, int32_t partition, const char *line,
                        size_t len, const char *key, size_t keylen, int64_t ts)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_VALUE((void *)line, len), RD_KAFKA_V_KEY(key, keylen),
            RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (!err)
            return 0;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "streamlda produce: topic \"%s\": %s\n", topic, rd_kafka_err2str(err));
            return -1;
        }
        rd_kafka_poll(rk, 100);
    }
}

typedef struct produce_opts_s {
    const char *key_field, *time_field;
    unsigned long skipped;
} produce_opts_t;

static int produce_file(rd_kafka_t *rk, const char *topic, int32_t partition, int jsonl,
                        int key_from_id, produce_opts_t *po, const char *path,
                        unsigned long *sent)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "streamlda produce: file \"%s\": %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL, keybuf[4200];
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    while (!slda_cli_stop && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        const char *key = NULL;
        size_t keylen = 0;
        if (po->key_field) {
            keylen = json_field_key(line, (size_t)len, po->key_field, keybuf, sizeof keybuf);
            key = keylen ? keybuf : NULL; /* no such field: no key */
        } else if (key_from_id && jsonl)
            keylen = json_id(line, &key);
        else if (key_from_id) {
            keylen = (size_t)snprintf(keybuf, sizeof keybuf, "%s:%lu", path, lineno);
            key = keybuf;
        }
        int64_t ts = 0; /* 0: librdkafka stamps the current time */
        if (po->time_field) {
            char err[300];
            if (slda_time_from_json(line, (size_t)len, po->time_field, &ts, err, sizeof err)) {
                fprintf(stderr, "streamlda produce: %s:%lu: %s: line skipped\n", path, lineno,
                        err);
                po->skipped++;
                continue;
            }
        }
        if (produce_line(rk, topic, partition, line, (size_t)len, key, keylen, ts)) {
            rc = -1;
            break;
        }
        (*sent)++;
        rd_kafka_poll(rk, 0);
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

int slda_cli_produce(int argc, char **argv)
{
    static const struct option longopts[] = {{"brokers", required_argument, NULL, 'b'},
                                             {"topic", required_argument, NULL, 't'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"key-from-id", no_argument, NULL, 'k'},
                                             {"partition", required_argument, NULL, 'p'},
                                             {"key-field", required_argument, NULL, 'K'},
                                             {"time-field", required_argument, NULL, 'T'},
                                             {"spread", no_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *brokers = NULL, *topic = NULL;
    int jsonl = 0, key_from_id = 0, idem_set = 0, spread = 0, c;
    int32_t partition = RD_KAFKA_PARTITION_UA;
    char rderr[512];
    rd_kafka_conf_t *rconf = rd_kafka_conf_new();
    /* Keyless messages go to a random partition each, not in sticky runs: the
     * mock cluster keeps only ~5 MiB per partition, and spreading also lets a
     * consumer group share the work. -X sticky.partitioning.linger.ms=N undoes it. */
    rd_kafka_conf_set(rconf, "sticky.partitioning.linger.ms", "0", rderr, sizeof rderr);
    produce_state_t st;
    memset(&st, 0, sizeof st);
    produce_opts_t po;
    memset(&po, 0, sizeof po);
    optind = 1;
    while ((c = getopt_long(argc, argv, "b:t:X:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': brokers = optarg; break;
        case 't': topic = optarg; break;
        case 'k': key_from_id = 1; break;
        case 'p': partition = (int32_t)strtol(optarg, NULL, 10); break;
        case 'K': po.key_field = optarg; break;
        case 'T': po.time_field = optarg; break;
        case 'S': spread = 1; break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "jsonl")) {
                fprintf(stderr, "streamlda produce: --format \"%s\": expected text or jsonl\n", optarg);
                goto usage;
            }
            jsonl = !strcmp(optarg, "jsonl");
            break;
        case 'X': {
            char *kv = slda_xstrdup(optarg), *eq = strchr(kv, '=');
            const char *name = kv;
            if (!strncmp(name, "kafka.", 6))
                name += 6;
            int bad = !eq;
            if (eq) {
                *eq = '\0';
                idem_set |= !strcmp(name, "enable.idempotence");
                bad = rd_kafka_conf_set(rconf, name, eq + 1, rderr, sizeof rderr) != RD_KAFKA_CONF_OK;
            } else
                snprintf(rderr, sizeof rderr, "expected name=value");
            if (bad)
                fprintf(stderr, "streamlda produce: property \"%s\": %s\n", kv, rderr);
            free(kv);
            if (bad)
                goto usage;
            break;
        }
        case 'h': produce_usage(stdout); rd_kafka_conf_destroy(rconf); return SLDA_EXIT_OK;
        default: goto usage;
        }
    }
    if (!brokers || !topic || optind >= argc) {
        fprintf(stderr, "streamlda produce: --brokers, --topic and at least one FILE are required\n");
        goto usage;
    }
    if (rd_kafka_conf_set(rconf, "bootstrap.servers", brokers, rderr, sizeof rderr)) {
        fprintf(stderr, "streamlda produce: --brokers \"%s\": %s\n", brokers, rderr);
        goto usage;
    }
    /* A stream with event times keeps its order by default: one partition (spread over several,
     * a consumer reads them interleaved and most documents arrive behind the newest) */
    if (po.time_field && partition == RD_KAFKA_PARTITION_UA && !po.key_field && !spread) {
        partition = 0;
        fprintf(stderr, "streamlda produce: --time-field: every message to partition 0, in "
                        "order (--spread to let the partitioner spread them)\n");
    }
    /* An ordered stream stays in order: an idempotent producer never reorders a
     * partition on retries (unless -X enable.idempotence=false says otherwise). */
    if ((partition != RD_KAFKA_PARTITION_UA || po.key_field || po.time_field) && !idem_set)
        rd_kafka_conf_set(rconf, "enable.idempotence", "true", rderr, sizeof rderr);
    rd_kafka_conf_set_dr_msg_cb(rconf, produce_dr);
    rd_kafka_conf_set_opaque(rconf, &st);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, rconf, rderr, sizeof rderr);
    if (!rk) {
        fprintf(stderr, "streamlda produce: %s\n", rderr);
        rd_kafka_conf_destroy(rconf);
        return SLDA_EXIT_FAIL;
    }
    slda_cli_install_signals();
    unsigned long sent = 0;
    int rc = SLDA_EXIT_OK;
    for (int i = optind; i < argc && !rc && !slda_cli_stop; i++)
        if (produce_file(rk, topic, partition, jsonl, key_from_id, &po, argv[i], &sent))
            rc = SLDA_EXIT_FAIL;
    while (rd_kafka_outq_len(rk) > 0 && !slda_cli_stop)
        rd_kafka_flush(rk, 500);
    unsigned long pending = (unsigned long)rd_kafka_outq_len(rk);
    if (st.failed || pending || slda_cli_stop || st.delivered != sent) {
        fprintf(stderr,
                "streamlda produce: %lu of %lu messages delivered to \"%s\" (%lu failed%s%s, %lu pending)\n",
                st.delivered, sent, topic, st.failed, st.failed ? ": " : "", st.first_error, pending);
        rc = SLDA_EXIT_FAIL;
    } else
        fprintf(stderr, "streamlda produce: %lu messages delivered to \"%s\"%s\n", sent, topic,
                po.skipped ? " (lines without a readable time skipped: see above)" : "");
    rd_kafka_destroy(rk);
    return rc;
usage:
    produce_usage(stderr);
    rd_kafka_conf_destroy(rconf);
    return SLDA_EXIT_USAGE;
}

/* ---- broker ---- */

static void broker_usage(FILE *f)
{
    fprintf(f,
            "usage: streamlda broker [--brokers N] [--partitions N] [--topics a,b:P,...]\n"
            "                        [--address-file FILE] [--control FIFO]\n"
            "Host an in-process mock Kafka cluster (librdkafka's; no transactions, no\n"
            "TLS/SASL, ~5 MiB kept per partition) until SIGTERM/SIGINT. Prints the\n"
            "bootstrap address on stdout and writes it to --address-file.\n"
            "  --brokers N       brokers in the cluster (default 3)\n"
            "  --partitions N    partitions of each created topic (default 4)\n"
            "  --topics LIST     topics to create, NAME or NAME:PARTITIONS\n"
            "  --control FIFO    read fault-injection commands, one per line (created if\n"
            "                    missing): down ID | up ID | rtt ID MS | leader TOPIC P ID\n"
            "                    | errors API N [ERR] | clear API | topic-error TOPIC [ERR]\n"
            "                    (for tests)\n");
}

/* Through slda_outfile: a regular file appears whole (readers poll for it), a
 * FIFO or "-" gets the line straight. */
static int write_address(const char *path, const char *addr)
{
    char err[1024];
    slda_outfile_t out;
    if (slda_outfile_open(&out, "address file", path, err, sizeof err) == SLDA_OK) {
        if (fprintf(out.fp, "%s\n", addr) >= 0 &&
            slda_outfile_commit(&out, err, sizeof err) == SLDA_OK)
            return 0;
        if (out.fp) {
            snprintf(err, sizeof err, "address file \"%s\": write: %s", path, strerror(errno));
            slda_outfile_abort(&out);
        }
    }
    fprintf(stderr, "streamlda broker: %s\n", err);
    return -1;
}

static int open_control(const char *path)
{
    if (mkfifo(path, 0600) && errno != EEXIST) {
        fprintf(stderr, "streamlda broker: control \"%s\": %s\n", path, strerror(errno));
        return -1;
    }
    /* O_RDWR keeps a writer open, so the FIFO never reports end of file. */
    int fd = open(path, O_RDWR | O_NONBLOCK);
    if (fd < 0)
        fprintf(stderr, "streamlda broker: control \"%s\": %s\n", path, strerror(errno));
    return fd;
}

/* Run complete lines of buf through the mock; keep a partial line. */
static void control_lines(slda_mock_t *mock, char *buf, size_t *used)
{
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', *used - (size_t)(start - buf)))) {
        *nl = '\0';
        char err[512];
        if (slda_mock_control(mock, start, err, sizeof err))
            fprintf(stderr, "streamlda broker: %s\n", err);
        else if (*start && *start != '#')
            fprintf(stderr, "streamlda broker: control: %s\n", start);
        start = nl + 1;
    }
    *used -= (size_t)(start - buf);
    memmove(buf, start, *used);
}

static void broker_loop(slda_mock_t *mock, int fd)
{
    char buf[4096];
    size_t used = 0;
    while (!slda_cli_stop) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (fd < 0) {
            poll(NULL, 0, 200);
            continue;
        }
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        ssize_t n = read(fd, buf + used, sizeof buf - 1 - used);
        if (n <= 0)
            continue;
        used += (size_t)n;
        control_lines(mock, buf, &used);
        if (used == sizeof buf - 1)
            used = 0; /* an absurd line: drop it */
    }
}

int slda_cli_broker(int argc, char **argv)
{
    static const struct option longopts[] = {{"brokers", required_argument, NULL, 'b'},
                                             {"partitions", required_argument, NULL, 'p'},
                                             {"topics", required_argument, NULL, 't'},
                                             {"address-file", required_argument, NULL, 'a'},
                                             {"control", required_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int nbrokers = 3, partitions = 4, c;
    const char *topics = NULL, *address_file = NULL, *control = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': nbrokers = atoi(optarg); break;
        case 'p': partitions = atoi(optarg); break;
        case 't': topics = optarg; break;
        case 'a': address_file = optarg; break;
        case 'C': control = optarg; break;
        case 'h': broker_usage(stdout); return SLDA_EXIT_OK;
        default: broker_usage(stderr); return SLDA_EXIT_USAGE;
        }
    }
    if (nbrokers < 1 || nbrokers > 32 || partitions < 1 || partitions > 10000 || optind < argc) {
        fprintf(stderr, "streamlda broker: --brokers 1..32, --partitions 1..10000, no arguments\n");
        return SLDA_EXIT_USAGE;
    }
    char err[512];
    slda_cli_install_signals();
    slda_mock_t *mock = slda_mock_new(nbrokers, err, sizeof err);
    if (!mock) {
        fprintf(stderr, "streamlda broker: %s\n", err);
        return SLDA_EXIT_FAIL;
    }
    int rc = SLDA_EXIT_OK, fd = -1;
    if (topics && slda_mock_topics_create(mock, topics, partitions, err, sizeof err)) {
        fprintf(stderr, "streamlda broker: %s\n", err);
        rc = SLDA_EXIT_USAGE;
        goto out;
    }
    if (control && (fd = open_control(control)) < 0) {
        rc = SLDA_EXIT_FAIL;
        goto out;
    }
    const char *addr = slda_mock_bootstraps(mock);
    if (address_file && write_address(address_file, addr)) {
        rc = SLDA_EXIT_FAIL;
        goto out;
    }
    printf("%s\n", addr);
    fflush(stdout);
    fprintf(stderr, "streamlda broker: %d broker(s) at %s\n", nbrokers, addr);
    broker_loop(mock, fd);
    fprintf(stderr, "streamlda broker: stopping\n");
out:
    if (fd >= 0)
        close(fd);
    slda_mock_destroy(mock);
    return rc;
}
