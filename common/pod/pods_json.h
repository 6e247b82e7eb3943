/* pods_json.h -- Kubernetes PodList JSON into struct pod_list */
#ifndef GVW_PODS_JSON_H
#define GVW_PODS_JSON_H

#include <stddef.h>

#include "budget_src.h"
#include "claim_json.h"
#include "pod.h"
#include "pods_opts.h"

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
