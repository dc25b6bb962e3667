/* sparse.h - the sparse path: proposal tables, the sampled local step, entries and their update.
 *
 * docs/engine.md, "The sparse path". With local.sparse on (auto: K >=
 * SLDA_SPARSE_AUTO_K) every token is sampled by Metropolis-Hastings from
 * per-minibatch proposal tables (sparse_tables.c, local_sparse.c), a
 * document's statistics are (word, topic, hits) entries, and the global step
 * visits the topics a word holds (global_sparse.c, rows_nz.c).
 */
#ifndef SLDA_SPARSE_H
#define SLDA_SPARSE_H

#include "core/alias.h"
#include "engine/global_step.h"
#include "engine/local.h"

/* One statistic of the sparse path: the expected number of word's tokens
 * (model id) in topic for one document (local_sparse.c). */
typedef struct slda_sentry_s {
    uint32_t word;
    uint32_t topic;
    float x;
} slda_sentry_t;

/* A word's statistics in a document keep the topics that hold at least
 * 1/SLDA_SPARSE_KEEP of them (so at most SLDA_SPARSE_KEEP entries). */
#define SLDA_SPARSE_KEEP 64u
/* The topic of a word's prior entry: its weight times alpha_k phi_w[k] is
 * its statistic in every topic k its row lists (local_sparse.c). */
#define SLDA_SPARSE_PRIOR 0xFFFFu
/* The sparse step drops a row value under eta / SLDA_SPARSE_PRUNE counts. */
#define SLDA_SPARSE_PRUNE 100.0

/* A minibatch's proposal tables, built on the model's thread before its
 * local steps and read-only during them (sparse_tables.c). For each distinct
 * word w of the minibatch, the part of phi_w[k] ~ (sigma A_wk + eta) inv_k
 * that its row holds: sigma A_wk inv_k over its listed topics, as running
 * sums (a draw is a binary search); the eta inv_k part is one alias table
 * shared by every word. */
typedef struct slda_wtabs_s {
    uint32_t W;
    int32_t *of;          /* W: the table of a word in this minibatch, -1 for none */
    uint32_t n, cap;      /* tables */
    uint32_t *word;       /* n: word id of each table */
    size_t *off;          /* n + 1: its entries */
    float *mass;          /* n: sum of its entries (the last running sum) */
    double *amass;        /* n: sum_k alpha_k phi_wk (unnormalised: x (sigma A + eta) inv) */
    double *lmass;        /* n: sum over its listed topics of alpha_k phi_wk (the prior entry's) */
    uint16_t *topic;      /* entries: topics, increasing */
    float *cum;           /* entries: running sums of sigma A_wk inv_k */
    size_t cap_e;
    slda_alias_t smooth;  /* over k: weights inv_k */
    double eta_inv;       /* eta sum_k inv_k: the smoothing part's mass */
    double alpha_inv;     /* eta sum_k alpha_k inv_k */
    slda_alias_t alpha;   /* over k: weights alpha_k (asymmetric alpha) */
    int alpha_sym;        /* every alpha_k equal: draw uniformly */
    float alpha0;         /* alpha_0 (alpha_sym) */
    float sigma, eta;
} slda_wtabs_t;

/* sparse_tables.c: make the tables of the words of docs (ndocs) for the model
 * as it is now (its lists valid: slda_rows_nz_ensure) and fz's inv_nz, alpha. */
void slda_wtabs_build(slda_wtabs_t *t, const slda_model_t *model, const slda_frozen_t *fz,
                      const slda_doc_t *docs, size_t ndocs);
void slda_wtabs_free(slda_wtabs_t *t);

/* local_sparse.c: the sampled local step of one document (every token by
 * Metropolis-Hastings, docs/engine.md "The sparse path"), against fz and
 * its tables fz->tabs. With want_stats, out (capacity: unique words x
 * (min(K, SLDA_SPARSE_KEEP) + 1)) receives the document's entries, grouped by word in doc order, topics
 * increasing within a word; returns their number. loc->ntheta_sum (sums
 * over the collection sweeps divided by their number) and theta as
 * slda_local_run. */
uint32_t slda_sparse_run(slda_local_t *loc, const slda_frozen_t *fz, const uint32_t *words,
                         const uint32_t *counts, uint32_t npairs, uint64_t seed_a,
                         uint64_t seed_b, int want_stats, float *theta, slda_sentry_t *out);
/* births.c's per-pair p(w) and mean log-likelihood of the document that
 * slda_sparse_run just ran (theta from its mean counts); uses loc's scratch. */
float slda_sparse_doc_score(const slda_frozen_t *fz, slda_local_t *loc, const uint32_t *words,
                            const uint32_t *counts, uint32_t npairs, float *pw);

/* A minibatch's entries summed by word (global_sparse.c): slot s is word
 * word[s] (first appearance over the documents), its topics topic[off[s] ..
 * off[s] + cnt[s]) increasing, with their statistics x. */
typedef struct slda_sacc_s {
    uint32_t nslots, cap;
    uint32_t *word;
    size_t *off;          /* nslots + 1: where each slot's entries start */
    uint32_t *cnt;        /* nslots: how many it has (fewer than its room once summed) */
    uint16_t *topic;
    float *x;
    size_t cap_e;
    double *da;           /* K: the change of each topic's total / sigma (the update) */
    uint32_t K;
    float *pf;            /* K: alpha_k inv_k of the local steps (prior entries) */
    uint16_t *list;       /* K: a row's new list, made by the global step */
    float sigma;          /* the update's: sigma of the rows it reads (global_sparse.c) */
} slda_sacc_t;

/* global_sparse.c: keep the minibatch's frozen inv_k and alpha_k (fz) for
 * its prior entries. Their phi_w[k] reads the rows as the update finds them:
 * the local steps' rows with global.stale=0, one update newer with 1. */
void slda_sacc_frozen(slda_sacc_t *acc, const slda_frozen_t *fz, uint32_t K);
/* global_sparse.c: sum the documents' entries (document i's: ent[eoff[i] ..
 * eoff[i] + ecount[i]), documents in order) into acc by word; slot_of (W,
 * all -1 before and after) finds a word's slot. */
void slda_sacc_merge(slda_sacc_t *acc, int32_t *slot_of, const slda_sentry_t *ent,
                     const size_t *eoff, const uint32_t *ecount, size_t ndocs, uint32_t K);
/* Topic column from's statistics go to column to (UINT32_MAX: dropped), as births
 * moves the model's column (pending.c's slda_pending_column). */
void slda_sacc_column(slda_sacc_t *acc, uint32_t from, uint32_t to);
/* The global step on acc (docs/algorithm.md "Global step", global_step.c's two
 * row rules) over the topics each touched row holds; returns rho_t. */
double slda_sparse_update(slda_model_t *model, slda_sacc_t *acc, uint64_t ntokens,
                          uint64_t tokens_before);
void slda_sacc_free(slda_sacc_t *acc);

#endif /* SLDA_SPARSE_H */
