/* test_page_html.c -- the seating chart page: hostile names come out inert, the facts all
 * show */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
render_view(struct page_view *v, struct buf *b)
{
    v->pv_now_ms = 1780394400000LL;
    v->pv_dry_run = 1;
    buf_init(b, 1 << 20);
    assert_int_equal(page_html_render(b, v), 0);
}

static void
render(const struct seating *s, const struct page_decision *d, size_t nd, struct buf *b)
{
    struct page_view v = {.pv_seating = s, .pv_decisions = d, .pv_decision_count = nd};

    render_view(&v, b);
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
    assert_has(b.b_data, "advertised capacity 14000 MiB (budgets over-committed)");
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

/* A key drawn under a bar: its number, where, and in which colour. */
struct key {
    double x;
    int y, num;
    char colour[16];
};

static size_t
keys_drawn(const char *html, struct key *out, size_t max)
{
    size_t n = 0;

    for (const char *p = strstr(html, "<text class=\"key\""); p != NULL && n < max;
         p = strstr(p + 1, "<text class=\"key\"")) {
        struct key *k = &out[n];

        assert_int_equal(
            sscanf(p,
                   "<text class=\"key\" x=\"%lf\" y=\"%d\" fill=\"%15[^\"]\" "
                   "font-weight=\"bold\">%d</text>",
                   &k->x, &k->y, k->colour, &k->num),
            4);
        n++;
    }
    return n;
}

/* The colour of tenant num's swatch in the table under the card. */
static void
swatch_of(const char *html, int num, char *colour, size_t len)
{
    char tail[64];
    const char *p = html;

    snprintf(tail, sizeof(tail), "\"></span>%d</td><td class=\"name\">", num);
    p = strstr(html, tail);
    if (p == NULL)
        fail_msg("the table has no row keyed %d", num);
    while (p > html && strncmp(p, "background:", 11) != 0)
        p--;
    assert_true(p > html);
    snprintf(colour, len, "%.7s", p + 11);
}

/* Ten tenants of 20 MiB on an 80 GiB card are a fraction of a pixel wide:
 * each still carries its key, under its bar, none overlapping another, in its
 * table row's colour; wider bars say the number and as much name as fits. */
static void
test_small_tenants_keyed(void **state)
{
    struct seating_tenant t[13] = {
        {"llm", "vllm-0", 60000, 60000, BUDGET_OK, 70000, -10000, 0, 0, "within_budget"},
        {"team-a", "trainer-abcdefghijklmnop-qrstu", 8000, 8000, BUDGET_OK, 8000, 0, 0, 0,
         "within_budget"},
        {"team-b", "notebook-0", 3000, 3000, BUDGET_OK, 3000, 0, 0, 0, "within_budget"},
    };
    char names[10][32];
    struct seating_card card = {.sc_total_mib = 81920,
                                .sc_used_mib = 71200,
                                .sc_tenants = t,
                                .sc_tenant_count = 13};
    struct seating_node node = {.sn_node = "h100-1",
                                .sn_capacity = SEATING_CAPACITY_OK,
                                .sn_capacity_mib = 81920,
                                .sn_budgets_known = 1,
                                .sn_budgets_mib = 81200,
                                .sn_floor_mib = 1536,
                                .sn_reading_ok = 1,
                                .sn_cards = &card,
                                .sn_card_count = 1};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct key keys[64];
    size_t n;
    int seen[14] = {0};
    struct buf b;
    char row[160], colour[16];

    (void)state;
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof(names[i]), "tiny-%d-with-a-long-name", i + 4);
        t[3 + i] = (struct seating_tenant){"small", names[i], 20, 20, BUDGET_OK,
                                           20,      0,        0,  0,  "within_budget"};
    }
    render(&s, NULL, 0, &b);
    if (getenv("GVW_PAGE_DUMP") != NULL) { /* to look at: GVW_PAGE_DUMP=file */
        FILE *f = fopen(getenv("GVW_PAGE_DUMP"), "w");

        assert_non_null(f);
        fwrite(b.b_data, 1, b.b_len, f);
        fclose(f);
    }
    /* Every tenant has its key in the table, beside its full name. */
    for (int i = 0; i < 13; i++) {
        snprintf(row, sizeof(row), "</span>%d</td><td class=\"name\">%s/%s</td>", i + 1,
                 t[i].st_namespace, t[i].st_pod);
        assert_has(b.b_data, row);
    }
    /* Wide enough: the name; cut: the key first; narrower: the key alone. */
    assert_has(b.b_data, ">vllm-0</text>");
    assert_has(b.b_data, ">2 trainer-"); /* as much as fits, then an ellipsis */
    assert_has(b.b_data, "fill=\"#ffffff\">3</text>");
    /* Too narrow for a digit: 4..13 under their bars, in both rows. */
    n = keys_drawn(b.b_data, keys, 64);
    assert_int_equal(n, 20);
    for (size_t i = 0; i < n; i++) {
        assert_in_range(keys[i].num, 4, 13);
        swatch_of(b.b_data, keys[i].num, colour, sizeof(colour));
        assert_string_equal(keys[i].colour, colour);
        if (keys[i].y > 112) /* the use row's lanes */
            seen[keys[i].num]++;
        for (size_t j = 0; j < i; j++) /* no two keys on one lane overlap */
            if (keys[j].y == keys[i].y)
                assert_true(keys[i].x >= keys[j].x + (keys[j].num > 9 ? 13.2 : 6.6) ||
                            keys[j].x >= keys[i].x + (keys[i].num > 9 ? 13.2 : 6.6));
    }
    for (int k = 4; k <= 13; k++)
        assert_int_equal(seen[k], 1);
    assert_null(strstr(b.b_data, "</text><"));
    buf_free(&b);
}

