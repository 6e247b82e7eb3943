/* test_hostile_decision.c -- hostile input to a decision, end to end against a
 * loopback fake Prometheus + API server: what the audit shows, what was asked */
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
#include <jansson.h>

#include "buf.h"
#include "engine_harness.h"
#include "log.h"
#include "metrics.h"

#define NODE "gpu-node-1"
#define QUERY_PATH "/api/v1/query"
#define PODS_PATH "/api/v1/pods"
#define NODES_PATH "/api/v1/nodes"
#define ML_NS "immich"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define ML_EVICT "/api/v1/namespaces/" ML_NS "/pods/" ML_POD "/eviction"
#define ON_NODE "\"node\":\"" NODE "\""
#define GPU_USED_QUERY                                                                   \
    "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"

static const struct kv hostile_env[] = {
    {"MIN_RUNTIME", "1s"},
    {"SETTLE", "60s"},
    {"DRY_RUN", "false"},
    {"HTTP_TIMEOUT", "3s"},
    {"HTTP_CONNECT_TIMEOUT", "1s"},
    {"EVENTS", "false"},
    {NULL, NULL},
};

static int
setup(void **state)
{
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_ERROR);
    metrics_init(0);
    return env_setup(state, hostile_env);
}

static int
teardown(void **state)
{
    env_teardown(state);
    metrics_cleanup();
    return 0;
}

static void
start(struct env *e, const struct kv *extra)
{
    engine_start(e, extra, 0);
    route_no_device(e);
}

static void
route_file(struct env *e, const char *method, const char *path, int status,
           const char *file)
{
    assert_int_equal(fake_route_file(e->fake, method, path, status, file, 0), 0);
}

static size_t
count_path(struct env *e, const char *method, const char *path)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (strcmp(r->fr_method, method) == 0 && strcmp(r->fr_path, path) == 0)
            n++;
    }
    return n;
}

/* The i-th decision the audit lists (oldest first), as a new reference. */
static json_t *
decision_at(struct env *e, size_t i)
{
    json_t *all = decisions(e), *d;

    assert_true(i < json_array_size(all));
    d = json_incref(json_array_get(all, i));
    json_decref(all);
    return d;
}

/* --- 1. ALERT_NODE_LABEL is a node name, or it decides nothing ----------- */

/* The alias "=gpu-node-1" lists gpu-node-1's pods (the API server reads
 * spec.nodeName==gpu-node-1) under another brake: inside the SETTLE window of
 * a recycle on gpu-node-1 it recycled a second pod. Now it decides nothing. */
static void
test_node_label_alias_inside_settle(void **state)
{
    struct env *e = *state;
    size_t before;
    json_t *d;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json");
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json");
    start(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_path(e, "POST", ML_EVICT), 1);
    before = fake_count(e->fake);

    deliver(e, "\"node\":\"=" NODE "\"");
    wait_rows(e, 2, 5000);
    assert_int_equal(fake_count(e->fake), before); /* nothing asked, nobody evicted */
    assert_int_equal(count_path(e, "POST", ML_EVICT), 1);
    d = decision_at(e, 1);
    jstr(d, "result", "skipped_kube");
    jstr(d, "node", "");
    jhas(d, "reason", "node=\"=" NODE "\" is not a Kubernetes node name");
    jnull(d, "victim");
    json_decref(d);
}

/* "gpu-node-1,metadata.namespace=llm" would narrow the pod list to one
 * namespace: refused before any request. */
static void
test_node_label_selector_syntax(void **state)
{
    struct env *e = *state;
    json_t *d;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, NULL);
    deliver(e, "\"node\":\"" NODE ",metadata.namespace=llm\"");
    wait_rows(e, 1, 5000);
    assert_int_equal(fake_count(e->fake), 0);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_kube");
    jhas(d, "reason", "node=\"" NODE ",metadata.namespace=llm\" is not a Kubernetes");
    json_decref(d);
}

/* What is no DNS-1123 subdomain, each refused with the label shown escaped
 * and cut: controls, quotes, capitals, empty labels, a 64-byte label, 254
 * bytes, and a megabyte. */
