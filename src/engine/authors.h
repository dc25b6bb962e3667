/* authors.h - the author-topic model's global author statistics (authors.c, docs/models.md).
 *
 * model.kind=atm: every author a has topic counts N_a[k], global like the topic-word counts,
 * and a document's tokens are drawn from the mixtures of its authors. The local step sees a
 * document through a Dirichlet prior made from its authors' counts (slda_authors_prior); the
 * documents' topic counts move their authors' counts by the stochastic step after each
 * minibatch (slda_authors_step). Authors are an open set in bounded memory: names keyed by
 * XXH3-64 in a vocabulary of authors.capacity entries, the least active evicted and counted.
 */
#ifndef SLDA_AUTHORS_H
#define SLDA_AUTHORS_H

#include "core/config.h"

typedef struct slda_authors_s slda_authors_t;

/* NULL when capacity * K floats cannot be reserved (errstr set). */
slda_authors_t *slda_authors_new(uint32_t K, uint32_t capacity, uint64_t seed, char *errstr,
                                 size_t errstr_size);
void slda_authors_free(slda_authors_t *a);

/* The ids of each document's authors for one minibatch (added when new, pinned until the
 * minibatch after next): (*aoff)[i] .. (*aoff)[i + 1] index *aid; an author the full table
 * could not take is left out (counted: slda_authors_refused). Both arrays malloc'ed. */
void slda_authors_map(slda_authors_t *a, const slda_doc_t *docs, size_t ndocs, uint32_t **aoff,
                      uint32_t **aid);
/* The ids of doc's authors the table holds (read only: any thread while nothing changes
 * it) into ids (room for doc->nauthor); returns how many. */
uint32_t slda_authors_find(const slda_authors_t *a, const slda_doc_t *doc, uint32_t *ids);

/* A document's prior over its topics from its n authors (K floats into out, padding left as
 * it is; returns their sum): alpha_k + N_a[k] for one author, and for several
 * alpha_k + c m_k, m the mean of their mixtures N_a / |N_a| and c their mean total (the
 * authors without counts left out); alpha alone when none has counts. */
double slda_authors_prior(const slda_authors_t *a, const uint32_t *ids, uint32_t n,
                          const double *alpha, double alpha_sum, float *out);

/* The stochastic step on the authors of a minibatch (documents in order, ntheta: their mean
 * topic counts, ndocs x K): each author's statistics S_a are the counts of its documents (a
 * document of several authors split by r(a | k), proportional to (N_a[k] + alpha_k) /
 * (|N_a| + alpha_sum)); then, for each author in order of first appearance, with L_a = |S_a|,
 * T_a += L_a and rho = slda_rho(p, t_a): N_a = (1 - rho) N_a + rho (T_a / L_a) S_a, t_a += 1.
 * Ends the table's epoch. */
void slda_authors_step(slda_authors_t *a, const slda_params_t *p, const uint32_t *aoff,
                       const uint32_t *aid, size_t ndocs, const float *ntheta,
                       const double *alpha, double alpha_sum);

/* The prior of doc under model for one local step (loc->prior, loc->prior_sum; local.h)
 * from the authors of doc the model holds (read only: any thread while the model does not
 * change); nothing when the model has no authors or holds none of them (alpha then). */
typedef struct slda_local_s slda_local_t;
void slda_authors_doc_prior(const slda_model_t *model, const slda_doc_t *doc,
                            slda_local_t *loc);

/* The n authors (at most) with the most tokens of topic k (N_a[k] > 0), most first, into out;
 * returns how many (`topics --authors`, `report`). */
uint32_t slda_authors_top(const slda_authors_t *a, uint32_t k, uint32_t n, uint32_t *out);

/* Author id's topic mixture (K floats): (N_a[k] + alpha_k) / (|N_a| + alpha_sum). */
void slda_author_mixture(const slda_model_t *model, uint32_t id, float *out);

/* Reading an author's state (id < slda_authors_max_id; name NULL: unused id). */
uint32_t slda_authors_max_id(const slda_authors_t *a);
const char *slda_authors_name(const slda_authors_t *a, uint32_t id);
const float *slda_authors_counts(const slda_authors_t *a, uint32_t id); /* K floats */
double slda_authors_tokens(const slda_authors_t *a, uint32_t id);  /* T_a */
double slda_authors_mass(const slda_authors_t *a, uint32_t id);    /* |N_a| */
uint64_t slda_authors_updates(const slda_authors_t *a, uint32_t id); /* t_a */
double slda_authors_freq(const slda_authors_t *a, uint32_t id);
uint32_t slda_authors_size(const slda_authors_t *a);
uint32_t slda_authors_capacity(const slda_authors_t *a);
uint64_t slda_authors_evicted(const slda_authors_t *a);
uint64_t slda_authors_refused(const slda_authors_t *a);
/* Id of the author named name, or UINT32_MAX. */
uint32_t slda_authors_lookup(const slda_authors_t *a, const char *name, size_t len);

/* Snapshot load: an author put at id with its state (counts: K floats, finite, >= 0). */
slda_err_t slda_authors_put(slda_authors_t *a, uint32_t id, const char *name, size_t len,
                            double freq, const float *counts, double tokens, uint64_t updates,
                            char *errstr, size_t errstr_size);
/* Snapshot load: the counters. */
void slda_authors_set_counters(slda_authors_t *a, uint64_t evicted);

#endif /* SLDA_AUTHORS_H */
