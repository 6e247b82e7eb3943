/* test_kube.c -- Kubernetes calls against the fake server: exact requests, answers
 * classified */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "fake.h"
#include "kube.h"
#include "kube_json.h"
#include "log.h"

#define NS "frigate"
#define POD "frigate-7d9f6c5b4-kx2vq"
#define UID "5b0c7a52-3f1e-4d8a-9b6c-2e4f6a8b0c1d"
#define POD_PATH "/api/v1/namespaces/" NS "/pods/" POD
#define TOKEN "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"

struct result {
    int done;
    int calls;
    enum kube_class cls;
    int cancelled;
    long status;
    long retry_after;
    char *error;
    struct pod_list pods; /* taken */
    char **nodes;         /* taken */
    size_t node_count;
};

struct env {
    struct event_base *base;
    struct fake *fake;
    struct kube *k;
    char tokfile[64];
    struct pod_parse_opts po;
    struct result r;
};

static void
on_answer(struct kube_answer *a, void *arg)
{
    struct result *r = arg;

    r->done = 1;
    r->calls++;
    r->cls = a->ka_class;
    r->cancelled = a->ka_cancelled;
    r->status = a->ka_status;
    r->retry_after = a->ka_retry_after_s;
    free(r->error);
    r->error = a->ka_error ? strdup(a->ka_error) : NULL;
    assert_true(a->ka_class == KUBE_OK ? a->ka_error == NULL : a->ka_error != NULL);
    pod_list_free(&r->pods);
    r->pods = a->ka_pods;
    memset(&a->ka_pods, 0, sizeof(a->ka_pods));
    kube_node_names_free(r->nodes, r->node_count);
    r->nodes = a->ka_nodes;
    r->node_count = a->ka_node_count;
    a->ka_nodes = NULL;
    a->ka_node_count = 0;
}

static void
result_reset(struct result *r)
{
    free(r->error);
    pod_list_free(&r->pods);
    kube_node_names_free(r->nodes, r->node_count);
    memset(r, 0, sizeof(*r));
}

static void
write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static struct kube *
client(struct env *e, const char *url, long timeout_ms)
{
    struct kube_opts o = {.ko_url = url ? url : fake_url(e->fake),
                          .ko_token_file = e->tokfile,
                          .ko_connect_timeout_ms = 300,
                          .ko_timeout_ms = timeout_ms,
                          .ko_token_max_age_ms = 200};
    char err[256];

    kube_free(e->k);
    e->k = kube_new(e->base, &o, err, sizeof(err));
    assert_non_null(e->k);
    return e->k;
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    int fd;

    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    assert_non_null(e);
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    snprintf(e->tokfile, sizeof(e->tokfile), "/tmp/gvw-kube-token-XXXXXX");
    assert_true((fd = mkstemp(e->tokfile)) >= 0);
    close(fd);
    write_file(e->tokfile, TOKEN "\n");
    e->po.po_resource = "viktorbarzin.me/gpumem";
    e->po.po_protect_annotation = "gpu-vram-watchdog/protected";
    client(e, NULL, 2000);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    kube_free(e->k);
    fake_free(e->fake);
    event_base_free(e->base);
    unlink(e->tokfile);
    result_reset(&e->r);
    free(e);
    return 0;
}

static void
wait_answer(struct env *e)
{
    assert_int_equal(e->r.calls, 0); /* never from inside the call */
    assert_int_equal(fake_run_until(e->base, &e->r.done, 5000), 0);
    assert_int_equal(e->r.calls, 1);
}

static void
evict(struct env *e, int dry_run)
{
    result_reset(&e->r);
    assert_int_equal(kube_evict(e->k, NS, POD, UID, dry_run, on_answer, &e->r), 0);
    wait_answer(e);
}

static void
delete_pod(struct env *e, int dry_run)
{
    result_reset(&e->r);
    assert_int_equal(kube_delete_pod(e->k, NS, POD, UID, dry_run, on_answer, &e->r), 0);
    wait_answer(e);
}

static void
routes(struct env *e, const char *method, const char *path, int status, const char *file)
{
    fake_clear(e->fake);
    assert_int_equal(fake_route_file(e->fake, method, path, status, file, 0), 0);
}

/* The headers every API call carries. */
static void
assert_api_headers(const struct fake_req *fr)
{
    assert_string_equal(fake_header(fr, "Authorization"), "Bearer " TOKEN);
    assert_string_equal(fake_header(fr, "User-Agent"), "gpu-vram-watchdog/" GVW_VERSION);
    assert_string_equal(fake_header(fr, "Accept"), "application/json");
}

static void
test_list_pods(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    char *sel;

    routes(e, "GET", "/api/v1/pods", 200, "kube-pods-node.json");
    result_reset(&e->r);
    assert_int_equal(kube_list_pods(e->k, "gpu-node-1", &e->po, on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.status, 200);
    assert_int_equal(e->r.pods.pl_count, 2);
    assert_string_equal(e->r.pods.pl_pods[0].p_name, POD);
    assert_string_equal(e->r.pods.pl_pods[0].p_uid, UID);
    assert_int_equal(e->r.pods.pl_pods[0].p_budget_state, BUDGET_OK);
    assert_int_equal(e->r.pods.pl_pods[0].p_budget_mib, 2000);
    assert_int_equal(e->r.pods.pl_pods[1].p_budget_mib, 8192);
    assert_true(e->r.pods.pl_pods[1].p_protected);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "GET");
    assert_string_equal(fr->fr_path, "/api/v1/pods");
    assert_string_equal(fr->fr_query, "fieldSelector=spec.nodeName%3Dgpu-node-1");
    sel = fake_query_param(fr, "fieldSelector");
    assert_string_equal(sel, "spec.nodeName=gpu-node-1");
    free(sel);
    assert_api_headers(fr);
    assert_int_equal(fr->fr_body_len, 0);
}

