/* test_core_oom.c -- every allocation of the core and parsers fails once: safe results,
 * no leaks */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/oom.h"
#include "lib/testdata.h"

#include "device.h"
#include "pods_json.h"
#include "predict.h"
#include "policy.h"
#include "prom_json.h"
#include "strpool.h"

/*
 * The link redirects malloc, calloc, realloc and strdup of this program's own
 * objects (the test and the static core libraries) to tests/lib/oom.c. The
 * parsers allocate nothing through a library (jscan reads in place), so
 * every allocation they make is seen there. When armed, allocation number N
 * (counting from 0) returns NULL.
 */

static const struct pod_parse_opts opts = {"viktorbarzin.me/gpumem",
                                           "gpu-vram-watchdog/protected",
                                           "gpu-vram-watchdog/release",
                                           NULL,
                                           NULL,
                                           0};

static void
test_pods_json(void **state)
{
    static const char *const files[] = {"pods-incident.json", "pods-rules.json"};
    struct pod_list l;
    char err[256], *body;
    size_t len, i, want;
    long n;
    int rc;

    for (i = 0; i < 2; i++) {
        body = test_data_load(files[i], &len);
        assert_int_equal(pods_json_parse(body, len, &opts, &l, err, sizeof(err)), 0);
        want = l.pl_count;
        pod_list_free(&l);
        for (n = 0;; n++) {
            oom_arm(n);
            rc = pods_json_parse(body, len, &opts, &l, err, sizeof(err));
            if (!oom_disarm()) {
                assert_int_equal(rc, 0);
                pod_list_free(&l);
                break;
            }
            /* No failure is absorbed: each one is told, nothing is left. */
            if (rc != -1)
                fail_msg("allocation %ld failed, yet the parse gave %d pods", n,
                         (int)l.pl_count);
            assert_null(l.pl_pods);
            assert_int_equal(l.pl_count, 0);
            if (strcmp(err, "out of memory") != 0)
                fail_msg("allocation %ld: %s", n, err);
        }
        print_message("%s: %ld allocations failed in turn (%zu pods)\n", files[i], n,
                      want);
        free(body);
    }
}

/* The same for what --suggest keeps (owners, declarations, finished pods) with every
 * budget source: the reader asked for more still tells each failure and leaves
 * nothing. (The exporter's reading: test_exporter_oom.) */
static void
test_pods_json_kept(void **state)
{
    static const char *const files[] = {"pods-incident.json", "budget-hami.json",
                                        "budget-kai.json"};
    static const struct bsrc_order all = {{BSRC_RESOURCE, BSRC_HAMI, BSRC_KAI}, 3};
    struct pod_parse_opts o = opts;
    struct pod_list l;
    char err[256], *body;
    size_t len, want, decls;
    long n;
    int rc;

    o.po_keep = POD_KEEP_WORKLOAD | POD_KEEP_FINISHED;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        body = test_data_load(files[i], &len);
        assert_int_equal(
            pods_json_parse_sources(body, len, &o, &all, &l, err, sizeof(err)), 0);
        want = l.pl_count;
        decls = 0;
        for (size_t k = 0; k < l.pl_count; k++)
            decls += l.pl_pods[k].p_decl_count;
        assert_true(decls >= want);
        pod_list_free(&l);
        for (n = 0;; n++) {
            oom_arm(n);
            rc = pods_json_parse_sources(body, len, &o, &all, &l, err, sizeof(err));
            if (!oom_disarm()) {
                assert_int_equal(rc, 0);
                assert_int_equal(l.pl_count, want);
                pod_list_free(&l);
                break;
            }
            if (rc != -1)
                fail_msg("%s: allocation %ld failed, yet the parse gave %zu pods",
                         files[i], n, l.pl_count);
            assert_null(l.pl_pods);
            assert_null(l.pl_decls);
            if (strcmp(err, "out of memory") != 0)
                fail_msg("%s: allocation %ld: %s", files[i], n, err);
        }
        print_message(
            "%s, kept for --suggest: %ld allocations failed in turn (%zu pods)\n",
            files[i], n, want);
        free(body);
    }
}

static void
test_prom_json(void **state)
{
    static const char *const files[] = {"prom-incident.json", "prom-processes.json"};
    struct usage_reading r;
    char err[256], *body;
    size_t len, i;
    double v;
    long n;
    int rc;

    for (i = 0; i < 2; i++) {
        body = test_data_load(files[i], &len);
        for (n = 0;; n++) {
            oom_arm(n);
            rc = prom_json_parse_vector(body, len, "exported_namespace", "pod", &r, err,
                                        sizeof(err));
            if (!oom_disarm()) {
                assert_int_equal(rc, 0);
                usage_reading_free(&r);
                break;
            }
            assert_int_equal(rc, -1);
            assert_string_equal(err, "out of memory");
            assert_null(r.ur_series);
            assert_int_equal(r.ur_count, 0);
        }
        free(body);
    }
    body = test_data_load("prom-free.json", &len);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = prom_json_parse_scalar(body, len, &v, err, sizeof(err));
        if (!oom_disarm())
            break;
        assert_int_equal(rc, -1);
        assert_string_equal(err, "out of memory");
    }
    assert_int_equal(rc, 0);
    free(body);
}