static void
test_node_label_not_a_name(void **state)
{
    struct env *e = *state;
    static const char *const bad[] = {
        "GPU-node-1", "gpu_node", "gpu..node", ".gpu",       "gpu-",
        "-gpu",       "gpu.-x",   "gpu node",  "gpu%2dnode",
    };
    const size_t nbad = sizeof(bad) / sizeof(bad[0]);
    char label[400], *big, *lbl;
    size_t i, rows = 0;
    json_t *d;

    start(e, NULL);
    for (i = 0; i < nbad; i++) {
        snprintf(label, sizeof(label), "\"node\":\"%s\"", bad[i]);
        deliver(e, label);
        wait_rows(e, ++rows, 5000);
    }
    /* A control byte and a quote, escaped in the reason. */
    deliver(e, "\"node\":\"gpu\\u0007\\\"x\"");
    wait_rows(e, ++rows, 5000);
    d = decision_at(e, rows - 1);
    jstr(d, "result", "skipped_kube");
    jhas(d, "reason", "node=\"gpu\\x07\\x22x\" is not");
    json_decref(d);
    /* One label of 64 bytes; 254 bytes in all. */
    memset(label, 0, sizeof(label));
    snprintf(label, sizeof(label), "\"node\":\"%064d.a\"", 0);
    deliver(e, label);
    wait_rows(e, ++rows, 5000);
    memset(label, 'a', sizeof(label));
    memcpy(label, "\"node\":\"", 8);
    memcpy(label + 8 + 254, "\"", 2);
    for (i = 8 + 63; i < 8 + 254; i += 64)
        label[i] = '.';
    deliver(e, label);
    wait_rows(e, ++rows, 5000);
    /* A megabyte: stored, refused, shown cut. */
    assert_non_null(big = malloc(1 << 20));
    memset(big, 'b', 1 << 20);
    big[(1 << 20) - 1] = '\0';
    assert_non_null(lbl = malloc((1 << 20) + 32));
    snprintf(lbl, (1 << 20) + 32, "\"node\":\"%s\"", big);
    deliver(e, lbl);
    free(lbl);
    free(big);
    wait_rows(e, ++rows, 5000);
    d = decision_at(e, rows - 1);
    jhas(d, "reason", "node=\"bbbbbbbbbbbbbbbb");
    jhas(d, "reason", "bbbb\"... is not a Kubernetes node name");
    assert_true(strlen(json_string_value(jget(d, "reason"))) < 600);
    json_decref(d);

    assert_int_equal(fake_count(e->fake), 0);
    for (i = 0; i < rows; i++) {
        d = decision_at(e, i);
        jstr(d, "result", "skipped_kube");
        jstr(d, "node", "");
        jhas(d, "reason", "is not a Kubernetes node name");
        json_decref(d);
    }
    /* Every alert is stored all the same. */
    d = audit_json(e, "alerts");
    assert_int_equal(json_array_size(d), rows);
    json_decref(d);
}

/* The longest names that are node names still decide: 253 bytes, labels of 63. */
static void
test_node_label_longest_name(void **state)
{
    struct env *e = *state;
    char label[300], name[254];
    size_t i;
    json_t *d;

    memset(name, 'a', 253);
    name[253] = '\0';
    for (i = 63; i < 253; i += 64)
        name[i] = '.';
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, NULL);
    snprintf(label, sizeof(label), "\"node\":\"%s\"", name);
    deliver(e, label);
    wait_rows(e, 1, 5000);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_recovered");
    jstr(d, "node", name);
    json_decref(d);
}

/* No node label: the node list's names are checked too. One that is no node
 * name is not looked at (one row says so); the real one is. */
static void
test_node_list_bad_names(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {
        {"USED_QUERY",
         "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    json_t *all, *d;
    char *v;
    int bad_row = 0, good_row = 0;

    assert_int_equal(
        fake_route(e->fake, "GET", NODES_PATH, 200, NULL,
                   "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},"
                   "\"items\":[{\"metadata\":{\"name\":\"" NODE "\"}},"
                   "{\"metadata\":{\"name\":\"=" NODE "\"}},"
                   "{\"metadata\":{\"name\":\"" NODE ",metadata.namespace=llm\"}}]}",
                   0),
        0);
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, extra);
    deliver(e, "");
    wait_rows(e, 2, 5000);
    assert_int_equal(count_path(e, "GET", PODS_PATH), 1);
    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (strcmp(r->fr_path, PODS_PATH) != 0)
            continue;
        assert_non_null(v = fake_query_param(r, "fieldSelector"));
        assert_string_equal(v, "spec.nodeName=" NODE);
        free(v);
    }
    all = decisions(e);
    for (size_t i = 0; i < json_array_size(all); i++) {
        d = json_array_get(all, i);
        if (strcmp(json_string_value(jget(d, "result")), "skipped_kube") == 0) {
            jstr(d, "node", "");
            jhas(d, "reason", "holds 2 names that are not a Kubernetes node name");
            jhas(d, "reason", "the first \"=" NODE "\"; they are not looked at");
            bad_row++;
        } else {
            jstr(d, "node", NODE);
            jstr(d, "result", "skipped_recovered");
            good_row++;
        }
    }
    assert_int_equal(bad_row, 1);
    assert_int_equal(good_row, 1);
    json_decref(all);
}

