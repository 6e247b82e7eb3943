/* test_usage.c -- per-pod sums and the readings that cannot be true */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/testdata.h"

#include "prom_json.h"
#include "usage.h"

#define MIB 1048576.0

static void
read_file(const char *name, const char *ns_label, const char *pod_label,
          struct usage_reading *r)
{
    char err[256], *body;
    size_t len;

    body = test_data_load(name, &len);
    if (prom_json_parse_vector(body, len, ns_label, pod_label, r, err, sizeof(err)) != 0)
        fail_msg("%s: %s", name, err);
    free(body);
}

/* The 2026-06-02 reading: five tenants and the driver's own context. */
static void
test_incident(void **state)
{
    struct usage_reading r;
    struct usage_summary s;
    char err[256];

    read_file("prom-incident.json", NULL, NULL, &r);
    assert_int_equal(usage_summarise(&r, 15360, &s, err, sizeof(err)), 0);
    assert_int_equal(s.us_count, 5);
    /* sorted by namespace, then pod */
    assert_string_equal(s.us_pods[0].pu_namespace, "frigate");
    assert_string_equal(s.us_pods[1].pu_namespace, "immich");
    assert_string_equal(s.us_pods[1].pu_pod, "immich-ml-5f7c9d8b6-qx2lp");
    assert_string_equal(s.us_pods[2].pu_pod, "immich-server-7c4b9d6f8-m2t9z");
    assert_string_equal(s.us_pods[3].pu_namespace, "llama-swap");
    assert_string_equal(s.us_pods[4].pu_namespace, "portal-stt");
    assert_true(s.us_pods[1].pu_bytes == 11489000000.0);
    assert_int_equal(usage_bytes_to_mib(s.us_pods[1].pu_bytes), 10956);
    assert_true(s.us_unattributed_bytes == 314572800.0);
    assert_true(s.us_total_bytes ==
                11489000000.0 + (1100 + 1400 + 900 + 450 + 300) * MIB);
    usage_summary_free(&s);
    assert_null(s.us_pods);
    usage_summary_free(&s);
    usage_summary_free(NULL);

    /* the same card reported smaller than what it holds */
    assert_int_equal(usage_summarise(&r, 15000, &s, err, sizeof(err)), -1);
    assert_string_equal(err,
                        "the series together report 15106 MiB, which exceeds "
                        "GPU_TOTAL_MIB=15000; is GPU_TOTAL_MIB smaller than the card?");
    assert_null(s.us_pods);
    assert_int_equal(s.us_count, 0);
    assert_int_equal(usage_summarise(&r, 10000, &s, err, sizeof(err)), -1);
    assert_string_equal(err,
                        "immich/immich-ml-5f7c9d8b6-qx2lp reports 10956 MiB, more than "
                        "GPU_TOTAL_MIB=10000; is GPU_TOTAL_MIB smaller than the card?");
    usage_reading_free(&r);
}

/* Per-process series: summed per pod, unlabelled ones in the total only. */
static void
test_processes(void **state)
{
    struct usage_reading r;
    struct usage_summary s;
    char err[256];

    read_file("prom-processes.json", "exported_namespace", "exported_pod", &r);
    assert_int_equal(usage_summarise(&r, 15360, &s, err, sizeof(err)), 0);
    assert_int_equal(s.us_count, 2);
    assert_string_equal(s.us_pods[0].pu_namespace, "frigate");
    assert_string_equal(s.us_pods[1].pu_pod, "immich-ml-5f7c9d8b6-qx2lp");
    assert_true(s.us_pods[1].pu_bytes == 10737418240.0 + 751581760.0);
    assert_true(s.us_unattributed_bytes == 314572800.0 + 1048576.0);
    assert_true(s.us_total_bytes ==
                10737418240.0 + 751581760.0 + 1468006400.0 + 314572800.0 + 1048576.0);
    usage_summary_free(&s);
    usage_reading_free(&r);
}

struct series_spec {
    const char *ns, *pod;
    double bytes;
};

