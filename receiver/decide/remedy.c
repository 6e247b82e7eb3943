/* remedy.c -- from a trigger alert to a recorded decision: brakes, act, verify */
#include "remedy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "events.h"
#include "gather.h"
#include "httpc.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "release.h"
#include "release_target.h"
#include "store.h"
#include "verdict.h"

#define MAX_NODES 1024       /* node states kept; alert labels are not trusted */
#define HOUR_S 3600.0
#define MAX_BRAKE_RING 4096
#define FINISH_RETRY_S 1     /* a decision row that could not be completed is retried */
#define FINISH_RETRIES 600   /* ... for ten minutes */  /* MAX_RECYCLES_PER_HOUR above this is no limit in practice */

/* Per node (in GPU scope per node and GPU): one decision at a time, and the
 * quiet window after a recycle. */
struct node_state {
    char *n_name;             /* owned */
    char *n_gpu;              /* owned; "" = the node (node scope, or GPUs not known yet) */
    int n_busy;               /* a decision is in flight */
    double n_settle_until;    /* monotonic seconds; 0 = no window */
    char n_last_victim[512];  /* for the coalesced reason */
    struct node_state *n_next;
};

/* Where a decision stands: what it waits on, and so how a stop completes it. */
enum phase {
    PH_GATHER,    /* reading Prometheus and the pod list */
    PH_ACT,       /* an eviction or deletion is in flight */
    PH_PROBE,     /* the dry-run probe is in flight */
    PH_RELEASE,   /* the victim was asked to release; waiting for the VRAM */
    PH_VERIFY,    /* recycled (and recorded); waiting for the VRAM to show */
    PH_FINISHING, /* ended; its row could not be completed yet */
};

struct decision {
    struct remedy *d_r;
    enum phase d_phase;
    int d_reserved;              /* holds one of the hourly brake's r_acting seats */
    struct node_state *d_node;   /* borrowed from d_r */
    char *d_trigger;             /* owned */
    char *d_fingerprint;         /* owned */
    char *d_starving_ns;         /* owned, may be NULL */
    int64_t d_alert_id;
    int64_t d_row;               /* the audit row, in_progress until finish */
    double d_t0;                 /* monotonic start */
    struct verdict d_v;
    struct gather *d_g;          /* owned: the evidence the verdict borrows from */
    const struct gather_result *d_gr; /* borrowed from d_g */
    size_t d_next;               /* next ranked candidate to try */
    int d_relisted;              /* a 409 already led to one fresh look */
    char d_refusals[1024];       /* PodDisruptionBudget refusals so far */
    struct gather *d_vg;         /* owned: a verify reading in flight */
    struct event *d_verify_ev;   /* owned; then the row-completion retry timer */
    int d_finish_tries;
    double d_recycled_at, d_verify_deadline;
    struct release *d_release;   /* owned: the ask in flight (PH_RELEASE) */
    int d_release_asked;         /* once per decision, whatever came of it */
    struct store_release d_rel;  /* vd_d.sd_release points here once a release is named */
    char d_release_url[RELEASE_URL_MAX];
    struct decision *d_next_in_list;
};

struct remedy {
    struct event_base *r_base;   /* borrowed */
    const struct config *r_cfg;  /* borrowed */
    struct prom *r_prom;         /* borrowed */
    struct kube *r_kube;         /* borrowed, may be NULL */
    struct store *r_store;       /* borrowed, may be NULL */
    struct httpc *r_release_client; /* owned; NULL when RELEASE_WAIT=0 */
    struct node_state *r_nodes;  /* owned list */
    size_t r_node_count;
    struct decision *r_decisions; /* owned list of unfinished decisions */
    size_t r_in_flight;
    size_t r_acting;             /* enforcing evictions/deletions sent, not yet answered */
    double *r_recycles;          /* owned ring: monotonic times of recent recycles */
    size_t r_recycle_count;
    int r_stopping;              /* remedy_shutdown() ran: no new decisions */
    void (*r_drained)(void *);   /* called once when the last decision is done */
    void *r_drained_arg;
};

/* Alert context carried while the GPU nodes are listed. */
struct fanout {
    struct remedy *f_r;
    char *f_trigger, *f_fingerprint, *f_starving_ns, *f_gpu; /* owned */
    int64_t f_alert_id;
};

static double
mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *
action_name(const struct config *cfg)
{
    return cfg->c_action == ACTION_DELETE ? "delete" : "evict";
}

/* --- the hourly brake ---------------------------------------------------- */

static size_t
recycles_last_hour(struct remedy *r, double now)
{
    size_t kept = 0;

    for (size_t i = 0; i < r->r_recycle_count; i++)
        if (r->r_recycles[i] > now - HOUR_S)
            r->r_recycles[kept++] = r->r_recycles[i];
    r->r_recycle_count = kept;
    return kept;
}

/* An eviction in flight holds a seat, so two decisions acting in the same
 * instant (two GPUs, two nodes) cannot both pass a brake with one seat left;
 * d's own seat does not count against it (a 409's fresh look acts again). */
static int
rate_limited(struct remedy *r, const struct decision *d, double now)
{
    int64_t max = r->r_cfg->c_max_recycles_per_hour;
    size_t others = r->r_acting - (d->d_reserved ? 1 : 0);

    return max > 0 && (int64_t)(recycles_last_hour(r, now) + others) >= max;
}

static void
seat_take(struct decision *d)
{
    if (!d->d_reserved) {
        d->d_reserved = 1;
        d->d_r->r_acting++;
    }
}

