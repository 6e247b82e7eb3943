/* election.c -- leader election on a coordination.k8s.io/v1 Lease with client-go's
 * semantics (tools/leaderelection), as a pure state machine
 *
 * One try is client-go's tryAcquireOrRenew(): a leader whose lease is still
 * valid PUTs at once with the version it last wrote (the fast path); if that
 * fails, or it is not leading, it GETs the Lease, records when the record was
 * last seen to change (observedTime, on the caller's monotonic clock), and
 * takes it when nobody holds it, it holds it itself, or the record has not
 * changed for its leaseDurationSeconds -- never by reading renewTime as a
 * clock, so the clocks of the two replicas need not agree. A 404 creates it
 * (POST); a 409 on either write means someone else came first.
 * A leader renews every retry period; a renew round that does not succeed
 * within the renew deadline ends its leadership. */
#include "election.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void
copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src != NULL ? src : "");
}

int
lease_record_differs(const struct lease_record *a, const struct lease_record *b)
{
    return strcmp(a->lr_holder, b->lr_holder) != 0 ||
           a->lr_duration_s != b->lr_duration_s ||
           strcmp(a->lr_acquire, b->lr_acquire) != 0 ||
           strcmp(a->lr_renew, b->lr_renew) != 0 ||
           a->lr_transitions != b->lr_transitions;
}

int
lease_microtime(int64_t wall_us, char *out, size_t outlen)
{
    int64_t secs = wall_us >= 0 ? wall_us / 1000000 : -((-wall_us + 999999) / 1000000);
    int64_t frac = wall_us - secs * 1000000;
    time_t t = (time_t)secs;
    struct tm tm;
    int n;

    if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
        return -1;
    n = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (long long)frac);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

void
election_init(struct election *e, const char *id, int64_t now_ms)
{
    memset(e, 0, sizeof(*e));
    copy_str(e->e_id, sizeof(e->e_id), id);
    e->e_lease_ms = ELECTION_LEASE_MS;
    e->e_deadline_ms = ELECTION_RENEW_DEADLINE_MS;
    e->e_retry_ms = ELECTION_RETRY_MS;
    e->e_round_ms = -1;
    e->e_next_ms = now_ms;
}

/* isLeaseValid(): the record has changed within its own leaseDurationSeconds
 * (on our clock, from when we saw it change). */
static int
lease_valid(const struct election *e, int64_t now_ms)
{
    return e->e_observed_any &&
           e->e_observed_ms + e->e_observed.lr_duration_s * 1000 > now_ms;
}

/* IsLeader(): the record last seen names us. */
static int
observed_us(const struct election *e)
{
    return e->e_observed_any && strcmp(e->e_observed.lr_holder, e->e_id) == 0;
}

/* setObservedRecord() when the record changed: observedTime is now. */
static void
observe(struct election *e, const struct lease_record *r, int64_t now_ms)
{
    if (!e->e_observed_any || lease_record_differs(&e->e_observed, r)) {
        e->e_observed = *r;
        e->e_observed_ms = now_ms;
        e->e_observed_any = 1;
    }
}

/* The record a try writes: held by us from wall_us, keeping acquireTime and
 * the transitions when we held it already (else one more transition). */
static void
our_record(const struct election *e, int64_t wall_us, int new_holder,
           struct lease_record *r)
{
    memset(r, 0, sizeof(*r));
    copy_str(r->lr_holder, sizeof(r->lr_holder), e->e_id);
    r->lr_duration_s = e->e_lease_ms / 1000;
    if (lease_microtime(wall_us, r->lr_renew, sizeof(r->lr_renew)) == -1)
        r->lr_renew[0] = '\0'; /* can't happen: the caller's clock is sane */
    if (new_holder || e->e_observed.lr_acquire[0] == '\0')
        copy_str(r->lr_acquire, sizeof(r->lr_acquire), r->lr_renew);
    else
        copy_str(r->lr_acquire, sizeof(r->lr_acquire), e->e_observed.lr_acquire);
    r->lr_transitions = e->e_observed_any ? e->e_observed.lr_transitions : 0;
    if (new_holder && e->e_observed_any && r->lr_transitions < INT32_MAX)
        r->lr_transitions++;
}

static void
lose(struct election *e, int64_t now_ms, const char *why)
{
    e->e_leading = 0;
    e->e_round_ms = -1;
    e->e_next_ms = now_ms + e->e_retry_ms;
    copy_str(e->e_why, sizeof(e->e_why), why);
}

/* A renew round that has not succeeded within the deadline ends leadership. */
static void
check_deadline(struct election *e, int64_t now_ms)
{
    if (e->e_leading && e->e_round_ms >= 0 && now_ms - e->e_round_ms >= e->e_deadline_ms)
        lose(e, now_ms, "could not renew the Lease within the renew deadline");
}

static void
succeed(struct election *e, int64_t now_ms)
{
    if (!e->e_leading)
        e->e_became++;
    e->e_leading = 1;
    e->e_renewed_ms = e->e_inflight_sent_ms;
    e->e_round_ms = -1;
    e->e_next_ms = now_ms + e->e_retry_ms;
    e->e_why[0] = '\0';
}

