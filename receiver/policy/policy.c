/* policy.c -- the decision core: who may be recycled, in which order, and why */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* The why_not values (SPEC candidates[].why_not); pointers compared by identity. */
static const char WHY_NOT_ON_NODE[] = "not_on_node";
static const char WHY_NOT_RUNNING[] = "not_running";
static const char WHY_TERMINATING[] = "terminating";
static const char WHY_MIRROR[] = "mirror_pod";
static const char WHY_NO_CONTROLLER[] = "no_controller";
static const char WHY_EXCLUDED[] = "excluded_namespace";
static const char WHY_STARVING[] = "starving_namespace";
static const char WHY_PROTECTED[] = "protected";
static const char WHY_TOO_YOUNG[] = "too_young";
static const char WHY_NO_BUDGET[] = "no_budget";
static const char WHY_BAD_BUDGET[] = "bad_budget";
static const char WHY_WITHIN[] = "within_budget";

/* In check order, for the tally in a no-candidate reason. */
static const char *const why_order[] = {
    WHY_NOT_ON_NODE,   WHY_NOT_RUNNING, WHY_TERMINATING, WHY_MIRROR,
    WHY_NO_CONTROLLER, WHY_EXCLUDED,    WHY_STARVING,    WHY_PROTECTED,
    WHY_TOO_YOUNG,     WHY_NO_BUDGET,   WHY_BAD_BUDGET,  WHY_WITHIN,
};

void
policy_answer_free(struct policy_answer *res)
{
    size_t i;

    if (res == NULL)
        return;
    for (i = 0; i < res->pr_candidate_count; i++) {
        free(res->pr_candidates[i].pc_namespace);
        free(res->pr_candidates[i].pc_name);
    }
    free(res->pr_candidates);
    memset(res, 0, sizeof(*res));
}

enum decision_result
policy_outcome_result(enum policy_outcome o)
{
    switch (o) {
    case POLICY_SKIPPED_RECOVERED:
        return RESULT_SKIPPED_RECOVERED;
    case POLICY_SKIPPED_NO_CANDIDATE:
        return RESULT_SKIPPED_NO_CANDIDATE;
    case POLICY_SKIPPED_TELEMETRY:
        return RESULT_SKIPPED_TELEMETRY;
    case POLICY_VICTIM:
        return RESULT_WOULD_RECYCLE;
    }
    return RESULT_FAILED; /* can't happen */
}

static int
excluded(const struct policy_params *pp, const char *ns)
{
    size_t i;

    for (i = 0; i < pp->pp_exclude_count; i++)
        if (pp->pp_exclude_namespaces[i] != NULL &&
            strcmp(pp->pp_exclude_namespaces[i], ns) == 0)
            return 1;
    return 0;
}

/* The first rule c fails (order in policy.h), or NULL when it may be a victim. */
static const char *
why_not(const struct policy_candidate *c, const struct policy_params *pp)
{
    const struct pod *p = c->pc_pod;

    if (p == NULL)
        return WHY_NOT_ON_NODE;
    if (!p->p_running)
        return WHY_NOT_RUNNING;
    if (p->p_terminating)
        return WHY_TERMINATING;
    if (p->p_mirror)
        return WHY_MIRROR;
    if (!p->p_has_controller)
        return WHY_NO_CONTROLLER;
    if (excluded(pp, c->pc_namespace))
        return WHY_EXCLUDED;
    if (pp->pp_starving_namespace != NULL && pp->pp_starving_namespace[0] != '\0' &&
        strcmp(pp->pp_starving_namespace, c->pc_namespace) == 0)
        return WHY_STARVING;
    if (p->p_protected)
        return WHY_PROTECTED;
    /* Never act on an unknown or future start time. Both are positive here, so
     * the subtraction cannot overflow. */
    if (p->p_started <= 0 || p->p_started > pp->pp_now ||
        pp->pp_now - p->p_started < pp->pp_min_runtime_s)
        return WHY_TOO_YOUNG;
    if (p->p_budget_state == BUDGET_NONE)
        return WHY_NO_BUDGET;
    if (!c->pc_has_budget)
        return WHY_BAD_BUDGET;
    if (c->pc_used_bytes <= (double)c->pc_budget_mib * MIB)
        return WHY_WITHIN;
    return NULL;
}

