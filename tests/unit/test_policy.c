/* test_policy.c -- every rule, every boundary, every tie, the incident, and
 * order-blindness */
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

#include "pods_json.h"
#include "policy.h"
#include "prom_json.h"

#define MIB 1048576.0
#define NOW 1780408800 /* 2026-06-02T14:00:00Z */
#define HOUR 3600
#define MAXPODS 64

static const char *const excluded[] = {"kube-system", NULL, "monitoring"};

/* A node as a test builds it: pods and series borrow string literals. */
struct fx {
    struct pod pods[MAXPODS];
    struct usage_series series[2 * MAXPODS];
    struct pod_list pl;
    struct usage_reading ur;
    struct policy_params pp;
    struct policy_input in;
    struct policy_answer res;
};

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->pl.pl_pods = f->pods;
    f->ur.ur_series = f->series;
    f->pp.pp_floor_mib = 1536;
    f->pp.pp_total_mib = 15360;
    f->pp.pp_min_runtime_s = 120;
    f->pp.pp_exclude_namespaces = excluded;
    f->pp.pp_exclude_count = 3;
    f->pp.pp_now = NOW;
    f->in.pi_pods = &f->pl;
    f->in.pi_usage = &f->ur;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    policy_answer_free(&f->res);
    free(f);
    return 0;
}

static void
series(struct fx *f, const char *ns, const char *name, double bytes)
{
    struct usage_series *s = &f->series[f->ur.ur_count++];

    s->us_namespace = (char *)ns;
    s->us_pod = (char *)name;
    s->us_bytes = bytes;
}

/* A pod that passes every rule but the budget, using used_mib (no series if
 * negative), running for an hour. */
static struct pod *
pod(struct fx *f, const char *ns, const char *name, int64_t budget_mib, double used_mib)
{
    struct pod *p = &f->pods[f->pl.pl_count++];

    memset(p, 0, sizeof(*p));
    p->p_namespace = (char *)ns;
    p->p_name = (char *)name;
    p->p_uid = (char *)name;
    p->p_running = 1;
    p->p_has_controller = 1;
    p->p_started = NOW - HOUR;
    p->p_budget_state = BUDGET_OK;
    p->p_budget_mib = budget_mib;
    if (used_mib >= 0)
        series(f, ns, name, used_mib * MIB);
    return p;
}

static void
decide(struct fx *f)
{
    policy_answer_free(&f->res);
    policy_decide(&f->pp, &f->in, &f->res);
}

static const struct policy_candidate *
cand(struct fx *f, const char *name)
{
    size_t i;

    for (i = 0; i < f->res.pr_candidate_count; i++)
        if (strcmp(f->res.pr_candidates[i].pc_name, name) == 0)
            return &f->res.pr_candidates[i];
    fail_msg("no candidate %s", name);
    return NULL;
}

/* The candidates' names in result order, comma-separated. */
static const char *
order(struct fx *f)
{
    static char buf[4096];
    size_t i, off = 0;

    buf[0] = '\0';
    for (i = 0; i < f->res.pr_candidate_count && off < sizeof(buf); i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? "," : "",
                                f->res.pr_candidates[i].pc_name);
    return buf;
}

/* Fills the rest of the card so that free is exactly free_mib. */
static void
free_at(struct fx *f, double free_mib)
{
    size_t i;
    double used = 0;

    for (i = 0; i < f->ur.ur_count; i++)
        used += f->series[i].us_bytes;
    series(f, NULL, NULL, (double)f->pp.pp_total_mib * MIB - used - free_mib * MIB);
}

/* ---- the 2026-06-02 incident ---------------------------------------- */

static void
test_incident(void **state)
{
    struct fx *f = *state;

    pod(f, "immich", "immich-ml", 3000, 10957);
    pod(f, "llama-swap", "llama-swap", 5000, 1043);
    pod(f, "frigate", "frigate", 2000, 1400);
    pod(f, "immich", "immich-server", 1800, 900);
    pod(f, "portal-stt", "portal-stt", 1500, 500);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_true(f->res.pr_free_known);
    assert_int_equal(f->res.pr_free_mib, 560);
    assert_int_equal(f->res.pr_ranked_count, 1);
    assert_false(f->res.pr_fallback);
    assert_string_equal(f->res.pr_candidates[0].pc_namespace, "immich");
    assert_string_equal(f->res.pr_candidates[0].pc_name, "immich-ml");
    assert_ptr_equal(f->res.pr_candidates[0].pc_pod, &f->pods[0]);
    assert_int_equal(f->res.pr_candidates[0].pc_used_mib, 10957);
    assert_int_equal(f->res.pr_candidates[0].pc_budget_mib, 3000);
    assert_int_equal(f->res.pr_candidates[0].pc_overshoot_mib, 7957);
    assert_string_equal(
        f->res.pr_reason,
        "free 560 MiB < floor 1536 MiB; immich/immich-ml uses 10957 MiB against "
        "a budget of 3000 MiB (+7957 MiB), the only eligible over-budget pod");
    assert_string_equal(order(f),
                        "immich-ml,frigate,immich-server,llama-swap,portal-stt");
    assert_string_equal(cand(f, "frigate")->pc_why_not, "within_budget");
    assert_int_equal(cand(f, "frigate")->pc_overshoot_mib, -600);
    assert_false(cand(f, "frigate")->pc_eligible);
}

