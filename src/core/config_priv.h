/* config_priv.h - what the configuration's files share: the table, one value's text. */
#ifndef SLDA_CONFIG_PRIV_H
#define SLDA_CONFIG_PRIV_H

#include "core/config.h"

#include <sys/types.h>

#define KAFKA_PREFIX "kafka."
#define KAFKA_PREFIX_LEN 6
#define ENV_PREFIX "SLDA_"
#define ENV_KAFKA_PREFIX "SLDA_KAFKA_"
#define MAX_SUGGEST_DIST 2 /* "did you mean": at most this many edits away */

/* A copy of s (malloc'ed), or NULL for NULL. */
static inline char *strdup_or_null(const char *s)
{
    return s ? slda_xstrdup(s) : NULL;
}

/* config.c: the property table, in documentation order. */
extern const slda_prop_t slda_conf_table[];
extern const size_t slda_conf_ntable;
/* config_value.c: the field a row names in base (a conf, or params for p.* rows); the
 * row's allowed values as text ("1..64", "a, b or c"); the field's value as text (num:
 * scratch for numbers). */
void *slda_prop_field(const slda_prop_t *prop, void *base);
void slda_prop_range_text(const slda_prop_t *prop, char *buf, size_t n);
const char *slda_prop_text(const slda_prop_t *prop, const void *base, char *num, size_t n);
/* text into dest: SLDA_ERR_TOO_LARGE (with a truncated copy) when dest is too small. */
slda_err_t slda_prop_copy_out(const char *text, char *dest, size_t dest_size);
/* config_conf.c: src's fields replace conf's (src freed); kafka.<name>=value set. */
void slda_conf_replace(slda_conf_t *conf, slda_conf_t *src);
slda_err_t slda_conf_kafka_set(slda_conf_t *conf, const char *name, const char *value,
                               char *errstr, size_t errstr_size);

#endif /* SLDA_CONFIG_PRIV_H */
