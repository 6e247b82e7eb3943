/* test_seating.c -- the seating facts from a gather result: node scope, GPU scope,
 * capacity words */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "budgets.h"
#include "lib/terminal_safe.h"
#include "page_html.h"
#include "seating.h"

static struct pod pods[] = {
    {.p_namespace = "immich",
     .p_name = "ml",
     .p_running = 1,
     .p_budget_state = BUDGET_OK,
     .p_budget_mib = 3000},
    {.p_namespace = "llm",
     .p_name = "vllm",
     .p_running = 1,
     .p_budget_state = BUDGET_OK,
     .p_budget_mib = 2000},
    {.p_namespace = "portal",
     .p_name = "tts",
     .p_budget_state = BUDGET_OK,
     .p_budget_mib = 700}, /* pending: holds a seat, uses nothing */
    {.p_namespace = "x", .p_name = "bad", .p_running = 1, .p_budget_state = BUDGET_BAD},
    {.p_namespace = "kube-system", .p_name = "dcgm", .p_running = 1}, /* not a tenant */
};
static const struct pod_list pod_list = {.pl_pods = pods, .pl_count = 5};

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
        cand(2, 0, 0, 0, "not_running"),         cand(3, 10, 10, 0, "bad_budget"),
        cand(4, 0, 0, 0, "no_budget"),
    };
    struct gather_answer gr = {.gr_status = GATHER_DECIDED};
    struct seating_node n;
    json_t *j, *t;

    (void)state;
    gr.gr_policy.pr_outcome = POLICY_VICTIM;
    gr.gr_policy.pr_free_known = 1;
    gr.gr_policy.pr_free_mib = 500;
    gr.gr_policy.pr_candidates = c;
    gr.gr_policy.pr_candidate_count = 5;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_OK, 5000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_budgets_mib, 5700);
    assert_int_equal(n.sn_bad_budgets, 1);
    assert_true(n.sn_overcommitted);
    assert_int_equal(n.sn_card_count, 1);
    assert_null(n.sn_cards[0].sc_gpu);
    assert_int_equal(n.sn_cards[0].sc_tenant_count, 4); /* dcgm is not on the chart */
    assert_int_equal(n.sn_idle_count, 0); /* the one card lists portal/tts and x/bad */
    j = node_json(&n);
    assert_true(json_is_array(json_object_get(j, "idle_tenants")));
    assert_int_equal(json_array_size(json_object_get(j, "idle_tenants")), 0);
    assert_true(json_is_null(
        json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "gpu")));
    t = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "tenants"), 0);
    assert_string_equal(json_string_value(json_object_get(t, "pod")),
                        "ml"); /* largest first */
    assert_int_equal(json_integer_value(json_object_get(t, "overshoot_mib")), 6000);
    assert_true(json_is_true(json_object_get(t, "over_budget")));
    assert_true(json_is_true(json_object_get(j, "overcommitted")));
    assert_string_equal(json_string_value(json_object_get(j, "capacity")), "advertised");
    json_decref(j);
    seating_node_free(&n);

    /* The capacity words. */
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_ABSENT, 0, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_capacity, SEATING_CAPACITY_NOT_ADVERTISED);
    assert_false(n.sn_overcommitted);
    seating_node_free(&n);
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, NULL, 0,
                                        NODE_CAPACITY_OK, 0, "kube: HTTP 403", &cfg, &n),
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
    struct gather_answer gpus[3] = {
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-aaaa"},
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-bbbb"},
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-cccc"},
    };
    struct gather_answer gr = {
        .gr_status = GATHER_DECIDED, .gr_gpus = gpus, .gr_gpu_count = 3};
    struct seating s = {0};
    struct seating_node n;
    struct page_view v = {0};
    struct buf html;
    json_t *j, *cards;

    (void)state;
    gpus[0].gr_policy = (struct policy_answer){.pr_outcome = POLICY_VICTIM,
                                               .pr_free_known = 1,
                                               .pr_free_mib = 500,
                                               .pr_candidates = a,
                                               .pr_candidate_count = 2};
    gpus[1].gr_policy = (struct policy_answer){.pr_outcome = POLICY_SKIPPED_RECOVERED,
                                               .pr_free_known = 1,
                                               .pr_free_mib = 12000,
                                               .pr_candidates = b,
                                               .pr_candidate_count = 1};
    gpus[2].gr_policy = (struct policy_answer){.pr_outcome = POLICY_SKIPPED_TELEMETRY};
    snprintf(gpus[2].gr_policy.pr_reason, sizeof(gpus[2].gr_policy.pr_reason),
             "GPU-cccc reads more than the card holds");
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
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
    assert_string_equal(n.sn_cards[2].sc_error,
                        "GPU-cccc reads more than the card holds");
    assert_string_equal(n.sn_cards[0].sc_error, "");
    /* portal/tts (pending) and x/bad use no GPU: no card lists them, yet their
     * seats count; they are listed once for the node, so the budgets add up. */
    assert_int_equal(n.sn_idle_count, 2);
    assert_string_equal(n.sn_idle[0].st_pod, "tts");
    assert_string_equal(n.sn_idle[1].st_pod, "bad");
    assert_int_equal(n.sn_cards[0].sc_tenants[0].st_budget_mib +
                         n.sn_cards[0].sc_tenants[1].st_budget_mib +
                         n.sn_idle[0].st_budget_mib,
                     n.sn_budgets_mib);

    j = node_json(&n);
    cards = json_object_get(j, "gpus");
    assert_int_equal(json_array_size(cards), 3);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(cards, 1), "gpu")), "GPU-bbbb");
    assert_int_equal(
        json_integer_value(json_object_get(
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
        for (const char *p = html.b_data; (p = strstr(p, "<svg class=\"card\"")) != NULL;
             p++)
            svgs++;
        for (const char *p = html.b_data;
             (p = strstr(p, "<g class=\"tenant over-budget\"")) != NULL; p++)
            over++;
        assert_int_equal(svgs, 3);
        assert_int_equal(over, 2);
    }
    assert_non_null(strstr(html.b_data, "data-gpu=\"GPU-bbbb\""));
    assert_non_null(strstr(html.b_data, "6000 (9000 on all GPUs)"));
    assert_non_null(
        strstr(html.b_data, "This GPU's reading is not usable: GPU-cccc reads more"));
    buf_free(&html);
    seating_node_free(&n);
}

/* GPU scope, seats held by pods using no GPU: listed once per node, beside
 * the cards (they were on none while their budgets counted in the node's sum). */
#define EVIL_NS "ns\"<b>&'\\"
#define EVIL_POD "pod\x01<script>alert(1)</script>"
#define SEATED(ns, name, mib)                                                            \
    {                                                                                    \
        .p_namespace = ns, .p_name = name, .p_running = 1, .p_has_controller = 1,        \
        .p_started = 1, .p_budget_state = BUDGET_OK, .p_budget_mib = mib                 \
    }

static struct pod idle_pods[] = {
    SEATED("immich", "ml", 3000), /* 9000 MiB on GPU-aaaa */
    {.p_namespace = "portal",
     .p_name = "tts",
     .p_budget_state = BUDGET_OK,
     .p_budget_mib = 700}, /* pending; a 0-byte series on GPU-bbbb */
    {.p_namespace = "x",
     .p_name = "bad",
     .p_running = 1,
     .p_has_controller = 1,
     .p_started = 1,
     .p_budget_state = BUDGET_BAD}, /* a broken seat, no use */
    SEATED("llm", "idle", 1000),    /* no series at all */
    SEATED("lab", "nan", 500),      /* NaN on GPU-bbbb: not known to be idle */
    SEATED("ops", "cpu", 100),      /* 200 MiB in a series without the GPU label */
    SEATED(EVIL_NS, EVIL_POD, 50),  /* hostile names, no use */
    {.p_namespace = "kube-system", .p_name = "dcgm", .p_running = 1}, /* no seat */
};
static const struct pod_list idle_list = {.pl_pods = idle_pods, .pl_count = 8};

static struct usage_series idle_series[] = {
    {"immich", "ml", "GPU-aaaa", 9000.0 * 1048576},
    {"portal", "tts", "GPU-bbbb", 0},
    {"lab", "nan", "GPU-bbbb", NAN},
    {"ops", "cpu", NULL, 200.0 * 1048576},
};
static const struct usage_reading idle_usage = {.ur_series = idle_series, .ur_count = 4};

static char *
print_node(const struct seating_node *n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    budgets_node_print(f, n);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void
test_gpu_scope_idle(void **state)
{
    struct policy_candidate a[] = {{.pc_pod = &idle_pods[0],
                                    .pc_namespace = "immich",
                                    .pc_name = "ml",
                                    .pc_used_mib = 9000,
                                    .pc_gpu_used_mib = 9000,
                                    .pc_has_budget = 1,
                                    .pc_budget_mib = 3000,
                                    .pc_overshoot_mib = 6000,
                                    .pc_eligible = 1}};
    struct gather_answer gpus[2] = {
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-aaaa"},
        {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-bbbb"},
    };
    struct gather_answer gr = {
        .gr_status = GATHER_DECIDED, .gr_gpus = gpus, .gr_gpu_count = 2};
    struct seating s = {0};
    struct seating_node n;
    struct page_view v = {0};
    struct buf html;
    json_t *j, *idle, *t;
    char *text, *dump;
    const char *want[][3] = {
        {"llm", "idle", "within_budget"}, {EVIL_NS, EVIL_POD, "within_budget"},
        {"ops", "cpu", "no_gpu_use"},     {"portal", "tts", "not_running"},
        {"x", "bad", "bad_budget"},
    };

    (void)state;
    gpus[0].gr_policy = (struct policy_answer){.pr_outcome = POLICY_VICTIM,
                                               .pr_free_known = 1,
                                               .pr_free_mib = 500,
                                               .pr_candidates = a,
                                               .pr_candidate_count = 1};
    gpus[1].gr_policy = (struct policy_answer){.pr_outcome = POLICY_SKIPPED_TELEMETRY};
    assert_int_equal(seating_node_build("gpu-1", &gr, &idle_list, NULL, &idle_usage, NULL,
                                        1, NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_budgets_mib, 5350);
    assert_int_equal(n.sn_bad_budgets, 1);
    /* ml is on its card, lab/nan on a GPU whose reading is unusable, dcgm holds no seat.
     */
    assert_int_equal(n.sn_idle_count, 5);
    for (size_t i = 0; i < 5; i++) {
        const struct seating_tenant *it = &n.sn_idle[i];
        assert_string_equal(it->st_namespace, want[i][0]);
        assert_string_equal(it->st_pod, want[i][1]);
        assert_string_equal(it->st_why_not, want[i][2]);
        assert_int_equal(it->st_used_mib, 0);
        assert_false(it->st_eligible);
    }
    assert_int_equal(n.sn_idle[0].st_budget_mib, 1000);
    assert_int_equal(n.sn_idle[0].st_overshoot_mib, -1000);
    assert_int_equal(n.sn_idle[2].st_total_used_mib, 200); /* its use off any GPU */
    assert_int_equal(n.sn_idle[2].st_overshoot_mib, 100);
    assert_int_equal(n.sn_idle[4].st_budget_state, BUDGET_BAD);

    /* JSON: idle_tenants beside gpus, the tenants' fields, names intact. */
    j = node_json(&n);
    assert_int_equal(json_array_size(json_object_get(j, "gpus")), 2);
    idle = json_object_get(j, "idle_tenants");
    assert_int_equal(json_array_size(idle), 5);
    t = json_array_get(idle, 3);
    assert_string_equal(json_string_value(json_object_get(t, "pod")), "tts");
    assert_int_equal(json_integer_value(json_object_get(t, "used_mib")), 0);
    assert_int_equal(json_integer_value(json_object_get(t, "budget_mib")), 700);
    assert_string_equal(json_string_value(json_object_get(t, "budget")), "declared");
    assert_true(json_is_false(json_object_get(t, "eligible")));
    assert_string_equal(json_string_value(json_object_get(t, "why_not")), "not_running");
    t = json_array_get(idle, 4);
    assert_true(json_is_null(json_object_get(t, "budget_mib")));
    assert_string_equal(json_string_value(json_object_get(t, "budget")), "unreadable");
    assert_true(json_is_true(json_object_get(json_array_get(idle, 2), "over_budget")));
    dump = json_dumps(j, JSON_COMPACT);
    assert_non_null(dump);
    assert_null(strchr(dump, '\x01')); /* escaped as \u0001 */
    assert_non_null(strstr(dump, "\"namespace\":\"ns\\\"<b>&'\\\\\""));
    assert_non_null(strstr(dump, "\"pod\":\"pod\\u0001<script>"));
    free(dump);
    json_decref(j);

    /* The table: a labelled group under the node, names last and cleaned. */
    text = print_node(&n);
    assert_non_null(strstr(text, "  seated, using no GPU: 5 pod(s) hold a budget and run "
                                 "nothing on any GPU\n"
                                 "       HERE    USED  BUDGET    OVER  ELIGIBLE"));
    assert_non_null(strstr(text, "\n          0       0     700    -700  no: not_running"
                                 "          portal/tts\n"));
    assert_non_null(strstr(text, "\n          0     200     100    +100  no: no_gpu_use"
                                 "           ops/cpu\n"));
    assert_non_null(
        strstr(text, "       0     bad       -  no: bad_budget           x/bad\n"));
    assert_non_null(strstr(text, "ns\"<b>&'\\\\/pod\\x01<script>alert(1)</script>\n"));
    assert_null(strchr(text, '\x01'));
    assert_true(strstr(text, "seated, using no GPU") >
                strstr(text, "gpu       GPU-bbbb"));
    free(text);

    /* The page: a table under the cards, every name escaped. */
    s.s_nodes = &n;
    s.s_node_count = 1;
    v.pv_seating = &s;
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    {
        size_t rows = 0;
        for (const char *p = html.b_data;
             (p = strstr(p, "<tr class=\"idle-tenant\">")) != NULL; p++)
            rows++;
        assert_int_equal(rows, 5);
    }
    assert_non_null(strstr(html.b_data, "<h3>Seated, using no GPU</h3>"));
    assert_non_null(strstr(html.b_data,
                           "<td class=\"name\">portal/tts</td><td class=\"n\">0"
                           "</td><td class=\"n\">0</td><td class=\"n\">700</td>"
                           "<td>no: not_running</td></tr>"));
    assert_non_null(strstr(html.b_data,
                           "<td class=\"name\">x/bad</td><td class=\"n\">0</td>"
                           "<td class=\"n\">0</td><td class=\"n\">unreadable</td>"));
    assert_non_null(strstr(html.b_data, "ns&quot;&lt;b&gt;&amp;&#39;\\/pod?&lt;script&gt;"
                                        "alert(1)&lt;/script&gt;</td>"));
    assert_null(strstr(html.b_data, "<script"));
    assert_null(strstr(html.b_data, "<b>"));
    assert_true(strstr(html.b_data, "Seated, using no GPU") >
                strstr(html.b_data, "data-gpu=\"GPU-bbbb\""));
    buf_free(&html);
    seating_node_free(&n);
}

/* The pods could not be listed but free VRAM is above the floor (a decision
 * would be skipped_recovered): the budgets and tenants are unknown, never 0,
 * and the chart says why, in JSON, in the table and on the page. */
static void
test_pods_unlisted(void **state)
{
    struct gather_answer gr = {.gr_status = GATHER_DECIDED};
    struct seating_node n;
    struct seating s = {.s_node_count = 1};
    struct page_view v = {.pv_seating = &s};
    struct buf html;
    char *text;
    json_t *j;

    (void)state;
    gr.gr_policy.pr_outcome = POLICY_SKIPPED_RECOVERED;
    gr.gr_policy.pr_free_known = 1;
    gr.gr_policy.pr_free_mib = 9000;
    assert_int_equal(seating_node_build("gpu-1", &gr, NULL,
                                        "listing pods on gpu-1: HTTP 500: down", NULL,
                                        NULL, 1, NODE_CAPACITY_OK, 100, NULL, &cfg, &n),
                     0);
    assert_false(n.sn_budgets_known);
    assert_false(n.sn_reading_ok);
    assert_false(n.sn_overcommitted);
    j = node_json(&n);
    assert_true(json_is_null(json_object_get(j, "budgets_mib")));
    assert_string_equal(json_string_value(json_object_get(j, "error")),
                        "listing pods on gpu-1: HTTP 500: down");
    assert_true(json_is_false(json_object_get(j, "overcommitted")));
    json_decref(j);
    text = print_node(&n);
    assert_non_null(strstr(text,
                           "  seats     100 MiB advertised, budgets unknown (the pods "
                           "could not be listed)\n"));
    assert_non_null(strstr(text, "  reading   listing pods on gpu-1: HTTP 500: down\n"));
    assert_null(strstr(text, "0 MiB of budgets"));
    assert_non_null(strstr(text, "    tenants unknown (the reading is incomplete)\n"));
    assert_null(strstr(text, "no tenants"));
    free(text);
    s.s_nodes = &n;
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    assert_non_null(strstr(html.b_data, "budgets unknown</span> (the pods could not be "
                                        "listed)"));
    assert_non_null(strstr(html.b_data, "listing pods on gpu-1: HTTP 500: down"));
    assert_null(strstr(html.b_data, "MiB of budgets declared"));
    assert_non_null(strstr(html.b_data, "Tenants unknown: the reading is incomplete."));
    assert_null(strstr(html.b_data, "No tenants"));
    buf_free(&html);
    seating_node_free(&n);

    /* Without a reason the chart still says the pods are missing. */
    assert_int_equal(seating_node_build("gpu-1", &gr, NULL, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_OK, 100, NULL, &cfg, &n),
                     0);
    assert_string_equal(n.sn_error, "the node's pods could not be listed");
    seating_node_free(&n);

    /* Prometheus down: the budgets are known, the use (so the tenants) is not. */
    memset(&gr, 0, sizeof(gr));
    gr.gr_status = GATHER_TELEMETRY;
    snprintf(gr.gr_error, sizeof(gr.gr_error), "prometheus: HTTP 503");
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_budgets_mib, 5700);
    text = print_node(&n);
    assert_non_null(strstr(text, "5700 MiB of budgets declared"));
    assert_non_null(strstr(text, "  reading   prometheus: HTTP 503\n"));
    assert_non_null(strstr(text, "    tenants unknown (the reading is incomplete)\n"));
    free(text);
    seating_node_free(&n);
}

/* A device reading: the card's free is the decision's (the device's), its
 * total the device's own, and the memory no pod accounts for is shown; a
 * computed card says so and has no unattributed figure. */
static void
test_device_card(void **state)
{
    struct policy_candidate c[] = {cand(0, 9000, 9000, 1, NULL)};
    struct device_gpu g[] = {
        {.dg_gpu = "GPU-a",
         .dg_have_free = 1,
         .dg_have_total = 1,
         .dg_have_ts = 1,
         .dg_free_bytes = 1000.0 * 1048576,
         .dg_total_bytes = 81559.0 * 1048576,
         .dg_have_unattributed = 1,
         .dg_unattributed_bytes = 2048.0 * 1048576},
        {.dg_gpu = "GPU-b",
         .dg_have_free = 1,
         .dg_have_total = 1,
         .dg_have_ts = 1,
         .dg_free_bytes = 15000.0 * 1048576,
         .dg_total_bytes = 15360.0 * 1048576},
    };
    struct device_reading dr = {.dr_gpus = g, .dr_count = 2};
    struct gather_answer units[2] = {{.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-a"},
                                     {.gr_status = GATHER_DECIDED, .gr_gpu = "GPU-b"}};
    struct gather_answer gr = {
        .gr_status = GATHER_DECIDED, .gr_gpus = units, .gr_gpu_count = 2};
    struct seating_node n;
    struct seating s = {.s_nodes = &n, .s_node_count = 1};
    struct page_view v = {.pv_seating = &s};
    struct buf html;
    json_t *j, *card;
    char *text = NULL;
    size_t len = 0;
    FILE *mem;

    (void)state;
    units[0].gr_policy = (struct policy_answer){.pr_outcome = POLICY_VICTIM,
                                                .pr_free_known = 1,
                                                .pr_free_mib = 1000,
                                                .pr_free_source = FREE_SOURCE_DEVICE,
                                                .pr_candidates = c,
                                                .pr_candidate_count = 1};
    /* GPU-b reports no unattributed series. */
    units[1].gr_policy = (struct policy_answer){.pr_outcome = POLICY_SKIPPED_RECOVERED,
                                                .pr_free_known = 1,
                                                .pr_free_mib = 15000,
                                                .pr_free_source = FREE_SOURCE_DEVICE};
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_cards[0].sc_total_mib, 81559); /* not GPU_TOTAL_MIB */
    assert_int_equal(n.sn_cards[0].sc_free_source, FREE_SOURCE_DEVICE);
    assert_true(n.sn_cards[0].sc_unattributed_known);
    assert_int_equal(n.sn_cards[0].sc_unattributed_mib, 2048);
    assert_false(n.sn_cards[1].sc_unattributed_known);
    j = node_json(&n);
    card = json_array_get(json_object_get(j, "gpus"), 0);
    assert_string_equal(json_string_value(json_object_get(card, "free_source")),
                        "device");
    assert_int_equal(json_integer_value(json_object_get(card, "unattributed_mib")), 2048);
    assert_int_equal(json_integer_value(json_object_get(card, "total_mib")), 81559);
    assert_int_equal(json_integer_value(json_object_get(card, "free_mib")), 1000);
    card = json_array_get(json_object_get(j, "gpus"), 1);
    assert_true(json_is_null(json_object_get(card, "unattributed_mib")));
    json_decref(j);
    assert_non_null(mem = open_memstream(&text, &len));
    budgets_node_print(mem, &n);
    fclose(mem);
    assert_non_null(
        strstr(text, "81559 MiB, 1000 MiB free (device), floor 1536 MiB: BELOW"));
    assert_non_null(strstr(text, "   2048 MiB no pod accounts for"));
    free(text);
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    assert_non_null(strstr(html.b_data, "<rect class=\"unattributed\""));
    assert_non_null(strstr(html.b_data, "2048 MiB no pod accounts for"));
    assert_non_null(strstr(html.b_data, "Memory no pod accounts for: 2048 MiB"));
    assert_non_null(strstr(html.b_data, "(<span class=\"free-source\">device</span>)"));
    /* GPU-b has none: one segment, on GPU-a's card. */
    assert_null(strstr(strstr(html.b_data, "<rect class=\"unattributed\"") + 1,
                       "<rect class=\"unattributed\""));
    buf_free(&html);
    seating_node_free(&n);

    /* Node scope, summed over the GPUs: known only if every GPU reports it. */
    gr = units[0];
    gr.gr_gpu = NULL;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_cards[0].sc_total_mib, 81559 + 15360);
    assert_false(n.sn_cards[0].sc_unattributed_known);
    seating_node_free(&n);
    g[1].dg_have_unattributed = 1;
    g[1].dg_unattributed_bytes = 300.0 * 1048576;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_cards[0].sc_unattributed_mib, 2348);
    seating_node_free(&n);

    /* A figure that cannot be true is not reported: +Inf or above the GPU's
     * total (the card could not be drawn), or one GPU's negative hidden in
     * the node's sum. The page still renders (it summed use + this). */
    gr = units[0];
    g[0].dg_unattributed_bytes = INFINITY;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_false(n.sn_cards[0].sc_unattributed_known);
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    assert_null(strstr(html.b_data, "<rect class=\"unattributed\""));
    buf_free(&html);
    seating_node_free(&n);
    g[0].dg_unattributed_bytes = 81560.0 * 1048576; /* one MiB above the total */
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_false(n.sn_cards[0].sc_unattributed_known);
    seating_node_free(&n);
    gr.gr_gpu = NULL;
    g[0].dg_unattributed_bytes = -50.0 * 1048576;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_false(n.sn_cards[0].sc_unattributed_known); /* not 250 */
    seating_node_free(&n);
    g[0].dg_unattributed_bytes = 2048.0 * 1048576;

    /* Computed (the device had no usable series): GPU_TOTAL_MIB, no unattributed. */
    gr.gr_policy.pr_free_source = FREE_SOURCE_COMPUTED;
    assert_int_equal(seating_node_build("gpu-1", &gr, &pod_list, NULL, NULL, &dr, 1,
                                        NODE_CAPACITY_OK, 14000, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_cards[0].sc_total_mib, 15360);
    assert_false(n.sn_cards[0].sc_unattributed_known);
    j = node_json(&n);
    card = json_array_get(json_object_get(j, "gpus"), 0);
    assert_string_equal(json_string_value(json_object_get(card, "free_source")),
                        "computed");
    assert_true(json_is_null(json_object_get(card, "unattributed_mib")));
    json_decref(j);
    seating_node_free(&n);
}

/* A budget is a tenant's own declaration, up to INT64_MAX MiB each: the
 * node's sum saturates (said over-committed) rather than overflow, and the
 * card still draws. */
static void
test_absurd_budgets(void **state)
{
    struct pod big[3];
    struct pod_list list = {.pl_pods = big, .pl_count = 3};
    struct policy_candidate c[3];
    struct gather_answer gr = {.gr_status = GATHER_DECIDED};
    struct seating_node n;
    struct seating s = {.s_nodes = &n, .s_node_count = 1};
    struct page_view v = {.pv_seating = &s};
    struct buf html;
    char *text;

    (void)state;
    for (int i = 0; i < 3; i++) {
        big[i] = (struct pod){.p_namespace = "t",
                              .p_name = i == 0   ? "a"
                                        : i == 1 ? "b"
                                                 : "c",
                              .p_running = 1,
                              .p_budget_state = BUDGET_OK,
                              .p_budget_mib = 4000000000000000000LL};
        c[i] = (struct policy_candidate){.pc_pod = &big[i],
                                         .pc_namespace = "t",
                                         .pc_name = big[i].p_name,
                                         .pc_used_mib = 100,
                                         .pc_gpu_used_mib = 100,
                                         .pc_has_budget = 1,
                                         .pc_budget_mib = big[i].p_budget_mib,
                                         .pc_overshoot_mib = 100 - big[i].p_budget_mib,
                                         .pc_why_not = "within_budget"};
    }
    gr.gr_policy = (struct policy_answer){.pr_outcome = POLICY_SKIPPED_RECOVERED,
                                          .pr_free_known = 1,
                                          .pr_free_mib = 15000,
                                          .pr_free_source = FREE_SOURCE_COMPUTED,
                                          .pr_candidates = c,
                                          .pr_candidate_count = 3};
    assert_int_equal(seating_node_build("gpu-1", &gr, &list, NULL, NULL, NULL, 1,
                                        NODE_CAPACITY_OK, 13312, NULL, &cfg, &n),
                     0);
    assert_int_equal(n.sn_budgets_mib, INT64_MAX);
    assert_true(n.sn_overcommitted);
    text = print_node(&n);
    assert_non_null(strstr(text, "OVER-COMMITTED"));
    free(text);
    buf_init(&html, 1 << 20);
    assert_int_equal(page_html_render(&html, &v), 0);
    assert_non_null(strstr(html.b_data, "over-committed by"));
    assert_non_null(strstr(html.b_data, "t/c: budget 4000000000000000000 MiB"));
    buf_free(&html);
    seating_node_free(&n);
}

/* `budgets` as a table: every string from outside (the node's name, the API's
 * errors, a GPU label, pod names) reaches the terminal with its controls,
 * bidi overrides and line separators as escapes, each row one line. */
static void
test_budgets_table_hostile(void **state)
{
    struct seating_tenant t = {.st_namespace = "ml\xc2\x9b"
                                               "2J",
                               .st_pod = "onnx\xe2\x80\xae"
                                         "1-xnno",
                               .st_used_mib = 9000,
                               .st_total_used_mib = 9000,
                               .st_budget_state = BUDGET_OK,
                               .st_budget_mib = 2000,
                               .st_overshoot_mib = 7000,
                               .st_eligible = 1};
    struct seating_card c = {.sc_gpu = "GPU-\x1b[31m",
                             .sc_total_mib = 15360,
                             .sc_free_known = 1,
                             .sc_free_mib = 500,
                             .sc_free_source = FREE_SOURCE_DEVICE,
                             .sc_tenants = &t,
                             .sc_tenant_count = 1};
    struct seating_node n = {.sn_node = "gpu-1\nnode gpu-2",
                             .sn_capacity = SEATING_CAPACITY_UNKNOWN,
                             .sn_budgets_known = 1,
                             .sn_budgets_mib = 2000,
                             .sn_floor_mib = 1536,
                             .sn_reading_ok = 1,
                             .sn_cards = &c,
                             .sn_card_count = 1};
    char *text;
    size_t lines = 0;

    (void)state;
    snprintf(n.sn_capacity_error, sizeof(n.sn_capacity_error),
             "nodes \"gpu-1\" is forbidden\xe2\x80\xa8\x07");
    snprintf(c.sc_error, sizeof(c.sc_error),
             "prometheus: \xe2\x81\xa6"
             "bad\x9b");
    text = print_node(&n);
    assert_true(terminal_safe(text));
    for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 6);
    assert_non_null(strstr(text, "node gpu-1\\nnode gpu-2\n"));
    assert_non_null(strstr(text, "capacity unknown (nodes \"gpu-1\" is "
                                 "forbidden\\u{2028}\\x07)"));
    assert_non_null(strstr(text, "  gpu       GPU-\\x1b[31m: 15360 MiB"));
    assert_non_null(strstr(text, "    reading   prometheus: \\u{2066}bad\\x9b\n"));
    assert_non_null(strstr(text, "ml\\u{009B}2J/onnx\\u{202E}1-xnno\n"));
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_scope),
        cmocka_unit_test(test_gpu_scope),
        cmocka_unit_test(test_gpu_scope_idle),
        cmocka_unit_test(test_pods_unlisted),
        cmocka_unit_test(test_device_card),
        cmocka_unit_test(test_absurd_budgets),
        cmocka_unit_test(test_budgets_table_hostile),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
