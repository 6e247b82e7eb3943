/* test_jscan.c -- the pull JSON reader: what it accepts, refuses, and reads */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jscan.h"
#include "strpool.h"

/* A document with its length: the tables hold NUL bytes too. */
struct doc {
    const char *d_text;
    size_t d_len;
    const char *d_why; /* refused documents: a substring of the reason, or NULL */
};

#define DOC(s)                                                                           \
    {                                                                                    \
        s, sizeof(s) - 1, NULL                                                           \
    }
#define BAD(s, why)                                                                      \
    {                                                                                    \
        s, sizeof(s) - 1, why                                                            \
    }

/*
 * The bytes copied into a buffer of exactly len bytes, so that AddressSanitizer
 * sees any read past the end (the reader takes no terminator). The caller
 * frees it.
 */
static char *
exact_copy(const char *text, size_t len)
{
    char *b = malloc(len > 0 ? len : 1);

    assert_non_null(b);
    if (len > 0)
        memcpy(b, text, len);
    return b;
}

/* One whole value, skipped, then the end: what a parser that reads nothing
 * still checks. 0 or -1; err gets js_err. */
static int
walk(const char *text, size_t len, char *err, size_t errlen)
{
    struct js_scan s;
    char *b = exact_copy(text, len);
    int rc;

    js_init(&s, b, len);
    rc = js_skip(&s) == 0 && js_end(&s) == 0 ? 0 : -1;
    assert_int_equal(s.js_failed, rc == -1);
    snprintf(err, errlen, "%s", s.js_err);
    free(b);
    return rc;
}

/* A reason followed by exactly " (line L, column C)" with L, C >= 1; the
 * line is returned. */
static int
assert_positioned(const char *err)
{
    const char *at = strstr(err, " (line ");
    int line = 0, col = 0, end = 0;

    if (at == NULL)
        fail_msg("no position in \"%s\"", err);
    assert_true(at > err); /* a reason comes first */
    assert_int_equal(sscanf(at, " (line %d, column %d)%n", &line, &col, &end), 2);
    assert_true(end > 0 && at[end] == '\0');
    assert_true(line >= 1 && col >= 1);
    return line;
}

static void
assert_refused(const struct doc *d)
{
    char err[sizeof(((struct js_scan *)0)->js_err)];

    if (walk(d->d_text, d->d_len, err, sizeof(err)) != -1)
        fail_msg("accepted: \"%.*s\" (%zu bytes)", (int)d->d_len, d->d_text, d->d_len);
    assert_positioned(err);
    if (d->d_why != NULL && strstr(err, d->d_why) == NULL)
        fail_msg("\"%.*s\": \"%s\", wanted \"%s\"", (int)d->d_len, d->d_text, err,
                 d->d_why);
}

static void
assert_accepted(const char *text, size_t len)
{
    char err[sizeof(((struct js_scan *)0)->js_err)];

    if (walk(text, len, err, sizeof(err)) != 0)
        fail_msg("refused: \"%.*s\": %s", (int)len, text, err);
    assert_string_equal(err, "");
}