/* The same incident from the bodies the API server and Prometheus sent. */
static void
test_incident_from_bodies(void **state)
{
    struct fx *f = *state;
    struct pod_parse_opts o = {"viktorbarzin.me/gpumem",
                               "gpu-vram-watchdog/protected",
                               "gpu-vram-watchdog/release",
                               NULL,
                               NULL,
                               0};
    struct pod_list pl;
    struct usage_reading ur;
    struct policy_input in = {&pl, &ur, 0, 0, NULL, NULL, NULL};
    char err[256], *body;
    size_t len;

    body = test_data_load("pods-incident.json", &len);
    assert_int_equal(pods_json_parse(body, len, &o, &pl, err, sizeof(err)), 0);
    free(body);
    body = test_data_load("prom-incident.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, &ur, err, sizeof(err)),
                     0);
    free(body);

    policy_decide(&f->pp, &in, &f->res);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(
        f->res.pr_reason,
        "free 253 MiB < floor 1536 MiB; immich/immich-ml-5f7c9d8b6-qx2lp uses "
        "10956 MiB against a budget of 3000 MiB (+7956 MiB), the only eligible "
        "over-budget pod");
    assert_string_equal(f->res.pr_candidates[0].pc_pod->p_uid,
                        "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01");
    assert_int_equal(f->res.pr_candidate_count, 6);
    assert_string_equal(cand(f, "nvidia-device-plugin-daemonset-5xk2v")->pc_why_not,
                        "excluded_namespace");
    assert_int_equal(cand(f, "nvidia-device-plugin-daemonset-5xk2v")->pc_used_mib, 0);
    assert_string_equal(cand(f, "frigate-84d5c6b7f9-h4n8s")->pc_why_not, "within_budget");

    /* FALLBACK changes nothing while someone is over budget */
    f->pp.pp_fallback_largest = 1;
    policy_answer_free(&f->res);
    policy_decide(&f->pp, &in, &f->res);
    assert_false(f->res.pr_fallback);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "immich-ml-5f7c9d8b6-qx2lp");

    /* immich itself starving: its pods are spared, nobody else is over */
    f->pp.pp_fallback_largest = 0;
    f->pp.pp_starving_namespace = "immich";
    policy_answer_free(&f->res);
    policy_decide(&f->pp, &in, &f->res);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_string_equal(f->res.pr_reason,
                        "free 253 MiB < floor 1536 MiB; no eligible victim among 6 pods "
                        "(1 excluded_namespace, 2 starving_namespace, 3 within_budget)");
    pod_list_free(&pl);
    usage_reading_free(&ur);
}

/* ---- every rule ------------------------------------------------------- */

enum tweak {
    T_NONE,
    T_NOT_RUNNING,
    T_TERMINATING,
    T_MIRROR,
    T_NO_CONTROLLER,
    T_EXCLUDED,
    T_EXCLUDED_LAST,
    T_STARVING,
    T_PROTECTED,
    T_YOUNG,
    T_NO_START,
    T_FUTURE,
    T_NO_BUDGET,
    T_BAD_BUDGET,
    T_NEGATIVE_BUDGET,
    T_WITHIN,
    T_AT_BUDGET,
    T_BYTE_OVER,
    T_AT_MIN_RUNTIME,
    T_JUST_UNDER_MIN_RUNTIME,
    T_ZERO_BUDGET,
    T_ZERO_BUDGET_UNUSED,
    T_STRANGE_STATE,
};

static const struct {
    enum tweak t;
    const char *why; /* NULL: eligible */
} rule_cases[] = {
    {T_NONE, NULL},
    {T_NOT_RUNNING, "not_running"},
    {T_TERMINATING, "terminating"},
    {T_MIRROR, "mirror_pod"},
    {T_NO_CONTROLLER, "no_controller"},
    {T_EXCLUDED, "excluded_namespace"},
    {T_EXCLUDED_LAST, "excluded_namespace"},
    {T_STARVING, "starving_namespace"},
    {T_PROTECTED, "protected"},
    {T_YOUNG, "too_young"},
    {T_NO_START, "too_young"},
    {T_FUTURE, "too_young"},
    {T_NO_BUDGET, "no_budget"},
    {T_BAD_BUDGET, "bad_budget"},
    {T_NEGATIVE_BUDGET, "bad_budget"},
    {T_STRANGE_STATE, "bad_budget"},
    {T_WITHIN, "within_budget"},
    {T_AT_BUDGET, "within_budget"}, /* used == budget is within */
    {T_BYTE_OVER, NULL},            /* one byte over is over */
    {T_AT_MIN_RUNTIME, NULL},       /* running exactly MIN_RUNTIME is old enough */
    {T_JUST_UNDER_MIN_RUNTIME, "too_young"},
    {T_ZERO_BUDGET, NULL},
    {T_ZERO_BUDGET_UNUSED, "within_budget"},
};

