/* test_hostile_core.c -- the decision core against hostile readings: sums past every
 * card, two series with one label set, a device answer naming too many GPUs */
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

#define HEAD "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
#define TAIL "]}}"
#define S(labels, v) "{\"metric\":{" labels "},\"value\":[1,\"" v "\"]}"
#define ML "\"namespace\":\"ml\",\"pod\":\"p\""

static void
parse(const char *body, struct usage_reading *out)
{
    char err[256];

    if (prom_json_parse_vector_gpu(body, strlen(body), "namespace", "pod", "uuid", out,
                                   err, sizeof(err)) == -1)
        fail_msg("parse: %s", err);
}

/* ml/p: running, a controller, a budget of 1000 MiB, old enough: a victim
 * whenever it is over budget and free is below the floor. */
static void
decide(const struct usage_reading *ur, const char *gpu, struct policy_answer *res)
{
    static struct pod p = {.p_namespace = "ml",
                           .p_name = "p",
                           .p_uid = "u1",
                           .p_running = 1,
                           .p_has_controller = 1,
                           .p_started = 1,
                           .p_budget_state = BUDGET_OK,
                           .p_budget_mib = 1000};
    struct pod_list pl = {.pl_pods = &p, .pl_count = 1};
    struct policy_params pp = {
        .pp_floor_mib = 1536, .pp_total_mib = 15360, .pp_now = 100000};
    struct policy_input in = {.pi_pods = &pl, .pi_usage = ur, .pi_gpu = gpu};

    policy_decide(&pp, &in, res);
}

/* SPEC "GPU scope": a series without the GPU label counts toward its pod's
 * total only. A huge one (or two summing to +Inf) made a plausible-looking
 * victim of ml/p on GPU a; a pod's use over every GPU above all the named
 * GPUs' totals cannot be true. */
static void
test_gpu_scope_sum_past_every_card(void **state)
{
    static const char *const bodies[] = {
        HEAD S(ML ",\"uuid\":\"a\"", "15032385536") "," S(ML, "1e300") TAIL,
        HEAD S(ML ",\"uuid\":\"a\"", "15032385536") "," S(
            ML ",\"c\":\"1\"", "1.7e308") "," S(ML ",\"c\":\"2\"", "1.7e308") TAIL,
        HEAD S(ML ",\"uuid\":\"a\"", "15032385536") "," S(
            ML ",\"uuid\":\"b\"", "1073741824") "," S(ML, "32212254720") TAIL,
    };
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        parse(bodies[i], &ur);
        decide(&ur, "a", &res);
        if (res.pr_outcome != POLICY_SKIPPED_TELEMETRY)
            fail_msg("reading %zu: outcome %d, reason %s", i, res.pr_outcome,
                     res.pr_reason);
        assert_non_null(strstr(res.pr_reason, "ml/p reports"));
        assert_non_null(strstr(res.pr_reason, "over every GPU, more than the"));
        assert_non_null(strstr(res.pr_reason, "GPU a is not judged"));
        policy_answer_free(&res);
        usage_reading_free(&ur);
    }
}

/* Within the named GPUs' totals a pod may use more than one card holds: 14
 * GiB on a and 14 GiB on b (28 GiB > one card) is judged, and over budget. */
static void
test_gpu_scope_big_pod_judged(void **state)
{
    static const char body[] = HEAD S(ML ",\"uuid\":\"a\"", "15032385536") "," S(
        ML ",\"uuid\":\"b\"", "15032385536") TAIL;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    parse(body, &ur);
    decide(&ur, "a", &res);
    assert_int_equal(res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(res.pr_candidates[0].pc_used_mib, 28672);
    policy_answer_free(&res);
    usage_reading_free(&ur);
}

/* Node scope: two finite series summing to +Inf are past the card, not a figure. */
static void
test_node_scope_inf_sum(void **state)
{
    static const char body[] =
        HEAD S(ML ",\"c\":\"1\"", "1.7e308") "," S(ML ",\"c\":\"2\"", "1.7e308") TAIL;
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    parse(body, &ur);
    decide(&ur, NULL, &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "more than GPU_TOTAL_MIB=15360"));
    policy_answer_free(&res);
    usage_reading_free(&ur);
}

/* Two series with one label set, however spelled (key order, escapes): no
 * Prometheus vector has them; refused in both scopes, never counted twice. */
