/* ticks.c - time-axis ticks at calendar boundaries chosen for the span, labels that never overlap.
 *
 * Used by the report's charts (cli/report_html.c); the live page (page.c) runs the same rule
 * in its script. Steps are tried from the finest (a minute) to the coarsest (a thousand years);
 * the first whose labels, left-aligned beside their ticks, all fit the axis with a character's
 * gap is taken, so a span of hours gets hours, nine years get years, and no label collides with
 * the next whatever the span. The widths are estimates (char_w per character); the Chromium
 * test (tests/0077) measures the drawn labels. A label names the year at the first tick and
 * where the year changes (at sub-day steps: the day, where it changes). UTC throughout.
 */
#include "track/ticks.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { U_MIN, U_HOUR, U_DAY, U_WEEK, U_MONTH, U_YEAR };

static const struct {
    int unit, n;
} steps[] = {{U_MIN, 1},   {U_MIN, 2},    {U_MIN, 5},    {U_MIN, 10},   {U_MIN, 15},
             {U_MIN, 30},  {U_HOUR, 1},   {U_HOUR, 2},   {U_HOUR, 3},   {U_HOUR, 6},
             {U_HOUR, 12}, {U_DAY, 1},    {U_DAY, 2},    {U_WEEK, 1},   {U_MONTH, 1},
             {U_MONTH, 2}, {U_MONTH, 3},  {U_MONTH, 6},  {U_YEAR, 1},   {U_YEAR, 2},
             {U_YEAR, 5},  {U_YEAR, 10},  {U_YEAR, 20},  {U_YEAR, 50},  {U_YEAR, 100},
             {U_YEAR, 200}, {U_YEAR, 500}, {U_YEAR, 1000}};

static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

#define DAY_MS 86400000LL

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int64_t fixed_ms(int unit, int n)
{
    return unit == U_MIN ? 60000LL * n : unit == U_HOUR ? 3600000LL * n
         : unit == U_DAY ? DAY_MS * n : 7 * DAY_MS;
}

/* The first boundary of step s at or after t. */
static int64_t first_tick(size_t s, int64_t t)
{
    int unit = steps[s].unit, n = steps[s].n;
    if (unit <= U_WEEK) {
        int64_t step = fixed_ms(unit, n), off = unit == U_WEEK ? 4 * DAY_MS : 0; /* 1970-01-05 */
        return (floor_div(t - off - 1, step) + 1) * step + off;
    }
    time_t sec = (time_t)floor_div(t, 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    int64_t m = (int64_t)(tm.tm_year + 1900) * 12 + tm.tm_mon; /* months since year 0 */
    int64_t every = unit == U_MONTH ? n : 12LL * n;
    for (int64_t i = floor_div(m, every) * every;; i += every) {
        struct tm b = {0};
        b.tm_year = (int)(i / 12 - 1900);
        b.tm_mon = (int)(i % 12);
        b.tm_mday = 1;
        int64_t ms = (int64_t)timegm(&b) * 1000;
        if (ms >= t)
            return ms;
    }
}

static int64_t next_tick(size_t s, int64_t t)
{
    int unit = steps[s].unit, n = steps[s].n;
    if (unit <= U_WEEK)
        return t + fixed_ms(unit, n);
    time_t sec = (time_t)floor_div(t, 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    tm.tm_mon += unit == U_MONTH ? n : 12 * n;
    return (int64_t)timegm(&tm) * 1000;
}

static void label(size_t s, int64_t ms, const struct tm *prev, struct tm *tm, char *buf,
                  size_t size)
{
    time_t sec = (time_t)floor_div(ms, 1000);
    gmtime_r(&sec, tm);
    int unit = steps[s].unit;
    int new_year = !prev || prev->tm_year != tm->tm_year;
    int new_day = new_year || prev->tm_yday != tm->tm_yday;
    if (unit == U_YEAR)
        snprintf(buf, size, "%d", tm->tm_year + 1900);
    else if (unit == U_MONTH)
        snprintf(buf, size, new_year ? "%s %d" : "%s", mon[tm->tm_mon], tm->tm_year + 1900);
    else if (unit >= U_DAY)
        snprintf(buf, size, new_year ? "%d %s %d" : "%d %s", tm->tm_mday, mon[tm->tm_mon],
                 tm->tm_year + 1900);
    else if (new_year)
        snprintf(buf, size, "%d %s %d %02d:%02d", tm->tm_mday, mon[tm->tm_mon],
                 tm->tm_year + 1900, tm->tm_hour, tm->tm_min);
    else if (new_day)
        snprintf(buf, size, "%d %s %02d:%02d", tm->tm_mday, mon[tm->tm_mon], tm->tm_hour,
                 tm->tm_min);
    else
        snprintf(buf, size, "%02d:%02d", tm->tm_hour, tm->tm_min);
}

/* The ticks of step s, or 0 when they do not fit. */
static size_t try_step(size_t s, int64_t t0, int64_t t1, double width, double char_w,
                       slda_tick_t *out)
{
    size_t n = 0;
    struct tm prev, cur;
    double gap = char_w, pad = 2;
    for (int64_t ms = first_tick(s, t0); ms <= t1; ms = next_tick(s, ms)) {
        if (n == SLDA_TICKS_MAX)
            return 0;
        slda_tick_t *k = &out[n];
        k->ms = ms;
        k->x = width * (double)(ms - t0) / (double)(t1 - t0);
        label(s, ms, n ? &prev : NULL, &cur, k->label, sizeof k->label);
        prev = cur;
        double w = char_w * (double)strlen(k->label);
        k->labelled = k->x + pad + w <= width;
        if (n && out[n - 1].labelled &&
            out[n - 1].x + pad + char_w * (double)strlen(out[n - 1].label) + gap > k->x)
            return 0;
        n++;
    }
    return n;
}

size_t slda_ticks(int64_t t0, int64_t t1, double width, double char_w, slda_tick_t *out)
{
    if (t1 <= t0 || !(width > 0))
        return 0;
    size_t one = SIZE_MAX; /* the finest step with a single tick, if none has two */
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        size_t n = try_step(s, t0, t1, width, char_w, out);
        if (n >= 2)
            return n;
        if (n == 1 && one == SIZE_MAX)
            one = s;
    }
    return one == SIZE_MAX ? 0 : try_step(one, t0, t1, width, char_w, out);
}