static const struct doc valid[] = {
    DOC("{}"),
    DOC("[]"),
    DOC("0"),
    DOC("-0"),
    DOC("7"),
    DOC("-0.5"),
    DOC("1.5e-3"),
    DOC("1E+2"),
    DOC("1e-0"),
    DOC("0e0"),
    DOC("123456789012345678901234567890"),
    DOC("1e400"), /* the grammar's; the range is the caller's to judge */
    DOC("-1e-400"),
    DOC("\"\""),
    DOC("\"abc\""),
    DOC("true"),
    DOC("false"),
    DOC("null"),
    DOC(" \t\r\n[1, 2 ,{\"a\" : [ ]} , \"x\"]\r\n "),
    DOC("[[[]],{},[{}]]"),
    DOC("{\"a\":{\"b\":{\"c\":null}},\"d\":[true,false,null,0,\"\"]}"),
    DOC("{\"a\":1,\"a\":2}"), /* duplicates: the caller's concern */
    DOC("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""),
    DOC("\"\\u00e9\\u00C9\\u20ac\\ud83d\\ude00\\uDBFF\\uDFFF\""),
    DOC("\"\\u0000\""),
    DOC("{\"\\u0000\":1}"),
    DOC("\"\x7f\""),
    /* UTF-8 at each end of each range of RFC 3629's table */
    DOC("\"\xc2\x80\xdf\xbf\""),
    DOC("\"\xe0\xa0\x80\xe0\xbf\xbf\xe1\x80\x80\xec\xbf\xbf\""),
    DOC("\"\xed\x80\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\""),
    DOC("\"\xf0\x90\x80\x80\xf0\xbf\xbf\xbf\xf1\x80\x80\x80\xf3\xbf\xbf\xbf\""),
    DOC("\"\xf4\x80\x80\x80\xf4\x8f\xbf\xbf\""),
    DOC("\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\""),
    DOC("{\"k\xc3\xa9y\":\"v\"}"),
};

static void
test_valid(void **state)
{
    char *big;
    size_t i, n;

    for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        assert_accepted(valid[i].d_text, valid[i].d_len);

    /* Skipping a number has no length cap (only converting one has). */
    n = 5000;
    big = malloc(n);
    assert_non_null(big);
    big[0] = '-';
    memset(big + 1, '9', n - 1);
    assert_accepted(big, n);
    free(big);
}

static const struct doc invalid[] = {
    /* empty, whitespace only */
    BAD("", "unexpected end of input"),
    BAD(" \t\r\n ", "unexpected end of input"),
    /* trailing and stray commas */
    BAD("[1,]", "unexpected character"),
    BAD("[1,2,]", "unexpected character"),
    BAD("{\"a\":1,}", "expected a string key"),
    BAD("[,1]", "unexpected character"),
    BAD("[,]", "unexpected character"),
    BAD("{,}", "expected a string key"),
    BAD("{,\"a\":1}", "expected a string key"),
    BAD("[1,,2]", "unexpected character"),
    BAD(",", "unexpected character"),
    /* keys and colons */
    BAD("{\"a\" 1}", "expected ':'"),
    BAD("{\"a\"}", "expected ':'"),
    BAD("{\"a\",1}", "expected ':'"),
    BAD("{\"a\"::1}", "unexpected character"),
    BAD("{\"a\":}", "unexpected character"),
    BAD("{1:2}", "expected a string key"),
    BAD("{a:1}", "expected a string key"),
    BAD("{'a':1}", "expected a string key"),
    BAD("{null:1}", "expected a string key"),
    BAD("{\"a\":1 \"b\":2}", "expected ',' or '}'"),
    BAD("[1 2]", "expected ',' or ']'"),
    BAD("[1}", "expected ',' or ']'"),
    BAD("{\"a\":1]", "expected ',' or '}'"),
    BAD("[}", "unexpected character"),
    BAD("{]", "expected a string key"),
    BAD("]", "unexpected character"),
    BAD("}", "unexpected character"),
    BAD(":", "unexpected character"),
    /* numbers */
    BAD("01", "unexpected bytes after the value"),
    BAD("00", "unexpected bytes after the value"),
    BAD("-01", "unexpected bytes after the value"),
    BAD("[01]", "expected ',' or ']'"),
    BAD("{\"a\":01}", "expected ',' or '}'"),
    BAD("-", "invalid number"),
    BAD("[-]", "invalid number"),
    BAD("--1", "invalid number"),
    BAD("-a", "invalid number"),
    BAD("- 1", "invalid number"),
    BAD("1.", "no digit after '.'"),
    BAD("[1.]", "no digit after '.'"),
    BAD("1.e5", "no digit after '.'"),
    BAD("1e", "no digit in the exponent"),
    BAD("1E", "no digit in the exponent"),
    BAD("1e+", "no digit in the exponent"),
    BAD("1e-", "no digit in the exponent"),
    BAD("[1e]", "no digit in the exponent"),
    BAD("1e+-1", "no digit in the exponent"),
    BAD("+1", "unexpected character"),
    BAD(".5", "unexpected character"),
    BAD("0x10", "unexpected bytes after the value"),
    BAD("1.5.2", "unexpected bytes after the value"),
    BAD("Infinity", "unexpected character"),
    BAD("NaN", "unexpected character"),
    BAD("-Infinity", "invalid number"),
    /* escapes */
    BAD("\"\\x\"", "invalid escape"),
    BAD("\"\\a\"", "invalid escape"),
    BAD("\"\\'\"", "invalid escape"),
    BAD("\"\\U0041\"", "invalid escape"),
    BAD("\"\\u12G4\"", "invalid escape"),
    BAD("\"\\u12\"", "invalid escape"),
    BAD("\"\\u\"", "invalid escape"),
    BAD("\"\\u-123\"", "invalid escape"),
    BAD("\"\\ \"", "invalid escape"),
    BAD("\"\\\0\"", "invalid escape"),
    BAD("\"\\", "unexpected end of input in a string"),
    BAD("\"\\u00", "invalid escape"),
    /* surrogates both ways, alone or ill-paired */
    BAD("\"\\ud800\"", "lone high surrogate"),
    BAD("\"\\uDBFF\"", "lone high surrogate"),
    BAD("\"\\ud83dx\"", "lone high surrogate"),
    BAD("\"\\ud83d\\u0041\"", "lone high surrogate"),
    BAD("\"\\ud83d\\ud83d\"", "lone high surrogate"),
    BAD("\"\\ud83d\\n\"", "lone high surrogate"),
    BAD("\"\\ud83d\\ude0\"", "lone high surrogate"),
    BAD("\"\\ud83d", "lone high surrogate"),
    BAD("\"\\udc00\"", "lone low surrogate"),
    BAD("\"\\uDFFF\"", "lone low surrogate"),
    BAD("\"\\ude00\\ud83d\"", "lone low surrogate"),
    BAD("\"a\\ude00\"", "lone low surrogate"),
    /* raw control characters in a string */
    BAD("\"\0\"", "control character"),
    BAD("\"\x01\"", "control character"),
    BAD("\"a\nb\"", "control character"),
    BAD("\"\t\"", "control character"),
    BAD("\"\r\"", "control character"),
    BAD("\"\x1f\"", "control character"),
    BAD("{\"a\x1f\":1}", "control character"),
    /* invalid UTF-8 */
    BAD("\"\xc0\xaf\"", "invalid UTF-8"),         /* overlong '/' */
    BAD("\"\xc1\xbf\"", "invalid UTF-8"),         /* overlong */
    BAD("\"\xe0\x80\x80\"", "invalid UTF-8"),     /* overlong U+0000 */
    BAD("\"\xe0\x9f\xbf\"", "invalid UTF-8"),     /* overlong U+07FF */
    BAD("\"\xed\xa0\x80\"", "invalid UTF-8"),     /* U+D800 */
    BAD("\"\xed\xbf\xbf\"", "invalid UTF-8"),     /* U+DFFF */
    BAD("\"\xf0\x80\x80\x80\"", "invalid UTF-8"), /* overlong */
    BAD("\"\xf0\x8f\xbf\xbf\"", "invalid UTF-8"), /* overlong U+FFFF */
    BAD("\"\xf4\x90\x80\x80\"", "invalid UTF-8"), /* U+110000 */
    BAD("\"\xf5\x80\x80\x80\"", "invalid UTF-8"),
    BAD("\"\xf8\x88\x80\x80\x80\"", "invalid UTF-8"),
    BAD("\"\xfe\"", "invalid UTF-8"),
    BAD("\"\xff\"", "invalid UTF-8"),
    BAD("\"\xc3\"", "invalid UTF-8"), /* truncated before the quote */
    BAD("\"\xe2\x82\"", "invalid UTF-8"),
    BAD("\"\xf0\x9f\x98\"", "invalid UTF-8"),
    BAD("\"\xc3", "invalid UTF-8"), /* truncated by the end of input */
    BAD("\"\xe2\x82", "invalid UTF-8"),
    BAD("\"\xf0\x9f\x98", "invalid UTF-8"),
    BAD("\"\xc3(\"", "invalid UTF-8"),
    BAD("\"\xe2(\xa1\"", "invalid UTF-8"),
    BAD("\"\xe2\x82(\"", "invalid UTF-8"),
    BAD("\"\xf0\x9f\x98(\"", "invalid UTF-8"),
    BAD("\"\xf0\x9f\x98\x80\x80\"", "invalid UTF-8"), /* one continuation too many */
    BAD("\"\x80\"", "invalid UTF-8"),                 /* stray continuations */
    BAD("\"\xbf\"", "invalid UTF-8"),
    BAD("\"a\x80z\"", "invalid UTF-8"),
    BAD("{\"\x80\":1}", "invalid UTF-8"),
    BAD("\xc3\xa9", "unexpected character"),       /* outside a string */
    BAD("\xef\xbb\xbf{}", "unexpected character"), /* a byte order mark */
    /* bytes after the value */
    BAD("{}x", "unexpected bytes after the value"),
    BAD("{} {}", "unexpected bytes after the value"),
    BAD("[]]", "unexpected bytes after the value"),
    BAD("{}}", "unexpected bytes after the value"),
    BAD("1 2", "unexpected bytes after the value"),
    BAD("\"a\"\"b\"", "unexpected bytes after the value"),
    BAD("null,", "unexpected bytes after the value"),
    BAD("1\0", "unexpected bytes after the value"),
    BAD("{}\0", "unexpected bytes after the value"),
    BAD("0 \f", "unexpected bytes after the value"),
    /* literals misspelt */
    BAD("tru", "invalid literal"),
    BAD("t", "invalid literal"),
    BAD("nul", "invalid literal"),
    BAD("fals", "invalid literal"),
    BAD("True", "unexpected character"),
    BAD("NULL", "unexpected character"),
    BAD("nil", "invalid literal"),
    BAD("truex", "unexpected bytes after the value"),
    BAD("true1", "unexpected bytes after the value"),
    BAD("falsey", "unexpected bytes after the value"),
    BAD("nulll", "unexpected bytes after the value"),
    BAD("[tru]", "invalid literal"),
    BAD("[truex]", "expected ',' or ']'"),
    BAD("{\"a\":nul}", "invalid literal"),
    /* not closed, or not JSON whitespace */
    BAD("[", "unexpected end of input"),
    BAD("{", "unexpected end of input"),
    BAD("[1", "unexpected end of input"),
    BAD("[1,", "unexpected end of input"),
    BAD("{\"a\":1", "unexpected end of input"),
    BAD("{\"a\":", "unexpected end of input"),
    BAD("{\"a\"", "expected ':'"),
    BAD("\"abc", "unterminated string"),
    BAD("[\"abc]", "unterminated string"),
    BAD("\0", "unexpected character"),
    BAD("[1,\0 2]", "unexpected character"),
    BAD("\f1", "unexpected character"),
    BAD("\v1", "unexpected character"),
    BAD("[1,\xc2\xa0 2]", "unexpected character"), /* U+00A0 */
    BAD("'a'", "unexpected character"),
    BAD("/* c */ 1", "unexpected character"),
};

static void
test_invalid(void **state)
{
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        assert_refused(&invalid[i]);
}

/* "a...a" of n bytes with ins (k bytes) at pos, quoted, in an exact buffer
 * (the reader looks at 8 bytes a step: every alignment matters). *len gets
 * its length; the caller frees it. */
static char *
string_with(size_t n, size_t pos, const char *ins, size_t k, size_t *len)
{
    char *b = malloc(n + k + 2);

    assert_non_null(b);
    b[0] = '"';
    memset(b + 1, 'a', n);
    memmove(b + 1 + pos + k, b + 1 + pos, n - pos);
    memcpy(b + 1 + pos, ins, k);
    b[n + k + 1] = '"';
    *len = n + k + 2;
    return b;
}

static void
test_string_bytes(void **state)
{
    static const struct {
        const char *i_bytes;
        size_t i_len;
        const char *i_why; /* NULL: accepted */
        size_t i_decoded;  /* its decoded length, when accepted */
    } ins[] = {
        {"\x1f", 1, "control character in a string", 0},
        {"\0", 1, "control character in a string", 0},
        {"\x80", 1, "invalid UTF-8 in a string", 0},
        {"\xff", 1, "invalid UTF-8 in a string", 0},
        {"\xc3\xa9", 2, NULL, 2},
        {"\xf0\x9f\x98\x80", 4, NULL, 4},
        {"\x7f", 1, NULL, 1},
        {"\\n", 2, NULL, 1},
        {"\\u00e9", 6, NULL, 2},
        {"\\q", 2, "invalid escape in a string", 0},
    };
    char err[sizeof(((struct js_scan *)0)->js_err)], want[64], *b;
    struct js_scan s;
    struct js_str v;
    size_t len;

    for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
        for (size_t n = 0; n <= 24; n++) {
            for (size_t pos = 0; pos <= n; pos++) {
                b = string_with(n, pos, ins[i].i_bytes, ins[i].i_len, &len);
                js_init(&s, b, len);
                if (ins[i].i_why == NULL) {
                    assert_int_equal(js_string(&s, &v), 0);
                    assert_int_equal(js_end(&s), 0);
                    assert_ptr_equal(v.jv_raw, b + 1);
                    assert_int_equal(v.jv_len, n + ins[i].i_len);
                    assert_int_equal(js_str_len(&v), n + ins[i].i_decoded);
                } else {
                    assert_int_equal(js_string(&s, &v), -1);
                    /* at the bad byte (an escape's: after the backslash) */
                    snprintf(want, sizeof(want), "%s (line 1, column %zu)", ins[i].i_why,
                             pos + 2 + (ins[i].i_bytes[0] == '\\'));
                    assert_string_equal(s.js_err, want);
                }
                free(b);
            }
        }
    }

    /* A quote ends the string wherever it is; what follows is not JSON. */
    for (size_t n = 1; n <= 24; n++) {
        for (size_t pos = 0; pos < n; pos++) {
            b = string_with(n, pos, "\"", 1, &len);
            assert_int_equal(walk(b, len, err, sizeof(err)), -1);
            snprintf(want, sizeof(want),
                     "unexpected bytes after the value (line 1, column %zu)", pos + 3);
            assert_string_equal(err, want);
            js_init(&s, b, len);
            assert_int_equal(js_string(&s, &v), 0);
            assert_int_equal(v.jv_len, pos);
            free(b);
        }
    }
}

