/* test_podlist.c -- the exporter's PodList reader: fields, container IDs, budgets,
 * malformed bodies */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podlist.h"
#include "pods_json.h"

#define LIT(s) s, sizeof(s) - 1

static void
test_reads_pods_and_containers(void **state)
{
    const char body[] =
        "{\"kind\":\"PodList\",\"items\":["
        "{\"status\":{\"initContainerStatuses\":[{\"name\":\"init\",\"containerID\":"
        "\"cri-o://abc123\"}],\"containerStatuses\":[{\"name\":\"app\",\"containerID\":"
        "\"containerd://def456\",\"ready\":true},{\"name\":\"waiting\"}],"
        "\"ephemeralContainerStatuses\":[{\"name\":\"debugger\",\"containerID\":"
        "\"docker://0fe789\"}]},"
        "\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"uid\":\"u-1\",\"labels\":{}}},"
        "{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ns2\",\"uid\":\"u-2\"},\"status\":null}"
        "]}";
    struct pod_list l;
    char err[256];
    const struct pod *p;

    assert_int_equal(podlist_parse(LIT(body), NULL, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 2);
    p = podlist_find(&l, "u-1");
    assert_non_null(p);
    assert_string_equal(p->p_namespace, "ns");
    assert_string_equal(p->p_name, "p1");
    assert_int_equal(p->p_container_count, 3); /* the waiting one has no ID */
    assert_string_equal(podlist_container(p, "0fe789"), "debugger"); /* ephemeral */
    assert_string_equal(podlist_container(p, "def456"), "app");
    assert_string_equal(podlist_container(p, "abc123"), "init");
    assert_null(podlist_container(p, "containerd://def456"));
    assert_null(podlist_container(p, "999"));
    assert_int_equal(podlist_find(&l, "u-2")->p_container_count, 0);
    assert_null(podlist_find(&l, "u-3"));
    pod_list_free(&l);
    pod_list_free(&l); /* twice is fine */
}

/* A static pod's processes sit in cgroups named by its own UID (the config
 * hash); the API lists its mirror pod under another UID, the static one in
 * the annotation kubernetes.io/config.mirror. */
static void
test_mirror_pod_found_by_static_uid(void **state)
{
    const char body[] =
        "{\"items\":[{\"metadata\":{\"name\":\"etcd-n1\",\"namespace\":\"kube-system\","
        "\"uid\":\"api-uid\",\"annotations\":{\"kubernetes.io/config.hash\":\"6d1f0e2a\","
        "\"kubernetes.io/config.mirror\":\"6d1f0e2a\"}},\"status\":{\"containerStatuses\":"
        "[{\"name\":\"etcd\",\"containerID\":\"containerd://abc\"}]}},"
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\",\"annotations\":null}}]}";
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), NULL, &l, err, sizeof(err)), 0);
    assert_non_null(podlist_find(&l, "6d1f0e2a"));
    assert_string_equal(podlist_find(&l, "6d1f0e2a")->p_name, "etcd-n1");
    assert_string_equal(podlist_find(&l, "api-uid")->p_name, "etcd-n1");
    assert_string_equal(podlist_find(&l, "u")->p_name, "p");
    assert_null(podlist_find(&l, "6d1f0e2b"));
    pod_list_free(&l);
}

static void
test_empty_list(void **state)
{
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT("{\"items\":[]}"), NULL, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 0);
    pod_list_free(&l);
}

#define RES "viktorbarzin.me/gpumem"
/* A pod item with one container whose resources are RESOURCES. */
#define POD(name, resources)                                                             \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"uid\":\"u-" name "\"}," \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":" resources "}]}}"

/* Every form of the quantity grammar the API server may send (it rewrites
 * 5000 as "5k"), each read as the decision reads it: the integer MiB, rounded
 * up. */
