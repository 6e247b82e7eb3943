/* test_podlist.c -- the exporter's PodList reader: fields, container IDs, malformed bodies */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "podlist.h"

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
    struct pl_pods l;
    char err[256];
    const struct pl_pod *p;

    assert_int_equal(podlist_parse(LIT(body), &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 2);
    p = podlist_find(&l, "u-1");
    assert_non_null(p);
    assert_string_equal(p->pp_namespace, "ns");
    assert_string_equal(p->pp_name, "p1");
    assert_int_equal(p->pp_ncontainers, 3); /* the waiting one has no ID */
    assert_string_equal(podlist_container(p, "0fe789"), "debugger"); /* ephemeral */
    assert_string_equal(podlist_container(p, "def456"), "app");
    assert_string_equal(podlist_container(p, "abc123"), "init");
    assert_null(podlist_container(p, "containerd://def456"));
    assert_null(podlist_container(p, "999"));
    assert_int_equal(podlist_find(&l, "u-2")->pp_ncontainers, 0);
    assert_null(podlist_find(&l, "u-3"));
    podlist_free(&l);
    podlist_free(&l); /* twice is fine */
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
    struct pl_pods l;
    char err[256];

    assert_int_equal(podlist_parse(LIT(body), &l, err, sizeof(err)), 0);
    assert_non_null(podlist_find(&l, "6d1f0e2a"));
    assert_string_equal(podlist_find(&l, "6d1f0e2a")->pp_name, "etcd-n1");
    assert_string_equal(podlist_find(&l, "api-uid")->pp_name, "etcd-n1");
    assert_string_equal(podlist_find(&l, "u")->pp_name, "p");
    assert_null(podlist_find(&l, "6d1f0e2b"));
    podlist_free(&l);
}

static void
test_empty_list(void **state)
{
    struct pl_pods l;
    char err[256];

    assert_int_equal(podlist_parse(LIT("{\"items\":[]}"), &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 0);
    podlist_free(&l);
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
        struct pl_pods l;
        char err[256] = "";
        if (podlist_parse(bad[i].body, strlen(bad[i].body), &l, err, sizeof(err)) != -1)
            fail_msg("body %zu accepted: %s", i, bad[i].body);
        if (err[0] == '\0' || strstr(err, bad[i].why) == NULL)
            fail_msg("body %zu: error '%s' does not say '%s'", i, err, bad[i].why);
        assert_null(l.pl_items);
        assert_int_equal(l.pl_count, 0);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_pods_and_containers),
        cmocka_unit_test(test_mirror_pod_found_by_static_uid),
        cmocka_unit_test(test_empty_list),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
