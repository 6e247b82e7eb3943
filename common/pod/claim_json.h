/* claim_json.h -- DRA ResourceClaims for BUDGET_SOURCES=dra: which claims a node's pods
 * name, and what one resource.k8s.io/v1 ResourceClaim allocates (no I/O) */
#ifndef GVW_CLAIM_JSON_H
#define GVW_CLAIM_JSON_H

#include <stddef.h>

/* Claims read at most per pod list: beyond it a pod's claim is unreadable. */
#define DRA_CLAIMS_MAX 256
#define DRA_CLAIMS_MAX_TEXT "256"

/* One ResourceClaim a pod names (resourceClaimName in spec.resourceClaims[] or
 * status.resourceClaimStatuses[]). */
struct dra_claim {
    char *dc_namespace, *dc_name; /* owned */
    int dc_fetched;               /* the claim was read */
    char *dc_error;               /* owned: why it was not, else NULL */
    int dc_allocated;             /* it has status.allocation */
    char **dc_memory;             /* owned: consumedCapacity.memory of each allocation
                                     result of the driver; BSRC_NOT_STRING entries are
                                     static */
    size_t dc_memory_count;
    size_t dc_reserved; /* entries of status.reservedFor */
};

struct dra_claims {
    struct dra_claim *dl_items; /* owned */
    size_t dl_count;
    int dl_truncated; /* the pods named more than DRA_CLAIMS_MAX claims */
};

/* The distinct claims the pods of a PodList body name (spec and status; namespace
 * from each item's metadata), at most DRA_CLAIMS_MAX (then dl_truncated). A body this
 * reader cannot walk gives no claims (the PodList reader reports it). 0, or
 * -1 when out of memory. */
int claim_json_refs(const char *body, size_t len, struct dra_claims *out);

/* One ResourceClaim body into c (its namespace and name kept): dc_allocated,
 * the consumedCapacity memory of each status.allocation.devices.results[]
 * entry whose driver is driver, the count of status.reservedFor. 0 (and
 * dc_fetched), or -1 with why in err (not JSON, not an object; c stays
 * unfetched). */
int claim_json_parse(const char *body, size_t len, const char *driver,
                     struct dra_claim *c, char *err, size_t errlen);

/* The claim ns/name in l, or NULL. */
const struct dra_claim *dra_claims_find(const struct dra_claims *l, const char *ns,
                                        const char *name);

/* Frees l's contents; leaves it empty. NULL-safe. */
void dra_claims_free(struct dra_claims *l);

#endif