/* The incident plus a pod seen only in the usage, so every path allocates. */
static void
build(struct pod_list *pl, struct usage_reading *ur)
{
    char err[256], *body;
    size_t len;

    body = test_data_load("pods-incident.json", &len);
    assert_int_equal(pods_json_parse(body, len, &opts, pl, err, sizeof(err)), 0);
    free(body);
    body = test_data_load("prom-incident.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, ur, err, sizeof(err)),
                     0);
    free(body);
    /* The parsed strings live in the reading's pool: so does the new one. */
    ur->ur_series[4].us_pod = strpool_dup(ur->ur_pool, "somebody-else", 13);
    assert_non_null(ur->ur_series[4].us_pod);
}

static void
test_usage(void **state)
{
    struct pod_list pl;
    struct usage_reading ur;
    struct usage_summary s;
    char err[256];
    long n;
    int rc;

    build(&pl, &ur);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = usage_summarise(&ur, 15360, &s, err, sizeof(err));
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            usage_summary_free(&s);
            break;
        }
        assert_int_equal(rc, -1);
        assert_string_equal(err, "out of memory");
        assert_null(s.us_pods);
        assert_int_equal(s.us_count, 0);
    }
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

/* The GPUs a reading names (GPU scope's list): every failure is -1 and nothing. */
static void
test_usage_gpus(void **state)
{
    struct pod_list pl;
    struct usage_reading ur;
    const char **gpus;
    size_t count;
    long n;
    int rc;

    (void)state;
    build(&pl, &ur);
    ur.ur_series[0].us_gpu = strpool_dup(ur.ur_pool, "GPU-b", 5);
    ur.ur_series[1].us_gpu = strpool_dup(ur.ur_pool, "GPU-a", 5);
    ur.ur_series[2].us_gpu = ur.ur_series[0].us_gpu;
    assert_non_null(ur.ur_series[0].us_gpu);
    assert_non_null(ur.ur_series[1].us_gpu);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = usage_gpus(&ur, &gpus, &count);
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_int_equal(count, 2);
            assert_string_equal(gpus[0], "GPU-a");
            assert_string_equal(gpus[1], "GPU-b");
            free(gpus);
            break;
        }
        assert_int_equal(rc, -1);
        assert_null(gpus);
        assert_int_equal(count, 0);
    }
    print_message("usage_gpus: %ld allocations failed in turn\n", n);
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

static void
test_policy(void **state)
{
    struct policy_params pp = {1536, 15360, 120, 1, NULL, 0, NULL, 1780408800};
    struct pod_list pl;
    struct usage_reading ur;
    struct policy_input in = {&pl, &ur, 0, 0, NULL, NULL, NULL};
    struct policy_answer want, res;
    long n;

    build(&pl, &ur);
    policy_decide(&pp, &in, &want);
    assert_int_equal(want.pr_outcome, POLICY_VICTIM);
    assert_int_equal(want.pr_candidate_count, 7);
    for (n = 0;; n++) {
        oom_arm(n);
        policy_decide(&pp, &in, &res);
        if (!oom_disarm()) {
            assert_int_equal(res.pr_outcome, POLICY_VICTIM);
            assert_string_equal(res.pr_reason, want.pr_reason);
            policy_answer_free(&res);
            break;
        }
        /* Never a victim chosen on a partial picture. */
        assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
        assert_string_equal(res.pr_reason, "out of memory");
        assert_int_equal(res.pr_candidate_count, 0);
        assert_null(res.pr_candidates);
        assert_int_equal(res.pr_ranked_count, 0);
        assert_false(res.pr_free_known);
        policy_answer_free(&res);
    }
    print_message("policy_decide: %ld allocations failed in turn\n", n);
    policy_answer_free(&want);
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

/* One GPU's summary: every failure is -1, "out of memory" and no pods; a
 * caller without an error buffer is never written to. */
static void
test_usage_gpu(void **state)
{
    struct pod_list pl;
    struct usage_reading ur;
    struct usage_summary s;
    char err[256];
    long n;
    int rc;

    (void)state;
    build(&pl, &ur);
    for (size_t i = 0; i < ur.ur_count; i++)
        ur.ur_series[i].us_gpu = strpool_dup(ur.ur_pool, "GPU-0", 5);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = usage_summarise_gpu(&ur, "GPU-0", 15360, &s, err, sizeof(err));
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            usage_summary_free(&s);
            break;
        }
        assert_int_equal(rc, -1);
        assert_string_equal(err, "out of memory");
        assert_null(s.us_pods);
        oom_arm(n);
        rc = usage_summarise_gpu(&ur, "GPU-0", 15360, &s, NULL, sizeof(err));
        oom_disarm();
        assert_int_equal(rc, -1);
    }
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