/* An ALERT_GPU_LABEL longer than any GPU name decides nothing (its name would
 * key a brake and a gauge). */
static void
test_gpu_label_too_long(void **state)
{
    struct env *e = *state;
    char label[800], gpu[300];
    json_t *d;

    memset(gpu, 'g', 257);
    gpu[257] = '\0';
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}});
    snprintf(label, sizeof(label), ON_NODE ",\"uuid\":\"%s\"", gpu);
    deliver(e, label);
    wait_rows(e, 1, 5000);
    assert_int_equal(fake_count(e->fake), 0);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jhas(d, "reason", "uuid=\"gggg");
    jhas(d, "reason", "is longer than any GPU's name");
    json_decref(d);
}

/* A GPU label of 256 bytes, the longest a GPU's name may be, is looked at. */
static void
test_gpu_label_longest(void **state)
{
    struct env *e = *state;
    char label[800], gpu[300];
    json_t *d;

    memset(gpu, 'g', 256);
    gpu[256] = '\0';
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}});
    snprintf(label, sizeof(label), ON_NODE ",\"uuid\":\"%s\"", gpu);
    deliver(e, label);
    wait_rows(e, 1, 5000);
    assert_true(count_path(e, "GET", QUERY_PATH) > 0);
    d = decision_at(e, 0);
    assert_null(strstr(json_string_value(jget(d, "reason")), "longer than any GPU"));
    json_decref(d);
}

/* --- 2. per-node tables are bounded, and say so when full ---------------- */

/* Runs the loop until no decision is in flight or queued, with stderr going to
 * a file; returns what was written there (owned). */
static char *
drain_capturing_stderr(struct env *e, void (*deliver_fn)(struct env *, int), int n)
{
    FILE *f = tmpfile();
    int saved = dup(2);
    long len;
    char *text;

    assert_non_null(f);
    assert_true(saved >= 0);
    fflush(stderr);
    assert_true(dup2(fileno(f), 2) >= 0);
    deliver_fn(e, n);
    for (int i = 0; i < 20000 && remedy_in_flight(e->r) > 0; i++)
        run_ms(e->base, 5);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(remedy_in_flight(e->r), 0);
    len = ftell(f);
    assert_true(len >= 0);
    assert_non_null(text = calloc(1, (size_t)len + 1));
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

/* One webhook body of n firing GPUVRAMLow alerts, node-0000 ... */
static void
deliver_nodes(struct env *e, int n)
{
    size_t cap = 256 + (size_t)n * 200, off = 0;
    char *body = malloc(cap);

    assert_non_null(body);
    off += (size_t)snprintf(body, cap, "{\"version\":\"4\",\"alerts\":[");
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(body + off, cap - off,
                                "%s{\"status\":\"firing\",\"labels\":{\"alertname\":"
                                "\"GPUVRAMLow\",\"node\":\"node-%04d\"}}",
                                i ? "," : "", i);
    snprintf(body + off, cap - off, "]}");
    assert_int_equal(deliver_body(e, body), (size_t)n);
    free(body);
}

/* 1,030 nodes at once: the brake table keeps 1,024 (each busy, in flight or
 * queued); the rest end failed at once, and one warning says the table is
 * full (not one per refusal). */
static void
test_brake_table_full(void **state)
{
    struct env *e = *state;
    size_t n[2];
    char *logs, *first;
    json_t *all;
    size_t failed = 0;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"FREE_QUERY", ""}, {NULL, NULL}});
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_WARN);
    logs = drain_capturing_stderr(e, deliver_nodes, 1030);
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_ERROR);
    count_rows(e, n);
    assert_int_equal(n[1], 1030);
    all = decisions(e);
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *d = json_array_get(all, i);
        if (strcmp(json_string_value(jget(d, "result")), "failed") == 0) {
            jhas(d, "error", "too many nodes tracked");
            failed++;
        }
    }
    json_decref(all);
    assert_int_equal(failed, 6);
    if ((first = strstr(logs, "brake table full")) == NULL)
        fail_msg("no warning that the brake table is full in:\n%.2000s", logs);
    assert_null(strstr(first + 1, "brake table full"));
    free(logs);
}

