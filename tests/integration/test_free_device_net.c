/* test_free_device_net.c -- FREE_QUERY=auto over the network: the device query against a
 * loopback fake Prometheus, through gather and the verdict `check` prints */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_format.h"
#include "engine_harness.h"
#include "gather.h"
#include "verdict.h"

#define NODE "gpu-node-1"
#define QUERY_PATH "/api/v1/query"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define MIB 1048576LL

/* A 15360 MiB card holding 12800 MiB of pods and 2 GiB no pod owns:
 * computed free 2560 MiB (recovered), the device's 512 (below the floor). */
#define USED_BODY                                                                        \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["           \
    "{\"metric\":{\"namespace\":\"immich\",\"pod\":\"" ML_POD "\"},"                     \
    "\"value\":[1780394400,\"11489247232\"]},"                                           \
    "{\"metric\":{\"namespace\":\"llama-swap\",\"pod\":\"llama-swap-6d8f7b5c4-w7r2k\"}," \
    "\"value\":[1780394400,\"1153433600\"]},"                                            \
    "{\"metric\":{\"namespace\":\"frigate\",\"pod\":\"frigate-84d5c6b7f9-h4n8s\"},"      \
    "\"value\":[1780394400,\"779091968\"]}]}}"
#define VEC(items)                                                                       \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" items "]}}"
#define S(labels, v) "{\"metric\":{" labels "},\"value\":[1780394400,\"" v "\"]}"
#define FREE_S(v)                                                                        \
    S("\"__name__\":\"gpu_memory_free_bytes\",\"node\":\"" NODE "\",\"uuid\":\"GPU-0\"", \
      v)
#define TOTAL_S                                                                          \
    S("\"__name__\":\"gpu_memory_total_bytes\",\"node\":\"" NODE                         \
      "\",\"uuid\":\"GPU-0\"",                                                           \
      "16106127360")
#define UNATT_S                                                                          \
    S("\"__name__\":\"gpu_memory_unattributed_bytes\",\"node\":\"" NODE                  \
      "\",\"uuid\":\"GPU-0\"",                                                           \
      "2147483648")
#define DTS_S                                                                            \
    S("\"gvw_ts\":\"device\",\"node\":\"" NODE "\",\"uuid\":\"GPU-0\"", "1780394400")
#define DEVICE_OK VEC(FREE_S("536870912") "," TOTAL_S "," UNATT_S "," DTS_S)

/* The harness's world (settings and clients, no engine) and what one look saw. */
struct dev_env {
    struct env h;
    int done;
    char result[32], reason[1024], error[1024], source[16];
    long long free_mib;
    int free_known, victim;
    char victim_pod[256];
};

static const struct kv dev_settings[] = {
    {"MIN_RUNTIME", "1s"},
    {"HTTP_TIMEOUT", "3s"},
    {"AUDIT_DB", "/nonexistent/audit.db"},
    {NULL, NULL},
};

static int
setup(void **state)
{
    struct dev_env *e = calloc(1, sizeof(*e));

    assert_non_null(e);
    env_init(&e->h, dev_settings);
    env_config(&e->h, NULL);
    assert_string_equal(e->h.cfg.c_free_query, FREE_QUERY_AUTO); /* the default */
    env_clients(&e->h);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct dev_env *e = *state;

    env_fini(&e->h);
    free(e);
    return 0;
}

/* What `check` prints for the gather: the audit's decision object. */
static void
gathered(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct dev_env *e = arg;
    struct verdict v;
    json_t *o, *x;

    verdict_init(&v, &e->h.cfg, NODE, "check", "", 0);
    verdict_set_result(&v, verdict_from_gather(&v, gr, &e->h.cfg));
    if (gr->gr_status == GATHER_DECIDED && gr->gr_policy.pr_outcome == POLICY_VICTIM)
        verdict_set_victim(&v, &gr->gr_policy.pr_candidates[0], "evict");
    assert_non_null(o = audit_decision_json(&v.vd_d, -1));
    snprintf(e->result, sizeof(e->result), "%s",
             json_string_value(json_object_get(o, "result")));
    snprintf(e->reason, sizeof(e->reason), "%s",
             json_string_value(json_object_get(o, "reason")));
    x = json_object_get(o, "error");
    snprintf(e->error, sizeof(e->error), "%s",
             json_is_string(x) ? json_string_value(x) : "");
    x = json_object_get(o, "free_source");
    snprintf(e->source, sizeof(e->source), "%s",
             json_is_string(x) ? json_string_value(x) : "null");
    x = json_object_get(o, "free_mib");
    e->free_known = json_is_integer(x);
    e->free_mib = e->free_known ? (long long)json_integer_value(x) : 0;
    x = json_object_get(o, "victim");
    e->victim = json_is_object(x);
    snprintf(e->victim_pod, sizeof(e->victim_pod), "%s",
             e->victim ? json_string_value(json_object_get(x, "pod")) : "");
    json_decref(o);
    verdict_free(&v);
    gather_free(g);
    e->done = 1;
}

