/* batch_pam.c - batch mode for 4-level pachinko allocation: in-place sweeps over (super, sub) pairs.
 *
 * docs/models.md, "Batch mode". The stream local step's conditional (pam_local.c) with every
 * count live, as batch.c has LDA's: a token's joint over its super-topic x and sub-topic y is
 *
 *   p(x, y) ∝ (n_jx + alpha0) (n_jxy + alpha_xy) / (n_jx + A_x) ·
 *             (Nphi[w][y] + eta) / (NZ[y] + W eta),      A_x = sum_y alpha_xy,
 *
 * every count without the token. Pairs of count > r keep gamma(x, y) (S x K floats) updated by
 * its arithmetic-mean form (AMF; CVB0 for LDA) with one token's share taken out of every count;
 * the others are drawn jointly, one (x, y) a token (collapsed Gibbs, Li and McCallum). So
 * local=cgs is PAM's collapsed Gibbs sampler, local=cvb0 (any VB variant) its AMF, NAME+cgs the
 * hybrid. Nphi and NZ take the marginal over x. After each sweep past the burn-in, one full
 * fixed-point step of alpha_x on the documents' counts n_jxy (pam.c's slda_pam_step); alpha0 =
 * alpha stays fixed. Invariants (slda_batch_check recounts them): n_jxy = the sum of document
 * j's n gamma(x, y) and [token at (x, y)], n_jx = sum_y n_jxy, Nphi[w][y] = sum over the pairs
 * of w and over x, NZ[y] = sum_w Nphi[w][y]. Cost S K per token and sweep.
 */
#include "engine/batch_priv.h"
#include "engine/model_priv.h"
#include "engine/pam_priv.h"

#include <math.h>
#include <string.h>

slda_err_t slda_batch_pam_new(slda_batch_t *batch, const slda_params_t *p, char *errstr,
                              size_t errstr_size)
{
    size_t J = batch->J, S = batch->S, sk = S * batch->K;
    batch->pam = slda_pam_new(batch->S, batch->K, p->alpha, p->seed);
    /* a full step (rho 1) each sweep from the first one past the burn-in */
    slda_pam_schedule(batch->pam, 1.0, SLDA_BATCH_BURNIN + 1);
    if (!(batch->nx = slda_batch_big(J * S, sizeof(double), "batch n_jx", errstr, errstr_size)) ||
        !(batch->nxy = slda_batch_big(J * sk, sizeof(double), "batch n_jxy", errstr,
                                      errstr_size)) ||
        !(batch->nxyf = slda_batch_big(J * sk, sizeof(float), "batch n_jxy", errstr,
                                       errstr_size)) ||
        !(batch->Ax = slda_batch_big(S, sizeof(double), "batch A_x", errstr, errstr_size)) ||
        !(batch->zx = slda_batch_big(batch->sz.cg_tokens, sizeof(uint16_t),
                                     "batch super-topic assignments", errstr, errstr_size)))
        return SLDA_ERR_NOMEM;
    return SLDA_OK;
}

void slda_batch_pam_free(slda_batch_t *batch)
{
    slda_pam_free(batch->pam);
    slda_big_free(batch->nx);
    slda_big_free(batch->nxy);
    slda_big_free(batch->nxyf);
    slda_big_free(batch->Ax);
    slda_big_free(batch->zx);
}

static void sums(slda_batch_t *batch)
{
    const double *al = batch->pam->alpha;
    for (uint32_t x = 0; x < batch->S; x++) {
        double a = 0;
        for (uint32_t y = 0; y < batch->K; y++)
            a += al[(size_t)x * batch->K + y];
        batch->Ax[x] = a;
    }
}

/* Add n times the change gnew - g (S x K) of a pair of word w in document j to every count
 * and store gnew in g (as float: the counts track what is stored). */
static void vb_store(slda_batch_t *batch, size_t j, uint32_t w, float *g, double n,
                     const double *gnew)
{
    uint32_t S = batch->S, K = batch->K;
    double *nx = batch->nx + j * S, *nxy = batch->nxy + j * S * K;
    double *nphi = batch->Nphi + (size_t)w * K, *NZ = batch->NZ;
    for (uint32_t x = 0; x < S; x++) {
        double dx = 0;
        for (uint32_t y = 0; y < K; y++) {
            size_t i = (size_t)x * K + y;
            float f = (float)gnew[i];
            double d = n * ((double)f - g[i]);
            nxy[i] += d;
            nphi[y] += d;
            NZ[y] += d;
            dx += d;
            g[i] = f;
        }
        nx[x] += dx;
    }
}

