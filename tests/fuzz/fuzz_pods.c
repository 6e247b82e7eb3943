/* fuzz_pods.c -- libFuzzer target: Kubernetes PodLists, then the decision on them */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "pods_json.h"
#include "policy.h"

#define RES "viktorbarzin.me/gpumem"
#define PROTECT "gpu-vram-watchdog/protected"
#define MIB 1048576.0
/* 2026-06-03T00:00:00Z: after the start times in tests/data. */
#define NOW 1780444800

static const struct pod_parse_opts opts = {RES,  PROTECT, "gpu-vram-watchdog/release",
                                           NULL, NULL,    0};

/* FNV-1a: everything synthetic below is a function of the input, so a crash
 * file reproduces exactly. */
static uint64_t
hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;

    while (n-- > 0)
        h = (h ^ *s++) * 1099511628211u;
    return h;
}

static uint64_t
hash_str(const char *s, uint64_t h)
{
    return s != NULL ? hash(s, strlen(s), h) : h;
}

static char *
xstrdup(const char *s)
{
    char *d = s != NULL ? strdup(s) : NULL;

    if (s != NULL && d == NULL)
        abort(); /* the fuzzer's malloc limit, not a finding */
    return d;
}

static void
add_series(struct usage_reading *r, const char *ns, const char *pod, double bytes)
{
    struct usage_series *s = &r->ur_series[r->ur_count++];

    s->us_namespace = xstrdup(ns);
    s->us_pod = xstrdup(pod);
    s->us_bytes = bytes;
}

/*
 * A reading for the pods: per pod, from a hash of its name, no series, one
 * just over its budget, exactly at it, under it, or two series; then a pod
 * that is not on the list and a host process. *sum_mib is what it adds up to.
 */
static void
synth_usage(const struct pod_list *l, uint64_t seed, struct usage_reading *r,
            double *sum_mib)
{
    size_t i;
    double used, budget;
    uint64_t h;

    r->ur_count = 0;
    r->ur_pool = NULL; /* its strings are strdup'd one by one (add_series) */
    r->ur_label_sets = NULL;
    r->ur_series = calloc(2 * l->pl_count + 2, sizeof(*r->ur_series));
    if (r->ur_series == NULL)
        abort();
    *sum_mib = 0;
    for (i = 0; i < l->pl_count; i++) {
        const struct pod *p = &l->pl_pods[i];
        h = hash_str(p->p_name, hash_str(p->p_namespace, seed));
        budget = p->p_budget_state == BUDGET_OK ? (double)p->p_budget_mib : 2048;
        switch (h % 6) {
        case 0:
            continue;
        case 1:
            used = budget * MIB + 1 + (double)(h >> 40); /* over, by a little */
            break;
        case 2:
            used = budget * MIB; /* exactly the budget: within */
            break;
        case 3:
            used = budget > 0 ? (budget - 1) * MIB : 0;
            break;
        case 4:
            used =
                budget * MIB + (double)((h >> 8) % 8192) * MIB; /* over, by up to 8 GiB */
            break;
        default:
            /* Two series for one pod (two processes): summed. */
            add_series(r, p->p_namespace, p->p_name, budget * MIB / 2);
            used = budget * MIB / 2 + (double)((h >> 16) % 4096) * MIB;
            break;
        }
        add_series(r, p->p_namespace, p->p_name, used);
        *sum_mib += used / MIB + (h % 6 == 5 ? budget / 2 : 0);
    }
    if (seed & 1) {
        add_series(r, "ghost", "not-listed", 512 * MIB);
        *sum_mib += 512;
    }
    if (seed & 2) {
        add_series(r, NULL, NULL, 300 * MIB); /* a host process */
        *sum_mib += 300;
    }
}

static int
excluded(const struct policy_params *pp, const char *ns)
{
    size_t i;

    for (i = 0; i < pp->pp_exclude_count; i++)
        if (strcmp(pp->pp_exclude_namespaces[i], ns) == 0)
            return 1;
    return 0;
}

