/* log.c -- JSON-lines (or text) logging on stderr */
#include "log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "termtext.h"
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

/* The JSON form of the character at s, of which n bytes are left (valid
 * UTF-8), or NULL for its bytes as they are; *k gets its length. Besides
 * what JSON requires, DEL and the characters a terminal must not get raw
 * (termtext_hidden: C1, bidi controls, U+2028/9) are \u escapes, so a line
 * read with `kubectl logs` cannot reorder or hide what follows. */
static const char *
json_escape(const char *s, size_t n, char esc[16], size_t *k)
{
    unsigned char c = (unsigned char)*s;
    uint32_t cp;

    *k = 1;
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
        break;
    }
    if (c < 0x20 || c == 0x7f) {
        snprintf(esc, 16, "\\u%04x", c);
        return esc;
    }
    if (c < 0x80 || (*k = termtext_hidden_at(s, n, &cp)) == 0) {
        *k = 1; /* a byte of a character shown as it is */
        return NULL;
    }
    if (cp > 0xFFFF) /* a tag character: a surrogate pair */
        snprintf(esc, 16, "\\u%04x\\u%04x", (unsigned)(0xD800 + ((cp - 0x10000) >> 10)),
                 (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    else
        snprintf(esc, 16, "\\u%04x", (unsigned)cp);
    return esc;
}

/* The room left for a value: the reserve is kept for what closes the line. */
static size_t
value_room(const struct line *l)
{
    size_t room = sizeof(l->l_buf) - l->l_len;

    return room > LINE_RESERVE ? room - LINE_RESERVE : 0;
}

/* The length of s to write, cut at VALUE_MAX_BYTES on a UTF-8 boundary. */
static size_t
value_len(const char *s, int *cut)
{
    size_t in = strlen(s);

    *cut = 0;
    if (in > VALUE_MAX_BYTES) {
        in = VALUE_MAX_BYTES;
        while (in > 0 && ((unsigned char)s[in] & 0xC0) == 0x80)
            in--;
        *cut = 1;
    }
    return in;
}

/* Appends s quoted and escaped, whole or not at all, so a record always
 * stays valid JSON: a value past VALUE_MAX_BYTES is cut at a UTF-8 boundary
 * and ends in "...", one that does not fit becomes "...". */
static void
put_json_value(struct line *l, const char *s)
{
    size_t in, need = 0, k;
    char esc[16], clean[VALUE_MAX_BYTES + 1];
    int cut;

    in = value_len(s, &cut);
    if (!utf8_valid(s, in)) {
        /* Values quote what clients and servers sent, possibly cut mid-
         * character: a JSON line must stay valid UTF-8. (Copied only then:
         * this runs for every value of every line.) */
        memcpy(clean, s, in);
        clean[in] = '\0';
        s = utf8_scrub(clean);
    }
    for (size_t i = 0; i < in; i += k) {
        const char *rep = json_escape(s + i, in - i, esc, &k);
        need += rep ? strlen(rep) : k;
    }
    need += 2 + (cut ? 3 : 0);
    if (need > value_room(l)) {
        in = 0;
        cut = 1;
    }
    put(l, "\"");
    for (size_t i = 0, run = 0; i <= in; i += k) {
        const char *rep = i < in ? json_escape(s + i, in - i, esc, &k) : NULL;
        if (i < in && rep == NULL)
            continue;
        memcpy(l->l_buf + l->l_len, s + run, i - run);
        l->l_len += i - run;
        if (rep != NULL)
            put(l, rep);
        run = i + k;
        if (i == in)
            break;
    }
    if (cut)
        put(l, "...");
    put(l, "\"");
}

/* Appends s for LOG_FORMAT=text: cleaned for a terminal (termtext.h: a
 * newline in an alertname cannot start a forged line, ESC cannot recolour),
 * at most VALUE_MAX_BYTES of it, never cut inside an escape, "..." when
 * cut. A value (not the message) is quoted when it is empty or holds a
 * space, '=' or '"', so it cannot pass for another key=value. */
static void
put_text_value(struct line *l, const char *s, int is_value)
{
    char clean[VALUE_MAX_BYTES + 1];
    size_t used, len;
    int quoted = is_value && (s[0] == '\0' || strpbrk(s, " =\"") != NULL), cut;

    termtext_clean(clean, sizeof(clean), s, SIZE_MAX, quoted ? TERMTEXT_QUOTED : 0,
                   &used);
    cut = s[used] != '\0';
    len = strlen(clean);
    if (len + (quoted ? 2 : 0) + (cut ? 3 : 0) > value_room(l)) {
        clean[0] = '\0';
        cut = 1;
    }
    if (quoted)
        put(l, "\"");
    put(l, clean);
    if (cut)
        put(l, "...");
    if (quoted)
        put(l, "\"");
}

static void
put_value(struct line *l, const char *s, int json, int is_value)
{
    if (json)
        put_json_value(l, s);
    else
        put_text_value(l, s, is_value);
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
    put_value(&l, msg, json, 0);
    if (kv != NULL) {
        const char *key;
        while ((key = va_arg(*kv, const char *)) != NULL) {
            const char *val = va_arg(*kv, const char *);
            put(&l, json ? "," : " ");
            put_value(&l, key, json, 0);
            put(&l, json ? ":" : "=");
            put_value(&l, val ? val : "", json, 1);
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
