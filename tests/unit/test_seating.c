/* test_seating.c -- the seating facts from a gather result: node scope, GPU scope, capacity words */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "budgets.h"
#include "page_html.h"
#include "seating.h"

static struct pod pods[] = {
    {.p_namespace = "immich", .p_name = "ml", .p_running = 1, .p_budget_state = BUDGET_OK,
     .p_budget_mib = 3000},
    {.p_namespace = "llm", .p_name = "vllm", .p_running = 1, .p_budget_state = BUDGET_OK,
     .p_budget_mib = 2000},
    {.p_namespace = "portal", .p_name = "tts", .p_budget_state = BUDGET_OK,
     .p_budget_mib = 700}, /* pending: holds a seat, uses nothing */
    {.p_namespace = "x", .p_name = "bad", .p_running = 1, .p_budget_state = BUDGET_BAD},
    {.p_namespace = "kube-system", .p_name = "dcgm", .p_running = 1}, /* not a tenant */
};
static const struct pod_list pod_list = {pods, 5, NULL};

static struct config cfg = {.c_floor_mib = 1536, .c_gpu_total_mib = 15360};

static struct policy_candidate
cand(int pod, int64_t used, int64_t here, int eligible, const char *why)
{
    struct policy_candidate c = {
        .pc_pod = &pods[pod],
        .pc_namespace = pods[pod].p_namespace,
        .pc_name = pods[pod].p_name,
        .pc_used_mib = used,
        .pc_gpu_used_mib = here,
        .pc_has_budget = pods[pod].p_budget_state == BUDGET_OK,
        .pc_budget_mib = pods[pod].p_budget_mib,
        .pc_overshoot_mib = used - pods[pod].p_budget_mib,
        .pc_eligible = eligible,
        .pc_why_not = why,
    };
    return c;
}

static json_t *
node_json(const struct seating_node *n)
{
    json_t *j = budgets_node_json(n);

    assert_non_null(j);
    return j;
}

/* Node scope: one card, gpu null; every pod's seat counted once. */
static void
test_node_scope(void **state)
{
    struct policy_candidate c[] = {
        cand(1, 1000, 1000, 0, "within_budget"), cand(0, 9000, 9000, 1, NULL),
        cand(2, 0, 0, 0, "not_running"), cand(3, 10, 10, 0, "bad_budget"),
        cand(4, 0, 0, 0, "no_budget"),
    };
    struct gather_result gr = {.gr_status = GATHER_DECIDED};
    struct seating_node n;
    json_t *j, *t;

    (void)state;
    gr.gr_policy.pr_outcome = POLICY_VICTIM;
    gr.gr_policy.pr_free_known = 1;
    gr.gr_policy.pr_free_mib = 500;
    gr.gr_policy.pr_candidates = c;
    gr.gr_policy.pr_candidate_count = 5;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, 1, NODE_CAPACITY_OK, 5000,
                                        NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_budgets_mib, 5700);
    assert_int_equal(n.sn_bad_budgets, 1);
    assert_true(n.sn_overcommitted);
    assert_int_equal(n.sn_card_count, 1);
    assert_null(n.sn_cards[0].sc_gpu);
    assert_int_equal(n.sn_cards[0].sc_tenant_count, 4); /* dcgm is not on the chart */
    j = node_json(&n);
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "gpu")));
    t = json_array_get(json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "tenants"), 0);
    assert_string_equal(json_string_value(json_object_get(t, "pod")), "ml"); /* largest first */
    assert_int_equal(json_integer_value(json_object_get(t, "overshoot_mib")), 6000);
    assert_true(json_is_true(json_object_get(t, "over_budget")));
    assert_true(json_is_true(json_object_get(j, "overcommitted")));
    assert_string_equal(json_string_value(json_object_get(j, "capacity")), "advertised");
    json_decref(j);
    seating_node_free(&n);

    /* The capacity words. */
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, 1, NODE_CAPACITY_ABSENT, 0,
                                        NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_capacity, SEATING_CAPACITY_NOT_ADVERTISED);
    assert_false(n.sn_overcommitted);
    seating_node_free(&n);
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, 0, NODE_CAPACITY_OK, 0,
                                        "kube: HTTP 403", &cfg, &n),
                     0);
    assert_int_equal(n.sn_capacity, SEATING_CAPACITY_UNKNOWN);
    assert_string_equal(n.sn_capacity_error, "kube: HTTP 403");
    seating_node_free(&n);
}

