/* test_capacity.c -- capacity advertising against the fake API server: patches, state,
 * retries */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "capacity.h"
#include "fake.h"
#include "kube.h"
#include "log.h"
#include "prom.h"

#define SELECTOR "nvidia.com/gpu.present=true"
#define RESOURCE "viktorbarzin.me/gpumem"
#define PATCH_BODY                                                                       \
    "[{\"op\":\"add\",\"path\":\"/status/capacity/"                                      \
    "viktorbarzin.me~1gpumem\",\"value\":\"14000\"}]"
#define NODE1 "/api/v1/nodes/gpu-node-1/status"
#define NODE2 "/api/v1/nodes/gpu-node-2/status"

struct once {
    int done;
    int calls;
    int ok;
    char summary[1024];
};

struct env {
    struct event_base *base;
    struct fake *fake;
    struct kube *k;
    struct capacity *c;
    struct once once;
    struct fake *pfake; /* auto tests: the fake Prometheus */
    struct prom *prom;
};

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct kube_opts ko;
    char err[256];

    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    assert_non_null(e);
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    memset(&ko, 0, sizeof(ko));
    ko.ko_url = fake_url(e->fake);
    ko.ko_timeout_ms = 2000;
    assert_non_null(e->k = kube_new(e->base, &ko, err, sizeof(err)));
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    capacity_free(e->c);
    prom_free(e->prom);
    fake_free(e->pfake);
    kube_free(e->k);
    fake_free(e->fake);
    event_base_free(e->base);
    free(e);
    return 0;
}

static struct capacity *
advertiser(struct env *e, long interval_s)
{
    struct capacity_opts o = {.co_resource = RESOURCE,
                              .co_capacity_mib = 14000,
                              .co_selector = SELECTOR,
                              .co_interval_s = interval_s,
                              .co_retry_min_ms = 100};

    e->c = capacity_new(e->base, e->k, &o);
    assert_non_null(e->c);
    return e->c;
}

/* Two GPU nodes, both patched fine. */
static void
happy_routes(struct env *e)
{
    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 0);
    fake_route_file(e->fake, "PATCH", NODE1, 200, "kube-node-patched-200.json", 0);
    fake_route_file(e->fake, "PATCH", NODE2, 200, "kube-node-patched-200.json", 0);
}

/* Runs the loop until cond holds (answers take longer under valgrind) or 3 s pass. */
#define WAIT_FOR(e, cond)                                                                \
    do {                                                                                 \
        long end_ = fake_now_ms() + 3000;                                                \
        while (!(cond) && fake_now_ms() < end_)                                          \
            fake_run_for((e)->base, 10);                                                 \
    } while (0)

/* Runs the loop until the fake saw n requests, then a little more for the answers. */
static void
run_until_requests(struct env *e, size_t n, long timeout_ms)
{
    long end = fake_now_ms() + timeout_ms;

    while (fake_count(e->fake) < n && fake_now_ms() < end)
        fake_run_for(e->base, 10);
    assert_int_equal(fake_count(e->fake), n);
    fake_run_for(e->base, 30);
}

struct seen {
    char names[4][64];
    int ok[4];
    size_t n;
};

static void
collect(const char *node, int ok, void *arg)
{
    struct seen *s = arg;

    assert_true(s->n < 4);
    snprintf(s->names[s->n], sizeof(s->names[s->n]), "%s", node);
    s->ok[s->n++] = ok;
}

static struct seen
nodes(struct env *e)
{
    struct seen s;

    memset(&s, 0, sizeof(s));
    capacity_foreach_node(e->c, collect, &s);
    return s;
}

static void
assert_patch(const struct fake_req *fr, const char *path)
{
    assert_string_equal(fr->fr_method, "PATCH");
    assert_string_equal(fr->fr_path, path);
    assert_string_equal(fake_header(fr, "Content-Type"), "application/json-patch+json");
    assert_string_equal(fr->fr_body, PATCH_BODY);
}

