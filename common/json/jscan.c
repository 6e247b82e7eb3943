/* jscan.c -- a validating pull reader for JSON text (RFC 8259) */
#include "jscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"
#include "utf8.h"

#define JS_F_ARRAY 1u  /* the open container is an array (else an object) */
#define JS_F_MEMBER 2u /* it has had a member: the next needs a comma */
#define JS_F_VALUE 4u  /* a member announced (js_*_next gave 1), its value unread */
#define NUMBER_MAX 511 /* longest number js_number converts (skipping has no cap) */

void
js_init(struct js_scan *s, const char *buf, size_t len)
{
    if (buf == NULL) /* NULL + 0 is undefined behaviour: read "" instead */
        buf = "", len = 0;
    s->js_start = buf;
    s->js_p = buf;
    s->js_end = buf + len;
    s->js_depth = 0;
    s->js_failed = 0;
    s->js_err[0] = '\0';
}

int
js_fail(struct js_scan *s, const char *what)
{
    const char *q;
    int line = 1, col = 1;

    if (s->js_failed)
        return -1;
    s->js_failed = 1;
    /* Counted only now: the happy path never pays for positions. */
    for (q = s->js_start; q < s->js_p && q < s->js_end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    /* A message too long for js_err is cut (still terminated); the return value
     * is looked at so -O2's -Wformat-truncation knows the cut is meant. */
    if (snprintf(s->js_err, sizeof(s->js_err), "%s (line %d, column %d)", what, line,
                 col) < 0)
        s->js_err[0] = '\0';
    return -1;
}

static void
skip_ws(struct js_scan *s)
{
    const char *p = s->js_p;

    if (p < s->js_end && (unsigned char)*p > ' ') /* the usual case: none */
        return;
    while (p < s->js_end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    s->js_p = p;
}

/* A value was read whole: the open container's announced member is done. */
static void
took_value(struct js_scan *s)
{
    if (s->js_depth > 0)
        s->js_frame[s->js_depth - 1] &= (uint8_t)~JS_F_VALUE;
}

enum js_type
js_peek(struct js_scan *s)
{
    if (s->js_failed)
        return JS_ERROR;
    skip_ws(s);
    if (s->js_p >= s->js_end)
        return js_fail(s, "unexpected end of input"), JS_ERROR;
    switch (*s->js_p) {
    case '{':
        return JS_OBJECT;
    case '[':
        return JS_ARRAY;
    case '"':
        return JS_STRING;
    case 't':
        return JS_TRUE;
    case 'f':
        return JS_FALSE;
    case 'n':
        return JS_NULL;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return JS_NUMBER;
    default:
        return js_fail(s, "unexpected character"), JS_ERROR;
    }
}

static int
open_container(struct js_scan *s, char c, uint8_t flags)
{
    if (s->js_failed)
        return -1;
    skip_ws(s);
    if (s->js_p >= s->js_end || *s->js_p != c)
        return js_fail(s, c == '{' ? "expected an object" : "expected an array");
    if (s->js_depth >= JS_MAX_DEPTH)
        return js_fail(s, "nested too deep");
    took_value(s); /* the container is the parent's member, read from here on */
    s->js_frame[s->js_depth++] = flags;
    s->js_p++;
    return 0;
}

int
js_object_begin(struct js_scan *s)
{
    return open_container(s, '{', 0);
}

int
js_array_begin(struct js_scan *s)
{
    return open_container(s, '[', JS_F_ARRAY);
}

/* Past the separator before the next member of the open container: 1 when
 * one follows, 0 when the container closed here. */
static int
next_member(struct js_scan *s, char close)
{
    uint8_t *f;

    if (s->js_failed)
        return -1;
    if (s->js_depth == 0)
        return js_fail(s, "no open container"); /* a caller's bug */
    f = &s->js_frame[s->js_depth - 1];
    skip_ws(s);
    if (s->js_p >= s->js_end)
        return js_fail(s, "unexpected end of input");
    if (*s->js_p == close) {
        s->js_p++;
        s->js_depth--;
        return 0;
    }
    if (*f & JS_F_MEMBER) {
        if (*s->js_p != ',')
            return js_fail(s,
                           close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        s->js_p++;
        skip_ws(s);
    }
    *f |= JS_F_MEMBER;
    return 1;
}

/* Four hex digits at p into *cp. */
static int
hex4(const char *p, const char *end, unsigned *cp)
{
    unsigned v = 0;

    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *cp = v;
    return 0;
}

/* One escape after its backslash at s->js_p; leaves js_p past it. */
static int
scan_escape(struct js_scan *s)
{
    const char *p = s->js_p;
    unsigned cp, lo;

    if (p >= s->js_end)
        return js_fail(s, "unexpected end of input in a string");
    if (strchr("\"\\/bfnrt", *p) != NULL && *p != '\0') {
        s->js_p = p + 1;
        return 0;
    }
    if (*p != 'u' || hex4(p + 1, s->js_end, &cp) == -1)
        return js_fail(s, "invalid escape in a string");
    p += 5;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return js_fail(s, "lone low surrogate escape in a string");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (s->js_end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
            hex4(p + 2, s->js_end, &lo) == -1 || lo < 0xDC00 || lo > 0xDFFF)
            return js_fail(s, "lone high surrogate escape in a string");
        p += 6;
    }
    s->js_p = p;
    return 0;
}

/* One non-ASCII character at s->js_p, well-formed (utf8.c). */
static int
scan_utf8(struct js_scan *s)
{
    size_t n = utf8_char_len(s->js_p, (size_t)(s->js_end - s->js_p));

    if (n < 2)
        return js_fail(s, "invalid UTF-8 in a string");
    s->js_p += n;
    return 0;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* A high bit in each of the 8 bytes at p that is '"', '\\', a control byte
 * or not ASCII. Bit tricks from "Bit Twiddling Hacks": a zero byte of x
 * shows as a high bit of (x - ONES) & ~x. Bytes above a flagged one may be
 * flagged falsely (a borrow), but the lowest flag is always right, and on a
 * little-endian machine that is the first such byte in memory. */
static uint64_t
special8(const char *p)
{
    uint64_t x, q, b;

    memcpy(&x, p, 8);
    q = x ^ (ONES * '"');
    b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | (x - ONES * 0x20) | x) & HIGHS;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The same test as special8() for 16 bytes at once (SSE2 is part of x86-64):
 * a bit per byte that is '"', '\\', below 0x20 or not ASCII (a signed byte
 * below 0x20 is either). Half the instructions per byte of special8(). */
static unsigned
special16(const char *p)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                          _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                             _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));

    return (unsigned)_mm_movemask_epi8(m);
}
#endif

