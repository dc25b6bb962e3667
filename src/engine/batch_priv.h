/* batch_priv.h - the batch state shared by batch.c (LDA, the common loop), batch_atm.c (the
 * author-topic model's rows) and batch_pam.c (pachinko allocation); private to src/engine. */
#ifndef SLDA_BATCH_PRIV_H
#define SLDA_BATCH_PRIV_H

#include "engine/batch.h"
#include "engine/local.h"
#include "engine/pam.h"

typedef struct bpair_s {
    uint32_t word;
    uint32_t count; /* training tokens of word in the document */
    size_t off;     /* VB pair: its gamma row; CG pair: index of its first z */
} bpair_t;

struct slda_batch_s {
    slda_model_kind_t kind;
    const slda_vb_ops_t *ops; /* the VB variant (local.h's table); NULL for pure CGS */
    uint32_t r;        /* pairs with count <= r are sampled */
    int sampling;      /* CGS or a hybrid: p is averaged over samples (eq. 31) */
    uint32_t K, W;
    uint32_t G;        /* floats of one gamma row: K, or S x K (PAM) */
    size_t J;
    double alpha, eta, weta; /* weta = W * eta */
    uint32_t iter;
    slda_rng_t rng;
    slda_batch_sizes_t sz;
    /* training pairs of document j: pairs[pstart[j] .. pstart[j+1]) */
    size_t *pstart;
    bpair_t *pairs;
    uint32_t *ntrain;  /* training tokens per document (N_j) */
    float *gamma;      /* vb_pairs x G */
    uint16_t *z;       /* cg_tokens topics (K <= SLDA_MAX_TOPICS < 65536) */
    /* test pairs of document j: tword/tcount[tstart[j] .. tstart[j+1]) */
    size_t *tstart;
    uint32_t *tword, *tcount;
    double *psum;      /* per test pair: sum of p over the averaged samples */
    uint32_t nsamples;
    double *Ntheta, *Nphi, *NZ; /* R x K, W x K, K */
    double *Vtheta, *Vphi, *VZ; /* the same shapes, CVB only */
    double *work;               /* max(G, 2 K) scratch */
    /* The rows of Ntheta: R = J, row j for document j (LDA); for ATM one row per author,
     * row[j] the author of document j, rtrain[x] the training tokens of author x (N_x),
     * names[x] its name (owned). LDA: row and names NULL, rtrain = ntrain. */
    size_t R;
    uint32_t *row, *rtrain;
    char **names;
    /* PAM: S super-topics; per CG token its super-topic zx; per document the counts n_jx
     * (J x S) and n_jxy (J x S x K); the priors alpha0, alpha_x (learned) and A_x. */
    uint32_t S;
    uint16_t *zx;
    double *nx, *nxy, *Ax;
    slda_pam_t *pam;
    float *nxyf; /* J x S x K: n_jxy as floats for slda_pam_step */
};

/* Document j's row of Ntheta. */
static inline size_t slda_batch_row(const slda_batch_t *batch, size_t j)
{
    return batch->row ? batch->row[j] : j;
}

/* n x size bytes, zeroed, or NULL with errstr (overflow counts as failure). */
static inline void *slda_batch_big(size_t n, size_t size, const char *what, char *errstr,
                                   size_t errstr_size)
{
    if (size && n > SIZE_MAX / size) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM, "%s: cannot allocate %zu x %zu bytes",
                     what, n, size);
        return NULL;
    }
    return slda_big_alloc(n * size, what, errstr, errstr_size);
}

/* ATM (batch_atm.c): give each document its author's row (distinct names in order of first
 * appearance); a document with no author or several is refused. */
slda_err_t slda_batch_atm_rows(slda_batch_t *batch, const slda_doc_t *docs, char *errstr,
                               size_t errstr_size);
/* The author counts (Ntheta's rows, N_x, names) into model's author table. */
slda_err_t slda_batch_atm_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                                size_t errstr_size);

/* PAM (batch_pam.c): allocate and start its state (after the split and offsets; draws from
 * batch->rng as init_state does); one sweep over document j; the step on alpha_x after a sweep;
 * document j's sub-topic mixture theta (K); the recount of n_jx, n_jxy (largest difference);
 * alpha_x into model. */
slda_err_t slda_batch_pam_new(slda_batch_t *batch, const slda_params_t *p, char *errstr,
                              size_t errstr_size);
void slda_batch_pam_init(slda_batch_t *batch);
void slda_batch_pam_sweep(slda_batch_t *batch, size_t j);
void slda_batch_pam_after(slda_batch_t *batch);
void slda_batch_pam_theta(const slda_batch_t *batch, size_t j, double *theta);
double slda_batch_pam_check(const slda_batch_t *batch, double *Nphi, double *NZ);
void slda_batch_pam_free(slda_batch_t *batch);
slda_err_t slda_batch_pam_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                                size_t errstr_size);

#endif /* SLDA_BATCH_PRIV_H */
