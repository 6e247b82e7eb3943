/* duration.h -- "250ms", "90s", "15m", "2h", "7d", "90" (seconds): the one duration
 * parser */
#ifndef GVW_DURATION_H
#define GVW_DURATION_H

#include <stdint.h>

/* Digits with an optional ms/s/m/h/d suffix (none = seconds), as milliseconds.
 * No sign, space or fraction. Returns 0, or -1 (nothing written) for anything
 * else or a value past INT64_MAX ms. */
int duration_parse_ms(const char *s, int64_t *ms);

/* The same in whole seconds; a part second rounds up, so a positive duration
 * never becomes 0 ("never"). 0 or -1. */
int duration_parse_s(const char *s, int64_t *seconds);

#endif
