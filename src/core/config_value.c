/* config_value.c - one property's value: parsed and checked against its row, printed back.
 *
 * slda_prop_set parses a value's text by the row's type (numbers in their
 * range, enum and bool names, strings with their flags: not empty, a name, Kafka
 * topics) into the field the row names; slda_prop_get prints it in a form
 * slda_prop_set reads back exactly (doubles in their shortest such form).
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

static const char *const bool_values[] = {"false", "true", NULL};

/* ---- parsing and formatting one value ---- */

void *slda_prop_field(const slda_prop_t *prop, void *base)
{
    return (char *)base + prop->offset;
}

static void fmt_double(double v, char *buf, size_t n)
{
    /* Shortest of the two precisions that reads back as the same double. */
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, n, "%.17g", v);
}

static int join_values(const char *const *values, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; values[i]; i++)
        len += snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s",
                        i ? ", " : "", values[i]);
    return (int)len;
}

/* The accepted values of a row as text, e.g. "0.5..1", "> 0", "off, fixedpoint, newton". */
void slda_prop_range_text(const slda_prop_t *prop, char *buf, size_t n)
{
    char lo[40], hi[40];
    switch (prop->type) {
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
        snprintf(buf, n, "%.0f..%.0f", prop->min, prop->max);
        return;
    case SLDA_PT_UINT64:
        snprintf(buf, n, "0..%llu", (unsigned long long)UINT64_MAX);
        return;
    case SLDA_PT_DOUBLE:
        fmt_double(prop->min, lo, sizeof lo);
        fmt_double(prop->max, hi, sizeof hi);
        if (isinf(prop->max))
            snprintf(buf, n, "%s %s", prop->flags & SLDA_PF_MIN_OPEN ? ">" : ">=", lo);
        else if (prop->flags & SLDA_PF_MIN_OPEN)
            snprintf(buf, n, "> %s and <= %s", lo, hi);
        else
            snprintf(buf, n, "%s..%s", lo, hi);
        return;
    case SLDA_PT_STRING:
        if (prop->values) {
            size_t len = (size_t)join_values(prop->values, buf, n);
            if (prop->flags & SLDA_PF_OR_PATH && len < n)
                snprintf(buf + len, n - len, ", a path, or parts joined by +");
        } else {
            snprintf(buf, n, "%s", prop->flags & SLDA_PF_NONEMPTY ? "non-empty" : "any");
        }
        return;
    case SLDA_PT_ENUM:
    case SLDA_PT_LOCAL:
        join_values(prop->values, buf, n);
        return;
    case SLDA_PT_BOOL:
        join_values(bool_values, buf, n);
        return;
    }
}

static slda_err_t out_of_range(const slda_prop_t *prop, const char *value, char *errstr,
                               size_t errstr_size)
{
    char range[160];
    slda_prop_range_text(prop, range, sizeof range);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" out of range %s", prop->name, value, range);
}

static slda_err_t not_a(const slda_prop_t *prop, const char *value, const char *what,
                        char *errstr, size_t errstr_size)
{
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" is not %s", prop->name, value, what);
}

/* A whole-string decimal integer: 1, 0 if it is not one, -1 if it overflows. */
static int parse_ll(const char *s, long long *out)
{
    char *end;
    if (!(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
        return 0; /* strtoll would skip leading blanks */
    errno = 0;
    *out = strtoll(s, &end, 10);
    if (end == s || *end)
        return 0;
    return errno == ERANGE ? -1 : 1;
}

static slda_err_t set_integer(const slda_prop_t *prop, void *field, const char *value,
                              char *errstr, size_t errstr_size)
{
    long long v;
    int ok = parse_ll(value, &v);
    if (ok == 0)
        return not_a(prop, value, "an integer", errstr, errstr_size);
    if (ok < 0 || (double)v < prop->min || (double)v > prop->max)
        return out_of_range(prop, value, errstr, errstr_size);
    if (prop->type == SLDA_PT_INT)
        *(int32_t *)field = (int32_t)v;
    else
        *(uint32_t *)field = (uint32_t)v;
    return SLDA_OK;
}

static slda_err_t set_uint64(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char *end;
    unsigned long long v;
    if (!(isdigit((unsigned char)*value) || *value == '+'))
        return *value == '-' && isdigit((unsigned char)value[1])
                   ? out_of_range(prop, value, errstr, errstr_size)
                   : not_a(prop, value, "an integer", errstr, errstr_size);
    errno = 0;
    v = strtoull(value, &end, 10);
    if (end == value || *end)
        return not_a(prop, value, "an integer", errstr, errstr_size);
    if (errno == ERANGE)
        return out_of_range(prop, value, errstr, errstr_size);
    *(uint64_t *)field = v;
    return SLDA_OK;
}

static slda_err_t set_double(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char *end;
    double v;
    if (!*value || !(isdigit((unsigned char)*value) || strchr("+-.", *value)))
        return not_a(prop, value, "a number", errstr, errstr_size);
    v = strtod(value, &end);
    if (end == value || *end)
        return not_a(prop, value, "a number", errstr, errstr_size);
    if (!isfinite(v))
        return not_a(prop, value, "a finite number", errstr, errstr_size);
    if (prop->flags & SLDA_PF_MIN_OPEN ? !(v > prop->min) : !(v >= prop->min))
        return out_of_range(prop, value, errstr, errstr_size);
    if (v > prop->max)
        return out_of_range(prop, value, errstr, errstr_size);
    *(double *)field = v;
    return SLDA_OK;
}

static int name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int slda_conf_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SLDA_NAME_MAX || name[0] == '.' || name[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)name[i]))
            return 0;
    return 1;
}

