/* test_remedy.c -- the remediation engine end to end against a loopback fake
 * Prometheus + API server: what the audit shows and what the API server got */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>

#include "alert.h"
#include "engine_harness.h"
#include "gate.h"
#include "log.h"
#include "metrics.h"

/* --- the 2026-06-02 cast (tests/data/remedy-*.json) ----------------------- */

#define NODE "gpu-node-1"
#define QUERY_PATH "/api/v1/query"
#define PODS_PATH "/api/v1/pods"
#define NODES_PATH "/api/v1/nodes"

#define ML_NS "immich"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define ML_UID "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01"
#define ML_UID2 "4d6e8f0a-2b4c-4d6e-8f0a-2b4c6d8e0f12" /* remedy-pods-replaced.json */
#define ML_PATH "/api/v1/namespaces/" ML_NS "/pods/" ML_POD
#define ML_EVICT ML_PATH "/eviction"

#define FR_NS "frigate"
#define FR_POD "frigate-84d5c6b7f9-h4n8s"
#define FR_UID "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d04"
#define FR_EVICT "/api/v1/namespaces/" FR_NS "/pods/" FR_POD "/eviction"

#define LS_POD "llama-swap-6d8f7b5c4-w7r2k"
#define SV_POD "immich-server-7c4b9d6f8-m2t9z"
#define ST_POD "portal-stt-59b7d8c6f5-j6v3q"

#define DEFAULT_USED_QUERY "sum by (namespace, pod) (gpu_pod_memory_used_bytes)"
#define POD_DELETED                                                                      \
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" ML_POD "\"}}"

/* --- the harness (tests/lib/engine_harness.h) ------------------------------ */

/* Every test's settings, below its own. */
static const struct kv remedy_env[] = {
    {"MIN_RUNTIME", "1s"},
    {"SETTLE", "1s"},
    {"DRY_RUN", "false"},
    {"HTTP_TIMEOUT", "3s"},
    {"HTTP_CONNECT_TIMEOUT", "1s"},
    {"EVENTS", "false"}, /* request counts below are exact; Events have their tests */
    {NULL, NULL},
};

static int
setup(void **state)
{
    return env_setup(state, remedy_env);
}

/* The engine on the settings (http_timeout_ms as engine_start); the device
 * query finds no device series: free is computed, as before. */
static void
start_with(struct env *e, const struct kv *extra, long http_timeout_ms)
{
    engine_start(e, extra, http_timeout_ms);
    route_no_device(e);
}

static void
start(struct env *e, const struct kv *extra)
{
    start_with(e, extra, 0);
}

#define ON_NODE "\"node\":\"" NODE "\""

/* --- assertions on what the audit shows ----------------------------------- */

/* Every field of the contract is there. */
static void
check_shape(json_t *d)
{
    static const char *const keys[] = {"id",          "time",    "node",   "trigger",
                                       "fingerprint", "result",  "reason", "free_mib",
                                       "floor_mib",   "dry_run", "action", "victim",
                                       "candidates",  "error",   "verify"};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        jget(d, keys[i]);
    assert_true(json_is_integer(jget(d, "id")));
    assert_true(json_is_array(jget(d, "candidates")));
}

/* A decision that acted on nothing and names nobody. */
static void
check_no_victim(json_t *d)
{
    jnull(d, "victim");
    jstr(d, "action", "none");
    jnull(d, "verify");
}

static void
check_victim(json_t *d, const char *ns, const char *pod, long long used, long long budget,
             long long overshoot)
{
    json_t *v = jget(d, "victim");

    if (!json_is_object(v))
        fail_msg("victim is not an object");
    jstr(v, "namespace", ns);
    jstr(v, "pod", pod);
    jint(v, "used_mib", used);
    jint(v, "budget_mib", budget);
    jint(v, "overshoot_mib", overshoot);
}

/* why NULL = eligible. budget -1 = null. */
static void
check_candidate(json_t *d, const char *ns, const char *pod, long long used,
                long long budget, const char *why)
{
    json_t *c = candidate(d, pod);

    jstr(c, "namespace", ns);
    jint(c, "used_mib", used);
    if (budget < 0)
        jnull(c, "budget_mib");
    else
        jint(c, "budget_mib", budget);
    jbool(c, "eligible", why == NULL);
    if (why == NULL)
        jnull(c, "why_not");
    else
        jstr(c, "why_not", why);
}

/* The five tenants of the incident, as every look at remedy-prom-incident.json
 * lists them. */
static void
check_incident_candidates(json_t *d)
{
    assert_int_equal(json_array_size(jget(d, "candidates")), 5);
    check_candidate(d, ML_NS, ML_POD, 10957, 3000, NULL);
    check_candidate(d, "llama-swap", LS_POD, 1100, 5000, "within_budget");
    check_candidate(d, FR_NS, FR_POD, 1400, 2000, "within_budget");
    check_candidate(d, "immich", SV_POD, 900, 1800, "within_budget");
    check_candidate(d, "portal-stt", ST_POD, 450, 1500, "within_budget");
    /* Ranked: the victim first. */
    jstr(json_array_get(jget(d, "candidates"), 0), "pod", ML_POD);
}

/* --- assertions on what the API server received --------------------------- */

/* FREE_QUERY=auto (the default) asks the device query beside every used
 * query; these tests' telemetry has no device series (start_with answers it
 * with none), so they count the other requests and the device queries apart. */
static int
is_device_query(const struct fake_req *r)
{
    return query_has(r, "gvw_ts");
}

static size_t
count_device_queries(struct env *e)
{
    return count_queries(e, "gvw_ts");
}

static size_t
count_reqs(struct env *e, const char *method, const char *path)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (is_device_query(r))
            continue;
        if ((method == NULL || strcmp(r->fr_method, method) == 0) &&
            (path == NULL || strcmp(r->fr_path, path) == 0))
            n++;
    }
    return n;
}

/* The nth request to method path, or a failure. */
static const struct fake_req *
req_nth(struct env *e, const char *method, const char *path, size_t nth)
{
    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (!is_device_query(r) && strcmp(r->fr_method, method) == 0 &&
            strcmp(r->fr_path, path) == 0 && nth-- == 0)
            return r;
    }
    fail_msg("no such request: %s %s", method, path);
    return NULL;
}

/* Requests that change something, or could: anything but GET, and anything
 * to a pod's own path. */
static size_t
count_mutating(struct env *e)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (strcmp(r->fr_method, "GET") != 0 ||
            strncmp(r->fr_path, "/api/v1/namespaces/", 19) == 0)
            n++;
    }
    return n;
}

static void
check_param(const struct fake_req *r, const char *key, const char *want)
{
    char *v = fake_query_param(r, key);

    if (want == NULL) {
        if (v != NULL)
            fail_msg("%s %s has %s=%s", r->fr_method, r->fr_path, key, v);
        return;
    }
    if (v == NULL)
        fail_msg("%s %s has no %s", r->fr_method, r->fr_path, key);
    assert_string_equal(v, want);
    free(v);
}

/* A policy/v1 Eviction of ns/pod whose precondition is uid. */
static void
check_eviction_body(const struct fake_req *r, const char *ns, const char *pod,
                    const char *uid)
{
    json_error_t jerr;
    json_t *b = json_loads(r->fr_body, 0, &jerr), *md, *pre;

    if (b == NULL)
        fail_msg("eviction body is not JSON: %s", r->fr_body);
    jstr(b, "apiVersion", "policy/v1");
    jstr(b, "kind", "Eviction");
    md = jget(b, "metadata");
    jstr(md, "name", pod);
    jstr(md, "namespace", ns);
    pre = jget(jget(b, "deleteOptions"), "preconditions");
    jstr(pre, "uid", uid);
    json_decref(b);
}

/* A dry run's options say dryRun: ["All"] in the body (at key, or at the top
 * when key is NULL): a real API server reads a DELETE's options from its body
 * alone, and an eviction's deleteOptions must match the query. */
static void
check_dry_run_body(const struct fake_req *r, const char *key)
{
    json_error_t jerr;
    json_t *b = json_loads(r->fr_body, 0, &jerr), *o, *dry;

    if (b == NULL)
        fail_msg("%s body is not JSON: %s", r->fr_method, r->fr_body);
    o = key != NULL ? jget(b, key) : b;
    dry = jget(o, "dryRun");
    assert_true(json_is_array(dry));
    assert_int_equal(json_array_size(dry), 1);
    assert_string_equal(json_string_value(json_array_get(dry, 0)), "All");
    json_decref(b);
}

/* Prometheus answers first, then the pods. */
static void
routes(struct env *e, const char *prom_file, const char *pods_file)
{
    if (prom_file != NULL)
        assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200, prom_file, 0),
                         0);
    if (pods_file != NULL)
        assert_int_equal(fake_route_file(e->fake, "GET", PODS_PATH, 200, pods_file, 0),
                         0);
}

static void
then_prom(struct env *e, const char *prom_file)
{
    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200, prom_file, 0), 0);
}

static void
route_file(struct env *e, const char *method, const char *path, int status,
           const char *file, long delay_ms)
{
    assert_int_equal(fake_route_file(e->fake, method, path, status, file, delay_ms), 0);
}

/* --- 1. the incident replay ----------------------------------------------- */

static void
test_incident_replay(void **state)
{
    struct env *e = *state;
    const struct fake_req *r;
    json_t *all, *d, *v;
    double secs;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    /* The API server saw: the usage query, the pod list, ONE eviction, and the
     * verify query. Nothing else changed anything. */
    assert_int_equal(count_reqs(e, NULL, NULL), 4);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    assert_int_equal(count_reqs(e, "GET", PODS_PATH), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_mutating(e), 1);
    /* FREE_QUERY=auto: the device was asked with every reading (decision, verify). */
    assert_int_equal(count_device_queries(e), 2);
    r = req_nth(e, "GET", QUERY_PATH, 0);
    check_param(r, "query", DEFAULT_USED_QUERY);
    r = req_nth(e, "GET", PODS_PATH, 0);
    check_param(r, "fieldSelector", "spec.nodeName=" NODE);
    r = req_nth(e, "POST", ML_EVICT, 0);
    check_param(r, "dryRun", NULL);
    check_eviction_body(r, ML_NS, ML_POD, ML_UID);

    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "node", NODE);
    jstr(d, "trigger", "GPUVRAMLow");
    jstr(d, "fingerprint", FINGERPRINT);
    jstr(d, "result", "recycled");
    jint(d, "free_mib", 553);
    jint(d, "floor_mib", 1536);
    jbool(d, "dry_run", 0);
    jstr(d, "action", "evict");
    jnull(d, "error");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    /* Its budget is its gpumem resource request, and the victim says so. */
    jstr(jget(d, "victim"), "budget_source", "resource");
    check_incident_candidates(d);
    jstr(candidate(d, ML_POD), "budget_source", "resource");
    /* The verify read free VRAM back: nothing to say about the reading. */
    assert_null(strstr(json_string_value(jget(d, "reason")), "verify:"));
    jhas(d, "reason", "free 553 MiB < floor 1536 MiB");
    jhas(d, "reason", "evicted " ML_NS "/" ML_POD);
    jhas(d, "reason", "free VRAM back to 11510 MiB");
    /* The pod declares no release (RELEASE_WAIT is on): it is not asked, and
     * the reason does not speak of it. */
    assert_null(strstr(json_string_value(jget(d, "reason")), "release"));
    /* No device series: computed, and the reason says so. */
    jstr(d, "free_source", "computed");
    jhas(d, "reason",
         "free computed as GPU_TOTAL_MIB=15360 - used (the node has no device series)");
    v = jget(d, "verify");
    assert_true(json_is_object(v));
    jint(v, "free_mib", 11510);
    secs = json_number_value(jget(v, "seconds"));
    assert_true(json_is_number(jget(v, "seconds")));
    /* One verify tick: clamp(SETTLE/10, 0.2 s, 2 s) = 0.2 s after the eviction. */
    if (!(secs >= 0.19 && secs < 1.0))
        fail_msg("verify.seconds %.3f", secs);
    json_decref(all);
}

/* Still below the floor when SETTLE runs out: recycled, and the verify shows
 * the last reading. */
static void
test_verify_never_recovers(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *v;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    /* SETTLE=1s, a reading every 0.2 s: the first look and up to six more
     * (fewer on a slow machine: each waits for the previous answer). */
    if (count_reqs(e, "GET", QUERY_PATH) < 4 || count_reqs(e, "GET", QUERY_PATH) > 7)
        fail_msg("%zu queries", count_reqs(e, "GET", QUERY_PATH));
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    v = jget(d, "verify");
    assert_true(json_is_object(v));
    jint(v, "free_mib", 553);
    assert_true(json_number_value(jget(v, "seconds")) >= 0.95);
    jhas(d, "reason",
         "free VRAM still 553 MiB, below the floor, when SETTLE (1s) ran out");
    json_decref(all);
}

/* The verify ends when free is back to the floor, not above it (SPEC "A
 * decision" step 7: until free >= floor): a reading exactly at the floor
 * ends it at once, with the figure, long before SETTLE runs out. */
static void
test_verify_at_floor(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"SETTLE", "4s"}, {NULL, NULL}};
    json_t *all, *d, *v;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-at-floor.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 3000); /* not SETTLE's 4 s: the first re-read ends it */

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2); /* the look, one re-read */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    v = jget(d, "verify");
    assert_true(json_is_object(v));
    jint(v, "free_mib", 1536);
    assert_true(json_number_value(jget(v, "seconds")) < 2.0);
    jhas(d, "reason", "free VRAM back to 1536 MiB after");
    json_decref(all);
}

/* A recycle whose row is written at once, before its verify, as it should
 * be: no error line in the log (an on-call engineer reads them). */
static void
test_recycle_logs_no_error(void **state)
{
    struct env *e = *state;
    FILE *f = tmpfile();
    char log[8192];
    size_t len;
    int saved;
    json_t *all, *d;

    assert_non_null(f);
    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    fflush(stderr);
    assert_true((saved = dup(2)) >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    len = fread(log, 1, sizeof(log) - 1, f);
    log[len] = '\0';
    fclose(f);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    json_decref(all);
    if (strstr(log, "not recorded") != NULL)
        fail_msg("a recycle recorded in time logs that it was not:\n%s", log);
}

/* Every re-read after the eviction fails (Prometheus answers 500): nothing
 * was read back, so the verify shows no figure (not a free of 0 MiB) and the
 * reason says so. */
static void
test_verify_reads_fail(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "GET", QUERY_PATH, 500, "remedy-status-500.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_true(count_reqs(e, "GET", QUERY_PATH) >= 2); /* the look, re-reads */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jnull(d, "verify");
    jhas(d, "reason", "free VRAM could not be read back within SETTLE");
    assert_null(strstr(json_string_value(jget(d, "reason")), "free VRAM still"));
    /* A failed reading is no vanished series: nothing "verify:" to say. */
    assert_null(strstr(json_string_value(jget(d, "reason")), "verify:"));
    json_decref(all);
}

/* Every re-read is an impossible reading (a NaN series): no figure is read
 * back from it. */
static void
test_verify_reading_impossible(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                   "\"result\":[{\"metric\":{\"namespace\":\"" FR_NS
                   "\",\"pod\":\"" FR_POD "\"},\"value\":[1780394400,\"NaN\"]}]}}",
                   0),
        0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jnull(d, "verify");
    jhas(d, "reason", "free VRAM could not be read back within SETTLE");
    json_decref(all);
}

/* A reading that fails leaves the free-VRAM gauge at the last figure read
 * (not 0). */
static void
test_failed_reading_keeps_gauge(void **state)
{
    struct env *e = *state;
    struct buf m;

    metrics_init(0);
    routes(e, "remedy-prom-recovered.json", "remedy-pods-incident.json");
    route_file(e, "GET", QUERY_PATH, 500, "remedy-status-500.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    buf_init(&m, 1 << 20);
    assert_int_equal(metrics_render(&m), 0);
    /* remedy-prom-recovered.json: 11510 MiB free, computed. */
    if (strstr(m.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE
                         "\"} 12069109760\n") == NULL)
        fail_msg("the gauge is not the last figure read (11510 MiB):\n%s", m.b_data);
    buf_free(&m);
    metrics_cleanup();
    metrics_init(0);
}

/* --- FREE_QUERY=auto: the device series vanish after the decision --------- */

/* The device query's answer for the node's one GPU: free MiB of 15360. */
static const char *
device_answer(long long free_mib)
{
    static char b[1024];

    snprintf(b, sizeof(b),
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
             "{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\",\"node\":\"" NODE "\","
             "\"uuid\":\"GPU-0\"},\"value\":[1780394400,\"%lld\"]},"
             "{\"metric\":{\"__name__\":\"gpu_memory_total_bytes\",\"node\":\"" NODE "\","
             "\"uuid\":\"GPU-0\"},\"value\":[1780394400,\"16106127360\"]},"
             "{\"metric\":{\"gvw_ts\":\"device\",\"node\":\"" NODE
             "\",\"uuid\":\"GPU-0\"},"
             "\"value\":[1780394400,\"1780394400\"]}]}}",
             free_mib * 1048576);
    return b;
}

/* The decision judged the device (400 MiB free, not the computed 553), then
 * the device series vanish: every later reading would be computed. */
static void
device_then_vanished(struct env *e)
{
    fake_clear(e->fake); /* start()'s "no device series" answer goes */
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200, device_answer(400)),
        0);
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200,
                                      "{\"status\":\"success\",\"data\":{"
                                      "\"resultType\":\"vector\",\"result\":[]}}"),
                     0);
}

