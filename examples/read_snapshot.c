/* read_snapshot.c - rebuild the newest streamlda snapshot from a Kafka topic and print its topics.
 *
 *   read_snapshot BROKERS [TOPIC [MODEL [WORDS]]]
 *
 * Reads every partition of TOPIC (default streamlda.snapshots) from the
 * beginning to the high watermark seen at start, with a plain librdkafka
 * consumer and default settings (assigned partitions; the group.id that
 * rd_kafka_consumer_poll needs is never joined and nothing is committed). The service publishes
 * each snapshot as chunks followed by a manifest (docs/service.md): headers
 * "model", "snapshot" (update count), "type" = chunk|manifest, and for chunks
 * "chunk" (index) and "chunks" (count). All records of a model are in one
 * partition, in order, so when a manifest arrives its chunks are already
 * here; the snapshot is accepted when every chunk is present and the whole
 * has the manifest's size and XXH3-64. The newest accepted snapshot is
 * decoded with slda_snapshot_decode and its topics printed.
 *
 * Built by CMake as build/read_snapshot (used by tests/0014-kafka_embedded.sh); by hand:
 *   cc -Iinclude examples/read_snapshot.c build/libslda.a \
 *      $(pkg-config --cflags --libs rdkafka) -lmsgpackc -lz -lm -lpthread
 * (libslda.a is the engine; a program that embeds the service links
 * build/libslda_kafka.a before it.)
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <librdkafka/rdkafka.h>
#include <streamlda.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct snap_s {
    char model[256];
    uint64_t id;
    size_t nchunks;
    unsigned char **chunk; /* nchunks buffers, NULL until received */
    size_t *len;
} snap_t;

static snap_t *snaps; /* one entry per (model, snapshot id) seen */
static size_t nsnaps;

static const char *header(const rd_kafka_message_t *m, const char *name, char *buf, size_t size)
{
    rd_kafka_headers_t *hdrs;
    const void *val;
    size_t len;
    if (rd_kafka_message_headers(m, &hdrs) || rd_kafka_header_get_last(hdrs, name, &val, &len))
        return NULL;
    snprintf(buf, size, "%.*s", (int)len, (const char *)val);
    return buf;
}

static snap_t *snap_get(const char *model, uint64_t id, size_t nchunks)
{
    for (size_t i = 0; i < nsnaps; i++)
        if (snaps[i].id == id && !strcmp(snaps[i].model, model)) {
            if (snaps[i].nchunks >= nchunks)
                return &snaps[i];
            for (size_t c = 0; c < snaps[i].nchunks; c++) /* republished differently */
                free(snaps[i].chunk[c]);
            free(snaps[i].chunk);
            free(snaps[i].len);
            snaps[i].nchunks = nchunks;
            snaps[i].chunk = calloc(nchunks, sizeof *snaps[i].chunk);
            snaps[i].len = calloc(nchunks, sizeof *snaps[i].len);
            return &snaps[i];
        }
    snaps = realloc(snaps, (nsnaps + 1) * sizeof *snaps);
    snap_t *s = &snaps[nsnaps++];
    memset(s, 0, sizeof *s);
    snprintf(s->model, sizeof s->model, "%s", model);
    s->id = id;
    s->nchunks = nchunks;
    s->chunk = calloc(nchunks, sizeof *s->chunk);
    s->len = calloc(nchunks, sizeof *s->len);
    return s;
}

/* A JSON number field of the manifest (flat object, numbers only needed). */
static long long json_num(const char *json, size_t len, const char *field)
{
    char key[64], *copy = strndup(json, len);
    snprintf(key, sizeof key, "\"%s\":", field);
    const char *p = strstr(copy, key);
    long long v = p ? strtoll(p + strlen(key), NULL, 10) : -1;
    free(copy);
    return v;
}

static int json_hex(const char *json, size_t len, const char *field, uint64_t *out)
{
    char key[64], *copy = strndup(json, len);
    snprintf(key, sizeof key, "\"%s\":\"", field);
    const char *p = strstr(copy, key);
    int ok = p != NULL;
    if (ok)
        *out = strtoull(p + strlen(key), NULL, 16);
    free(copy);
    return ok;
}

