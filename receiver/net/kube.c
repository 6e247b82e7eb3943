/* kube.c -- the few Kubernetes API calls the watchdog makes, classified for the caller */
#include "kube.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "httpc.h"
#include "kube_event.h"
#include "kube_json.h"
#include "log.h"

#define KUBE_BODY_CAP (32u * 1024 * 1024)
#define KUBE_URL_MAX 4096

enum kube_op { OP_LIST_PODS, OP_LIST_NODES, OP_EVICT, OP_DELETE, OP_PATCH, OP_GET_NODE, OP_EVENT };

struct kube {
    struct httpc *k_http; /* owned */
    char *k_url;          /* owned; the base, no trailing slash */
};

/* One call in flight; the httpc callback argument. */
struct kube_call {
    enum kube_op kc_op;
    char *kc_method;   /* owned, for logs */
    char *kc_path;     /* owned, for logs: the URL minus the base */
    char kc_what[256]; /* RBAC verb and resource: "create pods/eviction in namespace x" */
    struct pod_parse_opts kc_po; /* owned strings (OP_LIST_PODS) */
    kube_cb kc_cb;
    void *kc_arg;
};

const char *
kube_class_name(enum kube_class c)
{
    switch (c) {
    case KUBE_OK:
        return "ok";
    case KUBE_GONE:
        return "gone";
    case KUBE_CONFLICT:
        return "conflict";
    case KUBE_PDB_REFUSED:
        return "pdb_refused";
    case KUBE_FORBIDDEN:
        return "forbidden";
    case KUBE_ERROR:
        return "error";
    }
    return "error"; /* can't happen */
}

struct kube *
kube_new(struct event_base *base, const struct kube_opts *o, char *err, size_t errlen)
{
    struct httpc_opts ho;
    struct kube *k;
    size_t len;

    if (o->ko_url == NULL || (strncasecmp(o->ko_url, "http://", 7) != 0 &&
                              strncasecmp(o->ko_url, "https://", 8) != 0)) {
        snprintf(err, errlen, "API server URL %s: not http:// or https://",
                 o->ko_url ? o->ko_url : "(none)");
        return NULL;
    }
    if ((k = calloc(1, sizeof(*k))) == NULL || (k->k_url = strdup(o->ko_url)) == NULL) {
        snprintf(err, errlen, "out of memory");
        kube_free(k);
        return NULL;
    }
    len = strlen(k->k_url);
    while (len > 0 && k->k_url[len - 1] == '/')
        k->k_url[--len] = '\0';
    memset(&ho, 0, sizeof(ho));
    ho.ho_connect_timeout_ms = o->ko_connect_timeout_ms;
    ho.ho_timeout_ms = o->ko_timeout_ms;
    ho.ho_body_cap = o->ko_body_cap > 0 ? o->ko_body_cap : KUBE_BODY_CAP;
    ho.ho_ca_file = o->ko_ca_file;
    ho.ho_token_file = o->ko_token_file;
    ho.ho_token_max_age_ms = o->ko_token_max_age_ms;
    if ((k->k_http = httpc_new(base, &ho, err, errlen)) == NULL) {
        kube_free(k);
        return NULL;
    }
    return k;
}

void
kube_free(struct kube *k)
{
    if (k == NULL)
        return;
    httpc_free(k->k_http); /* cancelled callbacks free their calls */
    free(k->k_url);
    free(k);
}

static void
call_free(struct kube_call *kc)
{
    if (kc == NULL)
        return;
    free(kc->kc_method);
    free(kc->kc_path);
    free((char *)kc->kc_po.po_resource);
    free((char *)kc->kc_po.po_protect_annotation);
    free(kc);
}

/* Judges an HTTP answer that arrived whole. */
static enum kube_class
classify(enum kube_op op, long status)
{
    if (status >= 200 && status <= 299)
        return KUBE_OK;
    switch (status) {
    case 404:
        return KUBE_GONE;
    case 409:
        return KUBE_CONFLICT;
    case 401:
    case 403:
        return KUBE_FORBIDDEN;
    case 429:
        return op == OP_EVICT ? KUBE_PDB_REFUSED : KUBE_ERROR;
    default:
        return KUBE_ERROR;
    }
}

