/* model.c - global state: topic-word counts with a lazy scale, topic totals, alpha, eta.
 *
 * Nphi[w][k] = sigma * A[w*Kp + k] (docs/algorithm.md, "Global step": lazy
 * scaling); NZ[k] = sum_w Nphi[w][k] is kept dense in doubles. Rows of the
 * fixed vocabulary get their random initial values at creation; rows of an
 * open vocabulary get them when a word first reaches training (row_ready),
 * decayed by every update so far, exactly what the row would hold had it
 * been there from the start; an evicted word's row is zeroed and taken out
 * of NZ. nready counts the rows ready: in open-vocabulary mode it is the W of
 * the smoothing NZ[k] + W eta (docs/engine.md, "Open vocabulary"), so NZ,
 * the rows ready and W always describe the same set of words. Only the
 * thread that owns the model mutates it; worker threads read it while it is
 * frozen.
 */
#include "engine/model_priv.h"
#include "engine/authors.h"
#include "engine/pam.h"
#include "engine/rows_nz.h"
#include "engine/step.h"
#include "core/pool.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void on_evict(uint32_t id, void *opaque)
{
    slda_model_t *model = opaque;
    float *a = model->A + (size_t)id * model->Kp;
    for (uint32_t k = 0; k < model->K; k++) {
        model->NZ[k] -= model->sigma * a[k];
        if (model->NZ[k] < 0)
            model->NZ[k] = 0;
        a[k] = 0;
    }
    slda_rows_nz_clear_row(model, id);
    if (model->row_ready && model->row_ready[id]) {
        model->row_ready[id] = 0;
        model->nready--;
    }
}

slda_model_t *slda_model_alloc(const slda_params_t *p, uint32_t W, int fixed_vocab,
                               uint64_t hash_seed, const slda_params_t *tok_p, char *errstr,
                               size_t errstr_size)
{
    if (p->topics < 1 || p->topics > SLDA_MAX_TOPICS || W < 1) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "model: topics %u or vocabulary size %u out of range", p->topics, W);
        return NULL;
    }
    const char *why = slda_kind_conflict(p);
    if (why) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "model.kind=%s: %s",
                     slda_kind_name(p->kind), why);
        return NULL;
    }
    slda_model_t *model = slda_xcalloc(1, sizeof *model);
    slda_params_copy(&model->p, p);
    if (p->kind != SLDA_KIND_LDA) /* births are LDA's (docs/models.md) */
        model->p.births = 0;
    model->K = p->topics;
    model->Kp = (p->topics + 15) & ~15u;
    model->W = W;
    model->sigma = 1.0;
    model->init_weight = 1.0;
    model->A = slda_big_alloc((size_t)W * model->Kp * sizeof(float), "topic-word counts",
                              errstr, errstr_size);
    model->row_ready = slda_big_alloc(W, "vocabulary rows", errstr, errstr_size);
    model->NZ = slda_xcalloc(model->K, sizeof(double));
    model->alpha = slda_xcalloc(model->K, sizeof(double));
    if (!model->A || !model->row_ready) {
        slda_model_free_state(model);
        return NULL;
    }
    for (uint32_t k = 0; k < model->K; k++)
        model->alpha[k] = p->alpha;
    model->alpha_sum = p->alpha * model->K;
    model->corpus_tokens = p->corpus_tokens;
    model->vocab = slda_vocab_new(W, hash_seed, fixed_vocab);
    if (!model->vocab) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM,
                     "vocabulary: cannot allocate %u entries", W);
        slda_model_free_state(model);
        return NULL;
    }
    slda_vocab_set_evict_cb(model->vocab, on_evict, model);
    if (p->kind == SLDA_KIND_ATM &&
        !(model->authors = slda_authors_new(model->K, p->authors_capacity, hash_seed, errstr,
                                            errstr_size))) {
        slda_model_free_state(model);
        return NULL;
    }
    model->tok = slda_tokenizer_new(tok_p ? tok_p : p, errstr, errstr_size);
    if (!model->tok) {
        slda_model_free_state(model);
        return NULL;
    }
    if (p->kind == SLDA_KIND_PAM) {
        model->pam = slda_pam_new(p->pam_super, model->K, p->alpha, p->seed);
        slda_pam_schedule(model->pam, p->pam_alpha_step, p->pam_alpha_warmup);
    }
    model->name = slda_xstrdup("streamlda");
    model->created_ms = model->updated_ms = slda_now_ms();
    return model;
}

