/* podlist.h -- the pods of one node as the exporter reads them: the one pod model
 * (common/pod) with each pod's containers and mirror UID, its budget in the
 * exporter's four states, and the lookups a process's cgroup asks */
#ifndef GVW_PODLIST_H
#define GVW_PODLIST_H

#include <stddef.h>
#include <stdint.h>

#include "budget_src.h"
#include "claim_json.h"
#include "pod.h"

/* What the exporter asks of the PodList reader (pods_json.h): the containers that
 * started and a mirror pod's static UID; reservation pods stay (their processes are
 * theirs); nothing it never shows; a wrong shape refuses the list. */
#define PODLIST_KEEP (POD_KEEP_IDS | POD_KEEP_RESERVED | POD_LEAN | POD_STRICT)

/* A pod's budget, read by the decision's own rules (SPEC "Where budgets come from"). */
enum pl_budget {
    PL_BUDGET_NONE,  /* declares none (or budgets were not asked for) */
    PL_BUDGET_OK,    /* p_budget_mib */
    PL_BUDGET_BAD,   /* a value unreadable or negative: p_budget_error says which */
    PL_BUDGET_SHARE, /* p_budget_base_mib plus p_budget_gpus of its GPU's total
                        (HAMi's gpumem-percentage, KAI's gpu-fraction): MiB
                        once the poll knows which GPU (podlist_share_mib()) */
};

/* p's budget as the exporter tells it. */
enum pl_budget podlist_budget(const struct pod *p);

/*
 * Reads a v1 PodList body (len bytes, need not be NUL-terminated) with the one
 * PodList reader (pods_json_parse_sources(), PODLIST_KEEP): per item
 * metadata.uid/namespace/name (required, strings) and the name and bare
 * containerID of status.containerStatuses[], initContainerStatuses[] and
 * ephemeralContainerStatuses[], and a mirror pod's annotation
 * kubernetes.io/config.mirror (its static pod's UID). A pod in phase
 * Succeeded or Failed is not in out: it holds no seat and is no tenant (no
 * budget series, no budget error); a process still in its cgroup is
 * unattributed. More than POD_LIST_MAX such pods that have not finished, or
 * POD_LIST_MAX_TEXT bytes of their strings, and the list is refused as too
 * large (pods_json.h). Members may come in any order; a key repeated where it
 * is read is refused. With resource (GPUMEM_RESOURCE; NULL or "" = none) each
 * pod's budget is read by the decision's own rules, so the exporter and the
 * decision can never read a declaration differently: limits, else requests,
 * summed over spec.containers, the full quantity grammar. Where the decision
 * would refuse the body whole, the pods are still returned (processes stay
 * attributable) with every budget PL_BUDGET_NONE and the reason in
 * pl_budgets_error. Returns 0 with *out filled (free with pod_list_free()), or
 * -1 with one line in err and nothing allocated.
 */
int podlist_parse(const char *body, size_t len, const char *resource,
                  struct pod_list *out, char *err, size_t errlen);

/* The same, each pod's budget from the first of sources (BUDGET_SOURCES; NULL
 * or empty = resource alone, as podlist_parse()) that it declares: a share of
 * the GPU comes back PL_BUDGET_SHARE. */
int podlist_parse_sources(const char *body, size_t len, const char *resource,
                          const struct bsrc_order *sources, struct pod_list *out,
                          char *err, size_t errlen);

/* The same, with the ResourceClaims read for this list (BUDGET_SOURCES=dra:
 * common/kube/pods_claims.h; NULL = none were read, and no pod declares DRA). */
int podlist_parse_claims(const char *body, size_t len, const char *resource,
                         const struct bsrc_order *sources,
                         const struct dra_claims *claims, struct pod_list *out, char *err,
                         size_t errlen);

/* A PL_BUDGET_SHARE pod's budget in MiB by the device's own total of the GPU
 * it uses: the devices of gpus[] (ngpus, their totals in bytes; the GPUs its
 * processes are on), else, when it holds none, every device of the node
 * (all_totals, nall) when they are one size. 0 and *mib, or -1 with why
 * (its GPUs differ in size, no device, ...). Pure. */
int podlist_share_mib(const struct pod *p, const uint64_t *gpus, size_t ngpus,
                      const uint64_t *all_totals, size_t nall, int64_t *mib, char *why,
                      size_t whylen);

/* The pod whose metadata.uid, or (a mirror pod) whose static pod UID, is uid. */
const struct pod *podlist_find(const struct pod_list *l, const char *uid);

/* The name of the container with this bare ID in pod p, or NULL. */
const char *podlist_container(const struct pod *p, const char *id);

#endif