static void
test_one_label_set_twice(void **state)
{
    static const char *const twice[] = {
        HEAD S(ML, "7516192768") "," S(ML, "7516192768") TAIL,
        HEAD S(ML ",\"c\":\"x\"", "7516192768") "," S("\"c\":\"x\",\"pod\":\"p\","
                                                      "\"namespace\":\"\\u006dl\"",
                                                      "1") TAIL,
        HEAD S(ML ",\"uuid\":\"a\"", "7516192768") "," S(ML ",\"uuid\":\"a\",\"e\":\"\"",
                                                         "1") TAIL,
    };
    struct usage_reading ur;
    struct policy_answer res;

    (void)state;
    for (size_t i = 0; i < sizeof(twice) / sizeof(twice[0]); i++) {
        parse(twice[i], &ur);
        decide(&ur, i == 2 ? "a" : NULL, &res);
        if (res.pr_outcome != POLICY_SKIPPED_TELEMETRY)
            fail_msg("reading %zu: outcome %d, reason %s", i, res.pr_outcome,
                     res.pr_reason);
        assert_non_null(strstr(res.pr_reason, "two series with one label set "
                                              "(result[0] and result[1])"));
        policy_answer_free(&res);
        usage_reading_free(&ur);
    }
    /* The two far apart, other series between them: still found (the check
     * sorts by label set, it does not only compare neighbours as sent). */
    parse(HEAD S(ML ",\"c\":\"x\"", "1048576") "," S(ML ",\"c\":\"y\"", "1048576") "," S(
              ML ",\"c\":\"z\"", "1048576") "," S(ML ",\"c\":\"x\"", "1048576") TAIL,
          &ur);
    decide(&ur, NULL, &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(res.pr_reason, "two series with one label set "
                                          "(result[0] and result[3])"));
    policy_answer_free(&res);
    usage_reading_free(&ur);
    /* One label apart: two containers, summed (7 GiB each: 14 GiB over a
     * 1000 MiB budget, free 1024 MiB below the floor). */
    parse(HEAD S(ML ",\"c\":\"x\"", "7516192768") "," S(ML ",\"c\":\"y\"", "7516192768")
              TAIL,
          &ur);
    decide(&ur, NULL, &res);
    assert_int_equal(res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(res.pr_candidates[0].pc_used_mib, 14336);
    policy_answer_free(&res);
    usage_reading_free(&ur);
}

/* The device answer naming n GPUs, as prom_query_device reads it. */
static int
device_of(size_t n, struct device_reading *out)
{
    size_t cap = 64 + n * 128, off = 0;
    char *b = malloc(cap), err[256];
    struct usage_reading raw;
    int rc;

    assert_non_null(b);
    off += (size_t)snprintf(b, cap, HEAD);
    /* Backwards, so the reading must be sorted to be found. */
    for (size_t i = n; i-- > 0;)
        off += (size_t)snprintf(
            b + off, cap - off,
            "%s{\"metric\":{\"__name__\":\"gpu_memory_free_bytes\",\"uuid\":\"G%04zu\"},"
            "\"value\":[1,\"%zu\"]}",
            i + 1 < n ? "," : "", i, i);
    snprintf(b + off, cap - off, TAIL);
    if (prom_json_parse_vector_gpu(b, strlen(b), "__name__", "gvw_ts", "uuid", &raw, err,
                                   sizeof(err)) == -1)
        fail_msg("parse: %s", err);
    free(b);
    rc = device_from_series(&raw, out);
    usage_reading_free(&raw);
    return rc;
}

static void
test_device_gpus_bounded(void **state)
{
    struct device_reading dr;
    char name[16];

    (void)state;
    assert_int_equal(device_of(257, &dr), DEVICE_TOO_MANY_GPUS);
    assert_int_equal(dr.dr_count, 0);
    device_reading_free(&dr);
    assert_int_equal(device_of(256, &dr), 0);
    assert_int_equal(dr.dr_count, 256);
    for (size_t i = 0; i < 256; i++) {
        snprintf(name, sizeof(name), "G%04zu", i);
        const struct device_gpu *g = device_find(&dr, name);
        assert_non_null(g);
        assert_true(g->dg_have_free);
        assert_true(g->dg_free_bytes == (double)i);
    }
    assert_null(device_find(&dr, "G0256"));
    device_reading_free(&dr);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_scope_sum_past_every_card),
        cmocka_unit_test(test_gpu_scope_big_pod_judged),
        cmocka_unit_test(test_node_scope_inf_sum),
        cmocka_unit_test(test_one_label_set_twice),
        cmocka_unit_test(test_device_gpus_bounded),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
