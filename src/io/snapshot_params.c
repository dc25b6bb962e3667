/* snapshot_params.c - the header's "params" map: every stored parameter by its key.
 *
 * The keys are the configuration table's rows flagged SLDA_PF_SNAPSHOT
 * (core/config.c), so a parameter is stored by adding its row, and each is
 * written and read as its row's type says: uint, uint64, float64, string or
 * nil, a name for enums and "local", a boolean. Order: table order, the rows
 * a restore takes from its own configuration (SLDA_PF_RUN: births.*) last,
 * as they were added last; this is the order snapshots have always had, so
 * a model gives the same bytes as before the table drove the map.
 *
 * Invariants. A value read is held to the range and the names its row
 * allows (so a snapshot cannot carry what slda_conf_set would refuse); a key
 * an older snapshot lacks (SLDA_PF_OPTIONAL) reads as the row's absent value,
 * any other missing key is refused; unknown keys (a later producer's) are
 * skipped and a key given twice is refused. Values are set into a
 * slda_params_t through the row's offset (params sit first in a conf).
 */
#include "io/snapshot_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The stored rows in the map's order; returns their count. */
static size_t stored_rows(const slda_prop_t **rows)
{
    size_t nprops, n = 0;
    const slda_prop_t *props = slda_conf_props(&nprops);
    for (int last = 0; last < 2; last++) {
        for (size_t i = 0; i < nprops; i++) {
            int run = (props[i].flags & SLDA_PF_RUN) != 0;
            if ((props[i].flags & SLDA_PF_SNAPSHOT) && run == last)
                rows[n++] = &props[i];
        }
    }
    return n;
}

/* births.docs, .z, .gain, .floor and .merge (SLDA_PF_BIRTHS_ONLY) are
 * written only with births on: a model built without the configuration
 * (slda_model_alloc with births off) may hold zeros there that a reader
 * would refuse as out of range, and with births off they mean nothing
 * (absent, they read as the table's defaults). */
static int param_written(const slda_prop_t *prop, const slda_params_t *p)
{
    return p->births || !(prop->flags & SLDA_PF_BIRTHS_ONLY);
}

void slda_snap_params_write(msgpack_packer *pk, const slda_params_t *p)
{
    const slda_prop_t *rows[SLDA_CONF_MAX_PROPS];
    size_t nrows = stored_rows(rows);
    uint32_t n = 0;
    for (size_t i = 0; i < nrows; i++)
        n += param_written(rows[i], p);
    msgpack_pack_map(pk, n);
    for (size_t i = 0; i < nrows; i++) {
        const slda_prop_t *prop = rows[i];
        const char *field = (const char *)p + prop->offset;
        if (!param_written(prop, p))
            continue;
        pack_key(pk, prop->name);
        switch (prop->type) {
        case SLDA_PT_INT: msgpack_pack_int32(pk, *(const int32_t *)field); break;
        case SLDA_PT_UINT: msgpack_pack_uint32(pk, *(const uint32_t *)field); break;
        case SLDA_PT_UINT64: msgpack_pack_uint64(pk, *(const uint64_t *)field); break;
        case SLDA_PT_DOUBLE: msgpack_pack_double(pk, *(const double *)field); break;
        case SLDA_PT_STRING: pack_str_or_nil(pk, *(char *const *)field); break;
        case SLDA_PT_LOCAL: pack_key(pk, slda_local_name(p->vb, p->hybrid)); break;
        case SLDA_PT_ENUM: pack_key(pk, prop->values[*(const int *)field]); break;
        case SLDA_PT_BOOL: pack_bool(pk, *(const int *)field); break;
        }
    }
}

static int read_local(slda_msgpack_t *mp, const char *what, slda_params_t *p)
{
    const unsigned char *s;
    size_t len;
    char name[32];
    if (slda_msgpack_str(mp, what, &s, &len))
        return -1;
    if (len >= sizeof name)
        return slda_msgpack_fail(mp, "%s: unknown variant (%zu bytes)", what, len);
    memcpy(name, s, len);
    name[len] = '\0';
    if (!slda_local_parse(name, &p->vb, &p->hybrid))
        return slda_msgpack_fail(mp, "%s: unknown variant \"%s\"", what, name);
    return 0;
}

