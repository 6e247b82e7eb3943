/* capacity.c -- PATCH the gpumem capacity onto GPU nodes at start-up and every interval
 */
#include "capacity.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "capsize.h"
#include "kube.h"
#include "log.h"
#include "prom.h"

/* The one question for every node's size: the exporter's device totals. */
#define TOTAL_QUERY "gpu_memory_total_bytes"

struct cap_node {
    char *cn_name;       /* owned */
    int cn_ok;           /* the last patch succeeded */
    int64_t cn_mib;      /* this pass: the value to patch; -1 = size unknown */
    char *cn_gfd_memory; /* owned, NULL = absent: GFD label values from the list */
    char *cn_gfd_count;  /* owned, likewise */
};

struct cap_pass;

struct capacity {
    struct kube *c_kube; /* borrowed */
    char *c_resource;    /* owned */
    char *c_selector;    /* owned */
    int64_t c_mib;
    int c_auto;
    int64_t c_reserve_mib;
    struct prom *c_prom; /* borrowed, may be NULL */
    char *c_gpu_label;   /* owned */
    long c_size_retry_ms;
    long c_interval_ms;
    long c_retry_min_ms;
    long c_retry_ms;       /* the next retry delay */
    struct event *c_timer; /* owned: the next pass (serve mode) */
    int c_started;
    struct cap_node *c_nodes; /* owned: the last successful list */
    size_t c_node_count;
    uint64_t c_errors;
    struct cap_pass *c_pass; /* the pass in flight, or NULL */
};

/* One pass: list, then patch each node. Outlives the capacity if it is freed
 * while calls are in flight (p_cap is then NULL). */
struct cap_pass {
    struct capacity *p_cap; /* borrowed; NULL once detached */
    size_t p_pending;       /* kube calls in flight */
    size_t p_patched;
    size_t p_failed;
    size_t p_unknown; /* auto: nodes left unpatched for want of a size */
    int p_list_failed;
    int p_cancelled;   /* kube was freed under us: do not reschedule */
    char p_error[768]; /* the first failure, for the summary */
    int p_once;
    capacity_once_done_fn p_once_cb;
    void *p_once_arg;
};

/* One node's patch in flight. */
struct cap_patch {
    struct cap_pass *pp_pass; /* borrowed */
    size_t pp_index;          /* into c_nodes, stable while the pass runs */
};

static void timer_cb(evutil_socket_t fd, short what, void *arg);

static void
nodes_free(struct cap_node *nodes, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(nodes[i].cn_name);
        free(nodes[i].cn_gfd_memory);
        free(nodes[i].cn_gfd_count);
    }
    free(nodes);
}

struct capacity *
capacity_new(struct event_base *base, struct kube *kube, const struct capacity_opts *o)
{
    struct capacity *c;

    if (o->co_resource == NULL || o->co_resource[0] == '\0' || o->co_capacity_mib < 0 ||
        o->co_interval_s < 0 || o->co_reserve_mib < 0) {
        log_warnx(
            "%s: a resource name and non-negative capacity and interval are required",
            __func__);
        return NULL;
    }
    if ((c = calloc(1, sizeof(*c))) == NULL ||
        (c->c_resource = strdup(o->co_resource)) == NULL ||
        (c->c_selector = strdup(o->co_selector ? o->co_selector : "")) == NULL ||
        (c->c_gpu_label = strdup(o->co_gpu_label != NULL && o->co_gpu_label[0] != '\0'
                                     ? o->co_gpu_label
                                     : "uuid")) == NULL ||
        (c->c_timer = evtimer_new(base, timer_cb, c)) == NULL) {
        log_warnx("%s: out of memory", __func__);
        capacity_free(c);
        return NULL;
    }
    c->c_kube = kube;
    c->c_mib = o->co_capacity_mib;
    c->c_auto = o->co_auto;
    c->c_reserve_mib = o->co_reserve_mib;
    c->c_prom = o->co_prom;
    c->c_size_retry_ms =
        o->co_size_retry_ms > 0 ? o->co_size_retry_ms : CAPACITY_SIZE_RETRY_MS;
    c->c_interval_ms = o->co_interval_s * 1000;
    c->c_retry_min_ms =
        o->co_retry_min_ms > 0 ? o->co_retry_min_ms : CAPACITY_RETRY_MIN_MS;
    c->c_retry_ms = c->c_retry_min_ms;
    return c;
}

