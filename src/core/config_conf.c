/* config_conf.c - configuration objects: new, dup, destroy, set and get by key, kafka.* keys.
 *
 * Every table key always holds a valid value in a conf (slda_conf_new applies
 * each row's default through slda_prop_set); kafka.* properties live in
 * kafka_names/kafka_values, names without the prefix, unique, in the order
 * they were first set. An unknown key is refused with the nearest known one
 * suggested. A conf belongs to one thread.
 */
#include "core/config_priv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- conf objects ---- */

/* Free what conf owns (its string fields and kafka.* pairs), not conf itself. */
static void conf_free_fields(slda_conf_t *conf)
{
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        if (slda_conf_table[i].type == SLDA_PT_STRING) {
            char **slot = slda_prop_field(&slda_conf_table[i], conf);
            free(*slot);
            *slot = NULL;
        }
    }
    for (size_t i = 0; i < conf->nkafka; i++) {
        free(conf->kafka_names[i]);
        free(conf->kafka_values[i]);
    }
    free(conf->kafka_names);
    free(conf->kafka_values);
    conf->kafka_names = conf->kafka_values = NULL;
    conf->nkafka = 0;
}

slda_conf_t *slda_conf_new(void)
{
    slda_conf_t *conf = slda_xcalloc(1, sizeof *conf);
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        /* A default that does not parse is a bug in the table above. */
        if (slda_prop_set(&slda_conf_table[i], conf, slda_conf_table[i].def, NULL, 0) != SLDA_OK)
            abort();
    }
    return conf;
}

slda_conf_t *slda_conf_dup(const slda_conf_t *conf)
{
    slda_conf_t *dup = slda_xmalloc(sizeof *dup);
    *dup = *conf;
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        if (slda_conf_table[i].type == SLDA_PT_STRING) {
            char **slot = slda_prop_field(&slda_conf_table[i], dup);
            *slot = strdup_or_null(*slot);
        }
    }
    dup->kafka_names = slda_xcalloc(conf->nkafka, sizeof(char *));
    dup->kafka_values = slda_xcalloc(conf->nkafka, sizeof(char *));
    for (size_t i = 0; i < conf->nkafka; i++) {
        dup->kafka_names[i] = slda_xstrdup(conf->kafka_names[i]);
        dup->kafka_values[i] = slda_xstrdup(conf->kafka_values[i]);
    }
    return dup;
}

void slda_conf_destroy(slda_conf_t *conf)
{
    if (!conf)
        return;
    conf_free_fields(conf);
    free(conf);
}

/* Move the contents of src into conf and free src's shell. */
void slda_conf_replace(slda_conf_t *conf, slda_conf_t *src)
{
    conf_free_fields(conf);
    *conf = *src;
    free(src);
}

/* ---- kafka.* pass-through ---- */

static ssize_t kafka_find(const slda_conf_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->nkafka; i++)
        if (strcmp(conf->kafka_names[i], name) == 0)
            return (ssize_t)i;
    return -1;
}

slda_err_t slda_conf_kafka_set(slda_conf_t *conf, const char *name, const char *value,
                            char *errstr, size_t errstr_size)
{
    ssize_t i;
    if (!*name)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": no librdkafka property after the prefix",
                            KAFKA_PREFIX);
    i = kafka_find(conf, name);
    if (i >= 0) {
        free(conf->kafka_values[i]);
        conf->kafka_values[i] = slda_xstrdup(value);
        return SLDA_OK;
    }
    conf->kafka_names = slda_xrealloc(conf->kafka_names, (conf->nkafka + 1) * sizeof(char *));
    conf->kafka_values = slda_xrealloc(conf->kafka_values, (conf->nkafka + 1) * sizeof(char *));
    conf->kafka_names[conf->nkafka] = slda_xstrdup(name);
    conf->kafka_values[conf->nkafka] = slda_xstrdup(value);
    conf->nkafka++;
    return SLDA_OK;
}

