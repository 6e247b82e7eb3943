/* termtext.c -- text from outside made safe to show on a terminal or in a text log line
 */
#include "termtext.h"

#include <string.h>

#include "utf8.h"

int
termtext_hidden(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) ||     /* C1: CSI, NEL, OSC, ... */
           cp == 0x061C ||                   /* ARABIC LETTER MARK */
           cp == 0x180E ||                   /* MONGOLIAN VOWEL SEPARATOR */
           (cp >= 0x200B && cp <= 0x200F) || /* zero widths, LRM, RLM */
           (cp >= 0x2028 && cp <= 0x202E) || /* LS, PS, LRE..RLO */
           (cp >= 0x2060 && cp <= 0x206F) || /* WJ.., LRI..PDI, deprecated */
           cp == 0xFEFF ||                   /* ZERO WIDTH NO-BREAK SPACE */
           (cp >= 0xFFF9 && cp <= 0xFFFB) || /* interlinear annotation */
           (cp >= 0xE0000 && cp <= 0xE007F); /* tags */
}

/* The code point of the well-formed n-byte character at p. */
static uint32_t
decode(const unsigned char *p, size_t n)
{
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = p[0] & lead_mask[n];

    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3F);
    return cp;
}

size_t
termtext_hidden_at(const char *s, size_t avail, uint32_t *cp)
{
    size_t n = (unsigned char)s[0] < 0x80 ? 0 : utf8_char_len(s, avail);

    if (n == 0)
        return 0;
    *cp = decode((const unsigned char *)s, n);
    return termtext_hidden(*cp) ? n : 0;
}

size_t
termtext_next(const char *s, size_t avail, unsigned flags, char esc[TERMTEXT_ESC_MAX + 1],
              const char **out, size_t *outlen)
{
    unsigned char c = (unsigned char)s[0];
    size_t n;
    uint32_t cp;

    *out = s;
    *outlen = 1;
    if (c >= 0x20 && c < 0x7F) {
        if (c == '\\' || (c == '"' && (flags & TERMTEXT_QUOTED))) {
            esc[0] = '\\';
            esc[1] = (char)c;
            esc[2] = '\0';
            *out = esc;
            *outlen = 2;
        }
        return 1;
    }
    if (c < 0x80) { /* C0 or DEL */
        const char *named = c == '\n'   ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                                        : NULL;
        if (named != NULL)
            memcpy(esc, named, 3);
        else
            snprintf(esc, TERMTEXT_ESC_MAX + 1, "\\x%02x", c);
        *out = esc;
        *outlen = strlen(esc);
        return 1;
    }
    if ((n = utf8_char_len(s, avail)) == 0) { /* not UTF-8: the byte alone */
        snprintf(esc, TERMTEXT_ESC_MAX + 1, "\\x%02x", c);
        *out = esc;
        *outlen = 4;
        return 1;
    }
    cp = decode((const unsigned char *)s, n);
    if (termtext_hidden(cp)) {
        *outlen = (size_t)snprintf(esc, TERMTEXT_ESC_MAX + 1, "\\u{%04X}", (unsigned)cp);
        *out = esc;
        return n;
    }
    *outlen = n;
    return n;
}

/* Columns of a shown form: an escape is all ASCII, a character one column. */
static size_t
cols_of(const char *shown, size_t len, const char *esc)
{
    return shown == esc ? len : 1;
}

size_t
termtext_clean(char *dst, size_t dstlen, const char *s, size_t max_cols, unsigned flags,
               size_t *used)
{
    char esc[TERMTEXT_ESC_MAX + 1];
    size_t in = s ? strlen(s) : 0, i = 0, o = 0, cols = 0;

    while (i < in) {
        const char *shown;
        size_t len, w, k = termtext_next(s + i, in - i, flags, esc, &shown, &len);

        w = cols_of(shown, len, esc);
        if (len > dstlen - 1 - o || w > max_cols - cols)
            break;
        memcpy(dst + o, shown, len);
        o += len;
        cols += w;
        i += k;
    }
    dst[o] = '\0';
    if (used != NULL)
        *used = i;
    return cols;
}

size_t
termtext_width(const char *s)
{
    char esc[TERMTEXT_ESC_MAX + 1];
    size_t in = s ? strlen(s) : 0, i = 0, cols = 0;

    while (i < in) {
        const char *shown;
        size_t len;

        i += termtext_next(s + i, in - i, 0, esc, &shown, &len);
        cols += cols_of(shown, len, esc);
    }
    return cols;
}

size_t
termtext_put(FILE *out, const char *s, size_t max_cols)
{
    char buf[512];
    size_t cols = 0, used;

    if (s == NULL)
        return 0;
    /* In pieces: a piece stops only before a character that does not fit,
     * so the next one starts on a character. */
    while (*s != '\0' && cols < max_cols) {
        cols += termtext_clean(buf, sizeof(buf), s, max_cols - cols, 0, &used);
        fputs(buf, out);
        if (used == 0)
            break; /* the next character's form exceeds the columns left */
        s += used;
    }
    return cols;
}

void
termtext_line(FILE *out, const char *prefix, const char *s)
{
    fputs(prefix, out);
    termtext_put(out, s, SIZE_MAX);
    fputc('\n', out);
}
