/* json_build.c -- the two helpers every jansson writer builds its objects with */
#include "json_build.h"

int
jb_set(json_t *o, const char *key, json_t *v)
{
    return v == NULL || json_object_set_new(o, key, v) == -1 ? -1 : 0;
}

json_t *
jb_int_or_null(int known, int64_t v)
{
    return known ? json_integer((json_int_t)v) : json_null();
}
