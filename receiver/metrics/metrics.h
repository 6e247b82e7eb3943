/* metrics.h -- the daemon's Prometheus metrics and their text exposition */
#ifndef GVW_METRICS_H
#define GVW_METRICS_H

#include <stdint.h>

#include "buf.h"
#include "decision_result.h"

/* Distinct label sets kept per labelled family; past it, new sets are counted
 * under the value "_other" so a hostile payload cannot grow memory. */
#define METRICS_MAX_SERIES 256

/* Resets every metric (start-up and tests). */
void metrics_init(int dry_run);
/* Frees what the metrics hold. */
void metrics_cleanup(void);

void metrics_webhook_request(int code);
void metrics_alert_received(const char *alertname, const char *status);
void metrics_decision(enum decision_result result, double seconds);
void metrics_free_vram(const char *node, int64_t free_mib);
/* GPU scope: the gauge carries {node, gpu}; gpu NULL is metrics_free_vram(). */
void metrics_free_vram_gpu(const char *node, const char *gpu, int64_t free_mib);
void metrics_capacity_set(const char *node, int ok);
void metrics_capacity_errors_set(uint64_t total);
/* Decisions waiting their turn behind MAX_CONCURRENT_DECISIONS. */
void metrics_decisions_queued_set(uint64_t queued);
/* A Kubernetes Event that could not be written. */
void metrics_event_error(void);
/* High availability: 1 when this replica leads (1 without leader election,
 * the default after metrics_init), and how many times it became the leader. */
void metrics_leader_set(int leading);
void metrics_leader_transitions_set(uint64_t total);

/* A function run at the start of every render, to pull state that lives
 * elsewhere (capacity advertising) into the metrics. NULL = none. */
typedef void (*metrics_collector_fn)(void *arg);
void metrics_set_collector(metrics_collector_fn fn, void *arg);

/* Appends the text exposition (format 0.0.4) to out. 0, or -1 on OOM. */
int metrics_render(struct buf *out);

#endif
