/* batch.c - the hybrid paper's in-place batch algorithms: CGS, CVB0, CVB, SVB and the +CGS hybrids, for every model kind.
 *
 * docs/algorithm.md "Batch mode". Each document's tokens are split once (seeded,
 * per token) into training and test tokens; the training tokens of one word in
 * one document form a pair of count n. Pairs with n <= r (slda_params_r) are
 * sampled, one topic z per token (collapsed Gibbs, hybrid paper eq. 12 and
 * 25); the other pairs carry one distribution gamma shared by their n tokens,
 * updated by the variant's own batch rule (the variant table, engine/local.h:
 * CVB0, Asuncion eq. 16, local_cvb0.c; CVB, eq. 18, local_cvb.c; SVB, hybrid
 * paper eq. 21, local_svb.c), the same rule as its stream local step's.
 *
 * Invariants between two updates:
 *   Ntheta[j][k] = sum over the pairs of document j of n*gamma[k] (VB) or
 *                  [z == k] (per CG token)
 *   Nphi[w][k]   = the same sum over the pairs of word w
 *   NZ[k]        = sum_w Nphi[w][k] = sum_j Ntheta[j][k]
 *   Vtheta, Vphi, VZ = the same sums of n*gamma[k]*(1-gamma[k]) (CVB only;
 *                  CG tokens add no variance)
 * An update never recomputes a sum: it excludes one token's share from the
 * values it reads (CGS, CVB0, CVB; SVB excludes nothing) and adds the change
 * of its contribution to all three. gamma is stored as float and the changes
 * are taken between stored (rounded) values, so the counts track exactly what
 * is stored; counts are double because they take hundreds of millions of
 * small increments. slda_batch_check recounts them.
 * model.kind=atm: the rows of Ntheta are authors (batch_atm.c), one a
 * document's author, N_j its author's tokens; model.kind=pam: the sweeps,
 * the start and the mixture a test token sees are batch_pam.c's, over
 * (super, sub) pairs; the split, the test pairs, Nphi, NZ and the loop are
 * this file's for every kind (docs/models.md, "Batch mode").
 * Single-threaded. Randomness: a per-document stream for the split and one
 * stream for initialisation and sampling in visiting order, so the seed fixes
 * every bit of the result.
 */
#include "engine/batch_priv.h"
#include "engine/rows_nz.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* rng stream tags ("split", "sweep" in ASCII) */
#define TAG_SPLIT 0x73706c6974ULL
#define TAG_SWEEP 0x7377656570ULL

/* ---- allocation ---- */

#define big slda_batch_big

void slda_batch_destroy(slda_batch_t *batch)
{
    if (!batch)
        return;
    void *arrays[] = {batch->pstart, batch->pairs,  batch->ntrain, batch->gamma, batch->z,
                      batch->tstart, batch->tword,  batch->tcount, batch->psum,  batch->Ntheta,
                      batch->Nphi,   batch->NZ,     batch->Vtheta, batch->Vphi,  batch->VZ,
                      batch->work,   batch->row};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        slda_big_free(arrays[i]);
    if (batch->rtrain != batch->ntrain)
        slda_big_free(batch->rtrain);
    if (batch->names)
        for (size_t x = 0; x < batch->R; x++)
            free(batch->names[x]);
    free(batch->names);
    slda_batch_pam_free(batch);
    slda_big_free(batch);
}

/* Store gnew (K doubles) as the pair's gamma g and add the change of its
 * contribution, n (g_new - g_old), to the counts (and variances, CVB). */
static void vb_store(slda_batch_t *batch, size_t j, uint32_t w, float *g, double n,
                     const double *gnew)
{
    size_t K = batch->K;
    double *nt = batch->Ntheta + slda_batch_row(batch, j) * K;
    double *nphi = batch->Nphi + (size_t)w * K, *NZ = batch->NZ;
    for (size_t k = 0; k < K; k++) {
        double gold = g[k];
        float f = (float)gnew[k];
        double d = n * ((double)f - gold);
        nt[k] += d;
        nphi[k] += d;
        NZ[k] += d;
        g[k] = f;
    }
}

