/* test_attribute.c -- processes joined to pods: dedup, na, unknown pods and containers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "attribute.h"

#define GIB 1073741824ULL

static struct pod_container c_a[] = {{"aaaa", "server"}, {"bbbb", "sidecar"}};
static struct pod pod_list[] = {
    {.p_uid = "uid-a",
     .p_namespace = "ml",
     .p_name = "llm-0",
     .p_containers = c_a,
     .p_container_count = 2},
    {.p_uid = "uid-b", .p_namespace = "web", .p_name = "render-1"},
};
static const struct pod_list pods = {.pl_pods = pod_list, .pl_count = 2};

static struct attr_pid
pid(uint32_t p, const char *uid, const char *cid)
{
    struct attr_pid a;

    memset(&a, 0, sizeof(a));
    a.ap_pid = p;
    if (uid != NULL) {
        a.ap_found = 1;
        snprintf(a.ap_id.cg_pod_uid, sizeof(a.ap_id.cg_pod_uid), "%s", uid);
        snprintf(a.ap_id.cg_container_id, sizeof(a.ap_id.cg_container_id), "%s", cid);
    }
    return a;
}

static const struct attr_series *
find(const struct attr_tally *r, size_t dev, const char *pod, const char *container)
{
    for (size_t i = 0; i < r->ar_nseries; i++)
        if (r->ar_series[i].as_device == dev &&
            strcmp(r->ar_series[i].as_pod, pod) == 0 &&
            strcmp(r->ar_series[i].as_container, container) == 0)
            return &r->ar_series[i];
    return NULL;
}

static int
never_asked(const char *key, void *arg)
{
    return 0;
}

static int
always_asked(const char *key, void *arg)
{
    return 1;
}

static void
test_merge(void **state)
{
    struct nvml_proc p0[] = {
        {10, 4 * GIB, 1}, /* compute */
        {11, 1 * GIB, 1}, /* same container as 10: summed */
        {12, 2 * GIB, 1}, /* sidecar */
        {20, 0, 0},       /* render-1 without a figure: unattributed */
        {30, GIB / 2, 1}, /* a host process */
        {99, GIB / 4, 1}, /* no cgroup read (gone) */
        {10, 4 * GIB, 1}, /* graphics list: the same process again, once */
        {15, 0, 0},       /* sidecar: no figure in the compute list ... */
        {15, GIB / 8, 1}, /* ... one in the graphics list: that one counts */
    };
    struct nvml_proc p1[] = {{13, 3 * GIB, 1}, {14, GIB, 1}};
    struct nvml_device devs[2] = {
        {0, "GPU-0", "T4", 16 * GIB, 6 * GIB, p0, 9},
        {1, "GPU-1", "A100", 80 * GIB, 70 * GIB, p1, 2},
    };
    struct nvml_snapshot snap = {devs, 2};
    struct attr_pid pids[] = {
        pid(10, "uid-a", "aaaa"), pid(11, "uid-a", "aaaa"), pid(12, "uid-a", "bbbb"),
        pid(20, "uid-b", "cccc"), pid(30, NULL, NULL),      pid(13, "uid-a", "aaaa"),
        pid(14, "uid-b", ""),     pid(15, "uid-a", "bbbb"),
    };
    struct attr_tally r;

    assert_int_equal(attribute(&snap, pids, 8, &pods, never_asked, NULL, &r), 0);
    assert_int_equal(r.ar_nseries, 4);
    assert_int_equal(find(&r, 0, "llm-0", "server")->as_bytes, 5 * GIB);
    assert_int_equal(find(&r, 0, "llm-0", "sidecar")->as_bytes, 2 * GIB + GIB / 8);
    assert_int_equal(find(&r, 1, "llm-0", "server")->as_bytes, 3 * GIB);
    assert_int_equal(find(&r, 1, "render-1", "")->as_bytes, GIB); /* its own cgroup */
    assert_null(find(&r, 0, "render-1", ""));                     /* the na one */
    assert_string_equal(find(&r, 0, "llm-0", "server")->as_namespace, "ml");
    assert_int_equal(r.ar_devices[0].ad_used, 10 * GIB);
    assert_int_equal(r.ar_devices[0].ad_unattributed, 10 * GIB - 7 * GIB - GIB / 8);
    assert_int_equal(r.ar_devices[1].ad_used, 10 * GIB);
    assert_int_equal(r.ar_devices[1].ad_unattributed, 10 * GIB - 4 * GIB);
    assert_false(r.ar_unknown_seen); /* the na process is not looked up */
    attr_tally_free(&r);
}

