/* dqueue.c -- MAX_CONCURRENT_DECISIONS: decisions beyond it wait their turn, in order */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metrics.h"
#include "remedy_int.h"

/*
 * A trigger that finds MAX_CONCURRENT_DECISIONS decisions in flight (or others
 * already waiting) is queued, first in, first out; none is dropped. Its audit
 * row is written at once, in_progress, with a reason saying it waits, so an
 * acknowledged alert is never silent: a crash leaves the row, which the next
 * start marks interrupted. Its node (or GPU) is marked busy while it waits, so
 * later triggers for it are coalesced at once, as for a decision in flight;
 * that also bounds the queue by the node table (MAX_NODES). When a slot frees
 * (from the loop, never inside another decision's teardown), the oldest entry
 * is looked at again: inside a SETTLE window opened meanwhile it ends
 * coalesced; else it starts on the same row.
 */
struct dq_entry {
    struct node_state *q_node; /* borrowed: busy (so never forgotten) while queued */
    char *q_trigger;           /* owned */
    char *q_fingerprint;       /* owned */
    char *q_starving_ns;       /* owned, may be NULL */
    int64_t q_alert_id;
    int64_t q_row; /* the audit row, in_progress */
    struct dq_entry *q_next;
};

static void
entry_free(struct dq_entry *q)
{
    free(q->q_trigger);
    free(q->q_fingerprint);
    free(q->q_starving_ns);
    free(q);
}

static size_t
max_in_flight(const struct remedy *r)
{
    int64_t m = r->r_cfg->c_max_concurrent_decisions;

    return m > 0 ? (size_t)m : 1; /* config refuses 0; a zeroed test config still works */
}

int
dqueue_must_wait(const struct remedy *r)
{
    return r->r_q_head != NULL || r->r_in_flight >= max_in_flight(r);
}

/* Completes a queued entry's row with result, without starting it. */
static void
entry_end(struct remedy *r, struct dq_entry *q, enum decision_result result,
          const char *reason, const char *error)
{
    struct node_state *n = q->q_node;
    struct verdict v;
    char err[512], id[32];

    verdict_init(&v, r->r_cfg, n->n_name, q->q_trigger, q->q_fingerprint, q->q_alert_id);
    v.vd_d.sd_gpu = n->n_gpu;
    verdict_set_result(&v, result);
    verdict_reason(&v, "%s", reason);
    if (error != NULL)
        verdict_error(&v, "%s", error);
    if (r->r_store == NULL ||
        store_decision_finish(r->r_store, q->q_row, &v.vd_d, err, sizeof(err)) == -1)
        log_event(LOG_LEVEL_ERROR, "queued decision row not completed", "node", n->n_name,
                  "result", decision_result_name(result), "error",
                  r->r_store ? err : "audit store not open", (char *)NULL);
    metrics_decision(result, -1);
    snprintf(id, sizeof(id), "%lld", (long long)q->q_row);
    log_event(LOG_LEVEL_INFO, "decision", "id", id, "node", n->n_name, "trigger",
              q->q_trigger, "result", decision_result_name(result), "reason", reason,
              "error", error ? error : "", v.vd_d.sd_gpu ? "gpu" : NULL, v.vd_d.sd_gpu,
              (char *)NULL);
    verdict_free(&v);
}

void
dqueue_launch(struct remedy *r, struct node_state *n, const char *trigger, const char *fp,
              const char *starving_ns, int64_t alert_id, int64_t row)
{
    struct decision *d;

    if ((d = decision_new_row(r, n, trigger, fp, starving_ns, alert_id, clock_mono_s(),
                              row)) == NULL)
        return;
    d->d_g = gather_start_gpu(r->r_base, r->r_cfg, r->r_prom, r->r_kube, n->n_name,
                              n->n_gpu, d->d_starving_ns, judge_gathered, d);
    if (d->d_g == NULL) {
        verdict_error(&d->d_v, "out of memory");
        decision_finish(d, RESULT_FAILED);
    }
}

