/* remedy.h -- from a trigger alert to a recorded decision: brakes, act, verify */
#ifndef GVW_REMEDY_H
#define GVW_REMEDY_H

#include <stddef.h>
#include <stdint.h>

#include "alert.h"
#include "config.h"

struct event_base;
struct prom;
struct kube;
struct store;
struct remedy;

/*
 * Makes the remediation engine. Everything is borrowed and must outlive it;
 * kube may be NULL (no API server: decisions end skipped_kube). At shutdown
 * call remedy_shutdown(), then free the prom and kube clients (calls still in
 * flight end, and the decisions waiting on them are completed as
 * interrupted), then remedy_free(), then close the store.
 */
struct remedy *remedy_new(struct event_base *base, const struct config *cfg,
                          struct prom *prom, struct kube *kube);
void remedy_free(struct remedy *r);

/* Where decisions are recorded (borrowed). Without a store nothing starts. */
void remedy_set_store(struct remedy *r, struct store *s);

/* An alert that is durably recorded as alert_id. Starts a decision per node
 * when it is firing and its alertname is in TRIGGER_ALERTS; else nothing. */
void remedy_on_alert(struct remedy *r, const struct alert *a, int64_t alert_id);

/* Decisions started and not yet finished. */
size_t remedy_in_flight(const struct remedy *r);

/*
 * The daemon is stopping: no decision starts any more (a trigger is recorded
 * failed), and every decision in flight is completed in the audit, never left
 * in_progress. Decisions gathering evidence end failed with
 * STORE_INTERRUPTED_ERROR (nothing was done); a verify is cut short, the
 * recycle row keeping the free VRAM seen so far. An eviction, deletion or
 * dry-run probe already sent is left to its answer; freeing the kube client
 * completes it as interrupted (outcome unknown). drained(arg) runs once, when
 * no decision is left (at once, from inside this call, if none is); it may be
 * NULL. Call it once.
 */
void remedy_shutdown(struct remedy *r, void (*drained)(void *), void *arg);

#endif
