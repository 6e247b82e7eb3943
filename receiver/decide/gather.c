/* gather.c -- one node's (or GPU's) fresh evidence (Prometheus + API server), then the
 * policy */
#include "gather.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "kube.h"
#include "log.h"
#include "node_name.h"
#include "params.h"
#include "prom.h"

/* FREE_QUERY's answer for one GPU. */
struct gather_gpu_free {
    struct gather *gf_g; /* borrowed: the gather it belongs to */
    int gf_ok;
    double gf_mib;
    char gf_error[512];
};

struct gather {
    const struct config *g_cfg; /* borrowed */
    char *g_node;               /* owned */
    char *g_starving_ns;        /* owned, may be NULL */
    char *g_gpu;                /* owned; the one GPU asked for, NULL = every GPU */
    char **g_subset;            /* owned (array and strings), sorted, distinct: the
                                   GPUs asked for (gather_start_gpus), NULL = every GPU */
    size_t g_subset_count;
    struct prom *g_prom; /* borrowed */
    gather_done_fn g_cb;
    void *g_arg;
    int g_pending; /* requests whose answers have not arrived */
    int g_dead;    /* gather_free() ran; free when g_pending hits 0 */
    int g_refs;    /* holders (gather_hold); the last gather_free frees */
    int g_cancelled;
    int g_reread;   /* gather_start_reread: no used series at all is a reading */
    int g_bad_node; /* the node is no node name: nothing was asked (skipped_kube) */
    /* Evidence. */
    int g_usage_ok;
    struct usage_reading g_usage; /* owned */
    char g_usage_error[512];
    int g_want_device, g_device_ok; /* FREE_QUERY=auto: the device query */
    struct device_reading g_device; /* owned */
    char g_device_error[512];
    int g_want_free, g_free_ok; /* an explicit FREE_QUERY */
    double g_free_mib;
    char g_free_error[512];
    int g_pods_ok;
    struct pod_list g_pods; /* owned */
    char g_pods_error[512];
    struct pod_list g_no_pods; /* empty: used when the pods are unknown */
    int g_free_deferred;       /* FREE_QUERY names $gpu: asked once the GPUs are known */
    struct gather_gpu_free *g_gfree; /* owned; GPU scope: FREE_QUERY per GPU */
    const char **g_gpus; /* owned array, strings borrowed from g_usage or g_gpu */
    size_t g_gpu_count;
    size_t g_gfree_next;        /* the next GPU whose FREE_QUERY is still to ask */
    size_t g_gfree_count;       /* GPUs with a FREE_QUERY to ask (g_gfree's length) */
    size_t g_gfree_busy;        /* of them asked and not yet answered */
    struct policy_prep *g_prep; /* owned: the evidence indexed once for every GPU */
    const struct pod_list *g_prep_pods; /* the pods g_prep was made with */
    struct gather_answer g_answer;
};

/* Defined below, in the GPU-scope part. */
static void gather_answered(struct gather *g);
static void gather_judge(struct gather *g, struct gather_answer *r, const char *gpu,
                         int free_ok, double free_mib, const char *free_error);
static void gather_gpu_after_usage(struct gather *g);
static void gather_gpu_conclude(struct gather *g);
static void gather_gpu_free_units(struct gather *g);
static void gpu_free_cb(struct prom_answer *a, void *arg);
static int scoped(const struct gather *g);
static struct gather *open_gather(struct event_base *base, const struct config *cfg,
                                  struct prom *prom, struct kube *kube, const char *node,
                                  const char *gpu, const char *starving_ns, int reread,
                                  gather_done_fn cb, void *arg);

static void
gather_destroy(struct gather *g)
{
    gather_gpu_free_units(g);
    policy_prep_free(g->g_prep);
    for (size_t i = 0; i < g->g_subset_count; i++)
        free(g->g_subset[i]);
    free(g->g_subset);
    free(g->g_gpu);
    policy_answer_free(&g->g_answer.gr_policy);
    usage_reading_free(&g->g_usage);
    device_reading_free(&g->g_device);
    pod_list_free(&g->g_pods);
    free(g->g_node);
    free(g->g_starving_ns);
    free(g);
}

