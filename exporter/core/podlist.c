/* podlist.c -- the pods of one node as the exporter reads them: the one PodList reader
 * asked for containers and mirror UIDs, budgets in four states, lookups by UID and ID */
#include "podlist.h"

#include <stdio.h>
#include <string.h>

#include "pods_json.h"

enum pl_budget
podlist_budget(const struct pod *p)
{
    if (p->p_budget_gpus > 0) /* BUDGET_BAD to the decision until it knows the GPU */
        return PL_BUDGET_SHARE;
    return p->p_budget_state == BUDGET_OK    ? PL_BUDGET_OK
           : p->p_budget_state == BUDGET_BAD ? PL_BUDGET_BAD
                                             : PL_BUDGET_NONE;
}

int
podlist_parse(const char *body, size_t len, const char *resource, struct pod_list *out,
              char *err, size_t errlen)
{
    return podlist_parse_sources(body, len, resource, NULL, out, err, errlen);
}

int
podlist_parse_sources(const char *body, size_t len, const char *resource,
                      const struct bsrc_order *sources, struct pod_list *out, char *err,
                      size_t errlen)
{
    return podlist_parse_claims(body, len, resource, sources, NULL, out, err, errlen);
}

int
podlist_parse_claims(const char *body, size_t len, const char *resource,
                     const struct bsrc_order *sources, const struct dra_claims *claims,
                     struct pod_list *out, char *err, size_t errlen)
{
    struct pod_parse_opts opts = {
        .po_resource = resource, .po_claims = claims, .po_keep = PODLIST_KEEP};

    return pods_json_parse_sources(body, len, &opts, sources, out, err, errlen);
}

const struct pod *
podlist_find(const struct pod_list *l, const char *uid)
{
    for (size_t i = 0; l != NULL && i < l->pl_count; i++)
        if (strcmp(l->pl_pods[i].p_uid, uid) == 0 ||
            (l->pl_pods[i].p_mirror_uid != NULL &&
             strcmp(l->pl_pods[i].p_mirror_uid, uid) == 0))
            return &l->pl_pods[i];
    return NULL;
}

const char *
podlist_container(const struct pod *p, const char *id)
{
    for (size_t i = 0; p != NULL && i < p->p_container_count; i++)
        if (strcmp(p->p_containers[i].pk_id, id) == 0)
            return p->p_containers[i].pk_name;
    return NULL;
}

int
podlist_share_mib(const struct pod *p, const uint64_t *gpus, size_t ngpus,
                  const uint64_t *all_totals, size_t nall, int64_t *mib, char *why,
                  size_t whylen)
{
    const uint64_t *t = ngpus > 0 ? gpus : all_totals;
    size_t n = ngpus > 0 ? ngpus : nall;

    if (n == 0) {
        snprintf(why, whylen, "%s", BSRC_NEEDS_TOTAL);
        return -1;
    }
    for (size_t i = 1; i < n; i++)
        if (t[i] != t[0]) {
            snprintf(why, whylen, "%s",
                     ngpus > 0 ? "needs the GPU's total; its GPUs differ in size"
                               : "needs the GPU's total; it holds no GPU memory and the "
                                 "node's GPUs differ in size");
            return -1;
        }
    return pod_share_mib(p, (double)t[0], mib, why, whylen);
}