/* The verify never counts a computed figure as the device's: the recycle
 * stands, nothing is verified, the reason says the series vanished, and the
 * free-VRAM gauge keeps the decision's device figure. */
static void
test_verify_device_vanished(void **state)
{
    struct env *e = *state;
    json_t *all, *d;
    struct buf m;

    metrics_init(0);
    start(e, NULL);
    device_then_vanished(e);
    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "free_source", "device");
    jint(d, "free_mib", 400);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jnull(d, "verify"); /* the computed 553 MiB is not a reading of the device */
    jhas(d, "reason",
         "verify: the device series of the node vanished after the decision");
    /* Said once, however many re-reads saw it. */
    {
        const char *r = json_string_value(jget(d, "reason")),
                   *first = strstr(r, "verify:");
        assert_null(strstr(first + 1, "verify:"));
    }
    jhas(d, "reason", "553 MiB computed as GPU_TOTAL_MIB - used");
    jhas(d, "reason", "free VRAM could not be read back within SETTLE");
    assert_true(count_device_queries(e) >= 2);
    json_decref(all);
    /* The gauge carries the decision's figure: the device's free, in bytes. */
    buf_init(&m, 1 << 20);
    assert_int_equal(metrics_render(&m), 0);
    if (strstr(m.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE
                         "\"} 419430400\n") == NULL)
        fail_msg("the gauge is not the device's 400 MiB:\n%s", m.b_data);
    buf_free(&m);
    metrics_cleanup();
}

/* The used query's answer once no pod holds VRAM on the node. */
#define PROM_NO_SERIES                                                                   \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}"

/* The decision judged the device (400 MiB free); then its one VRAM holder
 * left: the used query answers no series at all, while the device, still
 * reporting, says 12000 MiB free. */
static void
device_then_only_user_gone(struct env *e)
{
    fake_clear(e->fake);
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200, device_answer(400)),
        0);
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200, device_answer(12000)),
        0);
    routes(e, "remedy-prom-incident.json", NULL);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, PROM_NO_SERIES, 0),
                     0);
}

/* The verify of a recycle that emptied the node reads the device's figure:
 * no used series left is not "nothing read back". */
static void
test_verify_only_user_gone(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *v;

    start(e, NULL);
    device_then_only_user_gone(e);
    routes(e, NULL, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "free_source", "device");
    jint(d, "free_mib", 400);
    v = jget(d, "verify");
    if (!json_is_object(v))
        fail_msg("verify is not an object: %s", json_string_value(jget(d, "reason")));
    jint(v, "free_mib", 12000);
    jhas(d, "reason", "free VRAM back to 12000 MiB");
    json_decref(all);
}

/* --- 2. dry-run ------------------------------------------------------------ */

static void
test_dry_run(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", NULL}, {NULL, NULL}}; /* the default: true */
    const struct fake_req *r;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_reqs(e, "DELETE", NULL), 0);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1); /* no verify */
    r = req_nth(e, "POST", ML_EVICT, 0);
    check_param(r, "dryRun", "All");
    check_eviction_body(r, ML_NS, ML_POD, ML_UID);
    check_dry_run_body(r, "deleteOptions");

    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "would_recycle");
    jbool(d, "dry_run", 1);
    jstr(d, "action", "evict");
    jint(d, "free_mib", 553);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    check_incident_candidates(d);
    jnull(d, "verify");
    jnull(d, "error");
    jhas(d, "reason", "DRY_RUN: nothing was changed");
    jhas(d, "reason", "a dry-run eviction was accepted by the API server");
    json_decref(all);
}

/* The probe says a PodDisruptionBudget would refuse: still would_recycle, and
 * the reason carries the API server's words. */
static void
test_dry_run_probe_pdb(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {NULL, NULL}};
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 429, "remedy-status-429-pdb.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    check_param(req_nth(e, "POST", ML_EVICT, 0), "dryRun", "All");
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "a dry-run eviction says a PodDisruptionBudget would refuse");
    jhas(d, "reason", "The disruption budget immich-ml-pdb needs 1 healthy pods");
    json_decref(all);
}

/* ACTION=delete in dry-run probes with a dry-run DELETE. */
static void
test_dry_run_delete_probe(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {"ACTION", "delete"}, {NULL, NULL}};
    const struct fake_req *r;
    json_error_t jerr;
    json_t *all, *d, *b;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(fake_route(e->fake, "DELETE", ML_PATH, 200, NULL, POD_DELETED, 0),
                     0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    r = req_nth(e, "DELETE", ML_PATH, 0);
    check_param(r, "dryRun", "All");
    /* The body decides on a real server: dryRun there, beside the precondition. */
    check_dry_run_body(r, NULL);
    assert_non_null(b = json_loads(r->fr_body, 0, &jerr));
    jstr(b, "kind", "DeleteOptions");
    jstr(jget(b, "preconditions"), "uid", ML_UID);
    json_decref(b);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jstr(d, "action", "delete");
    jhas(d, "reason", "a dry-run deletion was accepted by the API server");
    json_decref(all);
}

/* --- 3. nothing to do, nobody to take, nothing to trust -------------------- */

static void
test_recovered_at_floor(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-at-floor.json", "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "skipped_recovered");
    jint(d, "free_mib", 1536);
    jstr(d, "reason",
         "free 1536 MiB >= floor 1536 MiB; nothing to do; free computed as "
         "GPU_TOTAL_MIB=15360 - used (the node has no device series)");
    jstr(d, "free_source", "computed");
    check_no_victim(d);
    jnull(d, "error");
    json_decref(all);
}

/* One MiB less and the same reading acts (the boundary is free >= floor). */
static void
test_below_floor_by_one(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-below-floor.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jint(d, "free_mib", 1535);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

static void
test_no_candidate(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-no-candidate.json", "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "skipped_no_candidate");
    jint(d, "free_mib", 60);
    check_no_victim(d);
    jnull(d, "error");
    jhas(d, "reason", "free 60 MiB < floor 1536 MiB; no eligible victim among 6 pods");
    jhas(d, "reason", "1 not_on_node");
    jhas(d, "reason", "5 within_budget");
    assert_int_equal(json_array_size(jget(d, "candidates")), 6);
    check_candidate(d, ML_NS, ML_POD, 2900, 3000, "within_budget");
    check_candidate(d, "gpu-batch", "ghost-job-0", 2500, -1, "not_on_node");
    json_decref(all);
}

/* FALLBACK=largest: nobody over budget, so the largest eligible holder goes,
 * and its overshoot is negative. */
static void
test_fallback_largest(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"FALLBACK", "largest"}, {NULL, NULL}};
    const char *path = "/api/v1/namespaces/llama-swap/pods/" LS_POD "/eviction";
    json_t *all, *d;

    routes(e, "remedy-prom-no-candidate.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", path, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    check_eviction_body(req_nth(e, "POST", path, 0), "llama-swap", LS_POD,
                        "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d03");
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jint(d, "free_mib", 60);
    check_victim(d, "llama-swap", LS_POD, 4900, 5000, -100);
    jhas(d, "reason", "FALLBACK=largest picks llama-swap/" LS_POD);
    check_candidate(d, "gpu-batch", "ghost-job-0", 2500, -1, "not_on_node");
    json_decref(all);
}

struct telemetry_case {
    const char *name;
    int status;
    const char *ctype;
    const char *body;
    long delay_ms;
    const char *error; /* what the decision's error must contain */
};

#define SERIES(ns, pod, v)                                                               \
    "{\"metric\":{\"namespace\":\"" ns "\",\"pod\":\"" pod                               \
    "\"},\"value\":[1780394400.1,\"" v "\"]}"
#define VECTOR(...)                                                                      \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"            \
    "[" __VA_ARGS__ "]}}"
#define PROM_ERROR                                                                       \
    "{\"status\":\"error\",\"errorType\":\"execution\",\"error\":\"query timed out in "  \
    "expression evaluation\"}"

static const struct telemetry_case telemetry_cases[] = {
    {"HTTP 500", 500, "text/plain", "upstream connect error\n", 0, "HTTP 500"},
    {"status:error with 422", 422, NULL, PROM_ERROR, 0, "query timed out in expression"},
    {"status:error with 200", 200, NULL, PROM_ERROR, 0, "query timed out in expression"},
    {"empty vector", 200, NULL, VECTOR(), 0, "no series"},
    {"garbage", 200, "text/html", "<html><body>502 Bad Gateway</body></html>", 0,
     "prometheus"},
    {"negative", 200, NULL,
     VECTOR(SERIES(ML_NS, ML_POD, "-1048576") "," SERIES("llama-swap", LS_POD,
                                                         "1153433600")),
     0, ML_POD},
    {"NaN", 200, NULL,
     VECTOR(SERIES(ML_NS, ML_POD, "NaN") "," SERIES("llama-swap", LS_POD, "1153433600")),
     0, ML_POD},
    {"one pod above GPU_TOTAL_MIB", 200, NULL,
     VECTOR(SERIES(ML_NS, ML_POD, "17179869184") "," SERIES("llama-swap", LS_POD,
                                                            "1153433600")),
     0, ML_POD},
    {"all together above GPU_TOTAL_MIB", 200, NULL,
     VECTOR(SERIES(ML_NS, ML_POD, "8388608000") "," SERIES("llama-swap", LS_POD,
                                                           "8388608000")),
     0, "GPU_TOTAL_MIB"},
    {"slower than HTTP_TIMEOUT", 200, NULL, VECTOR(SERIES(ML_NS, ML_POD, "11489247232")),
     3000, "prometheus"},
    {"connection refused", 0, NULL, NULL, 0, "prometheus"},
};

static void
test_telemetry(void **state)
{
    struct env *e = *state;

    for (size_t i = 0; i < sizeof(telemetry_cases) / sizeof(telemetry_cases[0]); i++) {
        const struct telemetry_case *tc = &telemetry_cases[i];
        struct kv extra[2] = {{NULL, NULL}, {NULL, NULL}};
        char url[64];
        json_t *all, *d;
        long t0;

        print_message("skipped_telemetry: %s\n", tc->name);
        if (i > 0) {
            env_fini(e);
            env_init(e, remedy_env);
        }
        if (tc->body != NULL) {
            assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, tc->status, tc->ctype,
                                        tc->body, tc->delay_ms),
                             0);
        } else {
            snprintf(url, sizeof(url), "http://127.0.0.1:%d", fake_closed_port());
            extra[0] = (struct kv){"PROMETHEUS_URL", url};
        }
        routes(e, NULL, "remedy-pods-incident.json");
        route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
        assert_int_equal(
            fake_route(e->fake, "DELETE", ML_PATH, 200, NULL, POD_DELETED, 0), 0);
        start_with(e, extra, 500);
        t0 = fake_now_ms();
        deliver(e, ON_NODE);
        wait_rows(e, 1, 5000);
        if (fake_now_ms() - t0 > 2500) /* HTTP_TIMEOUT is 500 ms; the slow answer 3 s */
            fail_msg("%s: took %ld ms", tc->name, fake_now_ms() - t0);

        /* Never act blind: the pod list may have been asked for, nothing else. */
        assert_int_equal(count_mutating(e), 0);
        assert_int_equal(count_reqs(e, NULL, NULL) - count_reqs(e, "GET", QUERY_PATH) -
                             count_reqs(e, "GET", PODS_PATH),
                         0);
        all = decisions(e);
        assert_int_equal(json_array_size(all), 1);
        d = json_array_get(all, 0);
        check_shape(d);
        jstr(d, "result", "skipped_telemetry");
        jnull(d, "free_mib");
        check_no_victim(d);
        assert_int_equal(json_array_size(jget(d, "candidates")), 0);
        jhas(d, "error", tc->error);
        json_decref(all);
    }
}

/* With FREE_QUERY set its answer is the free VRAM; one that cannot be true on
 * the card is a telemetry failure. Both queries share the path, so each gets
 * the same one-sample vector: usage (bytes) and free (MiB) at once. */
static void
run_free_query(struct env *e, const char *value)
{
    const struct kv extra[] = {{"FREE_QUERY", "gpu_free_mib{node=\"$node\"}"},
                               {NULL, NULL}};
    char body[512];
    char *q0, *q1;

    snprintf(body, sizeof(body),
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
             "{\"metric\":{\"namespace\":\"" ML_NS "\",\"pod\":\"" ML_POD "\"},"
             "\"value\":[1780394400.1,\"%s\"]}]}}",
             value);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
    routes(e, NULL, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    assert_int_equal(count_mutating(e), 0);
    q0 = fake_query_param(req_nth(e, "GET", QUERY_PATH, 0), "query");
    q1 = fake_query_param(req_nth(e, "GET", QUERY_PATH, 1), "query");
    assert_non_null(q0);
    assert_non_null(q1);
    assert_true((strcmp(q0, DEFAULT_USED_QUERY) == 0 &&
                 strcmp(q1, "gpu_free_mib{node=\"" NODE "\"}") == 0) ||
                (strcmp(q1, DEFAULT_USED_QUERY) == 0 &&
                 strcmp(q0, "gpu_free_mib{node=\"" NODE "\"}") == 0));
    free(q0);
    free(q1);
}

static void
test_free_query_used(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    run_free_query(e, "100"); /* 100 MiB free; immich-ml holds 100 bytes */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_no_candidate");
    jint(d, "free_mib", 100);
    check_candidate(d, ML_NS, ML_POD, 0, 3000, "within_budget");
    json_decref(all);
}

static void
test_free_query_implausible(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    run_free_query(e, "1e9"); /* 1e9 MiB free on a 15360 MiB card */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_telemetry");
    jnull(d, "free_mib");
    check_no_victim(d);
    jhas(d, "error", "FREE_QUERY reports");
    json_decref(all);
}

/* --- 4. the API server cannot be asked ------------------------------------ */

static void
check_skipped_kube(struct env *e, const char *error)
{
    json_t *all = decisions(e), *d;

    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "node", NODE);
    jstr(d, "result", "skipped_kube");
    jint(d, "free_mib", 553);
    check_no_victim(d);
    assert_int_equal(json_array_size(jget(d, "candidates")), 0);
    jhas(d, "reason", "could not be listed");
    jhas(d, "error", error);
    json_decref(all);
}

static void
test_kube_pods_500(void **state)
{
    struct env *e = *state;

    routes(e, "remedy-prom-incident.json", NULL);
    route_file(e, "GET", PODS_PATH, 500, "remedy-status-500.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_mutating(e), 0);
    check_skipped_kube(e, "etcdserver: request timed out");
    {
        json_t *all = decisions(e);
        jhas(json_array_get(all, 0), "error", "HTTP 500");
        json_decref(all);
    }
}

static void
test_kube_pods_403(void **state)
{
    struct env *e = *state;

    routes(e, "remedy-prom-incident.json", NULL);
    route_file(e, "GET", PODS_PATH, 403, "remedy-status-403-pods.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_mutating(e), 0);
    check_skipped_kube(e, "cannot list resource \"pods\"");
}

/* Recovered needs no pod list: skipped_recovered even when the pods cannot be
 * listed, and no pod is shown with a reason the engine never checked. */
static void
test_kube_fails_but_recovered(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-at-floor.json", NULL);
    route_file(e, "GET", PODS_PATH, 500, "remedy-status-500.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_mutating(e), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_recovered");
    jint(d, "free_mib", 1536);
    check_no_victim(d);
    jnull(d, "error");
    assert_int_equal(json_array_size(jget(d, "candidates")), 0);
    json_decref(all);
}

static void
test_kube_unset(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"KUBE_API_URL", NULL}, {NULL, NULL}};

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    start(e, extra);
    assert_null(e->kube);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, NULL, NULL), 1); /* the usage query only */
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    check_skipped_kube(e, "no Kubernetes API server is configured");
}

/* --- 5. PodDisruptionBudgets ---------------------------------------------- */

