/* test_gpu_scope.c -- the decision core per GPU: 2- and 8-GPU nodes, spread
 * pods, per-GPU plausibility, fallback by use on the pressed GPU, the parser */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "prom_json.h"
#include "usage.h"

#define MIB 1048576.0
#define NOW 1780408800
#define HOUR 3600
#define MAXPODS 64

static const char *const gpus8[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3",
                                    "GPU-4", "GPU-5", "GPU-6", "GPU-7"};

/* A node as a test builds it: pods and series borrow string literals. */
struct fx {
    struct pod pods[MAXPODS];
    struct usage_series series[4 * MAXPODS];
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
series(struct fx *f, const char *ns, const char *name, const char *gpu, double mib)
{
    struct usage_series *s = &f->series[f->ur.ur_count++];

    s->us_namespace = (char *)ns;
    s->us_pod = (char *)name;
    s->us_gpu = (char *)gpu;
    s->us_bytes = mib * MIB;
}

/* A pod that passes every rule but the budget; its use is added by series(). */
static struct pod *
pod(struct fx *f, const char *ns, const char *name, int64_t budget_mib)
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
    return p;
}

static void
decide_gpu(struct fx *f, const char *gpu)
{
    policy_answer_free(&f->res);
    f->in.pi_gpu = gpu;
    policy_decide(&f->pp, &f->in, &f->res);
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

/* Fills gpu with host memory (no pod labels) so its free is exactly free_mib. */
static void
free_on(struct fx *f, const char *gpu, double free_mib)
{
    double used = 0;
    size_t i;

    for (i = 0; i < f->ur.ur_count; i++)
        if (f->series[i].us_gpu != NULL && strcmp(f->series[i].us_gpu, gpu) == 0)
            used += f->series[i].us_bytes / MIB;
    series(f, NULL, NULL, gpu, (double)f->pp.pp_total_mib - used - free_mib);
}

/* ---- 2 GPUs ---------------------------------------------------------------- */

/* GPU-1 is healthy and holds the biggest offender; GPU-0 is short and holds a
 * small one: only the small one may be recycled for GPU-0. */
static void
test_bigger_offender_elsewhere(void **state)
{
    struct fx *f = *state;

    pod(f, "ml", "whale", 2000);
    series(f, "ml", "whale", "GPU-1", 9000); /* +7000 MiB, on the healthy card */
    pod(f, "stt", "minnow", 1000);
    series(f, "stt", "minnow", "GPU-0", 1500); /* +500 MiB, on the short card */
    pod(f, "llm", "llama", 14000);
    series(f, "llm", "llama", "GPU-0", 12500);
    free_on(f, "GPU-0", 1000);
    free_on(f, "GPU-1", 6000);

    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(f->res.pr_free_mib, 1000);
    assert_int_equal(f->res.pr_ranked_count, 1);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "minnow");
    /* only GPU-0's users are considered: whale is not even listed */
    assert_string_equal(order(f), "minnow,llama");
    assert_string_equal(f->res.pr_reason,
                        "free 1000 MiB on GPU GPU-0 < floor 1536 MiB; stt/minnow uses "
                        "1500 MiB (1500 MiB on this GPU) against a budget of 1000 MiB "
                        "(+500 MiB), the only eligible over-budget pod");

    decide_gpu(f, "GPU-1");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_RECOVERED);
    assert_int_equal(f->res.pr_free_mib, 6000);
    assert_string_equal(f->res.pr_reason,
                        "free 6000 MiB on GPU GPU-1 >= floor 1536 MiB; nothing to do");
}

/* A process on GPU-0 whose pod is not in this node's pod list (its series
 * name a pod the API does not place here): a candidate the audit shows, with
 * its use, never a victim (not_on_node), as in node scope. */
static void
test_unlisted_user(void **state)
{
    struct fx *f = *state;

    pod(f, "stt", "minnow", 1000);
    series(f, "stt", "minnow", "GPU-0", 1500);
    series(f, "ml", "ghost", "GPU-0", 9000);
    free_on(f, "GPU-0", 1000);

    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "minnow");
    assert_string_equal(order(f), "minnow,ghost");
    assert_int_equal(f->res.pr_candidates[1].pc_used_mib, 9000);
    assert_false(f->res.pr_candidates[1].pc_eligible);
    assert_string_equal(f->res.pr_candidates[1].pc_why_not, "not_on_node");
}

