/* snapshot_params.c - the header's "params" map: every engine parameter under its configuration key.
 *
 * Invariants. A value read is held to the range the configuration table
 * allows for its key (so a snapshot cannot carry what slda_conf_set would
 * refuse) and to its row's names for enums; keys added to the format later
 * read, when absent, as the value an older snapshot means; unknown keys
 * (a later producer's) are skipped and a key given twice is refused.
 */
#include "io/snapshot_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    PT_U32, PT_U64, PT_DBL, PT_STR, PT_LOCAL, PT_ALPHA_LEARN, PT_STATS,
    PT_CHOICE, /* an int: index into the config table row's values */
    PT_BOOL    /* an int, 0 or 1 */
} snap_ptype_t;

/* Every engine parameter under its configuration key (config.c's table). */
static const struct snap_param {
    const char *key;
    snap_ptype_t type;
    size_t off; /* into slda_params_t; unused for PT_LOCAL (vb + hybrid) */
} snap_params[] = {
    {"topics", PT_U32, offsetof(slda_params_t, topics)},
    {"alpha", PT_DBL, offsetof(slda_params_t, alpha)},
    {"eta", PT_DBL, offsetof(slda_params_t, eta)},
    {"alpha.learn", PT_ALPHA_LEARN, offsetof(slda_params_t, alpha_learn)},
    {"local", PT_LOCAL, 0},
    {"local.threshold", PT_U32, offsetof(slda_params_t, threshold)},
    {"local.burnin", PT_U32, offsetof(slda_params_t, burnin)},
    {"local.samples", PT_U32, offsetof(slda_params_t, samples)},
    {"local.tolerance", PT_DBL, offsetof(slda_params_t, tolerance)},
    {"local.stats", PT_STATS, offsetof(slda_params_t, stats)},
    {"rho.s", PT_DBL, offsetof(slda_params_t, rho_s)},
    {"rho.tau", PT_DBL, offsetof(slda_params_t, rho_tau)},
    {"rho.kappa", PT_DBL, offsetof(slda_params_t, rho_kappa)},
    {"rho.min", PT_DBL, offsetof(slda_params_t, rho_min)},
    {"global.rows", PT_CHOICE, offsetof(slda_params_t, rows)},
    {"global.stale", PT_U32, offsetof(slda_params_t, stale)},
    {"corpus.tokens", PT_DBL, offsetof(slda_params_t, corpus_tokens)},
    {"init.scale", PT_DBL, offsetof(slda_params_t, init_scale)},
    {"vocab.capacity", PT_U32, offsetof(slda_params_t, vocab_capacity)},
    {"vocab.file", PT_STR, offsetof(slda_params_t, vocab_file)},
    {"seed", PT_U64, offsetof(slda_params_t, seed)},
    {"threads", PT_U32, offsetof(slda_params_t, threads)},
    {"text.stopwords", PT_STR, offsetof(slda_params_t, stopwords)},
    {"text.min.length", PT_U32, offsetof(slda_params_t, min_length)},
    {"text.max.bytes", PT_U32, offsetof(slda_params_t, max_doc_bytes)},
    {"text.urls", PT_CHOICE, offsetof(slda_params_t, text.urls)},
    {"text.html", PT_CHOICE, offsetof(slda_params_t, text.html)},
    {"text.mentions", PT_CHOICE, offsetof(slda_params_t, text.mentions)},
    {"text.hashtags", PT_CHOICE, offsetof(slda_params_t, text.hashtags)},
    {"text.apostrophes", PT_CHOICE, offsetof(slda_params_t, text.apostrophes)},
    {"text.digits", PT_CHOICE, offsetof(slda_params_t, text.digits)},
    {"births", PT_BOOL, offsetof(slda_params_t, births)},
    {"births.docs", PT_U32, offsetof(slda_params_t, births_docs)},
    {"births.z", PT_DBL, offsetof(slda_params_t, births_z)},
    {"births.gain", PT_DBL, offsetof(slda_params_t, births_gain)},
    {"births.floor", PT_DBL, offsetof(slda_params_t, births_floor)},
    {"births.merge", PT_DBL, offsetof(slda_params_t, births_merge)},
};
#define SNAP_NPARAMS (sizeof snap_params / sizeof snap_params[0])

