/* fuzz_termtext.c -- libFuzzer target: the terminal-text cleaner never lets a control
 * through
 *
 * The input's first two bytes pick a buffer size and a column limit; the
 * rest, up to a NUL, is the text. The checks are written apart from
 * termtext.c: the output is well-formed UTF-8 without C0, DEL, C1, a bidi
 * control or a line/paragraph separator (tests/lib/terminal_safe.h); undoing
 * the escapes gives back exactly the bytes consumed (so an escape is never
 * cut and every one reads back unambiguously); the limits hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/terminal_safe.h"
#include "fuzz_check.h"
#include "termtext.h"

static int
hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The escapes of termtext.h undone into out; the length, or -1 when a
 * backslash starts no escape. */
static long
unescape(const char *s, char *out)
{
    long o = 0;

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
            int digits = 0;
            for (s += 2; hexval(*s) >= 0 && digits < 7; s++, digits++)
                cp = cp * 16 + (uint32_t)hexval(*s);
            if (*s++ != '}' || digits < 4 || digits > 6 || cp < 0x80 || cp > 0x10FFFF)
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
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[64], *in, *out, *back;
    size_t len, dstlen, cap, used, cols, maxcols;
    unsigned flags;
    long n;

    if (size < 2 || size > 4096)
        return 0;
    dstlen = (size_t)data[0] + 1;                  /* 1..256 bytes */
    maxcols = data[1] == 255 ? SIZE_MAX : data[1]; /* or no limit */
    flags = data[0] & 1 ? TERMTEXT_QUOTED : 0;
    len = strnlen((const char *)data + 2, size - 2);
    cap = len * TERMTEXT_ESC_MAX + 1;
    in = malloc(len + 1);
    out = malloc(cap);
    back = malloc(cap);
    FUZZ_CHECK(in != NULL && out != NULL && back != NULL, "out of memory");
    memcpy(in, data + 2, len);
    in[len] = '\0';

    /* Whole: everything consumed, safe, as wide as termtext_width says, and
     * it reads back to the input. */
    cols = termtext_clean(out, cap, in, SIZE_MAX, flags, &used);
    FUZZ_CHECK(used == len, "consumed %zu of %zu with room for all", used, len);
    FUZZ_CHECK(terminal_unsafe_at(out, strlen(out), 0, why) == 0, "unsafe: %s", why);
    if (flags == 0)
        FUZZ_CHECK(cols == termtext_width(in), "columns %zu, width %zu", cols,
                   termtext_width(in));
    n = unescape(out, back);
    FUZZ_CHECK(n == (long)len && memcmp(back, in, len) == 0, "does not read back");

    /* Bounded: within the buffer and the columns, cut only between
     * characters, what is shown is the consumed prefix. */
    cols = termtext_clean(out, dstlen, in, maxcols, flags, &used);
    FUZZ_CHECK(strlen(out) < dstlen && cols <= maxcols && used <= len, "a limit broken");
    FUZZ_CHECK(terminal_unsafe_at(out, strlen(out), 0, why) == 0, "unsafe cut: %s", why);
    n = unescape(out, back);
    FUZZ_CHECK(n == (long)used && memcmp(back, in, used) == 0,
               "a cut output is not the consumed prefix");
    free(in);
    free(out);
    free(back);
    return 0;
}
