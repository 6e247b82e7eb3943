/* remedy_int.h -- private: the engine's state and what its files call on each other */
#ifndef GVW_REMEDY_INT_H
#define GVW_REMEDY_INT_H

/*
 * Who calls whom (no file calls back into one that calls it):
 *   remedy.c (API, alert intake, node fan-out) -> dqueue.c, decision.c, brakes.c
 *   dqueue.c (MAX_CONCURRENT_DECISIONS)         -> decision.c, brakes.c (judge_gathered
 *                                                  as the gather callback)
 *   judge.c (evidence in: node or per-GPU)      -> act.c, decision.c, brakes.c
 *   act.c (evict/delete, probe, release first)  -> verify.c, decision.c, brakes.c
 *   verify.c                                    -> decision.c
 *   decision.c (the audit row's life)           -> brakes.c (and r_slot_freed, which
 *                                                  dqueue.c set, when a slot is free)
 */

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/util.h>

#include "config.h"
#include "gather.h"
#include "release.h"
#include "release_target.h"
#include "clock.h"
#include "remedy.h"
#include "store.h"
#include "verdict.h"

/* The hourly brake's memory: MAX_RECYCLES_PER_HOUR at its most (config refuses more). */
#define MAX_BRAKE_RING CONFIG_MAX_RECYCLES_PER_HOUR

/* Per node (in GPU scope per node and GPU): one decision at a time, and the
 * quiet window after a recycle. */
struct node_state {
    char *n_name; /* owned */
    char *n_gpu;  /* owned; NULL = the node (node scope, or GPUs not known yet) */
    int n_busy;   /* a decision is in flight */
    double n_settle_until;   /* monotonic seconds; 0 = no window */
    char n_last_victim[512]; /* for the coalesced reason */
    int n_last_dry; /* that was a dry run's would_recycle: nothing was recycled */
    struct node_state *n_next;
};

/* Where a decision stands: what it waits on, and so how a stop completes it. */
enum phase {
    PH_GATHER,    /* reading Prometheus and the pod list */
    PH_ACT,       /* an eviction or deletion is in flight */
    PH_ACT_WAIT,  /* the API server throttled it (429): waiting to ask again */
    PH_PROBE,     /* the dry-run probe is in flight */
    PH_RELEASE,   /* the victim was asked to release; waiting for the VRAM */
    PH_VERIFY,    /* recycled (and recorded); waiting for the VRAM to show */
    PH_FINISHING, /* ended; its row could not be completed yet */
};

struct decision {
    struct remedy *d_r;
    enum phase d_phase;
    int d_reserved;            /* holds one of the hourly brake's r_acting seats */
    struct node_state *d_node; /* borrowed from d_r */
    char *d_trigger;           /* owned */
    char *d_fingerprint;       /* owned */
    char *d_starving_ns;       /* owned, may be NULL */
    int64_t d_alert_id;
    int64_t d_row; /* the audit row, in_progress until finish */
    double d_t0;   /* monotonic start */
    struct verdict d_v;
    struct gather *d_g;               /* owned: the evidence the verdict borrows from */
    const struct gather_answer *d_gr; /* borrowed from d_g */
    size_t d_next;                    /* next ranked candidate to try */
    int d_throttled;                  /* 429s of load shedding for this victim */
    struct event *d_retry_ev;         /* owned: the wait after one (PH_ACT_WAIT) */
    char d_refusals[1024];            /* PodDisruptionBudget refusals so far */
    struct gather *d_vg;              /* owned: a verify reading in flight */
    struct event *d_verify_ev;        /* owned; then the row-completion retry timer */
    int d_finish_tries;
    double d_recycled_at, d_verify_deadline;
    int d_verify_vanished;      /* the verify saw the device series gone (said once) */
    struct release *d_release;  /* owned: the ask in flight (PH_RELEASE) */
    int d_release_asked;        /* once per decision, whatever came of it */
    struct store_release d_rel; /* vd_d.sd_release points here once a release is named */
    char d_release_url[RELEASE_URL_MAX];
    int64_t d_free_target_mib;        /* free VRAM a release or the verify waits for; 0 =
                                         FLOOR_MIB. A prediction's: floor + horizon x growth
                                         (free is above the floor already) */
    struct predict_call *d_pred_call; /* the growth query d waits for (shared by the
                                         decisions that ask the same one) */
    struct policy_candidate *d_pred_cands; /* owned array of copies borrowing from d_g:
                                 a predicted trigger's ranking */
    struct gather_answer d_pred_gr;        /* d_gr for a predicted trigger once judged */
    struct store_prediction d_pred; /* vd_d.sd_prediction points here once judged */
    struct gate_wait *d_fence; /* HA: the fence of the act about to be sent (fence.c) */
    int d_fenced;              /* HA: the Lease records that act: send it now */
    void (*d_fence_again)(struct decision *d); /* what runs once it is recorded */
    /* Set by a stage that keeps state past its own call (the prediction's
     * query); decision_free calls it, so decision.c needs no stage's names. */
    void (*d_detach)(struct decision *d);
    struct dq_batch *d_batch; /* the shared reading it waits on, if any (dqueue.c) */
    size_t d_batch_at;        /* its place in d_batch */
    struct decision *d_next_in_list;
};