void
capacity_free(struct capacity *c)
{
    if (c == NULL)
        return;
    if (c->c_pass != NULL)
        c->c_pass->p_cap = NULL; /* its answers come back to nobody */
    if (c->c_timer != NULL)
        event_free(c->c_timer);
    nodes_free(c->c_nodes, c->c_node_count);
    free(c->c_resource);
    free(c->c_selector);
    free(c->c_gpu_label);
    free(c);
}

static void
schedule(struct capacity *c, long ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    evtimer_add(c->c_timer, &tv);
}

/* Keeps the first failure of a pass for its summary. */
static void __attribute__((format(printf, 2, 3)))
note_error(struct cap_pass *pass, const char *fmt, ...)
{
    va_list ap;

    if (pass->p_error[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(pass->p_error, sizeof(pass->p_error), fmt, ap);
    va_end(ap);
}

/* The end of a pass: report (once mode) or schedule the next one (serve). */
static void
pass_end(struct cap_pass *pass)
{
    struct capacity *c = pass->p_cap;
    char summary[1024], errors[24];
    long ceiling;
    int ok;

    if (c == NULL) {
        free(pass);
        return;
    }
    c->c_pass = NULL;
    ok = !pass->p_list_failed && !pass->p_cancelled && c->c_node_count > 0 &&
         pass->p_failed == 0 && pass->p_unknown == 0;
    if (pass->p_list_failed || c->c_node_count == 0)
        snprintf(summary, sizeof(summary), "%s", pass->p_error);
    else if (ok && c->c_auto)
        snprintf(summary, sizeof(summary),
                 "patched %zu of %zu nodes with %s, each its own value (auto: its GPUs' "
                 "sizes less GPUMEM_RESERVE_MIB=%" PRId64 " each)",
                 pass->p_patched, c->c_node_count, c->c_resource, c->c_reserve_mib);
    else if (ok)
        snprintf(summary, sizeof(summary), "patched %zu of %zu nodes with %s=%" PRId64,
                 pass->p_patched, c->c_node_count, c->c_resource, c->c_mib);
    else
        snprintf(summary, sizeof(summary), "patched %zu of %zu nodes; first failure: %s",
                 pass->p_patched, c->c_node_count, pass->p_error);
    snprintf(errors, sizeof(errors), "%" PRIu64, c->c_errors);
    log_event(ok ? LOG_LEVEL_INFO : LOG_LEVEL_WARN, "capacity pass done", "result",
              ok ? "ok" : "failed", "summary", summary, "errors_total", errors,
              (char *)NULL);
    if (pass->p_once) {
        pass->p_once_cb(ok, summary, pass->p_once_arg); /* may free c */
    } else if (!pass->p_cancelled) {
        if (ok) {
            c->c_retry_ms = c->c_retry_min_ms;
            if (c->c_interval_ms > 0)
                schedule(c, c->c_interval_ms);
        } else if (!pass->p_list_failed && c->c_node_count > 0 && pass->p_failed == 0) {
            /* Only sizes were missing: the exporter may be starting; look again
             * soon, steadily (SPEC: every 30 s until it is known). */
            c->c_retry_ms = c->c_retry_min_ms;
            schedule(c, c->c_size_retry_ms);
        } else {
            /* Backoff from the minimum, doubling, up to the interval. */
            ceiling = c->c_interval_ms > 0 ? c->c_interval_ms : CAPACITY_RETRY_MAX_MS;
            if (pass->p_unknown > 0 && ceiling > c->c_size_retry_ms)
                ceiling = c->c_size_retry_ms;
            schedule(c, c->c_retry_ms < ceiling ? c->c_retry_ms : ceiling);
            if (c->c_retry_ms < ceiling)
                c->c_retry_ms *= 2;
        }
    }
    free(pass);
}

static void
patch_done(struct kube_answer *a, void *arg)
{
    struct cap_patch *pp = arg;
    struct cap_pass *pass = pp->pp_pass;
    struct capacity *c = pass->p_cap;

    pass->p_pending--;
    if (c != NULL) {
        struct cap_node *n = &c->c_nodes[pp->pp_index];

        if (a->ka_cancelled) {
            pass->p_cancelled = 1;
            pass->p_failed++;
            note_error(pass, "cancelled");
        } else if (a->ka_class == KUBE_OK) {
            char value[24];

            snprintf(value, sizeof(value), "%" PRId64, n->cn_mib);
            n->cn_ok = 1;
            pass->p_patched++;
            log_event(LOG_LEVEL_INFO, "capacity advertised", "node", n->cn_name,
                      "resource", c->c_resource, "value", value, (char *)NULL);
        } else {
            n->cn_ok = 0;
            pass->p_failed++;
            c->c_errors++;
            note_error(pass, "%s: %s", n->cn_name, a->ka_error);
        }
    }
    free(pp);
    if (pass->p_pending == 0)
        pass_end(pass);
}

/* Replaces the node table with names (and their GFD labels, either array may
 * be NULL), keeping each known node's last state. Takes the strings it keeps. */
static int
nodes_replace(struct capacity *c, char **names, char **gfd_memory, char **gfd_count,
              size_t count)
{
    struct cap_node *nodes = NULL;

    if (count > 0 && (nodes = calloc(count, sizeof(*nodes))) == NULL)
        return -1;
    for (size_t i = 0; i < count; i++) {
        nodes[i].cn_name = names[i]; /* taken */
        names[i] = NULL;
        nodes[i].cn_mib = c->c_auto ? -1 : c->c_mib;
        if (gfd_memory != NULL) {
            nodes[i].cn_gfd_memory = gfd_memory[i];
            gfd_memory[i] = NULL;
        }
        if (gfd_count != NULL) {
            nodes[i].cn_gfd_count = gfd_count[i];
            gfd_count[i] = NULL;
        }
        for (size_t j = 0; j < c->c_node_count; j++)
            if (strcmp(c->c_nodes[j].cn_name, nodes[i].cn_name) == 0)
                nodes[i].cn_ok = c->c_nodes[j].cn_ok;
    }
    nodes_free(c->c_nodes, c->c_node_count);
    c->c_nodes = nodes;
    c->c_node_count = count;
    return 0;
}

/* Sends each node's patch (those of unknown size are skipped: already
 * counted); ends the pass when nothing is left in flight. */
static void
patch_all(struct cap_pass *pass)
{
    struct capacity *c = pass->p_cap;
    struct cap_patch *pp;

    for (size_t i = 0; c != NULL && !pass->p_list_failed && i < c->c_node_count; i++) {
        if (c->c_nodes[i].cn_mib < 0)
            continue;
        if ((pp = calloc(1, sizeof(*pp))) != NULL) {
            pp->pp_pass = pass;
            pp->pp_index = i;
            if (kube_patch_capacity(c->c_kube, c->c_nodes[i].cn_name, c->c_resource,
                                    c->c_nodes[i].cn_mib, patch_done, pp) == 0) {
                pass->p_pending++;
                continue;
            }
            free(pp);
        }
        c->c_nodes[i].cn_ok = 0;
        pass->p_failed++;
        c->c_errors++;
        note_error(pass, "%s: the patch could not be sent", c->c_nodes[i].cn_name);
    }
    if (pass->p_pending == 0)
        pass_end(pass);
}

/* auto: each node's value from the exporter's totals (totals NULL: none could
 * be read, why in prom_error), else its GFD labels; a node of unknown size
 * keeps cn_mib -1, is counted and logged, and is not patched. */
static void
size_nodes(struct cap_pass *pass, const struct usage_reading *totals,
           const char *prom_error)
{
    struct capacity *c = pass->p_cap;
    char why[600], err[400];
    int rc;

    for (size_t i = 0; i < c->c_node_count; i++) {
        struct cap_node *n = &c->c_nodes[i];

        n->cn_mib = -1;
        rc = capsize_from_series(totals, n->cn_name, c->c_reserve_mib, &n->cn_mib, err,
                                 sizeof(err));
        if (rc == -1) {
            snprintf(why, sizeof(why),
                     "the node exporter's " TOTAL_QUERY " cannot be "
                     "trusted: %s",
                     err);
        } else if (rc == 0) {
            rc = capsize_from_gfd(n->cn_gfd_memory, n->cn_gfd_count, c->c_reserve_mib,
                                  &n->cn_mib, err, sizeof(err));
            if (rc == -1)
                snprintf(why, sizeof(why),
                         "no " TOTAL_QUERY " series for it, and its GPU "
                         "feature discovery labels make no sense: %s",
                         err);
            else if (rc == 0)
                snprintf(why, sizeof(why),
                         "size unknown: no " TOTAL_QUERY " series for it "
                         "in Prometheus%s%s%s and no GPU feature discovery labels "
                         "(" CAPSIZE_GFD_MEMORY ", " CAPSIZE_GFD_COUNT ")",
                         prom_error ? " (" : "", prom_error ? prom_error : "",
                         prom_error ? ")" : "");
        }
        if (rc == 1)
            continue;
        n->cn_mib = -1;
        n->cn_ok = 0;
        pass->p_unknown++;
        c->c_errors++;
        note_error(pass, "%s: not patched: %s", n->cn_name, why);
        log_event(LOG_LEVEL_WARN,
                  "capacity not advertised: the node's GPU size is not known", "node",
                  n->cn_name, "reason", why, (char *)NULL);
    }
}

static void
totals_done(struct prom_answer *a, void *arg)
{
    struct cap_pass *pass = arg;

    pass->p_pending--;
    if (pass->p_cap == NULL || a->pa_cancelled) {
        pass->p_cancelled = 1;
        pass->p_list_failed = 1;
        note_error(pass, "asking Prometheus for the GPU sizes: cancelled");
        pass_end(pass);
        return;
    }
    size_nodes(pass, a->pa_ok ? &a->pa_usage : NULL, a->pa_ok ? NULL : a->pa_error);
    patch_all(pass);
}

static void
list_done(struct kube_answer *a, void *arg)
{
    struct cap_pass *pass = arg;
    struct capacity *c = pass->p_cap;

    pass->p_pending--;
    if (c == NULL || a->ka_cancelled) {
        pass->p_cancelled = 1;
        pass->p_list_failed = 1;
        note_error(pass, "listing nodes: cancelled");
    } else if (a->ka_class != KUBE_OK) {
        pass->p_list_failed = 1;
        c->c_errors++;
        note_error(pass, "listing nodes failed: %s", a->ka_error);
    } else if (nodes_replace(c, a->ka_nodes, a->ka_node_gpu_memory, a->ka_node_gpu_count,
                             a->ka_node_count) == -1) {
        pass->p_list_failed = 1;
        c->c_errors++;
        note_error(pass, "listing nodes failed: out of memory");
    } else if (c->c_node_count == 0) {
        c->c_errors++;
        note_error(pass, "no node matches GPU_NODE_SELECTOR=%s", c->c_selector);
    } else if (c->c_auto && c->c_prom != NULL) {
        /* One query for every node's GPUs, grouped here by node and GPU. */
        if (prom_query_usage_gpu(c->c_prom, TOTAL_QUERY, "node", "node", c->c_gpu_label,
                                 totals_done, pass) == 0) {
            pass->p_pending++;
            return;
        }
        size_nodes(pass, NULL, "the query could not be sent");
    } else if (c->c_auto) {
        size_nodes(pass, NULL, "no Prometheus client");
    }
    patch_all(pass);
}

/* Starts a pass. 0, or -1 when one is in flight or the list cannot be sent. */
static int
pass_begin(struct capacity *c, int once, capacity_once_done_fn cb, void *arg)
{
    struct cap_pass *pass;

    if (c->c_pass != NULL)
        return -1;
    if ((pass = calloc(1, sizeof(*pass))) == NULL) {
        log_warnx("%s: out of memory", __func__);
        return -1;
    }
    pass->p_cap = c;
    pass->p_once = once;
    pass->p_once_cb = cb;
    pass->p_once_arg = arg;
    if (kube_list_nodes(c->c_kube, c->c_selector, list_done, pass) == -1) {
        free(pass);
        return -1;
    }
    pass->p_pending = 1;
    c->c_pass = pass;
    return 0;
}

/* The serve-mode timer: a pass, or a retry soon if none could start. */
static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct capacity *c = arg;

    if (c->c_pass != NULL) { /* a capacity_once() pass is running: come back later */
        schedule(c, c->c_retry_min_ms);
        return;
    }
    if (pass_begin(c, 0, NULL, NULL) == -1) {
        c->c_errors++;
        schedule(c, c->c_retry_min_ms);
    }
}

int
capacity_start(struct capacity *c)
{
    if (c->c_started)
        return -1;
    c->c_started = 1;
    schedule(c, 0);
    return 0;
}

int
capacity_once(struct capacity *c, capacity_once_done_fn cb, void *arg)
{
    if (cb == NULL)
        return -1;
    return pass_begin(c, 1, cb, arg);
}

void
capacity_foreach_node(const struct capacity *c, capacity_node_fn fn, void *arg)
{
    for (size_t i = 0; i < c->c_node_count; i++)
        fn(c->c_nodes[i].cn_name, c->c_nodes[i].cn_ok, arg);
}

uint64_t
capacity_error_count(const struct capacity *c)
{
    return c->c_errors;
}
