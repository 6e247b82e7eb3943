/* suggest_owner.h -- which workload (controller) a pod belongs to, live or gone (no I/O)
 *
 * A live pod: its controller ownerReference; a ReplicaSet named
 * <name>-<pod-template-hash> (the pod's own label) is Deployment <name>, as
 * the Deployment controller names it. No ReplicaSet is fetched (no RBAC
 * beyond reading pods). Owned by the core Node (a static pod's mirror) counts
 * as no controller: nothing can patch it.
 *
 * A gone pod (only in Prometheus) is matched by name to a workload of its
 * namespace with a live pod, the way each controller names pods:
 *   Deployment   <name>-<hash>-<suffix>   hash 1..10, suffix 5 of [a-z0-9]
 *   StatefulSet  <name>-<ordinal>
 *   DaemonSet, ReplicaSet, Job   <name>-<suffix>
 * Other kinds (operators' own controllers) only count their live pods. When
 * several match, the longest workload name wins (the most specific).
 */
#ifndef GVW_SUGGEST_OWNER_H
#define GVW_SUGGEST_OWNER_H

#include <stddef.h>

/* The workload of a live pod with controller (kind, name) and label hash
 * (NULL when absent): *kind points at a static or the given kind, name is
 * written to out (cap bytes). Returns 0, or -1 when the pod has no
 * controller (kind NULL, or the Node) or the name does not fit. */
int sg_workload_of(const char *owner_kind, const char *owner_name, const char *hash,
                   const char **kind, char *out, size_t cap);

/* Whether pod is a name the controller (kind, name) gives its pods. */
int sg_name_matches(const char *kind, const char *name, const char *pod);

#endif
