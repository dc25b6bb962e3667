/* evtime.h - event times from a record's time field: ISO 8601, Twitter dates, epoch s/ms (evtime.c). */
#ifndef SLDA_IO_EVTIME_H
#define SLDA_IO_EVTIME_H

#include "core/slda_int.h"

#include <stdint.h>

/* Milliseconds since the epoch from an ISO 8601 date-time ("2016-02-01",
 * "2016-02-01T12:30:00Z", "...+01:00", ".123" fractions, ' ' for 'T'), a
 * Twitter created_at ("Wed Oct 10 20:19:24 +0000 2018"), YYYYMMDD (eight
 * digits making a date of the years 1000-2999), or epoch seconds / milliseconds
 * (a number below 1e11 is seconds). SLDA_ERR_PARSE otherwise. */
slda_err_t slda_time_parse(const char *s, size_t len, int64_t *ms);
/* The event time in field `field` of a JSON object message (a string or a
 * number). SLDA_ERR_PARSE when the value is not a JSON object, the field is
 * missing or its value is not a time. */
slda_err_t slda_time_from_json(const char *val, size_t len, const char *field, int64_t *ms,
                               char *errstr, size_t errstr_size);
/* "2016-02-01T12:30:00Z" (UTC, second precision) into buf (>= 32 bytes). */
void slda_time_format(int64_t ms, char *buf, size_t size);

#endif /* SLDA_IO_EVTIME_H */
