/* test_free_device.c -- FREE_QUERY=auto in the core: device figures, staleness,
 * impossible readings, the GPU-scope taint, and free_source */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "policy.h"
#include "prom_json.h"

#define MIB 1048576.0
#define GIB "1073741824"

/* A vector answer from "metric-labels=value" pairs. */
static char *
vector(const char *const *items)
{
    static char buf[8192];
    size_t off = 0;

    off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (size_t i = 0; items[i] != NULL; i += 2)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                                "%s{\"metric\":{%s},\"value\":[100,\"%s\"]}",
                                i ? "," : "", items[i], items[i + 1]);
    snprintf(buf + off, sizeof(buf) - off, "]}}");
    return buf;
}

/* The device query's answer, parsed as prom_query_device does. */
static void
device(const char *const *items, struct device_reading *out)
{
    struct usage_reading raw;
    const char *body = vector(items);
    char err[256];

    assert_int_equal(prom_json_parse_vector_gpu(body, strlen(body), "__name__", "gvw_ts",
                                                "uuid", &raw, err, sizeof(err)),
                     0);
    assert_int_equal(device_from_series(&raw, out), 0);
}

static void
usage(const char *const *items, struct usage_reading *out)
{
    const char *body = vector(items);
    char err[256];

    assert_int_equal(prom_json_parse_vector_gpu(body, strlen(body), "namespace", "pod",
                                                "uuid", out, err, sizeof(err)),
                     0);
}

#define FREE(u, v) "\"__name__\":\"gpu_memory_free_bytes\",\"uuid\":\"" u "\"", v
#define TOTAL(u, v) "\"__name__\":\"gpu_memory_total_bytes\",\"uuid\":\"" u "\"", v
#define DTS(u, v) "\"gvw_ts\":\"device\",\"uuid\":\"" u "\"", v
#define UTS(u, v) "\"gvw_ts\":\"used\",\"uuid\":\"" u "\"", v
#define USED(ns, pod, u, v)                                                              \
    "\"namespace\":\"" ns "\",\"pod\":\"" pod "\",\"uuid\":\"" u "\"", v

static void
decide(const struct usage_reading *ur, const struct device_reading *dr, const char *gpu,
       struct policy_answer *res)
{
    struct pod_list pl = {0};
    struct policy_params pp = {
        .pp_floor_mib = 1536, .pp_total_mib = 15360, .pp_now = 1000};
    struct policy_input in = {
        .pi_pods = &pl, .pi_usage = ur, .pi_gpu = gpu, .pi_device = dr};

    policy_decide(&pp, &in, res);
}

/* An 80 GB card: the device's own free is judged, not 15360 - used; no setting
 * names the card's size. */
