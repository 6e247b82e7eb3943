/* page_keys.h -- the keys under a card's row: the numbers of bars too narrow to name */
#ifndef GVW_PAGE_KEYS_H
#define GVW_PAGE_KEYS_H

#include <stddef.h>

#include "buf.h"

#define PAGE_CHAR_PX 6.6 /* an SVG label character at font-size 11 */
#define PAGE_KEY_LANE_H 13

struct page_key {
    double pk_mid;         /* the middle of its bar */
    size_t pk_num;         /* the tenant's key: its row in the card's table */
    const char *pk_colour; /* static: its bars' colour */
};

/* The keys of one row, laid out together once the row is drawn. */
struct page_keys {
    struct page_key *pk_items; /* owned */
    size_t pk_count, pk_cap;
    int pk_lanes;             /* 1 or 2 */
    int pk_base_y;            /* the first lane's baseline */
    int pk_bar_y;             /* the row's bottom, where a leader starts */
    double pk_left, pk_right; /* the lanes' extent */
};

/* Room for cap keys (one per tenant). 0, or -1 when out of memory. */
int page_keys_init(struct page_keys *k, size_t cap, int lanes, int base_y, int bar_y,
                   double left, double right);
/* Adds tenant num's key under the bar whose middle is mid (in order of mid). */
void page_keys_add(struct page_keys *k, double mid, size_t num, const char *colour);
/*
 * Draws every key: each under its bar when it can be, else moved along its
 * lane just enough that none overlap, with a leader line up to its bar; when
 * one lane cannot hold them all and there are two, they alternate. A key no
 * lane has room for is left out (the bar's <title> and the table name it).
 * 0, or -1 when out grows too big.
 */
int page_keys_draw(struct buf *out, const struct page_keys *k);
void page_keys_free(struct page_keys *k);

#endif
