/* pod.c -- freeing the one pod model */
#include "pod.h"

#include <stdlib.h>

#include "strpool.h"

void
pod_list_free(struct pod_list *l)
{
    size_t i;

    if (l == NULL)
        return;
    for (i = 0; l->pl_pool == NULL && i < l->pl_count; i++) {
        free(l->pl_pods[i].p_namespace);
        free(l->pl_pods[i].p_name);
        free(l->pl_pods[i].p_uid);
        free(l->pl_pods[i].p_budget_error);
        free(l->pl_pods[i].p_budget_decl);
        free(l->pl_pods[i].p_ip);
        free(l->pl_pods[i].p_release);
    }
    strpool_free(l->pl_pool);
    l->pl_pool = NULL;
    free(l->pl_pods);
    l->pl_pods = NULL;
    l->pl_count = 0;
}