/* Keys added within version 1, and what a snapshot without them means: the
 * cleanup rules off, so an older model tokenises as it was trained, and the
 * plain global step (global.rows=decay, global.stale=0) it was trained with.
 * births.* (NULL: the configuration table's default) were not stored before
 * the births state was; a restoring service takes them from its
 * configuration anyway (reconcile.c). */
static const struct {
    const char *key, *absent;
} snap_optional[] = {
    {"text.urls", "keep"},     {"text.html", "keep"},        {"text.mentions", "keep"},
    {"text.hashtags", "keep"}, {"text.apostrophes", "split"}, {"text.digits", "split"},
    {"global.rows", "decay"},  {"global.stale", "0"},       {"births", NULL},
    {"births.docs", NULL},     {"births.z", NULL},           {"births.gain", NULL},
    {"births.floor", NULL},    {"births.merge", NULL},
};

static const char *const alpha_learn_names[] = {
    [SLDA_ALPHA_FIXED] = "off", [SLDA_ALPHA_FIXEDPOINT] = "fixedpoint",
    [SLDA_ALPHA_NEWTON] = "newton"};
static const char *const stats_names[] = {[SLDA_STATS_RB] = "rb",
                                          [SLDA_STATS_SAMPLE] = "sample"};

/* births.docs, .z, .gain, .floor and .merge are written only with births on:
 * a model built without the configuration (slda_model_alloc with births off)
 * may hold zeros there that a reader would refuse as out of range, and with
 * births off they mean nothing (absent, they read as the table's defaults). */
static int snap_param_written(const struct snap_param *sp, const slda_params_t *p)
{
    return p->births || strncmp(sp->key, "births.", 7) != 0;
}

void slda_snap_params_write(msgpack_packer *pk, const slda_params_t *p)
{
    uint32_t n = 0;
    for (size_t i = 0; i < SNAP_NPARAMS; i++)
        n += snap_param_written(&snap_params[i], p);
    msgpack_pack_map(pk, n);
    for (size_t i = 0; i < SNAP_NPARAMS; i++) {
        const char *field = (const char *)p + snap_params[i].off;
        if (!snap_param_written(&snap_params[i], p))
            continue;
        pack_key(pk, snap_params[i].key);
        switch (snap_params[i].type) {
        case PT_U32: msgpack_pack_uint32(pk, *(const uint32_t *)field); break;
        case PT_U64: msgpack_pack_uint64(pk, *(const uint64_t *)field); break;
        case PT_DBL: msgpack_pack_double(pk, *(const double *)field); break;
        case PT_STR: pack_str_or_nil(pk, *(char *const *)field); break;
        case PT_LOCAL: pack_key(pk, slda_local_name(p->vb, p->hybrid)); break;
        case PT_ALPHA_LEARN: pack_key(pk, alpha_learn_names[p->alpha_learn]); break;
        case PT_STATS: pack_key(pk, stats_names[p->stats]); break;
        case PT_CHOICE:
            pack_key(pk, slda_conf_prop_find(snap_params[i].key)->values[*(const int *)field]);
            break;
        case PT_BOOL: pack_bool(pk, *(const int *)field); break;
        }
    }
}

static int snap_read_local(slda_msgpack_t *mp, const char *what, slda_params_t *p)
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
static int check_param_range(slda_msgpack_t *mp, const char *what, const char *key, double v)
{
    const slda_prop_t *prop = slda_conf_prop_find(key);
    int open_min;
    if (!prop || (prop->type != SLDA_PT_UINT && prop->type != SLDA_PT_DOUBLE))
        return 0;
    open_min = (prop->flags & SLDA_PF_MIN_OPEN) != 0;
    if (!isfinite(v) || (open_min ? v <= prop->min : v < prop->min) || v > prop->max)
        return slda_msgpack_fail(mp, "%s: %g is outside %s%g..%g", what, v, open_min ? "(" : "",
                                 prop->min, prop->max);
    return 0;
}

