/* claim_json.c -- DRA ResourceClaims for BUDGET_SOURCES=dra: the claims a PodList names,
 * and one ResourceClaim's allocated memory, walked with the pull reader (no I/O) */
#include "claim_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget_src.h"
#include "jscan.h"

/* The string value at s, malloc'd (NULL: not a string, skipped; *oom on failure). */
static int
dup_string(struct js_scan *s, char **dst, int *oom)
{
    struct js_str v;
    int nul = 0;

    *dst = NULL;
    if (js_peek(s) != JS_STRING)
        return js_skip(s);
    if (js_string(s, &v) == -1)
        return -1;
    if ((*dst = js_strdup(&v, &nul)) == NULL && !nul)
        return *oom = 1, -1;
    return 0;
}

static void
claim_clear(struct dra_claim *c)
{
    free(c->dc_namespace);
    free(c->dc_name);
    free(c->dc_error);
    for (size_t i = 0; i < c->dc_memory_count; i++)
        if (c->dc_memory[i] != BSRC_NOT_STRING)
            free(c->dc_memory[i]);
    free(c->dc_memory);
    memset(c, 0, sizeof(*c));
}

void
dra_claims_free(struct dra_claims *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->dl_count; i++)
        claim_clear(&l->dl_items[i]);
    free(l->dl_items);
    memset(l, 0, sizeof(*l));
}

const struct dra_claim *
dra_claims_find(const struct dra_claims *l, const char *ns, const char *name)
{
    for (size_t i = 0; l != NULL && ns != NULL && name != NULL && i < l->dl_count; i++)
        if (strcmp(l->dl_items[i].dc_namespace, ns) == 0 &&
            strcmp(l->dl_items[i].dc_name, name) == 0)
            return &l->dl_items[i];
    return NULL;
}

/* Adds ns/name once. 0, or -1 when out of memory. */
static int
add_ref(struct dra_claims *l, const char *ns, const char *name)
{
    struct dra_claim *grown, *c;

    if (dra_claims_find(l, ns, name) != NULL)
        return 0;
    if (l->dl_count == DRA_CLAIMS_MAX) {
        l->dl_truncated = 1;
        return 0;
    }
    if ((grown = realloc(l->dl_items, (l->dl_count + 1) * sizeof(*grown))) == NULL)
        return -1;
    l->dl_items = grown;
    c = &grown[l->dl_count];
    memset(c, 0, sizeof(*c));
    if ((c->dc_namespace = strdup(ns)) == NULL || (c->dc_name = strdup(name)) == NULL) {
        claim_clear(c);
        return -1;
    }
    l->dl_count++;
    return 0;
}

/* spec.resourceClaims or status.resourceClaimStatuses: each resourceClaimName into
 * names (up to 64 for both). */
static int
read_names(struct js_scan *s, char **names, size_t *n, int *oom)
{
    struct js_str key;
    int rc, rc2;

    if (js_peek(s) != JS_ARRAY)
        return js_skip(s);
    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1) {
        if (js_peek(s) != JS_OBJECT) {
            if (js_skip(s) == -1)
                return -1;
            continue;
        }
        if (js_object_begin(s) == -1)
            return -1;
        while ((rc2 = js_object_next(s, &key)) == 1) {
            if (js_str_eq(&key, "resourceClaimName") && *n < 64) {
                if (dup_string(s, &names[*n], oom) == -1)
                    return -1;
                if (names[*n] != NULL)
                    (*n)++;
            } else if (js_skip(s) == -1) {
                return -1;
            }
        }
        if (rc2 == -1)
            return -1;
    }
    return rc;
}

/* An object whose member key is read by fn, the rest skipped. */
static int
member(struct js_scan *s, const char *want, int (*fn)(struct js_scan *, void *),
       void *arg)
{
    struct js_str key;
    int rc;

    if (js_peek(s) != JS_OBJECT)
        return js_skip(s);
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1)
        if ((js_str_eq(&key, want) ? fn(s, arg) : js_skip(s)) == -1)
            return -1;
    return rc;
}

struct item {
    char *i_ns;
    char *i_names[64];
    size_t i_n;
    int *i_oom;
};

static int
item_ns(struct js_scan *s, void *arg)
{
    struct item *it = arg;

    free(it->i_ns);
    return dup_string(s, &it->i_ns, it->i_oom);
}

static int
item_claims(struct js_scan *s, void *arg)
{
    struct item *it = arg;

    return read_names(s, it->i_names, &it->i_n, it->i_oom);
}

