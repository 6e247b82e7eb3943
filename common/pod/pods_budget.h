/* pods_budget.h -- what a pod declares for BUDGET_SOURCES, collected during the PodList
 * walk and handed to budget_src (the hooks pods_json.c calls) */
#ifndef GVW_PODS_BUDGET_H
#define GVW_PODS_BUDGET_H

#include <stddef.h>

#include "budget_src.h"
#include "claim_json.h"
#include "jscan.h"
#include "pod.h"

struct strpool;

/* The walk's scratch for one pod at a time. */
struct pods_budget {
    struct bsrc_order pb_order; /* BUDGET_SOURCES; empty = resource alone */
    int pb_hami, pb_kai;        /* HAMi's resources, KAI's annotations are read */
    int pb_all;  /* read both even when not a source (--suggest prints them) */
    int pb_lean; /* keep no declaration text (POD_LEAN) */
    struct strpool *pb_pool;        /* borrowed: the list's, where values are kept */
    struct bsrc_container *pb_ctrs; /* owned, reused pod to pod */
    size_t pb_count, pb_cap;
    const char *pb_fraction, *pb_memory, *pb_devices; /* KAI annotations */
    int pb_drop; /* the pod just judged is no tenant (a reservation pod) */
    const struct dra_claims *pb_table; /* borrowed: the claims read; NULL = no DRA */
    const char **pb_claims;            /* owned: the pod's resourceClaimName values */
    struct bsrc_claim *pb_judged;      /* owned: scratch for the judge */
    size_t pb_nclaims, pb_capclaims;
};

/* Sets up b for a walk (order NULL or empty = resource alone); keep is the
 * reader's po_keep (POD_KEEP_WORKLOAD reads HAMi's and KAI's declarations whatever
 * the sources, POD_LEAN keeps no declaration text). */
void pods_budget_init(struct pods_budget *b, const struct bsrc_order *order,
                      struct strpool *pool, unsigned keep);
void pods_budget_free(struct pods_budget *b);

/* A new pod: forgets the last one's declarations. */
void pods_budget_pod(struct pods_budget *b);

/* A new container of spec.containers: 0, or -1 when out of memory. Its HAMi
 * values, when read, are b->pb_ctrs[b->pb_count - 1]'s. */
int pods_budget_container(struct pods_budget *b);

/* The current container's name (a held value; another type = unnamed). */
int pods_budget_container_name(struct pods_budget *b, const struct js_held *name);

/* A member of the current container's resources.limits (k 0) or .requests
 * (k 1): 1 when it was b's and its value is read, 0 when not b's (nothing
 * read), -1 on a read error or out of memory. */
int pods_budget_resource(struct pods_budget *b, struct js_scan *s,
                         const struct js_str *key, int k);

/* spec.resourceClaims or status.resourceClaimStatuses at s (read when claims
 * were fetched, else skipped): each entry's resourceClaimName, once per pod. A
 * claim the pod names directly (a shared one) is in its spec alone; one made
 * from a ResourceClaimTemplate in its status alone. 0, or -1 on a read error
 * or out of memory. */
int pods_budget_claims(struct pods_budget *b, struct js_scan *s);

/* A member of metadata.annotations, the same way. */
int pods_budget_annotation(struct pods_budget *b, struct js_scan *s,
                           const struct js_str *key);

/* Judges p (its GPUMEM_RESOURCE budget already read, named resource) by the
 * first source it declares and fills its budget fields; sets pb_drop for a
 * pod that is no tenant. 0, or -1 when out of memory. */
int pods_budget_judge(struct pods_budget *b, const char *resource, struct pod *p);

#endif