int
js_string(struct js_scan *s, struct js_str *out)
{
    const char *p;

    if (s->js_failed)
        return -1;
    skip_ws(s);
    if (s->js_p >= s->js_end || *s->js_p != '"')
        return js_fail(s, "expected a string");
    out->jv_raw = ++s->js_p;
    out->jv_escaped = 0;
    for (;;) {
        /* The hot loop: plain ASCII up to the next quote or backslash,
         * eight bytes a step while none of them is special. */
        p = s->js_p;
#if defined(__SSE2__)
        while (s->js_end - p >= 16) {
            unsigned m = special16(p);
            if (m != 0) {
                p += __builtin_ctz(m);
                goto found;
            }
            p += 16;
        }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (s->js_end - p >= 8) {
            uint64_t m = special8(p);
            if (m != 0) {
                p += __builtin_ctzll(m) >> 3;
                break;
            }
            p += 8;
        }
#endif
        while (p < s->js_end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 &&
               *p != '"' && *p != '\\')
            p++;
#if defined(__SSE2__)
    found:
#endif
        s->js_p = p;
        if (p >= s->js_end)
            return js_fail(s, "unterminated string");
        if (*p == '"') {
            out->jv_len = (size_t)(p - out->jv_raw);
            s->js_p = p + 1;
            took_value(s);
            return 0;
        }
        if (*p == '\\') {
            out->jv_escaped = 1;
            s->js_p = p + 1;
            if (scan_escape(s) == -1)
                return -1;
        } else if ((unsigned char)*p < 0x20) {
            return js_fail(s, "control character in a string");
        } else if (scan_utf8(s) == -1) {
            return -1;
        }
    }
}