/* GPU scope (every series on one GPU): never a victim on a partial picture. */
static void
test_policy_gpu(void **state)
{
    struct policy_params pp = {1536, 15360, 120, 1, NULL, 0, NULL, 1780408800};
    struct pod_list pl;
    struct usage_reading ur;
    struct policy_input in = {&pl, &ur, 0, 0, NULL, NULL, NULL};
    struct policy_answer want, res;
    long n;

    (void)state;
    build(&pl, &ur);
    for (size_t i = 0; i < ur.ur_count; i++)
        ur.ur_series[i].us_gpu = strpool_dup(ur.ur_pool, "GPU-0", 5);
    in.pi_gpu = "GPU-0";
    policy_decide(&pp, &in, &want);
    assert_int_equal(want.pr_outcome, POLICY_VICTIM);
    for (n = 0;; n++) {
        oom_arm(n);
        policy_decide(&pp, &in, &res);
        if (!oom_disarm()) {
            assert_int_equal(res.pr_outcome, POLICY_VICTIM);
            assert_string_equal(res.pr_reason, want.pr_reason);
            policy_answer_free(&res);
            break;
        }
        assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
        assert_string_equal(res.pr_reason, "out of memory");
        assert_int_equal(res.pr_candidate_count, 0);
        assert_null(res.pr_candidates);
        policy_answer_free(&res);
    }
    print_message("policy_decide, GPU scope: %ld allocations failed in turn\n", n);
    policy_answer_free(&want);
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

/* The device's own figures, two GPUs: a failure is -1 and an empty reading. */
static void
test_device(void **state)
{
    static const char body[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\",\"uuid\":\"GPU-b\"},"
        "\"value\":[100,\"1048576\"]},"
        "{\"metric\":{\"__name__\":\"gpu_memory_total_bytes\",\"uuid\":\"GPU-b\"},"
        "\"value\":[100,\"2097152\"]},"
        "{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\",\"uuid\":\"GPU-a\"},"
        "\"value\":[100,\"1048576\"]}]}}";
    struct usage_reading raw;
    struct device_reading dr;
    char err[256];
    long n;
    int rc;

    (void)state;
    for (n = 0;; n++) {
        assert_int_equal(prom_json_parse_vector_gpu(body, sizeof(body) - 1, "__name__",
                                                    "gvw_ts", "uuid", &raw, err,
                                                    sizeof(err)),
                         0);
        oom_arm(n);
        rc = device_from_series(&raw, &dr);
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_int_equal(dr.dr_count, 2);
            assert_string_equal(dr.dr_gpus[0].dg_gpu, "GPU-a");
            device_reading_free(&dr);
            break;
        }
        assert_int_equal(rc, -1);
        assert_int_equal(dr.dr_count, 0);
        assert_null(dr.dr_gpus);
        device_reading_free(&dr);
    }
}

/* PREDICT's ranking: out of memory is -1 and no order, never an empty one. */
static void
test_predict_judge(void **state)
{
    static const struct predict_params pp = {1536, 120.0, 5.0};
    const struct policy_candidate cands[2] = {
        {.pc_namespace = "a", .pc_name = "x", .pc_eligible = 1},
        {.pc_namespace = "a", .pc_name = "y", .pc_eligible = 1}};
    const double slopes[2] = {10.0, 20.0};
    struct predict_outcome out;
    long n;
    int rc;

    (void)state;
    for (n = 0;; n++) {
        oom_arm(n);
        rc = predict_judge(&pp, 1000, cands, slopes, 2, "the node", &out);
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_non_null(out.po_order);
            assert_int_equal(out.po_order[0], 1);
            predict_outcome_free(&out);
            break;
        }
        assert_int_equal(rc, -1);
        assert_null(out.po_order);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pods_json),  cmocka_unit_test(test_pods_json_kept),
        cmocka_unit_test(test_prom_json),  cmocka_unit_test(test_usage),
        cmocka_unit_test(test_usage_gpus), cmocka_unit_test(test_usage_gpu),
        cmocka_unit_test(test_policy_gpu), cmocka_unit_test(test_predict_judge),
        cmocka_unit_test(test_device),     cmocka_unit_test(test_policy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