/* Documents whose every proper prefix is malformed: none is a bare number,
 * and none ends in whitespace. */
static const struct doc whole[] = {
    DOC("{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"p-1\",\"uid\":\"u\"},"
        "\"n\":-12.5e+3,\"z\":0,\"b\":[true,false,null],\"e\":{},\"a\":[]}]}"),
    DOC("[\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\",\"h\xc3\xa9 \xe2\x82\xac "
        "\xf0\x9f\x98\x80\",1E-2,-0]"),
    DOC("{ \"a\" : [ 1 , { \"b\" : null } ] ,\n\t\"c\" : \"d\" }"),
    DOC("\"\\u0000\xf4\x8f\xbf\xbf\""),
    DOC("true"),
    DOC("false"),
    DOC("null"),
};

static void
test_truncated(void **state)
{
    char err[sizeof(((struct js_scan *)0)->js_err)];

    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
        const struct doc *d = &whole[i];

        assert_accepted(d->d_text, d->d_len);
        for (size_t n = 0; n < d->d_len; n++) {
            if (walk(d->d_text, n, err, sizeof(err)) != -1)
                fail_msg("accepted the first %zu bytes of \"%s\"", n, d->d_text);
            assert_positioned(err);
        }
    }
}

/* n arrays in one another, or n objects when obj. The caller frees it. */
static char *
nest(size_t n, int obj, size_t *len)
{
    size_t open = obj ? 5 : 1, i; /* {"a": */
    char *b = malloc(n * (open + 1) + 1);

    assert_non_null(b);
    *len = 0;
    for (i = 0; i < n; i++) {
        memcpy(b + *len, obj ? "{\"a\":" : "[", open);
        *len += open;
    }
    b[(*len)++] = '1';
    for (i = 0; i < n; i++)
        b[(*len)++] = obj ? '}' : ']';
    return b;
}

