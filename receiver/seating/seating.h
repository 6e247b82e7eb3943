/* seating.h -- the seating chart's facts: per GPU node (and GPU), capacity, budgets, live
 * use
 *
 * One builder, two readers: `budgets` prints these facts as a table or JSON,
 * and `serve`'s GET / draws them. Both get them from seating_look (below),
 * which gathers exactly as a decision does (gather.c, then the policy), so
 * "eligible or why not" is the policy's own why_not, never re-derived. */
#ifndef GVW_SEATING_H
#define GVW_SEATING_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "gather.h"
#include "node_json.h"

struct event_base;
struct prom;
struct kube;

/* One tenant on a card: a pod that declares a budget or uses VRAM there (or,
 * in sn_idle, a pod that declares a budget and uses no GPU). */
struct seating_tenant {
    char *st_namespace;        /* owned */
    char *st_pod;              /* owned */
    int64_t st_used_mib;       /* live use on this card (on this GPU in GPU scope) */
    int64_t st_total_used_mib; /* over every GPU of the node: what the budget is
                                  held against (= st_used_mib in node scope) */
    enum budget_state st_budget_state; /* NONE, OK, or BAD (unreadable) */
    int64_t st_budget_mib;             /* valid when BUDGET_OK */
    int64_t st_overshoot_mib; /* total used - budget, valid when BUDGET_OK; > 0 = over */
    int64_t st_over_here_mib; /* the part of this card's use past the budget:
                                 min(st_used_mib, overshoot), 0 when within */
    int st_eligible;          /* the policy would take it as a victim */
    const char *st_why_not;   /* static, the policy's rule; NULL when eligible */
};

/* One card: the node's only GPU (node scope), or one GPU of it. */
struct seating_card {
    char *sc_gpu;         /* owned; NULL in node scope */
    int64_t sc_total_mib; /* the device's own total where sc_free_source is
                             FREE_SOURCE_DEVICE, else GPU_TOTAL_MIB */
    int sc_free_known;
    int64_t sc_free_mib;             /* free VRAM now: the decision's own figure */
    enum free_source sc_free_source; /* where sc_free_mib came from, as a decision
                                  records it; FREE_SOURCE_NONE when not read */
    int sc_unattributed_known;       /* the device reported gpu_memory_unattributed_bytes
                                        (for every GPU of the card) in the reading used */
    int64_t sc_unattributed_mib;     /* memory no pod accounts for (driver, host
                                      processes, pods not known); shown, never judged */
    int64_t sc_used_mib;             /* sum of the tenants' use */
    char sc_error[1024]; /* GPU scope: why this GPU's reading is not usable; "" */
    struct seating_tenant *sc_tenants; /* owned; largest use first */
    size_t sc_tenant_count;
};

/* How the node's advertised capacity read. */
enum seating_capacity {
    SEATING_CAPACITY_OK,             /* sn_capacity_mib holds it */
    SEATING_CAPACITY_NOT_ADVERTISED, /* the node has no such resource */
    SEATING_CAPACITY_UNKNOWN,        /* the node could not be read: sn_capacity_error */
};

struct seating_node {
    char *sn_node; /* owned */
    enum seating_capacity sn_capacity;
    int64_t sn_capacity_mib; /* valid when SEATING_CAPACITY_OK */
    char sn_capacity_error[512];
    int sn_budgets_known;          /* the node's pods were listed */
    int64_t sn_budgets_mib;        /* sum of readable declared budgets;
                                      valid when sn_budgets_known */
    size_t sn_bad_budgets;         /* pods whose budget cannot be read */
    int sn_overcommitted;          /* capacity and budgets known, budgets > capacity */
    int64_t sn_floor_mib;          /* FLOOR_MIB */
    int sn_reading_ok;             /* the VRAM reading and the pods are in */
    char sn_error[1024];           /* why not, when !sn_reading_ok */
    struct seating_card *sn_cards; /* owned */
    size_t sn_card_count;
    /* GPU scope only: pods that hold a seat (declare a budget, readable or
     * not) but use no GPU, so no card lists them; by namespace, then pod.
     * st_used_mib is 0, st_eligible 0. Empty in node scope, where the one
     * card lists them. */
    struct seating_tenant *sn_idle; /* owned */
    size_t sn_idle_count;
    /* Where each pod's budget comes from (BUDGET_SOURCES), by namespace then
     * pod: seating_budget_source() reads it. */
    struct seating_source *sn_sources; /* owned */
    size_t sn_source_count;
};

