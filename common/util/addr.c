/* addr.c -- splitting a listen address "host:port" / "[v6]:port" */
#include "addr.h"

#include <string.h>

int
addr_split(const char *addr, char *host, size_t hostlen, const char **port)
{
    const char *colon = strrchr(addr, ':');
    const char *start = addr;
    size_t len;

    if (colon == NULL)
        return -1;
    len = (size_t)(colon - addr);
    if (addr[0] == '[' && len >= 2 && addr[len - 1] == ']') {
        start++;
        len -= 2;
    }
    if (len == 0 || len >= hostlen)
        return -1;
    memcpy(host, start, len);
    host[len] = '\0';
    *port = colon + 1;
    return 0;
}
