/* addr.h -- splitting a listen address "host:port" / "[v6]:port" */
#ifndef GVW_ADDR_H
#define GVW_ADDR_H

#include <stddef.h>

/*
 * Copies addr's host (without an IPv6 address's brackets) into host and points
 * *port at the text after the last ':' (borrowed from addr; not checked: the
 * caller reads it its way). Returns 0, or -1 when there is no ':' or the host
 * is empty or does not fit hostlen.
 */
int addr_split(const char *addr, char *host, size_t hostlen, const char **port);

#endif
