/* ticks.h - time-axis ticks at calendar boundaries whose labels do not overlap (ticks.c). */
#ifndef SLDA_TRACK_TICKS_H
#define SLDA_TRACK_TICKS_H

#include <stddef.h>
#include <stdint.h>

#define SLDA_TICKS_MAX 64 /* ticks on one axis at most */

typedef struct slda_tick_s {
    int64_t ms;      /* the boundary (UTC) */
    double x;        /* its position, 0..width */
    char label[32];  /* "2016", "Mar 2016", "Apr", "4 Jan 2016", "12 Mar", "06:00", ... */
    int labelled;    /* 0: a line only (its label would leave the axis) */
} slda_tick_t;

/* The ticks of an axis from t0 to t1 (ms, t1 > t0) drawn `width` units wide, labels left-aligned
 * 2 units right of their tick with each character char_w units wide: the finest calendar step
 * (1-30 minutes, 1-12 hours, 1-2 days, weeks from Monday, 1-6 months, 1-1000 years) whose
 * labels all fit with a gap of one character. A label names the year at the first tick and
 * where the year changes (the day at sub-day steps). Returns the number of ticks written into
 * out (at most SLDA_TICKS_MAX), 0 when none fits. */
size_t slda_ticks(int64_t t0, int64_t t1, double width, double char_w, slda_tick_t *out);

#endif /* SLDA_TRACK_TICKS_H */
