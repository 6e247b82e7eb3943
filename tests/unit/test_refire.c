/* test_refire.c -- a new leader's look at the alerts still firing: Prometheus' ALERTS
 * answer as the webhook Alertmanager would have sent (its fingerprints too); hostile
 * answers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alert.h"
#include "refire.h"

/* As Prometheus 2.x answers /api/v1/query?query=ALERTS{alertstate="firing"}. */
static const char answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"__name__\":\"ALERTS\",\"alertname\":\"GPUVRAMLow\",\"alertstate\":"
    "\"firing\",\"severity\":\"warning\"},\"value\":[1764356400.123,\"1\"]},"
    "{\"metric\":{\"__name__\":\"ALERTS\",\"alertname\":\"GPUVRAMLow\",\"alertstate\":"
    "\"firing\",\"node\":\"gpu-node-1\",\"uuid\":\"GPU-0a6f\",\"namespace\":\"llm\","
    "\"severity\":\"critical\"},\"value\":[1764356400.123,\"1\"]}]}}";

static void
test_answer_as_a_webhook(void **state)
{
    struct alert_batch b;
    size_t n;
    char err[256], *hook;

    (void)state;
    hook = refire_webhook_json(answer, strlen(answer), &n, err, sizeof(err));
    assert_non_null(hook);
    assert_int_equal(n, 2);
    assert_int_equal(alert_batch_parse(hook, strlen(hook), &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 2);
    /* Alertmanager 0.25 sent this very alert with this fingerprint
     * (tests/data/alertmanager-0.25-webhook.json). */
    assert_string_equal(b.ab_alerts[0].a_fingerprint, "cee90ef7ef51c1b3");
    assert_true(b.ab_alerts[0].a_firing);
    assert_string_equal(b.ab_alerts[0].a_labels_json,
                        "{\"alertname\":\"GPUVRAMLow\",\"severity\":\"warning\"}");
    /* The labels a decision reads: node, GPU, the starving namespace. */
    assert_string_equal(alert_label(&b.ab_alerts[1], "node"), "gpu-node-1");
    assert_string_equal(alert_label(&b.ab_alerts[1], "uuid"), "GPU-0a6f");
    assert_string_equal(alert_label(&b.ab_alerts[1], "namespace"), "llm");
    assert_null(alert_label(&b.ab_alerts[1], "alertstate"));
    assert_null(alert_label(&b.ab_alerts[1], "__name__"));
    alert_batch_free(&b);
    free(hook);
}

static void
test_nothing_firing(void **state)
{
    const char *none = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                       "\"result\":[]}}";
    struct alert_batch b;
    size_t n = 9;
    char err[256], *hook;

    (void)state;
    hook = refire_webhook_json(none, strlen(none), &n, err, sizeof(err));
    assert_non_null(hook);
    assert_int_equal(n, 0);
    assert_int_equal(alert_batch_parse(hook, strlen(hook), &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 0);
    alert_batch_free(&b);
    free(hook);
}

static void
test_hostile_answers(void **state)
{
    static const char *bad[] = {
        "",
        "not json",
        "[]",
        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\"}}",
        "{\"status\":\"success\",\"status\":\"success\",\"data\":{}}",
    };
    size_t n;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (refire_webhook_json(bad[i], strlen(bad[i]), &n, err, sizeof(err)) != NULL)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(err, "prometheus"));
    }
}

/* A series that is not a label set is skipped; the others are read. */
static void
test_odd_series_skipped(void **state)
{
    const char *odd =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"alertname\":\"GPUVRAMLow\",\"node\":7}},"
        "{\"metric\":[]},"
        "{},"
        "{\"metric\":{\"alertname\":\"GPUVRAMLow\",\"node\":\"gpu-node-2\"}}]}}";
    struct alert_batch b;
    size_t n;
    char err[256], *hook;

    (void)state;
    hook = refire_webhook_json(odd, strlen(odd), &n, err, sizeof(err));
    assert_non_null(hook);
    assert_int_equal(n, 1);
    assert_int_equal(alert_batch_parse(hook, strlen(hook), &b, err, sizeof(err)), 0);
    assert_string_equal(alert_label(&b.ab_alerts[0], "node"), "gpu-node-2");
    alert_batch_free(&b);
    free(hook);
}

static void
test_too_many(void **state)
{
    size_t cap = 64 * (REFIRE_MAX_ALERTS + 2), len = 0, n;
    char *big = malloc(cap), err[256];

    (void)state;
    len += (size_t)snprintf(big + len, cap - len,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (int i = 0; i <= REFIRE_MAX_ALERTS; i++)
        len +=
            (size_t)snprintf(big + len, cap - len,
                             "%s{\"metric\":{\"alertname\":\"A%d\"}}", i ? "," : "", i);
    len += (size_t)snprintf(big + len, cap - len, "]}}");
    assert_null(refire_webhook_json(big, len, &n, err, sizeof(err)));
    assert_non_null(strstr(err, "firing alerts, over"));
    free(big);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answer_as_a_webhook),
        cmocka_unit_test(test_nothing_firing),
        cmocka_unit_test(test_hostile_answers),
        cmocka_unit_test(test_odd_series_skipped),
        cmocka_unit_test(test_too_many),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
