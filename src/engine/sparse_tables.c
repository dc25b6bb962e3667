/* sparse_tables.c - a minibatch's word proposals for the sparse local step.
 *
 * The sampled local step (local_sparse.c) proposes a token's topic from its
 * word's factor phi_w[k] = (sigma A_wk + eta) inv_k, inv_k = 1 / (NZ_k + W
 * eta): with the global state frozen for the minibatch this proposal is
 * exact, so its Metropolis-Hastings test reads only the document's counts.
 * phi_w splits into the part the row holds, sigma A_wk inv_k over the row's
 * listed topics (rows_nz.c), and the smoothing part eta inv_k over every
 * topic, which does not depend on the word: one alias table for all. The
 * row's part is kept as running sums over its listed topics (a draw is a
 * binary search): a minibatch's tables are made once and used by its
 * documents' tens of draws per token, and running sums cost one pass to make
 * where an alias table costs three (on KOS at K=1000 a minibatch's words hold
 * about as many entries as its tokens make draws, docs/engine.md). Built on
 * the model's thread in the order of the words' first appearance, so the
 * tables and every draw depend on the minibatch alone.
 */
#include "engine/sparse.h"

#include <stdlib.h>
#include <string.h>

void slda_wtabs_free(slda_wtabs_t *t)
{
    if (!t)
        return;
    free(t->of);
    free(t->word);
    free(t->off);
    free(t->mass);
    free(t->amass);
    free(t->lmass);
    free(t->topic);
    free(t->cum);
    slda_alias_clear(&t->smooth);
    slda_alias_clear(&t->alpha);
    memset(t, 0, sizeof *t);
}

static void grow_tables(slda_wtabs_t *t)
{
    uint32_t cap = t->cap ? 2 * t->cap : 1024;
    t->word = slda_xrealloc(t->word, cap * sizeof *t->word);
    t->off = slda_xrealloc(t->off, ((size_t)cap + 1) * sizeof *t->off);
    t->mass = slda_xrealloc(t->mass, cap * sizeof *t->mass);
    t->amass = slda_xrealloc(t->amass, cap * sizeof *t->amass);
    t->lmass = slda_xrealloc(t->lmass, cap * sizeof *t->lmass);
    t->cap = cap;
}

/* The tables every word shares: smoothing over inv_k, alpha's. */
static void shared_tables(slda_wtabs_t *t, const slda_model_t *model, const slda_frozen_t *fz)
{
    uint32_t K = model->K;
    double *w = slda_xmalloc(K * sizeof *w), inv = 0, ainv = 0;
    int sym = 1;
    for (uint32_t k = 0; k < K; k++) {
        w[k] = fz->inv_nz[k];
        inv += fz->inv_nz[k];
        ainv += (double)fz->alpha[k] * fz->inv_nz[k];
        sym &= fz->alpha[k] == fz->alpha[0];
    }
    slda_alias_build(&t->smooth, w, K);
    t->eta = (float)model->p.eta;
    t->sigma = (float)model->sigma;
    t->eta_inv = t->eta * inv;
    t->alpha_inv = t->eta * ainv;
    t->alpha_sym = sym;
    t->alpha0 = fz->alpha[0];
    if (!sym) {
        for (uint32_t k = 0; k < K; k++)
            w[k] = fz->alpha[k];
        slda_alias_build(&t->alpha, w, K);
    }
    free(w);
}

void slda_wtabs_build(slda_wtabs_t *t, const slda_model_t *model, const slda_frozen_t *fz,
                      const slda_doc_t *docs, size_t ndocs)
{
    uint32_t Kp = model->Kp;
    if (t->W != model->W) {
        free(t->of);
        t->of = slda_xmalloc((size_t)model->W * sizeof *t->of);
        memset(t->of, 0xff, (size_t)model->W * sizeof *t->of);
        t->W = model->W;
    } else {
        for (uint32_t i = 0; i < t->n; i++)
            t->of[t->word[i]] = -1;
    }
    t->n = 0;
    size_t ne = 0;
    for (size_t d = 0; d < ndocs; d++)
        for (uint32_t u = 0; u < docs[d].npairs; u++) {
            uint32_t w = docs[d].word[u];
            if (t->of[w] >= 0)
                continue;
            if (t->n == t->cap)
                grow_tables(t);
            t->of[w] = (int32_t)t->n;
            t->word[t->n++] = w;
            ne += model->nzn[w];
        }
    if (!t->cap)
        grow_tables(t);
    if (ne + 1 > t->cap_e) {
        t->cap_e = ne + 1 > 2 * t->cap_e ? ne + 1 : 2 * t->cap_e;
        t->topic = slda_xrealloc(t->topic, t->cap_e * sizeof *t->topic);
        t->cum = slda_xrealloc(t->cum, t->cap_e * sizeof *t->cum);
    }
    shared_tables(t, model, fz);
    size_t pos = 0;
    double sigma = model->sigma;
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t w = t->word[i], n = model->nzn[w];
        const uint16_t *list = model->nzt[w];
        const float *a = model->A + (size_t)w * Kp;
        double c = 0, am = 0, lm = 0;
        t->off[i] = pos;
        if (t->alpha_sym) { /* alpha_0 times the sums: c, and inv_k over the same topics */
            double si = 0;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t k = list[j];
                double v = sigma * a[k] * fz->inv_nz[k];
                if (!(v > 0))
                    continue; /* a listed topic whose count is gone */
                c += v;
                si += fz->inv_nz[k];
                t->topic[pos] = (uint16_t)k;
                t->cum[pos++] = (float)c;
            }
            am = t->alpha0 * c;
            lm = t->alpha0 * (c + t->eta * si);
        } else {
            for (uint32_t j = 0; j < n; j++) {
                uint32_t k = list[j];
                double v = sigma * a[k] * fz->inv_nz[k];
                if (!(v > 0))
                    continue;
                c += v;
                am += fz->alpha[k] * v;
                lm += fz->alpha[k] * (v + t->eta * fz->inv_nz[k]);
                t->topic[pos] = (uint16_t)k;
                t->cum[pos++] = (float)c;
            }
        }
        t->mass[i] = (float)c;
        t->amass[i] = am + t->alpha_inv;
        t->lmass[i] = lm;
    }
    t->off[t->n] = pos;
}