const char *slda_kind_name(slda_model_kind_t kind)
{
#define KIND_NAME(id, name) [SLDA_KIND_##id] = #name,
    static const char *const names[SLDA_KIND__COUNT] = {SLDA_MODEL_KINDS(KIND_NAME)};
#undef KIND_NAME
    return (unsigned)kind < SLDA_KIND__COUNT ? names[kind] : "?";
}

const struct slda_pam_s *slda_model_pam(const slda_model_t *model)
{
    return model->pam;
}

struct slda_pam_s *slda_model_pam_mut(slda_model_t *model)
{
    return model->pam;
}

const struct slda_authors_s *slda_model_authors(const slda_model_t *model)
{
    return model->authors;
}

struct slda_authors_s *slda_model_authors_mut(slda_model_t *model)
{
    return model->authors;
}

const char *slda_kind_conflict(const slda_params_t *p)
{
    if (p->kind == SLDA_KIND_LDA)
        return NULL;
    if (p->kind == SLDA_KIND_ATM && p->authors_capacity == 0)
        return "authors.capacity must be at least 1";
    if (p->kind == SLDA_KIND_PAM && p->pam_super == 0)
        return "pam.super must be at least 1";
    if (p->alpha_learn != SLDA_ALPHA_FIXED)
        return "alpha.learn must be off";
    if (p->sparse == SLDA_SPARSE_ON)
        return "local.sparse=on is not supported (the dense local step runs)";
    if (p->replay == SLDA_REPLAY_ON)
        return "replay=on is not supported (second visits keep no authors or super-topic "
               "counts: they are LDA's)";
    return NULL;
}

/* prod_{s<t} (1 - rho_s): the share of its initial counts a row keeps after
 * the model's t updates. Kept incrementally (a model read from a snapshot
 * computes it once); below 1e-30 it is 0 for good, as it is after a step
 * rho = 1 (the default schedule's first). With global.rows=counts rows decay
 * by (1 - r_s) instead, and r = 1 at the first update with tokens, so the
 * share is 0 once the model has trained on any token. */
static double init_weight(slda_model_t *model)
{
    if (model->p.rows == SLDA_ROWS_COUNTS) /* its first update with tokens has r = 1 */
        return model->tokens > 0 ? 0.0 : 1.0;
    if (model->init_t > model->t) {
        model->init_t = 0;
        model->init_weight = 1.0;
    }
    while (model->init_t < model->t && model->init_weight > 0) {
        model->init_weight *= 1.0 - slda_rho(&model->p, model->init_t++);
        if (model->init_weight < 1e-30)
            model->init_weight = 0;
    }
    model->init_t = model->t;
    return model->init_weight;
}

/* Random initial row (docs/algorithm.md leaves the initial state open; random
 * entries break the symmetry between topics): Nphi[w][k] = init.scale * 2u,
 * u ~ U(0,1) from a generator seeded by (seed, the word's key), so a word
 * starts the same whatever id it gets (first-come order, eviction, a fixed
 * vocabulary's line number) and whenever it is first seen, times the share of
 * the initial state that t updates leave (init_weight). A fixed vocabulary's
 * row gets it at t = 0 and decays with every update; an open vocabulary's
 * row created at t > 0 starts where that row would be by now, so a late word
 * carries no more noise than an early one (with rho_0 = 1: none at all, its
 * counts are its data). A row with nothing to start from is written with
 * zeros all the same: its page's first touch must be a write (see "Paging
 * in" below; train.c pages rows in ahead, other callers rely on this). */
void slda_model_init_row(slda_model_t *model, uint32_t id)
{
    slda_model_init_row_key(model, id, slda_vocab_key(model->vocab, id));
}

void slda_model_init_row_key(slda_model_t *model, uint32_t id, uint64_t key)
{
    slda_rng_t rng;
    float *a = model->A + (size_t)id * model->Kp;
    /* the sparse path starts rows empty: a dense start would list every topic
     * in every row (rows_nz.c); sampling breaks the symmetry, so only where
     * the local step samples: replicas (updates.topic) run the dense step on
     * these rows, and a purely variational one would keep every topic equal */
    const slda_params_t *p = &model->p;
    int samples = p->hybrid || p->vb == SLDA_VB_NONE;
    double scale = slda_params_sparse(p) && samples ? 0 : p->init_scale * 2.0 * init_weight(model);
    if (scale > 0) {
        slda_rng_seed3(&rng, model->p.seed, 0x726f77, key);
        for (uint32_t k = 0; k < model->K; k++) {
            double v = scale * slda_rng_double(&rng);
            a[k] = (float)(v / model->sigma);
            model->NZ[k] += v;
        }
    } else if (id < model->rows_used) { /* rows past rows_used were never written: zero */
        memset(a, 0, model->Kp * sizeof *a);
    }
    slda_rows_nz_reset_row(model, id, scale > 0);
    slda_model_mark_row(model, id);
}

