/* snapshot_pam.c - the header's "pam" map (model.kind=pam): the super-topics' learned priors.
 *
 * docs/snapshot-format.md, "The super-topics' priors". Written for a pachinko allocation
 * model only (format version 2, as every kind but LDA): "S" (params "pam.super") and "alpha",
 * the S x K matrix alpha_x[y] row by row. Read into the header; checked against the built model
 * (S and K, every value finite and > 0) when attached, a failure naming where the map starts.
 */
#include "io/snapshot_priv.h"
#include "engine/pam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void slda_snap_pam_write(msgpack_packer *pk, const slda_model_t *model)
{
    const slda_pam_t *pam = slda_model_pam(model);
    uint32_t S = slda_pam_supers(pam), K = slda_model_topics(model);
    msgpack_pack_map(pk, 2);
    pack_key(pk, "S");
    msgpack_pack_uint32(pk, S);
    pack_key(pk, "alpha");
    pack_doubles(pk, slda_pam_alpha_c(pam), S * K);
}

int slda_snap_pam_read(slda_msgpack_t *mp, slda_snap_pam_t *sp)
{
    uint32_t n;
    unsigned seen = 0;
    sp->present = 1;
    sp->at = slda_msgpack_pos(mp);
    if (slda_msgpack_map(mp, "header \"pam\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        if (slda_msgpack_str(mp, "pam key", &key, &len))
            return -1;
        if (slda_msgpack_eq(key, len, "S") && !(seen & 1)) {
            seen |= 1;
            if (slda_msgpack_u32(mp, "pam \"S\"", &sp->S))
                return -1;
        } else if (slda_msgpack_eq(key, len, "alpha") && !(seen & 2)) {
            seen |= 2;
            if (slda_msgpack_doubles(mp, "pam \"alpha\"", 1024u * SLDA_MAX_TOPICS, "values",
                                     &sp->alpha, &sp->nalpha))
                return -1;
        } else if (slda_msgpack_skip(mp, "pam value")) {
            return -1;
        }
    }
    if (seen != 3)
        return slda_msgpack_fail(mp, "pam: missing key \"%s\"", seen & 1 ? "alpha" : "S");
    return 0;
}

void slda_snap_pam_clear(slda_snap_pam_t *sp)
{
    free(sp->alpha);
    memset(sp, 0, sizeof *sp);
}

int slda_snap_pam_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_pam_t *sp)
{
    slda_pam_t *pam = slda_model_pam_mut(model);
    if (!pam && !sp->present)
        return 0;
    if (!pam || !sp->present)
        return slda_msgpack_fail(mp, pam ? "header: a pam model without its \"pam\" map"
                                         : "header \"pam\" (at byte %zu): params \"model.kind\" "
                                           "is not pam", sp->at);
    uint32_t S = slda_pam_supers(pam), K = slda_model_topics(model);
    if (sp->S != S || sp->nalpha != (size_t)S * K)
        return slda_msgpack_fail(mp, "pam (at byte %zu): S=%u and %u values, params say S=%u "
                                 "with K=%u", sp->at, sp->S, sp->nalpha, S, K);
    for (uint32_t i = 0; i < sp->nalpha; i++)
        if (!isfinite(sp->alpha[i]) || !(sp->alpha[i] > 0))
            return slda_msgpack_fail(mp, "pam (at byte %zu): \"alpha\" value %u is %g", sp->at,
                                     i, sp->alpha[i]);
    memcpy(slda_pam_alpha(pam), sp->alpha, (size_t)sp->nalpha * sizeof *sp->alpha);
    return 0;
}
