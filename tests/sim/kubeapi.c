/* kubeapi.c -- pods, nodes, eviction, delete, ResourceClaims: the API server's shapes and
 * Statuses */
#include "kubeapi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonpatch.h"
#include "selector.h"

#define MAX_SEGMENTS 8

json_t *
kubeapi_status(int code, const char *reason, const char *message, const char *name,
               const char *kind)
{
    json_t *st, *details = NULL;

    if (name != NULL || kind != NULL) {
        details = json_pack("{s:s?, s:s?}", "name", name, "kind", kind);
        if (details == NULL)
            return NULL;
    }
    st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:o*, s:i}", "kind", "Status",
                   "apiVersion", "v1", "metadata", "status", "Failure", "message",
                   message, "reason", reason, "details", details, "code", code);
    return st;
}

/* A Status with a printf message. */
static json_t *__attribute__((format(printf, 3, 6)))
status_fmt(int code, const char *reason, const char *fmt, const char *name,
           const char *kind, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, kind);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return kubeapi_status(code, reason, msg, name, kind);
}

static int
pod_field_lookup(const void *obj, const char *key, const char **val)
{
    const struct sim_pod *sp = obj;

    *val = NULL;
    if (strcmp(key, "spec.nodeName") == 0)
        *val = sp ? sp->sp_spec->po_node : NULL;
    else if (strcmp(key, "metadata.name") == 0)
        *val = sp ? sp->sp_name : NULL;
    else if (strcmp(key, "metadata.namespace") == 0)
        *val = sp ? sp->sp_spec->po_namespace : NULL;
    else if (strcmp(key, "status.phase") == 0)
        *val = sp ? sp->sp_spec->po_phase : NULL;
    else
        return -1;
    return 1;
}

static int
node_field_lookup(const void *node, const char *key, const char **val)
{
    if (strcmp(key, "metadata.name") != 0)
        return -1;
    *val = node ? json_string_value(json_object_get(
                      json_object_get((const json_t *)node, "metadata"), "name"))
                : NULL;
    return 1;
}

/* Reads labelSelector/fieldSelector from the query; 0, or -1 with *out set to a 400. */
static int
selectors(const struct sim_request *rq, char *lsel, char *fsel, size_t len, json_t **out)
{
    if (query_get(rq->rq_query, "labelSelector", lsel, len) < 0 ||
        query_get(rq->rq_query, "fieldSelector", fsel, len) < 0) {
        *out = kubeapi_status(400, "BadRequest", "selector too long", NULL, NULL);
        return -1;
    }
    return 0;
}

static json_t *
list_json(struct world *w, const char *kind, json_t *items)
{
    char rv[24];

    snprintf(rv, sizeof(rv), "%llu", w->w_rv);
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "apiVersion", "v1",
                     "metadata", "resourceVersion", rv, "items", items);
}

/* GET /api/v1/pods and /api/v1/namespaces/NS/pods. */
static int
list_pods(struct world *w, const struct sim_request *rq, const char *ns, json_t **out)
{
    char lsel[MAX_SELECTOR] = "", fsel[MAX_SELECTOR] = "", err[256];
    json_t *items;
    size_t i;

    if (selectors(rq, lsel, fsel, sizeof(lsel), out) != 0)
        return 400;
    if (selector_match(lsel, 0, label_lookup, NULL, err, sizeof(err)) < 0 ||
        selector_match(fsel, 1, pod_field_lookup, NULL, err, sizeof(err)) < 0) {
        *out = kubeapi_status(400, "BadRequest", err, NULL, NULL);
        return 400;
    }
    items = json_array();
    if (items == NULL)
        return 500;
    for (i = 0; i < w->w_npods; i++) {
        const struct sim_pod *sp = &w->w_pods[i];
        if (sp->sp_state != POD_ALIVE || sp->sp_spec->po_host ||
            (ns != NULL && strcmp(ns, sp->sp_spec->po_namespace) != 0) ||
            selector_match(lsel, 0, label_lookup, sp->sp_spec->po_labels, err,
                           sizeof(err)) != 1 ||
            selector_match(fsel, 1, pod_field_lookup, sp, err, sizeof(err)) != 1)
            continue;
        if (json_array_append_new(items, world_pod_json(w, sp, 0)) != 0) {
            json_decref(items);
            return 500;
        }
    }
    *out = list_json(w, "PodList", items);
    return 200;
}