/* The variance counterpart of vb_store, called before it (g still old). */
static void vb_store_var(slda_batch_t *batch, size_t j, uint32_t w, const float *g, double n,
                         const double *gnew)
{
    size_t K = batch->K;
    double *vt = batch->Vtheta + slda_batch_row(batch, j) * K;
    double *vphi = batch->Vphi + (size_t)w * K, *VZ = batch->VZ;
    for (size_t k = 0; k < K; k++) {
        double gold = g[k], f = (float)gnew[k];
        double d = n * (f * (1.0 - f) - gold * (1.0 - gold));
        vt[k] += d;
        vphi[k] += d;
        VZ[k] += d;
    }
}

static void vb_pair(slda_batch_t *batch, size_t j, const bpair_t *pair)
{
    size_t K = batch->K, row = slda_batch_row(batch, j);
    float *g = batch->gamma + pair->off * K;
    slda_vb_batch_t v = {
        .K = batch->K, .alpha = batch->alpha, .eta = batch->eta, .weta = batch->weta,
        .nt = batch->Ntheta + row * K,
        .nphi = batch->Nphi + (size_t)pair->word * K,
        .NZ = batch->NZ,
        .vt = batch->Vtheta ? batch->Vtheta + row * K : NULL,
        .vphi = batch->Vphi ? batch->Vphi + (size_t)pair->word * K : NULL,
        .VZ = batch->VZ,
        .g = g,
    };
    batch->ops->batch_gamma(&v, batch->work);
    if (batch->Vtheta)
        vb_store_var(batch, j, pair->word, g, pair->count, batch->work);
    vb_store(batch, j, pair->word, g, pair->count, batch->work);
}

/* One collapsed Gibbs draw (eq. 12 / 25): remove the token, sample from
 * p(k) ∝ (Nphi¬+eta)/(NZ¬+W eta) (Ntheta¬+alpha) with the live counts (VB
 * pairs' mean-field shares included), put it back. */
static void cg_token(slda_batch_t *batch, double *nt, double *nphi, uint16_t *zp)
{
    uint32_t K = batch->K, k0 = *zp;
    double *NZ = batch->NZ, *p = batch->work;
    nt[k0] -= 1.0;
    nphi[k0] -= 1.0;
    NZ[k0] -= 1.0;
    for (uint32_t k = 0; k < K; k++)
        p[k] = (fmax(nphi[k], 0.0) + batch->eta) * (fmax(nt[k], 0.0) + batch->alpha) /
               (NZ[k] + batch->weta);
    double tot = 0.0;
    for (uint32_t k = 0; k < K; k++) {
        tot += p[k];
        p[k] = tot;
    }
    double u = slda_rng_double(&batch->rng) * tot;
    uint32_t k = 0;
    while (k + 1 < K && p[k] <= u)
        k++;
    *zp = (uint16_t)k;
    nt[k] += 1.0;
    nphi[k] += 1.0;
    NZ[k] += 1.0;
}

static void sweep_doc(slda_batch_t *batch, size_t j)
{
    if (batch->kind == SLDA_KIND_PAM) {
        slda_batch_pam_sweep(batch, j);
        return;
    }
    double *nt = batch->Ntheta + slda_batch_row(batch, j) * batch->K;
    for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
        const bpair_t *pair = &batch->pairs[i];
        if (pair->count > batch->r) {
            vb_pair(batch, j, pair);
            continue;
        }
        double *nphi = batch->Nphi + (size_t)pair->word * batch->K;
        for (uint32_t t = 0; t < pair->count; t++)
            cg_token(batch, nt, nphi, &batch->z[pair->off + t]);
    }
}

/* ---- evaluation (hybrid paper eq. 30 / 31) ---- */

/* invz[k] = 1 / (NZ[k] + W eta) */
static void inv_topic_totals(const slda_batch_t *batch, double *invz)
{
    for (uint32_t k = 0; k < batch->K; k++)
        invz[k] = 1.0 / (batch->NZ[k] + batch->weta);
}

/* p(w | doc j) = sum_k (alpha+Ntheta)/(K alpha+N_j) (eta+Nphi)/(W eta+NZ), Ntheta and N_j
 * the document's row (ATM: its author's); PAM: sum_k theta[k] (eta+Nphi)/(W eta+NZ) with
 * theta its sub-topic mixture (slda_batch_pam_theta). */
