/* act.c -- acting on the victim: evict or delete, the dry-run probe, release first */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "release_target.h"
#include "remedy_int.h"

/* The candidate the decision's policy ranked at i (its GPU's in GPU scope). */
static const struct policy_candidate *
ranked(const struct decision *d, size_t i)
{
    const struct policy_answer *p = &d->d_gr->gr_policy;

    return i < p->pr_candidate_count ? &p->pr_candidates[i] : NULL;
}

static void act_try(struct decision *d);

/* --- evict or delete ----------------------------------------------------- */

static void
recycled(struct decision *d, const struct policy_candidate *c, const char *how)
{
    double now = clock_mono_s();

    verdict_set_victim(&d->d_v, c, action_name(d->d_r->r_cfg));
    decision_note_refusals(d);
    verdict_reason_append(&d->d_v, "%s %s/%s", how, c->pc_namespace, c->pc_name);
    brakes_seat_give_back(d); /* the seat becomes the counted recycle */
    brakes_count_recycle(d->d_r, now);
    brakes_open_settle_window(d, c, now);
    d->d_phase = PH_VERIFY;
    decision_record_recycle_now(d);
    d->d_recycled_at = now;
    d->d_verify_deadline = now + ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    if (d->d_r->r_stopping) { /* answered after the stop: no verify to wait for */
        decision_interrupt(d);
        return;
    }
    if ((d->d_verify_ev = evtimer_new(d->d_r->r_base, verify_tick, d)) == NULL) {
        verdict_reason_append(&d->d_v, "verification could not start (out of memory)");
        decision_finish(d, RESULT_RECYCLED);
        return;
    }
    verify_schedule(d);
}

/* Load shedding (a 429 that is no budget's refusal): the same victim again after
 * Retry-After, at most this many tries in all. */
#define THROTTLE_TRIES 3
#define RETRY_AFTER_MAX_S 10L    /* a longer Retry-After is waited only this long */
#define RETRY_AFTER_DEFAULT_S 1L /* none, or one that cannot be read */

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
    act_try(arg);
}

/* Waits out the throttled answer a, on a timer (never a sleep on the loop), then
 * asks again for the same victim. 0, or -1 when the timer cannot be armed. */
static int
retry_later(struct decision *d, const struct kube_answer *a,
            const struct policy_candidate *c)
{
    long s = a->ka_retry_after_s <= 0                  ? RETRY_AFTER_DEFAULT_S
             : a->ka_retry_after_s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S
                                                       : a->ka_retry_after_s;
    struct timeval tv = {s, 0};
    char after[24];

    if (d->d_retry_ev == NULL &&
        (d->d_retry_ev = evtimer_new(d->d_r->r_base, retry_cb, d)) == NULL)
        return -1;
    if (evtimer_add(d->d_retry_ev, &tv) == -1)
        return -1;
    d->d_phase = PH_ACT_WAIT;
    snprintf(after, sizeof(after), "%ld", s);
    log_event(LOG_LEVEL_WARN, "API server throttled the request; retrying the same pod",
              "namespace", c->pc_namespace, "pod", c->pc_name, "retry_after_s", after,
              (char *)NULL);
    return 0;
}

/* Ends d failed on the answer a for victim c: the error as the server gave it. */
static void
act_failed(struct decision *d, const struct policy_candidate *c,
           const struct kube_answer *a, const char *why)
{
    verdict_set_victim(&d->d_v, c, action_name(d->d_r->r_cfg));
    decision_note_refusals(d);
    verdict_error(&d->d_v, "%s", a->ka_error ? a->ka_error : "the API server refused");
    verdict_reason_append(&d->d_v, "the %s of %s/%s failed%s", action_name(d->d_r->r_cfg),
                          c->pc_namespace, c->pc_name, why);
    decision_finish(d, RESULT_FAILED);
}