/* Kafka's rule for a topic name: 1..249 of [A-Za-z0-9._-], not "." or "..". */
static int topic_valid(const char *s, size_t n)
{
    if (n == 0 || n > 249 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* value with control and non-ASCII bytes shown as \xNN (at most size-1 bytes). */
static const char *printable(const char *value, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)value; *p && o + 5 < size; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
    }
    out[o] = '\0';
    return out;
}

/* SLDA_PF_NAME and SLDA_PF_TOPICS: the value's characters and lengths. */
static slda_err_t check_names(const slda_prop_t *prop, const char *value, char *errstr,
                              size_t errstr_size)
{
    char shown[160];
    if (prop->flags & SLDA_PF_NAME && !slda_conf_name_valid(value))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": \"%s\" is not a name: 1 to %d of A-Z a-z 0-9 . _ - "
                            "(not starting with . or -), as it names files, metrics and Kafka keys",
                            prop->name, printable(value, shown, sizeof shown), SLDA_NAME_MAX);
    if (prop->flags & SLDA_PF_TOPICS) {
        for (const char *p = value; *value;) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            if (!topic_valid(p, n))
                return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                    "property \"%s\": \"%s\" is not a Kafka topic name "
                                    "(1 to 249 of A-Z a-z 0-9 . _ -, comma separated)",
                                    prop->name, printable(value, shown, sizeof shown));
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    return SLDA_OK;
}

static slda_err_t set_string(const slda_prop_t *prop, void *field, const char *value,
                             char *errstr, size_t errstr_size)
{
    char **slot = field;
    if (!*value && prop->flags & SLDA_PF_NONEMPTY)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "property \"%s\": value must not be empty", prop->name);
    slda_err_t err = check_names(prop, value, errstr, errstr_size);
    if (err)
        return err;
    free(*slot);
    *slot = !*value && prop->flags & SLDA_PF_EMPTY_NULL ? NULL : slda_xstrdup(value);
    if (*value == '+' && prop->flags & SLDA_PF_OR_PATH) {
        /* "+x" adds to the default list: stored as "<default>+x", so a
         * snapshot keeps its meaning if the default ever changes. */
        size_t n = strlen(prop->def) + strlen(value) + 1;
        free(*slot);
        *slot = slda_xmalloc(n);
        snprintf(*slot, n, "%s%s", prop->def, value);
    }
    return SLDA_OK;
}

/* Index of value in a NULL-terminated list (case-insensitive), or -1. */
static int find_value(const char *const *values, const char *value)
{
    for (int i = 0; values[i]; i++)
        if (strcasecmp(values[i], value) == 0)
            return i;
    return -1;
}

static slda_err_t not_one_of(const slda_prop_t *prop, const char *const *values,
                             const char *value, char *errstr, size_t errstr_size)
{
    char list[160];
    join_values(values, list, sizeof list);
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                        "property \"%s\": value \"%s\" is not one of %s", prop->name, value, list);
}