static double pair_prob(const slda_batch_t *batch, size_t j, uint32_t w, const double *invz,
                        const double *theta)
{
    size_t K = batch->K, row = slda_batch_row(batch, j);
    const double *nt = batch->Ntheta + row * K, *nphi = batch->Nphi + (size_t)w * K;
    double s = 0.0;
    if (theta) {
        for (size_t k = 0; k < K; k++)
            s += theta[k] * (batch->eta + nphi[k]) * invz[k];
        return s;
    }
    for (size_t k = 0; k < K; k++)
        s += (batch->alpha + nt[k]) * (batch->eta + nphi[k]) * invz[k];
    return s / (K * batch->alpha + batch->rtrain[row]);
}

/* Document j's mixture for pair_prob in theta (K), or NULL where pair_prob reads the row. */
static const double *doc_theta(const slda_batch_t *batch, size_t j, double *theta)
{
    if (batch->kind != SLDA_KIND_PAM)
        return NULL;
    slda_batch_pam_theta(batch, j, theta);
    return theta;
}

/* Add the current p of every test pair to the running sums. */
static void accumulate(slda_batch_t *batch)
{
    double *invz = batch->work, *th = batch->work + batch->K;
    inv_topic_totals(batch, invz);
    for (size_t j = 0; j < batch->J; j++) {
        const double *theta = doc_theta(batch, j, th);
        for (size_t i = batch->tstart[j]; i < batch->tstart[j + 1]; i++)
            batch->psum[i] += pair_prob(batch, j, batch->tword[i], invz, theta);
    }
    batch->nsamples++;
}

double slda_batch_perplexity(const slda_batch_t *batch)
{
    double *invz = batch->work, *th = batch->work + batch->K, ll = 0.0;
    inv_topic_totals(batch, invz);
    for (size_t j = 0; j < batch->J; j++) {
        const double *theta = batch->nsamples ? NULL : doc_theta(batch, j, th);
        for (size_t i = batch->tstart[j]; i < batch->tstart[j + 1]; i++) {
            double p = batch->nsamples ? batch->psum[i] / batch->nsamples
                                       : pair_prob(batch, j, batch->tword[i], invz, theta);
            ll += batch->tcount[i] * log(p);
        }
    }
    return exp(-ll / (double)batch->sz.test_tokens);
}

/* ---- construction ---- */

static slda_err_t check_params(const slda_params_t *p, uint32_t nwords, size_t ndocs,
                               char *errstr, size_t errstr_size)
{
    if (p->kind == SLDA_KIND_PAM && (p->pam_super < 1 || p->pam_super > UINT16_MAX))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "parameter \"pam.super\": %u is not in 1..%d", p->pam_super,
                            UINT16_MAX);
    if (p->topics < 1 || p->topics > SLDA_MAX_TOPICS)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "parameter \"topics\": %u is not in 1..%d", p->topics,
                            SLDA_MAX_TOPICS);
    if (!(p->alpha > 0.0) || !isfinite(p->alpha))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "parameter \"alpha\": %g is not positive", p->alpha);
    if (!(p->eta > 0.0) || !isfinite(p->eta))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "parameter \"eta\": %g is not positive", p->eta);
    if ((unsigned)p->vb >= SLDA_VB__COUNT)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "parameter \"local\": unknown variant %d", (int)p->vb);
    if (nwords == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "vocabulary \"batch\": no words");
    if (ndocs == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY, "corpus \"batch\": no documents");
    return SLDA_OK;
}

/* Word ids in range and the total number of pairs. */
static slda_err_t check_docs(const slda_doc_t *docs, size_t ndocs, uint32_t nwords,
                             size_t *npairs, char *errstr, size_t errstr_size)
{
    size_t n = 0;
    for (size_t j = 0; j < ndocs; j++) {
        for (uint32_t i = 0; i < docs[j].npairs; i++) {
            if (docs[j].word[i] >= nwords)
                return slda_set_err(errstr, errstr_size, SLDA_ERR_RANGE,
                                    "document \"%s\": word id %u is not below the "
                                    "vocabulary size %u (document %zu)",
                                    docs[j].id ? docs[j].id : "", docs[j].word[i], nwords, j);
        }
        n += docs[j].npairs;
    }
    *npairs = n;
    return SLDA_OK;
}

