/* terminal_safe.h -- the tests' own judge of text meant for a terminal (SPEC "Hostile
 * input")
 *
 * Written apart from common/util/termtext.c on purpose: it decodes UTF-8 by
 * itself and bans by its own list, so a gap in the cleaner's table is not
 * also a gap here. Header-only: each test program includes it once.
 */
#ifndef GVW_TEST_TERMINAL_SAFE_H
#define GVW_TEST_TERMINAL_SAFE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Whether cp must never reach a terminal raw: C0 (the line end aside, when
 * allowed), DEL, C1, the bidi controls, the line and paragraph separators. */
static int
ts_banned(uint32_t cp, int newline_ok)
{
    if (cp == '\n')
        return !newline_ok;
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C ||
           cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/*
 * 0 when text (len bytes) is well-formed UTF-8 (shortest forms, no
 * surrogates, at most U+10FFFF) holding no banned character; else -1 with
 * what and where in why (64 bytes). newline_ok: '\n' may end lines.
 */
__attribute__((unused)) static int
terminal_unsafe_at(const char *text, size_t len, int newline_ok, char why[64])
{
    const unsigned char *p = (const unsigned char *)text;

    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n = c < 0x80                 ? 1
                   : c >= 0xC2 && c <= 0xDF ? 2
                   : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
        uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1Fu : n == 3 ? c & 0x0Fu : c & 0x07u;

        if (n == 0 || i + n > len) {
            snprintf(why, 64, "byte 0x%02x at %zu is not UTF-8", c, i);
            return -1;
        }
        for (size_t k = 1; k < n; k++) {
            if ((p[i + k] & 0xC0) != 0x80) {
                snprintf(why, 64, "byte 0x%02x at %zu is not UTF-8", c, i);
                return -1;
            }
            cp = cp << 6 | (p[i + k] & 0x3Fu);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            snprintf(why, 64, "an ill-formed character at %zu", i);
            return -1;
        }
        if (ts_banned(cp, newline_ok)) {
            snprintf(why, 64, "U+%04X at %zu", (unsigned)cp, i);
            return -1;
        }
        i += n;
    }
    return 0;
}

/* 1 when the NUL-terminated text is safe with '\n' as line ends, else 0
 * (the offender printed on stderr). */
__attribute__((unused)) static int
terminal_safe(const char *text)
{
    char why[64];

    if (terminal_unsafe_at(text, strlen(text), 1, why) == 0)
        return 1;
    fprintf(stderr, "not terminal-safe: %s\n", why);
    return 0;
}

#endif
