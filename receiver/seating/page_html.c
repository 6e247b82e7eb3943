/* page_html.c -- the seating chart as one HTML page: inline SVG per card, the last
 * decisions
 *
 * Server-rendered, no JavaScript, no outside assets: one <style> block, inline
 * SVG, and the same facts again as tables so a text browser (or a screen
 * reader) gets all of it. Every string that came from outside (node, GPU,
 * namespace and pod names, errors) goes through page_html_escape(). */
#include "page_html.h"
#include "page_text.h"
#include "page_idle.h"
#include "page_keys.h"
#include "page_notes.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SVG geometry: a label column, then the card's MiB on one scale. Under
 * each row, a lane of keys: the number of each tenant whose bar is too
 * narrow to say even that (the table under the card lists every number). */
#define SVG_W 1000
#define SVG_H 230
#define BAR_X 130
#define BAR_W 840
#define BUDGET_Y 38
#define BUDGET_H 30
#define BUDGET_KEY_Y 83 /* the budgets' key lane (one) */
#define USE_Y 112
#define USE_H 40
#define USE_KEY_Y 169 /* the use row's key lanes (two, PAGE_KEY_LANE_H apart) */
#define FLOOR_TEXT_Y 202
#define KEYS_LEFT 70 /* keys may run left under the row's name, not over it */
#define CHAR_PX PAGE_CHAR_PX

#define OVER_COLOUR "#c62828"
#define FREE_COLOUR "#e3f2e5"
#define FLOOR_COLOUR "#ef6c00"
#define UNATTRIBUTED_COLOUR "#9e9e9e"
#define NOTE_COLOUR "#5d4037" /* over-committed: a planning note, not an alarm */

/* Calm tenant colours; red and orange are kept for "over" and the floor. */
static const char *const palette[] = {"#1565c0", "#2e7d32", "#6a1b9a", "#00838f",
                                      "#5d4037", "#455a64", "#9e9d24", "#ad1457"};