static void
test_depth(void **state)
{
    char err[sizeof(((struct js_scan *)0)->js_err)], *b;
    struct js_scan s;
    size_t len;
    int obj;

    for (obj = 0; obj <= 1; obj++) {
        b = nest(JS_MAX_DEPTH, obj, &len);
        assert_accepted(b, len);
        free(b);
        b = nest(JS_MAX_DEPTH + 1, obj, &len);
        assert_int_equal(walk(b, len, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "nested too deep"));
        /* at the container that is one too many */
        if (obj)
            assert_non_null(strstr(err, "(line 1, column 2561)"));
        else
            assert_non_null(strstr(err, "(line 1, column 513)"));
        free(b);
    }

    /* The same limit through the reading API. */
    b = nest(JS_MAX_DEPTH + 1, 0, &len);
    js_init(&s, b, len);
    for (int i = 0; i < JS_MAX_DEPTH; i++) {
        assert_int_equal(js_array_begin(&s), 0);
        assert_int_equal(s.js_depth, (unsigned)i + 1);
        if (i < JS_MAX_DEPTH - 1)
            assert_int_equal(js_array_next(&s), 1);
    }
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_ARRAY);
    assert_int_equal(js_array_begin(&s), -1);
    assert_non_null(strstr(s.js_err, "nested too deep"));
    free(b);
}

/* An error on line 3 says line 3; columns count bytes from 1. */
static void
test_position(void **state)
{
    static const struct {
        const char *p_text;
        const char *p_where;
    } cases[] = {
        {"{\n  \"a\": 1,\n  \"b\": tru\n}", "invalid literal (line 3, column 8)"},
        {"[\r\n1,\r\n\r\n x]", "unexpected character (line 4, column 2)"},
        {"x", "unexpected character (line 1, column 1)"},
        {"", "unexpected end of input (line 1, column 1)"},
        {"[1,\n", "unexpected end of input (line 2, column 1)"},
        {"\"\xc3\xa9\" x", "unexpected bytes after the value (line 1, column 6)"},
        {"\n\n\"ab\\qc\"", "invalid escape in a string (line 3, column 5)"},
        {"\"ab\xc0\xaf\"", "invalid UTF-8 in a string (line 1, column 4)"},
        {"[1.x]", "invalid number: no digit after '.' (line 1, column 4)"},
        {"[1,\n 2 3]", "expected ',' or ']' (line 2, column 4)"},
        {"{\"a\"\n\n\n:1,\"b\"}", "expected ':' after a key (line 4, column 7)"},
    };
    char err[sizeof(((struct js_scan *)0)->js_err)];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(walk(cases[i].p_text, strlen(cases[i].p_text), err, sizeof(err)),
                         -1);
        assert_string_equal(err, cases[i].p_where);
    }
}

/* Members and elements come in document order; closing is reported once. */
static void
test_sequence(void **state)
{
    static const char text[] =
        " {\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":[1,{\"e\":2}]},\"f\":\"g\","
        "\"h\":{},\"i\":[]} ";
    char *b = exact_copy(text, sizeof(text) - 1);
    struct js_scan s;
    struct js_str k, v;
    enum js_type t;
    double x;

    js_init(&s, b, sizeof(text) - 1);
    assert_int_equal(js_peek(&s), JS_OBJECT);
    assert_int_equal(js_peek(&s), JS_OBJECT); /* peeking consumes nothing */
    assert_int_equal(js_object_begin(&s), 0);
    assert_int_equal(s.js_depth, 1);

    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "a"));
    assert_ptr_equal(k.jv_raw, b + 3);
    assert_int_equal(k.jv_len, 1);
    assert_int_equal(js_peek(&s), JS_NUMBER);
    assert_int_equal(js_number(&s, &x), 0);
    assert_true(x == 1.0);

    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "b"));
    assert_int_equal(js_peek(&s), JS_ARRAY);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(s.js_depth, 2);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_TRUE);
    assert_int_equal(js_literal(&s, &t), 0);
    assert_int_equal(t, JS_TRUE);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_FALSE);
    assert_int_equal(js_literal(&s, &t), 0);
    assert_int_equal(t, JS_FALSE);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_NULL);
    assert_int_equal(js_literal(&s, NULL), 0);
    assert_int_equal(js_array_next(&s), 0);
    assert_int_equal(s.js_depth, 1);

    /* A whole nested value skipped; reading goes on after it. */
    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "c"));
    assert_int_equal(js_skip(&s), 0);
    assert_int_equal(s.js_depth, 1);

    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "f"));
    assert_int_equal(js_peek(&s), JS_STRING);
    assert_int_equal(js_string(&s, &v), 0);
    assert_int_equal(v.jv_len, 1);
    assert_int_equal(v.jv_escaped, 0);
    assert_int_equal(v.jv_raw[0], 'g');

    /* Empty containers close on the first call. */
    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "h"));
    assert_int_equal(js_object_begin(&s), 0);
    assert_int_equal(js_object_next(&s, &k), 0);
    assert_int_equal(js_object_next(&s, &k), 1);
    assert_true(js_str_eq(&k, "i"));
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 0);

    assert_int_equal(js_object_next(&s, &k), 0);
    assert_int_equal(s.js_depth, 0);
    assert_int_equal(js_end(&s), 0);
    assert_int_equal(js_end(&s), 0);
    assert_string_equal(s.js_err, "");

    /* Past the end: nothing more to read. */
    assert_int_equal(js_array_next(&s), -1);
    assert_non_null(strstr(s.js_err, "no open container"));
    free(b);
}

