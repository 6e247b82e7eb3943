/* seating_look.c -- gathers the seating chart's facts on the loop: nodes, readings,
 * capacities */
#include "seating.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "gpu_nodes.h"
#include "kube.h"
#include "log.h"

struct seating_look;

/* One node: its gather and its Node read, both in flight at once. */
struct node_look {
    struct seating_look *nl_look;      /* borrowed: the look it belongs to */
    char *nl_node;                     /* owned */
    struct gather *nl_g;               /* owned */
    const struct gather_answer *nl_gr; /* borrowed from nl_g once it answered */
    struct gather_answer nl_failed;    /* used when the gather could not start */
    int nl_cap_ok;
    enum node_capacity_state nl_cap_state;
    int64_t nl_cap_mib;
    char nl_cap_error[512];
};

struct seating_look {
    struct event_base *l_base;  /* borrowed */
    const struct config *l_cfg; /* borrowed */
    struct prom *l_prom;        /* borrowed */
    struct kube *l_kube;        /* borrowed, may be NULL */
    seating_done_fn l_cb;
    void *l_arg;
    int l_pending;             /* answers still to come (+1 while starting) */
    int l_cancelled;           /* cb must not run; the last answer frees */
    char l_error[512];         /* the node list failed */
    struct node_look *l_nodes; /* owned */
    size_t l_count;
};

static void
look_destroy(struct seating_look *l)
{
    for (size_t i = 0; i < l->l_count; i++) {
        gather_free(l->l_nodes[i].nl_g);
        free(l->l_nodes[i].nl_node);
    }
    free(l->l_nodes);
    free(l);
}

/* Everything answered: build the facts, hand them over, free the look. */
static void
conclude(struct seating_look *l)
{
    struct seating s;

    memset(&s, 0, sizeof(s));
    snprintf(s.s_error, sizeof(s.s_error), "%s", l->l_error);
    if (l->l_count > 0 && (s.s_nodes = calloc(l->l_count, sizeof(*s.s_nodes))) == NULL)
        snprintf(s.s_error, sizeof(s.s_error), "out of memory");
    for (size_t i = 0; s.s_nodes != NULL && i < l->l_count; i++) {
        struct node_look *nl = &l->l_nodes[i];

        if (seating_node_build(nl->nl_node, nl->nl_gr ? nl->nl_gr : &nl->nl_failed,
                               nl->nl_gr ? gather_pods(nl->nl_g) : NULL,
                               nl->nl_gr ? gather_pods_error(nl->nl_g) : NULL,
                               nl->nl_gr ? gather_usage(nl->nl_g) : NULL,
                               nl->nl_gr ? gather_device(nl->nl_g) : NULL, nl->nl_cap_ok,
                               nl->nl_cap_state, nl->nl_cap_mib, nl->nl_cap_error,
                               l->l_cfg, &s.s_nodes[i]) == -1) {
            snprintf(s.s_error, sizeof(s.s_error), "out of memory");
            break;
        }
        s.s_node_count = i + 1;
    }
    l->l_cb(&s, l->l_arg);
    seating_free(&s);
}

/* One answer is in; the last one concludes (or only frees a cancelled look). */
static void
answered(struct seating_look *l)
{
    if (--l->l_pending > 0)
        return;
    if (!l->l_cancelled)
        conclude(l);
    look_destroy(l);
}

static void
gathered(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct node_look *nl = arg;

    (void)g;
    nl->nl_gr = gr; /* lives until gather_free, in look_destroy */
    answered(nl->nl_look);
}

static void
node_cb(struct kube_answer *a, void *arg)
{
    struct node_look *nl = arg;

    if (a->ka_class != KUBE_OK) {
        snprintf(nl->nl_cap_error, sizeof(nl->nl_cap_error), "%s",
                 a->ka_error ? a->ka_error : "the node could not be read");
    } else {
        nl->nl_cap_ok = 1;
        nl->nl_cap_state = a->ka_capacity_state;
        nl->nl_cap_mib = a->ka_capacity_mib;
    }
    answered(nl->nl_look);
}