static void
test_budgets_every_quantity_form(void **state)
{
    static const struct {
        const char *name;
        int64_t mib;
    } want[] = {
        {"k", 5000},         {"plain", 5000}, {"gi", 4831838208}, {"exp", 1000},
        {"mega", 500000000}, {"frac", 2},     {"milli", 1},       {"ki", 2048},
        {"zero", 0},         {"num", 7},      {"req", 1536},      {"lim", 4096},
        {"sum", 1500},       {"neg-exp", 1},  {"plus", 12},
    };
    /* One JSON item a line, kept by hand (clang-format would run them together). */
    /* clang-format off */
    const char body[] =
        "{\"kind\":\"PodList\",\"items\":["
        POD("k", "{\"limits\":{\"" RES "\":\"5k\"}}") ","
        POD("plain", "{\"limits\":{\"" RES "\":\"5000\"}}") ","
        POD("gi", "{\"limits\":{\"" RES "\":\"4.5Gi\"}}") ","
        POD("exp", "{\"limits\":{\"" RES "\":\"1e3\"}}") ","
        POD("mega", "{\"limits\":{\"" RES "\":\"500M\"}}") ","
        POD("frac", "{\"limits\":{\"" RES "\":\"1.5\"}}") ","
        POD("milli", "{\"limits\":{\"" RES "\":\"100m\"}}") ","
        POD("ki", "{\"limits\":{\"" RES "\":\"2Ki\"}}") ","
        POD("zero", "{\"limits\":{\"" RES "\":\"0\"}}") ","
        POD("num", "{\"limits\":{\"" RES "\":7}}") ","
        POD("req", "{\"requests\":{\"" RES "\":\"1536\"}}") ","
        POD("lim", "{\"requests\":{\"" RES "\":\"1k\"},\"limits\":{\"" RES "\":\"4096\"}}") ","
        "{\"metadata\":{\"name\":\"sum\",\"namespace\":\"ml\",\"uid\":\"u-sum\"},"
        "\"spec\":{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"" RES
        "\":\"9k\"}}}],\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
        "\":\"1k\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"" RES "\":\"500\"}}},"
        "{\"name\":\"none\"}]}},"
        POD("neg-exp", "{\"limits\":{\"" RES "\":\"1E-2\"}}") ","
        POD("plus", "{\"limits\":{\"" RES "\":\"+12\"}}") ","
        POD("other", "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}") ","
        "{\"metadata\":{\"name\":\"nospec\",\"namespace\":\"ml\",\"uid\":\"u-nospec\"}}"
        "]}";
    /* clang-format on */
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), RES, &l, err, sizeof(err)), 0);
    assert_null(l.pl_budgets_error);
    assert_int_equal(l.pl_count, sizeof(want) / sizeof(want[0]) + 2);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char uid[32];
        const struct pod *p;
        snprintf(uid, sizeof(uid), "u-%s", want[i].name);
        p = podlist_find(&l, uid);
        assert_non_null(p);
        if (podlist_budget(p) != PL_BUDGET_OK || p->p_budget_mib != want[i].mib)
            fail_msg("pod %s: budget state %d, %lld MiB; want %lld MiB", want[i].name,
                     (int)podlist_budget(p), (long long)p->p_budget_mib,
                     (long long)want[i].mib);
    }
    assert_int_equal(podlist_budget(podlist_find(&l, "u-other")), PL_BUDGET_NONE);
    assert_int_equal(podlist_budget(podlist_find(&l, "u-nospec")), PL_BUDGET_NONE);
    pod_list_free(&l);

    /* Without a resource nothing is read as a budget. */
    assert_int_equal(podlist_parse(LIT(body), NULL, &l, err, sizeof(err)), 0);
    assert_int_equal(podlist_budget(podlist_find(&l, "u-k")), PL_BUDGET_NONE);
    pod_list_free(&l);
}

/* A declaration the decision cannot read makes the pod's budget unreadable
 * (one bad container spoils the sum), with the reason; the pod itself stays
 * in the list, its processes attributable. */
