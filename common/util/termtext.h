/* termtext.h -- text from outside made safe to show on a terminal or in a text log line
 *
 * Names, reasons and errors come from alert labels, API servers, Prometheus,
 * NVML and the audit file. Shown raw, a byte can move the cursor, clear the
 * screen, recolour (ESC, CSI U+009B), end the line and forge the next one
 * (LF, U+2028), or reorder what follows (U+202E). Every such character is
 * written as a visible escape instead, so what is printed is one line of
 * valid UTF-8 whatever the input, and the escapes read back unambiguously:
 *
 *   \\            a backslash
 *   \n \r \t      LF, CR, TAB
 *   \xNN          another C0 control or DEL, and every byte that is not
 *                 part of well-formed UTF-8 (lower-case hex)
 *   \u{NNNN}      a well-formed character that must not reach a terminal
 *                 raw (upper-case hex, 4 to 6 digits): C1 controls
 *                 U+0080-U+009F, the bidi controls U+061C, U+200E, U+200F,
 *                 U+202A-U+202E, U+2066-U+2069, the line and paragraph
 *                 separators U+2028, U+2029, and the invisible format
 *                 characters that hide text (U+180E, U+200B-U+200D,
 *                 U+2060-U+2065, U+206A-U+206F, U+FEFF, U+FFF9-U+FFFB,
 *                 the tags U+E0000-U+E007F)
 *   \"            a double quote, with TERMTEXT_QUOTED only
 *
 * Everything else is copied as it is. A column is one character shown: one
 * per code point, one per byte of an escape.
 */
#ifndef GVW_TERMTEXT_H
#define GVW_TERMTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The longest form of one input character, "\u{E007F}", without a NUL. */
#define TERMTEXT_ESC_MAX 9

/* Flags. */
#define TERMTEXT_QUOTED 0x1 /* the text goes between double quotes: '"' is \" too */

/* Whether code point cp is written as \u{...}: a C1 control, a bidi control,
 * a line or paragraph separator or an invisible format character. */
int termtext_hidden(uint32_t cp);

/* When the character at s (avail > 0 bytes) is well-formed UTF-8 and hidden
 * (termtext_hidden), its length (2 to 4) with its code point in *cp; else 0.
 * For a writer with escapes of its own (a JSON log line's \uNNNN). */
size_t termtext_hidden_at(const char *s, size_t avail, uint32_t *cp);

/*
 * The shown form of the character at s, of which avail (> 0) bytes may be
 * read. Returns how many bytes of s it covers (1 to 4); *out and *outlen
 * say what to write: s itself, or an escape built in esc.
 */
size_t termtext_next(const char *s, size_t avail, unsigned flags,
                     char esc[TERMTEXT_ESC_MAX + 1], const char **out, size_t *outlen);

/*
 * s (NUL-terminated; NULL reads as "") cleaned into dst, dstlen (> 0) bytes
 * with the NUL. Stops before the first character whose shown form would not
 * fit in dstlen - 1 bytes or in max_cols columns (SIZE_MAX: any number), so
 * an escape is never cut. Returns the columns written; *used (may be NULL)
 * gets the bytes of s consumed, strlen(s) when all of it fits.
 */
size_t termtext_clean(char *dst, size_t dstlen, const char *s, size_t max_cols,
                      unsigned flags, size_t *used);

/* The columns s takes once cleaned (NULL reads as ""). */
size_t termtext_width(const char *s);

/* Writes s cleaned to out, at most max_cols columns (SIZE_MAX: all of it),
 * never cutting an escape. Returns the columns written. NULL reads as "". */
size_t termtext_put(FILE *out, const char *s, size_t max_cols);

/* One message line: prefix as it is (the program's own words), then s
 * cleaned, then a newline. For error lines that quote outside text. */
void termtext_line(FILE *out, const char *prefix, const char *s);

#endif
