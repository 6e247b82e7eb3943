/* verdict.c -- a decision as the audit stores and prints it: its result, reason and
 * figures */
#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "pods_json.h"

void
verdict_init(struct verdict *v, const struct config *cfg, const char *node,
             const char *trigger, const char *fingerprint, int64_t alert_id)
{
    memset(v, 0, sizeof(*v));
    v->vd_d.sd_time_ms = clock_wall_ms();
    v->vd_d.sd_node = node ? node : "";
    v->vd_d.sd_trigger = trigger ? trigger : "";
    v->vd_d.sd_fingerprint = fingerprint ? fingerprint : "";
    v->vd_d.sd_result = decision_result_name(RESULT_IN_PROGRESS);
    v->vd_d.sd_reason = v->vd_reason;
    v->vd_d.sd_floor_mib = cfg->c_floor_mib;
    v->vd_d.sd_dry_run = cfg->c_dry_run;
    v->vd_d.sd_action = "none";
    v->vd_d.sd_alert_id = alert_id;
    /* HA: each row names its replica, so `audit` merges the replicas' files. */
    v->vd_d.sd_replica = cfg->c_leader_election ? cfg->c_pod_name : NULL;
}

int
verdict_set_policy(struct verdict *v, const struct policy_answer *p)
{
    free(v->vd_cands);
    v->vd_cands = NULL;
    free(v->vd_sources);
    v->vd_sources = NULL;
    v->vd_d.sd_budget_sources = NULL;
    v->vd_d.sd_candidates = NULL;
    v->vd_d.sd_candidate_count = 0;
    v->vd_d.sd_candidates_stored = 0; /* new candidates: the row must get them */
    v->vd_d.sd_free_known = p->pr_free_known;
    v->vd_d.sd_free_mib = p->pr_free_mib;
    v->vd_d.sd_free_source = free_source_name(p->pr_free_source);
    if (p->pr_candidate_count == 0)
        return 0;
    v->vd_cands = calloc(p->pr_candidate_count, sizeof(*v->vd_cands));
    if (v->vd_cands == NULL)
        return -1;
    /* Without room for the sources the candidates still go out, sources unsaid. */
    v->vd_sources = calloc(p->pr_candidate_count, sizeof(*v->vd_sources));
    for (size_t i = 0; i < p->pr_candidate_count; i++) {
        const struct policy_candidate *c = &p->pr_candidates[i];
        v->vd_cands[i] = (struct store_candidate){
            .sc_namespace = c->pc_namespace,
            .sc_pod = c->pc_name,
            .sc_used_mib = c->pc_used_mib,
            .sc_has_budget = c->pc_has_budget,
            .sc_budget_mib = c->pc_budget_mib,
            .sc_eligible = c->pc_eligible,
            .sc_why_not = c->pc_why_not,
        };
        if (v->vd_sources != NULL && c->pc_pod != NULL)
            v->vd_sources[i] = c->pc_pod->p_budget_source;
    }
    v->vd_d.sd_budget_sources = v->vd_sources;
    v->vd_d.sd_candidates = v->vd_cands;
    v->vd_d.sd_candidate_count = p->pr_candidate_count;
    return 0;
}

void
verdict_set_victim(struct verdict *v, const struct policy_candidate *c,
                   const char *action)
{
    v->vd_victim = (struct store_victim){
        .sv_namespace = c->pc_namespace,
        .sv_pod = c->pc_name,
        .sv_used_mib = c->pc_used_mib,
        .sv_has_budget = c->pc_has_budget,
        .sv_budget_mib = c->pc_budget_mib,
        .sv_overshoot_mib = c->pc_overshoot_mib,
    };
    v->vd_d.sd_victim = &v->vd_victim;
    v->vd_d.sd_victim_budget_source =
        c->pc_pod != NULL ? c->pc_pod->p_budget_source : NULL;
    v->vd_d.sd_action = action;
}

