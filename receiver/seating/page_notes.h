/* page_notes.h -- the page's sentences around the cards: who is over budget, and why
 * there are no decisions yet */
#ifndef GVW_PAGE_NOTES_H
#define GVW_PAGE_NOTES_H

#include "buf.h"
#include "page_view.h"
#include "seating.h"

/* Over-budget tenants named in the alarm at the top; the rest are counted. */
#define PAGE_ALARM_NAMED 10

/*
 * Appends, when some tenant uses more than its budget, the page's most
 * prominent block (class "alarm"): one line per such tenant (once per node,
 * however many of its GPUs it uses), naming it, its node, its use, its
 * budget and its overshoot, names HTML-escaped; nothing otherwise. 0 or -1.
 */
int page_html_over_budget(struct buf *out, const struct seating *s);

/*
 * Appends the paragraph shown instead of the decisions table when there is
 * none: whether any alert arrived since start-up and, if some did, whether
 * any was a trigger, from v->pv_alerts. 0 or -1.
 */
int page_html_no_decisions(struct buf *out, const struct page_view *v);

#endif