static void
test_pdb_next_candidate(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 429, "remedy-status-429-pdb.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 2);
    assert_int_equal(fake_req(e->fake, 2)->fr_path[0], '/');
    /* In rank order: the largest overshoot first, then the next. */
    assert_true(req_nth(e, "POST", ML_EVICT, 0) < req_nth(e, "POST", FR_EVICT, 0));
    check_eviction_body(req_nth(e, "POST", ML_EVICT, 0), ML_NS, ML_POD, ML_UID);
    check_eviction_body(req_nth(e, "POST", FR_EVICT, 0), FR_NS, FR_POD, FR_UID);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 1);

    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jint(d, "free_mib", 453);
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    check_candidate(d, ML_NS, ML_POD, 9957, 3000, NULL);
    check_candidate(d, FR_NS, FR_POD, 2500, 2000, NULL);
    jhas(d, "reason", "evicted " FR_NS "/" FR_POD);
    /* The refusal that moved it on is on the record. */
    jhas(d, "reason",
         "refused by a PodDisruptionBudget first: " ML_NS "/" ML_POD ": kube: ");
    jhas(d, "reason", "The disruption budget immich-ml-pdb needs 1 healthy pods");
    jnull(d, "error");
    jint(jget(d, "verify"), "free_mib", 11510);
    json_decref(all);
}

static void
test_pdb_all_refused(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 429, "remedy-status-429-pdb.json", 0);
    route_file(e, "POST", FR_EVICT, 429, "remedy-status-429-pdb.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 2);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1); /* nothing to verify */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "blocked");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 9957, 3000, 6957);
    jnull(d, "verify");
    jhas(d, "reason", "every candidate was refused by a PodDisruptionBudget");
    jhas(d, "error", "Cannot evict pod as it would violate the pod's disruption budget");
    jhas(d, "error", ML_NS "/" ML_POD);
    jhas(d, "error", FR_NS "/" FR_POD);
    json_decref(all);

    /* Blocked changed nothing: no SETTLE window, the next alert looks again. */
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    jstr(json_array_get(all, 1), "result", "blocked");
    json_decref(all);
}

/* Refused, then the next one fails otherwise: failed, with both on record. */
static void
test_pdb_then_forbidden(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 429, "remedy-status-429-pdb.json", 0);
    route_file(e, "POST", FR_EVICT, 403, "remedy-status-403-evict.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 2);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    jhas(d, "error", "HTTP 403");
    jhas(d, "reason", "refused by a PodDisruptionBudget first: " ML_NS "/" ML_POD);
    jhas(d, "reason", "the evict of " FR_NS "/" FR_POD " failed");
    jnull(d, "verify");
    json_decref(all);
}

/* A real server also refuses for a budget with 403 (disruptions allowed
 * negative, too many unconfirmed evictions): a refusal, not an RBAC failure,
 * so the next candidate is evicted. */
static void
test_pdb_403_next_candidate(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 403, "remedy-status-403-pdb.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    jhas(d, "reason", "refused by a PodDisruptionBudget first: " ML_NS "/" ML_POD);
    jhas(d, "reason", "pdb disruptions allowed is negative");
    jnull(d, "error");
    json_decref(all);
}

/* 500 "more than one PodDisruptionBudget" and a 403 budget refusal: every
 * candidate refused is blocked, the reason quoting the server. */
static void
test_pdb_500_and_403_blocked(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 500, "remedy-status-500-pdb.json", 0);
    route_file(e, "POST", FR_EVICT, 403, "remedy-status-403-pdb.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 2);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "blocked");
    check_victim(d, ML_NS, ML_POD, 9957, 3000, 6957);
    jhas(d, "reason", "every candidate was refused by a PodDisruptionBudget");
    jhas(d, "reason",
         "This pod has more than one PodDisruptionBudget, which the eviction "
         "subresource does not support.");
    jhas(d, "reason", "poddisruptionbudget.policy \"immich-ml-pdb\" is forbidden");
    jhas(d, "error", ML_NS "/" ML_POD);
    jhas(d, "error", FR_NS "/" FR_POD);
    jnull(d, "verify");
    json_decref(all);
}

/* The dry-run probe reads a 403 budget refusal as one too. */
static void
test_dry_run_probe_pdb_403(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 403, "remedy-status-403-pdb.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jhas(d, "reason", "a dry-run eviction says a PodDisruptionBudget would refuse");
    jhas(d, "reason", "pdb disruptions allowed is negative");
    json_decref(all);
}

/* --- 5b. the API server shedding load (SPEC step 6: any other 429) -------- */

static void run_until_requests(struct env *e, const char *method, const char *path,
                               size_t n);
static void drained_cb(void *arg);

/* What max-in-flight and priority-and-fairness answer: plain text. */
#define SHED_BODY "Too many requests, please try again later.\n"

/* One load-shedding answer to method path, with a Retry-After (NULL = none). */
static void
route_shed(struct env *e, const char *method, const char *path, const char *retry_after)
{
    assert_int_equal(
        fake_route(e->fake, method, path, 429, "text/plain; charset=utf-8", SHED_BODY, 0),
        0);
    if (retry_after != NULL)
        fake_route_header(e->fake, "Retry-After", retry_after);
}

/* Milliseconds between the nth and the (n+1)th request to method path. */
static long
gap_ms(struct env *e, const char *method, const char *path, size_t n)
{
    return req_nth(e, method, path, n + 1)->fr_at_ms -
           req_nth(e, method, path, n)->fr_at_ms;
}

/* A 429 that is no budget's refusal is not a refusal: the same victim again
 * after Retry-After; the next-ranked pod is never touched. */
static void
test_throttled_same_victim(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_shed(e, "POST", ML_EVICT, "1");
    route_shed(e, "POST", ML_EVICT, "garbage"); /* unreadable: 1 s */
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 8000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 3);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 0);
    for (size_t i = 0; i < 3; i++)
        check_eviction_body(req_nth(e, "POST", ML_EVICT, i), ML_NS, ML_POD, ML_UID);
    assert_true(gap_ms(e, "POST", ML_EVICT, 0) >= 950);
    assert_true(gap_ms(e, "POST", ML_EVICT, 1) >= 950);
    assert_true(gap_ms(e, "POST", ML_EVICT, 1) < 3000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 9957, 3000, 6957);
    jhas(d, "reason", "evicted " ML_NS "/" ML_POD);
    jnull(d, "error");
    json_decref(all);
}

/* Throttled on every try: three tries, then failed ("API server throttled");
 * still nobody else evicted. The loop keeps serving meanwhile. */
static void
test_throttled_gives_up(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-two-over.json", "remedy-pods-incident.json");
    route_shed(e, "POST", ML_EVICT, NULL); /* none: 1 s */
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", ML_EVICT, 1);
    /* The wait is a timer: other decisions go on (this one coalesces at once). */
    deliver(e, ON_NODE);
    wait_rows_then(e, 2, 8000, 300);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 3);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 0);
    assert_true(gap_ms(e, "POST", ML_EVICT, 0) >= 950);
    all = decisions(e);
    jstr(json_array_get(all, 1), "result", "coalesced");
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_victim(d, ML_NS, ML_POD, 9957, 3000, 6957);
    jhas(d, "reason", "the evict of " ML_NS "/" ML_POD " failed: API server throttled");
    jhas(d, "error", "HTTP 429: API server throttled");
    jhas(d, "error", "Too many requests, please try again later.");
    jnull(d, "verify");
    json_decref(all);
}

/* A Retry-After beyond 10 s is waited 10 s (then the eviction goes through). */
static void
test_throttled_retry_after_capped(void **state)
{
    struct env *e = *state;
    long gap;
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_shed(e, "POST", ML_EVICT, "3600");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 15000);
    gap = gap_ms(e, "POST", ML_EVICT, 0);
    assert_true(gap >= 9900 && gap < 11500);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "recycled");
    json_decref(all);
}

/* ACTION=delete is retried the same way. */
static void
test_throttled_delete(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_shed(e, "DELETE", ML_PATH, "1");
    assert_int_equal(fake_route(e->fake, "DELETE", ML_PATH, 200, NULL, POD_DELETED, 0),
                     0);
    start(e, (const struct kv[]){{"ACTION", "delete"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, "DELETE", ML_PATH), 2);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "deleted " ML_NS "/" ML_POD);
    json_decref(all);
}

/* Stopping while the retry waits: completed at once, failed, nothing
 * recycled; the timer never fires into a freed decision. */
static void
test_throttled_stop(void **state)
{
    struct env *e = *state;
    int drained = 0;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_shed(e, "POST", ML_EVICT, "5");
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", ML_EVICT, 1);
    run_ms(e->base, 100);
    assert_int_equal(remedy_in_flight(e->r), 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    assert_int_equal(remedy_in_flight(e->r), 0);
    run_ms(e->base, 200);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "the API server throttled it); nothing was recycled");
    jstr(d, "error", STORE_INTERRUPTED_ERROR);
    json_decref(all);
}

/* The dry-run probe throttled is no budget's word: the reason says throttled. */
static void
test_dry_run_probe_throttled(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_shed(e, "POST", ML_EVICT, "1");
    start(e, (const struct kv[]){{"DRY_RUN", "true"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jhas(d, "reason", "the dry-run eviction probe failed");
    jhas(d, "reason", "API server throttled");
    if (strstr(json_string_value(jget(d, "reason")), "PodDisruptionBudget") != NULL)
        fail_msg("a throttled probe read as a budget: %s",
                 json_string_value(jget(d, "reason")));
    json_decref(all);
}

/* --- 6. other answers to the eviction ------------------------------------- */

static void
test_evict_404(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 404, "remedy-status-404.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "already gone");
    jnull(d, "error");
    jint(jget(d, "verify"), "free_mib", 11510);
    json_decref(all);
}

/* A 409 on the UID precondition: the pod decided on is gone and a replacement
 * holds its name. Done (verified as any recycle), never retried: the
 * replacement, listed with a new UID, is not evicted. */
static void
test_evict_409_done(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-replaced.json", 0);
    route_file(e, "POST", ML_EVICT, 409, "remedy-status-409.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", PODS_PATH), 1);
    check_eviction_body(req_nth(e, "POST", ML_EVICT, 0), ML_NS, ML_POD, ML_UID);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    check_incident_candidates(d);
    jhas(d, "reason", "409 on the UID precondition; the replacement is left alone");
    jnull(d, "error");
    jint(jget(d, "verify"), "free_mib", 11510);
    json_decref(all);
}

/* A 409 that is not the UID precondition (the pod modified under the server's
 * own retries) proves nothing gone: failed, and nothing else is tried. */
static void
test_evict_409_other_conflict(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 409, "kube-status-409-modified.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", PODS_PATH), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "error", "HTTP 409: Operation cannot be fulfilled");
    jhas(d, "reason", "the evict of " ML_NS "/" ML_POD " failed");
    jnull(d, "verify");
    json_decref(all);
}

static void
test_evict_403(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 403, "remedy-status-403-evict.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "error", "HTTP 403");
    jhas(d, "error", "cannot create resource \"pods/eviction\"");
    jnull(d, "verify");
    json_decref(all);
}

/* --- 7. ACTION=delete ------------------------------------------------------ */

static void
test_action_delete(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"ACTION", "delete"}, {NULL, NULL}};
    const struct fake_req *r;
    json_error_t jerr;
    json_t *all, *d, *b;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    assert_int_equal(fake_route(e->fake, "DELETE", ML_PATH, 200, NULL, POD_DELETED, 0),
                     0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "POST", NULL), 0);
    r = req_nth(e, "DELETE", ML_PATH, 0);
    check_param(r, "dryRun", NULL);
    assert_non_null(b = json_loads(r->fr_body, 0, &jerr));
    jstr(b, "kind", "DeleteOptions");
    jstr(b, "apiVersion", "v1");
    jstr(jget(b, "preconditions"), "uid", ML_UID);
    json_decref(b);

    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "action", "delete");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "deleted " ML_NS "/" ML_POD);
    jint(jget(d, "verify"), "free_mib", 11510);
    json_decref(all);
}

/* --- 8. brakes ------------------------------------------------------------ */

static size_t
count_result(json_t *all, const char *result)
{
    size_t i, n = 0;
    json_t *d;

    json_array_foreach(all, i, d)
    {
        n += strcmp(json_string_value(jget(d, "result")), result) == 0;
    }
    return n;
}

static void
test_thirty_at_once(void **state)
{
    struct env *e = *state;
    json_t *all, *d;
    size_t i;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver_n(e, "GPUVRAMLow", "firing", ON_NODE, 30); /* one loop turn */
    assert_int_equal(remedy_in_flight(e->r), 1);
    wait_rows(e, 30, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 30);
    assert_int_equal(count_result(all, "recycled"), 1);
    assert_int_equal(count_result(all, "coalesced"), 29);
    json_array_foreach(all, i, d)
    {
        check_shape(d);
        jstr(d, "node", NODE);
        jstr(d, "fingerprint", FINGERPRINT);
        if (strcmp(json_string_value(jget(d, "result")), "coalesced") == 0) {
            check_no_victim(d);
            jnull(d, "free_mib");
            jhas(d, "reason", "a decision for " NODE " is already in flight");
        }
    }
    json_decref(all);
}

static void
test_settle_window(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    then_prom(e, "remedy-prom-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000); /* recovered on the first verify, 0.2 s in */

    /* Inside SETTLE: coalesced at once, no query. */
    deliver(e, ON_NODE);
    assert_int_equal(remedy_in_flight(e->r), 0);
    wait_rows(e, 2, 1000);
    assert_int_equal(count_reqs(e, NULL, NULL), 4);

    /* After SETTLE: a new decision, which acts again. */
    run_ms(e->base, 900);
    deliver(e, ON_NODE);
    wait_rows(e, 3, 5000);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 2);
    assert_int_equal(count_mutating(e), 2);

    all = decisions(e);
    assert_int_equal(json_array_size(all), 3);
    jstr(json_array_get(all, 0), "result", "recycled");
    d = json_array_get(all, 1);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "inside the SETTLE window after recycling " ML_NS "/" ML_POD);
    check_no_victim(d);
    jstr(json_array_get(all, 2), "result", "recycled");
    json_decref(all);
}

/* The in-flight brake is per node: another node's alert is not held back. */
static void
test_brake_per_node(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {NULL, NULL}};
    json_t *all;
    const char *n0, *n1;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    deliver(e, "\"node\":\"gpu-node-2\"");
    deliver(e, ON_NODE);
    assert_int_equal(remedy_in_flight(e->r), 2);
    wait_rows(e, 3, 5000);

    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 2);
    all = decisions(e);
    assert_int_equal(count_result(all, "would_recycle"), 2);
    assert_int_equal(count_result(all, "coalesced"), 1);
    n0 = json_string_value(jget(json_array_get(all, 0), "node"));
    n1 = json_string_value(jget(json_array_get(all, 1), "node"));
    assert_true(strcmp(n0, n1) != 0);
    jstr(json_array_get(all, 2), "node", NODE);
    jstr(json_array_get(all, 2), "result", "coalesced");
    json_decref(all);
}

static void
test_hourly_brake(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {
        {"MAX_RECYCLES_PER_HOUR", "1"}, {"SETTLE", "0"}, {NULL, NULL}};
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    then_prom(e, "remedy-prom-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_int_equal(count_mutating(e), 1);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "recycled");
    d = json_array_get(all, 1);
    jstr(d, "result", "rate_limited");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jint(d, "free_mib", 553);
    jhas(d, "reason", "MAX_RECYCLES_PER_HOUR=1");
    jnull(d, "verify");
    json_decref(all);
}

/* MAX_RECYCLES_PER_HOUR=0 is no limit (SPEC "Settings"): two recycles in a
 * row, neither rate_limited. */
static void
test_hourly_brake_off(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {
        {"MAX_RECYCLES_PER_HOUR", "0"}, {"SETTLE", "0"}, {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    then_prom(e, "remedy-prom-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);

    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 2);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "recycled");
    jstr(json_array_get(all, 1), "result", "recycled");
    json_decref(all);
}

/* In dry-run a would_recycle opens the SETTLE window like a recycle. */
static void
test_dry_run_settle(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 1000);
    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "would_recycle");
    jstr(json_array_get(all, 1), "result", "coalesced");
    /* Nothing was recycled: the reason does not say it was. */
    jhas(json_array_get(all, 1), "reason",
         "inside the SETTLE window after DRY_RUN would have recycled " ML_NS "/" ML_POD);
    json_decref(all);
}

/* ... and counts toward the hourly brake. */
static void
test_dry_run_hourly(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"},
                               {"MAX_RECYCLES_PER_HOUR", "1"},
                               {"SETTLE", "0"},
                               {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    assert_int_equal(count_mutating(e), 1);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "would_recycle");
    jstr(json_array_get(all, 1), "result", "rate_limited");
    jbool(json_array_get(all, 1), "dry_run", 1);
    json_decref(all);
}

/* --- 9. no node label ------------------------------------------------------ */