/* GET /api/v1/nodes: the simulated nodes the selectors match, in scenario order. */
static int
list_nodes(struct world *w, const struct sim_request *rq, json_t **out)
{
    char lsel[MAX_SELECTOR] = "", fsel[MAX_SELECTOR] = "", err[256];
    json_t *items = NULL, *labels;
    size_t i;
    int lm, fm;

    if (selectors(rq, lsel, fsel, sizeof(lsel), out) != 0)
        return 400;
    for (i = 0; i < w->w_nnodes; i++) {
        labels = json_object_get(json_object_get(w->w_nodes[i], "metadata"), "labels");
        lm = selector_match(lsel, 0, label_lookup, labels, err, sizeof(err));
        fm = lm < 0 ? -1
                    : selector_match(fsel, 1, node_field_lookup, w->w_nodes[i], err,
                                     sizeof(err));
        if (lm < 0 || fm < 0) {
            json_decref(items);
            *out = kubeapi_status(400, "BadRequest", err, NULL, NULL);
            return 400;
        }
        if (items == NULL && (items = json_array()) == NULL)
            return 500;
        if (!lm || !fm)
            continue;
        json_t *node = json_deep_copy(w->w_nodes[i]);
        /* List items carry no kind/apiVersion of their own. */
        if (node != NULL) {
            json_object_del(node, "kind");
            json_object_del(node, "apiVersion");
        }
        if (json_array_append_new(items, node) != 0) {
            json_decref(items);
            return 500;
        }
    }
    if (items == NULL && (items = json_array()) == NULL)
        return 500;
    *out = list_json(w, "NodeList", items);
    return 200;
}

