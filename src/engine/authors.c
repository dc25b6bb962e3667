/* authors.c - the author-topic model's author statistics: the prior, the step, the table.
 *
 * docs/models.md, "The author-topic model". The author-topic model (Rosen-Zvi et al.;
 * Heinrich's generic VB paper, section on ATM) draws each token's author x uniformly
 * from its document's authors and its topic from theta_x; there is no per-document mixture.
 * With the topic-word counts frozen for a minibatch (the stream local step), a token's
 * posterior over (x, k) is proportional to (N_x[k] + n_dx[k] + alpha_k) / (|N_x| + n_dx +
 * alpha_sum) f[w][k]: for a document of one author this is LDA's local step with the prior
 * alpha_k + N_x[k] in place of alpha_k (the document's own counts n_dx are what the local
 * step keeps as N_theta), so the hybrid local step runs unchanged - CVB0 for repeated words
 * is the arithmetic-mean (AMF) update of this model, the sampled singletons draw k and the
 * author then follows r(x | k) - and only the prior changes (slda_authors_prior). A document
 * of several authors is seen through the mixture of their mixtures with their mean mass as
 * concentration (the tokens are not split between authors while the document's sweeps run);
 * its counts are split between them by r(x | k) afterwards (slda_authors_step). Both are
 * exact for one author and an approximation for several: docs/models.md says so.
 *
 * The global step on authors is the topic-word step's schedule per author: an author's
 * statistics in a minibatch are scaled to the tokens it has written so far (T_a: the size
 * its counts stand for, as C is the corpus's) and blended in with rho(t_a), t_a its updates;
 * rho(0) = 1 with the default schedule, so an author's first documents set its counts.
 *
 * Memory: capacity x K floats, reserved (slda_big_alloc: pages are touched as authors come)
 * plus a name table (text/vocab.c: XXH3 keys, the rarest evicted 1% at a time when full,
 * pinned for the minibatch in which they appear and the next).
 */
#include "engine/authors.h"
#include "core/topn.h"
#include "engine/local.h"
#include "engine/model_priv.h"
#include "engine/step.h"
#include "text/vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct slda_authors_s {
    uint32_t K, cap;
    slda_vocab_t *names;
    float *N;          /* cap x K: N_a[k] */
    double *tot;       /* cap: |N_a| */
    double *tokens;    /* cap: T_a */
    uint64_t *t;       /* cap: t_a */
    uint64_t evicted;
    uint64_t refused;  /* authors a full table could not take */
    /* one minibatch's statistics */
    uint32_t *slot;    /* cap: the author's row of S, or UINT32_MAX */
    uint32_t *order;   /* the authors of the minibatch, in first appearance */
    double *S;         /* per slot: K + 1 (the last: L_a) */
    uint32_t nslots, cslots;
};

static void on_evict(uint32_t id, void *opaque)
{
    slda_authors_t *a = opaque;
    memset(a->N + (size_t)id * a->K, 0, a->K * sizeof(float));
    a->tot[id] = a->tokens[id] = 0;
    a->t[id] = 0;
    a->evicted++;
}

slda_authors_t *slda_authors_new(uint32_t K, uint32_t capacity, uint64_t seed, char *errstr,
                                 size_t errstr_size)
{
    slda_authors_t *a = slda_xcalloc(1, sizeof *a);
    a->K = K;
    a->cap = capacity;
    a->N = slda_big_alloc((size_t)capacity * K * sizeof(float), "author-topic counts", errstr,
                          errstr_size);
    a->names = slda_vocab_new(capacity, seed ^ 0x617574686f7273ull, 0);
    if (!a->N || !a->names) {
        if (a->N && !a->names)
            slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM, "authors: cannot allocate %u names",
                         capacity);
        slda_authors_free(a);
        return NULL;
    }
    /* slda_big_alloc's memory is zero: a large block's pages are touched only as authors come */
    a->tot = slda_xcalloc(capacity, sizeof *a->tot);
    a->tokens = slda_xcalloc(capacity, sizeof *a->tokens);
    a->t = slda_xcalloc(capacity, sizeof *a->t);
    a->slot = slda_xmalloc(capacity * sizeof *a->slot);
    memset(a->slot, 0xff, capacity * sizeof *a->slot);
    slda_vocab_set_evict_cb(a->names, on_evict, a);
    return a;
}

void slda_authors_free(slda_authors_t *a)
{
    if (!a)
        return;
    slda_vocab_destroy(a->names);
    slda_big_free(a->N);
    free(a->tot);
    free(a->tokens);
    free(a->t);
    free(a->slot);
    free(a->order);
    free(a->S);
    free(a);
}

