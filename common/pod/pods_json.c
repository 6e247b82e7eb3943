/* pods_json.c -- reads a Kubernetes PodList into the one pod model every program reads
 *
 * One pass with the jscan pull reader, no DOM: a 5,000-pod list is ~5 MB and
 * the daemon reads a dozen fields of each pod. Members may come in any order,
 * so what a judgement needs is collected first and judged when its object
 * closes. A wrong shape does not stop the walk (the rest must still be JSON,
 * and kind may come after items); the first such error is reported unless
 * the body turns out not to be JSON at all. Finished pods (Succeeded,
 * Failed) are dropped as they are read, and a list past POD_LIST_MAX pods or
 * POD_LIST_MAX_TEXT bytes of kept strings is refused: the model stays small
 * whatever a body under the HTTP cap holds. The exporter reads the same way,
 * stricter (POD_STRICT), and what only some programs keep is asked for with
 * POD_KEEP_*; the spec's declarations are pods_spec.c's. */
#include "pods_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pods_walk.h"
#include "quantity.h"
#include "rfc3339.h"
#include "strpool.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

void
walk_soft(struct walk *w, const char *what)
{
    if (W_STRICT(w) && w->w_budgets && w->w_soft[0] == '\0')
        snprintf(w->w_soft, sizeof(w->w_soft), "%s", what);
}

int
walk_once(struct walk *w, unsigned *seen, unsigned bit, const char *key)
{
    struct js_scan at;
    char msg[sizeof(at.js_err) + 16];

    if (!(*seen & bit)) {
        *seen |= bit;
        return 0;
    }
    if (w->w_lenient)
        return 1;
    if (!W_STRICT(w))
        return js_once(&w->w_s, seen, bit, key);
    /* The decision's reading stops here: its words, position and all. */
    at = w->w_s;
    js_once(&at, seen, bit, key);
    snprintf(msg, sizeof(msg), "not JSON: %s", at.js_err);
    walk_soft(w, msg);
    return 1;
}

/* POD_STRICT: opens the object or array that must come next; a value of another
 * type is told as the shape error what, a byte that starts no value as the reader's
 * syntax error. 0 or -1. */
static int
shape(struct walk *w, enum js_type want, const char *what)
{
    enum js_type t = js_peek(&w->w_s);

    if (t != want && t != JS_ERROR)
        return js_fail(&w->w_s, what);
    return want == JS_OBJECT ? js_object_begin(&w->w_s) : js_array_begin(&w->w_s);
}

/* 1 when v decodes to a string that holds U+0000, 0 when not, -1 when out of
 * memory. jscan refuses a raw control byte, so only an escape can hold one. */
static int
has_nul(const struct js_str *v)
{
    char small[64], *heap;
    size_t n;
    int nul;

    if (!v->jv_escaped)
        return 0;
    if ((n = js_str_copy(v, small, sizeof(small))) < sizeof(small))
        return strlen(small) != n;
    if ((heap = malloc(n + 1)) == NULL)
        return -1;
    js_str_decode(v, heap);
    nul = strlen(heap) != n;
    free(heap);
    return nul;
}

/* A string value into *v: 1. Another value, or one holding U+0000, is passed over
 * (0), or under POD_STRICT refused as what (-1). */
static int
read_str(struct walk *w, struct js_str *v, const char *what)
{
    int nul;

    if (js_peek(&w->w_s) != JS_STRING)
        return W_STRICT(w) ? js_fail(&w->w_s, what) : js_skip(&w->w_s);
    if (js_string(&w->w_s, v) == -1)
        return -1;
    if ((nul = has_nul(v)) == -1) {
        w->w_oom = 1;
        return js_fail(&w->w_s, "out of memory");
    }
    if (nul)
        return W_STRICT(w) ? js_fail(&w->w_s, what) : 0;
    return 1;
}

/* v into the pool as *dst (v holds no U+0000): 0, or -1 when out of memory. */
static int
keep_str(struct walk *w, const struct js_str *v, char **dst)
{
    int nul = 0;

    if ((*dst = js_strdup_pool(v, w->w_pool, &nul)) != NULL || nul)
        return 0;
    w->w_oom = 1;
    return js_fail(&w->w_s, "out of memory");
}

