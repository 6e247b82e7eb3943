/* test_termtext.c -- the terminal-text cleaner: what reaches a terminal, and that it
 * reads back */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/terminal_safe.h"
#include "termtext.h"

static char *
clean(const char *s)
{
    static char out[4096];

    termtext_clean(out, sizeof(out), s, SIZE_MAX, 0, NULL);
    return out;
}

static void
test_escapes(void **state)
{
    (void)state;
    assert_string_equal(clean("plain gpu-1/ml"), "plain gpu-1/ml");
    assert_string_equal(clean("a\nb\rc\td"), "a\\nb\\rc\\td");
    assert_string_equal(clean("\x1b[2J\a\x7f"), "\\x1b[2J\\x07\\x7f");
    assert_string_equal(clean("back\\slash \"q\""), "back\\\\slash \"q\"");
    /* C1: raw bytes are not UTF-8; encoded ones are characters. */
    assert_string_equal(clean("\x9b"
                              "31m"),
                        "\\x9b31m");
    assert_string_equal(clean("\xc2\x9b"
                              "31m \xc2\x85"),
                        "\\u{009B}31m \\u{0085}");
    /* Bidi and line separators. */
    assert_string_equal(clean("ab\xe2\x80\xae"
                              "cd"),
                        "ab\\u{202E}cd");
    assert_string_equal(clean("\xe2\x80\xa8\xe2\x80\xa9"), "\\u{2028}\\u{2029}");
    assert_string_equal(clean("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f"),
                        "\\u{061C}\\u{200E}\\u{200F}");
    assert_string_equal(clean("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
                        "\\u{202A}\\u{202B}\\u{202C}\\u{202D}");
    assert_string_equal(clean("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"),
                        "\\u{2066}\\u{2067}\\u{2068}\\u{2069}");
    /* Invisible: zero width space, BOM, a tag character. */
    assert_string_equal(clean("k\xe2\x80\x8bube\xef\xbb\xbf\xf3\xa0\x81\x81"),
                        "k\\u{200B}ube\\u{FEFF}\\u{E0041}");
    /* Not UTF-8: overlong, surrogate, cut short, stray continuation. */
    assert_string_equal(clean("\xc0\xaf|\xed\xa0\x80|\xe2\x80|\x80"),
                        "\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x80|\\x80");
    /* Kept: letters, symbols, emoji, CJK, and U+00A0 just past C1. */
    assert_string_equal(clean("caf\xc3\xa9 \xf0\x9f\x98\x80 \xe6\x97\xa5 \xc2\xa0"),
                        "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe6\x97\xa5 \xc2\xa0");
    assert_string_equal(clean(NULL), "");
}

static void
test_quoted(void **state)
{
    char out[64];

    (void)state;
    termtext_clean(out, sizeof(out), "say \"hi\"\n", SIZE_MAX, TERMTEXT_QUOTED, NULL);
    assert_string_equal(out, "say \\\"hi\\\"\\n");
}

/* A full buffer or the last column stops before an escape, never inside. */
static void
test_bounds(void **state)
{
    char out[16];
    size_t used, cols;

    (void)state;
    cols = termtext_clean(out, 7,
                          "ab\x1b"
                          "cd",
                          SIZE_MAX, 0, &used);
    assert_string_equal(out, "ab\\x1b"); /* 6 bytes fit in 7 */
    assert_int_equal(used, 3);
    assert_int_equal(cols, 6);
    cols = termtext_clean(out, 6,
                          "ab\x1b"
                          "cd",
                          SIZE_MAX, 0, &used);
    assert_string_equal(out, "ab"); /* the escape does not fit: not cut */
    assert_int_equal(used, 2);
    assert_int_equal(cols, 2);
    /* \u{202E} is 8 columns: 2 + 8 = 10 fits in 10, not in 9. */
    cols = termtext_clean(out, sizeof(out),
                          "ab\xe2\x80\xae"
                          "cd",
                          10, 0, &used);
    assert_string_equal(out, "ab\\u{202E}");
    assert_int_equal(cols, 10);
    assert_int_equal(used, 5);
    cols = termtext_clean(out, sizeof(out),
                          "ab\xe2\x80\xae"
                          "cd",
                          9, 0, &used);
    assert_string_equal(out, "ab");
    assert_int_equal(cols, 2);
    assert_int_equal(used, 2);
    /* A character is one column, whatever its bytes. */
    cols = termtext_clean(out, sizeof(out), "\xc3\xa9\xc3\xa9\xc3\xa9", 2, 0, &used);
    assert_string_equal(out, "\xc3\xa9\xc3\xa9");
    assert_int_equal(cols, 2);
    assert_int_equal(used, 4);
    assert_int_equal(termtext_width("\xc3\xa9\x1b"), 5);
    assert_int_equal(termtext_width(NULL), 0);
    cols = termtext_clean(out, 1, "abc", SIZE_MAX, 0, &used);
    assert_string_equal(out, "");
    assert_int_equal(used, 0);
}

static void
test_put(void **state)
{
    char big[3000], got[16384];
    FILE *f = tmpfile();
    size_t n, cols;

    (void)state;
    assert_non_null(f);
    /* Longer than one piece: every escape whole across the pieces. */
    for (size_t i = 0; i < sizeof(big) - 1; i++)
        big[i] = i % 3 == 0 ? '\x1b' : 'x';
    big[sizeof(big) - 1] = '\0';
    cols = termtext_put(f, big, SIZE_MAX);
    assert_int_equal(cols, termtext_width(big));
    termtext_put(f, "|ab\x1b", 5); /* "|ab" then an escape that does not fit */
    termtext_put(f, NULL, SIZE_MAX);
    rewind(f);
    n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
    assert_int_equal(n, 1000 * 4 + 1999 + 3);
    assert_string_equal(got + n - 3, "|ab");
    assert_null(strchr(got, '\x1b'));
}

/* ---- the property: over many hostile inputs ---- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Bytes and characters a hostile string is made of. */
static const char *const pieces[] = {
    "a",
    "Z",
    "-",
    "/",
    " ",
    "\\",
    "\"",
    "\\x1b",
    "\\u{202E}",
    "\n",
    "\r",
    "\t",
    "\x1b",
    "\a",
    "\x7f",
    "\x01",
    "\x9b",
    "\x80",
    "\xff",
    "\xc0\xaf",
    "\xed\xa0\x80",
    "\xe2\x80",
    "\xc2\x80",
    "\xc2\x9b",
    "\xc2\x9f",
    "\xc2\xa0",
    "\xd8\x9c",
    "\xe1\xa0\x8e",
    "\xe2\x80\x8b",
    "\xe2\x80\x8e",
    "\xe2\x80\x8f",
    "\xe2\x80\xa8",
    "\xe2\x80\xa9",
    "\xe2\x80\xaa",
    "\xe2\x80\xae",
    "\xe2\x80\xaf",
    "\xe2\x81\xa6",
    "\xe2\x81\xa9",
    "\xe2\x81\xaf",
    "\xef\xbb\xbf",
    "\xef\xbf\xbb",
    "\xf3\xa0\x80\x81",
    "\xf3\xa0\x81\xbf",
    "\xc3\xa9",
    "\xf0\x9f\x98\x80",
    "\xf4\x8f\xbf\xbf",
    "\xf4\x90\x80\x80",
    "\xe6\x97\xa5",
};

/* What the header promises never reaches a terminal, judged apart from the
 * cleaner's own table (tests/lib/terminal_safe.h). */
static void
assert_terminal_safe(const char *out)
{
    char why[64];

    if (terminal_unsafe_at(out, strlen(out), 0, why) != 0)
        fail_msg("%s in: %s", why, out);
}

static int
hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The escapes undone (an independent reader of the header's table); -1 when
 * the text has a backslash that is no escape. */
static int
unescape(const char *s, char *out, size_t *outlen)
{
    size_t o = 0;

    while (*s != '\0') {
        if (*s != '\\') {
            out[o++] = *s++;
            continue;
        }
        s++;
        if (*s == '\\' || *s == '"') {
            out[o++] = *s++;
        } else if (*s == 'n' || *s == 'r' || *s == 't') {
            out[o++] = *s == 'n' ? '\n' : *s == 'r' ? '\r' : '\t';
            s++;
        } else if (*s == 'x' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
            out[o++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
            s += 3;
        } else if (s[0] == 'u' && s[1] == '{') {
            uint32_t cp = 0;
            s += 2;
            while (hexval(*s) >= 0)
                cp = cp * 16 + (uint32_t)hexval(*s++);
            if (*s++ != '}')
                return -1;
            if (cp < 0x800) {
                out[o++] = (char)(0xC0 | cp >> 6);
            } else if (cp < 0x10000) {
                out[o++] = (char)(0xE0 | cp >> 12);
                out[o++] = (char)(0x80 | (cp >> 6 & 0x3F));
            } else {
                out[o++] = (char)(0xF0 | cp >> 18);
                out[o++] = (char)(0x80 | (cp >> 12 & 0x3F));
                out[o++] = (char)(0x80 | (cp >> 6 & 0x3F));
            }
            out[o++] = (char)(0x80 | (cp & 0x3F));
        } else {
            return -1;
        }
    }
    *outlen = o;
    return 0;
}

static void
test_property(void **state)
{
    char in[600], out[4096], back[4096], small[64];
    size_t inlen, backlen, used, cols;

    (void)state;
    for (int round = 0; round < 20000; round++) {
        size_t parts = next_rand() % 40;
        inlen = 0;
        for (size_t k = 0; k < parts; k++) {
            const char *p =
                next_rand() % 4 == 0
                    ? (char[]){(char)(next_rand() % 255 + 1), '\0'}
                    : pieces[next_rand() % (sizeof(pieces) / sizeof(*pieces))];
            size_t n = strlen(p);
            if (inlen + n >= sizeof(in))
                break;
            memcpy(in + inlen, p, n);
            inlen += n;
        }
        in[inlen] = '\0';
        /* Whole: safe, as wide as said, and it reads back to the input. */
        cols = termtext_clean(out, sizeof(out), in, SIZE_MAX, 0, &used);
        assert_int_equal(used, inlen);
        assert_terminal_safe(out);
        assert_int_equal(cols, termtext_width(in));
        if (unescape(out, back, &backlen) == -1 || backlen != inlen ||
            memcmp(back, in, inlen) != 0)
            fail_msg("does not read back: %s", out);
        /* Cut by a small buffer or few columns: still safe, never inside
         * an escape, and what it shows is the consumed prefix. */
        size_t dl = next_rand() % sizeof(small) + 1, mc = next_rand() % 40;
        cols = termtext_clean(small, dl, in, mc, TERMTEXT_QUOTED, &used);
        assert_true(strlen(small) < dl && cols <= mc && used <= inlen);
        assert_terminal_safe(small);
        if (unescape(small, back, &backlen) == -1 || backlen != used ||
            memcmp(back, in, used) != 0)
            fail_msg("a cut output is not the consumed prefix: %s", small);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),  cmocka_unit_test(test_quoted),
        cmocka_unit_test(test_bounds),   cmocka_unit_test(test_put),
        cmocka_unit_test(test_property),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
