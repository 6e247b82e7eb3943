/* rfc3339.c -- RFC 3339 times to unix time: the one parser, strict or as people type them
 */
#include "rfc3339.h"

#include <stddef.h>

static int
days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): pure arithmetic, so the result never depends on TZ
 * (timegm() is not POSIX). */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Exactly n decimal digits at *p, which moves past them. 0 or -1. */
static int
digits(const char **p, int n, int64_t *v)
{
    for (*v = 0; n > 0; n--, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

/* ".123" at *p, if there: milliseconds (digits past the third dropped). */
static int
fraction(const char **p, int64_t *ms)
{
    int n = 0;

    *ms = 0;
    if (**p != '.')
        return 0;
    (*p)++;
    if (**p < '0' || **p > '9')
        return -1;
    for (; **p >= '0' && **p <= '9'; (*p)++, n++)
        if (n < 3)
            *ms = *ms * 10 + (**p - '0');
    for (; n < 3; n++)
        *ms *= 10;
    return 0;
}

/* "Z" or "+hh:mm" / "-hh:mm" at *p, as seconds east of UTC. */
static int
offset(const char **p, int64_t *sec)
{
    int64_t sign, hh, mm;

    if (**p == 'Z' || **p == 'z') {
        (*p)++;
        *sec = 0;
        return 0;
    }
    if (**p != '+' && **p != '-')
        return -1;
    sign = **p == '-' ? -1 : 1;
    (*p)++;
    if (digits(p, 2, &hh) == -1 || *(*p)++ != ':' || digits(p, 2, &mm) == -1 || hh > 23 ||
        mm > 59)
        return -1;
    *sec = sign * (hh * 3600 + mm * 60);
    return 0;
}

/* The one grammar; *year for the strict caller's floor. */
static int
parse(const char *s, unsigned flags, int64_t *ms, int64_t *year)
{
    int64_t y, mo, d, h, mi, sec, frac, off;
    const char *p = s;

    if (digits(&p, 4, &y) == -1 || *p++ != '-' || digits(&p, 2, &mo) == -1 ||
        *p++ != '-' || digits(&p, 2, &d) == -1)
        return -1;
    if (*p != 'T' && *p != 't' && !(*p == ' ' && (flags & RFC3339_SPACE)))
        return -1;
    p++;
    if (digits(&p, 2, &h) == -1 || *p++ != ':' || digits(&p, 2, &mi) == -1 ||
        *p++ != ':' || digits(&p, 2, &sec) == -1)
        return -1;
    if (fraction(&p, &frac) == -1 || offset(&p, &off) == -1 || *p != '\0')
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, (int)mo) || h > 23 ||
        mi > 59 || sec > 60) /* 60: a leap second */
        return -1;
    *ms = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off) * 1000 +
          frac;
    *year = y;
    return 0;
}

int
rfc3339_parse_ms(const char *s, unsigned flags, int64_t *ms)
{
    int64_t year;

    return parse(s, flags, ms, &year);
}

int64_t
rfc3339_parse(const char *s)
{
    int64_t ms, year;

    if (parse(s, 0, &ms, &year) == -1 || year < 1970 || ms < 1000)
        return 0;
    return ms / 1000;
}