static void
test_every_gpu_node(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {
        {"USED_QUERY",
         "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    const struct fake_req *r;
    json_t *all;
    int seen1 = 0, seen2 = 0;
    char *v;

    route_file(e, "GET", NODES_PATH, 200, "remedy-nodes.json", 0);
    routes(e, "remedy-prom-recovered.json", "remedy-pods-incident.json");
    start(e, extra);
    deliver(e, "");
    wait_rows(e, 2, 5000);

    assert_int_equal(count_reqs(e, "GET", NODES_PATH), 1);
    check_param(req_nth(e, "GET", NODES_PATH, 0), "labelSelector",
                "nvidia.com/gpu.present=true");
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    assert_int_equal(count_reqs(e, "GET", PODS_PATH), 2);
    assert_int_equal(count_mutating(e), 0);
    for (size_t i = 0; i < 2; i++) {
        r = req_nth(e, "GET", QUERY_PATH, i);
        assert_non_null(v = fake_query_param(r, "query"));
        seen1 += strcmp(v, "sum by (namespace, pod) "
                           "(gpu_pod_memory_used_bytes{node=\"gpu-node-1\"})") == 0;
        seen2 += strcmp(v, "sum by (namespace, pod) "
                           "(gpu_pod_memory_used_bytes{node=\"gpu-node-2\"})") == 0;
        free(v);
        r = req_nth(e, "GET", PODS_PATH, i);
        assert_non_null(v = fake_query_param(r, "fieldSelector"));
        seen1 += strcmp(v, "spec.nodeName=gpu-node-1") == 0;
        seen2 += strcmp(v, "spec.nodeName=gpu-node-2") == 0;
        free(v);
    }
    assert_int_equal(seen1, 2);
    assert_int_equal(seen2, 2);

    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    assert_int_equal(count_result(all, "skipped_recovered"), 2);
    seen1 = seen2 = 0;
    for (size_t i = 0; i < 2; i++) {
        const char *node = json_string_value(jget(json_array_get(all, i), "node"));
        seen1 += strcmp(node, "gpu-node-1") == 0;
        seen2 += strcmp(node, "gpu-node-2") == 0;
        jstr(json_array_get(all, i), "fingerprint", FINGERPRINT);
    }
    assert_int_equal(seen1, 1);
    assert_int_equal(seen2, 1);
    json_decref(all);
}

/* An alert naming no node but a starving namespace: every GPU node is
 * decided, each sparing that namespace's pods. */
static void
test_every_gpu_node_starving(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    route_file(e, "GET", NODES_PATH, 200, "remedy-nodes.json", 0);
    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, "\"namespace\":\"immich\"");
    wait_rows(e, 2, 5000);

    assert_int_equal(count_reqs(e, "GET", NODES_PATH), 1);
    assert_int_equal(count_mutating(e), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    for (size_t i = 0; i < 2; i++) {
        d = json_array_get(all, i);
        jhas(d, "node", "gpu-node-");
        jstr(d, "result", "skipped_no_candidate");
        check_no_victim(d);
        check_candidate(d, ML_NS, ML_POD, 10957, 3000, "starving_namespace");
    }
    json_decref(all);
}

static void
check_one_skipped_kube_nodeless(struct env *e, const char *reason, const char *error)
{
    json_t *all = decisions(e), *d;

    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "node", "");
    jstr(d, "result", "skipped_kube");
    jstr(d, "trigger", "GPUVRAMLow");
    jnull(d, "free_mib");
    check_no_victim(d);
    jhas(d, "reason", reason);
    if (error == NULL)
        jnull(d, "error");
    else
        jhas(d, "error", error);
    json_decref(all);
}

/* A GPU_NODE_SELECTOR too long for a request path: the node list is never
 * asked, and the alert still gets its row saying so. */
static void
test_node_list_not_started(void **state)
{
    struct env *e = *state;
    char sel[5001];

    memset(sel, 'a', sizeof(sel) - 1);
    sel[sizeof(sel) - 1] = '\0';
    start(e, (const struct kv[]){{"GPU_NODE_SELECTOR", sel}, {NULL, NULL}});
    deliver(e, "");
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, NULL, NULL), 0);
    check_one_skipped_kube_nodeless(e, "the GPU nodes could not be listed",
                                    "the node list request could not be started");
}

static void
test_node_list_fails(void **state)
{
    struct env *e = *state;

    route_file(e, "GET", NODES_PATH, 500, "remedy-status-500.json", 0);
    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, "");
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, NULL, NULL), 1);
    assert_int_equal(count_reqs(e, "GET", NODES_PATH), 1);
    check_one_skipped_kube_nodeless(e, "the GPU nodes could not be listed", "HTTP 500");
}

static void
test_node_list_empty(void **state)
{
    struct env *e = *state;

    assert_int_equal(
        fake_route(e->fake, "GET", NODES_PATH, 200, NULL,
                   "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},"
                   "\"items\":[]}",
                   0),
        0);
    start(e, NULL);
    deliver(e, "");
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, NULL, NULL), 1);
    check_one_skipped_kube_nodeless(
        e, "no node matches GPU_NODE_SELECTOR=nvidia.com/gpu.present=true", NULL);
}

static void
test_no_node_label_no_kube(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"KUBE_API_URL", NULL}, {NULL, NULL}};

    start(e, extra);
    deliver(e, "");
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, NULL, NULL), 0);
    check_one_skipped_kube_nodeless(e, "no Kubernetes API server is configured", NULL);
}

/* --- 10. what starts nothing ----------------------------------------------- */

static void
test_not_triggers(void **state)
{
    struct env *e = *state;
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver_n(e, "GPUVRAMLow", "resolved", ON_NODE, 1);
    deliver_n(e, "GPUVRAMTelemetryDown", "firing", ON_NODE, 1);
    deliver_n(e, "gpuvramlow", "firing", ON_NODE, 1); /* names are exact */
    /* A firing delivery holding a resolved trigger: judged by its own status. */
    deliver_body(e, "{\"version\":\"4\",\"status\":\"firing\",\"alerts\":["
                    "{\"status\":\"resolved\",\"labels\":{\"alertname\":\"GPUVRAMLow\","
                    "\"node\":\"" NODE "\"},\"fingerprint\":\"aa\"},"
                    "{\"status\":\"firing\",\"labels\":{\"alertname\":\"Watchdog\","
                    "\"node\":\"" NODE "\"},\"fingerprint\":\"bb\"}]}");
    assert_int_equal(remedy_in_flight(e->r), 0);
    run_ms(e->base, 300);
    assert_int_equal(count_reqs(e, NULL, NULL), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 0);
    json_decref(all);
    all = audit_json(e, "alerts"); /* only recorded */
    assert_int_equal(json_array_size(all), 5);
    json_decref(all);
}

static void
test_trigger_alerts_setting(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"TRIGGER_ALERTS", "GPUVRAMLow,GPUVRAMCritical"},
                               {"ALERT_NODE_LABEL", "instance_node"},
                               {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-recovered.json", "remedy-pods-incident.json");
    start(e, extra);
    deliver_n(e, "GPUVRAMCritical", "firing", "\"instance_node\":\"" NODE "\"", 1);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    jstr(json_array_get(all, 0), "trigger", "GPUVRAMCritical");
    jstr(json_array_get(all, 0), "node", NODE);
    jstr(json_array_get(all, 0), "result", "skipped_recovered");
    json_decref(all);
}

static void
test_starving_namespace(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE ",\"namespace\":\"immich\"");
    wait_rows(e, 1, 5000);

    assert_int_equal(count_mutating(e), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_no_candidate");
    check_no_victim(d);
    check_candidate(d, ML_NS, ML_POD, 10957, 3000, "starving_namespace");
    check_candidate(d, "immich", SV_POD, 900, 1800, "starving_namespace");
    check_candidate(d, "llama-swap", LS_POD, 1100, 5000, "within_budget");
    json_decref(all);
}

/* The same trigger waiting its turn (MAX_CONCURRENT_DECISIONS=1, another
 * node's decision first): it still spares its starving namespace. */
static void
test_starving_namespace_queued(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){
                 {"DRY_RUN", "true"}, {"MAX_CONCURRENT_DECISIONS", "1"}, {NULL, NULL}});
    deliver(e, "\"node\":\"gpu-node-2\"");
    deliver(e, ON_NODE ",\"namespace\":\"immich\"");
    wait_rows(e, 2, 5000);
    all = decisions(e);
    d = json_array_get(all, 1);
    jstr(d, "node", NODE);
    jstr(d, "result", "skipped_no_candidate");
    check_no_victim(d);
    check_candidate(d, ML_NS, ML_POD, 10957, 3000, "starving_namespace");
    json_decref(all);
}

/* --- 11. the row while it runs, and at shutdown ---------------------------- */

static void
run_until_requests(struct env *e, const char *method, const char *path, size_t n)
{
    long end = fake_now_ms() + 3000;

    while (count_reqs(e, method, path) < n) {
        if (fake_now_ms() > end)
            fail_msg("no %s %s", method, path);
        run_ms(e->base, 10);
    }
}

static void
test_in_progress_row(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 800);
    start(e, NULL);
    deliver(e, ON_NODE);

    /* Written when it starts: visible before anything is known. */
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    jstr(json_array_get(all, 0), "result", "in_progress");
    json_decref(all);

    run_until_requests(e, "POST", ML_EVICT, 1);
    run_ms(e->base, 200);
    assert_int_equal(remedy_in_flight(e->r), 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "in_progress");
    jstr(d, "node", NODE);
    jstr(d, "trigger", "GPUVRAMLow");
    jstr(d, "fingerprint", FINGERPRINT);
    jnull(d, "error");
    jnull(d, "verify");
    json_decref(all);

    wait_rows(e, 1, 5000);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    jstr(json_array_get(all, 0), "result", "recycled");
    json_decref(all);
}

/* Freeing the API client with the eviction held open (a stop past its grace):
 * the row is completed as failed, names the victim, and says the outcome is
 * unknown; nothing is left for the next start to mark. */
static void
test_shutdown_mid_eviction(void **state)
{
    struct env *e = *state;
    char err[256];
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 2000);
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", ML_EVICT, 1);
    assert_int_equal(remedy_in_flight(e->r), 1);
    kube_free(e->kube);
    e->kube = NULL;
    assert_int_equal(remedy_in_flight(e->r), 0);
    engine_stop(e);

    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "failed");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "error", "whether it took effect is unknown");
    jhas(d, "reason", "the daemon stopped while the evict of " ML_NS "/" ML_POD);
    jnull(d, "verify");
    json_decref(all);

    assert_non_null(e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err)));
    assert_int_equal(store_interrupted_count(e->store), 0);
}

/* Freeing the clients while the verify waits on Prometheus: the recycle was
 * recorded when it happened and the verify is cut short, not left open. */
static void
test_shutdown_mid_verify(void **state)
{
    struct env *e = *state;
    char err[256];
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-recovered.json", 2000),
                     0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 2);
    assert_int_equal(remedy_in_flight(e->r), 1);
    kube_free(e->kube);
    e->kube = NULL;
    prom_free(e->prom);
    e->prom = NULL;
    assert_int_equal(remedy_in_flight(e->r), 0);
    engine_stop(e);

    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "evicted " ML_NS "/" ML_POD);
    jhas(d, "reason", "verify cut short");
    jhas(d, "reason", "the daemon stopped before free VRAM was read back");
    jnull(d, "verify");
    jnull(d, "error");
    json_decref(all);
    assert_non_null(e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err)));
    assert_int_equal(store_interrupted_count(e->store), 0);
}

/* The eviction is answered and the verify has not read anything yet: the
 * audit already shows the recycle, its victim and action. */
static void
test_recorded_before_verify(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-recovered.json", 1500),
                     0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"SETTLE", "10s"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 2);
    assert_int_equal(remedy_in_flight(e->r), 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "evicted " ML_NS "/" ML_POD);
    jnull(d, "verify");
    jnull(d, "error");
    json_decref(all);

    /* The verify then only adds its figures. */
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jint(jget(d, "verify"), "free_mib", 11510);
    jhas(d, "reason", "free VRAM back to 11510 MiB");
    json_decref(all);
}

/* A crash between the eviction and the verify (the engine vanishes without a
 * word): the next start counts the row and says so; it still names the victim. */
static void
test_crash_mid_verify(void **state)
{
    struct env *e = *state;
    char err[256];
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-recovered.json", 2000),
                     0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"SETTLE", "10s"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 2);
    remedy_free(e->r); /* as kill -9 would: nothing more is written */
    e->r = NULL;
    engine_stop(e);

    assert_non_null(e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err)));
    assert_int_equal(store_interrupted_count(e->store), 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jstr(d, "error", STORE_UNVERIFIED_ERROR);
    jnull(d, "verify");
    json_decref(all);
    store_close(e->store);
    /* Marked once: a second start finds nothing more. */
    assert_non_null(e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err)));
    assert_int_equal(store_interrupted_count(e->store), 0);
}

static void
drained_cb(void *arg)
{
    (*(int *)arg)++;
}

/* remedy_shutdown() while the evidence is gathered: completed at once as
 * failed, nothing recycled, and the drained callback runs. */
static void
test_stop_while_gathering(void **state)
{
    struct env *e = *state;
    int drained = 0;
    json_t *all, *d;

    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-incident.json", 3000),
                     0);
    routes(e, NULL, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    assert_int_equal(remedy_in_flight(e->r), 0);
    /* A trigger now starts nothing. */
    deliver(e, ON_NODE);
    run_ms(e->base, 100);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    check_no_victim(d);
    jstr(d, "error", STORE_INTERRUPTED_ERROR);
    jhas(d, "reason", "nothing was recycled");
    d = json_array_get(all, 1);
    jstr(d, "result", "failed");
    jhas(d, "reason", "the daemon is stopping");
    json_decref(all);
}

/* Another writer holds the audit database (SQLite's write lock). */
static sqlite3 *
lock_db(struct env *e)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(e->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    return db;
}