/* What policy.h promises about any result. */
static void
check_result(const struct policy_params *pp, const struct policy_input *in,
             const struct policy_answer *res)
{
    const struct policy_candidate *c;
    size_t i;
    double best = 0;

    FUZZ_CHECK(memchr(res->pr_reason, '\0', sizeof(res->pr_reason)) != NULL &&
                   res->pr_reason[0] != '\0',
               "reason missing or unterminated");
    if (res->pr_outcome == POLICY_SKIPPED_TELEMETRY) {
        FUZZ_CHECK(res->pr_candidate_count == 0 && res->pr_candidates == NULL &&
                       res->pr_ranked_count == 0,
                   "telemetry skip with candidates");
        return;
    }
    FUZZ_CHECK(res->pr_outcome == POLICY_VICTIM ||
                   res->pr_outcome == POLICY_SKIPPED_RECOVERED ||
                   res->pr_outcome == POLICY_SKIPPED_NO_CANDIDATE,
               "outcome %d", (int)res->pr_outcome);
    FUZZ_CHECK(res->pr_free_known, "free unknown without a telemetry skip");
    FUZZ_CHECK(res->pr_candidate_count >= in->pi_pods->pl_count,
               "%zu candidates for %zu pods", res->pr_candidate_count,
               in->pi_pods->pl_count);
    FUZZ_CHECK((res->pr_outcome == POLICY_VICTIM) == (res->pr_ranked_count > 0),
               "%s with %zu ranked",
               decision_result_name(policy_outcome_result(res->pr_outcome)),
               res->pr_ranked_count);
    FUZZ_CHECK(res->pr_ranked_count <= res->pr_candidate_count, "ranked past the end");
    if (res->pr_outcome == POLICY_SKIPPED_RECOVERED)
        FUZZ_CHECK(res->pr_free_mib >= pp->pp_floor_mib, "recovered below the floor");
    for (i = 0; i < res->pr_candidate_count; i++) {
        c = &res->pr_candidates[i];
        FUZZ_CHECK(c->pc_namespace != NULL && c->pc_name != NULL, "candidate %zu unnamed",
                   i);
        FUZZ_CHECK(c->pc_eligible == (c->pc_why_not == NULL),
                   "candidate %zu: eligible %d but why_not %s", i, c->pc_eligible,
                   c->pc_why_not != NULL ? c->pc_why_not : "NULL");
        if (res->pr_outcome != POLICY_VICTIM)
            continue;
        FUZZ_CHECK(c->pc_eligible == (i < res->pr_ranked_count),
                   "candidate %zu eligible %d with %zu ranked", i, c->pc_eligible,
                   res->pr_ranked_count);
        if (!c->pc_eligible)
            continue;
        /* Every victim passes every rule but (for the fallback) the budget. */
        FUZZ_CHECK(c->pc_pod != NULL, "victim %zu is not on the node", i);
        FUZZ_CHECK(c->pc_pod->p_running && !c->pc_pod->p_terminating &&
                       !c->pc_pod->p_mirror && c->pc_pod->p_has_controller &&
                       !c->pc_pod->p_protected,
                   "victim %zu %s/%s breaks a pod rule", i, c->pc_namespace, c->pc_name);
        FUZZ_CHECK(!excluded(pp, c->pc_namespace) &&
                       (pp->pp_starving_namespace == NULL ||
                        strcmp(pp->pp_starving_namespace, c->pc_namespace) != 0),
                   "victim %zu in a protected namespace %s", i, c->pc_namespace);
        FUZZ_CHECK(c->pc_pod->p_started > 0 &&
                       pp->pp_now - c->pc_pod->p_started >= pp->pp_min_runtime_s,
                   "victim %zu too young", i);
        if (res->pr_fallback) {
            FUZZ_CHECK(c->pc_used_bytes > 0, "fallback victim %zu holds nothing", i);
            FUZZ_CHECK(i == 0 ||
                           c->pc_used_bytes <= res->pr_candidates[i - 1].pc_used_bytes,
                       "fallback victims not largest first at %zu", i);
            continue;
        }
        FUZZ_CHECK(c->pc_has_budget && c->pc_used_bytes > (double)c->pc_budget_mib * MIB,
                   "victim %zu %s/%s is within its budget", i, c->pc_namespace,
                   c->pc_name);
        if (i == 0)
            best = c->pc_used_bytes - (double)c->pc_budget_mib * MIB;
        FUZZ_CHECK(c->pc_used_bytes - (double)c->pc_budget_mib * MIB <= best,
                   "victim %zu overshoots more than the first", i);
    }
}

