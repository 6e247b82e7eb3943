/* duration.c -- "250ms", "90s", "15m", "2h", "7d", "90" (seconds): the one duration
 * parser */
#include "duration.h"

#include <stddef.h>
#include <string.h>

int
duration_parse_ms(const char *s, int64_t *ms)
{
    int64_t v = 0, unit;
    const char *p = s;

    if (s == NULL || *p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (strcmp(p, "ms") == 0)
        unit = 1;
    else if (*p == '\0' || strcmp(p, "s") == 0)
        unit = 1000;
    else if (strcmp(p, "m") == 0)
        unit = 60 * 1000;
    else if (strcmp(p, "h") == 0)
        unit = 3600 * 1000;
    else if (strcmp(p, "d") == 0)
        unit = 86400 * 1000;
    else
        return -1;
    if (v > INT64_MAX / unit)
        return -1;
    *ms = v * unit;
    return 0;
}

int
duration_parse_s(const char *s, int64_t *seconds)
{
    int64_t ms;

    if (duration_parse_ms(s, &ms) == -1)
        return -1;
    *seconds = ms / 1000 + (ms % 1000 != 0);
    return 0;
}