/* Withhold each token with probability SLDA_BATCH_TEST_FRACTION, from a
 * stream of its own per document (so the split of one document does not
 * depend on the others); keep the train and test counts per pair. */
static void split_docs(slda_batch_t *batch, const slda_doc_t *docs, uint64_t seed)
{
    size_t np = 0, nt = 0;
    for (size_t j = 0; j < batch->J; j++) {
        slda_rng_t rng;
        slda_rng_seed3(&rng, seed, TAG_SPLIT, j);
        batch->pstart[j] = np;
        batch->tstart[j] = nt;
        for (uint32_t i = 0; i < docs[j].npairs; i++) {
            uint32_t c = docs[j].count[i], test = 0;
            for (uint32_t t = 0; t < c; t++)
                test += slda_rng_double(&rng) < SLDA_BATCH_TEST_FRACTION;
            if (c > test) {
                batch->pairs[np++] = (bpair_t){.word = docs[j].word[i], .count = c - test};
                batch->ntrain[j] += c - test;
                batch->sz.train_tokens += c - test;
            }
            if (test) {
                batch->tword[nt] = docs[j].word[i];
                batch->tcount[nt++] = test;
                batch->sz.test_tokens += test;
            }
        }
    }
    batch->pstart[batch->J] = np;
    batch->tstart[batch->J] = nt;
}

/* Give each pair its gamma row or its z range (the CG/VB split uses the
 * training counts). */
static void assign_offsets(slda_batch_t *batch)
{
    for (size_t i = 0; i < batch->pstart[batch->J]; i++) {
        bpair_t *pair = &batch->pairs[i];
        if (pair->count > batch->r) {
            pair->off = batch->sz.vb_pairs++;
        } else {
            pair->off = batch->sz.cg_tokens;
            batch->sz.cg_tokens += pair->count;
        }
    }
}

static slda_err_t alloc_split(slda_batch_t *batch, size_t npairs, char *errstr,
                              size_t errstr_size)
{
    size_t J = batch->J;
    if (!(batch->pstart = big(J + 1, sizeof(size_t), "batch documents", errstr, errstr_size)) ||
        !(batch->tstart = big(J + 1, sizeof(size_t), "batch documents", errstr, errstr_size)) ||
        !(batch->ntrain = big(J, sizeof(uint32_t), "batch documents", errstr, errstr_size)) ||
        !(batch->pairs = big(npairs, sizeof(bpair_t), "batch pairs", errstr, errstr_size)) ||
        !(batch->tword = big(npairs, sizeof(uint32_t), "batch test pairs", errstr, errstr_size)) ||
        !(batch->tcount = big(npairs, sizeof(uint32_t), "batch test pairs", errstr, errstr_size)))
        return SLDA_ERR_NOMEM;
    return SLDA_OK;
}

static slda_err_t alloc_state(slda_batch_t *batch, char *errstr, size_t errstr_size)
{
    size_t K = batch->K, ntest = batch->tstart[batch->J];
    size_t nwork = batch->G + 2 * K; /* PAM: p (S x K) and K; evaluation: 2 K */
    if (!(batch->gamma = big(batch->sz.vb_pairs * batch->G, sizeof(float), "batch gamma", errstr,
                             errstr_size)) ||
        !(batch->z = big(batch->sz.cg_tokens, sizeof(uint16_t), "batch topic assignments",
                         errstr, errstr_size)) ||
        !(batch->Ntheta = big(batch->R * K, sizeof(double), "batch Ntheta", errstr,
                              errstr_size)) ||
        !(batch->Nphi = big((size_t)batch->W * K, sizeof(double), "batch Nphi", errstr,
                            errstr_size)) ||
        !(batch->NZ = big(K, sizeof(double), "batch NZ", errstr, errstr_size)) ||
        !(batch->work = big(nwork, sizeof(double), "batch scratch", errstr, errstr_size)))
        return SLDA_ERR_NOMEM;
    if (batch->sampling &&
        !(batch->psum = big(ntest, sizeof(double), "batch test sums", errstr, errstr_size)))
        return SLDA_ERR_NOMEM;
    if (batch->ops && batch->ops->batch_variance && batch->kind != SLDA_KIND_PAM &&
        (!(batch->Vtheta = big(batch->R * K, sizeof(double), "batch Vtheta", errstr,
                               errstr_size)) ||
         !(batch->Vphi = big((size_t)batch->W * K, sizeof(double), "batch Vphi", errstr,
                             errstr_size)) ||
         !(batch->VZ = big(K, sizeof(double), "batch VZ", errstr, errstr_size))))
        return SLDA_ERR_NOMEM;
    return SLDA_OK;
}

