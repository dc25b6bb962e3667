/* local.h - the per-document local step: shared scratch and the variant table. */
#ifndef SLDA_LOCAL_H
#define SLDA_LOCAL_H

#include "engine/model_priv.h"

#include <math.h>

/* K-vectors are processed 8 floats at a time with GCC vector extensions; Kp
 * is a multiple of 16 and every K-vector is 64-byte aligned, padding zero. */
typedef float slda_v8f __attribute__((vector_size(32), aligned(32)));

typedef float slda_v4f __attribute__((vector_size(16)));

/* Sum of the 8 lanes as a tree (halves, then pairs), in a fixed order. */
static inline __attribute__((always_inline)) float slda_v8_hsum(const slda_v8f *pv)
{
    slda_v8f v = *pv;
    slda_v4f lo = {v[0], v[1], v[2], v[3]}, hi = {v[4], v[5], v[6], v[7]};
    slda_v4f s = lo + hi;
    return (s[0] + s[2]) + (s[1] + s[3]);
}

/* Sum of the 8 lanes, in a fixed order (results must not depend on the clone). */
static inline __attribute__((always_inline)) float slda_v8_sum(const slda_v8f *pv)
{
    float s = 0;
    for (int i = 0; i < 8; i++)
        s += (*pv)[i];
    return s;
}

/*
 * Scratch of one worker for one document at a time. Unique words of the
 * document are indexed u = 0..nu-1 (in document order); VB pairs and CG
 * tokens refer to them by u. All K-vectors have stride Kp.
 */
typedef struct slda_local_s {
    uint32_t K, Kp;
    uint32_t cap_u, cap_g;  /* allocated unique words / CG tokens */
    /* document */
    uint32_t nu;            /* unique words */
    uint32_t nv;            /* VB pairs (count > r) */
    uint32_t ng;            /* CG tokens (words with count <= r) */
    uint32_t L;             /* tokens */
    uint32_t *v_u;          /* nv: unique-word index of each VB pair */
    float *v_n;             /* nv: count of each VB pair */
    uint32_t *g_u;          /* ng: unique-word index of each CG token */
    uint32_t *z;            /* ng: topic of each CG token */
    float *f;               /* nu*Kp: word factor (docs/algorithm.md f[w][k]; SVB: exp E[log phi]
                               scaled by its largest entry) */
    float *lf;              /* nu*Kp: SVB only: E[log phi] minus its largest entry */
    float *gamma;           /* nv*Kp */
    float *stats;           /* nu*Kp: collected sufficient statistics S_j */
    float *stats_out;       /* set by the caller for one slda_local_run: S_j goes there
                               (nu*Kp, 32-byte aligned) instead of stats (train.c: the
                               minibatch's slice, no copy) */
    float *ntheta;          /* Kp: document counts N_theta */
    float *ntheta_sum;      /* Kp: N_theta summed over collection sweeps */
    float *var;             /* Kp: CVB variance sum_v n_v gamma_v (1 - gamma_v) */
    float *expdig;          /* Kp: SVB exp(psi(N_theta + alpha) - max) of the current sweep */
    float *logdig;          /* Kp: SVB psi(N_theta + alpha) - max of the current sweep */
    float *p;               /* Kp: sampling distribution scratch */
    float *alpha;           /* Kp: alpha_k, padding 0 (the document's prior while it runs) */
    const float *prior;     /* set by the caller for one slda_local_run: the document's prior
                               (Kp, padding 0) in place of the frozen alpha (model.kind=atm:
                               its authors', engine/authors.c); NULL: alpha */
    double prior_sum;       /* the sum of prior's entries */
    float *prior_buf;       /* Kp: room for a caller's prior (padding 0) */
    void *pam;              /* model.kind=pam: pam_local.c's scratch, NULL until used */
    void (*pam_free)(void *); /* frees it (set by pam_local.c, so this file's users need not know it) */
    /* the sparse local step (local_sparse.c) */
    uint32_t *tab_u;        /* nu: the proposal table of each unique word */
    uint16_t *zs;           /* samples x ng: each collection sweep's topics */
    uint32_t *dtop;         /* K: the topics the collection sweeps drew, in first-drawn order */
    uint32_t ndtop;
    uint32_t cap_tu;
    size_t cap_zs;
    uint32_t *sp_dl;        /* samples x sp_dcap: each collection sweep's document topics */
    float *sp_nd;           /* samples x Kp: their counts times inv_k, dense (zero between uses) */
    uint32_t *sp_dn_n;      /* samples: how many */
    double *sp_e;           /* samples: sum_k N_c[k] inv_k */
    float *sp_m;            /* samples: max_k N_c[k] inv_k */
    uint32_t sp_dcap, cap_dn_n;
    size_t cap_dl;
    uint8_t *sp_mark;       /* Kp: a topic touched (zero between uses) */
    float *sp_acc;          /* Kp: a word's statistics (zero between uses) */
    uint16_t *sp_touch;     /* Kp: the topics touched */
    int sp_clean;           /* the sparse step ran last: ntheta is zero and ntheta_sum zero
                               outside dtop[0..ndtop) (the dense and pam steps clear it) */
    slda_rng_t rng;
    int collect;            /* this sweep adds to stats */
    int want_stats;
    slda_stats_kind_t stats_kind;
} slda_local_t;

