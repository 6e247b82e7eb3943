/* procfs.h -- reads PROC_ROOT/PID/cgroup for the processes NVML lists */
#ifndef GVW_PROCFS_H
#define GVW_PROCFS_H

#include <stdint.h>

#include "attribute.h"

/* Fills out for pid from ROOT/PID/cgroup: ap_found 1 when the file names a
 * pod. A missing or unreadable file (the process ended, no hostPID) gives
 * ap_found 0. Never fails. */
void procfs_pid_cgroup(const char *root, uint32_t pid, struct attr_pid *out);

#endif