/* Over budget only by the sum over both GPUs: a candidate on each, with its
 * whole use and overshoot; a GPU it does not use never sees it. */
static void
test_spread_pod(void **state)
{
    struct fx *f = *state;
    const struct policy_candidate *v;

    pod(f, "ml", "spread", 4000);
    series(f, "ml", "spread", "GPU-0", 3000);
    series(f, "ml", "spread", "GPU-1", 3000);
    pod(f, "ml", "within", 5000);
    series(f, "ml", "within", "GPU-0", 4000);
    series(f, "ml", "within", "GPU-2", 100);
    free_on(f, "GPU-0", 500);
    free_on(f, "GPU-1", 1000);
    free_on(f, "GPU-2", 1200);

    for (int g = 0; g < 2; g++) {
        decide_gpu(f, g == 0 ? "GPU-0" : "GPU-1");
        assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
        v = &f->res.pr_candidates[0];
        assert_string_equal(v->pc_name, "spread");
        assert_int_equal(v->pc_used_mib, 6000); /* summed over every GPU */
        assert_int_equal(v->pc_gpu_used_mib, 3000);
        assert_int_equal(v->pc_overshoot_mib, 2000);
    }
    /* GPU-1: "within" does not use it */
    assert_string_equal(order(f), "spread");
    /* GPU-2: "within" uses 4100 in all, within 5000; spread is not there */
    decide_gpu(f, "GPU-2");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_string_equal(order(f), "within");
    assert_string_equal(f->res.pr_reason,
                        "free 1200 MiB on GPU GPU-2 < floor 1536 MiB; no eligible victim "
                        "among 1 pods (1 within_budget)");
}

/* One GPU's impossible reading holds back that GPU only. */
static void
test_impossible_per_gpu(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "hog", 1000);
    series(f, "a", "hog", "GPU-0", 3000);
    pod(f, "b", "broken", 1000);
    series(f, "b", "broken", "GPU-1", 500);
    f->series[f->ur.ur_count - 1].us_bytes = NAN;
    free_on(f, "GPU-0", 100);
    series(f, NULL, NULL, "GPU-1", 15000);

    decide_gpu(f, "GPU-1");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_false(f->res.pr_free_known);
    assert_string_equal(
        f->res.pr_reason,
        "Prometheus reported nan bytes for b/broken, which cannot be true");
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "hog");

    /* one pod above the card, on GPU-1 only */
    f->series[1].us_bytes = 16000 * MIB;
    decide_gpu(f, "GPU-1");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(f->res.pr_reason, "b/broken reports 16000 MiB"));
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);

    /* all together above the card, on GPU-1 only */
    f->series[1].us_bytes = 500 * MIB;
    decide_gpu(f, "GPU-1");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(f->res.pr_reason, "the series together report 15500 MiB"));
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);

    /* a GPU the series do not name */
    decide_gpu(f, "GPU-9");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_string_equal(f->res.pr_reason, "Prometheus returned no series for GPU GPU-9");
}

/* A user of the short GPU whose total cannot be known (a NaN on another GPU)
 * cannot be judged against its budget: that GPU's decision waits. */
static void
test_user_with_impossible_total(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "two", 1000);
    series(f, "a", "two", "GPU-0", 3000);
    series(f, "a", "two", "GPU-1", -5);
    free_on(f, "GPU-0", 100);
    series(f, NULL, NULL, "GPU-2", 100);
    /* 0 bytes on GPU-2 is no use of it: c/idle's share of the impossible GPU-1
     * does not hold GPU-2's decision back */
    series(f, "c", "idle", "GPU-2", 0);
    series(f, "c", "idle", "GPU-1", 200);
    /* and a user of GPU-2 at 0 bytes on GPU-1 has no share of GPU-1's reading */
    series(f, "c", "user", "GPU-2", 50);
    series(f, "c", "user", "GPU-1", 0);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(f->res.pr_reason, "for a/two, which cannot be true"));
    decide_gpu(f, "GPU-2"); /* nobody there is affected */
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_RECOVERED);
}

/* The user's other GPU is impossible because one pod there is above the card,
 * or a series without pod labels is negative: the reason says which. */
