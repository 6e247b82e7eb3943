/* podmap.h -- the pods of this node, cached, re-listed when a process names an unknown
 * one */
#ifndef GVW_PODMAP_H
#define GVW_PODMAP_H

#include <stdint.h>

#include "kubec.h"
#include "podlist.h"

struct event_base;
struct podmap;

/* Runs after a list arrived that changed the cache (to re-attribute at once). */
typedef void (*podmap_changed_fn)(void *arg);

/*
 * Makes the cache for node (copied) and starts the first list; each pod's
 * budget of resource (GPUMEM_RESOURCE, copied) is read with it, from the first
 * of sources (BUDGET_SOURCES, copied; NULL = resource alone) that it declares.
 * With dra in sources each list's pods' ResourceClaims are read too (their
 * memory on devices of driver, DRA_DRIVER, copied; NULL = gpu.nvidia.com),
 * serve's reader (pods_claims.h). o NULL (no API server configured) gives a
 * cache that stays empty: every process is then unattributed. Returns NULL
 * with a reason in err.
 */
struct podmap *podmap_new(struct event_base *base, const struct kube_opts *o,
                          const char *node, const char *resource,
                          const struct bsrc_order *sources, const char *driver,
                          podmap_changed_fn changed, void *arg, char *err, size_t errlen);

/* Frees the cache; a list in flight is cancelled (changed does not run). */
void podmap_free(struct podmap *pm);

/* The last list (borrowed until the next change), never NULL. */
const struct pod_list *podmap_pods(const struct podmap *pm);

/* For attribute(): whether key (a pod UID, or UID/container ID) already
 * caused a list in the last minute, or a list is in flight. */
int podmap_is_asked(const char *key, void *arg);

/*
 * A process named key and the cache does not know it: lists the pods again,
 * unless a list is in flight (the caller asks again on its next poll), the
 * API server is not configured, or the last list failed less than 5 s ago.
 */
void podmap_relist(struct podmap *pm, const char *key);

/* Lists again when the last list is a minute old (and none is in flight):
 * the budgets of pods that hold no VRAM, and pods gone, show within it. */
void podmap_refresh(struct podmap *pm);

enum { PODMAP_OK, PODMAP_NONE, PODMAP_LISTING, PODMAP_FAILED };

/* Where the cache stands: PODMAP_OK (the last list that ended worked), PODMAP_NONE (no
 * API server), PODMAP_LISTING (the first list is in flight) or
 * PODMAP_FAILED; *why says it in words (borrowed; "" when OK). */
int podmap_state(const struct podmap *pm, const char **why);

/* Pods whose budget was unreadable, each counted once
 * (gpu_vram_exporter_budget_errors_total). */
uint64_t podmap_budget_errors(const struct podmap *pm);

/* For expo_render()'s es_unresolved: logs, once per pod per list, that a pod's
 * share of its GPU has no series this poll (arg is the podmap). */
void podmap_share_unresolved(const struct pod *p, const char *why, void *arg);

#endif
