/* podlist.h -- the pods of one node as the exporter needs them: UID, names, container IDs */
#ifndef GVW_PODLIST_H
#define GVW_PODLIST_H

#include <stddef.h>

struct pl_container {
    char *pc_id;   /* owned: bare ID, runtime prefix ("containerd://") removed */
    char *pc_name; /* owned */
};

struct pl_pod {
    char *pp_uid;       /* owned: metadata.uid */
    char *pp_namespace; /* owned */
    char *pp_name;      /* owned */
    struct pl_container *pp_containers; /* owned: containers, init and ephemeral ones
                                           that have a containerID */
    size_t pp_ncontainers;
    char *pp_mirror_uid; /* owned or NULL: a mirror pod's static pod UID (annotation
                            kubernetes.io/config.mirror), the one its cgroups name */
};

struct pl_pods {
    struct pl_pod *pl_items; /* owned */
    size_t pl_count;
};

/*
 * Reads a v1 PodList body (len bytes, need not be NUL-terminated): per item
 * metadata.uid/namespace/name (required, strings) and the name and
 * containerID of status.containerStatuses[], initContainerStatuses[] and
 * ephemeralContainerStatuses[], and a mirror pod's annotation
 * kubernetes.io/config.mirror (its static pod's UID).
 * Members may come in any order; a key repeated where it is read is refused.
 * Returns 0 with *out filled (free with podlist_free()), or -1 with one line
 * in err and nothing allocated.
 */
int podlist_parse(const char *body, size_t len, struct pl_pods *out, char *err,
                  size_t errlen);

/* Frees the list's contents; the struct may be reused. NULL-safe. */
void podlist_free(struct pl_pods *l);

/* The pod whose metadata.uid, or (a mirror pod) whose static pod UID, is uid. */
const struct pl_pod *podlist_find(const struct pl_pods *l, const char *uid);

/* The name of the container with this bare ID in pod p, or NULL. */
const char *podlist_container(const struct pl_pod *p, const char *id);

#endif