#define PALETTE_N (sizeof(palette) / sizeof(palette[0]))

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#212121;max-width:1100px}"
    "h1{font-size:1.5em}h2{font-size:1.25em;margin-top:1.6em}h3{font-size:1.05em}"
    "table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:left;vertical-align:top}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".swatch{display:inline-block;width:.9em;height:.9em;margin-right:.4em;"
    "vertical-align:middle;border-radius:2px}"
    "tr.over-budget td{color:" OVER_COLOUR ";font-weight:bold}"
    ".warn{color:" OVER_COLOUR ";font-weight:bold}.ok{color:#2e7d32}"
    ".name{word-break:break-all}"
    ".alarm{background:" OVER_COLOUR ";color:#fff;font-weight:bold;font-size:1.2em;"
    "padding:.3em .8em;border-radius:4px;margin:1em 0}.alarm p{margin:.3em 0}"
    ".note{color:" NOTE_COLOUR "}td.key{white-space:nowrap;font-weight:bold}"
    "svg{max-width:100%;height:auto;border:1px solid #ccc;background:#fff}"
    "svg text{font-family:sans-serif;font-size:11px}";

void
page_decision_free(struct page_decision *d)
{
    if (d == NULL)
        return;
    free(d->pd_node);
    free(d->pd_result);
    free(d->pd_victim);
    free(d->pd_gpu);
}

/* Appends text with each %s argument escaped; the format itself is trusted. */
static int
emit(struct buf *out, const char *fmt, ...)
{
    va_list ap;
    int rc = 0;

    va_start(ap, fmt);
    for (const char *p = fmt; *p && rc == 0; p++) {
        if (p[0] == '%' && p[1] == 's') {
            rc = page_html_escape(out, va_arg(ap, const char *));
            p++;
        } else {
            rc = buf_append(out, p, 1);
        }
    }
    va_end(ap);
    return rc;
}

/* The scale of a card: everything drawn must fit, even an over-committed
 * node or an impossible reading. */
static int64_t
card_scale(const struct seating_node *n, const struct seating_card *c)
{
    int64_t m = c->sc_total_mib,
            drawn =
                c->sc_used_mib + (c->sc_unattributed_known ? c->sc_unattributed_mib : 0);

    if (n->sn_budgets_known && n->sn_budgets_mib > m)
        m = n->sn_budgets_mib;
    if (drawn > m)
        m = drawn;
    if (n->sn_capacity == SEATING_CAPACITY_OK && n->sn_capacity_mib > m)
        m = n->sn_capacity_mib;
    return m > 0 ? m : 1;
}

static double
px(int64_t mib, int64_t scale)
{
    return BAR_X + (double)mib * BAR_W / (double)scale;
}

/* A label that fits w pixels: the text, cut with an ellipsis (the full name
 * is in the segment's <title> and in the table below). */
static int
label(struct buf *out, double x, double y, double w, const char *text, const char *fill)
{
    size_t fit = w > 8 ? (size_t)((w - 6) / CHAR_PX) : 0, len = strlen(text);
    char cut[128];

    if (fit < 4)
        return 0;
    if (len > fit) {
        size_t keep = fit - 1 < sizeof(cut) - 4 ? fit - 1 : sizeof(cut) - 4;
        while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
            keep--; /* never split a UTF-8 character */
        memcpy(cut, text, keep);
        memcpy(cut + keep, "\xe2\x80\xa6", 4);
        text = cut;
    }
    return buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", x + 3, y, fill) ||
           emit(out, "%s", text) || buf_printf(out, "</text>\n");
}

/* Names tenant number num's bar [x, x + w) as well as its width allows: the
 * pod's name; cut, then after its number ("3 immich-serv…"), so it still
 * points at its row in the table; the number alone; or, too narrow even for
 * that, the number in the key lane under the bar. */
static int
tenant_label(struct buf *out, struct page_keys *k, double x, double y, double w,
             size_t num, const char *pod, const char *fill, const char *colour)
{
    char n[24], text[160];
    double room = w - 6;

    snprintf(n, sizeof(n), "%zu", num);
    if ((double)strlen(pod) * CHAR_PX <= room)
        return label(out, x, y, w, pod, fill);
    if (room >= (double)(strlen(n) + 5) * CHAR_PX) {
        /* label() cuts it to the room (far below this buffer) at a character */
        if (snprintf(text, sizeof(text), "%s %s", n, pod) < 0)
            return -1;
        return label(out, x, y, w, text, fill);
    }
    if (room >= (double)strlen(n) * CHAR_PX)
        return buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n",
                          x + 3, y, fill, n);
    page_keys_add(k, x + w / 2, num, colour);
    return 0;
}

