/* kube.c -- the few Kubernetes API calls the watchdog makes, classified for the caller */
#include "kube.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube_event.h"
#include "kube_json.h"
#include "node_json.h"
#include "log.h"
#include "pods_claims.h"

#define KUBE_URL_MAX 4096

enum kube_op {
    OP_LIST_PODS,
    OP_LIST_NODES,
    OP_EVICT,
    OP_DELETE,
    OP_PATCH,
    OP_GET_NODE,
    OP_EVENT
};

struct kube {
    struct kubec *k_c; /* owned */
    long k_timeout_ms; /* the client's timeout for every call; 0 = kubec's */
};

/* One call in flight; the kubec callback argument. */
struct kube_call {
    enum kube_op kc_op;
    char kc_what[256]; /* RBAC verb and resource: "create pods/eviction in namespace x" */
    struct pod_parse_opts kc_po;  /* owned strings (OP_LIST_PODS) */
    struct bsrc_order kc_sources; /* BUDGET_SOURCES (OP_LIST_PODS); empty = resource */
    struct pod_list kc_pods;      /* filled by pods_parse, handed over in the answer */
    char **kc_nodes;              /* owned, likewise */
    char **kc_gpu_memory;         /* owned, parallel to kc_nodes (GFD labels) */
    char **kc_gpu_count;          /* owned, likewise */
    size_t kc_node_count;
    enum node_capacity_state kc_cap_state; /* OP_GET_NODE, filled by node_parse */
    int64_t kc_cap_mib;
    kube_done_fn kc_cb;
    void *kc_arg;
};

