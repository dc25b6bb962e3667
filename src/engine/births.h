/* births.h - births, retirement and merges of topics (births.c): the hook the
 * global step calls and the per-document score the local step computes. */
#ifndef SLDA_BIRTHS_H
#define SLDA_BIRTHS_H

#include "core/config.h"

/* births.c's state (NULL unless births=true), and the local step's types the
 * score reads (engine/local.h; incomplete here, so the layers above can
 * include this header for the state of a snapshot). */
typedef struct slda_births_s slda_births_t;
typedef struct slda_frozen_s slda_frozen_t;
typedef struct slda_local_s slda_local_t;


slda_births_t *slda_births_new(const slda_model_t *model);
void slda_births_free(slda_births_t *b);
/* Flagged documents waiting in the buffer for a proposal (0 for NULL). */
uint32_t slda_births_buffered(const slda_births_t *b);

/* The whole births state as plain data, for snapshots (snapshot.c,
 * docs/snapshot-format.md "births"): everything slda_births_update reads
 * besides the model and the minibatch. */
typedef struct slda_births_doc_s {
    uint32_t n;          /* distinct words */
    uint32_t *word;      /* n ids, each < W */
    uint32_t *count;     /* n counts, each >= 1 */
    float *pw;           /* n: p(w) under the model when the document was scored */
    uint64_t t;          /* update of its minibatch */
    uint64_t mark;       /* tokens seen before its minibatch */
} slda_births_doc_t;
typedef struct slda_births_state_s {
    uint32_t K;
    double mu, var;      /* baseline of the document score */
    uint64_t nbase;      /* documents in the baseline */
    uint64_t tokens;     /* tokens seen */
    int windowed;        /* 1 after the first birth: the running count is windowed */
    uint64_t counted;    /* windowed: tokens in the running count after the last update (> 0) */
    double *share;       /* K: decayed share of the tokens */
    uint64_t *since;     /* K: update at which the slot started (0 or its birth) */
    uint8_t *is_free;    /* K: 1 for a retired or merged-away slot awaiting a birth */
    uint32_t cap;        /* buffer capacity (the oldest is dropped when full) */
    uint32_t nbuf;
    slda_births_doc_t *buf; /* nbuf flagged documents, oldest first */
    slda_topic_counts_t counts;
    uint64_t nev;        /* events made */
    uint32_t nkept;      /* the last nkept of them (min(nev, slda_births_events_kept())) */
    slda_event_t *ev;    /* nkept, oldest first (seq nev - nkept + 1 .. nev) */
} slda_births_state_t;
/* The closest pair (*i < *j, JS divergence *d in nats) of settled, live topics
 * among those that can be closer than `below`, as a birth's merge looks for it
 * (births.c): 0 when none can. sparse: from the rows' lists of topics held
 * (the sparse path's, which must be valid), else the dense scan; both give the
 * same pair (tests/unit_sparse.c). Needs births. */
uint32_t slda_births_closest_pair(const slda_model_t *model, double below, int sparse,
                                  uint32_t *i, uint32_t *j, double *d);
/* Events a model keeps (the ring of slda_model_events). */
uint32_t slda_births_events_kept(void);
/* A record computed against the model after update base and applied later
 * (a replica's staleness, docs/replication.md) holds topic columns as the
 * slots were then: follow the slot events since (a merge of j into i moves
 * column j into i; a death or a birth zeroes the slot's column), on n rows of
 * stride floats. Returns the events followed (events older than the ring
 * are gone: a record more than slda_births_events_kept() events stale keeps
 * those columns as they are). */
size_t slda_births_remap(const slda_births_t *b, uint64_t base, float *rows, size_t n,
                         size_t stride);
/* st receives b's state: its arrays are borrowed from b (valid until b's next
 * update or free) except buf and ev, which slda_births_export_clear frees. */
void slda_births_export(const slda_births_t *b, slda_births_state_t *st);
void slda_births_export_clear(slda_births_state_t *st);
/* A births state for model from st (decoded from outside bytes: every value
 * is checked against the model's K, W and updates first); st is only read.
 * NULL with the reason in errstr when it does not fit the model. */
slda_births_t *slda_births_import(const slda_model_t *model, const slda_births_state_t *st,
                                  char *errstr, size_t errstr_size);
/* Mean per-token log sum_k theta_k phi_wk of a document right after its local
 * step in loc (theta from loc's summed document counts, phi from loc's word
 * factors, or from the model for SVB); pw (npairs) receives each word's p(w).
 * Reads the frozen model only: safe on worker threads. */
float slda_births_doc_score(const slda_frozen_t *fz, const slda_local_t *loc,
                            const uint32_t *words, const uint32_t *counts, uint32_t npairs,
                            float *pw);
/* global.rows=counts (births.c, "5. Row totals"): the tokens_before of the
 * update of a minibatch of ntokens tokens with step rho, when total tokens
 * (first and second visits) were trained on before it. total until the first
 * birth (and for b = NULL); after it the running count is windowed: it keeps
 * at most 4 (ntokens / rho - ntokens) tokens before the minibatch, so
 * r_t >= rho_t / 4, about (births.c, "5. Row totals"). */
uint64_t slda_births_count_start(slda_births_t *b, uint64_t total, uint64_t ntokens, double rho);
/* After the global update of a minibatch (model thread, document order):
 * retire dead topics, flag and buffer poorly explained documents, and maybe
 * give them a topic. scores/pw/ntheta are per document as the local step
 * left them; ntokens and rho those of the update. */
void slda_births_update(slda_model_t *model, const slda_doc_t *docs, size_t ndocs,
                        const float *scores, float *const *pw, const float *ntheta,
                        uint64_t ntokens, double rho);

/* The model's births state (NULL when it has none: births=false, or none yet). */
const slda_births_t *slda_model_births(const slda_model_t *model);
/* The state st (a snapshot's, checked against the model) becomes the model's. */
slda_err_t slda_model_attach_births(slda_model_t *model, const slda_births_state_t *st,
                                    char *errstr, size_t errstr_size);

#endif
