/* brakes.c -- what holds a decision back: the hourly limit, seats, SETTLE, busy nodes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "remedy_int.h"

#define MAX_NODES 1024 /* node states kept; alert labels are not trusted */
#define MAX_NODES_TEXT "1024"
#define HOUR_S 3600.0

/* --- the hourly brake ---------------------------------------------------- */

static size_t
recycles_last_hour(struct remedy *r, double now)
{
    size_t kept = 0;

    for (size_t i = 0; i < r->r_recycle_count; i++)
        if (r->r_recycles[i] > now - HOUR_S)
            r->r_recycles[kept++] = r->r_recycles[i];
    r->r_recycle_count = kept;
    return kept;
}

/* An eviction in flight holds a seat, so two decisions acting in the same
 * instant (two GPUs, two nodes) cannot both pass a brake with one seat left;
 * d's own seat would not count against it (every caller asks before taking
 * its seat today, so no test can see this; kept so a later caller cannot
 * brake itself). */
int
brakes_rate_limited(struct remedy *r, const struct decision *d, double now)
{
    int64_t max = r->r_cfg->c_max_recycles_per_hour;
    size_t others = r->r_acting - (d->d_reserved ? 1 : 0);

    return max > 0 && (int64_t)(recycles_last_hour(r, now) + others) >= max;
}

void
brakes_seat_take(struct decision *d)
{
    if (!d->d_reserved) {
        d->d_reserved = 1;
        d->d_r->r_acting++;
    }
}

void
brakes_seat_give_back(struct decision *d)
{
    if (d->d_reserved) {
        d->d_reserved = 0;
        d->d_r->r_acting--;
    }
}

void
brakes_count_recycle(struct remedy *r, double now)
{
    int64_t max = r->r_cfg->c_max_recycles_per_hour;

    if (max <= 0)
        return;
    recycles_last_hour(r, now);
    if ((int64_t)r->r_recycle_count < max && r->r_recycle_count < MAX_BRAKE_RING)
        r->r_recycles[r->r_recycle_count++] = now;
}

/* --- node states --------------------------------------------------------- */

/* The state of node, created on first use; NULL when out of memory or full
 * of busy nodes. */
struct node_state *
brakes_node_get(struct remedy *r, const char *name, const char *gpu)
{
    struct node_state *n, **pp;
    double now = clock_mono_s();

    for (n = r->r_nodes; n != NULL; n = n->n_next)
        if (strcmp(n->n_name, name) == 0 &&
            (n->n_gpu == NULL || gpu == NULL ? n->n_gpu == gpu
                                             : strcmp(n->n_gpu, gpu) == 0))
            return n;
    if (r->r_node_count >= MAX_NODES) {
        /* Forget idle nodes whose window has passed. */
        for (pp = &r->r_nodes; *pp != NULL;) {
            n = *pp;
            if (!n->n_busy && n->n_settle_until <= now) {
                *pp = n->n_next;
                free(n->n_name);
                free(n->n_gpu);
                free(n);
                r->r_node_count--;
            } else {
                pp = &n->n_next;
            }
        }
        if (r->r_node_count >= MAX_NODES) {
            /* Said once per filling (a full table refuses every new node
             * until some window passes); each refusal's row says it too. */
            if (!r->r_nodes_full_said)
                log_event(LOG_LEVEL_WARN,
                          "brake table full: no decision for a new node or GPU until a "
                          "tracked one is idle and out of its SETTLE window",
                          "max", MAX_NODES_TEXT, "node", name, gpu ? "gpu" : NULL, gpu,
                          (char *)NULL);
            r->r_nodes_full_said = 1;
            return NULL;
        }
        r->r_nodes_full_said = 0;
    }
    if ((n = calloc(1, sizeof(*n))) == NULL || (n->n_name = strdup(name)) == NULL ||
        (gpu != NULL && (n->n_gpu = strdup(gpu)) == NULL)) {
        if (n != NULL)
            free(n->n_name);
        free(n);
        return NULL;
    }
    n->n_next = r->r_nodes;
    r->r_nodes = n;
    r->r_node_count++;
    return n;
}

/* --- the SETTLE window and held-back triggers ---------------------------- */

void
brakes_open_settle_window(struct decision *d, const struct policy_candidate *c,
                          double now)
{
    d->d_node->n_settle_until = now + ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    snprintf(d->d_node->n_last_victim, sizeof(d->d_node->n_last_victim), "%s/%s",
             c->pc_namespace, c->pc_name);
    d->d_node->n_last_dry = d->d_r->r_cfg->c_dry_run;
}

/* "node", or "node GPU g" in GPU scope: what a brake is about. */
static const char *
brake_name(const struct node_state *n, char *buf, size_t len)
{
    if (n->n_gpu == NULL)
        return n->n_name;
    snprintf(buf, len, "%s GPU %s", n->n_name, n->n_gpu);
    return buf;
}

/* Whether n holds a trigger back (coalesced), with why in reason. */
int
brakes_held_back(const struct node_state *n, double now, char *reason, size_t len)
{
    char name[600];

    if (n->n_busy) {
        snprintf(reason, len, "a decision for %s is already in flight",
                 brake_name(n, name, sizeof(name)));
        return 1;
    }
    if (now < n->n_settle_until) {
        snprintf(reason, len, "inside the SETTLE window after %s %s (%.0f s left)",
                 n->n_last_dry ? "DRY_RUN would have recycled" : "recycling",
                 n->n_last_victim, n->n_settle_until - now);
        return 1;
    }
    return 0;
}