static void
on_once(int ok, const char *summary, void *arg)
{
    struct once *o = arg;

    o->done = 1;
    o->calls++;
    o->ok = ok;
    snprintf(o->summary, sizeof(o->summary), "%s", summary);
}

static void
once(struct env *e)
{
    memset(&e->once, 0, sizeof(e->once));
    assert_int_equal(capacity_once(e->c, on_once, &e->once), 0);
    assert_int_equal(e->once.calls, 0);
    assert_int_equal(fake_run_until(e->base, &e->once.done, 5000), 0);
    assert_int_equal(e->once.calls, 1);
}

static void
test_serve_patches_every_node(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    struct seen s;
    char *sel;

    happy_routes(e);
    advertiser(e, 0);
    s = nodes(e);
    assert_int_equal(s.n, 0);
    assert_int_equal(capacity_start(e->c), 0);
    assert_int_equal(capacity_start(e->c), -1);
    assert_int_equal(fake_count(e->fake), 0); /* the pass runs from the loop */
    run_until_requests(e, 3, 3000);
    WAIT_FOR(e, nodes(e).n == 2 && nodes(e).ok[0] && nodes(e).ok[1]);
    fr = fake_req(e->fake, 0);
    assert_string_equal(fr->fr_method, "GET");
    assert_string_equal(fr->fr_path, "/api/v1/nodes");
    sel = fake_query_param(fr, "labelSelector");
    assert_string_equal(sel, SELECTOR);
    free(sel);
    /* Patches go out together; their order is the transport's. */
    fr = fake_req(e->fake, 1);
    assert_patch(fr, strcmp(fr->fr_path, NODE1) == 0 ? NODE1 : NODE2);
    assert_patch(fake_req(e->fake, 2), strcmp(fr->fr_path, NODE1) == 0 ? NODE2 : NODE1);
    s = nodes(e);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.names[0], "gpu-node-1");
    assert_string_equal(s.names[1], "gpu-node-2");
    assert_true(s.ok[0] && s.ok[1]);
    assert_int_equal(capacity_error_count(e->c), 0);
    /* Interval 0: start-up only. */
    fake_run_for(e->base, 300);
    assert_int_equal(fake_count(e->fake), 3);
}

static void
test_retry_until_success(void **state)
{
    struct env *e = *state;
    struct seen s;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 0);
    fake_route_file(e->fake, "PATCH", NODE1, 500, "kube-status-500.json", 0);
    fake_route_file(e->fake, "PATCH", NODE1, 200, "kube-node-patched-200.json", 0);
    fake_route_file(e->fake, "PATCH", NODE2, 200, "kube-node-patched-200.json", 0);
    advertiser(e, 0);
    capacity_start(e->c);
    run_until_requests(e, 3, 3000);
    WAIT_FOR(e, nodes(e).ok[1] && capacity_error_count(e->c) == 1);
    s = nodes(e);
    assert_int_equal(s.n, 2);
    assert_false(s.ok[0]); /* gpu-node-1 failed */
    assert_true(s.ok[1]);
    assert_int_equal(capacity_error_count(e->c), 1);
    /* Retried after 100 ms: a fresh list and both patches again. */
    run_until_requests(e, 6, 3000);
    assert_true(fake_req(e->fake, 3)->fr_at_ms - fake_req(e->fake, 2)->fr_at_ms >= 90);
    assert_string_equal(fake_req(e->fake, 3)->fr_path, "/api/v1/nodes");
    WAIT_FOR(e, nodes(e).ok[0] && nodes(e).ok[1]);
    s = nodes(e);
    assert_true(s.ok[0] && s.ok[1]);
    assert_int_equal(capacity_error_count(e->c), 1);
    fake_run_for(e->base, 400);
    assert_int_equal(fake_count(e->fake), 6); /* done: interval 0 */
}

