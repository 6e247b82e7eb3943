/* fence.c -- high availability: an eviction or a deletion is recorded in the Lease
 * (gate.h) before it is sent, and sent only when that write succeeded
 *
 * Without leader election the gate answers "go" at once and nothing here
 * waits. With it, the leader's PUT of the Lease with the version it last read
 * is the fence: a replica that lost the Lease (another wrote it since), or
 * whose last renewal is older than the renew deadline, gets no "go", and the
 * decision ends failed naming the Lease, having touched nothing. */
#include <stdio.h>

#include "gate.h"
#include "log.h"
#include "remedy_int.h"

static const struct policy_candidate *
candidate(const struct decision *d)
{
    return &d->d_gr->gr_policy.pr_candidates[d->d_next];
}

/* The act was not recorded: nothing is sent, the decision ends failed. */
static void
not_fenced(struct decision *d, const char *why)
{
    const struct policy_candidate *c = candidate(d);
    const char *act = action_name(d->d_r->r_cfg);

    log_event(LOG_LEVEL_WARN, "not acting: the act could not be recorded in the Lease",
              "namespace", c->pc_namespace, "pod", c->pc_name, "why", why, (char *)NULL);
    verdict_set_victim(&d->d_v, c, act);
    decision_note_refusals(d);
    verdict_reason_append(&d->d_v,
                          "the %s of %s/%s was not sent: it could not be recorded in the "
                          "Lease first, and only the replica that holds the Lease acts",
                          act, c->pc_namespace, c->pc_name);
    verdict_error(&d->d_v, "lease: %s", why);
    decision_finish(d, RESULT_FAILED);
}

static void
fenced_cb(int ok, int cancelled, const char *why, void *arg)
{
    struct decision *d = arg;
    const struct policy_candidate *c = candidate(d);

    d->d_fence = NULL;
    if (ok) {
        d->d_fenced = 1;
        d->d_fence_again(d);
        return;
    }
    if (cancelled) {
        verdict_set_victim(&d->d_v, c, action_name(d->d_r->r_cfg));
        decision_note_refusals(d);
        verdict_reason_append(&d->d_v,
                              "the daemon stopped before the %s of %s/%s was recorded in "
                              "the Lease; nothing was sent",
                              action_name(d->d_r->r_cfg), c->pc_namespace, c->pc_name);
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        decision_finish(d, RESULT_FAILED);
        return;
    }
    not_fenced(d, why);
}

int
fence_first(struct decision *d, void (*again)(struct decision *d))
{
    const struct policy_candidate *c = candidate(d);
    struct gate_act a = {
        .ga_verb = action_name(d->d_r->r_cfg),
        .ga_namespace = c->pc_namespace,
        .ga_pod = c->pc_name,
        .ga_node = d->d_v.vd_d.sd_node,
        .ga_gpu = d->d_v.vd_d.sd_gpu,
    };
    char why[1024];

    if (d->d_fenced) { /* recorded: send it now */
        d->d_fenced = 0;
        return 0;
    }
    switch (gate_fence(&a, fenced_cb, d, &d->d_fence, why, sizeof(why))) {
    case GATE_GO:
        return 0;
    case GATE_WAIT:
        d->d_fence_again = again;
        d->d_phase = PH_ACT; /* a stop waits for it, as for the act itself */
        return 1;
    case GATE_REFUSED:
        break;
    }
    not_fenced(d, why);
    return 1;
}
