/* test_predict.c -- the predictive trigger's pure judgement, its rate setting and the
 * matrix parser */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "predict.h"

#define MIB (1024.0 * 1024.0)

/* --- PREDICT_MIN_GROWTH ---------------------------------------------------- */

static void
test_rate_parse(void **state)
{
    double v;

    (void)state;
    assert_int_equal(predict_parse_rate("5MiB/s", &v), 0);
    assert_true(v == 5.0);
    assert_int_equal(predict_parse_rate("5", &v), 0); /* bare = MiB/s */
    assert_true(v == 5.0);
    assert_int_equal(predict_parse_rate("2.5MiB/s", &v), 0);
    assert_true(v == 2.5);
    assert_int_equal(predict_parse_rate("1GiB/s", &v), 0);
    assert_true(v == 1024.0);
    assert_int_equal(predict_parse_rate("512KiB/s", &v), 0);
    assert_true(v == 0.5);
    assert_int_equal(predict_parse_rate("0", &v), 0);
    assert_true(v == 0.0);
    assert_int_equal(predict_parse_rate("9.5KiB/s", &v), 0); /* a first digit 9 */
    assert_true(v == 9.5 / 1024.0);
    const char *bad[] = {"",      "-5MiB/s", "5 MiB/s", "5MB/s",    "5mib/s",
                         "MiB/s", "inf",     "nan",     "5MiB/s ",  " 5",
                         "5MiB",  "1e400",   "+5",      "5MiB/s/s", "0x10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(predict_parse_rate(bad[i], &v), -1);
    assert_int_equal(predict_parse_rate(NULL, &v), -1);
}

/* --- the trend ------------------------------------------------------------- */

/* n samples one second apart from t0, use(i) MiB each. */
static void
fill(struct predict_sample *s, size_t n, double (*use)(size_t))
{
    for (size_t i = 0; i < n; i++) {
        s[i].ps_t = 1.7e9 + (double)i;
        s[i].ps_bytes = use(i) * MIB;
    }
}

static double
drift(size_t i)
{
    return 3000.0 + 50.0 * (double)i;
}
static double
flat(size_t i)
{
    (void)i;
    return 4000.0;
}
static double
step(size_t i)
{
    return i < 30 ? 2000.0 : 9000.0;
}
static double
shrink(size_t i)
{
    return 8000.0 - 20.0 * (double)i;
}
/* A drift of 10 MiB/s with +-300 MiB of alternating noise. */
static double
noisy(size_t i)
{
    return 3000.0 + 10.0 * (double)i + (i % 2 ? 300.0 : -300.0);
}

static double
sustained_of(double (*use)(size_t), size_t n)
{
    struct predict_sample s[120];
    struct predict_trend t;

    fill(s, n, use);
    predict_trend(s, n, -INFINITY, s[0].ps_t + (s[n - 1].ps_t - s[0].ps_t) / 2, &t);
    return predict_sustained(t.pt_first, t.pt_second);
}

static void
test_trend(void **state)
{
    struct predict_sample s[120];
    struct predict_trend t;
    double v;

    (void)state;
    v = sustained_of(drift, 120);
    assert_true(fabs(v - 50.0) < 1e-6);
    assert_true(fabs(sustained_of(flat, 120)) < 1e-9);
    /* A one-off step: the half without it is flat, so it is no growth. */
    assert_true(fabs(sustained_of(step, 60)) < 1e-9);
    assert_true(fabs(sustained_of(shrink, 120) + 20.0) < 1e-6);
    v = sustained_of(noisy, 120);
    assert_true(v > 9.0 && v < 11.0);
    /* The whole-window slope of the step is large: why halves are used. */
    fill(s, 60, step);
    predict_trend(s, 60, -INFINITY, s[0].ps_t + 29.5, &t);
    assert_true(t.pt_all > 100.0);
    /* Too few samples in a half, or an impossible one: unknown. */
    fill(s, 3, drift);
    predict_trend(s, 3, -INFINITY, s[0].ps_t + 0.5, &t);
    assert_true(isnan(t.pt_first));
    assert_true(isnan(predict_sustained(t.pt_first, t.pt_second)));
    fill(s, 10, drift);
    s[4].ps_bytes = NAN;
    predict_trend(s, 10, -INFINITY, s[0].ps_t + 5, &t);
    assert_true(isnan(t.pt_all) && isnan(t.pt_first) && isnan(t.pt_second));
    fill(s, 10, drift);
    s[7].ps_bytes = -1;
    predict_trend(s, 10, -INFINITY, s[0].ps_t + 5, &t);
    assert_true(isnan(t.pt_second));
    fill(s, 10, drift);
    s[2].ps_bytes = INFINITY;
    predict_trend(s, 10, -INFINITY, s[0].ps_t + 5, &t);
    assert_true(isnan(t.pt_first));
    predict_trend(s, 0, 0, 0, &t);
    assert_true(isnan(t.pt_all));
    /* Only the two segments count: an early step before from_t is out. */
    fill(s, 60, step);
    predict_trend(s, 60, s[0].ps_t + 40, s[0].ps_t + 50, &t);
    assert_true(fabs(t.pt_first) < 1e-9 && fabs(t.pt_second) < 1e-9);
    /* A sample at the split itself (a range answer's steps land there when a
     * quarter window is whole steps) is the second segment's only: the step's
     * first sample leaves the first flat. */
    predict_trend(s, 60, -INFINITY, s[30].ps_t, &t);
    assert_true(fabs(t.pt_first) < 1e-9 && fabs(t.pt_second) < 1e-9);
    /* Only the n samples given are read: a NaN past them is none of them. */
    fill(s, 10, drift);
    s[10].ps_t = s[9].ps_t + 1;
    s[10].ps_bytes = NAN;
    predict_trend(s, 10, -INFINITY, s[5].ps_t, &t);
    assert_true(fabs(t.pt_all - 50.0) < 1e-6);
    /* A pod that held nothing at first (0 bytes is a reading, not an
     * impossible one) grows from there. */
    fill(s, 10, drift);
    s[0].ps_bytes = 0;
    predict_trend(s, 10, -INFINITY, s[5].ps_t, &t);
    assert_true(fabs(t.pt_second - 50.0) < 1e-6);
    assert_false(isnan(t.pt_first));
    /* and a sample at the window's start is the first segment's */
    fill(s, 60, drift);
    predict_trend(s, 60, s[10].ps_t, s[12].ps_t, &t);
    assert_true(fabs(t.pt_first - 50.0) < 1e-6);
    assert_true(isnan(predict_sustained(INFINITY, 3)));
    assert_true(predict_sustained(7, 3) == 3);
}

/* --- the judgement ---------------------------------------------------------- */

static struct policy_candidate
cand(const char *ns, const char *name, int eligible, int64_t used, int64_t budget)
{
    return (struct policy_candidate){.pc_namespace = (char *)ns,
                                     .pc_name = (char *)name,
                                     .pc_used_mib = used,
                                     .pc_has_budget = 1,
                                     .pc_budget_mib = budget,
                                     .pc_overshoot_mib = used - budget,
                                     .pc_eligible = eligible,
                                     .pc_why_not = eligible ? NULL : "within_budget"};
}

static const struct predict_params PP = {1536, 120.0, 5.0};

static void
test_growing_is_acted_on(void **state)
{
    /* Policy order: the steady pod has the larger overshoot; the grower wins. */
    struct policy_candidate c[] = {cand("ml", "steady", 1, 6000, 2000),
                                   cand("ml", "runaway", 1, 3500, 3000),
                                   cand("web", "small", 0, 500, 1000)};
    double slopes[] = {0.0, 50.0, 1.0};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 7000, c, slopes, 3, "GPU GPU-1", &o), 0);
    assert_int_equal(o.po_act, 1);
    assert_int_equal(o.po_ranked, 1);
    assert_int_equal(o.po_order[0], 1);
    assert_int_equal(o.po_order[1], 0); /* the rest in the policy's order */
    assert_int_equal(o.po_order[2], 2);
    assert_true(o.po_growth_mib_s == 51.0);
    assert_true(o.po_projected_mib == 7000 - 51.0 * 120);
    assert_true(o.po_eta_known);
    assert_true(fabs(o.po_eta_s - (7000.0 - 1536) / 51.0) < 1e-9);
    assert_true(o.po_slope_known && o.po_slope_mib_s == 50.0);
    assert_string_equal(o.po_slope_pod, "runaway");
    assert_non_null(strstr(o.po_reason, "predicted to starve GPU GPU-1 in 108 s"));
    assert_non_null(
        strstr(o.po_reason, "ml/runaway uses 3500 MiB against a budget of 3000"));
    predict_outcome_free(&o);
}

