/* podlist.h -- the pods of one node as the exporter needs them: UID, names, container
 * IDs, budgets */
#ifndef GVW_PODLIST_H
#define GVW_PODLIST_H

#include <stddef.h>
#include <stdint.h>

#include "budget_src.h"

struct pl_container {
    char *pc_id;   /* owned: bare ID, runtime prefix ("containerd://") removed */
    char *pc_name; /* owned */
};

/* A pod's budget, read by the decision's own rules (SPEC "Where budgets come from"). */
enum pl_budget {
    PL_BUDGET_NONE,  /* declares none (or budgets were not asked for) */
    PL_BUDGET_OK,    /* pp_budget_mib */
    PL_BUDGET_BAD,   /* a value unreadable or negative: pp_budget_error says which */
    PL_BUDGET_SHARE, /* pp_budget_mib plus pp_budget_gpus of its GPU's total
                        (HAMi's gpumem-percentage, KAI's gpu-fraction): MiB
                        once the poll knows which GPU (podlist_share_mib()) */
};

struct pl_pod {
    char *pp_uid;                       /* owned: metadata.uid */
    char *pp_namespace;                 /* owned */
    char *pp_name;                      /* owned */
    struct pl_container *pp_containers; /* owned: containers, init and ephemeral ones
                                           that have a containerID */
    size_t pp_ncontainers;
    char *pp_mirror_uid; /* owned or NULL: a mirror pod's static pod UID (annotation
                            kubernetes.io/config.mirror), the one its cgroups name */
    enum pl_budget pp_budget;
    int64_t pp_budget_mib;        /* when PL_BUDGET_OK */
    char *pp_budget_error;        /* owned, when PL_BUDGET_BAD */
    double pp_budget_gpus;        /* when PL_BUDGET_SHARE */
    const char *pp_budget_source; /* static: the BUDGET_SOURCES word it came from */
};

struct pl_pods {
    struct pl_pod *pl_items; /* owned */
    size_t pl_count;
    char *pl_budgets_error; /* owned: why no budget could be read at all, else NULL */
};

/*
 * Reads a v1 PodList body (len bytes, need not be NUL-terminated): per item
 * metadata.uid/namespace/name (required, strings) and the name and
 * containerID of status.containerStatuses[], initContainerStatuses[] and
 * ephemeralContainerStatuses[], and a mirror pod's annotation
 * kubernetes.io/config.mirror (its static pod's UID). A pod in phase
 * Succeeded or Failed is not in out: it holds no seat and is no tenant (no
 * budget series, no budget error); a process still in its cgroup is
 * unattributed. More than POD_LIST_MAX such pods that have not finished, or
 * POD_LIST_MAX_TEXT bytes of their strings, and the list is refused as too
 * large (pods_json.h).
 * Members may come in any order; a key repeated where it is read is refused.
 * With resource (GPUMEM_RESOURCE; NULL or "" = none) each pod's budget is
 * read too, by the receiver's parser (receiver/policy/pods_json.c), so the
 * exporter and the decision can never read a declaration differently: limits,
 * else requests, summed over spec.containers, the full quantity grammar. When
 * that parser refuses the body whole, the pods are still returned (processes
 * stay attributable) with every budget PL_BUDGET_NONE and the reason in
 * pl_budgets_error.
 * Returns 0 with *out filled (free with podlist_free()), or -1 with one line
 * in err and nothing allocated.
 */
int podlist_parse(const char *body, size_t len, const char *resource, struct pl_pods *out,
                  char *err, size_t errlen);

/* The same, each pod's budget from the first of sources (BUDGET_SOURCES; NULL
 * or empty = resource alone, as podlist_parse()) that it declares, by the
 * receiver's reader: a share of the GPU comes back PL_BUDGET_SHARE. */
int podlist_parse_sources(const char *body, size_t len, const char *resource,
                          const struct bsrc_order *sources, struct pl_pods *out,
                          char *err, size_t errlen);

/* A PL_BUDGET_SHARE pod's budget in MiB by the device's own total of the GPU
 * it uses: the devices of gpus[] (ngpus, their totals in bytes; the GPUs its
 * processes are on), else, when it holds none, every device of the node
 * (all_totals, nall) when they are one size. 0 and *mib, or -1 with why
 * (its GPUs differ in size, no device, ...). Pure. */
int podlist_share_mib(const struct pl_pod *p, const uint64_t *gpus, size_t ngpus,
                      const uint64_t *all_totals, size_t nall, int64_t *mib, char *why,
                      size_t whylen);

/* Frees the list's contents; the struct may be reused. NULL-safe. */
void podlist_free(struct pl_pods *l);

/* The pod whose metadata.uid, or (a mirror pod) whose static pod UID, is uid. */
const struct pl_pod *podlist_find(const struct pl_pods *l, const char *uid);

/* The name of the container with this bare ID in pod p, or NULL. */
const char *podlist_container(const struct pl_pod *p, const char *id);

#endif
