/* config_load.c - configuration from files (key=value lines) and the environment (SLDA_*).
 *
 * Both are all or nothing: they apply to a copy and replace conf only when
 * every setting was accepted, so a bad line leaves the configuration as it
 * was. Errors name the file and line, or the variable.
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

/* ---- config files ---- */

static char *trim(char *s)
{
    char *end = s + strlen(s);
    while (isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/* Apply one line of a config file; errors without the "path:line: " prefix. */
static slda_err_t apply_line(slda_conf_t *conf, char *line, char *errstr, size_t errstr_size)
{
    char *s = trim(line), *eq, *key;
    if (!*s || *s == '#')
        return SLDA_OK;
    eq = strchr(s, '=');
    if (!eq)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "line \"%s\": expected key=value", s);
    *eq = '\0';
    key = trim(s);
    if (!*key)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "line \"=%s\": no property name before '='", eq + 1);
    return slda_conf_set(conf, key, trim(eq + 1), errstr, errstr_size);
}

/* Apply every line of f to conf; on error errstr has "path:line: ...". */
static slda_err_t apply_file(slda_conf_t *conf, FILE *f, const char *path, char *errstr,
                             size_t errstr_size)
{
    char *line = NULL, msg[1024];
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    slda_err_t err = SLDA_OK;
    while (err == SLDA_OK && (len = getline(&line, &cap, f)) >= 0) {
        char *s = line;
        lineno++;
        if (lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3; /* UTF-8 byte order mark */
        if (strlen(line) != (size_t)len)
            err = slda_set_err(msg, sizeof msg, SLDA_ERR_PARSE, "line contains a NUL byte");
        else
            err = apply_line(conf, s, msg, sizeof msg);
        if (err != SLDA_OK)
            slda_set_err(errstr, errstr_size, err, "%s:%lu: %s", path, lineno, msg);
    }
    if (err == SLDA_OK && ferror(f))
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "config file \"%s\": %s", path,
                           strerror(errno));
    free(line);
    return err;
}

slda_err_t slda_conf_load_file(slda_conf_t *conf, const char *path, char *errstr,
                               size_t errstr_size)
{
    FILE *f = fopen(path, "r");
    slda_conf_t *tmp;
    slda_err_t err;
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "config file \"%s\": %s", path,
                            strerror(errno));
    tmp = slda_conf_dup(conf);
    err = apply_file(tmp, f, path, errstr, errstr_size);
    fclose(f);
    if (err != SLDA_OK) {
        slda_conf_destroy(tmp);
        return err;
    }
    slda_conf_replace(conf, tmp);
    return SLDA_OK;
}

/* ---- environment ---- */

void slda_conf_env_name(const char *key, char *out, size_t out_size)
{
    size_t n = snprintf(out, out_size, ENV_PREFIX "%s", key);
    for (size_t i = strlen(ENV_PREFIX); i < n && i + 1 < out_size; i++)
        out[i] = out[i] == '.' ? '_' : (char)toupper((unsigned char)out[i]);
}

static slda_err_t env_set(slda_conf_t *conf, const char *var, const char *key,
                          const char *value, char *errstr, size_t errstr_size)
{
    char msg[1024];
    slda_err_t err = slda_conf_set(conf, key, value, msg, sizeof msg);
    if (err != SLDA_OK)
        slda_set_err(errstr, errstr_size, err, "environment %s: %s", var, msg);
    return err;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SLDA_KAFKA_SASL_MECHANISM=x sets kafka.sasl.mechanism, in sorted order of
 * the variables so the result does not depend on the environment's order. */
static slda_err_t env_kafka(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    const size_t plen = strlen(ENV_KAFKA_PREFIX);
    size_t n = 0, cap = 0;
    char **vars = NULL;
    slda_err_t err = SLDA_OK;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, ENV_KAFKA_PREFIX, plen) != 0 || !strchr(*e, '='))
            continue;
        if (n == cap)
            vars = slda_xrealloc(vars, (cap = cap ? 2 * cap : 8) * sizeof *vars);
        vars[n++] = *e;
    }
    if (n)
        qsort(vars, n, sizeof *vars, cmp_str);
    for (size_t i = 0; i < n && err == SLDA_OK; i++) {
        const char *eq = strchr(vars[i], '=');
        char *var = slda_xstrndup(vars[i], (size_t)(eq - vars[i]));
        size_t keylen = KAFKA_PREFIX_LEN + strlen(var) - plen;
        char *key = slda_xmalloc(keylen + 1);
        snprintf(key, keylen + 1, KAFKA_PREFIX "%s", var + plen);
        for (char *c = key + KAFKA_PREFIX_LEN; *c; c++)
            *c = *c == '_' ? '.' : (char)tolower((unsigned char)*c);
        err = env_set(conf, var, key, eq + 1, errstr, errstr_size);
        free(key);
        free(var);
    }
    free(vars);
    return err;
}

static slda_err_t env_apply(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    char var[128];
    for (size_t i = 0; i < slda_conf_ntable; i++) {
        const char *value;
        slda_err_t err;
        slda_conf_env_name(slda_conf_table[i].name, var, sizeof var);
        value = getenv(var);
        if (value && (err = env_set(conf, var, slda_conf_table[i].name, value, errstr, errstr_size)))
            return err;
    }
    return env_kafka(conf, errstr, errstr_size);
}

slda_err_t slda_conf_load_env(slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    slda_conf_t *tmp = slda_conf_dup(conf);
    slda_err_t err = env_apply(tmp, errstr, errstr_size);
    if (err != SLDA_OK) {
        slda_conf_destroy(tmp);
        return err;
    }
    slda_conf_replace(conf, tmp);
    return SLDA_OK;
}

