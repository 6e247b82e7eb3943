/* test_expo_render.c -- the exporter's /metrics text: families, labels, escaping, up 0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "expo.h"
#include "expo_render.h"
#include "utf8.h"

static void
test_up(void **state)
{
    struct nvml_device dev = {3, "GPU-x", "Tesla \"T4\"\\x\n", 100, 40, NULL, 0};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_series s = {0, "ns", "p", "c", 25};
    struct attr_device ad = {60, 35};
    struct attr_tally attr;
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 0, NULL, NULL};
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
    struct attr_tally attr;
    struct pod items[5];
    struct pod_list pods = {.pl_pods = items, .pl_count = 5};
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 3, NULL, NULL};
    struct buf b;

    memset(&attr, 0, sizeof(attr));
    memset(items, 0, sizeof(items));
    attr.ar_devices = &ad;
    items[0] = (struct pod){.p_uid = "u0",
                            .p_namespace = "ml",
                            .p_name = "llm",
                            .p_budget_state = BUDGET_OK,
                            .p_budget_mib = 5000};
    items[1] = (struct pod){.p_uid = "u1",
                            .p_namespace = "ml",
                            .p_name = "bad",
                            .p_budget_state = BUDGET_BAD,
                            .p_budget_error = "x"};
    items[2] = (struct pod){.p_uid = "u2", .p_namespace = "ml", .p_name = "none"};
    items[3] = (struct pod){.p_uid = "u3",
                            .p_namespace = "ml",
                            .p_name = "tiny",
                            .p_budget_state = BUDGET_OK,
                            .p_budget_mib = 1};
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
    struct expo_status st = {"node-1", 0, 0, 0.5, 0, NULL, NULL};
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
    struct expo_status st = {"node-1", 0, 0, 0, 0, NULL, NULL};
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

/* The exposition stays valid UTF-8 whatever a label holds: each byte that is
 * not part of a well-formed character is U+FFFD (a lone continuation, 0xFF,
 * an overlong '/', a surrogate, a sequence cut by the end); well-formed
 * characters, 2 to 4 bytes, pass as they are, and the format's three escapes
 * still apply. A saturated figure (UINT64_MAX bytes) prints as the huge
 * number it is, never as a small one. */
static void
test_labels_stay_utf8(void **state)
{
    struct nvml_device dev = {
        0, "GPU-\xff", "\x80T4 \xc0\xaf \xed\xa0\x80 \"q\" \xe2\x82", 100, 40, NULL, 0};
    struct nvml_snapshot snap = {&dev, 1};
    struct attr_series s = {0, "ns", "p", "c", UINT64_MAX};
    struct attr_device ad = {60, 0};
    struct attr_tally attr;
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 0, NULL, NULL};
    struct expo_label ok[] = {{"a", "T\xc3\xa9sla \xe2\x82\xac \xf0\x9f\x98\x80"}};
    char clean[16];
    struct buf b;

    (void)state;
    memset(&attr, 0, sizeof(attr));
    attr.ar_series = &s;
    attr.ar_nseries = 1;
    attr.ar_devices = &ad;
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, &attr, NULL), 0);
    assert_true(utf8_valid(b.b_data, b.b_len));
    assert_non_null(strstr(b.b_data,
                           "uuid=\"GPU-\xef\xbf\xbd\",model=\"\xef\xbf\xbdT4 "
                           "\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd"
                           "\xef\xbf\xbd \\\"q\\\" \xef\xbf\xbd\xef\xbf\xbd\"} 100\n"));
    assert_non_null(strstr(b.b_data,
                           "container=\"c\",gpu=\"0\",uuid=\"GPU-\xef\xbf\xbd\"} "
                           "1.8446744073709552e+19\n"));
    buf_free(&b);
    buf_init(&b, 0);
    assert_int_equal(expo_sample(&b, "m", ok, 1, 1), 0);
    assert_string_equal(b.b_data,
                        "m{a=\"T\xc3\xa9sla \xe2\x82\xac \xf0\x9f\x98\x80\"} 1\n");
    buf_free(&b);

    /* utf8_clean: the same replacement into a bounded buffer, never cut
     * inside a character. */
    assert_int_equal(utf8_clean("a\xff"
                                "b",
                                clean, sizeof(clean)),
                     5);
    assert_string_equal(clean, "a\xef\xbf\xbd"
                               "b");
    assert_int_equal(utf8_clean("\xff\xff\xff\xff\xff\xff", clean, sizeof(clean)), 15);
    assert_int_equal(utf8_clean("\xff\xff\xff\xff\xff\xff", clean, 9), 6);
    assert_true(utf8_valid(clean, strlen(clean)));
    assert_int_equal(utf8_clean("\xe2\x82\xac\xe2\x82\xac", clean, 6), 3);
    assert_string_equal(clean, "\xe2\x82\xac");
    assert_int_equal(utf8_clean("", clean, 1), 0);
}