/* Over budget is the incident: it heads the page, once per tenant however
 * many GPUs it spans, names escaped; over-committed is a note in the node's
 * line, never in the warning style. */
static void
test_over_budget_is_the_alarm(void **state)
{
    struct seating_tenant g0[] = {
        {"t", "hog", 6000, 9000, BUDGET_OK, 4000, 5000, 5000, 1, NULL},
        {EVIL_NS, EVIL_POD, 3000, 3000, BUDGET_OK, 1000, 2000, 2000, 0, "pdb"},
        {"t", "calm", 500, 500, BUDGET_OK, 4000, -3500, 0, 0, "within_budget"},
    };
    struct seating_tenant g1[] = {
        {"t", "hog", 3000, 9000, BUDGET_OK, 4000, 5000, 3000, 1, NULL},
    };
    struct seating_card cards[] = {
        {.sc_gpu = "GPU-0",
         .sc_total_mib = 15360,
         .sc_tenants = g0,
         .sc_tenant_count = 3},
        {.sc_gpu = "GPU-1",
         .sc_total_mib = 15360,
         .sc_tenants = g1,
         .sc_tenant_count = 1},
    };
    struct seating_node node = {.sn_node = "gpu-9",
                                .sn_capacity = SEATING_CAPACITY_OK,
                                .sn_capacity_mib = 14000,
                                .sn_budgets_known = 1,
                                .sn_budgets_mib = 20000,
                                .sn_overcommitted = 1,
                                .sn_floor_mib = 1536,
                                .sn_reading_ok = 1,
                                .sn_cards = cards,
                                .sn_card_count = 2};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    const char *hog = "OVER BUDGET: <span class=\"name\">t/hog</span> on gpu-9 uses 9000 "
                      "MiB of its 4000 MiB budget: 5000 MiB over.</p>";
    const char *alarm;
    struct buf b;

    (void)state;
    render(&s, NULL, 0, &b);
    /* First thing under the title, before the measurement and every node. */
    alarm = strstr(b.b_data,
                   "<h1>GPU seating chart</h1><div class=\"alarm\" role=\"alert\">");
    assert_non_null(alarm);
    assert_true(alarm < strstr(b.b_data, "Measured"));
    assert_has(alarm, hog);
    assert_null(strstr(strstr(b.b_data, hog) + 1, hog)); /* GPU-1 does not repeat it */
    assert_has(alarm,
               "OVER BUDGET: <span class=\"name\">ns&quot;onload=&#39;x&#39;&amp;amp;/"
               "&lt;script&gt;alert(1)&lt;/script&gt;</span> on gpu-9 uses 3000 MiB "
               "of its 1000 MiB budget: 2000 MiB over (not eligible: see its card).");
    assert_true(strstr(alarm, "t/calm") > strstr(alarm, "Measured")); /* the table's */
    /* Over-committed: said, as a note. */
    assert_has(b.b_data, "<span class=\"note\">over-committed by 6000 MiB</span>");
    assert_null(strstr(b.b_data, "warn\">over-committed"));
    assert_null(strstr(b.b_data, "#c62828\">advertised capacity"));
    assert_null(strstr(b.b_data, "OVER-COMMITTED"));
    assert_null(strstr(b.b_data, "<script"));
    buf_free(&b);

    /* Nobody over budget: no alarm, though the node is still over-committed. */
    g0[0].st_overshoot_mib = g1[0].st_overshoot_mib = -1;
    g0[1].st_overshoot_mib = 0;
    render(&s, NULL, 0, &b);
    assert_null(strstr(b.b_data, "class=\"alarm\""));
    assert_has(b.b_data, "over-committed by 6000 MiB");
    buf_free(&b);
}

