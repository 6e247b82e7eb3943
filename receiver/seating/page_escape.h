/* page_escape.h -- HTML escaping for every string the seating page shows */
#ifndef GVW_PAGE_ESCAPE_H
#define GVW_PAGE_ESCAPE_H

#include "buf.h"

/* Appends s HTML-escaped (& < > " ' and control bytes); NULL is "". 0 or -1. */
int page_html_escape(struct buf *out, const char *s);

#endif
