/* test_metrics.c -- exposition format: families, escaping, histogram, cardinality cap */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static char *
render(void)
{
    struct buf b;

    buf_init(&b, 0);
    assert_int_equal(metrics_render(&b), 0);
    return b.b_data; /* the caller frees */
}

static void
test_families_and_values(void **state)
{
    char *text;

    metrics_init(1);
    metrics_webhook_request(200);
    metrics_webhook_request(200);
    metrics_webhook_request(400);
    metrics_alert_received("GPUVRAMLow", "firing");
    metrics_alert_received("GPUVRAMLow", "firing");
    metrics_alert_received("GPUVRAMLow", "resolved");
    metrics_decision(RESULT_WOULD_RECYCLE, 0.02);
    metrics_decision(RESULT_SKIPPED_RECOVERED, 3);
    metrics_free_vram("gpu-node-1", 560);
    metrics_capacity_set("gpu-node-1", 1);
    metrics_capacity_set("gpu-node-2", 0);
    metrics_capacity_errors_set(1);
    text = render();
    const char *expect[] = {
        "# TYPE gpu_vram_watchdog_build_info gauge\n",
        "gpu_vram_watchdog_build_info{version=\"" GVW_VERSION "\"} 1\n",
        "gpu_vram_watchdog_dry_run 1\n",
        "# TYPE gpu_vram_watchdog_webhook_requests_total counter\n",
        "gpu_vram_watchdog_webhook_requests_total{code=\"200\"} 2\n",
        "gpu_vram_watchdog_webhook_requests_total{code=\"400\"} 1\n",
        "gpu_vram_watchdog_alerts_received_total{alertname=\"GPUVRAMLow\",status=\"firing\"} 2\n",
        "gpu_vram_watchdog_alerts_received_total{alertname=\"GPUVRAMLow\",status=\"resolved\"} 1\n",
        "gpu_vram_watchdog_decisions_total{result=\"would_recycle\"} 1\n",
        "gpu_vram_watchdog_free_vram_bytes{node=\"gpu-node-1\"} 587202560\n",
        "gpu_vram_watchdog_capacity_advertised{node=\"gpu-node-1\"} 1\n",
        "gpu_vram_watchdog_capacity_advertised{node=\"gpu-node-2\"} 0\n",
        "gpu_vram_watchdog_capacity_advertise_errors_total 1\n",
        "# TYPE gpu_vram_watchdog_decision_duration_seconds histogram\n",
        "gpu_vram_watchdog_decision_duration_seconds_bucket{le=\"0.05\"} 1\n",
        "gpu_vram_watchdog_decision_duration_seconds_bucket{le=\"5\"} 2\n",
        "gpu_vram_watchdog_decision_duration_seconds_bucket{le=\"+Inf\"} 2\n",
        "gpu_vram_watchdog_decision_duration_seconds_count 2\n",
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
        if (strstr(text, expect[i]) == NULL)
            fail_msg("missing: %s\n--- got:\n%s", expect[i], text);
    free(text);
    metrics_cleanup();
}

/* HA: a single replica leads (1) from start-up, so "no replica leads" never
 * fires for it; a follower says 0; a takeover counts. */
static void
test_leader(void **state)
{
    char *text;

    metrics_init(1);
    text = render();
    assert_non_null(strstr(text, "# TYPE gpu_vram_watchdog_leader gauge\n"
                                 "gpu_vram_watchdog_leader 1\n"));
    assert_non_null(strstr(text,
                           "# TYPE gpu_vram_watchdog_leader_transitions_total counter\n"
                           "gpu_vram_watchdog_leader_transitions_total 0\n"));
    free(text);
    metrics_leader_set(0);
    metrics_leader_transitions_set(3);
    text = render();
    assert_non_null(strstr(text, "gpu_vram_watchdog_leader 0\n"));
    assert_non_null(strstr(text, "gpu_vram_watchdog_leader_transitions_total 3\n"));
    free(text);
    metrics_cleanup();
}

static void
test_label_escaping(void **state)
{
    char *text;

    metrics_init(0);
    metrics_alert_received("a\"b\\c\nd", "firing");
    text = render();
    assert_non_null(strstr(text, "alertname=\"a\\\"b\\\\c\\nd\""));
    assert_non_null(strstr(text, "gpu_vram_watchdog_dry_run 0\n"));
    free(text);
    metrics_cleanup();
}

/* Hostile alertnames cannot grow the label sets without bound. */
static void
test_cardinality_cap(void **state)
{
    char name[32], *text, *p;
    size_t lines = 0;

    metrics_init(0);
    for (int i = 0; i < METRICS_MAX_SERIES * 4; i++) {
        snprintf(name, sizeof(name), "alert%d", i);
        metrics_alert_received(name, "firing");
    }
    text = render();
    for (p = text; (p = strstr(p, "gpu_vram_watchdog_alerts_received_total{")) != NULL;
         p++)
        lines++;
    assert_int_equal(lines, METRICS_MAX_SERIES);
    assert_non_null(strstr(text, "alertname=\"_other\",status=\"_other\"} "));
    free(text);
    metrics_cleanup();
}

/* GPU scope: the free-VRAM gauge carries {node,gpu}; node scope keeps {node}. */
static void
test_free_vram_per_gpu(void **state)
{
    char *text;

    metrics_init(0);
    metrics_free_vram("single", 100);
    metrics_free_vram_gpu("multi", "GPU-a", 1);
    metrics_free_vram_gpu("multi", "GPU-b\"x", 2);
    metrics_free_vram_gpu("multi", "GPU-a", 3); /* replaces */
    metrics_free_vram_gpu("single", NULL, 5);   /* the node-scope series */
    text = render();
    assert_non_null(
        strstr(text, "gpu_vram_watchdog_free_vram_bytes{node=\"single\"} 5242880\n"));
    assert_non_null(strstr(
        text,
        "gpu_vram_watchdog_free_vram_bytes{node=\"multi\",gpu=\"GPU-a\"} 3145728\n"));
    assert_non_null(strstr(
        text,
        "gpu_vram_watchdog_free_vram_bytes{node=\"multi\",gpu=\"GPU-b\\\"x\"} 2097152\n"));
    assert_null(strstr(text, "gpu=\"\""));
    free(text);
    metrics_cleanup();
}

/* Before any decision, decisions_total has one series at 0 for each of
 * SPEC's results (rules and dashboards see the family from start-up). */
static void
test_decisions_from_start_up(void **state)
{
    static const char *const results[] = {
        "recycled",
        "released",
        "would_recycle",
        "skipped_recovered",
        "skipped_no_candidate",
        "skipped_telemetry",
        "skipped_kube",
        "blocked",
        "rate_limited",
        "coalesced",
        "failed",
    };
    char want[128], *text, *p;
    size_t lines = 0;

    metrics_init(1);
    text = render();
    for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
        snprintf(want, sizeof(want),
                 "gpu_vram_watchdog_decisions_total{result=\"%s\"} 0\n", results[i]);
        if (strstr(text, want) == NULL)
            fail_msg("missing: %s--- got:\n%s", want, text);
    }
    for (p = text; (p = strstr(p, "gpu_vram_watchdog_decisions_total{")) != NULL; p++)
        lines++;
    assert_int_equal(lines, sizeof(results) / sizeof(results[0]));
    free(text);
    metrics_decision(RESULT_BLOCKED, 0.5);
    text = render();
    assert_non_null(
        strstr(text, "gpu_vram_watchdog_decisions_total{result=\"blocked\"} 1\n"));
    assert_non_null(
        strstr(text, "gpu_vram_watchdog_decisions_total{result=\"failed\"} 0\n"));
    free(text);
    metrics_cleanup();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families_and_values),
        cmocka_unit_test(test_leader),
        cmocka_unit_test(test_label_escaping),
        cmocka_unit_test(test_cardinality_cap),
        cmocka_unit_test(test_free_vram_per_gpu),
        cmocka_unit_test(test_decisions_from_start_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
