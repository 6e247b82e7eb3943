/* gpu_nodes.h -- the one fan-out over the GPU nodes: list the nodes GPU_NODE_SELECTOR
 * picks, then one call per node (serve's alert without a node, `check`, the seating
 * chart) */
#ifndef GVW_GPU_NODES_H
#define GVW_GPU_NODES_H

struct kube;

/* How a listing ended. */
enum gpu_nodes_end {
    GPU_NODES_LISTED,    /* each ran for the nodes listed (until it stopped) */
    GPU_NODES_NONE,      /* the list answered: no node matches the selector */
    GPU_NODES_FAILED,    /* the list failed: error says why */
    GPU_NODES_CANCELLED, /* the kube client was freed with the list in flight */
};

/* One node listed, as the API server named it (borrowed: valid until done
 * returns; not checked: a caller that keys on it checks it with
 * node_name_ok()). 0 to go on, -1 to stop (out of memory: done still runs,
 * with GPU_NODES_LISTED). */
typedef int (*gpu_nodes_each_fn)(const char *node, void *arg);

/* Once, after the last each: how the listing ended. error (borrowed for the
 * call) is the list's own, with GPU_NODES_FAILED or GPU_NODES_CANCELLED; it may
 * be NULL. */
typedef void (*gpu_nodes_done_fn)(enum gpu_nodes_end end, const char *error, void *arg);

/*
 * Lists the GPU nodes (selector, a label selector; borrowed for the call) with kube,
 * then, from the loop, calls each once per node in the list's order and done
 * once. 0, or -1 when the list could not be started (out of memory, or the
 * request refused): then neither runs.
 */
int gpu_nodes_each(struct kube *kube, const char *selector, gpu_nodes_each_fn each,
                   gpu_nodes_done_fn done, void *arg);

#endif
