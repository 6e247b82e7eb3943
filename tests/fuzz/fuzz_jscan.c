/* fuzz_jscan.c -- differential libFuzzer target: the jscan reader against jansson */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_check.h"
#include "jscan.h"

/*
 * Every input is read four ways and all must agree:
 *   1. jansson's json_loadb (the reference: a DOM, or an error);
 *   2. a jansson value built from jscan's events (js_peek, js_*_begin,
 *      js_*_next, js_string, js_number, js_literal, then js_end);
 *   3. js_skip + js_end (what a parser that reads nothing still checks);
 *   4. a walk that gives up at a point picked by a hash of the input and
 *      calls js_leave, which promises to check the rest all the same.
 * Known, intended differences (skipped, not failures): jansson refuses a
 * real that overflows (jscan reads +-HUGE_VAL), refuses U+0000 in a key,
 * and nests to 2048 (jscan to JS_MAX_DEPTH); js_number does not convert
 * numbers longer than 511 characters. And one jansson quirk: it loses a NUL
 * byte after a number or a literal, so an input with NUL bytes that jansson
 * accepts is compared without them (see against_jansson).
 */

#define JANSSON_FLAGS (JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

struct build {
    uint64_t b_hash; /* of the input: picks the caps js_str_copy is tried with */
    int b_nul_key;   /* a key held U+0000 */
    int b_huge;      /* a number read as +-HUGE_VAL */
};

