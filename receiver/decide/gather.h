/* gather.h -- one node's fresh evidence (Prometheus + API server), then the policy */
#ifndef GVW_GATHER_H
#define GVW_GATHER_H

#include <stdint.h>

#include "config.h"
#include "policy.h"

struct event_base;
struct prom;
struct kube;
struct gather;

/* How gathering ended; the decision's result follows from it (verdict_from_gather). */
enum gather_status {
    GATHER_DECIDED,   /* g_policy holds the policy's outcome */
    GATHER_TELEMETRY, /* Prometheus could not be asked, failed, or said nothing */
    GATHER_KUBE,      /* the pods could not be listed (and free was below the floor) */
    GATHER_CANCELLED, /* a client was freed with a request in flight (shutdown) */
};

struct gather_answer {
    enum gather_status gr_status;
    char gr_error[1024];            /* why, for TELEMETRY / KUBE */
    struct policy_answer gr_policy; /* valid when GATHER_DECIDED; owned by the gather */
    const char *gr_gpu;             /* GPU scope: the GPU this answer is about (borrowed
                                       from the gather); NULL in node scope */
    /* GPU scope with every GPU asked for (gather_start): one answer per GPU the
     * series name, sorted by GPU; the answer itself is then never a victim (its
     * outcome says whether any GPU is below the floor, without candidates). */
    struct gather_answer *gr_gpus; /* owned by the gather */
    size_t gr_gpu_count;
};

/* Called once when the evidence is in. r is borrowed: it lives until
 * gather_free(g); the callback may free g only after it is done with r. */
typedef void (*gather_done_fn)(struct gather *g, const struct gather_answer *r,
                               void *arg);

/*
 * Starts gathering for node: USED_QUERY (and FREE_QUERY when set) with $node
 * substituted, and the node's pod list, all at once. kube may be NULL (no API
 * server configured): pods then count as unlistable. cb always runs from
 * the loop (base), never inside this call. starving_ns is the
 * trigger alert's namespace label (NULL = none). cfg, prom and kube are
 * borrowed and must outlive the gather. Returns the gather (free it with
 * gather_free(), also from inside cb), or NULL when it could not start.
 */
struct gather *gather_start(struct event_base *base, const struct config *cfg,
                            struct prom *prom, struct kube *kube, const char *node,
                            const char *starving_ns, gather_done_fn cb, void *arg);

/*
 * The same for one GPU of node (gpu, a GPU_LABEL value; NULL = gather_start).
 * When the series carry GPU_LABEL the answer is that GPU's (gr_gpu set,
 * gr_gpu_count 0); when they do not, it is the node's, as gather_start.
 */
struct gather *gather_start_gpu(struct event_base *base, const struct config *cfg,
                                struct prom *prom, struct kube *kube, const char *node,
                                const char *gpu, const char *starving_ns,
                                gather_done_fn cb, void *arg);

/*
 * The same for several GPUs of node at once (gpus[0..n), borrowed; repeats
 * count once): one reading shared by the decisions of those GPUs. With
 * n == 1 exactly gather_start_gpu(). Else, when the series carry GPU_LABEL,
 * gr_gpus holds one answer per GPU asked for (sorted by GPU, each as
 * gather_start_gpu() would give it; only those are asked FREE_QUERY); when
 * they do not, the answer is the node's, as gather_start().
 */
struct gather *gather_start_gpus(struct event_base *base, const struct config *cfg,
                                 struct prom *prom, struct kube *kube, const char *node,
                                 const char *const *gpus, size_t n,
                                 const char *starving_ns, gather_done_fn cb, void *arg);

/*
 * A re-read of free VRAM after a decision (the verify, a release wait) for
 * node, or its GPU gpu: Prometheus only, no pods listed. Unlike a decision's
 * gather, no used series at all is a reading, not "returned nothing": the one
 * pod that held VRAM may be gone; the device's own figure then stands alone
 * (a computed or FREE_QUERY figure does not: without series it proves nothing).
 */
struct gather *gather_start_reread(struct event_base *base, const struct config *cfg,
                                   struct prom *prom, const char *node, const char *gpu,
                                   gather_done_fn cb, void *arg);

/* One more holder of g (its answer shared by several decisions): each
 * holder calls gather_free() once. */
void gather_hold(struct gather *g);

/* Frees a gather (once its last holder let go). Requests still in flight are
 * detached: their answers are dropped when they arrive. NULL is a no-op. */
void gather_free(struct gather *g);

/* The node's pod list as read (borrowed, valid until gather_free); NULL when
 * it could not be listed. The seating chart sums the declared budgets over it. */
const struct pod_list *gather_pods(const struct gather *g);

/* Why gather_pods() is NULL (borrowed, valid until gather_free); "" while
 * the pods are in or the list is still to come. */
const char *gather_pods_error(const struct gather *g);

/* The used series as Prometheus answered (borrowed, valid until gather_free);
 * NULL when they could not be had. The seating chart tells from them which
 * pods use no GPU at all. */
const struct usage_reading *gather_usage(const struct gather *g);

/* FREE_QUERY=auto: the device query's answer (borrowed, valid until
 * gather_free); NULL otherwise or when it could not be had. The seating chart
 * shows each card's unattributed memory from it. */
const struct device_reading *gather_device(const struct gather *g);

/*
 * A re-read of free VRAM after a decision (the verify, a release wait), taken
 * with gather_start_reread() for the decision's node or GPU. decided is the
 * decision's free_source. Returns 1 with *free_mib when the reading gives a
 * figure read the way the decision read it; else 0, with why "" (nothing
 * usable came back: a failed query, an impossible reading) or a sentence
 * worth recording: the decision judged the device's own figure and the
 * device series have since vanished (stale or gone), so the figure would be
 * GPU_TOTAL_MIB - used, which must never count as the device's.
 */
int gather_reread(const struct gather_answer *gr, enum free_source decided,
                  int64_t *free_mib, char *why, size_t whylen);

/* 1 when u was judged and found at or above the floor. */
int gather_answer_recovered(const struct gather_answer *u);

#endif