static void
drained_cb(void *arg)
{
    (*(int *)arg)++;
}

/* A full brake table forgets idle nodes only: gpu-node-1, whose decision is
 * still in flight, keeps its state through the purge the 1,025th node makes,
 * so a second trigger for it is coalesced. Forgetting it (busy, but no SETTLE
 * window open) let two decisions run on one node at once, and the first wrote
 * to the freed state when it ended. */
static void
test_brake_table_full_keeps_busy(void **state)
{
    struct env *e = *state;
    size_t n[2];
    int drained = 0;
    json_t *all, *d;

    /* gpu-node-1's reading is held back 20 s; every other node's is at once. */
    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200,
                                     "remedy-prom-recovered.json", 20000),
                     0);
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    start(e,
          (const struct kv[]){{"FREE_QUERY", ""}, {"HTTP_TIMEOUT", "30s"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    for (int i = 0; i < 400 && count_path(e, "GET", QUERY_PATH) < 1; i++)
        run_ms(e->base, 5);
    assert_int_equal(count_path(e, "GET", QUERY_PATH), 1);

    /* 1,023 more nodes fill the table; each ends at once, idle. */
    deliver_nodes(e, 1023);
    for (int i = 0; i < 3000 && remedy_in_flight(e->r) > 1; i++)
        run_ms(e->base, 5);
    count_rows(e, n);
    assert_int_equal(n[0], 1023);
    assert_int_equal(n[1], 1024);
    assert_int_equal(remedy_in_flight(e->r), 1); /* gpu-node-1, still reading */

    /* The 1,025th node: the idle ones are forgotten, gpu-node-1 is not. */
    deliver(e, "\"node\":\"node-1023\"");
    for (int i = 0; i < 1000 && (count_rows(e, n), n[0] < 1024); i++)
        run_ms(e->base, 5);
    assert_int_equal(n[0], 1024);
    deliver(e, ON_NODE);
    assert_int_equal(remedy_in_flight(e->r), 1);
    run_ms(e->base, 50);
    assert_int_equal(count_path(e, "GET", QUERY_PATH), 1 + 1023 + 1);

    remedy_shutdown(e->r, drained_cb, &drained);
    assert_int_equal(drained, 1);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 1026);
    d = json_array_get(all, 1025);
    jstr(d, "node", NODE);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "a decision for " NODE " is already in flight");
    d = json_array_get(all, 1024);
    jstr(d, "node", "node-1023");
    jstr(d, "result", "skipped_recovered");
    d = json_array_get(all, 0);
    jstr(d, "node", NODE);
    jstr(d, "result", "failed");
    jhas(d, "reason", "nothing was recycled");
    json_decref(all);
}

/* Gauges keyed by node (or alertname) keep 256 label sets and no value over
 * 256 bytes: 300 alertnames of 100 KB each once held 25 MB in the metrics. */
static void
test_metric_labels_bounded(void **state)
{
    char *big = malloc(100001);
    struct buf b;

    (void)state;
    assert_non_null(big);
    metrics_init(0);
    memset(big, 'a', 100000);
    big[100000] = '\0';
    for (int i = 0; i < 300; i++) {
        snprintf(big, 16, "alert-%05d", i);
        big[11] = 'a';
        metrics_alert_received(big, "firing");
    }
    for (int i = 0; i < 300; i++) {
        char node[32];
        snprintf(node, sizeof(node), "node-%04d", i);
        metrics_free_vram(node, i);
    }
    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    if (b.b_len > 64 * 1024)
        fail_msg("the exposition holds %zu bytes", b.b_len);
    assert_non_null(strstr(b.b_data, "alertname=\"_other\",status=\"_other\"} 300\n"));
    assert_non_null(strstr(b.b_data, "free_vram_bytes{node=\"node-0254\"}"));
    assert_null(strstr(b.b_data, "free_vram_bytes{node=\"node-0255\"}"));
    assert_non_null(strstr(b.b_data, "free_vram_bytes{node=\"_other\"}"));
    buf_free(&b);
    free(big);
}

/* --- 3. a reading naming too many GPUs; FREE_QUERY per GPU bounded ------ */

#define GPU_FREE_QUERY "gpu_memory_free_bytes{node=\"$node\",uuid=\"$gpu\"}/2^20"
#define VEC_HEAD                                                                         \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
#define VEC_TAIL "]}}"

