/* model.h - the model as the layers above the engine see it: construction, accessors,
 * restoring against a configuration (model.c, reconcile.c). */
#ifndef SLDA_MODEL_H
#define SLDA_MODEL_H

#include "core/config.h"
#include "core/pool.h"
#include "text/bag.h"

/* A model of W rows for params p (copied) without a vocabulary file (the
 * snapshot loader; slda_model_new reads vocab.file): the vocabulary hashes
 * words with hash_seed (p->seed for a new model), the tokenizer is made from
 * tok_p (NULL: p; a snapshot's own parameters may name a stop-word file it
 * must not open). */
/* Why p's model.kind cannot run with the rest of p (a sentence), or NULL. model.kind=atm
 * takes births=false whatever p says (slda_model_alloc; an explicit births=true is refused
 * where the configuration is known: slda_model_new, slda_model_reconcile). */
const char *slda_kind_conflict(const slda_params_t *p);
/* "lda", "atm", "pam". */
const char *slda_kind_name(slda_model_kind_t kind);
/* model.kind=pam: the super-topics' priors (engine/pam.h), else NULL. */
const struct slda_pam_s *slda_model_pam(const slda_model_t *model);
struct slda_pam_s *slda_model_pam_mut(slda_model_t *model); /* snapshot load */
/* model.kind=atm: the author statistics (engine/authors.h), else NULL. */
const struct slda_authors_s *slda_model_authors(const slda_model_t *model);
struct slda_authors_s *slda_model_authors_mut(slda_model_t *model); /* snapshot load */
slda_model_t *slda_model_alloc(const slda_params_t *p, uint32_t W, int fixed_vocab,
                               uint64_t hash_seed, const slda_params_t *tok_p, char *errstr,
                               size_t errstr_size);

/* ---- accessors (borrowed pointers live as long as the model, or until
 * what changes them: the next training call, a set below) ---- */
const slda_params_t *slda_model_params(const slda_model_t *model);
/* The vocabulary (a lookup adds and pins words: the model's thread only). */
slda_vocab_t *slda_model_vocab(const slda_model_t *model);
const slda_tokenizer_t *slda_model_tokenizer(const slda_model_t *model);
/* Rows allocated: the fixed vocabulary's size or vocab.capacity (word ids are
 * below it). */
uint32_t slda_model_rows(const slda_model_t *model);
/* 1 when id's row holds counts the model trained or was given (every row of
 * a fixed vocabulary; in an open one the words that reached training). */
int slda_model_row_held(const slda_model_t *model, uint32_t id);
/* id's own flag (what a snapshot stores): its row got its initial or learned
 * counts (a fixed vocabulary's rows have it from the start, but for batch
 * mode's words without training tokens). */
int slda_model_row_ready(const slda_model_t *model, uint32_t id);
/* The stored row of id: K floats, Nphi[id][k] = slda_model_scale() * row[k]
 * (docs/algorithm.md "Lazy scaling"). */
const float *slda_model_row(const slda_model_t *model, uint32_t id);
double slda_model_scale(const slda_model_t *model);
/* The denominator of phi for topic k: NZ[k] + W eta, W the smoothing words. */
double slda_model_phi_denom(const slda_model_t *model, uint32_t k);
/* What phi reads, for loops over many entries: phi[w][k] = slda_phi_at(view, w, k,
 * slda_model_phi_denom(model, k)) (valid until the model next changes). */
typedef struct slda_phi_view_s {
    const float *A; /* rows of Kp floats */
    uint32_t Kp;
    double sigma, eta;
} slda_phi_view_t;
void slda_model_phi_view(const slda_model_t *model, slda_phi_view_t *view);
/* phi[w][k] = (Nphi[w][k] + eta) / (NZ[k] + W eta) in double (docs/algorithm.md
 * "Notation"): the one place the formula is written (exports, top words,
 * alignment, the tracker's views). Inline: alignment calls it K x K x n times. */
static inline double slda_phi_at(const slda_phi_view_t *view, uint32_t w, uint32_t k,
                                 double denom)
{
    return (view->sigma * view->A[(size_t)w * view->Kp + k] + view->eta) / denom;
}

/* What a snapshot stores besides the rows, the vocabulary, the parameters and
 * the offsets: the model's scalar state. slda_model_state fills it with
 * borrowed pointers (alpha, NZ: K values; name); slda_model_set_state copies
 * them in (K must be the model's). */
typedef struct slda_model_state_s {
    uint32_t K;
    const char *name;
    const double *alpha, *NZ;
    double alpha_sum, sigma, corpus_tokens;
    uint64_t t, docs, tokens;
    int64_t created_ms, updated_ms;
} slda_model_state_t;
void slda_model_state(const slda_model_t *model, slda_model_state_t *st);
void slda_model_set_state(slda_model_t *model, const slda_model_state_t *st);
/* The snapshot loader's row id: K floats copied in (stored scale), the row
 * marked held when held is 1. */
