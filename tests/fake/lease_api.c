/* lease_api.c -- a fake coordination.k8s.io/v1 Lease API: GET, POST and PUT of Leases
 * with the API server's resourceVersion rules, and faults on demand */
#include "lease_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PREFIX "/apis/coordination.k8s.io/v1/namespaces/"
#define LAST_ACT "gpu-vram-watchdog/last-act"

struct lease_api {
    json_t *la_leases; /* "NS/NAME" -> Lease */
    long la_rv;        /* the store's version counter, as etcd's revision */
    int la_fault_fence, la_fault_all; /* HTTP codes; 0 = none */
    long la_uid;
};

struct lease_api *
lease_api_new(void)
{
    struct lease_api *la = calloc(1, sizeof(*la));

    if (la == NULL || (la->la_leases = json_object()) == NULL) {
        free(la);
        return NULL;
    }
    la->la_rv = 1000;
    return la;
}

void
lease_api_free(struct lease_api *la)
{
    if (la == NULL)
        return;
    json_decref(la->la_leases);
    free(la);
}

static json_t *
status(int code, const char *reason, const char *msg, const char *name)
{
    return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:i}", "kind",
                     "Status", "apiVersion", "v1", "metadata", "status", "Failure",
                     "message", msg, "reason", reason, "details", "name", name, "group",
                     "coordination.k8s.io", "kind", "leases", "code", code);
}

/* metav1.MicroTime's layout: 2006-01-02T15:04:05.000000Z07:00, six digits. */
static int
microtime_ok(json_t *v)
{
    const char *s;
    size_t n;

    if (v == NULL || json_is_null(v))
        return 1;
    if (!json_is_string(v))
        return 0;
    s = json_string_value(v);
    n = strlen(s);
    if (n != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || s[19] != '.' || s[26] != 'Z')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && i != 19 && i != 26 &&
            (s[i] < '0' || s[i] > '9'))
            return 0;
    return 1;
}

/* The spec checks ValidateLease makes, and the MicroTime decoding. 422 or 0. */
static int
invalid(json_t *lease, char *msg, size_t len)
{
    json_t *spec = json_object_get(lease, "spec"), *d;

    if (spec != NULL && !json_is_object(spec)) {
        snprintf(msg, len, "spec: must be an object");
        return 422;
    }
    d = json_object_get(spec, "leaseDurationSeconds");
    if (d != NULL && !json_is_null(d) &&
        (!json_is_integer(d) || json_integer_value(d) <= 0)) {
        snprintf(msg, len,
                 "spec.leaseDurationSeconds: Invalid value: must be greater than 0");
        return 422;
    }
    d = json_object_get(spec, "leaseTransitions");
    if (d != NULL && !json_is_null(d) &&
        (!json_is_integer(d) || json_integer_value(d) < 0)) {
        snprintf(
            msg, len,
            "spec.leaseTransitions: Invalid value: must be greater than or equal to 0");
        return 422;
    }
    if (!microtime_ok(json_object_get(spec, "acquireTime")) ||
        !microtime_ok(json_object_get(spec, "renewTime"))) {
        snprintf(msg, len, "spec: a MicroTime must be 2006-01-02T15:04:05.000000Z07:00");
        return 422;
    }
    d = json_object_get(spec, "holderIdentity");
    if (d != NULL && !json_is_null(d) && !json_is_string(d)) {
        snprintf(msg, len, "spec.holderIdentity: must be a string");
        return 422;
    }
    return 0;
}

/* Stores lease under key with the next version; returns a new reference to
 * the stored copy (the answer), or NULL when out of memory. */
static json_t *
store(struct lease_api *la, const char *key, json_t *lease, const char *ns,
      const char *name, json_t *old)
{
    json_t *copy = json_deep_copy(lease), *meta;
    char rv[32], uid[64], when[32];
    time_t now = time(NULL);
    struct tm tm;

    if (copy == NULL)
        return NULL;
    if (!json_is_object(meta = json_object_get(copy, "metadata"))) {
        meta = json_object();
        json_object_set_new(copy, "metadata", meta);
    }
    snprintf(rv, sizeof(rv), "%ld", ++la->la_rv);
    json_object_set_new(meta, "resourceVersion", json_string(rv));
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "namespace", json_string(ns));
    if (old != NULL) {
        json_t *m = json_object_get(old, "metadata");
        json_object_set(meta, "uid", json_object_get(m, "uid"));
        json_object_set(meta, "creationTimestamp",
                        json_object_get(m, "creationTimestamp"));
    } else {
        snprintf(uid, sizeof(uid), "0b6b5d2e-1c1e-4d59-9c8e-%012ld", ++la->la_uid);
        gmtime_r(&now, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_set_new(meta, "uid", json_string(uid));
        json_object_set_new(meta, "creationTimestamp", json_string(when));
    }
    json_object_set_new(copy, "kind", json_string("Lease"));
    json_object_set_new(copy, "apiVersion", json_string("coordination.k8s.io/v1"));
    json_object_set(la->la_leases, key, copy);
    return copy;
}

