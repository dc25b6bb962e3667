/* evtime.c - event times from records' time fields: ISO 8601, Twitter dates, epoch seconds/ms.
 *
 * Used by the readers (a record's time field, input.time.field: JSON lines, CSV/TSV), the
 * service (a message's) and `streamlda produce --time-field`, so all read a field the same way.
 * Pure functions, no state. (In io/, below the tracker: a record's time is one of its fields.)
 */
#include "io/evtime.h"

#include "core/json.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EPOCH_SECONDS_BELOW 1e11 /* larger numbers are milliseconds (1e11 s = year 5138) */

static int digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* ISO 8601: YYYY-MM-DD[(T| )hh:mm[:ss[.fff]]][Z|(+|-)hh[:]mm] */
static int parse_iso(const char *s, size_t len, int64_t *ms)
{
    int Y, M, D, h = 0, m = 0, sec = 0;
    if (len < 10 || s[4] != '-' || s[7] != '-' || digits(s, 4, &Y) || digits(s + 5, 2, &M) ||
        digits(s + 8, 2, &D) || M < 1 || M > 12 || D < 1 || D > 31)
        return -1;
    size_t i = 10;
    double frac = 0;
    int64_t off_s = 0;
    if (i < len && (s[i] == 'T' || s[i] == ' ')) {
        i++;
        if (i + 5 > len || s[i + 2] != ':' || digits(s + i, 2, &h) || digits(s + i + 3, 2, &m))
            return -1;
        i += 5;
        if (i < len && s[i] == ':') {
            if (i + 3 > len || digits(s + i + 1, 2, &sec))
                return -1;
            i += 3;
            if (i < len && (s[i] == '.' || s[i] == ',')) {
                double scale = 0.1;
                i++;
                if (i >= len || !isdigit((unsigned char)s[i]))
                    return -1;
                while (i < len && isdigit((unsigned char)s[i])) {
                    frac += (s[i] - '0') * scale;
                    scale /= 10;
                    i++;
                }
            }
        }
        if (h > 23 || m > 59 || sec > 60)
            return -1;
        if (i < len && (s[i] == 'Z' || s[i] == 'z'))
            i++;
        else if (i < len && (s[i] == '+' || s[i] == '-')) {
            int oh, om = 0, sign = s[i] == '-' ? -1 : 1;
            i++;
            if (i + 2 > len || digits(s + i, 2, &oh))
                return -1;
            i += 2;
            if (i < len && s[i] == ':')
                i++;
            if (i + 2 <= len && !digits(s + i, 2, &om))
                i += 2;
            off_s = sign * (oh * 3600 + om * 60);
        }
    }
    if (i != len)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - off_s) * 1000 + (int64_t)llround(frac * 1000);
    return 0;
}

/* "Wed Oct 10 20:19:24 +0000 2018" (Twitter's created_at) */
static int parse_twitter(const char *s, size_t len, int64_t *ms)
{
    char buf[64];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(buf, "%a %b %d %H:%M:%S %z %Y", &tm);
    if (!end || *end)
        return -1;
    long gmtoff = tm.tm_gmtoff;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - gmtoff) * 1000;
    return 0;
}

/* YYYYMMDD (ISO 8601's basic date, as in many CSV exports): eight digits that make a date of
 * the years 1000-2999. Epoch seconds of eight digits would be 1970-1973 (a count below
 * 10^8): a date is far likelier, and a timestamp of those years is given in full anyway. */
static int parse_basic_date(const char *s, size_t len, int64_t *ms)
{
    int Y, M, D;
    if (len != 8 || digits(s, 4, &Y) || digits(s + 4, 2, &M) || digits(s + 6, 2, &D) ||
        Y < 1000 || Y > 2999 || M < 1 || M > 12 || D < 1 || D > 31)
        return -1;
    char iso[11] = {s[0], s[1], s[2], s[3], '-', s[4], s[5], '-', s[6], s[7], 0};
    return parse_iso(iso, 10, ms);
}

static int parse_epoch(const char *s, size_t len, int64_t *ms)
{
    char buf[64];
    if (!len || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end || end == buf || !isfinite(v) || v < 0 || v > 1e16)
        return -1;
    *ms = v < EPOCH_SECONDS_BELOW ? (int64_t)llround(v * 1000) : (int64_t)llround(v);
    return 0;
}

slda_err_t slda_time_parse(const char *s, size_t len, int64_t *ms)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (!parse_basic_date(s, len, ms) || !parse_epoch(s, len, ms) || !parse_iso(s, len, ms) ||
        !parse_twitter(s, len, ms))
        return SLDA_OK;
    return SLDA_ERR_PARSE;
}

slda_err_t slda_time_from_json(const char *val, size_t len, const char *field, int64_t *ms,
                               char *errstr, size_t errstr_size)
{
    slda_json_t js;
    char err[200];
    slda_err_t e;
    slda_json_init(&js);
    if (slda_json_parse(&js, val, len, err, sizeof err) != SLDA_OK ||
        js.nodes[0].type != SLDA_JSON_OBJECT) {
        slda_json_clear(&js);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "time field \"%s\": the message is not a JSON object", field);
    }
    uint32_t node = slda_json_object_get(&js, 0, field);
    if (node == SLDA_JSON_NONE) {
        slda_json_clear(&js);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE, "time field \"%s\": missing",
                            field);
    }
    const slda_json_node_t *nd = &js.nodes[node];
    if (nd->type == SLDA_JSON_NUMBER)
        e = slda_time_parse(js.src + nd->start, nd->end - nd->start, ms);
    else if (nd->type == SLDA_JSON_STRING) {
        char *buf = slda_xmalloc(slda_json_raw_len(&js, node) + 1);
        size_t n = slda_json_string(&js, node, buf);
        e = slda_time_parse(buf, n, ms);
        if (e)
            slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                         "time field \"%s\": \"%.40s\" is not an ISO 8601 date-time or epoch "
                         "seconds/milliseconds", field, buf);
        free(buf);
        slda_json_clear(&js);
        return e;
    } else
        e = SLDA_ERR_PARSE;
    if (e)
        slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                     "time field \"%s\": a %s is not a time", field, slda_json_type_name(nd->type));
    slda_json_clear(&js);
    return e;
}

void slda_time_format(int64_t ms, char *buf, size_t size)
{
    time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "%lld", (long long)ms);
}
