/* jscan.h -- a validating pull reader for JSON text (RFC 8259)
 *
 * The parsers read a handful of fields out of bodies that can be megabytes
 * (a 5,000-pod PodList): building a DOM of all of it costs ~30x more than
 * walking it once. jscan walks it once: the caller pulls values in document
 * order, reads the few it wants and skips the rest, and every byte is still
 * checked (UTF-8, escapes, number grammar, nesting, trailing bytes), so a
 * body that is not JSON is refused whichever fields the caller reads.
 *
 * Nothing is allocated by the reader itself. Strings come back as borrowed
 * slices of the input; js_strdup() and js_str_eq() decode them.
 *
 * Typical use:
 *     js_init(&s, body, len);
 *     if (js_object_begin(&s) == -1) ...
 *     while ((rc = js_object_next(&s, &key)) == 1) {
 *         if (js_str_eq(&key, "items")) read_items(&s); else js_skip(&s);
 *     }
 *     if (rc == -1 || js_end(&s) == -1) ... s.js_err says why
 */
#ifndef GVW_JSCAN_H
#define GVW_JSCAN_H

#include <stddef.h>
#include <stdint.h>

struct strpool;

/* Deeper nesting is refused: a hostile body cannot make a caller recurse
 * without bound. Kubernetes objects nest about 10 deep. */
#define JS_MAX_DEPTH 512

enum js_type {
    JS_ERROR = 0, /* malformed input; js_err says why */
    JS_OBJECT,
    JS_ARRAY,
    JS_STRING,
    JS_NUMBER,
    JS_TRUE,
    JS_FALSE,
    JS_NULL,
};

/* A string value or key as it appears between its quotes (borrowed). */
struct js_str {
    const char *jv_raw; /* first byte after the opening quote */
    size_t jv_len;      /* bytes up to the closing quote */
    int jv_escaped;     /* has a backslash: must be decoded before use */
};

/* A member's value kept until its object closes, for a caller that judges
 * members together (they may come in any order). */
struct js_held {
    enum js_type h_type; /* JS_ERROR: absent */
    struct js_str h_str; /* when JS_STRING (borrowed) */
    double h_num;        /* when JS_NUMBER */
};

struct js_scan {
    const char *js_start; /* borrowed input */
    const char *js_p;     /* next byte */
    const char *js_end;
    unsigned js_depth;
    uint8_t js_frame[JS_MAX_DEPTH]; /* per open container: JS_F_* bits */
    int js_failed;                  /* sticky: every call after an error fails */
    char js_err[128];               /* the first error, with line and column */
};

/* Readies s to read len bytes at buf (need not be NUL-terminated). */
void js_init(struct js_scan *s, const char *buf, size_t len);

/* The type of the next value, judged by its first byte (whitespace skipped);
 * JS_ERROR at the end of input or on a byte that cannot start a value. */
enum js_type js_peek(struct js_scan *s);

/* Consumes '{'. 0, or -1 (the next value is not an object). */
int js_object_begin(struct js_scan *s);

/* Reads the next member's key and its ':'; the caller then reads or skips
 * the value. 1 = *key filled, 0 = '}' consumed (the object is done), -1. */
int js_object_next(struct js_scan *s, struct js_str *key);

/* Consumes '['. 0, or -1. */
int js_array_begin(struct js_scan *s);

/* 1 = another element follows (read or skip it), 0 = ']' consumed, -1. */
int js_array_next(struct js_scan *s);

/* Reads a string value into *out (borrowed). 0, or -1. */
int js_string(struct js_scan *s, struct js_str *out);

/* Reads a number. *out (may be NULL) gets its value, +-HUGE_VAL when out of
 * range: the grammar is JSON's, the range the caller's to judge. 0, or -1. */
int js_number(struct js_scan *s, double *out);

/* Reads true, false or null. 0, or -1 when the next value is not one. */
int js_literal(struct js_scan *s, enum js_type *out);

/* Skips one whole value of any type, checking all of it. 0, or -1. */
int js_skip(struct js_scan *s);

/* Skips the rest of every container opened above depth (a js_depth read
 * before opening them), from wherever the caller stopped: before a member's
 * value or after it. For a caller that found the shape wrong mid-walk but
 * still wants the rest checked, so a body that is not JSON is always told
 * as such. 0, or -1. */
int js_leave(struct js_scan *s, unsigned depth);

/* Reads the next value into *h when it is a string or a number; skips (and
 * types) anything else. 0, or -1. */
int js_hold(struct js_scan *s, struct js_held *h);

/* For a caller that reads a few keys of an object: marks bit in *seen, or
 * fails with "duplicate key \"key\"" when it was already marked. A key twice
 * could make two readers see two different objects. 0, or -1. */
int js_once(struct js_scan *s, unsigned *seen, unsigned bit, const char *key);

/* Checks that only whitespace is left. 0, or -1. */
int js_end(struct js_scan *s);

/* Sets the error (first one wins) for a caller that finds the shape wrong
 * mid-walk; always -1, so it can be returned. */
int js_fail(struct js_scan *s, const char *what);

/* Decoded byte length of v (escapes resolved). */
size_t js_str_len(const struct js_str *v);

/* v decoded into dst (js_str_len(v) + 1 bytes), NUL-terminated; returns the
 * length. v must come from this reader (already validated). */
size_t js_str_decode(const struct js_str *v, char *dst);

/* v decoded into dst (cap bytes, cap > 0), cut before a character that
 * would not fit, NUL-terminated; returns the full decoded length (as
 * snprintf does), so a caller sees that it was cut. */
size_t js_str_copy(const struct js_str *v, char *dst, size_t cap);

/* v decoded into a new string (caller frees), or NULL when out of memory or
 * when v contains U+0000 (*has_nul set): C strings cannot carry it. */
char *js_strdup(const struct js_str *v, int *has_nul);

/* js_strdup() into pool (the string is borrowed from it, freed with it):
 * NULL when out of memory or when v contains U+0000 (*has_nul set). */
char *js_strdup_pool(const struct js_str *v, struct strpool *pool, int *has_nul);

/* Flags of js_pool_string(). */
#define JS_POOL_NONEMPTY 0x1 /* an empty string leaves *dst as it was */

/*
 * The next value, when it is a string, into pool as *dst (borrowed from the
 * pool); any other value is skipped and *dst left as it was. A string that
 * holds U+0000 sets *dst to NULL. 0, or -1: malformed (see js_error()), or
 * out of memory, then *oom is set to 1.
 */
int js_pool_string(struct js_scan *s, struct strpool *pool, unsigned flags, char **dst,
                   int *oom);

/* Whether v decodes to exactly the C string lit. */
int js_str_eq(const struct js_str *v, const char *lit);

#endif
