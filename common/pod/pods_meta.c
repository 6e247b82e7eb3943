/* pods_meta.c -- a pod's metadata in the PodList walk: its names, its owners (a
 * controller, a Node for a mirror pod), its labels and the annotations each program
 * reads */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pods_walk.h"
#include "strpool.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

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
            return walk_shape(w, JS_OBJECT, "metadata.annotations is not an object");
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
                if ((mine = walk_read_str(w, &v, "an annotation is not a string")) ==
                        -1 ||
                    (mine == 1 && walk_keep_str(w, &v, &p->p_mirror_uid) == -1))
                    return -1;
                continue;
            }
        }
        if (release != NULL && release[0] != '\0' && js_str_eq(&key, release)) {
            if ((mine = walk_once(w, &seen, 4, release)) == -1)
                return -1;
            if (mine == 0 && js_peek(&w->w_s) == JS_STRING) {
                if (walk_read_optional(w, &p->p_release) == -1)
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
    if ((rc = walk_read_str(w, &v, what)) != 1)
        return rc;
    return walk_keep_str(w, &v, dst);
}

int
walk_metadata(struct walk *w, struct pod *p)
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
