/* decision.c -- a decision's audit row: started, written as it goes, finished, freed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "events.h"
#include "gate.h"
#include "log.h"
#include "metrics.h"
#include "remedy_int.h"

#define FINISH_RETRY_S 1   /* a decision row that could not be completed is retried */
#define FINISH_RETRIES 600 /* ... for ten minutes */

/* --- recording ----------------------------------------------------------- */

static void
log_decision(const struct verdict *v, int64_t id)
{
    char idbuf[32], freebuf[32], floorbuf[32], victim[600] = "";
    const struct store_decision *d = &v->vd_d;

    snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
    if (d->sd_free_known)
        snprintf(freebuf, sizeof(freebuf), "%lld", (long long)d->sd_free_mib);
    else
        snprintf(freebuf, sizeof(freebuf), "unknown");
    snprintf(floorbuf, sizeof(floorbuf), "%lld", (long long)d->sd_floor_mib);
    if (d->sd_victim != NULL)
        snprintf(victim, sizeof(victim), "%s/%s", d->sd_victim->sv_namespace,
                 d->sd_victim->sv_pod);
    log_event(LOG_LEVEL_INFO, "decision", "id", idbuf, "node", d->sd_node, "trigger",
              d->sd_trigger, "result", d->sd_result, "victim", victim, "action",
              d->sd_action, "free_mib", freebuf, "floor_mib", floorbuf, "dry_run",
              d->sd_dry_run ? "true" : "false", "reason", d->sd_reason, "error",
              d->sd_error ? d->sd_error : "", d->sd_gpu ? "gpu" : NULL, d->sd_gpu,
              (char *)NULL);
}

/* Records a decision that ends as it starts (coalesced, skipped_kube before a
 * node is known): one row, no queries. */
void
decision_record_now_gpu(struct remedy *r, const char *node, const char *gpu,
                        const char *trigger, const char *fp, int64_t alert_id,
                        enum decision_result result, const char *reason,
                        const char *error)
{
    struct verdict v;
    char err[512];
    int64_t id = 0;

    verdict_init(&v, r->r_cfg, node, trigger, fp, alert_id);
    v.vd_d.sd_gpu = gpu;
    verdict_set_result(&v, result);
    verdict_reason(&v, "%s", reason);
    if (error != NULL)
        verdict_error(&v, "%s", error);
    if (r->r_store == NULL ||
        store_decision_record(r->r_store, &v.vd_d, &id, err, sizeof(err)) == -1)
        log_event(LOG_LEVEL_ERROR, "decision not recorded", "node", node, "result",
                  decision_result_name(result), "error",
                  r->r_store ? err : "audit store not open", (char *)NULL);
    metrics_decision(result, -1);
    log_decision(&v, id);
    verdict_free(&v);
}

void
decision_record_now(struct remedy *r, const char *node, const char *trigger,
                    const char *fp, int64_t alert_id, enum decision_result result,
                    const char *reason, const char *error)
{
    decision_record_now_gpu(r, node, NULL, trigger, fp, alert_id, result, reason, error);
}

static void
decision_unlink(struct decision *d)
{
    struct decision **pp;

    for (pp = &d->d_r->r_decisions; *pp != NULL; pp = &(*pp)->d_next_in_list)
        if (*pp == d) {
            *pp = d->d_next_in_list;
            break;
        }
}

/* Tells the stopping daemon once no decision is left. */
void
decision_check_drained(struct remedy *r)
{
    void (*cb)(void *) = r->r_drained;

    if (!r->r_stopping || r->r_in_flight > 0 || cb == NULL)
        return;
    r->r_drained = NULL;
    cb(r->r_drained_arg);
}