/* Calls that do not fit the document or the walk fail with a reason. */
static void
test_misuse(void **state)
{
    static const struct {
        const char *m_text;
        int m_call;
        const char *m_why;
    } cases[] = {
        {"[]", 0, "expected an object"},     {"{}", 1, "expected an array"},
        {"1", 2, "expected a string"},       {"\"1\"", 3, "invalid number"},
        {"1", 4, "invalid literal"},         {"[1]", 5, "not in an object"},
        {"{\"a\":1}", 6, "not in an array"}, {"[1]", 7, "unclosed container"},
        {"1", 8, "no open container"},       {"", 9, "unexpected end of input"},
    };
    struct js_scan s;
    struct js_str v;
    char *b;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].m_text);
        int rc = 0;

        b = exact_copy(cases[i].m_text, n);
        js_init(&s, b, n);
        switch (cases[i].m_call) {
        case 0:
            rc = js_object_begin(&s);
            break;
        case 1:
            rc = js_array_begin(&s);
            break;
        case 2:
            rc = js_string(&s, &v);
            break;
        case 3:
            rc = js_number(&s, NULL);
            break;
        case 4:
            rc = js_literal(&s, NULL);
            break;
        case 5:
            assert_int_equal(js_array_begin(&s), 0);
            rc = js_object_next(&s, &v);
            break;
        case 6:
            assert_int_equal(js_object_begin(&s), 0);
            rc = js_array_next(&s);
            break;
        case 7:
            assert_int_equal(js_array_begin(&s), 0);
            rc = js_end(&s);
            break;
        case 8:
            rc = js_object_next(&s, &v);
            break;
        case 9:
            rc = js_peek(&s) == JS_ERROR ? -1 : 0;
            break;
        }
        assert_int_equal(rc, -1);
        assert_non_null(strstr(s.js_err, cases[i].m_why));
        assert_positioned(s.js_err);
        free(b);
    }
}

/* The one string value of text, read into *v; b is the buffer (freed by the
 * caller). */
static char *
read_string(const char *text, struct js_str *v)
{
    size_t n = strlen(text);
    char *b = exact_copy(text, n);
    struct js_scan s;

    js_init(&s, b, n);
    if (js_string(&s, v) != 0 || js_end(&s) != 0)
        fail_msg("\"%s\": %s", text, s.js_err);
    return b;
}

static void
test_slices(void **state)
{
    struct js_str v;
    char *b, dst[16];

    b = read_string("  \"abc\\\"d\"  ", &v);
    assert_ptr_equal(v.jv_raw, b + 3);
    assert_int_equal(v.jv_len, 6); /* abc\"d as written */
    assert_int_equal(v.jv_escaped, 1);
    assert_int_equal(js_str_len(&v), 5);
    assert_int_equal(js_str_decode(&v, dst), 5);
    assert_string_equal(dst, "abc\"d");
    free(b);

    b = read_string("\"h\xc3\xa9\"", &v);
    assert_ptr_equal(v.jv_raw, b + 1);
    assert_int_equal(v.jv_len, 3);
    assert_int_equal(v.jv_escaped, 0);
    assert_int_equal(js_str_len(&v), 3);
    assert_int_equal(js_str_decode(&v, dst), 3);
    assert_string_equal(dst, "h\xc3\xa9");
    free(b);

    b = read_string("\"\"", &v);
    assert_int_equal(v.jv_len, 0);
    assert_int_equal(js_str_len(&v), 0);
    dst[0] = 'x';
    assert_int_equal(js_str_decode(&v, dst), 0);
    assert_string_equal(dst, "");
    free(b);
}

static void
test_decode(void **state)
{
    static const struct {
        const char *e_text;
        const char *e_want;
        size_t e_len;
    } cases[] = {
        {"\"\\u00e9\"", "\xc3\xa9", 2},
        {"\"\\u00C9\"", "\xc3\x89", 2},
        {"\"\\u0041\\u007f\\u0080\\u07ff\"", "A\x7f\xc2\x80\xdf\xbf", 6},
        {"\"\\u0800\\u20ac\\uffff\"", "\xe0\xa0\x80\xe2\x82\xac\xef\xbf\xbf", 9},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\uD800\\uDC00\\udbff\\udfff\"", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 8},
        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8},
        {"\"caf\\u00e9 \xe2\x82\xac\\n\"", "caf\xc3\xa9 \xe2\x82\xac\n", 10},
    };
    struct js_str v;
    char *b, *d, dst[64];
    int nul;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b = read_string(cases[i].e_text, &v);
        assert_int_equal(v.jv_escaped, 1);
        assert_int_equal(js_str_len(&v), cases[i].e_len);
        memset(dst, 'x', sizeof(dst));
        assert_int_equal(js_str_decode(&v, dst), cases[i].e_len);
        assert_memory_equal(dst, cases[i].e_want, cases[i].e_len + 1);
        nul = -1;
        d = js_strdup(&v, &nul);
        assert_non_null(d);
        assert_int_equal(nul, 0);
        assert_string_equal(d, cases[i].e_want);
        free(d);
        d = js_strdup(&v, NULL);
        assert_non_null(d);
        assert_string_equal(d, cases[i].e_want);
        free(d);
        assert_true(js_str_eq(&v, cases[i].e_want));
        free(b);
    }

    /* Unescaped: a copy. */
    b = read_string("\"plain\"", &v);
    d = js_strdup(&v, &nul);
    assert_non_null(d);
    assert_int_equal(nul, 0);
    assert_string_equal(d, "plain");
    free(d);
    free(b);

    /* U+0000: decodable with its length, but not as a C string. */
    b = read_string("\"a\\u0000b\"", &v);
    assert_int_equal(js_str_len(&v), 3);
    assert_int_equal(js_str_decode(&v, dst), 3);
    assert_memory_equal(dst, "a\0b", 4);
    nul = 0;
    assert_null(js_strdup(&v, &nul));
    assert_int_equal(nul, 1);
    assert_null(js_strdup(&v, NULL));
    assert_false(js_str_eq(&v, "a"));
    assert_false(js_str_eq(&v, "ab"));
    free(b);
}