static const char *
annotation(json_t *lease, const char *key)
{
    json_t *v = json_object_get(
        json_object_get(json_object_get(lease, "metadata"), "annotations"), key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

int
lease_api_handle(struct lease_api *la, const char *method, const char *path, json_t *body,
                 json_t **out)
{
    char ns[254], name[254] = "", key[512], msg[512];
    const char *p, *slash;
    json_t *old, *meta, *rv;
    int code;

    if (strncmp(path, PREFIX, sizeof(PREFIX) - 1) != 0)
        return 0;
    p = path + sizeof(PREFIX) - 1;
    if ((slash = strchr(p, '/')) == NULL || (size_t)(slash - p) >= sizeof(ns) ||
        strncmp(slash, "/leases", 7) != 0 || (slash[7] != '\0' && slash[7] != '/'))
        return 0;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - p), p);
    if (slash[7] == '/')
        snprintf(name, sizeof(name), "%s", slash + 8);
    if (la->la_fault_all) {
        *out = status(la->la_fault_all, "ServiceUnavailable", "fault injected", name);
        return la->la_fault_all;
    }
    if (strcmp(method, "POST") == 0 && name[0] == '\0') {
        json_t *n = json_object_get(json_object_get(body, "metadata"), "name");
        if (!json_is_object(body) || !json_is_string(n)) {
            *out = status(400, "BadRequest", "the body is not a Lease with a name", "");
            return 400;
        }
        snprintf(name, sizeof(name), "%s", json_string_value(n));
        snprintf(key, sizeof(key), "%s/%s", ns, name);
        if (json_object_get(la->la_leases, key) != NULL) {
            snprintf(msg, sizeof(msg), "leases.coordination.k8s.io \"%s\" already exists",
                     name);
            *out = status(409, "AlreadyExists", msg, name);
            return 409;
        }
        if ((code = invalid(body, msg, sizeof(msg))) != 0) {
            *out = status(code, "Invalid", msg, name);
            return code;
        }
        *out = store(la, key, body, ns, name, NULL);
        return 201;
    }
    if (name[0] == '\0' || strchr(name, '/') != NULL) {
        *out = status(405, "MethodNotAllowed", "the server does not allow this method",
                      name);
        return 405;
    }
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    old = json_object_get(la->la_leases, key);
    if (strcmp(method, "GET") == 0) {
        if (old == NULL) {
            snprintf(msg, sizeof(msg), "leases.coordination.k8s.io \"%s\" not found",
                     name);
            *out = status(404, "NotFound", msg, name);
            return 404;
        }
        *out = json_incref(old);
        return 200;
    }
    if (strcmp(method, "PUT") != 0) {
        *out = status(405, "MethodNotAllowed", "the server does not allow this method",
                      name);
        return 405;
    }
    meta = json_object_get(body, "metadata");
    if (!json_is_object(body) || !json_is_object(meta) ||
        !json_is_string(json_object_get(meta, "name")) ||
        strcmp(json_string_value(json_object_get(meta, "name")), name) != 0) {
        *out = status(400, "BadRequest", "the name of the object does not match the URL",
                      name);
        return 400;
    }
    if (old == NULL) {
        snprintf(msg, sizeof(msg), "leases.coordination.k8s.io \"%s\" not found", name);
        *out = status(404, "NotFound", msg, name);
        return 404;
    }
    rv = json_object_get(meta, "resourceVersion");
    if (!json_is_string(rv) || json_string_length(rv) == 0) {
        *out =
            status(422, "Invalid",
                   "metadata.resourceVersion: the fake refuses a blind overwrite", name);
        return 422;
    }
    if (strcmp(json_string_value(rv),
               json_string_value(json_object_get(json_object_get(old, "metadata"),
                                                 "resourceVersion"))) != 0) {
        snprintf(
            msg, sizeof(msg),
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"%s\": the "
            "object has been modified; please apply your changes to the latest version "
            "and try again",
            name);
        *out = status(409, "Conflict", msg, name);
        return 409;
    }
    if ((code = invalid(body, msg, sizeof(msg))) != 0) {
        *out = status(code, "Invalid", msg, name);
        return code;
    }
    if (la->la_fault_fence && annotation(body, LAST_ACT) != NULL &&
        (annotation(old, LAST_ACT) == NULL ||
         strcmp(annotation(body, LAST_ACT), annotation(old, LAST_ACT)) != 0)) {
        *out = status(la->la_fault_fence, "InternalError", "fault injected on the fence",
                      name);
        return la->la_fault_fence;
    }
    *out = store(la, key, body, ns, name, old);
    return 200;
}

int
lease_api_fault(struct lease_api *la, const char *spec)
{
    int code;

    if (strcmp(spec, "none") == 0) {
        la->la_fault_fence = la->la_fault_all = 0;
        return 0;
    }
    if (sscanf(spec, "fence:%d", &code) == 1 && code >= 400 && code <= 599) {
        la->la_fault_fence = code;
        return 0;
    }
    if (sscanf(spec, "all:%d", &code) == 1 && code >= 400 && code <= 599) {
        la->la_fault_all = code;
        return 0;
    }
    return -1;
}

json_t *
lease_api_state(const struct lease_api *la)
{
    json_t *s = json_deep_copy(la->la_leases);
    char f[64];

    if (s == NULL)
        return NULL;
    snprintf(f, sizeof(f), "fence:%d all:%d", la->la_fault_fence, la->la_fault_all);
    json_object_set_new(s, "fault", json_string(f));
    return s;
}