/* Random start: z uniform over topics; gamma a normalised uniform vector
 * (floored at 0.01 so no topic starts at exactly zero). Counts accumulated. */
static void init_state(slda_batch_t *batch)
{
    size_t K = batch->K;
    if (batch->kind == SLDA_KIND_PAM) {
        slda_batch_pam_init(batch);
        return;
    }
    for (size_t j = 0; j < batch->J; j++) {
        for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
            const bpair_t *pair = &batch->pairs[i];
            if (pair->count > batch->r) {
                double sum = 0.0, *g0 = batch->work;
                for (size_t k = 0; k < K; k++)
                    sum += g0[k] = 0.01 + slda_rng_double(&batch->rng);
                slda_normalise_d(g0, (uint32_t)K, sum);
                float *g = batch->gamma + pair->off * K;
                if (batch->Vtheta)
                    vb_store_var(batch, j, pair->word, g, pair->count, g0);
                vb_store(batch, j, pair->word, g, pair->count, g0);
                continue;
            }
            double *nt = batch->Ntheta + slda_batch_row(batch, j) * K;
            double *nphi = batch->Nphi + (size_t)pair->word * K;
            for (uint32_t t = 0; t < pair->count; t++) {
                uint32_t k = slda_rng_below(&batch->rng, (uint32_t)K);
                batch->z[pair->off + t] = (uint16_t)k;
                nt[k] += 1.0;
                nphi[k] += 1.0;
                batch->NZ[k] += 1.0;
            }
        }
    }
}

/* The rows of Ntheta (docs/models.md, "Batch mode"): one a document, or one an author. */
static slda_err_t make_rows(slda_batch_t *batch, const slda_doc_t *docs, char *errstr,
                            size_t errstr_size)
{
    if (batch->kind != SLDA_KIND_ATM) {
        batch->R = batch->J;
        batch->rtrain = batch->ntrain;
        return SLDA_OK;
    }
    return slda_batch_atm_rows(batch, docs, errstr, errstr_size);
}

static slda_err_t build(slda_batch_t *batch, const slda_params_t *p, const slda_doc_t *docs,
                        size_t npairs, char *errstr, size_t errstr_size)
{
    slda_err_t err = alloc_split(batch, npairs, errstr, errstr_size);
    if (err || (err = make_rows(batch, docs, errstr, errstr_size)))
        return err;
    split_docs(batch, docs, p->seed);
    if (batch->rtrain != batch->ntrain)
        for (size_t j = 0; j < batch->J; j++)
            batch->rtrain[batch->row[j]] += batch->ntrain[j];
    if (batch->sz.train_tokens == 0 || batch->sz.test_tokens == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_EMPTY,
                            "corpus \"batch\": %llu training and %llu test tokens; need both",
                            (unsigned long long)batch->sz.train_tokens,
                            (unsigned long long)batch->sz.test_tokens);
    assign_offsets(batch);
    if ((err = alloc_state(batch, errstr, errstr_size)))
        return err;
    if (batch->kind == SLDA_KIND_PAM && (err = slda_batch_pam_new(batch, p, errstr, errstr_size)))
        return err;
    init_state(batch);
    return SLDA_OK;
}

