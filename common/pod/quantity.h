/* quantity.h -- the Kubernetes resource.Quantity grammar, as the API server speaks it */
#ifndef GVW_QUANTITY_H
#define GVW_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s (the whole string, no surrounding space) with the full grammar of
 * k8s.io/apimachinery resource.Quantity: optional sign, digits with an
 * optional fraction, then a decimal SI suffix (n u m "" k M G T P E), a binary
 * suffix (Ki Mi Gi Ti Pi Ei) or a decimal exponent (e3, E-2).
 *
 * The result is the integer value rounded UP, as Quantity.Value() does
 * ("1.5" -> 2, "100m" -> 1); a negative value rounds away from zero
 * ("-0.5" -> -1), so it stays visibly negative. For the gpumem resource that
 * integer is MiB. The arithmetic is exact (no floating point).
 * Returns 0 and sets *out, or -1 with a reason in err (malformed, or the value
 * does not fit in int64_t).
 */
int quantity_parse(const char *s, int64_t *out, char *err, size_t errlen);

/* The same on len bytes of s (need not be NUL-terminated). A NUL byte inside
 * the len bytes is an error, so a value cut short by an embedded NUL is never
 * mistaken for a shorter quantity. */
int quantity_parse_n(const char *s, size_t len, int64_t *out, char *err, size_t errlen);

#endif