/* A reading built from a table (strings copied, as the parser would). */
static void
build(struct usage_reading *r, const struct series_spec *sp, size_t n)
{
    size_t i;

    r->ur_count = n;
    r->ur_pool = NULL; /* strings one by one, as usage_reading_free() then frees them */
    r->ur_label_sets = NULL;
    r->ur_series = n ? calloc(n, sizeof(*r->ur_series)) : NULL;
    for (i = 0; i < n; i++) {
        r->ur_series[i].us_namespace = sp[i].ns ? strdup(sp[i].ns) : NULL;
        r->ur_series[i].us_pod = sp[i].pod ? strdup(sp[i].pod) : NULL;
        r->ur_series[i].us_bytes = sp[i].bytes;
    }
}

struct judge_case {
    struct series_spec series[4];
    size_t n;
    int64_t total_mib;
    const char *why; /* NULL: plausible */
};

static const struct judge_case judged[] = {
    {{{0}}, 0, 15360, "Prometheus returned no series"},
    {{{"a", "p", -1}},
     1,
     15360,
     "Prometheus reported -1 bytes for a/p, which cannot be true"},
    {{{"a", "p", 5}, {"a", "q", NAN}}, 2, 15360, "Prometheus reported nan bytes for a/q"},
    {{{"a", "p", INFINITY}}, 1, 15360, "Prometheus reported inf bytes for a/p"},
    {{{"a", "p", -INFINITY}}, 1, 15360, "Prometheus reported -inf bytes for a/p"},
    {{{NULL, NULL, NAN}},
     1,
     15360,
     "Prometheus reported nan bytes for a series without pod labels, which cannot be "
     "true"},
    {{{"a", NULL, -5}}, 1, 15360, "for a series without pod labels"},
    {{{"a", "p", -0.0}}, 1, 15360, NULL},
    {{{"a", "p", 0}}, 1, 15360, NULL},
    /* exactly the card is possible, one byte more is not */
    {{{"a", "p", 15360 * MIB}}, 1, 15360, NULL},
    {{{"a", "p", 15360 * MIB + 1}},
     1,
     15360,
     "a/p reports 15360 MiB, more than GPU_TOTAL_MIB=15360; is GPU_TOTAL_MIB smaller "
     "than the "
     "card?"},
    {{{"a", "p", 15000 * MIB}, {"a", "p", 360 * MIB}}, 2, 15360, NULL},
    {{{"a", "p", 15000 * MIB}, {"a", "p", 361 * MIB}},
     2,
     15360,
     "a/p reports 15361 MiB, more than GPU_TOTAL_MIB=15360"},
    {{{"a", "p", 8000 * MIB}, {"b", "p", 7360 * MIB}}, 2, 15360, NULL},
    {{{"a", "p", 8000 * MIB}, {"b", "p", 7000 * MIB}, {NULL, NULL, 361 * MIB}},
     3,
     15360,
     "the series together report 15361 MiB, which exceeds GPU_TOTAL_MIB=15360; is "
     "GPU_TOTAL_MIB smaller than the card?"},
    {{{NULL, NULL, 15361 * MIB}}, 1, 15360, "the series together report 15361 MiB"},
    {{{"a", "p", 1}}, 1, 0, "a/p reports 0 MiB, more than GPU_TOTAL_MIB=0"},
};

static void
test_judge(void **state)
{
    struct usage_reading r;
    struct usage_summary s;
    char err[256];
    size_t i;
    int rc;

    for (i = 0; i < sizeof(judged) / sizeof(judged[0]); i++) {
        build(&r, judged[i].series, judged[i].n);
        err[0] = '\0';
        rc = usage_summarise(&r, judged[i].total_mib, &s, err, sizeof(err));
        if (judged[i].why == NULL && rc != 0)
            fail_msg("case %zu refused: %s", i, err);
        if (judged[i].why != NULL && (rc != -1 || strstr(err, judged[i].why) == NULL))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err, judged[i].why);
        if (rc == -1) {
            assert_null(s.us_pods);
            assert_int_equal(s.us_count, 0);
        }
        usage_summary_free(&s);
        usage_reading_free(&r);
    }
    assert_int_equal(usage_summarise(NULL, 15360, &s, err, sizeof(err)), -1);
    assert_string_equal(err, "Prometheus returned no series");
    assert_int_equal(usage_summarise(NULL, 15360, &s, NULL, 0), -1);
    assert_int_equal(usage_summarise(NULL, 15360, &s, NULL, sizeof(err)), -1);
    /* nor, in GPU scope, without an error buffer */
    assert_int_equal(usage_summarise_gpu(NULL, "GPU-0", 15360, &s, NULL, sizeof(err)),
                     -1);
    err[0] = 'x';
    assert_int_equal(usage_summarise(NULL, 15360, &s, err, 0), -1);
    assert_int_equal(err[0], 'x');
}