int
claim_json_refs(const char *body, size_t len, struct dra_claims *out)
{
    struct js_scan s;
    struct js_str key;
    int rc, oom = 0, fail = 0;

    memset(out, 0, sizeof(*out));
    js_init(&s, body, len);
    if (js_object_begin(&s) == -1)
        return 0;
    while (!fail && (rc = js_object_next(&s, &key)) == 1) {
        if (!js_str_eq(&key, "items") || js_peek(&s) != JS_ARRAY) {
            if (js_skip(&s) == -1)
                break;
            continue;
        }
        if (js_array_begin(&s) == -1)
            break;
        while (!fail && (rc = js_array_next(&s)) == 1) {
            struct item it;
            struct js_str k2;
            int rc2;

            memset(&it, 0, sizeof(it));
            it.i_oom = &oom;
            if (js_peek(&s) != JS_OBJECT) {
                fail = js_skip(&s) == -1;
                continue;
            }
            if (js_object_begin(&s) == -1)
                break;
            while ((rc2 = js_object_next(&s, &k2)) == 1) {
                /* A claim named directly (shared) is in the spec alone, one made
                 * from a template in the status alone. */
                int r = js_str_eq(&k2, "metadata") ? member(&s, "namespace", item_ns, &it)
                        : js_str_eq(&k2, "spec")
                            ? member(&s, "resourceClaims", item_claims, &it)
                        : js_str_eq(&k2, "status")
                            ? member(&s, "resourceClaimStatuses", item_claims, &it)
                            : js_skip(&s);
                if (r == -1) {
                    rc2 = -1;
                    break;
                }
            }
            for (size_t i = 0; i < it.i_n; i++) {
                if (rc2 != -1 && it.i_ns != NULL && add_ref(out, it.i_ns, it.i_names[i]))
                    oom = 1;
                free(it.i_names[i]);
            }
            free(it.i_ns);
            if (rc2 == -1 || oom)
                fail = 1;
        }
        break;
    }
    if (oom) {
        dra_claims_free(out);
        return -1;
    }
    return 0;
}

struct alloc_walk {
    const char *a_driver;
    struct dra_claim *a_c;
    int a_oom;
};

/* One consumedCapacity map: its memory value. */
static int
capacity_memory(struct js_scan *s, void *arg)
{
    char **dst = arg;
    int oom = 0;

    if (js_peek(s) != JS_STRING) {
        *dst = (char *)BSRC_NOT_STRING;
        return js_skip(s);
    }
    if (dup_string(s, dst, &oom) == -1)
        return -1;
    if (*dst == NULL)
        *dst = (char *)BSRC_NOT_STRING; /* U+0000 inside: no quantity */
    return 0;
}

/* One allocation result: its driver and consumedCapacity.memory. */
static int
read_result(struct js_scan *s, struct alloc_walk *w)
{
    struct js_str key;
    char *driver = NULL, *mem = NULL, **grown;
    int rc, oom = 0;

    if (js_peek(s) != JS_OBJECT)
        return js_skip(s);
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        int r;
        if (js_str_eq(&key, "driver") && driver == NULL)
            r = dup_string(s, &driver, &oom);
        else if (js_str_eq(&key, "consumedCapacity") && mem == NULL)
            r = member(s, "memory", capacity_memory, &mem);
        else
            r = js_skip(s);
        if (r == -1) {
            rc = -1;
            break;
        }
    }
    if (rc != -1 && mem != NULL && driver != NULL && strcmp(driver, w->a_driver) == 0) {
        if ((grown = realloc(w->a_c->dc_memory,
                             (w->a_c->dc_memory_count + 1) * sizeof(*grown))) == NULL) {
            w->a_oom = 1;
            rc = -1;
        } else {
            w->a_c->dc_memory = grown;
            grown[w->a_c->dc_memory_count++] = mem;
            mem = NULL;
        }
    }
    if (oom)
        w->a_oom = 1;
    free(driver);
    if (mem != BSRC_NOT_STRING)
        free(mem);
    return rc == -1 ? -1 : 0;
}

static int
results(struct js_scan *s, void *arg)
{
    int rc;

    if (js_peek(s) != JS_ARRAY)
        return js_skip(s);
    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1)
        if (read_result(s, arg) == -1)
            return -1;
    return rc;
}

static int
devices(struct js_scan *s, void *arg)
{
    return member(s, "results", results, arg);
}

static int
allocation(struct js_scan *s, void *arg)
{
    struct alloc_walk *w = arg;

    if (js_peek(s) != JS_OBJECT)
        return js_skip(s);
    w->a_c->dc_allocated = 1;
    return member(s, "devices", devices, arg);
}

static int
reserved(struct js_scan *s, void *arg)
{
    struct alloc_walk *w = arg;
    int rc;

    if (js_peek(s) != JS_ARRAY)
        return js_skip(s);
    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1) {
        w->a_c->dc_reserved++;
        if (js_skip(s) == -1)
            return -1;
    }
    return rc;
}

static int
status(struct js_scan *s, void *arg)
{
    struct js_str key;
    int rc;

    if (js_peek(s) != JS_OBJECT)
        return js_skip(s);
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        int r = js_str_eq(&key, "allocation")    ? allocation(s, arg)
                : js_str_eq(&key, "reservedFor") ? reserved(s, arg)
                                                 : js_skip(s);
        if (r == -1)
            return -1;
    }
    return rc;
}

int
claim_json_parse(const char *body, size_t len, const char *driver, struct dra_claim *c,
                 char *err, size_t errlen)
{
    struct alloc_walk w = {driver != NULL ? driver : "", c, 0};
    struct js_scan s;

    for (size_t i = 0; i < c->dc_memory_count; i++)
        if (c->dc_memory[i] != BSRC_NOT_STRING)
            free(c->dc_memory[i]);
    free(c->dc_memory);
    c->dc_memory = NULL;
    c->dc_memory_count = c->dc_reserved = 0;
    c->dc_allocated = c->dc_fetched = 0;
    js_init(&s, body, len);
    if (js_peek(&s) != JS_OBJECT) {
        snprintf(err, errlen, "not a ResourceClaim: not an object");
        return -1;
    }
    if (member(&s, "status", status, &w) == -1 || js_end(&s) == -1) {
        snprintf(err, errlen, "%s",
                 w.a_oom ? "out of memory" : "not a ResourceClaim: not JSON");
        c->dc_allocated = 0;
        return -1;
    }
    c->dc_fetched = 1;
    return 0;
}