/* One look at the node, as `check --node` takes it; device: the device
 * query's status and body. */
static void
look(struct dev_env *e, int device_status, const char *device_body)
{
    fake_clear(e->h.fake);
    assert_int_equal(fake_route_query(e->h.fake, "GET", QUERY_PATH, "gvw_ts",
                                      device_status, device_body),
                     0);
    assert_int_equal(fake_route(e->h.fake, "GET", QUERY_PATH, 200, NULL, USED_BODY, 0),
                     0);
    assert_int_equal(fake_route_file(e->h.fake, "GET", "/api/v1/pods", 200,
                                     "remedy-pods-incident.json", 0),
                     0);
    e->done = 0;
    assert_non_null(gather_start(e->h.base, &e->h.cfg, e->h.prom, e->h.kube, NODE, NULL,
                                 gathered, e));
    if (fake_run_until(e->h.base, &e->done, 10000) == -1)
        fail_msg("no answer within 10 s");
}

static void
has(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("\"%s\" lacks \"%s\"", text, needle);
}

/* The device's 512 MiB is judged, not the computed 2560: the runaway is named. */
static void
test_device_present(void **state)
{
    struct dev_env *e = *state;

    look(e, 200, DEVICE_OK);
    assert_string_equal(e->result, "would_recycle");
    assert_string_equal(e->source, "device");
    assert_int_equal(e->free_mib, 512);
    assert_string_equal(e->victim_pod, ML_POD);
}

/* No device series: computed as before, and the reason says so. */
static void
test_device_empty(void **state)
{
    struct dev_env *e = *state;

    look(e, 200, VEC(""));
    assert_string_equal(e->result, "skipped_recovered");
    assert_string_equal(e->source, "computed");
    assert_int_equal(e->free_mib, 2560);
    has(e->reason, "free computed as GPU_TOTAL_MIB=15360 - used");
}

/* Prometheus fails the device query: never act blind. */
static void
test_device_error(void **state)
{
    struct dev_env *e = *state;

    look(e, 500, "{\"status\":\"error\",\"errorType\":\"internal\",\"error\":\"boom\"}");
    assert_string_equal(e->result, "skipped_telemetry");
    assert_false(e->victim);
    has(e->error, "the device query (FREE_QUERY=auto)");
}

/* Malformed answers: each a clear skipped_telemetry, or the fallback the
 * README names, never a guess. */
static void
test_device_malformed(void **state)
{
    struct dev_env *e = *state;

    /* A value that is no number. */
    look(e, 200, VEC(FREE_S("lots") "," TOTAL_S "," DTS_S));
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->error, "the device query (FREE_QUERY=auto)");
    /* A string instead of a vector. */
    look(e, 200,
         "{\"status\":\"success\",\"data\":{\"resultType\":\"string\","
         "\"result\":[1780394400,\"512\"]}}");
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->error, "the device query (FREE_QUERY=auto)");
    /* Not JSON at all. */
    look(e, 200, "<html>proxy error</html>");
    assert_string_equal(e->result, "skipped_telemetry");
    /* A free series without its total (a label missing): no usable device
     * figure, so the README's fallback, saying why. */
    look(e, 200, VEC(FREE_S("536870912") "," DTS_S));
    assert_string_equal(e->result, "skipped_recovered");
    assert_string_equal(e->source, "computed");
    has(e->reason, "no gpu_memory_total_bytes series");
    /* A free series without its sample time. */
    look(e, 200, VEC(FREE_S("536870912") "," TOTAL_S));
    assert_string_equal(e->source, "computed");
    has(e->reason, "no sample time");
    /* Two free series for one GPU (two exporters?): which is right? */
    look(e, 200, VEC(FREE_S("536870912") "," FREE_S("9536870912") "," TOTAL_S "," DTS_S));
    assert_string_equal(e->result, "skipped_telemetry");
    assert_false(e->victim);
    has(e->reason, "more than one device series");
    /* Free above total: impossible. */
    look(e, 200, VEC(FREE_S("26106127360") "," TOTAL_S "," DTS_S));
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->reason, "more than its total");
    /* A negative free. */
    look(e, 200, VEC(FREE_S("-1") "," TOTAL_S "," DTS_S));
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->reason, "which cannot be true");
}

/* --- mutation survivors of receiver/decide (issue 39) ---------------------- */

/* What Prometheus said about the failed device query reaches the error. */
static void
test_device_error_says_why(void **state)
{
    struct dev_env *e = *state;

    look(
        e, 500,
        "{\"status\":\"error\",\"errorType\":\"internal\",\"error\":\"tsdb is on fire\"}");
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->error, "the device query (FREE_QUERY=auto): ");
    has(e->error, "tsdb is on fire");
}

/* A look at a name that is no node name (`check --node =gpu-node-1`): nothing
 * is asked, and the answer says why, from the loop. */