/* Two pods naming the same pod: the order of the list may then pick either. */
static int
has_duplicates(const struct pod_list *l)
{
    size_t i, j;

    for (i = 0; i < l->pl_count && i < 64; i++)
        for (j = i + 1; j < l->pl_count; j++)
            if (strcmp(l->pl_pods[i].p_namespace, l->pl_pods[j].p_namespace) == 0 &&
                strcmp(l->pl_pods[i].p_name, l->pl_pods[j].p_name) == 0 &&
                strcmp(l->pl_pods[i].p_uid, l->pl_pods[j].p_uid) == 0)
                return 1;
    return l->pl_count > 64; /* quadratic beyond that; not worth the time */
}

/* "the order of pods and series in the input never changes the result" */
static void
check_order(const struct policy_params *pp, const struct policy_input *in,
            const struct policy_answer *res)
{
    struct pod_list rl;
    struct usage_reading ru;
    struct policy_input rin = *in;
    struct policy_answer rres;
    size_t i, n = in->pi_pods->pl_count, m = in->pi_usage->ur_count;

    if (has_duplicates(in->pi_pods))
        return;
    /* Shallow reversed copies: the strings stay owned by the originals. */
    rl.pl_count = n;
    rl.pl_pool = NULL;
    rl.pl_pods = n > 0 ? malloc(n * sizeof(*rl.pl_pods)) : NULL;
    ru.ur_count = m;
    ru.ur_pool = NULL;
    ru.ur_label_sets = NULL;
    ru.ur_series = m > 0 ? malloc(m * sizeof(*ru.ur_series)) : NULL;
    if ((n > 0 && rl.pl_pods == NULL) || (m > 0 && ru.ur_series == NULL))
        abort();
    for (i = 0; i < n; i++)
        rl.pl_pods[i] = in->pi_pods->pl_pods[n - 1 - i];
    for (i = 0; i < m; i++)
        ru.ur_series[i] = in->pi_usage->ur_series[m - 1 - i];
    rin.pi_pods = &rl;
    rin.pi_usage = &ru;
    policy_decide(pp, &rin, &rres);
    FUZZ_CHECK(rres.pr_outcome == res->pr_outcome &&
                   rres.pr_ranked_count == res->pr_ranked_count &&
                   rres.pr_candidate_count == res->pr_candidate_count &&
                   strcmp(rres.pr_reason, res->pr_reason) == 0,
               "reversed input decided otherwise:\n  %s\n  %s", res->pr_reason,
               rres.pr_reason);
    for (i = 0; i < res->pr_ranked_count; i++)
        FUZZ_CHECK(
            strcmp(rres.pr_candidates[i].pc_namespace,
                   res->pr_candidates[i].pc_namespace) == 0 &&
                strcmp(rres.pr_candidates[i].pc_name, res->pr_candidates[i].pc_name) == 0,
            "reversed input ranks %s/%s where %s/%s was",
            rres.pr_candidates[i].pc_namespace, rres.pr_candidates[i].pc_name,
            res->pr_candidates[i].pc_namespace, res->pr_candidates[i].pc_name);
    policy_answer_free(&rres);
    free(rl.pl_pods);
    free(ru.ur_series);
}