void slda_authors_map(slda_authors_t *a, const slda_doc_t *docs, size_t ndocs, uint32_t **aoff,
                      uint32_t **aid)
{
    size_t n = 0;
    for (size_t i = 0; i < ndocs; i++)
        n += docs[i].nauthor;
    uint32_t *off = slda_xmalloc((ndocs + 1) * sizeof *off);
    uint32_t *ids = slda_xmalloc((n + 1) * sizeof *ids);
    uint32_t m = 0;
    for (size_t i = 0; i < ndocs; i++) {
        off[i] = m;
        if (docs[i].npairs == 0 || docs[i].ntokens == 0)
            continue;
        for (uint32_t j = 0; j < docs[i].nauthor; j++) {
            const char *name = docs[i].author[j];
            bool added;
            uint32_t id = slda_vocab_get_or_add(a->names, name, strlen(name), &added);
            if (id == UINT32_MAX) {
                a->refused++;
                continue;
            }
            ids[m++] = id;
        }
    }
    off[ndocs] = m;
    *aoff = off;
    *aid = ids;
}

uint32_t slda_authors_find(const slda_authors_t *a, const slda_doc_t *doc, uint32_t *ids)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < doc->nauthor; j++) {
        uint32_t id = slda_vocab_find(a->names, doc->author[j], strlen(doc->author[j]));
        if (id != UINT32_MAX)
            ids[n++] = id;
    }
    return n;
}

double slda_authors_prior(const slda_authors_t *a, const uint32_t *ids, uint32_t n,
                          const double *alpha, double alpha_sum, float *out)
{
    uint32_t K = a->K, held = 0;
    if (n == 1) {
        const float *N = a->N + (size_t)ids[0] * K;
        for (uint32_t k = 0; k < K; k++)
            out[k] = (float)(alpha[k] + N[k]);
        return alpha_sum + a->tot[ids[0]];
    }
    double m[SLDA_MAX_TOPICS], c = 0;
    memset(m, 0, K * sizeof *m);
    for (uint32_t j = 0; j < n; j++) {
        double tot = a->tot[ids[j]];
        if (!(tot > 0))
            continue;
        const float *N = a->N + (size_t)ids[j] * K;
        for (uint32_t k = 0; k < K; k++)
            m[k] += N[k] / tot;
        c += tot;
        held++;
    }
    double scale = held ? c / held / held : 0; /* c m_k: mean mass times the mean mixture */
    for (uint32_t k = 0; k < K; k++)
        out[k] = (float)(alpha[k] + scale * m[k]);
    return alpha_sum + (held ? c / held : 0);
}

void slda_authors_doc_prior(const slda_model_t *model, const slda_doc_t *doc,
                            slda_local_t *loc)
{
    uint32_t ids[SLDA_MAX_DOC_AUTHORS];
    const slda_authors_t *a = model->authors;
    uint32_t n = a && doc->nauthor ? slda_authors_find(a, doc, ids) : 0;
    if (n == 0)
        return;
    loc->prior_sum = slda_authors_prior(a, ids, n, model->alpha, model->alpha_sum,
                                        loc->prior_buf);
    loc->prior = loc->prior_buf;
}

uint32_t slda_authors_top(const slda_authors_t *a, uint32_t k, uint32_t n, uint32_t *out)
{
    uint32_t m = 0, max = slda_vocab_max_id(a->names);
    double *key = slda_xmalloc(((size_t)n + 1) * sizeof *key);
    for (uint32_t id = 0; id < max && n; id++) {
        float v = a->N[(size_t)id * a->K + k];
        if (slda_vocab_word(a->names, id) && v > 0)
            slda_topn_push(out, key, &m, n, id, v);
    }
    free(key);
    return m;
}

void slda_author_mixture(const slda_model_t *model, uint32_t id, float *out)
{
    const slda_authors_t *a = model->authors;
    uint32_t K = model->K;
    const float *N = a->N + (size_t)id * K;
    double denom = a->tot[id] + model->alpha_sum;
    for (uint32_t k = 0; k < K; k++)
        out[k] = (float)((N[k] + model->alpha[k]) / denom);
}

static double *slot_of(slda_authors_t *a, uint32_t id)
{
    if (a->slot[id] == UINT32_MAX) {
        if (a->nslots == a->cslots) {
            a->cslots = a->cslots ? 2 * a->cslots : 64;
            a->order = slda_xrealloc(a->order, a->cslots * sizeof *a->order);
            a->S = slda_xrealloc(a->S, (size_t)a->cslots * (a->K + 1) * sizeof *a->S);
        }
        a->slot[id] = a->nslots;
        a->order[a->nslots] = id;
        memset(a->S + (size_t)a->nslots * (a->K + 1), 0, (a->K + 1) * sizeof *a->S);
        a->nslots++;
    }
    return a->S + (size_t)a->slot[id] * (a->K + 1);
}

