/* pods_json.c -- reads a Kubernetes PodList into the pods the decision core judges
 *
 * One pass with the jscan pull reader, no DOM: a 5,000-pod list is ~5 MB and
 * the daemon reads a dozen fields of each pod. Members may come in any order,
 * so what a judgement needs is collected first and judged when its object
 * closes. A wrong shape does not stop the walk (the rest must still be JSON,
 * and kind may come after items); the first such error is reported unless
 * the body turns out not to be JSON at all. Finished pods (Succeeded,
 * Failed) are dropped as they are read, and a list past POD_LIST_MAX pods or
 * POD_LIST_MAX_TEXT bytes of kept strings is refused: the model stays small
 * whatever a body under the HTTP cap holds. */
#include "pods_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jscan.h"
#include "pods_budget.h"
#include "strpool.h"
#include "quantity.h"
#include "rfc3339.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
/* quote() shows at most QUOTE_MAX bytes, each as at most 4 characters. */
#define QUOTE_MAX 64
#define QUOTED (QUOTE_MAX * 4 + sizeof("..."))
/* A budget reason: two quoted strings, a quantity error and the words. */
#define REASON 1024
#define WHY 512

/* The walk's state. Shape errors are kept in why (the first wins); syntax
 * errors are the reader's (s.js_err). */
struct walk {
    struct js_scan w_s;
    const struct pod_parse_opts *w_opts;
    struct strpool *w_pool; /* borrowed: the list's, where its strings go */
    int w_oom;
    int w_finished;              /* the item being read is in phase Succeeded or Failed */
    int w_too_large;             /* the list passed POD_LIST_MAX or POD_LIST_MAX_TEXT */
    char w_why[WHY];             /* "" until an item's shape is wrong */
    struct pods_budget w_budget; /* BUDGET_SOURCES: what else a pod declares */
};

/* limits or requests of one container. */
struct res_map {
    enum js_type m_type;    /* JS_ERROR: absent; JS_NULL counts as absent */
    struct js_held m_value; /* the resource's value, when m_type is JS_OBJECT */
};

/* Copies len bytes of s into out (QUOTED bytes) for a message: printable
 * ASCII as is, anything else as \xNN, cut at QUOTE_MAX bytes, so API text
 * never smuggles control bytes into logs. */
