/* clock.h -- the time now, monotonic (durations, deadlines) or wall-clock (timestamps) */
#ifndef GVW_CLOCK_H
#define GVW_CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * The one model of "now" for every program: clock_mono_* never jumps with the
 * system clock, so durations and deadlines use it; clock_wall_* is Unix time, for
 * what a user or another process reads (audit rows, Lease times, Events).
 */

/* Monotonic seconds: for durations and deadlines (never jumps with the clock). */
static inline double
clock_mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Monotonic milliseconds. */
static inline int64_t
clock_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Unix seconds: for timestamps a user reads. */
static inline double
clock_wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Unix milliseconds. */
static inline int64_t
clock_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Unix microseconds (the Kubernetes MicroTime of a Lease or an Event). */
static inline int64_t
clock_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