/* More over-budget tenants than the alarm names: the rest are pointed at. */
static void
test_alarm_names_ten(void **state)
{
    struct seating_tenant t[12];
    char names[12][16];
    struct seating_card card = {
        .sc_total_mib = 81920, .sc_tenants = t, .sc_tenant_count = 12};
    struct seating_node node = {.sn_node = "n",
                                .sn_floor_mib = 1536,
                                .sn_cards = &card,
                                .sn_card_count = 1,
                                .sn_reading_ok = 1};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct buf b;
    size_t lines = 0;

    (void)state;
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof(names[i]), "p%d", i);
        t[i] = (struct seating_tenant){"ns", names[i], 200, 200, BUDGET_OK,
                                       100,  100,      100, 1,   NULL};
    }
    render(&s, NULL, 0, &b);
    for (const char *p = strstr(b.b_data, "<p class=\"over-budget\">"); p != NULL;
         p = strstr(p + 1, "<p class=\"over-budget\">"))
        lines++;
    assert_int_equal(lines, 10);
    assert_has(b.b_data, "And more over budget: each card's table marks them.");
    buf_free(&b);
}

/* "No decisions yet" says whether Alertmanager reached us since start-up. */
static void
test_no_decisions_says_why(void **state)
{
    struct seating_node node = {.sn_node = "gpu-1", .sn_floor_mib = 1536};
    struct seating s = {.s_nodes = &node, .s_node_count = 1};
    struct page_alerts a = {.pa_since_ms = 1780394400000LL};
    struct page_view v = {.pv_seating = &s, .pv_alerts = &a, .pv_triggers = "GPUVRAMLow"};
    struct buf b;

    (void)state;
    render_view(&v, &b);
    assert_has(b.b_data,
               "No decisions yet; no alert received since start-up (2026-06-02 "
               "10:00:00 UTC). If a trigger (GPUVRAMLow) has fired, Alertmanager "
               "is not reaching <code>POST /webhook</code>");
    buf_free(&b);

    a.pa_count = 3;
    a.pa_last_ms = 1780394460000LL;
    v.pv_triggers = "GPUVRAMLow, <b>x</b>";
    render_view(&v, &b);
    assert_has(b.b_data,
               "No decisions yet; 3 alerts received since start-up (2026-06-02 "
               "10:00:00 UTC), the last at 2026-06-02 10:01:00 UTC; none a firing "
               "trigger (GPUVRAMLow, &lt;b&gt;x&lt;/b&gt;).");
    buf_free(&b);

    a.pa_count = 1;
    a.pa_triggers = 1;
    v.pv_leader_election = 1;
    render_view(&v, &b);
    assert_has(b.b_data, "No decisions yet; 1 alert received since start-up");
    assert_has(b.b_data, "1 of them a firing trigger, but only the replica that leads "
                         "decides");
    buf_free(&b);

    a.pa_count = 1000;
    a.pa_capped = 1;
    v.pv_leader_election = 0;
    render_view(&v, &b);
    assert_has(b.b_data, "No decisions yet; at least 1000 alerts received");
    assert_has(b.b_data, "whose decision is not recorded yet");
    buf_free(&b);

    a.pa_error = "database <locked>";
    render_view(&v, &b);
    assert_has(b.b_data, "No decisions yet; the alerts received cannot be read: database "
                         "&lt;locked&gt;</p>");
    buf_free(&b);

    /* Decisions to show: the alerts are not the page's business. */
    {
        struct page_decision d = {5,   1780394400000LL, "gpu-1", "would_recycle", NULL,
                                  NULL};

        v.pv_decisions = &d;
        v.pv_decision_count = 1;
        render_view(&v, &b);
        assert_null(strstr(b.b_data, "No decisions yet"));
        assert_null(strstr(b.b_data, "&lt;locked&gt;"));
        buf_free(&b);
    }
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
        cmocka_unit_test(test_small_tenants_keyed),
        cmocka_unit_test(test_over_budget_is_the_alarm),
        cmocka_unit_test(test_alarm_names_ten),
        cmocka_unit_test(test_no_decisions_says_why),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
