/* cgroup.h -- which pod and container a process belongs to, from its /proc/PID/cgroup */
#ifndef GVW_CGROUP_H
#define GVW_CGROUP_H

#include <stddef.h>

#define CGROUP_UID_MAX 64  /* a pod UID (36 with dashes; static pods: 32 hex) + NUL */
#define CGROUP_CID_MAX 130 /* a container ID (64 hex for the usual runtimes) + NUL */

/* What a cgroup path says about a process. */
struct cgroup_id {
    char cg_pod_uid[CGROUP_UID_MAX];      /* with dashes, as metadata.uid has it */
    char cg_container_id[CGROUP_CID_MAX]; /* bare hex ID, no runtime prefix; "" when
                                             the process sits in the pod's own cgroup */
};

/*
 * Parses one line of /proc/PID/cgroup ("HIERARCHY:CONTROLLERS:PATH", len
 * bytes, no newline needed) for the kubelet's layouts: cgroup v1 and v2, the
 * cgroupfs driver (/kubepods/besteffort/pod<uid>/<id> or .../crio-<id>, guaranteed pods
 * with no QoS level) and the systemd driver (kubepods-burstable-pod<uid with
 * _>.slice/cri-containerd-<id>.scope, crio-, docker-, and containerd's
 * "slice:cri-containerd:<id>" form). Returns 1 with *out filled, 0 for a well-formed line
 * that names no pod, -1 for a malformed line. Pure: no I/O.
 */
int cgroup_parse_line(const char *line, size_t len, struct cgroup_id *out);

/*
 * Parses a whole cgroup file: the first line that names a pod wins (v1
 * lists one line per hierarchy; they agree). Malformed lines are skipped.
 * 1 with *out filled, 0 when no line names a pod.
 */
int cgroup_parse_file(const char *text, size_t len, struct cgroup_id *out);

#endif