static void
test_budgets_malformed(void **state)
{
    static const struct {
        const char *name;
        const char *why;
    } want[] = {
        {"suffix", "is not a quantity"}, {"neg", "negative"},
        {"space", "is not a quantity"},  {"empty", "is not a quantity"},
        {"bool", "not a quantity"},      {"huge", "is not a quantity"},
        {"twosfx", "is not a quantity"}, {"spoil", "is not a quantity"},
        {"notobj", "not an object"},
    };
    /* One JSON item a line, kept by hand (clang-format would run them together). */
    /* clang-format off */
    const char body[] =
        "{\"items\":["
        POD("suffix", "{\"limits\":{\"" RES "\":\"5q\"}}") ","
        POD("neg", "{\"limits\":{\"" RES "\":\"-1\"}}") ","
        POD("space", "{\"limits\":{\"" RES "\":\" 5\"}}") ","
        POD("empty", "{\"limits\":{\"" RES "\":\"\"}}") ","
        POD("bool", "{\"limits\":{\"" RES "\":true}}") ","
        POD("huge", "{\"limits\":{\"" RES "\":\"99999999999999999999\"}}") ","
        POD("twosfx", "{\"limits\":{\"" RES "\":\"1KiKi\"}}") ","
        "{\"metadata\":{\"name\":\"spoil\",\"namespace\":\"ml\",\"uid\":\"u-spoil\"},"
        "\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
        "\":\"1k\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"" RES "\":\"lots\"}}}]}},"
        POD("notobj", "{\"limits\":[]}") ","
        POD("good", "{\"limits\":{\"" RES "\":\"2k\"}}")
        "]}";
    /* clang-format on */
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), RES, &l, err, sizeof(err)), 0);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char uid[32];
        const struct pod *p;
        snprintf(uid, sizeof(uid), "u-%s", want[i].name);
        p = podlist_find(&l, uid);
        assert_non_null(p);
        if (podlist_budget(p) != PL_BUDGET_BAD || p->p_budget_error == NULL ||
            strstr(p->p_budget_error, want[i].why) == NULL)
            fail_msg("pod %s: state %d, error '%s'; want '%s'", want[i].name,
                     (int)podlist_budget(p),
                     p->p_budget_error ? p->p_budget_error : "(none)", want[i].why);
    }
    assert_int_equal(podlist_budget(podlist_find(&l, "u-good")), PL_BUDGET_OK);
    assert_int_equal(podlist_find(&l, "u-good")->p_budget_mib, 2000);
    pod_list_free(&l);
}

/* A finished pod (Succeeded, Failed) is not in the list: it holds no seat,
 * no budget is read for it (a broken one is no error), and its process is
 * unattributed. Pending and Running pods stay. */
static void
test_phase(void **state)
{
    const char body[] =
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"ua\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"2k\"}}}]},\"status\":{\"phase\":\"Succeeded\",\"containerStatuses\":"
        "[{\"name\":\"c\",\"containerID\":\"containerd://aa\"}]}},"
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\",\"uid\":\"ub\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"5q\"}}}]},\"status\":{\"phase\":\"Failed\"}},"
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\",\"uid\":\"uc\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"1k\"}}}]},\"status\":{\"phase\":\"Pending\"}},"
        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"n\",\"uid\":\"ud\"},"
        "\"status\":{\"phase\":\"Running\"}}]}";
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), RES, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 2);
    assert_null(podlist_find(&l, "ua"));
    assert_null(podlist_find(&l, "ub"));
    assert_int_equal(podlist_budget(podlist_find(&l, "uc")), PL_BUDGET_OK);
    assert_int_equal(podlist_find(&l, "uc")->p_budget_mib, 1000);
    assert_non_null(podlist_find(&l, "ud"));
    for (size_t i = 0; i < l.pl_count; i++)
        assert_int_not_equal(podlist_budget(&l.pl_pods[i]), PL_BUDGET_BAD);
    pod_list_free(&l);
    assert_int_equal(podlist_parse(LIT("{\"items\":[{\"metadata\":{\"name\":\"a\","
                                       "\"namespace\":\"n\",\"uid\":\"ua\"},\"status\":"
                                       "{\"phase\":1}}]}"),
                                   RES, &l, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "status.phase is not a string"));
}