static void
unlock_db(sqlite3 *db)
{
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A decision that ends while the audit database is locked: its row waits
 * (the decision stays in flight) until the lock goes, then is completed. */
static sqlite3 *
decision_ends_locked(struct env *e)
{
    sqlite3 *db;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json", 300);
    routes(e, NULL, "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 1); /* the row is in_progress */
    db = lock_db(e);
    run_ms(e->base, 1000); /* the answer came; the row could not be completed */
    assert_int_equal(remedy_in_flight(e->r), 1);
    return db;
}

static void
test_row_completed_after_store_lock(void **state)
{
    struct env *e = *state;
    json_t *all;

    unlock_db(decision_ends_locked(e));
    wait_rows(e, 1, 5000);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    jstr(json_array_get(all, 0), "result", "skipped_recovered");
    json_decref(all);
}

/* A trigger coalesced while the store is locked cannot be recorded: the log
 * says so (error), naming the node and the result. */
static void
test_coalesced_unrecorded_is_logged(void **state)
{
    struct env *e = *state;
    FILE *f = tmpfile();
    sqlite3 *db;
    char log[8192];
    size_t len;
    int saved;

    static const char body[] =
        "{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\",\"labels\":{"
        "\"alertname\":\"GPUVRAMLow\"," ON_NODE "},\"fingerprint\":\"" FINGERPRINT
        "\"}]}";
    struct alert_batch b;
    char err[256];

    assert_non_null(f);
    if (alert_batch_parse(body, strlen(body), &b, err, sizeof(err)) == -1)
        fail_msg("alert_batch_parse: %s", err);
    db = decision_ends_locked(e); /* the node stays busy meanwhile */
    fflush(stderr);
    assert_true((saved = dup(2)) >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    /* The trigger's alert was stored just before the lock (id 1): the engine
     * hears it, as serve's handler passes it on. */
    remedy_on_alert(e->r, &b.ab_alerts[0], 1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    len = fread(log, 1, sizeof(log) - 1, f);
    log[len] = '\0';
    fclose(f);
    unlock_db(db);
    alert_batch_free(&b);
    if (strstr(log, "decision not recorded") == NULL || strstr(log, "coalesced") == NULL)
        fail_msg("the log does not say the coalesced decision was not recorded:\n%s",
                 log);
    wait_rows(e, 1, 5000);
}

/* The daemon stops while such a row waits, the lock gone: its last try
 * completes it, and the log says it was completed late. */
static void
test_row_completed_at_stop(void **state)
{
    struct env *e = *state;
    const char *v = getenv("GVW_TEST_VERBOSE");
    int drained = 0, saved, verbose = v != NULL && *v != '\0';
    FILE *f = tmpfile();
    char log[8192];
    size_t len;
    json_t *all;

    assert_non_null(f);
    unlock_db(decision_ends_locked(e));
    fflush(stderr);
    assert_true((saved = dup(2)) >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_INFO); /* "completed late" is an info line */
    remedy_shutdown(e->r, drained_cb, &drained);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    log_init(LOG_FORMAT_TEXT, verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
    rewind(f);
    len = fread(log, 1, sizeof(log) - 1, f);
    log[len] = '\0';
    fclose(f);
    assert_int_equal(drained, 1);
    if (strstr(log, "decision row completed late") == NULL)
        fail_msg("the log does not say the row was completed late:\n%s", log);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "skipped_recovered");
    json_decref(all);
}

/* remedy_shutdown() during the verify, after one reading: the verify keeps
 * the figures seen so far and the reason says the daemon stopped. */
static void
test_stop_while_verifying(void **state)
{
    struct env *e = *state;
    int drained = 0;
    json_t *all, *d, *v;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"SETTLE", "60s"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 2);
    run_ms(e->base, 200); /* the first verify reading is in */
    assert_int_equal(remedy_in_flight(e->r), 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    assert_int_equal(remedy_in_flight(e->r), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    v = jget(d, "verify");
    assert_true(json_is_object(v));
    jint(v, "free_mib", 553);
    jhas(d, "reason", "verify cut short");
    jhas(d, "reason", "the daemon stopped (free VRAM 553 MiB so far)");
    json_decref(all);
}

/* remedy_shutdown() with the eviction sent: it waits for the answer, records
 * the recycle, cuts the verify short, then reports drained. */
static void
test_stop_waits_for_eviction(void **state)
{
    struct env *e = *state;
    int drained = 0;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 300);
    start(e, NULL);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", ML_EVICT, 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 0);
    assert_int_equal(remedy_in_flight(e->r), 1);
    assert_int_equal(fake_run_until(e->base, &drained, 3000), 0);
    assert_int_equal(remedy_in_flight(e->r), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "verify cut short");
    json_decref(all);
}

/* --- Kubernetes Events ------------------------------------------------------ */

#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/" ML_NS "/events"

/* Runs the loop until n Event requests arrived (they follow the row). */
static void
wait_events(struct env *e, size_t n)
{
    long end = fake_now_ms() + 3000;

    while (count_reqs(e, "POST", EVENTS_PATH) < n && fake_now_ms() < end)
        run_ms(e->base, 10);
    run_ms(e->base, 60);
    assert_int_equal(count_reqs(e, "POST", EVENTS_PATH), n);
}

/* The request body against a real Event (tests/data/kube-event-201.json, as
 * the API server returns it): the same members, minus what the server fills
 * in, and the same fixed values. */
static void
check_event_body(const struct fake_req *r, json_t *decision, const char *reason)
{
    json_error_t je;
    json_t *body = json_loads(r->fr_body, 0, &je), *real, *meta, *reg, *rreg;
    char *data = fake_read_data("kube-event-201.json", NULL), host[256], note[4096];
    const char *k, *name, *when;
    json_t *v;

    assert_non_null(data);
    if (body == NULL)
        fail_msg("the Event body is not JSON: %s", je.text);
    assert_non_null(real = json_loads(data, 0, &je));
    free(data);
    assert_string_equal(fake_header(r, "Content-Type"), "application/json");
    /* Every member the real Event has that a client sets, and no other. */
    json_object_foreach(real, k, v)
    {
        if (strncmp(k, "deprecated", 10) == 0)
            continue;
        if (json_object_get(body, k) == NULL)
            fail_msg("the Event lacks %s: %s", k, r->fr_body);
    }
    json_object_foreach(body, k, v)
    {
        if (json_object_get(real, k) == NULL)
            fail_msg("the Event has %s, which a real one lacks", k);
    }
    jstr(body, "apiVersion", "events.k8s.io/v1");
    jstr(body, "kind", "Event");
    jstr(body, "reportingController",
         json_string_value(json_object_get(real, "reportingController")));
    jstr(body, "type", json_string_value(json_object_get(real, "type")));
    jstr(body, "reason", reason);
    jstr(body, "action", json_string_value(json_object_get(real, "action")));
    gethostname(host, sizeof(host));
    jstr(body, "reportingInstance", host);
    meta = json_object_get(body, "metadata");
    assert_int_equal(json_object_size(meta),
                     2); /* name, namespace: the rest is the server's */
    jstr(meta, "namespace", ML_NS);
    name = json_string_value(json_object_get(meta, "name"));
    assert_non_null(name);
    assert_true(strncmp(name, ML_POD ".", strlen(ML_POD) + 1) == 0);
    assert_true(strlen(name) <= 253);
    reg = json_object_get(body, "regarding");
    rreg = json_object_get(real, "regarding");
    if (!json_equal(reg, rreg))
        fail_msg("regarding differs: %s", r->fr_body);
    /* MicroTime: 2026-06-02T10:00:04.123456Z */
    when = json_string_value(json_object_get(body, "eventTime"));
    assert_non_null(when);
    assert_int_equal(strlen(when), 27);
    assert_int_equal(when[19], '.');
    assert_int_equal(when[26], 'Z');
    snprintf(note, sizeof(note), "%s (audit %lld)",
             json_string_value(json_object_get(decision, "reason")),
             (long long)json_integer_value(json_object_get(decision, "id")));
    jstr(body, "note", note);
    json_decref(real);
    json_decref(body);
}

/* gpu_vram_watchdog_events_errors_total as a scrape shows it. */
static void
check_event_errors(int want)
{
    struct buf m;
    char line[96];

    snprintf(line, sizeof(line), "\ngpu_vram_watchdog_events_errors_total %d\n", want);
    buf_init(&m, 1 << 20);
    assert_int_equal(metrics_render(&m), 0);
    if (strstr(m.b_data, line) == NULL)
        fail_msg("events_errors_total is not %d:\n%s", want, m.b_data);
    buf_free(&m);
}

/* Dry run writes the one Event enforcement would have written, on the victim. */
static void
test_event_dry_run(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {"EVENTS", "true"}, {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    metrics_init(1);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    wait_events(e, 1);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "would_recycle");
    check_event_body(req_nth(e, "POST", EVENTS_PATH, 0), json_array_get(all, 0),
                     "GPUVRAMWouldRecycle");
    json_decref(all);
    /* Written: no Event error counted. */
    check_event_errors(0);
}

/* A rate_limited decision names its victim but writes no Event (SPEC: only
 * recycled, released, would_recycle, blocked and failed do): one Event in
 * all, for the recycle before it, and no error counted. */
static void
test_event_not_for_rate_limited(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"EVENTS", "true"},
                               {"MAX_RECYCLES_PER_HOUR", "1"},
                               {"SETTLE", "0"},
                               {NULL, NULL}};
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-recovered.json");
    then_prom(e, "remedy-prom-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    metrics_init(1);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    wait_events(e, 1);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    jstr(json_array_get(all, 1), "result", "rate_limited");
    check_victim(json_array_get(all, 1), ML_NS, ML_POD, 10957, 3000, 7957);
    json_decref(all);
    wait_events(e, 1);
    check_event_errors(0);
}

/* Enforcing: GPUVRAMRecycled, after the eviction. */
static void
test_event_recycled(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"EVENTS", "true"}, {NULL, NULL}};
    const struct fake_req *ev;
    json_t *all, *body;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 8000);
    wait_events(e, 1);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "recycled");
    ev = req_nth(e, "POST", EVENTS_PATH, 0);
    assert_true(ev->fr_at_ms >= req_nth(e, "POST", ML_EVICT, 0)->fr_at_ms);
    assert_non_null(body = json_loads(ev->fr_body, 0, NULL));
    jstr(body, "reason", "GPUVRAMRecycled");
    jstr(body, "action", "evict");
    json_decref(body);
    json_decref(all);
}

/* A pod of the same name in another namespace, ranked first and refused by
 * its PodDisruptionBudget: the Event about the pod recycled names that pod's
 * UID, not its namesake's. */
static void
test_event_names_the_victims_uid(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {
        {"EVENTS", "true"}, {"GPU_TOTAL_MIB", "22000"}, {NULL, NULL}};
    char *pods_text = fake_read_data("remedy-pods-incident.json", NULL), *text, *prom;
    json_t *pods, *twin, *body, *reg;
    const char *other_evict = "/api/v1/namespaces/immich-b/pods/" ML_POD "/eviction";
    size_t cap = 4096;

    /* The pod list with a twin of the ML pod in namespace immich-b. */
    assert_non_null(pods_text);
    assert_non_null(pods = json_loads(pods_text, 0, NULL));
    free(pods_text);
    twin = json_deep_copy(json_array_get(json_object_get(pods, "items"), 0));
    json_object_set_new(json_object_get(twin, "metadata"), "namespace",
                        json_string("immich-b"));
    json_object_set_new(json_object_get(twin, "metadata"), "uid",
                        json_string("9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5dbb"));
    json_array_append_new(json_object_get(pods, "items"), twin);
    assert_non_null(text = json_dumps(pods, JSON_COMPACT));
    json_decref(pods);
    assert_int_equal(fake_route(e->fake, "GET", PODS_PATH, 200, NULL, text, 0), 0);
    free(text);
    /* The incident's series, and the twin's: 11000 MiB, 8000 over budget. */
    assert_non_null(prom = malloc(cap));
    snprintf(prom, cap,
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
             "{\"metric\":{\"namespace\":\"immich-b\",\"pod\":\"" ML_POD
             "\"},\"value\":[1,\"11534336000\"]},"
             "{\"metric\":{\"namespace\":\"" ML_NS "\",\"pod\":\"" ML_POD
             "\"},\"value\":[1,\"11489247232\"]}]}}");
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, prom, 0), 0);
    free(prom);
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "POST", other_evict, 429, "remedy-status-429-pdb.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 8000);
    wait_events(e, 1);
    assert_int_equal(count_reqs(e, "POST", other_evict), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    assert_non_null(body =
                        json_loads(req_nth(e, "POST", EVENTS_PATH, 0)->fr_body, 0, NULL));
    jstr(body, "reason", "GPUVRAMRecycled");
    reg = jget(body, "regarding");
    jstr(reg, "namespace", ML_NS);
    jstr(reg, "uid", ML_UID);
    json_decref(body);
}

/* EVENTS=false writes none; a decision without a victim writes none either. */
static void
test_event_off_and_no_victim(void **state)
{
    struct env *e = *state;
    const struct kv off[] = {{"DRY_RUN", "true"}, {"EVENTS", "false"}, {NULL, NULL}};

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    start(e, off);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    run_ms(e->base, 200);
    assert_int_equal(count_reqs(e, "POST", NULL), 1); /* the dry-run probe only */
}

static void
test_event_no_victim(void **state)
{
    struct env *e = *state;
    const struct kv on[] = {{"DRY_RUN", "true"}, {"EVENTS", "true"}, {NULL, NULL}};

    routes(e, "remedy-prom-no-candidate.json", "remedy-pods-incident.json");
    start(e, on);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    run_ms(e->base, 200);
    assert_int_equal(count_reqs(e, "POST", NULL), 0);
}

/* A decision that fails before naming a victim (the daemon stopped while it
 * gathered) writes no Event: there is no pod to write it on. */
static void
test_event_failed_without_victim(void **state)
{
    struct env *e = *state;
    const struct kv on[] = {{"EVENTS", "true"}, {NULL, NULL}};
    json_t *all;
    int drained = 0;

    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-incident.json", 3000),
                     0);
    routes(e, NULL, "remedy-pods-incident.json");
    route_file(e, "POST", EVENTS_PATH, 201, "kube-event-201.json", 0);
    start(e, on);
    deliver(e, ON_NODE);
    run_until_requests(e, "GET", QUERY_PATH, 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    run_ms(e->base, 100);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "failed");
    jnull(json_array_get(all, 0), "victim");
    json_decref(all);
    assert_int_equal(count_reqs(e, "POST", NULL), 0);
}

/* An Event the API server refuses is counted and leaves the decision alone. */
static void
test_event_refused(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"DRY_RUN", "true"}, {"EVENTS", "true"}, {NULL, NULL}};
    struct buf m;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", EVENTS_PATH, 403, "kube-status-403-nodes.json", 0);
    metrics_init(1);
    start(e, extra);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    wait_events(e, 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jnull(d, "error");
    json_decref(all);
    buf_init(&m, 1 << 20);
    assert_int_equal(metrics_render(&m), 0);
    if (strstr(m.b_data, "\ngpu_vram_watchdog_events_errors_total 1\n") == NULL)
        fail_msg("events_errors_total is not 1:\n%s", m.b_data);
    buf_free(&m);
}

/* --- 12. cooperative release (SPEC "Cooperative release") ---------------- */

#define TENANT_PATH "/tenant/unload"
#define RELEASE_KEY "gpu-vram-watchdog/release"

/* The incident's pod list with immich-ml (the victim) carrying the release
 * annotation (NULL = none), the pod IP (NULL = none) and hostNetwork. */
static void
route_pods_release(struct env *e, const char *annotation, const char *ip,
                   int host_network)
{
    char *text = fake_read_data("remedy-pods-incident.json", NULL), *out;
    json_t *doc, *item, *md, *ann;
    json_error_t jerr;
    size_t i;

    assert_non_null(text);
    if ((doc = json_loads(text, 0, &jerr)) == NULL)
        fail_msg("remedy-pods-incident.json: %s", jerr.text);
    free(text);
    json_array_foreach(json_object_get(doc, "items"), i, item)
    {
        md = json_object_get(item, "metadata");
        if (strcmp(json_string_value(json_object_get(md, "name")), ML_POD) != 0)
            continue;
        if (annotation != NULL) {
            if ((ann = json_object_get(md, "annotations")) == NULL) {
                ann = json_object();
                json_object_set_new(md, "annotations", ann);
            }
            json_object_set_new(ann, RELEASE_KEY, json_string(annotation));
        }
        if (ip != NULL)
            json_object_set_new(json_object_get(item, "status"), "podIP",
                                json_string(ip));
        else
            json_object_del(json_object_get(item, "status"), "podIP");
        json_object_set_new(json_object_get(item, "spec"), "hostNetwork",
                            json_boolean(host_network));
    }
    assert_non_null(out = json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    assert_int_equal(fake_route(e->fake, "GET", PODS_PATH, 200, NULL, out, 0), 0);
    free(out);
}

/* "PORT/tenant/unload" for the fake, which also plays the tenant on loopback. */
static const char *
tenant_annotation(struct env *e)
{
    static char v[64];

    snprintf(v, sizeof(v), "%d" TENANT_PATH, fake_port(e->fake));
    return v;
}

static const char *
tenant_url(struct env *e)
{
    static char v[96];

    snprintf(v, sizeof(v), "http://127.0.0.1:%d" TENANT_PATH, fake_port(e->fake));
    return v;
}

static const struct kv release_env[] = {
    {"RELEASE_WAIT", "2s"},
    {"SETTLE", "1s"},
    {NULL, NULL},
};
#define RELEASE_WAIT_MS 2000L

/* Runs one enforcing decision on the incident whose victim declares the
 * release; returns it (the caller decrefs *all). Asserts it ended within
 * RELEASE_WAIT + 5 s, the bound the ask has. */
static json_t *
release_decision(struct env *e, const struct kv *env, json_t **all)
{
    long t0;

    start(e, env ? env : release_env);
    t0 = fake_now_ms();
    deliver(e, ON_NODE);
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000 + 5000);
    *all = decisions(e);
    assert_int_equal(json_array_size(*all), 1);
    if (count_reqs(e, "POST", ML_EVICT) > 0 &&
        req_nth(e, "POST", ML_EVICT, 0)->fr_at_ms - t0 > RELEASE_WAIT_MS + 5000)
        fail_msg("the eviction came %ld ms after the trigger",
                 req_nth(e, "POST", ML_EVICT, 0)->fr_at_ms - t0);
    return json_array_get(*all, 0);
}

static json_t *
release_obj(json_t *d)
{
    json_t *r = jget(d, "release");

    if (!json_is_object(r))
        fail_msg("release is not an object");
    return r;
}

/* The tenant frees in time: released, nothing recycled, no verify; the ask
 * is in the audit with its status, what it freed and how long it took. */
static void
test_release_frees(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;
    const struct fake_req *post;

    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    check_shape(d);
    jstr(d, "result", "released");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jnull(d, "verify");
    jnull(d, "error");
    jhas(d, "reason", "asked to release first; free VRAM back to 11510 MiB");
    jhas(d, "reason", "nothing was recycled");
    r = release_obj(d);
    jstr(r, "url", tenant_url(e));
    jint(r, "status", 200);
    jint(r, "freed_mib", 11510 - 553);
    assert_true(json_is_number(jget(r, "seconds")));
    assert_true(json_number_value(jget(r, "seconds")) < 2.0);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 1);
    /* No credentials, no body to speak of. */
    post = req_nth(e, "POST", TENANT_PATH, 0);
    assert_null(fake_header(post, "Authorization"));
    assert_int_equal(post->fr_body_len, 0);
    json_decref(all);
}

/* Free back to the floor exactly after the release is enough (SPEC: until
 * free >= floor): released, nothing recycled. */
static void
test_release_frees_to_the_floor(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-at-floor.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "released");
    jhas(d, "reason", "asked to release first; free VRAM back to 1536 MiB");
    jint(release_obj(d), "freed_mib", 1536 - 553);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* The tenant answers 200 and Prometheus' pod series say the VRAM is back
 * (computed 11510 MiB), but the device series the decision judged have
 * vanished: that is not a release. It is recycled after RELEASE_WAIT, and
 * the reason says why. */