/* p (S x K) = the conditional above for a token of word w in document j, without own (S x K:
 * one token's share, or NULL); returns its sum. fw (K) is scratch. */
static double joint(const slda_batch_t *batch, size_t j, uint32_t w, const float *own,
                    double *p, double *fw)
{
    uint32_t S = batch->S, K = batch->K;
    const double *nx = batch->nx + j * S, *nxy = batch->nxy + j * S * K;
    const double *nphi = batch->Nphi + (size_t)w * K, *al = batch->pam->alpha;
    double a0 = batch->pam->alpha0, tot = 0;
    for (uint32_t y = 0; y < K; y++) {
        double oy = 0;
        for (uint32_t x = 0; own && x < S; x++)
            oy += own[(size_t)x * K + y];
        fw[y] = (fmax(nphi[y] - oy, 0.0) + batch->eta) / (batch->NZ[y] - oy + batch->weta);
    }
    for (uint32_t x = 0; x < S; x++) {
        double ox = 0;
        for (uint32_t y = 0; own && y < K; y++)
            ox += own[(size_t)x * K + y];
        double n = fmax(nx[x] - ox, 0.0), outer = (n + a0) / (n + batch->Ax[x]);
        for (uint32_t y = 0; y < K; y++) {
            size_t i = (size_t)x * K + y;
            double c = fmax(nxy[i] - (own ? own[i] : 0.0), 0.0);
            p[i] = fw[y] * (c + al[i]) * outer;
            tot += p[i];
        }
    }
    return tot;
}

static void vb_pair(slda_batch_t *batch, size_t j, const bpair_t *pair)
{
    size_t G = batch->G;
    float *g = batch->gamma + pair->off * G;
    double *p = batch->work, *fw = batch->work + G;
    double tot = joint(batch, j, pair->word, g, p, fw);
    slda_normalise_d(p, (uint32_t)G, tot);
    vb_store(batch, j, pair->word, g, pair->count, p);
}

/* Move one token to or from (x, y): d = +1 or -1. */
static void token_add(slda_batch_t *batch, size_t j, uint32_t w, uint32_t x, uint32_t y,
                      double d)
{
    uint32_t S = batch->S, K = batch->K;
    batch->nx[j * S + x] += d;
    batch->nxy[(j * S + x) * K + y] += d;
    batch->Nphi[(size_t)w * K + y] += d;
    batch->NZ[y] += d;
}

static void cg_token(slda_batch_t *batch, size_t j, uint32_t w, size_t t)
{
    size_t G = batch->G;
    uint32_t K = batch->K;
    double *p = batch->work, *fw = batch->work + G;
    token_add(batch, j, w, batch->zx[t], batch->z[t], -1.0);
    double tot = joint(batch, j, w, NULL, p, fw), u = slda_rng_double(&batch->rng) * tot, c = 0;
    size_t i = 0;
    for (; i + 1 < G; i++) {
        c += p[i];
        if (c > u)
            break;
    }
    batch->zx[t] = (uint16_t)(i / K);
    batch->z[t] = (uint16_t)(i % K);
    token_add(batch, j, w, batch->zx[t], batch->z[t], 1.0);
}

void slda_batch_pam_sweep(slda_batch_t *batch, size_t j)
{
    for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
        const bpair_t *pair = &batch->pairs[i];
        if (pair->count > batch->r) {
            vb_pair(batch, j, pair);
            continue;
        }
        for (uint32_t t = 0; t < pair->count; t++)
            cg_token(batch, j, pair->word, pair->off + t);
    }
}

/* As batch.c's init_state: gamma a normalised uniform vector over (x, y) floored at 0.01,
 * each sampled token's (x, y) uniform; counts accumulated. */
void slda_batch_pam_init(slda_batch_t *batch)
{
    size_t G = batch->G;
    sums(batch);
    for (size_t j = 0; j < batch->J; j++) {
        for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
            const bpair_t *pair = &batch->pairs[i];
            if (pair->count > batch->r) {
                double sum = 0.0, *g0 = batch->work;
                for (size_t k = 0; k < G; k++)
                    sum += g0[k] = 0.01 + slda_rng_double(&batch->rng);
                slda_normalise_d(g0, (uint32_t)G, sum);
                vb_store(batch, j, pair->word, batch->gamma + pair->off * G, pair->count, g0);
                continue;
            }
            for (uint32_t t = 0; t < pair->count; t++) {
                size_t o = pair->off + t;
                batch->zx[o] = (uint16_t)slda_rng_below(&batch->rng, batch->S);
                batch->z[o] = (uint16_t)slda_rng_below(&batch->rng, batch->K);
                token_add(batch, j, pair->word, batch->zx[o], batch->z[o], 1.0);
            }
        }
    }
}