static void
test_list_nodes(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;

    routes(e, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json");
    result_reset(&e->r);
    assert_int_equal(
        kube_list_nodes(e->k, "nvidia.com/gpu.present=true", on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.node_count, 2);
    assert_string_equal(e->r.nodes[0], "gpu-node-1");
    assert_string_equal(e->r.nodes[1], "gpu-node-2");
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_path, "/api/v1/nodes");
    assert_string_equal(fr->fr_query, "labelSelector=nvidia.com%2Fgpu.present%3Dtrue");
    assert_api_headers(fr);
    /* No selector: every node. An empty list is an answer, not an error. */
    routes(e, "GET", "/api/v1/nodes", 200, "kube-nodes-empty.json");
    result_reset(&e->r);
    assert_int_equal(kube_list_nodes(e->k, "", on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.node_count, 0);
    assert_null(fake_last(e->fake)->fr_query);
}

/* The eviction body, parsed: exactly these fields (a dry run's deleteOptions also
 * say dryRun, matching the query, as the API server requires when both are set). */
static void
assert_eviction_body(const struct fake_req *fr, int dry)
{
    json_error_t jerr;
    json_t *want =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1",
                  "kind", "Eviction", "metadata", "name", POD, "namespace", NS,
                  "deleteOptions", "preconditions", "uid", UID);
    json_t *got = json_loads(fr->fr_body, 0, &jerr);

    assert_non_null(got);
    if (dry)
        json_object_set_new(json_object_get(want, "deleteOptions"), "dryRun",
                            json_pack("[s]", "All"));
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
}

static void
test_evict(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    char *dry;

    routes(e, "POST", POD_PATH "/eviction", 201, "kube-eviction-201.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.status, 201);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "POST");
    assert_string_equal(fr->fr_path, POD_PATH "/eviction");
    assert_null(fr->fr_query);
    assert_string_equal(fake_header(fr, "Content-Type"), "application/json");
    assert_api_headers(fr);
    assert_eviction_body(fr, 0);
    /* 200 is success too (older API servers). */
    fake_clear(e->fake);
    fake_route(e->fake, "POST", POD_PATH "/eviction", 200, NULL,
               "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
               "\"Success\"}",
               0);
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_OK);
    /* Dry run: the same body, ?dryRun=All. */
    evict(e, 1);
    assert_int_equal(e->r.cls, KUBE_OK);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_query, "dryRun=All");
    dry = fake_query_param(fr, "dryRun");
    assert_string_equal(dry, "All");
    free(dry);
    assert_eviction_body(fr, 1);
}

