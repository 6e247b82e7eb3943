/* gather_gpu.c -- a gather in GPU scope: FREE_QUERY per GPU, one result per GPU */
#include "gather_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

static int
scoped(const struct gather *g)
{
    return g->g_cfg->c_gpu_label[0] != '\0' && usage_gpu_scoped(&g->g_usage);
}

/* Memory ran out between the answers: nothing is acted on. */
static void
give_up(struct gather *g)
{
    g->g_usage_ok = 0;
    snprintf(g->g_usage_error, sizeof(g->g_usage_error), "out of memory");
}

static void
gpu_free_cb(struct prom_answer *a, void *arg)
{
    struct gather_gpu_free *gf = arg;
    struct gather *g = gf->gf_g;

    if (a->pa_cancelled)
        g->g_cancelled = 1;
    if (a->pa_ok) {
        gf->gf_ok = 1;
        gf->gf_mib = a->pa_value;
    } else {
        snprintf(gf->gf_error, sizeof(gf->gf_error), "FREE_QUERY: %s",
                 a->pa_error ? a->pa_error : "prometheus: unavailable");
    }
    gather_answered(g);
}

/* FREE_QUERY with $node and $gpu replaced ("" for a node in node scope). */
static void
start_free(struct gather *g, struct gather_gpu_free *gf, const char *gpu)
{
    char err[256];
    char *qn, *q = NULL;

    gf->gf_g = g;
    if ((qn = prom_substitute_node(g->g_cfg->c_free_query, g->g_node, err, sizeof(err))) !=
        NULL)
        q = prom_substitute_gpu(qn, gpu, err, sizeof(err));
    free(qn);
    if (q == NULL) {
        snprintf(gf->gf_error, sizeof(gf->gf_error),
                 "FREE_QUERY: cannot build the query for node %s GPU %s: %s", g->g_node,
                 gpu, err);
        return;
    }
    if (prom_query_scalar(g->g_prom, q, gpu_free_cb, gf) == 0)
        g->g_pending++;
    else
        snprintf(gf->gf_error, sizeof(gf->gf_error),
                 "FREE_QUERY: prometheus: the query could not be started");
    free(q);
}

void
gather_gpu_after_usage(struct gather *g)
{
    size_t i, n;
    int gpus = scoped(g);

    if (gpus && g->g_gpu != NULL) {
        if ((g->g_gpus = calloc(1, sizeof(*g->g_gpus))) == NULL)
            return give_up(g);
        g->g_gpus[0] = g->g_gpu;
        g->g_gpu_count = 1;
    } else if (gpus && usage_gpus(&g->g_usage, &g->g_gpus, &g->g_gpu_count) == -1) {
        return give_up(g);
    }
    if (!g->g_want_free || (!gpus && !g->g_free_deferred))
        return;
    n = gpus ? g->g_gpu_count : 1;
    if ((g->g_gfree = calloc(n, sizeof(*g->g_gfree))) == NULL)
        return give_up(g);
    for (i = 0; i < n; i++)
        start_free(g, &g->g_gfree[i], gpus ? g->g_gpus[i] : "");
}

static int
recovered(const struct gather_result *u)
{
    return u->gr_status == GATHER_DECIDED &&
           u->gr_policy.pr_outcome == POLICY_SKIPPED_RECOVERED;
}

/* The node's own result when every GPU was asked for: never a victim; says
 * whether any GPU needs a decision, and the least free VRAM seen. */
static void
summarise(struct gather *g, struct gather_result *r, size_t below)
{
    struct policy_result *p = &r->gr_policy;
    const struct gather_result *least = NULL;
    size_t i;

    r->gr_status = GATHER_DECIDED;
    for (i = 0; i < r->gr_gpu_count; i++) {
        const struct gather_result *u = &r->gr_gpus[i];
        if (u->gr_status == GATHER_DECIDED && u->gr_policy.pr_free_known &&
            (least == NULL || u->gr_policy.pr_free_mib < least->gr_policy.pr_free_mib))
            least = u;
    }
    p->pr_outcome = below > 0 ? POLICY_SKIPPED_NO_CANDIDATE : POLICY_SKIPPED_RECOVERED;
    p->pr_free_known = least != NULL;
    p->pr_free_mib = least != NULL ? least->gr_policy.pr_free_mib : 0;
    if (below > 0)
        snprintf(p->pr_reason, sizeof(p->pr_reason),
                 "%zu of %zu GPUs below the floor or unreadable", below, r->gr_gpu_count);
    else
        snprintf(p->pr_reason, sizeof(p->pr_reason),
                 "free >= floor %lld MiB on every GPU (%zu; the least free is %s at %lld "
                 "MiB); nothing to do",
                 (long long)g->g_cfg->c_floor_mib, r->gr_gpu_count,
                 least != NULL ? least->gr_gpu : "?", (long long)p->pr_free_mib);
}

void
gather_gpu_conclude(struct gather *g)
{
    struct gather_result *r = &g->g_result;
    size_t i, below = 0;

    if (g->g_gpus == NULL) { /* can't happen: after_usage gave up on OOM */
        r->gr_status = GATHER_TELEMETRY;
        snprintf(r->gr_error, sizeof(r->gr_error), "out of memory");
        return;
    }
    if (g->g_gpu != NULL) {
        if (g->g_want_free)
            gather_judge(g, r, g->g_gpu, g->g_gfree[0].gf_ok, g->g_gfree[0].gf_mib,
                         g->g_gfree[0].gf_error);
        else
            gather_judge(g, r, g->g_gpu, 1, 0, "");
        return;
    }
    if ((r->gr_gpus = calloc(g->g_gpu_count, sizeof(*r->gr_gpus))) == NULL) {
        r->gr_status = GATHER_TELEMETRY;
        snprintf(r->gr_error, sizeof(r->gr_error), "out of memory");
        return;
    }
    r->gr_gpu_count = g->g_gpu_count;
    for (i = 0; i < g->g_gpu_count; i++) {
        if (g->g_want_free)
            gather_judge(g, &r->gr_gpus[i], g->g_gpus[i], g->g_gfree[i].gf_ok,
                         g->g_gfree[i].gf_mib, g->g_gfree[i].gf_error);
        else
            gather_judge(g, &r->gr_gpus[i], g->g_gpus[i], 1, 0, "");
        below += !recovered(&r->gr_gpus[i]);
    }
    summarise(g, r, below);
}

void
gather_gpu_free_units(struct gather *g)
{
    struct gather_result *r = &g->g_result;

    for (size_t i = 0; i < r->gr_gpu_count; i++)
        policy_result_free(&r->gr_gpus[i].gr_policy);
    free(r->gr_gpus);
    r->gr_gpus = NULL;
    r->gr_gpu_count = 0;
    free(g->g_gfree);
    free(g->g_gpus);
}
