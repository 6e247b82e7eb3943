/* log.c -- JSON-lines (or text) logging on stderr */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

static enum log_format log_fmt = LOG_FORMAT_JSON;
static enum log_level log_min = LOG_LEVEL_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void
log_init(enum log_format format, enum log_level min_level)
{
    log_fmt = format;
    log_min = min_level;
}

#define LINE_MAX_BYTES 16384 /* one record at most */
#define VALUE_MAX_BYTES 4096 /* of one value; longer ones end in "..." */
#define LINE_RESERVE 256     /* kept for the punctuation that closes a record */

/* One log line being built; written with a single write(2) so lines from
 * one process never interleave and a line costs one system call. */
struct line {
    char l_buf[LINE_MAX_BYTES];
    size_t l_len;
};

/* Appends fixed punctuation; the reserve guarantees it fits. */
static void
put(struct line *l, const char *s)
{
    size_t n = strlen(s);

    if (n > sizeof(l->l_buf) - l->l_len)
        n = sizeof(l->l_buf) - l->l_len; /* can't happen: LINE_RESERVE */
    memcpy(l->l_buf + l->l_len, s, n);
    l->l_len += n;
}

/* The escaped form of byte c (NULL = the byte itself). */
static const char *
json_escape(unsigned char c, char esc[8])
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    default:
        if (c >= 0x20)
            return NULL;
        snprintf(esc, 8, "\\u%04x", c);
        return esc;
    }
}

/* Appends s (quoted and escaped when json) whole or not at all, so a record
 * always stays valid JSON: a value past VALUE_MAX_BYTES is cut at a UTF-8
 * boundary and ends in "...", one that does not fit becomes "...". */
static void
put_value(struct line *l, const char *s, int json)
{
    size_t in = strlen(s), need = 0, room;
    char esc[8], clean[VALUE_MAX_BYTES + 1];
    int cut = 0;

    if (in > VALUE_MAX_BYTES) {
        in = VALUE_MAX_BYTES;
        while (in > 0 && ((unsigned char)s[in] & 0xC0) == 0x80)
            in--;
        cut = 1;
    }
    if (json && !utf8_valid(s, in)) {
        /* Values quote what clients and servers sent, possibly cut mid-
         * character: a JSON line must stay valid UTF-8. (Copied only then:
         * this runs for every value of every line.) */
        memcpy(clean, s, in);
        clean[in] = '\0';
        s = utf8_scrub(clean);
    }
    for (size_t i = 0; i < in; i++) {
        const char *rep = json ? json_escape((unsigned char)s[i], esc) : NULL;
        need += rep ? strlen(rep) : 1;
    }
    need += (json ? 2 : 0) + (cut ? 3 : 0);
    room = sizeof(l->l_buf) - l->l_len;
    room = room > LINE_RESERVE ? room - LINE_RESERVE : 0;
    if (need > room) {
        in = 0;
        cut = 1;
    }
    if (json)
        put(l, "\"");
    for (size_t i = 0, run = 0; i <= in; i++) {
        const char *rep = i < in && json ? json_escape((unsigned char)s[i], esc) : NULL;
        if (i < in && rep == NULL)
            continue;
        memcpy(l->l_buf + l->l_len, s + run, i - run);
        l->l_len += i - run;
        if (rep != NULL)
            put(l, rep);
        run = i + 1;
    }
    if (cut)
        put(l, "...");
    if (json)
        put(l, "\"");
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

/* Lines held back by log_hold(), written whole by log_release(). */
static char held_buf[2 * LINE_MAX_BYTES];
static size_t held_len;
static int held;

/* Writes buf[0..len) to stderr. */
static void
write_all(const char *buf, size_t len)
{
    size_t off = 0;
    ssize_t n;

    while (off < len) {
        n = write(STDERR_FILENO, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* stderr is gone: nothing sensible is left to do */
        off += (size_t)n;
    }
}

static void
flush_held(void)
{
    write_all(held_buf, held_len);
    held_len = 0;
}

static void
emit(enum log_level level, const char *msg, va_list *kv)
{
    struct line l;
    char ts[40];
    int json = log_fmt == LOG_FORMAT_JSON;

    if (level < log_min)
        return;
    l.l_len = 0;
    timestamp(ts, sizeof(ts));
    if (json) {
        put(&l, "{\"ts\":\"");
        put(&l, ts);
        put(&l, "\",\"level\":\"");
        put(&l, level_names[level]);
        put(&l, "\",\"msg\":");
    } else {
        put(&l, ts);
        put(&l, " ");
        put(&l, level_names[level]);
        put(&l, strlen(level_names[level]) < 5 ? "  " : " "); /* aligned messages */
    }
    put_value(&l, msg, json);
    if (kv != NULL) {
        const char *key;
        while ((key = va_arg(*kv, const char *)) != NULL) {
            const char *val = va_arg(*kv, const char *);
            put(&l, json ? "," : " ");
            put_value(&l, key, json);
            put(&l, json ? ":" : "=");
            put_value(&l, val ? val : "", json);
        }
    }
    put(&l, json ? "}\n" : "\n");
    if (held) {
        if (l.l_len > sizeof(held_buf) - held_len)
            flush_held();
        if (l.l_len <= sizeof(held_buf) - held_len) {
            memcpy(held_buf + held_len, l.l_buf, l.l_len);
            held_len += l.l_len;
            return;
        }
    }
    write_all(l.l_buf, l.l_len);
}

void
log_hold(void)
{
    held = 1;
}

void
log_release(void)
{
    held = 0;
    flush_held();
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

#define DEFINE_LOGGER(name, level, suffix_expr)                                          \
    void name(const char *fmt, ...)                                                      \
    {                                                                                    \
        int saved = errno;                                                               \
        va_list ap;                                                                      \
        va_start(ap, fmt);                                                               \
        vlog(level, fmt, ap, suffix_expr);                                               \
        va_end(ap);                                                                      \
        errno = saved;                                                                   \
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