static void
test_each_rule(void **state)
{
    struct fx *f = *state;
    const struct policy_candidate *c;
    struct pod *p;
    size_t i;

    for (i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
        f->pl.pl_count = 0;
        f->ur.ur_count = 0;
        f->pp.pp_starving_namespace = NULL;
        p = pod(f,
                rule_cases[i].t == T_EXCLUDED        ? "kube-system"
                : rule_cases[i].t == T_EXCLUDED_LAST ? "monitoring"
                                                     : "tenant",
                "x", 1000, 2000);
        switch (rule_cases[i].t) {
        case T_NOT_RUNNING:
            p->p_running = 0;
            break;
        case T_TERMINATING:
            p->p_terminating = 1;
            break;
        case T_MIRROR:
            p->p_mirror = 1;
            break;
        case T_NO_CONTROLLER:
            p->p_has_controller = 0;
            break;
        case T_STARVING:
            f->pp.pp_starving_namespace = "tenant";
            break;
        case T_PROTECTED:
            p->p_protected = 1;
            break;
        case T_YOUNG:
            p->p_started = NOW - 60;
            break;
        case T_NO_START:
            p->p_started = 0;
            break;
        case T_FUTURE:
            p->p_started = NOW + 600;
            break;
        case T_NO_BUDGET:
            p->p_budget_state = BUDGET_NONE;
            p->p_budget_mib = 0;
            break;
        case T_BAD_BUDGET:
            p->p_budget_state = BUDGET_BAD;
            p->p_budget_error = (char *)"container app: limit \"5q\" is not a quantity";
            break;
        case T_NEGATIVE_BUDGET:
            p->p_budget_mib = -5;
            break;
        case T_STRANGE_STATE:
            p->p_budget_state = (enum budget_state)42;
            break;
        case T_WITHIN:
            p->p_budget_mib = 3000;
            break;
        case T_AT_BUDGET:
            p->p_budget_mib = 2000;
            break;
        case T_BYTE_OVER:
            p->p_budget_mib = 2000;
            f->series[0].us_bytes = 2000 * MIB + 1;
            break;
        case T_AT_MIN_RUNTIME:
            p->p_started = NOW - 120;
            break;
        case T_JUST_UNDER_MIN_RUNTIME:
            p->p_started = NOW - 119;
            break;
        case T_ZERO_BUDGET:
            p->p_budget_mib = 0;
            break;
        case T_ZERO_BUDGET_UNUSED:
            p->p_budget_mib = 0;
            f->series[0].us_bytes = 0;
            break;
        default:
            break;
        }
        free_at(f, 100);
        decide(f);
        c = cand(f, "x");
        if (rule_cases[i].why == NULL ? !c->pc_eligible || c->pc_why_not != NULL
                                      : c->pc_eligible || c->pc_why_not == NULL ||
                                            strcmp(c->pc_why_not, rule_cases[i].why) != 0)
            fail_msg("case %zu: eligible %d why_not %s, want %s", i, c->pc_eligible,
                     c->pc_why_not ? c->pc_why_not : "(null)",
                     rule_cases[i].why ? rule_cases[i].why : "(null)");
        assert_int_equal(f->res.pr_outcome,
                         rule_cases[i].why ? POLICY_SKIPPED_NO_CANDIDATE : POLICY_VICTIM);
        /* The seating chart's verdict for a pod no decision considers is the same. */
        assert_ptr_equal(policy_why_not_pod(&f->pp, p, c->pc_used_bytes), c->pc_why_not);
    }
}

/* A pod failing several rules reports the first, in the documented order. */
static void
test_rule_order(void **state)
{
    static const char *const chain[] = {
        "not_running", "terminating", "mirror_pod", "no_controller", "excluded_namespace",
        "protected",   "too_young",   "no_budget",  "within_budget",
    };
    struct fx *f = *state;
    struct pod *p;
    size_t k;

    /* Break everything, then mend one rule at a time. */
    for (k = 0; k < sizeof(chain) / sizeof(chain[0]); k++) {
        f->pl.pl_count = 0;
        f->ur.ur_count = 0;
        p = pod(f, "kube-system", "x", 0, 500);
        p->p_running = k > 0;
        p->p_terminating = k <= 1;
        p->p_mirror = k <= 2;
        p->p_has_controller = k > 3;
        if (k > 4) {
            p->p_namespace = (char *)"tenant";
            f->series[0].us_namespace = (char *)"tenant";
        }
        p->p_protected = k <= 5;
        p->p_started = k <= 6 ? 0 : NOW - HOUR;
        p->p_budget_state = k <= 7 ? BUDGET_NONE : BUDGET_OK;
        p->p_budget_mib = 1000;
        decide(f);
        assert_string_equal(cand(f, "x")->pc_why_not, chain[k]);
    }
    /* the starving namespace comes after exclusion and before protection */
    f->pl.pl_count = 0;
    f->ur.ur_count = 0;
    p = pod(f, "kube-system", "x", 0, 500);
    p->p_protected = 1;
    f->pp.pp_starving_namespace = "kube-system";
    decide(f);
    assert_string_equal(cand(f, "x")->pc_why_not, "excluded_namespace");
    p->p_namespace = (char *)"tenant";
    f->series[0].us_namespace = (char *)"tenant";
    f->pp.pp_starving_namespace = "tenant";
    decide(f);
    assert_string_equal(cand(f, "x")->pc_why_not, "starving_namespace");
    /* bad budget before within: a bad budget never reads as within */
    p->p_budget_state = BUDGET_BAD;
    f->pp.pp_starving_namespace = "";
    p->p_protected = 0;
    decide(f);
    assert_string_equal(cand(f, "x")->pc_why_not, "bad_budget");
}

