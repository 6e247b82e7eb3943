/* token.h -- a bearer token read from a file and re-read as it ages (bound tokens rotate)
 */
#ifndef GVW_TOKEN_H
#define GVW_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_MAX 16384 /* a token file larger than this is refused */

struct token {
    char *t_file;      /* owned: the path */
    long t_max_age_ms; /* re-read the file once the copy is this old */
    char *t_value;     /* owned: the cached token, NULL until read; wiped when dropped */
    int64_t t_read_ms; /* when t_value was read (clock_mono_ms) */
};

/* Starts with nothing read. file is copied. 0, or -1 when out of memory. */
int token_init(struct token *t, const char *file, long max_age_ms);

/*
 * The token: the cached copy while younger than t_max_age_ms, else the file
 * read again (surrounding whitespace trimmed). NULL with a reason in err when
 * the file is unreadable, empty, too big or holds anything but visible ASCII
 * (which could split a header); the cached copy is then dropped too, and the
 * reason never contains file content. The returned string is borrowed until
 * the next token_get() or token_free().
 */
const char *token_get(struct token *t, char *err, size_t errlen);

/*
 * Reads file once, with token_get()'s trimming and checks: 0 and *out an owned
 * copy (wipe it with token_wipe() before free), or -1 with the reason in err
 * (never file content) and *out NULL.
 */
int token_read(const char *file, char **out, char *err, size_t errlen);

/* Wipes and frees; the struct may be re-initialised. */
void token_free(struct token *t);

/* Clears memory that held a secret (stores the compiler may not drop). */
void token_wipe(void *p, size_t len);

#endif