static slda_err_t set_choice(const slda_prop_t *prop, void *base, const char *value,
                             char *errstr, size_t errstr_size)
{
    const char *const *values = prop->type == SLDA_PT_BOOL ? bool_values : prop->values;
    int i = find_value(values, value);
    if (i < 0)
        return not_one_of(prop, values, value, errstr, errstr_size);
    if (prop->type == SLDA_PT_LOCAL) {
        struct slda_conf_s *conf = base;
        slda_local_parse(values[i], &conf->p.vb, &conf->p.hybrid);
    } else {
        *(int *)slda_prop_field(prop, base) = i;
    }
    return SLDA_OK;
}

slda_err_t slda_prop_set(const slda_prop_t *prop, void *base, const char *value, char *errstr,
                         size_t errstr_size)
{
    void *field = slda_prop_field(prop, base);
    switch (prop->type) {
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
        return set_integer(prop, field, value, errstr, errstr_size);
    case SLDA_PT_UINT64:
        return set_uint64(prop, field, value, errstr, errstr_size);
    case SLDA_PT_DOUBLE:
        return set_double(prop, field, value, errstr, errstr_size);
    case SLDA_PT_STRING:
        return set_string(prop, field, value, errstr, errstr_size);
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL:
    case SLDA_PT_LOCAL:
        return set_choice(prop, base, value, errstr, errstr_size);
    }
    return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "property \"%s\": bad type",
                        prop->name);
}

static const char *choice_name(const slda_prop_t *prop, const void *base)
{
    const struct slda_conf_s *conf = base;
    int i;
    if (prop->type == SLDA_PT_LOCAL)
        return slda_local_name(conf->p.vb, conf->p.hybrid);
    i = *(const int *)slda_prop_field(prop, (void *)base);
    if (prop->type == SLDA_PT_BOOL)
        return bool_values[i != 0];
    for (int j = 0; j <= i && prop->values[j]; j++)
        if (j == i)
            return prop->values[j];
    return "invalid";
}

/* The field's value as text: borrowed from base or written into num. */
const char *slda_prop_text(const slda_prop_t *prop, const void *base, char *num, size_t n)
{
    const void *field = slda_prop_field(prop, (void *)base);
    switch (prop->type) {
    case SLDA_PT_INT: snprintf(num, n, "%d", (int)*(const int32_t *)field); return num;
    case SLDA_PT_UINT: snprintf(num, n, "%u", (unsigned)*(const uint32_t *)field); return num;
    case SLDA_PT_UINT64:
        snprintf(num, n, "%llu", (unsigned long long)*(const uint64_t *)field);
        return num;
    case SLDA_PT_DOUBLE: fmt_double(*(const double *)field, num, n); return num;
    case SLDA_PT_STRING: return *(char *const *)field ? *(char *const *)field : "";
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL:
    case SLDA_PT_LOCAL: return choice_name(prop, base);
    }
    return "invalid";
}

/* Copy text into dest; SLDA_ERR_TOO_LARGE (with a truncated copy) if it does not fit. */
slda_err_t slda_prop_copy_out(const char *text, char *dest, size_t dest_size)
{
    if (dest_size == 0 || (size_t)snprintf(dest, dest_size, "%s", text) >= dest_size)
        return SLDA_ERR_TOO_LARGE;
    return SLDA_OK;
}

void slda_prop_copy(const slda_prop_t *prop, void *dst, const void *src)
{
    const void *from = slda_prop_field(prop, (void *)src);
    void *to = slda_prop_field(prop, dst);
    switch (prop->type) {
    case SLDA_PT_STRING: {
        char **slot = to;
        free(*slot);
        *slot = strdup_or_null(*(char *const *)from);
        return;
    }
    case SLDA_PT_LOCAL: { /* p.vb and p.hybrid */
        struct slda_conf_s *d = dst;
        const struct slda_conf_s *s = src;
        d->p.vb = s->p.vb;
        d->p.hybrid = s->p.hybrid;
        return;
    }
    case SLDA_PT_UINT64: memcpy(to, from, sizeof(uint64_t)); return;
    case SLDA_PT_DOUBLE: memcpy(to, from, sizeof(double)); return;
    case SLDA_PT_INT:
    case SLDA_PT_UINT:
    case SLDA_PT_ENUM:
    case SLDA_PT_BOOL: memcpy(to, from, sizeof(int32_t)); return; /* enums are int-sized */
    }
}

slda_err_t slda_prop_get(const slda_prop_t *prop, const void *base, char *dest, size_t dest_size)
{
    char num[40];
    return slda_prop_copy_out(slda_prop_text(prop, base, num, sizeof num), dest, dest_size);
}

