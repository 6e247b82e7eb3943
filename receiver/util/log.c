/* log.c -- JSON-lines (or text) logging on stderr */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static enum log_format log_fmt = LOG_FORMAT_JSON;
static enum log_level log_min = LOG_LEVEL_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void
log_init(enum log_format format, enum log_level min_level)
{
    log_fmt = format;
    log_min = min_level;
}

/* Writes s as the inside of a JSON string; control bytes become \u00XX. */
static void
json_escape_to(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
}

static void
timestamp(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000L);
}

static void
emit(enum log_level level, const char *msg, va_list *kv)
{
    char ts[40];

    if (level < log_min)
        return;
    timestamp(ts, sizeof(ts));
    flockfile(stderr);
    if (log_fmt == LOG_FORMAT_JSON) {
        fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts,
                level_names[level]);
        json_escape_to(stderr, msg);
        fputc('"', stderr);
    } else {
        fprintf(stderr, "%s %-5s %s", ts, level_names[level], msg);
    }
    if (kv != NULL) {
        const char *key;
        while ((key = va_arg(*kv, const char *)) != NULL) {
            const char *val = va_arg(*kv, const char *);
            if (val == NULL)
                val = "";
            if (log_fmt == LOG_FORMAT_JSON) {
                fputs(",\"", stderr);
                json_escape_to(stderr, key);
                fputs("\":\"", stderr);
                json_escape_to(stderr, val);
                fputc('"', stderr);
            } else {
                fprintf(stderr, " %s=%s", key, val);
            }
        }
    }
    fputs(log_fmt == LOG_FORMAT_JSON ? "}\n" : "\n", stderr);
    funlockfile(stderr);
}

static void
vlog(enum log_level level, const char *fmt, va_list ap, const char *suffix)
{
    char msg[2048];
    int n;

    if (level < log_min)
        return;
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    if (suffix != NULL && n >= 0 && (size_t)n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", suffix);
    emit(level, msg, NULL);
}

#define DEFINE_LOGGER(name, level, suffix_expr)                                         \
    void name(const char *fmt, ...)                                                     \
    {                                                                                   \
        int saved = errno;                                                              \
        va_list ap;                                                                     \
        va_start(ap, fmt);                                                              \
        vlog(level, fmt, ap, suffix_expr);                                              \
        va_end(ap);                                                                     \
        errno = saved;                                                                  \
    }

DEFINE_LOGGER(log_debug, LOG_LEVEL_DEBUG, NULL)
DEFINE_LOGGER(log_info, LOG_LEVEL_INFO, NULL)
DEFINE_LOGGER(log_warnx, LOG_LEVEL_WARN, NULL)
DEFINE_LOGGER(log_warn, LOG_LEVEL_WARN, strerror(saved))

void
log_event(enum log_level level, const char *msg, ...)
{
    va_list ap;

    va_start(ap, msg);
    emit(level, msg, &ap);
    va_end(ap);
}

void
fatalx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_LEVEL_ERROR, fmt, ap, NULL);
    va_end(ap);
    exit(1);
}
