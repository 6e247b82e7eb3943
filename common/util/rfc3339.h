/* rfc3339.h -- RFC 3339 times to unix time: the one parser, strict or as people type them
 */
#ifndef GVW_RFC3339_H
#define GVW_RFC3339_H

#include <stdint.h>

/* Flags of rfc3339_parse_ms(). */
#define RFC3339_SPACE                                                                    \
    0x1 /* a space may stand for the 'T' (RFC 3339 section 5.6 NOTE)                     \
         */

/*
 * "2026-06-02T10:00:00Z", "2026-06-02T12:00:00.5+02:00" (any number of
 * fraction digits, milliseconds kept, the rest dropped; 'T'/'t' and 'Z'/'z'
 * either case; second 60 for a leap second) to unix milliseconds, TZ-independent,
 * any year 0000-9999 (before 1970 is negative). s is NUL-terminated and must
 * be all of the time. Returns 0, or -1 (nothing written) for anything else.
 */
int rfc3339_parse_ms(const char *s, unsigned flags, int64_t *ms);

/* As the Kubernetes API writes times ('T' only): unix seconds, the fraction
 * dropped; 0 (unknown) for anything else, a year before 1970 or a time not
 * after the epoch. */
int64_t rfc3339_parse(const char *s);

#endif