/* Usage of a pod the API did not list: shown, never a victim. */
static void
test_not_on_node(void **state)
{
    struct fx *f = *state;
    const struct policy_candidate *c;

    pod(f, "a", "listed", 1000, 1200);
    series(f, "b", "ghost", 9000 * MIB);
    free_at(f, 100);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(f->res.pr_candidate_count, 2);
    assert_string_equal(order(f), "listed,ghost");
    c = cand(f, "ghost");
    assert_null(c->pc_pod);
    assert_string_equal(c->pc_namespace, "b");
    assert_string_equal(c->pc_why_not, "not_on_node");
    assert_int_equal(c->pc_used_mib, 9000);
    assert_false(c->pc_has_budget);
    assert_int_equal(f->res.pr_ranked_count, 1);
    /* a pod without series uses 0 */
    f->ur.ur_count = 0;
    series(f, "b", "ghost", 9000 * MIB);
    free_at(f, 100);
    decide(f);
    c = cand(f, "listed");
    assert_int_equal(c->pc_used_mib, 0);
    assert_string_equal(c->pc_why_not, "within_budget");
}

/* ---- the floor --------------------------------------------------------- */

static void
test_floor_boundary(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "hog", 1000, 5000);
    free_at(f, 1536); /* exactly the floor: recovered */
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_RECOVERED);
    assert_int_equal(f->res.pr_free_mib, 1536);
    assert_string_equal(f->res.pr_reason,
                        "free 1536 MiB >= floor 1536 MiB; nothing to do");
    /* candidates are still filled, for `check`, but nobody is ranked */
    assert_int_equal(f->res.pr_candidate_count, 1);
    assert_true(f->res.pr_candidates[0].pc_eligible);
    assert_int_equal(f->res.pr_ranked_count, 0);

    f->series[1].us_bytes += 1; /* one byte below the floor */
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(f->res.pr_free_mib, 1535);
    assert_string_equal(
        f->res.pr_reason,
        "free 1535 MiB < floor 1536 MiB; a/hog uses 5000 MiB against a budget "
        "of 1000 MiB (+4000 MiB), the only eligible over-budget pod");

    /* FALLBACK never acts on a recovered card */
    f->pp.pp_fallback_largest = 1;
    f->pods[0].p_budget_mib = 6000;
    f->series[1].us_bytes -= 1;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_RECOVERED);
    assert_false(f->res.pr_fallback);
    assert_false(f->res.pr_candidates[0].pc_eligible);
}

/* FREE_QUERY's answer replaces total - used. */
static void
test_free_query(void **state)
{
    static const struct {
        double free_mib;
        enum policy_outcome want;
        int64_t free_floor;
        const char *reason;
    } cases[] = {
        {2000, POLICY_SKIPPED_RECOVERED, 2000,
         "free 2000 MiB >= floor 1536 MiB; nothing to do"},
        {1536, POLICY_SKIPPED_RECOVERED, 1536, NULL},
        {1535.999, POLICY_VICTIM, 1535, NULL},
        {0, POLICY_VICTIM, 0, NULL},
        {15360, POLICY_SKIPPED_RECOVERED, 15360, NULL},
        {15360.5, POLICY_SKIPPED_TELEMETRY, 0,
         "FREE_QUERY reports 15360.5 MiB free, which cannot be true on a card of "
         "GPU_TOTAL_MIB=15360"},
        {-1, POLICY_SKIPPED_TELEMETRY, 0, "FREE_QUERY reports -1 MiB free"},
        {NAN, POLICY_SKIPPED_TELEMETRY, 0, "FREE_QUERY reports nan MiB free"},
        {INFINITY, POLICY_SKIPPED_TELEMETRY, 0, "FREE_QUERY reports inf MiB free"},
    };
    struct fx *f = *state;
    size_t i;

    pod(f, "a", "hog", 1000, 5000); /* by usage alone, 10360 MiB free */
    f->in.pi_have_free = 1;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f->in.pi_free_mib = cases[i].free_mib;
        decide(f);
        if (f->res.pr_outcome != cases[i].want ||
            f->res.pr_free_mib != cases[i].free_floor)
            fail_msg("case %zu: outcome %d free %lld (%s)", i, f->res.pr_outcome,
                     (long long)f->res.pr_free_mib, f->res.pr_reason);
        if (cases[i].reason != NULL && strstr(f->res.pr_reason, cases[i].reason) == NULL)
            fail_msg("case %zu: \"%s\"", i, f->res.pr_reason);
        if (cases[i].want == POLICY_SKIPPED_TELEMETRY) {
            assert_false(f->res.pr_free_known);
            assert_int_equal(f->res.pr_candidate_count, 0);
            assert_null(f->res.pr_candidates);
        }
    }
}

/* Readings that cannot be true act on nothing. */
static void
test_telemetry(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "hog", 1000, 5000);
    f->ur.ur_count = 0;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_string_equal(f->res.pr_reason, "Prometheus returned no series");
    assert_false(f->res.pr_free_known);
    assert_int_equal(f->res.pr_candidate_count, 0);
    assert_int_equal(f->res.pr_ranked_count, 0);

    f->in.pi_usage = NULL;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    f->in.pi_usage = &f->ur;

    series(f, "a", "hog", NAN);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_string_equal(f->res.pr_reason,
                        "Prometheus reported nan bytes for a/hog, which cannot be true");

    f->series[0].us_bytes = 16000 * MIB;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(f->res.pr_reason, "is GPU_TOTAL_MIB smaller than the card?"));

    f->series[0].us_bytes = 10000 * MIB;
    series(f, "b", "other", 6000 * MIB);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_string_equal(f->res.pr_reason,
                        "the series together report 16000 MiB, which exceeds "
                        "GPU_TOTAL_MIB=15360; is GPU_TOTAL_MIB smaller than the card?");
}

