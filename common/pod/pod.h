/* pod.h -- the one model of a node's pods: what the PodList reader (pods_json.c) makes
 * and the decision, the exporter and `budgets --suggest` read */
#ifndef GVW_POD_H
#define GVW_POD_H

#include <stddef.h>
#include <stdint.h>

/* How a pod's gpumem budget reads. */
enum budget_state {
    BUDGET_NONE, /* no container declares the resource */
    BUDGET_OK,   /* p_budget_mib is the sum over containers */
    BUDGET_BAD,  /* one value unreadable or negative; p_budget_error says which */
};

/* A container of the pod that has started (status.containerStatuses, and the init and
 * ephemeral ones): what the exporter names a process's container by. */
struct pod_container {
    char *pk_id;   /* in the list's pool, bare: "containerd://" and the like cut off */
    char *pk_name; /* in the list's pool */
};

/* One entry of spec.containers as it declares the budget, for `budgets --suggest`
 * (a patch sets the budget per container, in the source's own form). */
struct pod_decl {
    char *pd_name;   /* in the list's pool; "" when unnamed */
    int pd_declares; /* limits or requests name GPUMEM_RESOURCE */
    int64_t pd_mib;  /* its value (the limit, else the request) when it reads, else -1 */
    int pd_hami;     /* limits or requests name nvidia.com/gpumem or gpumem-percentage */
    int64_t pd_gpus; /* nvidia.com/gpu (the limit, else the request) when it reads and
                        is above 0, else 0 */
};

/* A pod of a node, as the PodList reader (pods_json.c) fills it for every program: the
 * decision reads the first block, the exporter adds its containers and mirror UID, and
 * `budgets --suggest` its workload and per-container declarations (each kept only when
 * the reader is asked to: pods_json.h's POD_KEEP_*). */
struct pod {
    char *p_namespace;    /* owned */
    char *p_name;         /* owned */
    char *p_uid;          /* owned; the eviction precondition */
    int p_running;        /* status.phase == "Running" */
    int p_terminating;    /* metadata.deletionTimestamp is set */
    int p_has_controller; /* an ownerReference with controller: true */
    int p_mirror;         /* annotation kubernetes.io/config.mirror present, or
                             owned by the core Node (a static pod's mirror) */
    int p_protected;      /* PROTECT_ANNOTATION is "true", any case */
    int64_t p_started;    /* status.startTime, unix seconds; 0 = unknown */
    enum budget_state p_budget_state;
    int64_t p_budget_mib; /* valid when BUDGET_OK */
    char *p_budget_error; /* owned; set when BUDGET_BAD, e.g. "container x: limit \"5q\"
                             is not a quantity" */
    const char *p_budget_source; /* static: "resource", "hami", "kai", "dra" (see
                                    budget_src.h), the first BUDGET_SOURCES word the pod
                                    declares; NULL when it declares none */
    char *p_budget_decl;         /* owned; the declaration in its source's own form
                                    ("nvidia.com/gpumem: 4000"), NULL when none */
    double p_budget_gpus;        /* > 0: the budget is p_budget_base_mib plus this many
                                    of its GPU's total; BUDGET_BAD until
                                    policy_resolve_budgets() knows the total */
    int64_t p_budget_base_mib;   /* the fixed part, when p_budget_gpus > 0 */
    char *p_ip;                  /* owned; status.podIP, NULL when absent */
    int p_host_network;          /* spec.hostNetwork is true */
    char *p_release;   /* owned; RELEASE_ANNOTATION's raw value, NULL when absent */
    int p_finished;    /* status.phase Succeeded or Failed: holds no seat, no budget (in
                          the list only with POD_KEEP_FINISHED) */
    int p_reservation; /* a KAI/Run:ai reservation pod (kai a source): no tenant, no
                          budget (in the list only with POD_KEEP_RESERVED) */
    /* POD_KEEP_IDS: */
    char *p_mirror_uid; /* owned; a mirror pod's static pod UID (the annotation
                           kubernetes.io/config.mirror), the one its cgroups name */
    struct pod_container *p_containers; /* borrowed from the list's pl_containers */
    size_t p_container_count;
    /* POD_KEEP_WORKLOAD: */
    char *p_owner_kind;    /* owned; the controller ownerReference's kind, NULL = none */
    char *p_owner_name;    /* owned; ... its name */
    char *p_template_hash; /* owned; labels["pod-template-hash"], NULL when absent */
    struct pod_decl *p_decls; /* borrowed from the list's pl_decls: spec.containers */
    size_t p_decl_count;
    int64_t p_kai_devices; /* gpu-fraction-num-devices (1 to 1024), else 1 */
};

struct strpool;

struct pod_list {
    struct pod *pl_pods; /* owned array */
    size_t pl_count;
    struct strpool *pl_pool; /* owned; when set, every string of the pods lives in
                                it and is freed with it, not one by one */
    struct pod_container *pl_containers; /* owned: every pod's p_containers, in order */
    struct pod_decl *pl_decls;           /* owned: every pod's p_decls, in order */
    char *pl_budgets_error; /* POD_STRICT: why no budget could be read (the decision's
                               reader would refuse the list), every pod's then NONE;
                               else NULL. In the pool. */
};

/* Frees every pod and the array; NULL is a no-op. Leaves l empty. */
void pod_list_free(struct pod_list *l);

/* A budget declared as a share of the GPU (p_budget_gpus > 0) in MiB on a GPU of
 * total_bytes (the device's gpu_memory_total_bytes): p_budget_base_mib plus the share,
 * rounded down as HAMi and KAI count. 0 and *mib, or -1 with why. */
int pod_share_mib(const struct pod *p, double total_bytes, int64_t *mib, char *why,
                  size_t whylen);

#endif
