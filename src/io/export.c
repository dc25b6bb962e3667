/* export.c - phi as a NumPy .npy matrix and its column vocabulary, written through slda_outfile.
 *
 * phi[k][c] = (sigma * A[w][k] + eta) / (NZ[k] + W * eta), the word factor of
 * docs/algorithm.md ("Notation") with Nphi = sigma * A, where W is the number of
 * words the model holds (slda_model_smoothing_words: the fixed vocabulary's
 * size, or the rows ready in open-vocabulary mode) and the columns c are
 * those words' ids (slda_model_ids_held), in increasing id order, so each
 * row sums to 1 over the columns. slda_model_phi, slda_export_npy and
 * slda_export_vocab all use that column order. The model is only read; an
 * export holds one K-row of phi (V floats) in memory at a time.
 * Both files go through slda_outfile (outfile.c):
 * a regular file (or a symlink's target) is replaced atomically, a FIFO,
 * device or "-" (standard output) is written straight.
 */
#include "io/snapshot.h"
#include "engine/authors.h"
#include "io/outfile.h"
#include "engine/model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* NumPy format 1.0: magic, major, minor, uint16 LE header length, then a
 * Python dict literal padded with spaces and a final '\n' so that the data
 * starts on a 64-byte boundary (numpy/lib/format.py documents it). */
#define NPY_ALIGN 64
#define NPY_PREFIX 10

/* One topic's row of phi over the columns ids[0..V). */
static void phi_row(const slda_model_t *model, uint32_t k, const uint32_t *ids, uint32_t V,
                    float *out)
{
    double denom = slda_model_phi_denom(model, k);
    slda_phi_view_t view;
    slda_model_phi_view(model, &view);
    for (uint32_t c = 0; c < V; c++)
        out[c] = (float)slda_phi_at(&view, ids[c], k, denom);
}

slda_err_t slda_model_phi(const slda_model_t *model, float *out, uint32_t *ids_out)
{
    uint32_t V, *ids;
    if (!model || !out)
        return SLDA_ERR_INVALID;
    ids = slda_model_ids_held(model, &V);
    if (V != slda_model_vocab_size(model)) { /* out is sized by slda_model_vocab_size */
        free(ids);
        return SLDA_ERR_INVALID;
    }
    for (uint32_t k = 0; k < slda_model_topics(model); k++)
        phi_row(model, k, ids, V, out + (size_t)k * V);
    if (ids_out)
        memcpy(ids_out, ids, (size_t)V * sizeof *ids);
    free(ids);
    return SLDA_OK;
}

/* The .npy preamble for a K x V little-endian float32 C-order matrix into
 * hdr (NPY_ALIGN * 2 bytes); returns its length, a multiple of NPY_ALIGN. */
static size_t npy_header(unsigned char *hdr, uint32_t K, uint32_t V)
{
    char dict[NPY_ALIGN * 2];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%u, %u), }", K, V);
    size_t total = (NPY_PREFIX + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total - NPY_PREFIX;
    memcpy(hdr, "\x93NUMPY", 6);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (unsigned char)(hlen & 0xff);
    hdr[9] = (unsigned char)(hlen >> 8);
    memcpy(hdr + NPY_PREFIX, dict, (size_t)n);
    memset(hdr + NPY_PREFIX + n, ' ', hlen - (size_t)n - 1);
    hdr[total - 1] = '\n';
    return total;
}

static slda_err_t export_fail(slda_outfile_t *out, const char *path, int e, char *errstr,
                              size_t errstr_size)
{
    slda_outfile_abort(out);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "export \"%s\": write: %s", path,
                        strerror(e ? e : EIO));
}