void
gather_hold(struct gather *g)
{
    g->g_refs++;
}

void
gather_free(struct gather *g)
{
    if (g == NULL || --g->g_refs > 0)
        return;
    if (g->g_pending > 0) {
        g->g_dead = 1; /* the last answer frees it */
        return;
    }
    gather_destroy(g);
}

const struct pod_list *
gather_pods(const struct gather *g)
{
    return g->g_pods_ok ? &g->g_pods : NULL;
}

const char *
gather_pods_error(const struct gather *g)
{
    return g->g_pods_ok ? "" : g->g_pods_error;
}

const struct device_reading *
gather_device(const struct gather *g)
{
    return g->g_want_device && g->g_device_ok ? &g->g_device : NULL;
}

const struct usage_reading *
gather_usage(const struct gather *g)
{
    return g->g_usage_ok ? &g->g_usage : NULL;
}

/* Runs the policy on pods (the real list, or none when it could not be had),
 * for the node or one GPU of it. */
static void
decide(struct gather *g, struct policy_answer *res, const struct pod_list *pods,
       const char *gpu, double free_mib)
{
    struct policy_params pp;
    struct policy_input in = {
        .pi_pods = pods,
        .pi_usage = &g->g_usage,
        .pi_have_free = g->g_want_free,
        .pi_free_mib = free_mib,
        .pi_gpu = gpu,
        .pi_device = g->g_want_device ? &g->g_device : NULL,
    };

    /* A share of the GPU (HAMi's percentage, KAI's fraction) needs its total. */
    if (pods == &g->g_pods)
        policy_resolve_budgets(&g->g_pods, &g->g_usage, in.pi_device);
    policy_params_from_config(g->g_cfg, g->g_starving_ns, (int64_t)time(NULL), &pp);
    /* Every GPU of the node reads the same pods and series: indexed once
     * (on OOM each decision indexes for itself, or says out of memory). */
    if (gpu != NULL && g->g_prep == NULL) {
        g->g_prep = policy_prepare(&pp, &in);
        g->g_prep_pods = pods;
    }
    in.pi_prep = gpu != NULL && g->g_prep_pods == pods ? g->g_prep : NULL;
    policy_decide(&pp, &in, res);
}

/* Keeps the reading and the outcome, drops the candidates. */
static void
drop_candidates(struct policy_answer *p)
{
    struct policy_answer keep = *p;

    keep.pr_candidates = NULL;
    keep.pr_candidate_count = 0;
    keep.pr_ranked_count = 0;
    policy_answer_free(p);
    *p = keep;
}

static void
gather_judge(struct gather *g, struct gather_answer *r, const char *gpu, int free_ok,
             double free_mib, const char *free_error)
{
    r->gr_gpu = gpu;
    if (g->g_want_device && !g->g_device_ok) {
        /* Asked and not answered: an error, not "no device series". */
        r->gr_status = GATHER_TELEMETRY;
        snprintf(r->gr_error, sizeof(r->gr_error), "%s", g->g_device_error);
    } else if (g->g_want_free && !free_ok) {
        r->gr_status = GATHER_TELEMETRY;
        snprintf(r->gr_error, sizeof(r->gr_error), "%s", free_error);
    } else if (g->g_pods_ok) {
        r->gr_status = GATHER_DECIDED;
        decide(g, &r->gr_policy, &g->g_pods, gpu, free_mib);
    } else {
        /* Without pods the reading alone still tells "implausible" and
         * "recovered" apart from "below the floor". */
        decide(g, &r->gr_policy, &g->g_no_pods, gpu, free_mib);
        r->gr_status = GATHER_DECIDED;
        if (r->gr_policy.pr_outcome != POLICY_SKIPPED_TELEMETRY &&
            r->gr_policy.pr_outcome != POLICY_SKIPPED_RECOVERED) {
            r->gr_status = GATHER_KUBE;
            snprintf(r->gr_error, sizeof(r->gr_error), "%s", g->g_pods_error);
        } else if (r->gr_policy.pr_outcome == POLICY_SKIPPED_RECOVERED) {
            /* Without the pod list every series would read "not_on_node", a
             * rule nobody checked: list no candidates instead. */
            drop_candidates(&r->gr_policy);
        }
    }
}