/* A string value the decision may use (the pod IP, the release annotation):
 * kept as is, or left NULL when it holds U+0000. */
static int
read_optional(struct walk *w, char **dst)
{
    struct js_str v;
    int nul = 0;

    if (js_string(&w->w_s, &v) == -1)
        return -1;
    /* js_once refused a repeat, so *dst was NULL; the pool owns the string. */
    if ((*dst = js_strdup_pool(&v, w->w_pool, &nul)) == NULL && !nul)
        return w->w_oom = 1, -1;
    return 0;
}

/* metadata.annotations: mirror and protected. A malformed map or protect
 * value counts as protected: when in doubt, never a victim. POD_KEEP_IDS keeps
 * the mirror's static UID. */
static int
read_annotations(struct walk *w, struct pod *p)
{
    const char *protect = w->w_opts->po_protect_annotation;
    const char *release = w->w_opts->po_release_annotation;
    struct js_str key, v;
    char value[8];
    unsigned seen = 0;
    enum js_type t = js_peek(&w->w_s);
    int rc, mine;

    if (t != JS_OBJECT) {
        if (W_STRICT(w) && t != JS_NULL)
            return shape(w, JS_OBJECT, "metadata.annotations is not an object");
        p->p_protected = t != JS_NULL;
        return js_skip(&w->w_s);
    }
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if ((mine = pods_budget_annotation(&w->w_budget, &w->w_s, &key)) != 0) {
            if (mine == -1)
                return w->w_oom = !w->w_s.js_err[0], -1;
            continue;
        }
        if (js_str_eq(&key, MIRROR_ANNOTATION)) {
            if (js_once(&w->w_s, &seen, 1, MIRROR_ANNOTATION) == -1)
                return -1;
            p->p_mirror = 1;
            if (w->w_keep & POD_KEEP_IDS) {
                if ((mine = read_str(w, &v, "an annotation is not a string")) == -1 ||
                    (mine == 1 && keep_str(w, &v, &p->p_mirror_uid) == -1))
                    return -1;
                continue;
            }
        }
        if (release != NULL && release[0] != '\0' && js_str_eq(&key, release)) {
            if ((mine = walk_once(w, &seen, 4, release)) == -1)
                return -1;
            if (mine == 0 && js_peek(&w->w_s) == JS_STRING) {
                if (read_optional(w, &p->p_release) == -1)
                    return -1;
                continue;
            }
        }
        if (protect != NULL && protect[0] != '\0' && js_str_eq(&key, protect)) {
            if ((mine = walk_once(w, &seen, 2, protect)) == -1)
                return -1;
            if (mine == 1) {
                /* a repeat under POD_STRICT: skipped */
            } else if (js_peek(&w->w_s) != JS_STRING) {
                p->p_protected = 1;
            } else {
                if (js_string(&w->w_s, &v) == -1)
                    return -1;
                p->p_protected = js_str_copy(&v, value, sizeof(value)) == 4 &&
                                 strcasecmp(value, "true") == 0;
                continue;
            }
        }
        if (js_skip(&w->w_s) == -1)
            return -1;
    }
    return rc;
}

/* metadata.labels (POD_KEEP_WORKLOAD): the first pod-template-hash. */
static int
read_labels(struct walk *w, struct pod *p)
{
    struct js_str key;
    int rc;

    if (js_peek(&w->w_s) != JS_OBJECT)
        return js_skip(&w->w_s);
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (p->p_template_hash == NULL && js_str_eq(&key, "pod-template-hash"))
            rc = js_pool_string(&w->w_s, w->w_pool, 0, &p->p_template_hash, &w->w_oom);
        else
            rc = js_skip(&w->w_s);
        if (rc == -1)
            return -1;
    }
    return rc;
}

/* One ownerReference's string member: *is is 1 when it equals lit, else 0
 * (other types too); kept in *dst when dst is not NULL. */
