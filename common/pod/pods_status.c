/* pods_status.c -- a pod's status in the PodList walk: its phase, start time, IP, DRA
 * claims and (POD_KEEP_IDS) the containers that started, by their bare IDs */
#include <stdlib.h>
#include <string.h>

#include "pods_walk.h"
#include "rfc3339.h"
#include "strpool.h"

/* The bare container ID of v (its runtime prefix, "containerd://" and the like, cut
 * off) into the pool; NULL when out of memory. */
static char *
pool_bare_id(struct walk *w, const struct js_str *v)
{
    char small[128], *heap = NULL, *out;
    const char *s = v->jv_raw;
    size_t len = v->jv_len, i, at = 0;

    if (v->jv_escaped) {
        len = js_str_len(v);
        if (len < sizeof(small))
            s = small;
        else if ((s = heap = malloc(len + 1)) == NULL)
            return NULL;
        js_str_decode(v, (char *)s);
    }
    for (i = 0; i + 3 <= len; i++)
        if (memcmp(s + i, "://", 3) == 0) {
            at = i + 3;
            break;
        }
    out = strpool_dup(w->w_pool, s + at, len - at);
    free(heap);
    return out;
}

/* One entry of a containerStatuses array (POD_KEEP_IDS): kept when it has both a
 * name and an ID (one not started yet has none). */
static int
read_ctr_status(struct walk *w, struct pod *p)
{
    struct js_str key, name = {NULL, 0, 0}, id = {NULL, 0, 0};
    struct pod_container *c;
    unsigned seen = 0;
    int rc, is_name, have_name = 0, have_id = 0;

    if (js_peek(&w->w_s) != JS_OBJECT && !W_STRICT(w))
        return js_skip(&w->w_s);
    if (walk_shape(w, JS_OBJECT, "a container status is not an object") == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        is_name = js_str_eq(&key, "name");
        if (!is_name && !js_str_eq(&key, "containerID"))
            rc = js_skip(&w->w_s);
        else if (js_once(&w->w_s, &seen, is_name ? 1 : 2,
                         is_name ? "name" : "containerID") == -1)
            rc = -1;
        else if (is_name)
            rc = have_name =
                walk_read_str(w, &name, "a container status name is not a string");
        else
            rc = have_id = walk_read_str(w, &id, "containerID is not a string");
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (have_name != 1 || have_id != 1 || id.jv_len == 0) /* not started yet */
        return 0;
    if (w->w_ctr_count == w->w_ctr_cap) {
        size_t cap = w->w_ctr_cap ? w->w_ctr_cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof(*c) ||
            (c = realloc(w->w_out->pl_containers, cap * sizeof(*c))) == NULL)
            goto oom;
        w->w_out->pl_containers = c;
        w->w_ctr_cap = cap;
    }
    c = &w->w_out->pl_containers[w->w_ctr_count];
    if (walk_keep_str(w, &name, &c->pk_name) == -1)
        return -1;
    if ((c->pk_id = pool_bare_id(w, &id)) == NULL)
        goto oom;
    w->w_ctr_count++;
    p->p_container_count++;
    return 0;
oom:
    w->w_oom = 1;
    return js_fail(&w->w_s, "out of memory");
}

/* status.containerStatuses, .initContainerStatuses or .ephemeralContainerStatuses
 * (kubectl debug: a container like the others, GPU and all). */
static int
read_ctr_statuses(struct walk *w, struct pod *p)
{
    enum js_type t = js_peek(&w->w_s);
    int rc;

    if (t == JS_NULL || (t != JS_ARRAY && !W_STRICT(w)))
        return js_skip(&w->w_s);
    if (walk_shape(w, JS_ARRAY, "containerStatuses is not an array") == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1)
        if (read_ctr_status(w, p) == -1)
            return -1;
    return rc;
}

/* status: phase, startTime, podIP, the DRA claims and (POD_KEEP_IDS) the
 * containers that started. */
int
walk_status(struct walk *w, struct pod *p)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses",
                                        "ephemeralContainerStatuses"};
    struct js_str key, v;
    char when[64];
    unsigned seen = 0;
    enum js_type t = js_peek(&w->w_s);
    int rc, k;

    if (t != JS_OBJECT) {
        if (W_STRICT(w) && t != JS_NULL)
            return walk_shape(w, JS_OBJECT, "status is not an object");
        return js_skip(&w->w_s);
    }
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        for (k = 0; (w->w_keep & POD_KEEP_IDS) && k < 3 && !js_str_eq(&key, lists[k]);
             k++)
            ;
        if (js_str_eq(&key, "phase")) {
            if (js_once(&w->w_s, &seen, 1, "phase") == -1)
                return -1;
            if ((rc = walk_read_str(w, &v, "status.phase is not a string")) == 1) {
                p->p_running = js_str_eq(&v, "Running");
                w->w_finished = js_str_eq(&v, "Succeeded") || js_str_eq(&v, "Failed");
            }
        } else if (js_str_eq(&key, "startTime")) {
            if ((rc = walk_once(w, &seen, 2, "startTime")) == 0 &&
                js_peek(&w->w_s) == JS_STRING) {
                if ((rc = js_string(&w->w_s, &v)) == 0 &&
                    js_str_copy(&v, when, sizeof(when)) < sizeof(when) &&
                    strlen(when) == js_str_len(&v))
                    p->p_started = rfc3339_parse(when);
            } else if (rc != -1) {
                rc = js_skip(&w->w_s);
            }
        } else if (js_str_eq(&key, "podIP")) {
            if ((rc = walk_once(w, &seen, 4, "podIP")) != -1)
                rc = rc == 0 && js_peek(&w->w_s) == JS_STRING && !(w->w_keep & POD_LEAN)
                         ? walk_read_optional(w, &p->p_ip)
                         : js_skip(&w->w_s);
        } else if (js_str_eq(&key, "resourceClaimStatuses")) {
            if ((rc = walk_once(w, &seen, 8, "resourceClaimStatuses")) == 1)
                rc = js_skip(&w->w_s);
            else if (rc == 0 && (rc = pods_budget_claims(&w->w_budget, &w->w_s)) == -1 &&
                     !w->w_s.js_failed)
                w->w_oom = 1;
        } else if ((w->w_keep & POD_KEEP_IDS) && k < 3) {
            rc = js_once(&w->w_s, &seen, 16u << k, lists[k]) == -1
                     ? -1
                     : read_ctr_statuses(w, p);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    return rc;
}