void slda_authors_step(slda_authors_t *a, const slda_params_t *p, const uint32_t *aoff,
                       const uint32_t *aid, size_t ndocs, const float *ntheta,
                       const double *alpha, double alpha_sum)
{
    uint32_t K = a->K;
    double r[SLDA_MAX_TOPICS], norm[SLDA_MAX_TOPICS];
    a->nslots = 0;
    for (size_t i = 0; i < ndocs; i++) {
        uint32_t n = aoff[i + 1] - aoff[i];
        const uint32_t *ids = aid + aoff[i];
        const float *nt = ntheta + i * K;
        if (n == 1) {
            double *S = slot_of(a, ids[0]);
            for (uint32_t k = 0; k < K; k++) {
                S[k] += nt[k];
                S[K] += nt[k];
            }
            continue;
        }
        /* several authors: r(x | k) from the counts before this minibatch's step */
        memset(norm, 0, K * sizeof *norm);
        for (uint32_t j = 0; j < n; j++) {
            const float *N = a->N + (size_t)ids[j] * K;
            double inv = 1.0 / (a->tot[ids[j]] + alpha_sum);
            for (uint32_t k = 0; k < K; k++)
                norm[k] += (N[k] + alpha[k]) * inv;
        }
        for (uint32_t j = 0; j < n; j++) {
            const float *N = a->N + (size_t)ids[j] * K;
            double inv = 1.0 / (a->tot[ids[j]] + alpha_sum);
            for (uint32_t k = 0; k < K; k++)
                r[k] = (N[k] + alpha[k]) * inv / norm[k];
            double *S = slot_of(a, ids[j]);
            for (uint32_t k = 0; k < K; k++) {
                S[k] += nt[k] * r[k];
                S[K] += nt[k] * r[k];
            }
        }
    }
    for (uint32_t s = 0; s < a->nslots; s++) {
        uint32_t id = a->order[s];
        const double *S = a->S + (size_t)s * (K + 1);
        a->slot[id] = UINT32_MAX;
        double L = S[K];
        if (!(L > 0))
            continue;
        a->tokens[id] += L;
        double rho = slda_rho(p, a->t[id]++);
        double w = rho * a->tokens[id] / L, tot = 0;
        float *N = a->N + (size_t)id * K;
        for (uint32_t k = 0; k < K; k++) {
            N[k] = (float)((1.0 - rho) * N[k] + w * S[k]);
            tot += N[k];
        }
        a->tot[id] = tot;
        slda_vocab_touch(a->names, id, L);
    }
    a->nslots = 0;
    slda_vocab_new_epoch(a->names);
}

uint32_t slda_authors_max_id(const slda_authors_t *a)
{
    return slda_vocab_max_id(a->names);
}

const char *slda_authors_name(const slda_authors_t *a, uint32_t id)
{
    return slda_vocab_word(a->names, id);
}

const float *slda_authors_counts(const slda_authors_t *a, uint32_t id)
{
    return a->N + (size_t)id * a->K;
}

double slda_authors_tokens(const slda_authors_t *a, uint32_t id)
{
    return a->tokens[id];
}

double slda_authors_mass(const slda_authors_t *a, uint32_t id)
{
    return a->tot[id];
}

uint64_t slda_authors_updates(const slda_authors_t *a, uint32_t id)
{
    return a->t[id];
}

double slda_authors_freq(const slda_authors_t *a, uint32_t id)
{
    return slda_vocab_freq(a->names, id);
}

uint32_t slda_authors_size(const slda_authors_t *a)
{
    return slda_vocab_size(a->names);
}

uint32_t slda_authors_capacity(const slda_authors_t *a)
{
    return a->cap;
}

uint64_t slda_authors_evicted(const slda_authors_t *a)
{
    return a->evicted;
}

uint64_t slda_authors_refused(const slda_authors_t *a)
{
    return a->refused;
}

uint32_t slda_authors_lookup(const slda_authors_t *a, const char *name, size_t len)
{
    return slda_vocab_find(a->names, name, len);
}

slda_err_t slda_authors_put(slda_authors_t *a, uint32_t id, const char *name, size_t len,
                            double freq, const float *counts, double tokens, uint64_t updates,
                            char *errstr, size_t errstr_size)
{
    if (id >= a->cap)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "author id %u: outside authors.capacity %u", id, a->cap);
    if (!(tokens >= 0) || !isfinite(tokens))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT, "author %u: tokens %g", id,
                            tokens);
    double tot = 0;
    for (uint32_t k = 0; k < a->K; k++) {
        if (!(counts[k] >= 0) || !isfinite(counts[k]))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                                "author %u: count %u is %g", id, k, (double)counts[k]);
        tot += counts[k];
    }
    slda_err_t err = slda_vocab_put(a->names, id, name, len, freq, errstr, errstr_size);
    if (err != SLDA_OK)
        return err;
    memcpy(a->N + (size_t)id * a->K, counts, a->K * sizeof(float));
    a->tot[id] = tot;
    a->tokens[id] = tokens;
    a->t[id] = updates;
    return SLDA_OK;
}

void slda_authors_set_counters(slda_authors_t *a, uint64_t evicted)
{
    a->evicted = evicted;
}
