/* unit_replay.c - second visits (replay.docs, src/engine/replay.c): when each trained
 * minibatch comes back (in a stream; and not before the drain when the whole input is known
 * to fit in replay.docs, as streamlda train tells the model), that it comes back exactly once
 * (drain included) without counting as new documents or tokens, that the drain shuffles the
 * waiting documents across the waiting minibatches the same way for the same seed, and that
 * a stored document comes back as the same words after the open vocabulary has evicted some
 * of them and handed their ids to others.
 *
 * Documents are built from text through the model's own open vocabulary, as the readers
 * and the Kafka service build them (the generator of unit_openvocab.c).
 */
#include "engine/model.h"
#include "engine/replay.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

enum { SCHED_DOCS = 300 }; /* test_schedule's input: 30 minibatches of 10 documents */

static slda_params_t base_params(uint32_t capacity, uint32_t replay_docs)
{
    slda_params_t p;
    memset(&p, 0, sizeof p);
    p.topics = 4;
    p.alpha = 0.1;
    p.eta = 0.1;
    p.vb = SLDA_VB_CVB0;
    p.hybrid = 1;
    p.threshold = 1;
    p.burnin = 5;
    p.samples = 5;
    p.stats = SLDA_STATS_RB;
    p.rho_s = 1;
    p.rho_tau = 1;
    p.rho_kappa = 0.7;
    p.init_scale = 1;
    p.corpus_tokens = 20000;
    p.vocab_capacity = capacity;
    p.seed = 11;
    p.threads = 1;
    p.min_length = 1;
    p.stopwords = "none";
    p.replay = SLDA_REPLAY_ON;
    p.replay_docs = replay_docs;
    p.replay_burnin = 1;
    p.replay_samples = 1;
    return p;
}

static slda_model_t *open_model(const slda_params_t *p)
{
    char err[256];
    slda_model_t *model = slda_model_alloc(p, p->vocab_capacity, 0, (p)->seed, NULL, err, sizeof err);
    if (!model) {
        fprintf(stderr, "slda_model_alloc: %s\n", err);
        exit(1);
    }
    return model;
}

/* Document d: 4 topics of 60 words, 2 topics a document, 40 tokens; from
 * document fresh_from on, one token in four is a word never seen before. */
static void make_doc(slda_model_t *model, uint64_t seed, size_t d, size_t fresh_from,
                     slda_doc_t *doc)
{
    char buf[2048], err[256];
    slda_rng_t rng;
    slda_rng_seed3(&rng, seed, 0x646f63, d);
    uint32_t ka = slda_rng_below(&rng, 4), kb = slda_rng_below(&rng, 4);
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t k = slda_rng_below(&rng, 2) ? ka : kb;
        double u = slda_rng_double(&rng);
        uint32_t w = (uint32_t)(60 * u * u * u);
        if (d >= fresh_from && i % 4 == 3)
            n += slda_test_spell(buf + n, sizeof buf - n, 'n', (uint64_t)d * 64 + (uint64_t)i);
        else
            n += slda_test_spell(buf + n, sizeof buf - n, 't', k * 100 + w);
    }
    slda_doc_init(doc);
    if (slda_doc_from_text(model, buf, n, doc, err, sizeof err) != SLDA_OK) {
        fprintf(stderr, "slda_doc_from_text: %s\n", err);
        exit(1);
    }
}

/* Minibatches stored after c equal minibatches: all of them when the input
 * fits in replay.docs (fits); else none due while 4 or fewer are stored,
 * then down to half of all documents stored so far; at most cap_batches
 * when replay.docs holds that many. */
static uint64_t stored_after(uint64_t c, uint64_t cap_batches, int fits)
{
    uint64_t nb = fits || c <= 4 ? c : (c / 2 > 4 ? c / 2 : 4);
    return nb < cap_batches ? nb : cap_batches;
}

/* Each stored minibatch is trained once more, later: an update of its own,
 * counted in neither docs nor tokens; drain trains the rest. input_docs:
 * the documents of the whole input when known (replay_input_docs), else 0. */
