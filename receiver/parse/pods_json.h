/* pods_json.h -- Kubernetes PodList JSON into struct pod_list */
#ifndef GVW_PODS_JSON_H
#define GVW_PODS_JSON_H

#include <stddef.h>

#include "budget_src.h"
#include "policy.h"

struct pod_parse_opts {
    const char *po_resource;           /* GPUMEM_RESOURCE, e.g. viktorbarzin.me/gpumem */
    const char *po_protect_annotation; /* PROTECT_ANNOTATION */
    const char *po_release_annotation; /* RELEASE_ANNOTATION; NULL/"" = not read */
};

/*
 * Parses a v1 PodList body (len bytes, need not be NUL-terminated). A pod
 * whose budget cannot be read is kept with BUDGET_BAD and a reason; only a
 * document that is not a PodList (not JSON, no items array, an item without
 * metadata.name/namespace/uid) fails. Returns 0 and fills out (the caller
 * frees it with pod_list_free()), or -1 with a reason in err and nothing
 * allocated.
 */
int pods_json_parse(const char *body, size_t len, const struct pod_parse_opts *opts,
                    struct pod_list *out, char *err, size_t errlen);

/* The same, each pod's budget from the first of sources it declares (SPEC
 * "Where budgets come from"; NULL or empty = GPUMEM_RESOURCE alone, which is
 * what pods_json_parse() reads). Every pod gets p_budget_source and
 * p_budget_decl; a KAI/Run:ai reservation pod is left out of the list when kai
 * is a source. */
int pods_json_parse_sources(const char *body, size_t len,
                            const struct pod_parse_opts *opts,
                            const struct bsrc_order *sources, struct pod_list *out,
                            char *err, size_t errlen);

#endif