/* Every answer is in: judge them in SPEC's order (telemetry, recovered, pods). */
static void
conclude(struct gather *g)
{
    struct gather_answer *r = &g->g_answer;

    if (g->g_cancelled) {
        r->gr_status = GATHER_CANCELLED;
        snprintf(r->gr_error, sizeof(r->gr_error), "cancelled: the daemon is stopping");
    } else if (g->g_bad_node) {
        r->gr_status = GATHER_KUBE;
        snprintf(r->gr_error, sizeof(r->gr_error), "%s", g->g_pods_error);
    } else if (!g->g_usage_ok) {
        r->gr_status = GATHER_TELEMETRY;
        snprintf(r->gr_error, sizeof(r->gr_error), "%s", g->g_usage_error);
    } else if (scoped(g)) {
        gather_gpu_conclude(g);
    } else if (g->g_free_deferred && g->g_gfree != NULL) { /* asked with $gpu = "" */
        gather_judge(g, r, NULL, g->g_gfree[0].gf_ok, g->g_gfree[0].gf_mib,
                     g->g_gfree[0].gf_error);
    } else {
        gather_judge(g, r, NULL, g->g_free_ok, g->g_free_mib, g->g_free_error);
    }
    g->g_cb(g, r, g->g_arg);
}

static void
gather_answered(struct gather *g)
{
    if (--g->g_pending > 0)
        return;
    if (g->g_dead) {
        gather_destroy(g);
        return;
    }
    conclude(g);
}

static void
usage_cb(struct prom_answer *a, void *arg)
{
    struct gather *g = arg;

    if (a->pa_cancelled)
        g->g_cancelled = 1;
    if (a->pa_ok) {
        g->g_usage = a->pa_usage; /* take it */
        memset(&a->pa_usage, 0, sizeof(a->pa_usage));
        g->g_usage_ok = 1;
        gather_gpu_after_usage(g);
    } else {
        snprintf(g->g_usage_error, sizeof(g->g_usage_error), "%s",
                 a->pa_error ? a->pa_error : "prometheus: unavailable");
    }
    gather_answered(g);
}

static void
free_cb(struct prom_answer *a, void *arg)
{
    struct gather *g = arg;

    if (a->pa_cancelled)
        g->g_cancelled = 1;
    if (a->pa_ok) {
        g->g_free_ok = 1;
        g->g_free_mib = a->pa_value;
    } else {
        snprintf(g->g_free_error, sizeof(g->g_free_error), "FREE_QUERY: %s",
                 a->pa_error ? a->pa_error : "prometheus: unavailable");
    }
    gather_answered(g);
}

static void
device_cb(struct prom_answer *a, void *arg)
{
    struct gather *g = arg;
    int rc = 0;

    if (a->pa_cancelled)
        g->g_cancelled = 1;
    if (a->pa_ok && (rc = device_from_series(&a->pa_usage, &g->g_device)) == 0)
        g->g_device_ok = 1;
    else if (a->pa_ok && rc == DEVICE_TOO_MANY_GPUS)
        snprintf(g->g_device_error, sizeof(g->g_device_error),
                 "the device query (FREE_QUERY=auto) names more than %d GPUs on node %s, "
                 "which cannot be one node's reading",
                 USAGE_MAX_GPUS, g->g_node);
    else
        snprintf(g->g_device_error, sizeof(g->g_device_error),
                 "the device query (FREE_QUERY=auto): %s",
                 a->pa_ok              ? "out of memory"
                 : a->pa_error != NULL ? a->pa_error
                                       : "prometheus: unavailable");
    gather_answered(g);
}