/* n running pods, then fin finished ones, names padded to pad bytes. */
static char *
many_pods(size_t n, size_t fin, size_t pad, size_t *len)
{
    size_t cap = (n + fin) * (pad + 160) + 64, o = 0;
    char *doc = malloc(cap), *name = malloc(pad + 1);

    assert_non_null(doc);
    assert_non_null(name);
    memset(name, 'x', pad);
    name[pad] = '\0';
    o += (size_t)snprintf(doc + o, cap - o, "{\"kind\":\"PodList\",\"items\":[");
    for (size_t i = 0; i < n + fin; i++)
        o += (size_t)snprintf(
            doc + o, cap - o,
            "%s{\"metadata\":{\"name\":\"%s%zu\",\"namespace\":\"n\",\"uid\":\"u%zu\"},"
            "\"status\":{\"phase\":\"%s\",\"containerStatuses\":[{\"name\":\"c\","
            "\"containerID\":\"containerd://c%zu\"}]}}",
            i ? "," : "", name, i, i, i < n ? "Running" : "Failed", i);
    o += (size_t)snprintf(doc + o, cap - o, "]}");
    assert_true(o < cap);
    free(name);
    *len = o;
    return doc;
}

/* The exporter's list is bounded like the receiver's (pods_json.h): more than
 * POD_LIST_MAX pods that have not finished, or their strings past
 * POD_LIST_MAX_TEXT, is refused as too large; finished pods count for
 * neither. */
static void
test_too_large(void **state)
{
    struct pod_list l;
    char err[256], *doc;
    size_t len;

    doc = many_pods(POD_LIST_MAX, 2 * POD_LIST_MAX, 0, &len);
    assert_int_equal(podlist_parse(doc, len, RES, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, POD_LIST_MAX);
    assert_non_null(podlist_find(&l, "u0"));
    assert_null(podlist_find(&l, "u5000"));
    pod_list_free(&l);
    free(doc);

    doc = many_pods(POD_LIST_MAX + 1, 0, 0, &len);
    assert_int_equal(podlist_parse(doc, len, RES, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pod list too large: more than 5000 pods that have not "
                                "finished"));
    assert_int_equal(l.pl_count, 0);
    assert_null(l.pl_pods);
    free(doc);

    doc = many_pods(5, 0, 1 << 20, &len);
    assert_int_equal(podlist_parse(doc, len, RES, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pod list too large: the names and annotations"));
    free(doc);
    doc = many_pods(1, 8, 1 << 20, &len);
    assert_int_equal(podlist_parse(doc, len, RES, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 1);
    pod_list_free(&l);
    free(doc);
}

/* A body the budget reader refuses whole still gives the pods (their
 * processes stay attributable), no budgets, and why. */
static void
test_budgets_refused_whole(void **state)
{
    const char body[] =
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"ua\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"1k\"}}}]},\"spec\":{}}]}";
    struct pod_list l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), RES, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 1);
    assert_non_null(l.pl_budgets_error);
    assert_int_equal(podlist_budget(&l.pl_pods[0]), PL_BUDGET_NONE);
    pod_list_free(&l);
}

static void
test_malformed(void **state)
{
    static const struct {
        const char *body;
        const char *why;
    } bad[] = {
        {"", "end of input"},
        {"not json", ""},
        {"[]", "object"},
        {"{}", "no items"},
        {"{\"items\":{}}", "items is not an array"},
        {"{\"items\":[1]}", "an item is not an object"},
        {"{\"items\":[{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"}}]}", "lacks"},
        {"{\"items\":[{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":7}}]}",
         "uid is not a string"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"uid\":\"b\",\"name\":\"p\","
         "\"namespace\":\"n\"}}]}",
         "duplicate"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\"},"
         "\"status\":{\"containerStatuses\":{}}}]}",
         "not an array"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\"},"
         "\"status\":{\"containerStatuses\":[{\"name\":1,\"containerID\":\"x\"}]}}]}",
         "not a string"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\","
         "\"annotations\":{\"kubernetes.io/config.mirror\":1}}}]}",
         "annotation is not a string"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\","
         "\"annotations\":[]}}]}",
         "annotations is not an object"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\"},"
         "\"status\":{\"ephemeralContainerStatuses\":7}}]}",
         "not an array"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\"}}]} x",
         ""},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\\u0000b\",\"name\":\"p\",\"namespace\":\"n\"}}]}",
         "uid"},
        {"{\"items\":[{\"metadata\":{\"uid\":\"a\",\"name\":\"p\",\"namespace\":\"n\"},"
         "\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"containerID\":\"x\"}",
         ""}, /* cut short */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct pod_list l;
        char err[256] = "";
        if (podlist_parse(bad[i].body, strlen(bad[i].body), NULL, &l, err, sizeof(err)) !=
            -1)
            fail_msg("body %zu accepted: %s", i, bad[i].body);
        if (err[0] == '\0' || strstr(err, bad[i].why) == NULL)
            fail_msg("body %zu: error '%s' does not say '%s'", i, err, bad[i].why);
        assert_null(l.pl_pods);
        assert_int_equal(l.pl_count, 0);
    }
}

