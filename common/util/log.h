/* log.h -- JSON-lines (or text) logging on stderr, OpenBSD-style tiny API */
#ifndef GVW_LOG_H
#define GVW_LOG_H

#include <stdarg.h>

enum log_format { LOG_FORMAT_JSON, LOG_FORMAT_TEXT };
enum log_level { LOG_LEVEL_DEBUG, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR };

/* Chooses the output format and the lowest level printed. Default: JSON, INFO. */
void log_init(enum log_format format, enum log_level min_level);

/* One record. The message is free text; by convention it starts with
 * __func__. Never pass secrets: the logger cannot tell them apart. */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_warnx plus ": strerror(errno)". */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A structured record: msg plus key/value string pairs, NULL-terminated:
 *   log_event(LOG_LEVEL_INFO, "decision", "node", node, "result", res, NULL);
 * Values are JSON-escaped (DEL, C1, bidi controls and U+2028/9 as \u
 * escapes too); in text mode they print as key=value, cleaned by termtext.h
 * (so a value can never start a line of its own), quoted when empty or
 * holding a space, '=' or '"'. */
void log_event(enum log_level level, const char *msg, ...);

/* Batching for a burst of records made in one event-loop callback: between
 * log_hold() and log_release() whole lines collect in a buffer (32 KiB; a
 * full buffer is written out first) and log_release() writes them with one
 * write(2). A busy webhook intake logs a line per alert, and a system call a
 * line was a fifth of its calls. Lines stay whole and in order; a crash
 * inside the callback loses what it held. Single-threaded use only. */
void log_hold(void);
void log_release(void);

/* Start-up only: logs and exits 1. */
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
