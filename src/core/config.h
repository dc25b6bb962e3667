/* config.h - the property table behind slda_conf_* (for config.c, the CLI's help and tests). */
#ifndef SLDA_CONFIG_H
#define SLDA_CONFIG_H

#include "core/slda_int.h"

typedef enum {
    SLDA_PT_INT,    /* int32_t */
    SLDA_PT_UINT,   /* uint32_t */
    SLDA_PT_UINT64, /* uint64_t, full range */
    SLDA_PT_DOUBLE, /* double, finite */
    SLDA_PT_STRING, /* char *, owned */
    SLDA_PT_ENUM,   /* an int-sized enum: index into values[] */
    SLDA_PT_BOOL,   /* int: 0 or 1 */
    SLDA_PT_LOCAL   /* "local": sets p.vb and p.hybrid through slda_local_parse */
} slda_prop_type_t;

/* Row flags. */
#define SLDA_PF_MIN_OPEN 0x1   /* numbers: min itself is excluded (value > min) */
#define SLDA_PF_EMPTY_NULL 0x2 /* strings: "" is stored as NULL */
#define SLDA_PF_NONEMPTY 0x4   /* strings: "" is refused */
#define SLDA_PF_OR_PATH 0x8    /* strings: values[] names a choice, anything else is a path */

/* One configuration property. Numbers are checked against min..max (max may
 * be INFINITY for doubles); enum, bool and local values against values[]. */
typedef struct slda_prop_s {
    const char *name;
    slda_prop_type_t type;
    size_t offset;              /* of the field in struct slda_conf_s */
    const char *def;            /* default, as text slda_conf_set accepts */
    double min, max;
    const char *const *values;  /* NULL-terminated names, or NULL */
    unsigned flags;             /* SLDA_PF_* */
    const char *desc;           /* one line, user-facing */
} slda_prop_t;

/* The table, in documentation order; *n receives its length. */
const slda_prop_t *slda_conf_props(size_t *n);
/* The row named name, or NULL (kafka.* keys have no row). */
const slda_prop_t *slda_conf_prop_find(const char *name);
/* "int", "uint", "uint64", "double", "string", "enum" or "bool". */
const char *slda_prop_type_name(slda_prop_type_t type);
/* Parse value and store it in the row's field of base (a struct slda_conf_s,
 * or any struct laid out for the row). Errors as slda_conf_set. */
slda_err_t slda_prop_set(const slda_prop_t *prop, void *base, const char *value, char *errstr,
                         size_t errstr_size);
/* The field's value as text that slda_prop_set accepts; SLDA_ERR_TOO_LARGE
 * (with a truncated copy) if dest is too small. */
slda_err_t slda_prop_get(const slda_prop_t *prop, const void *base, char *dest,
                         size_t dest_size);
/* The environment variable of a table key: "rho.kappa" -> "SLDA_RHO_KAPPA". */
void slda_conf_env_name(const char *key, char *out, size_t out_size);

#endif /* SLDA_CONFIG_H */