int
js_object_next(struct js_scan *s, struct js_str *key)
{
    int rc;

    if (s->js_depth > 0 && (s->js_frame[s->js_depth - 1] & JS_F_ARRAY))
        return js_fail(s, "not in an object"); /* a caller's bug */
    if ((rc = next_member(s, '}')) != 1)
        return rc;
    if (s->js_p >= s->js_end || *s->js_p != '"')
        return js_fail(s, "expected a string key");
    if (js_string(s, key) == -1)
        return -1;
    skip_ws(s);
    if (s->js_p >= s->js_end || *s->js_p != ':')
        return js_fail(s, "expected ':' after a key");
    s->js_p++;
    s->js_frame[s->js_depth - 1] |= JS_F_VALUE;
    return 1;
}

int
js_array_next(struct js_scan *s)
{
    int rc;

    if (s->js_depth > 0 && !(s->js_frame[s->js_depth - 1] & JS_F_ARRAY))
        return js_fail(s, "not in an array"); /* a caller's bug */
    if ((rc = next_member(s, ']')) == 1)
        s->js_frame[s->js_depth - 1] |= JS_F_VALUE;
    return rc;
}

static int
is_digit(const char *p, const char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

int
js_number(struct js_scan *s, double *out)
{
    const char *p, *start;
    char buf[NUMBER_MAX + 1];

    if (s->js_failed)
        return -1;
    skip_ws(s);
    p = start = s->js_p;
    if (p < s->js_end && *p == '-')
        p++;
    if (p < s->js_end && *p == '0')
        p++;
    else if (is_digit(p, s->js_end))
        while (is_digit(p, s->js_end))
            p++;
    else
        return js_fail(s, "invalid number");
    if (p < s->js_end && *p == '.') {
        if (!is_digit(++p, s->js_end))
            return s->js_p = p, js_fail(s, "invalid number: no digit after '.'");
        while (is_digit(p, s->js_end))
            p++;
    }
    if (p < s->js_end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < s->js_end && (*p == '+' || *p == '-'))
            p++;
        if (!is_digit(p, s->js_end))
            return s->js_p = p, js_fail(s, "invalid number: no digit in the exponent");
        while (is_digit(p, s->js_end))
            p++;
    }
    if (out != NULL) {
        if ((size_t)(p - start) > NUMBER_MAX)
            return js_fail(s, "number too long");
        memcpy(buf, start, (size_t)(p - start));
        buf[p - start] = '\0';
        /* The grammar is checked above, so strtod reads all of it. */
        *out = strtod(buf, NULL);
    }
    s->js_p = p;
    took_value(s);
    return 0;
}

int
js_literal(struct js_scan *s, enum js_type *out)
{
    static const struct {
        const char *word;
        size_t len;
        enum js_type type;
    } lits[] = {{"true", 4, JS_TRUE}, {"false", 5, JS_FALSE}, {"null", 4, JS_NULL}};

    if (s->js_failed)
        return -1;
    skip_ws(s);
    for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
        if ((size_t)(s->js_end - s->js_p) >= lits[i].len &&
            memcmp(s->js_p, lits[i].word, lits[i].len) == 0) {
            s->js_p += lits[i].len;
            if (out != NULL)
                *out = lits[i].type;
            took_value(s);
            return 0;
        }
    }
    return js_fail(s, "invalid literal");
}

/* One scalar, or the opening of a container (which js_skip then walks). */
static int
skip_one(struct js_scan *s)
{
    struct js_str str;

    switch (js_peek(s)) {
    case JS_OBJECT:
        return js_object_begin(s);
    case JS_ARRAY:
        return js_array_begin(s);
    case JS_STRING:
        return js_string(s, &str);
    case JS_NUMBER:
        return js_number(s, NULL);
    case JS_TRUE:
    case JS_FALSE:
    case JS_NULL:
        return js_literal(s, NULL);
    default:
        return -1;
    }
}

