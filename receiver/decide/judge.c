/* judge.c -- evidence in: judge the node, or one decision per GPU below the floor */
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "remedy_int.h"

/* Puts the free VRAM seen into the gauge ({node,gpu} in GPU scope). */
static void
note_free(const char *node, const struct gather_answer *gr)
{
    const struct policy_answer *p = &gr->gr_policy;

    if (gr->gr_gpu_count == 0 && gr->gr_status != GATHER_TELEMETRY && p->pr_free_known &&
        p->pr_outcome != POLICY_SKIPPED_TELEMETRY)
        metrics_free_vram_gpu(node, gr->gr_gpu, p->pr_free_mib);
}

/* Records and acts on one answer: the node's, or one GPU's. */
static void
judge(struct decision *d, const struct gather_answer *gr)
{
    const struct policy_answer *p = &gr->gr_policy;
    enum decision_result result;

    d->d_gr = gr;
    result = verdict_from_gather(&d->d_v, gr, d->d_r->r_cfg);
    /* The GPU's name as the brake holds it, whatever the gather calls it. */
    if (d->d_v.vd_d.sd_gpu != NULL && d->d_node != NULL && d->d_node->n_gpu != NULL)
        d->d_v.vd_d.sd_gpu = d->d_node->n_gpu;
    note_free(d->d_v.vd_d.sd_node, gr);
    if (gr->gr_status == GATHER_DECIDED && p->pr_outcome == POLICY_SKIPPED_RECOVERED &&
        predict_wanted(d))
        predict_begin(d); /* at or above the floor: the trend decides */
    else if (gr->gr_status == GATHER_DECIDED && p->pr_outcome == POLICY_VICTIM)
        act_begin(d);
    else
        decision_finish(d, result);
}

/* The first GPU below the floor takes over the node-wide decision d and its
 * row (its brake moves from the node to that GPU). */
static void
adopt(struct decision *d, const struct gather_answer *u)
{
    struct node_state *n = brakes_node_get(d->d_r, d->d_node->n_name, u->gr_gpu);
    char reason[1024];

    d->d_node->n_busy = 0;
    d->d_node = NULL;
    d->d_v.vd_d.sd_gpu = u->gr_gpu; /* held by d's gather until d is freed */
    if (n == NULL) {
        verdict_error(&d->d_v, "too many nodes tracked, or out of memory");
        decision_finish(d, RESULT_FAILED);
        return;
    }
    d->d_v.vd_d.sd_node = n->n_name;
    if (brakes_held_back(n, clock_mono_s(), reason, sizeof(reason))) {
        d->d_v.vd_d.sd_gpu = n->n_gpu;
        verdict_reason(&d->d_v, "%s", reason);
        decision_finish(d, RESULT_COALESCED);
        return;
    }
    d->d_node = n;
    n->n_busy = 1;
    judge(d, u);
}

/* A decision of its own for GPU unit u of d's node, sharing d's gather g;
 * NULL when held back, queued or not started (then its row is already
 * recorded). */
static struct decision *
spawn(struct decision *d, struct gather *g, const struct gather_answer *u, double now)
{
    struct remedy *r = d->d_r;
    const char *node = d->d_node->n_name;
    struct node_state *n = brakes_node_get(r, node, u->gr_gpu);
    struct decision *c;
    char reason[1024];

    if (n == NULL) {
        decision_record_now_gpu(r, node, u->gr_gpu, d->d_trigger, d->d_fingerprint,
                                d->d_alert_id, RESULT_FAILED, "no decision was started",
                                "too many nodes tracked, or out of memory");
        return NULL;
    }
    if (brakes_held_back(n, now, reason, sizeof(reason))) {
        decision_record_now_gpu(r, node, u->gr_gpu, d->d_trigger, d->d_fingerprint,
                                d->d_alert_id, RESULT_COALESCED, reason, NULL);
        return NULL;
    }
    /* MAX_CONCURRENT_DECISIONS holds for a node's GPUs too: past it, this
     * GPU waits its turn and then looks afresh (its evidence would be stale). */
    if (dqueue_must_wait(r)) {
        dqueue_push(r, n, d->d_trigger, d->d_fingerprint, d->d_starving_ns,
                    d->d_alert_id);
        return NULL;
    }
    c = decision_new(r, n, d->d_trigger, d->d_fingerprint, d->d_starving_ns,
                     d->d_alert_id, now);
    if (c != NULL) {
        gather_hold(g);
        c->d_g = g;
    }
    return c;
}

/* GPU scope from a trigger naming no GPU: each GPU below the floor (or
 * unreadable) gets its own decision and row, the first one d's; none below:
 * d ends skipped_recovered with gpu null. */