void slda_model_load_row(slda_model_t *model, uint32_t id, const float *row, int held);
/* The model's name (model.name), created and last-updated times (ms). */
const char *slda_model_name(const slda_model_t *model);
int64_t slda_model_created_ms(const slda_model_t *model);
int64_t slda_model_updated_ms(const slda_model_t *model);
/* C of the global step (corpus.tokens) when the configuration left it 0:
 * `streamlda train` sets it to its input's token count before training. */
double slda_model_corpus_tokens(const slda_model_t *model);
void slda_model_set_corpus_tokens(slda_model_t *model, double tokens);
/* Documents a finite input will train on, when known before training (replay
 * spreads second visits over it; 0 = a stream). */
void slda_model_set_input_docs(slda_model_t *model, uint64_t docs);
/* W of the word factor's denominator NZ[k] + W eta (docs/algorithm.md "Notation"):
 * the fixed vocabulary's size, or the number of words the model holds (rows
 * ready) in open-vocabulary mode; at least 1. */
uint32_t slda_model_smoothing_words(const slda_model_t *model);
/* The ids of those words in increasing order (malloc'ed, *n of them): the
 * columns of slda_model_phi and the exports. */
uint32_t *slda_model_ids_held(const slda_model_t *model, uint32_t *n);
/* reconcile.c: a restored model against this run's configuration: an explicit
 * model-defining setting that differs is an error; tunables are applied; each
 * difference is reported through log. */
slda_err_t slda_model_reconcile(slda_model_t *model, const slda_conf_t *conf,
                                void (*log)(void *opaque, const char *line), void *opaque,
                                char *errstr, size_t errstr_size);
/* The configuration a restored model should tokenise with: conf, with every
 * text.* setting left at its default replaced by the snapshot's (each
 * difference reported through log). Caller destroys it. */
slda_conf_t *slda_model_text_conf(const slda_model_t *model, const slda_conf_t *conf,
                                  void (*log)(void *opaque, const char *line), void *opaque);
/* slda_model_top_words for every topic in one pass over the rows
 * (K calls read the matrix down its columns: 10 ms for K=100 and 38,000
 * words, against 2 ms): topic k's list in ids and probs [k n, k n + n), its
 * length in have[k]; the same lists as slda_model_top_words. */
void slda_model_top_words_all(const slda_model_t *model, size_t n, uint32_t *ids, float *probs,
                              size_t *have);
/* (Re)start the model's worker threads for its threads= (after a change of
 * it, or a snapshot decoded): the pool of slda_model_pool. */
slda_err_t slda_model_start_threads(slda_model_t *model, char *errstr, size_t errstr_size);
/* The model's worker threads (NULL with threads=1): readers tokenise and
 * parse on them while the model is not training. */
slda_pool_t *slda_model_pool(const slda_model_t *model);

/* train.c: a minibatch as a job on the model's threads: slda_model_train is
 * slda_train_begin, one hand-over of the job's items to the model's pool
 * (slda_pool_run_longest with slda_train_cost, slda_train_item and, on the
 * calling thread, slda_train_pre), then slda_train_end. A caller with work of
 * its own for the same hand-over (the service decodes the next minibatch's
 * messages there) runs the job's items and its own in one run: the job's
 * items at its own indices [0, slda_train_items), cost 0 for its own items
 * (claimed after the documents), slda_train_pre before the items. Its items
 * must only read what the local steps read (the model, its vocabulary and
 * tokenizer) and write their own results. */
typedef struct slda_train_s slda_train_t;
/* The model's thread: check docs (borrowed until slda_train_end), set up the
 * rows of their new words and the minibatch's state; *job to run. On an error
 * nothing changed and there is no job (errors as slda_model_train's). */
slda_err_t slda_train_begin(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                            float *thetas, slda_train_t **job, char *errstr, size_t errstr_size);
/* Items of the job, the cost of item i (its tokens: the pool claims the
 * costliest first), and item i itself, on any thread (worker: the pool's
 * index of the thread, its local-step scratch). */
size_t slda_train_items(const slda_train_t *job);
uint64_t slda_train_cost(const slda_train_t *job, size_t i);
void slda_train_item(slda_train_t *job, size_t i, uint32_t worker);
/* The calling thread's share, before it joins the items: the pending update
 * prepared (nothing to do when none is pending). */
void slda_train_pre(slda_train_t *job);
/* The model's thread, every item done: the update applied or left pending,
 * alpha, births, counters, stats (may be NULL); job freed. Then the stored
 * minibatches due for their second visit (replay=on), each trained in a
 * hand-over of its own: their error, if any. */
slda_err_t slda_train_end(slda_train_t *job, slda_train_stats_t *stats, char *errstr,
                          size_t errstr_size);

#endif /* SLDA_MODEL_H */
