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
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