/* An answer with one series per GPU (tenant tI/p on GPU-I, mib each); owned. */
static char *
gpus_answer(size_t n, double mib)
{
    size_t cap = 128 + n * 160, off = 0;
    char *b = malloc(cap);

    assert_non_null(b);
    off += (size_t)snprintf(b, cap, VEC_HEAD);
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(b + off, cap - off,
                                "%s{\"metric\":{\"namespace\":\"t%zu\",\"pod\":\"p\","
                                "\"uuid\":\"GPU-%06zu\"},\"value\":[1,\"%.0f\"]}",
                                i ? "," : "", i, i, mib * 1048576.0);
    snprintf(b + off, cap - off, VEC_TAIL);
    return b;
}

/* The used series name 257 GPUs: no node holds them; refused before any
 * GPU is judged (no row per GPU, no FREE_QUERY). 256 are a node's. */
static void
test_reading_too_many_gpus(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(257, 15000);
    json_t *d;

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"FREE_QUERY", GPU_FREE_QUERY},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows_then(e, 1, 10000, 300);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jnull(d, "gpu");
    jhas(d, "error",
         "the used series name 257 GPUs on node " NODE
         ", more than the 256 one node's reading may name");
    json_decref(d);
    assert_int_equal(count_queries(e, "gpu_memory_free_bytes"), 0);
}

static void
test_reading_256_gpus(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(256, 100);
    json_t *d;

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 10000);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_recovered");
    jhas(d, "reason", "on every GPU (256;");
    json_decref(d);
}

/* The device query (FREE_QUERY=auto) names 257 GPUs: no node's reading. */
static void
test_device_too_many_gpus(void **state)
{
    struct env *e = *state;
    size_t cap = 128 + 257 * 200, off = 0;
    char *b = malloc(cap);
    json_t *d;

    assert_non_null(b);
    off += (size_t)snprintf(b, cap, VEC_HEAD);
    for (size_t i = 0; i < 257; i++)
        off += (size_t)snprintf(b + off, cap - off,
                                "%s{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\","
                                "\"node\":\"" NODE "\",\"uuid\":\"GPU-%06zu\"},"
                                "\"value\":[1,\"1073741824\"]}",
                                i ? "," : "", i);
    snprintf(b + off, cap - off, VEC_TAIL);
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200, b), 0);
    free(b);
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    engine_start(e, NULL, 0); /* no route_no_device: the device answer is above */
    deliver(e, ON_NODE);
    wait_rows(e, 1, 10000);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jhas(d, "error", "names more than 256 GPUs on node " NODE);
    json_decref(d);
}

/* FREE_QUERY naming $gpu on 200 GPUs: every GPU asked once, never more than
 * MAX_CONCURRENT_DECISIONS at a time (2,000 GPUs once made 1,506 at once). */
static void
test_free_query_bounded(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(200, 100);
    json_t *d;

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    free(body);
    /* Every other query is a FREE_QUERY: held 50 ms, so those in flight pile up. */
    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   VEC_HEAD "{\"metric\":{},\"value\":[1,\"9000\"]}" VEC_TAIL, 50),
        0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"FREE_QUERY", GPU_FREE_QUERY},
                                 {"MAX_CONCURRENT_DECISIONS", "4"},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 30000);
    assert_int_equal(count_queries(e, "gpu_memory_free_bytes{"), 200);
    assert_true(fake_held_max(e->fake) <= 4);
    assert_true(fake_held_max(e->fake) >= 2); /* a bound, not a serialisation */
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_recovered");
    jstr(d, "free_source", "query");
    json_decref(d);
}

/* A node's GPUs waiting their turn (MAX_CONCURRENT_DECISIONS) start in groups
 * that share one fresh reading: 6 GPUs below the floor, 2 at a time, read 3
 * times (not 5), and each GPU still gets its own decision on its own figures. */
static void
test_queued_gpus_share_a_reading(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(6, 15000);
    json_t *all;
    int seen[6] = {0};

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"MAX_CONCURRENT_DECISIONS", "2"},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 6, 10000);
    assert_int_equal(count_queries(e, "sum by (namespace, pod, uuid)"), 3);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 6);
    for (size_t i = 0; i < 6; i++) {
        json_t *d = json_array_get(all, i);
        const char *g = json_string_value(jget(d, "gpu"));
        assert_non_null(g);
        assert_true(strncmp(g, "GPU-00000", 9) == 0 && g[9] >= '0' && g[9] <= '5');
        seen[g[9] - '0']++;
        jstr(d, "result", "skipped_no_candidate");
        jint(d, "free_mib", 360);
        jhas(d, "reason", g);
    }
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(seen[i], 1);
    json_decref(all);
}

