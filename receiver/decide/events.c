/* events.c -- a Kubernetes Event on the victim pod for every decision that names one */
#include "events.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gate.h"
#include "kube.h"
#include "kube_event.h"
#include "log.h"
#include "metrics.h"

/* reportingInstance: the daemon's pod name, which is its hostname in a cluster. */
static const char *
instance(void)
{
    static char host[KUBE_EVENT_FIELD_MAX + 1];

    if (host[0] == '\0' && (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0'))
        snprintf(host, sizeof(host), "gpu-vram-watchdog");
    return host;
}

/* The victim's UID from the evidence, or NULL (then regarding has no uid). */
static const char *
victim_uid(const struct gather_answer *gr, const struct store_victim *v)
{
    const struct policy_answer *p;

    if (gr == NULL || gr->gr_status != GATHER_DECIDED)
        return NULL;
    p = &gr->gr_policy;
    for (size_t i = 0; i < p->pr_candidate_count; i++) {
        const struct policy_candidate *c = &p->pr_candidates[i];
        if (c->pc_pod != NULL && strcmp(c->pc_namespace, v->sv_namespace) == 0 &&
            strcmp(c->pc_name, v->sv_pod) == 0)
            return c->pc_pod->p_uid;
    }
    return NULL;
}

static void
event_cb(struct kube_answer *a, void *arg)
{
    (void)arg;
    if (a->ka_class == KUBE_OK)
        return;
    /* kube.c has logged the call; this says what it was for. */
    log_event(LOG_LEVEL_WARN, "event not written", "error",
              a->ka_error ? a->ka_error : "failed", (char *)NULL);
    metrics_event_error();
}

void
events_on_decision(struct kube *kube, const struct config *cfg,
                   const struct store_decision *d, int64_t audit_id,
                   const struct gather_answer *gr)
{
    const struct store_victim *v = d->sd_victim;
    enum decision_result res;
    struct kube_event ev;

    /* HA: only the leader writes Events (a decision that ended after this
     * replica lost the Lease is in its audit alone). */
    if (!cfg->c_events || kube == NULL || v == NULL || d->sd_result == NULL ||
        !gate_leading() || decision_result_parse(d->sd_result, &res) == -1 ||
        kube_event_reason(res) == NULL)
        return;
    memset(&ev, 0, sizeof(ev));
    ev.ke_namespace = v->sv_namespace;
    ev.ke_pod = v->sv_pod;
    ev.ke_uid = victim_uid(gr, v);
    ev.ke_reason = kube_event_reason(res);
    /* What was done: a release asked the pod itself; else the configured action. */
    ev.ke_action = res == RESULT_RELEASED ? "release"
                   : d->sd_action != NULL ? d->sd_action
                                          : "none";
    ev.ke_note = d->sd_reason;
    ev.ke_audit_id = audit_id;
    ev.ke_instance = instance();
    ev.ke_time_us = clock_wall_us();
    if (kube_create_event(kube, &ev, event_cb, NULL) == -1) {
        log_event(LOG_LEVEL_WARN, "event not written", "error",
                  "the request could not be started", (char *)NULL);
        metrics_event_error();
    }
}