static void
test_backoff_doubles(void **state)
{
    struct env *e = *state;
    long gap1, gap2, gap3;

    for (int i = 0; i < 3; i++)
        fake_route_file(e->fake, "GET", "/api/v1/nodes", 500, "kube-status-500.json", 0);
    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-empty.json", 0);
    advertiser(e, 0);
    capacity_start(e->c);
    run_until_requests(e, 4, 3000);
    gap1 = fake_req(e->fake, 1)->fr_at_ms - fake_req(e->fake, 0)->fr_at_ms;
    gap2 = fake_req(e->fake, 2)->fr_at_ms - fake_req(e->fake, 1)->fr_at_ms;
    gap3 = fake_req(e->fake, 3)->fr_at_ms - fake_req(e->fake, 2)->fr_at_ms;
    /* 100, 200, 400 ms: lower bounds prove the doubling, the order that it grows. */
    assert_true(gap1 >= 90 && gap1 < gap2);
    assert_true(gap2 >= 190 && gap2 < gap3);
    assert_true(gap3 >= 390);
    /* The list failed three times, then matched nothing: four errors. */
    WAIT_FOR(e, capacity_error_count(e->c) == 4);
    assert_int_equal(capacity_error_count(e->c), 4);
    assert_int_equal(nodes(e).n, 0);
}

static void
test_interval_reasserts(void **state)
{
    struct env *e = *state;

    happy_routes(e);
    advertiser(e, 1);
    capacity_start(e->c);
    run_until_requests(e, 3, 3000);
    /* A kubelet that re-registered zeroed it: the next pass, one interval on, puts it
     * back. */
    run_until_requests(e, 6, 1500);
    assert_true(fake_req(e->fake, 3)->fr_at_ms - fake_req(e->fake, 0)->fr_at_ms >= 990);
    assert_string_equal(fake_req(e->fake, 3)->fr_path, "/api/v1/nodes");
    assert_patch(fake_req(e->fake, 5), fake_req(e->fake, 5)->fr_path);
    assert_int_equal(capacity_error_count(e->c), 0);
}

static void
test_node_table_follows_the_list(void **state)
{
    struct env *e = *state;
    struct seen s;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 0);
    fake_route(e->fake, "GET", "/api/v1/nodes", 200, NULL,
               "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":["
               "{\"metadata\":{\"name\":\"gpu-node-2\"}},{\"metadata\":{\"name\":\"gpu-"
               "node-3\"}}]}",
               0);
    fake_route_file(e->fake, "PATCH", NODE1, 500, "kube-status-500.json", 0);
    fake_route_file(e->fake, "PATCH", NODE2, 200, "kube-node-patched-200.json", 0);
    fake_route_file(e->fake, "PATCH", "/api/v1/nodes/gpu-node-3/status", 200,
                    "kube-node-patched-200.json", 300);
    advertiser(e, 0);
    capacity_start(e->c);
    run_until_requests(e, 3, 3000);
    /* Second pass: node 1 left the selector, node 3 joined (its patch is slow). */
    run_until_requests(e, 6, 3000);
    s = nodes(e);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.names[0], "gpu-node-2");
    assert_true(s.ok[0]); /* kept its state */
    assert_string_equal(s.names[1], "gpu-node-3");
    assert_false(s.ok[1]); /* not patched yet */
    WAIT_FOR(e, nodes(e).ok[1]);
    s = nodes(e);
    assert_true(s.ok[1]);
}

static void
test_once_all_ok(void **state)
{
    struct env *e = *state;

    happy_routes(e);
    advertiser(e, 3600);
    once(e);
    assert_true(e->once.ok);
    assert_string_equal(e->once.summary, "patched 2 of 2 nodes with " RESOURCE "=14000");
    assert_int_equal(fake_count(e->fake), 3);
    fake_run_for(e->base, 200);
    assert_int_equal(fake_count(e->fake), 3); /* once: no timer */
}

