/* capsize.h -- GPUMEM_CAPACITY_MIB=auto: a node's seats from its GPUs' sizes (no I/O) */
#ifndef GVW_CAPSIZE_H
#define GVW_CAPSIZE_H

#include <stddef.h>
#include <stdint.h>

#include "device.h" /* DEVICE_MAX_GPU_MIB, DEVICE_MAX_GPUS */
#include "usage.h"

/* GPU feature discovery's labels on the Node object. */
#define CAPSIZE_GFD_MEMORY "nvidia.com/gpu.memory" /* one GPU's memory, MiB ("15360") */
#define CAPSIZE_GFD_COUNT "nvidia.com/gpu.count"   /* physical GPUs on the node ("1") */

/*
 * The node's capacity from the node exporter's gpu_memory_total_bytes series
 * in r: each series' us_namespace is the node, us_gpu the GPU (the rest is
 * ignored). Per GPU, size = floor(bytes / MiB); the result is the sum over
 * the node's GPUs of (size - reserve_mib).
 * Returns 1 with *mib set; 0 when r has no series for node (ask elsewhere);
 * -1 with a sentence in err when what it has cannot be trusted: a value that
 * is NaN, infinite, zero or negative, a series without the GPU label, one GPU
 * with two different totals, a size not above reserve_mib, or a sum too large.
 * r may be NULL (no reading: 0). Allocates nothing.
 */
int capsize_from_series(const struct usage_reading *r, const char *node,
                        int64_t reserve_mib, int64_t *mib, char *err, size_t errlen);

/*
 * The same from GPU feature discovery's label values (NULL = label absent):
 * count x (memory - reserve_mib). 1 with *mib; 0 when both are absent; -1
 * with a sentence in err when only one is there, either is not a plain
 * positive decimal integer ("16GB", "24Gi", "-1", "0", " 15360"), either is
 * beyond the bounds above, or memory is not above reserve_mib.
 */
int capsize_from_gfd(const char *memory, const char *count, int64_t reserve_mib,
                     int64_t *mib, char *err, size_t errlen);

#endif