/* Empty label values are absent labels, as in Prometheus. */
static void
test_empty_labels(void **state)
{
    static const struct series_spec sp[] = {
        {"", "p", 1 * MIB},
        {"a", "", 2 * MIB},
        {"a", "p", 4 * MIB},
        {NULL, "p", 8 * MIB},
    };
    struct usage_reading r;
    struct usage_summary s;
    char err[128];

    build(&r, sp, 4);
    assert_int_equal(usage_summarise(&r, 100, &s, err, sizeof(err)), 0);
    assert_int_equal(s.us_count, 1);
    assert_true(s.us_pods[0].pu_bytes == 4 * MIB);
    assert_true(s.us_unattributed_bytes == 11 * MIB);
    assert_true(s.us_total_bytes == 15 * MIB);
    usage_summary_free(&s);
    usage_reading_free(&r);
}

/* Sums do not depend on the order the series came in, to the last bit. */
static void
test_order(void **state)
{
    /* 1e16 + 1 rounds back to 1e16: summed in the order answered, a's pod
     * would lose both small series and b's keep them. */
    static const struct series_spec a[] = {
        {"n", "p", 1}, {"n", "p", 1e16}, {"n", "p", 1}, {"m", "q", 3}, {NULL, NULL, 0.3},
    };
    static const struct series_spec b[] = {
        {NULL, NULL, 0.3}, {"n", "p", 1}, {"m", "q", 3}, {"n", "p", 1}, {"n", "p", 1e16},
    };
    struct usage_reading ra, rb;
    struct usage_summary sa, sb;
    char err[128];

    build(&ra, a, 5);
    build(&rb, b, 5);
    assert_int_equal(usage_summarise(&ra, (int64_t)1 << 40, &sa, err, sizeof(err)), 0);
    assert_int_equal(usage_summarise(&rb, (int64_t)1 << 40, &sb, err, sizeof(err)), 0);
    assert_int_equal(sa.us_count, 2);
    assert_int_equal(sb.us_count, 2);
    assert_true(sa.us_pods[1].pu_bytes == 1e16 + 2); /* smallest first: both kept */
    assert_memory_equal(&sa.us_pods[1].pu_bytes, &sb.us_pods[1].pu_bytes, sizeof(double));
    assert_memory_equal(&sa.us_total_bytes, &sb.us_total_bytes, sizeof(double));
    usage_summary_free(&sa);
    usage_summary_free(&sb);
    usage_reading_free(&ra);
    usage_reading_free(&rb);
}

static void
test_bytes_to_mib(void **state)
{
    assert_int_equal(usage_bytes_to_mib(0), 0);
    assert_int_equal(usage_bytes_to_mib(MIB - 1), 0);
    assert_int_equal(usage_bytes_to_mib(MIB), 1);
    assert_int_equal(usage_bytes_to_mib(1536 * MIB - 0.5), 1535);
    assert_int_equal(usage_bytes_to_mib(-1), -1);
    assert_int_equal(usage_bytes_to_mib(-MIB), -1);
    assert_int_equal(usage_bytes_to_mib(-MIB - 1), -2);
    assert_int_equal(usage_bytes_to_mib(NAN), 0);
    assert_int_equal(usage_bytes_to_mib(INFINITY), INT64_MAX);
    assert_int_equal(usage_bytes_to_mib(1e300), INT64_MAX);
    assert_int_equal(usage_bytes_to_mib(-INFINITY), INT64_MIN);
    assert_int_equal(usage_bytes_to_mib(11489000000.0), 10956);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incident), cmocka_unit_test(test_processes),
        cmocka_unit_test(test_judge),    cmocka_unit_test(test_empty_labels),
        cmocka_unit_test(test_order),    cmocka_unit_test(test_bytes_to_mib),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