/* Check a manifest against its chunks; on success the joined bytes. */
static unsigned char *verify(const rd_kafka_message_t *m, snap_t *s, size_t *total)
{
    long long bytes = json_num(m->payload, m->len, "bytes");
    uint64_t want;
    if (bytes < 0 || !json_hex(m->payload, m->len, "xxh3", &want))
        return NULL;
    size_t sum = 0;
    for (size_t c = 0; c < s->nchunks; c++) {
        if (!s->chunk[c])
            return NULL;
        sum += s->len[c];
    }
    if (sum != (size_t)bytes)
        return NULL;
    unsigned char *buf = malloc(sum ? sum : 1);
    for (size_t c = 0, off = 0; c < s->nchunks; off += s->len[c], c++)
        memcpy(buf + off, s->chunk[c], s->len[c]);
    if (XXH3_64bits(buf, sum) != want) {
        free(buf);
        return NULL;
    }
    *total = sum;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BROKERS [TOPIC [MODEL [WORDS]]]\n", argv[0]);
        return 2;
    }
    const char *topic = argc > 2 ? argv[2] : "streamlda.snapshots";
    const char *want_model = argc > 3 && *argv[3] ? argv[3] : NULL;
    size_t nwords = argc > 4 ? (size_t)atoi(argv[4]) : 10;
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof err) ||
        rd_kafka_conf_set(conf, "group.id", "streamlda-read-snapshot", err, sizeof err) ||
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct rd_kafka_metadata *md;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) || md->topic_cnt != 1 || md->topics[0].err) {
        fprintf(stderr, "topic %s: no metadata\n", topic);
        return 1;
    }
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(4);
    int64_t *high = calloc((size_t)md->topics[0].partition_cnt, sizeof *high);
    for (int i = 0; i < md->topics[0].partition_cnt; i++) {
        int32_t p = md->topics[0].partitions[i].id;
        int64_t lo;
        if (rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &high[i], 10000))
            high[i] = 0;
        if (high[i] > lo)
            rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(rk, parts);
    int remaining = parts->cnt;
    unsigned char *best = NULL;
    size_t best_len = 0;
    uint64_t best_id = 0;
    while (remaining > 0) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 10000);
        if (!m) {
            fprintf(stderr, "timed out reading %s\n", topic);
            break;
        }
        if (m->err) {
            fprintf(stderr, "%s: %s\n", topic, rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        char type[32], model[256], sid[32], idx[32], cnt[32];
        if (!m->err && header(m, "type", type, sizeof type) &&
            header(m, "model", model, sizeof model) && header(m, "snapshot", sid, sizeof sid) &&
            (!want_model || !strcmp(model, want_model))) {
            uint64_t id = strtoull(sid, NULL, 10);
            if (!strcmp(type, "chunk") && header(m, "chunk", idx, sizeof idx) &&
                header(m, "chunks", cnt, sizeof cnt)) {
                snap_t *s = snap_get(model, id, (size_t)atol(cnt));
                size_t c = (size_t)atol(idx);
                if (c < s->nchunks) {
                    free(s->chunk[c]);
                    s->chunk[c] = malloc(m->len ? m->len : 1);
                    memcpy(s->chunk[c], m->payload, m->len);
                    s->len[c] = m->len;
                }
            } else if (!strcmp(type, "manifest")) {
                snap_t *s = snap_get(model, id, (size_t)json_num(m->payload, m->len, "chunks"));
                size_t len;
                unsigned char *buf = verify(m, s, &len);
                if (buf && (!best || id >= best_id)) {
                    free(best);
                    best = buf, best_len = len, best_id = id;
                } else
                    free(buf);
            }
        }
        for (int i = 0; !m->err && i < md->topics[0].partition_cnt; i++)
            if (md->topics[0].partitions[i].id == m->partition && m->offset + 1 == high[i])
                remaining--;
        rd_kafka_message_destroy(m);
    }
    rd_kafka_topic_partition_list_destroy(parts);
    free(high);
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    if (!best) {
        fprintf(stderr, "no complete snapshot in %s\n", topic);
        return 1;
    }
    slda_err_t code;
    slda_model_t *model = slda_snapshot_decode(best, best_len, &code, err, sizeof err);
    free(best);
    if (!model) {
        fprintf(stderr, "snapshot %" PRIu64 ": %s\n", best_id, err);
        return 1;
    }
    printf("snapshot %" PRIu64 ": %zu bytes, %" PRIu64 " documents, %u topics\n", best_id,
           best_len, slda_model_docs(model), slda_model_topics(model));
    uint32_t *ids = calloc(nwords + 1, sizeof *ids);
    float *probs = calloc(nwords + 1, sizeof *probs);
    for (uint32_t k = 0; k < slda_model_topics(model); k++) {
        size_t n = slda_model_top_words(model, k, nwords, ids, probs);
        printf("topic %u:", k);
        for (size_t i = 0; i < n; i++)
            printf(" %s", slda_model_word(model, ids[i]));
        printf("\n");
    }
    free(ids);
    free(probs);
    slda_model_destroy(model);
    return 0;
}