static void
test_release_device_vanished(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;

    start(e, release_env);
    device_then_vanished(e);
    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000 + 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(d, "free_source", "device");
    r = release_obj(d);
    jint(r, "status", 200);
    jnull(r, "freed_mib");
    jhas(d, "reason",
         "free VRAM could not be read back within RELEASE_WAIT (2.0s): the "
         "device series of the node vanished after the decision");
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

/* HA: a gate standing in for the Lease, whose fence waits until the test
 * grants it. */
static struct {
    gate_fence_fn cb;
    void *arg;
    char verb[16];
} rg;

static int
rg_leading(void *a)
{
    (void)a;
    return 1;
}

static struct gate_wait *
rg_fence(const struct gate_act *act, gate_fence_fn cb, void *arg, char *why, size_t len,
         void *a)
{
    (void)why;
    (void)len;
    (void)a;
    snprintf(rg.verb, sizeof(rg.verb), "%s", act->ga_verb);
    rg.cb = cb;
    rg.arg = arg;
    return (struct gate_wait *)&rg; /* a token; never dereferenced by the engine */
}

static void
rg_forget(struct gate_wait *w, void *a)
{
    (void)w;
    (void)a;
    rg.cb = NULL;
}

/* The harness's teardown, the gate taken away first. */
static int
gate_teardown(void **state)
{
    gate_install(NULL);
    return env_teardown(state);
}

/* With a Lease, the ask waits for its fence; granted, it is sent, and the
 * tenant's release ends the decision. */
static void
test_release_after_fence(void **state)
{
    struct env *e = *state;
    struct gate_ops ops = {rg_leading, rg_fence, rg_forget, NULL};
    json_t *all, *d;

    memset(&rg, 0, sizeof(rg));
    gate_install(&ops);
    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, release_env);
    deliver(e, ON_NODE);
    for (int i = 0; i < 300 && rg.cb == NULL; i++)
        run_ms(e->base, 10);
    assert_non_null(rg.cb);
    assert_string_equal(rg.verb, "release");
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 0); /* not before the Lease */
    rg.cb(1, 0, NULL, rg.arg);
    rg.cb = NULL;
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000);
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "released");
    jint(release_obj(d), "status", 200);
    json_decref(all);
}

/* The same, and every later re-read fails: the reason still says the series
 * vanished (a failed read is no news about them). */
static void
test_release_device_vanished_then_fails(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    start(e, release_env);
    device_then_vanished(e);
    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_file(e, "GET", QUERY_PATH, 500, "remedy-status-500.json", 0);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000 + 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jhas(d, "reason",
         "free VRAM could not be read back within RELEASE_WAIT (2.0s): the "
         "device series of the node vanished after the decision");
    json_decref(all);
}

/* The tenant frees everything it held (its process exits: no used series at
 * all on the node), and the device says the VRAM is back: released, not
 * recycled for lack of pod series. */
static void
test_release_only_user_gone(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;

    start(e, release_env);
    device_then_only_user_gone(e);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000 + 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "released");
    jstr(d, "free_source", "device");
    r = release_obj(d);
    jint(r, "status", 200);
    jint(r, "freed_mib", 12000 - 400);
    jhas(d, "reason", "free VRAM back to 12000 MiB");
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* A release that freed the VRAM tells the tenant: GPUVRAMReleased, action
 * release (nothing was evicted). */
static void
test_event_released(void **state)
{
    struct env *e = *state;
    const struct kv env[] = {
        {"RELEASE_WAIT", "2s"}, {"SETTLE", "1s"}, {"EVENTS", "true"}, {NULL, NULL}};
    json_t *all, *d, *body;

    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", "/apis/events.k8s.io/v1/namespaces/" ML_NS "/events", 201,
               "kube-event-201.json", 0);
    d = release_decision(e, env, &all);
    jstr(d, "result", "released");
    wait_events(e, 1);
    body = json_loads(req_nth(e, "POST", EVENTS_PATH, 0)->fr_body, 0, NULL);
    assert_non_null(body);
    jstr(body, "reason", "GPUVRAMReleased");
    jstr(body, "action", "release");
    jstr(jget(body, "regarding"), "uid", ML_UID);
    jhas(body, "note", "nothing was recycled");
    json_decref(body);
    json_decref(all);
}

/* A released decision opens no SETTLE window and is not counted by the
 * hourly brake: with MAX_RECYCLES_PER_HOUR=1 the next trigger still acts. */
static void
test_release_no_brakes(void **state)
{
    struct env *e = *state;
    const struct kv env[] = {
        {"RELEASE_WAIT", "2s"},
        {"SETTLE", "60s"},
        {"MAX_RECYCLES_PER_HOUR", "1"},
        {NULL, NULL},
    };
    json_t *all;

    /* Decision 1: gather, then the release poll sees the memory back. Decision
     * 2: gather, then the tenant answers 500, so it recycles. */
    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    then_prom(e, "remedy-prom-incident.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 500, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, env);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 10000);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", ML_EVICT, 1);
    run_ms(e->base, 100);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    jstr(json_array_get(all, 0), "result", "released");
    jstr(json_array_get(all, 1), "result", "recycled");
    jint(release_obj(json_array_get(all, 1)), "status", 500);
    json_decref(all);
    /* Its verify runs until SETTLE (60 s): stop it now. */
    remedy_shutdown(e->r, NULL, NULL);
}

/* The hourly brake is looked at again when a release fails: while node 1's
 * victim was asked (and did not free), node 2's decision recycled and filled
 * the hour (MAX_RECYCLES_PER_HOUR=1). Node 1's decision ends rate_limited and
 * evicts nothing; without the second look the hour would hold two. */
static void
test_release_hour_filled_meanwhile(void **state)
{
    struct env *e = *state;
    const struct kv env[] = {
        {"RELEASE_WAIT", "3s"},
        {"SETTLE", "1s"},
        {"MAX_RECYCLES_PER_HOUR", "1"},
        {NULL, NULL},
    };
    json_t *all, *d;

    /* Every reading the incident's (nothing frees); node 1's tenant answers
     * 200 and frees nothing, node 2's answers 500, so node 2 recycles at once. */
    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 500, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, env);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", TENANT_PATH, 1);
    deliver(e, "\"node\":\"gpu-node-2\"");
    run_until_requests(e, "POST", ML_EVICT, 1);
    all = decisions(e); /* the hour filled while node 1 still waits */
    jstr(json_array_get(all, 0), "result", "in_progress");
    json_decref(all);
    wait_rows(e, 2, 3000 + 5000);

    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 2);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    d = json_array_get(all, 1);
    jstr(d, "node", "gpu-node-2");
    jstr(d, "result", "recycled");
    jint(release_obj(d), "status", 500);
    d = json_array_get(all, 0);
    jstr(d, "node", NODE);
    jstr(d, "result", "rate_limited");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason", "asked to release first, but the release did not free enough");
    jhas(d, "reason", "MAX_RECYCLES_PER_HOUR=1 reached meanwhile; not acting");
    jint(release_obj(d), "status", 200);
    jnull(d, "verify");
    json_decref(all);
}

/* The tenant answers 200 but never frees: after RELEASE_WAIT it is recycled
 * as usual, and the reason says the release did not free enough. */
static void
test_release_never_frees(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jhas(d, "reason",
         "the release did not free enough: free VRAM still 553 MiB, below "
         "the floor, after RELEASE_WAIT (2.0s)");
    jhas(d, "reason", "evicted " ML_NS "/" ML_POD);
    r = release_obj(d);
    jint(r, "status", 200);
    jint(r, "freed_mib", 0);
    assert_true(json_number_value(jget(r, "seconds")) >= 2.0);
    assert_true(json_number_value(jget(r, "seconds")) < 2.0 + 5.0);
    assert_true(json_is_object(jget(d, "verify")));
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    /* Re-verified about every second meanwhile, never more than asked once. */
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 1);
    json_decref(all);
}

/* A non-2xx answer ends the wait at once. */
static void
test_release_500(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(
        fake_route(e->fake, "POST", TENANT_PATH, 500, "text/plain", "boom", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "the release did not free enough: the tenant answered HTTP 500");
    r = release_obj(d);
    jint(r, "status", 500);
    jnull(r, "freed_mib");
    assert_true(json_number_value(jget(r, "seconds")) < 1.0);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

/* Any 2xx is an answer that counts, 299 too: free is then read, and back. */
static void
test_release_299(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", NULL);
    then_prom(e, "remedy-prom-recovered.json");
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 299, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "released");
    jint(release_obj(d), "status", 299);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* The tenant hangs past the 5 s timeout: no status, and it is recycled. */
static void
test_release_hangs(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 8000), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "the tenant did not answer");
    r = release_obj(d);
    jnull(r, "status");
    jnull(r, "freed_mib");
    assert_true(json_number_value(jget(r, "seconds")) >= 4.5);
    assert_true(json_number_value(jget(r, "seconds")) < 6.0);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

/* A tenant that accepts the connection and closes it at once. */
static void
accept_close_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                int len, void *arg)
{
    (*(int *)arg)++;
    evutil_closesocket(fd);
}

static void
test_release_closes(void **state)
{
    struct env *e = *state;
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct evconnlistener *l;
    socklen_t slen = sizeof(sin);
    char annotation[64];
    int accepted = 0;
    json_t *all, *d, *r;

    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_non_null(l = evconnlistener_new_bind(e->base, accept_close_cb, &accepted,
                                                LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                                -1, (struct sockaddr *)&sin,
                                                sizeof(sin)));
    assert_int_equal(
        getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sin, &slen), 0);
    snprintf(annotation, sizeof(annotation), "%d/unload", ntohs(sin.sin_port));
    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, annotation, "127.0.0.1", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    evconnlistener_free(l);
    assert_int_equal(accepted, 1);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "the tenant did not answer");
    r = release_obj(d);
    jnull(r, "status");
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

/* A redirect is not followed: the 3xx is the answer, and it is recycled. */
static void
test_release_redirect(void **state)
{
    struct env *e = *state;
    char elsewhere[96];
    json_t *all, *d, *r;

    snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", fake_url(e->fake));
    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route_redirect(e->fake, NULL, TENANT_PATH, 307, elsewhere), 0);
    assert_int_equal(fake_route(e->fake, NULL, "/elsewhere", 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, NULL, &all);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "the tenant answered HTTP 307");
    r = release_obj(d);
    jint(r, "status", 307);
    assert_int_equal(count_reqs(e, NULL, "/elsewhere"), 0);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(all);
}

/* Dry run records the release it would ask and asks nothing. */
static void
test_release_dry_run(void **state)
{
    struct env *e = *state;
    const struct kv env[] = {{"RELEASE_WAIT", "2s"}, {"DRY_RUN", "true"}, {NULL, NULL}};
    json_t *all, *d, *r;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    d = release_decision(e, env, &all);
    jstr(d, "result", "would_recycle");
    jhas(d, "reason", "DRY_RUN: would first ask " ML_NS "/" ML_POD " to release");
    r = release_obj(d);
    jstr(r, "url", tenant_url(e));
    jnull(r, "status");
    jnull(r, "freed_mib");
    jnull(r, "seconds");
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 0);
    json_decref(all);
}

/* Not asked: a malformed annotation (said in the reason), the host network,
 * no pod IP, RELEASE_WAIT=0. Each recycles as usual with release null. */
static void
test_release_not_asked(void **state)
{
    static const struct {
        const char *annotation, *ip;
        int host_network;
        const char *wait, *why;
    } cases[] = {
        {"http://evil.example/unload", "127.0.0.1", 0, "2s",
         RELEASE_KEY " on " ML_NS "/" ML_POD " is not PORT/PATH (it names a scheme"},
        {"8080/../admin", "127.0.0.1", 0, "2s",
         "is not PORT/PATH (the path contains '..')"},
        {"8080@evil/x", "127.0.0.1", 0, "2s", "(it contains '@'"},
        {NULL, "127.0.0.1", 1, "2s", "runs on the host network, so it was not asked"},
        {NULL, NULL, 0, "2s", "was not asked to release: the pod has no IP"},
        {NULL, "127.0.0.1", 0, "0", NULL},
    };
    struct env *e = *state;
    json_t *all, *d;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct kv env[] = {{"RELEASE_WAIT", cases[i].wait}, {NULL, NULL}};
        fake_clear(e->fake);
        routes(e, "remedy-prom-incident.json", NULL);
        route_pods_release(
            e, cases[i].annotation ? cases[i].annotation : tenant_annotation(e),
            cases[i].ip, cases[i].host_network);
        assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
        route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
        d = release_decision(e, env, &all);
        jstr(d, "result", "recycled");
        jnull(d, "release");
        if (cases[i].why != NULL)
            jhas(d, "reason", cases[i].why);
        else if (strstr(json_string_value(jget(d, "reason")), "release") != NULL)
            fail_msg("RELEASE_WAIT=0 still speaks of a release: %s",
                     json_string_value(jget(d, "reason")));
        assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 0);
        assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
        json_decref(all);
        engine_stop(e);
        unlink(e->db);
    }
}

/* While it waits, the node's brakes hold (a trigger coalesces), and the row
 * already names the victim and the ask; a stop then completes it. */
static void
test_release_wait_holds_node(void **state)
{
    struct env *e = *state;
    const struct kv env[] = {{"RELEASE_WAIT", "20s"}, {NULL, NULL}};
    json_t *all, *d, *r;
    int drained = 0;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, env);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", TENANT_PATH, 1);
    run_ms(e->base, 300);
    deliver(e, ON_NODE);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    d = json_array_get(all, 0);
    jstr(d, "result", "in_progress");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jstr(release_obj(d), "url", tenant_url(e));
    jstr(json_array_get(all, 1), "result", "coalesced");
    json_decref(all);

    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    jstr(d, "error", STORE_INTERRUPTED_ERROR);
    jhas(d, "reason",
         "the daemon stopped while waiting for the release; nothing was recycled");
    r = release_obj(d);
    jint(r, "status", 200);
    assert_true(json_is_number(jget(r, "seconds")));
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* A stop while the POST itself is in flight: completed at once, no status
 * yet; the POST is abandoned without a leak (the sanitizer run checks). */
static void
test_release_stop_mid_post(void **state)
{
    struct env *e = *state;
    json_t *all, *d, *r;
    int drained = 0;

    routes(e, "remedy-prom-incident.json", NULL);
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 3000), 0);
    start(e, release_env);
    deliver(e, ON_NODE);
    run_until_requests(e, "POST", TENANT_PATH, 1);
    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "failed");
    r = release_obj(d);
    jnull(r, "status");
    jnull(r, "freed_mib");
    json_decref(all);
}