static void
quote(const char *s, size_t len, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < len && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, QUOTED - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* quote() of a string value, decoded. */
static void
quote_str(const struct js_str *v, char *out)
{
    char head[QUOTE_MAX + 8];
    size_t full = js_str_copy(v, head, sizeof(head));

    quote(head, full, out);
}

/* The JSON type of a value that should have been a string, a number or an
 * object (those are read before anything asks). */
static const char *
type_name(enum js_type t)
{
    switch (t) {
    case JS_OBJECT:
        return "object";
    case JS_ARRAY:
        return "array";
    case JS_TRUE:
    case JS_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

/* A container's name for a message: quoted, or "#idx" when it has none. */
static void
container_name(const struct js_held *name, size_t idx, char *cname)
{
    if (name->h_type == JS_STRING)
        quote_str(&name->h_str, cname);
    else
        snprintf(cname, QUOTED, "#%zu", idx);
}

/* One container's declared value in *mib: 0, or -1 with why in msg. The
 * container's name is quoted only for a message. */
static int
value_mib(const struct js_held *v, const char *word, const struct js_held *name,
          size_t idx, int64_t *mib, char *msg, size_t msglen)
{
    char shown[QUOTED], qerr[128], small[64], cname[QUOTED], *heap = NULL;
    const char *s = v->h_str.jv_raw;
    size_t len = v->h_str.jv_len;
    int rc;

    if (v->h_type == JS_STRING) {
        quote_str(&v->h_str, shown);
        if (v->h_str.jv_escaped) {
            len = js_str_len(&v->h_str);
            if (len < sizeof(small)) {
                s = small;
            } else if ((s = heap = malloc(len + 1)) == NULL) {
                snprintf(msg, msglen, "out of memory");
                return -1;
            }
            js_str_decode(&v->h_str, (char *)s);
        }
        rc = quantity_parse_n(s, len, mib, qerr, sizeof(qerr));
        free(heap);
        if (rc == -1) {
            container_name(name, idx, cname);
            snprintf(msg, msglen, "container %s: %s \"%s\" is not a quantity (%s)", cname,
                     word, shown, qerr);
            return -1;
        }
        if (*mib < 0) {
            container_name(name, idx, cname);
            snprintf(msg, msglen, "container %s: %s \"%s\" is negative", cname, word,
                     shown);
            return -1;
        }
        return 0;
    }
    if (v->h_type == JS_NUMBER) {
        /* Defensive: the API sends strings, but a hand-written manifest
         * echoed by a proxy might not. Round up, like a quantity. */
        container_name(name, idx, cname); /* cheap next to the rare number */
        if (v->h_num < 0) {
            snprintf(msg, msglen, "container %s: %s %g is negative", cname, word,
                     v->h_num);
            return -1;
        }
        if (!(v->h_num < 9223372036854775807.0)) {
            snprintf(msg, msglen, "container %s: %s %g does not fit in 64 bits", cname,
                     word, v->h_num);
            return -1;
        }
        *mib = (int64_t)ceil(v->h_num);
        return 0;
    }
    container_name(name, idx, cname);
    snprintf(msg, msglen, "container %s: %s is a JSON %s, not a quantity", cname, word,
             type_name(v->h_type));
    return -1;
}

/* resources.limits or .requests: its type, and the resource's value. */
static int
read_res_map(struct walk *w, struct res_map *m, int k)
{
    struct js_str key;
    unsigned seen = 0;
    int rc, mine;

    m->m_value.h_type = JS_ERROR;
    m->m_type = js_peek(&w->w_s);
    if (m->m_type != JS_OBJECT)
        return js_skip(&w->w_s);
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, w->w_opts->po_resource)) {
            if (js_once(&w->w_s, &seen, 1, w->w_opts->po_resource) == -1 ||
                js_hold(&w->w_s, &m->m_value) == -1)
                return -1;
        } else if ((mine = pods_budget_resource(&w->w_budget, &w->w_s, &key, k)) != 0) {
            if (mine == -1)
                return w->w_oom = !w->w_s.js_err[0], -1;
        } else if (js_skip(&w->w_s) == -1) {
            return -1;
        }
    }
    return rc;
}

/* A container's resources: *rtype is its type, maps[0] limits, maps[1]
 * requests. */
static int
read_resources(struct walk *w, enum js_type *rtype, struct res_map maps[2])
{
    struct js_str key;
    unsigned seen = 0;
    int rc, k;

    maps[0].m_type = maps[1].m_type = JS_ERROR;
    *rtype = js_peek(&w->w_s);
    if (*rtype != JS_OBJECT)
        return js_skip(&w->w_s);
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        k = js_str_eq(&key, "limits") ? 0 : js_str_eq(&key, "requests") ? 1 : -1;
        if (k == -1) {
            if (js_skip(&w->w_s) == -1)
                return -1;
        } else if (js_once(&w->w_s, &seen, 1u << k, k ? "requests" : "limits") == -1 ||
                   read_res_map(w, &maps[k], k) == -1) {
            return -1;
        }
    }
    return rc;
}

/* Reads one container object and judges it: 0 and *mib, 1 when it declares
 * nothing, 2 when its declaration is broken (why in msg), -1 on a read error. */
