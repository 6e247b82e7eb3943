/* predict_query.c -- a predicted trigger: each pod's growth from Prometheus, then judge
 * it */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "predict.h"
#include "prom.h"
#include "remedy_int.h"

/* Points at most per series: the subquery's step is the window / this, at
 * least 1 s (a young history still has enough points to fit). */
#define PREDICT_POINTS 120

/* One growth query in flight, and the decisions waiting for it: a trigger
 * naming no GPU fans out into one decision per GPU, and all ask the same
 * node-wide query, so the first asks it and the others join (one answer,
 * read once, judged per GPU). A waiter's slot is NULL once its decision went
 * away (detached: its share of the answer is dropped). The answer frees it. */
struct predict_call {
    struct remedy *pq_r;
    char *pq_query;               /* owned: the key */
    int pq_per_gpu;               /* the answer keeps the GPU label (part of the key) */
    struct decision **pq_waiters; /* owned */
    size_t pq_count, pq_cap;
    struct predict_call *pq_next; /* in r->r_pred_calls */
};

static void
call_free(struct predict_call *pq)
{
    free(pq->pq_query);
    free(pq->pq_waiters);
    free(pq);
}

static int
call_join(struct predict_call *pq, struct decision *d)
{
    if (pq->pq_count == pq->pq_cap) {
        size_t cap = pq->pq_cap ? pq->pq_cap * 2 : 4;
        struct decision **w = realloc(pq->pq_waiters, cap * sizeof(*w));
        if (w == NULL)
            return -1;
        pq->pq_waiters = w;
        pq->pq_cap = cap;
    }
    pq->pq_waiters[pq->pq_count++] = d;
    d->d_pred_call = pq;
    return 0;
}

/* Takes pq out of r's calls in flight (its answer came). */
static void
call_unlink(struct predict_call *pq)
{
    struct predict_call **pp;

    if (pq->pq_r == NULL)
        return; /* the remedy went away first */
    pp = &pq->pq_r->r_pred_calls;

    while (*pp != NULL && *pp != pq)
        pp = &(*pp)->pq_next;
    if (*pp == pq)
        *pp = pq->pq_next;
}

int
predict_wanted(const struct decision *d)
{
    return d->d_r->r_cfg->c_predict && strcmp(d->d_trigger, PREDICT_ALERTNAME) == 0;
}

void
predict_detach(struct decision *d)
{
    struct predict_call *pq = d->d_pred_call;

    for (size_t i = 0; pq != NULL && i < pq->pq_count; i++)
        if (pq->pq_waiters[i] == d)
            pq->pq_waiters[i] = NULL;
    d->d_pred_call = NULL;
    free(d->d_pred_cands);
    d->d_pred_cands = NULL;
}

/* The sustained growth (MiB/s) of candidate c from the answer: its series
 * (on gpu, in GPU scope) each fitted per half of the window, the halves
 * summed over the series, the smaller half kept. NaN when unknown. */
static double
growth_of(const struct prom_matrix *m, const struct policy_candidate *c, const char *gpu,
          double from_t, double split_t)
{
    double first = 0, second = 0;
    int seen = 0;
    struct predict_trend t;

    for (size_t i = 0; i < m->pm_count; i++) {
        const struct prom_mseries *s = &m->pm_series[i];
        if (s->ms_namespace == NULL || s->ms_pod == NULL ||
            strcmp(s->ms_namespace, c->pc_namespace) != 0 ||
            strcmp(s->ms_pod, c->pc_name) != 0)
            continue;
        if (gpu != NULL && (s->ms_gpu == NULL || strcmp(s->ms_gpu, gpu) != 0))
            continue;
        predict_trend(s->ms_samples, s->ms_count, from_t, split_t, &t);
        first += t.pt_first; /* a NaN half makes the pod's unknown */
        second += t.pt_second;
        seen = 1;
    }
    return seen ? predict_sustained(first, second) : NAN;
}

/* The two segments growth is judged on: the last two quarters of the window
 * (a fast drift counts within seconds of its start, a step 30 s old is out of
 * the latest), or, when the answer holds less history, its two halves. */