static void
test_unknown_pod_and_container(void **state)
{
    struct nvml_proc p0[] = {{40, GIB, 1}, {41, 2 * GIB, 1}};
    struct nvml_device dev = {0, "GPU-0", "T4", 16 * GIB, 12 * GIB, p0, 2};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_pid pids[] = {pid(40, "uid-new", "ffff"), pid(41, "uid-a", "eeee")};
    struct attr_tally r;

    assert_int_equal(attribute(&snap, pids, 2, &pods, never_asked, NULL, &r), 0);
    /* the unknown pod is never made up; the known pod's unknown container is "" */
    assert_int_equal(r.ar_nseries, 1);
    assert_int_equal(find(&r, 0, "llm-0", "")->as_bytes, 2 * GIB);
    assert_int_equal(r.ar_devices[0].ad_unattributed, 4 * GIB - 2 * GIB);
    assert_true(r.ar_unknown_seen);
    assert_string_equal(r.ar_unknown, "uid-new");
    attr_tally_free(&r);

    /* Keys that already asked do not ask again. */
    assert_int_equal(attribute(&snap, pids, 2, &pods, always_asked, NULL, &r), 0);
    assert_false(r.ar_unknown_seen);
    attr_tally_free(&r);

    /* Only the container unknown: its key is UID/ID. */
    assert_int_equal(attribute(&snap, &pids[1], 1, &pods, never_asked, NULL, &r), 0);
    assert_true(r.ar_unknown_seen);
    assert_string_equal(r.ar_unknown, "uid-a/eeee");
    attr_tally_free(&r);
}

static void
test_edges(void **state)
{
    /* free above total (a driver oddity): used 0, nothing negative */
    struct nvml_proc p0[] = {{10, GIB, 1}};
    struct nvml_device dev = {0, "GPU-0", "T4", GIB, 2 * GIB, p0, 1};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_pid pids[] = {pid(10, "uid-a", "aaaa")};
    struct nvml_snapshot none = {NULL, 0};
    struct attr_tally r;

    assert_int_equal(attribute(&snap, pids, 1, &pods, NULL, NULL, &r), 0);
    assert_int_equal(r.ar_devices[0].ad_used, 0);
    assert_int_equal(r.ar_devices[0].ad_unattributed, 0);
    attr_tally_free(&r);
    assert_int_equal(attribute(&none, NULL, 0, &pods, NULL, NULL, &r), 0);
    assert_int_equal(r.ar_nseries, 0);
    attr_tally_free(&r);
    attr_tally_free(NULL);
}

/* Per-process figures are NVML's word: sums saturate at UINT64_MAX, never
 * wrap (2^63 + 2^63 + 5 GiB once read as 5 GiB), so the series reads as more
 * than any card holds; unattributed stays at 0, never wraps either. */
static void
test_sums_saturate(void **state)
{
    const uint64_t half = 1ULL << 63;
    struct nvml_proc p0[] = {{10, half, 1},
                             {11, half, 1},
                             {16, 5 * GIB, 1},
                             {12, UINT64_MAX - 1, 1},
                             {17, 2, 1}};
    struct nvml_device dev = {0, "GPU-0", "T4", 16 * GIB, 6 * GIB, p0, 5};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_pid pids[] = {pid(10, "uid-a", "aaaa"), pid(11, "uid-a", "aaaa"),
                              pid(16, "uid-a", "aaaa"), pid(12, "uid-a", "bbbb"),
                              pid(17, "uid-a", "bbbb")};
    struct attr_tally r;

    (void)state;
    assert_int_equal(attribute(&snap, pids, 5, &pods, never_asked, NULL, &r), 0);
    assert_true(find(&r, 0, "llm-0", "server")->as_bytes == UINT64_MAX);
    assert_true(find(&r, 0, "llm-0", "sidecar")->as_bytes == UINT64_MAX);
    assert_int_equal(r.ar_devices[0].ad_used, 10 * GIB);
    assert_int_equal(r.ar_devices[0].ad_unattributed, 0);
    attr_tally_free(&r);
    assert_true(attr_add_sat(UINT64_MAX - 1, 1) == UINT64_MAX);
    assert_true(attr_add_sat(UINT64_MAX - 1, 2) == UINT64_MAX);
    assert_true(attr_add_sat(half, half) == UINT64_MAX);
    assert_true(attr_add_sat(3, 4) == 7);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_unknown_pod_and_container),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_sums_saturate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
