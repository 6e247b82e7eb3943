/* jsonpatch.c -- RFC 6902 JSON Patch on jansson, enough to judge a client's PATCH */
#include "jsonpatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Unescapes one RFC 6901 reference token in place ("~1" -> "/", "~0" -> "~"). */
static int
unescape_token(char *tok)
{
    char *r = tok, *wr = tok;

    while (*r != '\0') {
        if (*r == '~') {
            if (r[1] == '0')
                *wr++ = '~';
            else if (r[1] == '1')
                *wr++ = '/';
            else
                return -1;
            r += 2;
        } else {
            *wr++ = *r++;
        }
    }
    *wr = '\0';
    return 0;
}

/* An array index token: digits without a leading zero, below size (or == size if
 * allow_end). */
static int
array_index(const char *tok, size_t size, int allow_end, size_t *idx)
{
    char *end;
    unsigned long long v;

    if (tok[0] < '0' || tok[0] > '9' || (tok[0] == '0' && tok[1] != '\0'))
        return -1;
    v = strtoull(tok, &end, 10);
    if (*end != '\0' || v > size || (v == size && !allow_end))
        return -1;
    *idx = (size_t)v;
    return 0;
}

/*
 * Splits pointer ptr into its container in doc and its last token. *key is a
 * malloc'd copy of the unescaped last token (caller frees). The root pointer
 * "" has no container: *parent is NULL and *key is NULL.
 */
static int
resolve(json_t *doc, const char *ptr, json_t **parent, char **key, char *err,
        size_t errlen)
{
    char *copy, *tok, *next;
    json_t *cur = doc;
    size_t idx;

    *parent = NULL;
    *key = NULL;
    if (ptr[0] == '\0')
        return JP_OK;
    if (ptr[0] != '/') {
        snprintf(err, errlen, "invalid JSON pointer \"%s\"", ptr);
        return JP_BAD_PATCH;
    }
    copy = strdup(ptr + 1);
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return JP_NOT_APPLIED;
    }
    tok = copy;
    for (;;) {
        next = strchr(tok, '/');
        if (next != NULL)
            *next = '\0';
        if (unescape_token(tok) != 0) {
            snprintf(err, errlen, "invalid JSON pointer \"%s\"", ptr);
            free(copy);
            return JP_BAD_PATCH;
        }
        if (next == NULL)
            break;
        if (json_is_object(cur))
            cur = json_object_get(cur, tok);
        else if (json_is_array(cur) &&
                 array_index(tok, json_array_size(cur), 0, &idx) == 0)
            cur = json_array_get(cur, idx);
        else
            cur = NULL;
        if (cur == NULL) {
            snprintf(err, errlen, "doc is missing path: \"%s\"", ptr);
            free(copy);
            return JP_NOT_APPLIED;
        }
        tok = next + 1;
    }
    if (!json_is_object(cur) && !json_is_array(cur)) {
        snprintf(err, errlen, "doc is missing path: \"%s\"", ptr);
        free(copy);
        return JP_NOT_APPLIED;
    }
    *parent = cur;
    *key = strdup(tok);
    free(copy);
    if (*key == NULL) {
        snprintf(err, errlen, "out of memory");
        return JP_NOT_APPLIED;
    }
    return JP_OK;
}

/* The value at ptr (borrowed), or NULL. */
static json_t *
get_at(json_t *doc, const char *ptr, char *err, size_t errlen)
{
    json_t *parent, *v = NULL;
    char *key;
    size_t idx;

    if (resolve(doc, ptr, &parent, &key, err, errlen) != JP_OK)
        return NULL;
    if (parent == NULL)
        return doc;
    if (json_is_object(parent))
        v = json_object_get(parent, key);
    else if (array_index(key, json_array_size(parent), 0, &idx) == 0)
        v = json_array_get(parent, idx);
    if (v == NULL)
        snprintf(err, errlen, "doc is missing path: \"%s\"", ptr);
    free(key);
    return v;
}

