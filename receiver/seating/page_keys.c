/* page_keys.c -- the keys under a card's row: the numbers of bars too narrow to name
 *
 * A bar of a few MiB on an 80 GiB card is a fraction of a pixel: its name
 * cannot be drawn on it and a label at its place would cover its neighbours'.
 * So it gets its number (its row in the card's table, in its colour) in a
 * lane under the row. The keys of one row are laid out together: from the
 * left, each at its bar or just past the previous one, then from the right
 * so the last ones stay on the card, leaders showing which bar is whose. */
#include "page_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_GAP 4.0

int
page_keys_init(struct page_keys *k, size_t cap, int lanes, int base_y, int bar_y,
               double left, double right)
{
    memset(k, 0, sizeof(*k));
    k->pk_lanes = lanes;
    k->pk_base_y = base_y;
    k->pk_bar_y = bar_y;
    k->pk_left = left;
    k->pk_right = right;
    if (cap > 0 && (k->pk_items = calloc(cap, sizeof(*k->pk_items))) == NULL)
        return -1;
    k->pk_cap = cap;
    return 0;
}

void
page_keys_add(struct page_keys *k, double mid, size_t num, const char *colour)
{
    if (k->pk_count < k->pk_cap)
        k->pk_items[k->pk_count++] = (struct page_key){mid, num, colour};
}

static double
width(size_t num)
{
    char n[24];

    return (double)snprintf(n, sizeof(n), "%zu", num) * PAGE_CHAR_PX;
}

/* Lays out and draws the keys i = first, first + step, ... on one lane. */
static int
draw_lane(struct buf *out, const struct page_keys *k, size_t first, size_t step, int lane,
          double *x)
{
    int y = k->pk_base_y + lane * PAGE_KEY_LANE_H;
    size_t last = first, i;

    if (first >= k->pk_count)
        return 0;
    /* From the left: at its bar, or just past the key before it. */
    for (i = first; i < k->pk_count; i += step) {
        const struct page_key *p = &k->pk_items[i];

        x[i] = p->pk_mid - width(p->pk_num) / 2;
        if (i != first &&
            x[i] < x[i - step] + width(k->pk_items[i - step].pk_num) + KEY_GAP)
            x[i] = x[i - step] + width(k->pk_items[i - step].pk_num) + KEY_GAP;
        last = i;
    }
    /* From the right: nothing past the lane's end, order and gaps kept. */
    for (i = last;; i -= step) {
        double limit = i == last ? k->pk_right : x[i + step] - KEY_GAP;

        if (x[i] + width(k->pk_items[i].pk_num) > limit)
            x[i] = limit - width(k->pk_items[i].pk_num);
        if (i < first + step)
            break;
    }
    for (i = first; i < k->pk_count; i += step) {
        const struct page_key *p = &k->pk_items[i];
        double w = width(p->pk_num);

        if (x[i] < k->pk_left)
            continue; /* no room: the table names it */
        if (buf_printf(out,
                       "<line class=\"key-leader\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                       "y2=\"%d\" stroke=\"%s\"/><text class=\"key\" x=\"%.1f\" y=\"%d\" "
                       "fill=\"%s\" font-weight=\"bold\">%zu</text>\n",
                       p->pk_mid, k->pk_bar_y, x[i] + w / 2, y - 10, p->pk_colour, x[i],
                       y, p->pk_colour, p->pk_num))
            return -1;
    }
    return 0;
}

int
page_keys_draw(struct buf *out, const struct page_keys *k)
{
    double need = 0, *x;
    size_t step = 1;
    int rc = 0;

    if (k->pk_count == 0)
        return 0;
    if ((x = calloc(k->pk_count, sizeof(*x))) == NULL)
        return -1;
    for (size_t i = 0; i < k->pk_count; i++)
        need += width(k->pk_items[i].pk_num) + KEY_GAP;
    if (k->pk_lanes > 1 && need > k->pk_right - k->pk_left)
        step = 2; /* alternate between the two lanes */
    for (size_t lane = 0; lane < step && rc == 0; lane++)
        rc = draw_lane(out, k, lane, step, (int)lane, x);
    free(x);
    return rc;
}

void
page_keys_free(struct page_keys *k)
{
    free(k->pk_items);
    k->pk_items = NULL;
    k->pk_count = k->pk_cap = 0;
}