void
verdict_set_result(struct verdict *v, enum decision_result result)
{
    v->vd_d.sd_result = decision_result_name(result);
}

void
verdict_reason(struct verdict *v, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v->vd_reason, sizeof(v->vd_reason), fmt, ap);
    va_end(ap);
}

void
verdict_reason_append(struct verdict *v, const char *fmt, ...)
{
    size_t used = strlen(v->vd_reason);
    va_list ap;

    if (used > 0 && used + 2 < sizeof(v->vd_reason)) {
        memcpy(v->vd_reason + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= sizeof(v->vd_reason))
        return;
    va_start(ap, fmt);
    vsnprintf(v->vd_reason + used, sizeof(v->vd_reason) - used, fmt, ap);
    va_end(ap);
}

void
verdict_error(struct verdict *v, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v->vd_error, sizeof(v->vd_error), fmt, ap);
    va_end(ap);
    v->vd_d.sd_error = v->vd_error;
}

enum decision_result
verdict_from_gather(struct verdict *v, const struct gather_answer *gr,
                    const struct config *cfg)
{
    const struct policy_answer *p = &gr->gr_policy;
    const char *node = v->vd_d.sd_node;
    char where[600];

    /* GPU scope names the GPU; node scope leaves gpu null. */
    v->vd_d.sd_gpu = gr->gr_gpu;
    if (gr->gr_gpu != NULL) {
        snprintf(where, sizeof(where), "%s GPU %s", node, gr->gr_gpu);
        node = where;
    }
    if (gr->gr_status == GATHER_TELEMETRY || gr->gr_status == GATHER_CANCELLED) {
        verdict_reason(v, "cannot re-verify free VRAM on %s, so acting on nothing", node);
        verdict_error(v, "%s", gr->gr_error);
        return RESULT_SKIPPED_TELEMETRY;
    }
    if (gr->gr_status == GATHER_KUBE && !p->pr_free_known) {
        /* Nothing was read: the node could not even be asked about. */
        verdict_reason(v, "%s, so acting on nothing", gr->gr_error);
        verdict_error(v, "%s", gr->gr_error);
        return RESULT_SKIPPED_KUBE;
    }
    if (gr->gr_status == GATHER_KUBE) {
        /* No pod list: only the free VRAM is evidence worth recording. */
        verdict_set_policy(v,
                           &(struct policy_answer){.pr_free_known = p->pr_free_known,
                                                   .pr_free_mib = p->pr_free_mib,
                                                   .pr_free_source = p->pr_free_source});
        /* The answer names a list refused as too large only in its error
         * text (the transport's one line); the reason says it plainly. */
        verdict_reason(v,
                       "free %lld MiB < floor %lld MiB, but the pods on %s could not be "
                       "listed%s, so acting on nothing",
                       (long long)p->pr_free_mib, (long long)cfg->c_floor_mib, node,
                       strstr(gr->gr_error, POD_LIST_TOO_LARGE) != NULL
                           ? " (the pod list is too large)"
                           : "");
        verdict_error(v, "%s", gr->gr_error);
        return RESULT_SKIPPED_KUBE;
    }
    verdict_set_policy(v, p); /* on OOM the candidates are left out, nothing else */
    verdict_reason(v, "%s", p->pr_reason);
    if (p->pr_outcome == POLICY_SKIPPED_TELEMETRY)
        verdict_error(v, "%s", p->pr_reason);
    return policy_outcome_result(p->pr_outcome);
}

void
verdict_free(struct verdict *v)
{
    free(v->vd_cands);
    v->vd_cands = NULL;
    free(v->vd_sources);
    v->vd_sources = NULL;
    v->vd_d.sd_budget_sources = NULL;
    v->vd_d.sd_candidates = NULL;
    v->vd_d.sd_candidate_count = 0;
    v->vd_d.sd_candidates_stored = 0; /* new candidates: the row must get them */
}