/* ---- ranking ----------------------------------------------------------- */

static void
test_rank_overshoot(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "small", 1000, 1100); /* +100 */
    pod(f, "a", "big", 1000, 1300);   /* +300 */
    pod(f, "a", "middle", 500, 700);  /* +200 */
    pod(f, "a", "fine", 5000, 100);
    free_at(f, 10);
    decide(f);
    assert_int_equal(f->res.pr_ranked_count, 3);
    assert_string_equal(order(f), "big,middle,small,fine");
    assert_string_equal(
        f->res.pr_reason,
        "free 10 MiB < floor 1536 MiB; a/big uses 1300 MiB against a budget of "
        "1000 MiB (+300 MiB), the largest overshoot of 3 eligible over-budget "
        "pods");
}

static void
test_rank_ties(void **state)
{
    struct fx *f = *state;
    struct pod *p;

    /* equal overshoot (+500): the larger user first */
    pod(f, "b", "user-1500", 1000, 1500);
    pod(f, "b", "user-2500", 2000, 2500);
    /* equal overshoot and use: the longest running first */
    p = pod(f, "b", "young", 1000, 1400);
    p->p_started = NOW - 1000;
    p = pod(f, "b", "old", 1000, 1400);
    p->p_started = NOW - 5000;
    /* equal in all that: namespace, then name, in byte order */
    pod(f, "z", "same", 1000, 1300);
    pod(f, "Y", "same", 1000, 1300);
    pod(f, "m", "beta", 1000, 1300);
    pod(f, "m", "Alpha", 1000, 1300);
    pod(f, "m", "alpha", 1000, 1300);
    /* ineligible ones follow, by namespace and name */
    pod(f, "c", "within", 9000, 100);
    pod(f, "a", "within", 9000, 100)->p_protected = 1;
    free_at(f, 0);
    decide(f);
    assert_int_equal(f->res.pr_ranked_count, 9);
    assert_string_equal(
        order(f),
        "user-2500,user-1500,old,young,same,Alpha,alpha,beta,same,within,within");
    assert_string_equal(f->res.pr_candidates[4].pc_namespace, "Y");
    assert_string_equal(f->res.pr_candidates[8].pc_namespace, "z");
    assert_string_equal(f->res.pr_candidates[9].pc_namespace, "a");
    assert_string_equal(f->res.pr_candidates[10].pc_namespace, "c");
}

/* Overshoot is ranked in bytes, not in rounded MiB. */
static void
test_rank_bytes(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "p", 1000, -1);
    pod(f, "a", "q", 1000, -1);
    series(f, "a", "p", 1000 * MIB + 10);
    series(f, "a", "q", 1000 * MIB + 20);
    free_at(f, 0);
    decide(f);
    assert_string_equal(order(f), "q,p");
    assert_int_equal(f->res.pr_candidates[0].pc_overshoot_mib, 0);
}

/* Two pods with one name (never from a real list): the UID decides. */
static void
test_duplicate_names(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "p", 1000, 3000)->p_uid = (char *)"uid-2";
    pod(f, "a", "p", 1000, -1)->p_uid = (char *)"uid-1";
    free_at(f, 0);
    decide(f);
    assert_int_equal(f->res.pr_candidate_count, 2);
    assert_string_equal(f->res.pr_candidates[0].pc_pod->p_uid, "uid-1");
    assert_string_equal(f->res.pr_candidates[1].pc_pod->p_uid, "uid-2");
    /* a missing UID sorts first */
    f->pods[0].p_uid = NULL;
    decide(f);
    assert_null(f->res.pr_candidates[0].pc_pod->p_uid);
    f->pods[0].p_uid = (char *)"uid-2";
    f->pods[1].p_uid = NULL;
    decide(f);
    assert_null(f->res.pr_candidates[0].pc_pod->p_uid);
    f->pods[0].p_uid = NULL;
    f->pods[0].p_name = NULL;
    f->pods[1].p_uid = (char *)"uid-1";
    decide(f);
    assert_int_equal(f->res.pr_candidate_count, 2);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "p");
    assert_string_equal(f->res.pr_candidates[1].pc_name, "");
    assert_string_equal(f->res.pr_candidates[1].pc_why_not, "within_budget");
    /* and a missing namespace reads as "" (pods_json never leaves it NULL) */
    f->pods[0].p_namespace = NULL;
    decide(f);
    assert_string_equal(f->res.pr_candidates[1].pc_namespace, "");
}

/* ---- FALLBACK=largest -------------------------------------------------- */