static void
test_once_no_node(void **state)
{
    struct env *e = *state;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-empty.json", 0);
    advertiser(e, 0);
    once(e);
    assert_false(e->once.ok);
    assert_string_equal(e->once.summary, "no node matches GPU_NODE_SELECTOR=" SELECTOR);
    assert_int_equal(capacity_error_count(e->c), 1);
    fake_run_for(e->base, 300);
    assert_int_equal(fake_count(e->fake), 1); /* no retries in once mode */
}

static void
test_once_partial_failure(void **state)
{
    struct env *e = *state;
    struct seen s;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 0);
    fake_route_file(e->fake, "PATCH", NODE1, 200, "kube-node-patched-200.json", 0);
    fake_route_file(e->fake, "PATCH", NODE2, 403, "kube-status-403-nodes.json", 0);
    advertiser(e, 0);
    once(e);
    assert_false(e->once.ok);
    assert_non_null(strstr(e->once.summary,
                           "patched 1 of 2 nodes; first failure: gpu-node-2: "
                           "kube: HTTP 403: missing RBAC permission to patch "
                           "nodes/status (node gpu-node-2)"));
    s = nodes(e);
    assert_true(s.ok[0]);
    assert_false(s.ok[1]);
    assert_int_equal(capacity_error_count(e->c), 1);
}

static void
test_once_list_fails(void **state)
{
    struct env *e = *state;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 500, "kube-status-500.json", 0);
    advertiser(e, 0);
    once(e);
    assert_false(e->once.ok);
    assert_string_equal(
        e->once.summary,
        "listing nodes failed: kube: list nodes: HTTP 500: Internal error "
        "occurred: etcdserver: request timed out (etcdserver: request timed out)");
    assert_int_equal(capacity_error_count(e->c), 1);
    /* A second once works and is independent. */
    fake_clear(e->fake);
    happy_routes(e);
    once(e);
    assert_true(e->once.ok);
}

static void
test_free_with_calls_in_flight(void **state)
{
    struct env *e = *state;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 200);
    fake_route_file(e->fake, "PATCH", NODE1, 200, "kube-node-patched-200.json", 200);
    fake_route_file(e->fake, "PATCH", NODE2, 200, "kube-node-patched-200.json", 200);
    advertiser(e, 1);
    capacity_start(e->c);
    fake_run_for(e->base, 50);
    capacity_free(e->c); /* the list is in flight */
    e->c = NULL;
    fake_run_for(e->base, 400); /* its answer comes back to nobody */
    assert_int_equal(fake_count(e->fake), 1);
    advertiser(e, 1);
    capacity_start(e->c);
    run_until_requests(e, 4, 1000); /* the first list, then this pass's three */
    capacity_free(e->c);            /* both patches in flight */
    e->c = NULL;
    fake_run_for(e->base, 400);
    assert_int_equal(fake_count(e->fake), 4);
}

static void
test_kube_freed_first(void **state)
{
    struct env *e = *state;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 500);
    advertiser(e, 0);
    memset(&e->once, 0, sizeof(e->once));
    assert_int_equal(capacity_once(e->c, on_once, &e->once), 0);
    assert_int_equal(capacity_once(e->c, on_once, &e->once), -1); /* one pass at a time */
    fake_run_for(e->base, 50);
    kube_free(e->k);
    e->k = NULL;
    assert_int_equal(e->once.calls, 1);
    assert_false(e->once.ok);
    assert_string_equal(e->once.summary, "listing nodes: cancelled");
    assert_int_equal(capacity_error_count(e->c), 0); /* shutting down is not an error */
}

