/* suggest_pods.c -- a node's PodList as `budgets --suggest` needs it: owners, containers,
 * budgets
 *
 * Two walks of one body: pods_json_parse() gives each pod's budget by the
 * decision's own rules (so `--suggest` and the watchdog never disagree on a
 * declared figure), and this file's walk adds what only the suggestion needs:
 * the controller, the pod-template-hash label, the phase, and each
 * container's own declaration (a patch sets the budget per container). A
 * value of an unexpected type is skipped here: pods_json_parse() judges the
 * document's shape and the budget's readability. */
#include "suggest_pods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "pods_json.h"
#include "quantity.h"
#include "strpool.h"

struct pwalk {
    struct js_scan w_s;
    const char *w_res;
    struct strpool *w_pool;
    int w_oom;
};

/* A string value into the pool; NULL (and w_oom) when out of memory, NULL
 * without w_oom when it holds U+0000; any other value skipped. */
static int
pool_str(struct pwalk *w, char **dst)
{
    return js_pool_string(&w->w_s, w->w_pool, 0, dst, &w->w_oom);
}

/* An object whose members are handled by fn; anything else is skipped. */
typedef int (*member_fn)(struct pwalk *w, const struct js_str *key, void *arg);

static int
each_member(struct pwalk *w, member_fn fn, void *arg)
{
    struct js_str key;
    int rc;

    if (js_peek(&w->w_s) != JS_OBJECT)
        return js_skip(&w->w_s);
    if (js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1)
        if (fn(w, &key, arg) == -1)
            return -1;
    return rc;
}

static int
label_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct sg_pod *p = arg;

    if (js_str_eq(key, "pod-template-hash") && p->sp_hash == NULL)
        return pool_str(w, &p->sp_hash);
    return js_skip(&w->w_s);
}

struct owner {
    char *o_kind, *o_name;
    int o_controller;
};

static int
owner_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct owner *o = arg;

    if (js_str_eq(key, "kind") && o->o_kind == NULL)
        return pool_str(w, &o->o_kind);
    if (js_str_eq(key, "name") && o->o_name == NULL)
        return pool_str(w, &o->o_name);
    if (js_str_eq(key, "controller")) {
        o->o_controller = js_peek(&w->w_s) == JS_TRUE;
        return js_skip(&w->w_s);
    }
    return js_skip(&w->w_s);
}

static int
read_owners(struct pwalk *w, struct sg_pod *p)
{
    int rc;

    if (js_peek(&w->w_s) != JS_ARRAY)
        return js_skip(&w->w_s);
    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        struct owner o = {NULL, NULL, 0};
        if (each_member(w, owner_member, &o) == -1)
            return -1;
        /* The first controller reference; Kubernetes allows only one. */
        if (o.o_controller && o.o_kind != NULL && o.o_name != NULL &&
            p->sp_owner_kind == NULL) {
            p->sp_owner_kind = o.o_kind;
            p->sp_owner_name = o.o_name;
        }
    }
    return rc;
}

static int
annotation_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct sg_pod *p = arg;
    char *v = NULL;
    int64_t n;
    char qerr[64];

    if (!js_str_eq(key, KAI_NUM_DEVICES))
        return js_skip(&w->w_s);
    if (pool_str(w, &v) == -1)
        return -1;
    if (v != NULL && quantity_parse(v, &n, qerr, sizeof(qerr)) == 0 && n >= 1 &&
        n <= 1024)
        p->sp_kai_devices = n;
    return 0;
}

static int
meta_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct sg_pod *p = arg;

    if (js_str_eq(key, "annotations"))
        return each_member(w, annotation_member, p);
    if (js_str_eq(key, "name") && p->sp_name == NULL)
        return pool_str(w, &p->sp_name);
    if (js_str_eq(key, "namespace") && p->sp_namespace == NULL)
        return pool_str(w, &p->sp_namespace);
    if (js_str_eq(key, "labels"))
        return each_member(w, label_member, p);
    if (js_str_eq(key, "ownerReferences"))
        return read_owners(w, p);
    return js_skip(&w->w_s);
}

/* limits or requests: the resource's value in *mib (-1 unreadable); *found. */
struct resmap {
    const char *r_res;
    int r_found;
    int64_t r_mib;
};

/* The names read from one limits or requests map: GPUMEM_RESOURCE, then HAMi's. */
#define NRES 4