static void
decide(const struct pod_list *l, uint64_t seed)
{
    static const char *const ex_default[] = {"kube-system"};
    const char *ex[2] = {"kube-system", NULL};
    struct usage_reading r;
    struct policy_params pp;
    struct policy_input in;
    struct device_gpu dg; /* FREE_QUERY=auto: the device figure, on some seeds */
    struct device_reading dev;
    struct policy_answer res;
    double sum_mib;

    synth_usage(l, seed, &r, &sum_mib);
    memset(&pp, 0, sizeof(pp));
    pp.pp_floor_mib = 1536;
    pp.pp_min_runtime_s = 120;
    pp.pp_now = NOW;
    pp.pp_fallback_largest = (seed >> 2) & 1;
    pp.pp_exclude_namespaces = ex_default;
    pp.pp_exclude_count = 1;
    if (l->pl_count > 0 && (seed >> 3) & 1) {
        ex[1] = l->pl_pods[0].p_namespace;
        pp.pp_exclude_namespaces = ex;
        pp.pp_exclude_count = 2;
    }
    if (l->pl_count > 1 && (seed >> 4) & 1)
        pp.pp_starving_namespace = l->pl_pods[1].p_namespace;
    /* A card just big enough to be short of VRAM, or one with room to spare,
     * or the default (too small for a large reading: a telemetry skip). */
    switch ((seed >> 5) % 3) {
    case 0:
        pp.pp_total_mib = sum_mib < 4e18 ? (int64_t)ceil(sum_mib) + 100 : INT64_MAX / 2;
        break;
    case 1:
        pp.pp_total_mib =
            sum_mib < 4e18 ? (int64_t)ceil(sum_mib) + 100000 : INT64_MAX / 2;
        break;
    default:
        pp.pp_total_mib = 15360;
        break;
    }
    memset(&in, 0, sizeof(in));
    memset(&dg, 0, sizeof(dg));
    memset(&dev, 0, sizeof(dev));
    in.pi_pods = l;
    in.pi_usage = &r;
    if ((seed >> 7) % 4 == 0) {
        in.pi_have_free = 1;
        in.pi_free_mib = (seed >> 9) % 5 == 0 ? NAN : (double)((seed >> 12) % 4096);
    } else if ((seed >> 7) % 4 == 1) {
        /* FREE_QUERY=auto: the device's own figures for the node's one GPU,
         * sometimes impossible (free above total, NaN), sometimes stale. */
        dg.dg_gpu = "";
        dg.dg_have_free = dg.dg_have_total = dg.dg_have_ts = 1;
        dg.dg_total_bytes = (double)pp.pp_total_mib * 1048576.0;
        dg.dg_free_bytes = (seed >> 9) % 7 == 0 ? NAN
                           : (seed >> 9) % 7 == 1
                               ? dg.dg_total_bytes * 2
                               : (double)((seed >> 12) % 4096) * 1048576.0;
        dg.dg_ts = 100;
        dg.dg_have_used_ts = (seed >> 10) % 5 == 0;
        dg.dg_used_ts = 101; /* the device series older than the pods': stale */
        dev.dr_gpus = &dg;
        dev.dr_count = 1;
        in.pi_device = &dev;
    }

    policy_decide(&pp, &in, &res);
    check_result(&pp, &in, &res);
    check_order(&pp, &in, &res);
    policy_answer_free(&res);
    FUZZ_CHECK(res.pr_candidates == NULL && res.pr_candidate_count == 0,
               "policy_answer_free left state");
    usage_reading_free(&r);
}

/* The same body with every budget source (BUDGET_SOURCES=hami,kai,dra,resource):
 * what a pod declares to HAMi or KAI never makes a budget without a reason. The
 * claims the body names are "read" as the body itself (every other one
 * refused), so the ResourceClaim reader and the DRA judge see the input too. */