/* serve's first pass comes due while a once pass runs: it waits its turn. */
static void
test_serve_waits_for_once(void **state)
{
    struct env *e = *state;

    fake_route_file(e->fake, "GET", "/api/v1/nodes", 200, "kube-nodes-empty.json", 300);
    advertiser(e, 0);
    memset(&e->once, 0, sizeof(e->once));
    assert_int_equal(capacity_once(e->c, on_once, &e->once), 0);
    assert_int_equal(capacity_start(e->c), 0);
    assert_int_equal(fake_run_until(e->base, &e->once.done, 3000), 0);
    assert_int_equal(fake_count(e->fake), 1);
    run_until_requests(e, 2, 1000); /* serve's own pass, after the once pass */
    assert_int_equal(capacity_error_count(e->c), 1);
}

static void
test_new_rejects(void **state)
{
    struct env *e = *state;
    struct capacity_opts none = {.co_capacity_mib = 1};
    struct capacity_opts neg = {.co_resource = RESOURCE, .co_capacity_mib = -1};
    struct capacity_opts negi = {.co_resource = RESOURCE, .co_interval_s = -1};

    assert_null(capacity_new(e->base, e->k, &none));
    assert_null(capacity_new(e->base, e->k, &neg));
    assert_null(capacity_new(e->base, e->k, &negi));
    capacity_free(NULL);
}

/* --- GPUMEM_CAPACITY_MIB=auto --------------------------------------------- */

#define MIB_BYTES "1048576"
#define T4_BYTES "16106127360"   /* 15360 MiB */
#define H100_BYTES "85520809984" /* 81559 MiB */
#define QUERY "/api/v1/query"

/* A NodeList item: name, and GFD labels when mem is set. */
#define NODE_ITEM(name, labels)                                                          \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{" labels "}}}"
#define GFD(mem, count)                                                                  \
    "\"nvidia.com/gpu.memory\":\"" mem "\",\"nvidia.com/gpu.count\":\"" count "\""
#define NODELIST(items)                                                                  \
    "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[" items "]}"
/* One gpu_memory_total_bytes sample as the exporter labels it. */
#define TOTAL(node, uuid, bytes)                                                         \
    "{\"metric\":{\"__name__\":\"gpu_memory_total_bytes\",\"node\":\"" node              \
    "\",\"gpu\":\"0\","                                                                  \
    "\"uuid\":\"" uuid "\",\"model\":\"x\"},\"value\":[1780394400.1,\"" bytes "\"]}"
#define VECTOR(results)                                                                  \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" results   \
    "]}}"

static void
prom_client(struct env *e)
{
    struct prom_opts o = {.po_connect_timeout_ms = 500, .po_timeout_ms = 2000};
    char err[256];

    assert_non_null(e->pfake = fake_new(e->base));
    o.po_url = fake_url(e->pfake);
    assert_non_null(e->prom = prom_new(e->base, &o, err, sizeof(err)));
}

static struct capacity *
auto_advertiser(struct env *e, long interval_s, long retry_min_ms, long size_retry_ms)
{
    struct capacity_opts o = {.co_resource = RESOURCE,
                              .co_auto = 1,
                              .co_reserve_mib = 2048,
                              .co_prom = e->prom,
                              .co_gpu_label = "uuid",
                              .co_selector = SELECTOR,
                              .co_interval_s = interval_s,
                              .co_retry_min_ms = retry_min_ms,
                              .co_size_retry_ms = size_retry_ms};

    assert_non_null(e->c = capacity_new(e->base, e->k, &o));
    return e->c;
}

static void
patch_route(struct env *e, const char *node)
{
    char path[128];

    snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
    fake_route_file(e->fake, "PATCH", path, 200, "kube-node-patched-200.json", 0);
}