static uint64_t
fnv1a(const uint8_t *d, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

/* Bytes in a UTF-8 sequence by its lead byte (the text is valid). */
static size_t
seq_len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* js_str_copy into cap bytes agrees with the full decoding d (n bytes, no
 * U+0000): a prefix cut before a whole character, and the full length. */
static void
check_copy(const struct js_str *v, const char *d, size_t n, size_t cap)
{
    char *c = malloc(cap);
    size_t m;

    FUZZ_CHECK(c != NULL, "out of memory");
    FUZZ_CHECK(js_str_copy(v, c, cap) == n, "js_str_copy did not give the full length");
    m = strnlen(c, cap);
    FUZZ_CHECK(m < cap, "js_str_copy left no terminator within %zu bytes", cap);
    FUZZ_CHECK(memcmp(c, d, m) == 0, "js_str_copy is not a prefix of the value");
    if (n < cap) {
        FUZZ_CHECK(m == n, "js_str_copy cut a value that fits (%zu of %zu, cap %zu)", m,
                   n, cap);
    } else {
        FUZZ_CHECK(m < n && ((unsigned char)d[m] & 0xC0) != 0x80,
                   "js_str_copy cut inside a character (%zu of %zu, cap %zu)", m, n, cap);
        FUZZ_CHECK(m + seq_len((unsigned char)d[m]) > cap - 1,
                   "js_str_copy cut a character that fits (%zu of %zu, cap %zu)", m, n,
                   cap);
    }
    free(c);
}

/*
 * A string the reader returned, decoded, with every decoding function
 * agreeing. Returns the decoded bytes (caller frees; *len their count).
 */
static char *
decode_checked(const struct js_str *v, size_t *len, struct build *b)
{
    size_t n = js_str_len(v);
    char *d = malloc(n + 1), *dup;
    int nul = -1, has;

    FUZZ_CHECK(d != NULL, "out of memory");
    FUZZ_CHECK(js_str_decode(v, d) == n && d[n] == '\0',
               "js_str_decode disagrees with js_str_len");
    FUZZ_CHECK(v->jv_escaped || (n == v->jv_len && memcmp(d, v->jv_raw, n) == 0 &&
                                 memchr(v->jv_raw, '\\', v->jv_len) == NULL),
               "an unescaped string is not its raw bytes");
    FUZZ_CHECK(n <= v->jv_len, "a decoded string longer than its text");
    has = memchr(d, '\0', n) != NULL;
    dup = js_strdup(v, &nul);
    if (has) {
        FUZZ_CHECK(dup == NULL && nul == 1, "js_strdup kept a U+0000");
        FUZZ_CHECK(!js_str_eq(v, d), "js_str_eq matched a value cut at U+0000");
    } else {
        FUZZ_CHECK(dup != NULL && nul == 0, "js_strdup failed");
        FUZZ_CHECK(memcmp(dup, d, n + 1) == 0, "js_strdup disagrees with js_str_decode");
        FUZZ_CHECK(js_str_eq(v, d), "js_str_eq refused the value itself");
        if (n > 0) {
            dup[n - 1] = (char)(dup[n - 1] == 'a' ? 'b' : 'a');
            FUZZ_CHECK(!js_str_eq(v, dup), "js_str_eq took another last byte");
            dup[n - 1] = '\0';
            FUZZ_CHECK(!js_str_eq(v, dup), "js_str_eq took a prefix");
        }
        check_copy(v, d, n, 1 + (size_t)(b->b_hash % (n + 2)));
        check_copy(v, d, n, 1);
        b->b_hash = b->b_hash * 6364136223846793005ull + 1442695040888963407ull;
    }
    free(dup);
    *len = n;
    return d;
}

/* The next value as a jansson value, or NULL when the reader failed. */
static json_t *
build(struct js_scan *s, struct build *b)
{
    enum js_type t = js_peek(s), lit = JS_ERROR;
    struct js_str v;
    json_t *j, *e;
    double x;
    size_t n;
    char *d;
    int rc;

    switch (t) {
    case JS_OBJECT:
    case JS_ARRAY:
        if ((t == JS_OBJECT ? js_object_begin(s) : js_array_begin(s)) == -1) {
            FUZZ_CHECK(strstr(s->js_err, "nested too deep") != NULL,
                       "peeked a container, could not open it: %s", s->js_err);
            return NULL;
        }
        j = t == JS_OBJECT ? json_object() : json_array();
        FUZZ_CHECK(j != NULL, "out of memory");
        for (;;) {
            d = NULL;
            if (t == JS_OBJECT) {
                if ((rc = js_object_next(s, &v)) == 1) {
                    d = decode_checked(&v, &n, b);
                    if (memchr(d, '\0', n) != NULL)
                        b->b_nul_key = 1;
                }
            } else {
                rc = js_array_next(s);
            }
            if (rc != 1)
                break;
            if ((e = build(s, b)) == NULL) {
                free(d);
                rc = -1;
                break;
            }
            if (t == JS_OBJECT) /* set: a repeated key keeps the last, as jansson */
                FUZZ_CHECK(json_object_setn_new(j, d, n, e) == 0, "a key is not UTF-8");
            else
                FUZZ_CHECK(json_array_append_new(j, e) == 0, "out of memory");
            free(d);
        }
        if (rc == -1) {
            json_decref(j);
            return NULL;
        }
        return j;
    case JS_STRING:
        if (js_string(s, &v) == -1)
            return NULL;
        d = decode_checked(&v, &n, b);
        j = json_stringn(d, n);
        FUZZ_CHECK(j != NULL, "a decoded string is not UTF-8");
        free(d);
        return j;
    case JS_NUMBER:
        if (js_number(s, &x) == -1)
            return NULL;
        FUZZ_CHECK(!isnan(x), "a number read as NaN");
        if (isinf(x)) {
            b->b_huge = 1;
            return json_null(); /* jansson has no infinite real */
        }
        j = json_real(x);
        FUZZ_CHECK(j != NULL, "out of memory");
        return j;
    case JS_TRUE:
    case JS_FALSE:
    case JS_NULL:
        if (js_literal(s, &lit) == -1)
            return NULL;
        FUZZ_CHECK(lit == t, "js_literal read %d after js_peek said %d", lit, t);
        return t == JS_TRUE ? json_true() : t == JS_FALSE ? json_false() : json_null();
    default:
        FUZZ_CHECK(t == JS_ERROR && s->js_failed, "js_peek gave %d", t);
        return NULL;
    }
}

/* The walk that gives up: after l_countdown steps it leaves to a depth,
 * then to the top. */
struct leave {
    uint64_t l_countdown;
    uint64_t l_to;
};

/* 0 = go on, 1 = left (the caller unwinds), -1 = the reader failed. */
static int
tick(struct js_scan *s, struct leave *l)
{
    unsigned to;

    if (s->js_depth == 0 || l->l_countdown-- != 0)
        return 0;
    to = (unsigned)(l->l_to % (s->js_depth + 1));
    if (js_leave(s, to) == -1)
        return -1;
    FUZZ_CHECK(s->js_depth == to, "js_leave(%u) stopped at depth %u", to, s->js_depth);
    if (js_leave(s, 0) == -1)
        return -1;
    FUZZ_CHECK(s->js_depth == 0, "js_leave(0) stopped at depth %u", s->js_depth);
    return 1;
}

static int
walk_leaving(struct js_scan *s, struct leave *l)
{
    struct js_str key;
    enum js_type t;
    int rc;

    if ((rc = tick(s, l)) != 0) /* before a value */
        return rc;
    t = js_peek(s);
    if (t != JS_OBJECT && t != JS_ARRAY)
        return js_skip(s);
    if ((t == JS_OBJECT ? js_object_begin(s) : js_array_begin(s)) == -1)
        return -1;
    for (;;) {
        if ((rc = tick(s, l)) != 0) /* after an opening or a value */
            return rc;
        rc = t == JS_OBJECT ? js_object_next(s, &key) : js_array_next(s);
        if (rc != 1)
            return rc;
        if ((rc = walk_leaving(s, l)) != 0)
            return rc;
    }
}

/* Deepest nesting of brackets outside strings (an estimate for malformed
 * text, exact for what the reader got through). */
static size_t
max_depth(const uint8_t *d, size_t n)
{
    size_t depth = 0, max = 0;
    int in_str = 0;

    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (d[i] == '\\')
                i++;
            else if (d[i] == '"')
                in_str = 0;
        } else if (d[i] == '"') {
            in_str = 1;
        } else if (d[i] == '[' || d[i] == '{') {
            if (++depth > max)
                max = depth;
        } else if ((d[i] == ']' || d[i] == '}') && depth > 0) {
            depth--;
        }
    }
    return max;
}

