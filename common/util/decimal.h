/* decimal.h -- the one reader of a plain non-negative decimal integer (settings, labels)
 */
#ifndef GVW_DECIMAL_H
#define GVW_DECIMAL_H

#include <stdint.h>

/*
 * Reads s as ASCII digits only: no sign, no space, no suffix, not empty.
 * Returns 0 and sets *out; -1 when s is not such a number; -2 when it is
 * above max (also what would overflow int64_t). *out is untouched on error.
 */
int decimal_parse(const char *s, int64_t max, int64_t *out);

#endif
