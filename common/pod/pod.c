/* pod.c -- the one pod model: freeing a list, a share-of-the-GPU budget in MiB */
#include "pod.h"

#include <stdlib.h>
#include <string.h>

#include "budget_src.h"
#include "strpool.h"

void
pod_list_free(struct pod_list *l)
{
    size_t i;

    if (l == NULL)
        return;
    /* A list made by hand (tests) owns its strings one by one. */
    for (i = 0; l->pl_pool == NULL && i < l->pl_count; i++) {
        struct pod *p = &l->pl_pods[i];
        free(p->p_namespace);
        free(p->p_name);
        free(p->p_uid);
        free(p->p_budget_error);
        free(p->p_budget_decl);
        free(p->p_ip);
        free(p->p_release);
        free(p->p_mirror_uid);
        free(p->p_owner_kind);
        free(p->p_owner_name);
        free(p->p_template_hash);
    }
    strpool_free(l->pl_pool);
    free(l->pl_pods);
    free(l->pl_containers);
    free(l->pl_decls);
    memset(l, 0, sizeof(*l));
}

int
pod_share_mib(const struct pod *p, double total_bytes, int64_t *mib, char *why,
              size_t whylen)
{
    struct bsrc_budget b;

    memset(&b, 0, sizeof(b));
    b.bb_state = BSRC_STATE_OK;
    b.bb_mib = p->p_budget_base_mib;
    b.bb_gpus = p->p_budget_gpus;
    return bsrc_resolve(&b, 1, total_bytes, mib, why, whylen);
}