static void
fail(struct election *e, int64_t now_ms, const char *why)
{
    copy_str(e->e_why, sizeof(e->e_why), why);
    e->e_next_ms = now_ms + e->e_retry_ms;
    check_deadline(e, now_ms);
}

static void
send(struct election *e, int64_t now_ms, const struct election_req *rq)
{
    e->e_inflight = 1;
    e->e_inflight_op = rq->er_op;
    e->e_inflight_why = rq->er_why;
    e->e_inflight_sent_ms = now_ms;
}

/* Fills rq with a write of our record (a renewal, a fence or an acquisition). */
static void
write_req(struct election *e, int64_t wall_us, enum election_op op, enum election_why why,
          int new_holder, struct election_req *rq)
{
    memset(rq, 0, sizeof(*rq));
    rq->er_op = op;
    rq->er_why = why;
    our_record(e, wall_us, new_holder, &rq->er_record);
    if (op == EOP_UPDATE)
        copy_str(rq->er_rv, sizeof(rq->er_rv), e->e_rv);
}

/* The wake-up time while nothing can be sent. */
static int64_t
wake_at(const struct election *e)
{
    int64_t t = e->e_inflight ? INT64_MAX : e->e_next_ms;

    if (e->e_leading && e->e_round_ms >= 0 && e->e_round_ms + e->e_deadline_ms < t)
        t = e->e_round_ms + e->e_deadline_ms;
    return t;
}

enum election_op
election_next(struct election *e, int64_t now_ms, int64_t now_wall_us,
              struct election_req *rq, int64_t *wake_ms)
{
    memset(rq, 0, sizeof(*rq));
    *wake_ms = INT64_MAX;
    if (e->e_stopped || e->e_releasing)
        return EOP_NONE;
    check_deadline(e, now_ms);
    if (!e->e_inflight && e->e_has_pending) {
        /* The rest of a try: its write after the GET, or the slow path's GET. */
        *rq = e->e_pending;
        e->e_has_pending = 0;
        if (e->e_leading && e->e_round_ms < 0)
            e->e_round_ms = now_ms;
        send(e, now_ms, rq);
        return rq->er_op;
    }
    if (e->e_inflight || now_ms < e->e_next_ms) {
        *wake_ms = wake_at(e);
        return EOP_NONE;
    }
    /* A try is due. A leader's first try after its last success opens the
     * renew round the deadline counts from. */
    if (e->e_leading && e->e_round_ms < 0)
        e->e_round_ms = now_ms;
    e->e_try_wall_us = now_wall_us;
    if (observed_us(e) && lease_valid(e, now_ms) && e->e_rv[0] != '\0') {
        /* The fast path: renew optimistically with the version last written. */
        write_req(e, now_wall_us, EOP_UPDATE, e->e_leading ? EWHY_RENEW : EWHY_ACQUIRE, 0,
                  rq);
        e->e_fast = 1;
    } else {
        rq->er_op = EOP_GET;
        e->e_fast = 0;
    }
    send(e, now_ms, rq);
    return rq->er_op;
}

/* The GET came back: take it, or learn who holds it. rq gets the write to
 * send at once, if any (then 1). */
static int
after_get(struct election *e, int64_t now_ms, const struct election_answer *a,
          struct election_req *rq)
{
    const char *holder;
    int ours;

    if (a->ea_outcome == EANS_NOT_FOUND) {
        /* Nobody made it yet: create it, holding it from now. */
        e->e_rv[0] = '\0';
        write_req(e, e->e_try_wall_us, EOP_CREATE, EWHY_ACQUIRE, 1, rq);
        rq->er_record.lr_transitions = 0;
        return 1;
    }
    if (a->ea_outcome != EANS_OK || a->ea_record == NULL || a->ea_rv == NULL) {
        fail(e, now_ms, "cannot read the Lease");
        return 0;
    }
    observe(e, a->ea_record, now_ms);
    copy_str(e->e_rv, sizeof(e->e_rv), a->ea_rv);
    holder = e->e_observed.lr_holder;
    ours = strcmp(holder, e->e_id) == 0;
    if (holder[0] != '\0' && !ours && lease_valid(e, now_ms)) {
        /* Held by another, and it changed within its lease: follow. */
        if (e->e_leading)
            lose(e, now_ms, "another replica holds the Lease");
        fail(e, now_ms, "another replica holds the Lease");
        return 0;
    }
    write_req(e, e->e_try_wall_us, EOP_UPDATE, e->e_leading ? EWHY_RENEW : EWHY_ACQUIRE,
              !ours, rq);
    return 1;
}