/* Queued decisions for GPUs of one node, started in one turn, share one
 * reading (gather_start_gpus) instead of one 8 MiB answer each. */
struct dq_batch {
    struct gather *b_g; /* one hold on the shared reading, until it answers */
    size_t b_count;
    struct decision *b_d[]; /* each holds the reading too; NULL once freed first */
};

struct remedy {
    struct event_base *r_base;      /* borrowed */
    const struct config *r_cfg;     /* borrowed */
    struct prom *r_prom;            /* borrowed */
    struct kube *r_kube;            /* borrowed, may be NULL */
    struct store *r_store;          /* borrowed, may be NULL */
    struct httpc *r_release_client; /* owned; NULL when RELEASE_WAIT=0 */
    struct node_state *r_nodes;     /* owned list (at most MAX_NODES, brakes.c) */
    size_t r_node_count;
    int r_nodes_full_said;        /* the full table was logged, not yet relieved */
    struct decision *r_decisions; /* owned list of unfinished decisions */
    size_t r_in_flight;
    size_t r_acting;    /* enforcing evictions/deletions sent, not yet answered */
    double *r_recycles; /* owned ring: monotonic times of recent recycles */
    size_t r_recycle_count;
    int r_stopping;            /* remedy_shutdown() ran: no new decisions */
    struct dq_entry *r_q_head; /* owned FIFO of decisions waiting for a slot */
    struct dq_entry **r_q_tail;
    size_t r_queued;
    struct event *r_q_ev;              /* owned: starts waiting decisions from the loop */
    struct predict_call *r_pred_calls; /* growth queries in flight (each freed by its
                                          answer): a GPU's decision joins its node's */
    void (*r_slot_freed)(struct remedy *); /* dqueue_kick once dqueue_init ran: decision.c
                                              tells the queue below it of a free slot */
    void (*r_drained)(void *); /* called once when the last decision is done */
    void *r_drained_arg;
};

static inline const char *
action_name(const struct config *cfg)
{
    return cfg->c_action == ACTION_DELETE ? "delete" : "evict";
}

/* --- brakes.c ------------------------------------------------------------ */

/* Whether the hourly brake stops d acting now (seats of others in flight count). */
int brakes_rate_limited(struct remedy *r, const struct decision *d, double now);
/* d holds / gives back one seat of the hourly brake while its recycle is in flight. */
void brakes_seat_take(struct decision *d);
void brakes_seat_give_back(struct decision *d);
/* A recycle (or a dry run's would-be one) counts against the hour. */
void brakes_count_recycle(struct remedy *r, double now);
/* The state of node (of its GPU gpu; NULL = the node), created on first use;
 * NULL when out of memory or full of busy nodes. */
struct node_state *brakes_node_get(struct remedy *r, const char *name, const char *gpu);
/* Opens d's node's SETTLE window after recycling c. */
void brakes_open_settle_window(struct decision *d, const struct policy_candidate *c,
                               double now);
/* Whether n holds a trigger back (coalesced), with why in reason. */
int brakes_held_back(const struct node_state *n, double now, char *reason, size_t len);

/* --- decision.c ---------------------------------------------------------- */

/* One row for a decision that ends as it starts (no queries). */
void decision_record_now_gpu(struct remedy *r, const char *node, const char *gpu,
                             const char *trigger, const char *fp, int64_t alert_id,
                             enum decision_result result, const char *reason,
                             const char *error);
void decision_record_now(struct remedy *r, const char *node, const char *trigger,
                         const char *fp, int64_t alert_id, enum decision_result result,
                         const char *reason, const char *error);
/* A started decision: its row in_progress, its brake n busy. NULL when it
 * could not be (logged); then nothing is held. */
struct decision *decision_new(struct remedy *r, struct node_state *n, const char *trigger,
                              const char *fp, const char *starving_ns, int64_t alert_id,
                              double now);
/* The same on an audit row already written in_progress (row > 0: a queued
 * decision's; 0 = write one now, as decision_new). */
