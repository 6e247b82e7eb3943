/* decimal.c -- the one reader of a plain non-negative decimal integer */
#include "decimal.h"

#include <stddef.h>

int
decimal_parse(const char *s, int64_t max, int64_t *out)
{
    int64_t n = 0;

    if (s == NULL || s[0] == '\0')
        return -1;
    for (const char *p = s; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return -1;
    for (const char *p = s; *p != '\0'; p++) {
        if (n > (max - (*p - '0')) / 10)
            return -2;
        n = n * 10 + (*p - '0');
    }
    *out = n;
    return 0;
}
