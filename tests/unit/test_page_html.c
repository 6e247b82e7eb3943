/* test_page_html.c -- the seating chart page: hostile names come out inert, the facts all
 * show */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "page_html.h"

#define EVIL_POD "<script>alert(1)</script>"
#define EVIL_NS "ns\"onload='x'&amp;"

static void
assert_has(const char *html, const char *needle)
{
    if (strstr(html, needle) == NULL)
        fail_msg("page lacks \"%s\"", needle);
}

static void
render(const struct seating *s, const struct page_decision *d, size_t nd, struct buf *b)
{
    struct page_view v = {.pv_seating = s,
                          .pv_decisions = d,
                          .pv_decision_count = nd,
                          .pv_now_ms = 1780394400000LL,
                          .pv_dry_run = 1};

    buf_init(b, 1 << 20);
    assert_int_equal(page_html_render(b, &v), 0);
}

static void
test_hostile_names(void **state)
{
    struct seating_tenant t[] = {
        {EVIL_NS, EVIL_POD, 9000, 9000, BUDGET_OK, 3000, 6000, 6000, 1, NULL},
        {"llm", "vllm-0", 2000, 2000, BUDGET_OK, 4000, -2000, 0, 0, "within_budget"},
        {"x", "bad-budget", 10, 10, BUDGET_BAD, 0, 0, 0, 0, "bad_budget"},
    };
    struct seating_card card = {.sc_gpu = "GPU-<i>uuid</i>",
                                .sc_total_mib = 15360,
                                .sc_free_known = 1,
                                .sc_free_mib = 400,
                                .sc_used_mib = 11010,
                                .sc_tenants = t,
                                .sc_tenant_count = 3};
    struct seating_node node = {.sn_node = "node<&>\"'",
                                .sn_capacity = SEATING_CAPACITY_OK,
                                .sn_capacity_mib = 14000,
                                .sn_budgets_known = 1,
                                .sn_budgets_mib = 7000,
                                .sn_bad_budgets = 1,
                                .sn_floor_mib = 1536,
                                .sn_reading_ok = 1,
                                .sn_cards = &card,
                                .sn_card_count = 1};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct page_decision d = {
        7, 1780394400000LL, "node<&>\"'", "would_recycle", EVIL_NS "/" EVIL_POD, NULL};
    struct buf b;

    (void)state;
    render(&s, &d, 1, &b);
    /* Inert: no tag, attribute or entity from a name survives. */
    assert_null(strstr(b.b_data, "<script"));
    /* No outside assets: the page names no URL at all. */
    assert_null(strstr(b.b_data, "http://"));
    assert_null(strstr(b.b_data, "https://"));
    assert_null(strstr(b.b_data, "<i>"));
    assert_null(strstr(b.b_data, "onload='"));
    assert_null(strstr(b.b_data, "\"onload"));
    assert_null(strstr(b.b_data, "node<&>"));
    assert_has(b.b_data, "&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_has(b.b_data, "data-pod=\"&lt;script&gt;alert(1)&lt;/script&gt;\"");
    assert_has(b.b_data, "data-namespace=\"ns&quot;onload=&#39;x&#39;&amp;amp;\"");
    assert_has(b.b_data, "<h2>Node node&lt;&amp;&gt;&quot;&#39;</h2>");
    assert_has(b.b_data, "data-gpu=\"GPU-&lt;i&gt;uuid&lt;/i&gt;\"");
    /* The facts: one SVG, the over-budget segment in red, the floor, the table. */
    assert_non_null(strstr(b.b_data, "<svg "));
    assert_null(strstr(strstr(b.b_data, "<svg ") + 1, "<svg "));
    assert_has(b.b_data, "<g class=\"tenant over-budget\" data-namespace=");
    assert_has(b.b_data, "<rect class=\"over\"");
    assert_has(b.b_data, "fill=\"#c62828\"");
    assert_has(b.b_data, "<line class=\"floor\"");
    assert_has(b.b_data, "advertised capacity 14000 MiB");
    assert_has(b.b_data, "1 pod(s) declare a budget that cannot be read");
    assert_has(b.b_data, "below the floor");
    assert_has(b.b_data, "<td>no: within_budget</td>");
    assert_has(b.b_data, "<td class=\"n\">7</td><td>2026-06-02 10:00:00</td>");
    assert_has(b.b_data, "<td class=\"result\">would_recycle</td>");
    /* Only one tenant is over: vllm-0 is not marked. */
    assert_null(strstr(strstr(b.b_data, "tenant over-budget") + 1,
                       "<g class=\"tenant over-budget\""));
    /* A text browser prints the SVG's labels as one run of text: each ends
     * in whitespace, so "0" and "15360 MiB on the card" never read "015360". */
    assert_null(strstr(b.b_data, "</text><"));
    assert_has(b.b_data, ">0</text>\n<text");
    buf_free(&b);
}

static void
test_not_advertised_and_no_reading(void **state)
{
    struct seating_card card = {.sc_total_mib = 15360};
    struct seating_node node = {.sn_node = "gpu-1",
                                .sn_capacity = SEATING_CAPACITY_NOT_ADVERTISED,
                                .sn_floor_mib = 1536,
                                .sn_error = "prometheus: <down>",
                                .sn_cards = &card,
                                .sn_card_count = 1};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct buf b;

    (void)state;
    render(&s, NULL, 0, &b);
    assert_has(b.b_data, "The node does not advertise the capacity");
    assert_has(b.b_data, "The reading is incomplete: prometheus: &lt;down&gt;");
    assert_has(b.b_data, "free VRAM unknown");
    assert_has(b.b_data, "Tenants unknown: the reading is incomplete.");
    assert_has(b.b_data, "No decisions yet.");
    buf_free(&b);
}

