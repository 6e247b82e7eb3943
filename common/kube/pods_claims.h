/* pods_claims.h -- a node's pod list, then the ResourceClaims its pods name, then the
 * list parsed with them: the one claims reader serve and the exporter share */
#ifndef GVW_PODS_CLAIMS_H
#define GVW_PODS_CLAIMS_H

#include <stddef.h>

#include "claim_json.h"
#include "kubec.h"

/* Parses the PodList body (len bytes, NUL-terminated) with claims: NULL when no
 * driver was given (dra is not listed), else the claims its pods name, each read
 * (dc_fetched) or with why not (dc_error). 0, or -1 with one line in err. */
typedef int (*pods_claims_parse_fn)(const char *body, size_t len,
                                    const struct dra_claims *claims, char *err,
                                    size_t errlen, void *arg);

/* One list. Everything is borrowed and copied before pods_claims_list returns. */
struct pods_claims_call {
    const char *pq_node;           /* spec.nodeName of the pods listed */
    const char *pq_driver;         /* DRA_DRIVER; NULL = dra not listed: no claim read */
    pods_claims_parse_fn pq_parse; /* runs once, before pq_done, when the list came */
    kubec_done_fn pq_done;         /* runs exactly once, from the loop */
    void *pq_arg;                  /* for both */
};

/*
 * GET /api/v1/pods?fieldSelector=spec.nodeName=NODE; with a driver, then one
 * GET /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME per distinct
 * claim the pods name (claim_json_refs(), at most DRA_CLAIMS_MAX), all at once on
 * the client's loop; the list is parsed once every answer is in. A claim that
 * cannot be read keeps the answer's line in its dc_error (the parse makes the
 * pods naming it unreadable, "claim NS/NAME could not be read: ..."). pq_done
 * then gets the list's answer, KUBE_ERROR with pq_parse's reason, or, when
 * kubec_free() ran meanwhile, kr_cancelled (pq_parse not run). Returns 0, or -1
 * (out of memory, the call could not start; logged) and nothing runs.
 */
int pods_claims_list(struct kubec *k, const struct pods_claims_call *q);

#endif
