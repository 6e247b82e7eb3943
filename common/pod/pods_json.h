/* pods_json.h -- Kubernetes PodList JSON into struct pod_list */
#ifndef GVW_PODS_JSON_H
#define GVW_PODS_JSON_H

#include <stddef.h>

#include "budget_src.h"
#include "claim_json.h"
#include "pod.h"

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

/*
 * A node's list may hold at most POD_LIST_MAX pods that have not finished, and
 * their kept strings (names, UID, IP, annotation values, budget errors, and what
 * po_keep asks for) at most POD_LIST_MAX_TEXT bytes; beyond either the list is
 * refused as too large. A kubelet seats at most 110 pods by default (5,000 is the
 * project's benchmark node); with these bounds and the 32 MiB body cap, serve's decision
 * and the exporter's two lists stay near 55 MiB at worst, under the shipped 64 Mi limits
 * (BENCHMARKS.md, tests/fault/podlist_rss.sh), where a 32 MiB list of tiny pods once took
 * 326 MiB. Finished pods (phase Succeeded or Failed) hold no seat: they are dropped as
 * they are read (kept, with POD_KEEP_FINISHED) and count toward neither bound.
 */
#define POD_LIST_MAX 5000
#define POD_LIST_MAX_TEXT (2u << 20)
/* The start of the reason a too-large list is refused with. */
#define POD_LIST_TOO_LARGE "pod list too large"

/* The reason a list past the bounds is refused with, into err: by_text 0 when it
 * held more than POD_LIST_MAX pods, 1 when their strings passed POD_LIST_MAX_TEXT. */
void pods_json_too_large(int by_text, char *err, size_t errlen);

/*
 * Parses a v1 PodList body (len bytes, need not be NUL-terminated), the one walk
 * every program reads pods with. A pod whose budget cannot be read is kept with
 * BUDGET_BAD and a reason; only a document that is not a PodList (not JSON, no
 * items array, an item without metadata.name/namespace/uid) fails, and so does a
 * list past the bounds above (POD_STRICT: see there). Pods in phase Succeeded or
 * Failed are not in out (but with POD_KEEP_FINISHED): they are no tenant anywhere.
 * Returns 0 and fills out (the caller frees it with pod_list_free()), or -1 with a
 * reason in err and nothing allocated.
 */
int pods_json_parse(const char *body, size_t len, const struct pod_parse_opts *opts,
                    struct pod_list *out, char *err, size_t errlen);

/* The same, each pod's budget from the first of sources it declares (SPEC
 * "Where budgets come from"; NULL or empty = GPUMEM_RESOURCE alone, which is
 * what pods_json_parse() reads). Every pod gets p_budget_source and
 * p_budget_decl; a KAI/Run:ai reservation pod is left out of the list when kai
 * is a source (but with POD_KEEP_RESERVED or POD_KEEP_FINISHED). */
int pods_json_parse_sources(const char *body, size_t len,
                            const struct pod_parse_opts *opts,
                            const struct bsrc_order *sources, struct pod_list *out,
                            char *err, size_t errlen);

#endif