static void
fan_out(struct decision *d, struct gather *g, const struct gather_answer *gr)
{
    const struct gather_answer *first = NULL;
    struct decision **kids;
    size_t i;
    double now = clock_mono_s();

    for (i = 0; i < gr->gr_gpu_count; i++)
        note_free(d->d_node->n_name, &gr->gr_gpus[i]);
    if ((kids = calloc(gr->gr_gpu_count, sizeof(*kids))) == NULL) {
        verdict_error(&d->d_v, "out of memory");
        decision_finish(d, RESULT_FAILED);
        return;
    }
    gather_hold(g); /* d may end before its siblings are judged */
    for (i = 0; i < gr->gr_gpu_count; i++) {
        if (gather_answer_recovered(&gr->gr_gpus[i]) && !predict_wanted(d))
            continue; /* a prediction is about GPUs still at or above the floor */
        if (first == NULL)
            first = &gr->gr_gpus[i];
        else
            kids[i] = spawn(d, g, &gr->gr_gpus[i], now);
    }
    if (first == NULL)
        judge(d, gr);
    else
        adopt(d, first);
    for (i = 0; i < gr->gr_gpu_count; i++)
        if (kids[i] != NULL)
            judge(kids[i], &gr->gr_gpus[i]);
    free(kids);
    gather_free(g);
}

/* A trigger naming a GPU on a node whose series carry no GPU label: the node
 * is in node scope, so the node's brake holds the decision, not the GPU's
 * (else a trigger naming another GPU, or none, would pass a SETTLE window
 * opened for the node). Returns 0 when d now holds the node's brake, -1 when
 * it ended (coalesced behind the node, or failed). */
static int
to_node_scope(struct decision *d)
{
    /* Got before d lets go of its GPU's state, which may then be forgotten. */
    struct node_state *n = brakes_node_get(d->d_r, d->d_node->n_name, NULL);
    char reason[1024];

    d->d_node->n_busy = 0;
    d->d_node = NULL;
    d->d_v.vd_d.sd_gpu = NULL;
    if (n == NULL) {
        verdict_error(&d->d_v, "too many nodes tracked, or out of memory");
        decision_finish(d, RESULT_FAILED);
        return -1;
    }
    d->d_v.vd_d.sd_node = n->n_name;
    if (brakes_held_back(n, clock_mono_s(), reason, sizeof(reason))) {
        verdict_reason(&d->d_v, "%s", reason);
        decision_finish(d, RESULT_COALESCED);
        return -1;
    }
    d->d_node = n;
    n->n_busy = 1;
    return 0;
}

void
judge_gathered(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct decision *d = arg;

    d->d_gr = gr;
    if (gr->gr_status == GATHER_CANCELLED) {
        decision_interrupt(d); /* shutdown: the row says so, never stays in_progress */
        return;
    }
    if (gr->gr_gpu_count > 0) {
        fan_out(d, g, gr);
        return;
    }
    if (gr->gr_status == GATHER_DECIDED && gr->gr_gpu == NULL && d->d_node != NULL &&
        d->d_node->n_gpu != NULL && to_node_scope(d) == -1)
        return;
    judge(d, gr);
}

/* d's GPU's answer among a shared reading's (sorted by GPU), or NULL. */
static const struct gather_answer *
unit_of(const struct gather_answer *gr, const char *gpu)
{
    size_t lo = 0, hi = gr->gr_gpu_count, mid;
    int c;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if ((c = strcmp(gr->gr_gpus[mid].gr_gpu, gpu)) == 0)
            return &gr->gr_gpus[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void
judge_batch(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct dq_batch *b = arg;
    const struct gather_answer *u;
    struct decision *d;

    for (size_t i = 0; i < b->b_count; i++) {
        if ((d = b->b_d[i]) == NULL)
            continue; /* freed while it waited (the daemon stopping) */
        b->b_d[i] = NULL;
        d->d_batch = NULL;
        /* Its own GPU's answer, judged as its own reading would be; an answer
         * about the whole node (unreadable, node scope, cancelled) as it is. */
        if (gr->gr_gpu_count == 0 || gr->gr_status == GATHER_CANCELLED) {
            judge_gathered(g, gr, d);
        } else if ((u = unit_of(gr, d->d_node->n_gpu)) != NULL) {
            judge_gathered(g, u, d);
        } else { /* can't happen: every GPU asked for has its answer */
            verdict_error(&d->d_v, "the shared reading has no result for this GPU");
            decision_finish(d, RESULT_FAILED);
        }
    }
    gather_free(b->b_g); /* the batch's hold; each decision keeps its own */
    free(b);
}