static int
resmap_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct resmap *r = arg;
    struct js_held h;
    char qerr[64], *s;
    size_t i;

    for (i = 0; i < NRES; i++)
        if (r[i].r_res != NULL && js_str_eq(key, r[i].r_res) && !r[i].r_found)
            break;
    if (i == NRES)
        return js_skip(&w->w_s);
    r = &r[i];
    if (js_hold(&w->w_s, &h) == -1)
        return -1;
    r->r_found = 1;
    r->r_mib = -1;
    if (h.h_type != JS_STRING)
        return 0;
    if ((s = malloc(js_str_len(&h.h_str) + 1)) == NULL)
        return w->w_oom = 1, -1;
    js_str_decode(&h.h_str, s);
    if (quantity_parse(s, &r->r_mib, qerr, sizeof(qerr)) == -1 || r->r_mib < 0)
        r->r_mib = -1;
    free(s);
    return 0;
}

struct cres {
    struct resmap c_map[2][NRES]; /* limits, requests */
};

static int
resources_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct cres *c = arg;

    if (js_str_eq(key, "limits"))
        return each_member(w, resmap_member, c->c_map[0]);
    if (js_str_eq(key, "requests"))
        return each_member(w, resmap_member, c->c_map[1]);
    return js_skip(&w->w_s);
}

struct cwalk {
    struct sg_container *cw_c;
    struct cres cw_res;
};

static int
container_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct cwalk *cw = arg;

    if (js_str_eq(key, "name") && cw->cw_c->sc_name == NULL)
        return pool_str(w, &cw->cw_c->sc_name);
    if (js_str_eq(key, "resources"))
        return each_member(w, resources_member, &cw->cw_res);
    return js_skip(&w->w_s);
}

static int
read_containers(struct pwalk *w, struct sg_pod *p)
{
    size_t cap = 0;
    int rc;

    if (js_peek(&w->w_s) != JS_ARRAY || p->sp_containers != NULL)
        return js_skip(&w->w_s);
    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        if (p->sp_container_count == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            struct sg_container *n = realloc(p->sp_containers, ncap * sizeof(*n));
            if (n == NULL)
                return w->w_oom = 1, -1;
            p->sp_containers = n;
            cap = ncap;
        }
        struct sg_container *c = &p->sp_containers[p->sp_container_count++];
        struct cwalk cw;
        memset(&cw, 0, sizeof(cw));
        cw.cw_c = c;
        for (int k = 0; k < 2; k++) {
            cw.cw_res.c_map[k][0].r_res = w->w_res;
            cw.cw_res.c_map[k][1].r_res = HAMI_GPUMEM;
            cw.cw_res.c_map[k][2].r_res = HAMI_GPUMEM_PCT;
            cw.cw_res.c_map[k][3].r_res = HAMI_GPU;
        }
        memset(c, 0, sizeof(*c));
        if (each_member(w, container_member, &cw) == -1)
            return -1;
        /* The decision's rule per container: the limit, else the request. */
        struct resmap *m = cw.cw_res.c_map[0][0].r_found ? &cw.cw_res.c_map[0][0]
                                                         : &cw.cw_res.c_map[1][0];
        c->sc_declares = m->r_found;
        c->sc_mib = m->r_found ? m->r_mib : -1;
        c->sc_hami = cw.cw_res.c_map[0][1].r_found || cw.cw_res.c_map[1][1].r_found ||
                     cw.cw_res.c_map[0][2].r_found || cw.cw_res.c_map[1][2].r_found;
        m = cw.cw_res.c_map[0][3].r_found ? &cw.cw_res.c_map[0][3]
                                          : &cw.cw_res.c_map[1][3];
        c->sc_gpus = m->r_found && m->r_mib > 0 ? m->r_mib : 0;
        if (c->sc_name == NULL)
            c->sc_name = "";
    }
    return rc;
}

static int
spec_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    if (js_str_eq(key, "containers"))
        return read_containers(w, arg);
    return js_skip(&w->w_s);
}

static int
status_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct sg_pod *p = arg;

    if (js_str_eq(key, "phase") && js_peek(&w->w_s) == JS_STRING) {
        struct js_str v;
        if (js_string(&w->w_s, &v) == -1)
            return -1;
        p->sp_terminal = js_str_eq(&v, "Succeeded") || js_str_eq(&v, "Failed");
        return 0;
    }
    return js_skip(&w->w_s);
}