static void
test_fallback(void **state)
{
    struct fx *f = *state;
    struct pod *p;

    f->pp.pp_fallback_largest = 1;
    pod(f, "a", "within", 5000, 4000);
    p = pod(f, "a", "unbudgeted", 0, 5000);
    p->p_budget_state = BUDGET_NONE;
    p = pod(f, "a", "broken", 0, 3000);
    p->p_budget_state = BUDGET_BAD;
    pod(f, "a", "guarded", 9000, 2000)->p_protected = 1;
    pod(f, "a", "idle", 1000, 0);
    pod(f, "a", "no-series", 1000, -1);
    free_at(f, 100);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_true(f->res.pr_fallback);
    assert_int_equal(f->res.pr_ranked_count, 3);
    assert_string_equal(order(f), "unbudgeted,within,broken,guarded,idle,no-series");
    assert_false(f->res.pr_candidates[0].pc_has_budget);
    assert_null(f->res.pr_candidates[0].pc_why_not);
    assert_true(f->res.pr_candidates[1].pc_has_budget);
    assert_int_equal(f->res.pr_candidates[1].pc_overshoot_mib, -1000);
    assert_string_equal(cand(f, "guarded")->pc_why_not, "protected");
    assert_string_equal(cand(f, "idle")->pc_why_not, "within_budget");
    assert_false(cand(f, "idle")->pc_eligible);
    assert_string_equal(
        f->res.pr_reason,
        "free 100 MiB < floor 1536 MiB and no eligible pod is over its budget; "
        "FALLBACK=largest picks a/unbudgeted, the largest eligible user at "
        "5000 MiB (no budget declared)");

    f->pods[1].p_budget_state = BUDGET_BAD;
    decide(f);
    assert_non_null(strstr(f->res.pr_reason, "5000 MiB (budget unreadable)"));
    f->pods[1].p_budget_state = BUDGET_OK;
    f->pods[1].p_budget_mib = 6000;
    decide(f);
    assert_non_null(strstr(f->res.pr_reason, "5000 MiB (budget 6000 MiB)"));

    /* without FALLBACK the same node has no candidate */
    f->pp.pp_fallback_largest = 0;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_false(f->res.pr_fallback);
    assert_string_equal(f->res.pr_reason,
                        "free 100 MiB < floor 1536 MiB; no eligible victim among 6 pods "
                        "(1 protected, 1 bad_budget, 4 within_budget)");
}

static void
test_fallback_ties(void **state)
{
    struct fx *f = *state;

    f->pp.pp_fallback_largest = 1;
    pod(f, "b", "young", 5000, 3000)->p_started = NOW - 200;
    pod(f, "b", "old", 5000, 3000)->p_started = NOW - 9000;
    pod(f, "a", "x", 5000, 3000)->p_started = NOW - 200;
    pod(f, "a", "big", 9000, 3001)->p_started = NOW - 200;
    free_at(f, 0);
    decide(f);
    assert_true(f->res.pr_fallback);
    assert_string_equal(order(f), "big,old,x,young");
}

/* Only pods using nothing: FALLBACK finds nobody worth recycling. */
static void
test_fallback_nobody(void **state)
{
    struct fx *f = *state;

    f->pp.pp_fallback_largest = 1;
    pod(f, "a", "idle", 1000, 0);
    pod(f, "a", "gone", 1000, -1)->p_running = 0;
    free_at(f, 0);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_false(f->res.pr_fallback);
    assert_string_equal(
        f->res.pr_reason,
        "free 0 MiB < floor 1536 MiB; no eligible victim among 2 pods "
        "(1 not_running, 1 within_budget), and FALLBACK=largest found none "
        "holding VRAM");
}

/* ---- inputs at the edges ------------------------------------------------ */

static void
test_edges(void **state)
{
    struct fx *f = *state;
    char ns[700];

    /* no pods listed, only host usage */
    f->in.pi_pods = NULL;
    series(f, NULL, NULL, 15000 * MIB);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_string_equal(f->res.pr_reason,
                        "free 360 MiB < floor 1536 MiB; no pod to consider");
    assert_int_equal(f->res.pr_candidate_count, 0);

    /* an empty exclusion list */
    f->in.pi_pods = &f->pl;
    f->pp.pp_exclude_count = 0;
    f->ur.ur_count = 0;
    pod(f, "kube-system", "hog", 100, 1000);
    free_at(f, 0);
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);

    /* a name longer than the reason: cut, still terminated */
    memset(ns, 'n', sizeof(ns) - 1);
    ns[sizeof(ns) - 1] = '\0';
    f->pods[0].p_namespace = ns;
    f->series[0].us_namespace = ns;
    decide(f);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(strlen(f->res.pr_reason), sizeof(f->res.pr_reason) - 1);
    f->pp.pp_fallback_largest = 1;
    f->pods[0].p_budget_mib = 5000;
    decide(f);
    assert_true(f->res.pr_fallback);
    assert_int_equal(strlen(f->res.pr_reason), sizeof(f->res.pr_reason) - 1);
}

static void
test_outcome_names_and_free(void **state)
{
    struct policy_answer r;

    /* The audit's words, from the one name table. */
    assert_string_equal(decision_result_name(policy_outcome_result(POLICY_VICTIM)),
                        "would_recycle");
    assert_string_equal(
        decision_result_name(policy_outcome_result(POLICY_SKIPPED_RECOVERED)),
        "skipped_recovered");
    assert_string_equal(
        decision_result_name(policy_outcome_result(POLICY_SKIPPED_NO_CANDIDATE)),
        "skipped_no_candidate");
    assert_string_equal(
        decision_result_name(policy_outcome_result(POLICY_SKIPPED_TELEMETRY)),
        "skipped_telemetry");
    assert_string_equal(
        decision_result_name(policy_outcome_result((enum policy_outcome)99)), "failed");
    assert_string_equal(decision_result_name(RESULT_COUNT), "failed");
    policy_answer_free(NULL);
    memset(&r, 0, sizeof(r));
    policy_answer_free(&r);
    pod_list_free(NULL);
}