/* Row 1: the declared budgets stacked, against the advertised capacity. */
static int
svg_budgets(struct buf *out, const struct seating_node *n, const struct seating_card *c,
            int64_t scale)
{
    int64_t at = 0, next;
    struct page_keys keys;
    char cap[96];

    if (page_keys_init(&keys, c->sc_tenant_count, 1, BUDGET_KEY_Y, BUDGET_Y + BUDGET_H,
                       KEYS_LEFT, SVG_W - 4) == -1)
        return -1;
    if (buf_printf(out, "<text x=\"8\" y=\"%d\">declared budgets</text>\n",
                   BUDGET_Y + BUDGET_H / 2 + 4))
        goto fail;
    for (size_t i = 0; i < c->sc_tenant_count; i++) {
        const struct seating_tenant *t = &c->sc_tenants[i];
        double x = px(at, scale), w;

        if (t->st_budget_state != BUDGET_OK || t->st_budget_mib <= 0)
            continue;
        /* Budgets are the tenants' own numbers: the stack saturates (the
         * scale holds the node's saturated sum), never wraps. */
        next = t->st_budget_mib > INT64_MAX - at ? INT64_MAX : at + t->st_budget_mib;
        w = px(next, scale) - x;
        if (buf_printf(out,
                       "<rect class=\"budget\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                       "height=\"%d\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\">",
                       x, BUDGET_Y, w, BUDGET_H, palette[i % PALETTE_N],
                       palette[i % PALETTE_N]) ||
            emit(out, "<title>%s/%s", t->st_namespace, t->st_pod) ||
            buf_printf(out, ": budget %" PRId64 " MiB</title></rect>",
                       t->st_budget_mib) ||
            tenant_label(out, &keys, x, BUDGET_Y + BUDGET_H / 2 + 4, w, i + 1, t->st_pod,
                         "#212121", palette[i % PALETTE_N]))
            goto fail;
        at = next;
    }
    if (page_keys_draw(out, &keys) == -1)
        goto fail;
    page_keys_free(&keys);
    if (n->sn_capacity != SEATING_CAPACITY_OK)
        return buf_printf(out,
                          "<text x=\"%d\" y=\"%d\" class=\"warn\" fill=\"%s\">capacity "
                          "%s</text>\n",
                          BAR_X, BUDGET_Y - 8, OVER_COLOUR,
                          n->sn_capacity == SEATING_CAPACITY_NOT_ADVERTISED
                              ? "not advertised"
                              : "unknown");
    /* Over-committed is a note (the scheduler seats by it; nobody starves of
     * it): in the note colour, never the warning one the over-budget part has. */
    snprintf(cap, sizeof(cap), "advertised capacity %" PRId64 " MiB%s",
             n->sn_capacity_mib, n->sn_overcommitted ? " (budgets over-committed)" : "");
    return buf_printf(
        out,
        "<line class=\"capacity\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
        "y2=\"%d\" stroke=\"#212121\" stroke-width=\"2\"/>"
        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" fill=\"%s\">%s</text>\n",
        px(n->sn_capacity_mib, scale), px(n->sn_capacity_mib, scale), BUDGET_Y - 6,
        BUDGET_Y + BUDGET_H + 4, px(n->sn_capacity_mib, scale) - 4, BUDGET_Y - 8,
        n->sn_overcommitted ? NOTE_COLOUR : "#212121", cap);
fail:
    page_keys_free(&keys);
    return -1;
}

/* One tenant's live use: its colour up to its budget, the rest in red. */
static int
svg_tenant_use(struct buf *out, struct page_keys *k, const struct seating_tenant *t,
               size_t i, int64_t at, int64_t scale)
{
    int has = t->st_budget_state == BUDGET_OK;
    /* The part past the budget is red; in GPU scope the budget is held against
     * the use over every GPU, so a card shows its share of the excess. */
    int64_t within = t->st_used_mib - t->st_over_here_mib;
    int over = t->st_over_here_mib > 0;
    double x = px(at, scale), wi = px(at + within, scale) - x;

    if (emit(out, "<g class=\"tenant%s\" data-namespace=\"%s\" data-pod=\"%s\">",
             over ? " over-budget" : "", t->st_namespace, t->st_pod) ||
        buf_printf(out,
                   "<rect class=\"use\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                   "fill=\"%s\">",
                   x, USE_Y, wi, USE_H, palette[i % PALETTE_N]) ||
        emit(out, "<title>%s/%s", t->st_namespace, t->st_pod) ||
        buf_printf(out, ": uses %" PRId64 " MiB", t->st_used_mib))
        return -1;
    if (t->st_total_used_mib != t->st_used_mib &&
        buf_printf(out, " here, %" PRId64 " MiB on all GPUs", t->st_total_used_mib))
        return -1;
    if (has && buf_printf(out, " of a %" PRId64 " MiB budget", t->st_budget_mib))
        return -1;
    if (buf_printf(out, "</title></rect>") ||
        (t->st_used_mib > 0 &&
         tenant_label(out, k, x, USE_Y + USE_H / 2 + 4, wi, i + 1, t->st_pod, "#ffffff",
                      palette[i % PALETTE_N])))
        return -1;
    if (over) {
        double xo = x + wi, wo = px(at + t->st_used_mib, scale) - xo;
        char text[400];

        snprintf(text, sizeof(text), "%s: OVER BUDGET by %" PRId64 " MiB", t->st_pod,
                 t->st_overshoot_mib);
        if (buf_printf(out,
                       "<rect class=\"over\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                       "height=\"%d\" fill=\"%s\">",
                       xo, USE_Y, wo, USE_H, OVER_COLOUR) ||
            emit(out, "<title>%s/%s", t->st_namespace, t->st_pod) ||
            buf_printf(out, " is %" PRId64 " MiB over its budget</title></rect>",
                       t->st_overshoot_mib) ||
            label(out, xo, USE_Y + USE_H / 2 + 4, wo, text, "#ffffff") ||
            /* The budget mark: where its seat ends inside its use. */
            buf_printf(out,
                       "<line class=\"budget-mark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
                       "y2=\"%d\" stroke=\"#212121\" stroke-width=\"3\"/>",
                       xo, xo, USE_Y - 6, USE_Y + USE_H + 6))
            return -1;
    }
    return buf_printf(out, "</g>");
}

