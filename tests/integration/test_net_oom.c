/* test_net_oom.c -- every allocation of the network clients fails once: one callback, no
 * leaks */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "capacity.h"
#include "fake.h"
#include "kube.h"
#include "lib/oom.h"
#include "log.h"
#include "prom.h"

/*
 * The link sends malloc, calloc, realloc, strdup and strndup of this
 * program's own objects (the test, gvw_net, gvw_util, gvw_pod) to
 * tests/lib/oom.c; jansson's come through json_set_alloc_funcs() when a
 * scenario counts them. libcurl and libevent allocate on their own. When
 * armed, allocation number N (from 0) returns NULL. The fake server
 * runs in a child process, so its allocations never fail.
 */
static int count_json; /* jansson's allocations are failed too */

void *__real_malloc(size_t n); /* this file's own malloc is wrapped */

static void *
json_alloc(size_t n)
{
    return count_json && oom_refuse() ? NULL : __real_malloc(n);
}

static void
json_release(void *p)
{
    free(p);
}

static pid_t server;
static char server_url[64];

/* The fake API server and Prometheus, in a child process. */
static int
group_setup(void **state)
{
    int fds[2], port = 0;

    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_ERROR); /* thousands of failures: keep it quiet */
    json_set_alloc_funcs(json_alloc, json_release);
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    if ((server = fork()) == 0) {
        struct event_base *base = event_base_new();
        struct fake *f = base ? fake_new(base) : NULL;

        if (f == NULL)
            _exit(1);
        fake_route_file(f, "GET", "/api/v1/nodes", 200, "kube-nodes-gpu.json", 0);
        fake_route_file(f, "GET", "/api/v1/pods", 200, "kube-pods-node.json", 0);
        fake_route_file(f, "PATCH", "/api/v1/nodes/gpu-node-1/status", 200,
                        "kube-node-patched-200.json", 0);
        fake_route_file(f, "PATCH", "/api/v1/nodes/gpu-node-2/status", 403,
                        "kube-status-403-nodes.json", 0);
        fake_route_file(f, "POST", "/api/v1/namespaces/ns/pods/p/eviction", 429,
                        "kube-status-429-pdb.json", 0);
        fake_route_file(f, "DELETE", "/api/v1/namespaces/ns/pods/p", 200,
                        "kube-pod-deleted-200.json", 0);
        fake_route(
            f, "GET", "/api/v1/query", 200, NULL,
            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
            "{\"metric\":{\"namespace\":\"a\",\"pod\":\"b\"},\"value\":[1,\"5\"]}]}}",
            0);
        port = fake_port(f);
        if (write(fds[1], &port, sizeof(port)) != (ssize_t)sizeof(port))
            _exit(1);
        event_base_dispatch(base);
        _exit(0);
    }
    assert_true(server > 0);
    close(fds[1]);
    assert_int_equal(read(fds[0], &port, sizeof(port)), (ssize_t)sizeof(port));
    close(fds[0]);
    snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", port);
    return 0;
}

static int
group_teardown(void **state)
{
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    json_set_alloc_funcs(malloc, free);
    return 0;
}

struct run {
    struct event_base *base;
    struct prom *prom;
    struct kube *kube;
    struct capacity *cap;
    int done;
    int calls;
};

static void
on_prom(struct prom_answer *a, void *arg)
{
    struct run *r = arg;

    r->done = 1;
    r->calls++;
}

static void
on_kube(struct kube_answer *a, void *arg)
{
    struct run *r = arg;

    r->done = 1;
    r->calls++;
}

static void
on_once(int ok, const char *summary, void *arg)
{
    struct run *r = arg;

    assert_non_null(summary);
    r->done = 1;
    r->calls++;
}

enum what { PROM_USAGE, PROM_SCALAR, LIST_PODS, LIST_NODES, EVICT, DELETE, PATCH, ONCE };

