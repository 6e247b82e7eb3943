/* json_str.c -- a string written as JSON text, byte for byte as jansson's json_dumps
 * writes it */
#include "json_str.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

char *
json_str_escape(char *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    size_t left = n, k;

    while (left > 0) {
        unsigned char ch = *p;

        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
            *o++ = (char)ch;
            p++, left--;
            continue;
        }
        if (ch >= 0x80) {
            k = utf8_char_len((const char *)p, left);
            if (k == 0) {
                *o++ = '?';
                k = 1;
            } else {
                memcpy(o, p, k);
                o += k;
            }
            p += k, left -= k;
            continue;
        }
        *o++ = '\\';
        switch (ch) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 0xF];
            break;
        }
        p++, left--;
    }
    return o;
}

int
json_str_put(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    char *o;

    /* Reserving the worst case once keeps the loop free of checks. */
    if (n > SIZE_MAX / 8 || buf_reserve(b, JSON_STR_ROOM(n) + 2) == -1)
        return -1;
    o = b->b_data + b->b_len;
    *o++ = '"';
    o = json_str_escape(o, s, n);
    *o++ = '"';
    b->b_len = (size_t)(o - b->b_data);
    b->b_data[b->b_len] = '\0';
    return 0;
}