void
election_answer(struct election *e, int64_t now_ms, const struct election_answer *a)
{
    struct election_req rq;
    enum election_op op = e->e_inflight_op;
    enum election_why why = e->e_inflight_why;
    int fast = e->e_fast;

    if (!e->e_inflight)
        return; /* can't happen: an answer without a call */
    e->e_inflight = 0;
    e->e_fast = 0;
    if (e->e_releasing && why != EWHY_RELEASE) {
        /* Answered after SIGTERM: only what it shows of the Lease counts (the
         * release is sent with the version it carries). */
        if (a->ea_outcome == EANS_OK && a->ea_record != NULL && a->ea_rv != NULL) {
            observe(e, a->ea_record, now_ms);
            copy_str(e->e_rv, sizeof(e->e_rv), a->ea_rv);
        }
        return;
    }
    if (op == EOP_GET) {
        if (after_get(e, now_ms, a, &rq)) {
            e->e_pending = rq; /* sent by the next election_next(), at once */
            e->e_has_pending = 1;
        }
        return;
    }
    /* A write: CREATE or UPDATE. */
    if (a->ea_outcome == EANS_OK && a->ea_record != NULL && a->ea_rv != NULL) {
        /* The object the server kept is what everyone now sees changing. */
        e->e_observed = *a->ea_record;
        e->e_observed_ms = now_ms;
        e->e_observed_any = 1;
        copy_str(e->e_rv, sizeof(e->e_rv), a->ea_rv);
        if (why == EWHY_RELEASE) {
            e->e_stopped = 1;
            return;
        }
        if (strcmp(a->ea_record->lr_holder, e->e_id) == 0) {
            succeed(e, now_ms);
            return;
        }
        fail(e, now_ms, "the Lease written names another holder"); /* can't happen */
        return;
    }
    if (why == EWHY_RELEASE) {
        e->e_stopped = 1;
        return;
    }
    fail(e, now_ms,
         a->ea_outcome == EANS_CONFLICT
             ? (op == EOP_CREATE ? "another replica created the Lease first"
                                 : "another write to the Lease came first (409)")
             : "the write to the Lease failed");
    /* A failed fast path (or fence) reads the Lease at once, as client-go's
     * try goes on to its slow path; a failed slow path waits a retry period. */
    if ((fast || why == EWHY_FENCE) && !e->e_stopped) {
        memset(&e->e_pending, 0, sizeof(e->e_pending));
        e->e_pending.er_op = EOP_GET;
        e->e_has_pending = 1;
    }
}

int
election_fence(struct election *e, int64_t now_ms, int64_t now_wall_us,
               struct election_req *rq, const char **why)
{
    memset(rq, 0, sizeof(*rq));
    if (e->e_stopped || e->e_releasing) {
        *why = "this replica is stopping";
        return -1;
    }
    check_deadline(e, now_ms);
    if (!e->e_leading) {
        *why = "this replica does not hold the Lease";
        return -1;
    }
    if (now_ms - e->e_renewed_ms >= e->e_deadline_ms) {
        *why = "its last renewal of the Lease is older than the renew deadline";
        return -1;
    }
    if (e->e_inflight)
        return 1;
    /* The PUT with the version last seen is the arbiter: a stale version is a
     * 409, and nothing is done. It renews too, so a pending renewal or read
     * is not needed any more. */
    e->e_has_pending = 0;
    if (e->e_round_ms < 0)
        e->e_round_ms = now_ms;
    write_req(e, now_wall_us, EOP_UPDATE, EWHY_FENCE, 0, rq);
    send(e, now_ms, rq);
    return 0;
}

int
election_release(struct election *e, int64_t now_ms, int64_t now_wall_us,
                 struct election_req *rq)
{
    memset(rq, 0, sizeof(*rq));
    e->e_leading = 0; /* whatever comes of the release, this replica acts no more */
    e->e_releasing = 1;
    e->e_has_pending = 0;
    if (e->e_stopped)
        return -1;
    if (e->e_inflight)
        return 1;
    if (!observed_us(e) || e->e_rv[0] == '\0') {
        e->e_stopped = 1;
        return -1;
    }
    rq->er_op = EOP_UPDATE;
    rq->er_why = EWHY_RELEASE;
    rq->er_record.lr_holder[0] = '\0';
    rq->er_record.lr_duration_s = 1;
    if (lease_microtime(now_wall_us, rq->er_record.lr_renew,
                        sizeof(rq->er_record.lr_renew)) == -1)
        rq->er_record.lr_renew[0] = '\0'; /* can't happen */
    copy_str(rq->er_record.lr_acquire, sizeof(rq->er_record.lr_acquire),
             rq->er_record.lr_renew);
    rq->er_record.lr_transitions = e->e_observed.lr_transitions;
    copy_str(rq->er_rv, sizeof(rq->er_rv), e->e_rv);
    send(e, now_ms, rq);
    return 0;
}

int
election_leading(const struct election *e)
{
    return e->e_leading && !e->e_releasing && !e->e_stopped;
}

int
election_may_act(const struct election *e, int64_t now_ms)
{
    return election_leading(e) && now_ms - e->e_renewed_ms < e->e_deadline_ms &&
           !(e->e_round_ms >= 0 && now_ms - e->e_round_ms >= e->e_deadline_ms);
}

const char *
election_leader(const struct election *e)
{
    return e->e_observed_any ? e->e_observed.lr_holder : "";
}
