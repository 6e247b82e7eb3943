/* seating.c -- the seating chart's facts: built from a gather's answer and the node's
 * capacity */
#include "seating.h"
#include "seating_idle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
seating_capacity_name(enum seating_capacity c)
{
    switch (c) {
    case SEATING_CAPACITY_OK:
        return "advertised";
    case SEATING_CAPACITY_NOT_ADVERTISED:
        return "not_advertised";
    case SEATING_CAPACITY_UNKNOWN:
        return "unknown";
    }
    return "unknown"; /* can't happen */
}

const char *
seating_free_source_words(enum free_source s)
{
    switch (s) {
    case FREE_SOURCE_DEVICE:
        return "device";
    case FREE_SOURCE_COMPUTED:
        return "computed as GPU_TOTAL_MIB - used";
    case FREE_SOURCE_QUERY:
        return "FREE_QUERY";
    case FREE_SOURCE_NONE:
        break;
    }
    return "not read";
}

int
seating_card_below_floor(const struct seating_node *n, const struct seating_card *c)
{
    return c->sc_free_known && c->sc_free_mib < n->sn_floor_mib;
}

static void
tenants_free(struct seating_tenant *t, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(t[i].st_namespace);
        free(t[i].st_pod);
    }
    free(t);
}

static int
by_source_key(const void *a, const void *b)
{
    const struct seating_source *x = a, *y = b;
    int c = strcmp(x->ss_namespace, y->ss_namespace);

    return c != 0 ? c : strcmp(x->ss_pod, y->ss_pod);
}

/* Each pod's budget source, sorted for seating_budget_source(). */
static int
sources_build(struct seating_node *n, const struct pod_list *pods)
{
    struct seating_source *s;

    if (pods == NULL || pods->pl_count == 0)
        return 0;
    if ((n->sn_sources = calloc(pods->pl_count, sizeof(*n->sn_sources))) == NULL)
        return -1;
    for (size_t i = 0; i < pods->pl_count; i++) {
        const struct pod *p = &pods->pl_pods[i];
        if (p->p_budget_source == NULL || p->p_namespace == NULL || p->p_name == NULL)
            continue;
        s = &n->sn_sources[n->sn_source_count];
        if ((s->ss_namespace = strdup(p->p_namespace)) == NULL ||
            (s->ss_pod = strdup(p->p_name)) == NULL) {
            free(s->ss_namespace);
            s->ss_namespace = NULL;
            return -1;
        }
        s->ss_source = p->p_budget_source;
        n->sn_source_count++;
    }
    qsort(n->sn_sources, n->sn_source_count, sizeof(*n->sn_sources), by_source_key);
    return 0;
}

const char *
seating_budget_source(const struct seating_node *n, const char *ns, const char *pod)
{
    struct seating_source key = {(char *)ns, (char *)pod, NULL}, *hit;

    if (n == NULL || n->sn_source_count == 0 || ns == NULL || pod == NULL)
        return NULL;
    hit = bsearch(&key, n->sn_sources, n->sn_source_count, sizeof(key), by_source_key);
    return hit != NULL ? hit->ss_source : NULL;
}

void
seating_node_free(struct seating_node *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->sn_card_count; i++) {
        tenants_free(n->sn_cards[i].sc_tenants, n->sn_cards[i].sc_tenant_count);
        free(n->sn_cards[i].sc_gpu);
    }
    free(n->sn_cards);
    tenants_free(n->sn_idle, n->sn_idle_count);
    for (size_t i = 0; i < n->sn_source_count; i++) {
        free(n->sn_sources[i].ss_namespace);
        free(n->sn_sources[i].ss_pod);
    }
    free(n->sn_sources);
    free(n->sn_node);
    memset(n, 0, sizeof(*n));
}

void
seating_free(struct seating *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->s_node_count; i++)
        seating_node_free(&s->s_nodes[i]);
    free(s->s_nodes);
    s->s_nodes = NULL;
    s->s_node_count = 0;
}

/* A pod is on the chart when it holds a seat (declares a budget, readable
 * or not) or VRAM; the node's other pods (daemons, CPU work) are not. */
/* One DRA seat: the claims a pod names, in budget_src's words, and their memory. */
struct claim_seat {
    const char *cs_decl;
    int64_t cs_mib;
};

static int
seat_cmp(const void *a, const void *b)
{
    return strcmp(((const struct claim_seat *)a)->cs_decl,
                  ((const struct claim_seat *)b)->cs_decl);
}

static void
seats_add(int64_t *mib, int64_t v)
{
    *mib = v > INT64_MAX - *mib ? INT64_MAX : *mib + v; /* saturate, never wrap */
}

/*
 * The seats the node's pods hold: the sum of readable budgets, each DRA
 * declaration once, since pods sharing a claim name the same claims in the
 * same words (budget_src.c) and the scheduler allocated that memory once.
 * Unreadable budgets are counted in *bad. n log n. 0, or -1 when out of memory.
 */