static void
test_str_eq(void **state)
{
    struct js_str v;
    char *b, *lit, *text;
    size_t i, n = 300;

    b = read_string("\"abc\"", &v);
    assert_true(js_str_eq(&v, "abc"));
    assert_false(js_str_eq(&v, "ab"));
    assert_false(js_str_eq(&v, "abcd"));
    assert_false(js_str_eq(&v, "abd"));
    assert_false(js_str_eq(&v, ""));
    free(b);

    b = read_string("\"\"", &v);
    assert_true(js_str_eq(&v, ""));
    assert_false(js_str_eq(&v, "a"));
    free(b);

    b = read_string("\"a\\u0062c\"", &v);
    assert_true(js_str_eq(&v, "abc"));
    assert_false(js_str_eq(&v, "ab"));
    assert_false(js_str_eq(&v, "abcd"));
    assert_false(js_str_eq(&v, "abd"));
    assert_false(js_str_eq(&v, "a\\u0062c")); /* the raw text is not the value */
    free(b);

    b = read_string("\"\\u00e9\\ud83d\\ude00\"", &v);
    assert_true(js_str_eq(&v, "\xc3\xa9\xf0\x9f\x98\x80"));
    assert_false(js_str_eq(&v, "\xc3\xa9\xf0\x9f\x98"));
    assert_false(js_str_eq(&v, "\xc3\xa9"));
    assert_false(js_str_eq(&v, "\xc3"));
    free(b);

    /* A decoded value longer than any small buffer: n escapes of 'x' with a
     * raw 'y' in the middle, compared with n + 1 bytes. */
    text = malloc(6 * n + 4);
    lit = malloc(n + 3);
    assert_non_null(text);
    assert_non_null(lit);
    text[0] = '"';
    for (i = 0; i < n; i++)
        memcpy(text + 1 + 6 * i, "\\u0078", 6);
    memmove(text + 1 + 3 * 6 + 1, text + 1 + 3 * 6, 6 * (n - 3));
    text[1 + 3 * 6] = 'y';
    memcpy(text + 2 + 6 * n, "\"", 2);
    memset(lit, 'x', n + 1);
    lit[3] = 'y';
    lit[n + 1] = '\0';
    b = read_string(text, &v);
    assert_int_equal(js_str_len(&v), n + 1);
    assert_true(js_str_eq(&v, lit));
    lit[n] = '\0';
    assert_false(js_str_eq(&v, lit)); /* one short */
    lit[n] = 'x';
    lit[n + 1] = 'x';
    lit[n + 2] = '\0';
    assert_false(js_str_eq(&v, lit)); /* one long */
    lit[n + 1] = '\0';
    lit[n] = 'z';
    assert_false(js_str_eq(&v, lit)); /* the last byte differs */
    free(b);
    free(lit);
    free(text);
}

/* js_str_copy cuts before a character that does not fit, escaped or raw,
 * and returns the full length. */
static void
test_str_copy(void **state)
{
    static const struct {
        const char *c_text;
        size_t c_cap;
        const char *c_want;
        size_t c_full;
    } cases[] = {
        {"\"abc\"", 10, "abc", 3},
        {"\"abc\"", 4, "abc", 3},
        {"\"abc\"", 3, "ab", 3},
        {"\"abc\"", 1, "", 3},
        {"\"\"", 1, "", 0},
        /* raw UTF-8, unescaped: \xc3\xa9 is one character */
        {"\"h\xc3\xa9llo\"", 2, "h", 6},
        {"\"h\xc3\xa9llo\"", 3, "h", 6},
        {"\"h\xc3\xa9llo\"", 4, "h\xc3\xa9", 6},
        {"\"\xf0\x9f\x98\x80\"", 4, "", 4},
        {"\"\xf0\x9f\x98\x80\"", 5, "\xf0\x9f\x98\x80", 4},
        {"\"a\xe2\x82\xac\"", 4, "a", 4},
        /* raw UTF-8 in an escaped string */
        {"\"\\n\xe2\x82\xac\"", 3, "\n", 4},
        {"\"\\n\xe2\x82\xac\"", 4, "\n", 4},
        {"\"\\n\xe2\x82\xac\"", 5, "\n\xe2\x82\xac", 4},
        /* escapes */
        {"\"\\u00e9x\"", 2, "", 3},
        {"\"\\u00e9x\"", 3, "\xc3\xa9", 3},
        {"\"\\u00e9x\"", 4, "\xc3\xa9x", 3},
        {"\"\\ud83d\\ude00\"", 4, "", 4},
        {"\"\\ud83d\\ude00\"", 5, "\xf0\x9f\x98\x80", 4},
        {"\"a\\\"b\"", 3, "a\"", 3},
    };
    struct js_str v;
    char *b, *dst;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b = read_string(cases[i].c_text, &v);
        dst = malloc(cases[i].c_cap); /* exact, for AddressSanitizer */
        assert_non_null(dst);
        if (js_str_copy(&v, dst, cases[i].c_cap) != cases[i].c_full)
            fail_msg("%s: not the full length", cases[i].c_text);
        if (strcmp(dst, cases[i].c_want) != 0)
            fail_msg("%s, %zu bytes: \"%s\"", cases[i].c_text, cases[i].c_cap, dst);
        free(dst);
        free(b);
    }
}

/* A walk that reads every value as a parser would, but gives up after
 * w_steps calls inside a container: js_leave to w_to (or the depth, if
 * less), then to the top. */
struct walk {
    int w_steps;
    unsigned w_to;
    int w_left; /* it did give up */
};

static int
leave_now(struct js_scan *s, struct walk *w)
{
    unsigned to = w->w_to < s->js_depth ? w->w_to : s->js_depth;

    w->w_left = 1;
    if (js_leave(s, to) == -1)
        return -1;
    assert_int_equal(s->js_depth, to);
    if (js_leave(s, 0) == -1)
        return -1;
    assert_int_equal(s->js_depth, 0);
    return 1;
}