static int
owner_str_is(struct walk *w, const char *lit, int *is, char **dst)
{
    struct js_str v;
    int nul = 0;

    *is = 0;
    if (js_peek(&w->w_s) != JS_STRING)
        return js_skip(&w->w_s);
    if (js_string(&w->w_s, &v) == -1)
        return -1;
    *is = js_str_eq(&v, lit);
    if (dst != NULL && (*dst = js_strdup_pool(&v, w->w_pool, &nul)) == NULL && !nul)
        return w->w_oom = 1, -1;
    return 0;
}

/* metadata.ownerReferences: whether one has controller: true, and whether
 * one is the core Node (the kubelet's mark on a mirror pod, next to the
 * kubernetes.io/config.mirror annotation: either makes it a mirror pod).
 * POD_KEEP_WORKLOAD keeps the first controller's kind and name. */
static int
read_owners(struct walk *w, struct pod *p)
{
    int keep = (w->w_keep & POD_KEEP_WORKLOAD) != 0;
    struct strpool_mark mark;
    struct js_str key;
    char *kind, *name;
    int rc, rc2, is, node, other_api, ctl;

    if (js_peek(&w->w_s) != JS_ARRAY)
        return js_skip(&w->w_s);
    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        if (js_peek(&w->w_s) != JS_OBJECT) {
            if (js_skip(&w->w_s) == -1)
                return -1;
            continue;
        }
        if (js_object_begin(&w->w_s) == -1)
            return -1;
        node = other_api = ctl = 0;
        kind = name = NULL;
        strpool_mark(w->w_pool, &mark);
        while ((rc2 = js_object_next(&w->w_s, &key)) == 1) {
            /* A repeated key is judged the cautious way: any "Node" counts. */
            if (js_str_eq(&key, "kind")) {
                rc2 = owner_str_is(w, "Node", &is, keep && kind == NULL ? &kind : NULL);
                node |= is;
            } else if (js_str_eq(&key, "apiVersion")) {
                rc2 = owner_str_is(w, "v1", &is, NULL);
                other_api |= rc2 == 0 && !is;
            } else if (keep && name == NULL && js_str_eq(&key, "name")) {
                rc2 = js_pool_string(&w->w_s, w->w_pool, 0, &name, &w->w_oom);
            } else {
                if (js_str_eq(&key, "controller")) {
                    ctl = js_peek(&w->w_s) == JS_TRUE;
                    p->p_has_controller |= ctl;
                }
                rc2 = js_skip(&w->w_s);
            }
            if (rc2 == -1)
                return -1;
        }
        if (rc2 == -1)
            return -1;
        if (node && !other_api)
            p->p_mirror = 1;
        if (!keep)
            continue;
        /* The first controller reference (Kubernetes allows one); the others'
         * strings are given back. */
        if (ctl && kind != NULL && name != NULL && p->p_owner_kind == NULL) {
            p->p_owner_kind = kind;
            p->p_owner_name = name;
        } else {
            strpool_rewind(w->w_pool, &mark);
        }
    }
    return rc;
}

/* A required metadata string: *dst stays NULL when it is missing, empty,
 * not a string or holds U+0000; the item is judged when it closes. Under
 * POD_STRICT a value that is no string, or holds U+0000, refuses the list. */
static int
read_required(struct walk *w, char **dst, const char *what)
{
    struct js_str v;
    int rc;

    if (!W_STRICT(w))
        return js_pool_string(&w->w_s, w->w_pool, JS_POOL_NONEMPTY, dst, &w->w_oom);
    if ((rc = read_str(w, &v, what)) != 1)
        return rc;
    return keep_str(w, &v, dst);
}

