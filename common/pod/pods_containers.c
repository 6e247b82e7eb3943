/* pods_containers.c -- a pod's spec in the PodList walk: the budget its containers
 * declare by GPUMEM_RESOURCE (limits, else requests, summed), what HAMi reads, and each
 * container's own declaration for `budgets --suggest` */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pods_walk.h"
#include "quantity.h"
#include "strpool.h"

/* A budget reason: two quoted strings, a quantity error and the words. */
#define REASON 1024

/* limits or requests of one container. */
struct res_map {
    enum js_type m_type;    /* JS_ERROR: absent; JS_NULL counts as absent */
    struct js_held m_value; /* the resource's value, when m_type is JS_OBJECT */
};

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
        walk_quote_str(&name->h_str, cname);
    else
        snprintf(cname, QUOTED, "#%zu", idx);
}

/* A string value, decoded, as a quantity: 0 and *out, -1 with why in qerr, or -2
 * when out of memory. */
static int
str_quantity(const struct js_str *v, int64_t *out, char *qerr, size_t qlen)
{
    char small[64], *heap = NULL;
    const char *s = v->jv_raw;
    size_t len = v->jv_len;
    int rc;

    if (v->jv_escaped) {
        len = js_str_len(v);
        if (len < sizeof(small))
            s = small;
        else if ((s = heap = malloc(len + 1)) == NULL)
            return -2;
        js_str_decode(v, (char *)s);
    }
    rc = quantity_parse_n(s, len, out, qerr, qlen);
    free(heap);
    return rc;
}

/* One container's declared value in *mib: 0, or -1 with why in msg. The
 * container's name is quoted only for a message. */
static int
value_mib(const struct js_held *v, const char *word, const struct js_held *name,
          size_t idx, int64_t *mib, char *msg, size_t msglen)
{
    char shown[QUOTED], qerr[128], cname[QUOTED];
    int rc;

    if (v->h_type == JS_STRING) {
        walk_quote_str(&v->h_str, shown);
        if ((rc = str_quantity(&v->h_str, mib, qerr, sizeof(qerr))) == -2) {
            snprintf(msg, msglen, "out of memory");
            return -1;
        }
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
            if ((rc = walk_once(w, &seen, 1, w->w_opts->po_resource)) == -1 ||
                (rc == 0 ? js_hold(&w->w_s, &m->m_value) : js_skip(&w->w_s)) == -1)
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
        if (k != -1 &&
            (rc = walk_once(w, &seen, 1u << k, k ? "requests" : "limits")) == -1)
            return -1;
        if ((k == -1 || rc == 1 ? js_skip(&w->w_s) : read_res_map(w, &maps[k], k)) == -1)
            return -1;
    }
    return rc;
}

/* The value of maps (the limit, else the request) as `--suggest` prints it: a string
 * that reads as a quantity at or above 0, else -1; *declares when there is one. 0, or
 * -1 when out of memory. */
static int
decl_mib(const struct res_map maps[2], int *declares, int64_t *mib)
{
    const struct js_held *v = NULL;
    char qerr[64];
    int rc;

    for (int k = 0; k < 2 && v == NULL; k++)
        if (maps[k].m_type == JS_OBJECT && maps[k].m_value.h_type != JS_ERROR)
            v = &maps[k].m_value;
    *declares = v != NULL;
    *mib = -1;
    if (v == NULL || v->h_type != JS_STRING)
        return 0;
    if ((rc = str_quantity(&v->h_str, mib, qerr, sizeof(qerr))) == -2)
        return -1;
    if (rc == -1 || *mib < 0)
        *mib = -1;
    return 0;
}

/* nvidia.com/gpu of a container (the limit, else the request) when it reads and is
 * above 0, else 0. */
static int64_t
decl_gpus(const struct bsrc_container *c)
{
    const char *v = c->bc_gpu[0] != NULL ? c->bc_gpu[0] : c->bc_gpu[1];
    char qerr[64];
    int64_t n;

    if (v == NULL || v == BSRC_NOT_STRING ||
        quantity_parse(v, &n, qerr, sizeof(qerr)) == -1)
        return 0;
    return n > 0 ? n : 0;
}

/* A container's declaration for d (POD_KEEP_WORKLOAD), from its resources and what
 * pods_budget read of it. 0, or -1 when out of memory. */
static int
fill_decl(struct walk *w, const struct res_map maps[2], struct pod_decl *d)
{
    const struct pods_budget *b = &w->w_budget;
    const struct bsrc_container *c =
        b->pb_count > 0 ? &b->pb_ctrs[b->pb_count - 1] : NULL;

    if (decl_mib(maps, &d->pd_declares, &d->pd_mib) == -1)
        return w->w_oom = 1, -1;
    if (c != NULL) {
        d->pd_name = (char *)(c->bc_name != NULL ? c->bc_name : "");
        d->pd_hami = c->bc_mem[0] || c->bc_mem[1] || c->bc_pct[0] || c->bc_pct[1];
        d->pd_gpus = decl_gpus(c);
    }
    return 0;
}