static double
split_time(const struct prom_matrix *m, double window_s, double *from_t)
{
    double lo = INFINITY, hi = -INFINITY;

    for (size_t i = 0; i < m->pm_count; i++)
        for (size_t j = 0; j < m->pm_series[i].ms_count; j++) {
            double t = m->pm_series[i].ms_samples[j].ps_t;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
    double seg = (hi - lo) / 2 < window_s / 4 ? (hi - lo) / 2 : window_s / 4;
    *from_t = hi - 2 * seg;
    return hi - seg;
}

static void
judged(struct decision *d, const struct prom_matrix *m)
{
    const struct config *cfg = d->d_r->r_cfg;
    const struct gather_answer *gr = d->d_gr;
    const struct policy_answer *p = &gr->gr_policy;
    struct predict_params pp = {cfg->c_floor_mib, (double)cfg->c_predict_horizon_s,
                                cfg->c_predict_min_growth};
    struct predict_outcome o;
    double *slopes = NULL, from = 0,
           split = split_time(m, (double)cfg->c_predict_window_s, &from);
    char where[600];
    size_t i, n = p->pr_candidate_count;

    snprintf(where, sizeof(where), "%s %s", gr->gr_gpu ? "GPU" : "node",
             gr->gr_gpu ? gr->gr_gpu : d->d_v.vd_d.sd_node);
    if ((n > 0 && ((slopes = calloc(n, sizeof(*slopes))) == NULL ||
                   (d->d_pred_cands = calloc(n, sizeof(*d->d_pred_cands))) == NULL))) {
        free(slopes);
        verdict_error(&d->d_v, "out of memory");
        decision_finish(d, RESULT_FAILED);
        return;
    }
    for (i = 0; i < n; i++)
        slopes[i] = growth_of(m, &p->pr_candidates[i], gr->gr_gpu, from, split);
    if (predict_judge(&pp, (double)p->pr_free_mib, p->pr_candidates, slopes, n, where,
                      &o) == -1) {
        free(slopes);
        verdict_error(&d->d_v, "out of memory");
        decision_finish(d, RESULT_FAILED);
        return;
    }
    /* The ranking the act walks: the growing victims first; an eligible pod
     * left out for its growth says so (not_growing). */
    for (i = 0; i < n; i++) {
        size_t k = o.po_order[i];
        d->d_pred_cands[i] = p->pr_candidates[k];
        if (i >= o.po_ranked && p->pr_candidates[k].pc_eligible &&
            !(isfinite(slopes[k]) && slopes[k] >= pp.pp_min_growth)) {
            d->d_pred_cands[i].pc_eligible = 0;
            d->d_pred_cands[i].pc_why_not = "not_growing";
        }
    }
    d->d_pred_gr = *gr;
    d->d_pred_gr.gr_gpus = NULL;
    d->d_pred_gr.gr_gpu_count = 0;
    d->d_pred_gr.gr_policy.pr_candidates = d->d_pred_cands;
    d->d_pred_gr.gr_policy.pr_ranked_count = o.po_act ? o.po_ranked : 0;
    d->d_pred_gr.gr_policy.pr_fallback = 0; /* never FALLBACK=largest on a prediction */
    d->d_pred_gr.gr_policy.pr_outcome =
        o.po_act ? POLICY_VICTIM : POLICY_SKIPPED_NO_CANDIDATE;
    snprintf(d->d_pred_gr.gr_policy.pr_reason, sizeof(d->d_pred_gr.gr_policy.pr_reason),
             "%s", o.po_reason);
    d->d_gr = &d->d_pred_gr;
    d->d_pred = (struct store_prediction){
        .sp_slope_known = o.po_slope_known,
        .sp_slope_mib_s = o.po_slope_mib_s,
        .sp_eta_known = o.po_eta_known,
        .sp_eta_s = ceil(o.po_eta_s),
        .sp_horizon_s = (double)cfg->c_predict_horizon_s,
    };
    d->d_v.vd_d.sd_prediction = &d->d_pred;
    /* A release or a recycle must end the prediction, not merely find free
     * above the floor (it already is): as much free as the horizon's growth
     * would eat. */
    double target = (double)cfg->c_floor_mib + ceil(o.po_growth_mib_s * pp.pp_horizon_s);
    d->d_free_target_mib = target < 9e18 ? (int64_t)target : INT64_MAX;
    if (verdict_set_policy(&d->d_v, &d->d_pred_gr.gr_policy) == -1)
        log_warnx("%s: out of memory; the candidates are left out", __func__);
    verdict_reason(&d->d_v, "%s", o.po_reason);
    free(slopes);
    predict_outcome_free(&o);
    if (d->d_pred_gr.gr_policy.pr_outcome == POLICY_VICTIM)
        act_begin(d);
    else
        decision_finish(d, RESULT_SKIPPED_NO_CANDIDATE);
}

void
predict_forget_calls(struct remedy *r)
{
    struct predict_call *pq, *next;

    for (pq = r->r_pred_calls; pq != NULL; pq = next) {
        next = pq->pq_next;
        pq->pq_r = NULL;
        pq->pq_next = NULL;
        for (size_t i = 0; i < pq->pq_count; i++)
            pq->pq_waiters[i] = NULL;
    }
    r->r_pred_calls = NULL;
}

/* The reason when the trend cannot be judged: the re-verify's reading (free
 * at or above the floor), with why nothing is acted on where a plain trigger
 * says "nothing to do". */
static void
unjudged_reason(struct decision *d, const char *why_not)
{
    char r[sizeof(d->d_gr->gr_policy.pr_reason)];

    policy_reason_recovered(&d->d_gr->gr_policy, d->d_r->r_cfg->c_floor_mib,
                            d->d_gr->gr_gpu, why_not, r, sizeof(r));
    verdict_reason(&d->d_v, "%s", r);
}

/* One waiter's share of the answer. */
static void
answered(struct decision *d, struct prom_answer *a)
{
    d->d_pred_call = NULL;
    if (a->pa_cancelled) {
        decision_interrupt(d);
        return;
    }
    /* The candidates are the gather's again (predict_begin left them out). */
    verdict_set_policy(&d->d_v, &d->d_gr->gr_policy);
    if (!a->pa_ok) {
        unjudged_reason(d, "cannot measure the pods' growth, so acting on nothing");
        verdict_error(&d->d_v, "the growth query: %s",
                      a->pa_error ? a->pa_error : "prometheus: unavailable");
        decision_finish(d, RESULT_SKIPPED_TELEMETRY);
        return;
    }
    judged(d, &a->pa_matrix);
}

static void
predict_cb(struct prom_answer *a, void *arg)
{
    struct predict_call *pq = arg;

    call_unlink(pq); /* a decision started from here asks afresh */
    /* Each waiter in turn; one that ends cannot free another (each holds its
     * own share of the gather), and a NULL slot went away meanwhile. */
    for (size_t i = 0; i < pq->pq_count; i++)
        if (pq->pq_waiters[i] != NULL)
            answered(pq->pq_waiters[i], a);
    call_free(pq);
}

/* The call in flight that asks q (per GPU or not), or NULL. */
static struct predict_call *
call_find(struct remedy *r, const char *q, int per_gpu)
{
    for (struct predict_call *pq = r->r_pred_calls; pq != NULL; pq = pq->pq_next)
        if (pq->pq_per_gpu == per_gpu && strcmp(pq->pq_query, q) == 0)
            return pq;
    return NULL;
}

void
predict_begin(struct decision *d)
{
    struct remedy *r = d->d_r;
    const struct config *cfg = r->r_cfg;
    const struct gather_answer *gr = d->d_gr;
    const struct policy_answer *p = &gr->gr_policy;
    struct predict_call *pq = NULL;
    int64_t step = cfg->c_predict_window_s / PREDICT_POINTS;
    int per_gpu = gr->gr_gpu != NULL;
    char err[256], *qn = NULL, *q = NULL;
    size_t len;

    predict_detach(d); /* nothing of an earlier call is kept */
    d->d_detach = predict_detach;
    if (gather_pods(d->d_g) == NULL) {
        /* Free at or above the floor without the pod list: no candidate can
         * be judged. */
        unjudged_reason(d, "the pods could not be listed, so acting on nothing");
        verdict_error(&d->d_v, "%s", gather_pods_error(d->d_g));
        decision_finish(d, RESULT_SKIPPED_KUBE);
        return;
    }
    /* The used query as the decision reads it, as a subquery over the window:
     * one query for every pod of the node. */
    if ((qn = prom_substitute_node(cfg->c_used_query, d->d_v.vd_d.sd_node, err,
                                   sizeof(err))) == NULL)
        goto fail;
    len = strlen(qn) + 64;
    if ((q = malloc(len)) == NULL) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    snprintf(q, len, "(%s)[%llds:%llds]", qn, (long long)cfg->c_predict_window_s,
             (long long)(step < 1 ? 1 : step));
    if ((pq = call_find(r, q, per_gpu)) != NULL) {
        /* Another GPU of the node asks it already: wait for that answer. */
        if (call_join(pq, d) == -1) {
            pq = NULL; /* not ours to free */
            snprintf(err, sizeof(err), "out of memory");
            goto fail;
        }
    } else {
        if ((pq = calloc(1, sizeof(*pq))) == NULL || call_join(pq, d) == -1) {
            snprintf(err, sizeof(err), "out of memory");
            goto fail_new;
        }
        pq->pq_r = r;
        pq->pq_per_gpu = per_gpu;
        pq->pq_query = q;
        q = NULL;
        if (prom_query_matrix(r->r_prom, pq->pq_query, cfg->c_namespace_label,
                              cfg->c_pod_label, per_gpu ? cfg->c_gpu_label : NULL,
                              predict_cb, pq) == -1) {
            snprintf(err, sizeof(err), "the query could not be started");
            goto fail_new;
        }
        pq->pq_next = r->r_pred_calls;
        r->r_pred_calls = pq;
    }
    /* While it is asked, the verdict holds no candidates: a stop frees the
     * gather they borrow from. */
    verdict_set_policy(&d->d_v,
                       &(struct policy_answer){.pr_free_known = p->pr_free_known,
                                               .pr_free_mib = p->pr_free_mib,
                                               .pr_free_source = p->pr_free_source});
    free(qn);
    free(q);
    return;
fail_new:
    if (pq != NULL)
        call_free(pq);
fail:
    d->d_pred_call = NULL;
    free(qn);
    free(q);
    unjudged_reason(d, "cannot measure the pods' growth, so acting on nothing");
    verdict_error(&d->d_v, "the growth query: %s", err);
    decision_finish(d, RESULT_SKIPPED_TELEMETRY);
}