static void
test_taint_names_the_pod(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "two", 1000);
    series(f, "a", "two", "GPU-0", 3000);
    series(f, "a", "two", "GPU-1", 500);
    pod(f, "b", "big", 1000);
    series(f, "b", "big", "GPU-1", 16000);
    free_on(f, "GPU-0", 100);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    if (strstr(f->res.pr_reason,
               "a/two also uses GPU GPU-1, whose reading cannot be true "
               "(b/big reports 16000 MiB, more than GPU_TOTAL_MIB=15360") == NULL)
        fail_msg("%s", f->res.pr_reason);
    /* or because a series there without pod labels is negative */
    f->series[2].us_bytes = 100 * MIB;
    series(f, NULL, NULL, "GPU-1", -5);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    if (strstr(f->res.pr_reason,
               "a/two also uses GPU GPU-1, whose reading cannot be true (Prometheus "
               "reported -5.24288e+06 bytes on GPU GPU-1 for a series without pod "
               "labels") == NULL)
        fail_msg("%s", f->res.pr_reason);
}

/* The user's other GPU is impossible because another pod's series there is
 * NaN: the user's own GPU waits, and the reason names that pod. */
static void
test_taint_by_other_pods_nan(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "two", 1000);
    series(f, "a", "two", "GPU-0", 3000);
    series(f, "a", "two", "GPU-1", 500);
    pod(f, "b", "broken", 1000);
    series(f, "b", "broken", "GPU-1", 200);
    f->series[f->ur.ur_count - 1].us_bytes = NAN;
    free_on(f, "GPU-0", 100);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    if (strstr(f->res.pr_reason,
               "a/two also uses GPU GPU-1, whose reading cannot be true "
               "(Prometheus reported nan bytes") == NULL ||
        strstr(f->res.pr_reason, "b/broken") == NULL)
        fail_msg("%s", f->res.pr_reason);
}

/* A pod using exactly what the node's named GPUs hold together (its series
 * without a GPU label included) can be true, and is judged; a byte more
 * cannot. */
static void
test_pod_at_node_capacity(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "x", 1000);
    series(f, "a", "x", "GPU-0", 2000);
    series(f, "a", "x", NULL, 2 * 15360 - 2000); /* 30720 MiB in all */
    pod(f, "b", "y", 1000);
    series(f, "b", "y", "GPU-1", 100);
    free_on(f, "GPU-0", 100);
    decide_gpu(f, "GPU-0");
    if (f->res.pr_outcome != POLICY_VICTIM)
        fail_msg("%s", f->res.pr_reason);
    assert_string_equal(order(f), "x");
    assert_int_equal(f->res.pr_candidates[0].pc_used_mib, 30720);
    f->series[1].us_bytes += 1;
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
    assert_non_null(strstr(f->res.pr_reason, "a/x reports 30720 MiB over every GPU"));
}

/* Ties sort by namespace, then name, the UID last: not by UID before name. */
static void
test_ties_by_name(void **state)
{
    struct fx *f = *state;

    pod(f, "n", "alpha", 10000)->p_uid = "uid-2";
    series(f, "n", "alpha", "GPU-0", 100);
    pod(f, "n", "beta", 10000)->p_uid = "uid-1";
    series(f, "n", "beta", "GPU-0", 100);
    free_on(f, "GPU-0", 100);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_string_equal(order(f), "alpha,beta");
}

/* With MIN_RUNTIME 0 a pod started this very second may be recycled; one
 * that starts in the future never. */
static void
test_started_now(void **state)
{
    struct fx *f = *state;
    struct pod *p;

    f->pp.pp_min_runtime_s = 0;
    p = pod(f, "n", "fresh", 1000);
    p->p_started = NOW;
    series(f, "n", "fresh", "GPU-0", 3000);
    free_on(f, "GPU-0", 100);
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(f->res.pr_candidates[0].pc_name, "fresh");
    p->p_started = NOW + 1;
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    assert_string_equal(f->res.pr_candidates[0].pc_why_not, "too_young");
}

/* Two listed pods of one name (a pod re-created under its name): both are
 * candidates, the older UID first, whichever the list gave first. */