/* add/replace/remove at ptr. value is stolen (add, replace); NULL for remove. */
static int
set_at(json_t *doc, const char *op, const char *ptr, json_t *value, char *err,
       size_t errlen)
{
    json_t *parent;
    char *key;
    size_t idx;
    int rc, exists;

    rc = resolve(doc, ptr, &parent, &key, err, errlen);
    if (rc != JP_OK || parent == NULL) {
        if (rc == JP_OK)
            snprintf(err, errlen, "the sim does not %s the whole document", op);
        json_decref(value);
        return rc != JP_OK ? rc : JP_NOT_APPLIED;
    }
    rc = JP_NOT_APPLIED;
    if (json_is_object(parent)) {
        exists = json_object_get(parent, key) != NULL;
        if (strcmp(op, "add") != 0 && !exists)
            snprintf(err, errlen, "%s operation does not apply: doc is missing key: %s",
                     op, ptr);
        else if (strcmp(op, "remove") == 0)
            rc = json_object_del(parent, key) == 0 ? JP_OK : JP_NOT_APPLIED;
        else {
            rc = json_object_set_new(parent, key, value) == 0 ? JP_OK : JP_NOT_APPLIED;
            value = NULL;
        }
    } else if (strcmp(op, "add") == 0 && strcmp(key, "-") == 0) {
        rc = json_array_append_new(parent, value) == 0 ? JP_OK : JP_NOT_APPLIED;
        value = NULL;
    } else if (array_index(key, json_array_size(parent), strcmp(op, "add") == 0, &idx) !=
               0) {
        snprintf(err, errlen, "%s operation does not apply: bad array index in %s", op,
                 ptr);
    } else if (strcmp(op, "add") == 0) {
        rc = json_array_insert_new(parent, idx, value) == 0 ? JP_OK : JP_NOT_APPLIED;
        value = NULL;
    } else if (strcmp(op, "remove") == 0) {
        rc = json_array_remove(parent, idx) == 0 ? JP_OK : JP_NOT_APPLIED;
    } else {
        rc = json_array_set_new(parent, idx, value) == 0 ? JP_OK : JP_NOT_APPLIED;
        value = NULL;
    }
    json_decref(value);
    free(key);
    return rc;
}

static int
apply_op(json_t *doc, const json_t *opj, size_t i, char *err, size_t errlen)
{
    const char *op, *path, *from = NULL;
    json_t *value = NULL, *src;
    json_error_t je;

    /* Unknown members are allowed by RFC 6902; only the ones an op needs are checked. */
    if (json_unpack_ex((json_t *)opj, &je, 0, "{s:s, s:s, s?s, s?o}", "op", &op, "path",
                       &path, "from", &from, "value", &value) != 0) {
        snprintf(err, errlen, "operation %zu: %s", i, je.text);
        return JP_BAD_PATCH;
    }
    if (strcmp(op, "add") == 0 || strcmp(op, "replace") == 0 || strcmp(op, "test") == 0) {
        if (value == NULL) {
            snprintf(err, errlen, "operation %zu (%s): missing value", i, op);
            return JP_BAD_PATCH;
        }
        if (strcmp(op, "test") != 0)
            return set_at(doc, op, path, json_deep_copy(value), err, errlen);
        src = get_at(doc, path, err, errlen);
        if (src == NULL)
            return JP_NOT_APPLIED;
        if (!json_equal(src, value)) {
            snprintf(err, errlen, "testing value %s failed: test failed", path);
            return JP_NOT_APPLIED;
        }
        return JP_OK;
    }
    if (strcmp(op, "remove") == 0)
        return set_at(doc, op, path, NULL, err, errlen);
    if (strcmp(op, "move") == 0 || strcmp(op, "copy") == 0) {
        if (from == NULL) {
            snprintf(err, errlen, "operation %zu (%s): missing from", i, op);
            return JP_BAD_PATCH;
        }
        src = get_at(doc, from, err, errlen);
        if (src == NULL)
            return JP_NOT_APPLIED;
        src = json_deep_copy(src);
        if (src == NULL) {
            snprintf(err, errlen, "out of memory");
            return JP_NOT_APPLIED;
        }
        if (strcmp(op, "move") == 0 &&
            set_at(doc, "remove", from, NULL, err, errlen) != 0) {
            json_decref(src);
            return JP_NOT_APPLIED;
        }
        return set_at(doc, "add", path, src, err, errlen);
    }
    snprintf(err, errlen, "Unexpected kind: %s", op);
    return JP_BAD_PATCH;
}

int
jsonpatch_apply(json_t *doc, const json_t *patch, char *err, size_t errlen)
{
    const json_t *opj;
    size_t i;
    int rc;

    if (!json_is_array(patch)) {
        snprintf(err, errlen,
                 "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                 json_is_object(patch) ? "object" : "value");
        return JP_BAD_PATCH;
    }
    /* Decode every op before applying any, as the API server's decoder does. */
    json_array_foreach(patch, i, opj)
    {
        if (!json_is_object(opj)) {
            snprintf(err, errlen, "operation %zu is not an object", i);
            return JP_BAD_PATCH;
        }
    }
    json_array_foreach(patch, i, opj)
    {
        rc = apply_op(doc, opj, i, err, errlen);
        if (rc != JP_OK)
            return rc;
    }
    return JP_OK;
}