slda_err_t slda_model_start_threads(slda_model_t *model, char *errstr, size_t errstr_size)
{
    slda_pool_destroy(model->pool);
    return slda_pool_new(model->p.threads, &model->pool, errstr, errstr_size);
}

slda_pool_t *slda_model_pool(const slda_model_t *model)
{
    return model->pool;
}

void slda_model_free_state(slda_model_t *model)
{
    slda_pool_destroy(model->pool);
    slda_big_free(model->A);
    slda_big_free(model->row_ready);
    free(model->NZ);
    free(model->alpha);
    slda_vocab_destroy(model->vocab);
    slda_authors_free(model->authors);
    slda_pam_free(model->pam);
    slda_tokenizer_destroy(model->tok);
    slda_params_clear(&model->p);
    free(model->offsets);
    free(model->name);
    free(model);
}

void slda_model_fold_scale(slda_model_t *model)
{
    float s = (float)model->sigma;
    size_t n = (size_t)model->rows_used * model->Kp; /* the others are zero */
    for (size_t i = 0; i < n; i++)
        model->A[i] *= s;
    model->sigma = 1.0;
}

/* slda_model_zero_rows's pieces: this many bytes of A each. */
#define ZERO_PIECE ((size_t)1 << 19)

typedef struct zero_job_s {
    slda_model_t *model;
    size_t from, to; /* byte offsets into A */
} zero_job_t;

static void zero_piece(size_t i, uint32_t worker, void *opaque)
{
    const zero_job_t *job = opaque;
    size_t from = job->from + i * ZERO_PIECE;
    (void)worker;
    memset((char *)job->model->A + from, 0,
           job->to - from < ZERO_PIECE ? job->to - from : ZERO_PIECE);
}

void slda_model_zero_rows(slda_model_t *model, uint32_t from, uint32_t to)
{
    size_t row = (size_t)model->Kp * sizeof(float);
    zero_job_t job = {model, from * row, to * row};
    if (to > from)
        slda_pool_run(model->pool, (job.to - job.from + ZERO_PIECE - 1) / ZERO_PIECE, zero_piece, &job);
}

/* Paging in. A's rows past rows_used were never touched: their pages are
 * not mapped. The first access to such a page is a fault; if it is a read
 * (the local steps read a new word's row, the global step its row total)
 * the kernel maps its shared zero page, and the first write then copies it
 * and flushes the other threads' TLBs. So the rows are written before any
 * word uses them: ahead of the vocabulary, SLDA_PAGE_IN_BYTES at a time, on
 * the pool (the zeros change nothing: rows past rows_used are zero), instead
 * of one page at a time on the model's thread as new words come. Two threads
 * on Reuters (38,201 words, 17 MB of rows at K=100): 5,500 such copies had
 * made the training 14% slower. Not on the sparse path (train.c): its rows
 * are written where they hold counts, a rare word's in a page or two, so
 * writing whole rows ahead cost more than the faults it saves (20 Newsgroups
 * at K=10,000, one thread: 2.9 GB of rows written, 8 s of page faults in a
 * 13 s pass; without it 1.3 GB and 5.5 s; two threads about 6% slower). */
void slda_model_page_in(slda_model_t *model, uint32_t upto)
{
    if (upto <= model->rows_paged)
        return;
    size_t rows = SLDA_PAGE_IN_BYTES / ((size_t)model->Kp * sizeof(float));
    size_t to = ((size_t)upto + rows - 1) / rows * rows;
    if (to > model->W)
        to = model->W;
    uint32_t from = model->rows_paged > model->rows_used ? model->rows_paged : model->rows_used;
    slda_model_zero_rows(model, from, (uint32_t)to);
    model->rows_paged = (uint32_t)to;
}

uint32_t slda_model_topics(const slda_model_t *model)
{
    return model->K;
}

const slda_params_t *slda_model_params(const slda_model_t *model)
{
    return &model->p;
}

slda_vocab_t *slda_model_vocab(const slda_model_t *model)
{
    return model->vocab;
}

const slda_tokenizer_t *slda_model_tokenizer(const slda_model_t *model)
{
    return model->tok;
}

uint32_t slda_model_rows(const slda_model_t *model)
{
    return model->W;
}

int slda_model_row_held(const slda_model_t *model, uint32_t id)
{
    return id < model->W && (slda_vocab_is_fixed(model->vocab) || model->row_ready[id]);
}

int slda_model_row_ready(const slda_model_t *model, uint32_t id)
{
    return model->row_ready[id] != 0;
}