static int
content_type_is(const struct sim_request *rq, const char *want)
{
    size_t n = strlen(want);
    const char *ct = rq->rq_content_type;

    /* Parameters such as "; charset=utf-8" are allowed after the media type. */
    return ct != NULL && strncasecmp(ct, want, n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Canonicalises status.capacity and .allocatable of a patched node; -1 with err on a bad
 * value. */
static int
node_canonical(json_t *node, char *err, size_t errlen)
{
    static const char *const maps[] = {"capacity", "allocatable"};
    json_t *status = json_object_get(node, "status"), *m, *v, *c;
    const char *k;
    size_t i;

    for (i = 0; i < 2; i++) {
        m = json_object_get(status, maps[i]);
        if (m == NULL)
            continue;
        if (!json_is_object(m)) {
            snprintf(err, errlen, "status.%s: must be an object", maps[i]);
            return -1;
        }
        json_object_foreach(m, k, v)
        {
            c = quantity_canonical_json(v);
            if (c == NULL) {
                char *dump = json_dumps(v, JSON_ENCODE_ANY);
                snprintf(
                    err, errlen,
                    "status.%s[%s]: Invalid value: %s: quantities must match the regular "
                    "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                    maps[i], k, dump ? dump : "?");
                free(dump);
                return -1;
            }
            if (json_object_set_new(m, k, c) != 0) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    }
    return 0;
}

/* What the kubelet does on its next status sync: extended resources become
 * allocatable. 0, or -1 when memory ran out. */
static int
kubelet_sync(json_t *node)
{
    json_t *status = json_object_get(node, "status");
    json_t *cap = json_object_get(status, "capacity");
    json_t *alloc = json_object_get(status, "allocatable");
    const char *k;
    json_t *v;

    if (!json_is_object(cap) || !json_is_object(alloc))
        return 0;
    json_object_foreach(cap, k, v)
    {
        if (strchr(k, '/') != NULL && json_object_set(alloc, k, v) != 0)
            return -1;
    }
    return 0;
}

/* PATCH /api/v1/nodes/N[/status] with a JSON patch; nodep is the node's slot. */
static int
patch_node(struct world *w, const struct sim_request *rq, json_t **nodep, int status_sub,
           json_t **out)
{
    const char *name =
        json_string_value(json_object_get(json_object_get(*nodep, "metadata"), "name"));
    json_t *copy, *next = NULL, *md;
    char err[512], rv[24];
    int rc;

    if (!content_type_is(rq, "application/json-patch+json")) {
        /* The real server also takes merge and apply patches; the SPEC sends a JSON
         * patch. */
        *out = status_fmt(
            415, "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media "
            "types include: application/json-patch+json, "
            "application/merge-patch+json, application/apply-patch+yaml "
            "(the sim accepts only application/json-patch+json; got %s)",
            NULL, NULL, rq->rq_content_type ? rq->rq_content_type : "none");
        return 415;
    }
    if (rq->rq_json == NULL) {
        *out = kubeapi_status(400, "BadRequest", "error decoding patch: not JSON", NULL,
                              NULL);
        return 400;
    }
    copy = json_deep_copy(*nodep);
    if (copy == NULL)
        return 500;
    rc = jsonpatch_apply(copy, rq->rq_json, err, sizeof(err));
    if (rc == JP_OK && node_canonical(copy, err, sizeof(err)) != 0)
        rc = JP_NOT_APPLIED;
    if (rc != JP_OK) {
        json_decref(copy);
        *out = rc == JP_BAD_PATCH ? kubeapi_status(400, "BadRequest", err, NULL, NULL)
                                  : kubeapi_status(422, "Invalid", err, name, "nodes");
        return rc == JP_BAD_PATCH ? 400 : 422;
    }
    /* The status subresource keeps only status; the main resource all but status. */
    next = status_sub ? json_deep_copy(*nodep) : json_incref(copy);
    if (next == NULL ||
        json_object_set(next, "status",
                        json_object_get(status_sub ? copy : *nodep, "status")) != 0)
        goto oom;
    md = json_object_get(next, "metadata");
    if (!json_is_object(md)) {
        json_decref(next);
        json_decref(copy);
        *out = kubeapi_status(422, "Invalid", "metadata: Required value", name, "nodes");
        return 422;
    }
    /* Labels stay an object, so selectors always have something to read. */
    if (!json_is_object(json_object_get(md, "labels")) &&
        json_object_set_new(md, "labels", json_object()) != 0)
        goto oom;
    snprintf(rv, sizeof(rv), "%llu", world_next_rv(w));
    if (kubelet_sync(next) != 0 ||
        json_object_set_new(md, "resourceVersion", json_string(rv)) != 0)
        goto oom;
    *out = json_deep_copy(next);
    if (*out == NULL)
        goto oom;
    json_decref(copy);
    json_decref(*nodep);
    *nodep = next;
    return 200;
oom:
    json_decref(next);
    json_decref(copy);
    return 500;
}

static json_t *
pod_not_found(const char *name)
{
    return status_fmt(404, "NotFound", "pods \"%s\" not found", name, "pods", name);
}

/* Reads a dryRun list (an array of "All"): 1 dry, 0 not (absent or empty), -1 with
 * *out a 400. */
static int
dry_list(const json_t *arr, json_t **out)
{
    json_t *e;
    size_t i;
    int dry = 0;

    if (arr != NULL && !json_is_array(arr))
        goto bad;
    json_array_foreach(arr, i, e)
    {
        if (!json_is_string(e) || strcmp(json_string_value(e), "All") != 0)
            goto bad;
        dry = 1;
    }
    return dry;
bad:
    *out = kubeapi_status(400, "BadRequest",
                          "Invalid dry run value; valid values are: [All]", NULL, NULL);
    return -1;
}

/* ?dryRun=: 1 "All", 0 absent, -1 with *out a 400. */
static int
dry_query(const struct sim_request *rq, json_t **out)
{
    char v[64];
    int q = query_get(rq->rq_query, "dryRun", v, sizeof(v));

    if (q != 0 && (q < 0 || strcmp(v, "All") != 0)) {
        *out =
            kubeapi_status(400, "BadRequest",
                           "Invalid dry run value; valid values are: [All]", NULL, NULL);
        return -1;
    }
    return q == 1;
}

/*
 * An eviction's dry run, as propagateDryRun (registry/core/pod/storage/eviction.go)
 * merges them: the query's (CreateOptions) and deleteOptions.dryRun; either one set
 * counts, both set must match. 1 dry, 0 not, -1 with *out the error.
 */
static int
dry_run_eviction(const struct sim_request *rq, const json_t *opts, json_t **out)
{
    int q = dry_query(rq, out), b;

    if (q < 0 || (b = dry_list(json_object_get(opts, "dryRun"), out)) < 0)
        return -1;
    if (q && json_array_size(json_object_get(opts, "dryRun")) > 0 && !b) {
        *out = kubeapi_status(
            500, "", "Non-matching dry-run options in request and content", NULL, NULL);
        return -1;
    }
    return q || b;
}

/*
 * A DELETE's dry run, as the real handler (apiserver endpoints/handlers/delete.go)
 * reads its options: from the body alone when there is one (the query is then
 * ignored, dryRun included), else from the query. 1 dry, 0 not, -1 with *out a 400.
 */
static int
dry_run_delete(const struct sim_request *rq, const json_t *opts, json_t **out)
{
    if (rq->rq_body_len > 0)
        return dry_list(json_object_get(opts, "dryRun"), out);
    return dry_query(rq, out);
}

/*
 * Checks deleteOptions.preconditions (uid, resourceVersion) against the pod.
 * store_path picks the message: the generic store's ("Precondition failed"),
 * or the eviction condition update's ("the UID in the precondition").
 * 0 when they hold, else 409 with *out set.
 */
static int
preconditions(const struct sim_pod *sp, const json_t *opts, int store_path, json_t **out)
{
    json_t *pre = json_object_get(opts, "preconditions");
    const char *uid = json_string_value(json_object_get(pre, "uid"));
    const char *rv = json_string_value(json_object_get(pre, "resourceVersion"));
    char have_rv[24];

    snprintf(have_rv, sizeof(have_rv), "%llu", sp->sp_rv);
    if (uid != NULL && *uid != '\0' && strcmp(uid, sp->sp_uid) != 0) {
        if (store_path)
            *out =
                status_fmt(409, "Conflict",
                           "Operation cannot be fulfilled on pods \"%s\": Precondition "
                           "failed: UID in precondition: %s, UID in object meta: %s",
                           sp->sp_name, "pods", sp->sp_name, uid, sp->sp_uid);
        else
            *out =
                status_fmt(409, "Conflict",
                           "Operation cannot be fulfilled on Pod \"%s\": the UID in the "
                           "precondition (%s) does not match the UID in record (%s). The "
                           "object might have been deleted and then recreated",
                           sp->sp_name, "Pod", sp->sp_name, uid, sp->sp_uid);
        return 409;
    }
    if (rv != NULL && *rv != '\0' && strcmp(rv, have_rv) != 0) {
        *out = status_fmt(
            409, "Conflict",
            "Operation cannot be fulfilled on pods \"%s\": Precondition failed: "
            "ResourceVersion in precondition: %s, ResourceVersion in object meta: "
            "%s",
            sp->sp_name, "pods", sp->sp_name, rv, have_rv);
        return 409;
    }
    return 0;
}

/* A PodDisruptionBudget's refusal in the form the scenario names, as
 * registry/core/pod/storage/eviction.go writes each (checkAndDecrement, and the
 * "more than one" Status). Returns the HTTP code; *out the Status. */
static int
pdb_refusal(const struct sc_pod *po, json_t **out)
{
    const char *how = po->po_pdb_refuse ? po->po_pdb_refuse : "budget";
    const char *why;
    char cause[512], msg[512];

    if (strcmp(how, "multiple") == 0) {
        *out = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status",
                         "apiVersion", "v1", "metadata", "status", "Failure", "message",
                         "This pod has more than one PodDisruptionBudget, which the "
                         "eviction subresource does not support.",
                         "code", 500);
        return 500;
    }
    if (strcmp(how, "negative") == 0 || strcmp(how, "unconfirmed") == 0) {
        int neg = strcmp(how, "negative") == 0;
        why = neg ? "pdb disruptions allowed is negative"
                  : "DisruptedPods map too big - too many evictions not confirmed by PDB "
                    "controller";
        snprintf(msg, sizeof(msg), "poddisruptionbudget.policy \"%s\" is forbidden: %s",
                 po->po_pdb_name, why);
        snprintf(cause, sizeof(cause),
                 "The disruption budget %s does not allow evicting pods currently: %s",
                 po->po_pdb_name,
                 neg ? "pdb disruptions allowed is negative"
                     : "too many pending evictions not confirmed by PDB controller");
        *out = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:[{s:s, "
                         "s:s}]}, s:i}",
                         "kind", "Status", "apiVersion", "v1", "metadata", "status",
                         "Failure", "message", msg, "reason", "Forbidden", "details",
                         "name", po->po_pdb_name, "group", "policy", "kind",
                         "poddisruptionbudget", "causes", "reason", "DisruptionBudget",
                         "message", cause, "code", 403);
        return 403;
    }
    if (strcmp(how, "processing") == 0)
        snprintf(cause, sizeof(cause),
                 "The disruption budget %s is still being processed by the server.",
                 po->po_pdb_name);
    else
        snprintf(cause, sizeof(cause),
                 "The disruption budget %s needs %d healthy pods and has %d currently",
                 po->po_pdb_name, po->po_pdb_desired, po->po_pdb_current);
    *out = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:[{s:s, s:s}]}, s:i}", "kind",
                     "Status", "apiVersion", "v1", "metadata", "status", "Failure",
                     "message",
                     "Cannot evict pod as it would violate the pod's disruption budget.",
                     "reason", "TooManyRequests", "details", "causes", "reason",
                     "DisruptionBudget", "message", cause, "code", 429);
    /* Only the "still being processed" form suggests a wait (NewTooManyRequests(.., 10)):
     * the server then also sends Retry-After (server.c). */
    if (*out != NULL && strcmp(how, "processing") == 0 &&
        json_object_set_new(json_object_get(*out, "details"), "retryAfterSeconds",
                            json_integer(10)) != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return 429;
}

/* POST /api/v1/namespaces/NS/pods/P/eviction, in the API server's order of checks. */
static int
evict_pod(struct world *w, const struct sim_request *rq, const char *ns, const char *name,
          json_t **out)
{
    const json_t *ev = rq->rq_json, *opts;
    const char *api, *kind, *bname, *bns;
    struct sim_pod *sp;
    int dry, rc;

    if (!content_type_is(rq, "application/json")) {
        *out = status_fmt(
            415, "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media "
            "types include: application/json, application/yaml, "
            "application/vnd.kubernetes.protobuf (got %s)",
            NULL, NULL, rq->rq_content_type ? rq->rq_content_type : "none");
        return 415;
    }
    if (!json_is_object(ev)) {
        *out = kubeapi_status(
            400, "BadRequest",
            "couldn't get version/kind; json parse error: not a JSON object", NULL, NULL);
        return 400;
    }
    api = json_string_value(json_object_get(ev, "apiVersion"));
    kind = json_string_value(json_object_get(ev, "kind"));
    bname = json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
    bns =
        json_string_value(json_object_get(json_object_get(ev, "metadata"), "namespace"));
    if (api == NULL || kind == NULL || strcmp(kind, "Eviction") != 0 ||
        (strcmp(api, "policy/v1") != 0 && strcmp(api, "policy/v1beta1") != 0)) {
        *out = status_fmt(
            400, "BadRequest",
            "the body must be a policy/v1 Eviction (got apiVersion %s, kind %s)", NULL,
            NULL, api ? api : "none", kind ? kind : "none");
        return 400;
    }
    if (bname == NULL || strcmp(bname, name) != 0) {
        *out = kubeapi_status(400, "BadRequest",
                              "name in URL does not match name in Eviction object", NULL,
                              NULL);
        return 400;
    }
    if (bns != NULL && *bns != '\0' && strcmp(bns, ns) != 0) {
        *out = kubeapi_status(400, "BadRequest",
                              "the namespace of the provided object does not match the "
                              "namespace sent on the request",
                              NULL, NULL);
        return 400;
    }
    opts = json_object_get(ev, "deleteOptions");
    dry = dry_run_eviction(rq, opts, out);
    if (dry < 0)
        return (int)json_integer_value(json_object_get(*out, "code"));
    sp = world_find_pod(w, ns, name);
    if (sp == NULL) {
        *out = pod_not_found(name);
        return 404;
    }
    /* Pending and terminating pods are deleted without asking their PDB. */
    if (sp->sp_spec->po_pdb_name != NULL &&
        strcmp(sp->sp_spec->po_phase, "Running") == 0 && !sp->sp_spec->po_terminating)
        return pdb_refusal(sp->sp_spec, out);
    rc = preconditions(sp, opts, dry, out);
    if (rc != 0)
        return rc;
    if (!dry)
        world_remove_pod(w, sp);
    *out = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                     "metadata", "status", "Success", "code", 201);
    return 201;
}

/* DELETE /api/v1/namespaces/NS/pods/P with an optional DeleteOptions body. */
static int
delete_pod(struct world *w, const struct sim_request *rq, const char *ns,
           const char *name, json_t **out)
{
    const json_t *opts = rq->rq_json;
    struct sim_pod *sp;
    json_int_t grace = 30;
    char when[40];
    int dry, rc;

    if (rq->rq_body_len > 0 && !json_is_object(opts)) {
        *out = kubeapi_status(400, "BadRequest",
                              "the DeleteOptions body is not a JSON object", NULL, NULL);
        return 400;
    }
    dry = dry_run_delete(rq, opts, out);
    if (dry < 0)
        return 400;
    sp = world_find_pod(w, ns, name);
    if (sp == NULL) {
        *out = pod_not_found(name);
        return 404;
    }
    rc = preconditions(sp, opts, 1, out);
    if (rc != 0)
        return rc;
    if (json_is_integer(json_object_get(opts, "gracePeriodSeconds")))
        grace = json_integer_value(json_object_get(opts, "gracePeriodSeconds"));
    /* The answer is the pod as graceful deletion left it; here it is gone at once. */
    world_fmt_time(w->w_start_wall + w->w_clock + (double)grace, 0, when, sizeof(when));
    *out = world_pod_json(w, sp, 1);
    if (*out == NULL ||
        json_object_set_new(json_object_get(*out, "metadata"), "deletionTimestamp",
                            json_string(when)) != 0 ||
        json_object_set_new(json_object_get(*out, "metadata"),
                            "deletionGracePeriodSeconds", json_integer(grace)) != 0) {
        json_decref(*out);
        *out = NULL;
        return 500;
    }
    if (!dry)
        world_remove_pod(w, sp);
    return 200;
}

static int
method_not_allowed(json_t **out)
{
    *out = kubeapi_status(
        405, "MethodNotAllowed",
        "the server does not allow this method on the requested resource", NULL, NULL);
    return 405;
}

/* Routes /api/v1/... by its segments. */
static int
route(struct world *w, const struct sim_request *rq, char **seg, size_t n, json_t **out)
{
    const char *m = rq->rq_method;
    json_t **nodep = NULL;
    size_t i;
    int get = strcmp(m, "GET") == 0;

    if (n == 1 && strcmp(seg[0], "pods") == 0)
        return get ? list_pods(w, rq, NULL, out) : method_not_allowed(out);
    if (n >= 3 && strcmp(seg[0], "namespaces") == 0 && strcmp(seg[2], "pods") == 0) {
        if (n == 3)
            return get ? list_pods(w, rq, seg[1], out) : method_not_allowed(out);
        if (n == 4 && get) {
            struct sim_pod *sp = world_find_pod(w, seg[1], seg[3]);
            *out = sp ? world_pod_json(w, sp, 1) : pod_not_found(seg[3]);
            return sp ? 200 : 404;
        }
        if (n == 4)
            return strcmp(m, "DELETE") == 0 ? delete_pod(w, rq, seg[1], seg[3], out)
                                            : method_not_allowed(out);
        if (n == 5 && strcmp(seg[4], "eviction") == 0)
            return strcmp(m, "POST") == 0 ? evict_pod(w, rq, seg[1], seg[3], out)
                                          : method_not_allowed(out);
    }
    if (n == 1 && strcmp(seg[0], "nodes") == 0)
        return get ? list_nodes(w, rq, out) : method_not_allowed(out);
    if ((n == 2 || (n == 3 && strcmp(seg[2], "status") == 0)) &&
        strcmp(seg[0], "nodes") == 0) {
        for (i = 0; i < w->w_nnodes && nodep == NULL; i++)
            if (strcmp(seg[1],
                       json_string_value(json_object_get(
                           json_object_get(w->w_nodes[i], "metadata"), "name"))) == 0)
                nodep = &w->w_nodes[i];
        if (nodep == NULL) {
            *out = status_fmt(404, "NotFound", "nodes \"%s\" not found", seg[1], "nodes",
                              seg[1]);
            return 404;
        }
        if (get) {
            *out = json_deep_copy(*nodep);
            return 200;
        }
        return strcmp(m, "PATCH") == 0 ? patch_node(w, rq, nodep, n == 3, out)
                                       : method_not_allowed(out);
    }
    *out = kubeapi_status(404, "NotFound",
                          "the server could not find the requested resource", NULL, NULL);
    return 404;
}

/* GET /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME: the scenario's
 * claim as given, else the server's 404; other methods 405. */
static int
resource_claim(struct world *w, const struct sim_request *rq, const char *rest,
               json_t **out)
{
    char ns[256], name[256];
    json_t *c;
    int n = -1;

    if (sscanf(rest, "namespaces/%255[^/]/resourceclaims/%255[^/]%n", ns, name, &n) !=
            2 ||
        n < 0 || rest[n] != '\0') {
        *out = kubeapi_status(404, "NotFound",
                              "the server could not find the requested resource", NULL,
                              NULL);
        return 404;
    }
    if (strcmp(rq->rq_method, "GET") != 0)
        return method_not_allowed(out);
    if ((c = scenario_claim(w->w_sc, ns, name)) == NULL) {
        *out =
            status_fmt(404, "NotFound", "resourceclaims.resource.k8s.io \"%s\" not found",
                       name, "resourceclaims", name);
        return 404;
    }
    *out = json_deep_copy(c);
    return 200;
}

int
kubeapi_handle(struct world *w, const struct sim_request *rq, json_t **out)
{
    static const char prefix[] = "/api/v1/";
    static const char claims[] = "/apis/resource.k8s.io/v1/";
    char path[1024], *seg[MAX_SEGMENTS], *p, *save = NULL;
    size_t n = 0;

    *out = NULL;
    world_advance(w);
    if (strncmp(rq->rq_path, claims, sizeof(claims) - 1) == 0)
        return resource_claim(w, rq, rq->rq_path + sizeof(claims) - 1, out);
    if (strncmp(rq->rq_path, prefix, sizeof(prefix) - 1) != 0 ||
        snprintf(path, sizeof(path), "%s", rq->rq_path + sizeof(prefix) - 1) >=
            (int)sizeof(path)) {
        *out = kubeapi_status(404, "NotFound",
                              "the server could not find the requested resource", NULL,
                              NULL);
        return 404;
    }
    for (p = strtok_r(path, "/", &save); p != NULL; p = strtok_r(NULL, "/", &save)) {
        if (n == MAX_SEGMENTS) {
            *out = kubeapi_status(404, "NotFound",
                                  "the server could not find the requested resource",
                                  NULL, NULL);
            return 404;
        }
        seg[n++] = p;
    }
    return route(w, rq, seg, n, out);
}