/* A failed reader: a positioned reason, kept however it is called again. */
static void
check_failed(struct js_scan *s, const uint8_t *data, size_t size)
{
    char first[sizeof(s->js_err)];
    const char *at;
    struct js_str v;
    int line = 0, col = 0, end = 0;
    size_t lines = 1;

    FUZZ_CHECK(s->js_failed, "a failure without js_failed");
    FUZZ_CHECK_REASON(s->js_err, sizeof(s->js_err));
    at = strstr(s->js_err, " (line ");
    FUZZ_CHECK(at != NULL && at > s->js_err, "no reason and position: \"%s\"", s->js_err);
    FUZZ_CHECK(sscanf(at, " (line %d, column %d)%n", &line, &col, &end) == 2 && end > 0 &&
                   at[end] == '\0',
               "a malformed position: \"%s\"", s->js_err);
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(line >= 1 && (size_t)line <= lines && col >= 1 && (size_t)col <= size + 1,
               "a position outside the input: \"%s\"", s->js_err);

    memcpy(first, s->js_err, sizeof(first));
    FUZZ_CHECK(js_peek(s) == JS_ERROR && js_skip(s) == -1 && js_string(s, &v) == -1 &&
                   js_array_next(s) == -1 && js_object_next(s, &v) == -1 &&
                   js_leave(s, 0) == -1 && js_end(s) == -1 && js_fail(s, "later") == -1,
               "a call after a failure succeeded");
    FUZZ_CHECK(strcmp(first, s->js_err) == 0, "the first reason was replaced");
}

/* The build of pass 2: a value, or NULL with s->js_err saying why. */
static json_t *
read_jscan(const uint8_t *data, size_t size, struct build *b, struct js_scan *s)
{
    json_t *got;

    b->b_hash = fnv1a(data, size);
    b->b_nul_key = b->b_huge = 0;
    js_init(s, (const char *)data, size);
    got = build(s, b);
    if (got != NULL && js_end(s) == -1) {
        json_decref(got);
        got = NULL;
    }
    if (got == NULL)
        check_failed(s, data, size);
    return got;
}

