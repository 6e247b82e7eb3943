/* device.h -- the device's own free/total per GPU (SPEC "Free VRAM"), judged without I/O
 */
#ifndef GVW_DEVICE_H
#define GVW_DEVICE_H

#include <stddef.h>

#include "usage.h"

/* The metric names and the tag the device query adds (see DEVICE_PROMQL). */
#define DEVICE_FREE_METRIC "gpu_memory_free_bytes"
#define DEVICE_TOTAL_METRIC "gpu_memory_total_bytes"
#define DEVICE_UNATTRIBUTED_METRIC "gpu_memory_unattributed_bytes"
#define DEVICE_TS_LABEL "gvw_ts"

/* Bounds that no real card reaches; past them a figure is nonsense. */
#define DEVICE_MAX_GPU_MIB (16LL * 1024 * 1024) /* 16 TiB */
#define DEVICE_MAX_GPUS 1024

/* 1 when l is a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not empty), so
 * nothing in it can change a query that names it. */
int device_label_name_ok(const char *l);

/*
 * The one query FREE_QUERY=auto asks per decision ($node still to replace):
 * the device's free, total and unattributed series (they keep __name__), the sample time
 * of each free series (timestamp(), tagged gvw_ts="device"), and per GPU the newest
 * sample time of the exporter's per-pod series (tagged gvw_ts="used"). A device series
 * older than the pod series of its GPU is stale (device_fresh). "or" keeps all three: the
 * tags make the label sets differ. gpu_label ("" = "uuid") must be a PromQL label name.
 * Returns 0, or -1 when it is not one or buf is too small.
 */
int device_promql(const char *gpu_label, char *buf, size_t len);

/* One GPU as the device query told it. */
struct device_gpu {
    const char
        *dg_gpu; /* borrowed from the raw reading: the GPU label value ("" if none) */
    int dg_have_free, dg_have_total, dg_have_ts, dg_have_used_ts;
    int dg_dup; /* two series of one kind for this GPU: which is right? */
    double dg_free_bytes, dg_total_bytes;
    double dg_ts;      /* the free series' sample time (unix s) */
    double dg_used_ts; /* the newest pod series' sample time on this GPU */
    int dg_have_unattributed;
    double dg_unattributed_bytes; /* memory no pod accounts for (shown, never judged) */
};

struct device_reading {
    struct device_gpu *dr_gpus; /* owned, sorted by dg_gpu */
    size_t dr_count;
    struct usage_reading dr_raw; /* owned: the series as parsed (names live here) */
};

/*
 * Builds out from raw, the device query's answer read as a usage_reading with
 * __name__ as the "namespace", gvw_ts as the "pod" and the GPU label as the
 * GPU (prom_query_device). Takes raw (zeroes the caller's). Series that are
 * none of the three kinds are ignored. 0; -1 when out of memory;
 * DEVICE_TOO_MANY_GPUS when the answer names more than USAGE_MAX_GPUS GPUs (no
 * node's reading). On error out is empty. n log n in the series.
 */
#define DEVICE_TOO_MANY_GPUS (-2)
int device_from_series(struct usage_reading *raw, struct device_reading *out);

void device_reading_free(struct device_reading *d);

/* The entry for gpu, or NULL. */
const struct device_gpu *device_find(const struct device_reading *d, const char *gpu);

/* Usable: free and total present, one of each, and the free sample no older than
 * the newest pod series on the GPU. Otherwise 0 and a short why ("stale"...). */
int device_fresh(const struct device_gpu *g, char *why, size_t whylen);

/* 1 when a usable entry cannot be true (free > total, negative, NaN or infinite
 * free or total, a total of 0 or past DEVICE_MAX_GPU_MIB), with a sentence in why. */
int device_impossible(const struct device_gpu *g, char *why, size_t whylen);

/* What one decision (a GPU, or the node: gpu NULL) reads from the device. */
struct device_figure {
    int df_have;       /* 1: df_free/df_total are the device's own */
    int df_impossible; /* 1: the reading cannot be true; df_why says why */
    double df_free_bytes, df_total_bytes;
    char df_why[256]; /* when !df_have: why there is no device figure; when
                         df_impossible: why it cannot be true */
};

/* The figure for gpu, or for the node (gpu NULL: every GPU summed; one unusable
 * GPU makes the whole node fall back, a partial sum being no node's free). d
 * NULL = no device query (df_have 0, df_why ""). */
void device_figure_for(const struct device_reading *d, const char *gpu,
                       struct device_figure *out);

/* usage_limits' ul_device_total over a struct device_reading (dev, NULL = none):
 * gpu's usable device total as device_figure_for() judges it. */
int device_total(const void *dev, const char *gpu, double *total_bytes, char *why,
                 size_t whylen);

#endif