const float *slda_model_row(const slda_model_t *model, uint32_t id)
{
    return model->A + (size_t)id * model->Kp;
}

double slda_model_scale(const slda_model_t *model)
{
    return model->sigma;
}

double slda_model_phi_denom(const slda_model_t *model, uint32_t k)
{
    return model->NZ[k] + slda_model_smoothing_words(model) * model->p.eta;
}

void slda_model_phi_view(const slda_model_t *model, slda_phi_view_t *view)
{
    *view = (slda_phi_view_t){model->A, model->Kp, model->sigma, model->p.eta};
}

void slda_model_state(const slda_model_t *model, slda_model_state_t *st)
{
    *st = (slda_model_state_t){
        .K = model->K, .name = model->name, .alpha = model->alpha, .NZ = model->NZ,
        .alpha_sum = model->alpha_sum, .sigma = model->sigma,
        .corpus_tokens = model->corpus_tokens, .t = model->t, .docs = model->docs,
        .tokens = model->tokens, .created_ms = model->created_ms,
        .updated_ms = model->updated_ms};
}

void slda_model_set_state(slda_model_t *model, const slda_model_state_t *st)
{
    model->sigma = st->sigma;
    memcpy(model->NZ, st->NZ, model->K * sizeof *model->NZ);
    memcpy(model->alpha, st->alpha, model->K * sizeof *model->alpha);
    model->alpha_sum = st->alpha_sum;
    model->t = st->t;
    model->docs = st->docs;
    model->tokens = st->tokens;
    model->corpus_tokens = st->corpus_tokens;
    model->created_ms = st->created_ms;
    model->updated_ms = st->updated_ms;
    free(model->name);
    model->name = st->name ? slda_xstrdup(st->name) : NULL;
}

void slda_model_load_row(slda_model_t *model, uint32_t id, const float *row, int held)
{
    slda_model_row_written(model, id); /* a row not held may hold values too */
    slda_rows_nz_invalidate(model);
    memcpy(model->A + (size_t)id * model->Kp, row, model->K * sizeof *row);
    if (held)
        slda_model_mark_row(model, id);
}

const char *slda_model_name(const slda_model_t *model)
{
    return model->name;
}

int64_t slda_model_created_ms(const slda_model_t *model)
{
    return model->created_ms;
}

int64_t slda_model_updated_ms(const slda_model_t *model)
{
    return model->updated_ms;
}

double slda_model_corpus_tokens(const slda_model_t *model)
{
    return model->corpus_tokens;
}

void slda_model_set_corpus_tokens(slda_model_t *model, double tokens)
{
    model->corpus_tokens = tokens;
}

void slda_model_set_input_docs(slda_model_t *model, uint64_t docs)
{
    model->replay_input_docs = docs;
}

uint32_t slda_model_smoothing_words(const slda_model_t *model)
{
    if (slda_vocab_is_fixed(model->vocab))
        return model->W;
    return model->nready > 0 ? model->nready : 1;
}

uint32_t slda_model_vocab_size(const slda_model_t *model)
{
    return slda_vocab_is_fixed(model->vocab) ? model->W : model->nready;
}

uint32_t *slda_model_ids_held(const slda_model_t *model, uint32_t *n)
{
    uint32_t max = slda_vocab_max_id(model->vocab), count = 0;
    int fixed = slda_vocab_is_fixed(model->vocab);
    uint32_t *ids = slda_xmalloc(((size_t)(fixed ? max : model->nready) + 1) * sizeof *ids);
    for (uint32_t id = 0; id < max; id++)
        if ((fixed || model->row_ready[id]) && slda_vocab_word(model->vocab, id))
            ids[count++] = id;
    *n = count;
    return ids;
}

uint64_t slda_model_updates(const slda_model_t *model)
{
    return model->t;
}

uint64_t slda_model_docs(const slda_model_t *model)
{
    return model->docs;
}

uint64_t slda_model_tokens(const slda_model_t *model)
{
    return model->tokens;
}

const char *slda_model_word(const slda_model_t *model, uint32_t id)
{
    return id < model->W ? slda_vocab_word(model->vocab, id) : NULL;
}

uint32_t slda_model_word_id(const slda_model_t *model, const char *word, size_t len)
{
    return slda_vocab_find(model->vocab, word, len);
}

void slda_model_alpha(const slda_model_t *model, double *out)
{
    memcpy(out, model->alpha, model->K * sizeof(double));
}

void slda_model_topic_totals(const slda_model_t *model, double *out)
{
    memcpy(out, model->NZ, model->K * sizeof(double));
}

