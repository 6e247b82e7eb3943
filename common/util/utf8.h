/* utf8.h -- well-formed UTF-8 (RFC 3629): one definition for the JSON reader,
 * the answers and the logs */
#ifndef GVW_UTF8_H
#define GVW_UTF8_H

#include <stddef.h>

/* The length (1-4) of the well-formed character at p, of which avail bytes
 * may be read; 0 when it is not one (a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, or cut short). */
size_t utf8_char_len(const char *p, size_t avail);

/* Whether the n bytes at s are well-formed UTF-8. */
int utf8_valid(const char *s, size_t n);

/* Replaces, in place, every byte of s that is not part of a well-formed
 * UTF-8 character with '?'. Messages quote client text cut at a byte count
 * ("'%.64s'"), which can split a character; jansson refuses such a string,
 * so the 400 would lose its reason. Returns s. */
char *utf8_scrub(char *s);

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Copies the NUL-terminated s into out (outlen > 0 bytes) as well-formed
 * UTF-8: every byte that is not part of a well-formed character becomes
 * U+FFFD. Cut before a character that would not fit; always terminated.
 * Returns the bytes written, the NUL not counted. For text from a source that
 * promises no encoding (NVML's device names) before it reaches a format that
 * must be UTF-8 (the exposition, JSON). */
size_t utf8_clean(const char *s, char *out, size_t outlen);

#endif
