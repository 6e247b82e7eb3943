/* json_build.h -- the two helpers every jansson writer builds its objects with */
#ifndef GVW_JSON_BUILD_H
#define GVW_JSON_BUILD_H

#include <stdint.h>

#include <jansson.h>

/*
 * json_object_set_new() that also fails on a NULL value (an allocation that
 * failed upstream), so a chain of jb_set() calls joined by || stops at the first
 * failure. Takes v's reference whatever happens (as json_object_set_new does):
 * the caller frees only o. 0, or -1.
 */
int jb_set(json_t *o, const char *key, json_t *v);

/* v as a JSON integer when known, else JSON null. NULL when out of memory. */
json_t *jb_int_or_null(int known, int64_t v);

#endif