static void
start_node(struct seating_look *l, struct node_look *nl)
{
    nl->nl_look = l;
    nl->nl_failed.gr_status = GATHER_TELEMETRY;
    snprintf(nl->nl_failed.gr_error, sizeof(nl->nl_failed.gr_error),
             "the reading could not be started (out of memory)");
    if ((nl->nl_g = gather_start(l->l_base, l->l_cfg, l->l_prom, l->l_kube, nl->nl_node,
                                 NULL, gathered, nl)) != NULL)
        l->l_pending++;
    if (l->l_kube == NULL)
        snprintf(nl->nl_cap_error, sizeof(nl->nl_cap_error),
                 "no Kubernetes API server is configured");
    else if (kube_get_node_capacity(l->l_kube, nl->nl_node, l->l_cfg->c_gpumem_resource,
                                    node_cb, nl) == 0)
        l->l_pending++;
    else
        snprintf(nl->nl_cap_error, sizeof(nl->nl_cap_error),
                 "reading node %s: the request could not be started", nl->nl_node);
}

static int
add_node(struct seating_look *l, const char *node)
{
    struct node_look *grown = realloc(l->l_nodes, (l->l_count + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    l->l_nodes = grown;
    memset(&grown[l->l_count], 0, sizeof(*grown));
    if ((grown[l->l_count].nl_node = strdup(node)) == NULL)
        return -1;
    l->l_count++;
    return 0;
}

/* Starts every node added. */
static void
start_nodes(struct seating_look *l)
{
    for (size_t i = 0; i < l->l_count; i++)
        start_node(l, &l->l_nodes[i]);
}

/* One listed GPU node, added; on OOM the ones added are still looked at. */
static int
node_listed(const char *node, void *arg)
{
    struct seating_look *l = arg;

    if (l->l_cancelled)
        return -1;
    if (add_node(l, node) == -1) {
        snprintf(l->l_error, sizeof(l->l_error), "out of memory");
        return -1;
    }
    return 0;
}

static void
nodes_listed(enum gpu_nodes_end end, const char *error, void *arg)
{
    struct seating_look *l = arg;

    if (end == GPU_NODES_FAILED || end == GPU_NODES_CANCELLED)
        snprintf(l->l_error, sizeof(l->l_error), "cannot list GPU nodes: %s",
                 error ? error : "failed");
    else if (end == GPU_NODES_NONE)
        snprintf(l->l_error, sizeof(l->l_error), "no node matches GPU_NODE_SELECTOR (%s)",
                 l->l_cfg->c_gpu_node_selector);
    else if (!l->l_cancelled)
        start_nodes(l);
    answered(l);
}

static void
deferred_cb(evutil_socket_t fd, short what, void *arg)
{
    answered(arg);
}

struct seating_look *
seating_look_start(struct event_base *base, const struct config *cfg, struct prom *prom,
                   struct kube *kube, const char *node, seating_done_fn cb, void *arg)
{
    struct seating_look *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->l_base = base;
    l->l_cfg = cfg;
    l->l_prom = prom;
    l->l_kube = kube;
    l->l_cb = cb;
    l->l_arg = arg;
    l->l_pending = 1; /* held until everything is started */
    if (node != NULL) {
        if (add_node(l, node) == -1)
            snprintf(l->l_error, sizeof(l->l_error), "out of memory");
        start_nodes(l);
    } else if (kube == NULL) {
        snprintf(l->l_error, sizeof(l->l_error),
                 "no Kubernetes API server to list GPU nodes (set KUBE_API_URL, or give "
                 "--node)");
    } else if (gpu_nodes_each(kube, cfg->c_gpu_node_selector, node_listed, nodes_listed,
                              l) == 0) {
        l->l_pending++;
    } else {
        snprintf(l->l_error, sizeof(l->l_error), "cannot list GPU nodes");
    }
    /* Answer from the loop, never inside this call, even with nothing asked. */
    if (event_base_once(base, -1, EV_TIMEOUT, deferred_cb, l, NULL) == -1 &&
        --l->l_pending == 0) { /* nothing in flight either: give up */
        look_destroy(l);
        return NULL;
    }
    return l; /* else the last answer concludes */
}

void
seating_look_cancel(struct seating_look *l)
{
    if (l != NULL)
        l->l_cancelled = 1;
}
