/* gather_int.h -- what gather.c and gather_gpu.c share; no other module */
#ifndef GVW_GATHER_INT_H
#define GVW_GATHER_INT_H

#include "gather.h"

/* FREE_QUERY's answer for one GPU. */
struct gather_gpu_free {
    struct gather *gf_g; /* borrowed: the gather it belongs to */
    int gf_ok;
    double gf_mib;
    char gf_error[512];
};

struct gather {
    const struct config *g_cfg; /* borrowed */
    char *g_node;               /* owned */
    char *g_starving_ns;        /* owned, may be NULL */
    char *g_gpu;                /* owned; the one GPU asked for, NULL = every GPU */
    struct prom *g_prom;        /* borrowed */
    gather_cb g_cb;
    void *g_arg;
    int g_pending;              /* requests whose answers have not arrived */
    int g_dead;                 /* gather_free() ran; free when g_pending hits 0 */
    int g_refs;                 /* holders (gather_hold); the last gather_free frees */
    int g_cancelled;
    /* Evidence. */
    int g_usage_ok;
    struct usage_reading g_usage; /* owned */
    char g_usage_error[512];
    int g_want_free, g_free_ok;
    double g_free_mib;
    char g_free_error[512];
    int g_pods_ok;
    struct pod_list g_pods;       /* owned */
    char g_pods_error[512];
    struct pod_list g_no_pods;    /* empty: used when the pods are unknown */
    int g_free_deferred;          /* FREE_QUERY names $gpu: asked once the GPUs are known */
    struct gather_gpu_free *g_gfree; /* owned; GPU scope: FREE_QUERY per GPU */
    const char **g_gpus;          /* owned array, strings borrowed from g_usage or g_gpu */
    size_t g_gpu_count;
    struct gather_result g_result;
};

/* One answer arrived; the last one concludes (or frees a dead gather). */
void gather_answered(struct gather *g);

/* Judges one unit (the node, or one GPU of it: gpu) from the evidence, in
 * SPEC's order (free reading, recovered, pods). */
void gather_judge(struct gather *g, struct gather_result *r, const char *gpu, int free_ok,
                  double free_mib, const char *free_error);

/* gather_gpu.c: once the used series are in, starts what GPU scope still
 * needs (FREE_QUERY per GPU, or a deferred node FREE_QUERY). Counts what it
 * starts in g_pending; failures are recorded as that GPU's free error. */
void gather_gpu_after_usage(struct gather *g);

/* gather_gpu.c: every answer is in and the series carry GPU_LABEL: fills
 * g_result for the one GPU asked for, or one unit per GPU named. */
void gather_gpu_conclude(struct gather *g);

/* gather_gpu.c: frees what GPU scope allocated. */
void gather_gpu_free_units(struct gather *g);

#endif
