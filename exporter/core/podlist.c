/* podlist.c -- the pods of one node as the exporter needs them: UID, names, container
 * IDs, budgets
 *
 * One pass with the jscan pull reader; every byte is still checked. A body
 * whose shape is wrong is refused whole: a half-read list could label a
 * process with the wrong pod. */
#include "podlist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "pods_json.h"
#include "pod.h"

struct walk {
    struct js_scan w_s;
    int w_oom;
    int w_finished;  /* the item being read is in phase Succeeded or Failed */
    int w_too_large; /* 1: more than POD_LIST_MAX pods; 2: their strings passed
                        POD_LIST_MAX_TEXT */
    size_t w_text;   /* bytes of the kept pods' strings */
};

static void
pod_clear(struct pl_pod *p)
{
    free(p->pp_uid);
    free(p->pp_mirror_uid);
    free(p->pp_namespace);
    free(p->pp_name);
    for (size_t i = 0; i < p->pp_ncontainers; i++) {
        free(p->pp_containers[i].pc_id);
        free(p->pp_containers[i].pc_name);
    }
    free(p->pp_containers);
    free(p->pp_budget_error);
    memset(p, 0, sizeof(*p));
}

void
podlist_free(struct pl_pods *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->pl_count; i++)
        pod_clear(&l->pl_items[i]);
    free(l->pl_items);
    free(l->pl_budgets_error);
    l->pl_items = NULL;
    l->pl_count = 0;
    l->pl_budgets_error = NULL;
}

/* Opens the object or array that must come next; a value of another type is
 * told as the shape error what, a byte that starts no value as the reader's
 * syntax error. 0 or -1. */
static int
shape(struct js_scan *s, enum js_type want, const char *what)
{
    enum js_type t = js_peek(s);

    if (t != want && t != JS_ERROR)
        return js_fail(s, what);
    return want == JS_OBJECT ? js_object_begin(s) : js_array_begin(s);
}

/* Reads a string value into *dst (owned), refusing other types and \u0000. */
static int
read_string(struct walk *w, char **dst, const char *what)
{
    struct js_str v;
    int nul = 0;

    if (js_peek(&w->w_s) != JS_STRING)
        return js_fail(&w->w_s, what);
    if (js_string(&w->w_s, &v) == -1)
        return -1;
    free(*dst);
    if ((*dst = js_strdup(&v, &nul)) == NULL) {
        if (!nul)
            w->w_oom = 1;
        return js_fail(&w->w_s, nul ? what : "out of memory");
    }
    return 0;
}

/* metadata.annotations: only the static pod's UID a mirror pod carries. */
static int
read_annotations(struct walk *w, struct pl_pod *p)
{
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (js_peek(&w->w_s) == JS_NULL)
        return js_skip(&w->w_s);
    if (shape(&w->w_s, JS_OBJECT, "metadata.annotations is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "kubernetes.io/config.mirror")) {
            if (js_once(&w->w_s, &seen, 1, "kubernetes.io/config.mirror") == -1 ||
                read_string(w, &p->pp_mirror_uid, "an annotation is not a string") == -1)
                return -1;
        } else if (js_skip(&w->w_s) == -1) {
            return -1;
        }
    }
    return rc;
}

static int
read_metadata(struct walk *w, struct pl_pod *p)
{
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (shape(&w->w_s, JS_OBJECT, "metadata is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "uid")) {
            if (js_once(&w->w_s, &seen, 1, "uid") == -1 ||
                read_string(w, &p->pp_uid, "metadata.uid is not a string") == -1)
                return -1;
        } else if (js_str_eq(&key, "namespace")) {
            if (js_once(&w->w_s, &seen, 2, "namespace") == -1 ||
                read_string(w, &p->pp_namespace, "metadata.namespace is not a string") ==
                    -1)
                return -1;
        } else if (js_str_eq(&key, "name")) {
            if (js_once(&w->w_s, &seen, 4, "name") == -1 ||
                read_string(w, &p->pp_name, "metadata.name is not a string") == -1)
                return -1;
        } else if (js_str_eq(&key, "annotations")) {
            if (js_once(&w->w_s, &seen, 8, "annotations") == -1 ||
                read_annotations(w, p) == -1)
                return -1;
        } else if (js_skip(&w->w_s) == -1) {
            return -1;
        }
    }
    return rc;
}

