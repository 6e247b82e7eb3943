/* scenario.h -- the simulated node's script: pods, budgets, per-process usage */
#ifndef GVW_SIM_SCENARIO_H
#define GVW_SIM_SCENARIO_H

#include <stddef.h>

#include <jansson.h>

/* One point of a usage timeline: at scenario second pt_t the process holds pt_mib. */
struct sc_point {
    double pt_t;   /* seconds from the incarnation's start (scenario time, unscaled) */
    double pt_mib; /* MiB held; 0 means the process is gone (not exported) */
};

/* One GPU process of a pod. */
struct sc_proc {
    long pr_pid;         /* > 0 as given; 0 = the world picks a fresh one */
    const char *pr_comm; /* borrowed from sc_root; may be NULL (shown in /sim/state) */
    struct sc_point *pr_points; /* owned; >= 1 point, pt_t strictly ascending */
    size_t pr_npoints;
    int pr_step; /* 1: hold each value until the next point; 0: linear in between */
    int pr_gpu;  /* index into scenario.sc_gpus of the GPU its memory is on */
    int pr_na;   /* 1: NVML cannot report its used memory (NVML_VALUE_NOT_AVAILABLE) */
    const char *pr_container; /* borrowed: the container it runs in (a spec name) */
    double pr_released_mib; /* MiB it keeps once its pod honoured a release (0: exits) */
};

/* One GPU of the simulated node, as NVML describes it. */
struct sc_gpu {
    const char *gp_uuid;  /* borrowed from sc_root, or gp_uuid_buf */
    char gp_uuid_buf[48]; /* a generated "GPU-<uuid>" when the file gives none */
    const char *gp_name;  /* borrowed: the product name NVML reports */
    long gp_total_mib;    /* framebuffer size */
    long gp_reserved_mib; /* used by the driver itself: counted as used, by no process */
    long gp_context_mib;  /* a CUDA context's own memory: added to every running
                             process's NVML figure (and so to the device's used) */
};

/* One simulated GPU node: its Node object's makings and its GPUs. */
struct sc_node {
    const char *nd_name;    /* borrowed from sc_root */
    json_t *nd_labels;      /* borrowed: metadata.labels */
    json_t *nd_capacity;    /* borrowed: status.capacity (allocatable starts equal) */
    struct sc_gpu *nd_gpus; /* owned; >= 1, index = NVML index */
    size_t nd_ngpus;
};

/* One pod as the scenario declares it (one replica; its controller respawns it). */
struct sc_pod {
    /* All strings and json_t below are borrowed from scenario.sc_root. */
    const char *po_namespace;
    const char *po_name; /* the first incarnation's name */
    const char *po_uid;  /* NULL = generated */
    const char *po_node; /* spec.nodeName; defaults to the first simulated node */
    int po_node_idx;     /* index into sc_nodes, or -1: a node the sim does not run */
    int po_host;         /* 1: not a pod but a host process (a node daemon with a CUDA
                            context): never listed, never evicted */
    const char *po_host_cgroup; /* po_host: its /proc/PID/cgroup line, no newline */
    const char *po_phase;       /* "Running" or "Pending" */
    const char *po_owner_kind;  /* NULL = bare pod (no ownerReferences, never respawns) */
    const char *po_owner_name;
    json_t *po_labels;       /* object, may be empty */
    json_t *po_annotations;  /* object, may be empty */
    json_t *po_containers;   /* owned reference: array of v1 Container objects */
    double po_started_ago;   /* seconds before simulator start the pod was created */
    int po_terminating;      /* 1: metadata.deletionTimestamp is set from the start */
    const char *po_pdb_name; /* NULL = no PodDisruptionBudget refuses its eviction */
    int po_pdb_desired, po_pdb_current; /* for the 429 cause message */
    const char *po_pdb_refuse;          /* how the API server refuses: "budget" (429, the
                                           default), "processing" (429, Retry-After 10),
                                           "negative" or "unconfirmed" (403), "multiple" (500) */
    struct sc_proc *po_procs;           /* owned; the first incarnation's processes */
    size_t po_nprocs;
    int po_gpu;              /* the GPU its processes use unless one says otherwise */
    int po_respawns;         /* 1: the controller brings a replacement back */
    double po_respawn_after; /* scenario seconds until the replacement is Running */
    struct sc_proc
        *po_rprocs; /* owned; the replacement's processes (timeline from its start) */
    size_t po_nrprocs;
    double po_release_after;   /* scenario seconds from a release POST to freed memory */
    json_t *po_claims;         /* NULL or an array: spec.resourceClaims, as given */
    json_t *po_claim_statuses; /* NULL or an array: status.resourceClaimStatuses */
};

struct scenario {
    json_t *sc_root; /* owned: the parsed file; every borrowed string lives here */
    const char *sc_description; /* may be NULL */
    struct sc_node *sc_nodes;   /* owned; >= 1 simulated GPU nodes */
    size_t sc_nnodes;
    /* The first node's, for the many places that know one node: */
    const char *sc_node;    /* its name */
    long sc_total_mib;      /* its GPU 0's framebuffer */
    struct sc_gpu *sc_gpus; /* = sc_nodes[0].nd_gpus */
    size_t sc_ngpus;
    const char *sc_resource; /* the extended resource carrying budgets */
    double sc_time_scale; /* real seconds per scenario second (0.1 = ten times faster) */
    unsigned long long sc_seed; /* seeds generated uids and name suffixes */
    struct sc_pod *sc_pods;     /* owned: the pods, then the host processes (po_host) */
    size_t sc_npods;
    long sc_throttle_count; /* evictions and pod DELETEs shed with a plain-text
                               429 before any is served (load shedding) */
    const char *sc_throttle_retry_after; /* their Retry-After header, as given */
    json_t *sc_claims; /* NULL or an array of resource.k8s.io/v1 ResourceClaims,
                          each with metadata.namespace and .name: GET by name */
};

/*
 * Reads and validates a scenario file. Returns 0 with *out set (the caller
 * frees it with scenario_free()), or -1 with a reason naming the file and the
 * offending element in err and nothing allocated.
 */
int scenario_load(const char *path, struct scenario **out, char *err, size_t errlen);

/* The claim ns/name of the scenario (borrowed), or NULL. */
json_t *scenario_claim(const struct scenario *sc, const char *ns, const char *name);

/* Frees everything scenario_load() allocated. scenario_free(NULL) is a no-op. */
void scenario_free(struct scenario *sc);

/* MiB held by a process t scenario seconds into its incarnation. */
double sc_proc_mib(const struct sc_proc *pr, double t);

/*
 * Writes v the way the API server canonicalises a plain integer quantity
 * (DecimalSI: 3000 -> "3k", 1800 -> "1800", 14000 -> "14k"). 0, or -1 if buf
 * is too small.
 */
int quantity_canonical_int(long long v, char *buf, size_t len);

/*
 * Canonicalises one quantity value as the API server would store it: a JSON
 * integer or an all-digit string becomes the DecimalSI form; another string
 * that matches the quantity grammar is kept as given. Returns a new string
 * json_t, or NULL when the value is not a quantity.
 */
json_t *quantity_canonical_json(const json_t *v);

#endif