static int
read_metadata(struct walk *w, struct pod *p)
{
    static const char *const keys[] = {"namespace", "name", "uid"};
    static const char *const strict[] = {"metadata.namespace is not a string",
                                         "metadata.name is not a string",
                                         "metadata.uid is not a string"};
    char **dsts[] = {&p->p_namespace, &p->p_name, &p->p_uid};
    struct js_str key;
    unsigned seen = 0;
    int rc, k;

    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        for (k = 0; k < 3 && !js_str_eq(&key, keys[k]); k++)
            ;
        if (k < 3) {
            rc = js_once(&w->w_s, &seen, 1u << k, keys[k]) == -1
                     ? -1
                     : read_required(w, dsts[k], strict[k]);
        } else if (js_str_eq(&key, "deletionTimestamp")) {
            /* Present and not null: any other value still means "being deleted". */
            p->p_terminating = js_peek(&w->w_s) != JS_NULL;
            rc =
                walk_once(w, &seen, 8, "deletionTimestamp") == -1 ? -1 : js_skip(&w->w_s);
        } else if (js_str_eq(&key, "ownerReferences")) {
            if ((rc = walk_once(w, &seen, 16, "ownerReferences")) != -1)
                rc = rc == 0 ? read_owners(w, p) : js_skip(&w->w_s);
        } else if (js_str_eq(&key, "annotations")) {
            rc = js_once(&w->w_s, &seen, 32, "annotations") == -1
                     ? -1
                     : read_annotations(w, p);
        } else if ((w->w_keep & POD_KEEP_WORKLOAD) && js_str_eq(&key, "labels")) {
            rc = read_labels(w, p);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    return rc;
}

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
    if (shape(w, JS_OBJECT, "a container status is not an object") == -1)
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
                read_str(w, &name, "a container status name is not a string");
        else
            rc = have_id = read_str(w, &id, "containerID is not a string");
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
    if (keep_str(w, &name, &c->pk_name) == -1)
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
    if (shape(w, JS_ARRAY, "containerStatuses is not an array") == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1)
        if (read_ctr_status(w, p) == -1)
            return -1;
    return rc;
}

/* status: phase, startTime, podIP, the DRA claims and (POD_KEEP_IDS) the
 * containers that started. */
static int
read_status(struct walk *w, struct pod *p)
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
            return shape(w, JS_OBJECT, "status is not an object");
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
            if ((rc = read_str(w, &v, "status.phase is not a string")) == 1) {
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
                         ? read_optional(w, &p->p_ip)
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

/* Records the first shape error of an item. */
static void
item_error(struct walk *w, size_t idx, const char *what)
{
    if (w->w_why[0] == '\0')
        snprintf(w->w_why, sizeof(w->w_why), "not a PodList: items[%zu] %s", idx, what);
}

/* p holds no budget (a finished or reservation pod kept, or the budgets refused). */
static void
no_budget(struct pod *p)
{
    p->p_budget_state = BUDGET_NONE;
    p->p_budget_mib = 0;
    p->p_budget_error = NULL;
    p->p_budget_source = NULL;
    p->p_budget_decl = NULL;
    p->p_budget_gpus = 0;
    p->p_budget_base_mib = 0;
}

/* The item's shape once it closed: 0 when it is a pod, 1 when it is not (the
 * error recorded), -1 under POD_STRICT, which refuses the list. */
static int
item_judged(struct walk *w, size_t idx, const struct pod *p, int have_md)
{
    static const char *const req[] = {"namespace", "name", "uid"};
    const char *const v[] = {p->p_namespace, p->p_name, p->p_uid};
    char what[96];
    int k;

    if (W_STRICT(w)) {
        for (k = 0; k < 3; k++)
            if (v[k] == NULL || v[k][0] == '\0')
                return js_fail(&w->w_s, "an item lacks metadata.uid, namespace or name");
        return 0;
    }
    if (!have_md) {
        item_error(w, idx, "has no metadata object");
        return 1;
    }
    for (k = 0; k < 3; k++)
        if (v[k] == NULL) {
            snprintf(what, sizeof(what), "metadata.%s is missing, empty or not a string",
                     req[k]);
            item_error(w, idx, what);
            return 1;
        }
    return 0;
}

/* One item into p. A wrong shape is recorded and the item skipped: 0; -1 on
 * a read error or out of memory (or, under POD_STRICT, a wrong shape). */
static int
read_item(struct walk *w, size_t idx, struct pod *p)
{
    struct js_str key;
    unsigned seen = 0, depth = w->w_s.js_depth;
    int rc, have_md = 0;
    char qerr[64];
    int64_t n;

    pods_budget_pod(&w->w_budget);
    p->p_kai_devices = 1;
    if (W_STRICT(w) && shape(w, JS_OBJECT, "an item is not an object") == -1)
        return -1;
    if (!W_STRICT(w)) {
        if (js_peek(&w->w_s) != JS_OBJECT) {
            item_error(w, idx, "has no metadata object");
            return js_skip(&w->w_s);
        }
        if (js_object_begin(&w->w_s) == -1)
            return -1;
    }
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "metadata")) {
            if (js_once(&w->w_s, &seen, 1, "metadata") == -1)
                return -1;
            if (js_peek(&w->w_s) != JS_OBJECT) {
                if (W_STRICT(w)) /* refused: the value is no object */
                    return shape(w, JS_OBJECT, "metadata is not an object");
                item_error(w, idx, "has no metadata object");
                return js_leave(&w->w_s, depth);
            }
            have_md = 1;
            rc = read_metadata(w, p);
        } else if (js_str_eq(&key, "spec")) {
            if (!w->w_budgets || (rc = walk_once(w, &seen, 2, "spec")) == 1)
                rc = js_skip(&w->w_s);
            else if (rc == 0)
                rc = walk_spec(w, p);
        } else if (js_str_eq(&key, "status")) {
            rc = js_once(&w->w_s, &seen, 4, "status") == -1 ? -1 : read_status(w, p);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if ((rc = item_judged(w, idx, p, have_md)) != 0)
        return rc == -1 ? -1 : 0;
    if ((w->w_keep & POD_KEEP_WORKLOAD) && w->w_budget.pb_devices != NULL &&
        w->w_budget.pb_devices != BSRC_NOT_STRING &&
        quantity_parse(w->w_budget.pb_devices, &n, qerr, sizeof(qerr)) == 0 && n >= 1 &&
        n <= 1024)
        p->p_kai_devices = n;
    if (w->w_budgets && pods_budget_judge(&w->w_budget, w->w_opts->po_resource, p) == -1)
        return w->w_oom = 1, -1;
    return 0;
}

