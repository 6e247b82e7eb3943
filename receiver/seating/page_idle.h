/* page_idle.h -- the page's list of seats held by pods on no GPU card (GPU scope) */
#ifndef GVW_PAGE_IDLE_H
#define GVW_PAGE_IDLE_H

#include "buf.h"
#include "seating.h"

/*
 * Appends, when n->sn_idle is not empty, a heading and a table of the pods
 * that hold a seat but use no GPU (class "idle-tenants", one row of class
 * "idle-tenant" each, names HTML-escaped); nothing otherwise. 0 or -1.
 */
int page_html_idle(struct buf *out, const struct seating_node *n);

#endif
