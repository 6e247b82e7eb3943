/* utf8.c -- keeps text that goes into a JSON answer valid UTF-8 */
#include "utf8.h"

#include <stddef.h>

/* The length of the well-formed character at p (1-4), or 0. */
static size_t
char_len(const unsigned char *p)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t n, i;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    /* The NUL terminator fails these checks, so nothing is read past it. */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

char *
utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n;

    while (*p != '\0') {
        if ((n = char_len(p)) == 0)
            *p++ = '?';
        else
            p += n;
    }
    return s;
}