/* FREE_QUERY=auto: the device's free/total per GPU, with $node replaced. */
static int
start_device(struct gather *g, struct prom *prom)
{
    char q[2048], err[256];
    char *qn;
    int rc;

    if (device_promql(g->g_cfg->c_gpu_label, q, sizeof(q)) == -1) {
        snprintf(
            g->g_device_error, sizeof(g->g_device_error),
            "the device query (FREE_QUERY=auto): GPU_LABEL \"%s\" is not a label name",
            g->g_cfg->c_gpu_label);
        return -1;
    }
    if ((qn = prom_substitute_node(q, g->g_node, err, sizeof(err))) == NULL) {
        snprintf(g->g_device_error, sizeof(g->g_device_error),
                 "cannot build the device query for node %s: %s", g->g_node, err);
        return -1;
    }
    rc = prom_query_device(prom, qn, g->g_cfg->c_gpu_label, device_cb, g);
    free(qn);
    if (rc == -1)
        snprintf(g->g_device_error, sizeof(g->g_device_error),
                 "the device query (FREE_QUERY=auto): the query could not be started");
    return rc;
}

static void
pods_cb(struct kube_answer *a, void *arg)
{
    struct gather *g = arg;

    if (a->ka_cancelled)
        g->g_cancelled = 1;
    if (a->ka_class == KUBE_OK) {
        g->g_pods = a->ka_pods; /* take it */
        memset(&a->ka_pods, 0, sizeof(a->ka_pods));
        g->g_pods_ok = 1;
    } else {
        snprintf(g->g_pods_error, sizeof(g->g_pods_error), "listing pods on %s: %s",
                 g->g_node, a->ka_error ? a->ka_error : "failed");
    }
    gather_answered(g);
}

/* Starts one query with $node substituted; 0 when its answer will come. */
static int
start_query(struct gather *g, struct prom *prom, const char *query, int is_free)
{
    char err[256];
    char *q = prom_substitute_node(query, g->g_node, err, sizeof(err));
    int rc;

    if (q == NULL) {
        snprintf(is_free ? g->g_free_error : g->g_usage_error, sizeof(g->g_usage_error),
                 "cannot build the query for node %s: %s", g->g_node, err);
        return -1;
    }
    if (is_free)
        rc = prom_query_scalar(prom, q, free_cb, g);
    else if (g->g_reread)
        rc = prom_query_usage_any(prom, q, g->g_cfg->c_namespace_label,
                                  g->g_cfg->c_pod_label, g->g_cfg->c_gpu_label, usage_cb,
                                  g);
    else
        rc = prom_query_usage_gpu(prom, q, g->g_cfg->c_namespace_label,
                                  g->g_cfg->c_pod_label, g->g_cfg->c_gpu_label, usage_cb,
                                  g);
    free(q);
    if (rc == -1)
        snprintf(is_free ? g->g_free_error : g->g_usage_error, sizeof(g->g_usage_error),
                 "prometheus: the query could not be started");
    return rc;
}

/* The loop turn after a start where nothing could be asked. */
static void
deferred_cb(evutil_socket_t fd, short what, void *arg)
{
    gather_answered(arg);
}

struct gather *
gather_start(struct event_base *base, const struct config *cfg, struct prom *prom,
             struct kube *kube, const char *node, const char *starving_ns,
             gather_done_fn cb, void *arg)
{
    return gather_start_gpu(base, cfg, prom, kube, node, NULL, starving_ns, cb, arg);
}

struct gather *
gather_start_gpu(struct event_base *base, const struct config *cfg, struct prom *prom,
                 struct kube *kube, const char *node, const char *gpu,
                 const char *starving_ns, gather_done_fn cb, void *arg)
{
    return open_gather(base, cfg, prom, kube, node, gpu, starving_ns, 0, cb, arg);
}