slda_err_t slda_batch_new(const slda_params_t *p, const slda_doc_t *docs, size_t ndocs,
                          uint32_t nwords, slda_batch_t **out, char *errstr,
                          size_t errstr_size)
{
    size_t npairs = 0;
    *out = NULL;
    slda_err_t err = check_params(p, nwords, ndocs, errstr, errstr_size);
    if (err || (err = check_docs(docs, ndocs, nwords, &npairs, errstr, errstr_size)))
        return err;
    slda_batch_t *batch = big(1, sizeof *batch, "batch", errstr, errstr_size);
    if (!batch)
        return SLDA_ERR_NOMEM;
    batch->kind = p->kind;
    batch->S = p->kind == SLDA_KIND_PAM ? p->pam_super : 1;
    batch->G = batch->S * p->topics;
    batch->ops = slda_vb_ops(p->vb);
    batch->r = slda_params_r(p);
    batch->sampling = p->vb == SLDA_VB_NONE || p->hybrid;
    batch->K = p->topics;
    batch->W = nwords;
    batch->J = ndocs;
    batch->alpha = p->alpha;
    batch->eta = p->eta;
    batch->weta = nwords * p->eta;
    slda_rng_seed3(&batch->rng, p->seed, TAG_SWEEP, 0);
    if ((err = build(batch, p, docs, npairs, errstr, errstr_size))) {
        slda_batch_destroy(batch);
        return err;
    }
    *out = batch;
    return SLDA_OK;
}

/* ---- iteration ---- */

void slda_batch_iterate(slda_batch_t *batch)
{
    for (size_t j = 0; j < batch->J; j++)
        sweep_doc(batch, j);
    batch->iter++;
    if (batch->kind == SLDA_KIND_PAM)
        slda_batch_pam_after(batch);
    if (batch->sampling && batch->iter > SLDA_BATCH_BURNIN)
        accumulate(batch);
}

uint32_t slda_batch_iterations(const slda_batch_t *batch)
{
    return batch->iter;
}

void slda_batch_sizes(const slda_batch_t *batch, slda_batch_sizes_t *out)
{
    *out = batch->sz;
}

double slda_batch_topic_total(const slda_batch_t *batch)
{
    double s = 0.0;
    for (uint32_t k = 0; k < batch->K; k++)
        s += batch->NZ[k];
    return s;
}

/* ---- recount ---- */

static double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* Add one pair's contribution to fresh arrays (t: Ntheta[j], p: Nphi[w]). */
static void recount_pair(const slda_batch_t *batch, const bpair_t *pair, double *t, double *p,
                         double *z, double *vt, double *vp, double *vz)
{
    size_t K = batch->K;
    if (pair->count <= batch->r) {
        for (uint32_t i = 0; i < pair->count; i++) {
            uint16_t k = batch->z[pair->off + i];
            t[k] += 1.0, p[k] += 1.0, z[k] += 1.0;
        }
        return;
    }
    const float *g = batch->gamma + pair->off * K;
    for (size_t k = 0; k < K; k++) {
        double gk = g[k], c = pair->count * gk, v = pair->count * gk * (1.0 - gk);
        t[k] += c, p[k] += c, z[k] += c;
        if (vt)
            vt[k] += v, vp[k] += v, vz[k] += v;
    }
}

double slda_batch_check(const slda_batch_t *batch)
{
    size_t K = batch->K, nt = batch->R * K, np = (size_t)batch->W * K;
    int cvb = batch->Vtheta != NULL;
    size_t n = cvb ? 2 * (nt + np + K) : nt + np + K;
    double *fresh = big(n, sizeof(double), "batch check", NULL, 0);
    if (!fresh)
        return INFINITY;
    double *t = fresh, *p = t + nt, *z = p + np;
    double *vt = cvb ? z + K : NULL, *vp = cvb ? vt + nt : NULL, *vz = cvb ? vp + np : NULL;
    if (batch->kind == SLDA_KIND_PAM) {
        double m = slda_batch_pam_check(batch, p, z);
        m = fmax(m, fmax(max_diff(p, batch->Nphi, np), max_diff(z, batch->NZ, K)));
        slda_big_free(fresh);
        return m;
    }
    for (size_t j = 0; j < batch->J; j++)
        for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
            const bpair_t *pair = &batch->pairs[i];
            size_t w = pair->word;
            size_t row = slda_batch_row(batch, j);
            recount_pair(batch, pair, t + row * K, p + w * K, z, cvb ? vt + row * K : NULL,
                         cvb ? vp + w * K : NULL, vz);
        }
    double m = fmax(max_diff(t, batch->Ntheta, nt),
                    fmax(max_diff(p, batch->Nphi, np), max_diff(z, batch->NZ, K)));
    if (cvb)
        m = fmax(m, fmax(max_diff(vt, batch->Vtheta, nt),
                         fmax(max_diff(vp, batch->Vphi, np), max_diff(vz, batch->VZ, K))));
    slda_big_free(fresh);
    return m;
}