static void test_schedule(uint32_t replay_docs, uint64_t cap_batches, uint64_t input_docs)
{
    enum { MB = 10, CALLS = SCHED_DOCS / MB };
    slda_params_t p = base_params(4096, replay_docs);
    slda_model_t *model = open_model(&p);
    model->replay_input_docs = input_docs;
    int fits = input_docs > 0 && input_docs <= replay_docs;
    slda_doc_t docs[MB];
    char err[256];
    uint64_t tokens = 0, mismatches = 0;
    for (uint64_t c = 1; c <= CALLS; c++) {
        for (size_t i = 0; i < MB; i++) {
            make_doc(model, 5, (c - 1) * MB + i, 1u << 30, &docs[i]);
            tokens += docs[i].ntokens;
        }
        CHECK_INT(slda_model_train(model, docs, MB, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_docs_clear(docs, MB);
        uint64_t nb = stored_after(c, cap_batches, fits);
        mismatches += slda_model_updates(model) != c + (c - nb);
        mismatches += slda_replay_stored(model) != nb * MB;
        /* every second visit so far was resolved during the local steps of
         * the minibatch whose store made it due (slda_replay_ahead_due) */
        mismatches += slda_replay_popped_ahead(model) != c - nb;
    }
    CHECK_INT(mismatches, 0);
    CHECK_INT(slda_model_docs(model), CALLS * MB);
    CHECK_INT(slda_model_tokens(model), tokens); /* second visits are not new tokens */
    CHECK_INT(model->replay_tokens, tokens - stored_after(CALLS, cap_batches, fits) * MB * 40);
    CHECK_INT(slda_model_replay_drain(model, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_model_updates(model), 2 * CALLS); /* every minibatch exactly twice */
    CHECK_INT(slda_replay_stored(model), 0);
    CHECK_INT(model->replay_tokens, tokens);
    CHECK_INT(slda_model_docs(model), CALLS * MB);
    double total = 0;
    for (uint32_t k = 0; k < model->K; k++)
        total += model->NZ[k];
    CHECK_GT(total, 0);
    CHECK_EQ(total, total);
    slda_model_destroy(model);
}

/* replay=auto (the library's default: off) or replay.docs=0: one visit,
 * nothing stored. */
static void test_off(slda_replay_mode_t mode, uint32_t replay_docs)
{
    slda_params_t p = base_params(4096, replay_docs);
    p.replay = mode;
    slda_model_t *model = open_model(&p);
    slda_doc_t docs[10];
    char err[256];
    for (size_t c = 0; c < 12; c++) {
        for (size_t i = 0; i < 10; i++)
            make_doc(model, 5, c * 10 + i, 1u << 30, &docs[i]);
        CHECK_INT(slda_model_train(model, docs, 10, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_docs_clear(docs, 10);
    }
    CHECK_INT(slda_model_updates(model), 12);
    CHECK_INT(slda_replay_stored(model), 0);
    CHECK_INT(slda_model_replay_drain(model, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_model_updates(model), 12);
    slda_model_destroy(model);
}

/* The drain's order with seed: order[i] = the document (pushed in order
 * 0..NB-1, in minibatches of 2) at position i of the drain's minibatches
 * (each checked to hold 2), UINT32_MAX if none matched. ahead: each pop but
 * the first hands out the minibatch resolved ahead after the one before
 * (slda_replay_ahead, as train.c's drain does it), its documents resolved
 * last first. */
enum { NB = 20 };
static void drain_order(uint64_t seed, int ahead, uint32_t *order)
{
    slda_params_t p = base_params(4096, 0); /* stores only what the test pushes */
    p.seed = seed;
    slda_model_t *model = open_model(&p);
    slda_doc_t docs[NB];
    char err[256];
    for (size_t j = 0; j < NB; j++)
        make_doc(model, 7, j, 1u << 30, &docs[j]);
    CHECK_INT(slda_model_train(model, docs, NB, NULL, NULL, err, sizeof err), SLDA_OK);
    for (size_t j = 0; j < NB; j += 2)
        slda_replay_push(model, &docs[j], 2);
    size_t n;
    for (size_t i = 0; i < NB; i += 2) {
        slda_doc_t *back = slda_replay_pop(model, 1, &n);
        CHECK_NONNULL(back);
        CHECK_INT(n, 2);
        for (size_t h = 0; h < 2; h++) {
            order[i + h] = UINT32_MAX;
            for (uint32_t j = 0; back && n == 2 && j < NB; j++)
                if (back[h].npairs == docs[j].npairs &&
                    !memcmp(back[h].word, docs[j].word, docs[j].npairs * sizeof *docs[j].word) &&
                    !memcmp(back[h].count, docs[j].count, docs[j].npairs * sizeof *docs[j].count))
                    order[i + h] = j;
        }
        if (back) {
            slda_docs_clear(back, n);
            free(back);
        }
        size_t nahead = ahead ? slda_replay_ahead(model) : 0;
        CHECK_INT(nahead, ahead && i + 2 < NB ? 2 : 0);
        CHECK_INT(ahead ? slda_replay_ahead(model) : 0, 0); /* one at a time */
        for (size_t h = nahead; h-- > 0;)
            slda_replay_ahead_item(h, 0, model);
    }
    CHECK_NULL(slda_replay_pop(model, 1, &n));
    CHECK_INT(slda_replay_stored(model), 0);
    slda_docs_clear(docs, NB);
    slda_model_destroy(model);
}

/* The drain shuffles the waiting documents across the waiting minibatches
 * (as a shuffled second pass): each document exactly once, not in the order
 * they came, some paired with a document of another minibatch, the same
 * order for the same seed (resolved ahead or not) and another for another
 * seed. */
static void test_drain_order(void)
{
    uint32_t a[NB], b[NB], c[NB], d[NB];
    unsigned seen[NB] = {0};
    int fifo = 1, same = 1, other = 0, mixed = 0;
    drain_order(11, 0, a);
    drain_order(11, 0, b);
    drain_order(12, 0, c);
    drain_order(11, 1, d); /* resolved ahead: the same minibatches */
    CHECK_MEM(a, d, sizeof a);
    for (uint32_t i = 0; i < NB; i++) {
        if (a[i] < NB)
            seen[a[i]]++;
        fifo &= a[i] == i;
        same &= a[i] == b[i];
        other |= a[i] != c[i];
        mixed |= i % 2 == 0 && a[i] / 2 != a[i + 1] / 2;
    }
    for (uint32_t j = 0; j < NB; j++)
        CHECK_INT(seen[j], 1);
    CHECK(!fifo);
    CHECK(mixed);
    CHECK(same);
    CHECK(other);
}

/* A stored document comes back as its own words: those the model still
 * holds, by key, whatever ids the evicted ones were given meanwhile. */
static void test_words_after_eviction(void)
{
    enum { ND = 10 };
    slda_params_t p = base_params(700, 0); /* stores only what the test pushes */
    slda_model_t *model = open_model(&p);
    slda_doc_t kept[ND];
    char err[256];
    char *word[ND][64];
    uint64_t key[ND][64];
    uint32_t count[ND][64], id[ND][64];
    for (size_t j = 0; j < ND; j++) {
        make_doc(model, 21, 1000 + j, 0, &kept[j]); /* 1 token in 4 a word of its own */
        CHECK_LE(kept[j].npairs, 64);
        for (uint32_t u = 0; u < kept[j].npairs && u < 64; u++) {
            id[j][u] = kept[j].word[u];
            const char *w = slda_vocab_word(model->vocab, kept[j].word[u]);
            word[j][u] = malloc(strlen(w) + 1);
            memcpy(word[j][u], w, strlen(w) + 1);
            key[j][u] = slda_vocab_key(model->vocab, kept[j].word[u]);
            count[j][u] = kept[j].count[u];
        }
    }
    CHECK_INT(slda_model_train(model, kept, ND, NULL, NULL, err, sizeof err), SLDA_OK);
    slda_replay_push(model, kept, ND);
    CHECK_INT(slda_replay_stored(model), ND);
    /* a stream with new words in every document fills the vocabulary: the
     * rarest words are evicted and their ids reused */
    slda_doc_t docs[20];
    for (size_t d = 0; d < 240; d += 20) {
        for (size_t i = 0; i < 20; i++)
            make_doc(model, 21, d + i, 60, &docs[i]);
        CHECK_INT(slda_model_train(model, docs, 20, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_docs_clear(docs, 20);
    }
    CHECK_GT(slda_vocab_evictions(model->vocab), 500);
    size_t n = 0, reused = 0, gone = 0, wrong = 0, missing = 0;
    for (size_t j = 0; j < ND; j++)
        for (uint32_t u = 0; u < kept[j].npairs && u < 64; u++) {
            const char *now = slda_vocab_word(model->vocab, id[j][u]);
            reused += now && strcmp(now, word[j][u]) != 0; /* the old id names another word */
            uint32_t held = slda_vocab_find_key(model->vocab, key[j][u]);
            gone += !(held < model->W && model->row_ready[held]);
        }
    CHECK_GT(reused, 0); /* stale ids would have trained other words */
    CHECK_GT(gone, 0);
    /* due (more than replay.docs = 0 wait), not drained: documents in order */
    slda_doc_t *back = slda_replay_pop(model, 0, &n);
    CHECK_NONNULL(back);
    CHECK_INT(n, ND); /* 3 tokens in 4 are topic words: no document left empty */
    for (size_t j = 0; j < n && j < ND; j++) {
        uint32_t expect = 0;
        for (uint32_t u = 0; u < kept[j].npairs && u < 64; u++) {
            uint32_t held = slda_vocab_find_key(model->vocab, key[j][u]);
            if (!(held < model->W && model->row_ready[held]))
                continue;
            expect++;
            int found = 0;
            for (uint32_t v = 0; v < back[j].npairs; v++)
                if (back[j].word[v] == held)
                    found = back[j].count[v] == count[j][u];
            missing += !found;
        }
        CHECK_INT(back[j].npairs, expect);
        for (uint32_t v = 0; v < back[j].npairs; v++) {
            const char *w = slda_vocab_word(model->vocab, back[j].word[v]);
            int ok = 0;
            for (uint32_t u = 0; u < kept[j].npairs && u < 64 && !ok; u++)
                ok = w && !strcmp(w, word[j][u]);
            wrong += !ok;
        }
    }
    CHECK_INT(wrong, 0);
    CHECK_INT(missing, 0);
    CHECK_INT(slda_replay_stored(model), 0);
    slda_docs_clear(back, n);
    free(back);
    for (size_t j = 0; j < ND; j++)
        for (uint32_t u = 0; u < kept[j].npairs && u < 64; u++)
            free(word[j][u]);
    slda_docs_clear(kept, ND);
    slda_model_destroy(model);
}

/* Pops of the same store on twin models agree document for document. */
static void check_same_pop(slda_model_t *a, slda_model_t *b, size_t expect)
{
    size_t na = 0, nb = 0;
    slda_doc_t *da = slda_replay_pop(a, 0, &na), *db = slda_replay_pop(b, 0, &nb);
    CHECK_NONNULL(da);
    CHECK_NONNULL(db);
    CHECK_INT(na, expect);
    CHECK_INT(nb, expect);
    size_t differ = 0;
    for (size_t j = 0; da && db && j < na && j < nb; j++)
        differ += da[j].npairs != db[j].npairs || da[j].ntokens != db[j].ntokens ||
                  memcmp(da[j].word, db[j].word, da[j].npairs * sizeof *da[j].word) ||
                  memcmp(da[j].count, db[j].count, da[j].npairs * sizeof *da[j].count);
    CHECK_INT(differ, 0);
    if (da)
        slda_docs_clear(da, na);
    if (db)
        slda_docs_clear(db, nb);
    free(da);
    free(db);
}

/* The oldest minibatch resolved ahead (slda_replay_ahead_due, as train.c
 * does it in the local steps of the minibatch whose store makes it due) is
 * what the pop right after that store would resolve; resolved ahead but
 * popped only after the vocabulary has evicted words, it is resolved again
 * (its ids would name other words). Model b, a twin given the same input,
 * never resolves ahead. */
static void test_ahead_oldest(void)
{
    enum { ND = 10, NN = 2 };
    slda_params_t p = base_params(700, 0); /* stores only what the test pushes */
    slda_model_t *m[2];
    slda_doc_t kept[2][ND], next[2][2][NN];
    char err[256];
    for (int t = 0; t < 2; t++) {
        m[t] = open_model(&p);
        for (size_t j = 0; j < ND; j++)
            make_doc(m[t], 21, 1000 + j, 0, &kept[t][j]); /* 1 token in 4 a word of its own */
        CHECK_INT(slda_model_train(m[t], kept[t], ND, NULL, NULL, err, sizeof err), SLDA_OK);
        slda_replay_push(m[t], kept[t], ND);
        for (size_t r = 0; r < 2; r++)
            for (size_t j = 0; j < NN; j++)
                make_doc(m[t], 21, 2000 + 10 * r + j, 1u << 30, &next[t][r][j]);
    }
    for (size_t r = 0; r < 2; r++) {
        slda_replay_fill_t *f = slda_replay_reserve(m[0], next[0][r], NN);
        size_t nahead = slda_replay_ahead_due(m[0], f);
        CHECK_INT(nahead, r == 0 ? ND : NN); /* replay.docs = 0: the oldest is due */
        CHECK_INT(slda_replay_ahead_due(m[0], f), 0); /* one at a time */
        for (size_t h = nahead; h-- > 0;)
            slda_replay_ahead_item(h, 0, m[0]);
        for (size_t j = 0; j < NN; j++)
            slda_replay_fill(f, m[0], j, &next[0][r][j]);
        slda_replay_store(m[0], f);
        slda_replay_push(m[1], next[1][r], NN);
        if (r == 0) { /* new words evict the rarest ones, on both */
            slda_doc_t docs[20];
            for (int t = 0; t < 2; t++)
                for (size_t d = 0; d < 240; d += 20) {
                    for (size_t i = 0; i < 20; i++)
                        make_doc(m[t], 21, d + i, 60, &docs[i]);
                    CHECK_INT(slda_model_train(m[t], docs, 20, NULL, NULL, err, sizeof err),
                              SLDA_OK);
                    slda_docs_clear(docs, 20);
                }
            CHECK_GT(slda_vocab_evictions(m[0]->vocab), 500);
        }
        check_same_pop(m[0], m[1], r == 0 ? ND : NN);
        CHECK_INT(slda_replay_popped_ahead(m[0]), r); /* the stale one resolved again */
    }
    for (int t = 0; t < 2; t++) {
        slda_docs_clear(kept[t], ND);
        for (size_t r = 0; r < 2; r++)
            slda_docs_clear(next[t][r], NN);
        slda_model_destroy(m[t]);
    }
}

int main(void)
{
    test_schedule(100000, 1000, 0); /* a stream: the delay is about the documents seen before */
    test_schedule(25, 2, 0);        /* replay.docs bounds it: 2 minibatches of 10 */
    test_schedule(100000, 1000, SCHED_DOCS); /* the input fits: all wait for the drain */
    test_schedule(SCHED_DOCS, 1000, SCHED_DOCS);        /* fits exactly */
    test_schedule(SCHED_DOCS - 1, 29, SCHED_DOCS);      /* one too many: as a stream */
    test_schedule(25, 2, SCHED_DOCS);
    test_off(SLDA_REPLAY_AUTO, 20000);
    test_off(SLDA_REPLAY_ON, 0);
    test_drain_order();
    test_words_after_eviction();
    test_ahead_oldest();
    return slda_test_done("unit_replay");
}