/* jscan's reading (got, or s->js_err) against jansson's (want, or jerr). */
static void
against_jansson(const uint8_t *data, size_t size, const json_t *want,
                const json_error_t *jerr, const json_t *got, const struct build *b,
                const struct js_scan *s)
{
    struct build b2;
    struct js_scan s2;
    json_t *got2;
    uint8_t *bare;
    size_t n = 0;

    if (max_depth(data, size) > JS_MAX_DEPTH)
        return; /* jansson nests deeper */
    if (got != NULL && (b->b_huge || b->b_nul_key)) {
        FUZZ_CHECK(
            want == NULL &&
                ((b->b_huge && strstr(jerr->text, "overflow") != NULL) ||
                 (b->b_nul_key && strstr(jerr->text, "NUL byte in object key") != NULL)),
            "jscan read %s; jansson: %s", b->b_huge ? "HUGE_VAL" : "a U+0000 key",
            want != NULL ? "accepted" : jerr->text);
        return;
    }
    if (got == NULL && want != NULL && strstr(s->js_err, "number too long") != NULL)
        return; /* a number jscan does not convert */
    if (got == NULL && want != NULL && memchr(data, '\0', size) != NULL) {
        /* jansson loses a NUL byte that it reads past and puts back after a
         * number or a literal ("[12\0]" loads as [12]); jscan refuses any raw
         * NUL outside a string. Without them, the two must agree. (Known:
         * JSONTestSuite's n_multidigit_number_then_00, jansson issue 331.) */
        bare = malloc(size);
        FUZZ_CHECK(bare != NULL, "out of memory");
        for (size_t i = 0; i < size; i++)
            if (data[i] != '\0')
                bare[n++] = data[i];
        got2 = read_jscan(bare, n, &b2, &s2);
        against_jansson(bare, n, want, jerr, got2, &b2, &s2);
        json_decref(got2);
        free(bare);
        return;
    }
    FUZZ_CHECK((want != NULL) == (got != NULL), "jansson: %s; jscan: %s",
               want != NULL ? "accepted" : jerr->text,
               got != NULL ? "accepted" : s->js_err);
    FUZZ_CHECK(want == NULL || json_equal(want, got), "jansson and jscan read %s",
               "different values");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct build b;
    struct leave l;
    struct js_scan s, k;
    json_error_t jerr;
    json_t *want, *got;
    int skipped, left, too_long;

    want = json_loadb(text, size, JANSSON_FLAGS, &jerr);
    got = read_jscan(data, size, &b, &s);
    too_long = got == NULL && strstr(s.js_err, "number too long") != NULL;

    /* Skipping gives the same verdict and the same reason (but converts no
     * number, so a long one passes). */
    js_init(&k, text, size);
    skipped = js_skip(&k) == 0 && js_end(&k) == 0;
    if (!skipped)
        check_failed(&k, data, size);
    if (!too_long)
        FUZZ_CHECK(skipped == (got != NULL) && strcmp(k.js_err, s.js_err) == 0,
                   "js_skip: \"%s\", the build: \"%s\"", k.js_err, s.js_err);

    /* Giving up anywhere still checks the rest: the verdict of js_skip. */
    l.l_countdown = b.b_hash % (size + 1);
    l.l_to = b.b_hash >> 32;
    js_init(&k, text, size);
    left = walk_leaving(&k, &l) != -1 && js_end(&k) == 0;
    if (!left)
        check_failed(&k, data, size);
    FUZZ_CHECK(left == skipped, "leaving after %llu steps: \"%s\", js_skip: %s",
               (unsigned long long)(b.b_hash % (size + 1)), k.js_err,
               skipped ? "accepted" : "refused");

    against_jansson(data, size, want, &jerr, got, &b, &s);
    json_decref(want);
    json_decref(got);
    return 0;
}
