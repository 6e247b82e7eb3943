/* podmap.h -- the pods of this node, cached, re-listed when a process names an unknown one */
#ifndef GVW_PODMAP_H
#define GVW_PODMAP_H

#include "kubec.h"
#include "podlist.h"

struct event_base;
struct podmap;

/* Runs after a list arrived that changed the cache (to re-attribute at once). */
typedef void (*podmap_changed_fn)(void *arg);

/*
 * Makes the cache for node (borrowed, copied) and starts the first list. o
 * NULL (no API server configured) gives a cache that stays empty: every
 * process is then unattributed. Returns NULL with a reason in err.
 */
struct podmap *podmap_new(struct event_base *base, const struct kube_opts *o,
                          const char *node, podmap_changed_fn changed, void *arg,
                          char *err, size_t errlen);

/* Frees the cache; a list in flight is cancelled (changed does not run). */
void podmap_free(struct podmap *pm);

/* The last list (borrowed until the next change), never NULL. */
const struct pl_pods *podmap_pods(const struct podmap *pm);

/* For attribute(): whether key (a pod UID, or UID/container ID) already
 * caused a list in the last minute, or a list is in flight. */
int podmap_is_asked(const char *key, void *arg);

/*
 * A process named key and the cache does not know it: lists the pods again,
 * unless a list is in flight (the caller asks again on its next poll), the
 * API server is not configured, or the last list failed less than 5 s ago.
 */
void podmap_relist(struct podmap *pm, const char *key);

#endif