static int
seats_sum(const struct pod_list *pods, int64_t *mib, size_t *bad)
{
    struct claim_seat *seats = NULL;
    size_t n = 0;

    if (pods->pl_count > 0 && (seats = calloc(pods->pl_count, sizeof(*seats))) == NULL)
        return -1;
    for (size_t i = 0; i < pods->pl_count; i++) {
        const struct pod *q = &pods->pl_pods[i];
        if (q->p_budget_state == BUDGET_BAD)
            (*bad)++;
        if (q->p_budget_state != BUDGET_OK)
            continue;
        if (q->p_budget_source != NULL && strcmp(q->p_budget_source, "dra") == 0 &&
            q->p_budget_decl != NULL)
            seats[n++] = (struct claim_seat){q->p_budget_decl, q->p_budget_mib};
        else
            seats_add(mib, q->p_budget_mib);
    }
    if (n > 1)
        qsort(seats, n, sizeof(*seats), seat_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(seats[i].cs_decl, seats[i - 1].cs_decl) != 0)
            seats_add(mib, seats[i].cs_mib);
    free(seats);
    return 0;
}

static int
on_chart(const struct policy_candidate *c)
{
    return c->pc_used_mib > 0 || c->pc_gpu_used_mib > 0 || c->pc_has_budget ||
           (c->pc_pod != NULL && c->pc_pod->p_budget_state == BUDGET_BAD);
}

/* Largest use first, then namespace and name, so the chart reads the same
 * whatever order the API listed the pods in. */
static int
by_use(const void *a, const void *b)
{
    const struct seating_tenant *x = a, *y = b;
    int c;

    if (x->st_used_mib != y->st_used_mib)
        return x->st_used_mib > y->st_used_mib ? -1 : 1;
    if ((c = strcmp(x->st_namespace, y->st_namespace)) != 0)
        return c;
    return strcmp(x->st_pod, y->st_pod);
}

/* A GPU's unattributed figure is shown only when it can be true: a NaN or
 * negative one is no amount of memory, and one above the GPU's own total
 * (+Inf included) cannot be (and would overflow the drawing). */
static int
unattributed_true(const struct device_gpu *g)
{
    return g != NULL && g->dg_have_unattributed && g->dg_unattributed_bytes >= 0 &&
           g->dg_unattributed_bytes <= g->dg_total_bytes;
}

/* A card read from the device: its own total (not GPU_TOTAL_MIB), and the
 * memory no pod accounts for, from the same reading (in node scope summed
 * over the node's GPUs, known only when every GPU reports it). */
static void
device_card(struct seating_card *card, const char *gpu, const struct device_reading *d)
{
    struct device_figure f;
    double un = 0;
    size_t i;

    device_figure_for(d, gpu, &f);
    if (!f.df_have)
        return; /* can't happen: the policy said device */
    card->sc_total_mib = usage_bytes_to_mib(f.df_total_bytes);
    if (gpu != NULL) {
        const struct device_gpu *g = device_find(d, gpu);
        card->sc_unattributed_known = unattributed_true(g);
        un = g != NULL ? g->dg_unattributed_bytes : 0;
    } else {
        card->sc_unattributed_known = d->dr_count > 0;
        for (i = 0; i < d->dr_count; i++) {
            card->sc_unattributed_known &= unattributed_true(&d->dr_gpus[i]);
            un += d->dr_gpus[i].dg_unattributed_bytes;
        }
    }
    card->sc_unattributed_mib = card->sc_unattributed_known ? usage_bytes_to_mib(un) : 0;
}

static int
fill_card(struct seating_card *card, const struct gather_answer *gr,
          const struct device_reading *device, const struct config *cfg)
{
    const struct policy_answer *p = &gr->gr_policy;
    size_t k = 0;

    if (gr->gr_gpu != NULL && (card->sc_gpu = strdup(gr->gr_gpu)) == NULL)
        return -1;
    if (gr->gr_gpu != NULL && gr->gr_status != GATHER_DECIDED)
        snprintf(card->sc_error, sizeof(card->sc_error), "%s", gr->gr_error);
    else if (gr->gr_gpu != NULL && p->pr_outcome == POLICY_SKIPPED_TELEMETRY)
        snprintf(card->sc_error, sizeof(card->sc_error), "%s", p->pr_reason);
    card->sc_total_mib = cfg->c_gpu_total_mib;
    card->sc_free_known = p->pr_free_known;
    card->sc_free_mib = p->pr_free_mib;
    card->sc_free_source = gr->gr_status == GATHER_DECIDED || gr->gr_status == GATHER_KUBE
                               ? p->pr_free_source
                               : FREE_SOURCE_NONE;
    if (card->sc_free_source == FREE_SOURCE_DEVICE && device != NULL)
        device_card(card, gr->gr_gpu, device);
    if (p->pr_candidate_count > 0 &&
        (card->sc_tenants = calloc(p->pr_candidate_count, sizeof(*card->sc_tenants))) ==
            NULL)
        return -1;
    for (size_t i = 0; i < p->pr_candidate_count; i++) {
        const struct policy_candidate *c = &p->pr_candidates[i];
        struct seating_tenant *t = &card->sc_tenants[k];

        if (!on_chart(c))
            continue;
        if ((t->st_namespace = strdup(c->pc_namespace)) == NULL ||
            (t->st_pod = strdup(c->pc_name)) == NULL) {
            free(t->st_namespace);
            return -1;
        }
        k++;
        card->sc_tenant_count = k;
        t->st_used_mib = gr->gr_gpu != NULL ? c->pc_gpu_used_mib : c->pc_used_mib;
        t->st_total_used_mib = c->pc_used_mib;
        t->st_budget_state = c->pc_has_budget    ? BUDGET_OK
                             : c->pc_pod != NULL ? c->pc_pod->p_budget_state
                                                 : BUDGET_NONE;
        if (t->st_budget_state == BUDGET_OK && !c->pc_has_budget)
            t->st_budget_state = BUDGET_NONE; /* can't happen: has_budget says OK */
        t->st_budget_mib = c->pc_budget_mib;
        t->st_overshoot_mib = c->pc_overshoot_mib;
        t->st_eligible = c->pc_eligible;
        t->st_why_not = c->pc_why_not;
        if (t->st_budget_state == BUDGET_OK && t->st_overshoot_mib > 0)
            t->st_over_here_mib = t->st_overshoot_mib < t->st_used_mib
                                      ? t->st_overshoot_mib
                                      : t->st_used_mib;
        card->sc_used_mib += t->st_used_mib;
    }
    if (k > 1)
        qsort(card->sc_tenants, k, sizeof(*card->sc_tenants), by_use);
    return 0;
}