static int
read_container(struct walk *w, size_t idx, int64_t *mib, char *msg, size_t msglen)
{
    static const char *const words[] = {"limit", "request"};
    static const char *const names[] = {"limits", "requests"};
    struct res_map maps[2] = {{JS_ERROR, {JS_ERROR, {NULL, 0, 0}, 0}},
                              {JS_ERROR, {JS_ERROR, {NULL, 0, 0}, 0}}};
    enum js_type rtype = JS_ERROR;
    struct js_held name = {JS_ERROR, {NULL, 0, 0}, 0};
    char cname[QUOTED];
    struct js_str key;
    unsigned seen = 0;
    int rc, k;

    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "name"))
            rc = js_once(&w->w_s, &seen, 1, "name") == -1 ? -1 : js_hold(&w->w_s, &name);
        else if (js_str_eq(&key, "resources"))
            rc = js_once(&w->w_s, &seen, 2, "resources") == -1
                     ? -1
                     : read_resources(w, &rtype, maps);
        else
            rc = js_skip(&w->w_s);
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (pods_budget_container_name(&w->w_budget, &name) == -1)
        return w->w_oom = 1, -1;
    if (rtype == JS_ERROR || rtype == JS_NULL)
        return 1;
    if (rtype != JS_OBJECT) {
        container_name(&name, idx, cname);
        snprintf(msg, msglen, "container %s: resources is not an object", cname);
        return 2;
    }
    for (k = 0; k < 2; k++) {
        if (maps[k].m_type == JS_ERROR || maps[k].m_type == JS_NULL)
            continue;
        if (maps[k].m_type != JS_OBJECT) {
            container_name(&name, idx, cname);
            snprintf(msg, msglen, "container %s: resources.%s is not an object", cname,
                     names[k]);
            return 2;
        }
        if (maps[k].m_value.h_type != JS_ERROR)
            return value_mib(&maps[k].m_value, words[k], &name, idx, mib, msg, msglen) ==
                           -1
                       ? 2
                       : 0;
    }
    return 1;
}

/* spec.containers (init containers do not count), summed into p. A broken
 * declaration makes the pod BUDGET_BAD with a reason (the first); -1 only on
 * a read error or out of memory. */
static int
read_containers(struct walk *w, struct pod *p, char *msg, size_t msglen)
{
    int64_t v, total = 0;
    size_t i = 0;
    int rc, declared = 0, bad = 0;

    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        if (bad) { /* the first broken container is the reason */
            rc = js_skip(&w->w_s);
        } else if (js_peek(&w->w_s) != JS_OBJECT) {
            snprintf(msg, msglen, "spec.containers[%zu] is not an object", i);
            bad = 1;
            rc = js_skip(&w->w_s);
        } else if (pods_budget_container(&w->w_budget) == -1) {
            return w->w_oom = 1, -1;
        } else if ((rc = read_container(w, i, &v, msg, msglen)) == 2) {
            bad = 1;
        } else if (rc == 0) {
            if (v > INT64_MAX - total) {
                snprintf(msg, msglen, "the containers' values together overflow 64 bits");
                bad = 1;
            } else {
                total += v;
                declared = 1;
            }
        }
        if (rc == -1)
            return -1;
        i++;
    }
    if (rc == -1)
        return -1;
    if (bad)
        return 1;
    p->p_budget_state = declared ? BUDGET_OK : BUDGET_NONE;
    p->p_budget_mib = total;
    return 0;
}