/* Frees a decision, whatever state it is in. */
void
decision_free(struct decision *d)
{
    struct remedy *r = d->d_r;

    decision_unlink(d);
    if (d->d_batch != NULL) /* the shared reading's answer must not find it */
        d->d_batch->b_d[d->d_batch_at] = NULL;
    gate_forget(d->d_fence); /* a fence it waits for is forgotten */
    d->d_fence = NULL;
    brakes_seat_give_back(d);
    d->d_r->r_in_flight--;
    if (d->d_node != NULL)
        d->d_node->n_busy = 0;
    if (d->d_verify_ev != NULL)
        event_free(d->d_verify_ev);
    if (d->d_retry_ev != NULL)
        event_free(d->d_retry_ev);
    release_free(d->d_release);
    if (d->d_detach != NULL)
        d->d_detach(d);
    gather_free(d->d_vg);
    verdict_free(&d->d_v);
    gather_free(d->d_g);
    free(d->d_trigger);
    free(d->d_fingerprint);
    free(d->d_starving_ns);
    free(d);
    if (r->r_slot_freed != NULL)
        r->r_slot_freed(r); /* a slot is free */
    decision_check_drained(r);
}

/* A started decision: its row in_progress, its brake n busy. NULL when it
 * could not be (logged); then nothing is held. */
struct decision *
decision_new(struct remedy *r, struct node_state *n, const char *trigger, const char *fp,
             const char *starving_ns, int64_t alert_id, double now)
{
    return decision_new_row(r, n, trigger, fp, starving_ns, alert_id, now, 0);
}

struct decision *
decision_new_row(struct remedy *r, struct node_state *n, const char *trigger,
                 const char *fp, const char *starving_ns, int64_t alert_id, double now,
                 int64_t row)
{
    struct decision *d;
    char err[512];

    if ((d = calloc(1, sizeof(*d))) == NULL)
        goto oom;
    d->d_r = r;
    d->d_t0 = now;
    d->d_alert_id = alert_id;
    d->d_next_in_list = r->r_decisions;
    r->r_decisions = d;
    r->r_in_flight++;
    if ((d->d_trigger = strdup(trigger)) == NULL ||
        (d->d_fingerprint = strdup(fp ? fp : "")) == NULL ||
        (starving_ns != NULL && (d->d_starving_ns = strdup(starving_ns)) == NULL)) {
        decision_free(d);
        goto oom;
    }
    /* The node name lives in the node state, which outlives the decision. */
    verdict_init(&d->d_v, r->r_cfg, n->n_name, d->d_trigger, d->d_fingerprint, alert_id);
    d->d_v.vd_d.sd_gpu = n->n_gpu;
    if (row > 0) {
        d->d_row = row; /* queued: its row is already there, in_progress */
    } else if (store_decision_start(r->r_store, &d->d_v.vd_d, &d->d_row, err,
                                    sizeof(err)) == -1) {
        /* Never act on what cannot be recorded. */
        log_event(LOG_LEVEL_ERROR,
                  "decision not started: the audit store cannot record it", "node",
                  n->n_name, "error", err, (char *)NULL);
        metrics_decision(RESULT_FAILED, -1);
        decision_free(d);
        return NULL;
    }
    d->d_node = n;
    n->n_busy = 1;
    return d;
oom:
    log_warnx("%s: out of memory; no decision for %s", __func__, n->n_name);
    return NULL;
}

static int
record_finish(struct decision *d)
{
    struct remedy *r = d->d_r;
    char err[512];

    if (r->r_store != NULL &&
        store_decision_finish(r->r_store, d->d_row, &d->d_v.vd_d, err, sizeof(err)) == 0)
        return 0;
    log_event(LOG_LEVEL_ERROR, "decision row not completed; retrying", "node",
              d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, "error",
              r->r_store ? err : "audit store not open", (char *)NULL);
    return -1;
}

/* The store was busy or full when the decision ended: its outcome (a real
 * eviction, perhaps) must still reach the audit, so keep trying. The node
 * stays busy meanwhile; new decisions could not be recorded anyway. */