int
seating_node_build(const char *node, const struct gather_answer *gr,
                   const struct pod_list *pods, const char *pods_error,
                   const struct usage_reading *usage, const struct device_reading *device,
                   int cap_ok, enum node_capacity_state cap_state, int64_t cap_mib,
                   const char *cap_error, const struct config *cfg,
                   struct seating_node *out)
{
    const struct policy_answer *p = &gr->gr_policy;
    size_t n_cards;

    memset(out, 0, sizeof(*out));
    out->sn_floor_mib = cfg->c_floor_mib;
    if ((out->sn_node = strdup(node)) == NULL)
        goto fail;
    if (!cap_ok) {
        out->sn_capacity = SEATING_CAPACITY_UNKNOWN;
        snprintf(out->sn_capacity_error, sizeof(out->sn_capacity_error), "%s",
                 cap_error ? cap_error : "the node could not be read");
    } else if (cap_state == NODE_CAPACITY_ABSENT) {
        out->sn_capacity = SEATING_CAPACITY_NOT_ADVERTISED;
    } else {
        out->sn_capacity = SEATING_CAPACITY_OK;
        out->sn_capacity_mib = cap_mib;
    }
    /* What the reading says, in the words a decision would use. */
    out->sn_reading_ok =
        gr->gr_status == GATHER_DECIDED && p->pr_outcome != POLICY_SKIPPED_TELEMETRY;
    if (gr->gr_status != GATHER_DECIDED)
        snprintf(out->sn_error, sizeof(out->sn_error), "%s", gr->gr_error);
    else if (p->pr_outcome == POLICY_SKIPPED_TELEMETRY)
        snprintf(out->sn_error, sizeof(out->sn_error), "%s", p->pr_reason);
    /* A reading that is recovered needs no pods to decide, yet the chart
     * does: without them the budgets and the tenants are unknown, never 0. */
    out->sn_budgets_known = pods != NULL;
    if (pods == NULL && out->sn_reading_ok) {
        out->sn_reading_ok = 0;
        snprintf(out->sn_error, sizeof(out->sn_error), "%s",
                 pods_error != NULL && pods_error[0] != '\0'
                     ? pods_error
                     : "the node's pods could not be listed");
    }
    /* Budgets are node resources: each pod's seat counts once per node, used
     * or not, whichever GPU it runs on; a DRA claim shared by several pods is
     * one seat (seats_sum). */
    if (pods != NULL && seats_sum(pods, &out->sn_budgets_mib, &out->sn_bad_budgets) == -1)
        goto fail;
    if (sources_build(out, pods) == -1)
        goto fail;
    /* GPU scope: one card per GPU the series name; else the node's one card. */
    n_cards = gr->gr_gpu_count > 0 ? gr->gr_gpu_count : 1;
    if ((out->sn_cards = calloc(n_cards, sizeof(*out->sn_cards))) == NULL)
        goto fail;
    out->sn_card_count = n_cards;
    for (size_t i = 0; gr->gr_status != GATHER_CANCELLED && i < n_cards; i++)
        if (fill_card(&out->sn_cards[i], gr->gr_gpu_count > 0 ? &gr->gr_gpus[i] : gr,
                      device, cfg) == -1)
            goto fail;
    /* GPU scope: a seat-holder using no GPU is on no card; list it once. */
    if (gr->gr_gpu_count > 0 && gr->gr_status != GATHER_CANCELLED &&
        seating_idle_build(out, pods, usage, cfg) == -1)
        goto fail;
    out->sn_overcommitted = out->sn_capacity == SEATING_CAPACITY_OK &&
                            out->sn_budgets_known &&
                            out->sn_budgets_mib > out->sn_capacity_mib;
    return 0;
fail:
    seating_node_free(out);
    return -1;
}