slda_err_t slda_export_npy(const slda_model_t *model, const char *path, char *errstr,
                           size_t errstr_size)
{
    unsigned char hdr[NPY_ALIGN * 2], *le;
    uint32_t V, *ids;
    float *row;
    size_t hlen;
    slda_outfile_t out;
    slda_err_t err;
    int e = 0;
    if (!model || !path)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "export \"%s\": no model or path", path ? path : "(null)");
    err = slda_outfile_open(&out, "export", path, errstr, errstr_size);
    if (err)
        return err;
    ids = slda_model_ids_held(model, &V);
    row = slda_xmalloc((size_t)V * sizeof *row);
    le = slda_xmalloc((size_t)V * 4);
    hlen = npy_header(hdr, slda_model_topics(model), V);
    if (fwrite(hdr, 1, hlen, out.fp) != hlen)
        e = errno;
    for (uint32_t k = 0; k < slda_model_topics(model) && !e; k++) {
        phi_row(model, k, ids, V, row);
        slda_floats_to_le(row, V, le);
        if (fwrite(le, 1, (size_t)V * 4, out.fp) != (size_t)V * 4)
            e = errno;
    }
    free(le);
    free(row);
    free(ids);
    if (e || ferror(out.fp))
        return export_fail(&out, path, e, errstr, errstr_size);
    return slda_outfile_commit(&out, errstr, errstr_size);
}

slda_err_t slda_export_vocab(const slda_model_t *model, const char *path, char *errstr,
                             size_t errstr_size)
{
    uint32_t V, *ids;
    slda_outfile_t out;
    slda_err_t err;
    int e = 0;
    if (!model || !path)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "export \"%s\": no model or path", path ? path : "(null)");
    err = slda_outfile_open(&out, "export", path, errstr, errstr_size);
    if (err)
        return err;
    ids = slda_model_ids_held(model, &V);
    for (uint32_t c = 0; c < V && !e; c++) {
        if (fputs(slda_vocab_word(slda_model_vocab(model), ids[c]), out.fp) == EOF ||
            fputc('\n', out.fp) == EOF)
            e = errno;
    }
    free(ids);
    if (e || ferror(out.fp))
        return export_fail(&out, path, e, errstr, errstr_size);
    return slda_outfile_commit(&out, errstr, errstr_size);
}

/* The author mixtures theta_a[k] = (N_a[k] + alpha_k) / (|N_a| + alpha_sum) of a
 * model.kind=atm model: an A x K .npy matrix, rows in id order, and the names file, one a
 * line in the same order. */
slda_err_t slda_export_authors(const slda_model_t *model, const char *npy, const char *names,
                               char *errstr, size_t errstr_size)
{
    const slda_authors_t *a = model ? slda_model_authors(model) : NULL;
    if (!a)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "export: the model is not an author-topic model (model.kind=atm)");
    uint32_t K = slda_model_topics(model), max = slda_authors_max_id(a), A = 0;
    for (uint32_t id = 0; id < max; id++)
        A += slda_authors_name(a, id) != NULL;
    slda_outfile_t out, nout;
    slda_err_t err = slda_outfile_open(&out, "export", npy, errstr, errstr_size);
    if (err)
        return err;
    err = slda_outfile_open(&nout, "export", names, errstr, errstr_size);
    if (err) {
        slda_outfile_abort(&out);
        return err;
    }
    unsigned char hdr[NPY_ALIGN * 2], *le = slda_xmalloc((size_t)K * 4 + 1);
    float *row = slda_xmalloc((size_t)K * sizeof *row + 1);
    size_t hlen = npy_header(hdr, A, K);
    int e = fwrite(hdr, 1, hlen, out.fp) != hlen ? errno : 0;
    for (uint32_t id = 0; id < max && !e; id++) {
        const char *name = slda_authors_name(a, id);
        if (!name)
            continue;
        slda_author_mixture(model, id, row);
        slda_floats_to_le(row, K, le);
        if (fwrite(le, 1, (size_t)K * 4, out.fp) != (size_t)K * 4 ||
            fputs(name, nout.fp) == EOF || fputc('\n', nout.fp) == EOF)
            e = errno ? errno : EIO;
    }
    free(le);
    free(row);
    if (e || ferror(out.fp) || ferror(nout.fp)) {
        slda_outfile_abort(&nout);
        return export_fail(&out, npy, e, errstr, errstr_size);
    }
    err = slda_outfile_commit(&out, errstr, errstr_size);
    if (err) {
        slda_outfile_abort(&nout);
        return err;
    }
    return slda_outfile_commit(&nout, errstr, errstr_size);
}