static void
test_over_committed_and_too_big(void **state)
{
    struct seating_tenant t = {"a",   "b",    100, 100, BUDGET_OK,
                               20000, -19900, 0,   0,   "within_budget"};
    struct seating_card card = {
        .sc_total_mib = 15360, .sc_tenants = &t, .sc_tenant_count = 1};
    struct seating_node node = {.sn_node = "gpu-1",
                                .sn_capacity = SEATING_CAPACITY_OK,
                                .sn_capacity_mib = 14000,
                                .sn_budgets_known = 1,
                                .sn_budgets_mib = 20000,
                                .sn_overcommitted = 1,
                                .sn_floor_mib = 1536,
                                .sn_reading_ok = 1,
                                .sn_cards = &card,
                                .sn_card_count = 1};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct page_view v = {.pv_seating = &s};
    struct buf b;

    (void)state;
    render(&s, NULL, 0, &b);
    assert_has(b.b_data, "over-committed by 6000 MiB");
    assert_has(b.b_data, "advertised capacity 14000 MiB: OVER-COMMITTED");
    buf_free(&b);
    /* A cap too small: -1, never a cut page. */
    buf_init(&b, 100);
    assert_int_equal(page_html_render(&b, &v), -1);
    buf_free(&b);
}

/* GPU scope: the seats held by pods on no card, under the cards, names inert. */
static void
test_idle_tenants(void **state)
{
    struct seating_tenant idle[] = {
        {EVIL_NS, EVIL_POD, 0, 0, BUDGET_OK, 1200, -1200, 0, 0, "not_running"},
        {"x", "bad<i>", 0, 0, BUDGET_BAD, 0, 0, 0, 0, "bad_budget"},
    };
    struct seating_card card = {.sc_gpu = "GPU-0", .sc_total_mib = 15360};
    struct seating_node node = {.sn_node = "gpu-2",
                                .sn_capacity = SEATING_CAPACITY_OK,
                                .sn_capacity_mib = 14000,
                                .sn_budgets_known = 1,
                                .sn_budgets_mib = 1200,
                                .sn_bad_budgets = 1,
                                .sn_floor_mib = 1536,
                                .sn_reading_ok = 1,
                                .sn_cards = &card,
                                .sn_card_count = 1,
                                .sn_idle = idle,
                                .sn_idle_count = 2};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct buf b;
    const char *cards, *list;

    (void)state;
    render(&s, NULL, 0, &b);
    cards = strstr(b.b_data, "data-gpu=\"GPU-0\"");
    list = strstr(b.b_data, "<h3>Seated, using no GPU</h3>");
    assert_non_null(cards);
    assert_non_null(list);
    assert_true(list > cards); /* under the node's cards, inside its section */
    assert_null(strstr(list, "<section")); /* (no other node follows) */
    assert_has(list, "<table class=\"idle-tenants\">");
    assert_has(
        list,
        "<tr class=\"idle-tenant\"><td class=\"name\">ns&quot;onload=&#39;x&#39;"
        "&amp;amp;/&lt;script&gt;alert(1)&lt;/script&gt;</td><td class=\"n\">0</td>"
        "<td class=\"n\">0</td><td class=\"n\">1200</td><td>no: not_running</td></tr>");
    assert_has(
        list,
        "<td class=\"name\">x/bad&lt;i&gt;</td><td class=\"n\">0</td><td class=\"n\">"
        "0</td><td class=\"n\">unreadable</td><td>no: bad_budget</td>");
    assert_null(strstr(b.b_data, "<script"));
    assert_null(strstr(b.b_data, "<i>"));
    assert_null(strstr(b.b_data, "\"onload"));
    buf_free(&b);

    /* None to list (node scope, or every seat on a card): no heading at all. */
    node.sn_idle_count = 0;
    render(&s, NULL, 0, &b);
    assert_null(strstr(b.b_data, "Seated, using no GPU"));
    assert_null(strstr(b.b_data, "idle-tenant"));
    buf_free(&b);
}

/* GPU scope: eight cards, one decision per GPU; each decision row names its GPU
 * (escaped) beside the node, as `audit`'s table does, or two rows of one node
 * would be told apart by their id alone. */
static void
test_decisions_name_the_gpu(void **state)
{
    struct seating_node node = {.sn_node = "gpu-8", .sn_floor_mib = 1536};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct page_decision d[] = {
        {12, 1780394400000LL, "gpu-8", "would_recycle", "t/p7", "GPU-<7>"},
        {11, 1780394400000LL, "gpu-8", "skipped_recovered", NULL, NULL},
    };
    struct buf b;

    (void)state;
    render(&s, d, 2, &b);
    assert_has(b.b_data,
               "<td class=\"n\">12</td><td>2026-06-02 10:00:00</td>"
               "<td>gpu-8/GPU-&lt;7&gt;</td><td class=\"result\">would_recycle");
    /* node scope: the node alone */
    assert_has(b.b_data, "<td class=\"n\">11</td><td>2026-06-02 10:00:00</td>"
                         "<td>gpu-8</td><td class=\"result\">skipped_recovered");
    buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_not_advertised_and_no_reading),
        cmocka_unit_test(test_over_committed_and_too_big),
        cmocka_unit_test(test_idle_tenants),
        cmocka_unit_test(test_decisions_name_the_gpu),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