/* Parses a list answer into a; on failure turns a into KUBE_ERROR with why. */
static void
parse_list(struct kube_call *kc, const struct httpc_resp *r, struct kube_answer *a,
           char *why, size_t whylen)
{
    char perr[256];
    int rc;

    if (kc->kc_op == OP_LIST_PODS)
        rc = pods_json_parse(r->hr_body, r->hr_body_len, &kc->kc_po, &a->ka_pods, perr,
                             sizeof(perr));
    else
        rc = kube_json_node_names(r->hr_body, r->hr_body_len, &a->ka_nodes,
                                  &a->ka_node_count, perr, sizeof(perr));
    if (rc == -1) {
        a->ka_class = KUBE_ERROR;
        snprintf(why, whylen, "kube: %s: bad answer: %s", kc->kc_what, perr);
    }
}

static void
call_done(const struct httpc_resp *r, void *arg)
{
    struct kube_call *kc = arg;
    struct kube_answer a;
    char why[1536], msg[768], status[16], elapsed[24];

    memset(&a, 0, sizeof(a));
    a.ka_cancelled = r->hr_cancelled;
    a.ka_status = r->hr_status;
    a.ka_elapsed_ms = r->hr_elapsed_ms;
    a.ka_body = r->hr_body;
    a.ka_body_len = r->hr_body_len;
    why[0] = '\0';
    if (r->hr_error != NULL) {
        a.ka_class = KUBE_ERROR;
        snprintf(why, sizeof(why), "kube: %s: %s", kc->kc_what, r->hr_error);
    } else if ((a.ka_class = classify(kc->kc_op, r->hr_status)) == KUBE_OK) {
        if (kc->kc_op == OP_LIST_PODS || kc->kc_op == OP_LIST_NODES)
            parse_list(kc, r, &a, why, sizeof(why));
    } else {
        kube_json_status_message(r->hr_body, r->hr_body_len, msg, sizeof(msg));
        if (r->hr_status == 401)
            snprintf(why, sizeof(why),
                     "kube: %s: HTTP 401: the API server rejected the token: %s",
                     kc->kc_what, msg);
        else if (r->hr_status == 403)
            snprintf(why, sizeof(why),
                     "kube: HTTP 403: missing RBAC permission to %s: %s", kc->kc_what,
                     msg);
        else
            snprintf(why, sizeof(why), "kube: %s: HTTP %ld: %s", kc->kc_what,
                     r->hr_status, msg);
    }
    a.ka_error = a.ka_class == KUBE_OK ? NULL : why;
    snprintf(status, sizeof(status), "%ld", r->hr_status);
    snprintf(elapsed, sizeof(elapsed), "%ld", r->hr_elapsed_ms);
    if (a.ka_cancelled)
        log_event(LOG_LEVEL_DEBUG, "kube call cancelled", "method", kc->kc_method, "path",
                  kc->kc_path, (char *)NULL);
    else if (a.ka_class != KUBE_OK)
        log_event(LOG_LEVEL_WARN, "kube call failed", "method", kc->kc_method, "path",
                  kc->kc_path, "status", status, "elapsed_ms", elapsed, "class",
                  kube_class_name(a.ka_class), "error", why, (char *)NULL);
    else /* the writes are worth an info line; the lists run on every decision */
        log_event(kc->kc_op == OP_LIST_PODS || kc->kc_op == OP_LIST_NODES ||
                          kc->kc_op == OP_GET_NODE
                      ? LOG_LEVEL_DEBUG
                      : LOG_LEVEL_INFO,
                  "kube call done", "method", kc->kc_method, "path", kc->kc_path,
                  "status", status, "elapsed_ms", elapsed, (char *)NULL);
    kc->kc_cb(&a, kc->kc_arg);
    pod_list_free(&a.ka_pods);
    kube_node_names_free(a.ka_nodes, a.ka_node_count);
    call_free(kc);
}

/* Sends one call; takes ownership of kc and body in every case. path is
 * borrowed; a path whose building failed (toobig, see path_add) is refused. */
static int
call_start(struct kube *k, struct kube_call *kc, const char *method, struct buf *path,
           const char *content_type, char *body, kube_cb cb, void *arg)
{
    struct httpc_req req;
    struct buf url;
    int rc = -1;

    buf_init(&url, KUBE_URL_MAX);
    if (path->b_data == NULL || path->b_toobig ||
        (kc->kc_method = strdup(method)) == NULL ||
        (kc->kc_path = strdup(path->b_data)) == NULL ||
        buf_printf(&url, "%s%s", k->k_url, path->b_data) == -1) {
        log_warnx("%s: %s: out of memory or URL too long", __func__, kc->kc_what);
        goto out;
    }
    kc->kc_cb = cb;
    kc->kc_arg = arg;
    memset(&req, 0, sizeof(req));
    req.hq_method = method;
    req.hq_url = url.b_data;
    req.hq_content_type = content_type;
    req.hq_body = body;
    req.hq_body_len = body ? strlen(body) : 0;
    if ((rc = httpc_request(k->k_http, &req, call_done, kc)) == 0)
        kc = NULL; /* call_done frees it */
out:
    call_free(kc);
    buf_free(&url);
    free(body);
    return rc;
}