const char *slda_conf_kafka_find(const slda_conf_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->nkafka; i++)
        if (!strcmp(conf->kafka_names[i], name))
            return conf->kafka_values[i];
    return NULL;
}

size_t slda_conf_kafka_count(const slda_conf_t *conf)
{
    return conf->nkafka;
}

void slda_conf_kafka_get(const slda_conf_t *conf, size_t i, const char **name,
                         const char **value)
{
    int ok = i < conf->nkafka;
    *name = ok ? conf->kafka_names[i] : NULL;
    *value = ok ? conf->kafka_values[i] : NULL;
}

/* ---- set / get ---- */

/* Levenshtein distance, or MAX_SUGGEST_DIST + 1 when it is larger or a word is too long. */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b), row[MAXLEN + 1];
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > MAX_SUGGEST_DIST)
        return MAX_SUGGEST_DIST + 1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The table key closest to name within MAX_SUGGEST_DIST edits (and closer
 * than name's own length, so short keys do not match everything), or NULL. */
static const char *suggest(const char *name)
{
    const char *best = NULL;
    size_t best_d = MAX_SUGGEST_DIST + 1, len = strlen(name);
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        size_t d = edit_distance(name, slda_conf_table[i].name);
        if (d < best_d && d < len) {
            best = slda_conf_table[i].name;
            best_d = d;
        }
    }
    return best;
}

static slda_err_t unknown_property(const char *name, char *errstr, size_t errstr_size)
{
    const char *dot = strchr(name, '.');
    const char *near = suggest(name);
    char prefix[MAX_SUGGEST_DIST + KAFKA_PREFIX_LEN + 1];
    if (near)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN,
                            "unknown property \"%s\" (did you mean \"%s\"?)", name, near);
    /* "kafak.acks" -> "kafka.acks" */
    if (dot && (size_t)(dot - name) < sizeof prefix) {
        snprintf(prefix, sizeof prefix, "%.*s", (int)(dot - name), name);
        if (edit_distance(prefix, "kafka") <= MAX_SUGGEST_DIST)
            return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN,
                                "unknown property \"%s\" (did you mean \"%s%s\"?)", name,
                                KAFKA_PREFIX, dot + 1);
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_UNKNOWN, "unknown property \"%s\"", name);
}

static int is_kafka_key(const char *name)
{
    return strncmp(name, KAFKA_PREFIX, KAFKA_PREFIX_LEN) == 0;
}

slda_err_t slda_conf_set(slda_conf_t *conf, const char *name, const char *value,
                         char *errstr, size_t errstr_size)
{
    const slda_prop_t *prop;
    if (is_kafka_key(name))
        return slda_conf_kafka_set(conf, name + KAFKA_PREFIX_LEN, value, errstr, errstr_size);
    prop = slda_conf_prop_find(name);
    if (!prop)
        return unknown_property(name, errstr, errstr_size);
    slda_err_t err = slda_prop_set(prop, conf, value, errstr, errstr_size);
    if (err == SLDA_OK)
        conf->set[prop - slda_conf_table] = 1;
    return err;
}

int slda_conf_is_set(const slda_conf_t *conf, const char *name)
{
    const slda_prop_t *prop = slda_conf_prop_find(name);
    return prop && conf->set[prop - slda_conf_table];
}

slda_err_t slda_conf_get(const slda_conf_t *conf, const char *name, char *dest,
                         size_t dest_size)
{
    const slda_prop_t *prop;
    if (is_kafka_key(name)) {
        ssize_t i = kafka_find(conf, name + KAFKA_PREFIX_LEN);
        if (i < 0)
            return SLDA_ERR_UNKNOWN;
        return slda_prop_copy_out(conf->kafka_values[i], dest, dest_size);
    }
    prop = slda_conf_prop_find(name);
    if (!prop)
        return SLDA_ERR_UNKNOWN;
    return slda_prop_get(prop, conf, dest, dest_size);
}

