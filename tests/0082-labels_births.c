/* 0082-labels_births.c - user labels of topic slots (src/engine/labels.c) through births, a
 * restart and the snapshot format (issue 25, item 5: labels "stored with the model, surviving
 * snapshots, births elsewhere, restarts and replicas").
 *
 * The stream of 0081 (5 topics, then from document 3000 on 70% of the documents from 5 new
 * topics), K=10, births on. Every slot is labelled at document 2000, before the shift. Run A
 * trains to the end without a stop; run B is encoded to a snapshot and decoded at document
 * 3000, before the births (a restart, or a replica starting from the writer's snapshot), and
 * trains on. Then:
 *  - the snapshot holds the labels and the decoded model has them, byte for byte;
 *  - the slots the engine re-seeded (birth), retired (death) or freed by a merge after the
 *    labelling have no label, every other slot keeps its own (births elsewhere leave it);
 *  - A and B hold the same labels (the drops are decisions of the global update, which every
 *    replica applying the same log makes);
 *  - a model without labels writes no "labels" key (its snapshots are what they were), and a
 *    label too long, not UTF-8, with a control character or of a topic out of range is refused
 *    with the reason; "" removes one.
 */
#include "core/config.h"
#include "engine/model.h"
#include "engine/model_priv.h"
#include "testutil.h"
#include "testcorpus.h"

#include <stdlib.h>
#include <string.h>

#define K 10
#define W 300
#define NDOCS 6000
#define SHIFT 3000
#define LABEL_AT 2000
#define RESTART_AT 3000
#define LEN 60
#define MB 20

static char errbuf[1024];

/* 5 true topics on words 0..149 before SHIFT, 5 on words 150..299 (70% of the documents) after. */
static void make_docs(slda_doc_t *docs, uint64_t seed)
{
    slda_rng_t rng;
    slda_rng_seed(&rng, seed);
    for (size_t d = 0; d < NDOCS; d++) {
        int late = d >= SHIFT && slda_rng_double(&rng) < 0.7;
        uint32_t t = (uint32_t)(slda_rng_double(&rng) * 5), base = (late ? 150 : 0) + 30 * t;
        slda_doc_init(&docs[d]);
        for (int i = 0; i < LEN; i++) {
            double u = slda_rng_double(&rng);
            uint32_t w = u < 0.85 ? base + (uint32_t)(slda_rng_double(&rng) * 30)
                                  : (late ? 150 : 0) + (uint32_t)(slda_rng_double(&rng) * 150);
            slda_doc_add(&docs[d], w, 1);
        }
        slda_doc_finish(&docs[d]);
    }
}

static slda_model_t *new_model(void)
{
    slda_conf_t *conf = slda_conf_new();
    slda_conf_set(conf, "topics", "10", errbuf, sizeof errbuf);
    slda_conf_set(conf, "seed", "7", errbuf, sizeof errbuf);
    slda_conf_set(conf, "threads", "1", errbuf, sizeof errbuf);
    slda_conf_set(conf, "births", "true", errbuf, sizeof errbuf);
    slda_conf_set(conf, "global.stale", "0", errbuf, sizeof errbuf);
    slda_params_t p = conf->p;
    slda_model_t *model = make_model(&p, W); /* testcorpus.h: the words "w0".."w{W-1}" */
    slda_conf_destroy(conf);
    return model;
}

static void train_range(slda_model_t *model, slda_doc_t *docs, size_t from, size_t to)
{
    for (size_t i = from; i < to; i += MB)
        if (slda_model_train(model, docs + i, to - i < MB ? to - i : MB, NULL, NULL, errbuf,
                             sizeof errbuf) != SLDA_OK) {
            fprintf(stderr, "train: %s\n", errbuf);
            slda_test_failures++;
            return;
        }
}

static void label_all(slda_model_t *model)
{
    char text[40];
    for (uint32_t k = 0; k < K; k++) {
        snprintf(text, sizeof text, "topic %u: \xc3\xa9t\xc3\xa9 & co", k); /* UTF-8 */
        CHECK_OK(slda_model_set_label(model, k, text, errbuf, sizeof errbuf), errbuf);
    }
}