/* The memory no pod accounts for, grey, right after the tenants' use: with
 * the device's figures, tenants + this + free fill the card. */
static int
svg_unattributed(struct buf *out, const struct seating_card *c, int64_t at, int64_t scale)
{
    double x = px(at, scale), w;
    char text[96];

    if (!c->sc_unattributed_known || c->sc_unattributed_mib <= 0)
        return 0;
    w = px(at + c->sc_unattributed_mib, scale) - x;
    snprintf(text, sizeof(text), "%" PRId64 " MiB no pod accounts for",
             c->sc_unattributed_mib);
    return buf_printf(out,
                      "<rect class=\"unattributed\" x=\"%.1f\" y=\"%d\" "
                      "width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s (driver, "
                      "host processes, unknown pods)</title></rect>",
                      x, USE_Y, w, USE_H, UNATTRIBUTED_COLOUR, text) ||
           label(out, x, USE_Y + USE_H / 2 + 4, w, text, "#ffffff");
}

static int
svg_card(struct buf *out, const struct seating_node *n, const struct seating_card *c)
{
    int64_t scale = card_scale(n, c), at = 0,
            floor_at = c->sc_total_mib - n->sn_floor_mib;
    double fx = px(floor_at > 0 ? floor_at : 0, scale);
    struct page_keys keys;

    /* No xmlns: in text/html the parser gives <svg> its namespace, and the page
     * names no URL at all (no outside assets, not even a namespace's). */
    if (emit(out,
             "<svg class=\"card\" role=\"img\" "
             "data-node=\"%s\" data-gpu=\"%s\"",
             n->sn_node, c->sc_gpu ? c->sc_gpu : "") ||
        buf_printf(out, " viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">", SVG_W,
                   SVG_H, SVG_W, SVG_H) ||
        emit(out, "<title>VRAM of %s%s%s</title>", n->sn_node, c->sc_gpu ? " GPU " : "",
             c->sc_gpu ? c->sc_gpu : "") ||
        svg_budgets(out, n, c, scale) ||
        buf_printf(out, "<text x=\"8\" y=\"%d\">live use</text>\n",
                   USE_Y + USE_H / 2 + 4) ||
        buf_printf(out,
                   "<rect class=\"card-outline\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                   "height=\"%d\" fill=\"none\" stroke=\"#9e9e9e\"/>",
                   BAR_X, USE_Y, px(c->sc_total_mib, scale) - BAR_X, USE_H) ||
        page_keys_init(&keys, c->sc_tenant_count, 2, USE_KEY_Y, USE_Y + USE_H, KEYS_LEFT,
                       SVG_W - 4))
        return -1;
    for (size_t i = 0; i < c->sc_tenant_count; i++) {
        if (svg_tenant_use(out, &keys, &c->sc_tenants[i], i, at, scale) == -1) {
            page_keys_free(&keys);
            return -1;
        }
        at += c->sc_tenants[i].st_used_mib;
    }
    if (page_keys_draw(out, &keys) == -1) {
        page_keys_free(&keys);
        return -1;
    }
    page_keys_free(&keys);
    if (svg_unattributed(out, c, at, scale) == -1)
        return -1;
    if (c->sc_free_known && c->sc_free_mib > 0) {
        double x = px(c->sc_total_mib - c->sc_free_mib, scale);
        char text[48];

        snprintf(text, sizeof(text), "free %" PRId64 " MiB", c->sc_free_mib);
        if (buf_printf(out,
                       "<rect class=\"free\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                       "height=\"%d\" fill=\"%s\"><title>%s</title></rect>",
                       x, USE_Y, px(c->sc_total_mib, scale) - x, USE_H, FREE_COLOUR,
                       text) ||
            /* Said in full or not at all: the heading says it too. */
            (px(c->sc_total_mib, scale) - x > (double)strlen(text) * CHAR_PX + 8 &&
             label(out, x, USE_Y + USE_H / 2 + 4, px(c->sc_total_mib, scale) - x, text,
                   "#1b5e20")))
            return -1;
    }
    if (buf_printf(out,
                   "<line class=\"floor\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
                   "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>"
                   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" fill=\"%s\">floor: act "
                   "below %" PRId64 " MiB free</text>\n",
                   fx, fx, USE_Y - 12, FLOOR_TEXT_Y - 12, FLOOR_COLOUR, fx - 4,
                   FLOOR_TEXT_Y, FLOOR_COLOUR, n->sn_floor_mib) ||
        buf_printf(out,
                   "<text x=\"%d\" y=\"%d\">0</text>\n<text x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"end\">%" PRId64 " MiB on the card</text>\n",
                   BAR_X, SVG_H - 8, px(c->sc_total_mib, scale), SVG_H - 8,
                   c->sc_total_mib))
        return -1;
    if (c->sc_free_known && c->sc_free_mib < n->sn_floor_mib &&
        buf_printf(out,
                   "<text x=\"%d\" y=\"%d\" fill=\"%s\" font-weight=\"bold\">free "
                   "%" PRId64 " MiB: below the floor</text>\n",
                   BAR_X, USE_Y - 14, OVER_COLOUR, c->sc_free_mib))
        return -1;
    return buf_printf(out, "</svg>");
}