static void
test_duplicate_names_by_uid(void **state)
{
    struct fx *f = *state;

    for (int turn = 0; turn < 2; turn++) {
        f->pl.pl_count = 0;
        f->ur.ur_count = 0;
        pod(f, "n", "dup", 10000)->p_uid = turn ? "uid-2" : "uid-1";
        pod(f, "n", "dup", 10000)->p_uid = turn ? "uid-1" : "uid-2";
        series(f, "n", "dup", "GPU-0", 100);
        free_on(f, "GPU-0", 100);
        decide_gpu(f, "GPU-0");
        assert_int_equal(f->res.pr_candidate_count, 2);
        assert_string_equal(f->res.pr_candidates[0].pc_pod->p_uid, "uid-1");
        assert_string_equal(f->res.pr_candidates[1].pc_pod->p_uid, "uid-2");
    }
}

/* GPU names share one string when the answer repeats them (the parser's
 * pool): GPU-a and GPU-q land in one hash slot, and a series on GPU-q is
 * GPU-q's, not GPU-a's. */
static void
test_shared_gpu_names(void **state)
{
    static const char gpu_q[] = "GPU-q";
    struct fx *f = *state;
    struct usage_summary s;
    char err[256];

    series(f, "a", "p1", "GPU-a", 100);
    series(f, "a", "p2", "GPU-b", 100);
    series(f, "a", "p3", gpu_q, 100);
    series(f, "a", "p4", gpu_q, 100);
    assert_int_equal(usage_summarise_gpu(&f->ur, "GPU-a", 15360, &s, err, sizeof(err)),
                     0);
    assert_int_equal(s.us_count, 1);
    assert_string_equal(s.us_pods[0].pu_pod, "p1");
    usage_summary_free(&s);
    assert_int_equal(usage_summarise_gpu(&f->ur, "GPU-q", 15360, &s, err, sizeof(err)),
                     0);
    assert_int_equal(s.us_count, 2);
    usage_summary_free(&s);
}

/* FALLBACK=largest ranks by use on the pressed GPU, not in all. */
static void
test_fallback_by_gpu_use(void **state)
{
    struct fx *f = *state;

    f->pp.pp_fallback_largest = 1;
    pod(f, "a", "big-elsewhere", 10000);
    series(f, "a", "big-elsewhere", "GPU-0", 1000);
    series(f, "a", "big-elsewhere", "GPU-1", 8000);
    pod(f, "b", "big-here", 4000);
    series(f, "b", "big-here", "GPU-0", 3000);
    pod(f, "c", "unbudgeted", 0)->p_budget_state = BUDGET_NONE;
    series(f, "c", "unbudgeted", "GPU-0", 2000);
    free_on(f, "GPU-0", 900);
    free_on(f, "GPU-1", 5000);

    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_true(f->res.pr_fallback);
    assert_int_equal(f->res.pr_ranked_count, 3);
    assert_string_equal(order(f), "big-here,unbudgeted,big-elsewhere");
    assert_int_equal(f->res.pr_candidates[0].pc_used_mib, 3000);
    assert_int_equal(f->res.pr_candidates[2].pc_used_mib, 9000);
    assert_int_equal(f->res.pr_candidates[2].pc_overshoot_mib, -1000);
    assert_string_equal(
        f->res.pr_reason,
        "free 900 MiB on GPU GPU-0 < floor 1536 MiB and no eligible pod "
        "is over its budget; FALLBACK=largest picks b/big-here, the "
        "largest eligible user of this GPU at 3000 MiB there, 3000 MiB in "
        "all (budget 4000 MiB)");
}

/* A series without the GPU label counts toward its pod's total only; a
 * listed pod without use on the GPU is not considered for it. */
static void
test_unlabelled_series(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "mixed", 4000);
    series(f, "a", "mixed", "GPU-0", 2000);
    series(f, "a", "mixed", NULL, 3000); /* its total: 5000, over by 1000 */
    series(f, NULL, NULL, NULL, 99999);  /* belongs to nothing: ignored */
    pod(f, "a", "idle", 100);
    series(f, "a", "idle", "GPU-0", 0); /* at 0 bytes it uses nothing there */
    pod(f, "a", "unseen", 100);
    series(f, NULL, NULL, "GPU-0", 12000);

    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_free_mib, 15360 - 14000);
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(order(f), "mixed");
    assert_int_equal(f->res.pr_candidates[0].pc_used_mib, 5000);
    assert_int_equal(f->res.pr_candidates[0].pc_gpu_used_mib, 2000);
    assert_int_equal(f->res.pr_candidates[0].pc_overshoot_mib, 1000);
}