struct decision *decision_new_row(struct remedy *r, struct node_state *n,
                                  const char *trigger, const char *fp,
                                  const char *starving_ns, int64_t alert_id, double now,
                                  int64_t row);
/* Frees a decision, whatever state it is in (and lets a queued one start). */
void decision_free(struct decision *d);
/* Tells the stopping daemon once no decision is left. */
void decision_check_drained(struct remedy *r);
/* Counts, logs, completes the audit row (retrying while the store fails), frees d. */
void decision_finish(struct decision *d, enum decision_result result);
/* Completes d as the daemon stops under it, whatever its phase; frees d. */
void decision_interrupt(struct decision *d);
/* Writes the row as it stands, before the decision ends; what is logged on failure. */
void decision_record_progress(struct decision *d, const char *what);
/* Records the recycle at once, verify_pending until the verify ends. */
void decision_record_recycle_now(struct decision *d);
/* Appends the PodDisruptionBudget refusals so far to the reason. */
void decision_note_refusals(struct decision *d);
/* The free VRAM (MiB) a release or the verify of d waits for. */
static inline int64_t
decision_free_target(const struct decision *d)
{
    int64_t flr = d->d_r->r_cfg->c_floor_mib;

    return d->d_free_target_mib > flr ? d->d_free_target_mib : flr;
}

/* The figures of a release ask into the audit's release object. */
void decision_release_record(struct decision *d, const struct release_outcome *o);

/* --- dqueue.c ------------------------------------------------------------ */

struct dq_entry;
/* Readies the queue (remedy_new). 0, or -1 when out of memory. */
int dqueue_init(struct remedy *r);
/* Whether a new decision must queue: the slots are taken, or others wait. */
int dqueue_must_wait(const struct remedy *r);
/* Queues a trigger past the brakes for n: writes its row in_progress (or, when
 * the store cannot, records nothing and logs), marks n busy. */
void dqueue_push(struct remedy *r, struct node_state *n, const char *trigger,
                 const char *fp, const char *starving_ns, int64_t alert_id);
/* Starts a decision for n now (its GPU's when n names one), on row (0 = new). */
void dqueue_launch(struct remedy *r, struct node_state *n, const char *trigger,
                   const char *fp, const char *starving_ns, int64_t alert_id,
                   int64_t row);
/* A slot may have freed: start waiting decisions, from the loop. */
void dqueue_kick(struct remedy *r);
/* Stopping: completes every waiting row failed (interrupted), starts none. */
void dqueue_drain(struct remedy *r);
/* dqueue_drain(), then frees the queue's event. */
void dqueue_free(struct remedy *r);

/* --- verify.c ------------------------------------------------------------ */

/* Arms d's verify timer (d_verify_ev, calling verify_tick) for the next reading. */
void verify_schedule(struct decision *d);
/* Reads free VRAM once (arg is the decision); ends d when it clears the floor or
 * SETTLE has passed, else schedules the next reading. */
void verify_tick(evutil_socket_t fd, short what, void *arg);

/* --- act.c --------------------------------------------------------------- */

/* d's policy chose a victim: past the hourly brake, asks it to release first
 * or evicts/deletes it (a dry run probes instead); ends d or leaves it waiting. */
void act_begin(struct decision *d);

/* --- fence.c ------------------------------------------------------------ */

/* HA: before the eviction or deletion of the candidate at d_next, the Lease
 * records it (gate.h). 0: send it now (no leader election, or recorded).
 * 1: d waits (again(d) runs once it is recorded), or has ended failed. */
int fence_first(struct decision *d, void (*again)(struct decision *d));

/* --- predict_query.c ---------------------------------------------------- */

/* Whether d is judged by its trend: PREDICT=true and a GPUVRAMExhaustionPredicted. */
int predict_wanted(const struct decision *d);
/* d's policy found free at or above the floor: asks each pod's growth, then
 * acts (act_begin) or ends d. */
void predict_begin(struct decision *d);
/* Drops d's growth query in flight (its answer is ignored) and its ranking. */
void predict_detach(struct decision *d);
/* The remedy goes away: its calls in flight (answered later, by a cancel)
 * forget it, and their answers are dropped. */
void predict_forget_calls(struct remedy *r);

/* --- judge.c ------------------------------------------------------------- */

/* The gather_done_fn of a decision's evidence (arg is the decision): judges the node,
 * or fans out to a decision per GPU below the floor. */
void judge_gathered(struct gather *g, const struct gather_answer *gr, void *arg);
/* The gather_done_fn of a dq_batch's shared reading (arg is the batch): judges each
 * decision still waiting on it by its own GPU's answer, then frees the batch. */
void judge_batch(struct gather *g, const struct gather_answer *gr, void *arg);

#endif
