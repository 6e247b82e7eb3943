/* page_idle.c -- the page's list of seats held by pods on no GPU card (GPU scope)
 *
 * Under the node's cards, so a tenant whose pod runs nothing on any GPU still
 * finds its seat, and the budgets on the page add up to the node's sum. */
#include "page_idle.h"

#include <inttypes.h>
#include <string.h>

#include "page_text.h"

static int
idle_row(struct buf *out, const struct seating_tenant *t)
{
    if (buf_printf(out, "<tr class=\"idle-tenant\"><td class=\"name\">") ||
        page_html_escape(out, t->st_namespace) || buf_printf(out, "/") ||
        page_html_escape(out, t->st_pod) ||
        buf_printf(
            out, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td>",
            t->st_used_mib, t->st_total_used_mib))
        return -1;
    if (t->st_budget_state == BUDGET_OK
            ? buf_printf(out, "<td class=\"n\">%" PRId64 "</td>", t->st_budget_mib)
            : buf_printf(out, "<td class=\"n\">unreadable</td>"))
        return -1;
    if (buf_printf(out, "<td>no: ") ||
        page_html_escape(out, t->st_why_not ? t->st_why_not : "?"))
        return -1;
    return buf_printf(out, "</td></tr>");
}

int
page_html_idle(struct buf *out, const struct seating_node *n)
{
    if (n->sn_idle_count == 0)
        return 0;
    if (buf_printf(
            out,
            "<div class=\"idle\"><h3>Seated, using no GPU</h3><p>These pods hold a "
            "seat (their budget counts in the node's declared budgets) but use "
            "no VRAM on any of its GPUs, so no card shows them.</p>"
            "<table class=\"idle-tenants\"><tr><th>namespace/pod</th><th>used MiB "
            "on GPUs</th><th>used MiB in all (series without a GPU)</th><th>budget MiB</th>"
            "<th>eligible</th></tr>"))
        return -1;
    for (size_t i = 0; i < n->sn_idle_count; i++)
        if (idle_row(out, &n->sn_idle[i]) == -1)
            return -1;
    return buf_printf(out, "</table></div>");
}
