/* suggest_fetch.h -- what `budgets --suggest` asks the API server and Prometheus, one
 * call at a time */
#ifndef GVW_SUGGEST_FETCH_H
#define GVW_SUGGEST_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "suggest_pods.h"

struct sg_fetch;

/* The clients, made from the settings (the same PROMETHEUS_URL, API server,
 * token, CA and HTTP timeouts as `budgets`). NULL with a reason in err. */
struct sg_fetch *sg_fetch_new(const struct config *cfg, char *err, size_t errlen);
void sg_fetch_free(struct sg_fetch *f);

/* The GPU nodes (GPU_NODE_SELECTOR): owned names (free each and the array).
 * 0, or -1 with a reason in err. */
int sg_fetch_nodes(struct sg_fetch *f, char ***names, size_t *count, char *err,
                   size_t errlen);

/* The node's advertised capacity for GPUMEM_RESOURCE: 0 with *mib, or -1 with
 * why it is unknown in note (not advertised, or the node cannot be read), -2
 * (note says so) when the API server has no such node (404). */
int sg_fetch_capacity(struct sg_fetch *f, const char *node, int64_t *mib, char *note,
                      size_t notelen);

/* The node's pods (GET /api/v1/pods?fieldSelector=spec.nodeName=NODE). 0, or
 * -1 with a reason in err. */
int sg_fetch_pods(struct sg_fetch *f, const char *node, struct pod_list *out, char *err,
                  size_t errlen);

/* Receives a Prometheus answer: its HTTP status and body (borrowed). */
typedef void (*sg_body_fn)(long status, const char *body, size_t len, void *arg);

/* GET PROMETHEUS_URL/api/v1/query_range for promql, start .. end by step.
 * 0 after fn ran; 1 when the answer was over the body cap (fn not run); -1
 * when no answer came (err: curl's reason). */
int sg_fetch_range(struct sg_fetch *f, const char *promql, int64_t start, int64_t end,
                   int64_t step, sg_body_fn fn, void *arg, char *err, size_t errlen);

/* Bytes of answers read so far, and range queries sent (for the log line). */
void sg_fetch_stats(const struct sg_fetch *f, uint64_t *bytes, uint64_t *queries);

#endif