/* FREE_QUERY's per-GPU answer replaces total - used on that GPU. */
static void
test_free_query_per_gpu(void **state)
{
    struct fx *f = *state;

    pod(f, "a", "p", 100);
    series(f, "a", "p", "GPU-0", 300);
    f->in.pi_have_free = 1;
    f->in.pi_free_mib = 1000;
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
    assert_int_equal(f->res.pr_free_mib, 1000);
    f->in.pi_free_mib = 20000; /* more than the card */
    decide_gpu(f, "GPU-0");
    assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_TELEMETRY);
}

/* ---- 8 GPUs ---------------------------------------------------------------- */

static void
test_eight_gpus(void **state)
{
    static char names[8][2][16];
    struct fx *f = *state;
    const char **gpus = NULL;
    size_t n, i;

    for (i = 0; i < 8; i++) {
        snprintf(names[i][0], sizeof(names[i][0]), "big%zu", i);
        snprintf(names[i][1], sizeof(names[i][1]), "small%zu", i);
        /* the big one on each card overshoots more than any small one */
        pod(f, "t", names[i][0], 1000);
        series(f, "t", names[i][0], gpus8[7 - i], 6000);
        pod(f, "t", names[i][1], 1000);
        series(f, "t", names[i][1], gpus8[7 - i], 1000 + 100 * (double)i);
    }
    for (i = 0; i < 8; i++)
        free_on(f, gpus8[i], i == 5 ? 700 : 4000);
    assert_int_equal(usage_gpus(&f->ur, &gpus, &n), 0);
    assert_int_equal(n, 8);
    for (i = 0; i < 8; i++)
        assert_string_equal(gpus[i], gpus8[i]);
    free(gpus);
    assert_true(usage_gpu_scoped(&f->ur));

    for (i = 0; i < 8; i++) {
        decide_gpu(f, gpus8[i]);
        if (i != 5) {
            assert_int_equal(f->res.pr_outcome, POLICY_SKIPPED_RECOVERED);
            continue;
        }
        assert_int_equal(f->res.pr_outcome, POLICY_VICTIM);
        /* GPU-5 holds big2 and small2 (7 - 5 = 2): both over budget, big2 more;
         * no pod of another card is considered */
        assert_string_equal(order(f), "big2,small2");
        assert_int_equal(f->res.pr_ranked_count, 2);
        assert_int_equal(f->res.pr_free_mib, 700);
    }
}

/* ---- usage and the parser ------------------------------------------------- */