/* ---- order-blindness: a randomized property, fixed seed ------------------ */

static uint64_t rng_state;

static uint64_t
rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t
pick(uint64_t n)
{
    return rng() % n;
}

static char names[2 * MAXPODS][2][32];

/* A random node: few distinct values so ties happen at every level. */
static void
random_node(struct fx *f, size_t npods)
{
    static const int64_t budgets[] = {100, 200, 400, 800};
    struct pod *p;
    size_t i;

    for (i = 0; i < npods; i++) {
        snprintf(names[i][0], sizeof(names[i][0]), "ns%d", (int)pick(3));
        snprintf(names[i][1], sizeof(names[i][1]), "p%zu", i);
        p = pod(f, names[i][0], names[i][1], budgets[pick(4)],
                pick(5) == 0 ? -1 : (double)(100 * pick(9)));
        p->p_started = pick(15) == 0 ? NOW - 10 : NOW - 1000 * (int64_t)(1 + pick(3));
        p->p_running = pick(12) != 0;
        p->p_terminating = pick(12) == 0;
        p->p_mirror = pick(20) == 0;
        p->p_has_controller = pick(12) != 0;
        p->p_protected = pick(12) == 0;
        if (pick(10) == 0)
            p->p_budget_state = pick(2) ? BUDGET_NONE : BUDGET_BAD;
        if (pick(8) == 0)
            series(f, names[i][0], names[i][1],
                   (double)(1 + pick(3 * 1048576))); /* a 2nd process */
    }
    if (pick(4) == 0) {
        snprintf(names[npods][0], sizeof(names[npods][0]), "ns%d", (int)pick(3));
        snprintf(names[npods][1], sizeof(names[npods][1]), "ghost");
        series(f, names[npods][0], names[npods][1], 300 * MIB);
    }
    f->pp.pp_fallback_largest = pick(3) == 0;
    f->pp.pp_starving_namespace = pick(4) == 0 ? "ns1" : NULL;
}

static void
shuffle_pods(struct fx *f)
{
    struct pod t;
    size_t i, j;

    for (i = f->pl.pl_count; i > 1; i--) {
        j = pick(i);
        t = f->pods[i - 1];
        f->pods[i - 1] = f->pods[j];
        f->pods[j] = t;
    }
}

static void
shuffle_series(struct fx *f)
{
    struct usage_series t;
    size_t i, j;

    for (i = f->ur.ur_count; i > 1; i--) {
        j = pick(i);
        t = f->series[i - 1];
        f->series[i - 1] = f->series[j];
        f->series[j] = t;
    }
}