/* One of the values the configuration table's row for key allows. */
static int snap_read_choice(slda_msgpack_t *mp, const char *what, const char *key, int *idx)
{
    const slda_prop_t *prop = slda_conf_prop_find(key);
    int n = 0;
    while (prop->values[n])
        n++;
    return slda_msgpack_enum(mp, what, prop->values, n, idx);
}

/* A key the snapshot lacks: 0 after setting the value its absence means, -1
 * when the key is required. The value is set through the configuration
 * table's parser: a params struct sits first in a conf, the layout its
 * offsets are for. */
_Static_assert(offsetof(struct slda_conf_s, p) == 0, "params first in a conf");
static int snap_param_absent(const struct snap_param *sp, slda_params_t *p)
{
    for (size_t j = 0; j < sizeof snap_optional / sizeof snap_optional[0]; j++) {
        const slda_prop_t *prop = slda_conf_prop_find(sp->key);
        if (strcmp(snap_optional[j].key, sp->key) != 0)
            continue;
        const char *v = snap_optional[j].absent ? snap_optional[j].absent : prop->def;
        return slda_prop_set(prop, p, v, NULL, 0) == SLDA_OK ? 0 : -1;
    }
    return -1;
}

static int snap_read_param(slda_msgpack_t *mp, const struct snap_param *sp, slda_params_t *p)
{
    char what[64];
    char *field = (char *)p + sp->off;
    int idx;
    snprintf(what, sizeof what, "params \"%s\"", sp->key);
    switch (sp->type) {
    case PT_U32:
        if (slda_msgpack_u32(mp, what, (uint32_t *)field))
            return -1;
        return check_param_range(mp, what, sp->key, *(uint32_t *)field);
    case PT_U64: return slda_msgpack_uint(mp, what, (uint64_t *)field);
    case PT_DBL:
        if (slda_msgpack_double(mp, what, (double *)field))
            return -1;
        return check_param_range(mp, what, sp->key, *(double *)field);
    case PT_STR: return slda_msgpack_strdup(mp, what, 1, (char **)field);
    case PT_LOCAL: return snap_read_local(mp, what, p);
    case PT_ALPHA_LEARN:
        if (slda_msgpack_enum(mp, what, alpha_learn_names, 3, &idx))
            return -1;
        p->alpha_learn = (slda_alpha_learn_t)idx;
        return 0;
    case PT_STATS:
        if (slda_msgpack_enum(mp, what, stats_names, 2, &idx))
            return -1;
        p->stats = (slda_stats_kind_t)idx;
        return 0;
    case PT_CHOICE: return snap_read_choice(mp, what, sp->key, (int *)field);
    case PT_BOOL: return slda_msgpack_bool(mp, what, (int *)field);
    }
    return -1;
}

int slda_snap_params_read(slda_msgpack_t *mp, slda_params_t *p)
{
    uint32_t n;
    uint64_t seen = 0;
    if (slda_msgpack_map(mp, "header \"params\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len, j;
        if (slda_msgpack_str(mp, "params key", &key, &len))
            return -1;
        for (j = 0; j < SNAP_NPARAMS && !slda_msgpack_eq(key, len, snap_params[j].key); j++)
            ;
        if (j == SNAP_NPARAMS) { /* a later producer's extra parameter */
            if (slda_msgpack_skip(mp, "params value"))
                return -1;
            continue;
        }
        if (seen & ((uint64_t)1 << j))
            return slda_msgpack_fail(mp, "params: duplicate key \"%s\"", snap_params[j].key);
        seen |= (uint64_t)1 << j;
        if (snap_read_param(mp, &snap_params[j], p))
            return -1;
    }
    for (size_t j = 0; j < SNAP_NPARAMS; j++) {
        if (seen & ((uint64_t)1 << j))
            continue;
        if (snap_param_absent(&snap_params[j], p))
            return slda_msgpack_fail(mp, "params: missing key \"%s\"", snap_params[j].key);
    }
    return 0;
}
