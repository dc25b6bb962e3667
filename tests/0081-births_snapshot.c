/* 0081-births_snapshot.c - a model restored from a snapshot makes the births decisions of one
 * that never stopped (issue 11, "deterministic and replicable"; issue 10's replicas).
 *
 * A synthetic stream whose topics change at a known document (5 old topics, then 70% of the
 * documents from 5 new ones, over their own words), K=10, births on with their defaults. Run A
 * trains on it without a stop. Run B trains on the same minibatches but at a point after the
 * shift, where the births baseline is settled and flagged documents sit in the buffer (before
 * the first birth), it is encoded to a snapshot, destroyed, decoded and trained on with the
 * rest. Births must fire after that point, and A and B must agree bit for bit: every row of the
 * topic-word counts, NZ, alpha, sigma, the births counters and every event; with
 * global.stale=0 and with the pipeline (global.stale=1: A is flushed where B is saved, as a
 * service flushes before each snapshot). The same is
 * checked with births off (the plain round trip must already be exact), and a snapshot whose
 * births state is cut out (as written before it was stored) still loads and trains, from a
 * fresh baseline, which slda_model_reconcile (a restarting service) logs.
 */
#include "engine/births.h"
#include "core/config.h"
#include "engine/model.h"
#include "testutil.h"
#include "testcorpus.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K 10
#define W 300       /* words 0..149: the old topics'; 150..299: the new ones' */
#define REGIME_W 150
#define NTOPICS 5   /* true topics per regime */
#define NDOCS 6000
#define SHIFT 3000
#define LEN 60
#define MB 20       /* documents per minibatch */

static char errbuf[1024];

typedef struct stream_s {
    slda_doc_t docs[NDOCS];
    double phi[2 * NTOPICS][W];
} stream_t;

/* True topic t of regime r: mass on its own block of 30 words, a little on the rest of its
 * regime's words, none on the other regime's. */
static void make_stream(stream_t *s, uint64_t seed)
{
    slda_rng_t rng;
    slda_rng_seed(&rng, seed);
    memset(s->phi, 0, sizeof s->phi);
    for (uint32_t t = 0; t < 2 * NTOPICS; t++) {
        uint32_t base = t < NTOPICS ? 0 : REGIME_W, block = REGIME_W / NTOPICS;
        double sum = 0;
        for (uint32_t w = base; w < base + REGIME_W; w++) {
            s->phi[t][w] = (w - base) / block == t % NTOPICS ? 1.0 + slda_rng_double(&rng)
                                                               : 0.01;
            sum += s->phi[t][w];
        }
        for (uint32_t w = 0; w < W; w++)
            s->phi[t][w] /= sum;
    }
    for (size_t d = 0; d < NDOCS; d++) {
        int fresh = d >= SHIFT && slda_rng_double(&rng) < 0.7;
        uint32_t first = fresh ? NTOPICS : 0;
        double theta[NTOPICS], tot = 0;
        for (uint32_t k = 0; k < NTOPICS; k++) {
            double u = slda_rng_double(&rng);
            theta[k] = u * u * u * u; /* a few topics dominate each document */
            tot += theta[k];
        }
        slda_doc_init(&s->docs[d]);
        for (uint32_t i = 0; i < LEN; i++) {
            double u = slda_rng_double(&rng) * tot, acc = 0, v = slda_rng_double(&rng);
            uint32_t k = 0, w = 0;
            for (; k < NTOPICS - 1; k++)
                if ((acc += theta[k]) > u)
                    break;
            acc = 0;
            for (; w < W - 1; w++)
                if ((acc += s->phi[first + k][w]) > v)
                    break;
            slda_doc_add(&s->docs[d], w, 1);
        }
        slda_doc_finish(&s->docs[d]);
    }
}