static void
finish_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    struct decision *d = arg;
    struct timeval again = {FINISH_RETRY_S, 0};

    if (record_finish(d) == 0) {
        log_event(LOG_LEVEL_INFO, "decision row completed late", "node",
                  d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, (char *)NULL);
        decision_free(d);
        return;
    }
    if (++d->d_finish_tries >= FINISH_RETRIES) {
        log_event(LOG_LEVEL_ERROR, "decision row abandoned: the audit store kept failing",
                  "node", d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result,
                  (char *)NULL);
        decision_free(d);
        return;
    }
    evtimer_add(d->d_verify_ev, &again);
}

/* Counts, logs, completes the audit row, frees. */
void
decision_finish(struct decision *d, enum decision_result result)
{
    struct timeval again = {FINISH_RETRY_S, 0};

    verdict_set_result(&d->d_v, result);
    d->d_v.vd_d.sd_verify_pending = 0;
    metrics_decision(result, clock_mono_s() - d->d_t0);
    log_decision(&d->d_v, d->d_row);
    /* The tenant hears it too (kubectl describe pod); never changes the decision. */
    events_on_decision(d->d_r->r_kube, d->d_r->r_cfg, &d->d_v.vd_d, d->d_row, d->d_gr);
    if (record_finish(d) == 0 || d->d_r->r_stopping) {
        /* Stopping: no time for ten minutes of retries; the next start marks
         * the row interrupted instead. */
        decision_free(d);
        return;
    }
    d->d_phase = PH_FINISHING;
    if (d->d_vg != NULL) { /* can't happen: finish is never called mid-reading */
        gather_free(d->d_vg);
        d->d_vg = NULL;
    }
    /* The verify timer is done with; the retry reuses its slot. */
    if (d->d_verify_ev != NULL)
        event_free(d->d_verify_ev);
    if ((d->d_verify_ev = evtimer_new(d->d_r->r_base, finish_retry_cb, d)) == NULL) {
        decision_free(d);
        return;
    }
    evtimer_add(d->d_verify_ev, &again);
}

/* The PodDisruptionBudget refusals that moved the decision down the ranking,
 * so a victim other than the first ranked one is explained. */
void
decision_note_refusals(struct decision *d)
{
    if (d->d_refusals[0] != '\0')
        verdict_reason_append(&d->d_v, "refused by a PodDisruptionBudget first: %s",
                              d->d_refusals);
}

/* Writes the row as it stands, before the decision ends (a crash or a stop
 * must not hide what was done). A failure is logged: decision_finish() retries. */
void
decision_record_progress(struct decision *d, const char *what)
{
    struct remedy *r = d->d_r;
    char err[512];

    if (r->r_store != NULL && store_decision_finish(r->r_store, d->d_row, &d->d_v.vd_d,
                                                    err, sizeof(err)) == 0) {
        d->d_v.vd_d.sd_candidates_stored = 1; /* the later writes leave them be */
        return;
    }
    log_event(LOG_LEVEL_ERROR, what, "node", d->d_v.vd_d.sd_node, "error",
              r->r_store ? err : "audit store not open", (char *)NULL);
}

/* Records the recycle the moment it happened, before any verify: the
 * eviction is a fact, and a stop or a crash during the verify must not hide
 * it. The row stays marked verify_pending until the verify ends. */
void
decision_record_recycle_now(struct decision *d)
{
    verdict_set_result(&d->d_v, RESULT_RECYCLED);
    d->d_v.vd_d.sd_verify_pending = 1;
    decision_record_progress(d, "recycle not recorded before its verify");
}

/* --- stopping ------------------------------------------------------------ */

/* The figures of an ask into the audit's release object. */
void
decision_release_record(struct decision *d, const struct release_outcome *o)
{
    d->d_rel.sr_status_known = o->ro_status > 0;
    d->d_rel.sr_status = o->ro_status;
    d->d_rel.sr_freed_known = o->ro_free_known;
    d->d_rel.sr_freed_mib = o->ro_freed_mib;
    d->d_rel.sr_seconds_known = 1;
    d->d_rel.sr_seconds = o->ro_seconds;
}