int
js_skip(struct js_scan *s)
{
    unsigned base = s->js_depth;
    struct js_str key;
    int rc;

    /* Most skipped values are strings: no frame walk for those. */
    if (!s->js_failed && s->js_p < s->js_end && *s->js_p == '"')
        return js_string(s, &key);
    /* Iterative, over the reader's own frames: depth is capped there. */
    if (skip_one(s) == -1)
        return -1;
    while (s->js_depth > base) {
        if (s->js_frame[s->js_depth - 1] & JS_F_ARRAY)
            rc = js_array_next(s);
        else
            rc = js_object_next(s, &key);
        if (rc == -1)
            return -1;
        if (rc == 1 && skip_one(s) == -1)
            return -1;
    }
    return 0;
}

int
js_leave(struct js_scan *s, unsigned depth)
{
    struct js_str key;
    uint8_t f;
    int rc;

    while (s->js_depth > depth) {
        if (s->js_failed)
            return -1;
        f = s->js_frame[s->js_depth - 1];
        /* A member announced but not read: its value comes first. (The next
         * byte cannot tell: "[1," + "]" and "[1" + " 2]" are malformed.) */
        if ((f & JS_F_VALUE) && js_skip(s) == -1)
            return -1;
        rc = (f & JS_F_ARRAY) ? js_array_next(s) : js_object_next(s, &key);
        if (rc == -1 || (rc == 1 && js_skip(s) == -1))
            return -1;
    }
    return s->js_failed ? -1 : 0;
}

int
js_hold(struct js_scan *s, struct js_held *h)
{
    h->h_type = js_peek(s);
    if (h->h_type == JS_STRING)
        return js_string(s, &h->h_str);
    if (h->h_type == JS_NUMBER)
        return js_number(s, &h->h_num);
    return js_skip(s);
}

int
js_once(struct js_scan *s, unsigned *seen, unsigned bit, const char *key)
{
    char msg[96];

    if (!(*seen & bit)) {
        *seen |= bit;
        return 0;
    }
    snprintf(msg, sizeof(msg), "duplicate key \"%s\"", key);
    return js_fail(s, msg);
}

int
js_end(struct js_scan *s)
{
    if (s->js_failed)
        return -1;
    skip_ws(s);
    if (s->js_depth != 0)
        return js_fail(s, "unclosed container"); /* a caller's bug */
    if (s->js_p != s->js_end)
        return js_fail(s, "unexpected bytes after the value");
    return 0;
}

/* Decodes one unit at *pp (a character or an escape, already validated)
 * into out (4 bytes); returns how many bytes it gives. */