static void
act_cb(struct kube_answer *a, void *arg)
{
    struct decision *d = arg;
    const struct policy_candidate *c = ranked(d, d->d_next);
    size_t used;
    char why[96];

    if (a->ka_cancelled) {
        decision_interrupt(d);
        return;
    }
    switch (a->ka_class) {
    case KUBE_OK:
        recycled(d, c, d->d_r->r_cfg->c_action == ACTION_DELETE ? "deleted" : "evicted");
        return;
    case KUBE_GONE:
        recycled(d, c, "already gone (404):");
        return;
    case KUBE_CONFLICT:
        /* The UID precondition failed: the pod decided on is gone and a
         * replacement holds its name. Done; the replacement is never chased. */
        recycled(d, c,
                 "already gone, replaced under its name (409 on the UID "
                 "precondition; the replacement is left alone):");
        return;
    case KUBE_PDB_REFUSED:
        used = strlen(d->d_refusals);
        snprintf(d->d_refusals + used, sizeof(d->d_refusals) - used, "%s%s/%s: %s",
                 used ? "; " : "", c->pc_namespace, c->pc_name,
                 a->ka_error ? a->ka_error : "refused by a PodDisruptionBudget");
        log_event(LOG_LEVEL_INFO,
                  "eviction refused by a PodDisruptionBudget; next candidate",
                  "namespace", c->pc_namespace, "pod", c->pc_name, (char *)NULL);
        d->d_throttled = 0;
        if (++d->d_next < d->d_gr->gr_policy.pr_ranked_count) {
            act_try(d);
            return;
        }
        verdict_set_victim(&d->d_v, ranked(d, 0), action_name(d->d_r->r_cfg));
        verdict_reason_append(&d->d_v,
                              "every candidate was refused by a PodDisruptionBudget, so "
                              "nothing was recycled: %s",
                              d->d_refusals);
        verdict_error(&d->d_v, "%s", d->d_refusals);
        decision_finish(d, RESULT_BLOCKED);
        return;
    case KUBE_THROTTLED:
        /* Not a refusal: the server shed the request unread. Same pod, later. */
        if (++d->d_throttled < THROTTLE_TRIES && !d->d_r->r_stopping &&
            retry_later(d, a, c) == 0)
            return;
        snprintf(why, sizeof(why), ": API server throttled (%d of %d tries answered 429)",
                 d->d_throttled, THROTTLE_TRIES);
        act_failed(d, c, a, why);
        return;
    case KUBE_FORBIDDEN:
    case KUBE_ERROR:
        act_failed(d, c, a, "");
        return;
    }
}

static void
act_try(struct decision *d)
{
    struct remedy *r = d->d_r;
    const struct policy_candidate *c = ranked(d, d->d_next);
    const char *uid = c->pc_pod ? c->pc_pod->p_uid : NULL;
    int rc;

    if (uid == NULL) { /* can't happen: eligible pods come from the pod list */
        verdict_error(&d->d_v, "the chosen pod has no UID");
        decision_finish(d, RESULT_FAILED);
        return;
    }
    if (fence_first(d, act_try)) /* HA: the Lease records the act first */
        return;
    d->d_phase = PH_ACT;
    if (r->r_cfg->c_action == ACTION_DELETE)
        rc = kube_delete_pod(r->r_kube, c->pc_namespace, c->pc_name, uid, 0, act_cb, d);
    else
        rc = kube_evict(r->r_kube, c->pc_namespace, c->pc_name, uid, 0, act_cb, d);
    if (rc == -1) {
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_error(&d->d_v, "the %s request could not be started",
                      action_name(r->r_cfg));
        decision_finish(d, RESULT_FAILED);
    }
}

/* --- the dry-run probe --------------------------------------------------- */

/* The dry-run probe's answer is recorded; nothing changed either way. */
static void
probe_cb(struct kube_answer *a, void *arg)
{
    struct decision *d = arg;
    const char *what = d->d_r->r_cfg->c_action == ACTION_DELETE ? "deletion" : "eviction";

    if (a->ka_cancelled) {
        decision_interrupt(d);
        return;
    }
    switch (a->ka_class) {
    case KUBE_OK:
        verdict_reason_append(&d->d_v, "a dry-run %s was accepted by the API server",
                              what);
        break;
    case KUBE_PDB_REFUSED:
        verdict_reason_append(&d->d_v,
                              "a dry-run %s says a PodDisruptionBudget would refuse: %s",
                              what, a->ka_error ? a->ka_error : "");
        break;
    default:
        verdict_reason_append(&d->d_v, "the dry-run %s probe failed: %s", what,
                              a->ka_error ? a->ka_error : kube_class_name(a->ka_class));
        break;
    }
    decision_finish(d, RESULT_WOULD_RECYCLE);
}

/* --- cooperative release first ------------------------------------------- */

/* The tenant's ask ended: released, or on to the recycle as usual. */
static void
release_done(const struct release_outcome *o, void *arg)
{
    struct decision *d = arg;
    struct remedy *r = d->d_r;

    decision_release_record(d, o);
    release_free(d->d_release);
    d->d_release = NULL;
    if (o->ro_cancelled) {
        decision_interrupt(d);
        return;
    }
    if (o->ro_released) {
        /* Nothing recycled: no SETTLE window, not counted by the hourly brake. */
        metrics_free_vram_gpu(d->d_v.vd_d.sd_node, d->d_v.vd_d.sd_gpu, o->ro_free_mib);
        verdict_reason_append(&d->d_v,
                              "asked to release first; free VRAM back to %lld MiB "
                              "(%+lld MiB) after %.1f s, so nothing was recycled",
                              (long long)o->ro_free_mib, (long long)o->ro_freed_mib,
                              o->ro_seconds);
        decision_finish(d, RESULT_RELEASED);
        return;
    }
    verdict_reason_append(&d->d_v,
                          "asked to release first, but the release did not free "
                          "enough: %s",
                          o->ro_why);
    if (brakes_rate_limited(r, d,
                            clock_mono_s())) { /* the hour filled up while it waited */
        verdict_reason_append(&d->d_v,
                              "MAX_RECYCLES_PER_HOUR=%lld reached meanwhile; not acting",
                              (long long)r->r_cfg->c_max_recycles_per_hour);
        decision_finish(d, RESULT_RATE_LIMITED);
        return;
    }
    d->d_next = 0;
    brakes_seat_take(d);
    act_try(d);
}