/* One entry of containerStatuses: kept when it has both a name and an ID. */
static int
read_status(struct walk *w, struct pl_pod *p)
{
    struct js_str key;
    unsigned seen = 0;
    char *name = NULL, *id = NULL;
    struct pl_container *grown;
    const char *bare;
    int rc;

    if (shape(&w->w_s, JS_OBJECT, "a container status is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "name")) {
            if (js_once(&w->w_s, &seen, 1, "name") == -1 ||
                read_string(w, &name, "a container status name is not a string") == -1)
                goto fail;
        } else if (js_str_eq(&key, "containerID")) {
            if (js_once(&w->w_s, &seen, 2, "containerID") == -1 ||
                read_string(w, &id, "containerID is not a string") == -1)
                goto fail;
        } else if (js_skip(&w->w_s) == -1) {
            goto fail;
        }
    }
    if (rc == -1)
        goto fail;
    if (name == NULL || id == NULL || id[0] == '\0') { /* not started yet */
        free(name);
        free(id);
        return 0;
    }
    bare = strstr(id, "://");
    bare = bare ? bare + 3 : id;
    if ((grown = realloc(p->pp_containers, (p->pp_ncontainers + 1) * sizeof(*grown))) ==
        NULL) {
        w->w_oom = 1;
        js_fail(&w->w_s, "out of memory");
        goto fail;
    }
    p->pp_containers = grown;
    grown[p->pp_ncontainers].pc_name = name;
    if ((grown[p->pp_ncontainers].pc_id = strdup(bare)) == NULL) {
        w->w_oom = 1;
        js_fail(&w->w_s, "out of memory");
        goto fail; /* the slot is not counted: name is freed below */
    }
    p->pp_ncontainers++;
    free(id);
    return 0;
fail:
    free(name);
    free(id);
    return -1;
}

static int
read_statuses(struct walk *w, struct pl_pod *p)
{
    int rc;

    if (js_peek(&w->w_s) == JS_NULL)
        return js_skip(&w->w_s);
    if (shape(&w->w_s, JS_ARRAY, "containerStatuses is not an array") == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1)
        if (read_status(w, p) == -1)
            return -1;
    return rc;
}

static int
read_pod_status(struct walk *w, struct pl_pod *p)
{
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (shape(&w->w_s, JS_OBJECT, "status is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "containerStatuses")) {
            if (js_once(&w->w_s, &seen, 1, "containerStatuses") == -1 ||
                read_statuses(w, p) == -1)
                return -1;
        } else if (js_str_eq(&key, "initContainerStatuses")) {
            if (js_once(&w->w_s, &seen, 2, "initContainerStatuses") == -1 ||
                read_statuses(w, p) == -1)
                return -1;
        } else if (js_str_eq(&key, "phase")) {
            char *phase = NULL;
            if (js_once(&w->w_s, &seen, 8, "phase") == -1 ||
                read_string(w, &phase, "status.phase is not a string") == -1) {
                free(phase);
                return -1;
            }
            w->w_finished =
                strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0;
            free(phase);
        } else if (js_str_eq(&key, "ephemeralContainerStatuses")) {
            /* kubectl debug: a container like the others, GPU and all */
            if (js_once(&w->w_s, &seen, 4, "ephemeralContainerStatuses") == -1 ||
                read_statuses(w, p) == -1)
                return -1;
        } else if (js_skip(&w->w_s) == -1) {
            return -1;
        }
    }
    return rc;
}

static int
read_item(struct walk *w, struct pl_pod *p)
{
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (shape(&w->w_s, JS_OBJECT, "an item is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "metadata")) {
            if (js_once(&w->w_s, &seen, 1, "metadata") == -1 || read_metadata(w, p) == -1)
                return -1;
        } else if (js_str_eq(&key, "status")) {
            if (js_once(&w->w_s, &seen, 2, "status") == -1)
                return -1;
            if (js_peek(&w->w_s) == JS_NULL ? js_skip(&w->w_s) == -1
                                            : read_pod_status(w, p) == -1)
                return -1;
        } else if (js_skip(&w->w_s) == -1) {
            return -1;
        }
    }
    if (rc == -1)
        return -1;
    if (p->pp_uid == NULL || p->pp_uid[0] == '\0' || p->pp_namespace == NULL ||
        p->pp_namespace[0] == '\0' || p->pp_name == NULL || p->pp_name[0] == '\0')
        return js_fail(&w->w_s, "an item lacks metadata.uid, namespace or name");
    return 0;
}

