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

/* A pod as the decision needs it; pods_json.c fills these from a PodList. */
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
    char *p_release; /* owned; RELEASE_ANNOTATION's raw value, NULL when absent */
};

struct strpool;

struct pod_list {
    struct pod *pl_pods; /* owned array */
    size_t pl_count;
    struct strpool *pl_pool; /* owned; when set, every string of the pods lives in
                                it and is freed with it, not one by one */
};

/* Frees every pod and the array; NULL is a no-op. Leaves l empty. */
void pod_list_free(struct pod_list *l);

#endif