/* 0 = read whole, 1 = gave up, -1 = failed. */
static int
walk_leaving(struct js_scan *s, struct walk *w)
{
    struct js_str k;
    enum js_type t;
    int rc;

    if (s->js_depth > 0 && w->w_steps-- == 0) /* before a value */
        return leave_now(s, w);
    t = js_peek(s);
    if (t != JS_ARRAY && t != JS_OBJECT)
        return js_skip(s);
    if ((t == JS_ARRAY ? js_array_begin(s) : js_object_begin(s)) == -1)
        return -1;
    for (;;) {
        if (w->w_steps-- == 0) /* after the opening or a value */
            return leave_now(s, w);
        rc = t == JS_ARRAY ? js_array_next(s) : js_object_next(s, &k);
        if (rc != 1)
            return rc;
        if ((rc = walk_leaving(s, w)) != 0)
            return rc;
    }
}

/* Walks text giving up after steps; 0 = accepted, -1 = refused. *left
 * says whether the walk got that far. */
static int
leave_after(const char *text, int steps, unsigned to, int *left)
{
    size_t len = strlen(text);
    char *b = exact_copy(text, len);
    struct walk w = {steps, to, 0};
    struct js_scan s;
    int rc;

    js_init(&s, b, len);
    rc = walk_leaving(&s, &w) != -1 && js_end(&s) == 0 ? 0 : -1;
    if (rc == -1)
        assert_positioned(s.js_err);
    *left = w.w_left;
    free(b);
    return rc;
}

static void
test_leave(void **state)
{
    static const char good[] = "[1,2,[3,{\"a\":4}],5]";
    static const char *const bad[] = {
        "[1,]",     "[1,2,]",           "[1 2]",       "[1,2",
        "{\"a\":}", "{\"a\":,\"b\":1}", "{\"a\":1,}",  "{\"a\":1 \"b\":2}",
        "[1,[2,]]", "[1,{\"a\":}]",     "[[1 2]]",     "[1,2]]",
        "[1,2] x",  "[1,tru]",          "[1,\"\\x\"]",
    };
    struct js_scan s;
    char *b;
    int steps, left;

    /* From every point of a good document, to each depth above it. */
    for (unsigned to = 0; to <= 3; to++) {
        left = 1;
        for (steps = 0; left; steps++)
            if (leave_after(good, steps, to, &left) != 0)
                fail_msg("%s: leaving after %d steps to %u refused it", good, steps, to);
        assert_true(steps > 12);
    }

    /* From every point of a bad one, the rest is still checked. */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        left = 1;
        for (steps = 0; left; steps++)
            if (leave_after(bad[i], steps, steps % 2, &left) != -1)
                fail_msg("%s: leaving after %d steps accepted it", bad[i], steps);
    }

    /* To a middle depth: the walk goes on from there. */
    b = exact_copy("[[1,2],[3]]", 11);
    js_init(&s, b, 11);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_leave(&s, 2), 0); /* already there: nothing to do */
    assert_int_equal(js_leave(&s, 1), 0);
    assert_int_equal(s.js_depth, 1);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_ARRAY);
    assert_int_equal(js_skip(&s), 0);
    assert_int_equal(js_array_next(&s), 0);
    assert_int_equal(js_end(&s), 0);
    assert_int_equal(js_leave(&s, 0), 0);
    free(b);

    /* After a failure it fails. */
    b = exact_copy("[x]", 3);
    js_init(&s, b, 3);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_peek(&s), JS_ERROR);
    assert_int_equal(js_leave(&s, 0), -1);
    assert_int_equal(js_leave(&s, 1), -1);
    assert_string_equal(s.js_err, "unexpected character (line 1, column 2)");
    free(b);
}

static void
test_numbers(void **state)
{
    static const struct {
        const char *n_text;
        double n_want;
    } cases[] = {
        {"0", 0.0},
        {"-0.5", -0.5},
        {"1e3", 1000.0},
        {"1E+2", 100.0},
        {"1e-2", 1e-2},
        {"-12.25", -12.25},
        {"1.5E3", 1500.0},
        {"7", 7.0},
        {"1e-400", 0.0},
        {"123456789012345678901234567890", 123456789012345678901234567890.0},
        {"1.7976931348623157e308", 1.7976931348623157e308},
        {"1e400", HUGE_VAL},
        {"-1e400", -HUGE_VAL},
        {"1e99999999999999999999", HUGE_VAL},
    };
    struct js_scan s;
    char *b, *big;
    double x;
    size_t n;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = strlen(cases[i].n_text);
        b = exact_copy(cases[i].n_text, n);
        js_init(&s, b, n);
        assert_int_equal(js_peek(&s), JS_NUMBER);
        x = 42;
        assert_int_equal(js_number(&s, &x), 0);
        if (x != cases[i].n_want)
            fail_msg("%s read as %.17g", cases[i].n_text, x);
        assert_int_equal(js_end(&s), 0);
        free(b);
    }

    b = exact_copy("-0", 2);
    js_init(&s, b, 2);
    assert_int_equal(js_number(&s, &x), 0);
    assert_true(x == 0.0 && signbit(x));
    free(b);

    /* Converting has a cap (511 characters); skipping does not. */
    big = malloc(600);
    assert_non_null(big);
    memset(big, '1', 600);
    big[0] = '-';
    big[2] = '.';
    js_init(&s, big, 511);
    assert_int_equal(js_number(&s, &x), 0);
    assert_true(x > -1.12 && x < -1.11);
    assert_int_equal(js_end(&s), 0);
    js_init(&s, big, 512);
    assert_int_equal(js_number(&s, &x), -1);
    assert_string_equal(s.js_err, "number too long (line 1, column 1)");
    js_init(&s, big, 600);
    assert_int_equal(js_number(&s, NULL), 0);
    assert_int_equal(js_end(&s), 0);
    free(big);

    /* The number ends where its grammar does. */
    b = exact_copy("[2,-3.5e1]", 10);
    js_init(&s, b, 10);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_number(&s, &x), 0);
    assert_true(x == 2.0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_number(&s, &x), 0);
    assert_true(x == -35.0);
    assert_int_equal(js_array_next(&s), 0);
    assert_int_equal(js_end(&s), 0);
    free(b);
}

