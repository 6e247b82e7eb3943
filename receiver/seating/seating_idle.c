/* seating_idle.c -- GPU scope: the seat-holders no card lists (a budget, no GPU used)
 *
 * A per-GPU decision considers only the pods using that GPU, so a pod that
 * holds a seat but runs nothing on any GPU (pending, idle, loading) is on no
 * card, while its budget counts in the node's sum. Listing it once per node
 * keeps the numbers adding up and lets its tenant find its seat. */
#include "seating_idle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "params.h"

/* The verdict when the policy would take the pod, were any GPU's decision to
 * consider it: its use is all in series without the GPU label. */
static const char WHY_NO_GPU_USE[] = "no_gpu_use";

static int
on_a_card(const struct seating_node *n, const char *ns, const char *pod)
{
    for (size_t i = 0; i < n->sn_card_count; i++)
        for (size_t k = 0; k < n->sn_cards[i].sc_tenant_count; k++) {
            const struct seating_tenant *t = &n->sn_cards[i].sc_tenants[k];
            if (strcmp(t->st_namespace, ns) == 0 && strcmp(t->st_pod, pod) == 0)
                return 1;
        }
    return 0;
}

/* 1 when a series of ns/pod names a GPU with anything but 0 bytes (a NaN or a
 * negative one too: that GPU's card says its reading is not usable, and the
 * pod is not known to be idle). Sums the pod's unlabelled, plausible use into
 * *elsewhere. */
static int
on_a_gpu(const struct usage_reading *u, const char *ns, const char *pod, double *elsewhere)
{
    *elsewhere = 0;
    for (size_t i = 0; u != NULL && i < u->ur_count; i++) {
        const struct usage_series *s = &u->ur_series[i];

        if (s->us_namespace == NULL || s->us_pod == NULL || strcmp(s->us_namespace, ns) != 0 ||
            strcmp(s->us_pod, pod) != 0)
            continue;
        if (s->us_gpu != NULL && s->us_bytes != 0)
            return 1;
        if (s->us_gpu == NULL && isfinite(s->us_bytes) && s->us_bytes > 0)
            *elsewhere += s->us_bytes;
    }
    return 0;
}

static int
by_name(const void *a, const void *b)
{
    const struct seating_tenant *x = a, *y = b;
    int c = strcmp(x->st_namespace, y->st_namespace);

    return c != 0 ? c : strcmp(x->st_pod, y->st_pod);
}

int
seating_idle_build(struct seating_node *n, const struct pod_list *pods,
                   const struct usage_reading *usage, const struct config *cfg)
{
    struct policy_params pp;
    size_t k = 0;

    if (pods == NULL || pods->pl_count == 0)
        return 0;
    policy_params_from_config(cfg, NULL, (int64_t)time(NULL), &pp);
    if ((n->sn_idle = calloc(pods->pl_count, sizeof(*n->sn_idle))) == NULL)
        return -1;
    for (size_t i = 0; i < pods->pl_count; i++) {
        const struct pod *p = &pods->pl_pods[i];
        const char *ns = p->p_namespace != NULL ? p->p_namespace : "";
        const char *name = p->p_name != NULL ? p->p_name : "";
        struct seating_tenant *t = &n->sn_idle[k];
        double elsewhere;

        if (p->p_budget_state == BUDGET_NONE || on_a_card(n, ns, name) ||
            on_a_gpu(usage, ns, name, &elsewhere))
            continue;
        if ((t->st_namespace = strdup(ns)) == NULL || (t->st_pod = strdup(name)) == NULL) {
            free(t->st_namespace);
            t->st_namespace = NULL;
            return -1;
        }
        n->sn_idle_count = ++k;
        t->st_used_mib = 0;
        t->st_total_used_mib = usage_bytes_to_mib(elsewhere);
        t->st_budget_state =
            p->p_budget_state == BUDGET_OK && p->p_budget_mib >= 0 ? BUDGET_OK : BUDGET_BAD;
        if (t->st_budget_state == BUDGET_OK) {
            t->st_budget_mib = p->p_budget_mib;
            t->st_overshoot_mib = t->st_total_used_mib - p->p_budget_mib;
        }
        t->st_why_not = policy_why_not_pod(&pp, p, elsewhere);
        if (t->st_why_not == NULL)
            t->st_why_not = WHY_NO_GPU_USE;
        t->st_eligible = 0;
    }
    if (k > 1)
        qsort(n->sn_idle, k, sizeof(*n->sn_idle), by_name);
    return 0;
}