/* Reads one container object and judges it: 0 and *mib, 1 when it declares
 * nothing, 2 when its declaration is broken (why in msg), -1 on a read error.
 * d, when not NULL, gets its declaration. */
static int
read_container(struct walk *w, size_t idx, int64_t *mib, char *msg, size_t msglen,
               struct pod_decl *d)
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
        int is_name = js_str_eq(&key, "name");
        if (!is_name && !js_str_eq(&key, "resources"))
            rc = js_skip(&w->w_s);
        else if ((rc = walk_once(w, &seen, is_name ? 1 : 2,
                                 is_name ? "name" : "resources")) == 1)
            rc = js_skip(&w->w_s);
        else if (rc == 0)
            rc = is_name ? js_hold(&w->w_s, &name) : read_resources(w, &rtype, maps);
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (pods_budget_container_name(&w->w_budget, &name) == -1)
        return w->w_oom = 1, -1;
    if (d != NULL && fill_decl(w, maps, d) == -1)
        return -1;
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

/* A new declaration of p at the end of the list's (POD_KEEP_WORKLOAD), zeroed but for
 * an unreadable value and no name; NULL when out of memory. */
static struct pod_decl *
new_decl(struct walk *w, struct pod *p)
{
    struct pod_decl *grown;

    if (w->w_decl_count == w->w_decl_cap) {
        size_t cap = w->w_decl_cap ? w->w_decl_cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof(*grown) ||
            (grown = realloc(w->w_out->pl_decls, cap * sizeof(*grown))) == NULL)
            return w->w_oom = 1, NULL;
        w->w_out->pl_decls = grown;
        w->w_decl_cap = cap;
    }
    grown = &w->w_out->pl_decls[w->w_decl_count++];
    memset(grown, 0, sizeof(*grown));
    grown->pd_name = (char *)"";
    grown->pd_mib = -1;
    p->p_decl_count++;
    return grown;
}

/* spec.containers (init containers do not count), summed into p. A broken
 * declaration makes the pod BUDGET_BAD with a reason (the first); -1 only on
 * a read error or out of memory. With POD_KEEP_WORKLOAD the containers after a
 * broken one are still read for their declarations, but HAMi's reading ends
 * where the budget's did. */
static int
read_containers(struct walk *w, struct pod *p, char *msg, size_t msglen)
{
    int keep = (w->w_keep & POD_KEEP_WORKLOAD) != 0;
    char scratch[REASON];
    struct pod_decl *d = NULL;
    int64_t v, total = 0;
    size_t i = 0, cut = 0;
    int rc, declared = 0, bad = 0;

    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        if (keep && (d = new_decl(w, p)) == NULL)
            return -1;
        if (bad && !keep) { /* the first broken container is the reason */
            rc = js_skip(&w->w_s);
        } else if (js_peek(&w->w_s) != JS_OBJECT) {
            if (!bad) {
                snprintf(msg, msglen, "spec.containers[%zu] is not an object", i);
                cut = w->w_budget.pb_count;
            }
            bad = 1;
            rc = js_skip(&w->w_s);
        } else if (pods_budget_container(&w->w_budget) == -1) {
            return w->w_oom = 1, -1;
        } else if (bad) { /* POD_KEEP_WORKLOAD: only the declaration is read, and
                             as --suggest always read it (a repeated key: the first) */
            w->w_lenient = 1;
            rc = read_container(w, i, &v, scratch, sizeof(scratch), d);
            w->w_lenient = 0;
        } else if ((rc = read_container(w, i, &v, msg, msglen, d)) == 2) {
            bad = 1;
            cut = w->w_budget.pb_count;
        } else if (rc == 0) {
            if (v > INT64_MAX - total) {
                snprintf(msg, msglen, "the containers' values together overflow 64 bits");
                bad = 1;
                cut = w->w_budget.pb_count;
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
    if (bad) {
        w->w_budget.pb_count = cut; /* HAMi sees what it saw before the reading stopped */
        return 1;
    }
    p->p_budget_state = declared ? BUDGET_OK : BUDGET_NONE;
    p->p_budget_mib = total;
    return 0;
}

int
walk_spec(struct walk *w, struct pod *p)
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
                if ((rc = walk_once(w, &seen, 2, "hostNetwork")) == 0) {
                    /* Anything but false counts: when in doubt, never ask. */
                    t = js_peek(&w->w_s);
                    p->p_host_network = t != JS_FALSE && t != JS_NULL;
                }
                rc = rc == -1 ? -1 : js_skip(&w->w_s);
            } else if (js_str_eq(&key, "resourceClaims")) {
                /* Claims named directly (a shared claim) are in the spec alone. */
                if ((rc = walk_once(w, &seen, 4, "resourceClaims")) == 1)
                    rc = js_skip(&w->w_s);
                else if (rc == 0 &&
                         (rc = pods_budget_claims(&w->w_budget, &w->w_s)) == -1 &&
                         !w->w_s.js_failed)
                    w->w_oom = 1;
            } else if (!js_str_eq(&key, "containers")) {
                rc = js_skip(&w->w_s);
            } else if ((rc = walk_once(w, &seen, 1, "containers")) != 0) {
                rc = rc == -1 ? -1 : js_skip(&w->w_s);
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
