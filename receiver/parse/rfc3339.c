/* rfc3339.c -- RFC 3339 timestamps (as the Kubernetes API writes them) to unix seconds */
#include "rfc3339.h"

#include <string.h>

static int
days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): pure arithmetic, so the result never depends on TZ. */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = y / 400; /* y >= 1969 here: the parser refuses earlier years */
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads n digits at s into *v. */
static int
digits(const char *s, int n, int64_t *v)
{
    int i;

    for (*v = 0, i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

int64_t
rfc3339_parse(const char *s)
{
    int64_t y, mo, d, h, mi, sec, oh, om, off = 0, t;
    size_t len = strlen(s), pos = 19;

    if (len < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
        s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &sec))
        return 0;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, (int)mo) ||
        h > 23 || mi > 59 || sec > 60)
        return 0;
    if (s[pos] == '.') {
        for (pos++; s[pos] >= '0' && s[pos] <= '9'; pos++)
            ;
        if (s[pos - 1] == '.')
            return 0;
    }
    if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == len) {
        off = 0;
    } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == len &&
               digits(s + pos + 1, 2, &oh) == 0 && s[pos + 3] == ':' &&
               digits(s + pos + 4, 2, &om) == 0 && oh <= 23 && om <= 59) {
        off = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    } else {
        return 0;
    }
    t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    return t > 0 ? t : 0;
}
