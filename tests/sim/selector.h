/* selector.h -- query strings and label/field selectors, read as the API server does */
#ifndef GVW_SIM_SELECTOR_H
#define GVW_SIM_SELECTOR_H

#include <stddef.h>

#include <jansson.h>

#define MAX_SELECTOR 1024 /* longest selector the sim reads */

/* The value of query parameter key, percent-decoded ('+' is a space) into buf.
 * 1 found, 0 absent, -1 when it does not fit. */
int query_get(const char *query, const char *key, char *buf, size_t len);

/* Looks a selector key up on an object: 1 found (*val set, borrowed), 0 absent,
 * -1 a key the selector may not use (an unsupported field). obj NULL only
 * checks the key. */
typedef int (*lookup_fn)(const void *obj, const char *key, const char **val);

/* lookup_fn over a labels object (a json_t *). */
int label_lookup(const void *labels, const char *key, const char **val);

/*
 * Evaluates a selector against obj: comma-separated terms "k=v", "k==v",
 * "k!=v", and for labels also "k" and "!k"; all must hold. Set-based terms
 * ("k in (a,b)") are refused. 1 match, 0 no match, -1 with a reason in err
 * (unsupported syntax, unknown field). obj NULL validates only.
 */
int selector_match(const char *sel, int is_field, lookup_fn lookup, const void *obj,
                   char *err, size_t errlen);

#endif