/* The bytes of p's strings, as they count toward POD_LIST_MAX_TEXT. */
static size_t
pod_text(const struct pl_pod *p)
{
    size_t n = strlen(p->pp_uid) + strlen(p->pp_namespace) + strlen(p->pp_name) +
               (p->pp_mirror_uid ? strlen(p->pp_mirror_uid) : 0);

    for (size_t i = 0; i < p->pp_ncontainers; i++)
        n += strlen(p->pp_containers[i].pc_id) + strlen(p->pp_containers[i].pc_name);
    return n;
}

/* The items; the array grows by doubling. A finished pod is read (its shape
 * checked like any other's) and dropped. Past the bounds the walk stops. */
static int
read_items(struct walk *w, struct pl_pods *out)
{
    size_t cap = 0;
    int rc;

    if (shape(&w->w_s, JS_ARRAY, "items is not an array") == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        struct pl_pod *p;
        if (out->pl_count == cap) {
            struct pl_pod *grown = NULL;
            cap = cap ? cap * 2 : 16;
            if (cap > SIZE_MAX / sizeof(*grown) ||
                (grown = realloc(out->pl_items, cap * sizeof(*grown))) == NULL) {
                w->w_oom = 1;
                return js_fail(&w->w_s, "out of memory");
            }
            out->pl_items = grown;
        }
        p = &out->pl_items[out->pl_count];
        memset(p, 0, sizeof(*p));
        out->pl_count++; /* counted before it is read, so a failure frees it */
        w->w_finished = 0;
        if (read_item(w, p) == -1)
            return -1;
        if (w->w_finished) { /* holds no seat: no tenant */
            pod_clear(p);
            out->pl_count--;
            continue;
        }
        w->w_text += pod_text(p);
        if (out->pl_count > POD_LIST_MAX || w->w_text > POD_LIST_MAX_TEXT) {
            w->w_too_large = out->pl_count > POD_LIST_MAX ? 1 : 2;
            return js_fail(&w->w_s, POD_LIST_TOO_LARGE);
        }
    }
    return rc;
}

/* qsort order of the items by UID, then by position, so the first of equal
 * UIDs (the one a scan from the front would find) sorts first. */
static int
by_uid_then_position(const void *a, const void *b)
{
    const struct pl_pod *x = *(const struct pl_pod *const *)a;
    const struct pl_pod *y = *(const struct pl_pod *const *)b;
    int c = strcmp(x->pp_uid, y->pp_uid);

    return c != 0 ? c : (x > y) - (x < y);
}

/* The first item (by position) whose UID is uid, in index sorted as above;
 * NULL when none. */
