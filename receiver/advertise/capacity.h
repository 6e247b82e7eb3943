/* capacity.h -- advertise the gpumem extended resource on every GPU node, and keep it
 * there */
#ifndef GVW_CAPACITY_H
#define GVW_CAPACITY_H

#include <stdint.h>

struct event_base;
struct kube;
struct capacity;

#define CAPACITY_RETRY_MIN_MS 5000L   /* first retry after a failed pass */
#define CAPACITY_RETRY_MAX_MS 300000L /* backoff ceiling when the interval is 0 */
#define CAPACITY_SIZE_RETRY_MS                                                           \
    30000L /* auto: a node of unknown size is looked at again */

struct prom;

struct capacity_opts {
    const char *co_resource;  /* borrowed (copied): GPUMEM_RESOURCE, domain/name */
    int64_t co_capacity_mib;  /* GPUMEM_CAPACITY_MIB as a number (when !co_auto) */
    int co_auto;              /* GPUMEM_CAPACITY_MIB=auto: each node its own value,
                                 Σ over its GPUs of (size - co_reserve_mib) */
    int64_t co_reserve_mib;   /* GPUMEM_RESERVE_MIB (auto only) */
    struct prom *co_prom;     /* borrowed, may be NULL (auto: the sizes then come from
                                 the GPU feature discovery labels alone) */
    const char *co_gpu_label; /* borrowed (copied): GPU_LABEL, the series label naming
                                 a GPU; NULL or "" = "uuid" */
    long co_size_retry_ms;    /* 0 = CAPACITY_SIZE_RETRY_MS; tests set it short */
    const char *co_selector;  /* borrowed (copied): GPU_NODE_SELECTOR; "" = every node */
    long co_interval_s;       /* ADVERTISE_INTERVAL; 0 = only at start-up (but failures
                                 are still retried until one pass succeeds) */
    long co_retry_min_ms;     /* 0 = CAPACITY_RETRY_MIN_MS; tests set it short */
};

/*
 * Makes the advertiser; it does nothing until capacity_start() or
 * capacity_once(). base and kube are borrowed: free the advertiser before
 * them (calls still in flight then end quietly). Returns NULL on a missing
 * resource, a negative capacity or no memory (logged).
 */
struct capacity *capacity_new(struct event_base *base, struct kube *kube,
                              const struct capacity_opts *o);

/* Frees it; safe with a pass in flight (its answers are then ignored) and from
 * inside a capacity_once callback. NULL is a no-op. */
void capacity_free(struct capacity *c);

/*
 * serve mode: a pass now (from the loop), then every interval. A pass lists
 * the nodes matching the selector and PATCHes each one's status. A failed
 * pass -- the list failed, no node matched, or a node's patch failed -- is
 * counted and retried after 5 s, doubling up to the interval (5 min when the
 * interval is 0). With auto, a pass lists the nodes (with their GPU feature
 * discovery labels), asks Prometheus once for gpu_memory_total_bytes of every
 * node, and patches each node whose size is known; a node whose size cannot
 * be learned (or makes no sense) is not patched, is counted as an error, and
 * the next pass comes within co_size_retry_ms (30 s), whatever the interval.
 * Nothing here ever stops the daemon. 0, or -1 if started.
 */
int capacity_start(struct capacity *c);

/* "advertise --once": the outcome of one pass, no retries. ok = 1 only when
 * the list worked, at least one node matched (none is a failure: "no node
 * matches GPU_NODE_SELECTOR=..."), and every node was patched (with auto, a
 * node of unknown size is not patched: ok = 0). summary is one
 * line, borrowed for the callback. */
typedef void (*capacity_once_done_fn)(int ok, const char *summary, void *arg);

/* Runs one pass; cb runs once, later, from the loop. -1 (cb never runs) when a
 * pass is already in flight or the list cannot be sent. */
int capacity_once(struct capacity *c, capacity_once_done_fn cb, void *arg);

/* For metrics: every node of the last successful list, with 1 when the last
 * patch of that node succeeded, else 0 (also while its first patch is in
 * flight). node is borrowed for the call. */
typedef void (*capacity_node_fn)(const char *node, int ok, void *arg);
void capacity_foreach_node(const struct capacity *c, capacity_node_fn fn, void *arg);

/* Failed lists, empty lists, failed patches and (auto) nodes left unpatched
 * for want of a size, since start-up; each pass counts each again. */
uint64_t capacity_error_count(const struct capacity *c);

#endif