static int
pod_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    if (js_str_eq(key, "metadata"))
        return each_member(w, meta_member, arg);
    if (js_str_eq(key, "spec"))
        return each_member(w, spec_member, arg);
    if (js_str_eq(key, "status"))
        return each_member(w, status_member, arg);
    return js_skip(&w->w_s);
}

struct lwalk {
    struct sg_pod_list *l_out;
    size_t l_cap;
};

static int
list_member(struct pwalk *w, const struct js_str *key, void *arg)
{
    struct lwalk *lw = arg;
    struct sg_pod_list *l = lw->l_out;
    int rc;

    if (!js_str_eq(key, "items") || js_peek(&w->w_s) != JS_ARRAY || l->sl_pods != NULL)
        return js_skip(&w->w_s);
    if (js_array_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->w_s)) == 1) {
        if (l->sl_count == lw->l_cap) {
            size_t ncap = lw->l_cap ? lw->l_cap * 2 : 16;
            struct sg_pod *n = realloc(l->sl_pods, ncap * sizeof(*n));
            if (n == NULL)
                return w->w_oom = 1, -1;
            l->sl_pods = n;
            lw->l_cap = ncap;
        }
        struct sg_pod *p = &l->sl_pods[l->sl_count++];
        memset(p, 0, sizeof(*p));
        p->sp_kai_devices = 1;
        if (each_member(w, pod_member, p) == -1)
            return -1;
    }
    return rc;
}

void
sg_pod_list_free(struct sg_pod_list *l)
{
    for (size_t i = 0; i < l->sl_count; i++)
        free(l->sl_pods[i].sp_containers);
    free(l->sl_pods);
    strpool_free(l->sl_pool);
    memset(l, 0, sizeof(*l));
}

int
sg_pods_parse(const char *body, size_t len, const char *resource, struct sg_pod_list *out,
              char *err, size_t errlen)
{
    return sg_pods_parse_sources(body, len, resource, NULL, out, err, errlen);
}

int
sg_pods_parse_sources(const char *body, size_t len, const char *resource,
                      const struct bsrc_order *sources, struct sg_pod_list *out,
                      char *err, size_t errlen)
{
    struct pod_parse_opts po = {.po_resource = resource, .po_protect_annotation = ""};
    struct pod_list pl = {0};
    struct lwalk lw = {out, 0};
    struct pwalk w = {.w_res = resource};
    size_t live = 0;

    memset(out, 0, sizeof(*out));
    if (pods_json_parse_sources(body, len, &po, sources, &pl, err, errlen) == -1)
        return -1;
    if ((w.w_pool = out->sl_pool = strpool_new()) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    js_init(&w.w_s, body, len);
    if (each_member(&w, list_member, &lw) == -1 || js_end(&w.w_s) == -1) {
        snprintf(err, errlen, "%s", w.w_oom ? "out of memory" : w.w_s.js_err);
        goto fail;
    }
    /* Both walks read the same items in the same order; pods_json_parse()
     * dropped the finished ones (no tenant, no budget), which this walk keeps
     * only to tell whose history a finished pod's series are. */
    for (size_t i = 0; i < out->sl_count; i++) {
        struct sg_pod *p = &out->sl_pods[i];
        /* pods_json_parse_sources() leaves reservation pods out: no tenant */
        if (sources != NULL && bsrc_order_has(sources, BSRC_KAI) &&
            bsrc_reservation_namespace(p->sp_namespace))
            p->sp_terminal = 1;
        live += !p->sp_terminal;
    }
    if (live != pl.pl_count) {
        snprintf(err, errlen, "the pod list was read twice with different counts");
        goto fail;
    }
    for (size_t i = 0, j = 0; i < out->sl_count; i++) {
        struct sg_pod *p = &out->sl_pods[i];
        if (p->sp_terminal)
            continue; /* BUDGET_NONE, as it was made */
        if (p->sp_name == NULL || p->sp_namespace == NULL ||
            strcmp(p->sp_name, pl.pl_pods[j].p_name) != 0 ||
            strcmp(p->sp_namespace, pl.pl_pods[j].p_namespace) != 0) {
            snprintf(err, errlen, "item %zu: the two reads of the pod list disagree", i);
            goto fail;
        }
        p->sp_budget_state = pl.pl_pods[j].p_budget_state;
        p->sp_budget_mib = pl.pl_pods[j].p_budget_mib;
        p->sp_budget_source = pl.pl_pods[j].p_budget_source;
        j++;
    }
    pod_list_free(&pl);
    return 0;
fail:
    pod_list_free(&pl);
    sg_pod_list_free(out);
    return -1;
}