void
dqueue_push(struct remedy *r, struct node_state *n, const char *trigger, const char *fp,
            const char *starving_ns, int64_t alert_id)
{
    struct dq_entry *q;
    struct verdict v;
    char err[512];

    if ((q = calloc(1, sizeof(*q))) == NULL || (q->q_trigger = strdup(trigger)) == NULL ||
        (q->q_fingerprint = strdup(fp ? fp : "")) == NULL ||
        (starving_ns != NULL && (q->q_starving_ns = strdup(starving_ns)) == NULL)) {
        if (q != NULL)
            entry_free(q);
        decision_record_now_gpu(r, n->n_name, n->n_gpu, trigger, fp, alert_id,
                                RESULT_FAILED, "no decision was queued", "out of memory");
        return;
    }
    q->q_node = n;
    q->q_alert_id = alert_id;
    verdict_init(&v, r->r_cfg, n->n_name, q->q_trigger, q->q_fingerprint, alert_id);
    v.vd_d.sd_gpu = n->n_gpu;
    verdict_reason(&v,
                   "queued: %zu decisions in flight (MAX_CONCURRENT_DECISIONS=%zu), %zu "
                   "waiting before it",
                   r->r_in_flight, max_in_flight(r), r->r_queued);
    if (r->r_store == NULL ||
        store_decision_start(r->r_store, &v.vd_d, &q->q_row, err, sizeof(err)) == -1) {
        /* Never act on what cannot be recorded (as decision_new). */
        log_event(LOG_LEVEL_ERROR,
                  "decision not queued: the audit store cannot record it", "node",
                  n->n_name, "error", r->r_store ? err : "audit store not open",
                  (char *)NULL);
        metrics_decision(RESULT_FAILED, -1);
        verdict_free(&v);
        entry_free(q);
        return;
    }
    verdict_free(&v);
    n->n_busy = 1; /* later triggers for it coalesce, as behind a decision in flight */
    *r->r_q_tail = q;
    r->r_q_tail = &q->q_next;
    r->r_queued++;
    metrics_decisions_queued_set(r->r_queued);
}

static struct dq_entry *
pop(struct remedy *r)
{
    struct dq_entry *q = r->r_q_head;

    if (q == NULL)
        return NULL;
    if ((r->r_q_head = q->q_next) == NULL)
        r->r_q_tail = &r->r_q_head;
    r->r_queued--;
    metrics_decisions_queued_set(r->r_queued);
    q->q_node->n_busy = 0;
    return q;
}

/* Whether two entries may share one reading: GPUs of one node, for triggers
 * with the same starving namespace (the policy's only per-trigger input). */
static int
same_look(const struct dq_entry *a, const struct dq_entry *b)
{
    const char *x = a->q_starving_ns, *y = b->q_starving_ns;

    return a->q_node->n_gpu != NULL && b->q_node->n_gpu != NULL &&
           strcmp(a->q_node->n_name, b->q_node->n_name) == 0 &&
           (x == NULL || y == NULL ? x == y : strcmp(x, y) == 0);
}

static int
cmp_look(const void *pa, const void *pb)
{
    const struct dq_entry *a = *(const struct dq_entry *const *)pa;
    const struct dq_entry *b = *(const struct dq_entry *const *)pb;
    const char *x = a->q_starving_ns ? a->q_starving_ns : "";
    const char *y = b->q_starving_ns ? b->q_starving_ns : "";
    int c;

    if ((c = strcmp(a->q_node->n_name, b->q_node->n_name)) != 0)
        return c;
    if ((c = (a->q_starving_ns != NULL) - (b->q_starving_ns != NULL)) != 0)
        return c;
    if ((c = strcmp(x, y)) != 0)
        return c;
    return a->q_row < b->q_row ? -1 : a->q_row > b->q_row;
}

/*
 * Starts go[0..n) (GPU entries of one node, same_look) on one shared reading:
 * their decisions' rows are the queued ones; the reading is asked once for
 * all their GPUs, not once each (a fan-out of 256 GPUs re-read an 8 MiB
 * answer 240 times, and 16 such answers landing in one loop turn held the
 * loop for seconds).
 */