static void
test_device_free_on_h100(void **state)
{
    const char *const dev[] = {FREE("GPU-a", "628097024"), TOTAL("GPU-a", "85520809984"),
                               DTS("GPU-a", "100"), UTS("GPU-a", "100"), NULL};
    const char *const use[] = {USED("ml", "big", "GPU-a", "42949672960"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    device(dev, &dr);
    usage(use, &ur);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_int_equal(res.pr_free_mib, 599);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    assert_string_equal(free_source_name(res.pr_free_source), "device");
    assert_null(strstr(res.pr_reason, "computed"));
    policy_answer_free(&res);
    /* Node scope: the node's GPUs summed. */
    decide(&ur, &dr, NULL, &res);
    assert_int_equal(res.pr_free_mib, 599);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    policy_answer_free(&res);
    usage_reading_free(&ur);
    device_reading_free(&dr);
}

/* A time tag the device query never makes is ignored; two used-time series of
 * one GPU (a broken max by) count by the newer, so the device's older sample is
 * stale. */
static void
test_stray_and_repeated_tags(void **state)
{
    const char *const stray[] = {
        FREE("GPU-a", "628097024"),
        TOTAL("GPU-a", "85520809984"),
        DTS("GPU-a", "100"),
        UTS("GPU-a", "100"),
        "\"gvw_ts\":\"other\",\"uuid\":\"GPU-a\"",
        "0",
        "\"__name__\":\"gpu_memory_unattributed_bytes\",\"uuid\":\"GPU-a\"",
        "2147483648",
        NULL};
    const char *const twice[2][14] = {
        {FREE("GPU-a", "628097024"), TOTAL("GPU-a", "85520809984"), DTS("GPU-a", "110"),
         UTS("GPU-a", "100"), "\"gvw_ts\":\"used\",\"uuid\":\"GPU-a\",\"instance\":\"b\"",
         "130", NULL},
        {FREE("GPU-a", "628097024"), TOTAL("GPU-a", "85520809984"), DTS("GPU-a", "110"),
         "\"gvw_ts\":\"used\",\"uuid\":\"GPU-a\",\"instance\":\"b\"", "130",
         UTS("GPU-a", "100"), NULL}};
    const char *const use[] = {USED("ml", "big", "GPU-a", "42949672960"), NULL};
    const char *const small[] = {USED("ml", "p", "GPU-a", "1048576000"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(use, &ur);
    device(stray, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    assert_int_equal(res.pr_free_mib, 599);
    /* the memory no pod accounts for, as the seating chart's card draws it */
    assert_true(device_find(&dr, "GPU-a")->dg_have_unattributed);
    assert_true(device_find(&dr, "GPU-a")->dg_unattributed_bytes == 2147483648.0);
    policy_answer_free(&res);
    device_reading_free(&dr);
    usage_reading_free(&ur);
    usage(small, &ur);
    for (int order = 0; order < 2; order++) { /* newer last, then first */
        device(twice[order], &dr);
        decide(&ur, &dr, "GPU-a", &res);
        assert_int_equal(res.pr_free_source, FREE_SOURCE_COMPUTED);
        assert_non_null(
            strstr(res.pr_reason, "stale (20.000 s older than its pod series)"));
        policy_answer_free(&res);
        device_reading_free(&dr);
    }
    usage_reading_free(&ur);
}

/* A series that carries both a metric name and a time tag is none the device
 * query makes (a relabelling Prometheus, a hostile one): it is ignored, never
 * read as a second sample time that would make the GPU's figures a duplicate. */
static void
test_tagged_named_series_ignored(void **state)
{
    const char *const dev[] = {
        FREE("GPU-a", "628097024"),
        TOTAL("GPU-a", "85520809984"),
        DTS("GPU-a", "100"),
        UTS("GPU-a", "100"),
        "\"__name__\":\"gpu_memory_free_bytes\",\"gvw_ts\":\"device\","
        "\"uuid\":\"GPU-a\"",
        "0",
        NULL};
    const char *const use[] = {USED("ml", "big", "GPU-a", "42949672960"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    device(dev, &dr);
    usage(use, &ur);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    assert_int_equal(res.pr_free_mib, 599);
    policy_answer_free(&res);
    usage_reading_free(&ur);
    device_reading_free(&dr);
}

/* No device series, or stale ones: computed, and the reason says why. */
static void
test_fallback_and_stale(void **state)
{
    const char *const none[] = {UTS("GPU-a", "100"), NULL};
    const char *const stale[] = {FREE("GPU-a", GIB), TOTAL("GPU-a", "16106127360"),
                                 DTS("GPU-a", "70"), UTS("GPU-a", "100"), NULL};
    const char *const use[] = {USED("ml", "p", "GPU-a", "1048576000"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(use, &ur);
    device(none, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_COMPUTED);
    assert_int_equal(res.pr_free_mib, 15360 - 1000);
    assert_non_null(strstr(res.pr_reason,
                           "free computed as GPU_TOTAL_MIB=15360 - used "
                           "(GPU GPU-a: no gpu_memory_free_bytes series)"));
    policy_answer_free(&res);
    /* In node scope too, the GPU named */
    decide(&ur, &dr, NULL, &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_COMPUTED);
    assert_non_null(
        strstr(res.pr_reason, "(GPU GPU-a: no gpu_memory_free_bytes series)"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    device(stale, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_COMPUTED);
    assert_non_null(strstr(res.pr_reason, "stale (30.000 s older than its pod series)"));
    policy_answer_free(&res);
    /* Without the device query at all (FREE_QUERY=""): computed, no note. */
    decide(&ur, NULL, "GPU-a", &res);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_COMPUTED);
    assert_null(strstr(res.pr_reason, "computed"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    usage_reading_free(&ur);
}

struct bad_case {
    const char *name, *free, *total, *want;
};

static void
test_impossible_device(void **state)
{
    static const struct bad_case cases[] = {
        {"free > total", "17179869184", "16106127360",
         "reports 16384 MiB free on GPU GPU-a, more than its total of 15360 MiB"},
        {"negative total", "0", "-1", "reports a total of -1 bytes on GPU GPU-a"},
        {"NaN free", "NaN", "16106127360", "reports nan bytes free on GPU GPU-a"},
        {"Inf total", "0", "+Inf", "reports a total of inf bytes"},
        /* Finite, but past any card (capacity advertising's bound, 16 TiB): with
         * it, no pod would ever be above the total. */
        {"absurd total", "0", "1e30",
         "reports a total of 1e+30 bytes on GPU GPU-a, more"},
        {"pod above the device total", GIB, "8589934592",
         "ml/p reports 10240 MiB, more than the GPU's total of 8192 MiB (as the device"},
        /* a card of 0 bytes is no card, even with 0 free */
        {"zero total", "0", "0", "reports a total of 0 bytes on GPU GPU-a, which cannot"},
        /* 2^83 bytes: 2^63 MiB, past an int64: said as the largest, never wrapped */
        {"free of 2^63 MiB", "9671406556917033397649408", "16106127360",
         "reports 9223372036854775807 MiB free on GPU GPU-a, more than its total of "
         "15360 MiB"},
    };
    const char *const use[] = {USED("ml", "p", "GPU-a", "10737418240"), NULL};
    struct usage_reading ur;

    (void)state;
    usage(use, &ur);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const dev[] = {FREE("GPU-a", cases[i].free),
                                   TOTAL("GPU-a", cases[i].total), DTS("GPU-a", "100"),
                                   NULL};
        struct device_reading dr;
        struct policy_answer res;

        print_message("%s\n", cases[i].name);
        device(dev, &dr);
        decide(&ur, &dr, "GPU-a", &res);
        assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
        if (strstr(res.pr_reason, cases[i].want) == NULL)
            fail_msg("%s: %s", cases[i].name, res.pr_reason);
        policy_answer_free(&res);
        device_reading_free(&dr);
    }
    usage_reading_free(&ur);
}

/* The plausibility bounds, exactly at their edges (SPEC "A decision" step 1:
 * a reading that cannot be true is skipped_telemetry, one that can is judged):
 * free == total is an idle card, one byte more free than total is not a card;
 * a total of exactly 16 TiB (capacity advertising's bound) is judged, one
 * byte more is not. GPU-a has no pod on it (its one user sits on GPU-b). */
struct edge_case {
    const char *name, *free, *total, *want; /* want NULL = judged on the device */
    long long free_mib;
};

static void
test_device_bounds_exact(void **state)
{
    static const struct edge_case cases[] = {
        {"free == total", "16106127360", "16106127360", NULL, 15360},
        {"free == total + 1 byte", "16106127361", "16106127360",
         "reports 15360 MiB free on GPU GPU-a, more than its total of 15360 MiB", 0},
        {"total == 16 TiB", "2147483648", "17592186044416", NULL, 2048},
        {"total == 16 TiB + 1 byte", "2147483648", "17592186044417",
         "bytes on GPU GPU-a, more than any card has, which cannot be true", 0},
    };
    const char *const use[] = {USED("ml", "q", "GPU-b", "1073741824"), NULL};
    struct usage_reading ur;

    (void)state;
    usage(use, &ur);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const dev[] = {FREE("GPU-a", cases[i].free),
                                   TOTAL("GPU-a", cases[i].total), DTS("GPU-a", "100"),
                                   NULL};
        struct device_reading dr;
        struct policy_answer res;

        print_message("%s\n", cases[i].name);
        device(dev, &dr);
        decide(&ur, &dr, "GPU-a", &res);
        if (cases[i].want == NULL) {
            if (res.pr_outcome != POLICY_SKIPPED_RECOVERED)
                fail_msg("%s: not judged: %s", cases[i].name, res.pr_reason);
            assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
            assert_int_equal(res.pr_free_mib, cases[i].free_mib);
        } else {
            assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
            if (strstr(res.pr_reason, cases[i].want) == NULL)
                fail_msg("%s: %s", cases[i].name, res.pr_reason);
        }
        policy_answer_free(&res);
        device_reading_free(&dr);
    }
    usage_reading_free(&ur);
}

/* Two series of one kind for one GPU: which is right? Not acted on. */
static void
test_duplicate_device_series(void **state)
{
    const char *const dev[] = {FREE("GPU-a", GIB), FREE("GPU-a", "0"),
                               TOTAL("GPU-a", "16106127360"), DTS("GPU-a", "100"), NULL};
    const char *const use[] = {USED("ml", "p", "GPU-a", "1048576"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    device(dev, &dr);
    usage(use, &ur);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "more than one device series"));
    policy_answer_free(&res);
    usage_reading_free(&ur);
    device_reading_free(&dr);
}

/* SPEC "GPU scope": pod p uses GPU-a and GPU-b; GPU-b's series sum above its
 * card, so p's total is unknowable and GPU-a is not judged either (the product
 * used to decide GPU-a on p's unknowable total). */
static void
test_taint_across_gpus(void **state)
{
    const char *const use[] = {USED("ml", "p", "GPU-a", "15032385536"),
                               USED("ml", "p", "GPU-b", "10737418240"),
                               USED("ml", "q", "GPU-b", "10737418240"), NULL};
    const char *const dev[] = {FREE("GPU-a", GIB), TOTAL("GPU-a", "16106127360"),
                               DTS("GPU-a", "100"), NULL};
    const char *const devbad[] = {FREE("GPU-a", GIB),
                                  TOTAL("GPU-a", "16106127360"),
                                  DTS("GPU-a", "100"),
                                  FREE("GPU-b", "17179869184"),
                                  TOTAL("GPU-b", "85520809984"),
                                  DTS("GPU-b", "100"),
                                  FREE("GPU-c", "2"),
                                  TOTAL("GPU-c", "1"),
                                  DTS("GPU-c", "100"),
                                  NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(use, &ur);
    /* Computed (FREE_QUERY=""): GPU-b's 20480 MiB exceed GPU_TOTAL_MIB. */
    decide(&ur, NULL, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason,
                           "ml/p also uses GPU GPU-b, whose reading cannot "
                           "be true"));
    assert_non_null(strstr(res.pr_reason, "so GPU GPU-a is not judged"));
    policy_answer_free(&res);
    /* The device's own totals: GPU-b is an 80 GB card, so nothing is impossible. */
    device(devbad, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_int_equal(res.pr_free_mib, 1024);
    policy_answer_free(&res);
    device_reading_free(&dr);
    /* GPU-b without device series falls back to GPU_TOTAL_MIB: impossible again. */
    device(dev, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "GPU GPU-b"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    usage_reading_free(&ur);
}

/* A device reading that cannot be true taints the pods using that GPU too. */
static void
test_taint_by_device(void **state)
{
    const char *const use[] = {USED("ml", "p", "GPU-a", "1073741824"),
                               USED("ml", "p", "GPU-b", "1073741824"), NULL};
    const char *const dev[] = {FREE("GPU-a", "0"),
                               TOTAL("GPU-a", "16106127360"),
                               DTS("GPU-a", "100"),
                               FREE("GPU-b", "9"),
                               TOTAL("GPU-b", "-5"),
                               DTS("GPU-b", "100"),
                               NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(use, &ur);
    device(dev, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "reports a total of -5 bytes on GPU GPU-b"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    usage_reading_free(&ur);
}

/* A GPU the device reports but no pod uses (its one tenant just recycled, or
 * memory no pod holds): judged by its own figure, never "no series" (the verify
 * of a recycle that emptied the GPU read nothing back). */
static void
test_gpu_without_pods(void **state)
{
    const char *const use[] = {USED("ml", "q", "GPU-b", "1073741824"), NULL};
    const char *const freed[] = {FREE("GPU-a", "15032385536"),
                                 TOTAL("GPU-a", "16106127360"), DTS("GPU-a", "100"),
                                 NULL};
    const char *const held[] = {FREE("GPU-a", "524288000"), TOTAL("GPU-a", "16106127360"),
                                DTS("GPU-a", "100"), NULL};
    const char *const bad[] = {FREE("GPU-a", "17179869184"),
                               TOTAL("GPU-a", "16106127360"), DTS("GPU-a", "100"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(use, &ur);
    device(freed, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_RECOVERED);
    assert_int_equal(res.pr_free_mib, 14336);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    policy_answer_free(&res);
    device_reading_free(&dr);
    /* Below the floor with nobody on it: nobody to recycle. */
    device(held, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_int_equal(res.pr_free_mib, 500);
    assert_non_null(strstr(res.pr_reason, "no pod to consider"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    /* Its device figure impossible: that says why. */
    device(bad, &dr);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "more than its total"));
    policy_answer_free(&res);
    device_reading_free(&dr);
    /* No device figure either (FREE_QUERY="" or none reported): nothing known. */
    decide(&ur, NULL, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "Prometheus returned no series for GPU GPU-a"));
    policy_answer_free(&res);
    usage_reading_free(&ur);
}

/* Node scope, no pod series at all (a re-read after the node's one VRAM
 * holder left): the device's own figure stands; without it, nothing is known. */
static void
test_node_without_pods(void **state)
{
    const char *const none[] = {NULL};
    const char *const freed[] = {FREE("GPU-a", "12582912000"),
                                 TOTAL("GPU-a", "16106127360"), DTS("GPU-a", "100"),
                                 NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    usage(none, &ur);
    device(freed, &dr);
    decide(&ur, &dr, NULL, &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_RECOVERED);
    assert_int_equal(res.pr_free_mib, 12000);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    policy_answer_free(&res);
    device_reading_free(&dr);
    /* The computed figure would be all of GPU_TOTAL_MIB: never taken. */
    decide(&ur, NULL, NULL, &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_string_equal(res.pr_reason, "Prometheus returned no series");
    policy_answer_free(&res);
    usage_reading_free(&ur);
}

static void
test_promql_and_names(void **state)
{
    char q[2048];
    size_t len;

    (void)state;
    assert_int_equal(device_promql("uuid", q, sizeof(q)), 0);
    assert_non_null(strstr(
        q, "max by (uuid) (timestamp(gpu_pod_memory_used_bytes{node=\"$node\"}))"));
    assert_int_equal(device_promql("", q, sizeof(q)), 0);
    assert_non_null(strstr(q, "max by (uuid)"));
    assert_int_equal(device_promql("uu}id", q, sizeof(q)), -1);
    assert_int_equal(device_promql("1abc", q, sizeof(q)), -1);
    assert_int_equal(device_promql("uuid", q, 10), -1);
    /* Room for the query but not its NUL: refused, never sent cut. */
    assert_int_equal(device_promql("uuid", q, sizeof(q)), 0);
    len = strlen(q);
    assert_int_equal(device_promql("uuid", q, len), -1);
    assert_int_equal(device_promql("uuid", q, len + 1), 0);
    assert_int_equal(strlen(q), len);
    device_reading_free(NULL); /* nothing to free: harmless, as every _free */
    assert_null(free_source_name(FREE_SOURCE_NONE));
}

/* Each free source's word, as the audit's free_source field shows it. */
static void
test_free_source_words(void **state)
{
    (void)state;
    assert_string_equal(free_source_name(FREE_SOURCE_DEVICE), "device");
    assert_string_equal(free_source_name(FREE_SOURCE_COMPUTED), "computed");
    assert_string_equal(free_source_name(FREE_SOURCE_QUERY), "query");
}

/* A series of another metric in the device answer (a broken or hostile
 * Prometheus; the query asks for none) is no figure of the card: the device's
 * own free is judged as if it were absent. */
static void
test_device_other_metric_ignored(void **state)
{
    const char *const dev[] = {
        FREE("GPU-a", "628097024"),
        TOTAL("GPU-a", "85520809984"),
        "\"__name__\":\"gpu_memory_used_bytes\",\"uuid\":\"GPU-a\"",
        "1073741824",
        "\"uuid\":\"GPU-a\"",
        "5",
        DTS("GPU-a", "100"),
        UTS("GPU-a", "100"),
        NULL};
    const char *const use[] = {USED("ml", "big", "GPU-a", "42949672960"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    device(dev, &dr);
    usage(use, &ur);
    decide(&ur, &dr, "GPU-a", &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_int_equal(res.pr_free_source, FREE_SOURCE_DEVICE);
    assert_int_equal(res.pr_free_mib, 599);
    policy_answer_free(&res);
    device_reading_free(&dr);
    usage_reading_free(&ur);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_free_on_h100),
        cmocka_unit_test(test_tagged_named_series_ignored),
        cmocka_unit_test(test_fallback_and_stale),
        cmocka_unit_test(test_stray_and_repeated_tags),
        cmocka_unit_test(test_impossible_device),
        cmocka_unit_test(test_device_bounds_exact),
        cmocka_unit_test(test_duplicate_device_series),
        cmocka_unit_test(test_taint_across_gpus),
        cmocka_unit_test(test_taint_by_device),
        cmocka_unit_test(test_gpu_without_pods),
        cmocka_unit_test(test_node_without_pods),
        cmocka_unit_test(test_promql_and_names),
        cmocka_unit_test(test_free_source_words),
        cmocka_unit_test(test_device_other_metric_ignored),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