static slda_params_t stream_params(int births, slda_rows_kind_t rows, double tau, double kappa,
                                    uint32_t stale)
{
    slda_params_t p;
    memset(&p, 0, sizeof p);
    p.topics = K;
    p.alpha = 0.1;
    p.eta = 0.05;
    p.alpha_learn = SLDA_ALPHA_FIXEDPOINT;
    p.vb = SLDA_VB_CVB0;
    p.hybrid = 1;
    p.threshold = 1;
    p.burnin = 5;
    p.samples = 5;
    p.tolerance = 0.001;
    p.stats = SLDA_STATS_RB;
    p.rho_s = 1;
    p.rho_tau = tau;
    p.rho_kappa = kappa;
    p.rows = rows;
    p.stale = stale;
    p.corpus_tokens = 0; /* a stream: the default horizon */
    p.init_scale = 1;
    p.vocab_capacity = 1024;
    p.seed = 11;
    p.threads = 1;
    p.min_length = 1;
    p.stopwords = "none";
    p.max_doc_bytes = 1 << 20;
    births_params(&p, births);
    return p;
}

/* A model over the fixed vocabulary "w0".."w{W-1}" with its initial rows. */
static slda_model_t *new_model(int births, slda_rows_kind_t rows, double tau, double kappa,
                               uint32_t stale)
{
    slda_params_t p = stream_params(births, rows, tau, kappa, stale);
    return make_model(&p, W); /* testcorpus.h */
}

/* Minibatches of MB documents from..to; returns how often sigma was folded into the rows
 * (SLDA_SIGMA_FOLD: sigma goes back to 1). */
static int train_range(slda_model_t *model, stream_t *s, size_t from, size_t to)
{
    int folds = 0;
    for (size_t i = from; i < to; i += MB) {
        size_t n = to - i < MB ? to - i : MB;
        double sigma = model->sigma;
        if (slda_model_train(model, s->docs + i, n, NULL, NULL, errbuf, sizeof errbuf) !=
            SLDA_OK) {
            fprintf(stderr, "train: %s\n", errbuf);
            slda_test_failures++;
            return folds;
        }
        folds += model->sigma > sigma;
    }
    return folds;
}

/* slda_model_reconcile's log: counts the lines about a missing births state. */
static void count_no_state(void *opaque, const char *line)
{
    if (strstr(line, "no births state")) {
        ++*(int *)opaque;
        printf("reconcile: %s\n", line);
    }
}

/* What a restarting service does with a decoded model: reconcile it with its
 * configuration (all defaults); returns the lines saying it has no births state. */
static int reconcile_lines(slda_model_t *model)
{
    slda_conf_t *conf = slda_conf_new();
    int n = 0;
    CHECK_INT(slda_model_reconcile(model, conf, count_no_state, &n, errbuf, sizeof errbuf),
              SLDA_OK);
    slda_conf_destroy(conf);
    return n;
}

static slda_topic_counts_t counts_of(const slda_model_t *model)
{
    slda_topic_counts_t c;
    slda_model_topic_counts(model, &c);
    return c;
}

/* Encode, destroy, decode: the model a restarted service or a replica would hold. */
static slda_model_t *restart(slda_model_t *model, void **snap, size_t *len)
{
    slda_err_t err = SLDA_ERR__COUNT;
    slda_model_t *back;
    CHECK_INT(slda_snapshot_encode(model, snap, len, errbuf, sizeof errbuf), SLDA_OK);
    back = slda_snapshot_decode(*snap, *len, &err, errbuf, sizeof errbuf);
    if (!back) {
        fprintf(stderr, "decode: %s (%s)\n", errbuf, slda_err_name(err));
        exit(1);
    }
    slda_model_destroy(model);
    return back;
}

