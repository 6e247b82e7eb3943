/* node_json.h -- a v1 Node's advertised capacity of one extended resource */
#ifndef GVW_NODE_JSON_H
#define GVW_NODE_JSON_H

#include <stddef.h>
#include <stdint.h>

/* What status.capacity says about the resource. */
enum node_capacity_state {
    NODE_CAPACITY_ABSENT, /* the node does not advertise it (never patched) */
    NODE_CAPACITY_OK,     /* *mib holds the value */
};

/*
 * Reads status.capacity[resource] from a v1 Node body (len bytes, need not be
 * NUL-terminated) with the Kubernetes quantity grammar ("14k" is 14000; the
 * integer is MiB for the gpumem resource). A node without status, capacity or
 * that key is NODE_CAPACITY_ABSENT. Returns 0 and sets *state (and *mib when
 * OK), or -1 with a reason in err: not JSON, not an object, a repeated key on
 * the path, a value that is not a string quantity, or a negative one.
 * Allocates nothing.
 */
int node_json_capacity(const char *body, size_t len, const char *resource,
                       enum node_capacity_state *state, int64_t *mib, char *err,
                       size_t errlen);

#endif