static void
test_literals(void **state)
{
    static const struct {
        const char *l_text;
        enum js_type l_want;
    } cases[] = {{"true", JS_TRUE}, {"false", JS_FALSE}, {" null ", JS_NULL}};
    struct js_scan s;
    enum js_type t;
    char *b;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].l_text);

        b = exact_copy(cases[i].l_text, n);
        js_init(&s, b, n);
        assert_int_equal(js_peek(&s), cases[i].l_want);
        t = JS_ERROR;
        assert_int_equal(js_literal(&s, &t), 0);
        assert_int_equal(t, cases[i].l_want);
        assert_int_equal(js_end(&s), 0);
        free(b);
    }

    /* js_peek judges by the first byte; js_literal reads the word. */
    b = exact_copy("tru", 3);
    js_init(&s, b, 3);
    assert_int_equal(js_peek(&s), JS_TRUE);
    assert_int_equal(js_literal(&s, &t), -1);
    assert_string_equal(s.js_err, "invalid literal (line 1, column 1)");
    free(b);
}

/* After a failure every call fails and the first reason stays. */
static void
test_sticky(void **state)
{
    static const char text[] = "[1,x,\"s\",{}]";
    struct js_scan s;
    struct js_str v;
    enum js_type t;
    char *b = exact_copy(text, sizeof(text) - 1), first[sizeof(s.js_err)];
    double x;

    js_init(&s, b, sizeof(text) - 1);
    assert_int_equal(js_array_begin(&s), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_number(&s, &x), 0);
    assert_int_equal(js_array_next(&s), 1);
    assert_int_equal(js_number(&s, &x), -1);
    assert_string_equal(s.js_err, "invalid number (line 1, column 4)");
    memcpy(first, s.js_err, sizeof(first));

    assert_int_equal(js_peek(&s), JS_ERROR);
    assert_int_equal(js_object_begin(&s), -1);
    assert_int_equal(js_array_begin(&s), -1);
    assert_int_equal(js_object_next(&s, &v), -1);
    assert_int_equal(js_array_next(&s), -1);
    assert_int_equal(js_string(&s, &v), -1);
    assert_int_equal(js_number(&s, &x), -1);
    assert_int_equal(js_number(&s, NULL), -1);
    assert_int_equal(js_literal(&s, &t), -1);
    assert_int_equal(js_skip(&s), -1);
    assert_int_equal(js_end(&s), -1);
    assert_int_equal(js_fail(&s, "something else"), -1);
    assert_string_equal(s.js_err, first);
    assert_int_equal(s.js_failed, 1);

    /* js_init starts over. */
    js_init(&s, b, sizeof(text) - 1);
    assert_int_equal(s.js_failed, 0);
    assert_string_equal(s.js_err, "");
    assert_int_equal(js_array_begin(&s), 0);
    free(b);
}

/* A caller that finds the shape wrong fails the walk where it stands. */
static void
test_fail(void **state)
{
    static const char text[] = "{\"items\":\n  7}";
    struct js_scan s;
    struct js_str k;
    char *b = exact_copy(text, sizeof(text) - 1);

    js_init(&s, b, sizeof(text) - 1);
    assert_int_equal(js_object_begin(&s), 0);
    assert_int_equal(js_object_next(&s, &k), 1);
    assert_int_equal(js_peek(&s), JS_NUMBER);
    assert_int_equal(js_fail(&s, "items: not an array"), -1);
    assert_string_equal(s.js_err, "items: not an array (line 2, column 3)");
    assert_int_equal(js_skip(&s), -1);
    assert_int_equal(js_object_next(&s, &k), -1);
    assert_int_equal(js_end(&s), -1);
    assert_string_equal(s.js_err, "items: not an array (line 2, column 3)");
    free(b);

    /* A long reason is cut to the buffer, still terminated. */
    {
        char what[300];

        memset(what, 'w', sizeof(what) - 1);
        what[sizeof(what) - 1] = '\0';
        js_init(&s, "", 0);
        assert_int_equal(js_fail(&s, what), -1);
        assert_int_equal(strlen(s.js_err), sizeof(s.js_err) - 1);
    }
}

/* js_pool_string: strings copied, other values skipped, U+0000 and empty
 * strings by the flag, malformed input refused. */
static void
test_pool_string(void **state)
{
    static const struct {
        const char *in;
        unsigned flags;
        int rc;
        const char *want; /* NULL: *dst NULL; "=": left as it was */
    } t[] = {
        {"\"ab\"", 0, 0, "ab"},
        {"\"a\\u00e9\"", 0, 0, "a\xc3\xa9"},
        {"\"\"", 0, 0, ""},
        {"\"\"", JS_POOL_NONEMPTY, 0, "="},
        {"\"a\\u0000b\"", 0, 0, NULL},
        {"42", 0, 0, "="},
        {"{\"k\":[1,2]}", JS_POOL_NONEMPTY, 0, "="},
        {"\"open", 0, -1, "="},
        {"\"bad \\x\"", 0, -1, "="},
        {"[1,", 0, -1, "="},
    };
    char keep[] = "kept";

    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct strpool *pool = strpool_new();
        struct js_scan s;
        char *dst = keep;
        int oom = 0;

        assert_non_null(pool);
        js_init(&s, t[i].in, strlen(t[i].in));
        if (js_pool_string(&s, pool, t[i].flags, &dst, &oom) != t[i].rc)
            fail_msg("%s: want rc %d", t[i].in, t[i].rc);
        assert_int_equal(oom, 0);
        if (t[i].want == NULL)
            assert_null(dst);
        else if (strcmp(t[i].want, "=") == 0)
            assert_ptr_equal(dst, keep);
        else
            assert_string_equal(dst, t[i].want);
        strpool_free(pool);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_string_bytes), cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_depth),        cmocka_unit_test(test_position),
        cmocka_unit_test(test_sequence),     cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_slices),       cmocka_unit_test(test_decode),
        cmocka_unit_test(test_str_eq),       cmocka_unit_test(test_str_copy),
        cmocka_unit_test(test_leave),        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_literals),     cmocka_unit_test(test_sticky),
        cmocka_unit_test(test_fail),         cmocka_unit_test(test_pool_string),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