static void
test_usage_gpus_edges(void **state)
{
    struct usage_reading r = {0};
    struct usage_series s[3] = {{0}};
    struct usage_summary sum;
    const char **g = (const char **)1;
    char err[128];
    size_t n = 99;

    (void)state;
    assert_int_equal(usage_gpus(&r, &g, &n), 0);
    assert_null(g);
    assert_int_equal(n, 0);
    assert_false(usage_gpu_scoped(&r));
    assert_false(usage_gpu_scoped(NULL));
    r.ur_series = s;
    r.ur_count = 3;
    s[0].us_gpu = "b";
    s[1].us_gpu = "a";
    s[2].us_gpu = "b";
    assert_int_equal(usage_gpus(&r, &g, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(g[0], "a");
    assert_string_equal(g[1], "b");
    free(g);
    assert_int_equal(usage_summarise_gpu(&r, NULL, 100, &sum, err, sizeof(err)), -1);
    assert_int_equal(usage_summarise_gpu(NULL, "a", 100, &sum, NULL, 0), -1);
    s[1].us_bytes = -1; /* unattributed, on a: impossible */
    assert_int_equal(usage_summarise_gpu(&r, "a", 100, &sum, err, sizeof(err)), -1);
    assert_string_equal(err, "Prometheus reported -1 bytes on GPU a for a series without "
                             "pod labels, which cannot be true");
    assert_null(sum.us_pods);
    assert_int_equal(usage_summarise_gpu(&r, "b", 100, &sum, err, sizeof(err)), 0);
    assert_int_equal(sum.us_count, 0);
    usage_summary_free(&sum);
}

static void
test_parser_gpu_label(void **state)
{
    static const char body[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"p\",\"uuid\":\"GPU-a\"},"
        "\"value\":[1,\"1048576\"]},"
        "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"p\",\"uuid\":\"\"},"
        "\"value\":[1,\"2\"]},"
        "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"q\"},\"value\":[1,\"3\"]}]}}";
    static const char bad[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"pod\":\"p\",\"uuid\":7},\"value\":[1,\"1\"]}]}}";
    static const char twice[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"uuid\":\"a\",\"uuid\":\"b\"},\"value\":[1,\"1\"]}]}}";
    struct usage_reading r;
    char err[256];

    (void)state;
    assert_int_equal(prom_json_parse_vector_gpu(body, strlen(body), NULL, NULL, "uuid",
                                                &r, err, sizeof(err)),
                     0);
    assert_int_equal(r.ur_count, 3);
    assert_string_equal(r.ur_series[0].us_gpu, "GPU-a");
    assert_null(r.ur_series[1].us_gpu); /* empty is absent, as Prometheus has it */
    assert_null(r.ur_series[2].us_gpu);
    assert_true(usage_gpu_scoped(&r));
    usage_reading_free(&r);
    /* without a GPU label asked for, nothing is read: node scope */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(prom_json_parse_vector_gpu(body, strlen(body), NULL, NULL,
                                                    k ? "" : NULL, &r, err, sizeof(err)),
                         0);
        assert_false(usage_gpu_scoped(&r));
        usage_reading_free(&r);
    }
    assert_int_equal(prom_json_parse_vector_gpu(bad, strlen(bad), NULL, NULL, "uuid", &r,
                                                err, sizeof(err)),
                     -1);
    assert_string_equal(err, "result[0]: label uuid is not a string");
    assert_int_equal(r.ur_count, 0);
    /* the same body is fine when the label is not the GPU's */
    assert_int_equal(
        prom_json_parse_vector(bad, strlen(bad), NULL, NULL, &r, err, sizeof(err)), 0);
    usage_reading_free(&r);
    assert_int_equal(prom_json_parse_vector_gpu(twice, strlen(twice), NULL, NULL, "uuid",
                                                &r, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "uuid"));
}

/* GPU-0's sums do not depend on the order of the answer, even with a NaN
 * (GPU-1's, which cannot be true) among the series sorted with them:
 * 2^33 + 2^-20 rounds back to 2^33, so only smallest first keeps both. */
static void
test_gpu_sum_order_with_nan(void **state)
{
    struct usage_series a[] = {{NULL, NULL, "GPU-0", 0x1p-20},
                               {NULL, NULL, "GPU-0", 0x1p-20},
                               {NULL, NULL, "GPU-0", 0x1p33},
                               {NULL, NULL, "GPU-1", NAN}};
    struct usage_series b[] = {{NULL, NULL, "GPU-0", 0x1p33},
                               {NULL, NULL, "GPU-1", NAN},
                               {NULL, NULL, "GPU-0", 0x1p-20},
                               {NULL, NULL, "GPU-0", 0x1p-20}};
    struct usage_reading ra = {.ur_series = a, .ur_count = 4};
    struct usage_reading rb = {.ur_series = b, .ur_count = 4};
    struct usage_summary sa, sb;
    char err[256];

    (void)state;
    assert_int_equal(usage_summarise_gpu(&ra, "GPU-0", 15360, &sa, err, sizeof(err)), 0);
    assert_int_equal(usage_summarise_gpu(&rb, "GPU-0", 15360, &sb, err, sizeof(err)), 0);
    assert_true(sa.us_unattributed_bytes == 0x1p33 + 0x1p-19);
    assert_memory_equal(&sa.us_unattributed_bytes, &sb.us_unattributed_bytes,
                        sizeof(double));
    assert_memory_equal(&sa.us_total_bytes, &sb.us_total_bytes, sizeof(double));
    usage_summary_free(&sa);
    usage_summary_free(&sb);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bigger_offender_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spread_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unlisted_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_impossible_per_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_with_impossible_total, setup, teardown),
        cmocka_unit_test_setup_teardown(test_taint_names_the_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_taint_by_other_pods_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_at_node_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ties_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_started_now, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_names_by_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_gpu_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_by_gpu_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unlabelled_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_query_per_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eight_gpus, setup, teardown),
        cmocka_unit_test(test_usage_gpus_edges),
        cmocka_unit_test(test_parser_gpu_label),
        cmocka_unit_test(test_gpu_sum_order_with_nan),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