static void
every_source(const char *data, size_t size)
{
    static const struct bsrc_order all = {{BSRC_HAMI, BSRC_KAI, BSRC_DRA, BSRC_RESOURCE},
                                          4};
    struct pod_parse_opts o = opts;
    struct dra_claims claims;
    struct pod_list l;
    char err[512];

    if (claim_json_refs(data, size, &claims) == -1)
        abort(); /* the fuzzer's malloc limit, not a finding */
    for (size_t i = 0; i < claims.dl_count; i++) {
        struct dra_claim *c = &claims.dl_items[i];
        if (i % 2 == 1 ||
            claim_json_parse(data, size, "gpu.nvidia.com", c, err, sizeof(err)) == -1) {
            FUZZ_CHECK(!c->dc_fetched, "claims[%zu]: a failed read left it fetched", i);
            c->dc_error = xstrdup("refused");
        }
    }
    o.po_claims = &claims;
    if (pods_json_parse_sources(data, size, &o, &all, &l, err, sizeof(err)) == -1) {
        FUZZ_CHECK_REASON(err, sizeof(err));
        dra_claims_free(&claims);
        return;
    }
    policy_resolve_budgets(&l, NULL, NULL);
    for (size_t i = 0; i < l.pl_count; i++) {
        const struct pod *p = &l.pl_pods[i];
        FUZZ_CHECK(p->p_budget_state == BUDGET_NONE || p->p_budget_source != NULL,
                   "items[%zu]: a budget from no source", i);
        FUZZ_CHECK(p->p_budget_state != BUDGET_OK || p->p_budget_mib >= 0,
                   "items[%zu]: budget %lld", i, (long long)p->p_budget_mib);
        FUZZ_CHECK(p->p_budget_state != BUDGET_BAD ||
                       (p->p_budget_error != NULL && p->p_budget_error[0] != '\0'),
                   "items[%zu]: bad budget without a reason", i);
        FUZZ_CHECK(p->p_budget_gpus == 0 || p->p_budget_state == BUDGET_BAD,
                   "items[%zu]: a share of the GPU judged without its total", i);
    }
    pod_list_free(&l);
    dra_claims_free(&claims);
}

/* The one reader as the exporter (POD_STRICT, containers and mirror UIDs) and as
 * `budgets --suggest` (owners, declarations, finished pods) asks it: a list either
 * reader keeps is whole, and each pod the decision also keeps has the decision's
 * budget in both. */