/* The decisions and the counts of a and b, bit for bit; returns the number of differences. */
static int compare(const slda_model_t *a, const slda_model_t *b, const char *what)
{
    int bad = 0;
    size_t rows = 0;
    for (uint32_t w = 0; w < W; w++)
        rows += memcmp(a->A + (size_t)w * a->Kp, b->A + (size_t)w * b->Kp, K * sizeof(float)) != 0;
    bad += rows != 0;
    bad += memcmp(a->NZ, b->NZ, K * sizeof(double)) != 0;
    bad += memcmp(a->alpha, b->alpha, K * sizeof(double)) != 0;
    bad += memcmp(&a->alpha_sum, &b->alpha_sum, sizeof(double)) != 0;
    bad += memcmp(&a->sigma, &b->sigma, sizeof(double)) != 0;
    bad += a->t != b->t || a->docs != b->docs || a->tokens != b->tokens;
    slda_topic_counts_t ca = counts_of(a), cb = counts_of(b);
    bad += memcmp(&ca, &cb, sizeof ca) != 0;
    slda_event_t ea[1024], eb[1024];
    size_t na = slda_model_events(a, 0, ea, 1024), nb = slda_model_events(b, 0, eb, 1024);
    size_t evbad = na != nb;
    for (size_t i = 0; i < na && i < nb; i++)
        evbad += ea[i].seq != eb[i].seq || ea[i].update != eb[i].update || ea[i].doc != eb[i].doc ||
                 ea[i].kind != eb[i].kind || ea[i].topic != eb[i].topic ||
                 ea[i].other != eb[i].other || ea[i].docs != eb[i].docs ||
                 memcmp(&ea[i].value, &eb[i].value, sizeof(double)) != 0;
    bad += evbad != 0;
    printf("%s: rows differing %zu of %u; births %llu/%llu deaths %llu/%llu merges %llu/%llu "
           "flagged %llu/%llu proposals %llu/%llu; events %zu/%zu (%zu differ); sigma %.17g/%.17g;"
           " %d difference(s)\n",
           what, rows, W, (unsigned long long)ca.births, (unsigned long long)cb.births,
           (unsigned long long)ca.deaths, (unsigned long long)cb.deaths,
           (unsigned long long)ca.merges, (unsigned long long)cb.merges,
           (unsigned long long)ca.flagged, (unsigned long long)cb.flagged,
           (unsigned long long)ca.proposals, (unsigned long long)cb.proposals, na, nb, evbad,
           a->sigma, b->sigma, bad);
    return bad;
}

/* Births on: restore where the buffer holds flagged documents and no birth has fired yet.
 * With global.stale=1 (the pipeline) a model is flushed before it is saved, so the model that
 * keeps running is flushed at the same point (a service's periodic snapshot does that). */