/* What one VB pair's update reads in batch mode (batch.c, docs/algorithm.md "Batch mode"):
 * the live counts of its document and word, which include the pair's own contribution
 * n * g (a rule excludes one token's share g itself where its variant does). */
typedef struct slda_vb_batch_s {
    uint32_t K;
    double alpha, eta, weta;    /* weta = W eta */
    const double *nt, *nphi;    /* Ntheta[j], Nphi[w] */
    const double *NZ;           /* K */
    const double *vt, *vphi, *VZ; /* the variances of the same sums (CVB only, else NULL) */
    const float *g;             /* the pair's current gamma */
} slda_vb_batch_t;

/* One VB variant: a row of the variant table (local_step.c, made from core/config.h's
 * SLDA_VB_VARIANTS), its rules in its own file local_NAME.c, in both precisions: the
 * stream local step's (float, global state frozen: prepare the word factors of the
 * document's unique words, then sweep its VB pairs once) and batch mode's (double, live
 * counts: one pair's new gamma). Each file writes its per-topic rule once and uses it in
 * both. */
typedef struct slda_vb_ops_s {
    const char *name;
    void (*init_words)(slda_local_t *loc, const slda_model_t *model, const uint32_t *words,
                       const float *inv_nz);
    void (*sweep)(slda_local_t *loc);
    /* batch mode: out (K doubles) = the pair's new gamma, normalised */
    void (*batch_gamma)(const slda_vb_batch_t *v, double *out);
    int plain_factors;  /* init_words leaves the plain f[w][k] in loc->f (births.c reuses it) */
    int batch_variance; /* batch mode keeps the variance sums vt, vphi, VZ for it */
} slda_vb_ops_t;

#define SLDA_VB_OPS_DECL(id, name) extern const slda_vb_ops_t slda_vb_##name;
SLDA_VB_VARIANTS(SLDA_VB_OPS_DECL)
#undef SLDA_VB_OPS_DECL
/* The row of a variant (NULL for SLDA_VB_NONE: pure CGS). */
const slda_vb_ops_t *slda_vb_ops(slda_vb_kind_t vb);

/* out[k] /= sum (K doubles); a degenerate sum (underflow, NaN) gives uniform. */
static inline void slda_normalise_d(double *out, uint32_t K, double sum)
{
    if (!(sum > 0.0) || !isfinite(sum)) {
        for (uint32_t k = 0; k < K; k++)
            out[k] = 1.0 / K;
        return;
    }
    double inv = 1.0 / sum;
    for (uint32_t k = 0; k < K; k++)
        out[k] *= inv;
}

/* local_cgs.c: one sweep over the CG tokens (eq. 25); initial draws. */
void slda_cgs_sweep(slda_local_t *loc);
void slda_cgs_init(slda_local_t *loc);

/* local_cgs.c: the plain word factor f[w][k] = (Nphi[w][k]+eta) * inv_nz[k]
 * for every unique word (CVB0, CVB, CGS). */
void slda_local_word_factors(slda_local_t *loc, const slda_model_t *model,
                             const uint32_t *words, const float *inv_nz);

slda_local_t *slda_local_new(uint32_t K);
void slda_local_destroy(slda_local_t *loc);

/* The sweeps of a run: local.burnin and local.samples, or with second visits
 * on (replay.c) their share for a first visit or a second (local_step.c). */
void slda_local_sweeps(const slda_params_t *p, int want_stats, int revisit, uint32_t *burnin,
                       uint32_t *samples);

struct slda_wtabs_s;

/* Frozen global view shared by all documents of a minibatch. */
typedef struct slda_frozen_s {
    const slda_model_t *model;
    const slda_vb_ops_t *ops;   /* NULL for pure CGS */
    uint32_t r;                 /* effective singleton threshold */
    float *inv_nz;              /* Kp: 1 / (NZ[k] + W eta), padding 0 */
    float *alpha;               /* Kp */
    double alpha_sum;
    int revisit;                /* training documents' second visit (replay.c) */
    const struct slda_wtabs_s *tabs; /* the sparse path's proposal tables (sparse.h), or NULL */
} slda_frozen_t;

slda_err_t slda_frozen_init(slda_frozen_t *fz, const slda_model_t *model, char *errstr,
                            size_t errstr_size);
void slda_frozen_clear(slda_frozen_t *fz);

/* Run the local step on doc (words/counts, npairs) with the given seed.
 * Afterwards loc->stats (if want_stats) holds S_j for the unique words in
 * doc order and loc->ntheta_sum / samples the mean document counts. theta
 * (may be NULL) receives (Ntheta + alpha)/(L + sum alpha). */
/* Room in loc for a document of nu unique words and ng sampled tokens (pam_local.c). */
void slda_local_reserve(slda_local_t *loc, uint32_t nu, uint32_t ng);
void slda_local_run(slda_local_t *loc, const slda_frozen_t *fz, const uint32_t *words,
                    const uint32_t *counts, uint32_t npairs, uint64_t seed_a, uint64_t seed_b,
                    int want_stats, float *theta);

#endif