/* BUDGET_SOURCES reach the exporter's list: HAMi's gpumem is MiB at once, its
 * gpumem-percentage and KAI's gpu-fraction are shares of the GPU (resolved per
 * poll); with the default (resource alone) none of them is a budget. */
static void
test_budget_sources(void **state)
{
    /* clang-format off */
    const char body[] = "{\"items\":["
        "{\"metadata\":{\"name\":\"h-mib\",\"namespace\":\"ml\",\"uid\":\"u-1\"},"
        "\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
        "\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"4000\"}}}]}},"
        "{\"metadata\":{\"name\":\"h-pct\",\"namespace\":\"ml\",\"uid\":\"u-2\"},"
        "\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
        "\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem-percentage\":\"50\"}}}]}},"
        "{\"metadata\":{\"name\":\"k-frac\",\"namespace\":\"ml\",\"uid\":\"u-3\","
        "\"annotations\":{\"gpu-fraction\":\"0.25\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"a\"}]}},"
        "{\"metadata\":{\"name\":\"k-bad\",\"namespace\":\"ml\",\"uid\":\"u-4\","
        "\"annotations\":{\"gpu-fraction\":\"2x\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"a\"}]}}"
        "]}";
    /* clang-format on */
    struct bsrc_order all;
    struct pod_list l;
    const struct pod *p;
    char err[256];
    uint64_t g40 = 40ull << 30;
    int64_t mib;

    assert_int_equal(bsrc_order_parse("resource,hami,kai", &all, err, sizeof(err)), 0);
    assert_int_equal(podlist_parse_sources(LIT(body), RES, &all, &l, err, sizeof(err)),
                     0);
    p = podlist_find(&l, "u-1");
    assert_int_equal(podlist_budget(p), PL_BUDGET_OK);
    assert_int_equal(p->p_budget_mib, 4000);
    assert_string_equal(p->p_budget_source, "hami");
    p = podlist_find(&l, "u-2");
    assert_int_equal(podlist_budget(p), PL_BUDGET_SHARE);
    assert_int_equal(podlist_share_mib(p, &g40, 1, NULL, 0, &mib, err, sizeof(err)), 0);
    assert_int_equal(mib, 20480);
    p = podlist_find(&l, "u-3");
    assert_int_equal(podlist_budget(p), PL_BUDGET_SHARE);
    assert_string_equal(p->p_budget_source, "kai");
    assert_int_equal(podlist_share_mib(p, NULL, 0, &g40, 1, &mib, err, sizeof(err)), 0);
    assert_int_equal(mib, 10240);
    /* no device: no budget, and why */
    assert_int_equal(podlist_share_mib(p, NULL, 0, NULL, 0, &mib, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "needs the GPU's total"));
    p = podlist_find(&l, "u-4");
    assert_int_equal(podlist_budget(p), PL_BUDGET_BAD);
    assert_non_null(strstr(p->p_budget_error, "gpu-fraction"));
    pod_list_free(&l);

    /* the default: none of them declares GPUMEM_RESOURCE */
    assert_int_equal(podlist_parse(LIT(body), RES, &l, err, sizeof(err)), 0);
    for (size_t i = 0; i < l.pl_count; i++)
        assert_int_equal(podlist_budget(&l.pl_pods[i]), PL_BUDGET_NONE);
    pod_list_free(&l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_pods_and_containers),
        cmocka_unit_test(test_mirror_pod_found_by_static_uid),
        cmocka_unit_test(test_empty_list),
        cmocka_unit_test(test_budgets_every_quantity_form),
        cmocka_unit_test(test_budgets_malformed),
        cmocka_unit_test(test_phase),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_budgets_refused_whole),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_budget_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