/* What a result says, independent of where the input pods sat in memory. */
static void
describe(const struct policy_answer *r, char *buf, size_t len, size_t upto)
{
    size_t i, off, n = upto < r->pr_candidate_count ? upto : r->pr_candidate_count;

    off = (size_t)snprintf(buf, len, "%d %zu %d %lld|%s|", r->pr_outcome,
                           r->pr_ranked_count, r->pr_fallback, (long long)r->pr_free_mib,
                           r->pr_reason);
    for (i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(
            buf + off, len - off, "%s/%s:%d:%s:%lld:%lld,",
            r->pr_candidates[i].pc_namespace, r->pr_candidates[i].pc_name,
            r->pr_candidates[i].pc_eligible,
            r->pr_candidates[i].pc_why_not ? r->pr_candidates[i].pc_why_not : "-",
            (long long)r->pr_candidates[i].pc_used_mib,
            (long long)r->pr_candidates[i].pc_overshoot_mib);
}

static void
test_order_blind(void **state)
{
    static char want[16384], got[16384];
    struct fx *f = *state;
    size_t iter, npods, i, k, victims = 0, fallbacks = 0, ranked;
    static char extra[MAXPODS][32];

    rng_state = 20260602;
    for (iter = 0; iter < 3000; iter++) {
        f->pl.pl_count = 0;
        f->ur.ur_count = 0;
        npods = 1 + pick(16);
        random_node(f, npods);
        free_at(f, (double)pick(2000));
        decide(f);
        describe(&f->res, want, sizeof(want), SIZE_MAX);
        victims += f->res.pr_outcome == POLICY_VICTIM;
        fallbacks += f->res.pr_fallback;

        /* any order of pods and series: the very same result */
        for (k = 0; k < 4; k++) {
            shuffle_pods(f);
            shuffle_series(f);
            decide(f);
            describe(&f->res, got, sizeof(got), SIZE_MAX);
            if (strcmp(want, got) != 0)
                fail_msg("iteration %zu: order changed the result:\n%s\n%s", iter, want,
                         got);
        }

        /* more pods within budget: still the same victims, in the same order */
        decide(f);
        if (f->res.pr_outcome != POLICY_VICTIM || f->res.pr_fallback)
            continue;
        ranked = f->res.pr_ranked_count;
        describe(&f->res, want, sizeof(want), ranked);
        f->ur.ur_count--; /* the filler series from free_at, which is last... */
        for (i = 0; i < f->ur.ur_count; i++) /* ...unless shuffled: find it */
            if (f->series[i].us_namespace == NULL) {
                f->series[i] = f->series[f->ur.ur_count];
                break;
            }
        for (k = 0, i = 1 + pick(6); k < i && f->pl.pl_count < MAXPODS; k++) {
            snprintf(extra[k], sizeof(extra[k]), "extra%zu", k);
            pod(f, pick(2) ? "ns0" : "zz", extra[k], 1000,
                pick(3) ? (double)pick(101) : -1);
        }
        free_at(f, 0);
        decide(f);
        describe(&f->res, got, sizeof(got), ranked);
        /* the reason names a different free figure; compare the ranked list */
        if (strcmp(strchr(want, '|') + 1 + strcspn(strchr(want, '|') + 1, "|"),
                   strchr(got, '|') + 1 + strcspn(strchr(got, '|') + 1, "|")) != 0 ||
            f->res.pr_ranked_count != ranked)
            fail_msg("iteration %zu: pods within budget changed the victims:\n%s\n%s",
                     iter, want, got);
    }
    print_message("3000 random nodes: %zu victims, %zu by fallback\n", victims,
                  fallbacks);
    /* the generator must exercise both paths */
    assert_true(victims > 500);
    assert_true(fallbacks > 50);
}

/* GPU scope: the same node spread over three GPUs (some series unlabelled,
 * some pods on two cards). Per GPU: order never matters, every candidate
 * uses that GPU, a budget victim is over budget by its total, and
 * FALLBACK=largest goes by use on that GPU. */
static void
test_order_blind_gpu(void **state)
{
    static const char *const gpus[] = {"GPU-a", "GPU-b", "GPU-c"};
    static char want[16384], got[16384];
    struct fx *f = *state;
    const char **named;
    size_t iter, npods, i, k, n, g, victims = 0, fallbacks = 0, decisions = 0;
    const struct policy_candidate *c;

    rng_state = 20260603;
    for (iter = 0; iter < 1500; iter++) {
        f->pl.pl_count = 0;
        f->ur.ur_count = 0;
        npods = 1 + pick(16);
        random_node(f, npods);
        for (i = 0, n = f->ur.ur_count; i < n; i++) {
            f->series[i].us_gpu = pick(10) == 0 ? NULL : (char *)gpus[pick(3)];
            if (f->series[i].us_gpu != NULL && pick(4) == 0) { /* on a 2nd card too */
                f->series[f->ur.ur_count] = f->series[i];
                f->series[f->ur.ur_count].us_gpu = (char *)gpus[pick(3)];
                f->series[f->ur.ur_count++].us_bytes = (double)(100 * pick(9)) * MIB;
            }
        }
        for (g = 0; g < 3; g++) { /* the rest of each card, so free is random */
            double used = 0;
            for (i = 0; i < f->ur.ur_count; i++)
                if (f->series[i].us_gpu == gpus[g])
                    used += f->series[i].us_bytes;
            if (used > (double)f->pp.pp_total_mib * MIB - 2000 * MIB)
                continue;
            series(f, NULL, NULL,
                   (double)f->pp.pp_total_mib * MIB - used - (double)pick(2000) * MIB);
            f->series[f->ur.ur_count - 1].us_gpu = (char *)gpus[g];
        }
        assert_int_equal(usage_gpus(&f->ur, &named, &n), 0);
        assert_true(n >= 1 && n <= 3);
        for (g = 0; g < n; g++) {
            f->in.pi_gpu = named[g];
            decide(f);
            decisions++;
            describe(&f->res, want, sizeof(want), SIZE_MAX);
            victims += f->res.pr_outcome == POLICY_VICTIM;
            fallbacks += f->res.pr_fallback;
            for (i = 0; i < f->res.pr_candidate_count; i++) {
                c = &f->res.pr_candidates[i];
                if (!(c->pc_gpu_used_bytes > 0) ||
                    c->pc_gpu_used_bytes > c->pc_used_bytes)
                    fail_msg("iteration %zu: %s on %s uses %g of %g", iter, c->pc_name,
                             named[g], c->pc_gpu_used_bytes, c->pc_used_bytes);
                if (i < f->res.pr_ranked_count && !f->res.pr_fallback &&
                    !(c->pc_used_bytes > (double)c->pc_budget_mib * MIB))
                    fail_msg("iteration %zu: %s ranked within budget", iter, c->pc_name);
                if (i > 0 && i < f->res.pr_ranked_count && f->res.pr_fallback &&
                    c->pc_gpu_used_bytes > f->res.pr_candidates[i - 1].pc_gpu_used_bytes)
                    fail_msg("iteration %zu: fallback not by use on %s", iter, named[g]);
            }
            for (k = 0; k < 4; k++) {
                shuffle_pods(f);
                shuffle_series(f);
                decide(f);
                describe(&f->res, got, sizeof(got), SIZE_MAX);
                if (strcmp(want, got) != 0)
                    fail_msg("iteration %zu, %s: order changed the result:\n%s\n%s", iter,
                             named[g], want, got);
            }
        }
        free(named);
        f->in.pi_gpu = NULL;
    }
    print_message("%zu GPU decisions: %zu victims, %zu by fallback\n", decisions, victims,
                  fallbacks);
    assert_true(victims > 300);
    assert_true(fallbacks > 30);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_incident, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incident_from_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_on_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_floor_boundary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_telemetry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_overshoot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_ties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_ties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_nobody, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edges, setup, teardown),
        cmocka_unit_test(test_outcome_names_and_free),
        cmocka_unit_test_setup_teardown(test_order_blind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_blind_gpu, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
