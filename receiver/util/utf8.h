/* utf8.h -- keeps text that goes into a JSON answer valid UTF-8 */
#ifndef GVW_UTF8_H
#define GVW_UTF8_H

/* Replaces, in place, every byte of s that is not part of a well-formed
 * UTF-8 character (RFC 3629) with '?'. Messages quote client text cut at a
 * byte count ("'%.64s'"), which can split a character; jansson refuses such
 * a string, so the 400 would lose its reason. Returns s. */
char *utf8_scrub(char *s);

#endif