static int
tenant_row(struct buf *out, const struct seating_tenant *t, size_t i)
{
    int has = t->st_budget_state == BUDGET_OK, over = has && t->st_overshoot_mib > 0;

    /* The key: the colour and number its bars carry, or the lane under them. */
    if (buf_printf(out,
                   "<tr class=\"tenant%s\"><td class=\"key\"><span class=\"swatch\" "
                   "style=\"background:%s\"></span>%zu</td><td class=\"name\">",
                   over ? " over-budget" : "", palette[i % PALETTE_N], i + 1) ||
        emit(out, "%s/%s</td>", t->st_namespace, t->st_pod) ||
        buf_printf(out, "<td class=\"n\">%" PRId64, t->st_used_mib) ||
        (t->st_total_used_mib != t->st_used_mib &&
         buf_printf(out, " (%" PRId64 " on all GPUs)", t->st_total_used_mib)) ||
        buf_printf(out, "</td>"))
        return -1;
    if (has) {
        if (buf_printf(out,
                       "<td class=\"n\">%" PRId64 "</td><td class=\"n\">%+" PRId64
                       "</td><td>%s</td>",
                       t->st_budget_mib, t->st_overshoot_mib,
                       over ? "OVER BUDGET" : "within budget"))
            return -1;
    } else if (buf_printf(out, "<td class=\"n\">%s</td><td class=\"n\">-</td><td>%s</td>",
                          t->st_budget_state == BUDGET_BAD ? "unreadable" : "none",
                          t->st_budget_state == BUDGET_BAD ? "budget cannot be read"
                                                           : "no budget")) {
        return -1;
    }
    if (t->st_eligible)
        return buf_printf(out, "<td>yes</td></tr>");
    return emit(out, "<td>no: %s</td></tr>", t->st_why_not ? t->st_why_not : "?");
}