/* The items array into out; the pods array grows by doubling. A finished
 * pod is read (its shape is checked like any other's), then dropped with the
 * strings it kept (or kept, POD_KEEP_FINISHED, counting toward no bound).
 * Past the bounds the walk stops: -1 with w_too_large. */
static int
read_items(struct walk *w, struct pod_list *out)
{
    size_t cap = 0, idx = 0, live = 0, text = 0, before, ctrs, decls;
    struct pod *grown, *p;
    struct strpool_mark mark;
    int rc, drop;

    if (W_STRICT(w) ? shape(w, JS_ARRAY, "items is not an array") == -1
                    : js_array_begin(&w->w_s) == -1)
        return -1;
    for (; (rc = js_array_next(&w->w_s)) == 1; idx++) {
        if (w->w_why[0] != '\0') { /* an item was wrong: only check the rest */
            if (js_skip(&w->w_s) == -1)
                return -1;
            continue;
        }
        if (out->pl_count == cap) {
            cap = cap ? cap * 2 : 16;
            if (cap > SIZE_MAX / sizeof(*grown) ||
                (grown = realloc(out->pl_pods, cap * sizeof(*grown))) == NULL)
                return w->w_oom = 1, -1;
            out->pl_pods = grown;
        }
        /* Counted first, so pod_list_free() sees a half-read pod too. */
        p = &out->pl_pods[out->pl_count++];
        memset(p, 0, sizeof(*p));
        strpool_mark(w->w_pool, &mark);
        before = strpool_used(w->w_pool);
        ctrs = w->w_ctr_count;
        decls = w->w_decl_count;
        w->w_finished = 0;
        if (read_item(w, idx, p) == -1)
            return -1;
        p->p_finished = w->w_finished;
        p->p_reservation = w->w_budget.pb_drop;
        /* A finished pod holds no seat, a KAI/Run:ai reservation pod is no
         * tenant: neither is kept, nor are its strings, unless asked for. */
        drop =
            (p->p_finished && !(w->w_keep & POD_KEEP_FINISHED)) ||
            (p->p_reservation && !(w->w_keep & (POD_KEEP_FINISHED | POD_KEEP_RESERVED)));
        if (drop) {
            out->pl_count--;
            strpool_rewind(w->w_pool, &mark);
            w->w_ctr_count = ctrs;
            w->w_decl_count = decls;
            continue;
        }
        if (p->p_finished || p->p_reservation)
            no_budget(p);
        if (p->p_finished)
            continue;
        live++;
        text += strpool_used(w->w_pool) - before;
        if (live > POD_LIST_MAX || text > POD_LIST_MAX_TEXT) {
            w->w_too_large = live > POD_LIST_MAX ? 1 : 2;
            return -1;
        }
    }
    return rc;
}

