/* suggest_pods.h -- a node's PodList as `budgets --suggest` needs it: owners, containers,
 * budgets (no I/O) */
#ifndef GVW_SUGGEST_PODS_H
#define GVW_SUGGEST_PODS_H

#include <stddef.h>
#include <stdint.h>

#include "budget_src.h"
#include "policy.h" /* enum budget_state */

struct strpool;

/* One container's declaration of the budget resource. */
struct sg_container {
    char *sc_name;   /* borrowed from the list's pool; "" when unnamed */
    int sc_declares; /* limits or requests name the resource */
    int64_t sc_mib;  /* its value (limit, else request) when readable, else -1 */
    int sc_hami;     /* limits or requests name nvidia.com/gpumem or gpumem-percentage */
    int64_t sc_gpus; /* nvidia.com/gpu (limit, else request) when readable, else 0 */
};

struct sg_pod {
    char *sp_namespace, *sp_name; /* borrowed from the pool */
    char *sp_owner_kind;          /* the controller ownerReference's kind; NULL = none */
    char *sp_owner_name;          /* ... its name */
    char *sp_hash;                /* labels["pod-template-hash"], NULL when absent */
    int sp_terminal; /* status.phase Succeeded or Failed: holds no seat, no budget
                        (BUDGET_NONE); kept so its series still count toward
                        its workload's history */
    struct sg_container *sp_containers; /* owned array */
    size_t sp_container_count;
    /* The decision's budget (pods_json_parse: limits, else requests, summed
     * over containers, the full quantity grammar). */
    enum budget_state sp_budget_state;
    int64_t sp_budget_mib;        /* when BUDGET_OK */
    const char *sp_budget_source; /* static: the BUDGET_SOURCES word its budget came
                                     from (see budget_src.h); NULL = none */
    int64_t sp_kai_devices;       /* the gpu-fraction-num-devices annotation, else 1 */
};

struct sg_pod_list {
    struct sg_pod *sl_pods; /* owned */
    size_t sl_count;
    struct strpool *sl_pool; /* owned: every string above */
};

/* Parses a v1 PodList (len bytes) for resource. Returns 0 and fills out (free
 * with sg_pod_list_free()), or -1 with a reason in err and nothing allocated. */
int sg_pods_parse(const char *body, size_t len, const char *resource,
                  struct sg_pod_list *out, char *err, size_t errlen);

/* The same, each pod's budget from the first of sources (BUDGET_SOURCES; NULL or
 * empty = resource alone) that it declares. With kai, the KAI/Run:ai reservation
 * pods count as finished: no seat, no budget. */
int sg_pods_parse_sources(const char *body, size_t len, const char *resource,
                          const struct bsrc_order *sources, struct sg_pod_list *out,
                          char *err, size_t errlen);

/* Frees it; leaves it empty. An empty list is a no-op. */
void sg_pod_list_free(struct sg_pod_list *l);

#endif