/* The same for a trigger naming a starving namespace: the GPUs waiting
 * their turn all carry it, and still share their readings (3, not 5). */
static void
test_queued_gpus_share_a_reading_starving(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(6, 15000);
    json_t *all;

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"MAX_CONCURRENT_DECISIONS", "2"},
                                 {NULL, NULL}});
    deliver(e, ON_NODE ",\"namespace\":\"immich\"");
    wait_rows(e, 6, 10000);
    assert_int_equal(count_queries(e, "sum by (namespace, pod, uuid)"), 3);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 6);
    for (size_t i = 0; i < 6; i++)
        jstr(json_array_get(all, i), "result", "skipped_no_candidate");
    json_decref(all);
}

/* MAX_CONCURRENT_DECISIONS=max, and a node-wide trigger on gpu-node-1 whose
 * reading has 2 * max GPUs below the floor: max decide at once, the other max
 * wait, then share one reading (held 500 ms). While it is out, the triggers
 * labels[0..n) arrive and wait; they start together once it is in, grouped
 * by node and starving namespace. Returns how many readings were asked. */
static size_t
queued_behind_a_batch(struct env *e, int max, const char *const *labels, size_t n)
{
    char *body = gpus_answer(2 * (size_t)max, 15000), m[16];
    long end;

    snprintf(m, sizeof(m), "%d", max);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 500), 0);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"FREE_QUERY", ""},
                                 {"MAX_CONCURRENT_DECISIONS", m},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    end = fake_now_ms() + 5000;
    while (count_queries(e, "sum by (namespace, pod, uuid)") < 2 && fake_now_ms() < end)
        run_ms(e->base, 5);
    assert_int_equal(count_queries(e, "sum by (namespace, pod, uuid)"), 2);
    for (size_t i = 0; i < n; i++)
        deliver(e, labels[i]);
    wait_rows(e, 2 * (size_t)max + n, 10000);
    return count_queries(e, "sum by (namespace, pod, uuid)");
}

/* Waiting GPU triggers of one node, two naming no namespace around one
 * naming an empty one: the two share a reading, the third reads alone (4
 * readings in all, not 5). */
static void
test_queued_gpus_grouped_by_namespace(void **state)
{
    static const char *const labels[] = {
        ON_NODE ",\"uuid\":\"GPU-000000\"",
        ON_NODE ",\"uuid\":\"GPU-000001\",\"namespace\":\"\"",
        ON_NODE ",\"uuid\":\"GPU-000002\"",
    };

    assert_int_equal(queued_behind_a_batch(*state, 3, labels, 3), 4);
}

/* Waiting GPU triggers of two nodes, interleaved: each node's share a
 * reading (4 in all, not 5). */
static void
test_queued_gpus_grouped_by_node(void **state)
{
    static const char *const labels[] = {
        ON_NODE ",\"uuid\":\"GPU-000000\"",
        "\"node\":\"gpu-node-2\",\"uuid\":\"GPU-000000\"",
        ON_NODE ",\"uuid\":\"GPU-000001\"",
    };

    assert_int_equal(queued_behind_a_batch(*state, 3, labels, 3), 4);
}

/* A used series names a GPU longer than any GPU's name: the reading cannot
 * be true; skipped_telemetry, no GPU judged nor asked FREE_QUERY. */
static void
test_reading_gpu_name_too_long(void **state)
{
    struct env *e = *state;
    char body[1024], gpu[300];
    json_t *d;

    memset(gpu, 'g', 257);
    gpu[257] = '\0';
    snprintf(body, sizeof(body),
             VEC_HEAD "{\"metric\":{\"namespace\":\"t\",\"pod\":\"p\",\"uuid\":\"%s\"},"
                      "\"value\":[1,\"1048576\"]}" VEC_TAIL,
             gpu);
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"FREE_QUERY", GPU_FREE_QUERY},
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows_then(e, 1, 5000, 300);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jhas(d, "error", "longer than any GPU's name");
    json_decref(d);
    /* Refused before any GPU is asked about. */
    assert_int_equal(count_queries(e, "gpu_memory_free_bytes"), 0);
}

