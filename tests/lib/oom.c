/* oom.c -- the __wrap_ allocators of the *_oom tests: allocation N fails when armed */
#include "oom.h"

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static int armed;
static long fail_at, calls, failures;

void
oom_arm(long n)
{
    calls = 0;
    failures = 0;
    fail_at = n;
    armed = 1;
}

int
oom_disarm(void)
{
    armed = 0;
    return failures > 0;
}

int
oom_refuse(void)
{
    if (!armed || calls++ != fail_at)
        return 0;
    failures++;
    return 1;
}

long
oom_calls(void)
{
    return calls;
}

void *
__wrap_malloc(size_t n)
{
    return oom_refuse() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
    return oom_refuse() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
    return oom_refuse() ? NULL : __real_realloc(p, n);
}

char *
__wrap_strdup(const char *s)
{
    return oom_refuse() ? NULL : __real_strdup(s);
}

char *
__wrap_strndup(const char *s, size_t n)
{
    return oom_refuse() ? NULL : __real_strndup(s, n);
}
