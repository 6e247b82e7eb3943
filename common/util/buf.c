/* buf.c -- a growable byte buffer with a hard cap */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
buf_init(struct buf *b, size_t cap)
{
    memset(b, 0, sizeof(*b));
    b->b_cap = cap;
}

int
buf_reserve(struct buf *b, size_t extra)
{
    size_t need, size;
    char *p;

    if (b->b_cap != 0 && (extra > b->b_cap || b->b_len > b->b_cap - extra)) {
        b->b_toobig = 1;
        return -1;
    }
    need = b->b_len + extra + 1;
    if (need <= b->b_size)
        return 0;
    size = b->b_size ? b->b_size : 256;
    while (size < need)
        size *= 2;
    if ((p = realloc(b->b_data, size)) == NULL)
        return -1;
    b->b_data = p;
    b->b_size = size;
    return 0;
}

int
buf_append(struct buf *b, const void *data, size_t len)
{
    if (buf_reserve(b, len) == -1)
        return -1;
    if (len > 0)
        memcpy(b->b_data + b->b_len, data, len);
    b->b_len += len;
    b->b_data[b->b_len] = '\0';
    return 0;
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n) == -1)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->b_data + b->b_len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->b_len += (size_t)n;
    return 0;
}

void
buf_reset(struct buf *b)
{
    b->b_len = 0;
    b->b_toobig = 0;
    if (b->b_data != NULL)
        b->b_data[0] = '\0';
}

void
buf_free(struct buf *b)
{
    free(b->b_data);
    buf_init(b, b->b_cap);
}

void
text_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*off >= len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    /* A negative n (an encoding error, which these formats cannot raise)
     * ends the text like one that does not fit. */
    *off = n < 0 || (size_t)n >= len - *off ? len : *off + (size_t)n;
}