/* The value the fake API server was sent for node; -1 when never patched. */
static long
patched_value(struct env *e, const char *node)
{
    char path[128], want[256];
    long v = -1;

    snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *fr = fake_req(e->fake, i);
        const char *p;

        if (strcmp(fr->fr_method, "PATCH") != 0 || strcmp(fr->fr_path, path) != 0)
            continue;
        snprintf(want, sizeof(want),
                 "[{\"op\":\"add\",\"path\":\"/status/capacity/viktorbarzin.me~1gpumem\","
                 "\"value\":\"");
        assert_memory_equal(fr->fr_body, want, strlen(want));
        p = fr->fr_body + strlen(want);
        v = strtol(p, NULL, 10);
    }
    return v;
}

static int
node_ok(struct env *e, const char *node)
{
    struct seen s = nodes(e);

    for (size_t i = 0; i < s.n; i++)
        if (strcmp(s.names[i], node) == 0)
            return s.ok[i];
    return -1;
}

/* A T4, an H100 with two cards (one scraped twice), and a node known only by
 * its GFD labels: each gets its own value, from one query. */
static void
test_auto_each_node_its_own(void **state)
{
    struct env *e = *state;
    char *q;

    prom_client(e);
    fake_route(
        e->fake, "GET", "/api/v1/nodes", 200, NULL,
        NODELIST(NODE_ITEM("t4", "\"nvidia.com/gpu.present\":\"true\"") "," NODE_ITEM(
            "h100", GFD("15360", "1")) "," NODE_ITEM("gfd-only", GFD("40960", "2"))),
        0);
    fake_route(
        e->pfake, "GET", QUERY, 200, NULL,
        VECTOR(TOTAL("t4", "GPU-t4", T4_BYTES) "," TOTAL(
            "h100", "GPU-h1",
            H100_BYTES) "," TOTAL("h100", "GPU-h2",
                                  H100_BYTES) "," TOTAL("h100", "GPU-h1", H100_BYTES)),
        0);
    patch_route(e, "t4");
    patch_route(e, "h100");
    patch_route(e, "gfd-only");
    auto_advertiser(e, 0, 100, 0);
    once(e);
    assert_true(e->once.ok);
    assert_non_null(strstr(e->once.summary, "patched 3 of 3 nodes"));
    assert_int_equal(patched_value(e, "t4"), 15360 - 2048);
    /* The exporter wins over the labels (which say 15360 here). */
    assert_int_equal(patched_value(e, "h100"), 2 * (81559 - 2048));
    assert_int_equal(patched_value(e, "gfd-only"), 2 * (40960 - 2048));
    assert_int_equal(capacity_error_count(e->c), 0);
    /* One query for every node. */
    assert_int_equal(fake_count(e->pfake), 1);
    q = fake_query_param(fake_req(e->pfake, 0), "query");
    assert_string_equal(q, "gpu_memory_total_bytes");
    free(q);
}

/* A node with neither series nor labels is not patched, shows 0, is counted,
 * and is looked at again on the size retry (not the hour-long interval, not
 * the minute-long backoff) until its exporter reports. */
static void
test_auto_unknown_retried_until_known(void **state)
{
    struct env *e = *state;

    prom_client(e);
    fake_route(e->fake, "GET", "/api/v1/nodes", 200, NULL,
               NODELIST(NODE_ITEM("t4", "") "," NODE_ITEM("new", "")), 0);
    fake_route(e->pfake, "GET", QUERY, 200, NULL, VECTOR(TOTAL("t4", "GPU-t4", T4_BYTES)),
               0);
    fake_route(
        e->pfake, "GET", QUERY, 200, NULL,
        VECTOR(TOTAL("t4", "GPU-t4", T4_BYTES) "," TOTAL("new", "GPU-n", H100_BYTES)), 0);
    patch_route(e, "t4");
    patch_route(e, "new");
    auto_advertiser(e, 3600, 60000, 200);
    capacity_start(e->c);
    WAIT_FOR(e, node_ok(e, "t4") == 1);
    assert_int_equal(node_ok(e, "t4"), 1);
    assert_int_equal(node_ok(e, "new"), 0);
    assert_int_equal(patched_value(e, "new"), -1); /* never a guess */
    assert_int_equal(capacity_error_count(e->c), 1);
    WAIT_FOR(e, node_ok(e, "new") == 1);
    assert_int_equal(node_ok(e, "new"), 1);
    assert_int_equal(patched_value(e, "new"), 81559 - 2048);
    assert_int_equal(fake_count(e->pfake), 2);
    /* The retry came after the size retry (200 ms), not before. */
    assert_true(fake_req(e->pfake, 1)->fr_at_ms - fake_req(e->pfake, 0)->fr_at_ms >= 190);
    /* Known now: the next pass is an interval away. */
    fake_run_for(e->base, 500);
    assert_int_equal(fake_count(e->pfake), 2);
    assert_int_equal(capacity_error_count(e->c), 1);
}

