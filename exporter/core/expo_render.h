/* expo_render.h -- the exporter's /metrics text from one poll (pure) */
#ifndef GVW_EXPO_RENDER_H
#define GVW_EXPO_RENDER_H

#include "attribute.h"
#include "buf.h"
#include "nvml.h"
#include "podlist.h"

/* What the exporter says about itself. */
struct expo_status {
    const char *es_node;       /* borrowed: NODE_NAME */
    int es_up;                 /* the last poll read NVML */
    double es_last_poll;       /* unix seconds of the last poll that read NVML; 0 =
                                  never (the series is then left out) */
    double es_poll_duration;   /* seconds the last poll took */
    uint64_t es_budget_errors; /* pods whose budget was unreadable, each once */
    /* A PL_BUDGET_SHARE pod whose GPU's total is not known this poll: its
     * series is left out, and this (NULL = nobody) is told why. */
    void (*es_unresolved)(const struct pod *p, const char *why, void *arg);
    void *es_arg;
};

/*
 * Appends the text exposition to out. With es_up 1, snap and attr (borrowed)
 * give the device, pod and unattributed series, and pods (borrowed, NULL =
 * none) the budget series of every pod not finished that declares a readable
 * budget; with es_up 0 they are ignored and only the exporter's own series
 * are written (stale figures must not look live). 0, or -1 when out is full
 * or out of memory.
 */
int expo_render(struct buf *out, const struct expo_status *st,
                const struct nvml_snapshot *snap, const struct attr_tally *attr,
                const struct pod_list *pods);

#endif
