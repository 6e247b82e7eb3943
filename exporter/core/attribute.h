/* attribute.h -- GPU memory per container: NVML's processes joined to their pods (pure)
 */
#ifndef GVW_ATTRIBUTE_H
#define GVW_ATTRIBUTE_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "nvml.h"
#include "podlist.h"

/* What the poll learned about one PID from PROC_ROOT/PID/cgroup. */
struct attr_pid {
    uint32_t ap_pid;
    int ap_found;           /* the cgroup file named a pod */
    struct cgroup_id ap_id; /* when ap_found */
};

/* One gpu_pod_memory_used_bytes series. Strings borrowed from the inputs. */
struct attr_series {
    size_t as_device; /* index into the snapshot's devices */
    const char *as_namespace;
    const char *as_pod;
    const char *as_container; /* "" when the container could not be matched */
    uint64_t as_bytes;        /* its processes summed, saturating at UINT64_MAX */
};

/* One device's figures. */
struct attr_device {
    uint64_t ad_used;         /* total - free (0 if free > total) */
    uint64_t ad_unattributed; /* used that no series accounts for */
};

struct attr_tally {
    struct attr_series *ar_series; /* owned */
    size_t ar_nseries;
    struct attr_device *ar_devices; /* owned, one per snapshot device */
    /* A process named a pod UID the list does not have, or a container ID a
     * known pod does not have: the pod list should be fetched again. The
     * first such key (UID, or UID/ID) is in ar_unknown. */
    int ar_unknown_seen;
    char ar_unknown[CGROUP_UID_MAX + CGROUP_CID_MAX];
};

/* a + b, or UINT64_MAX when that does not fit: per-process figures are
 * NVML's word, and a sum that wrapped (2^63 + 2^63 + 5 GiB read as 5 GiB)
 * would look plausible. UINT64_MAX bytes is past any card's total, so the
 * receiver reads the saturated series as impossible, never as small. */
static inline uint64_t
attr_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Joins snap's processes to pods. A PID in both of a device's lists counts
 * once (the larger figure; a figure in one list wins over none in the
 * other). A process whose memory NVML cannot report in either list, whose
 * cgroup names no pod, or whose pod is not in pods counts only toward the
 * device's unattributed memory; a known pod whose container is not matched
 * gets container "". pids[] (npids) holds what the cgroup files said; a PID
 * missing from it counts as unknown. is_asked(key, arg) (NULL = never) tells
 * keys that already caused a re-list, so they do not ask again.
 * Returns 0 with *out filled (attr_tally_free()), or -1 when out of memory.
 * Borrows every input; the series point into snap and pods.
 */
int attribute(const struct nvml_snapshot *snap, const struct attr_pid *pids, size_t npids,
              const struct pod_list *pods, int (*is_asked)(const char *key, void *arg),
              void *arg, struct attr_tally *out);

void attr_tally_free(struct attr_tally *r);

/* What attribute() made of one process entry. */
enum attr_why {
    ATTR_POD,           /* counted toward *pod (container *container, "" unmatched) */
    ATTR_DUPLICATE,     /* the same PID earlier in the device's lists: counted there */
    ATTR_NO_MEMORY,     /* NVML cannot report its memory in either list */
    ATTR_NO_POD_CGROUP, /* its cgroup names no pod (a host process), or it has gone */
    ATTR_POD_UNKNOWN,   /* its cgroup names a pod the list lacks */
};

/*
 * Judges process i of device d exactly as attribute() counts it: *used gets
 * its figure (duplicates folded in; 0 unless known), *pod and *container are
 * set for ATTR_POD (borrowed from pods), *ap (may be NULL) gets what its
 * cgroup file said.
 */
enum attr_why attribute_process(const struct nvml_device *d, size_t i,
                                const struct attr_pid *pids, size_t npids,
                                const struct pod_list *pods, uint64_t *used,
                                const struct pod **pod, const char **container,
                                const struct attr_pid **ap);

#endif