/* ---- the public loop, and the learned model ---- */

slda_err_t slda_batch_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                            size_t errstr_size)
{
    size_t K = batch->K;
    if (model->K != batch->K || model->W < batch->W)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "model \"%s\": K=%u with %u rows cannot hold a batch of K=%u over "
                            "%u words",
                            model->name, model->K, model->W, batch->K, batch->W);
    slda_rows_nz_invalidate(model);
    memset(model->A, 0, (size_t)model->W * model->Kp * sizeof(float));
    memset(model->NZ, 0, K * sizeof(double));
    model->sigma = 1.0;
    for (uint32_t w = 0; w < batch->W; w++) {
        const double *nphi = batch->Nphi + (size_t)w * K;
        float *a = model->A + (size_t)w * model->Kp;
        double total = 0;
        for (size_t k = 0; k < K; k++)
            total += nphi[k];
        if (!(total > 0) || !slda_model_word(model, w))
            continue; /* not in the training tokens: an open vocabulary does not hold it */
        for (size_t k = 0; k < K; k++) {
            a[k] = (float)fmax(nphi[k], 0.0); /* rounding leaves -1e-12 where a topic emptied */
            model->NZ[k] += a[k];
        }
        slda_model_mark_row(model, w);
    }
    model->t = batch->iter;
    model->docs = 0;
    for (size_t j = 0; j < batch->J; j++)
        model->docs += batch->ntrain[j] > 0;
    model->tokens = batch->sz.train_tokens;
    model->corpus_tokens = (double)batch->sz.train_tokens;
    model->updated_ms = slda_now_ms();
    if (batch->kind == SLDA_KIND_ATM)
        return slda_batch_atm_store(batch, model, errstr, errstr_size);
    if (batch->kind == SLDA_KIND_PAM)
        return slda_batch_pam_store(batch, model, errstr, errstr_size);
    return SLDA_OK;
}

slda_err_t slda_batch_run(const slda_conf_t *conf, const slda_doc_t *docs, size_t ndocs,
                          uint32_t nwords, uint32_t iterations,
                          void (*progress)(uint32_t iter, double perplexity, void *opaque),
                          uint32_t every, void *opaque, slda_batch_result_t *result,
                          char *errstr, size_t errstr_size)
{
    return slda_batch_train(NULL, conf, docs, ndocs, nwords, iterations, progress, every, opaque,
                            result, errstr, errstr_size);
}

slda_err_t slda_batch_train(slda_model_t *model, const slda_conf_t *conf, const slda_doc_t *docs,
                            size_t ndocs, uint32_t nwords, uint32_t iterations,
                            void (*progress)(uint32_t iter, double perplexity, void *opaque),
                            uint32_t every, void *opaque, slda_batch_result_t *result,
                            char *errstr, size_t errstr_size)
{
    double t0 = slda_mono_s();
    slda_batch_t *batch = NULL;
    if (!conf || (!docs && ndocs))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "argument \"%s\": NULL", conf ? "docs" : "conf");
    if (model && (model->K != conf->p.topics || model->W < nwords))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "model \"%s\": K=%u with %u rows, the batch needs K=%u and %u rows",
                            model->name, model->K, model->W, conf->p.topics, nwords);
    slda_err_t err = slda_batch_new(&conf->p, docs, ndocs, nwords, &batch, errstr, errstr_size);
    if (err)
        return err;
    for (uint32_t it = 1; it <= iterations; it++) {
        slda_batch_iterate(batch);
        if (progress && every && it % every == 0)
            progress(it, slda_batch_perplexity(batch), opaque);
    }
    if (result) {
        result->perplexity = slda_batch_perplexity(batch);
        result->train_tokens = batch->sz.train_tokens;
        result->test_tokens = batch->sz.test_tokens;
        result->seconds = slda_mono_s() - t0;
    }
    if (model)
        err = slda_batch_store(batch, model, errstr, errstr_size);
    slda_batch_destroy(batch);
    return err;
}
