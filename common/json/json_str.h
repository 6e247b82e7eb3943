/* json_str.h -- a string written as JSON text, byte for byte as jansson's json_dumps
 * writes it */
#ifndef GVW_JSON_STR_H
#define GVW_JSON_STR_H

#include <stddef.h>

#include "buf.h"

/* The most json_str_escape() writes for n bytes (each as \u00XX). */
#define JSON_STR_ROOM(n) (6 * (n))

/*
 * Writes the inside of s[0..n) as a JSON string (no quotes) at o, which has
 * room for JSON_STR_ROOM(n) bytes: '"' and '\\' escaped, the five short
 * escapes (\b \f \n \r \t), other control bytes as \u00XX (capital hex),
 * everything else (DEL, '/', non-ASCII) as it is, except that a byte that
 * starts no valid UTF-8 sequence becomes '?' (jansson refuses such a string;
 * the store keeps the rest). Returns past the last byte written; no NUL.
 */
char *json_str_escape(char *o, const char *s, size_t n);

/* Appends NUL-terminated s to b in quotes, escaped as above. 0, or -1 when
 * out of memory (b keeps what it had). */
int json_str_put(struct buf *b, const char *s);

#endif
