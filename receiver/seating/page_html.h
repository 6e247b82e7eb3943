/* page_html.h -- the seating chart as one HTML page: inline SVG per card, the last
 * decisions */
#ifndef GVW_PAGE_HTML_H
#define GVW_PAGE_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "page_view.h"
#include "seating.h"

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