/* The top level must be a PodList; a Status (an API error) says why not. */
static int
kind_error(const struct js_held *kind, const struct js_held *message, char *why)
{
    char shown[QUOTED];

    if (kind->h_type != JS_STRING || js_str_eq(&kind->h_str, "PodList"))
        return 0;
    if (js_str_eq(&kind->h_str, "Status") && message->h_type == JS_STRING) {
        walk_quote_str(&message->h_str, shown);
        snprintf(why, WHY, "not a PodList: the API server answered \"%s\"", shown);
    } else {
        walk_quote_str(&kind->h_str, shown);
        snprintf(why, WHY, "not a PodList: kind is \"%s\"", shown);
    }
    return -1;
}

/* kind or message at the top: held, or skipped when repeated under POD_STRICT. */
static int
read_top_str(struct walk *w, unsigned *seen, unsigned bit, const char *key,
             struct js_held *h)
{
    int rc = walk_once(w, seen, bit, key);

    return rc == -1 ? -1 : rc == 0 ? js_hold(&w->w_s, h) : js_skip(&w->w_s);
}

/* Walks the whole body. 0 when it is JSON (why may then hold a shape
 * error), -1 when it is not or memory ran out. Under POD_STRICT a document that
 * is not a PodList is -1, and what only the budgets need goes to w_soft. */
static int
walk_top(struct walk *w, struct pod_list *out, char *why)
{
    struct js_held kind = {JS_ERROR, {NULL, 0, 0}, 0}, message = kind;
    enum js_type t = js_peek(&w->w_s);
    char soft[WHY];
    struct js_str key;
    unsigned seen = 0;
    int rc, items = 0;

    if (W_STRICT(w) && shape(w, JS_OBJECT, "not a PodList: not an object") == -1)
        return -1;
    if (!W_STRICT(w) && t != JS_OBJECT) {
        if (t == JS_ARRAY && js_skip(&w->w_s) == 0 && js_end(&w->w_s) == 0) {
            snprintf(why, WHY, "not a PodList: the document is a JSON array");
            return 0;
        }
        /* Like any JSON library taking only an object or array at the top. */
        return t == JS_ARRAY ? -1 : js_fail(&w->w_s, "expected an object");
    }
    if (!W_STRICT(w) && js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "items")) {
            if (js_once(&w->w_s, &seen, 1, "items") == -1)
                return -1;
            if (W_STRICT(w) || js_peek(&w->w_s) == JS_ARRAY) {
                items = 1;
                rc = read_items(w, out);
            } else {
                rc = js_skip(&w->w_s);
            }
        } else if (js_str_eq(&key, "kind")) {
            rc = read_top_str(w, &seen, 2, "kind", &kind);
        } else if (js_str_eq(&key, "message")) {
            rc = read_top_str(w, &seen, 4, "message", &message);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1 || js_end(&w->w_s) == -1)
        return -1;
    if (W_STRICT(w)) {
        if (!items)
            return js_fail(&w->w_s, "not a PodList: no items array");
        if (kind_error(&kind, &message, soft) == -1)
            walk_soft(w, soft);
        return 0;
    }
    /* Judged in this order: what the document is, then what it holds. */
    if (kind_error(&kind, &message, why) == -1)
        return 0;
    if (!items)
        snprintf(why, WHY, "not a PodList: no items array");
    else if (w->w_why[0] != '\0')
        snprintf(why, WHY, "%s", w->w_why);
    return 0;
}

