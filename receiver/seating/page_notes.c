/* page_notes.c -- the page's sentences around the cards: who is over budget, and why
 * there are no decisions yet
 *
 * Over budget is the incident (the one tenant that starves the others), so it
 * heads the page in the loudest style there is; an over-committed node (more
 * seats promised than advertised) is a planning note and stays in the node's
 * own line. "No decisions yet" alone cannot tell a quiet card from an
 * Alertmanager that never reaches us: the alerts the store received since
 * start-up tell them apart. */
#include "page_notes.h"

#include <inttypes.h>
#include <string.h>

#include "page_text.h"

/* Whether t, on node n, was already named (GPU scope: one tenant, many cards). */
static int
named(const struct seating_tenant *const *list, size_t count,
      const struct seating_tenant *t)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->st_namespace, t->st_namespace) == 0 &&
            strcmp(list[i]->st_pod, t->st_pod) == 0)
            return 1;
    return 0;
}

static int
alarm_line(struct buf *out, const struct seating_node *n, const struct seating_tenant *t)
{
    if (buf_printf(out, "<p class=\"over-budget\">OVER BUDGET: <span class=\"name\">") ||
        page_html_escape(out, t->st_namespace) || buf_printf(out, "/") ||
        page_html_escape(out, t->st_pod) || buf_printf(out, "</span> on ") ||
        page_html_escape(out, n->sn_node))
        return -1;
    return buf_printf(out,
                      " uses %" PRId64 " MiB of its %" PRId64 " MiB budget: %" PRId64
                      " MiB over%s.</p>",
                      t->st_total_used_mib, t->st_budget_mib, t->st_overshoot_mib,
                      t->st_eligible ? "" : " (not eligible: see its card)");
}

int
page_html_over_budget(struct buf *out, const struct seating *s)
{
    const struct seating_tenant *shown[PAGE_ALARM_NAMED];
    size_t count = 0, more = 0;

    for (size_t i = 0; i < s->s_node_count; i++) {
        const struct seating_node *n = &s->s_nodes[i];
        size_t first = count; /* this node's names start here */

        for (size_t k = 0; k < n->sn_card_count; k++) {
            const struct seating_card *c = &n->sn_cards[k];

            for (size_t j = 0; j < c->sc_tenant_count; j++) {
                const struct seating_tenant *t = &c->sc_tenants[j];

                if (t->st_budget_state != BUDGET_OK || t->st_overshoot_mib <= 0 ||
                    named(shown + first, count - first, t))
                    continue;
                if (count == PAGE_ALARM_NAMED) {
                    more++; /* may count a GPU-scope tenant twice: said as "more" */
                    continue;
                }
                if (count == 0 && buf_printf(out, "<div class=\"alarm\" role=\"alert\">"))
                    return -1;
                if (alarm_line(out, n, t) == -1)
                    return -1;
                shown[count++] = t;
            }
        }
    }
    if (count == 0)
        return 0;
    if (more > 0 && buf_printf(out, "<p>And more over budget: each card's table marks "
                                    "them.</p>"))
        return -1;
    return buf_printf(out, "</div>");
}

int
page_html_no_decisions(struct buf *out, const struct page_view *v)
{
    const struct page_alerts *a = v->pv_alerts;
    const char *triggers = v->pv_triggers ? v->pv_triggers : "";
    char since[32], last[32];

    if (a == NULL)
        return buf_printf(out, "<p class=\"no-decisions\">No decisions yet.</p>");
    if (a->pa_error != NULL)
        return buf_printf(out, "<p class=\"no-decisions\">No decisions yet; the alerts "
                               "received cannot be read: ") ||
               page_html_escape(out, a->pa_error) || buf_printf(out, "</p>");
    page_html_utc(a->pa_since_ms, since, sizeof(since));
    if (a->pa_count == 0)
        return buf_printf(out,
                          "<p class=\"no-decisions\">No decisions yet; no alert received "
                          "since start-up (%s UTC). If a trigger (",
                          since) ||
               page_html_escape(out, triggers) ||
               buf_printf(out, ") has fired, Alertmanager is not reaching "
                               "<code>POST /webhook</code>: check its route and the "
                               "bearer token.</p>");
    page_html_utc(a->pa_last_ms, last, sizeof(last));
    if (buf_printf(out,
                   "<p class=\"no-decisions\">No decisions yet; %s%" PRId64
                   " alert%s received since start-up (%s UTC), the last at %s UTC; ",
                   a->pa_capped ? "at least " : "", a->pa_count,
                   a->pa_count == 1 ? "" : "s", since, last))
        return -1;
    if (a->pa_triggers == 0)
        return buf_printf(out, "none a firing trigger (") ||
               page_html_escape(out, triggers) || buf_printf(out, ").</p>");
    return buf_printf(
        out, "%" PRId64 " of them a firing trigger, %s.</p>", a->pa_triggers,
        v->pv_leader_election ? "but only the replica that leads decides: this one "
                                "follows, or has only just taken over"
                              : "whose decision is not recorded yet (see "
                                "<code>gpu_vram_watchdog_decisions_queued</code>)");
}
