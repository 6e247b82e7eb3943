/* test_alert.c -- the Alertmanager payload: real deliveries and every malformed class */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/testdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"

static void
test_real_025_delivery(void **state)
{
    size_t len;
    char *body = test_data_load("alertmanager-0.25-webhook.json", &len);
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, len, &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 1);
    assert_string_equal(b.ab_alerts[0].a_alertname, "GPUVRAMLow");
    assert_true(b.ab_alerts[0].a_firing);
    assert_string_equal(b.ab_alerts[0].a_fingerprint, "cee90ef7ef51c1b3");
    assert_string_equal(b.ab_alerts[0].a_starts_at, "2026-11-21T23:41:25.184Z");
    assert_string_equal(b.ab_alerts[0].a_ends_at, "0001-01-01T00:00:00Z");
    assert_string_equal(b.ab_alerts[0].a_labels_json,
                        "{\"alertname\":\"GPUVRAMLow\",\"severity\":\"warning\"}");
    assert_non_null(strstr(b.ab_alerts[0].a_annotations_json, "\"summary\":\"free 560\""));
    assert_null(alert_label(&b.ab_alerts[0], "node"));
    alert_batch_free(&b);
    free(body);
}

/* Newer fields are ignored; each alert is judged by its own status. */
static void
test_newer_delivery_mixed_status(void **state)
{
    size_t len;
    char *body = test_data_load("alertmanager-0.27-webhook.json", &len);
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, len, &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 2);
    assert_true(b.ab_alerts[0].a_firing);
    assert_string_equal(alert_label(&b.ab_alerts[0], "node"), "gpu-node-1");
    assert_string_equal(alert_label(&b.ab_alerts[0], "namespace"), "llama");
    assert_false(b.ab_alerts[1].a_firing);
    assert_string_equal(alert_status_name(&b.ab_alerts[1]), "resolved");
    assert_string_equal(b.ab_alerts[1].a_annotations_json, "{}");
    alert_batch_free(&b);
    free(body);
}

static void
test_minimal_and_missing_version(void **state)
{
    const char *ok[] = {
        "{\"alerts\":[]}",
        "{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}}]}",
        "{\"alerts\":[{\"status\":\"resolved\",\"labels\":{\"alertname\":\"A\"},"
        "\"annotations\":null,\"fingerprint\":null}]}",
    };
    struct alert_batch b;
    char err[256];

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (alert_batch_parse(ok[i], strlen(ok[i]), &b, err, sizeof(err)) != 0)
            fail_msg("case %zu: %s", i, err);
        alert_batch_free(&b);
    }
}

static void
test_malformed(void **state)
{
    static const struct {
        const char *body;
        const char *expect; /* prefix of the error */
    } cases[] = {
        {"", "empty body"},
        {"not json", "body is not valid JSON"},
        {"{\"alerts\":[", "body is not valid JSON"},
        {"[]", "body must be a JSON object"},
        {"\"x\"", "body must be a JSON object"},
        {"{}", "alerts: missing or not an array"},
        {"{\"alerts\":{}}", "alerts: missing or not an array"},
        {"{\"alerts\":null}", "alerts: missing or not an array"},
        {"{\"version\":\"3\",\"alerts\":[]}", "version: '3' is not supported"},
        {"{\"version\":4,\"alerts\":[]}", "version: must be a string"},
        {"{\"alerts\":[1]}", "alerts[0]: must be an object"},
        {"{\"alerts\":[{\"labels\":{\"alertname\":\"A\"}}]}", "alerts[0].status: missing"},
        {"{\"alerts\":[{\"status\":7,\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: missing or not a string"},
        {"{\"alerts\":[{\"status\":\"pending\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: 'pending' is not firing or resolved"},
        {"{\"alerts\":[{\"status\":\"firing\"}]}", "alerts[0].labels: missing"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":[]}]}",
         "alerts[0].labels: must be an object"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{}}]}",
         "alerts[0].labels.alertname: missing or empty"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"\"}}]}",
         "alerts[0].labels.alertname: missing or empty"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":5}}]}",
         "alerts[0].labels.alertname: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\",\"n\":1}}]}",
         "alerts[0].labels.n: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"annotations\":\"x\"}]}",
         "alerts[0].annotations: must be an object"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"fingerprint\":12}]}",
         "alerts[0].fingerprint: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"startsAt\":{}}]}",
         "alerts[0].startsAt: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}},"
         "{\"status\":\"firing\",\"labels\":{}}]}",
         "alerts[1].labels.alertname"},
        {"{\"alerts\":[],\"alerts\":[]}", "body is not valid JSON"}, /* duplicate key */
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\\u0000B\"}}]}",
         "body is not valid JSON"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"\xff\xfe\"}}]}",
         "body is not valid JSON"}, /* invalid UTF-8 */
    };
    struct alert_batch b;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = alert_batch_parse(cases[i].body, strlen(cases[i].body), &b, err,
                                   sizeof(err));
        if (rc != -1 || strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0)
            fail_msg("case %zu: rc %d err '%s'", i, rc, err);
        assert_int_equal(b.ab_count, 0);
        assert_null(b.ab_alerts);
    }
}

/* Deep nesting and huge strings are refused or handled without harm. */
static void
test_deep_nesting_and_huge_strings(void **state)
{
    size_t depth = 100000, n = 0;
    char *deep = malloc(depth * 2 + 64);
    struct alert_batch b;
    char err[256];

    assert_non_null(deep);
    n += (size_t)snprintf(deep, 64, "{\"alerts\":");
    for (size_t i = 0; i < depth; i++)
        deep[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    assert_int_equal(alert_batch_parse(deep, n, &b, err, sizeof(err)), -1);
    free(deep);

    /* A 900 KiB alertname is valid JSON; it is kept whole, and errors quote
     * at most a bounded prefix. */
    size_t big = 900 * 1024;
    char *huge = malloc(big + 128);
    assert_non_null(huge);
    n = (size_t)snprintf(huge, 128, "{\"alerts\":[{\"status\":\"");
    memset(huge + n, 'x', big);
    n += big;
    n += (size_t)snprintf(huge + n, 128, "\",\"labels\":{\"alertname\":\"A\"}}]}");
    assert_int_equal(alert_batch_parse(huge, n, &b, err, sizeof(err)), -1);
    assert_true(strlen(err) < 200);
    free(huge);
}

/* Bodies need not be NUL-terminated: the length is honoured. */
static void
test_length_is_honoured(void **state)
{
    const char *body = "{\"alerts\":[]}garbage";
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, 13, &b, err, sizeof(err)), 0);
    assert_int_equal(alert_batch_parse(body, strlen(body), &b, err, sizeof(err)), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_025_delivery),
        cmocka_unit_test(test_newer_delivery_mixed_status),
        cmocka_unit_test(test_minimal_and_missing_version),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_deep_nesting_and_huge_strings),
        cmocka_unit_test(test_length_is_honoured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
