/* page_text.h -- the text every part of the seating page writes: names HTML-escaped,
 * times in UTC */
#ifndef GVW_PAGE_TEXT_H
#define GVW_PAGE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends s HTML-escaped (& < > " ' and control bytes); NULL is "". 0 or -1. */
int page_html_escape(struct buf *out, const char *s);

/* ms (unix) as "YYYY-MM-DD HH:MM:SS" in UTC, or "?". */
void page_html_utc(int64_t ms, char *buf, size_t len);

#endif