/* The list read whole: budgets refused under POD_STRICT, and each pod pointed at its
 * containers and declarations. 0, or -1 when out of memory. */
static int
walk_done(struct walk *w, struct pod_list *out)
{
    size_t i, c = 0, d = 0;

    if (w->w_soft[0] != '\0') {
        for (i = 0; i < out->pl_count; i++)
            no_budget(&out->pl_pods[i]);
        if ((out->pl_budgets_error =
                 strpool_dup(w->w_pool, w->w_soft, strlen(w->w_soft))) == NULL)
            return -1;
    }
    for (i = 0; i < out->pl_count; i++) {
        struct pod *p = &out->pl_pods[i];
        p->p_containers = p->p_container_count > 0 ? out->pl_containers + c : NULL;
        p->p_decls = p->p_decl_count > 0 ? out->pl_decls + d : NULL;
        c += p->p_container_count;
        d += p->p_decl_count;
    }
    return 0;
}

void
pods_json_too_large(int by_text, char *err, size_t errlen)
{
    if (by_text)
        snprintf(err, errlen,
                 POD_LIST_TOO_LARGE ": the names and annotations of its pods that have "
                                    "not finished pass %u MiB (refused to stay within "
                                    "the memory limit)",
                 POD_LIST_MAX_TEXT >> 20);
    else
        snprintf(err, errlen,
                 POD_LIST_TOO_LARGE ": more than %d pods that have not finished "
                                    "(refused to stay within the memory limit)",
                 POD_LIST_MAX);
}

int
pods_json_parse(const char *body, size_t len, const struct pod_parse_opts *opts,
                struct pod_list *out, char *err, size_t errlen)
{
    return pods_json_parse_sources(body, len, opts, NULL, out, err, errlen);
}

int
pods_json_parse_sources(const char *body, size_t len, const struct pod_parse_opts *opts,
                        const struct bsrc_order *sources, struct pod_list *out, char *err,
                        size_t errlen)
{
    unsigned keep = opts != NULL ? opts->po_keep : 0;
    int strict = (keep & POD_STRICT) != 0, budgets;
    struct walk *w = NULL;
    char why[WHY];

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    budgets = opts != NULL && opts->po_resource != NULL && opts->po_resource[0] != '\0';
    if (!budgets && !strict) {
        snprintf(why, sizeof(why), "no resource name to read budgets from");
        goto fail;
    }
    if (!strict && (body == NULL || len == 0)) {
        snprintf(why, sizeof(why), "not a PodList: empty body");
        goto fail;
    }
    /* On the heap: the reader's frames are a few hundred bytes. */
    if ((w = calloc(1, sizeof(*w))) == NULL || (out->pl_pool = strpool_new()) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    w->w_opts = opts;
    w->w_keep = keep;
    w->w_budgets = budgets;
    w->w_pool = out->pl_pool;
    w->w_out = out;
    pods_budget_init(&w->w_budget, budgets ? sources : NULL, out->pl_pool, keep);
    w->w_budget.pb_table = opts->po_claims;
    js_init(&w->w_s, body, len);
    if (walk_top(w, out, why) == -1) {
        if (w->w_oom)
            snprintf(why, sizeof(why), "out of memory");
        else if (w->w_too_large)
            pods_json_too_large(w->w_too_large == 2, why, sizeof(why));
        else if (strict) /* the exporter's words: its reader's own */
            snprintf(why, sizeof(why), "%s", w->w_s.js_err);
        else
            snprintf(why, sizeof(why), "not JSON: %s", w->w_s.js_err);
        goto fail;
    }
    if (why[0] != '\0')
        goto fail;
    if (walk_done(w, out) == -1) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    pods_budget_free(&w->w_budget);
    free(w);
    return 0;

fail:
    if (w != NULL)
        pods_budget_free(&w->w_budget);
    free(w);
    pod_list_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}
