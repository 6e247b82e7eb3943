/* buf.h -- a growable byte buffer with a hard cap */
#ifndef GVW_BUF_H
#define GVW_BUF_H

#include <stddef.h>

struct buf {
    char *b_data;  /* owned; always NUL-terminated when b_len > 0 */
    size_t b_len;  /* bytes used, excluding the terminator */
    size_t b_size; /* bytes allocated */
    size_t b_cap;  /* hard limit on b_len; 0 = no limit */
    int b_toobig;  /* set once an append would pass b_cap */
};

/* Initialises an empty buffer that refuses to grow past cap bytes. */
void buf_init(struct buf *b, size_t cap);
/* Makes room for extra more bytes (and the terminator) without changing the
 * contents. Returns 0, or -1 on allocation failure or when the cap would be
 * passed (then b_toobig is set). */
int buf_reserve(struct buf *b, size_t extra);
/* Appends len bytes. Returns 0, or -1 on allocation failure or when the cap
 * would be passed (then b_toobig is set and the buffer is unchanged). */
int buf_append(struct buf *b, const void *data, size_t len);
/* Appends a formatted string (bounded by the cap). Returns 0 or -1. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a formatted string to the fixed array buf (len bytes) at *off and
 * moves *off on; what does not fit is dropped (the text ends there, always
 * NUL-terminated), never overrun. The sentences the decision writes. */
void text_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Empties the buffer but keeps its memory. */
void buf_reset(struct buf *b);
/* Frees the memory; the buffer may be reused after buf_init(). */
void buf_free(struct buf *b);

#endif