static size_t
decode_one(const char **pp, const char *end, char *out, int *has_nul)
{
    const char *p = *pp;
    unsigned cp = 0, lo = 0xDC00; /* set by hex4: the text is validated */
    char e;

    if (*p != '\\') {
        /* A raw character whole (its UTF-8 is validated), so that
         * js_str_copy never cuts one. */
        unsigned char c = (unsigned char)*p;
        size_t k = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

        memcpy(out, p, k);
        *pp = p + k;
        return k;
    }
    e = p[1];
    if (e != 'u') {
        *pp = p + 2;
        /* '"', '\\' and '/' stand for themselves. */
        out[0] = e == 'b'   ? '\b'
                 : e == 'f' ? '\f'
                 : e == 'n' ? '\n'
                 : e == 'r' ? '\r'
                 : e == 't' ? '\t'
                            : e;
        return 1;
    }
    hex4(p + 2, end, &cp);
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        hex4(p + 2, end, &lo);
        p += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    *pp = p;
    if (cp == 0 && has_nul != NULL)
        *has_nul = 1;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes v into dst when dst is not NULL; returns the decoded length and
 * whether a U+0000 was seen. */
static size_t
decode(const struct js_str *v, char *dst, int *has_nul)
{
    const char *p = v->jv_raw, *end = v->jv_raw + v->jv_len;
    char unit[4];
    size_t n = 0, k;

    if (!v->jv_escaped) {
        if (dst != NULL)
            memcpy(dst, p, v->jv_len);
        return v->jv_len;
    }
    while (p < end) {
        k = decode_one(&p, end, unit, has_nul);
        if (dst != NULL)
            memcpy(dst + n, unit, k);
        n += k;
    }
    return n;
}

size_t
js_str_len(const struct js_str *v)
{
    return decode(v, NULL, NULL);
}

size_t
js_str_decode(const struct js_str *v, char *dst)
{
    size_t n = decode(v, dst, NULL);

    dst[n] = '\0';
    return n;
}

size_t
js_str_copy(const struct js_str *v, char *dst, size_t cap)
{
    const char *p = v->jv_raw, *end = v->jv_raw + v->jv_len;
    size_t n = 0, full = 0, k;
    char unit[4];
    int cut = 0;

    if (!v->jv_escaped) {
        n = v->jv_len < cap ? v->jv_len : cap - 1;
        while (n < v->jv_len && n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
            n--; /* not inside a character: before its lead byte */
        memcpy(dst, p, n);
        dst[n] = '\0';
        return v->jv_len;
    }
    while (p < end) {
        k = decode_one(&p, end, unit, NULL);
        if (!cut && n + k < cap) {
            memcpy(dst + n, unit, k);
            n += k;
        } else {
            cut = 1;
        }
        full += k;
    }
    dst[n] = '\0';
    return full;
}

char *
js_strdup(const struct js_str *v, int *has_nul)
{
    int nul = 0;
    size_t n = decode(v, NULL, &nul);
    char *d;

    if (has_nul != NULL)
        *has_nul = nul;
    if (nul || (d = malloc(n + 1)) == NULL)
        return NULL;
    if (!v->jv_escaped) {
        memcpy(d, v->jv_raw, n);
        d[n] = '\0';
        return d;
    }
    js_str_decode(v, d);
    return d;
}

char *
js_strdup_pool(const struct js_str *v, struct strpool *pool, int *has_nul)
{
    int nul = 0;
    size_t n;
    char *d;

    if (!v->jv_escaped) { /* the usual case: a validated raw string has no NUL */
        if (has_nul != NULL)
            *has_nul = 0;
        return strpool_dup(pool, v->jv_raw, v->jv_len);
    }
    n = decode(v, NULL, &nul);
    if (has_nul != NULL)
        *has_nul = nul;
    if (nul || (d = strpool_alloc(pool, n + 1)) == NULL)
        return NULL;
    js_str_decode(v, d);
    return d;
}

int
js_pool_string(struct js_scan *s, struct strpool *pool, unsigned flags, char **dst,
               int *oom)
{
    struct js_str v;
    int nul = 0;

    if (js_peek(s) != JS_STRING)
        return js_skip(s);
    if (js_string(s, &v) == -1)
        return -1;
    if (v.jv_len == 0 && (flags & JS_POOL_NONEMPTY))
        return 0;
    if ((*dst = js_strdup_pool(&v, pool, &nul)) == NULL && !nul)
        return *oom = 1, -1;
    return 0;
}

/* js_str_eq() of an escaped v, unit by unit, so a long value needs no buffer.
 * Apart: its unit buffer would cost every plain comparison a stack guard. */
static int __attribute__((noinline))
str_eq_escaped(const struct js_str *v, const char *lit)
{
    const char *p = v->jv_raw, *end = v->jv_raw + v->jv_len;
    size_t n = strlen(lit), at = 0, k;
    char unit[4];

    while (p < end) {
        k = decode_one(&p, end, unit, NULL);
        if (at + k > n || memcmp(lit + at, unit, k) != 0)
            return 0;
        at += k;
    }
    return at == n;
}

int
js_str_eq(const struct js_str *v, const char *lit)
{
    const char *p = v->jv_raw;
    size_t at;

    if (v->jv_escaped)
        return str_eq_escaped(v, lit);
    /* Most calls ask "is this key X?" of a short key, and the answer is no:
     * a byte loop tells at the first difference, without strlen or memcmp
     * (a validated raw string holds no NUL byte, so lit's end is a
     * difference too). */
    for (at = 0; at < v->jv_len; at++)
        if (p[at] != lit[at])
            return 0;
    return lit[at] == '\0';
}
