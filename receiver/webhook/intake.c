/* intake.c -- the webhook intake: one store transaction per loop turn for every batch
 * waiting */
#include "intake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "store.h"

/* A webhook parsed and waiting for the loop turn's group commit. */
struct pending {
    void *p_req;                /* borrowed; answered by the done callback */
    struct alert_batch p_batch; /* owned */
    int64_t *p_ids;             /* owned; alert ids once stored */
    struct pending *p_next;
};

struct intake {
    struct store *i_store;     /* borrowed, may be NULL */
    struct event *i_commit_ev; /* owned; runs once per turn with pending work */
    size_t i_max_pending;
    intake_done_fn i_done;
    void *i_arg;
    struct pending *i_pending; /* owned queue, in arrival order */
    struct pending **i_pending_tail;
    size_t i_pending_count;
};

static void
pending_free(struct pending *p)
{
    alert_batch_free(&p->p_batch);
    free(p->p_ids);
    free(p);
}

/* Writes every pending alert in one transaction. 0, or -1 (all rolled back). */
static int
commit_pending(struct intake *in, char *err, size_t errlen)
{
    int64_t received = clock_wall_ms();

    if (in->i_store == NULL) {
        snprintf(err, errlen, "audit store is not open");
        return -1;
    }
    /* A 200 written into a removed file would be a lost alert; serve.c reopens. */
    if (store_moved(in->i_store)) {
        snprintf(err, errlen, "the audit database file was removed or replaced");
        return -1;
    }
    if (store_begin(in->i_store, err, errlen) == -1)
        return -1;
    for (struct pending *p = in->i_pending; p != NULL; p = p->p_next) {
        for (size_t i = 0; i < p->p_batch.ab_count; i++) {
            const struct alert *a = &p->p_batch.ab_alerts[i];
            struct store_alert sa = {
                .sa_received_ms = received,
                .sa_alertname = a->a_alertname,
                .sa_status = alert_status_name(a),
                .sa_fingerprint = a->a_fingerprint,
                /* absent is NULL in the store: audit shows null, not "" */
                .sa_starts_at = a->a_starts_at[0] != '\0' ? a->a_starts_at : NULL,
                .sa_ends_at = a->a_ends_at[0] != '\0' ? a->a_ends_at : NULL,
                .sa_labels_json = a->a_labels_json,
                .sa_annotations_json = a->a_annotations_json,
            };
            if (store_add_alert(in->i_store, &sa, &p->p_ids[i], err, errlen) == -1) {
                store_rollback(in->i_store);
                return -1;
            }
        }
    }
    return store_commit(in->i_store, err, errlen);
}

/* Once per loop turn with webhooks waiting: one commit, then every answer. */
static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
    struct intake *in = arg;
    struct pending *p, *next;
    char err[512] = "";
    int ok;

    log_hold(); /* one write(2) for the batch's lines */
    ok = commit_pending(in, err, sizeof(err)) == 0;

    if (!ok)
        log_event(LOG_LEVEL_ERROR, "webhook batch not stored; answering 503", "error",
                  err, (char *)NULL);
    for (p = in->i_pending; p != NULL; p = next) {
        next = p->p_next;
        in->i_done(p->p_req, &p->p_batch, p->p_ids, ok, in->i_arg);
        pending_free(p);
    }
    in->i_pending = NULL;
    in->i_pending_tail = &in->i_pending;
    in->i_pending_count = 0;
    log_release();
}

struct intake *
intake_new(struct event_base *base, size_t max_pending, intake_done_fn done, void *arg)
{
    struct intake *in;

    if ((in = calloc(1, sizeof(*in))) == NULL)
        return NULL;
    in->i_max_pending = max_pending;
    in->i_done = done;
    in->i_arg = arg;
    in->i_pending_tail = &in->i_pending;
    if ((in->i_commit_ev = event_new(base, -1, 0, commit_cb, in)) == NULL) {
        free(in);
        return NULL;
    }
    return in;
}

void
intake_free(struct intake *in)
{
    struct pending *p, *next;

    if (in == NULL)
        return;
    for (p = in->i_pending; p != NULL; p = next) {
        next = p->p_next;
        pending_free(p);
    }
    event_free(in->i_commit_ev);
    free(in);
}

void
intake_set_store(struct intake *in, struct store *s)
{
    in->i_store = s;
}

struct store *
intake_store(const struct intake *in)
{
    return in->i_store;
}

int
intake_full(const struct intake *in)
{
    return in->i_pending_count >= in->i_max_pending;
}

int
intake_add(struct intake *in, void *req, struct alert_batch *batch)
{
    struct pending *p;

    if ((p = calloc(1, sizeof(*p))) == NULL)
        return -1;
    if (batch->ab_count > 0 &&
        (p->p_ids = calloc(batch->ab_count, sizeof(*p->p_ids))) == NULL) {
        free(p);
        return -1;
    }
    p->p_batch = *batch;
    memset(batch, 0, sizeof(*batch));
    p->p_req = req;
    *in->i_pending_tail = p;
    in->i_pending_tail = &p->p_next;
    if (in->i_pending_count++ == 0)
        event_active(in->i_commit_ev, EV_TIMEOUT, 0);
    return 0;
}

void
intake_flush(struct intake *in)
{
    if (in->i_pending_count > 0) {
        event_del(in->i_commit_ev);
        commit_cb(-1, 0, in);
    }
}