static void
test_not_a_node_name(void **state)
{
    struct dev_env *e = *state;

    fake_clear(e->h.fake);
    e->done = 0;
    assert_non_null(gather_start(e->h.base, &e->h.cfg, e->h.prom, e->h.kube, "=" NODE,
                                 NULL, gathered, e));
    assert_int_equal(e->done, 0); /* never inside the call */
    if (fake_run_until(e->h.base, &e->done, 10000) == -1)
        fail_msg("no answer within 10 s");
    assert_string_equal(e->result, "skipped_kube");
    has(e->error, "is not a Kubernetes node name");
    assert_int_equal(fake_count(e->h.fake), 0);
}

static const struct kv kai_settings[] = {{"BUDGET_SOURCES", "kai"}, {NULL, NULL}};

static int
setup_kai(void **state)
{
    struct dev_env *e = calloc(1, sizeof(*e));

    assert_non_null(e);
    env_init(&e->h, dev_settings);
    env_config(&e->h, kai_settings);
    env_clients(&e->h);
    *state = e;
    return 0;
}

/* The ML pod as KAI declares it: a quarter of the GPU (gpu-fraction). */
#define KAI_PODS                                                                         \
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[{"           \
    "\"metadata\":{\"name\":\"" ML_POD "\",\"namespace\":\"immich\","                    \
    "\"uid\":\"9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01\","                                  \
    "\"creationTimestamp\":\"2026-06-01T22:14:05Z\","                                    \
    "\"annotations\":{\"gpu-fraction\":\"0.25\"},"                                       \
    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","          \
    "\"name\":\"immich-ml-5f7c9d8b6\",\"uid\":\"0c1e4a57-6b1d-4c8e-9f47-1d2a3b4c5d01\"," \
    "\"controller\":true}]},"                                                            \
    "\"spec\":{\"nodeName\":\"" NODE "\",\"containers\":[{\"name\":\"main\","            \
    "\"image\":\"example/immich-ml:1\"}]},"                                              \
    "\"status\":{\"phase\":\"Running\",\"startTime\":\"2026-06-01T22:14:05Z\"}}]}"

/* BUDGET_SOURCES=kai, the ML pod at a quarter of the device's 15360 MiB:
 * its budget is 3840 MiB, so its 10957 MiB overshoot it and it is the
 * victim (the share resolved by the device's total). */
static void
test_kai_fraction_by_device_total(void **state)
{
    struct dev_env *e = *state;

    fake_clear(e->h.fake);
    assert_int_equal(
        fake_route_query(e->h.fake, "GET", QUERY_PATH, "gvw_ts", 200, DEVICE_OK), 0);
    assert_int_equal(fake_route(e->h.fake, "GET", QUERY_PATH, 200, NULL, USED_BODY, 0),
                     0);
    assert_int_equal(fake_route(e->h.fake, "GET", "/api/v1/pods", 200, NULL, KAI_PODS, 0),
                     0);
    e->done = 0;
    assert_non_null(gather_start(e->h.base, &e->h.cfg, e->h.prom, e->h.kube, NODE, NULL,
                                 gathered, e));
    if (fake_run_until(e->h.base, &e->done, 10000) == -1)
        fail_msg("no answer within 10 s");
    assert_string_equal(e->result, "would_recycle");
    assert_string_equal(e->victim_pod, ML_POD);
    has(e->reason, "against a budget of 3840 MiB");
}

/* A USED_QUERY that overflows once $node is replaced (4,000 of them). */
static char long_query[4000 * 5 + 1];
static const struct kv long_query_settings[] = {
    {"USED_QUERY", long_query}, {"FREE_QUERY", ""}, {NULL, NULL}};

static int
setup_long_query(void **state)
{
    struct dev_env *e = calloc(1, sizeof(*e));

    assert_non_null(e);
    for (size_t i = 0; i < 4000; i++)
        memcpy(long_query + i * 5, "$node", 5);
    long_query[sizeof(long_query) - 1] = '\0';
    env_init(&e->h, dev_settings);
    env_config(&e->h, long_query_settings);
    env_clients(&e->h);
    *state = e;
    return 0;
}

/* No API server and a used query that cannot be built: nothing can be asked,
 * and the look still answers, from the loop, saying why (it never waits for
 * an answer that cannot come). */
static void
test_nothing_can_be_asked(void **state)
{
    struct dev_env *e = *state;

    fake_clear(e->h.fake);
    e->done = 0;
    assert_non_null(
        gather_start(e->h.base, &e->h.cfg, e->h.prom, NULL, NODE, NULL, gathered, e));
    assert_int_equal(e->done, 0);
    if (fake_run_until(e->h.base, &e->done, 5000) == -1)
        fail_msg("no answer within 5 s");
    assert_string_equal(e->result, "skipped_telemetry");
    has(e->error, "cannot build the query for node " NODE ": query too long");
    assert_int_equal(fake_count(e->h.fake), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_device_present, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_error_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_node_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kai_fraction_by_device_total, setup_kai,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nothing_can_be_asked, setup_long_query,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