/*
 * Appends literal text, then value percent-encoded (either may be NULL). Once
 * an append fails the buffer is marked toobig so call_start refuses it: a
 * path with a piece missing must never be sent.
 */
static void
path_add(struct buf *path, const char *literal, const char *value)
{
    if (path->b_toobig)
        return;
    if ((literal != NULL && buf_append(path, literal, strlen(literal)) == -1) ||
        (value != NULL && httpc_urlencode(path, value) == -1))
        path->b_toobig = 1;
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
               kube_cb cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    int rc;

    if (empty(node) || po == NULL) {
        log_warnx("%s: no node name", __func__);
        return -1;
    }
    if ((kc = call_new(OP_LIST_PODS)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "list pods on node %s", node);
    if ((po->po_resource != NULL &&
         (kc->kc_po.po_resource = strdup(po->po_resource)) == NULL) ||
        (po->po_protect_annotation != NULL &&
         (kc->kc_po.po_protect_annotation = strdup(po->po_protect_annotation)) == NULL)) {
        log_warnx("%s: out of memory", __func__);
        call_free(kc);
        return -1;
    }
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/pods?fieldSelector=", NULL);
    path_add(&path, NULL, "spec.nodeName=");
    path_add(&path, NULL, node);
    rc = call_start(k, kc, "GET", &path, NULL, NULL, cb, arg);
    buf_free(&path);
    return rc;
}

int
kube_list_nodes(struct kube *k, const char *selector, kube_cb cb, void *arg)
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
        int dry_run, kube_cb cb, void *arg)
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
    body =
        op == OP_EVICT ? kube_json_eviction(ns, pod, uid) : kube_json_delete_options(uid);
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
           kube_cb cb, void *arg)
{
    return recycle(k, OP_EVICT, ns, pod, uid, dry_run, cb, arg);
}

int
kube_delete_pod(struct kube *k, const char *ns, const char *pod, const char *uid,
                int dry_run, kube_cb cb, void *arg)
{
    return recycle(k, OP_DELETE, ns, pod, uid, dry_run, cb, arg);
}

int
kube_patch_capacity(struct kube *k, const char *node, const char *resource, int64_t mib,
                    kube_cb cb, void *arg)
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
kube_get_node(struct kube *k, const char *node, kube_cb cb, void *arg)
{
    struct kube_call *kc;
    struct buf path;
    int rc;

    if (empty(node)) {
        log_warnx("%s: no node name", __func__);
        return -1;
    }
    if ((kc = call_new(OP_GET_NODE)) == NULL)
        return -1;
    snprintf(kc->kc_what, sizeof(kc->kc_what), "get nodes (node %s)", node);
    buf_init(&path, KUBE_URL_MAX);
    path_add(&path, "/api/v1/nodes/", node);
    rc = call_start(k, kc, "GET", &path, NULL, NULL, cb, arg);
    buf_free(&path);
    return rc;
}

int
kube_create_event(struct kube *k, const struct kube_event *ev, kube_cb cb, void *arg)
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
    snprintf(kc->kc_what, sizeof(kc->kc_what), "create events.k8s.io events in namespace %s",
             ev->ke_namespace);
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

int
kube_incluster_url(char *out, size_t outlen, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    long p = 0;
    int n;

    if (empty(host) || empty(port)) {
        snprintf(err, errlen,
                 "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set (not in a "
                 "cluster?)");
        return -1;
    }
    if (strpbrk(host, "/@[]?# \t\r\n") != NULL) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_HOST: '%s' is not a host", host);
        return -1;
    }
    for (const char *c = port; *c; c++) {
        if (*c < '0' || *c > '9' || p > 65535) {
            p = -1;
            break;
        }
        p = p * 10 + (*c - '0');
    }
    if (p < 1 || p > 65535) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_PORT: '%s' is not a port", port);
        return -1;
    }
    /* An IPv6 literal needs brackets in a URL. */
    n = strchr(host, ':') != NULL ? snprintf(out, outlen, "https://[%s]:%ld", host, p)
                                  : snprintf(out, outlen, "https://%s:%ld", host, p);
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(err, errlen, "in-cluster API server URL too long");
        return -1;
    }
    return 0;
}
