/* suggest_acc.h -- `budgets --suggest`'s tally: pods to workloads, samples to
 * distributions, seats (no I/O)
 *
 * The caller feeds it each node's live pods, then each range query's samples
 * chunk by chunk, then asks for the results. Memory: per workload its
 * distinct MiB values and a bit per step of the window; per chunk one row of
 * steps per pod in the answer. Nothing grows with the window's samples.
 */
#ifndef GVW_SUGGEST_ACC_H
#define GVW_SUGGEST_ACC_H

#include <stddef.h>
#include <stdint.h>

#include "suggest_math.h"
#include "suggest_pods.h"

enum sg_declared {
    SG_DECLARED_NONE,       /* no live pod declares the resource */
    SG_DECLARED_OK,         /* every live pod declares the same budget */
    SG_DECLARED_MIXED,      /* live pods differ (a rollout): the largest is shown */
    SG_DECLARED_UNREADABLE, /* a live pod's declaration cannot be read */
};

struct sg_workload {
    const char *w_namespace; /* borrowed from a pod list */
    const char *w_kind;      /* borrowed (static or a pod list); NULL = a pod without a
                                controller, w_name its own name */
    char *w_name;            /* owned */
    char *w_label; /* owned: "namespace/Kind/name" ("namespace/pod" when bare) */
    const struct pod
        *w_template; /* borrowed: its first live pod (containers for a patch) */
    size_t w_live;   /* live pods holding a seat (not Succeeded/Failed) */
    enum sg_declared w_declared;
    int64_t w_declared_mib; /* SG_DECLARED_OK or _MIXED */
    struct sg_hist w_hist;  /* its samples */
    uint8_t *w_seen;        /* owned: a bit per step of the window with a sample */
    size_t w_pods_seen;     /* distinct pods (live or gone) with samples */
    /* Filled by sg_acc_finish(): */
    int64_t w_history_s;   /* steps with a sample x step */
    uint32_t w_p99, w_max; /* MiB, when w_hist.h_n > 0 */
    int w_suggested;       /* 1: w_suggested_mib holds a suggestion */
    int64_t w_suggested_mib;
};

/* A live pod of a node and its workload. */
struct sg_node_pod {
    const struct pod *np_pod; /* borrowed */
    size_t np_workload;       /* index into a_wl */
};

struct sg_node {
    const char *n_name;   /* borrowed */
    int n_capacity_known; /* the node advertises GPUMEM_RESOURCE */
    int64_t n_capacity_mib;
    char *n_capacity_note;      /* owned: why it is unknown, or NULL */
    struct sg_node_pod *n_pods; /* owned */
    size_t n_pod_count;
    uint64_t n_samples; /* samples its query returned */
    /* Filled by sg_acc_finish(): */
    int64_t n_declared_mib; /* its live pods' declared budgets */
    int64_t n_seats_mib;    /* the same with every suggestion applied */
    int n_fits;             /* n_seats_mib <= capacity (when known) */
    struct sg_seat
        *n_seats; /* owned: one per workload on it; ss_cut marks the cut list */
    size_t n_seat_count;
    size_t *n_seat_workload; /* owned: n_seats[i] is workload n_seat_workload[i] */
};

/* A pod with samples that no workload with a live pod claims. */
struct sg_gone {
    char *g_key; /* owned: "namespace/pod" */
    uint64_t g_samples;
};

struct sg_map;  /* file-local hash map */
struct sg_pent; /* file-local: a pod seen in a pod list or an answer */

struct sg_acc {
    int64_t a_start, a_step; /* the window's first step and the step, seconds */
    size_t a_points;         /* steps in the window */
    uint32_t a_headroom_bp;
    struct sg_workload *a_wl; /* owned */
    size_t a_wl_count, a_wl_cap;
    struct sg_node *a_nodes; /* owned */
    size_t a_node_count, a_node_cap;
    struct sg_gone *a_gone; /* owned, by key after sg_acc_finish() */
    size_t a_gone_count, a_gone_cap;
    uint64_t a_samples;                  /* every sample read */
    struct sg_map *a_wl_map, *a_pod_map; /* owned */
    struct sg_pent *a_pent;              /* owned: the pods a_pod_map indexes */
    size_t a_pent_count, a_pent_cap;
    /* The chunk being read: */
    size_t a_chunk_first, a_chunk_points;
    double *a_rows;    /* owned: a_row_count x a_chunk_points, -1 = no sample */
    size_t *a_row_pod; /* owned: each row's pod entry */
    size_t a_row_count, a_row_cap;
    unsigned a_gen;
    size_t a_node_now; /* the node whose query is being read */
};

/* An empty tally for the window [start, start + (points-1) step]. 0, or -1. */
int sg_acc_init(struct sg_acc *a, int64_t start, int64_t step, size_t points,
                uint32_t headroom_bp);
void sg_acc_free(struct sg_acc *a);

/* Adds a node and its live pods (borrowed: keep list alive until
 * sg_acc_free). capacity_note NULL means capacity_mib is the advertised
 * capacity. 0, or -1 out of memory. */
int sg_acc_add_node(struct sg_acc *a, const char *node, const struct pod_list *list,
                    const char *capacity_note, int64_t capacity_mib);

/* One range query's answer for node index `node` covering steps first ..
 * first + points - 1: begin, sample (a sg_sample_fn; idx relative to first),
 * end. end: 0, -1 out of memory, -2 a pod's summed value is absurd (err). */
int sg_acc_chunk_begin(struct sg_acc *a, size_t node, size_t first, size_t points);
int sg_acc_sample(void *acc, const char *ns, const char *pod, size_t idx, double bytes);
int sg_acc_chunk_end(struct sg_acc *a, char *err, size_t errlen);

/* Computes every workload's p99, max, history and suggestion, and every
 * node's seats and cut list. 0, or -1 out of memory. */
int sg_acc_finish(struct sg_acc *a);

#endif