static int
render_card(struct buf *out, const struct seating_node *n, const struct seating_card *c)
{
    if (emit(out, "<div class=\"gpu\" data-gpu=\"%s\"><h3>",
             c->sc_gpu ? c->sc_gpu : "") ||
        (c->sc_gpu ? emit(out, "GPU %s", c->sc_gpu) : emit(out, "The card")) ||
        buf_printf(out, ": %" PRId64 " MiB, ", c->sc_total_mib))
        return -1;
    if (!c->sc_free_known) {
        if (buf_printf(out, "free VRAM unknown</h3>"))
            return -1;
    } else if (buf_printf(out,
                          "%" PRId64 " MiB free (<span class=\"free-source\">%s</span>), "
                          "floor %" PRId64 " MiB: <span class=\"%s\">%s</span></h3>",
                          c->sc_free_mib, seating_free_source_words(c->sc_free_source),
                          n->sn_floor_mib, seating_card_below_floor(n, c) ? "warn" : "ok",
                          seating_card_below_floor(n, c) ? "below the floor"
                                                         : "above the floor")) {
        return -1;
    }
    if (c->sc_error[0] != '\0' &&
        emit(out, "<p class=\"warn\">This GPU's reading is not usable: %s</p>",
             c->sc_error))
        return -1;
    if (c->sc_unattributed_known &&
        buf_printf(out,
                   "<p class=\"unattributed\">Memory no pod accounts for: %" PRId64
                   " MiB (driver, host processes, unknown pods).</p>",
                   c->sc_unattributed_mib))
        return -1;
    if (svg_card(out, n, c) == -1)
        return -1;
    if (c->sc_tenant_count == 0) /* without a reading nobody is known to be there */
        return buf_printf(out, n->sn_reading_ok && c->sc_error[0] == '\0'
                                   ? "<p>No tenants on this card.</p></div>"
                                   : "<p class=\"warn\">Tenants unknown: the reading is "
                                     "incomplete.</p></div>");
    if (buf_printf(out, "<table class=\"tenants\"><tr><th>key</th><th>namespace/pod</th>"
                        "<th>used "
                        "MiB</th><th>budget MiB</th><th>overshoot MiB</th><th>budget</th>"
                        "<th>eligible</th></tr>"))
        return -1;
    for (size_t i = 0; i < c->sc_tenant_count; i++)
        if (tenant_row(out, &c->sc_tenants[i], i) == -1)
            return -1;
    return buf_printf(out, "</table></div>");
}

/* "N MiB of budgets declared", or that they are unknown (no pod list). */
static int
render_budgets(struct buf *out, const struct seating_node *n)
{
    if (!n->sn_budgets_known)
        return buf_printf(out, "<span class=\"warn\">budgets unknown</span> (the pods "
                               "could not be listed)");
    return buf_printf(out, "%" PRId64 " MiB of budgets declared", n->sn_budgets_mib);
}

static int
render_seats(struct buf *out, const struct seating_node *n)
{
    switch (n->sn_capacity) {
    case SEATING_CAPACITY_OK:
        if (buf_printf(out, "<p class=\"seats\">%" PRId64 " MiB advertised, ",
                       n->sn_capacity_mib) ||
            render_budgets(out, n))
            return -1;
        if (!n->sn_budgets_known)
            break;
        if (n->sn_overcommitted
                ? buf_printf(out,
                             ": <span class=\"note\">over-committed by %" PRId64
                             " MiB</span>",
                             n->sn_budgets_mib - n->sn_capacity_mib)
                : buf_printf(out, ": %" PRId64 " MiB unseated",
                             n->sn_capacity_mib - n->sn_budgets_mib))
            return -1;
        break;
    case SEATING_CAPACITY_NOT_ADVERTISED:
        if (buf_printf(out,
                       "<p class=\"seats\"><span class=\"warn\">The node does not "
                       "advertise the capacity</span> (run <code>advertise</code>); ") ||
            render_budgets(out, n))
            return -1;
        break;
    case SEATING_CAPACITY_UNKNOWN:
        if (emit(out,
                 "<p class=\"seats\"><span class=\"warn\">Capacity unknown</span> (%s); ",
                 n->sn_capacity_error) ||
            render_budgets(out, n))
            return -1;
        break;
    }
    if (n->sn_bad_budgets > 0 &&
        buf_printf(out, "; %zu pod(s) declare a budget that cannot be read",
                   n->sn_bad_budgets))
        return -1;
    if (buf_printf(out, ".</p>"))
        return -1;
    if (!n->sn_reading_ok &&
        emit(out, "<p class=\"warn\">The reading is incomplete: %s</p>", n->sn_error))
        return -1;
    return 0;
}

