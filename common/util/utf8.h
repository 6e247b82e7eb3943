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

#endif