static void
launch_shared(struct remedy *r, struct dq_entry **go, size_t n)
{
    struct dq_batch *b = calloc(1, sizeof(*b) + n * sizeof(b->b_d[0]));
    const char **gpus = calloc(n, sizeof(*gpus));
    struct decision *d;
    size_t i, k = 0;

    for (i = 0; i < n; i++) {
        struct dq_entry *q = go[i];
        if ((d = decision_new_row(r, q->q_node, q->q_trigger, q->q_fingerprint,
                                  q->q_starving_ns, q->q_alert_id, clock_mono_s(),
                                  q->q_row)) == NULL)
            continue;
        if (b == NULL || gpus == NULL) {
            verdict_error(&d->d_v, "out of memory");
            decision_finish(d, RESULT_FAILED);
            continue;
        }
        d->d_batch = b;
        d->d_batch_at = k;
        b->b_d[k] = d;
        gpus[k++] = q->q_node->n_gpu;
    }
    if (k == 0)
        goto done;
    b->b_count = k;
    b->b_g = gather_start_gpus(r->r_base, r->r_cfg, r->r_prom, r->r_kube,
                               b->b_d[0]->d_node->n_name, gpus, k,
                               b->b_d[0]->d_starving_ns, judge_batch, b);
    for (i = 0; i < k; i++) {
        if ((d = b->b_d[i]) == NULL)
            continue;
        if (b->b_g == NULL) {
            d->d_batch = NULL;
            b->b_d[i] = NULL;
            verdict_error(&d->d_v, "out of memory");
            decision_finish(d, RESULT_FAILED);
            continue;
        }
        gather_hold(b->b_g);
        d->d_g = b->b_g;
    }
    if (b->b_g != NULL)
        b = NULL; /* judge_batch frees it */
done:
    free(gpus);
    free(b);
}

/* Starts the oldest entries while slots are free; GPU entries of one node
 * started together share one reading. */
static void
pump_cb(evutil_socket_t fd, short what, void *arg)
{
    struct remedy *r = arg;
    struct dq_entry *q, **go;
    struct node_state *n, *whole;
    char reason[1024];
    size_t room, planned = 0, i, j;
    double now;

    if (r->r_stopping || r->r_in_flight >= max_in_flight(r) || r->r_q_head == NULL)
        return;
    room = max_in_flight(r) - r->r_in_flight;
    if (room > r->r_queued)
        room = r->r_queued;
    if ((go = calloc(room, sizeof(*go))) == NULL) {
        dqueue_kick(r); /* out of memory: try again next turn */
        return;
    }
    while (planned < room && (q = pop(r)) != NULL) {
        n = q->q_node;
        now = clock_mono_s();
        /* The brakes again: a SETTLE window may have opened while it waited. */
        if (brakes_held_back(n, now, reason, sizeof(reason)) ||
            (n->n_gpu != NULL && (whole = brakes_node_get(r, n->n_name, NULL)) != NULL &&
             brakes_held_back(whole, now, reason, sizeof(reason)))) {
            entry_end(r, q, RESULT_COALESCED, reason, NULL);
            entry_free(q);
            continue;
        }
        n->n_busy = 1; /* as queued: held until its decision takes it */
        go[planned++] = q;
    }
    /* Grouped by node (then starving namespace, then queue order): n log n. */
    if (planned > 1)
        qsort(go, planned, sizeof(*go), cmp_look);
    for (i = 0; i < planned; i = j) {
        for (j = i + 1; j < planned && same_look(go[i], go[j]); j++)
            ;
        for (size_t k = i; k < j; k++)
            go[k]->q_node->n_busy = 0;
        if (j - i > 1) {
            launch_shared(r, go + i, j - i);
        } else {
            q = go[i];
            dqueue_launch(r, q->q_node, q->q_trigger, q->q_fingerprint, q->q_starving_ns,
                          q->q_alert_id, q->q_row);
        }
    }
    for (i = 0; i < planned; i++)
        entry_free(go[i]);
    free(go);
    dqueue_kick(r); /* slots freed meanwhile (a decision that ended at once) */
}

int
dqueue_init(struct remedy *r)
{
    r->r_q_tail = &r->r_q_head;
    r->r_slot_freed = dqueue_kick;
    return (r->r_q_ev = event_new(r->r_base, -1, 0, pump_cb, r)) == NULL ? -1 : 0;
}

void
dqueue_kick(struct remedy *r)
{
    if (r->r_q_head != NULL && r->r_q_ev != NULL && !r->r_stopping)
        event_active(r->r_q_ev, 0, 0);
}

void
dqueue_drain(struct remedy *r)
{
    struct dq_entry *q;

    while ((q = pop(r)) != NULL) {
        entry_end(r, q, RESULT_FAILED,
                  "the daemon stopped before this queued decision started; nothing was "
                  "looked at or recycled",
                  STORE_INTERRUPTED_ERROR);
        entry_free(q);
    }
}

void
dqueue_free(struct remedy *r)
{
    dqueue_drain(r);
    if (r->r_q_ev != NULL)
        event_free(r->r_q_ev);
    r->r_q_ev = NULL;
}