static void test_births_restart(stream_t *s, uint32_t stale)
{
    slda_model_t *a = new_model(1, SLDA_ROWS_COUNTS, 64, 0.7, stale),
                 *b = new_model(1, SLDA_ROWS_COUNTS, 64, 0.7, stale);
    void *snap = NULL;
    size_t len = 0, at = 0;
    char what[64];
    snprintf(what, sizeof what, "births on, global.stale=%u, restored", stale);
    for (size_t i = 0; i < NDOCS; i += MB) {
        train_range(b, s, i, i + MB);
        slda_topic_counts_t c = counts_of(b);
        if (i + MB > SHIFT && c.proposals == 0 && slda_births_buffered(b->births) >= 32) {
            at = i + MB;
            break;
        }
    }
    CHECK_GT(at, 0);
    if (!at) {
        slda_model_destroy(a);
        slda_model_destroy(b);
        return;
    }
    slda_topic_counts_t before = counts_of(b);
    uint32_t buffered = slda_births_buffered(b->births);
    printf("births, global.stale=%u: restored after document %zu (update %llu): %llu flagged, "
           "%u buffered\n", stale, at, (unsigned long long)b->t,
           (unsigned long long)before.flagged, buffered);
    CHECK_GE(buffered, 32); /* a state worth keeping: lost, the next proposal comes later */
    train_range(a, s, 0, at);
    slda_model_flush(a);
    slda_model_flush(b);
    slda_params_t pb = b->p;
    b = restart(b, &snap, &len);
    /* the births settings travel with the model */
    CHECK_INT(b->p.births, pb.births);
    CHECK_INT(b->p.births_docs, pb.births_docs);
    CHECK_EQ(b->p.births_z, pb.births_z);
    CHECK_EQ(b->p.births_gain, pb.births_gain);
    CHECK_EQ(b->p.births_floor, pb.births_floor);
    CHECK_EQ(b->p.births_merge, pb.births_merge);
    b->p.births = pb.births; /* so that the comparison below shows the state alone */
    b->p.births_docs = pb.births_docs;
    b->p.births_z = pb.births_z;
    b->p.births_gain = pb.births_gain;
    b->p.births_floor = pb.births_floor;
    b->p.births_merge = pb.births_merge;
    CHECK_NONNULL(memmem(snap, len, "\xa6" "births\x8e", 8));
    /* the same state written without its births section (a snapshot from before it was
     * stored): it loads, and the first update starts a fresh baseline */
    slda_births_t *kept = b->births;
    void *old = NULL;
    size_t oldlen = 0;
    b->births = NULL;
    CHECK_INT(slda_snapshot_encode(b, &old, &oldlen, errbuf, sizeof errbuf), SLDA_OK);
    b->births = kept;
    slda_err_t err = SLDA_ERR__COUNT;
    slda_model_t *c = slda_snapshot_decode(old, oldlen, &err, errbuf, sizeof errbuf);
    CHECK_INT(err, SLDA_OK);
    if (c) {
        CHECK_NULL(c->births);
        CHECK_INT(c->p.births, 1);
        train_range(c, s, at, at + 4 * MB); /* 80 documents: under the 100 a baseline needs */
        CHECK_NONNULL(c->births);
        CHECK_INT(counts_of(c).flagged, 0); /* the new baseline is not warm yet */
        slda_model_destroy(c);
    }
    /* a service says so when it restores such a snapshot, and only then */
    c = slda_snapshot_decode(old, oldlen, &err, errbuf, sizeof errbuf);
    if (c)
        CHECK_INT(reconcile_lines(c), 1);
    slda_model_destroy(c);
    c = slda_snapshot_decode(snap, len, &err, errbuf, sizeof errbuf);
    if (c)
        CHECK_INT(reconcile_lines(c), 0);
    slda_model_destroy(c);
    free(old);
    train_range(a, s, at, NDOCS);
    train_range(b, s, at, NDOCS);
    slda_model_flush(a);
    slda_model_flush(b);
    slda_topic_counts_t ca = counts_of(a);
    CHECK_GE(ca.births, 3); /* births fire after the restore point */
    CHECK_INT(compare(a, b, what), 0);
    free(snap);
    slda_model_destroy(a);
    slda_model_destroy(b);
}

/* After the first birth the running count of global.rows=counts is windowed (births.c, "5. Row
 * totals"): restored from a snapshot taken once the window cut the count (at least 100
 * documents after that birth), the model goes on
 * windowing it from the same count, and agrees with the one that never stopped. */
