/* usage.h -- per-pod VRAM use from Prometheus series, with plausibility checks */
#ifndef GVW_USAGE_H
#define GVW_USAGE_H

#include <stddef.h>
#include <stdint.h>

/* The most GPUs one node's reading may name: a reading naming more cannot be
 * one node's and is refused (SPEC "A decision"), which bounds the work and the
 * brakes a node's fan-out makes. */
#define USAGE_MAX_GPUS 256
/* The longest GPU label value taken (a UUID is 40 bytes): names key brakes and
 * gauges, so they are bounded in length as in count. */
#define USAGE_GPU_NAME_MAX 256
#define USAGE_GPU_NAME_MAX_TEXT "256"

/* One sample of the used-bytes query (one process, container or pod). */
struct usage_series {
    char *us_namespace; /* owned; value of NAMESPACE_LABEL, NULL if absent */
    char *us_pod;       /* owned; value of POD_LABEL, NULL if absent */
    char *us_gpu;       /* owned; value of GPU_LABEL, NULL if absent or not asked for */
    double us_bytes;    /* the sample value; may be NaN or +-Inf as sent */
};

struct strpool;

/* What a query returned. */
struct usage_reading {
    struct usage_series *ur_series; /* owned array */
    size_t ur_count;
    struct strpool *ur_pool; /* owned; when set, every string of the series lives
                                in it (and several series may share one): they
                                are freed with it, not one by one */
    uint64_t *ur_label_sets; /* owned, may be NULL: per series a hash of its whole
                                label set (prom_json), so two series with one label
                                set, which no Prometheus vector has, are told */
};

/* Frees the series and their strings; NULL is a no-op. Leaves r empty. */
void usage_reading_free(struct usage_reading *r);

/* One pod's summed use. */
struct pod_usage {
    const char *pu_namespace; /* borrowed from the reading summarised */
    const char *pu_pod;       /* borrowed from the reading summarised */
    double pu_bytes; /* sum of every series of this pod (in GPU scope: on every GPU) */
    double pu_gpu_bytes; /* GPU scope: its use on the GPU judged; else pu_bytes */
};

/* The reading summed per pod and judged. It borrows the names from the
 * reading: keep that alive while the summary is used. */
struct usage_summary {
    struct pod_usage *us_pods; /* owned array, sorted by namespace then pod */
    size_t us_count;
    double us_total_bytes;        /* sum over every series, attributed or not */
    double us_unattributed_bytes; /* series lacking the pod or namespace label
                                     (host processes): in the total, in no pod */
};

/*
 * Sums r per (namespace, pod) into out. Returns 0 when the reading is
 * plausible. Returns -1 with a sentence in err when it cannot be true: no
 * series at all, any value negative, NaN or infinite, one pod above total_mib, or all
 * pods together above total_mib. On -1 out is left empty. The caller frees out with
 * usage_summary_free().
 */
int usage_summarise(const struct usage_reading *r, int64_t total_mib,
                    struct usage_summary *out, char *err, size_t errlen);

void usage_summary_free(struct usage_summary *s);

/* A GPU's (or node's) total, in bytes, as the plausibility checks use it. */
struct usage_total {
    double ut_bytes;
    int ut_device; /* 1: the device's own total; 0: GPU_TOTAL_MIB (messages differ) */
};

/* usage_summarise() against a total in bytes. No series at all is an error,
 * except against the device's own total (ut_device): then an empty summary. */
int usage_summarise_total(const struct usage_reading *r, const struct usage_total *t,
                          struct usage_summary *out, char *err, size_t errlen);

/* The device's own total of gpu (device_total() in device.h; a callback so the
 * usage arithmetic stays below the device reading built on it): 1 with
 * *total_bytes, 0 when it reports none (GPU_TOTAL_MIB stands), -1 with why set
 * when its reading cannot be true. */
typedef int (*usage_device_total_fn)(const void *dev, const char *gpu,
                                     double *total_bytes, char *why, size_t whylen);

/* What GPU scope judges each GPU against (SPEC "Free VRAM"). */
struct usage_limits {
    int64_t ul_total_mib; /* GPU_TOTAL_MIB: where the device gives none */
    usage_device_total_fn ul_device_total; /* NULL = no device figures */
    const void *ul_device; /* borrowed: ul_device_total's first argument */
};

/* 1 when any series names a GPU: the node is then judged per GPU (SPEC "GPU
 * scope"). */
int usage_gpu_scoped(const struct usage_reading *r);

/*
 * The distinct GPUs the series name, sorted bytewise, into *out: an owned
 * array (free() it) of pointers borrowed from r. 0 (*count may be 0, *out
 * then NULL), or -1 when out of memory.
 */
int usage_gpus(const struct usage_reading *r, const char ***out, size_t *count);

/*
 * GPU scope: usage_summarise() for one GPU. us_pods are the pods using gpu
 * (more than 0 bytes there); pu_bytes is a pod's use summed over all its
 * series (every GPU, and those without a GPU label), pu_gpu_bytes its use on
 * gpu. us_total_bytes and us_unattributed_bytes count only series on gpu.
 * -1 with a sentence in err when what gpu's decision rests on cannot be
 * true: no series on gpu; a series on gpu, or any series of a pod using gpu,
 * negative, NaN or infinite; one pod above total_mib on gpu, or all together
 * above it. Series on other GPUs of pods not using gpu are not judged here.
 * On -1 out is left empty. The caller frees out with usage_summary_free().
 */
int usage_summarise_gpu(const struct usage_reading *r, const char *gpu, int64_t total_mib,
                        struct usage_summary *out, char *err, size_t errlen);

/*
 * The same, each GPU judged against its own total (the device's where
 * lim->ul_device reports a usable one, else ul_total_mib); -1 also when the
 * device's own reading of gpu cannot be true, and when a pod using gpu also
 * uses a GPU whose reading cannot be true (SPEC "GPU scope": its total is
 * unknowable). A GPU with no series but a usable device reading is no pod's:
 * 0 with out empty (its free is the device's).
 */
int usage_summarise_gpu_lim(const struct usage_reading *r, const char *gpu,
                            const struct usage_limits *lim, struct usage_summary *out,
                            char *err, size_t errlen);

/*
 * A node's reading indexed once for its per-GPU decisions (the series sorted
 * once, grouped per pod and per GPU, each GPU's plausibility judged once), so
 * a decision per GPU costs that GPU's series, and a node's fan-out grows as
 * n log n in the series, never as GPUs x series. r and lim (and what lim
 * points at) are borrowed and must outlive the index. NULL when out of memory.
 */
struct usage_index;
struct usage_index *usage_index_new(const struct usage_reading *r,
                                    const struct usage_limits *lim);
void usage_index_free(struct usage_index *ix);

/* The distinct GPUs the indexed series name. */
size_t usage_index_gpu_count(const struct usage_index *ix);

/*
 * usage_summarise_gpu_lim() on an index of the reading (same results, same
 * sentences), plus one more reading that cannot be true: a pod using gpu whose
 * use over every GPU is above the named GPUs' totals together (a huge series
 * without a GPU label; sums running to +Inf).
 */
int usage_summarise_gpu_ix(const struct usage_index *ix, const char *gpu,
                           struct usage_summary *out, char *err, size_t errlen);

/* Bytes to whole MiB, rounded down (towards -inf). */
int64_t usage_bytes_to_mib(double bytes);

#endif