static int
group_setup(void **state)
{
    const char *v = getenv("GVW_TEST_VERBOSE");

    log_init(LOG_FORMAT_TEXT, v && *v ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
    metrics_init(0);
    return 0;
}

static int
group_teardown(void **state)
{
    metrics_cleanup();
    return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, env_teardown)

/* --- 10. GPU scope: a node with two GPUs ----------------------------------- */

#define GPU_USED_QUERY                                                                   \
    "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"
#define GPU_A "GPU-aaaa"
#define GPU_B "GPU-bbbb"
#define ON_GPU_A ON_NODE ",\"uuid\":\"" GPU_A "\""
#define ON_GPU_B ON_NODE ",\"uuid\":\"" GPU_B "\""

/* One used series: pod NULL = host memory; mib < 0 = NaN. */
struct gseries {
    const char *ns, *pod, *gpu;
    double mib;
};

/* Routes one Prometheus answer holding these series (as the exporter's
 * USED_QUERY would give them). */
static void
then_gpu_prom(struct env *e, const struct gseries *gs, size_t n)
{
    char body[8192], metric[256], value[64];
    size_t off = 0;

    off += (size_t)snprintf(body, sizeof(body),
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (size_t i = 0; i < n; i++) {
        if (gs[i].pod != NULL)
            snprintf(metric, sizeof(metric),
                     "\"namespace\":\"%s\",\"pod\":\"%s\",\"uuid\":\"%s\"", gs[i].ns,
                     gs[i].pod, gs[i].gpu);
        else
            snprintf(metric, sizeof(metric), "\"uuid\":\"%s\"", gs[i].gpu);
        if (gs[i].mib < 0)
            snprintf(value, sizeof(value), "NaN");
        else
            snprintf(value, sizeof(value), "%.0f", gs[i].mib * 1048576.0);
        off += (size_t)snprintf(body + off, sizeof(body) - off,
                                "%s{\"metric\":{%s},\"value\":[1780394400,\"%s\"]}",
                                i ? "," : "", metric, value);
    }
    snprintf(body + off, sizeof(body) - off, "]}}");
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
}

/* GPU A: immich-ml +7957 MiB over budget, free 553. GPU B: frigate +500,
 * free 510 (below) or 11010 (b_healthy). */
static void
two_gpus(struct env *e, int b_healthy)
{
    const struct gseries gs[] = {
        {ML_NS, ML_POD, GPU_A, 10957},
        {"llama-swap", LS_POD, GPU_A, 1100},
        {NULL, NULL, GPU_A, 2750},
        {FR_NS, FR_POD, GPU_B, 2500},
        {"immich", SV_POD, GPU_B, 900},
        {"portal-stt", ST_POD, GPU_B, 450},
        {NULL, NULL, GPU_B, b_healthy ? 1500 : 11000},
    };

    then_gpu_prom(e, gs, sizeof(gs) / sizeof(gs[0]));
}

static const struct kv gpu_dry[] = {
    {"DRY_RUN", "true"}, {"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}};

/* The alert names GPU B: one decision, about GPU B, among its users only,
 * though GPU A holds the bigger offender and is short too. */
static void
test_gpu_alert_names_gpu(void **state)
{
    struct env *e = *state;
    json_t *all, *d;
    struct buf b;

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, gpu_dry);
    metrics_init(1);
    deliver(e, ON_GPU_B);
    wait_rows(e, 1, 5000);

    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 1); /* the dry-run probe */
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    check_shape(d);
    jstr(d, "gpu", GPU_B);
    jnull(d, "release");
    jstr(d, "result", "would_recycle");
    jint(d, "free_mib", 510);
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    assert_int_equal(json_array_size(jget(d, "candidates")), 3);
    check_candidate(d, "immich", SV_POD, 900, 1800, "within_budget");
    jhas(d, "reason", "free 510 MiB on GPU " GPU_B " < floor 1536 MiB");
    json_decref(all);

    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    if (strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE
                         "\",gpu=\"" GPU_B "\"} 534773760\n") == NULL)
        fail_msg("no per-GPU free VRAM in:\n%s", b.b_data);
    buf_free(&b);
    metrics_cleanup();
}

/* An alert naming a GPU but no node: every GPU node is looked at, each
 * about that GPU only. */
static void
test_gpu_alert_no_node(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    route_file(e, "GET", NODES_PATH, 200, "remedy-nodes.json", 0);
    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, gpu_dry);
    deliver(e, "\"uuid\":\"" GPU_B "\"");
    wait_rows(e, 2, 5000);
    assert_int_equal(count_reqs(e, "GET", NODES_PATH), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    for (size_t i = 0; i < 2; i++) {
        d = json_array_get(all, i);
        jhas(d, "node", "gpu-node-");
        jstr(d, "gpu", GPU_B);
        jstr(d, "result", "would_recycle");
        check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    }
    json_decref(all);
}

/* No GPU label: one decision (and row) per GPU below the floor, from one
 * query; each names its GPU and its own victim. */
static void
test_gpu_fan_out(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, gpu_dry);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);

    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    assert_int_equal(count_reqs(e, "GET", PODS_PATH), 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "would_recycle");
    jint(d, "free_mib", 553);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    assert_int_equal(json_array_size(jget(d, "candidates")), 2);
    d = json_array_get(all, 1);
    jstr(d, "gpu", GPU_B);
    jstr(d, "result", "would_recycle");
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    jint(d, "id", json_integer_value(jget(json_array_get(all, 0), "id")) + 1);
    json_decref(all);
}

/* The queue gauge as a scrape shows it. */
static long
queued_now(void)
{
    const char *name = "\ngpu_vram_watchdog_decisions_queued ";
    struct buf b;
    const char *p;
    long v = -1;

    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    if ((p = strstr(b.b_data, name)) != NULL)
        v = strtol(p + strlen(name), NULL, 10);
    buf_free(&b);
    return v;
}

/* MAX_CONCURRENT_DECISIONS holds for one node's GPUs: with one slot, GPU A is
 * decided from the node's reading while GPU B waits its turn (the gauge shows
 * it), then re-verifies on its own: never two in flight, both rows finished. */
static void
test_gpu_fan_out_queued(void **state)
{
    struct env *e = *state;
    const struct kv one_slot[] = {{"DRY_RUN", "true"},
                                  {"USED_QUERY", GPU_USED_QUERY},
                                  {"MAX_CONCURRENT_DECISIONS", "1"},
                                  {NULL, NULL}};
    long end, queued_max = 0;
    json_t *all, *d;
    size_t n[2];

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, one_slot);
    metrics_init(1);
    deliver(e, ON_NODE);
    end = fake_now_ms() + 5000;
    for (;;) {
        long q = queued_now();

        queued_max = q > queued_max ? q : queued_max;
        assert_true(remedy_in_flight(e->r) <= 1);
        count_rows(e, n);
        if ((n[0] == 2 && remedy_in_flight(e->r) == 0) || fake_now_ms() >= end)
            break;
        event_base_loop(e->base, EVLOOP_ONCE);
    }
    assert_int_equal(n[0], 2);
    assert_int_equal(queued_max, 1);
    assert_int_equal(queued_now(), 0);
    /* GPU B looked again when its turn came: a second query. */
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 2);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "would_recycle");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    d = json_array_get(all, 1);
    jstr(d, "gpu", GPU_B);
    jstr(d, "result", "would_recycle");
    jint(d, "free_mib", 510);
    check_victim(d, FR_NS, FR_POD, 2500, 2000, 500);
    json_decref(all);
    metrics_cleanup();
}

/* No GPU below the floor: one skipped_recovered row, gpu null. */
static void
test_gpu_none_below(void **state)
{
    struct env *e = *state;
    const struct gseries gs[] = {{ML_NS, ML_POD, GPU_A, 5000},
                                 {FR_NS, FR_POD, GPU_B, 2500},
                                 {NULL, NULL, GPU_B, 10000}};
    json_t *all, *d;

    then_gpu_prom(e, gs, 3);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    start(e, gpu_dry);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_recovered");
    jnull(d, "gpu");
    check_no_victim(d);
    jint(d, "free_mib", 2860);          /* the least free GPU */
    jstr(d, "free_source", "computed"); /* that GPU's figure, and where it came from */
    jhas(d, "reason", "on every GPU (2; the least free is " GPU_B);
    jhas(d, "reason",
         "nothing to do; free computed as GPU_TOTAL_MIB=15360 - used (GPU " GPU_B
         " has no device series)");
    assert_int_equal(count_mutating(e), 0);
    json_decref(all);
}

/* The least free GPU is named, whatever its place: the first of three (a
 * tie with the last goes to the first seen). */
static void
test_gpu_none_below_least_first(void **state)
{
    struct env *e = *state;
    const struct gseries gs[] = {{ML_NS, ML_POD, GPU_A, 12500},
                                 {FR_NS, FR_POD, GPU_B, 5000},
                                 {"immich", SV_POD, "GPU-cccc", 12500}};
    json_t *all, *d;

    then_gpu_prom(e, gs, 3);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    start(e, gpu_dry);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_recovered");
    jint(d, "free_mib", 2860);
    jhas(d, "reason", "on every GPU (3; the least free is " GPU_A " at 2860 MiB)");
    json_decref(all);
}

/* GPU scope, a FREE_QUERY naming no $gpu: each GPU is judged on its answer. */
static void
test_gpu_free_query_node_wide(void **state)
{
    struct env *e = *state;
    json_t *all;

    two_gpus(e, 0);
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                   "\"result\":[{\"metric\":{},\"value\":[1,\"900\"]}]}}",
                   0),
        0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"},
                                 {"USED_QUERY", GPU_USED_QUERY},
                                 {"FREE_QUERY", "node_free_mib{node=\"$node\"}"},
                                 {NULL, NULL}});
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    jstr(json_array_get(all, 0), "gpu", GPU_A);
    jstr(json_array_get(all, 0), "free_source", "query");
    jint(json_array_get(all, 0), "free_mib", 900);
    jstr(json_array_get(all, 0), "result", "would_recycle");
    json_decref(all);
}

/* One GPU's impossible reading: that GPU is skipped_telemetry, the other
 * decides. */
static void
test_gpu_impossible_one(void **state)
{
    struct env *e = *state;
    const struct gseries gs[] = {{ML_NS, ML_POD, GPU_A, 10957},
                                 {NULL, NULL, GPU_A, 3850},
                                 {FR_NS, FR_POD, GPU_B, -1},
                                 {"immich", SV_POD, GPU_B, 900}};
    json_t *all, *d;

    then_gpu_prom(e, gs, 4);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, gpu_dry);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "would_recycle");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    d = json_array_get(all, 1);
    jstr(d, "gpu", GPU_B);
    jstr(d, "result", "skipped_telemetry");
    jnull(d, "free_mib");
    jhas(d, "reason", "for " FR_NS "/" FR_POD ", which cannot be true");
    jhas(d, "error", "cannot be true");
    json_decref(all);
}

/* Brakes per (node, GPU): a GPU's SETTLE holds back that GPU only; a trigger
 * naming no GPU coalesces per GPU once the query named them; in flight too. */
static void
test_gpu_brakes(void **state)
{
    struct env *e = *state;
    json_t *all, *d;
    struct store_filter f = {.sf_gpu = GPU_A};
    size_t n[2] = {0, 0};
    char err[256];

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"},
                                 {"USED_QUERY", GPU_USED_QUERY},
                                 {"SETTLE", "1h"},
                                 {NULL, NULL}});
    deliver(e, ON_GPU_A);
    deliver(e, ON_GPU_A); /* in flight: coalesced at once */
    wait_rows(e, 2, 5000);
    deliver(e, ON_NODE); /* GPU A settling, GPU B decides */
    wait_rows(e, 4, 5000);
    deliver(e, ON_GPU_B); /* now GPU B settles too: no query */
    wait_rows(e, 5, 5000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);

    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "would_recycle");
    d = json_array_get(all, 1);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "a decision for " NODE " GPU " GPU_A " is already in flight");
    /* the node-wide trigger: its row went to GPU A (coalesced), GPU B got one */
    d = json_array_get(all, 2);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "coalesced");
    jhas(d, "reason",
         "inside the SETTLE window after DRY_RUN would have recycled " ML_NS "/" ML_POD);
    d = json_array_get(all, 3);
    jstr(d, "gpu", GPU_B);
    jstr(d, "result", "would_recycle");
    d = json_array_get(all, 4);
    jstr(d, "gpu", GPU_B);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "after DRY_RUN would have recycled " FR_NS "/" FR_POD);
    json_decref(all);

    /* audit --gpu: only GPU A's rows */
    assert_int_equal(
        store_query_decisions(e->store, &f, count_rows_cb, n, err, sizeof(err)), 3);
}

/* MAX_RECYCLES_PER_HOUR stays global: two GPUs below, one recycle. */
static void
test_gpu_hourly_global(void **state)
{
    struct env *e = *state;
    json_t *all;

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"},
                                 {"USED_QUERY", GPU_USED_QUERY},
                                 {"MAX_RECYCLES_PER_HOUR", "1"},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    assert_int_equal(count_result(all, "would_recycle"), 1);
    assert_int_equal(count_result(all, "rate_limited"), 1);
    json_decref(all);
}

/* Enforcing, both GPUs short at once, one seat left in the hour: the two
 * evictions would be in flight together, but the first holds the seat, so
 * only one pod is evicted and the other decision is rate_limited. */
static void
test_gpu_hourly_global_enforcing(void **state)
{
    struct env *e = *state;
    json_t *all;

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 300);
    route_file(e, "POST", FR_EVICT, 201, "remedy-status-201.json", 300);
    start(e, (const struct kv[]){{"DRY_RUN", "false"},
                                 {"SETTLE", "200ms"},
                                 {"USED_QUERY", GPU_USED_QUERY},
                                 {"MAX_RECYCLES_PER_HOUR", "1"},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    assert_int_equal(count_result(all, "recycled"), 1);
    assert_int_equal(count_result(all, "rate_limited"), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT) + count_reqs(e, "POST", FR_EVICT),
                     1);
    json_decref(all);
}

/* Enforcing on one GPU: evicted, and verified on that GPU's free VRAM. */
static void
test_gpu_recycle_verify(void **state)
{
    struct env *e = *state;
    const struct gseries after[] = {{"llama-swap", LS_POD, GPU_A, 1100},
                                    {NULL, NULL, GPU_A, 2750},
                                    {FR_NS, FR_POD, GPU_B, 2500},
                                    {NULL, NULL, GPU_B, 12000}};
    json_t *all, *d;

    two_gpus(e, 0);
    then_gpu_prom(e, after, 4);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}});
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "recycled");
    /* GPU B is still short, but this decision is about GPU A */
    jint(jget(d, "verify"), "free_mib", 15360 - 1100 - 2750);
    json_decref(all);
}

/* The device query's answer for GPUs A and B of 15360 MiB: their free MiB. */
static void
then_gpu_device(struct env *e, long long free_a, long long free_b)
{
    char body[2048], part[2][640];
    const char *gpu[2] = {GPU_A, GPU_B};
    long long mib[2] = {free_a, free_b};

    for (int i = 0; i < 2; i++)
        snprintf(part[i], sizeof(part[i]),
                 "{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\",\"node\":\"" NODE
                 "\",\"uuid\":\"%s\"},\"value\":[1780394400,\"%lld\"]},"
                 "{\"metric\":{\"__name__\":\"gpu_memory_total_bytes\",\"node\":\"" NODE
                 "\",\"uuid\":\"%s\"},\"value\":[1780394400,\"16106127360\"]},"
                 "{\"metric\":{\"gvw_ts\":\"device\",\"node\":\"" NODE
                 "\",\"uuid\":\"%s\"},\"value\":[1780394400,\"1780394400\"]}",
                 gpu[i], mib[i] * 1048576, gpu[i], gpu[i]);
    snprintf(body, sizeof(body),
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
             "%s,%s]}}",
             part[0], part[1]);
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200, body),
                     0);
}

/* The recycle emptied the node of pod series (the used query answers none):
 * the verify still reads GPU A's own device figure, not the node's sum and
 * not "nothing read back". */
static void
test_gpu_verify_only_user_gone(void **state)
{
    struct env *e = *state;
    const struct gseries before[] = {{ML_NS, ML_POD, GPU_A, 10957}};
    json_t *all, *d, *v;

    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}});
    fake_clear(e->fake); /* start()'s "no device series" answer goes */
    then_gpu_device(e, 400, 500);
    then_gpu_device(e, 12000, 500);
    then_gpu_prom(e, before, 1);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, PROM_NO_SERIES, 0),
                     0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "recycled");
    jstr(d, "free_source", "device");
    jint(d, "free_mib", 400);
    v = jget(d, "verify");
    if (!json_is_object(v))
        fail_msg("verify is not an object: %s", json_string_value(jget(d, "reason")));
    jint(v, "free_mib", 12000);
    json_decref(all);
}

/* A release in GPU scope: the gauge it leaves is that GPU's ({node,gpu}),
 * never a node-wide series beside the per-GPU ones. */
static void
test_gpu_release_gauge(void **state)
{
    struct env *e = *state;
    const struct gseries after[] = {
        {ML_NS, ML_POD, GPU_A, 957},    {"llama-swap", LS_POD, GPU_A, 1100},
        {NULL, NULL, GPU_A, 2750},      {FR_NS, FR_POD, GPU_B, 2500},
        {"immich", SV_POD, GPU_B, 900}, {"portal-stt", ST_POD, GPU_B, 450},
        {NULL, NULL, GPU_B, 11000}};
    json_t *all, *d;
    struct buf b;

    two_gpus(e, 0);
    then_gpu_prom(e, after, sizeof(after) / sizeof(after[0]));
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    start(e, (const struct kv[]){
                 {"USED_QUERY", GPU_USED_QUERY}, {"RELEASE_WAIT", "2s"}, {NULL, NULL}});
    metrics_init(0);
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, RELEASE_WAIT_MS + 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "released");
    json_decref(all);
    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    if (strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE
                         "\",gpu=\"" GPU_A "\"} 11065622528\n") == NULL)
        fail_msg("GPU A's gauge is not the released 10553 MiB:\n%s",
                 strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{"));
    if (strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE "\"}") != NULL)
        fail_msg("a node-wide gauge in GPU scope:\n%s",
                 strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{"));
    buf_free(&b);
    metrics_cleanup();
}

/* FREE_QUERY with $gpu: asked per GPU, after the used series named them. */
static void
test_gpu_free_query(void **state)
{
    struct env *e = *state;
    const struct fake_req *r;
    json_t *all;
    char *q;

    two_gpus(e, 0);
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                   "\"result\":[{\"metric\":{},\"value\":[1,\"900\"]}]}}",
                   0),
        0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e,
          (const struct kv[]){
              {"DRY_RUN", "true"},
              {"USED_QUERY", GPU_USED_QUERY},
              {"FREE_QUERY", "gpu_memory_free_bytes{node=\"$node\",uuid=\"$gpu\"}/2^20"},
              {NULL, NULL}});
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    r = req_nth(e, "GET", QUERY_PATH, 1);
    q = fake_query_param(r, "query");
    assert_string_equal(q, "gpu_memory_free_bytes{node=\"" NODE "\",uuid=\"" GPU_A
                           "\"}/2^20");
    free(q);
    all = decisions(e);
    jint(json_array_get(all, 0), "free_mib", 900);
    jstr(json_array_get(all, 0), "gpu", GPU_A);
    json_decref(all);
}

