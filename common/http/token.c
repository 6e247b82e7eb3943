/* token.c -- a bearer token read from a file and re-read as it ages (bound tokens rotate)
 */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

void
token_wipe(void *p, size_t len)
{
    volatile unsigned char *v = p;

    while (len-- > 0)
        *v++ = 0;
}

static void
drop(struct token *t)
{
    if (t->t_value != NULL) {
        token_wipe(t->t_value, strlen(t->t_value));
        free(t->t_value);
        t->t_value = NULL;
    }
}

int
token_init(struct token *t, const char *file, long max_age_ms)
{
    memset(t, 0, sizeof(*t));
    t->t_max_age_ms = max_age_ms;
    return (t->t_file = strdup(file)) == NULL ? -1 : 0;
}

void
token_free(struct token *t)
{
    drop(t);
    free(t->t_file);
    t->t_file = NULL;
}

/* Reads at most sizeof raw bytes of the file. Returns the length, or -1 with errno. */
static ssize_t
slurp(const char *file, char *raw, size_t size)
{
    size_t len = 0;
    ssize_t n = 0;
    int fd, saved;

    if ((fd = open(file, O_RDONLY | O_CLOEXEC)) == -1)
        return -1;
    while (len < size &&
           ((n = read(fd, raw + len, size - len)) > 0 || (n == -1 && errno == EINTR)))
        if (n > 0)
            len += (size_t)n;
    saved = errno;
    close(fd);
    errno = saved;
    return n == -1 ? -1 : (ssize_t)len;
}

int
token_read(const char *file, char **out, char *err, size_t errlen)
{
    char raw[TOKEN_MAX + 1];
    size_t start = 0, len;
    ssize_t n;
    int rc = -1;

    *out = NULL;
    if ((n = slurp(file, raw, sizeof(raw))) == -1) {
        snprintf(err, errlen, "token file %s: %s", file, strerror(errno));
        goto out;
    }
    len = (size_t)n;
    if (len > TOKEN_MAX) {
        snprintf(err, errlen, "token file %s: larger than %d bytes", file, TOKEN_MAX);
        goto out;
    }
    while (len > 0 && strchr(" \t\r\n", raw[len - 1]) != NULL)
        len--;
    while (start < len && strchr(" \t\r\n", raw[start]) != NULL)
        start++;
    if (start == len) {
        snprintf(err, errlen, "token file %s: empty", file);
        goto out;
    }
    for (size_t i = start; i < len; i++)
        if ((unsigned char)raw[i] <= 0x20 || (unsigned char)raw[i] >= 0x7f) {
            snprintf(err, errlen, "token file %s: not a token (spaces or control bytes)",
                     file);
            goto out;
        }
    if ((*out = malloc(len - start + 1)) == NULL) {
        snprintf(err, errlen, "token file %s: out of memory", file);
        goto out;
    }
    memcpy(*out, raw + start, len - start);
    (*out)[len - start] = '\0';
    rc = 0;
out:
    token_wipe(raw, sizeof(raw));
    return rc;
}

const char *
token_get(struct token *t, char *err, size_t errlen)
{
    if (t->t_value != NULL && clock_mono_ms() - t->t_read_ms < t->t_max_age_ms)
        return t->t_value;
    drop(t); /* a token we cannot re-read must not outlive its file */
    if (token_read(t->t_file, &t->t_value, err, errlen) == 0)
        t->t_read_ms = clock_mono_ms();
    return t->t_value;
}