/* Several fast growers: fastest first, whatever the policy's order. */
static void
test_growers_fastest_first(void **state)
{
    struct policy_candidate c[] = {
        cand("ml", "a", 1, 6000, 2000), cand("ml", "b", 1, 6000, 2000),
        cand("ml", "c", 1, 6000, 2000), cand("web", "small", 0, 500, 1000)};
    double slopes[] = {10.0, 30.0, 20.0, 1.0};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 7000, c, slopes, 4, "GPU GPU-1", &o), 0);
    assert_int_equal(o.po_act, 1);
    assert_int_equal(o.po_ranked, 3);
    assert_int_equal(o.po_order[0], 1);
    assert_int_equal(o.po_order[1], 2);
    assert_int_equal(o.po_order[2], 0);
    assert_int_equal(o.po_order[3], 3);
    assert_string_equal(o.po_slope_pod, "b");
    predict_outcome_free(&o);
}

static void
test_steady_is_not_a_runaway(void **state)
{
    /* Projected below the floor by a pod within budget, while the over-budget
     * one is flat: nothing to do. */
    struct policy_candidate c[] = {cand("ml", "steady", 1, 6000, 2000),
                                   cand("web", "loader", 0, 900, 1000)};
    double slopes[] = {0.0, 60.0};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 5000, c, slopes, 2, "node n1", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "predicted to starve node n1 in 58 s"));
    assert_non_null(strstr(o.po_reason, "no over-budget pod is growing >= 5 MiB/s"));
    assert_non_null(strstr(o.po_reason, "ml/steady, 0.0 MiB/s"));
    assert_true(o.po_slope_known && o.po_slope_mib_s == 0.0);
    predict_outcome_free(&o);
    /* Several slow ones: the fastest is named, wherever it stands. */
    struct policy_candidate d[] = {
        cand("ml", "a", 1, 6000, 2000), cand("ml", "b", 1, 6000, 2000),
        cand("ml", "c", 1, 6000, 2000), cand("web", "loader", 0, 900, 1000)};
    double s3[] = {3.0, 1.0, 2.0, 60.0};
    assert_int_equal(predict_judge(&PP, 5000, d, s3, 4, "node n1", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "the fastest of 3, ml/a, 3.0 MiB/s"));
    assert_string_equal(o.po_slope_pod, "a");
    predict_outcome_free(&o);
}

