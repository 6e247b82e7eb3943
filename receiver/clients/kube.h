/* kube.h -- the few Kubernetes API calls the watchdog makes, non-blocking */
#ifndef GVW_KUBE_H
#define GVW_KUBE_H

#include <stddef.h>
#include <stdint.h>

#include "kubec.h" /* struct kube_opts, enum kube_class, kube_class_name(),
                       kube_incluster_url() */
#include "node_json.h"
#include "pods_json.h"
#include "policy.h"

struct event_base;
struct kube;

/* What a call returned. Valid only during the callback, except what is taken. */
struct kube_answer {
    enum kube_class ka_class;
    int ka_cancelled;     /* kube_free() ran with the call in flight */
    long ka_status;       /* HTTP status; 0 when none arrived */
    const char *ka_error; /* NULL when KUBE_OK; else one line: what failed, with the
                             Status message and causes ("...disruption budget...") */
    long ka_elapsed_ms;
    long ka_retry_after_s;   /* KUBE_THROTTLED: the answer's Retry-After, seconds;
                                0 when absent or unreadable */
    struct pod_list ka_pods; /* kube_list_pods on KUBE_OK. The callback may take it
                                (copy the struct, then zero ka_pods); what is left is
                                freed after the callback. */
    char **ka_nodes;         /* kube_list_nodes on KUBE_OK: owned names, same rule
                                (take by copying and NULLing ka_nodes) */
    size_t ka_node_count;
    char **ka_node_gpu_memory; /* kube_list_nodes on KUBE_OK: each node's raw GPU
                                  feature discovery labels nvidia.com/gpu.memory and */
    char **ka_node_gpu_count;  /* nvidia.com/gpu.count, parallel to ka_nodes (an entry
                                  is NULL when absent); freed after the callback. A
                                  caller that takes ka_nodes must not rely on these */
    enum node_capacity_state ka_capacity_state; /* kube_get_node_capacity on KUBE_OK */
    int64_t ka_capacity_mib;                    /* valid when NODE_CAPACITY_OK */
};

typedef void (*kube_done_fn)(struct kube_answer *a, void *arg);

/*
 * Makes a client on base (borrowed, must outlive it). The URL must start with
 * http:// or https://. Returns the client (free with kube_free()) or NULL
 * with a reason in err. Files are not read here: a bad token file fails each
 * call with a clear ka_error instead.
 */
struct kube *kube_new(struct event_base *base, const struct kube_opts *o, char *err,
                      size_t errlen);

/* Frees the client; calls in flight end with ka_cancelled = 1 and KUBE_ERROR,
 * their callbacks running before kube_free returns. NULL is a no-op. Never
 * call it from inside one of its callbacks. */
void kube_free(struct kube *k);

/* The client's own connection (borrowed, freed by kube_free()), for a caller
 * that sends a call kube has no parser for (kubec_call()). */
struct kubec *kube_conn(struct kube *k);

/*
 * Every call below returns 0 and later runs cb exactly once from the loop, or
 * returns -1 (bad argument, out of memory; logged) and never runs cb.
 * Arguments are borrowed and copied.
 */

/* GET /api/v1/pods?fieldSelector=spec.nodeName=NODE, parsed with pods_json_parse(po). */
int kube_list_pods(struct kube *k, const char *node, const struct pod_parse_opts *po,
                   kube_done_fn cb, void *arg);

/* The same, each pod's budget from the first of sources it declares
 * (BUDGET_SOURCES; NULL = GPUMEM_RESOURCE alone): pods_json_parse_sources(). */
int kube_list_pods_sources(struct kube *k, const char *node,
                           const struct pod_parse_opts *po,
                           const struct bsrc_order *sources, kube_done_fn cb, void *arg);

/* GET /api/v1/nodes?labelSelector=SEL: the names of the matching nodes. */
int kube_list_nodes(struct kube *k, const char *selector, kube_done_fn cb, void *arg);

/*
 * POST /api/v1/namespaces/NS/pods/POD/eviction (policy/v1, UID precondition);
 * a dry run says "dryRun":["All"] in deleteOptions and ?dryRun=All (the server
 * takes either, and both when they match). Only here is a PodDisruptionBudget's
 * refusal KUBE_PDB_REFUSED; any other 429 is KUBE_THROTTLED. A 409 is
 * KUBE_CONFLICT only when the UID precondition failed. Evictions and deletes
 * get KUBE_RECYCLE_TIMEOUT_MS (or the client's timeout, when longer): the
 * server retries a UID conflict for ~10 s before it answers 409.
 */
int kube_evict(struct kube *k, const char *ns, const char *pod, const char *uid,
               int dry_run, kube_done_fn cb, void *arg);

/* The timeout of an eviction or deletion: outlasts the API server's own ~10 s
 * of retries (EvictionsRetry: 20 x 500 ms) with room for a slow etcd. */
#define KUBE_RECYCLE_TIMEOUT_MS 30000L

/* DELETE /api/v1/namespaces/NS/pods/POD with a UID precondition. A dry run says
 * "dryRun":["All"] in the DeleteOptions body: a real API server reads a
 * DELETE's options from its body alone when there is one, ignoring the query
 * (?dryRun=All is sent too, for the logs). Answers as kube_evict's, but for
 * PodDisruptionBudgets (a delete never meets them). */
int kube_delete_pod(struct kube *k, const char *ns, const char *pod, const char *uid,
                    int dry_run, kube_done_fn cb, void *arg);

/* PATCH /api/v1/nodes/NODE/status (json-patch): capacity[resource] = "MIB". */
int kube_patch_capacity(struct kube *k, const char *node, const char *resource,
                        int64_t mib, kube_done_fn cb, void *arg);

/* GET /api/v1/nodes/NODE: status.capacity[resource] (node_json_capacity())
 * into ka_capacity_*; a Node that cannot be read is KUBE_ERROR. */
int kube_get_node_capacity(struct kube *k, const char *node, const char *resource,
                           kube_done_fn cb, void *arg);

struct kube_event;
/* POST /apis/events.k8s.io/v1/namespaces/NS/events: the Event built by
 * kube_event_json() from ev (borrowed; NS is its pod's namespace). */
int kube_create_event(struct kube *k, const struct kube_event *ev, kube_done_fn cb,
                      void *arg);

#endif