/* One attempt; returns 0 when the call was accepted (so its callback must run). */
static int
start(struct run *r, enum what w)
{
    struct prom_opts po = {.po_url = server_url, .po_timeout_ms = 3000};
    struct kube_opts ko = {.ko_url = server_url, .ko_timeout_ms = 3000};
    struct capacity_opts co = {.co_resource = "viktorbarzin.me/gpumem",
                               .co_capacity_mib = 14000,
                               .co_selector = "nvidia.com/gpu.present=true"};
    struct pod_parse_opts pp = {.po_resource = "viktorbarzin.me/gpumem",
                                .po_protect_annotation = "gpu-vram-watchdog/protected"};
    char err[256];

    if (w == PROM_USAGE || w == PROM_SCALAR) {
        if ((r->prom = prom_new(r->base, &po, err, sizeof(err))) == NULL)
            return -1;
        return w == PROM_USAGE
                   ? prom_query_usage(r->prom, "q", "namespace", "pod", on_prom, r)
                   : prom_query_scalar(r->prom, "q", on_prom, r);
    }
    if ((r->kube = kube_new(r->base, &ko, err, sizeof(err))) == NULL)
        return -1;
    switch (w) {
    case LIST_PODS:
        return kube_list_pods(r->kube, "gpu-node-1", &pp, on_kube, r);
    case LIST_NODES:
        return kube_list_nodes(r->kube, "a=b", on_kube, r);
    case EVICT:
        return kube_evict(r->kube, "ns", "p", "uid", 1, on_kube, r);
    case DELETE:
        return kube_delete_pod(r->kube, "ns", "p", "uid", 0, on_kube, r);
    case PATCH:
        return kube_patch_capacity(r->kube, "gpu-node-1", "a.b/c", 1, on_kube, r);
    case ONCE:
        if ((r->cap = capacity_new(r->base, r->kube, &co)) == NULL)
            return -1;
        return capacity_once(r->cap, on_once, r);
    default:
        return -1;
    }
}

/* Fails allocation 0, 1, 2, ... in turn until a whole run needs no more. */
static void
exhaust(enum what w, int with_json)
{
    long n;

    for (n = 0;; n++) {
        struct run r;
        int injected;

        memset(&r, 0, sizeof(r));
        assert_non_null(r.base = event_base_new());
        count_json = with_json;
        oom_arm(n);
        if (start(&r, w) == 0) {
            assert_int_equal(r.calls, 0);
            if (fake_run_until(r.base, &r.done, 5000) != 0)
                fail_msg("with allocation %ld failing, no callback came", n);
        }
        capacity_free(r.cap);
        kube_free(r.kube);
        prom_free(r.prom);
        injected = oom_disarm();
        assert_true(r.calls <= 1); /* never twice; none only when refused up front */
        event_base_free(r.base);
        if (!injected)
            break;
    }
    assert_true(n > 3); /* the scenario did allocate */
    print_message("%ld allocations failed in turn\n", n);
}

static void
test_prom_usage(void **state)
{
    exhaust(PROM_USAGE, 1);
}

static void
test_prom_scalar(void **state)
{
    exhaust(PROM_SCALAR, 1);
}

static void
test_list_pods(void **state)
{
    exhaust(LIST_PODS, 0); /* a PodList is thousands of jansson allocations */
}

static void
test_list_nodes(void **state)
{
    exhaust(LIST_NODES, 1);
}

static void
test_evict(void **state)
{
    exhaust(EVICT, 1);
}

static void
test_delete(void **state)
{
    exhaust(DELETE, 0);
}

static void
test_patch(void **state)
{
    exhaust(PATCH, 1);
}

static void
test_capacity_once(void **state)
{
    exhaust(ONCE, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prom_usage), cmocka_unit_test(test_prom_scalar),
        cmocka_unit_test(test_list_pods),  cmocka_unit_test(test_list_nodes),
        cmocka_unit_test(test_evict),      cmocka_unit_test(test_delete),
        cmocka_unit_test(test_patch),      cmocka_unit_test(test_capacity_once),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