static void
seat_give_back(struct decision *d)
{
    if (d->d_reserved) {
        d->d_reserved = 0;
        d->d_r->r_acting--;
    }
}

static void
count_recycle(struct remedy *r, double now)
{
    int64_t max = r->r_cfg->c_max_recycles_per_hour;

    if (max <= 0)
        return;
    recycles_last_hour(r, now);
    if ((int64_t)r->r_recycle_count < max && r->r_recycle_count < MAX_BRAKE_RING)
        r->r_recycles[r->r_recycle_count++] = now;
}

/* --- node states --------------------------------------------------------- */

/* The state of node, created on first use; NULL when out of memory or full
 * of busy nodes. */
static struct node_state *
node_get(struct remedy *r, const char *name, const char *gpu)
{
    struct node_state *n, **pp;
    double now = mono_now();

    if (gpu == NULL)
        gpu = "";
    for (n = r->r_nodes; n != NULL; n = n->n_next)
        if (strcmp(n->n_name, name) == 0 && strcmp(n->n_gpu, gpu) == 0)
            return n;
    if (r->r_node_count >= MAX_NODES) {
        /* Forget idle nodes whose window has passed. */
        for (pp = &r->r_nodes; *pp != NULL;) {
            n = *pp;
            if (!n->n_busy && n->n_settle_until <= now) {
                *pp = n->n_next;
                free(n->n_name);
                free(n->n_gpu);
                free(n);
                r->r_node_count--;
            } else {
                pp = &n->n_next;
            }
        }
        if (r->r_node_count >= MAX_NODES)
            return NULL;
    }
    if ((n = calloc(1, sizeof(*n))) == NULL || (n->n_name = strdup(name)) == NULL ||
        (n->n_gpu = strdup(gpu)) == NULL) {
        if (n != NULL)
            free(n->n_name);
        free(n);
        return NULL;
    }
    n->n_next = r->r_nodes;
    r->r_nodes = n;
    r->r_node_count++;
    return n;
}

/* The candidate the decision's policy ranked at i (its GPU's in GPU scope). */
static const struct policy_candidate *
ranked(const struct decision *d, size_t i)
{
    const struct policy_result *p = &d->d_gr->gr_policy;

    return i < p->pr_candidate_count ? &p->pr_candidates[i] : NULL;
}

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
              d->sd_error ? d->sd_error : "", d->sd_gpu ? "gpu" : NULL, d->sd_gpu, NULL);
}

/* Records a decision that ends as it starts (coalesced, skipped_kube before a
 * node is known): one row, no queries. */
static void
record_now_gpu(struct remedy *r, const char *node, const char *gpu, const char *trigger,
               const char *fp, int64_t alert_id, const char *result, const char *reason,
               const char *error)
{
    struct verdict v;
    char err[512];
    int64_t id = 0;

    verdict_init(&v, r->r_cfg, node, trigger, fp, alert_id);
    v.vd_d.sd_gpu = gpu != NULL && gpu[0] != '\0' ? gpu : NULL;
    verdict_set_result(&v, result);
    verdict_reason(&v, "%s", reason);
    if (error != NULL)
        verdict_error(&v, "%s", error);
    if (r->r_store == NULL ||
        store_decision_record(r->r_store, &v.vd_d, &id, err, sizeof(err)) == -1)
        log_event(LOG_LEVEL_ERROR, "decision not recorded", "node", node, "result", result,
                  "error", r->r_store ? err : "audit store not open", NULL);
    metrics_decision(result, -1);
    log_decision(&v, id);
    verdict_free(&v);
}

static void
record_now(struct remedy *r, const char *node, const char *trigger, const char *fp,
           int64_t alert_id, const char *result, const char *reason, const char *error)
{
    record_now_gpu(r, node, NULL, trigger, fp, alert_id, result, reason, error);
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
static void
check_drained(struct remedy *r)
{
    void (*cb)(void *) = r->r_drained;

    if (!r->r_stopping || r->r_in_flight > 0 || cb == NULL)
        return;
    r->r_drained = NULL;
    cb(r->r_drained_arg);
}

/* Frees a decision, whatever state it is in. */
static void
decision_free(struct decision *d)
{
    struct remedy *r = d->d_r;

    decision_unlink(d);
    seat_give_back(d);
    d->d_r->r_in_flight--;
    if (d->d_node != NULL)
        d->d_node->n_busy = 0;
    if (d->d_verify_ev != NULL)
        event_free(d->d_verify_ev);
    release_free(d->d_release);
    gather_free(d->d_vg);
    verdict_free(&d->d_v);
    gather_free(d->d_g);
    free(d->d_trigger);
    free(d->d_fingerprint);
    free(d->d_starving_ns);
    free(d);
    check_drained(r);
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
              r->r_store ? err : "audit store not open", NULL);
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
                  d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, NULL);
        decision_free(d);
        return;
    }
    if (++d->d_finish_tries >= FINISH_RETRIES) {
        log_event(LOG_LEVEL_ERROR, "decision row abandoned: the audit store kept failing",
                  "node", d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, NULL);
        decision_free(d);
        return;
    }
    evtimer_add(d->d_verify_ev, &again);
}

