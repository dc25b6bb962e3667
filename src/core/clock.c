/* clock.c - the two clocks: wall-clock milliseconds for what is recorded (a model's created
 * and updated times), monotonic seconds for what is measured (training time, rates, waits),
 * which a change of the system time must not move. */
#include "core/slda_int.h"

#include <time.h>

int64_t slda_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double slda_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