/* The pod's spec into its budget. */
static int
read_spec(struct walk *w, struct pod *p)
{
    char msg[REASON];
    struct js_str key;
    unsigned seen = 0;
    enum js_type t;
    int rc, bad = 0;

    msg[0] = '\0';
    p->p_budget_state = BUDGET_NONE;
    t = js_peek(&w->w_s);
    if (t != JS_OBJECT) {
        if (t != JS_NULL) {
            snprintf(msg, sizeof(msg), "spec is not an object");
            bad = 1;
        }
        if (js_skip(&w->w_s) == -1)
            return -1;
    } else {
        if (js_object_begin(&w->w_s) == -1)
            return -1;
        while ((rc = js_object_next(&w->w_s, &key)) == 1) {
            if (js_str_eq(&key, "hostNetwork")) {
                rc = js_once(&w->w_s, &seen, 2, "hostNetwork") == -1 ? -1 : 0;
                if (rc == 0) {
                    /* Anything but false counts: when in doubt, never ask. */
                    t = js_peek(&w->w_s);
                    p->p_host_network = t != JS_FALSE && t != JS_NULL;
                    rc = js_skip(&w->w_s);
                }
            } else if (js_str_eq(&key, "resourceClaims")) {
                /* Claims named directly (a shared claim) are in the spec alone. */
                if (js_once(&w->w_s, &seen, 4, "resourceClaims") == -1)
                    return -1;
                if ((rc = pods_budget_claims(&w->w_budget, &w->w_s)) == -1 &&
                    !w->w_s.js_failed)
                    w->w_oom = 1;
            } else if (!js_str_eq(&key, "containers")) {
                rc = js_skip(&w->w_s);
            } else if (js_once(&w->w_s, &seen, 1, "containers") == -1) {
                rc = -1;
            } else if ((t = js_peek(&w->w_s)) == JS_ARRAY) {
                rc = read_containers(w, p, msg, sizeof(msg));
                bad = rc == 1;
            } else {
                if (t != JS_NULL) {
                    snprintf(msg, sizeof(msg), "spec.containers is not an array");
                    bad = 1;
                }
                rc = js_skip(&w->w_s);
            }
            if (rc == -1)
                return -1;
        }
        if (rc == -1)
            return -1;
    }
    if (!bad)
        return 0;
    p->p_budget_state = BUDGET_BAD;
    p->p_budget_mib = 0;
    if ((p->p_budget_error = strpool_dup(w->w_pool, msg, strlen(msg))) == NULL)
        return w->w_oom = 1, -1;
    return 0;
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
 * value counts as protected: when in doubt, never a victim. */
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
        }
        if (release != NULL && release[0] != '\0' && js_str_eq(&key, release)) {
            if (js_once(&w->w_s, &seen, 4, release) == -1)
                return -1;
            if (js_peek(&w->w_s) == JS_STRING) {
                if (read_optional(w, &p->p_release) == -1)
                    return -1;
                continue;
            }
        }
        if (protect != NULL && protect[0] != '\0' && js_str_eq(&key, protect)) {
            if (js_once(&w->w_s, &seen, 2, protect) == -1)
                return -1;
            if (js_peek(&w->w_s) != JS_STRING) {
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

/* One ownerReference's string member: *is is 1 when it equals lit, else 0
 * (other types too). */
static int
owner_str_is(struct walk *w, const char *lit, int *is)
{
    struct js_str v;

    *is = 0;
    if (js_peek(&w->w_s) != JS_STRING)
        return js_skip(&w->w_s);
    if (js_string(&w->w_s, &v) == -1)
        return -1;
    *is = js_str_eq(&v, lit);
    return 0;
}

/* metadata.ownerReferences: whether one has controller: true, and whether
 * one is the core Node (the kubelet's mark on a mirror pod, next to the
 * kubernetes.io/config.mirror annotation: either makes it a mirror pod). */
static int
read_owners(struct walk *w, struct pod *p)
{
    struct js_str key;
    int rc, rc2, is, node, other_api;

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
        node = other_api = 0;
        while ((rc2 = js_object_next(&w->w_s, &key)) == 1) {
            /* A repeated key is judged the cautious way: any "Node" counts. */
            if (js_str_eq(&key, "kind")) {
                rc2 = owner_str_is(w, "Node", &is);
                node |= is;
            } else if (js_str_eq(&key, "apiVersion")) {
                rc2 = owner_str_is(w, "v1", &is);
                other_api |= rc2 == 0 && !is;
            } else {
                if (js_str_eq(&key, "controller") && js_peek(&w->w_s) == JS_TRUE)
                    p->p_has_controller = 1;
                rc2 = js_skip(&w->w_s);
            }
            if (rc2 == -1)
                return -1;
        }
        if (rc2 == -1)
            return -1;
        if (node && !other_api)
            p->p_mirror = 1;
    }
    return rc;
}

/* A required metadata string: *dst stays NULL when it is missing, empty,
 * not a string or holds U+0000; the item is judged when it closes. */
static int
read_required(struct walk *w, char **dst)
{
    return js_pool_string(&w->w_s, w->w_pool, JS_POOL_NONEMPTY, dst, &w->w_oom);
}

static int
read_metadata(struct walk *w, struct pod *p)
{
    static const char *const keys[] = {"namespace", "name", "uid"};
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
                     : read_required(w, dsts[k]);
        } else if (js_str_eq(&key, "deletionTimestamp")) {
            /* Present and not null: any other value still means "being deleted". */
            p->p_terminating = js_peek(&w->w_s) != JS_NULL;
            rc = js_once(&w->w_s, &seen, 8, "deletionTimestamp") == -1 ? -1
                                                                       : js_skip(&w->w_s);
        } else if (js_str_eq(&key, "ownerReferences")) {
            rc = js_once(&w->w_s, &seen, 16, "ownerReferences") == -1 ? -1
                                                                      : read_owners(w, p);
        } else if (js_str_eq(&key, "annotations")) {
            rc = js_once(&w->w_s, &seen, 32, "annotations") == -1
                     ? -1
                     : read_annotations(w, p);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    return rc;
}

/* status: phase and startTime. */
static int
read_status(struct walk *w, struct pod *p)
{
    struct js_str key, v;
    char when[64];
    unsigned seen = 0;
    int rc;

    if (js_peek(&w->w_s) != JS_OBJECT)
        return js_skip(&w->w_s);
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        int is_phase = js_str_eq(&key, "phase");
        if (js_str_eq(&key, "resourceClaimStatuses")) {
            if (js_once(&w->w_s, &seen, 8, "resourceClaimStatuses") == -1)
                return -1;
            if ((rc = pods_budget_claims(&w->w_budget, &w->w_s)) == -1 &&
                !w->w_s.js_failed)
                w->w_oom = 1;
        } else if (js_str_eq(&key, "podIP")) {
            if (js_once(&w->w_s, &seen, 4, "podIP") == -1)
                return -1;
            rc = js_peek(&w->w_s) == JS_STRING ? read_optional(w, &p->p_ip)
                                               : js_skip(&w->w_s);
        } else if (!is_phase && !js_str_eq(&key, "startTime")) {
            rc = js_skip(&w->w_s);
        } else if (js_once(&w->w_s, &seen, is_phase ? 1 : 2,
                           is_phase ? "phase" : "startTime") == -1) {
            rc = -1;
        } else if (js_peek(&w->w_s) != JS_STRING) {
            rc = js_skip(&w->w_s);
        } else if ((rc = js_string(&w->w_s, &v)) == 0) {
            if (is_phase) {
                p->p_running = js_str_eq(&v, "Running");
                w->w_finished = js_str_eq(&v, "Succeeded") || js_str_eq(&v, "Failed");
            } else if (js_str_copy(&v, when, sizeof(when)) < sizeof(when) &&
                       strlen(when) == js_str_len(&v))
                p->p_started = rfc3339_parse(when);
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

/* One item into p. A wrong shape is recorded and the item skipped: 0; -1 on
 * a read error or out of memory. */
static int
read_item(struct walk *w, size_t idx, struct pod *p)
{
    static const char *const req[] = {"namespace", "name", "uid"};
    char what[96];
    struct js_str key;
    unsigned seen = 0, depth = w->w_s.js_depth;
    int rc, have_md = 0;

    pods_budget_pod(&w->w_budget);
    if (js_peek(&w->w_s) != JS_OBJECT) {
        item_error(w, idx, "has no metadata object");
        return js_skip(&w->w_s);
    }
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "metadata")) {
            if (js_once(&w->w_s, &seen, 1, "metadata") == -1)
                return -1;
            if (js_peek(&w->w_s) != JS_OBJECT) {
                item_error(w, idx, "has no metadata object");
                return js_leave(&w->w_s, depth);
            }
            have_md = 1;
            rc = read_metadata(w, p);
        } else if (js_str_eq(&key, "spec")) {
            rc = js_once(&w->w_s, &seen, 2, "spec") == -1 ? -1 : read_spec(w, p);
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
    if (!have_md) {
        item_error(w, idx, "has no metadata object");
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        char *const *v = k == 0 ? &p->p_namespace : k == 1 ? &p->p_name : &p->p_uid;
        if (*v == NULL) {
            snprintf(what, sizeof(what), "metadata.%s is missing, empty or not a string",
                     req[k]);
            item_error(w, idx, what);
            return 0;
        }
    }
    if (pods_budget_judge(&w->w_budget, w->w_opts->po_resource, p) == -1)
        return w->w_oom = 1, -1;
    return 0;
}

/* The items array into out; the pods array grows by doubling. A finished
 * pod is read (its shape is checked like any other's), then dropped with the
 * strings it kept. Past the bounds the walk stops: -1 with w_too_large. */
static int
read_items(struct walk *w, struct pod_list *out)
{
    size_t cap = 0, idx = 0;
    struct pod *grown;
    struct strpool_mark mark;
    int rc;

    if (js_array_begin(&w->w_s) == -1)
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
        memset(&out->pl_pods[out->pl_count], 0, sizeof(*grown));
        out->pl_count++;
        strpool_mark(w->w_pool, &mark);
        w->w_finished = 0;
        if (read_item(w, idx, &out->pl_pods[out->pl_count - 1]) == -1)
            return -1;
        /* A finished pod holds no seat, a KAI/Run:ai reservation pod is no
         * tenant: neither is kept, nor are its strings. */
        if (w->w_finished || w->w_budget.pb_drop) {
            out->pl_count--;
            strpool_rewind(w->w_pool, &mark);
        } else if (out->pl_count > POD_LIST_MAX ||
                   strpool_used(w->w_pool) > POD_LIST_MAX_TEXT) {
            w->w_too_large = 1;
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
        quote_str(&message->h_str, shown);
        snprintf(why, WHY, "not a PodList: the API server answered \"%s\"", shown);
    } else {
        quote_str(&kind->h_str, shown);
        snprintf(why, WHY, "not a PodList: kind is \"%s\"", shown);
    }
    return -1;
}

/* Walks the whole body. 0 when it is JSON (why may then hold a shape
 * error), -1 when it is not or memory ran out. */
static int
walk_top(struct walk *w, struct pod_list *out, char *why)
{
    struct js_held kind = {JS_ERROR, {NULL, 0, 0}, 0}, message = kind;
    enum js_type t = js_peek(&w->w_s);
    struct js_str key;
    unsigned seen = 0;
    int rc, items = 0;

    if (t != JS_OBJECT) {
        if (t == JS_ARRAY && js_skip(&w->w_s) == 0 && js_end(&w->w_s) == 0) {
            snprintf(why, WHY, "not a PodList: the document is a JSON array");
            return 0;
        }
        /* Like any JSON library taking only an object or array at the top. */
        return t == JS_ARRAY ? -1 : js_fail(&w->w_s, "expected an object");
    }
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "items")) {
            if (js_once(&w->w_s, &seen, 1, "items") == -1)
                return -1;
            if (js_peek(&w->w_s) == JS_ARRAY) {
                items = 1;
                rc = read_items(w, out);
            } else {
                rc = js_skip(&w->w_s);
            }
        } else if (js_str_eq(&key, "kind")) {
            rc = js_once(&w->w_s, &seen, 2, "kind") == -1 ? -1 : js_hold(&w->w_s, &kind);
        } else if (js_str_eq(&key, "message")) {
            rc = js_once(&w->w_s, &seen, 4, "message") == -1 ? -1
                                                             : js_hold(&w->w_s, &message);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1 || js_end(&w->w_s) == -1)
        return -1;
    /* Judged in this order: what the document is, then what it holds. */
    if (kind_error(&kind, &message, why) == -1)
        return 0;
    if (!items)
        snprintf(why, WHY, "not a PodList: no items array");
    else if (w->w_why[0] != '\0')
        snprintf(why, WHY, "%s", w->w_why);
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
    struct walk *w = NULL;
    char why[WHY];

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (opts == NULL || opts->po_resource == NULL || opts->po_resource[0] == '\0') {
        snprintf(why, sizeof(why), "no resource name to read budgets from");
        goto fail;
    }
    if (body == NULL || len == 0) {
        snprintf(why, sizeof(why), "not a PodList: empty body");
        goto fail;
    }
    /* On the heap: the reader's frames are a few hundred bytes. */
    if ((w = calloc(1, sizeof(*w))) == NULL || (out->pl_pool = strpool_new()) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    w->w_opts = opts;
    w->w_pool = out->pl_pool;
    pods_budget_init(&w->w_budget, sources, out->pl_pool);
    w->w_budget.pb_table = opts->po_claims;
    js_init(&w->w_s, body, len);
    if (walk_top(w, out, why) == -1) {
        if (w->w_oom)
            snprintf(why, sizeof(why), "out of memory");
        else if (w->w_too_large)
            pods_json_too_large(out->pl_count <= POD_LIST_MAX, why, sizeof(why));
        else
            snprintf(why, sizeof(why), "not JSON: %s", w->w_s.js_err);
        goto fail;
    }
    if (why[0] != '\0')
        goto fail;
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
