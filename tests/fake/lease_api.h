/* lease_api.h -- a fake coordination.k8s.io/v1 Lease API: GET, POST and PUT of Leases
 * with the API server's resourceVersion rules, and faults on demand (jansson only) */
#ifndef GVW_LEASE_API_H
#define GVW_LEASE_API_H

#include <stddef.h>

#include <jansson.h>

struct lease_api;

/* An empty store; NULL when out of memory. */
struct lease_api *lease_api_new(void);
void lease_api_free(struct lease_api *la);

/*
 * Answers a call when path is a Lease path (/apis/coordination.k8s.io/v1/
 * namespaces/NS/leases[/NAME]): returns the HTTP status and the answer in
 * *out (owned by the caller: a Lease, or a Status). Returns 0 for any other
 * path (*out untouched). body is the request's JSON (NULL when none or not
 * JSON). As kube-apiserver: a GET of a missing Lease is 404; a POST of one
 * that exists is 409 AlreadyExists; a PUT must name the version it read
 * (409 Conflict "the object has been modified" when another write came
 * since); every write bumps resourceVersion; MicroTimes must carry exactly
 * six fractional digits (else 422, as metav1.MicroTime refuses them). Stricter
 * than the real server on purpose: a PUT without metadata.resourceVersion is
 * 422 (a blind overwrite is the bug this fake exists to catch).
 */
int lease_api_handle(struct lease_api *la, const char *method, const char *path,
                     json_t *body, json_t **out);

/*
 * Faults, for the HA tests: "none"; "fence:CODE" -- a PUT that changes the
 * gpu-vram-watchdog/last-act annotation (a fence) is answered CODE and
 * changes nothing; "all:CODE" -- every Lease call is answered CODE (an API
 * server out of reach). 0, or -1 for anything else.
 */
int lease_api_fault(struct lease_api *la, const char *spec);

/* Every Lease held, as {"NS/NAME": Lease, ...}, plus "fault". Owned. */
json_t *lease_api_state(const struct lease_api *la);

#endif