static int
render_decisions(struct buf *out, const struct page_view *v)
{
    char when[32], id[24];

    if (buf_printf(out, "<h2>Last decisions</h2>"))
        return -1;
    if (v->pv_decisions_error != NULL)
        return emit(out, "<p class=\"warn\">The audit store cannot be read: %s</p>",
                    v->pv_decisions_error);
    if (v->pv_decision_count == 0)
        return page_html_no_decisions(out, v);
    if (buf_printf(out, "<table class=\"decisions\"><tr><th>audit id</th><th>time "
                        "(UTC)</th><th>node</th><th>result</th><th>victim</th></tr>"))
        return -1;
    for (size_t i = 0; i < v->pv_decision_count; i++) {
        const struct page_decision *d = &v->pv_decisions[i];

        page_html_utc(d->pd_time_ms, when, sizeof(when));
        snprintf(id, sizeof(id), "%" PRId64, d->pd_id);
        /* In GPU scope the GPU stands beside the node, as in `audit`'s table. */
        if (emit(out, "<tr class=\"decision\"><td class=\"n\">%s</td><td>%s</td><td>%s",
                 id, when, d->pd_node && *d->pd_node ? d->pd_node : "-") ||
            (d->pd_gpu != NULL && emit(out, "/%s", d->pd_gpu)) ||
            emit(out, "</td><td class=\"result\">%s</td><td class=\"name\">%s</td></tr>",
                 d->pd_result, d->pd_victim ? d->pd_victim : "-"))
            return -1;
    }
    return buf_printf(out, "</table><p>Details: <code>gpu-vram-watchdog audit show "
                           "ID</code>.</p>");
}

int
page_html_render(struct buf *out, const struct page_view *v)
{
    const struct seating *s = v->pv_seating;
    char now[32];

    page_html_utc(v->pv_now_ms, now, sizeof(now));
    if (buf_printf(out,
                   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>gpu-vram-watchdog: GPU seating chart</title><style>%s</style>"
                   "</head><body><h1>GPU seating chart</h1>",
                   style) ||
        /* The incident, if there is one, before anything else. */
        page_html_over_budget(out, s) ||
        buf_printf(out,
                   "<p>Measured %s UTC. %s "
                   "Budgets (<em>seats</em>) are what each tenant declares; live use "
                   "is what it holds now; the part over its budget is "
                   "<span class=\"warn\">red</span>; a number on or under a bar "
                   "is the tenant's key in the table below the card.</p>",
                   now,
                   v->pv_dry_run ? "Dry run: the watchdog records what it would recycle."
                                 : "Enforcing: the watchdog recycles."))
        return -1;
    if (s->s_error[0] != '\0' && emit(out, "<p class=\"warn\">%s</p>", s->s_error))
        return -1;
    for (size_t i = 0; i < s->s_node_count; i++) {
        const struct seating_node *n = &s->s_nodes[i];

        if (emit(out, "<section class=\"node\" data-node=\"%s\"><h2>Node %s</h2>",
                 n->sn_node, n->sn_node) ||
            render_seats(out, n))
            return -1;
        for (size_t k = 0; k < n->sn_card_count; k++)
            if (render_card(out, n, &n->sn_cards[k]) == -1)
                return -1;
        if (page_html_idle(out, n) == -1 || buf_printf(out, "</section>"))
            return -1;
    }
    if (render_decisions(out, v) == -1)
        return -1;
    return buf_printf(out, "</body></html>\n");
}