static void test_windowed_restart(stream_t *s, uint32_t stale)
{
    slda_model_t *a = new_model(1, SLDA_ROWS_COUNTS, 64, 0.7, stale),
                 *b = new_model(1, SLDA_ROWS_COUNTS, 64, 0.7, stale);
    void *snap = NULL;
    size_t len = 0, at = 0, born = 0;
    char what[64];
    snprintf(what, sizeof what, "windowed count, global.stale=%u, restored", stale);
    for (size_t i = 0; i + MB <= NDOCS; i += MB) {
        train_range(b, s, i, i + MB);
        if (!born && counts_of(b).births > 0)
            born = i + MB;
        if (born && i + MB >= born + 100) { /* and once the window has cut the count */
            slda_births_state_t cut;
            slda_births_export(b->births, &cut);
            int short_ = cut.counted > 0 && cut.counted < b->tokens;
            slda_births_export_clear(&cut);
            if (short_) {
                at = i + MB;
                break;
            }
        }
    }
    CHECK_GT(at, 0);
    CHECK_LE(at + 1000, NDOCS);
    slda_births_state_t st;
    slda_births_export(b->births, &st);
    CHECK_INT(st.windowed, 1);
    CHECK_GT(st.counted, 0);
    CHECK_LT(st.counted, b->tokens); /* the window cut the count short */
    printf("windowed: first birth by document %zu, restored after %zu, %llu of %llu tokens "
           "counted\n", born, at, (unsigned long long)st.counted, (unsigned long long)b->tokens);
    slda_births_export_clear(&st);
    train_range(a, s, 0, at);
    slda_model_flush(a);
    slda_model_flush(b);
    b = restart(b, &snap, &len);
    train_range(a, s, at, NDOCS);
    train_range(b, s, at, NDOCS);
    slda_model_flush(a);
    slda_model_flush(b);
    CHECK_INT(compare(a, b, what), 0);
    /* a minibatch of empty documents does not empty the windowed count (it once did, and the
     * next update then had r_t = 1: every row not in that minibatch forgotten) */
    slda_doc_t empty[MB];
    memset(empty, 0, sizeof empty);
    uint32_t held = 0, after = 0;
    for (uint32_t w = 0; w < W; w++)
        held += a->A[(size_t)w * a->Kp] + a->A[(size_t)w * a->Kp + 1] > 0;
    CHECK_INT(slda_model_train(a, empty, MB, NULL, NULL, errbuf, sizeof errbuf), SLDA_OK);
    train_range(a, s, NDOCS - MB, NDOCS);
    train_range(a, s, NDOCS - MB, NDOCS);
    slda_model_flush(a);
    for (uint32_t w = 0; w < W; w++)
        after += a->A[(size_t)w * a->Kp] + a->A[(size_t)w * a->Kp + 1] > 0;
    printf("windowed, global.stale=%u: rows held %u before an empty minibatch, %u after\n", stale,
           held, after);
    CHECK_GE(after, held * 9 / 10);
    free(snap);
    slda_model_destroy(a);
    slda_model_destroy(b);
}

/* Births off: the plain round trip continues bit for bit, with the default global step
 * (global.rows=counts) and with the plain one (decay) at rho_t = (2 + t)^-0.5, which decays
 * sigma fast enough for it to be folded into the rows (float products) before the restore and
 * after it. */
static void test_plain_restart(stream_t *s, slda_rows_kind_t rows, double tau, double kappa,
                               const char *what)
{
    slda_model_t *a = new_model(0, rows, tau, kappa, 0), *b = new_model(0, rows, tau, kappa, 0);
    void *snap = NULL;
    size_t len = 0;
    int folds_a = train_range(a, s, 0, NDOCS), folds_b = train_range(b, s, 0, SHIFT + 400);
    printf("%s: sigma folded %d times in the whole run, %d before the restore\n", what, folds_a,
           folds_b);
    if (rows == SLDA_ROWS_DECAY) {
        CHECK_GE(folds_b, 1);
        CHECK_GT(folds_a, folds_b);
    }
    b = restart(b, &snap, &len);
    CHECK_NULL(memmem(snap, len, "\xa6" "births\x8e", 8)); /* no state: no section */
    CHECK_INT(b->p.births, 0);
    train_range(b, s, SHIFT + 400, NDOCS);
    CHECK_INT(compare(a, b, what), 0);
    free(snap);
    slda_model_destroy(a);
    slda_model_destroy(b);
}

int main(void)
{
    stream_t *s = malloc(sizeof *s);
    make_stream(s, 5);
    test_plain_restart(s, SLDA_ROWS_COUNTS, 64, 0.7, "births off, global.rows=counts");
    test_plain_restart(s, SLDA_ROWS_DECAY, 2, 0.5, "births off, global.rows=decay");
    test_births_restart(s, 0);
    test_births_restart(s, 1);
    test_windowed_restart(s, 0);
    test_windowed_restart(s, 1);
    slda_docs_clear(s->docs, NDOCS);
    free(s);
    return slda_test_done("0081-births_snapshot");
}