/* A number must lie in the range the configuration table allows for its key,
 * so a snapshot cannot smuggle in what slda_conf_set would refuse. */
static int check_range(slda_msgpack_t *mp, const char *what, const slda_prop_t *prop, double v)
{
    int open_min = (prop->flags & SLDA_PF_MIN_OPEN) != 0;
    if (!isfinite(v) || (open_min ? v <= prop->min : v < prop->min) || v > prop->max)
        return slda_msgpack_fail(mp, "%s: %g is outside %s%g..%g", what, v, open_min ? "(" : "",
                                 prop->min, prop->max);
    return 0;
}

/* One of the names the row allows: its index into the int field. */
static int read_enum(slda_msgpack_t *mp, const char *what, const slda_prop_t *prop, int *idx)
{
    int n = 0;
    while (prop->values[n])
        n++;
    return slda_msgpack_enum(mp, what, prop->values, n, idx);
}

/* A key the snapshot lacks: 0 after setting the value its absence means, -1
 * when the key is required. The value goes through the row's parser. */
static int param_absent(const slda_prop_t *prop, slda_params_t *p)
{
    if (!(prop->flags & SLDA_PF_OPTIONAL))
        return -1;
    return slda_prop_set(prop, p, prop->absent ? prop->absent : prop->def, NULL, 0) == SLDA_OK
               ? 0
               : -1;
}

static int read_param(slda_msgpack_t *mp, const slda_prop_t *prop, slda_params_t *p)
{
    char what[64];
    char *field = (char *)p + prop->offset;
    int64_t i64;
    snprintf(what, sizeof what, "params \"%s\"", prop->name);
    switch (prop->type) {
    case SLDA_PT_INT:
        if (slda_msgpack_int(mp, what, &i64) || check_range(mp, what, prop, (double)i64))
            return -1;
        *(int32_t *)field = (int32_t)i64;
        return 0;
    case SLDA_PT_UINT:
        if (slda_msgpack_u32(mp, what, (uint32_t *)field))
            return -1;
        return check_range(mp, what, prop, *(uint32_t *)field);
    case SLDA_PT_UINT64: return slda_msgpack_uint(mp, what, (uint64_t *)field);
    case SLDA_PT_DOUBLE:
        if (slda_msgpack_double(mp, what, (double *)field))
            return -1;
        return check_range(mp, what, prop, *(double *)field);
    case SLDA_PT_STRING: return slda_msgpack_strdup(mp, what, 1, (char **)field);
    case SLDA_PT_LOCAL: return read_local(mp, what, p);
    case SLDA_PT_ENUM: return read_enum(mp, what, prop, (int *)field);
    case SLDA_PT_BOOL: return slda_msgpack_bool(mp, what, (int *)field);
    }
    return -1;
}

int slda_snap_params_read(slda_msgpack_t *mp, slda_params_t *p)
{
    const slda_prop_t *rows[SLDA_CONF_MAX_PROPS];
    unsigned char seen[SLDA_CONF_MAX_PROPS] = {0};
    size_t nrows = stored_rows(rows);
    uint32_t n;
    if (slda_msgpack_map(mp, "header \"params\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len, j;
        if (slda_msgpack_str(mp, "params key", &key, &len))
            return -1;
        for (j = 0; j < nrows && !slda_msgpack_eq(key, len, rows[j]->name); j++)
            ;
        if (j == nrows) { /* a later producer's extra parameter */
            if (slda_msgpack_skip(mp, "params value"))
                return -1;
            continue;
        }
        if (seen[j])
            return slda_msgpack_fail(mp, "params: duplicate key \"%s\"", rows[j]->name);
        seen[j] = 1;
        if (read_param(mp, rows[j], p))
            return -1;
    }
    for (size_t j = 0; j < nrows; j++) {
        if (!seen[j] && param_absent(rows[j], p))
            return slda_msgpack_fail(mp, "params: missing key \"%s\"", rows[j]->name);
    }
    return 0;
}