/*
 * Completes a decision the daemon stops under (remedy_shutdown(), or a client
 * freed with its call in flight), so no row is left in_progress:
 * - gathering: nothing was done; result failed, error STORE_INTERRUPTED_ERROR;
 * - an eviction or deletion in flight: its outcome is unknown; failed, naming
 *   the victim, and the error says so;
 * - waiting to ask again after the API server throttled the eviction or
 *   deletion: nothing was recycled; failed, naming the victim;
 * - the dry-run probe in flight: would_recycle, the probe said cut short;
 * - verifying: the recycle is already recorded; the verify is cut short with
 *   the free VRAM seen so far (or none) and the reason says the daemon stopped.
 */
void
decision_interrupt(struct decision *d)
{
    const struct config *cfg = d->d_r->r_cfg;
    const struct policy_candidate *c;
    double since = clock_mono_s() - d->d_recycled_at;

    switch (d->d_phase) {
    case PH_GATHER:
        verdict_reason_append(&d->d_v, "the daemon stopped while this decision was "
                                       "gathering evidence; nothing was recycled");
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        decision_finish(d, RESULT_FAILED);
        return;
    case PH_ACT:
        /* The ranking act.c walked (a prediction's own, or the gather's). */
        c = &d->d_gr->gr_policy.pr_candidates[d->d_next];
        verdict_set_victim(&d->d_v, c, action_name(cfg));
        decision_note_refusals(d);
        verdict_reason_append(&d->d_v,
                              "the daemon stopped while the %s of %s/%s was in "
                              "flight",
                              action_name(cfg), c->pc_namespace, c->pc_name);
        verdict_error(&d->d_v,
                      "interrupted: the daemon stopped before the API server "
                      "answered the %s; whether it took effect is unknown",
                      action_name(cfg));
        decision_finish(d, RESULT_FAILED);
        return;
    case PH_ACT_WAIT:
        event_del(d->d_retry_ev);
        c = &d->d_gr->gr_policy.pr_candidates[d->d_next];
        verdict_set_victim(&d->d_v, c, action_name(cfg));
        decision_note_refusals(d);
        verdict_reason_append(&d->d_v,
                              "the daemon stopped while waiting to ask again for the "
                              "%s of %s/%s (the API server throttled it); nothing was "
                              "recycled",
                              action_name(cfg), c->pc_namespace, c->pc_name);
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        decision_finish(d, RESULT_FAILED);
        return;
    case PH_PROBE:
        verdict_reason_append(&d->d_v,
                              "the dry-run probe was cut short: the daemon stopped");
        decision_finish(d, RESULT_WOULD_RECYCLE);
        return;
    case PH_RELEASE:
        if (d->d_release != NULL) {
            struct release_outcome o;
            release_outcome_now(d->d_release, &o);
            decision_release_record(d, &o);
            release_free(d->d_release);
            d->d_release = NULL;
        }
        verdict_reason_append(&d->d_v,
                              "the daemon stopped while waiting for the release; "
                              "nothing was recycled");
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        decision_finish(d, RESULT_FAILED);
        return;
    case PH_VERIFY:
        if (d->d_vg != NULL) {
            gather_free(d->d_vg); /* detached: its answer is dropped */
            d->d_vg = NULL;
        }
        if (d->d_verify_ev != NULL)
            event_del(d->d_verify_ev);
        if (d->d_v.vd_d.sd_verified)
            verdict_reason_append(&d->d_v,
                                  "verify cut short after %.1f s: the daemon stopped "
                                  "(free VRAM %lld MiB so far)",
                                  since, (long long)d->d_v.vd_d.sd_verify_free_mib);
        else
            verdict_reason_append(&d->d_v,
                                  "verify cut short after %.1f s: the daemon stopped "
                                  "before free VRAM was read back",
                                  since);
        decision_finish(d, RESULT_RECYCLED);
        return;
    case PH_FINISHING:
        /* One last try; then the next start marks the row interrupted. */
        if (record_finish(d) == 0)
            log_event(LOG_LEVEL_INFO, "decision row completed late", "node",
                      d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, (char *)NULL);
        decision_free(d);
        return;
    }
}
