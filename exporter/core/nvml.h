/* nvml.h -- NVIDIA's management library, loaded with dlopen: devices, memory, processes
 */
#ifndef GVW_NVML_H
#define GVW_NVML_H

#include <stddef.h>
#include <stdint.h>

struct nvml;

#define NVML_TEXT_MAX 96 /* UUID and model name, NUL included (NVML's own limits) */

/* One process on a GPU as NVML lists it. */
struct nvml_proc {
    uint32_t np_pid;
    uint64_t np_used; /* bytes; meaningful only when np_known */
    int np_known;     /* 0 when NVML reports NVML_VALUE_NOT_AVAILABLE */
};

/* One GPU. */
struct nvml_device {
    unsigned nd_index;
    char nd_uuid[NVML_TEXT_MAX];  /* valid UTF-8 (bad bytes as U+FFFD), maybe cut */
    char nd_model[NVML_TEXT_MAX]; /* likewise */
    uint64_t nd_total;            /* bytes, as NVML reports */
    uint64_t nd_free;             /* bytes, as NVML reports */
    struct nvml_proc *nd_procs;   /* owned: compute then graphics list, as listed */
    size_t nd_nprocs;
};

/* Everything one poll read. */
struct nvml_snapshot {
    struct nvml_device *ns_devices; /* owned */
    size_t ns_count;
};

/*
 * Loads the library at path (dlopen: a bare name searches the usual places),
 * finds the calls it needs (the process lists: _v3, else _v2, else the
 * unversioned one) and initialises it. Returns the handle (nvml_close()) or
 * NULL with one line in err ("libnvidia-ml.so.1: cannot open shared object
 * file...", "nvmlInit_v2: Driver Not Loaded").
 */
struct nvml *nvml_open(const char *path, char *err, size_t errlen);

/* Shuts NVML down and unloads it. NULL is a no-op. */
void nvml_close(struct nvml *n);

/*
 * Reads every GPU. Returns 0 with *out filled (free with
 * nvml_snapshot_free()), or -1 with one line in err (a lost GPU, any failed
 * call) and nothing allocated: a partial read is never reported.
 */
int nvml_read(struct nvml *n, struct nvml_snapshot *out, char *err, size_t errlen);

void nvml_snapshot_free(struct nvml_snapshot *s);

#endif