struct kube *
kube_new(struct event_base *base, const struct kube_opts *o, char *err, size_t errlen)
{
    struct kube *k;

    if ((k = calloc(1, sizeof(*k))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if ((k->k_c = kubec_new(base, o, err, errlen)) == NULL) {
        free(k);
        return NULL;
    }
    k->k_timeout_ms = o->ko_timeout_ms;
    return k;
}

struct kubec *
kube_conn(struct kube *k)
{
    return k->k_c;
}

void
kube_free(struct kube *k)
{
    if (k == NULL)
        return;
    kubec_free(k->k_c); /* cancelled callbacks free their calls */
    free(k);
}

static void
call_free(struct kube_call *kc)
{
    if (kc == NULL)
        return;
    free((char *)kc->kc_po.po_resource);
    free((char *)kc->kc_po.po_protect_annotation);
    pod_list_free(&kc->kc_pods);
    kube_node_labels_free(kc->kc_gpu_memory, kc->kc_node_count);
    kube_node_labels_free(kc->kc_gpu_count, kc->kc_node_count);
    kube_node_names_free(kc->kc_nodes, kc->kc_node_count);
    free((char *)kc->kc_po.po_release_annotation);
    free(kc);
}

/* pods_claims_parse_fn of the pod list: claims NULL unless dra is listed. */
static int
pods_parse(const char *body, size_t len, const struct dra_claims *claims, char *err,
           size_t errlen, void *arg)
{
    struct kube_call *kc = arg;
    int rc;

    kc->kc_po.po_claims = claims; /* borrowed for the parse alone */
    rc = pods_json_parse_sources(body, len, &kc->kc_po, &kc->kc_sources, &kc->kc_pods,
                                 err, errlen);
    kc->kc_po.po_claims = NULL;
    return rc;
}

/* kubec_parse_fn for the node list. */
static int
list_parse(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct kube_call *kc = arg;

    return kube_json_nodes(body, len, &kc->kc_nodes, &kc->kc_gpu_memory,
                           &kc->kc_gpu_count, &kc->kc_node_count, err, errlen);
}

/* kubec_parse_fn for one Node: its capacity of kc_po.po_resource. */
static int
node_parse(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct kube_call *kc = arg;

    return node_json_capacity(body, len, kc->kc_po.po_resource, &kc->kc_cap_state,
                              &kc->kc_cap_mib, err, errlen);
}

static void
call_done(const struct kubec_answer *r, void *arg)
{
    struct kube_call *kc = arg;
    struct kube_answer a;
    size_t nlabels = r->kr_class == KUBE_OK ? kc->kc_node_count : 0; /* a taker may zero
                                                                   ka_node_count */

    memset(&a, 0, sizeof(a));
    a.ka_class = r->kr_class;
    a.ka_cancelled = r->kr_cancelled;
    a.ka_status = r->kr_status;
    a.ka_error = r->kr_error;
    a.ka_elapsed_ms = r->kr_elapsed_ms;
    a.ka_retry_after_s = r->kr_retry_after_s;
    if (r->kr_class == KUBE_OK) { /* the callback may take them */
        a.ka_pods = kc->kc_pods;
        a.ka_nodes = kc->kc_nodes;
        a.ka_node_count = kc->kc_node_count;
        a.ka_node_gpu_memory = kc->kc_gpu_memory;
        a.ka_node_gpu_count = kc->kc_gpu_count;
        memset(&kc->kc_pods, 0, sizeof(kc->kc_pods));
        kc->kc_nodes = NULL;
        kc->kc_gpu_memory = NULL;
        kc->kc_gpu_count = NULL;
        kc->kc_node_count = 0;
        a.ka_capacity_state = kc->kc_cap_state;
        a.ka_capacity_mib = kc->kc_cap_mib;
    }
    kc->kc_cb(&a, kc->kc_arg);
    pod_list_free(&a.ka_pods);
    kube_node_labels_free(a.ka_node_gpu_memory, nlabels);
    kube_node_labels_free(a.ka_node_gpu_count, nlabels);
    kube_node_names_free(a.ka_nodes, a.ka_node_count);
    call_free(kc);
}

/* Sends one call; takes ownership of kc and body in every case. path is
 * borrowed; a path whose building failed (toobig, see path_add) is refused. */
static int
call_start(struct kube *k, struct kube_call *kc, const char *method, struct buf *path,
           const char *content_type, char *body, kube_done_fn cb, void *arg)
{
    struct kubec_call c;
    int rc;

    kc->kc_cb = cb;
    kc->kc_arg = arg;
    memset(&c, 0, sizeof(c));
    c.kq_method = method;
    c.kq_path = path->b_toobig ? NULL : path->b_data;
    c.kq_what = kc->kc_what;
    c.kq_content_type = content_type;
    c.kq_body = body;
    c.kq_eviction = kc->kc_op == OP_EVICT;
    c.kq_uid_precondition = kc->kc_op == OP_EVICT || kc->kc_op == OP_DELETE;
    if (c.kq_uid_precondition)
        c.kq_timeout_ms = k->k_timeout_ms > KUBE_RECYCLE_TIMEOUT_MS
                              ? k->k_timeout_ms
                              : KUBE_RECYCLE_TIMEOUT_MS;
    c.kq_parse = kc->kc_op == OP_LIST_NODES ? list_parse : NULL;
    if (kc->kc_op == OP_GET_NODE)
        c.kq_parse = node_parse;
    c.kq_done = call_done;
    c.kq_arg = kc;
    if ((rc = kubec_call(k->k_c, &c)) == -1)
        call_free(kc);
    free(body);
    return rc;
}

/* Appends literal, then value percent-encoded; see kubec_path_add. */
static void
path_add(struct buf *path, const char *literal, const char *value)
{
    kubec_path_add(path, literal, value);
}

static struct kube_call *
call_new(enum kube_op op)
{
    struct kube_call *kc;

    if ((kc = calloc(1, sizeof(*kc))) == NULL)
        log_warnx("%s: out of memory", __func__);
    else
        kc->kc_op = op;
    return kc;
}

static int
empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

int
kube_list_pods(struct kube *k, const char *node, const struct pod_parse_opts *po,
               kube_done_fn cb, void *arg)
{
    return kube_list_pods_sources(k, node, po, NULL, cb, arg);
}

int
kube_list_pods_sources(struct kube *k, const char *node, const struct pod_parse_opts *po,
                       const struct bsrc_order *sources, kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct pods_claims_call q;

    if (empty(node) || po == NULL) {
        log_warnx("%s: no node name", __func__);
        return -1;
    }
    if ((kc = call_new(OP_LIST_PODS)) == NULL)
        return -1;
    if (sources != NULL)
        kc->kc_sources = *sources;
    if ((po->po_resource != NULL &&
         (kc->kc_po.po_resource = strdup(po->po_resource)) == NULL) ||
        (po->po_protect_annotation != NULL &&
         (kc->kc_po.po_protect_annotation = strdup(po->po_protect_annotation)) == NULL) ||
        (po->po_release_annotation != NULL &&
         (kc->kc_po.po_release_annotation = strdup(po->po_release_annotation)) == NULL)) {
        log_warnx("%s: out of memory", __func__);
        call_free(kc);
        return -1;
    }
    kc->kc_cb = cb;
    kc->kc_arg = arg;
    memset(&q, 0, sizeof(q));
    q.pq_node = node;
    if (sources != NULL && bsrc_order_has(sources, BSRC_DRA)) /* its claims are read */
        q.pq_driver =
            empty(po->po_dra_driver) ? BSRC_DRA_DRIVER_DEFAULT : po->po_dra_driver;
    q.pq_parse = pods_parse;
    q.pq_done = call_done;
    q.pq_arg = kc;
    if (pods_claims_list(k->k_c, &q) == -1) {
        call_free(kc);
        return -1;
    }
    return 0;
}

int
kube_list_nodes(struct kube *k, const char *selector, kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    int rc;

    if ((kc = call_new(OP_LIST_NODES)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "list nodes");
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/nodes", NULL);
    if (!empty(selector))
        path_add(&path, "?labelSelector=", selector);
    rc = call_start(k, kc, "GET", &path, NULL, NULL, cb, arg);
    buf_free(&path);
    return rc;
}

/* Evict and delete differ in method, path suffix, body and RBAC verb only. */
static int
recycle(struct kube *k, enum kube_op op, const char *ns, const char *pod, const char *uid,
        int dry_run, kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    char *body;
    int rc;

    if (empty(ns) || empty(pod) || empty(uid)) {
        log_warnx("%s: namespace, pod and uid are required",
                  op == OP_EVICT ? "kube_evict" : "kube_delete_pod");
        return -1;
    }
    if ((kc = call_new(op)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "%s in namespace %s",
             op == OP_EVICT ? "create pods/eviction" : "delete pods", ns);
    body = op == OP_EVICT ? kube_json_eviction(ns, pod, uid, dry_run)
                          : kube_json_delete_options(uid, dry_run);
    if (body == NULL) {
        log_warnx("%s: cannot build the request body", __func__);
        call_free(kc);
        return -1;
    }
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/namespaces/", ns);
    path_add(&path, "/pods/", pod);
    if (op == OP_EVICT)
        path_add(&path, "/eviction", NULL);
    if (dry_run)
        path_add(&path, "?dryRun=All", NULL);
    rc = call_start(k, kc, op == OP_EVICT ? "POST" : "DELETE", &path, "application/json",
                    body, cb, arg);
    buf_free(&path);
    return rc;
}

int
kube_evict(struct kube *k, const char *ns, const char *pod, const char *uid, int dry_run,
           kube_done_fn cb, void *arg)
{
    return recycle(k, OP_EVICT, ns, pod, uid, dry_run, cb, arg);
}

int
kube_delete_pod(struct kube *k, const char *ns, const char *pod, const char *uid,
                int dry_run, kube_done_fn cb, void *arg)
{
    return recycle(k, OP_DELETE, ns, pod, uid, dry_run, cb, arg);
}

int
kube_patch_capacity(struct kube *k, const char *node, const char *resource, int64_t mib,
                    kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    char *body;
    int rc;

    if (empty(node) || empty(resource) || mib < 0) {
        log_warnx("%s: node, resource and a non-negative value are required", __func__);
        return -1;
    }
    if ((kc = call_new(OP_PATCH)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "patch nodes/status (node %s)", node);
    if ((body = kube_json_capacity_patch(resource, mib)) == NULL) {
        log_warnx("%s: cannot build the request body", __func__);
        call_free(kc);
        return -1;
    }
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/nodes/", node);
    path_add(&path, "/status", NULL);
    rc = call_start(k, kc, "PATCH", &path, "application/json-patch+json", body, cb, arg);
    buf_free(&path);
    return rc;
}

int
kube_get_node_capacity(struct kube *k, const char *node, const char *resource,
                       kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    int rc;

    if (empty(node) || empty(resource)) {
        log_warnx("%s: node and resource are required", __func__);
        return -1;
    }
    if ((kc = call_new(OP_GET_NODE)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "get nodes (node %s)", node);
    if ((kc->kc_po.po_resource = strdup(resource)) == NULL) {
        log_warnx("%s: out of memory", __func__);
        call_free(kc);
        return -1;
    }
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/nodes/", node);
    rc = call_start(k, kc, "GET", &path, NULL, NULL, cb, arg);
    buf_free(&path);
    return rc;
}

int
kube_create_event(struct kube *k, const struct kube_event *ev, kube_done_fn cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    char *body;
    int rc;

    if (ev == NULL || empty(ev->ke_namespace) || empty(ev->ke_pod)) {
        log_warnx("%s: the pod's namespace and name are required", __func__);
        return -1;
    }
    if ((kc = call_new(OP_EVENT)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what),
             "create events.k8s.io events in namespace %s", ev->ke_namespace);
    if ((body = kube_event_json(ev)) == NULL) {
        log_warnx("%s: cannot build the request body", __func__);
        call_free(kc);
        return -1;
    }
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/apis/events.k8s.io/v1/namespaces/", ev->ke_namespace);
    path_add(&path, "/events", NULL);
    rc = call_start(k, kc, "POST", &path, "application/json", body, cb, arg);
    buf_free(&path);
    return rc;
}