static struct pl_pod *
first_with_uid(struct pl_pod **index, size_t n, const char *uid)
{
    size_t lo = 0, hi = n;

    while (lo < hi) { /* lower bound: the first entry not below uid */
        size_t mid = lo + (hi - lo) / 2;

        if (strcmp(index[mid]->pp_uid, uid) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(index[lo]->pp_uid, uid) == 0 ? index[lo] : NULL;
}

/* Each pod's budget from the receiver's reading of the same body. -1 only
 * when out of memory; a body that parser refuses leaves the budgets NONE and
 * says why in pl_budgets_error. */
static int
read_budgets(const char *body, size_t len, const char *resource,
             const struct bsrc_order *sources, struct pl_pods *out)
{
    struct pod_parse_opts opts = {resource, "", NULL, NULL, NULL};
    struct pod_list pods;
    struct pl_pod **index = NULL;
    char why[512];

    if (pods_json_parse_sources(body, len, &opts, sources, &pods, why, sizeof(why)) ==
        -1) {
        if (strcmp(why, "out of memory") == 0)
            return -1;
        return (out->pl_budgets_error = strdup(why)) == NULL ? -1 : 0;
    }
    /* Paired by UID: both readers keep every item, but a match by position
     * would silently pair the wrong pods if that ever changed. A sorted index
     * keeps it O(n log n) on a 5,000-pod node. */
    if (out->pl_count > 0) {
        if ((index = calloc(out->pl_count, sizeof(*index))) == NULL) {
            pod_list_free(&pods);
            return -1;
        }
        for (size_t j = 0; j < out->pl_count; j++)
            index[j] = &out->pl_items[j];
        qsort(index, out->pl_count, sizeof(*index), by_uid_then_position);
    }
    for (size_t i = 0; i < pods.pl_count; i++) {
        const struct pod *src = &pods.pl_pods[i];
        struct pl_pod *dst = first_with_uid(index, out->pl_count, src->p_uid);

        if (dst == NULL || dst->pp_budget != PL_BUDGET_NONE)
            continue;
        dst->pp_budget_source = src->p_budget_source;
        if (src->p_budget_gpus > 0) { /* a share: resolved per poll, by its GPU */
            dst->pp_budget = PL_BUDGET_SHARE;
            dst->pp_budget_mib = src->p_budget_base_mib;
            dst->pp_budget_gpus = src->p_budget_gpus;
        } else if (src->p_budget_state == BUDGET_OK) {
            dst->pp_budget = PL_BUDGET_OK;
            dst->pp_budget_mib = src->p_budget_mib;
        } else if (src->p_budget_state == BUDGET_BAD) {
            dst->pp_budget = PL_BUDGET_BAD;
            if ((dst->pp_budget_error = strdup(
                     src->p_budget_error ? src->p_budget_error : "unreadable")) == NULL) {
                free(index);
                pod_list_free(&pods);
                return -1;
            }
        }
    }
    free(index);
    pod_list_free(&pods);
    return 0;
}

int
podlist_parse(const char *body, size_t len, const char *resource, struct pl_pods *out,
              char *err, size_t errlen)
{
    return podlist_parse_sources(body, len, resource, NULL, out, err, errlen);
}

int
podlist_parse_sources(const char *body, size_t len, const char *resource,
                      const struct bsrc_order *sources, struct pl_pods *out, char *err,
                      size_t errlen)
{
    struct walk w;
    struct js_str key;
    unsigned seen = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&w, 0, sizeof(w));
    js_init(&w.w_s, body, len);
    if (shape(&w.w_s, JS_OBJECT, "not a PodList: not an object") == -1)
        goto fail;
    while ((rc = js_object_next(&w.w_s, &key)) == 1) {
        if (js_str_eq(&key, "items")) {
            if (js_once(&w.w_s, &seen, 1, "items") == -1 || read_items(&w, out) == -1)
                goto fail;
        } else if (js_skip(&w.w_s) == -1) {
            goto fail;
        }
    }
    if (rc == -1 || js_end(&w.w_s) == -1)
        goto fail;
    if (!(seen & 1)) {
        js_fail(&w.w_s, "not a PodList: no items array");
        goto fail;
    }
    if (resource != NULL && resource[0] != '\0' &&
        read_budgets(body, len, resource, sources, out) == -1) {
        w.w_oom = 1;
        goto fail;
    }
    return 0;
fail:
    if (w.w_too_large)
        pods_json_too_large(w.w_too_large == 2, err, errlen);
    else
        snprintf(err, errlen, "%s", w.w_oom ? "out of memory" : w.w_s.js_err);
    podlist_free(out);
    return -1;
}

const struct pl_pod *
podlist_find(const struct pl_pods *l, const char *uid)
{
    for (size_t i = 0; l != NULL && i < l->pl_count; i++)
        if (strcmp(l->pl_items[i].pp_uid, uid) == 0 ||
            (l->pl_items[i].pp_mirror_uid != NULL &&
             strcmp(l->pl_items[i].pp_mirror_uid, uid) == 0))
            return &l->pl_items[i];
    return NULL;
}

const char *
podlist_container(const struct pl_pod *p, const char *id)
{
    for (size_t i = 0; p != NULL && i < p->pp_ncontainers; i++)
        if (strcmp(p->pp_containers[i].pc_id, id) == 0)
            return p->pp_containers[i].pc_name;
    return NULL;
}

int
podlist_share_mib(const struct pl_pod *p, const uint64_t *gpus, size_t ngpus,
                  const uint64_t *all_totals, size_t nall, int64_t *mib, char *why,
                  size_t whylen)
{
    struct bsrc_budget b;
    const uint64_t *t = ngpus > 0 ? gpus : all_totals;
    size_t n = ngpus > 0 ? ngpus : nall;

    if (n == 0) {
        snprintf(why, whylen, "%s", BSRC_NEEDS_TOTAL);
        return -1;
    }
    for (size_t i = 1; i < n; i++)
        if (t[i] != t[0]) {
            snprintf(why, whylen, "%s",
                     ngpus > 0 ? "needs the GPU's total; its GPUs differ in size"
                               : "needs the GPU's total; it holds no GPU memory and the "
                                 "node's GPUs differ in size");
            return -1;
        }
    memset(&b, 0, sizeof(b));
    b.bb_state = BSRC_STATE_OK;
    b.bb_mib = p->pp_budget_mib;
    b.bb_gpus = p->pp_budget_gpus;
    return bsrc_resolve(&b, 1, (double)t[0], mib, why, whylen);
}
