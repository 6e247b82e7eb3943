/* rfc3339.h -- RFC 3339 timestamps (as the Kubernetes API writes them) to unix seconds */
#ifndef GVW_RFC3339_H
#define GVW_RFC3339_H

#include <stdint.h>

/* "2026-06-02T10:00:00Z" (a fraction and a numeric offset allowed) to unix
 * seconds, TZ-independent; 0 (unknown) for anything else or a time not after
 * the epoch. s is NUL-terminated. */
int64_t rfc3339_parse(const char *s);

#endif