/* A used series naming a GPU of 256 bytes, the longest name, is judged. */
static void
test_reading_gpu_name_longest(void **state)
{
    struct env *e = *state;
    char body[1024], gpu[300];
    json_t *d;

    memset(gpu, 'g', 256);
    gpu[256] = '\0';
    snprintf(body, sizeof(body),
             VEC_HEAD "{\"metric\":{\"namespace\":\"t\",\"pod\":\"p\",\"uuid\":\"%s\"},"
                      "\"value\":[1,\"1048576\"]}" VEC_TAIL,
             gpu);
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){
                 {"USED_QUERY", GPU_USED_QUERY}, {"FREE_QUERY", ""}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_recovered");
    jhas(d, "reason", "on every GPU (1; the least free is gggg");
    json_decref(d);
}

/* GPU_LABEL is a label name, but so long the device query (FREE_QUERY=auto)
 * cannot be written: the decision ends skipped_telemetry saying so, it
 * does not wait for an answer never asked for. */
static void
test_device_query_cannot_be_built(void **state)
{
    struct env *e = *state;
    char label[2100];
    json_t *d;

    memset(label, 'a', 2000);
    label[2000] = '\0';
    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-incident.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    engine_start(e, (const struct kv[]){{"GPU_LABEL", label}, {NULL, NULL}}, 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jhas(d, "error", "the device query (FREE_QUERY=auto): GPU_LABEL");
    assert_int_equal(count_path(e, "POST", ML_EVICT), 0);
    json_decref(d);
}

/* Queued GPUs' shared reading fails: each of them is skipped_telemetry with
 * the reading's error, as its own reading would be (not failed). */
static void
test_queued_gpus_reading_fails(void **state)
{
    struct env *e = *state;
    char *body = gpus_answer(6, 15000);
    json_t *all;
    size_t telemetry = 0;

    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH,
                                      "gpu_pod_memory_used_bytes", 200, body),
                     0);
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, "gpu_pod_memory_used_bytes", 503,
                         "{\"status\":\"error\",\"errorType\":\"unavailable\","
                         "\"error\":\"overloaded\"}"),
        0);
    free(body);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){{"USED_QUERY", GPU_USED_QUERY},
                                 {"MAX_CONCURRENT_DECISIONS", "2"},
                                 {"FREE_QUERY", ""}, /* the used query alone */
                                 {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 6, 10000);
    all = decisions(e);
    assert_int_equal(json_array_size(all), 6);
    for (size_t i = 0; i < 6; i++) {
        json_t *d = json_array_get(all, i);
        const char *r = json_string_value(jget(d, "result"));
        if (strcmp(r, "skipped_telemetry") == 0) {
            jhas(d, "error", "503");
            telemetry++;
        } else {
            jstr(d, "result", "skipped_no_candidate"); /* the first reading's two */
        }
    }
    assert_int_equal(telemetry, 4);
    json_decref(all);
}

/* --- 5. two series with one label set: ambiguous, never counted twice ---- */

/* immich-ml's one series, sent twice: counted twice it read 2 x 6000 MiB, over
 * its budget, and was recycled. A broken or hostile Prometheus: refused. */
static void
test_identical_series_refused(void **state)
{
    struct env *e = *state;
    json_t *d;

    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   VEC_HEAD "{\"metric\":{\"namespace\":\"" ML_NS "\",\"pod\":\"" ML_POD
                            "\",\"container\":\"main\"},\"value\":[1,\"6291456000\"]},"
                            "{\"metric\":{\"container\":\"main\",\"pod\":\"" ML_POD
                            "\",\"namespace\":\"" ML_NS
                            "\"},\"value\":[1,\"6291456000\"]}" VEC_TAIL,
                   0),
        0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json");
    start(e, (const struct kv[]){{"GPU_TOTAL_MIB", "13000"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count_path(e, "POST", ML_EVICT), 0);
    d = decision_at(e, 0);
    jstr(d, "result", "skipped_telemetry");
    jhas(d, "error", "two series with one label set (result[0] and result[1])");
    json_decref(d);
}

/* The same pod in two series that differ in one label (two containers) is
 * summed, as SPEC says: only an identical label set is refused. */
static void
test_two_containers_summed(void **state)
{
    struct env *e = *state;
    json_t *d;

    assert_int_equal(
        fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                   VEC_HEAD
                   "{\"metric\":{\"namespace\":\"" ML_NS "\",\"pod\":\"" ML_POD
                   "\",\"container\":\"main\"},\"value\":[1,\"6291456000\"]},"
                   "{\"metric\":{\"namespace\":\"" ML_NS "\",\"pod\":\"" ML_POD
                   "\",\"container\":\"side\"},\"value\":[1,\"6291456000\"]}" VEC_TAIL,
                   0),
        0);
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    route_file(e, "POST", ML_EVICT, 201, "remedy-status-201.json");
    start(e, (const struct kv[]){
                 {"GPU_TOTAL_MIB", "13000"}, {"DRY_RUN", "true"}, {NULL, NULL}});
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = decision_at(e, 0);
    jstr(d, "result", "would_recycle");
    jint(jget(d, "victim"), "used_mib", 12000);
    json_decref(d);
}