static void test_rules(void)
{
    slda_model_t *m = new_model();
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(slda_snapshot_encode(m, &buf, &len, errbuf, sizeof errbuf), errbuf);
    CHECK_NULL(memmem(buf, len, "\xa6labels", 7)); /* no labels: no key */
    free(buf);
    char long_label[SLDA_LABEL_MAX + 2];
    memset(long_label, 'x', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    CHECK_ERR(slda_model_set_label(m, 0, long_label, errbuf, sizeof errbuf), SLDA_ERR_RANGE,
              errbuf);
    CHECK_CONTAINS(errbuf, "at most 120");
    CHECK_ERR(slda_model_set_label(m, K, "x", errbuf, sizeof errbuf), SLDA_ERR_RANGE, errbuf);
    CHECK_CONTAINS(errbuf, "out of range");
    CHECK_TRUE(slda_model_set_label(m, 0, "bad \xff", errbuf, sizeof errbuf) != SLDA_OK,
               "invalid UTF-8 refused");
    CHECK_ERR(slda_model_set_label(m, 0, "a\nb", errbuf, sizeof errbuf), SLDA_ERR_INVALID,
              errbuf);
    CHECK_NULL(slda_model_label(m, 0));
    CHECK_OK(slda_model_set_label(m, 3, "sport", errbuf, sizeof errbuf), errbuf);
    CHECK_STR(slda_model_label(m, 3), "sport");
    CHECK_OK(slda_model_set_label(m, 3, "", errbuf, sizeof errbuf), errbuf);
    CHECK_NULL(slda_model_label(m, 3));
    slda_model_destroy(m);
}

int main(void)
{
    slda_doc_t *docs = malloc(NDOCS * sizeof *docs);
    make_docs(docs, 5);
    test_rules();
    slda_model_t *a = new_model(), *b = new_model();
    train_range(a, docs, 0, LABEL_AT);
    train_range(b, docs, 0, LABEL_AT);
    label_all(a);
    label_all(b);
    slda_event_t ev[1024];
    uint64_t seq0 = 0;
    size_t n0 = slda_model_events(a, 0, ev, 1024);
    if (n0)
        seq0 = ev[n0 - 1].seq;
    train_range(a, docs, LABEL_AT, NDOCS);
    train_range(b, docs, LABEL_AT, RESTART_AT);
    /* the restart: encode, destroy, decode */
    void *snap = NULL;
    size_t len = 0;
    slda_err_t err = SLDA_ERR__COUNT;
    CHECK_OK(slda_snapshot_encode(b, &snap, &len, errbuf, sizeof errbuf), errbuf);
    CHECK_NONNULL(memmem(snap, len, "\xa6labels", 7));
    slda_model_t *back = slda_snapshot_decode(snap, len, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    if (!back)
        return slda_test_done("0082-labels_births");
    int same = 0;
    for (uint32_t k = 0; k < K; k++)
        same += (!slda_model_label(b, k) && !slda_model_label(back, k)) ||
                (slda_model_label(b, k) && slda_model_label(back, k) &&
                 !strcmp(slda_model_label(b, k), slda_model_label(back, k)));
    CHECK_INT(same, K);
    slda_model_destroy(b);
    b = back;
    train_range(b, docs, RESTART_AT, NDOCS);
    /* the slots the engine changed since the labelling */
    int changed[K] = {0};
    size_t n = slda_model_events(a, seq0, ev, 1024), births = 0, other_kinds = 0;
    for (size_t i = 0; i < n; i++) {
        changed[ev[i].topic] = 1;
        births += ev[i].kind == SLDA_EVENT_BIRTH;
        other_kinds += ev[i].kind != SLDA_EVENT_BIRTH;
        printf("event after the labels: %s of slot %u (other %u) at update %llu\n",
               slda_event_kind_name(ev[i].kind), ev[i].topic, ev[i].other,
               (unsigned long long)ev[i].update);
    }
    CHECK_GE(births, 1);
    int nchanged = 0, kept = 0, dropped = 0, agree = 0;
    for (uint32_t k = 0; k < K; k++) {
        char want[40];
        snprintf(want, sizeof want, "topic %u: \xc3\xa9t\xc3\xa9 & co", k);
        const char *la = slda_model_label(a, k), *lb = slda_model_label(b, k);
        nchanged += changed[k];
        if (changed[k])
            dropped += la == NULL;
        else
            kept += la && !strcmp(la, want);
        agree += (!la && !lb) || (la && lb && !strcmp(la, lb));
        printf("slot %u: %s; label %s\n", k, changed[k] ? "changed" : "same topic",
               la ? la : "(none)");
    }
    printf("%d slots changed (%zu births, %zu deaths/merges), %d labels dropped, %d kept\n",
           nchanged, births, other_kinds, dropped, kept);
    CHECK_GE(nchanged, 1);
    CHECK_LT(nchanged, K); /* births elsewhere: some labels must survive them */
    CHECK_INT(dropped, nchanged);
    CHECK_INT(kept, K - nchanged);
    CHECK_INT(agree, K);
    free(snap);
    slda_model_destroy(a);
    slda_model_destroy(b);
    slda_docs_clear(docs, NDOCS);
    free(docs);
    return slda_test_done("0082-labels_births");
}