/* GPU scope: a card per GPU, each tenant's use there, its budget held against
 * its use over every GPU; one GPU's impossible reading is said on its card. */
static void
test_gpu_scope(void **state)
{
    struct policy_candidate a[] = {cand(0, 9000, 6000, 1, NULL),
                                   cand(1, 1000, 1000, 0, "within_budget")};
    struct policy_candidate b[] = {cand(0, 9000, 3000, 0, "within_budget")};
    struct gather_result gpus[3] = {
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-aaaa"},
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-bbbb"},
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-cccc"},
    };
    struct gather_result gr = {.gr_status = GATHER_DECIDED, .gr_gpus = gpus, .gr_gpu_count = 3};
    struct seating s = {0};
    struct seating_node n;
    struct page_view v = {0};
    struct buf html;
    json_t *j, *cards;

    (void)state;
    gpus[0].gr_policy = (struct policy_result){.pr_outcome = POLICY_VICTIM, .pr_free_known = 1,
                                               .pr_free_mib = 500, .pr_candidates = a,
                                               .pr_candidate_count = 2};
    gpus[1].gr_policy = (struct policy_result){.pr_outcome = POLICY_SKIPPED_RECOVERED,
                                               .pr_free_known = 1, .pr_free_mib = 12000,
                                               .pr_candidates = b, .pr_candidate_count = 1};
    gpus[2].gr_policy = (struct policy_result){.pr_outcome = POLICY_SKIPPED_TELEMETRY};
    snprintf(gpus[2].gr_policy.pr_reason, sizeof(gpus[2].gr_policy.pr_reason),
             "GPU-cccc reads more than the card holds");
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, 1, NODE_CAPACITY_OK, 14000,
                                        NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_card_count, 3);
    assert_int_equal(n.sn_budgets_mib, 5700); /* once per node, not per GPU */
    assert_string_equal(n.sn_cards[0].sc_gpu, "GPU-aaaa");
    assert_int_equal(n.sn_cards[0].sc_tenants[0].st_used_mib, 6000);
    assert_int_equal(n.sn_cards[0].sc_tenants[0].st_total_used_mib, 9000);
    assert_int_equal(n.sn_cards[0].sc_tenants[0].st_over_here_mib, 6000);
    assert_int_equal(n.sn_cards[1].sc_tenants[0].st_used_mib, 3000);
    assert_int_equal(n.sn_cards[1].sc_tenants[0].st_over_here_mib, 3000);
    assert_int_equal(n.sn_cards[0].sc_used_mib, 7000);
    assert_string_equal(n.sn_cards[2].sc_error, "GPU-cccc reads more than the card holds");
    assert_string_equal(n.sn_cards[0].sc_error, "");

    j = node_json(&n);
    cards = json_object_get(j, "gpus");
    assert_int_equal(json_array_size(cards), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cards, 1), "gpu")),
                        "GPU-bbbb");
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(json_array_get(cards, 1), "tenants"), 0),
                         "total_used_mib")),
                     9000);
    assert_true(json_is_true(json_object_get(json_array_get(cards, 0), "below_floor")));
    assert_true(json_is_false(json_object_get(json_array_get(cards, 1), "below_floor")));
    assert_true(json_is_string(json_object_get(json_array_get(cards, 2), "error")));
    json_decref(j);

    /* The page: one SVG per GPU, the over-budget tenant marked on both cards. */
    s.s_nodes = &n;
    s.s_node_count = 1;
    v.pv_seating = &s;
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    {
        size_t svgs = 0, over = 0;
        for (const char *p = html.b_data; (p = strstr(p, "<svg class=\"card\"")) != NULL; p++)
            svgs++;
        for (const char *p = html.b_data; (p = strstr(p, "<g class=\"tenant over-budget\"")) != NULL;
             p++)
            over++;
        assert_int_equal(svgs, 3);
        assert_int_equal(over, 2);
    }
    assert_non_null(strstr(html.b_data, "data-gpu=\"GPU-bbbb\""));
    assert_non_null(strstr(html.b_data, "6000 (9000 on all GPUs)"));
    assert_non_null(strstr(html.b_data, "This GPU's reading is not usable: GPU-cccc reads more"));
    buf_free(&html);
    seating_node_free(&n);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_scope),
        cmocka_unit_test(test_gpu_scope),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