static void
test_evict_refusals(void **state)
{
    struct env *e = *state;

    routes(e, "POST", POD_PATH "/eviction", 404, "kube-status-404.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_GONE);
    assert_string_equal(e->r.error,
                        "kube: create pods/eviction in namespace frigate: HTTP 404: "
                        "pods \"" POD "\" not found");
    routes(e, "POST", POD_PATH "/eviction", 409, "kube-status-409.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_CONFLICT);
    assert_non_null(strstr(e->r.error, "Precondition failed: UID in precondition: " UID));
    routes(e, "POST", POD_PATH "/eviction", 429, "kube-status-429-pdb.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_PDB_REFUSED);
    assert_int_equal(e->r.status, 429);
    assert_string_equal(
        e->r.error,
        "kube: create pods/eviction in namespace frigate: HTTP 429: Cannot evict "
        "pod as it would violate the pod's disruption budget. (DisruptionBudget: "
        "The disruption budget frigate-pdb needs 1 healthy pods and has 1 "
        "currently)");
    /* The UID precondition failed: KUBE_CONFLICT. Another conflict (the pod
     * modified under the server's own retries) proves nothing gone: an error. */
    routes(e, "POST", POD_PATH "/eviction", 409, "kube-status-409-modified.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_non_null(strstr(e->r.error, "HTTP 409: Operation cannot be fulfilled"));
    routes(e, "POST", POD_PATH "/eviction", 500, "kube-status-500.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_string_equal(e->r.error,
                        "kube: create pods/eviction in namespace frigate: HTTP 500: "
                        "Internal error occurred: etcdserver: request timed out "
                        "(etcdserver: request timed out)");
    /* Not a Status (a load balancer's page). */
    fake_clear(e->fake);
    fake_route(e->fake, NULL, POD_PATH "/eviction", 503, "text/html",
               "<html>\n<h1>503 Service Unavailable</h1>\n</html>", 0);
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_non_null(
        strstr(e->r.error, "HTTP 503: <html> <h1>503 Service Unavailable</h1>"));
}

static void
test_forbidden(void **state)
{
    struct env *e = *state;

    routes(e, "POST", POD_PATH "/eviction", 401, "kube-status-401.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_FORBIDDEN);
    assert_string_equal(e->r.error,
                        "kube: create pods/eviction in namespace frigate: HTTP 401: "
                        "the API server rejected the token: Unauthorized");
    routes(e, "POST", "/api/v1/namespaces/immich/pods/" POD "/eviction", 403,
           "kube-status-403-evict.json");
    result_reset(&e->r);
    assert_int_equal(kube_evict(e->k, "immich", POD, UID, 0, on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_FORBIDDEN);
    assert_int_equal(
        strncmp(e->r.error,
                "kube: HTTP 403: missing RBAC permission to create pods/eviction "
                "in namespace immich: pods \"" POD "\" is forbidden",
                strlen("kube: HTTP 403: missing RBAC permission to create "
                       "pods/eviction in namespace immich: pods \"" POD
                       "\" is forbidden")),
        0);
    routes(e, "PATCH", "/api/v1/nodes/gpu-node-1/status", 403,
           "kube-status-403-nodes.json");
    result_reset(&e->r);
    assert_int_equal(kube_patch_capacity(e->k, "gpu-node-1", "viktorbarzin.me/gpumem",
                                         14000, on_answer, &e->r),
                     0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_FORBIDDEN);
    assert_non_null(strstr(e->r.error, "missing RBAC permission to patch nodes/status"));
}

static void
test_slow_and_refused(void **state)
{
    struct env *e = *state;
    char u[64];

    client(e, NULL, 300);
    fake_clear(e->fake);
    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 1500);
    result_reset(&e->r);
    assert_int_equal(kube_list_nodes(e->k, "a=b", on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_int_equal(e->r.status, 0);
    assert_non_null(strstr(e->r.error, "kube: list nodes: Operation timed out"));
    /* An eviction is given longer than the client's timeout (KUBE_RECYCLE_TIMEOUT_MS):
     * see test_evict_outlasts_server_retries. */
    fake_clear(e->fake); /* the held answer goes first: routes are about to move */
    fake_route_file(e->fake, "POST", POD_PATH "/eviction", 201, "kube-eviction-201.json",
                    1500);
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.status, 201);
    snprintf(u, sizeof(u), "http://127.0.0.1:%d", fake_closed_port());
    client(e, u, 300);
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_non_null(strstr(e->r.error, "Failed to connect"));
}

static void
test_delete(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    json_t *got, *want;

    routes(e, "DELETE", POD_PATH, 200, "kube-pod-deleted-200.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_OK);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "DELETE");
    assert_string_equal(fr->fr_path, POD_PATH);
    assert_null(fr->fr_query);
    assert_string_equal(fake_header(fr, "Content-Type"), "application/json");
    assert_api_headers(fr);
    want = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "DeleteOptions",
                     "preconditions", "uid", UID);
    assert_non_null(got = json_loads(fr->fr_body, 0, NULL));
    assert_true(json_equal(got, want));
    json_decref(got);
    /* Dry run: a real API server reads a DELETE's options from its body alone when
     * there is one (the query is ignored), so dryRun must be in the body. */
    delete_pod(e, 1);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_query, "dryRun=All");
    json_object_set_new(want, "dryRun", json_pack("[s]", "All"));
    assert_non_null(got = json_loads(fr->fr_body, 0, NULL));
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    /* A delete refused with 429 is throttling, even as a Status: no PDB meets a
     * delete. */
    fake_clear(e->fake);
    fake_route(e->fake, "DELETE", POD_PATH, 429, NULL,
               "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
               "\"Failure\",\"message\":\"Too many requests, please try again later.\","
               "\"reason\":\"TooManyRequests\",\"code\":429}",
               0);
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_THROTTLED);
    routes(e, "DELETE", POD_PATH, 429, "kube-status-429-pdb.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_THROTTLED);
    routes(e, "DELETE", POD_PATH, 409, "kube-status-409.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_CONFLICT);
    routes(e, "DELETE", POD_PATH, 409, "kube-status-409-modified.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    routes(e, "DELETE", POD_PATH, 404, "kube-status-404.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_GONE);
    assert_non_null(
        strstr(e->r.error, "kube: delete pods in namespace frigate: HTTP 404"));
}

/* What max-in-flight and priority-and-fairness answer when shedding load. */
#define SHED_BODY "Too many requests, please try again later.\n"

/* Routes the eviction: status, body (a literal), and a Retry-After when not NULL. */
static void
route_evict(struct env *e, int status, const char *ctype, const char *body,
            const char *retry_after)
{
    fake_clear(e->fake);
    fake_route(e->fake, "POST", POD_PATH "/eviction", status, ctype, body, 0);
    if (retry_after != NULL)
        fake_route_header(e->fake, "Retry-After", retry_after);
}

/* Every form a real API server refuses an eviction in for a PodDisruptionBudget
 * (registry/core/pod/storage/eviction.go) is KUBE_PDB_REFUSED, quoting the server;
 * a 403 about RBAC and a plain 500 stay what they are. */
static void
test_evict_pdb_forms(void **state)
{
    struct env *e = *state;
    static const struct {
        int status;
        const char *file, *quote;
    } pdb[] = {
        {429, "kube-status-429-pdb.json", "needs 1 healthy pods and has 1 currently"},
        {429, "kube-status-429-pdb-processing.json", "is still being processed"},
        {403, "kube-status-403-pdb-negative.json", "pdb disruptions allowed is negative"},
        {403, "kube-status-403-pdb-unconfirmed.json", "too many evictions not confirmed"},
        {500, "kube-status-500-pdb-multiple.json",
         "This pod has more than one PodDisruptionBudget"},
    };
    char want[256];

    for (size_t i = 0; i < sizeof(pdb) / sizeof(pdb[0]); i++) {
        routes(e, "POST", POD_PATH "/eviction", pdb[i].status, pdb[i].file);
        evict(e, 0);
        assert_int_equal(e->r.cls, KUBE_PDB_REFUSED);
        assert_int_equal(e->r.status, pdb[i].status);
        snprintf(
            want, sizeof(want),
            "kube: create pods/eviction in namespace frigate: HTTP %d: ", pdb[i].status);
        assert_int_equal(strncmp(e->r.error, want, strlen(want)), 0);
        assert_non_null(strstr(e->r.error, pdb[i].quote));
        /* The dry-run probe reads them the same way. */
        evict(e, 1);
        assert_int_equal(e->r.cls, KUBE_PDB_REFUSED);
    }
    /* Only evictions meet budgets: the same answers to a delete are not refusals. */
    routes(e, "DELETE", POD_PATH, 403, "kube-status-403-pdb-negative.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_FORBIDDEN);
    routes(e, "DELETE", POD_PATH, 500, "kube-status-500-pdb-multiple.json");
    delete_pod(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    /* Malformed or partial Statuses are never read as a budget's refusal. */
    static const struct {
        int status;
        const char *body;
        enum kube_class cls;
    } not_pdb[] = {
        {429, "", KUBE_THROTTLED},
        {429, "{", KUBE_THROTTLED},
        {429, "[1,2]", KUBE_THROTTLED},
        {429, "{\"details\":{\"causes\":{\"reason\":\"DisruptionBudget\"}}}",
         KUBE_THROTTLED},
        {429, "{\"details\":{\"causes\":[\"DisruptionBudget\"]}}", KUBE_THROTTLED},
        {429, "{\"details\":{\"causes\":[{\"reason\":5}]}}", KUBE_THROTTLED},
        {429, "{\"details\":{\"causes\":[{\"type\":\"DisruptionBudget\"}]}}",
         KUBE_THROTTLED},
        {429,
         "{\"message\":\"Cannot evict pod as it would violate the pod's disruption "
         "budget.\",\"reason\":\"TooManyRequests\"}",
         KUBE_THROTTLED},
        {403, "{\"details\":{\"kind\":5}}", KUBE_FORBIDDEN},
        {403, "{\"details\":{\"kind\":\"pods\"},\"message\":\"poddisruptionbudget\"}",
         KUBE_FORBIDDEN},
        {500, "{\"message\":5}", KUBE_ERROR},
        {500, "more than one PodDisruptionBudget", KUBE_ERROR}, /* not a Status */
        {503, "{\"message\":\"This pod has more than one PodDisruptionBudget\"}",
         KUBE_ERROR},
    };
    for (size_t i = 0; i < sizeof(not_pdb) / sizeof(not_pdb[0]); i++) {
        route_evict(e, not_pdb[i].status, NULL, not_pdb[i].body, NULL);
        evict(e, 0);
        assert_int_equal(e->r.cls, not_pdb[i].cls);
    }
    routes(e, "POST", POD_PATH "/eviction", 403, "kube-status-403-evict.json");
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_FORBIDDEN);
    assert_non_null(
        strstr(e->r.error, "missing RBAC permission to create pods/eviction"));
}

/* Load shedding (max-in-flight, priority and fairness): 429, plain text, a
 * Retry-After header. Not a refusal: KUBE_THROTTLED with the delay. */
static void
test_throttled(void **state)
{
    struct env *e = *state;
    static const struct {
        const char *header; /* NULL = none */
        long seconds;
    } ra[] = {
        {"3", 3}, {"1", 1}, {NULL, 0}, {"soon", 0}, {"-5", 0}, {"", 0}, {"120", 120},
    };

    for (size_t i = 0; i < sizeof(ra) / sizeof(ra[0]); i++) {
        route_evict(e, 429, "text/plain; charset=utf-8", SHED_BODY, ra[i].header);
        evict(e, 0);
        assert_int_equal(e->r.cls, KUBE_THROTTLED);
        assert_int_equal(e->r.status, 429);
        assert_int_equal(e->r.retry_after, ra[i].seconds);
        assert_non_null(strstr(e->r.error, "HTTP 429: API server throttled"));
        assert_non_null(strstr(e->r.error, "Too many requests, please try again later."));
    }
    route_evict(e, 429, "text/plain; charset=utf-8", SHED_BODY, "2");
    evict(e, 0);
    assert_string_equal(e->r.error,
                        "kube: create pods/eviction in namespace frigate: HTTP 429: API "
                        "server throttled (Retry-After 2 s): Too many requests, please "
                        "try again later.");
    /* An HTTP date names a moment: the seconds until then. */
    {
        char date[64];
        time_t when = time(NULL) + 30;
        struct tm tm;

        gmtime_r(&when, &tm);
        strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        route_evict(e, 429, "text/plain", SHED_BODY, date);
        evict(e, 0);
        assert_int_equal(e->r.cls, KUBE_THROTTLED);
        assert_true(e->r.retry_after >= 28 && e->r.retry_after <= 30);
    }
}

/* A replacement that is not yet Running makes the real server retry the UID
 * conflict for ~10 s (EvictionsRetry) before its 409: the eviction's timeout
 * outlasts that, whatever the client's own (2 s here), and the 409 arrives. */
static void
test_evict_outlasts_server_retries(void **state)
{
    struct env *e = *state;
    long t0;

    fake_clear(e->fake);
    fake_route_file(e->fake, "POST", POD_PATH "/eviction", 409, "kube-status-409.json",
                    10500);
    result_reset(&e->r);
    t0 = fake_now_ms();
    assert_int_equal(kube_evict(e->k, NS, POD, UID, 0, on_answer, &e->r), 0);
    assert_int_equal(fake_run_until(e->base, &e->r.done, 20000), 0);
    assert_true(fake_now_ms() - t0 >= 10000);
    assert_int_equal(e->r.cls, KUBE_CONFLICT);
    assert_int_equal(e->r.status, 409);
    /* The same for a delete. */
    fake_clear(e->fake);
    fake_route_file(e->fake, "DELETE", POD_PATH, 200, "kube-pod-deleted-200.json", 3000);
    result_reset(&e->r);
    assert_int_equal(kube_delete_pod(e->k, NS, POD, UID, 0, on_answer, &e->r), 0);
    assert_int_equal(fake_run_until(e->base, &e->r.done, 10000), 0);
    assert_int_equal(e->r.cls, KUBE_OK);
}

/* The request bodies, as sent: dryRun beside the precondition in a dry run. */
static void
test_request_bodies(void **state)
{
    char *b;

    (void)state;
    b = kube_json_delete_options("u-1", 0);
    assert_string_equal(
        b,
        "{\"preconditions\":{\"uid\":\"u-1\"},\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\"}");
    free(b);
    b = kube_json_delete_options("u-1", 1);
    assert_string_equal(b, "{\"preconditions\":{\"uid\":\"u-1\"},\"dryRun\":[\"All\"],"
                           "\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\"}");
    free(b);
    b = kube_json_eviction("ns", "p", "u-1", 1);
    assert_string_equal(
        b, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
           "{\"name\":\"p\",\"namespace\":\"ns\"},\"deleteOptions\":"
           "{\"preconditions\":{\"uid\":\"u-1\"},\"dryRun\":[\"All\"]}}");
    free(b);
}

static void
test_patch_capacity(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    json_t *got, *want;

    routes(e, "PATCH", "/api/v1/nodes/gpu-node-1/status", 200,
           "kube-node-patched-200.json");
    result_reset(&e->r);
    assert_int_equal(kube_patch_capacity(e->k, "gpu-node-1", "viktorbarzin.me/gpumem",
                                         14000, on_answer, &e->r),
                     0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "PATCH");
    assert_string_equal(fr->fr_path, "/api/v1/nodes/gpu-node-1/status");
    assert_string_equal(fake_header(fr, "Content-Type"), "application/json-patch+json");
    assert_api_headers(fr);
    assert_string_equal(fr->fr_body, "[{\"op\":\"add\",\"path\":\"/status/capacity/"
                                     "viktorbarzin.me~1gpumem\",\"value\":\"14000\"}]");
    /* RFC 6901 escaping, both characters. */
    fake_clear(e->fake);
    fake_route(e->fake, "PATCH", "/api/v1/nodes/n/status", 200, NULL, "{}", 0);
    result_reset(&e->r);
    assert_int_equal(
        kube_patch_capacity(e->k, "n", "ex~ample.com/a/b", 0, on_answer, &e->r), 0);
    wait_answer(e);
    want = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path",
                     "/status/capacity/ex~0ample.com~1a~1b", "value", "0");
    assert_non_null(got = json_loads(fake_last(e->fake)->fr_body, 0, NULL));
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
}

static void
test_path_encoding_and_bad_args(void **state)
{
    struct env *e = *state;

    fake_clear(e->fake);
    fake_route(e->fake, NULL, "/api/v1/namespaces/a%20b/pods/c%2Fd%3Fe/eviction", 201,
               NULL, "{}", 0);
    result_reset(&e->r);
    assert_int_equal(kube_evict(e->k, "a b", "c/d?e", UID, 0, on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_null(fake_last(e->fake)->fr_query);
    assert_int_equal(kube_evict(e->k, "", POD, UID, 0, on_answer, &e->r), -1);
    assert_int_equal(kube_evict(e->k, NS, POD, NULL, 0, on_answer, &e->r), -1);
    assert_int_equal(kube_delete_pod(e->k, NS, NULL, UID, 0, on_answer, &e->r), -1);
    assert_int_equal(kube_list_pods(e->k, "", &e->po, on_answer, &e->r), -1);
    assert_int_equal(kube_patch_capacity(e->k, "n", "", 1, on_answer, &e->r), -1);
    assert_int_equal(kube_patch_capacity(e->k, "n", "r/x", -1, on_answer, &e->r), -1);
    fake_run_for(e->base, 30);
    assert_int_equal(e->r.calls, 1);
}

/* SPEC "A decision" step 6: an eviction or a deletion always carries the UID
 * precondition it decided on. An empty UID is no precondition at all (the
 * replacement pod under the same name would be hit): refused before anything
 * is sent, in dry run too, as a missing one is. */
static void
test_recycle_needs_uid(void **state)
{
    struct env *e = *state;

    fake_clear(e->fake);
    fake_route(e->fake, NULL, POD_PATH "/eviction", 201, NULL, "{}", 0);
    fake_route(e->fake, NULL, POD_PATH, 200, NULL, "{}", 0);
    result_reset(&e->r);
    for (int dry_run = 0; dry_run <= 1; dry_run++) {
        assert_int_equal(kube_evict(e->k, NS, POD, "", dry_run, on_answer, &e->r), -1);
        assert_int_equal(kube_delete_pod(e->k, NS, POD, "", dry_run, on_answer, &e->r),
                         -1);
        assert_int_equal(kube_evict(e->k, NS, POD, NULL, dry_run, on_answer, &e->r), -1);
        assert_int_equal(kube_delete_pod(e->k, NS, POD, NULL, dry_run, on_answer, &e->r),
                         -1);
    }
    fake_run_for(e->base, 100);
    assert_int_equal(fake_count(e->fake), 0); /* nothing reached the API server */
    assert_int_equal(e->r.calls, 0);
}

static void
test_list_garbage(void **state)
{
    struct env *e = *state;
    static const char *const garbage[] = {
        "",
        "{",
        "null",
        "[]",
        "{\"kind\":\"PodList\"}",
        "{\"items\":{}}",
        "{\"items\":[{\"metadata\":{}}]}",
        "{\"items\":[1]}",
        "\xff",
    };

    for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        fake_clear(e->fake);
        fake_route(e->fake, "GET", "/api/v1/pods", 200, NULL, garbage[i], 0);
        fake_route(e->fake, "GET", "/api/v1/nodes", 200, NULL, garbage[i], 0);
        result_reset(&e->r);
        assert_int_equal(kube_list_pods(e->k, "n", &e->po, on_answer, &e->r), 0);
        wait_answer(e);
        assert_int_equal(e->r.cls, KUBE_ERROR);
        assert_int_equal(
            strncmp(e->r.error, "kube: list pods on node n: bad answer: ", 39), 0);
        result_reset(&e->r);
        assert_int_equal(kube_list_nodes(e->k, "a=b", on_answer, &e->r), 0);
        wait_answer(e);
        assert_int_equal(e->r.cls, KUBE_ERROR);
        assert_int_equal(strncmp(e->r.error, "kube: list nodes: bad answer: ", 30), 0);
    }
    /* Throttled lists are throttled, never "PDB refused". */
    fake_clear(e->fake);
    fake_route_file(e->fake, "GET", "/api/v1/nodes", 429, "kube-status-429-pdb.json", 0);
    result_reset(&e->r);
    assert_int_equal(kube_list_nodes(e->k, "a=b", on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_THROTTLED);
}

static void
test_node_names_parser(void **state)
{
    static const char *const bad[] = {
        "",
        "x",
        "{",
        "null",
        "[]",
        "{}",
        "{\"items\":null}",
        "{\"items\":{}}",
        "{\"items\":[null]}",
        "{\"items\":[{}]}",
        "{\"items\":[{\"metadata\":{\"name\":5}}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"\"}}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":[]}]}",
    };
    char err[256];
    char **names = (char **)&err; /* must be reset */
    size_t count = 99;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(kube_json_node_names(bad[i], strlen(bad[i]), &names, &count, err,
                                              sizeof(err)),
                         -1);
        assert_null(names);
        assert_int_equal(count, 0);
        assert_true(err[0] != '\0');
    }
    /* Length-bounded: the bytes after len are not read. */
    assert_int_equal(kube_json_node_names("{\"items\":[]}garbage", 12, &names, &count,
                                          err, sizeof(err)),
                     0);
    assert_int_equal(count, 0);
}

/* A string literal and its length. */
#define LIT(s) s, strlen(s)

static void
test_status_message_parser(void **state)
{
    char out[64];
    char big[40];

    kube_json_status_message(LIT(""), out, sizeof(out));
    assert_string_equal(out, "(empty body)");
    kube_json_status_message(LIT("{\"message\":5}"), out, sizeof(out));
    assert_string_equal(out, "{\"message\":5}");
    kube_json_status_message(LIT("bad\r\ngateway\x01\xff"), out, sizeof(out));
    assert_string_equal(out, "bad  gateway  ");
    kube_json_status_message(LIT("{\"message\":\"a\\nb\",\"details\":{\"causes\":["
                                 "{\"reason\":\"R\"},{\"message\":\"m1\"},"
                                 "{\"reason\":\"X\",\"message\":\"m2\"}]}}"),
                             out, sizeof(out));
    assert_string_equal(out, "a b (m1; X: m2)");
    kube_json_status_message(LIT("{\"message\":\"m\",\"details\":{\"causes\":\"no\"}}"),
                             out, sizeof(out));
    assert_string_equal(out, "m");
    /* Truncated to the buffer, still terminated. */
    memset(big, 'z', sizeof(big));
    kube_json_status_message(big, sizeof(big), out, 10);
    assert_string_equal(out, "zzzzzzzzz");
    kube_json_status_message(LIT("{\"message\":\"x\"}"), out, 0); /* no room: no write */
}

static void
test_token_rotation_and_secrecy(void **state)
{
    struct env *e = *state;
    char logpath[] = "/tmp/gvw-kube-log-XXXXXX";
    int logfd, saved;
    char *logs;
    size_t len;
    FILE *fp;

    routes(e, "POST", POD_PATH "/eviction", 403, "kube-status-403-evict.json");
    /* Everything logged while the token is in use goes to a file we then search. */
    assert_true((logfd = mkstemp(logpath)) >= 0);
    fflush(stderr);
    saved = dup(2);
    dup2(logfd, 2);
    evict(e, 0);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"),
                        "Bearer " TOKEN);
    write_file(e->tokfile, "rotated-token-2\n");
    fake_run_for(e->base, 250); /* past the 200 ms max age */
    evict(e, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(logfd);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"),
                        "Bearer rotated-token-2");
    assert_non_null(fp = fopen(logpath, "r"));
    assert_non_null(logs = calloc(1, 1 << 20));
    len = fread(logs, 1, (1 << 20) - 1, fp);
    fclose(fp);
    unlink(logpath);
    assert_true(len > 0);
    assert_non_null(strstr(logs, "kube call failed"));
    assert_null(strstr(logs, TOKEN));
    assert_null(strstr(logs, "rotated-token-2"));
    free(logs);
    /* The token file disappears: a clear error, nothing sent. */
    unlink(e->tokfile);
    fake_run_for(e->base, 250);
    fake_clear(e->fake);
    evict(e, 0);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_non_null(strstr(e->r.error, "kube: create pods/eviction in namespace frigate: "
                                       "token file /tmp/gvw-kube-token-"));
    assert_non_null(strstr(e->r.error, "No such file or directory"));
    assert_int_equal(fake_count(e->fake), 0);
}

static void
test_cancel_on_free(void **state)
{
    struct env *e = *state;

    fake_clear(e->fake);
    fake_route_file(e->fake, "POST", POD_PATH "/eviction", 201, "kube-eviction-201.json",
                    1000);
    result_reset(&e->r);
    assert_int_equal(kube_evict(e->k, NS, POD, UID, 0, on_answer, &e->r), 0);
    fake_run_for(e->base, 50);
    kube_free(e->k);
    e->k = NULL;
    assert_int_equal(e->r.calls, 1);
    assert_true(e->r.cancelled);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_non_null(strstr(e->r.error, "cancelled"));
}

static void
test_new_and_incluster(void **state)
{
    struct env *e = *state;
    struct kube_opts bad = {.ko_url = "kubernetes.default.svc"};
    char out[128], err[256];

    assert_null(kube_new(e->base, &bad, err, sizeof(err)));
    assert_non_null(strstr(err, "not http:// or https://"));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "https://10.96.0.1:443");
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "https://[fd00:10:96::1]:443");
    assert_int_equal(kube_incluster_url(out, 10, err, sizeof(err)), -1);
    setenv("KUBERNETES_SERVICE_PORT", "44x", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_PORT"));
    setenv("KUBERNETES_SERVICE_PORT", "70000", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    setenv("KUBERNETES_SERVICE_PORT", "99999999999999999999", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    setenv("KUBERNETES_SERVICE_PORT", "0", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    setenv("KUBERNETES_SERVICE_HOST", "evil/path@x", 1);
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_incluster_url(out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not set"));
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(kube_class_name(KUBE_PDB_REFUSED)[0], 'p');
}

/* clang-format off */
/* As the real API server writes them (tests/e2e/test_controlplane_dra.sh): a
 * claim a pod names directly (shared) is in spec.resourceClaims alone; one made
 * from a ResourceClaimTemplate is named in status.resourceClaimStatuses alone. */
#define DRA_POD(name, uid, spec, status)                                                 \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"uid\":\"" uid "\"},"     \
    "\"spec\":{\"resourceClaims\":[" spec "],\"containers\":[{\"name\":\"c\"}]},"          \
    "\"status\":{\"phase\":\"Running\",\"resourceClaimStatuses\":[" status "]}}"
static const char DRA_PODS[] = "{\"kind\":\"PodList\",\"items\":["
    DRA_POD("a", "u-a", "{\"name\":\"gpu\",\"resourceClaimName\":\"shared\"}", "") ","
    DRA_POD("b", "u-b", "{\"name\":\"gpu\",\"resourceClaimName\":\"shared\"}", "") ","
    DRA_POD("c", "u-c", "{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\"}",
            "{\"name\":\"gpu\",\"resourceClaimName\":\"secret\"}") ","
    DRA_POD("d", "u-d", "{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\"}",
            "{\"name\":\"gpu\"}")
    "]}";
static const char DRA_SHARED[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
    "\"metadata\":{\"name\":\"shared\",\"namespace\":\"ml\"},"
    "\"status\":{\"allocation\":{\"devices\":{\"results\":["
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\","
    "\"consumedCapacity\":{\"memory\":\"8Gi\"}},"
    "{\"request\":\"nic\",\"driver\":\"net.example.com\",\"pool\":\"n1\",\"device\":\"nic-0\","
    "\"consumedCapacity\":{\"memory\":\"1Gi\"}}]}},"
    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"u-a\"},"
    "{\"resource\":\"pods\",\"name\":\"b\",\"uid\":\"u-b\"}]}}";
/* clang-format on */

static const struct pod *
pod_named(const struct pod_list *l, const char *name)
{
    for (size_t i = 0; i < l->pl_count; i++)
        if (strcmp(l->pl_pods[i].p_name, name) == 0)
            return &l->pl_pods[i];
    return NULL;
}

/* BUDGET_SOURCES=dra: the pods' ResourceClaims are read (one GET each, however
 * many pods share one), a shared claim's memory is each sharer's budget, and a
 * claim the API refuses makes its pod bad_budget with the API's answer, never a
 * guess. Without dra no claim is asked for. */
static void
test_list_pods_dra(void **state)
{
    struct env *e = *state;
    struct bsrc_order dra;
    const struct pod *p;
    char err[128];
    size_t claim_gets = 0;

    assert_int_equal(bsrc_order_parse("dra,resource", &dra, err, sizeof(err)), 0);
    fake_clear(e->fake);
    assert_int_equal(fake_route(e->fake, "GET", "/api/v1/pods", 200, NULL, DRA_PODS, 0),
                     0);
    assert_int_equal(
        fake_route(e->fake, "GET",
                   "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/shared", 200,
                   NULL, DRA_SHARED, 0),
        0);
    assert_int_equal(
        fake_route(e->fake, "GET",
                   "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/secret", 403,
                   NULL,
                   "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":"
                   "\"resourceclaims.resource.k8s.io \\\"secret\\\" is forbidden\","
                   "\"reason\":\"Forbidden\",\"code\":403}",
                   0),
        0);
    result_reset(&e->r);
    assert_int_equal(
        kube_list_pods_sources(e->k, "gpu-node-1", &e->po, &dra, on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_int_equal(e->r.pods.pl_count, 4);
    for (const char *const *n = (const char *const[]){"a", "b", NULL}; *n; n++) {
        assert_non_null(p = pod_named(&e->r.pods, *n));
        assert_int_equal(p->p_budget_state, BUDGET_OK);
        assert_int_equal(p->p_budget_mib,
                         8192); /* the other driver's memory not counted */
        assert_string_equal(p->p_budget_source, "dra");
        assert_string_equal(p->p_budget_decl, "claim ml/shared: memory 8Gi");
    }
    assert_non_null(p = pod_named(&e->r.pods, "c"));
    assert_int_equal(p->p_budget_state, BUDGET_BAD);
    assert_non_null(strstr(p->p_budget_error, "claim ml/secret could not be read"));
    assert_non_null(strstr(p->p_budget_error, "forbidden"));
    assert_non_null(p = pod_named(&e->r.pods, "d")); /* no claim object: not DRA */
    assert_null(p->p_budget_source);
    for (size_t i = 0;; i++) {
        const struct fake_req *fr = fake_req(e->fake, i);
        if (fr == NULL)
            break;
        claim_gets += strstr(fr->fr_path, "/resourceclaims/") != NULL;
        if (strstr(fr->fr_path, "/resourceclaims/") != NULL)
            assert_api_headers(fr);
    }
    assert_int_equal(claim_gets, 2);

    /* resource alone: the pod list only */
    fake_clear(e->fake);
    assert_int_equal(fake_route(e->fake, "GET", "/api/v1/pods", 200, NULL, DRA_PODS, 0),
                     0);
    result_reset(&e->r);
    assert_int_equal(kube_list_pods(e->k, "gpu-node-1", &e->po, on_answer, &e->r), 0);
    wait_answer(e);
    assert_int_equal(e->r.cls, KUBE_OK);
    assert_null(fake_req(e->fake, 1));
    assert_null(pod_named(&e->r.pods, "c")->p_budget_source);
}

/* kube_free() while the list's claims are read: one answer, cancelled, the pods not
 * parsed (common/kube/pods_claims.c keeps serve's behaviour). */
static void
test_list_pods_dra_cancel(void **state)
{
    struct env *e = *state;
    struct bsrc_order dra;
    char err[128];

    assert_int_equal(bsrc_order_parse("dra", &dra, err, sizeof(err)), 0);
    fake_clear(e->fake);
    assert_int_equal(fake_route(e->fake, "GET", "/api/v1/pods", 200, NULL, DRA_PODS, 0),
                     0);
    assert_int_equal(
        fake_route(e->fake, "GET",
                   "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/shared", 200,
                   NULL, DRA_SHARED, 1000),
        0);
    assert_int_equal(
        fake_route(e->fake, "GET",
                   "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/secret", 200,
                   NULL, DRA_SHARED, 1000),
        0);
    result_reset(&e->r);
    assert_int_equal(
        kube_list_pods_sources(e->k, "gpu-node-1", &e->po, &dra, on_answer, &e->r), 0);
    for (int i = 0; i < 100 && fake_count(e->fake) < 3; i++)
        fake_run_for(e->base, 20);
    assert_int_equal(fake_count(e->fake), 3); /* the list and both claims asked */
    assert_int_equal(e->r.calls, 0);
    kube_free(e->k);
    e->k = NULL;
    assert_int_equal(e->r.calls, 1);
    assert_true(e->r.cancelled);
    assert_int_equal(e->r.cls, KUBE_ERROR);
    assert_int_equal(e->r.pods.pl_count, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_pods_dra, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_pods_dra_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_pdb_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_outlasts_server_retries, setup,
                                        teardown),
        cmocka_unit_test(test_request_bodies),
        cmocka_unit_test_setup_teardown(test_forbidden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_and_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_encoding_and_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recycle_needs_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_garbage, setup, teardown),
        cmocka_unit_test(test_node_names_parser),
        cmocka_unit_test(test_status_message_parser),
        cmocka_unit_test_setup_teardown(test_token_rotation_and_secrecy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_on_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_and_incluster, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