/* --- mutation survivors of receiver/decide (issue 39) ---------------------- */

/* Waiting GPU triggers of one node naming no namespace, an empty one, and two
 * others, interleaved: those naming the same one (or none) share a reading,
 * whatever their order in the queue: 4 readings for the 6, not 6 (and never
 * one shared by different namespaces: 2 or 3). */
static void
test_queued_gpus_grouped_mixed_namespaces(void **state)
{
    static const char *const labels[] = {
        ON_NODE ",\"uuid\":\"GPU-000000\",\"namespace\":\"immich\"",
        ON_NODE ",\"uuid\":\"GPU-000001\"",
        ON_NODE ",\"uuid\":\"GPU-000002\",\"namespace\":\"frigate\"",
        ON_NODE ",\"uuid\":\"GPU-000003\"",
        ON_NODE ",\"uuid\":\"GPU-000004\",\"namespace\":\"immich\"",
        ON_NODE ",\"uuid\":\"GPU-000005\",\"namespace\":\"\"",
    };

    assert_int_equal(queued_behind_a_batch(*state, 6, labels, 6), 2 + 4);
}

static void
drained_count(void *arg)
{
    (*(int *)arg)++;
}

/* A trigger naming a GPU while 1,023 other nodes wait their turn
 * (MAX_CONCURRENT_DECISIONS=1): its reading is in node scope, so the node's
 * brake must hold it, and the full table has no room for it: failed, saying
 * why, naming no GPU; the waiting ones end at the stop as usual. */
static void
test_brake_table_full_gpu_trigger_in_node_scope(void **state)
{
    struct env *e = *state;
    int drained = 0;
    size_t n[2];
    json_t *d;

    route_file(e, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json");
    route_file(e, "GET", PODS_PATH, 200, "remedy-pods-incident.json");
    start(e, (const struct kv[]){
                 {"FREE_QUERY", ""}, {"MAX_CONCURRENT_DECISIONS", "1"}, {NULL, NULL}});
    deliver(e, ON_NODE ",\"uuid\":\"GPU-000000\"");
    deliver_nodes(e, 1023); /* each queued, busy: the table is full */
    for (int i = 0; i < 1000 && (count_rows(e, n), n[0] < 1); i++)
        run_ms(e->base, 5);
    assert_true(n[0] >= 1);
    remedy_shutdown(e->r, drained_count, &drained);
    for (int i = 0; i < 1000 && drained == 0; i++)
        run_ms(e->base, 5);
    assert_int_equal(drained, 1);
    count_rows(e, n);
    assert_int_equal(n[0], 1024);
    d = decision_at(e, 0);
    jstr(d, "node", NODE);
    jnull(d, "gpu");
    jstr(d, "result", "failed");
    jhas(d, "error", "too many nodes tracked");
    json_decref(d);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_node_label_alias_inside_settle),
        T(test_node_label_selector_syntax),
        T(test_node_label_not_a_name),
        T(test_node_label_longest_name),
        T(test_node_list_bad_names),
        T(test_gpu_label_too_long),
        T(test_gpu_label_longest),
        T(test_brake_table_full),
        T(test_brake_table_full_keeps_busy),
        T(test_metric_labels_bounded),
        T(test_reading_too_many_gpus),
        T(test_reading_256_gpus),
        T(test_device_too_many_gpus),
        T(test_free_query_bounded),
        T(test_queued_gpus_share_a_reading),
        T(test_queued_gpus_share_a_reading_starving),
        T(test_queued_gpus_grouped_by_namespace),
        T(test_queued_gpus_grouped_by_node),
        T(test_reading_gpu_name_too_long),
        T(test_reading_gpu_name_longest),
        T(test_device_query_cannot_be_built),
        T(test_queued_gpus_reading_fails),
        T(test_identical_series_refused),
        T(test_two_containers_summed),
        T(test_queued_gpus_grouped_mixed_namespaces),
        T(test_brake_table_full_gpu_trigger_in_node_scope),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