static void
test_shrinking_and_missing(void **state)
{
    struct policy_candidate c[] = {cand("a", "shrinks", 1, 6000, 2000),
                                   cand("b", "unknown", 1, 5000, 2000),
                                   cand("c", "inf", 1, 4000, 2000)};
    double slopes[] = {-20.0, NAN, INFINITY};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 1600, c, slopes, 3, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_true(o.po_growth_mib_s == 0.0); /* a shrink is never counted as room */
    assert_false(o.po_eta_known);
    assert_non_null(strstr(o.po_reason, "not predicted to starve"));
    predict_outcome_free(&o);
    /* Only unknown slopes among the over-budget pods, with another pod growing. */
    struct policy_candidate d[] = {cand("b", "unknown", 1, 5000, 2000),
                                   cand("w", "grows", 0, 500, 1000)};
    double s2[] = {NAN, 100.0};
    assert_int_equal(predict_judge(&PP, 3000, d, s2, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_false(o.po_slope_known);
    assert_non_null(strstr(o.po_reason, "is unknown"));
    predict_outcome_free(&o);
    /* Nobody's growth known at all: nothing is predicted. */
    double s5[] = {NAN, NAN};
    assert_int_equal(predict_judge(&PP, 3000, d, s5, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "too little history"));
    predict_outcome_free(&o);
    /* Nobody over budget. */
    assert_int_equal(predict_judge(&PP, 3000, &d[1], &s2[1], 1, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "no eligible pod is over its budget"));
    predict_outcome_free(&o);
    /* No candidates at all: no growth, which is known, not "unknown". */
    assert_int_equal(predict_judge(&PP, 3000, NULL, NULL, 0, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "its pods grow 0.0 MiB/s in all, so 3000 MiB "
                                        "would be free in 120 s, not below the floor"));
    assert_null(strstr(o.po_reason, "too little history"));
    predict_outcome_free(&o);
}

static void
test_boundaries(void **state)
{
    struct policy_candidate c[] = {cand("a", "x", 1, 3000, 2000),
                                   cand("a", "y", 1, 2500, 2000)};
    double slopes[] = {5.0, 4.999};
    /* 5 + 4.75 MiB/s over 120 s is 1170 MiB, every figure exact in binary, so
     * free 2706 projects to exactly the floor. (With 4.999 the projection came
     * out 2e-13 MiB above it, and "at the floor" was never tested.) */
    double exact[] = {5.0, 4.75};
    struct predict_outcome o;
    double growth = 5.0 + 4.999;

    (void)state;
    assert_int_equal(predict_judge(&PP, 2706, c, exact, 2, "GPU g", &o), 0);
    assert_true(o.po_projected_mib == 1536.0);
    assert_int_equal(o.po_act, 0); /* at the floor is not below it */
    assert_non_null(strstr(o.po_reason, "so 1536 MiB would be free in 120 s, not below "
                                        "the floor: not predicted to starve"));
    predict_outcome_free(&o);
    assert_int_equal(predict_judge(&PP, 2705, c, exact, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 1);
    predict_outcome_free(&o);
    assert_int_equal(predict_judge(&PP, 1535 + growth * 120, c, slopes, 2, "GPU g", &o),
                     0);
    assert_int_equal(o.po_act, 1);
    assert_int_equal(o.po_ranked, 1); /* exactly the min growth counts; 4.999 does not */
    assert_int_equal(o.po_order[0], 0);
    assert_int_equal(o.po_order[1], 1); /* the rest once each, after it */
    predict_outcome_free(&o);
    /* Free exactly at the floor, growing: eta 0 is not possible, it crosses now. */
    assert_int_equal(predict_judge(&PP, 1536, c, slopes, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 1);
    assert_true(o.po_eta_s == 0);
    predict_outcome_free(&o);
    /* Two fast growers: fastest first, ties in the policy's order. */
    double s3[] = {20.0, 30.0};
    assert_int_equal(predict_judge(&PP, 2000, c, s3, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_ranked, 2);
    assert_int_equal(o.po_order[0], 1);
    assert_int_equal(o.po_order[1], 0);
    assert_non_null(strstr(o.po_reason, "the fastest of 2"));
    predict_outcome_free(&o);
    double s4[] = {30.0, 30.0};
    assert_int_equal(predict_judge(&PP, 2000, c, s4, 2, "GPU g", &o), 0);
    assert_int_equal(o.po_order[0], 0);
    predict_outcome_free(&o);
}

/* A leading point is a decimal too: ".5MiB/s" is half a MiB a second. */
static void
test_rate_parse_leading_point(void **state)
{
    double v = 0;

    (void)state;
    assert_int_equal(predict_parse_rate(".5MiB/s", &v), 0);
    assert_true(v == 0.5);
    assert_int_equal(predict_parse_rate(".25", &v), 0);
    assert_true(v == 0.25);
    assert_int_equal(predict_parse_rate(".", &v), -1);
    assert_int_equal(predict_parse_rate(".MiB/s", &v), -1);
}

/* A faster grower found after a slower one that is not first in the policy's
 * order moves it down a place, never drops it: every pod once, fastest first. */
static void
test_growers_reordered_keep_everyone(void **state)
{
    struct policy_candidate c[] = {cand("ml", "idle", 1, 6000, 2000),
                                   cand("ml", "slow", 1, 6000, 2000),
                                   cand("ml", "fast", 1, 6000, 2000)};
    double slopes[] = {1.0, 10.0, 30.0};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 5000, c, slopes, 3, "GPU GPU-1", &o), 0);
    assert_int_equal(o.po_act, 1);
    assert_int_equal(o.po_ranked, 2);
    assert_int_equal(o.po_order[0], 2);
    assert_int_equal(o.po_order[1], 1);
    assert_int_equal(o.po_order[2], 0);
    assert_non_null(strstr(o.po_reason, "the fastest of 2 over-budget pods"));
    predict_outcome_free(&o);
}

/* No pod fast enough, two tied for the fastest: the reason names the first in
 * the policy's order. */
static void
test_slow_tie_names_the_first(void **state)
{
    struct policy_candidate c[] = {cand("ml", "a", 1, 6000, 2000),
                                   cand("ml", "b", 1, 6000, 2000),
                                   cand("web", "loader", 0, 900, 1000)};
    double slopes[] = {3.0, 3.0, 60.0};
    struct predict_outcome o;

    (void)state;
    assert_int_equal(predict_judge(&PP, 5000, c, slopes, 3, "node n1", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, "the fastest of 2, ml/a, 3.0 MiB/s"));
    assert_string_equal(o.po_slope_pod, "a");
    predict_outcome_free(&o);
}

/* The reason counts the over-budget pods whose growth is unknown: one pod, or
 * two pods. */
static void
test_unknown_growth_counted(void **state)
{
    struct policy_candidate c[] = {cand("b", "unknown", 1, 5000, 2000),
                                   cand("b", "unknown-too", 1, 5000, 2000),
                                   cand("w", "grows", 0, 500, 1000)};
    double one[] = {NAN, 0, 100.0};
    double two[] = {NAN, NAN, 100.0};
    struct predict_outcome o;

    (void)state;
    /* one eligible pod (the second given as within budget) */
    c[1].pc_eligible = 0;
    assert_int_equal(predict_judge(&PP, 3000, c, one, 3, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, ", but the growth of its 1 eligible over-budget "
                                        "pod is unknown (too little history)"));
    predict_outcome_free(&o);
    c[1].pc_eligible = 1;
    assert_int_equal(predict_judge(&PP, 3000, c, two, 3, "GPU g", &o), 0);
    assert_int_equal(o.po_act, 0);
    assert_non_null(strstr(o.po_reason, ", but the growth of its 2 eligible over-budget "
                                        "pods is unknown (too little history)"));
    predict_outcome_free(&o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_parse),
        cmocka_unit_test(test_trend),
        cmocka_unit_test(test_growing_is_acted_on),
        cmocka_unit_test(test_growers_fastest_first),
        cmocka_unit_test(test_steady_is_not_a_runaway),
        cmocka_unit_test(test_shrinking_and_missing),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_rate_parse_leading_point),
        cmocka_unit_test(test_growers_reordered_keep_everyone),
        cmocka_unit_test(test_slow_tie_names_the_first),
        cmocka_unit_test(test_unknown_growth_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
