/* exporter.h -- the node's GPU exporter: per-process VRAM as Prometheus text */
#ifndef GVW_SIM_EXPORTER_H
#define GVW_SIM_EXPORTER_H

#include <event2/buffer.h>

#include "world.h"

/*
 * Appends the /metrics page for the world's current usage to out:
 * gpu_pod_memory_used_bytes{node,namespace,pod,pid} per running process (no
 * GPU label: it is the simple node-scope exporter), and
 * gpu_memory_total_bytes / gpu_memory_free_bytes{node,gpu} for each GPU.
 * The end-to-end test scrapes the real `gpu-vram-watchdog exporter` instead;
 * this one stays for tests that want a scrape target without it.
 * 0, or -1 when the buffer could not grow.
 */
int exporter_render(struct world *w, struct evbuffer *out);

#endif
