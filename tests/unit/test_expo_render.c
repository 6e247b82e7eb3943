/* test_expo_render.c -- the exporter's /metrics text: families, labels, escaping, up 0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "expo.h"
#include "expo_render.h"

static void
test_up(void **state)
{
    struct nvml_device dev = {3, "GPU-x", "Tesla \"T4\"\\x\n", 100, 40, NULL, 0};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_series s = {0, "ns", "p", "c", 25};
    struct attr_device ad = {60, 35};
    struct attr_result attr;
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 0};
    struct buf b;

    memset(&attr, 0, sizeof(attr));
    attr.ar_series = &s;
    attr.ar_nseries = 1;
    attr.ar_devices = &ad;
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, &attr, NULL), 0);
    assert_non_null(strstr(b.b_data,
                           "gpu_pod_memory_used_bytes{node=\"node-1\",namespace=\"ns\","
                           "pod=\"p\",container=\"c\",gpu=\"3\",uuid=\"GPU-x\"} 25\n"));
    assert_non_null(strstr(b.b_data,
                           "gpu_memory_total_bytes{node=\"node-1\",gpu=\"3\","
                           "uuid=\"GPU-x\",model=\"Tesla \\\"T4\\\"\\\\x\\n\"} 100\n"));
    assert_non_null(strstr(b.b_data, "gpu_memory_used_bytes{node=\"node-1\",gpu=\"3\""));
    assert_non_null(strstr(b.b_data, "\"} 60\n"));
    assert_non_null(strstr(b.b_data, "gpu_memory_free_bytes{node=\"node-1\",gpu=\"3\""));
    assert_non_null(strstr(b.b_data,
                           "gpu_memory_unattributed_bytes{node=\"node-1\",gpu=\"3\","
                           "uuid=\"GPU-x\"} 35\n"));
    assert_non_null(strstr(b.b_data, "\ngpu_vram_exporter_up 1\n"));
    assert_non_null(strstr(b.b_data, "\ngpu_vram_exporter_last_poll_timestamp_seconds "
                                     "1700000000.500\n"));
    assert_non_null(strstr(b.b_data, "gpu_vram_exporter_build_info{version=\""));
    /* HELP and TYPE once per family */
    assert_non_null(strstr(b.b_data, "# TYPE gpu_pod_memory_used_bytes gauge\n"));
    assert_null(strstr(strstr(b.b_data, "# TYPE gpu_pod_memory_used_bytes") + 1,
                       "# TYPE gpu_pod_memory_used_bytes"));
    buf_free(&b);
}

/* Budgets: bytes = MiB x 1048576, one series per pod that declares a
 * readable one, even without VRAM; the errors counter. (Finished pods never
 * reach the list: test_podlist's test_phase.) */
static void
test_budgets(void **state)
{
    struct nvml_device dev = {0, "GPU-x", "T4", 100, 40, NULL, 0};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_device ad = {60, 60};
    struct attr_result attr;
    struct pl_pod items[5];
    struct pl_pods pods = {items, 5, NULL};
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 3};
    struct buf b;

    memset(&attr, 0, sizeof(attr));
    memset(items, 0, sizeof(items));
    attr.ar_devices = &ad;
    items[0] = (struct pl_pod){.pp_uid = "u0",
                               .pp_namespace = "ml",
                               .pp_name = "llm",
                               .pp_budget = PL_BUDGET_OK,
                               .pp_budget_mib = 5000};
    items[1] = (struct pl_pod){.pp_uid = "u1",
                               .pp_namespace = "ml",
                               .pp_name = "bad",
                               .pp_budget = PL_BUDGET_BAD,
                               .pp_budget_error = "x"};
    items[2] = (struct pl_pod){.pp_uid = "u2", .pp_namespace = "ml", .pp_name = "none"};
    items[3] = (struct pl_pod){.pp_uid = "u3",
                               .pp_namespace = "ml",
                               .pp_name = "tiny",
                               .pp_budget = PL_BUDGET_OK,
                               .pp_budget_mib = 1};
    items[4] = items[0]; /* a list that repeats a pod still gives one series */
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, &attr, &pods), 0);
    assert_non_null(strstr(b.b_data, "# TYPE gpu_pod_memory_budget_bytes gauge\n"
                                     "gpu_pod_memory_budget_bytes{node=\"node-1\","
                                     "namespace=\"ml\",pod=\"llm\"} 5242880000\n"
                                     "gpu_pod_memory_budget_bytes{node=\"node-1\","
                                     "namespace=\"ml\",pod=\"tiny\"} 1048576\n#"));
    assert_null(strstr(b.b_data, "pod=\"bad\""));
    assert_null(strstr(b.b_data, "pod=\"none\""));
    assert_non_null(strstr(b.b_data,
                           "# TYPE gpu_vram_exporter_budget_errors_total counter\n"
                           "gpu_vram_exporter_budget_errors_total 3\n"));
    buf_free(&b);

    /* NVML down: no pod series of any kind; the counter stays. */
    st.es_up = 0;
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, NULL, &pods), 0);
    assert_null(strstr(b.b_data, "gpu_pod_memory_budget_bytes"));
    assert_non_null(strstr(b.b_data, "gpu_vram_exporter_budget_errors_total 3\n"));
    buf_free(&b);
}

static void
test_down(void **state)
{
    struct nvml_device dev = {0, "GPU-x", "T4", 100, 40, NULL, 0};
    struct nvml_snapshot snap = {&dev, 1};
    struct expo_status st = {"node-1", 0, 0, 0.5, 0};
    struct buf b;

    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, NULL, NULL), 0);
    assert_non_null(strstr(b.b_data, "gpu_vram_exporter_up 0\n"));
    assert_null(strstr(b.b_data, "gpu_memory_"));
    assert_null(strstr(b.b_data, "gpu_pod_memory_"));
    assert_null(strstr(b.b_data, "last_poll_timestamp")); /* never read NVML */
    buf_free(&b);
}

static void
test_full_buffer(void **state)
{
    struct expo_status st = {"node-1", 0, 0, 0, 0};
    struct buf b;

    buf_init(&b, 64);
    assert_int_equal(expo_render(&b, &st, NULL, NULL, NULL), -1);
    buf_free(&b);
}

static void
test_sample_helpers(void **state)
{
    struct expo_label l[2] = {{"a", "x\"y"}, {"b", NULL}};
    struct buf b;

    buf_init(&b, 0);
    assert_int_equal(expo_sample(&b, "m", l, 2, 1.5), 0);
    assert_int_equal(expo_sample(&b, "n", NULL, 0, 2), 0);
    assert_string_equal(b.b_data, "m{a=\"x\\\"y\",b=\"\"} 1.5\nn 2\n");
    buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_up),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_down),
        cmocka_unit_test(test_full_buffer),
        cmocka_unit_test(test_sample_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
