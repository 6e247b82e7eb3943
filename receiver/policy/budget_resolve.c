/* budget_resolve.c -- a budget declared as a share of the GPU into MiB, by the total of
 * the GPU the pod runs on (SPEC "Where budgets come from"; no I/O) */
#include <stdlib.h>
#include <string.h>

#include "budget_src.h"
#include "device.h"
#include "policy.h"
#include "strpool.h"
#include "usage.h"

#define WHY_DIFFER "needs the GPU's total; its GPUs differ in size"
#define WHY_NODE_DIFFER                                                                  \
    "needs the GPU's total; the node's GPUs differ in size and no series names the pod's GPU"

/* Series sorted by (namespace, pod): each pod's GPUs found by bisection. */
static int
cmp_series(const void *a, const void *b)
{
    const struct usage_series *x = *(const struct usage_series *const *)a;
    const struct usage_series *y = *(const struct usage_series *const *)b;
    int c = strcmp(x->us_namespace ? x->us_namespace : "",
                   y->us_namespace ? y->us_namespace : "");

    return c != 0 ? c : strcmp(x->us_pod ? x->us_pod : "", y->us_pod ? y->us_pod : "");
}

static int
cmp_key(const struct pod *p, const struct usage_series *s)
{
    int c = strcmp(p->p_namespace ? p->p_namespace : "",
                   s->us_namespace ? s->us_namespace : "");

    return c != 0 ? c : strcmp(p->p_name ? p->p_name : "", s->us_pod ? s->us_pod : "");
}

/* One total seen: 0, or -1 when it differs from the one before. */
static int
same(double *have, int *n, double t)
{
    if (*n > 0 && *have != t)
        return -1;
    *have = t;
    (*n)++;
    return 0;
}

/* The total of the GPU p runs on: 0 and *total, or -1 with a static why. */
static int
pod_total(const struct pod *p, struct usage_series **idx, size_t count,
          const struct device_reading *d, double *total, const char **why)
{
    size_t lo = 0, hi = count, i;
    char buf[200];
    double t;
    int n = 0, named = 0;

    *why = BSRC_NEEDS_TOTAL;
    if (d == NULL || d->dr_count == 0)
        return -1;
    while (lo < hi) { /* the first series of p */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(p, idx[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (i = lo; i < count && cmp_key(p, idx[i]) == 0; i++) {
        if (idx[i]->us_gpu == NULL)
            continue;
        named = 1;
        if (device_total(d, idx[i]->us_gpu, &t, buf, sizeof(buf)) != 1)
            return -1;
        if (same(total, &n, t) == -1)
            return *why = WHY_DIFFER, -1;
    }
    if (named)
        return 0;
    for (i = 0; i < d->dr_count; i++) {
        if (device_total(d, d->dr_gpus[i].dg_gpu, &t, buf, sizeof(buf)) != 1)
            continue;
        if (same(total, &n, t) == -1)
            return *why = WHY_NODE_DIFFER, -1;
    }
    return n > 0 ? 0 : -1;
}

/* Sets p's reason to why (kept in the list's pool; without one it stays). */
static void
set_why(struct pod_list *l, struct pod *p, const char *why)
{
    char *s;

    if (p->p_budget_error != NULL && strcmp(p->p_budget_error, why) == 0)
        return;
    if (l->pl_pool != NULL && (s = strpool_dup(l->pl_pool, why, strlen(why))) != NULL)
        p->p_budget_error = s;
}

void
policy_resolve_budgets(struct pod_list *l, const struct usage_reading *u,
                       const struct device_reading *d)
{
    struct usage_series **idx = NULL;
    const char *why;
    size_t i, n = 0;
    double total = 0;
    int64_t mib;
    char buf[160];

    for (i = 0; l != NULL && i < l->pl_count && n == 0; i++)
        n = l->pl_pods[i].p_budget_gpus > 0;
    if (n == 0)
        return;
    n = 0;
    if (u != NULL && u->ur_count > 0 &&
        (idx = calloc(u->ur_count, sizeof(*idx))) != NULL) {
        for (i = 0; i < u->ur_count; i++)
            idx[i] = &u->ur_series[i];
        n = u->ur_count;
        qsort(idx, n, sizeof(*idx), cmp_series);
    }
    /* Out of memory: no series index, so only the node's one size can serve. */
    for (i = 0; i < l->pl_count; i++) {
        struct pod *p = &l->pl_pods[i];
        if (!(p->p_budget_gpus > 0))
            continue;
        if (pod_total(p, idx, n, d, &total, &why) == 0) {
            if (pod_share_mib(p, total, &mib, buf, sizeof(buf)) == 0) {
                p->p_budget_state = BUDGET_OK;
                p->p_budget_mib = mib;
                continue;
            }
            why = buf;
        }
        p->p_budget_state = BUDGET_BAD;
        p->p_budget_mib = 0;
        set_why(l, p, why);
    }
    free(idx);
}