/* GPU_LABEL="" turns GPU scope off: the same labelled series are one node. */
static void
test_gpu_label_off(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    two_gpus(e, 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"},
                                 {"USED_QUERY", GPU_USED_QUERY},
                                 {"GPU_LABEL", ""},
                                 {"GPU_TOTAL_MIB", "30720"},
                                 {NULL, NULL}});
    deliver(e, ON_GPU_B);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jnull(d, "gpu");
    jint(d, "free_mib", 30720 - 10957 - 1100 - 2750 - 2500 - 900 - 450 - 11000);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    json_decref(all);
}

/* An alert naming a GPU while Prometheus cannot be asked: skipped_telemetry,
 * and the row names no GPU (gpu null, as free_source): nothing was read, so
 * whether the node is even in GPU scope is unknown. The alert's GPU stays in
 * the stored alert (`audit alerts`), linked by fingerprint. */
static void
test_gpu_alert_telemetry_down(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    route_file(e, "GET", QUERY_PATH, 500, "remedy-status-500.json", 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    start(e, gpu_dry);
    deliver(e, ON_GPU_B);
    wait_rows(e, 1, 5000);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1);
    d = json_array_get(all, 0);
    jstr(d, "result", "skipped_telemetry");
    jstr(d, "node", NODE);
    jnull(d, "gpu");
    jstr(d, "reason", "cannot re-verify free VRAM on " NODE ", so acting on nothing");
    jnull(d, "free_source");
    jnull(d, "victim");
    assert_int_equal(count_reqs(e, "POST", FR_EVICT), 0);
    json_decref(all);
}

/* Node scope (the series carry no GPU label) with alerts that name a GPU, as
 * GPUVRAMLow does where the exporter's series carry uuid: the brakes are the
 * node's, so a trigger naming another GPU, or none, waits out the node's
 * SETTLE window at once, without a query, and its row names no GPU. */
static void
test_gpu_alert_node_scope_settle(void **state)
{
    struct env *e = *state;
    json_t *all, *d;
    size_t i;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"}, {"SETTLE", "1h"}, {NULL, NULL}});
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 5000);
    deliver(e, ON_GPU_B);
    wait_rows(e, 2, 1000);
    deliver(e, ON_NODE);
    wait_rows(e, 3, 1000);
    deliver(e, ON_GPU_A);
    wait_rows(e, 4, 1000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 1);
    assert_int_equal(count_mutating(e), 1);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jnull(d, "gpu");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    for (i = 1; i < 4; i++) {
        d = json_array_get(all, i);
        jstr(d, "result", "coalesced");
        jhas(d, "reason",
             "inside the SETTLE window after DRY_RUN would have recycled " ML_NS
             "/" ML_POD);
        jnull(d, "gpu");
    }
    json_decref(all);
}

/* Two such triggers at once: the second to learn it is node scope waits for
 * the first (in flight on the node), whichever GPU each named. */
static void
test_gpu_alert_node_scope_in_flight(void **state)
{
    struct env *e = *state;
    json_t *all;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){{"DRY_RUN", "true"}, {"SETTLE", "0"}, {NULL, NULL}});
    deliver(e, ON_GPU_A);
    deliver(e, ON_GPU_B);
    wait_rows(e, 2, 5000);
    assert_int_equal(count_mutating(e), 1);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "would_recycle");
    jstr(json_array_get(all, 1), "result", "coalesced");
    jhas(json_array_get(all, 1), "reason",
         "a decision for " NODE " is already in flight");
    jnull(json_array_get(all, 0), "gpu");
    jnull(json_array_get(all, 1), "gpu");
    json_decref(all);
}

/* --- mutation survivors of receiver/decide (issue 39) ---------------------- */

/* No GPU below the floor: each GPU's gauge is set ({node,gpu}), never a
 * node-wide one from the node's summary (judge.c note_free). */
static void
test_gpu_none_below_gauges_per_gpu(void **state)
{
    struct env *e = *state;
    const struct gseries gs[] = {{ML_NS, ML_POD, GPU_A, 5000},
                                 {FR_NS, FR_POD, GPU_B, 2500},
                                 {NULL, NULL, GPU_B, 10000}};
    struct buf b;

    then_gpu_prom(e, gs, 3);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    start(e, gpu_dry);
    metrics_init(0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    /* GPU B: 15360 - 12500 = 2860 MiB. */
    if (strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE
                         "\",gpu=\"" GPU_B "\"} 2998927360\n") == NULL)
        fail_msg("GPU B's gauge is not its 2860 MiB:\n%s",
                 strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{"));
    if (strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{node=\"" NODE "\"}") != NULL)
        fail_msg("a node-wide gauge in GPU scope:\n%s",
                 strstr(b.b_data, "gpu_vram_watchdog_free_vram_bytes{"));
    buf_free(&b);
    metrics_cleanup();
}

/* A release in GPU scope watches its own GPU: GPU A is freed on the second
 * look (10553 MiB), while GPU B, healthy, has less (2000 MiB). The release
 * counts GPU A's figure, never the node's least free GPU's. */
static void
test_gpu_release_watches_its_gpu(void **state)
{
    struct env *e = *state;
    const struct gseries after[] = {
        {ML_NS, ML_POD, GPU_A, 957},    {"llama-swap", LS_POD, GPU_A, 1100},
        {NULL, NULL, GPU_A, 2750},      {FR_NS, FR_POD, GPU_B, 2500},
        {"immich", SV_POD, GPU_B, 900}, {"portal-stt", ST_POD, GPU_B, 450},
        {NULL, NULL, GPU_B, 9510}};
    json_t *all, *d, *r;

    two_gpus(e, 0); /* the decision's look */
    two_gpus(e, 0); /* the first look after the ask: nothing freed yet */
    then_gpu_prom(e, after, sizeof(after) / sizeof(after[0]));
    route_pods_release(e, tenant_annotation(e), "127.0.0.1", 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, (const struct kv[]){
                 {"USED_QUERY", GPU_USED_QUERY}, {"RELEASE_WAIT", "3s"}, {NULL, NULL}});
    deliver(e, ON_GPU_A);
    wait_rows(e, 1, 3000 + 5000);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "gpu", GPU_A);
    jstr(d, "result", "released");
    jhas(d, "reason", "asked to release first; free VRAM back to 10553 MiB");
    r = release_obj(d);
    jint(r, "freed_mib", 10553 - 553);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* A node-scope decision whose verify readings come back per GPU, every GPU
 * still below the floor: no figure of the node's is read back, so none is
 * recorded (never a made-up 0 MiB). */
static void
test_verify_node_reading_turns_per_gpu(void **state)
{
    struct env *e = *state;
    const struct gseries after[] = {{ML_NS, ML_POD, GPU_A, 10957},
                                    {"llama-swap", LS_POD, GPU_A, 1100},
                                    {NULL, NULL, GPU_A, 2750}};
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_gpu_prom(e, after, sizeof(after) / sizeof(after[0]));
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_true(count_reqs(e, "GET", QUERY_PATH) >= 2); /* the look, re-reads */
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jnull(d, "gpu");
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    jnull(d, "verify");
    jhas(d, "reason", "free VRAM could not be read back within SETTLE");
    assert_null(strstr(json_string_value(jget(d, "reason")), "free VRAM still"));
    json_decref(all);
}

/* MAX_CONCURRENT_DECISIONS=1: a GPU's trigger waits behind another node's
 * decision, and a node-wide trigger for its node waits behind it. When the
 * GPU's turn comes, the node-wide look still to come covers it: coalesced
 * at once, without a reading of its own. */
static void
test_queued_gpu_trigger_behind_node_look(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    start(e, (const struct kv[]){
                 {"DRY_RUN", "true"}, {"MAX_CONCURRENT_DECISIONS", "1"}, {NULL, NULL}});
    deliver(e, "\"node\":\"gpu-node-2\"");
    deliver(e, ON_GPU_A);
    deliver(e, ON_NODE);
    wait_rows(e, 3, 5000);
    /* gpu-node-2's look and gpu-node-1's, none for GPU A alone. */
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "node", "gpu-node-2");
    jstr(d, "result", "would_recycle");
    d = json_array_get(all, 1);
    jstr(d, "node", NODE);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "a decision for " NODE " is already in flight");
    d = json_array_get(all, 2);
    jstr(d, "node", NODE);
    jnull(d, "gpu");
    jstr(d, "result", "would_recycle");
    json_decref(all);
}

/* Node scope, a FREE_QUERY naming $gpu: asked once with $gpu empty, and the
 * decision judges its answer. */
static void
test_free_query_gpu_in_node_scope(void **state)
{
    struct env *e = *state;
    const struct fake_req *r;
    json_t *all, *d;
    char *q;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                   "\"result\":[{\"metric\":{},\"value\":[1,\"900\"]}]}}",
                   0),
        0);
    start(e, (const struct kv[]){
                 {"DRY_RUN", "true"},
                 {"FREE_QUERY", "gpu_free_mib{node=\"$node\",uuid=\"$gpu\"}"},
                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 2);
    r = req_nth(e, "GET", QUERY_PATH, 1);
    assert_non_null(q = fake_query_param(r, "query"));
    assert_string_equal(q, "gpu_free_mib{node=\"" NODE "\",uuid=\"\"}");
    free(q);
    all = decisions(e);
    d = json_array_get(all, 0);
    jnull(d, "gpu");
    jstr(d, "result", "would_recycle");
    jstr(d, "free_source", "query");
    jint(d, "free_mib", 900);
    check_victim(d, ML_NS, ML_POD, 10957, 3000, 7957);
    json_decref(all);
}

/* The queue empties, then fills again: MAX_CONCURRENT_DECISIONS=1, gpu-node-2
 * waits behind gpu-node-1 and starts; gpu-node-3 arrives while it reads and
 * waits in turn. All three are decided (none is lost to the emptied queue). */
static void
test_queue_refills_after_emptying(void **state)
{
    struct env *e = *state;
    size_t n[2];
    json_t *all;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 0);
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 300);
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0);
    start(e, (const struct kv[]){
                 {"DRY_RUN", "true"}, {"MAX_CONCURRENT_DECISIONS", "1"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    deliver(e, "\"node\":\"gpu-node-2\"");
    for (int i = 0; i < 1000 && count_reqs(e, "GET", QUERY_PATH) < 2; i++)
        run_ms(e->base, 5);
    count_rows(e, n);
    assert_int_equal(n[0], 1); /* gpu-node-1 done, gpu-node-2 reading */
    deliver(e, "\"node\":\"gpu-node-3\"");
    wait_rows(e, 3, 5000);
    assert_int_equal(count_reqs(e, "GET", QUERY_PATH), 3);
    all = decisions(e);
    jstr(json_array_get(all, 2), "node", "gpu-node-3");
    jstr(json_array_get(all, 2), "result", "would_recycle");
    json_decref(all);
}

/* The first verify look reads 553 MiB; every later one is impossible (a NaN
 * series): SETTLE ends with the last figure read, 553 MiB, not a 0 taken from
 * an impossible reading. */
static void
test_verify_then_impossible(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    routes(e, "remedy-prom-incident.json", "remedy-pods-incident.json");
    then_prom(e, "remedy-prom-incident.json");
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                   "\"result\":[{\"metric\":{\"namespace\":\"" FR_NS
                   "\",\"pod\":\"" FR_POD "\"},\"value\":[1780394400,\"NaN\"]}]}}",
                   0),
        0);
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json", 0);
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_true(count_reqs(e, "GET", QUERY_PATH) >= 3);
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jint(jget(d, "verify"), "free_mib", 553);
    jhas(d, "reason",
         "free VRAM still 553 MiB, below the floor, when SETTLE (1s) ran out");
    json_decref(all);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_incident_replay),
        T(test_verify_never_recovers),
        T(test_verify_at_floor),
        T(test_verify_reads_fail),
        T(test_verify_reading_impossible),
        T(test_recycle_logs_no_error),
        T(test_failed_reading_keeps_gauge),
        T(test_verify_device_vanished),
        T(test_verify_only_user_gone),
        T(test_dry_run),
        T(test_dry_run_probe_pdb),
        T(test_dry_run_delete_probe),
        T(test_recovered_at_floor),
        T(test_below_floor_by_one),
        T(test_no_candidate),
        T(test_fallback_largest),
        T(test_telemetry),
        T(test_free_query_used),
        T(test_free_query_implausible),
        T(test_kube_pods_500),
        T(test_kube_pods_403),
        T(test_kube_unset),
        T(test_kube_fails_but_recovered),
        T(test_pdb_next_candidate),
        T(test_pdb_all_refused),
        T(test_pdb_then_forbidden),
        T(test_evict_404),
        T(test_pdb_403_next_candidate),
        T(test_pdb_500_and_403_blocked),
        T(test_dry_run_probe_pdb_403),
        T(test_throttled_same_victim),
        T(test_throttled_gives_up),
        T(test_throttled_retry_after_capped),
        T(test_throttled_delete),
        T(test_throttled_stop),
        T(test_dry_run_probe_throttled),
        T(test_evict_409_done),
        T(test_evict_409_other_conflict),
        T(test_evict_403),
        T(test_action_delete),
        T(test_thirty_at_once),
        T(test_settle_window),
        T(test_brake_per_node),
        T(test_hourly_brake),
        T(test_hourly_brake_off),
        T(test_dry_run_settle),
        T(test_dry_run_hourly),
        T(test_every_gpu_node),
        T(test_every_gpu_node_starving),
        T(test_node_list_fails),
        T(test_node_list_not_started),
        T(test_node_list_empty),
        T(test_no_node_label_no_kube),
        T(test_not_triggers),
        T(test_trigger_alerts_setting),
        T(test_starving_namespace),
        T(test_starving_namespace_queued),
        T(test_in_progress_row),
        T(test_shutdown_mid_eviction),
        T(test_shutdown_mid_verify),
        T(test_event_dry_run),
        T(test_event_not_for_rate_limited),
        T(test_event_recycled),
        T(test_event_names_the_victims_uid),
        T(test_event_off_and_no_victim),
        T(test_event_no_victim),
        T(test_event_refused),
        T(test_event_failed_without_victim),
        T(test_recorded_before_verify),
        T(test_crash_mid_verify),
        T(test_stop_while_gathering),
        T(test_stop_while_verifying),
        T(test_row_completed_after_store_lock),
        T(test_row_completed_at_stop),
        T(test_coalesced_unrecorded_is_logged),
        T(test_stop_waits_for_eviction),
        T(test_gpu_alert_names_gpu),
        T(test_gpu_alert_no_node),
        T(test_gpu_fan_out),
        T(test_gpu_fan_out_queued),
        T(test_gpu_none_below),
        T(test_gpu_none_below_least_first),
        T(test_gpu_impossible_one),
        T(test_gpu_brakes),
        T(test_gpu_hourly_global),
        T(test_gpu_hourly_global_enforcing),
        T(test_gpu_recycle_verify),
        T(test_gpu_verify_only_user_gone),
        T(test_gpu_release_gauge),
        T(test_gpu_free_query),
        T(test_gpu_free_query_node_wide),
        T(test_gpu_label_off),
        T(test_gpu_alert_telemetry_down),
        T(test_gpu_alert_node_scope_settle),
        T(test_gpu_alert_node_scope_in_flight),
        T(test_release_frees),
        T(test_release_frees_to_the_floor),
        T(test_release_device_vanished),
        T(test_release_device_vanished_then_fails),
        cmocka_unit_test_setup_teardown(test_release_after_fence, setup, gate_teardown),
        T(test_release_only_user_gone),
        T(test_release_no_brakes),
        T(test_release_hour_filled_meanwhile),
        T(test_release_never_frees),
        T(test_release_500),
        T(test_release_299),
        T(test_release_hangs),
        T(test_release_closes),
        T(test_release_redirect),
        T(test_release_dry_run),
        T(test_release_not_asked),
        T(test_release_wait_holds_node),
        T(test_release_stop_mid_post),
        T(test_event_released),
        T(test_gpu_none_below_gauges_per_gpu),
        T(test_gpu_release_watches_its_gpu),
        T(test_verify_node_reading_turns_per_gpu),
        T(test_queued_gpu_trigger_behind_node_look),
        T(test_free_query_gpu_in_node_scope),
        T(test_queue_refills_after_emptying),
        T(test_verify_then_impossible),
    };

    return cmocka_run_group_tests_name("remedy", tests, group_setup, group_teardown);
}