static int
cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct gather *
gather_start_gpus(struct event_base *base, const struct config *cfg, struct prom *prom,
                  struct kube *kube, const char *node, const char *const *gpus, size_t n,
                  const char *starving_ns, gather_done_fn cb, void *arg)
{
    char **subset;
    struct gather *g;
    size_t i, kept = 0;

    if (n == 1)
        return gather_start_gpu(base, cfg, prom, kube, node, gpus[0], starving_ns, cb,
                                arg);
    if (n == 0 || (subset = calloc(n, sizeof(*subset))) == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        if ((subset[i] = strdup(gpus[i])) == NULL)
            goto fail;
    qsort(subset, n, sizeof(*subset), cmp_name);
    for (i = 0; i < n; i++) {
        if (kept > 0 && strcmp(subset[kept - 1], subset[i]) == 0)
            free(subset[i]);
        else
            subset[kept++] = subset[i];
    }
    for (i = kept; i < n; i++)
        subset[i] = NULL;
    /* Answers come from the loop, never inside this call: set before any. */
    if ((g = open_gather(base, cfg, prom, kube, node, NULL, starving_ns, 0, cb, arg)) ==
        NULL)
        goto fail;
    g->g_subset = subset;
    g->g_subset_count = kept;
    return g;
fail:
    for (i = 0; i < n; i++)
        free(subset[i]);
    free(subset);
    return NULL;
}

struct gather *
gather_start_reread(struct event_base *base, const struct config *cfg, struct prom *prom,
                    const char *node, const char *gpu, gather_done_fn cb, void *arg)
{
    return open_gather(base, cfg, prom, NULL, node, gpu, NULL, 1, cb, arg);
}

static struct gather *
open_gather(struct event_base *base, const struct config *cfg, struct prom *prom,
            struct kube *kube, const char *node, const char *gpu, const char *starving_ns,
            int reread, gather_done_fn cb, void *arg)
{
    struct gather *g = calloc(1, sizeof(*g));
    struct pod_parse_opts po = {
        .po_resource = cfg->c_gpumem_resource,
        .po_protect_annotation = cfg->c_protect_annotation,
        .po_release_annotation = cfg->c_release_annotation,
        .po_dra_driver = cfg->c_dra_driver,
    };

    if (g == NULL)
        return NULL;
    g->g_cfg = cfg;
    g->g_cb = cb;
    g->g_arg = arg;
    g->g_refs = 1;
    g->g_prom = prom;
    g->g_reread = reread;
    g->g_want_device = strcmp(cfg->c_free_query, FREE_QUERY_AUTO) == 0;
    g->g_want_free = cfg->c_free_query[0] != '\0' && !g->g_want_device;
    /* A FREE_QUERY naming $gpu is asked per GPU, once the used series name them. */
    g->g_free_deferred = g->g_want_free && cfg->c_gpu_label[0] != '\0' &&
                         strstr(cfg->c_free_query, "$gpu") != NULL;
    if ((g->g_node = strdup(node)) == NULL ||
        (gpu != NULL && (g->g_gpu = strdup(gpu)) == NULL) ||
        (starving_ns != NULL && (g->g_starving_ns = strdup(starving_ns)) == NULL)) {
        gather_destroy(g);
        return NULL;
    }
    /* One extra count holds the gather open until every request is started,
     * so no answer can conclude it half-way. */
    g->g_pending = 1;
    if (!node_name_ok(node)) {
        /* Only a node name may reach a field selector or a query: "=gpu-1"
         * would list gpu-1's pods under another spelling. Nothing is asked. */
        char shown[NODE_NAME_SHOWN];
        g->g_bad_node = 1;
        snprintf(g->g_pods_error, sizeof(g->g_pods_error),
                 "%s is not a Kubernetes node name (a DNS-1123 subdomain of at most %d "
                 "characters); nothing was asked about it",
                 node_name_show(node, shown, sizeof(shown)), NODE_NAME_MAX);
        goto deferred;
    }
    if (start_query(g, prom, cfg->c_used_query, 0) == 0)
        g->g_pending++;
    if (g->g_want_free && !g->g_free_deferred &&
        start_query(g, prom, cfg->c_free_query, 1) == 0)
        g->g_pending++;
    if (g->g_want_device && start_device(g, prom) == 0)
        g->g_pending++;
    if (kube == NULL)
        snprintf(g->g_pods_error, sizeof(g->g_pods_error),
                 "no Kubernetes API server is configured (KUBE_API_URL, or run in a "
                 "cluster)");
    else if (kube_list_pods_sources(kube, node, &po, &cfg->c_budget_sources, pods_cb,
                                    g) == 0)
        g->g_pending++;
    else
        snprintf(g->g_pods_error, sizeof(g->g_pods_error),
                 "listing pods on %s: the request could not be started", node);
    if (g->g_pending > 1) {
        g->g_pending--; /* answers are still to come, from the loop */
        return g;
    }
deferred:
    /* Nothing was started: conclude from the loop, never inside this call. */
    if (event_base_once(base, -1, EV_TIMEOUT, deferred_cb, g, NULL) == -1) {
        gather_destroy(g);
        return NULL;
    }
    return g;
}

int
gather_reread(const struct gather_answer *gr, enum free_source decided, int64_t *free_mib,
              char *why, size_t whylen)
{
    const struct policy_answer *p = &gr->gr_policy;
    int known = (gr->gr_status == GATHER_DECIDED || gr->gr_status == GATHER_KUBE) &&
                p->pr_outcome != POLICY_SKIPPED_TELEMETRY && p->pr_free_known;

    why[0] = '\0';
    *free_mib = 0;
    if (!known)
        return 0;
    if (decided == FREE_SOURCE_DEVICE && p->pr_free_source != FREE_SOURCE_DEVICE) {
        snprintf(why, whylen,
                 "the device series of %s%s vanished after the decision (free would read "
                 "%lld MiB computed as GPU_TOTAL_MIB - used, which is not the device's "
                 "figure and is not counted)",
                 gr->gr_gpu != NULL ? "GPU " : "the node",
                 gr->gr_gpu != NULL ? gr->gr_gpu : "", (long long)p->pr_free_mib);
        return 0;
    }
    *free_mib = p->pr_free_mib;
    return 1;
}

/* --- GPU scope: FREE_QUERY per GPU, one answer per GPU ---------------------- */

/* A re-read of one GPU whose node has no used series left at all (its one
 * tenant gone) is still that GPU's: judged by its device figure alone. */
static int
scoped(const struct gather *g)
{
    return g->g_cfg->c_gpu_label[0] != '\0' &&
           (usage_gpu_scoped(&g->g_usage) ||
            (g->g_reread && g->g_gpu != NULL && g->g_usage.ur_count == 0));
}

/* Memory ran out between the answers: nothing is acted on. */
static void
give_up(struct gather *g)
{
    g->g_usage_ok = 0;
    snprintf(g->g_usage_error, sizeof(g->g_usage_error), "out of memory");
}

/* FREE_QUERY with $node and $gpu replaced ("" for a node in node scope). */
static void
start_free(struct gather *g, struct gather_gpu_free *gf, const char *gpu)
{
    char err[256];
    char *qn, *q = NULL;

    if ((qn = prom_substitute_node(g->g_cfg->c_free_query, g->g_node, err,
                                   sizeof(err))) != NULL)
        q = prom_substitute_gpu(qn, gpu, err, sizeof(err));
    free(qn);
    if (q == NULL) {
        snprintf(gf->gf_error, sizeof(gf->gf_error),
                 "FREE_QUERY: cannot build the query for node %s GPU %s: %s", g->g_node,
                 gpu, err);
        return;
    }
    if (prom_query_scalar(g->g_prom, q, gpu_free_cb, gf) == 0) {
        g->g_pending++;
        g->g_gfree_busy++;
    } else {
        snprintf(gf->gf_error, sizeof(gf->gf_error),
                 "FREE_QUERY: prometheus: the query could not be started");
    }
    free(q);
}

/* Asks the next GPUs' FREE_QUERY while fewer than MAX_CONCURRENT_DECISIONS
 * are in flight: a node's GPUs never flood Prometheus (2,000 GPUs once made
 * 1,506 queries at once). Called with an answer still held (g_pending), so the
 * gather cannot conclude in between. */
static void
start_free_more(struct gather *g)
{
    int64_t m = g->g_cfg->c_max_concurrent_decisions;
    size_t limit = m > 0 ? (size_t)m : 1, i;

    while (!g->g_cancelled && !g->g_dead && g->g_gfree_next < g->g_gfree_count &&
           g->g_gfree_busy < limit) {
        i = g->g_gfree_next++;
        start_free(g, &g->g_gfree[i], g->g_gpus != NULL ? g->g_gpus[i] : "");
    }
}

static void
gpu_free_cb(struct prom_answer *a, void *arg)
{
    struct gather_gpu_free *gf = arg;
    struct gather *g = gf->gf_g;

    g->g_gfree_busy--;
    if (a->pa_cancelled)
        g->g_cancelled = 1;
    if (a->pa_ok) {
        gf->gf_ok = 1;
        gf->gf_mib = a->pa_value;
    } else {
        snprintf(gf->gf_error, sizeof(gf->gf_error), "FREE_QUERY: %s",
                 a->pa_error ? a->pa_error : "prometheus: unavailable");
    }
    start_free_more(g);
    gather_answered(g);
}

/* SPEC "A decision": a reading naming more GPUs than a node holds, or a GPU
 * by a name longer than any, is no node's. 1 (the reading refused) or 0. */
static int
gpus_refused(struct gather *g, const char *const *gpus, size_t n)
{
    size_t i, len;

    if (n > USAGE_MAX_GPUS) {
        g->g_usage_ok = 0;
        snprintf(g->g_usage_error, sizeof(g->g_usage_error),
                 "the used series name %zu GPUs on node %s, more than the %d one node's "
                 "reading may name: it cannot be one node's, so no GPU is judged",
                 n, g->g_node, USAGE_MAX_GPUS);
        return 1;
    }
    for (i = 0; i < n; i++) {
        if ((len = strnlen(gpus[i], USAGE_GPU_NAME_MAX + 1)) <= USAGE_GPU_NAME_MAX)
            continue;
        g->g_usage_ok = 0;
        snprintf(
            g->g_usage_error, sizeof(g->g_usage_error),
            "the used series name a GPU (%.32s...) longer than any GPU's name (" USAGE_GPU_NAME_MAX_TEXT
            " bytes): the reading cannot be true",
            gpus[i]);
        return 1;
    }
    return 0;
}

static void
gather_gpu_after_usage(struct gather *g)
{
    size_t i, n;
    int gpus = scoped(g);

    if (gpus) {
        /* Every reading is counted, also one asked about a single GPU. */
        if (usage_gpus(&g->g_usage, &g->g_gpus, &g->g_gpu_count) == -1)
            return give_up(g);
        if (gpus_refused(g, g->g_gpus, g->g_gpu_count))
            return;
    }
    if (gpus && g->g_gpu != NULL) {
        free(g->g_gpus);
        if ((g->g_gpus = calloc(1, sizeof(*g->g_gpus))) == NULL) {
            g->g_gpu_count = 0;
            return give_up(g);
        }
        g->g_gpus[0] = g->g_gpu;
        g->g_gpu_count = 1;
    } else if (gpus && g->g_subset != NULL) {
        /* Only the GPUs asked for are judged (and asked FREE_QUERY). */
        free(g->g_gpus);
        if ((g->g_gpus = calloc(g->g_subset_count, sizeof(*g->g_gpus))) == NULL) {
            g->g_gpu_count = 0;
            return give_up(g);
        }
        for (i = 0; i < g->g_subset_count; i++)
            g->g_gpus[i] = g->g_subset[i];
        g->g_gpu_count = g->g_subset_count;
    }
    if (!g->g_want_free || (!gpus && !g->g_free_deferred))
        return;
    n = gpus ? g->g_gpu_count : 1;
    if ((g->g_gfree = calloc(n, sizeof(*g->g_gfree))) == NULL)
        return give_up(g);
    for (i = 0; i < n; i++)
        g->g_gfree[i].gf_g = g;
    g->g_gfree_count = n;
    start_free_more(g);
}

int
gather_answer_recovered(const struct gather_answer *u)
{
    return u->gr_status == GATHER_DECIDED &&
           u->gr_policy.pr_outcome == POLICY_SKIPPED_RECOVERED;
}

/* The node's own answer when every GPU was asked for: never a victim; says
 * whether any GPU needs a decision, and the least free VRAM seen. */
static void
summarise(struct gather *g, struct gather_answer *r, size_t below)
{
    struct policy_answer *p = &r->gr_policy;
    const struct gather_answer *least = NULL;
    size_t i;

    r->gr_status = GATHER_DECIDED;
    for (i = 0; i < r->gr_gpu_count; i++) {
        const struct gather_answer *u = &r->gr_gpus[i];
        if (u->gr_status == GATHER_DECIDED && u->gr_policy.pr_free_known &&
            (least == NULL || u->gr_policy.pr_free_mib < least->gr_policy.pr_free_mib))
            least = u;
    }
    p->pr_outcome = below > 0 ? POLICY_SKIPPED_NO_CANDIDATE : POLICY_SKIPPED_RECOVERED;
    p->pr_free_known = least != NULL;
    p->pr_free_mib = least != NULL ? least->gr_policy.pr_free_mib : 0;
    /* The row shows that GPU's figure: it says where the figure came from too. */
    p->pr_free_source =
        least != NULL ? least->gr_policy.pr_free_source : FREE_SOURCE_NONE;
    if (below > 0)
        snprintf(p->pr_reason, sizeof(p->pr_reason),
                 "%zu of %zu GPUs below the floor or unreadable", below, r->gr_gpu_count);
    else
        snprintf(p->pr_reason, sizeof(p->pr_reason),
                 "free >= floor %lld MiB on every GPU (%zu; the least free is %s at %lld "
                 "MiB); nothing to do",
                 (long long)g->g_cfg->c_floor_mib, r->gr_gpu_count,
                 least != NULL ? least->gr_gpu : "?", (long long)p->pr_free_mib);
    /* SPEC "Free VRAM": a computed fallback figure says so, and why. */
    if (below == 0 && least != NULL) {
        snprintf(p->pr_free_note, sizeof(p->pr_free_note), "%s",
                 least->gr_policy.pr_free_note);
        snprintf(p->pr_reason + strlen(p->pr_reason),
                 sizeof(p->pr_reason) - strlen(p->pr_reason), "%s", p->pr_free_note);
    }
}

static void
gather_gpu_conclude(struct gather *g)
{
    struct gather_answer *r = &g->g_answer;
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
        below += !gather_answer_recovered(&r->gr_gpus[i]);
    }
    summarise(g, r, below);
}

static void
gather_gpu_free_units(struct gather *g)
{
    struct gather_answer *r = &g->g_answer;

    for (size_t i = 0; i < r->gr_gpu_count; i++)
        policy_answer_free(&r->gr_gpus[i].gr_policy);
    free(r->gr_gpus);
    r->gr_gpus = NULL;
    r->gr_gpu_count = 0;
    free(g->g_gfree);
    free(g->g_gpus);
}
