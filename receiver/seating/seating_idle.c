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

/* The why_not when the policy would take the pod, were any GPU's decision to
 * consider it: its use is all in series without the GPU label. */
static const char WHY_NO_GPU_USE[] = "no_gpu_use";

/* What the cards and the reading say of one pod: one entry per card tenant and
 * per series, sorted by namespace and pod, so each pod is one binary search
 * (a 5,000-pod node has 20,000 series: no scan per pod). */
enum mark { ON_CARD, ON_GPU, ELSEWHERE };

struct entry {
    const char *e_ns, *e_pod; /* borrowed */
    enum mark e_mark;
    double e_bytes; /* ELSEWHERE: the series' bytes */
};

static int
by_key(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->e_ns, y->e_ns);

    return c != 0 ? c : strcmp(x->e_pod, y->e_pod);
}

/* The card tenants, every series naming a GPU with anything but 0 bytes (a
 * NaN or a negative one too: that GPU's card says its reading is not usable,
 * and the pod is not known to be idle), and the series without the GPU label.
 * *count entries; NULL with *count 0 when there are none; -1 out of memory. */
static int
index_build(const struct seating_node *n, const struct usage_reading *u,
            struct entry **out, size_t *count)
{
    size_t cap = 0, k = 0;
    struct entry *e;

    *out = NULL;
    *count = 0;
    for (size_t i = 0; i < n->sn_card_count; i++)
        cap += n->sn_cards[i].sc_tenant_count;
    cap += u != NULL ? u->ur_count : 0;
    if (cap == 0)
        return 0;
    if ((e = calloc(cap, sizeof(*e))) == NULL)
        return -1;
    for (size_t i = 0; i < n->sn_card_count; i++)
        for (size_t j = 0; j < n->sn_cards[i].sc_tenant_count; j++) {
            const struct seating_tenant *t = &n->sn_cards[i].sc_tenants[j];
            e[k++] = (struct entry){t->st_namespace, t->st_pod, ON_CARD, 0};
        }
    for (size_t i = 0; u != NULL && i < u->ur_count; i++) {
        const struct usage_series *s = &u->ur_series[i];

        if (s->us_namespace == NULL || s->us_pod == NULL)
            continue;
        if (s->us_gpu != NULL && s->us_bytes != 0)
            e[k++] = (struct entry){s->us_namespace, s->us_pod, ON_GPU, 0};
        else if (s->us_gpu == NULL)
            e[k++] = (struct entry){s->us_namespace, s->us_pod, ELSEWHERE, s->us_bytes};
    }
    qsort(e, k, sizeof(*e), by_key);
    *out = e;
    *count = k;
    return 0;
}

/* 1 when ns/pod is on a card or uses a GPU; else 0, with its unlabelled,
 * plausible use summed into *elsewhere. */
static int
seated_on_gpu(const struct entry *e, size_t count, const char *ns, const char *pod,
              double *elsewhere)
{
    struct entry key = {ns, pod, ON_CARD, 0};
    size_t lo = 0, hi = count;

    *elsewhere = 0;
    while (lo < hi) { /* the first entry not below key */
        size_t mid = lo + (hi - lo) / 2;
        if (by_key(&e[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < count && by_key(&e[lo], &key) == 0; lo++) {
        if (e[lo].e_mark != ELSEWHERE)
            return 1;
        if (isfinite(e[lo].e_bytes) && e[lo].e_bytes > 0)
            *elsewhere += e[lo].e_bytes;
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
    struct entry *index;
    size_t k = 0, nindex;
    int rc = -1;

    if (pods == NULL || pods->pl_count == 0)
        return 0;
    policy_params_from_config(cfg, NULL, (int64_t)time(NULL), &pp);
    if (index_build(n, usage, &index, &nindex) == -1)
        return -1;
    if ((n->sn_idle = calloc(pods->pl_count, sizeof(*n->sn_idle))) == NULL)
        goto done;
    for (size_t i = 0; i < pods->pl_count; i++) {
        const struct pod *p = &pods->pl_pods[i];
        const char *ns = p->p_namespace != NULL ? p->p_namespace : "";
        const char *name = p->p_name != NULL ? p->p_name : "";
        struct seating_tenant *t = &n->sn_idle[k];
        double elsewhere;

        if (p->p_budget_state == BUDGET_NONE ||
            seated_on_gpu(index, nindex, ns, name, &elsewhere))
            continue;
        if ((t->st_namespace = strdup(ns)) == NULL ||
            (t->st_pod = strdup(name)) == NULL) {
            free(t->st_namespace);
            t->st_namespace = NULL;
            goto done;
        }
        n->sn_idle_count = ++k;
        t->st_used_mib = 0;
        t->st_total_used_mib = usage_bytes_to_mib(elsewhere);
        t->st_budget_state = p->p_budget_state == BUDGET_OK && p->p_budget_mib >= 0
                                 ? BUDGET_OK
                                 : BUDGET_BAD;
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
    rc = 0;
done:
    free(index);
    return rc;
}