slda_err_t slda_model_set_offsets(slda_model_t *model, const slda_offset_t *offs, size_t n)
{
    free(model->offsets);
    model->offsets = n ? slda_xmalloc(n * sizeof *offs) : NULL;
    if (n)
        memcpy(model->offsets, offs, n * sizeof *offs);
    model->noffsets = n;
    return SLDA_OK;
}

const slda_offset_t *slda_model_offsets(const slda_model_t *model, size_t *n)
{
    *n = model->noffsets;
    return model->offsets;
}

/* phi[w][k] for one topic over the rows in use: used by top words. */
static float phi_of(const slda_model_t *model, uint32_t w, uint32_t k, double denom)
{
    slda_phi_view_t v = {model->A, model->Kp, model->sigma, model->p.eta};
    return (float)slda_phi_at(&v, w, k, denom);
}

/* Word w of probability pw into the n best so far (ids, probs: have of them,
 * most probable first; a later word ties behind an earlier one). */
static inline void top_insert(uint32_t *ids, float *probs, size_t *have, size_t n, uint32_t w,
                              float pw)
{
    if (*have == n && pw <= probs[n - 1])
        return;
    size_t i = *have < n ? (*have)++ : n - 1;
    while (i > 0 && probs[i - 1] < pw) {
        probs[i] = probs[i - 1];
        ids[i] = ids[i - 1];
        i--;
    }
    probs[i] = pw;
    ids[i] = w;
}

size_t slda_model_top_words(const slda_model_t *model, uint32_t k, size_t n, uint32_t *ids,
                            float *probs)
{
    if (k >= model->K || n == 0)
        return 0;
    double denom = model->NZ[k] + slda_model_smoothing_words(model) * model->p.eta;
    size_t have = 0;
    uint32_t maxid = slda_vocab_max_id(model->vocab);
    for (uint32_t w = 0; w < maxid; w++)
        if (model->row_ready[w] && slda_vocab_word(model->vocab, w))
            top_insert(ids, probs, &have, n, w, phi_of(model, w, k, denom));
    return have;
}

/* The lowest row value a that may still enter topic k's list once it holds
 * n words, the last of probability t: phi (sigma a + eta) / denom rounded to
 * float beats t only if a > (t denom - eta) / sigma; less a margin far above
 * the rounding of that expression, so the filter never drops a word that the
 * exact test (top_insert) would keep. */
static float top_floor(const slda_model_t *model, double denom, float t)
{
    double eta = model->p.eta, a = ((double)t * denom - eta) / model->sigma;
    double slack = 1e-4 * fabs(a) + 1e-9 * ((double)t * denom + eta) / model->sigma;
    return (float)(a - slack);
}

void slda_model_top_words_all(const slda_model_t *model, size_t n, uint32_t *ids, float *probs,
                              size_t *have)
{
    uint32_t K = model->K, Kp = model->Kp, maxid = slda_vocab_max_id(model->vocab);
    double denom[SLDA_MAX_TOPICS], sw = slda_model_smoothing_words(model) * model->p.eta;
    float floor_[SLDA_MAX_TOPICS];
    for (uint32_t k = 0; k < K; k++) {
        denom[k] = model->NZ[k] + sw;
        floor_[k] = -INFINITY;
        have[k] = 0;
    }
    if (n == 0)
        return;
    for (uint32_t w = 0; w < maxid; w++) {
        if (!model->row_ready[w] || !slda_vocab_word(model->vocab, w))
            continue;
        const float *a = model->A + (size_t)w * Kp;
        for (uint32_t k = 0; k < K; k++) {
            if (a[k] < floor_[k])
                continue;
            top_insert(ids + k * n, probs + k * n, &have[k], n, w, phi_of(model, w, k, denom[k]));
            if (have[k] == n)
                floor_[k] = top_floor(model, denom[k], probs[k * n + n - 1]);
        }
    }
}

slda_err_t slda_model_set_tokenizer(slda_model_t *model, const slda_conf_t *conf, char *errstr,
                                    size_t errstr_size)
{
    slda_tokenizer_t *tok = slda_tokenizer_new(&conf->p, errstr, errstr_size);
    if (!tok)
        return SLDA_ERR_INVALID;
    slda_tokenizer_destroy(model->tok);
    model->tok = tok;
    free(model->p.stopwords);
    model->p.stopwords = conf->p.stopwords ? slda_xstrdup(conf->p.stopwords) : NULL;
    model->p.min_length = conf->p.min_length;
    model->p.max_doc_bytes = conf->p.max_doc_bytes;
    model->p.text = conf->p.text;
    return SLDA_OK;
}