/* Fills c's budget fields from its pod and its use, then whether it is eligible. */
static void
judge(struct policy_candidate *c, const struct policy_params *pp)
{
    const struct pod *p = c->pc_pod;

    if (p != NULL && p->p_budget_state == BUDGET_OK && p->p_budget_mib >= 0) {
        c->pc_has_budget = 1;
        c->pc_budget_mib = p->p_budget_mib;
        c->pc_overshoot_mib = c->pc_used_mib - p->p_budget_mib;
    }
    c->pc_why_not = why_not(c, pp);
    c->pc_eligible = c->pc_why_not == NULL;
}

const char *
policy_why_not_pod(const struct policy_params *pp, const struct pod *p, double used_bytes)
{
    struct policy_candidate c = {
        .pc_pod = p,
        .pc_namespace = p->p_namespace != NULL ? p->p_namespace : "",
        .pc_name = p->p_name != NULL ? p->p_name : "",
        .pc_used_bytes = used_bytes,
    };

    judge(&c, pp);
    return c.pc_why_not;
}

/* Index of ns/pod in the summary (sorted by namespace, then pod), or -1. */
static long
find_usage(const struct usage_summary *s, const char *ns, const char *pod)
{
    size_t lo = 0, hi = s->us_count, mid;
    int c;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(s->us_pods[mid].pu_namespace, ns);
        if (c == 0)
            c = strcmp(s->us_pods[mid].pu_pod, pod);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Adds one candidate; names are copied so the answer outlives nothing it
 * does not have to. Returns -1 when out of memory. */
static int
add_candidate(struct policy_answer *res, const struct pod *p, const char *ns,
              const char *name, const struct pod_usage *u, const struct policy_params *pp)
{
    struct policy_candidate *c = &res->pr_candidates[res->pr_candidate_count++];

    c->pc_pod = p;
    if ((c->pc_namespace = strdup(ns)) == NULL || (c->pc_name = strdup(name)) == NULL)
        return -1;
    c->pc_used_bytes = u != NULL ? u->pu_bytes : 0;
    c->pc_used_mib = usage_bytes_to_mib(c->pc_used_bytes);
    c->pc_gpu_used_bytes = u != NULL ? u->pu_gpu_bytes : 0;
    c->pc_gpu_used_mib = usage_bytes_to_mib(c->pc_gpu_used_bytes);
    judge(c, pp);
    return 0;
}

/* --- a node prepared once for its GPUs ----------------------------------- */

struct policy_prep {
    struct usage_limits pr_lim;    /* what pr_ix judges each GPU against */
    struct usage_index *pr_ix;     /* owned: the used series, indexed */
    const struct pod **pr_by_name; /* owned array of borrowed pods, by (namespace,
                                      name): a GPU's users find their pods here */
    size_t pr_npods;
};

static const char *
or_empty(const char *s)
{
    return s != NULL ? s : "";
}

static int
cmp_pod_name(const void *a, const void *b)
{
    const struct pod *x = *(const struct pod *const *)a,
                     *y = *(const struct pod *const *)b;
    int c = strcmp(or_empty(x->p_namespace), or_empty(y->p_namespace));

    return c != 0 ? c : strcmp(or_empty(x->p_name), or_empty(y->p_name));
}

struct policy_prep *
policy_prepare(const struct policy_params *pp, const struct policy_input *in)
{
    struct policy_prep *p = calloc(1, sizeof(*p));
    size_t i, n = in->pi_pods != NULL ? in->pi_pods->pl_count : 0;

    if (p == NULL)
        return NULL;
    p->pr_lim = (struct usage_limits){pp->pp_total_mib, device_total, in->pi_device};
    if ((p->pr_ix = usage_index_new(in->pi_usage, &p->pr_lim)) == NULL ||
        (n > 0 && (p->pr_by_name = calloc(n, sizeof(*p->pr_by_name))) == NULL)) {
        policy_prep_free(p);
        return NULL;
    }
    for (i = 0; i < n; i++)
        p->pr_by_name[i] = &in->pi_pods->pl_pods[i];
    p->pr_npods = n;
    if (n > 1)
        qsort(p->pr_by_name, n, sizeof(*p->pr_by_name), cmp_pod_name);
    return p;
}

void
policy_prep_free(struct policy_prep *p)
{
    if (p == NULL)
        return;
    usage_index_free(p->pr_ix);
    free(p->pr_by_name);
    free(p);
}

/* The prepared pods named ns/name: *first (index into pr_by_name) and how many. */
static size_t
named(const struct policy_prep *p, const char *ns, const char *name, size_t *first)
{
    size_t lo = 0, hi = p->pr_npods, mid, n;
    int c;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(or_empty(p->pr_by_name[mid]->p_namespace), ns);
        if (c == 0)
            c = strcmp(or_empty(p->pr_by_name[mid]->p_name), name);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (n = 0; lo + n < p->pr_npods &&
                strcmp(or_empty(p->pr_by_name[lo + n]->p_namespace), ns) == 0 &&
                strcmp(or_empty(p->pr_by_name[lo + n]->p_name), name) == 0;
         n++)
        ;
    *first = lo;
    return n;
}

/* GPU scope: the GPU's users (the summary), each with every listed pod of its
 * name, or alone when none is listed. Costs the users, not the node's pods. */
static int
build_gpu_candidates(const struct policy_params *pp, const struct policy_prep *prep,
                     const struct usage_summary *sum, struct policy_answer *res)
{
    size_t i, k, n, first, total = 0;

    for (i = 0; i < sum->us_count; i++) {
        n = named(prep, sum->us_pods[i].pu_namespace, sum->us_pods[i].pu_pod, &first);
        total += n > 0 ? n : 1;
    }
    if (total == 0)
        return 0;
    if ((res->pr_candidates = calloc(total, sizeof(*res->pr_candidates))) == NULL)
        return -1;
    for (i = 0; i < sum->us_count; i++) {
        const struct pod_usage *pu = &sum->us_pods[i];
        n = named(prep, pu->pu_namespace, pu->pu_pod, &first);
        for (k = first; k < first + n; k++)
            if (add_candidate(res, prep->pr_by_name[k], pu->pu_namespace, pu->pu_pod, pu,
                              pp) == -1)
                return -1;
        if (n == 0 &&
            add_candidate(res, NULL, pu->pu_namespace, pu->pu_pod, pu, pp) == -1)
            return -1;
    }
    return 0;
}

/* Node scope: every listed pod, then every pod seen only in the usage. */
static int
build_candidates(const struct policy_params *pp, const struct pod_list *pods,
                 const struct usage_summary *sum, struct policy_answer *res)
{
    unsigned char *matched = NULL;
    const struct pod *p;
    const struct pod_usage *used;
    const char *ns, *name;
    size_t npods = pods != NULL ? pods->pl_count : 0, n = npods + sum->us_count, i;
    long j;

    if (n == 0)
        return 0;
    if ((res->pr_candidates = calloc(n, sizeof(*res->pr_candidates))) == NULL)
        goto fail;
    if (sum->us_count > 0 && (matched = calloc(sum->us_count, 1)) == NULL)
        goto fail;
    for (i = 0; i < npods; i++) {
        p = &pods->pl_pods[i];
        /* pods_json never leaves these NULL; a hand-built list might. */
        ns = p->p_namespace != NULL ? p->p_namespace : "";
        name = p->p_name != NULL ? p->p_name : "";
        used = NULL;
        if ((j = find_usage(sum, ns, name)) >= 0) {
            matched[j] = 1;
            used = &sum->us_pods[j];
        }
        if (add_candidate(res, p, ns, name, used, pp) == -1)
            goto fail;
    }
    for (i = 0; i < sum->us_count; i++) {
        const struct pod_usage *pu = &sum->us_pods[i];
        if (!matched[i] &&
            add_candidate(res, NULL, pu->pu_namespace, pu->pu_pod, pu, pp) == -1)
            goto fail;
    }
    free(matched);
    return 0;

fail:
    free(matched);
    return -1;
}

static int
cmp_desc(double x, double y)
{
    return (x < y) - (x > y);
}

/* Namespace, name, then UID: the last word, so even duplicates sort one way.
 * (A pod seen only in usage never ties on namespace and name: a listed pod
 * with those would have taken its usage.) */
static int
cmp_names(const struct policy_candidate *a, const struct policy_candidate *b)
{
    int c;

    if ((c = strcmp(a->pc_namespace, b->pc_namespace)) != 0)
        return c;
    if ((c = strcmp(a->pc_name, b->pc_name)) != 0)
        return c;
    return strcmp(a->pc_pod != NULL && a->pc_pod->p_uid != NULL ? a->pc_pod->p_uid : "",
                  b->pc_pod != NULL && b->pc_pod->p_uid != NULL ? b->pc_pod->p_uid : "");
}

/* Eligible first; among them the larger user, then the longest running. */
static int
cmp_common(const struct policy_candidate *a, const struct policy_candidate *b)
{
    int c;

    if (a->pc_eligible != b->pc_eligible)
        return b->pc_eligible - a->pc_eligible;
    if (a->pc_eligible) {
        if ((c = cmp_desc(a->pc_used_bytes, b->pc_used_bytes)) != 0)
            return c;
        if (a->pc_pod->p_started != b->pc_pod->p_started)
            return a->pc_pod->p_started < b->pc_pod->p_started ? -1 : 1;
    }
    return cmp_names(a, b);
}

/* The victim order by budget: the largest overshoot first. */
static int
cmp_by_overshoot(const void *x, const void *y)
{
    const struct policy_candidate *a = x, *b = y;
    int c;

    if (a->pc_eligible && b->pc_eligible &&
        (c = cmp_desc(a->pc_used_bytes - (double)a->pc_budget_mib * MIB,
                      b->pc_used_bytes - (double)b->pc_budget_mib * MIB)) != 0)
        return c;
    return cmp_common(a, b);
}

/* The FALLBACK=largest order: the largest user of the GPU pressed first (in
 * node scope that is the node's use). */
static int
cmp_by_use(const void *x, const void *y)
{
    const struct policy_candidate *a = x, *b = y;
    int c;

    if (a->pc_eligible && b->pc_eligible &&
        (c = cmp_desc(a->pc_gpu_used_bytes, b->pc_gpu_used_bytes)) != 0)
        return c;
    return cmp_common(a, b);
}

/* Below the floor with nobody over budget: the pods that fail only a budget
 * rule and hold some VRAM (recycling a pod using nothing frees nothing). */
static size_t
mark_fallback(struct policy_answer *res)
{
    struct policy_candidate *c;
    size_t i, n = 0;

    for (i = 0; i < res->pr_candidate_count; i++) {
        c = &res->pr_candidates[i];
        if ((c->pc_why_not == WHY_NO_BUDGET || c->pc_why_not == WHY_BAD_BUDGET ||
             c->pc_why_not == WHY_WITHIN) &&
            c->pc_gpu_used_bytes > 0) {
            c->pc_eligible = 1;
            c->pc_why_not = NULL;
            n++;
        }
    }
    return n;
}

const char *
free_source_name(enum free_source s)
{
    switch (s) {
    case FREE_SOURCE_DEVICE:
        return "device";
    case FREE_SOURCE_COMPUTED:
        return "computed";
    case FREE_SOURCE_QUERY:
        return "query";
    case FREE_SOURCE_NONE:
        break;
    }
    return NULL;
}

/* Free VRAM in bytes: the device's own, FREE_QUERY's answer, else the card
 * less every series. */
static int
read_free(const struct policy_params *pp, const struct policy_input *in,
          const struct device_figure *dev, const struct usage_summary *sum,
          double *free_bytes, char *why, size_t whylen)
{
    if (dev->df_have) {
        *free_bytes = dev->df_free_bytes; /* judged plausible by device_figure_for */
        return 0;
    }
    if (!in->pi_have_free) {
        *free_bytes = (double)pp->pp_total_mib * MIB - sum->us_total_bytes;
        return 0;
    }
    if (!(in->pi_free_mib >= 0 && in->pi_free_mib <= (double)pp->pp_total_mib)) {
        /* Also catches NaN, which fails every comparison. */
        snprintf(why, whylen,
                 "FREE_QUERY reports %g MiB free, which cannot be true on a card of "
                 "GPU_TOTAL_MIB=%lld",
                 in->pi_free_mib, (long long)pp->pp_total_mib);
        return -1;
    }
    *free_bytes = in->pi_free_mib * MIB;
    return 0;
}

/* FREE_QUERY=auto without a device figure: the reason says free was computed. */
static void
reason_fallback(struct policy_answer *res, const struct policy_params *pp,
                const struct policy_input *in, const struct device_figure *dev)
{
    size_t off = 0;

    if (in->pi_device == NULL || dev->df_have)
        return;
    text_append(res->pr_free_note, sizeof(res->pr_free_note), &off,
                "; free computed as GPU_TOTAL_MIB=%lld - used (%s)",
                (long long)pp->pp_total_mib, dev->df_why);
    off = strlen(res->pr_reason);
    text_append(res->pr_reason, sizeof(res->pr_reason), &off, "%s", res->pr_free_note);
}

/* "free N MiB", and in GPU scope " on GPU G". */
static void
free_words(char *r, size_t len, size_t *off, const struct policy_answer *res,
           const char *gpu)
{
    text_append(r, len, off, "free %lld MiB", (long long)res->pr_free_mib);
    if (gpu != NULL)
        text_append(r, len, off, " on GPU %s", gpu);
}

static void
reason_victim(struct policy_answer *res, const struct policy_params *pp, const char *gpu)
{
    const struct policy_candidate *v = &res->pr_candidates[0];
    size_t off = 0, len = sizeof(res->pr_reason);
    char *r = res->pr_reason;

    free_words(r, len, &off, res, gpu);
    text_append(r, len, &off, " < floor %lld MiB", (long long)pp->pp_floor_mib);
    if (!res->pr_fallback) {
        text_append(r, len, &off, "; %s/%s uses %lld MiB", v->pc_namespace, v->pc_name,
                    (long long)v->pc_used_mib);
        if (gpu != NULL)
            text_append(r, len, &off, " (%lld MiB on this GPU)",
                        (long long)v->pc_gpu_used_mib);
        text_append(r, len, &off, " against a budget of %lld MiB (%+lld MiB), ",
                    (long long)v->pc_budget_mib, (long long)v->pc_overshoot_mib);
        if (res->pr_ranked_count == 1)
            text_append(r, len, &off, "the only eligible over-budget pod");
        else
            text_append(r, len, &off,
                        "the largest overshoot of %zu eligible over-budget pods",
                        res->pr_ranked_count);
        return;
    }
    text_append(r, len, &off,
                " and no eligible pod is over its budget; FALLBACK=largest picks %s/%s, "
                "the largest eligible user",
                v->pc_namespace, v->pc_name);
    if (gpu != NULL)
        text_append(r, len, &off, " of this GPU at %lld MiB there, %lld MiB in all (",
                    (long long)v->pc_gpu_used_mib, (long long)v->pc_used_mib);
    else
        text_append(r, len, &off, " at %lld MiB (", (long long)v->pc_used_mib);
    if (v->pc_has_budget)
        text_append(r, len, &off, "budget %lld MiB)", (long long)v->pc_budget_mib);
    else if (v->pc_pod->p_budget_state == BUDGET_NONE)
        text_append(r, len, &off, "no budget declared)");
    else
        text_append(r, len, &off, "budget unreadable)");
}

static void
reason_none(struct policy_answer *res, const struct policy_params *pp, const char *gpu)
{
    size_t off = 0, len = sizeof(res->pr_reason), i, k, n;
    char *r = res->pr_reason;
    const char *sep = "";

    free_words(r, len, &off, res, gpu);
    text_append(r, len, &off, " < floor %lld MiB; ", (long long)pp->pp_floor_mib);
    if (res->pr_candidate_count == 0) {
        text_append(r, len, &off, "no pod to consider");
        return;
    }
    text_append(r, len, &off, "no eligible victim among %zu pods (",
                res->pr_candidate_count);
    for (k = 0; k < sizeof(why_order) / sizeof(why_order[0]); k++) {
        for (n = 0, i = 0; i < res->pr_candidate_count; i++)
            n += res->pr_candidates[i].pc_why_not == why_order[k];
        if (n > 0) {
            text_append(r, len, &off, "%s%zu %s", sep, n, why_order[k]);
            sep = ", ";
        }
    }
    text_append(r, len, &off, ")%s",
                pp->pp_fallback_largest ? ", and FALLBACK=largest found none holding VRAM"
                                        : "");
}

void
policy_reason_recovered(const struct policy_answer *res, int64_t floor_mib,
                        const char *gpu, const char *so, char *out, size_t len)
{
    size_t off = 0;

    out[0] = '\0';
    free_words(out, len, &off, res, gpu);
    text_append(out, len, &off, " >= floor %lld MiB; %s%s", (long long)floor_mib, so,
                res->pr_free_note);
}

void
policy_decide(const struct policy_params *pp, const struct policy_input *in,
              struct policy_answer *res)
{
    struct usage_summary sum;
    struct policy_prep *own = NULL;
    const struct policy_prep *prep = in->pi_prep;
    struct usage_total tot = {(double)pp->pp_total_mib * MIB, 0};
    struct device_figure dev;
    enum free_source src;
    char why[1024];
    double free_bytes;
    size_t i, ranked = 0;
    int recovered;

    memset(res, 0, sizeof(*res));
    memset(&sum, 0, sizeof(sum));
    device_figure_for(in->pi_device, in->pi_gpu, &dev);
    src = dev.df_have        ? FREE_SOURCE_DEVICE
          : in->pi_have_free ? FREE_SOURCE_QUERY
                             : FREE_SOURCE_COMPUTED;
    if (dev.df_have && dev.df_impossible) {
        snprintf(why, sizeof(why), "%s", dev.df_why);
        goto fail;
    }
    if (dev.df_have) {
        tot.ut_bytes = dev.df_total_bytes;
        tot.ut_device = 1;
    }
    if (in->pi_gpu != NULL && prep == NULL &&
        (prep = own = policy_prepare(pp, in)) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    if ((in->pi_gpu != NULL
             ? usage_summarise_gpu_ix(prep->pr_ix, in->pi_gpu, &sum, why, sizeof(why))
             : usage_summarise_total(in->pi_usage, &tot, &sum, why, sizeof(why))) == -1)
        goto fail;
    if (read_free(pp, in, &dev, &sum, &free_bytes, why, sizeof(why)) == -1)
        goto fail;
    res->pr_free_known = 1;
    res->pr_free_source = src;
    res->pr_free_mib = usage_bytes_to_mib(free_bytes);
    recovered = free_bytes >= (double)pp->pp_floor_mib * MIB;

    if ((in->pi_gpu != NULL ? build_gpu_candidates(pp, prep, &sum, res)
                            : build_candidates(pp, in->pi_pods, &sum, res)) == -1) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    for (i = 0; i < res->pr_candidate_count; i++)
        ranked += (size_t)res->pr_candidates[i].pc_eligible;
    if (!recovered && ranked == 0 && pp->pp_fallback_largest) {
        ranked = mark_fallback(res);
        res->pr_fallback = ranked > 0;
    }
    if (res->pr_candidate_count > 0)
        qsort(res->pr_candidates, res->pr_candidate_count, sizeof(*res->pr_candidates),
              res->pr_fallback ? cmp_by_use : cmp_by_overshoot);

    if (recovered) {
        res->pr_outcome = POLICY_SKIPPED_RECOVERED;
        /* The free note comes after, with every outcome's (reason_fallback). */
        policy_reason_recovered(res, pp->pp_floor_mib, in->pi_gpu, "nothing to do",
                                res->pr_reason, sizeof(res->pr_reason));
    } else if (ranked == 0) {
        res->pr_outcome = POLICY_SKIPPED_NO_CANDIDATE;
        reason_none(res, pp, in->pi_gpu);
    } else {
        res->pr_outcome = POLICY_VICTIM;
        res->pr_ranked_count = ranked;
        reason_victim(res, pp, in->pi_gpu);
    }
    reason_fallback(res, pp, in, &dev);
    usage_summary_free(&sum);
    policy_prep_free(own);
    return;

fail:
    usage_summary_free(&sum);
    policy_prep_free(own);
    policy_answer_free(res);
    res->pr_outcome = POLICY_SKIPPED_TELEMETRY;
    res->pr_free_source = src;
    snprintf(res->pr_reason, sizeof(res->pr_reason), "%.*s",
             (int)sizeof(res->pr_reason) - 1, why);
}
