/* budget_src.h -- where a pod's VRAM budget comes from (SPEC "Where budgets come from"):
 * GPUMEM_RESOURCE, HAMi, KAI/Run:ai and DRA declarations judged without I/O */
#ifndef GVW_BUDGET_SRC_H
#define GVW_BUDGET_SRC_H

#include <stddef.h>
#include <stdint.h>

/* The sources, by their BUDGET_SOURCES word. */
enum bsrc {
    BSRC_NONE = 0, /* no source in the list is declared */
    BSRC_RESOURCE, /* GPUMEM_RESOURCE limits, else requests, summed */
    BSRC_HAMI,     /* nvidia.com/gpumem, nvidia.com/gpumem-percentage */
    BSRC_KAI,      /* the gpu-memory / gpu-fraction pod annotations */
    BSRC_DRA,      /* consumedCapacity memory of the pod's ResourceClaims */
};
#define BSRC_MAX 4

#define BSRC_DEFAULT "resource"
#define BSRC_DRA_DRIVER_DEFAULT "gpu.nvidia.com"

/* HAMi's resource names (its defaults: ResourceCountName and friends). */
#define HAMI_GPU "nvidia.com/gpu"
#define HAMI_GPUMEM "nvidia.com/gpumem"
#define HAMI_GPUMEM_PCT "nvidia.com/gpumem-percentage"
/* KAI Scheduler's and Run:ai's pod annotations. */
#define KAI_GPU_FRACTION "gpu-fraction"
#define KAI_GPU_MEMORY "gpu-memory"
#define KAI_NUM_DEVICES "gpu-fraction-num-devices"

/* BUDGET_SOURCES, parsed: the sources in the order a pod is asked. */
struct bsrc_order {
    enum bsrc bo_src[BSRC_MAX];
    size_t bo_count;
};

/* "resource", "hami", "kai", "dra"; NULL for BSRC_NONE. */
const char *bsrc_name(enum bsrc s);

/* A comma list of the words (space around a word is allowed), none repeated, at
 * least one. 0, or -1 with why in err ("'gpu' is not a budget source (resource,
 * hami, kai, dra)", "'kai' is listed twice"). */
int bsrc_order_parse(const char *list, struct bsrc_order *out, char *err, size_t errlen);

/* DRA_DRIVER is a driver's name: a DNS subdomain, as the API validates it. 0, or
 * -1 with the whole line in err ("DRA_DRIVER: 'X' is not a driver name (...)"):
 * serve and the exporter refuse a bad one alike. */
int bsrc_driver_check(const char *driver, char *err, size_t errlen);

/* 1 when s is in o. */
int bsrc_order_has(const struct bsrc_order *o, enum bsrc s);

/* 1 when ns holds the pods KAI and Run:ai run to reserve a shared GPU
 * (kai-resource-reservation, runai-reservation): never tenants. */
int bsrc_reservation_namespace(const char *ns);

/* A value that is present but not a JSON string (the reader passes this
 * pointer; it is never a valid quantity). */
extern const char BSRC_NOT_STRING[];

/* One container's HAMi declarations, each [0] from limits, [1] from requests;
 * NULL = absent. Borrowed. */
struct bsrc_container {
    const char *bc_name; /* NULL = unnamed */
    const char *bc_gpu[2];
    const char *bc_mem[2];
    const char *bc_pct[2];
};

/* One entry of the pod's status.resourceClaimStatuses and what its claim says. */
struct bsrc_claim {
    const char *bl_claim; /* resourceClaimName; NULL: no claim object was needed */
    int bl_fetched;       /* the ResourceClaim was read */
    int bl_allocated;     /* it has status.allocation */
    const char *const *bl_memory; /* consumedCapacity.memory (a quantity of bytes) of
                                     each allocation result of DRA_DRIVER */
    size_t bl_memory_count;
    size_t bl_reserved;   /* pods in its status.reservedFor */
    const char *bl_error; /* why it was not read (the API's answer), or NULL */
};

/* What a pod declares. The resource source is judged by the PodList reader
 * (its messages, its quantity rules): it hands over the verdict. */
struct bsrc_pod {
    const char *bp_namespace;
    int bp_resource_state;         /* BSRC_STATE_* of GPUMEM_RESOURCE */
    int64_t bp_resource_mib;       /* when BSRC_STATE_OK */
    const char *bp_resource_error; /* when BSRC_STATE_BAD */
    const char *bp_resource_name;  /* GPUMEM_RESOURCE, for the declaration */
    const struct bsrc_container *bp_containers;
    size_t bp_container_count;
    const char *bp_fraction, *bp_memory,
        *bp_num_devices; /* KAI annotations, NULL = absent */
    const struct bsrc_claim *bp_claims;
    size_t bp_claim_count;
};

enum bsrc_state {
    BSRC_STATE_NONE, /* nothing declared */
    BSRC_STATE_OK,   /* bb_mib + bb_gpus x the GPU's total */
    BSRC_STATE_BAD,  /* declared but unreadable: bb_error says why */
};

/* A pod's budget as its first declared source gives it. */
struct bsrc_budget {
    enum bsrc bb_source; /* BSRC_NONE when no listed source is declared */
    enum bsrc_state bb_state;
    int bb_not_tenant;  /* a KAI/Run:ai reservation pod: no tenant anywhere */
    int64_t bb_mib;     /* the budget in MiB, or its fixed part when bb_gpus > 0 */
    double bb_gpus;     /* GPU totals still to add (0.5: half the GPU's memory) */
    size_t bb_shared;   /* DRA: the most pods sharing one of its claims (1 = none) */
    char bb_decl[256];  /* the declaration in the source's own form */
    char bb_error[256]; /* when BSRC_STATE_BAD */
};

/* Judges p by the first source in o that it declares; never fails. */
void bsrc_judge(const struct bsrc_order *o, const struct bsrc_pod *p,
                struct bsrc_budget *out);

/* The budget in MiB once the GPU's total is known (have_total 0: it is not;
 * total_bytes is the device's gpu_memory_total_bytes): bb_mib plus bb_gpus of
 * the total, rounded down (HAMi's and KAI's integer arithmetic). 0 and *mib, or
 * -1 with why ("needs the GPU's total; no device series"). */
int bsrc_resolve(const struct bsrc_budget *b, int have_total, double total_bytes,
                 int64_t *mib, char *why, size_t whylen);

#define BSRC_NEEDS_TOTAL "needs the GPU's total; no device series"

#endif