struct seating_source {
    char *ss_namespace, *ss_pod; /* owned */
    const char *ss_source;       /* static: "resource", "hami", "kai", "dra" */
};

/* The budget source of pod ns/pod on n, or NULL when it declares none. */
const char *seating_budget_source(const struct seating_node *n, const char *ns,
                                  const char *pod);

/* The whole chart: every GPU node looked at. */
struct seating {
    struct seating_node *s_nodes; /* owned */
    size_t s_node_count;
    char s_error[512]; /* "" unless the GPU nodes could not be listed */
};

/*
 * Builds one node's facts from a gather's answer (borrowed, only read): one
 * card per GPU in GPU scope (gr_gpus), else one for the node; the budgets are
 * summed over pods (the node's pod list, NULL when it could not be read:
 * then the budgets are unknown and the reading is incomplete, saying
 * pods_error, or a plain sentence when that is NULL); in
 * GPU scope the seat-holders on no card go to sn_idle, judged with usage (the
 * used series, gather_usage(); NULL = by the cards alone); device is the
 * device query's answer (gather_device(); NULL = none), which gives a card
 * read from the device its own total and its unattributed memory; and the
 * node's capacity as node_json_capacity() read it (cap_ok = the Node was read;
 * else cap_error says why). Returns 0 and fills out (free it with
 * seating_node_free()), or -1 when out of memory, with nothing allocated.
 */
int seating_node_build(const char *node, const struct gather_answer *gr,
                       const struct pod_list *pods, const char *pods_error,
                       const struct usage_reading *usage,
                       const struct device_reading *device, int cap_ok,
                       enum node_capacity_state cap_state, int64_t cap_mib,
                       const char *cap_error, const struct config *cfg,
                       struct seating_node *out);

void seating_node_free(struct seating_node *n);
/* Frees every node; NULL is a no-op. Leaves s empty. */
void seating_free(struct seating *s);

/* Whether a card's free VRAM is known and below the floor. */
int seating_card_below_floor(const struct seating_node *n, const struct seating_card *c);

/* Where a card's free figure came from, for a person: "device", "computed as
 * GPU_TOTAL_MIB - used", "FREE_QUERY", "not read". */
const char *seating_free_source_words(enum free_source s);

/* "advertised", "not_advertised", "unknown". */
const char *seating_capacity_name(enum seating_capacity c);

/* --- collecting the facts, without blocking the loop ------------------- */

struct seating_look;

/* Called once with the facts (borrowed: valid during the call only). */
typedef void (*seating_done_fn)(const struct seating *s, void *arg);

/*
 * Looks at node (NULL = every node matching GPU_NODE_SELECTOR): the node
 * list, then for each node a gather and GET /api/v1/nodes/N, all at once.
 * cb runs from the loop once everything answered, never inside this call.
 * cfg, prom and kube are borrowed and must outlive the look; kube may be
 * NULL (then nodes cannot be listed or read, and say so). Returns the look
 * or NULL when out of memory.
 */
struct seating_look *seating_look_start(struct event_base *base, const struct config *cfg,
                                        struct prom *prom, struct kube *kube,
                                        const char *node, seating_done_fn cb, void *arg);

/* Stops a look: cb will not run. Calls still in flight finish detached and
 * the last one frees it. NULL is a no-op. Never call it from inside cb (cb's
 * return ends the look by itself). */
void seating_look_cancel(struct seating_look *l);

#endif