void slda_batch_pam_after(slda_batch_t *batch)
{
    size_t n = batch->J * batch->G;
    if (batch->iter < batch->pam->warmup)
        return;
    /* the documents' counts as one draw of every token (pam.h, slda_pam_draw_counts): the
     * sampled tokens' (x, y), and draws from each AMF pair's gamma */
    size_t G = batch->G;
    memset(batch->nxyf, 0, n * sizeof *batch->nxyf);
    for (size_t j = 0; j < batch->J; j++) {
        float *row = batch->nxyf + j * G;
        for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
            const bpair_t *pair = &batch->pairs[i];
            if (pair->count > batch->r) {
                slda_pam_draw_counts(batch->gamma + pair->off * G, G, pair->count, &batch->rng,
                                     batch->work, row);
                continue;
            }
            for (uint32_t t = 0; t < pair->count; t++)
                row[(size_t)batch->zx[pair->off + t] * batch->K + batch->z[pair->off + t]] += 1;
        }
    }
    slda_pam_step(batch->pam, batch->nxyf, batch->J, 1.0, batch->iter);
    sums(batch);
}

/* theta_y = sum_x (n_jx + alpha0)/(N_j + S alpha0) (n_jxy + alpha_xy)/(n_jx + A_x). */
void slda_batch_pam_theta(const slda_batch_t *batch, size_t j, double *theta)
{
    uint32_t S = batch->S, K = batch->K;
    const double *nx = batch->nx + j * S, *nxy = batch->nxy + j * S * K;
    const double *al = batch->pam->alpha;
    double a0 = batch->pam->alpha0, denom0 = batch->ntrain[j] + S * a0;
    for (uint32_t y = 0; y < K; y++)
        theta[y] = 0;
    for (uint32_t x = 0; x < S; x++) {
        double n = fmax(nx[x], 0.0), tx = (n + a0) / denom0 / (n + batch->Ax[x]);
        for (uint32_t y = 0; y < K; y++) {
            size_t i = (size_t)x * K + y;
            theta[y] += tx * (fmax(nxy[i], 0.0) + al[i]);
        }
    }
}

double slda_batch_pam_check(const slda_batch_t *batch, double *Nphi, double *NZ)
{
    size_t S = batch->S, K = batch->K, G = batch->G, J = batch->J;
    double *nx = slda_batch_big(J * S + J * G, sizeof(double), "batch check", NULL, 0);
    if (!nx)
        return INFINITY;
    double *nxy = nx + J * S, m = 0;
    for (size_t j = 0; j < J; j++) {
        for (size_t i = batch->pstart[j]; i < batch->pstart[j + 1]; i++) {
            const bpair_t *pair = &batch->pairs[i];
            double *np = Nphi + (size_t)pair->word * K;
            if (pair->count <= batch->r) {
                for (uint32_t t = 0; t < pair->count; t++) {
                    size_t x = batch->zx[pair->off + t], y = batch->z[pair->off + t];
                    nx[j * S + x] += 1, nxy[j * G + x * K + y] += 1, np[y] += 1, NZ[y] += 1;
                }
                continue;
            }
            const float *g = batch->gamma + pair->off * G;
            for (size_t x = 0; x < S; x++)
                for (size_t y = 0; y < K; y++) {
                    double c = pair->count * (double)g[x * K + y];
                    nx[j * S + x] += c, nxy[j * G + x * K + y] += c, np[y] += c, NZ[y] += c;
                }
        }
    }
    for (size_t i = 0; i < J * S; i++)
        m = fmax(m, fabs(nx[i] - batch->nx[i]));
    for (size_t i = 0; i < J * G; i++)
        m = fmax(m, fabs(nxy[i] - batch->nxy[i]));
    slda_big_free(nx);
    return m;
}

slda_err_t slda_batch_pam_store(const slda_batch_t *batch, slda_model_t *model, char *errstr,
                                size_t errstr_size)
{
    slda_pam_t *pam = slda_model_pam_mut(model);
    if (!pam || slda_pam_supers(pam) != batch->S)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "model \"%s\": does not hold %u super-topics (model.kind=pam)",
                            model->name, batch->S);
    memcpy(slda_pam_alpha(pam), batch->pam->alpha, batch->G * sizeof(double));
    return SLDA_OK;
}