/*
 * Before an enforcing recycle of c, asks it to release its VRAM when it
 * declares RELEASE_ANNOTATION (SPEC "Cooperative release"). Returns 1 when
 * the decision now waits on the ask (release_done() goes on), 0 to recycle
 * at once: no annotation, RELEASE_WAIT=0, already asked, a malformed
 * annotation, no pod IP or the host network (each said in the reason), a
 * dry run (the URL is recorded, nothing is asked).
 */
static int
release_begin(struct decision *d, const struct policy_candidate *c)
{
    struct remedy *r = d->d_r;
    const struct config *cfg = r->r_cfg;
    const struct pod *p = c->pc_pod;
    struct release_target t;
    char err[256];

    if (cfg->c_release_wait_ms <= 0 || p == NULL || p->p_release == NULL ||
        d->d_release_asked)
        return 0;
    d->d_release_asked = 1;
    if (release_annotation_parse(p->p_release, &t, err, sizeof(err)) == -1) {
        verdict_reason_append(&d->d_v,
                              "%s on %s/%s is not PORT/PATH (%s), so it was not "
                              "asked to release",
                              cfg->c_release_annotation, c->pc_namespace, c->pc_name,
                              err);
        return 0;
    }
    if (p->p_host_network) {
        verdict_reason_append(&d->d_v,
                              "%s/%s runs on the host network, so it was not asked "
                              "to release",
                              c->pc_namespace, c->pc_name);
        return 0;
    }
    if (release_url(p->p_ip, &t, d->d_release_url, sizeof(d->d_release_url), err,
                    sizeof(err)) == -1) {
        verdict_reason_append(&d->d_v, "%s/%s was not asked to release: %s",
                              c->pc_namespace, c->pc_name, err);
        return 0;
    }
    d->d_rel.sr_url = d->d_release_url;
    d->d_v.vd_d.sd_release = &d->d_rel;
    if (cfg->c_dry_run) {
        verdict_reason_append(&d->d_v,
                              "DRY_RUN: would first ask %s/%s to release (POST %s)",
                              c->pc_namespace, c->pc_name, d->d_release_url);
        return 0;
    }
    d->d_release = release_start(
        r->r_base, cfg, r->r_release_client, r->r_prom, d->d_v.vd_d.sd_node,
        d->d_v.vd_d.sd_gpu, d->d_release_url, d->d_gr->gr_policy.pr_free_mib,
        decision_free_target(d), d->d_gr->gr_policy.pr_free_source, release_done, d);
    if (d->d_release == NULL) {
        verdict_reason_append(&d->d_v, "the release could not be asked (out of memory)");
        return 0;
    }
    d->d_phase = PH_RELEASE;
    verdict_set_victim(&d->d_v, c, action_name(cfg));
    log_event(LOG_LEVEL_INFO, "asking the victim to release VRAM", "namespace",
              c->pc_namespace, "pod", c->pc_name, "url", d->d_release_url, (char *)NULL);
    /* Still in_progress, but the audit already names the victim and the ask. */
    decision_record_progress(d, "release not recorded before its wait");
    return 1;
}

/* --- act ----------------------------------------------------------------- */

void
act_begin(struct decision *d)
{
    struct remedy *r = d->d_r;
    const struct policy_candidate *c = ranked(d, 0);
    double now = clock_mono_s();
    const char *uid = c->pc_pod ? c->pc_pod->p_uid : "";

    if (brakes_rate_limited(r, d, now)) {
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_reason_append(&d->d_v,
                              "MAX_RECYCLES_PER_HOUR=%lld reached within the last hour; "
                              "not acting",
                              (long long)r->r_cfg->c_max_recycles_per_hour);
        decision_finish(d, RESULT_RATE_LIMITED);
        return;
    }
    if (r->r_kube == NULL) { /* can't happen: no pods were listed without it */
        verdict_error(&d->d_v, "no Kubernetes API server is configured");
        decision_finish(d, RESULT_SKIPPED_KUBE);
        return;
    }
    if (release_begin(d, c))
        return; /* release_done() goes on */
    if (r->r_cfg->c_dry_run) {
        int rc;
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_reason_append(&d->d_v, "DRY_RUN: nothing was changed");
        brakes_count_recycle(r, now);
        brakes_open_settle_window(d, c, now);
        d->d_phase = PH_PROBE;
        if (r->r_cfg->c_action == ACTION_DELETE)
            rc = kube_delete_pod(r->r_kube, c->pc_namespace, c->pc_name, uid, 1, probe_cb,
                                 d);
        else
            rc = kube_evict(r->r_kube, c->pc_namespace, c->pc_name, uid, 1, probe_cb, d);
        if (rc == -1)
            decision_finish(d, RESULT_WOULD_RECYCLE);
        return;
    }
    d->d_next = 0;
    brakes_seat_take(d);
    act_try(d);
}