static void
every_reading(const char *data, size_t size)
{
    static const struct bsrc_order all = {{BSRC_KAI, BSRC_HAMI, BSRC_RESOURCE}, 3};
    static const unsigned keeps[] = {POD_KEEP_IDS | POD_KEEP_RESERVED | POD_LEAN |
                                         POD_STRICT,
                                     POD_KEEP_WORKLOAD | POD_KEEP_FINISHED};
    struct pod_parse_opts o = {.po_resource = RES, .po_protect_annotation = PROTECT};
    struct pod_list dec, l;
    char err[512];
    int have_dec;

    have_dec = pods_json_parse_sources(data, size, &o, &all, &dec, err, sizeof(err)) == 0;
    for (size_t k = 0; k < 2; k++) {
        size_t j = 0;
        o.po_keep = keeps[k];
        err[0] = '\0';
        if (pods_json_parse_sources(data, size, &o, &all, &l, err, sizeof(err)) == -1) {
            FUZZ_CHECK_REASON(err, sizeof(err));
            FUZZ_CHECK(l.pl_pods == NULL && l.pl_count == 0 && l.pl_containers == NULL &&
                           l.pl_decls == NULL,
                       "keep %#x: a failed parse kept pods", keeps[k]);
            /* --suggest reads as the decision does: it refuses no list the
             * decision keeps (but for memory or its bounds) */
            FUZZ_CHECK(k == 0 || !have_dec || strstr(err, "out of memory") != NULL ||
                           strstr(err, POD_LIST_TOO_LARGE) != NULL,
                       "--suggest refused a list the decision keeps: %s", err);
            continue;
        }
        for (size_t i = 0; i < l.pl_count; i++) {
            const struct pod *p = &l.pl_pods[i], *d = NULL;
            FUZZ_CHECK(p->p_uid != NULL && p->p_uid[0] != '\0' && p->p_name != NULL &&
                           p->p_namespace != NULL,
                       "keep %#x: items[%zu]: a required name left empty", keeps[k], i);
            for (size_t c = 0; c < p->p_container_count; c++)
                FUZZ_CHECK(p->p_containers[c].pk_id != NULL &&
                               p->p_containers[c].pk_name != NULL,
                           "items[%zu]: container %zu half kept", i, c);
            for (size_t c = 0; c < p->p_decl_count; c++)
                FUZZ_CHECK(p->p_decls[c].pd_name != NULL && p->p_decls[c].pd_mib >= -1 &&
                               p->p_decls[c].pd_gpus >= 0,
                           "items[%zu]: declaration %zu", i, c);
            FUZZ_CHECK(p->p_kai_devices >= 1 && p->p_kai_devices <= 1024,
                       "items[%zu]: %lld devices", i, (long long)p->p_kai_devices);
            FUZZ_CHECK(l.pl_budgets_error == NULL || p->p_budget_state == BUDGET_NONE,
                       "items[%zu]: a budget though the budgets were refused", i);
            /* The decision's pods, in order, are those neither finished nor a
             * reservation pod. */
            if (!have_dec || p->p_finished || p->p_reservation)
                continue;
            FUZZ_CHECK(j < dec.pl_count &&
                           strcmp((d = &dec.pl_pods[j++])->p_uid, p->p_uid) == 0,
                       "keep %#x: items[%zu]: not the decision's pod", keeps[k], i);
            if (l.pl_budgets_error != NULL)
                continue;
            FUZZ_CHECK(d->p_budget_state == p->p_budget_state &&
                           d->p_budget_mib == p->p_budget_mib &&
                           d->p_budget_gpus == p->p_budget_gpus &&
                           d->p_budget_source == p->p_budget_source,
                       "keep %#x: items[%zu]: another budget than the decision's",
                       keeps[k], i);
        }
        FUZZ_CHECK(!have_dec || j == dec.pl_count,
                   "keep %#x: %zu of the decision's %zu pods", keeps[k], j, dec.pl_count);
        pod_list_free(&l);
    }
    if (have_dec)
        pod_list_free(&dec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pod_list l;
    char err[512];
    size_t i;

    err[0] = '\0';
    if (pods_json_parse((const char *)data, size, &opts, &l, err, sizeof(err)) == -1) {
        FUZZ_CHECK_REASON(err, sizeof(err));
        FUZZ_CHECK(l.pl_pods == NULL && l.pl_count == 0, "a failed parse kept pods");
        return 0;
    }
    for (i = 0; i < l.pl_count; i++) {
        const struct pod *p = &l.pl_pods[i];
        FUZZ_CHECK(p->p_namespace != NULL && p->p_namespace[0] != '\0' &&
                       p->p_name != NULL && p->p_name[0] != '\0' && p->p_uid != NULL &&
                       p->p_uid[0] != '\0',
                   "items[%zu]: a required name left empty", i);
        FUZZ_CHECK(p->p_started >= 0, "items[%zu]: start time %lld", i,
                   (long long)p->p_started);
        switch (p->p_budget_state) {
        case BUDGET_NONE:
            FUZZ_CHECK(p->p_budget_error == NULL, "items[%zu]: no budget, an error", i);
            break;
        case BUDGET_OK:
            FUZZ_CHECK(p->p_budget_mib >= 0 && p->p_budget_error == NULL,
                       "items[%zu]: budget %lld", i, (long long)p->p_budget_mib);
            break;
        case BUDGET_BAD:
            FUZZ_CHECK(p->p_budget_error != NULL && p->p_budget_error[0] != '\0',
                       "items[%zu]: bad budget without a reason", i);
            break;
        default:
            FUZZ_CHECK(0, "items[%zu]: budget state %d", i, (int)p->p_budget_state);
        }
    }
    decide(&l, hash(data, size, 14695981039346656037u));
    pod_list_free(&l);
    FUZZ_CHECK(l.pl_pods == NULL && l.pl_count == 0, "pod_list_free left state");
    every_source((const char *)data, size);
    every_reading((const char *)data, size);
    return 0;
}
