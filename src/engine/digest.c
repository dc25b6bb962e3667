/* digest.c - one hash of what replicas of a model must agree on (slda_model_digest).
 *
 * Replicas apply the same log of update records and must hold the same
 * model bit for bit; the service logs this digest so that can be checked
 * (docs/replication.md). It covers the counters (updates, documents,
 * tokens), K, sigma, alpha, NZ and, for every word in use, its key,
 * frequency, ready flag and K row values (not the padding). Word ids are
 * first-come per process, so words are taken in the order of their XXH3
 * keys, which every process computes alike.
 */
#include "engine/model_priv.h"

#include <stdlib.h>

typedef struct digest_word_s {
    uint64_t key;
    uint32_t id;
} digest_word_t;

static int digest_word_cmp(const void *a, const void *b)
{
    uint64_t x = ((const digest_word_t *)a)->key, y = ((const digest_word_t *)b)->key;
    return x < y ? -1 : x > y;
}

uint64_t slda_model_digest(const slda_model_t *model)
{
    uint32_t n = 0, max = slda_vocab_max_id(model->vocab), K = model->K;
    digest_word_t *w = slda_xmalloc(((size_t)max + 1) * sizeof *w);
    for (uint32_t id = 0; id < max && id < model->W; id++)
        if (slda_vocab_word(model->vocab, id))
            w[n].key = slda_vocab_key(model->vocab, id), w[n++].id = id;
    qsort(w, n, sizeof *w, digest_word_cmp); /* ids are per process, keys are not */
    uint64_t head[4] = {model->t, model->docs, model->tokens, K};
    uint64_t h = slda_hash64(head, sizeof head, 0x5344); /* "SD" */
    h = slda_hash64(&model->sigma, sizeof model->sigma, h);
    h = slda_hash64(model->alpha, K * sizeof *model->alpha, h);
    h = slda_hash64(model->NZ, K * sizeof *model->NZ, h);
    for (uint32_t i = 0; i < n; i++) {
        struct {
            uint64_t key;
            double freq;
            uint32_t ready;
        } rec = {w[i].key, slda_vocab_freq(model->vocab, w[i].id),
                 model->row_ready[w[i].id]};
        h = slda_hash64(&rec.key, sizeof rec.key, h);
        h = slda_hash64(&rec.freq, sizeof rec.freq, h);
        h = slda_hash64(&rec.ready, sizeof rec.ready, h);
        h = slda_hash64(model->A + (size_t)w[i].id * model->Kp, K * sizeof(float), h);
    }
    free(w);
    return h;
}
