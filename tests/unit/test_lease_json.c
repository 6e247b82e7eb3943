/* test_lease_json.c -- the Lease read from an answer (a real one, hostile ones) and the
 * PUT and POST bodies written */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gate.h"
#include "lease_json.h"

/* As kube-apiserver v1.37 answers GET .../leases/gpu-vram-watchdog. */
static const char *real =
    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{"
    "\"name\":\"gpu-vram-watchdog\",\"namespace\":\"gpu-vram-watchdog\","
    "\"uid\":\"0b6b5d2e-1c1e-4d59-9c8e-3e1f0a0d1e2f\",\"resourceVersion\":\"48213\","
    "\"creationTimestamp\":\"2026-11-28T18:00:00Z\",\"labels\":{\"team\":\"gpu\"},"
    "\"annotations\":{\"gpu-vram-watchdog/brakes\":\"{\\\"settle\\\":[]}\"},"
    "\"managedFields\":[{\"manager\":\"gpu-vram-watchdog\",\"operation\":\"Update\"}]},"
    "\"spec\":{\"holderIdentity\":\"gpu-vram-watchdog-0\",\"leaseDurationSeconds\":15,"
    "\"acquireTime\":\"2026-11-28T18:00:00.000000Z\","
    "\"renewTime\":\"2026-11-28T19:00:00.123456Z\",\"leaseTransitions\":3}}";

static void
test_reads_a_real_answer(void **state)
{
    struct lease_obj o;
    char err[256];

    (void)state;
    assert_int_equal(lease_obj_parse(real, strlen(real), &o, err, sizeof(err)), 0);
    assert_string_equal(o.lo_rv, "48213");
    assert_string_equal(o.lo_record.lr_holder, "gpu-vram-watchdog-0");
    assert_int_equal(o.lo_record.lr_duration_s, 15);
    assert_string_equal(o.lo_record.lr_acquire, "2026-11-28T18:00:00.000000Z");
    assert_string_equal(o.lo_record.lr_renew, "2026-11-28T19:00:00.123456Z");
    assert_int_equal(o.lo_record.lr_transitions, 3);
    assert_string_equal(lease_obj_annotation(&o, LEASE_ANN_BRAKES), "{\"settle\":[]}");
    assert_null(lease_obj_annotation(&o, LEASE_ANN_LAST_ACT));
    lease_obj_free(&o);
    lease_obj_free(&o); /* twice is fine */
}

/* A Lease nobody holds (just created, or released) has an empty spec. */
static void
test_empty_spec(void **state)
{
    const char *b = "{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{}}";
    const char *c = "{\"metadata\":{\"resourceVersion\":\"7\"}}";
    const char *d =
        "{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"holderIdentity\":"
        "null,\"renewTime\":null,\"leaseDurationSeconds\":null}}";
    struct lease_obj o;
    char err[256];

    (void)state;
    assert_int_equal(lease_obj_parse(b, strlen(b), &o, err, sizeof(err)), 0);
    assert_string_equal(o.lo_record.lr_holder, "");
    assert_int_equal(o.lo_record.lr_duration_s, 0);
    lease_obj_free(&o);
    assert_int_equal(lease_obj_parse(c, strlen(c), &o, err, sizeof(err)), 0);
    lease_obj_free(&o);
    assert_int_equal(lease_obj_parse(d, strlen(d), &o, err, sizeof(err)), 0);
    assert_string_equal(o.lo_record.lr_renew, "");
    lease_obj_free(&o);
}

struct bad {
    const char *body;
    const char *why; /* a piece of the reason */
};

static void
test_refuses_what_is_not_a_lease(void **state)
{
    static const struct bad bad[] = {
        {"", "not JSON"},
        {"{\"metadata\":", "not JSON"},
        {"[1,2]", "not a JSON object"},
        {"\"Lease\"", "not JSON"}, /* a bare string: jansson wants an array or object */
        {"{\"kind\":\"Status\",\"metadata\":{\"resourceVersion\":\"1\"}}", "not a Lease"},
        {"{\"kind\":5,\"metadata\":{\"resourceVersion\":\"1\"}}", "not a Lease"},
        {"{\"spec\":{}}", "resourceVersion"},
        {"{\"metadata\":{\"resourceVersion\":\"\"}}", "resourceVersion"},
        {"{\"metadata\":{\"resourceVersion\":42}}", "resourceVersion"},
        {"{\"metadata\":{\"resourceVersion\":\"4 2\"}}", "resourceVersion"},
        {"{\"metadata\":{\"resourceVersion\":\"1\\n\"}}", "resourceVersion"},
        {"{\"metadata\":[],\"spec\":{}}", "resourceVersion"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":[]}",
         "spec is not an object"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":7}}",
         "holderIdentity"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"a\\u0000b\"}}",
         "not JSON"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":\"15\"}}",
         "integer"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseTransitions\":1.5}}",
         "integer"},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"renewTime\":12}}",
         "not a string"},
        /* Two keys of one name: the API server never sends that; refused. */
        {"{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}",
         "not JSON"},
    };
    struct lease_obj o;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (lease_obj_parse(bad[i].body, strlen(bad[i].body), &o, err, sizeof(err)) != -1)
            fail_msg("accepted %s", bad[i].body);
        if (strstr(err, bad[i].why) == NULL)
            fail_msg("%s: '%s' does not say '%s'", bad[i].body, err, bad[i].why);
        assert_null(o.lo_json);
    }
}

