/* world.h -- the simulated cluster's live state: pods, usage, the Node, the event log */
#ifndef GVW_SIM_WORLD_H
#define GVW_SIM_WORLD_H

#include <stddef.h>

#include <jansson.h>

#include "scenario.h"

enum sim_pod_state {
    POD_ALIVE,      /* listed, holds its processes' memory */
    POD_RESPAWNING, /* gone; its controller brings a replacement back at sp_due */
    POD_GONE,       /* gone for good (a bare pod, or respawn: false) */
};

/* One scenario pod slot: the current incarnation, or the wait for the next. */
struct sim_pod {
    const struct sc_pod *sp_spec; /* borrowed from the scenario */
    enum sim_pod_state sp_state;
    char sp_name[254];
    char sp_uid[37];
    char sp_owner_uid[37];    /* the controller's uid, stable across incarnations */
    unsigned sp_generation;   /* 0 = the scenario's pod, +1 per replacement */
    double sp_born;           /* real seconds since sim start this incarnation began */
    double sp_created;        /* epoch seconds: creationTimestamp and startTime */
    double sp_due;            /* POD_RESPAWNING: real seconds since sim start */
    unsigned long long sp_rv; /* metadata.resourceVersion */
    const struct sc_proc *sp_procs; /* borrowed: this incarnation's processes */
    size_t sp_nprocs;
    long *sp_pids;       /* owned: one pid per process */
    char (*sp_cids)[65]; /* owned: this incarnation's container IDs (64 hex), one per
                            spec container, in spec order */
    size_t sp_ncids;
    char sp_ip[46]; /* status.podIP: 10.244.1.N, or a loopback one (release.c) */
    char sp_release_url[330]; /* "" = no release endpoint is served for this pod */
    unsigned sp_release_asks; /* release POSTs honoured, over every incarnation */
    double sp_release_due;    /* real seconds since start its memory drops; < 0 = not
                                 asked in this incarnation */
};

struct world {
    const struct scenario *w_sc; /* borrowed; outlives the world */
    double w_scale;              /* real seconds per scenario second */
    double w_start_mono;         /* CLOCK_MONOTONIC at start */
    double w_start_wall;         /* epoch seconds at start */
    double w_clock;              /* world_now() at the last world_advance(): one request
                                    reads one instant, so its numbers add up */
    unsigned long long w_rv;     /* last resourceVersion handed out */
    unsigned long long w_rng;    /* splitmix64 state for uids and name suffixes */
    long w_next_pid;
    struct sim_pod *w_pods; /* owned, one per scenario pod */
    size_t w_npods;
    json_t **w_nodes; /* owned: one Node object per simulated node, in scenario order
                         (status.capacity is patchable) */
    size_t w_nnodes;
    json_t *w_events;     /* owned: every mutating API call, oldest first */
    json_t *w_counts;     /* owned: "METHOD path" -> requests seen */
    long w_throttle_left; /* evictions/DELETEs still to be shed (scenario "throttle") */
};

/* A new world at time zero. NULL with a reason in err on allocation failure.
 * The caller frees it with world_free(). */
struct world *world_new(const struct scenario *sc, double time_scale, char *err,
                        size_t errlen);
void world_free(struct world *w);

/* Real seconds since the simulator started. */
double world_now(const struct world *w);

/* Reads the clock into w_clock and brings due replacements in. Every request
 * calls it first: time is lazy, and usage below is computed at w_clock. */
void world_advance(struct world *w);

/* Bumps and returns the cluster-wide resourceVersion. */
unsigned long long world_next_rv(struct world *w);

/* The live pod ns/name, or NULL. */
struct sim_pod *world_find_pod(struct world *w, const char *ns, const char *name);

/* The GPU process i of sp runs on, or NULL when its pod is on no simulated node. */
const struct sc_gpu *world_proc_gpu(const struct world *w, const struct sim_pod *sp,
                                    size_t i);

/* MiB held at w_clock by process i of a live pod (0 when not running), as NVML reports
 * it: its timeline's figure (from sp_release_due on, its released_mib) plus its GPU's
 * CUDA context while that figure is above 0. */
double world_proc_mib(const struct world *w, const struct sim_pod *sp, size_t i);
double world_pod_mib(const struct world *w, const struct sim_pod *sp);
/* MiB held by every pod's processes (host processes not included). */
double world_used_mib(const struct world *w);
/* MiB in use on GPU gpu of simulated node node: its processes, pods' and the host's
 * (those NVML cannot report included), and what the driver reserves. */
double world_gpu_used_mib(const struct world *w, int node, int gpu);

/* The container ID of process i of a live pod: the 64 hex digits of its container
 * (borrowed), or NULL when it names no container of the pod. */
const char *world_proc_cid(const struct sim_pod *sp, size_t i);

/* A release POST for a live pod: its processes drop to their released_mib after the
 * pod's release_after (scenario seconds). A second ask keeps the first's time. */
void world_release_pod(struct world *w, struct sim_pod *sp);

/* Removes a live pod at once (its memory is freed) and schedules its replacement. */
void world_remove_pod(struct world *w, struct sim_pod *sp);

/* A v1 Pod object for sp; with_kind adds apiVersion/kind (single GETs do, list items
 * don't). New reference, NULL on allocation failure. */
json_t *world_pod_json(const struct world *w, const struct sim_pod *sp, int with_kind);

/* Appends to the event log (steals ev). */
void world_record(struct world *w, json_t *ev);

/* Counts one request under key. */
void world_count(struct world *w, const char *key);

/* GET /sim/state body: clock, totals, pods with usage, request counts. New reference or
 * NULL. */
json_t *world_state_json(struct world *w);

/* RFC 3339 UTC of epoch seconds t; with millis, three decimals. */
void world_fmt_time(double t, int millis, char *buf, size_t len);

#endif
