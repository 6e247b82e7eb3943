/* remedy.h -- from a trigger alert to a recorded decision: brakes, act, verify */
#ifndef GVW_REMEDY_H
#define GVW_REMEDY_H

#include <stddef.h>
#include <stdint.h>

#include "alert.h"
#include "config.h"
#include "gate.h"

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
 * High availability: the brakes (SETTLE windows, the recycles of the last
 * hour) as the Lease carries them, a compact JSON text with wall-clock unix
 * milliseconds (wall_ms is now): {"v":1,"settle":[{"node","gpu"?,"until_ms",
 * "victim","dry_run"}],"recycles_ms":[...]}. With pending (an eviction or a
 * deletion about to be sent; NULL = none) its window is open and its recycle
 * counted already. Owned (free()), or NULL when out of memory.
 */
char *remedy_brakes_export(struct remedy *r, const struct gate_act *pending,
                           int64_t wall_ms);

/*
 * Replaces the brakes with those of text (the Lease this replica just took;
 * NULL = it carries none: nothing changes). Windows and recycles already over
 * are dropped; a window is never longer than SETTLE from now, a recycle never
 * in the future. 0, or -1 with the reason in err (a window that could not be
 * read is skipped; an unreadable text changes nothing).
 */
int remedy_brakes_import(struct remedy *r, const char *text, int64_t wall_ms, char *err,
                         size_t errlen);

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
