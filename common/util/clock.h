/* clock.h -- the time now as seconds in a double, monotonic or wall-clock */
#ifndef GVW_CLOCK_H
#define GVW_CLOCK_H

#include <time.h>

/* Monotonic seconds: for durations and deadlines (never jumps with the clock). */
static inline double
clock_mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Unix seconds: for timestamps a user reads. */
static inline double
clock_real_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