/* Nonsense is never patched: a NaN total, labels in GB, a card no larger than
 * the reserve. Once mode then fails (advertise --once exits 1). */
static void
test_auto_nonsense_not_patched(void **state)
{
    struct env *e = *state;

    prom_client(e);
    fake_route(
        e->fake, "GET", "/api/v1/nodes", 200, NULL,
        NODELIST(NODE_ITEM("nan", GFD("15360", "1")) "," NODE_ITEM(
            "gb",
            GFD("16GB", "1")) "," NODE_ITEM("tiny",
                                            GFD("2048", "1")) "," NODE_ITEM("fine",
                                                                            GFD("15360",
                                                                                "1"))),
        0);
    fake_route(e->pfake, "GET", QUERY, 200, NULL, VECTOR(TOTAL("nan", "GPU-x", "NaN")),
               0);
    patch_route(e, "fine");
    auto_advertiser(e, 0, 100, 0);
    once(e);
    assert_false(e->once.ok);
    assert_non_null(strstr(e->once.summary,
                           "patched 1 of 4 nodes; first failure: nan: not "
                           "patched: the node exporter's "
                           "gpu_memory_total_bytes cannot be trusted"));
    assert_int_equal(patched_value(e, "fine"), 15360 - 2048);
    assert_int_equal(patched_value(e, "nan"), -1);
    assert_int_equal(patched_value(e, "gb"), -1);
    assert_int_equal(patched_value(e, "tiny"), -1);
    assert_int_equal(node_ok(e, "nan"), 0);
    assert_int_equal(node_ok(e, "gb"), 0);
    assert_int_equal(node_ok(e, "tiny"), 0);
    assert_int_equal(capacity_error_count(e->c), 3);
    assert_int_equal(fake_count(e->fake), 2); /* the list and one patch */
}

/* Prometheus down: the GFD labels still size their nodes; the rest wait. */
static void
test_auto_prometheus_down(void **state)
{
    struct env *e = *state;

    prom_client(e);
    fake_route(
        e->fake, "GET", "/api/v1/nodes", 200, NULL,
        NODELIST(NODE_ITEM("labelled", GFD("81559", "8")) "," NODE_ITEM("bare", "")), 0);
    fake_route(e->pfake, "GET", QUERY, 503, "text/plain", "overloaded", 0);
    patch_route(e, "labelled");
    auto_advertiser(e, 0, 100, 0);
    once(e);
    assert_false(e->once.ok);
    assert_int_equal(patched_value(e, "labelled"), 8 * (81559 - 2048));
    assert_int_equal(patched_value(e, "bare"), -1);
    assert_non_null(strstr(e->once.summary, "bare: not patched: size unknown: no "
                                            "gpu_memory_total_bytes series for it in "
                                            "Prometheus (prometheus: HTTP 503"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_serve_patches_every_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_until_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_doubles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interval_reasserts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_table_follows_the_list, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_once_all_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_once_no_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_once_partial_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_once_list_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_with_calls_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kube_freed_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_waits_for_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_rejects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_each_node_its_own, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_unknown_retried_until_known, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_auto_nonsense_not_patched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_prometheus_down, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