/* Values out of range are read within it; a time that is not one is absent. */
static void
test_clamps_hostile_values(void **state)
{
    char big[600];
    struct lease_obj o;
    char err[256];
    const char *b =
        "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{"
        "\"leaseDurationSeconds\":99999999999,\"leaseTransitions\":-4,"
        "\"renewTime\":\"yesterday\",\"acquireTime\":\"2026-13-01T00:00:00Z\"}}";

    (void)state;
    assert_int_equal(lease_obj_parse(b, strlen(b), &o, err, sizeof(err)), 0);
    assert_int_equal(o.lo_record.lr_duration_s, LEASE_DURATION_MAX_S);
    assert_int_equal(o.lo_record.lr_transitions, 0);
    assert_string_equal(o.lo_record.lr_renew, "");
    assert_string_equal(o.lo_record.lr_acquire, "");
    lease_obj_free(&o);
    /* A holder longer than a pod name can be. */
    snprintf(
        big, sizeof(big),
        "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"%0300d\"}}",
        0);
    assert_int_equal(lease_obj_parse(big, strlen(big), &o, err, sizeof(err)), -1);
    /* Trailing bytes after the object. */
    assert_int_equal(lease_obj_parse(real, strlen(real) + 0, &o, err, sizeof(err)), 0);
    lease_obj_free(&o);
    const char *t = "{\"metadata\":{\"resourceVersion\":\"1\"}} x";
    assert_int_equal(lease_obj_parse(t, strlen(t), &o, err, sizeof(err)), -1);
    /* Over the cap, whatever it holds. */
    assert_int_equal(lease_obj_parse(real, LEASE_BODY_MAX + 1, &o, err, sizeof(err)), -1);
}

static void
test_put_body_keeps_metadata(void **state)
{
    struct lease_obj o;
    struct lease_record r = {.lr_holder = "gpu-vram-watchdog-1",
                             .lr_duration_s = 15,
                             .lr_acquire = "2026-11-28T19:00:01.000000Z",
                             .lr_renew = "2026-11-28T19:00:01.000000Z",
                             .lr_transitions = 4};
    char err[256], *body;
    json_t *j;

    (void)state;
    assert_int_equal(lease_obj_parse(real, strlen(real), &o, err, sizeof(err)), 0);
    body = lease_body(&o, "gpu-vram-watchdog", "gpu-vram-watchdog", &r, "48213",
                      "{\"b\":1}", NULL);
    assert_non_null(body);
    j = json_loads(body, 0, NULL);
    assert_non_null(j);
    /* The version it was read at: the API server refuses it if another wrote since. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "metadata"),
                                                          "resourceVersion")),
                        "48213");
    /* What others put in the metadata stays. */
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(j, "metadata"), "labels"), "team")),
        "gpu");
    json_t *ann = json_object_get(json_object_get(j, "metadata"), "annotations");
    assert_string_equal(json_string_value(json_object_get(ann, LEASE_ANN_BRAKES)),
                        "{\"b\":1}");
    assert_null(json_object_get(ann, LEASE_ANN_LAST_ACT));
    json_t *spec = json_object_get(j, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")),
                        "gpu-vram-watchdog-1");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 4);
    assert_string_equal(json_string_value(json_object_get(spec, "renewTime")),
                        "2026-11-28T19:00:01.000000Z");
    json_decref(j);
    free(body);
    lease_obj_free(&o);
}

static void
test_create_and_release_bodies(void **state)
{
    struct lease_record r = {.lr_holder = "",
                             .lr_duration_s = 1,
                             .lr_renew = "2026-11-28T19:00:02.000000Z",
                             .lr_acquire = "2026-11-28T19:00:02.000000Z",
                             .lr_transitions = 4};
    struct lease_record none = {.lr_holder = "a", .lr_duration_s = 15};
    char *body;
    json_t *j;

    (void)state;
    body =
        lease_body(NULL, "ns", "gpu-vram-watchdog", &r, "ignored", NULL, "{\"act\":1}");
    j = json_loads(body, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "Lease");
    assert_string_equal(json_string_value(json_object_get(j, "apiVersion")),
                        "coordination.k8s.io/v1");
    assert_null(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
    /* Released: holderIdentity is there, empty (client-go writes it so). */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "spec"), "holderIdentity")),
        "");
    json_decref(j);
    free(body);
    /* Empty times are left out, never written as "". */
    body = lease_body(NULL, "ns", "n", &none, NULL, NULL, NULL);
    assert_null(strstr(body, "renewTime"));
    assert_null(strstr(body, "annotations"));
    free(body);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_real_answer),
        cmocka_unit_test(test_empty_spec),
        cmocka_unit_test(test_refuses_what_is_not_a_lease),
        cmocka_unit_test(test_clamps_hostile_values),
        cmocka_unit_test(test_put_body_keeps_metadata),
        cmocka_unit_test(test_create_and_release_bodies),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