/* Counts, logs, completes the audit row, frees. */
static void
finish(struct decision *d, const char *result)
{
    struct timeval again = {FINISH_RETRY_S, 0};

    verdict_set_result(&d->d_v, result);
    d->d_v.vd_d.sd_verify_pending = 0;
    metrics_decision(result, mono_now() - d->d_t0);
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

/* --- stopping ------------------------------------------------------------ */

static void note_refusals(struct decision *d);

/* The figures of an ask into the audit's release object. */
static void
release_record(struct decision *d, const struct release_outcome *o)
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
 * - the dry-run probe in flight: would_recycle, the probe said cut short;
 * - verifying: the recycle is already recorded; the verify is cut short with
 *   the free VRAM seen so far (or none) and the reason says the daemon stopped.
 */
static void
interrupt(struct decision *d)
{
    const struct config *cfg = d->d_r->r_cfg;
    const struct policy_candidate *c;
    double since = mono_now() - d->d_recycled_at;

    switch (d->d_phase) {
    case PH_GATHER:
        verdict_reason_append(&d->d_v, "the daemon stopped while this decision was "
                                       "gathering evidence; nothing was recycled");
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        finish(d, "failed");
        return;
    case PH_ACT:
        c = gather_candidate(d->d_g, d->d_next);
        verdict_set_victim(&d->d_v, c, action_name(cfg));
        note_refusals(d);
        verdict_reason_append(&d->d_v, "the daemon stopped while the %s of %s/%s was in "
                                       "flight",
                              action_name(cfg), c->pc_namespace, c->pc_name);
        verdict_error(&d->d_v, "interrupted: the daemon stopped before the API server "
                               "answered the %s; whether it took effect is unknown",
                      action_name(cfg));
        finish(d, "failed");
        return;
    case PH_PROBE:
        verdict_reason_append(&d->d_v, "the dry-run probe was cut short: the daemon stopped");
        finish(d, "would_recycle");
        return;
    case PH_RELEASE:
        if (d->d_release != NULL) {
            struct release_outcome o;
            release_outcome_now(d->d_release, &o);
            release_record(d, &o);
            release_free(d->d_release);
            d->d_release = NULL;
        }
        verdict_reason_append(&d->d_v, "the daemon stopped while waiting for the release; "
                                       "nothing was recycled");
        verdict_error(&d->d_v, "%s", STORE_INTERRUPTED_ERROR);
        finish(d, "failed");
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
        finish(d, "recycled");
        return;
    case PH_FINISHING:
        /* One last try; then the next start marks the row interrupted. */
        if (record_finish(d) == 0)
            log_event(LOG_LEVEL_INFO, "decision row completed late", "node",
                      d->d_v.vd_d.sd_node, "result", d->d_v.vd_d.sd_result, NULL);
        decision_free(d);
        return;
    }
}

/* --- verify -------------------------------------------------------------- */

static void verify_tick(evutil_socket_t fd, short what, void *arg);

static void
verify_schedule(struct decision *d)
{
    double settle = ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    double every = settle / 10.0;
    struct timeval tv;

    if (every < 0.2)
        every = 0.2;
    if (every > 2.0)
        every = 2.0;
    tv.tv_sec = (time_t)every;
    tv.tv_usec = (suseconds_t)((every - (double)tv.tv_sec) * 1e6);
    evtimer_add(d->d_verify_ev, &tv);
}

static void
verify_cb(struct gather *g, const struct gather_result *gr, void *arg)
{
    struct decision *d = arg;
    const struct policy_result *p = &gr->gr_policy;
    double now = mono_now();
    int known = (gr->gr_status == GATHER_DECIDED || gr->gr_status == GATHER_KUBE) &&
                p->pr_outcome != POLICY_SKIPPED_TELEMETRY && p->pr_free_known;
    int64_t free_mib = p->pr_free_mib;

    if (gr->gr_status == GATHER_CANCELLED) {
        d->d_vg = NULL;
        gather_free(g);
        interrupt(d);
        return;
    }
    d->d_vg = NULL;
    gather_free(g);
    if (known) {
        d->d_v.vd_d.sd_verified = 1;
        d->d_v.vd_d.sd_verify_free_mib = free_mib;
        d->d_v.vd_d.sd_verify_seconds = now - d->d_recycled_at;
        /* gr died with g above: the decision's own copy names the GPU. */
        metrics_free_vram_gpu(d->d_v.vd_d.sd_node, d->d_v.vd_d.sd_gpu, free_mib);
        if (free_mib >= d->d_r->r_cfg->c_floor_mib) {
            verdict_reason_append(&d->d_v, "free VRAM back to %lld MiB after %.1f s",
                                  (long long)free_mib, now - d->d_recycled_at);
            finish(d, "recycled");
            return;
        }
    }
    if (now >= d->d_verify_deadline) {
        if (d->d_v.vd_d.sd_verified)
            verdict_reason_append(&d->d_v,
                                  "free VRAM still %lld MiB, below the floor, when SETTLE "
                                  "(%llds) ran out",
                                  (long long)d->d_v.vd_d.sd_verify_free_mib,
                                  (long long)(d->d_r->r_cfg->c_settle_ms / 1000));
        else
            verdict_reason_append(&d->d_v, "free VRAM could not be read back within SETTLE");
        finish(d, "recycled");
        return;
    }
    verify_schedule(d);
}

static void
verify_tick(evutil_socket_t fd, short what, void *arg)
{
    struct decision *d = arg;
    struct remedy *r = d->d_r;

    /* Verification reads Prometheus only: kube NULL skips the pod list. */
    d->d_vg = gather_start_gpu(r->r_base, r->r_cfg, r->r_prom, NULL, d->d_v.vd_d.sd_node,
                               d->d_v.vd_d.sd_gpu, NULL, verify_cb, d);
    if (d->d_vg == NULL) {
        verdict_reason_append(&d->d_v, "verification could not start (out of memory)");
        finish(d, "recycled");
    }
}

/* --- act ----------------------------------------------------------------- */

static void gathered(struct gather *g, const struct gather_result *gr, void *arg);
static void act_try(struct decision *d);

static void
open_settle_window(struct decision *d, const struct policy_candidate *c, double now)
{
    d->d_node->n_settle_until = now + ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    snprintf(d->d_node->n_last_victim, sizeof(d->d_node->n_last_victim), "%s/%s",
             c->pc_namespace, c->pc_name);
}

/* The PodDisruptionBudget refusals that moved the decision down the ranking,
 * so a victim other than the first ranked one is explained. */
static void
note_refusals(struct decision *d)
{
    if (d->d_refusals[0] != '\0')
        verdict_reason_append(&d->d_v, "refused by a PodDisruptionBudget first: %s",
                              d->d_refusals);
}

/* Writes the row as it stands, before the decision ends (a crash or a stop
 * must not hide what was done). A failure is logged: finish() retries. */
static void
record_progress(struct decision *d, const char *what)
{
    struct remedy *r = d->d_r;
    char err[512];

    if (r->r_store != NULL &&
        store_decision_finish(r->r_store, d->d_row, &d->d_v.vd_d, err, sizeof(err)) == 0) {
        d->d_v.vd_d.sd_candidates_stored = 1; /* the later writes leave them be */
        return;
    }
    log_event(LOG_LEVEL_ERROR, what, "node", d->d_v.vd_d.sd_node, "error",
              r->r_store ? err : "audit store not open", NULL);
}

/* Records the recycle the moment it happened, before any verify: the
 * eviction is a fact, and a stop or a crash during the verify must not hide
 * it. The row stays marked verify_pending until the verify ends. */
static void
record_recycle_now(struct decision *d)
{
    verdict_set_result(&d->d_v, "recycled");
    d->d_v.vd_d.sd_verify_pending = 1;
    record_progress(d, "recycle not recorded before its verify");
}

static void
recycled(struct decision *d, const struct policy_candidate *c, const char *how)
{
    double now = mono_now();

    verdict_set_victim(&d->d_v, c, action_name(d->d_r->r_cfg));
    note_refusals(d);
    verdict_reason_append(&d->d_v, "%s %s/%s", how, c->pc_namespace, c->pc_name);
    seat_give_back(d); /* the seat becomes the counted recycle */
    count_recycle(d->d_r, now);
    open_settle_window(d, c, now);
    d->d_phase = PH_VERIFY;
    record_recycle_now(d);
    d->d_recycled_at = now;
    d->d_verify_deadline = now + ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    if (d->d_r->r_stopping) { /* answered after the stop: no verify to wait for */
        interrupt(d);
        return;
    }
    if ((d->d_verify_ev = evtimer_new(d->d_r->r_base, verify_tick, d)) == NULL) {
        verdict_reason_append(&d->d_v, "verification could not start (out of memory)");
        finish(d, "recycled");
        return;
    }
    verify_schedule(d);
}

/* Starts a fresh look after a 409: the pod was replaced under us. */
static void
relist(struct decision *d)
{
    struct remedy *r = d->d_r;

    d->d_relisted = 1;
    d->d_phase = PH_GATHER;
    verdict_set_policy(&d->d_v, &(struct policy_result){0});
    gather_free(d->d_g);
    d->d_gr = NULL;
    d->d_g = gather_start_gpu(r->r_base, r->r_cfg, r->r_prom, r->r_kube, d->d_v.vd_d.sd_node,
                              d->d_v.vd_d.sd_gpu, d->d_starving_ns, gathered, d);
    if (d->d_g == NULL) {
        verdict_error(&d->d_v, "out of memory while looking again after a 409");
        finish(d, "failed");
    }
}

static void
act_cb(struct kube_answer *a, void *arg)
{
    struct decision *d = arg;
    const struct policy_candidate *c = ranked(d, d->d_next);
    size_t used;

    if (a->ka_cancelled) {
        interrupt(d);
        return;
    }
    switch (a->ka_class) {
    case KUBE_OK:
        recycled(d, c, d->d_r->r_cfg->c_action == ACTION_DELETE ? "deleted" : "evicted");
        return;
    case KUBE_GONE:
        recycled(d, c, "already gone (404):");
        return;
    case KUBE_PDB_REFUSED:
        used = strlen(d->d_refusals);
        snprintf(d->d_refusals + used, sizeof(d->d_refusals) - used, "%s%s/%s: %s",
                 used ? "; " : "", c->pc_namespace, c->pc_name,
                 a->ka_error ? a->ka_error : "refused by a PodDisruptionBudget");
        log_event(LOG_LEVEL_INFO, "eviction refused by a PodDisruptionBudget; next candidate",
                  "namespace", c->pc_namespace, "pod", c->pc_name, NULL);
        if (++d->d_next < d->d_gr->gr_policy.pr_ranked_count) {
            act_try(d);
            return;
        }
        verdict_set_victim(&d->d_v, ranked(d, 0), action_name(d->d_r->r_cfg));
        verdict_reason_append(&d->d_v, "every candidate was refused by a "
                                        "PodDisruptionBudget; nothing was recycled");
        verdict_error(&d->d_v, "%s", d->d_refusals);
        finish(d, "blocked");
        return;
    case KUBE_CONFLICT:
    case KUBE_FORBIDDEN:
    case KUBE_ERROR:
        /* A 409 means the pod was replaced under us: look once more, afresh.
         * A second replacement in a row is not chased further. */
        if (a->ka_class == KUBE_CONFLICT && !d->d_relisted) {
            log_event(LOG_LEVEL_INFO, "victim replaced under us (409); looking again",
                      "namespace", c->pc_namespace, "pod", c->pc_name, NULL);
            relist(d);
            return;
        }
        verdict_set_victim(&d->d_v, c, action_name(d->d_r->r_cfg));
        note_refusals(d);
        verdict_error(&d->d_v, "%s", a->ka_error ? a->ka_error : "the API server refused");
        verdict_reason_append(&d->d_v, "the %s of %s/%s failed", action_name(d->d_r->r_cfg),
                              c->pc_namespace, c->pc_name);
        finish(d, "failed");
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
        finish(d, "failed");
        return;
    }
    d->d_phase = PH_ACT;
    if (r->r_cfg->c_action == ACTION_DELETE)
        rc = kube_delete_pod(r->r_kube, c->pc_namespace, c->pc_name, uid, 0, act_cb, d);
    else
        rc = kube_evict(r->r_kube, c->pc_namespace, c->pc_name, uid, 0, act_cb, d);
    if (rc == -1) {
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_error(&d->d_v, "the %s request could not be started", action_name(r->r_cfg));
        finish(d, "failed");
    }
}

/* The dry-run probe's answer is recorded; nothing changed either way. */
static void
probe_cb(struct kube_answer *a, void *arg)
{
    struct decision *d = arg;
    const char *what = d->d_r->r_cfg->c_action == ACTION_DELETE ? "deletion" : "eviction";

    if (a->ka_cancelled) {
        interrupt(d);
        return;
    }
    switch (a->ka_class) {
    case KUBE_OK:
        verdict_reason_append(&d->d_v, "a dry-run %s was accepted by the API server", what);
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
    finish(d, "would_recycle");
}

/* The tenant's ask ended: released, or on to the recycle as usual. */
static void
release_done(const struct release_outcome *o, void *arg)
{
    struct decision *d = arg;
    struct remedy *r = d->d_r;

    release_record(d, o);
    release_free(d->d_release);
    d->d_release = NULL;
    if (o->ro_cancelled) {
        interrupt(d);
        return;
    }
    if (o->ro_released) {
        /* Nothing recycled: no SETTLE window, not counted by the hourly brake. */
        metrics_free_vram(d->d_v.vd_d.sd_node, o->ro_free_mib);
        verdict_reason_append(&d->d_v,
                              "asked to release first; free VRAM back to %lld MiB "
                              "(%+lld MiB) after %.1f s, so nothing was recycled",
                              (long long)o->ro_free_mib, (long long)o->ro_freed_mib,
                              o->ro_seconds);
        finish(d, "released");
        return;
    }
    verdict_reason_append(&d->d_v, "asked to release first, but the release did not free "
                                    "enough: %s",
                          o->ro_why);
    if (rate_limited(r, d, mono_now())) { /* the hour filled up while it waited */
        verdict_reason_append(&d->d_v,
                              "MAX_RECYCLES_PER_HOUR=%lld reached meanwhile; not acting",
                              (long long)r->r_cfg->c_max_recycles_per_hour);
        finish(d, "rate_limited");
        return;
    }
    d->d_next = 0;
    seat_take(d);
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
        verdict_reason_append(&d->d_v, "%s on %s/%s is not PORT/PATH (%s), so it was not "
                                       "asked to release",
                              cfg->c_release_annotation, c->pc_namespace, c->pc_name, err);
        return 0;
    }
    if (p->p_host_network) {
        verdict_reason_append(&d->d_v, "%s/%s runs on the host network, so it was not asked "
                                       "to release",
                              c->pc_namespace, c->pc_name);
        return 0;
    }
    if (release_url(p->p_ip, &t, d->d_release_url, sizeof(d->d_release_url), err,
                    sizeof(err)) == -1) {
        verdict_reason_append(&d->d_v, "%s/%s was not asked to release: %s", c->pc_namespace,
                              c->pc_name, err);
        return 0;
    }
    d->d_rel.sr_url = d->d_release_url;
    d->d_v.vd_d.sd_release = &d->d_rel;
    if (cfg->c_dry_run) {
        verdict_reason_append(&d->d_v, "DRY_RUN: would first ask %s/%s to release (POST %s)",
                              c->pc_namespace, c->pc_name, d->d_release_url);
        return 0;
    }
    d->d_release = release_start(r->r_base, cfg, r->r_release_client, r->r_prom,
                                 d->d_v.vd_d.sd_node, d->d_v.vd_d.sd_gpu, d->d_release_url,
                                 d->d_gr->gr_policy.pr_free_mib, release_done, d);
    if (d->d_release == NULL) {
        verdict_reason_append(&d->d_v, "the release could not be asked (out of memory)");
        return 0;
    }
    d->d_phase = PH_RELEASE;
    verdict_set_victim(&d->d_v, c, action_name(cfg));
    log_event(LOG_LEVEL_INFO, "asking the victim to release VRAM", "namespace",
              c->pc_namespace, "pod", c->pc_name, "url", d->d_release_url, NULL);
    /* Still in_progress, but the audit already names the victim and the ask. */
    record_progress(d, "release not recorded before its wait");
    return 1;
}

static void
act_begin(struct decision *d)
{
    struct remedy *r = d->d_r;
    const struct policy_candidate *c = ranked(d, 0);
    double now = mono_now();
    const char *uid = c->pc_pod ? c->pc_pod->p_uid : "";

    if (rate_limited(r, d, now)) {
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_reason_append(&d->d_v,
                              "MAX_RECYCLES_PER_HOUR=%lld reached within the last hour; "
                              "not acting",
                              (long long)r->r_cfg->c_max_recycles_per_hour);
        finish(d, "rate_limited");
        return;
    }
    if (r->r_kube == NULL) { /* can't happen: no pods were listed without it */
        verdict_error(&d->d_v, "no Kubernetes API server is configured");
        finish(d, "skipped_kube");
        return;
    }
    if (release_begin(d, c))
        return; /* release_done() goes on */
    if (r->r_cfg->c_dry_run) {
        int rc;
        verdict_set_victim(&d->d_v, c, action_name(r->r_cfg));
        verdict_reason_append(&d->d_v, "DRY_RUN: nothing was changed");
        count_recycle(r, now);
        open_settle_window(d, c, now);
        d->d_phase = PH_PROBE;
        if (r->r_cfg->c_action == ACTION_DELETE)
            rc = kube_delete_pod(r->r_kube, c->pc_namespace, c->pc_name, uid, 1, probe_cb, d);
        else
            rc = kube_evict(r->r_kube, c->pc_namespace, c->pc_name, uid, 1, probe_cb, d);
        if (rc == -1)
            finish(d, "would_recycle");
        return;
    }
    d->d_next = 0;
    seat_take(d);
    act_try(d);
}

/* --- the decision -------------------------------------------------------- */

/* "node", or "node GPU g" in GPU scope: what a brake is about. */
static const char *
brake_name(const struct node_state *n, char *buf, size_t len)
{
    if (n->n_gpu[0] == '\0')
        return n->n_name;
    snprintf(buf, len, "%s GPU %s", n->n_name, n->n_gpu);
    return buf;
}

/* Whether n holds a trigger back (coalesced), with why in reason. */
static int
held_back(const struct node_state *n, double now, char *reason, size_t len)
{
    char name[600];

    if (n->n_busy) {
        snprintf(reason, len, "a decision for %s is already in flight",
                 brake_name(n, name, sizeof(name)));
        return 1;
    }
    if (now < n->n_settle_until) {
        snprintf(reason, len, "inside the SETTLE window after recycling %s (%.0f s left)",
                 n->n_last_victim, n->n_settle_until - now);
        return 1;
    }
    return 0;
}

/* Puts the free VRAM seen into the gauge ({node,gpu} in GPU scope). */
static void
note_free(const char *node, const struct gather_result *gr)
{
    const struct policy_result *p = &gr->gr_policy;

    if (gr->gr_gpu_count == 0 && gr->gr_status != GATHER_TELEMETRY && p->pr_free_known &&
        p->pr_outcome != POLICY_SKIPPED_TELEMETRY)
        metrics_free_vram_gpu(node, gr->gr_gpu, p->pr_free_mib);
}

/* Records and acts on one result: the node's, or one GPU's. */
static void
judge(struct decision *d, const struct gather_result *gr)
{
    const struct policy_result *p = &gr->gr_policy;
    const char *result;

    d->d_gr = gr;
    result = verdict_from_gather(&d->d_v, gr, d->d_r->r_cfg);
    /* The GPU's name as the brake holds it: it outlives a relist's gather. */
    if (d->d_v.vd_d.sd_gpu != NULL && d->d_node != NULL && d->d_node->n_gpu[0] != '\0')
        d->d_v.vd_d.sd_gpu = d->d_node->n_gpu;
    note_free(d->d_v.vd_d.sd_node, gr);
    if (gr->gr_status == GATHER_DECIDED && p->pr_outcome == POLICY_VICTIM)
        act_begin(d);
    else
        finish(d, result);
}

/* A started decision: its row in_progress, its brake n busy. NULL when it
 * could not be (logged); then nothing is held. */
static struct decision *
decision_new(struct remedy *r, struct node_state *n, const char *trigger, const char *fp,
             const char *starving_ns, int64_t alert_id, double now)
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
    d->d_v.vd_d.sd_gpu = n->n_gpu[0] != '\0' ? n->n_gpu : NULL;
    if (store_decision_start(r->r_store, &d->d_v.vd_d, &d->d_row, err, sizeof(err)) == -1) {
        /* Never act on what cannot be recorded. */
        log_event(LOG_LEVEL_ERROR, "decision not started: the audit store cannot record it",
                  "node", n->n_name, "error", err, NULL);
        metrics_decision("failed", -1);
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

/* The first GPU below the floor takes over the node-wide decision d and its
 * row (its brake moves from the node to that GPU). */
static void
adopt(struct decision *d, const struct gather_result *u)
{
    struct node_state *n = node_get(d->d_r, d->d_node->n_name, u->gr_gpu);
    char reason[1024];

    d->d_node->n_busy = 0;
    d->d_node = NULL;
    d->d_v.vd_d.sd_gpu = u->gr_gpu; /* held by d's gather until d is freed */
    if (n == NULL) {
        verdict_error(&d->d_v, "too many nodes tracked, or out of memory");
        finish(d, "failed");
        return;
    }
    d->d_v.vd_d.sd_node = n->n_name;
    if (held_back(n, mono_now(), reason, sizeof(reason))) {
        d->d_v.vd_d.sd_gpu = n->n_gpu;
        verdict_reason(&d->d_v, "%s", reason);
        finish(d, "coalesced");
        return;
    }
    d->d_node = n;
    n->n_busy = 1;
    judge(d, u);
}

/* A decision of its own for GPU unit u of d's node, sharing d's gather g;
 * NULL when held back or not started (then its row is already recorded). */
static struct decision *
spawn(struct decision *d, struct gather *g, const struct gather_result *u, double now)
{
    struct remedy *r = d->d_r;
    const char *node = d->d_node->n_name;
    struct node_state *n = node_get(r, node, u->gr_gpu);
    struct decision *c;
    char reason[1024];

    if (n == NULL) {
        record_now_gpu(r, node, u->gr_gpu, d->d_trigger, d->d_fingerprint, d->d_alert_id,
                       "failed", "no decision was started",
                       "too many nodes tracked, or out of memory");
        return NULL;
    }
    if (held_back(n, now, reason, sizeof(reason))) {
        record_now_gpu(r, node, u->gr_gpu, d->d_trigger, d->d_fingerprint, d->d_alert_id,
                       "coalesced", reason, NULL);
        return NULL;
    }
    c = decision_new(r, n, d->d_trigger, d->d_fingerprint, d->d_starving_ns, d->d_alert_id,
                     now);
    if (c != NULL) {
        gather_hold(g);
        c->d_g = g;
    }
    return c;
}

static int
recovered(const struct gather_result *u)
{
    return u->gr_status == GATHER_DECIDED &&
           u->gr_policy.pr_outcome == POLICY_SKIPPED_RECOVERED;
}

/* GPU scope from a trigger naming no GPU: each GPU below the floor (or
 * unreadable) gets its own decision and row, the first one d's; none below:
 * d ends skipped_recovered with gpu null. */
static void
fan_out(struct decision *d, struct gather *g, const struct gather_result *gr)
{
    const struct gather_result *first = NULL;
    struct decision **kids;
    size_t i;
    double now = mono_now();

    for (i = 0; i < gr->gr_gpu_count; i++)
        note_free(d->d_node->n_name, &gr->gr_gpus[i]);
    if ((kids = calloc(gr->gr_gpu_count, sizeof(*kids))) == NULL) {
        verdict_error(&d->d_v, "out of memory");
        finish(d, "failed");
        return;
    }
    gather_hold(g); /* d may end before its siblings are judged */
    for (i = 0; i < gr->gr_gpu_count; i++) {
        if (recovered(&gr->gr_gpus[i]))
            continue;
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

static void
gathered(struct gather *g, const struct gather_result *gr, void *arg)
{
    struct decision *d = arg;

    d->d_gr = gr;
    if (gr->gr_status == GATHER_CANCELLED) {
        interrupt(d); /* shutdown: the row says so, never stays in_progress */
        return;
    }
    if (gr->gr_gpu_count > 0)
        fan_out(d, g, gr);
    else
        judge(d, gr);
}

/* Starts one node's decision (one GPU's when gpu is set), or records why it
 * is held back. */
static void
begin(struct remedy *r, const char *node, const char *gpu, const char *trigger,
      const char *fp, const char *starving_ns, int64_t alert_id)
{
    struct node_state *n = node_get(r, node, gpu), *whole;
    struct decision *d;
    double now = mono_now();
    char reason[1024];

    if (r->r_stopping) {
        record_now_gpu(r, node, gpu, trigger, fp, alert_id, "failed",
                       "the daemon is stopping; no decision was started", NULL);
        return;
    }
    if (n == NULL) {
        record_now_gpu(r, node, gpu, trigger, fp, alert_id, "failed",
                       "no decision was started", "too many nodes tracked, or out of memory");
        return;
    }
    /* A GPU's trigger also waits for a node-wide look (it covers this GPU). */
    if (held_back(n, now, reason, sizeof(reason)) ||
        (gpu != NULL && (whole = node_get(r, node, NULL)) != NULL &&
         held_back(whole, now, reason, sizeof(reason)))) {
        record_now_gpu(r, node, gpu, trigger, fp, alert_id, "coalesced", reason, NULL);
        return;
    }
    if ((d = decision_new(r, n, trigger, fp, starving_ns, alert_id, now)) == NULL)
        return;
    d->d_g = gather_start_gpu(r->r_base, r->r_cfg, r->r_prom, r->r_kube, n->n_name,
                              gpu != NULL ? n->n_gpu : NULL, d->d_starving_ns, gathered, d);
    if (d->d_g == NULL) {
        verdict_error(&d->d_v, "out of memory");
        finish(d, "failed");
    }
}

static void
fanout_free(struct fanout *f)
{
    free(f->f_trigger);
    free(f->f_fingerprint);
    free(f->f_starving_ns);
    free(f->f_gpu);
    free(f);
}

static void
nodes_cb(struct kube_answer *a, void *arg)
{
    struct fanout *f = arg;
    struct remedy *r = f->f_r;
    char reason[1024];

    if (a->ka_cancelled) {
        fanout_free(f);
        return;
    }
    if (a->ka_class != KUBE_OK) {
        record_now(r, "", f->f_trigger, f->f_fingerprint, f->f_alert_id, "skipped_kube",
                   "the alert names no node and the GPU nodes could not be listed",
                   a->ka_error);
    } else if (a->ka_node_count == 0) {
        snprintf(reason, sizeof(reason),
                 "the alert names no node and no node matches GPU_NODE_SELECTOR=%s",
                 r->r_cfg->c_gpu_node_selector);
        record_now(r, "", f->f_trigger, f->f_fingerprint, f->f_alert_id, "skipped_kube",
                   reason, NULL);
    } else {
        for (size_t i = 0; i < a->ka_node_count; i++)
            begin(r, a->ka_nodes[i], f->f_gpu, f->f_trigger, f->f_fingerprint,
                  f->f_starving_ns, f->f_alert_id);
    }
    fanout_free(f);
}

void
remedy_on_alert(struct remedy *r, const struct alert *a, int64_t alert_id)
{
    const struct config *cfg = r->r_cfg;
    const char *node, *starving, *gpu = NULL;
    struct fanout *f;

    if (!a->a_firing || !strlist_contains(&cfg->c_trigger_alerts, a->a_alertname))
        return;
    if (r->r_store == NULL) { /* can't happen: alerts are only accepted once it opens */
        log_warnx("%s: no audit store; no decision", __func__);
        return;
    }
    node = alert_label(a, cfg->c_alert_node_label);
    starving = alert_label(a, "namespace");
    /* GPU scope is off with GPU_LABEL empty; an empty label names no GPU. */
    if (cfg->c_gpu_label[0] != '\0' && cfg->c_alert_gpu_label[0] != '\0' &&
        (gpu = alert_label(a, cfg->c_alert_gpu_label)) != NULL && gpu[0] == '\0')
        gpu = NULL;
    if (node != NULL && node[0] != '\0') {
        begin(r, node, gpu, a->a_alertname, a->a_fingerprint, starving, alert_id);
        return;
    }
    if (r->r_kube == NULL) {
        record_now(r, "", a->a_alertname, a->a_fingerprint, alert_id, "skipped_kube",
                   "the alert names no node and no Kubernetes API server is configured",
                   NULL);
        return;
    }
    if ((f = calloc(1, sizeof(*f))) == NULL || (f->f_trigger = strdup(a->a_alertname)) == NULL ||
        (f->f_fingerprint = strdup(a->a_fingerprint)) == NULL ||
        (starving != NULL && (f->f_starving_ns = strdup(starving)) == NULL) ||
        (gpu != NULL && (f->f_gpu = strdup(gpu)) == NULL)) {
        if (f != NULL)
            fanout_free(f);
        log_warnx("%s: out of memory", __func__);
        return;
    }
    f->f_r = r;
    f->f_alert_id = alert_id;
    if (kube_list_nodes(r->r_kube, cfg->c_gpu_node_selector, nodes_cb, f) == -1) {
        record_now(r, "", f->f_trigger, f->f_fingerprint, alert_id, "skipped_kube",
                   "the alert names no node and the GPU nodes could not be listed",
                   "the node list request could not be started");
        fanout_free(f);
    }
}

struct remedy *
remedy_new(struct event_base *base, const struct config *cfg, struct prom *prom,
           struct kube *kube)
{
    struct remedy *r = calloc(1, sizeof(*r));
    char err[256];

    if (r == NULL)
        return NULL;
    r->r_base = base;
    r->r_cfg = cfg;
    r->r_prom = prom;
    r->r_kube = kube;
    if (cfg->c_max_recycles_per_hour > 0 &&
        (r->r_recycles = calloc(cfg->c_max_recycles_per_hour > MAX_BRAKE_RING
                                    ? MAX_BRAKE_RING
                                    : (size_t)cfg->c_max_recycles_per_hour,
                                sizeof(double))) == NULL) {
        free(r);
        return NULL;
    }
    if (cfg->c_release_wait_ms > 0 &&
        (r->r_release_client = release_client_new(base, err, sizeof(err))) == NULL) {
        log_warnx("%s: release client: %s", __func__, err);
        free(r->r_recycles);
        free(r);
        return NULL;
    }
    return r;
}

void
remedy_set_store(struct remedy *r, struct store *s)
{
    r->r_store = s;
}

size_t
remedy_in_flight(const struct remedy *r)
{
    return r->r_in_flight;
}

void
remedy_shutdown(struct remedy *r, void (*drained)(void *), void *arg)
{
    struct decision *d, *next;

    r->r_stopping = 1;
    r->r_drained = drained;
    r->r_drained_arg = arg;
    for (d = r->r_decisions; d != NULL; d = next) {
        next = d->d_next_in_list; /* interrupt() frees d, and only d */
        switch (d->d_phase) {
        case PH_GATHER:
            gather_free(d->d_g); /* detached: nothing was asked that changes anything */
            d->d_g = NULL;
            d->d_gr = NULL;
            interrupt(d);
            break;
        case PH_VERIFY:
        case PH_FINISHING:
        case PH_RELEASE:
            interrupt(d);
            break;
        case PH_ACT:
        case PH_PROBE:
            break; /* its answer, or its cancellation, completes it */
        }
    }
    check_drained(r);
}

void
remedy_free(struct remedy *r)
{
    struct node_state *n, *next;

    if (r == NULL)
        return;
    r->r_drained = NULL;
    while (r->r_decisions != NULL)
        decision_free(r->r_decisions);
    for (n = r->r_nodes; n != NULL; n = next) {
        next = n->n_next;
        free(n->n_name);
        free(n->n_gpu);
        free(n);
    }
    httpc_free(r->r_release_client); /* after the decisions: asks left end here */
    free(r->r_recycles);
    free(r);
}