struct told {
    int t_count;
    char t_pod[32];
    char t_why[160];
};

static void
note_unresolved(const struct pod *p, const char *why, void *arg)
{
    struct told *t = arg;

    t->t_count++;
    snprintf(t->t_pod, sizeof(t->t_pod), "%s", p->p_name);
    snprintf(t->t_why, sizeof(t->t_why), "%s", why);
}

/* A share of the GPU (HAMi's gpumem-percentage, KAI's gpu-fraction) in bytes by
 * the total of the GPU the pod's processes are on; a pod on no GPU of a node
 * whose GPUs differ has no series, and the exporter is told why. */
static void
test_share_budgets(void **state)
{
    struct nvml_device dev[2] = {{0, "GPU-a", "A100", 80ull << 30, 1ull << 30, NULL, 0},
                                 {1, "GPU-b", "T4", 16ull << 30, 1ull << 30, NULL, 0}};
    struct nvml_snapshot snap = {dev, 2};
    struct attr_series s = {1, "ml", "hami", "c", 25};
    struct attr_device ad[2] = {{0, 0}, {25, 0}};
    struct attr_tally attr;
    struct pod items[3];
    struct pod_list pods = {.pl_pods = items, .pl_count = 3};
    struct told told = {0, "", ""};
    struct expo_status st = {"node-1", 1, 1700000000.5, 0.002, 0, note_unresolved, &told};
    struct buf b;

    memset(&attr, 0, sizeof(attr));
    attr.ar_series = &s;
    attr.ar_nseries = 1;
    attr.ar_devices = ad;
    items[0] = (struct pod){.p_uid = "u0",
                            .p_namespace = "ml",
                            .p_name = "hami",
                            .p_budget_state = BUDGET_BAD,
                            .p_budget_gpus = 0.5};
    items[1] = (struct pod){.p_uid = "u1",
                            .p_namespace = "ml",
                            .p_name = "kai",
                            .p_budget_state = BUDGET_BAD,
                            .p_budget_gpus = 0.25};
    items[2] = (struct pod){.p_uid = "u2",
                            .p_namespace = "ml",
                            .p_name = "mib",
                            .p_budget_state = BUDGET_OK,
                            .p_budget_mib = 4000};
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, &attr, &pods), 0);
    /* half of the T4 it runs on (8 GiB), not half of the A100 */
    assert_non_null(strstr(b.b_data, "gpu_pod_memory_budget_bytes{node=\"node-1\","
                                     "namespace=\"ml\",pod=\"hami\"} 8589934592\n"));
    assert_non_null(strstr(b.b_data, "gpu_pod_memory_budget_bytes{node=\"node-1\","
                                     "namespace=\"ml\",pod=\"mib\"} 4194304000\n"));
    assert_null(strstr(b.b_data, "pod=\"kai\""));
    assert_int_equal(told.t_count, 1);
    assert_string_equal(told.t_pod, "kai");
    assert_non_null(strstr(told.t_why, "differ in size"));
    buf_free(&b);

    /* one GPU: a pod that holds no memory yet is judged by it */
    snap.ns_count = 1;
    attr.ar_nseries = 0;
    told.t_count = 0;
    buf_init(&b, 0);
    assert_int_equal(expo_render(&b, &st, &snap, &attr, &pods), 0);
    assert_non_null(strstr(b.b_data, "gpu_pod_memory_budget_bytes{node=\"node-1\","
                                     "namespace=\"ml\",pod=\"kai\"} 21474836480\n"));
    assert_int_equal(told.t_count, 0);
    buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_up),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_share_budgets),
        cmocka_unit_test(test_down),
        cmocka_unit_test(test_full_buffer),
        cmocka_unit_test(test_sample_helpers),
        cmocka_unit_test(test_labels_stay_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
