/* page_html.h -- the seating chart as one HTML page: inline SVG per card, the last
 * decisions */
#ifndef GVW_PAGE_HTML_H
#define GVW_PAGE_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "seating.h"

/* Decisions the page lists (the audit store's newest). */
#define PAGE_DECISIONS 20

/* One decision row as the page shows it. */
struct page_decision {
    int64_t pd_id;      /* the audit id (`audit show ID`) */
    int64_t pd_time_ms; /* unix ms */
    char *pd_node;      /* owned */
    char *pd_result;    /* owned */
    char *pd_victim;    /* owned; "namespace/pod", or NULL */
    char *pd_gpu;       /* owned; the GPU in GPU scope, or NULL */
};

/* What one page shows; everything borrowed. */
struct page_view {
    const struct seating *pv_seating;
    const struct page_decision *pv_decisions; /* newest first */
    size_t pv_decision_count;
    const char *pv_decisions_error; /* why there are none to show, or NULL */
    int64_t pv_now_ms;              /* when the facts were gathered */
    int pv_dry_run;
};

/*
 * Appends the whole page to out: no JavaScript, no outside assets, every
 * name HTML-escaped (in text and in attributes). For each node and card an
 * inline SVG: the advertised capacity, each tenant's live use (its part over
 * its budget in a warning colour, class "over"), the declared budgets, the
 * floor line and the free VRAM; then the same facts as a table, readable in
 * a text browser. 0, or -1 when out gets too big or memory runs out.
 */
int page_html_render(struct buf *out, const struct page_view *v);

void page_decision_free(struct page_decision *d);

#endif
