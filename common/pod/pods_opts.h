/* pods_opts.h -- how the PodList reader (pods_json.h) is asked: the settings it reads
 * budgets by, what each program keeps beyond what the decision reads, and the
 * exporter's stricter reading */
#ifndef GVW_PODS_OPTS_H
#define GVW_PODS_OPTS_H

struct dra_claims;

/* What the reader keeps beyond what the decision reads (pod_parse_opts.po_keep; 0 is
 * serve's decision, the seating chart and `check`); each costs memory only in the
 * programs that ask for it. */
/* The containers that started (name, bare ID) and a mirror pod's static UID: the
 * exporter's cgroup -> pod. */
#define POD_KEEP_IDS 0x01
/* The controller, pod-template-hash, each container's declaration and
 * gpu-fraction-num-devices: `budgets --suggest`. */
#define POD_KEEP_WORKLOAD 0x02
/* Succeeded and Failed pods, and KAI/Run:ai reservation pods, stay (p_finished,
 * p_reservation) with no budget: --suggest (their series are their workload's past). */
#define POD_KEEP_FINISHED 0x04
/* Reservation pods stay (p_reservation) with no budget: the exporter (their processes
 * are theirs). */
#define POD_KEEP_RESERVED 0x08
/* Neither status.podIP nor the declaration's text is kept: the exporter shows neither. */
#define POD_LEAN 0x10
/* The exporter's reading: a body whose shape is wrong is refused whole (a half-read
 * list could label a process with the wrong pod), with a strict reader's messages
 * ("metadata is not an object", "an annotation is not a string", ...). What only the
 * budgets need refuses nothing: where the decision's reading would refuse the list
 * (kind is not PodList, a key the budgets read comes twice), every pod's budget is
 * BUDGET_NONE and pl_budgets_error says why. With no po_resource no budget is read. */
#define POD_STRICT 0x20

struct pod_parse_opts {
    const char *po_resource;            /* GPUMEM_RESOURCE, e.g. viktorbarzin.me/gpumem */
    const char *po_protect_annotation;  /* PROTECT_ANNOTATION */
    const char *po_release_annotation;  /* RELEASE_ANNOTATION; NULL/"" = not read */
    const char *po_dra_driver;          /* DRA_DRIVER (kube_list_pods_sources); NULL =
                                           gpu.nvidia.com */
    const struct dra_claims *po_claims; /* with dra: the ResourceClaims read for this
                                           list (claim_json.h); NULL = none were
                                           fetched, and no pod declares DRA */
    unsigned po_keep;                   /* POD_KEEP_*, POD_LEAN, POD_STRICT */
};

#endif
