/* utf8.c -- well-formed UTF-8 (RFC 3629): one definition for the JSON reader,
 * the answers and the logs */
#include "utf8.h"

#include <string.h>

size_t
utf8_char_len(const char *s, size_t avail)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c, lo = 0x80, hi = 0xBF;
    size_t n, i;

    if (avail == 0)
        return 0;
    c = p[0];
    if (c < 0x80)
        return 1;
    /* The table of RFC 3629 section 4: shortest forms, no surrogates, at
     * most U+10FFFF. */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

int
utf8_valid(const char *s, size_t n)
{
    size_t i = 0, k;

    while (i < n) {
        if ((unsigned char)s[i] < 0x80) { /* the usual case: ASCII */
            i++;
            continue;
        }
        if ((k = utf8_char_len(s + i, n - i)) == 0)
            return 0;
        i += k;
    }
    return 1;
}

char *
utf8_scrub(char *s)
{
    size_t n = strlen(s), i = 0, k;

    while (i < n) {
        if ((k = utf8_char_len(s + i, n - i)) == 0)
            s[i++] = '?';
        else
            i += k;
    }
    return s;
}

size_t
utf8_clean(const char *s, char *out, size_t outlen)
{
    size_t n = strlen(s), i = 0, o = 0, k;

    while (i < n) {
        const char *from = s + i;
        if ((k = utf8_char_len(s + i, n - i)) == 0) {
            from = UTF8_REPLACEMENT;
            k = 3;
            i++;
        } else {
            i += k;
        }
        if (o + k >= outlen)
            break;
        memcpy(out + o, from, k);
        o += k;
    }
    out[o] = '\0';
    return o;
}
