/* intake.h -- the webhook intake: parsed batches wait for one group commit per loop turn
 */
#ifndef GVW_INTAKE_H
#define GVW_INTAKE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "alert.h"

struct store;
struct intake;

/*
 * Called once per batch, in arrival order, after the loop turn's commit. req
 * is the handle given to intake_add() (borrowed; the front door answers it
 * here). ok: the whole turn was stored and ids[i] is alert i's row id; 0:
 * nothing was stored and ids means nothing. b and ids are borrowed for the call.
 */
typedef void (*intake_done_fn)(void *req, const struct alert_batch *b, const int64_t *ids,
                               int ok, void *arg);

/* An intake on base holding at most max_pending batches. NULL when out of
 * memory. Free with intake_free(), which drops waiting batches unanswered. */
struct intake *intake_new(struct event_base *base, size_t max_pending,
                          intake_done_fn done, void *arg);
void intake_free(struct intake *in);

/* The store batches are written to (borrowed); NULL until it opens. */
void intake_set_store(struct intake *in, struct store *s);
struct store *intake_store(const struct intake *in);

/* 1 when max_pending batches already wait for this turn's commit. */
int intake_full(const struct intake *in);

/*
 * Queues batch for this turn's commit and takes it (the caller's copy is
 * emptied). Returns 0, or -1 when out of memory: then the caller still owns
 * the batch.
 */
int intake_add(struct intake *in, void *req, struct alert_batch *batch);

/* Commits and answers the batches waiting for this turn now (shutdown). */
void intake_flush(struct intake *in);

#endif
