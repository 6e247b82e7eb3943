/* test_election.c -- the Lease election on a fake clock against a fake API server:
 * create, renewals, expiry judged on the local clock, 409s, clock jumps, a record that
 * changes while a follower waits, the renew deadline, fencing and release */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "election.h"

/* --- a fake API server holding one Lease --------------------------------- */

enum fault { F_NONE, F_ERROR, F_CONFLICT };

struct server {
    int exists;
    struct lease_record rec;
    long rv;
    enum fault fault_writes; /* every write fails this way */
    enum fault fault_gets;
    int gets, creates, updates; /* calls served */
};

/* Answers rq as the API server would, into a (record and rv in ans_rec, rv). */
static void
serve(struct server *s, const struct election_req *rq, struct election_answer *a,
      struct lease_record *ans_rec, char *rv, size_t rvlen)
{
    memset(a, 0, sizeof(*a));
    switch (rq->er_op) {
    case EOP_GET:
        s->gets++;
        if (s->fault_gets != F_NONE) {
            a->ea_outcome = EANS_ERROR;
            return;
        }
        if (!s->exists) {
            a->ea_outcome = EANS_NOT_FOUND;
            return;
        }
        break;
    case EOP_CREATE:
        s->creates++;
        if (s->fault_writes != F_NONE) {
            a->ea_outcome = s->fault_writes == F_CONFLICT ? EANS_CONFLICT : EANS_ERROR;
            return;
        }
        if (s->exists) {
            a->ea_outcome = EANS_CONFLICT;
            return;
        }
        s->exists = 1;
        s->rec = rq->er_record;
        s->rv++;
        break;
    case EOP_UPDATE:
        s->updates++;
        if (s->fault_writes != F_NONE) {
            a->ea_outcome = s->fault_writes == F_CONFLICT ? EANS_CONFLICT : EANS_ERROR;
            return;
        }
        if (!s->exists) {
            a->ea_outcome = EANS_ERROR;
            return;
        }
        char cur[32];
        snprintf(cur, sizeof(cur), "%ld", s->rv);
        if (strcmp(cur, rq->er_rv) != 0) {
            a->ea_outcome = EANS_CONFLICT;
            return;
        }
        s->rec = rq->er_record;
        s->rv++;
        break;
    case EOP_NONE:
        fail_msg("nothing to serve");
    }
    *ans_rec = s->rec;
    snprintf(rv, rvlen, "%ld", s->rv);
    a->ea_outcome = EANS_OK;
    a->ea_record = ans_rec;
    a->ea_rv = rv;
}

/* The wall clock: it moves with the fake monotonic one (so renewTime changes
 * with each renewal, as it does in life), and a test may jump it by
 * wall_jump_us: it never enters a decision. */
static int64_t wall_jump_us;
#define WALL(now) (1500000000000000LL + (int64_t)(now)*1000 + wall_jump_us)

/* Calls election_next() and serves what it asks, until it asks nothing.
 * Returns the number of calls made. */
static int
pump(struct election *e, struct server *s, int64_t now)
{
    struct election_req rq;
    struct election_answer a;
    struct lease_record r;
    char rv[32];
    int64_t wake;
    int n = 0;

    while (election_next(e, now, WALL(now), &rq, &wake) != EOP_NONE) {
        serve(s, &rq, &a, &r, rv, sizeof(rv));
        election_answer(e, now, &a);
        n++;
        assert_true(n < 10);
    }
    return n;
}

/* Runs e (and f, when not NULL) every 100 ms of fake time from *now to end. */
static void
run(struct election *e, struct election *f, struct server *s, int64_t *now, int64_t end)
{
    for (; *now <= end; *now += 100) {
        pump(e, s, *now);
        if (f != NULL)
            pump(f, s, *now);
    }
}

/* A renewal by another holder, as its own renewals would look. */
static void
foreign_renewal(struct server *s, const char *holder, const char *renew)
{
    snprintf(s->rec.lr_holder, sizeof(s->rec.lr_holder), "%s", holder);
    snprintf(s->rec.lr_renew, sizeof(s->rec.lr_renew), "%s", renew);
    s->rec.lr_duration_s = 15;
    s->exists = 1;
    s->rv++;
}

/* --- tests --------------------------------------------------------------- */

static void
test_microtime(void **state)
{
    char t[LEASE_TIME_MAX];

    (void)state;
    assert_int_equal(lease_microtime(1500000000123456LL, t, sizeof(t)), 0);
    assert_string_equal(t, "2017-07-14T02:40:00.123456Z");
    assert_int_equal(lease_microtime(0, t, sizeof(t)), 0);
    assert_string_equal(t, "1970-01-01T00:00:00.000000Z"); /* six digits, always */
    assert_int_equal(lease_microtime(1500000000000001LL, t, sizeof(t)), 0);
    assert_string_equal(t, "2017-07-14T02:40:00.000001Z");
    assert_int_equal(lease_microtime(1500000000000000LL, t, 10), -1); /* too small */
}

static void
test_creates_when_absent(void **state)
{
    struct election e;
    struct server s = {0};

    (void)state;
    election_init(&e, "gvw-0", 0);
    assert_false(election_leading(&e));
    assert_int_equal(pump(&e, &s, 0), 2); /* GET 404, then POST */
    assert_int_equal(s.gets, 1);
    assert_int_equal(s.creates, 1);
    assert_true(election_leading(&e));
    assert_true(election_may_act(&e, 0));
    assert_string_equal(election_leader(&e), "gvw-0");
    assert_string_equal(s.rec.lr_holder, "gvw-0");
    assert_int_equal(s.rec.lr_duration_s, 15);
    assert_int_equal(s.rec.lr_transitions, 0);
    assert_string_equal(s.rec.lr_renew, "2017-07-14T02:40:00.000000Z");
    assert_string_equal(s.rec.lr_acquire, s.rec.lr_renew);
    assert_int_equal(e.e_became, 1);
}

static void
test_renews_by_put_every_retry(void **state)
{
    struct election e;
    struct server s = {0};
    int64_t now = 0;
    long rv0;

    (void)state;
    election_init(&e, "gvw-0", 0);
    pump(&e, &s, 0);
    rv0 = s.rv;
    run(&e, NULL, &s, &now, 10000);
    /* A PUT with the version last written at 2, 4, 6, 8 and 10 s: no read. */
    assert_int_equal(s.updates, 5);
    assert_int_equal(s.gets, 1);
    assert_int_equal(s.rv, rv0 + 5);
    assert_true(election_leading(&e));
    assert_int_equal(s.rec.lr_transitions, 0); /* a renewal is no transition */
    assert_string_equal(s.rec.lr_acquire, "2017-07-14T02:40:00.000000Z");
    assert_string_equal(s.rec.lr_renew, "2017-07-14T02:40:10.000000Z");
}

static void
test_exactly_one_leads(void **state)
{
    struct election a, b;
    struct server s = {0};
    int64_t now = 0;

    (void)state;
    election_init(&a, "gvw-0", 0);
    election_init(&b, "gvw-1", 0);
    run(&a, &b, &s, &now, 60000);
    assert_true(election_leading(&a));
    assert_false(election_leading(&b));
    assert_false(election_may_act(&b, now));
    assert_string_equal(election_leader(&b), "gvw-0");
    assert_int_equal(b.e_became, 0);
}

static void
test_create_race_409(void **state)
{
    struct election a, b;
    struct server s = {0};
    struct election_req ra, rb;
    struct election_answer ans;
    struct lease_record r;
    char rv[32];
    int64_t wake;

    (void)state;
    election_init(&a, "gvw-0", 0);
    election_init(&b, "gvw-1", 0);
    /* Both read "not found" before either creates. */
    assert_int_equal(election_next(&a, 0, WALL(0), &ra, &wake), EOP_GET);
    assert_int_equal(election_next(&b, 0, WALL(0), &rb, &wake), EOP_GET);
    serve(&s, &ra, &ans, &r, rv, sizeof(rv));
    election_answer(&a, 0, &ans);
    serve(&s, &rb, &ans, &r, rv, sizeof(rv));
    election_answer(&b, 0, &ans);
    assert_int_equal(election_next(&a, 0, WALL(0), &ra, &wake), EOP_CREATE);
    assert_int_equal(election_next(&b, 0, WALL(0), &rb, &wake), EOP_CREATE);
    serve(&s, &ra, &ans, &r, rv, sizeof(rv));
    election_answer(&a, 0, &ans);
    serve(&s, &rb, &ans, &r, rv, sizeof(rv));
    assert_int_equal(ans.ea_outcome, EANS_CONFLICT); /* lost the race */
    election_answer(&b, 0, &ans);
    assert_true(election_leading(&a));
    assert_false(election_leading(&b));
    /* b tries again a retry period later, and follows. */
    assert_int_equal(election_next(&b, 1000, WALL(1000), &rb, &wake), EOP_NONE);
    assert_int_equal(wake, 2000);
    pump(&b, &s, 2000);
    assert_false(election_leading(&b));
    assert_string_equal(election_leader(&b), "gvw-0");
}

/* The leader stops (SIGKILL): the follower takes over 15 s after it last saw
 * the record change, on its own clock, with one more transition. */
static void
test_expiry_from_observed_change(void **state)
{
    struct election a, b;
    struct server s = {0};
    int64_t now = 0, taken = -1;

    (void)state;
    election_init(&a, "gvw-0", 0);
    election_init(&b, "gvw-1", 0);
    run(&a, &b, &s, &now, 5000);
    assert_true(election_leading(&a));
    /* a's last renewal was at 4 s; b read it changed at 4 s. From 5 s a is dead. */
    for (; now <= 40000; now += 100) {
        pump(&b, &s, now);
        if (election_leading(&b) && taken < 0)
            taken = now;
    }
    assert_true(taken >= 4000 + 15000);
    assert_true(taken <= 4000 + 15000 + 2000); /* at its next try */
    assert_string_equal(s.rec.lr_holder, "gvw-1");
    assert_int_equal(s.rec.lr_transitions, 1);
    assert_string_not_equal(s.rec.lr_acquire, "2017-07-14T02:40:00.000000Z"
                                              "x");
}

/* A record whose renewTime is ancient (a clock far behind) but that keeps
 * changing is never expired; one whose renewTime is far in the future but
 * that stops changing expires after leaseDurationSeconds, on the local clock. */
static void
test_remote_renew_time_is_not_a_clock(void **state)
{
    struct election b;
    struct server s = {0};
    char t[LEASE_TIME_MAX];
    int64_t now;

    (void)state;
    election_init(&b, "gvw-1", 0);
    for (now = 0; now <= 60000; now += 100) {
        if (now % 2000 == 0) {
            snprintf(t, sizeof(t), "2000-01-01T00:00:%02lld.000000Z",
                     (long long)(now / 2000) % 60);
            foreign_renewal(&s, "gvw-0", t);
        }
        pump(&b, &s, now);
        assert_false(election_leading(&b));
    }
    /* Now it stops changing, with a renewTime in 2099: the local clock decides. */
    foreign_renewal(&s, "gvw-0", "2099-01-01T00:00:00.000000Z");
    int64_t changed_at = now, taken = -1;
    for (; now <= changed_at + 30000; now += 100) {
        pump(&b, &s, now);
        if (election_leading(&b) && taken < 0)
            taken = now;
    }
    assert_true(taken >= changed_at + 15000);
    /* Seen changed at its next look (<= 2 s), taken at a try <= 2 s after expiry. */
    assert_true(taken <= changed_at + 2000 + 15000 + 2000);
    /* The wall clock jumping (an NTP step) changes nothing in either case. */
    wall_jump_us += 3600LL * 1000000;
    pump(&b, &s, now);
    assert_true(election_leading(&b));
    wall_jump_us -= 3600LL * 1000000;
}

/* The record changes while the follower waits: the 15 s count again from
 * that change, not from the first look. */
static void
test_change_while_waiting_restarts_the_count(void **state)
{
    struct election b;
    struct server s = {0};
    int64_t now;

    (void)state;
    election_init(&b, "gvw-1", 0);
    foreign_renewal(&s, "gvw-0", "2026-11-28T19:00:00.000000Z");
    for (now = 0; now < 14000; now += 100)
        pump(&b, &s, now);
    foreign_renewal(&s, "gvw-0", "2026-11-28T19:00:14.000000Z"); /* at 14 s */
    for (; now <= 28000; now += 100) {
        pump(&b, &s, now);
        assert_false(election_leading(&b)); /* 15 s after 0 would be 15 s: too early */
    }
    for (; now <= 32000; now += 100)
        pump(&b, &s, now);
    assert_true(election_leading(&b));
}

/* A leader whose writes fail: may_act stops 10 s after its last successful
 * renewal, and it stops leading when the renew round passes the deadline. A
 * failed fast path reads the Lease at once (client-go's slow path). */
static void
test_renew_deadline(void **state)
{
    struct election a;
    struct server s = {0};
    int64_t now = 0, last_ok;

    (void)state;
    election_init(&a, "gvw-0", 0);
    run(&a, NULL, &s, &now, 4000); /* renewed at 0, 2 and 4 s */
    last_ok = 4000;
    s.fault_writes = F_ERROR;
    s.fault_gets = F_ERROR;
    int gets0 = s.gets;
    pump(&a, &s, 6000); /* the fast path fails, then the GET fails too */
    assert_int_equal(s.gets, gets0 + 1);
    for (now = 6000; now < last_ok + 10000; now += 100) {
        pump(&a, &s, now);
        assert_true(election_may_act(&a, now));
    }
    assert_false(election_may_act(&a, last_ok + 10000));
    /* The round opened at 6 s: leadership ends at 16 s, not before. */
    for (; now < 16000; now += 100) {
        pump(&a, &s, now);
        assert_true(election_leading(&a));
    }
    pump(&a, &s, 16000);
    assert_false(election_leading(&a));
    assert_string_equal(a.e_why, "could not renew the Lease within the renew deadline");
    /* The API comes back and the Lease still names it: it leads again at once
     * (no transition: it held it all along). */
    s.fault_writes = F_NONE;
    s.fault_gets = F_NONE;
    run(&a, NULL, &s, &now, 20000);
    assert_true(election_leading(&a));
    assert_int_equal(s.rec.lr_transitions, 0);
    assert_int_equal(a.e_became, 2);
}

/* Someone else wrote the Lease (a 409 to the renewal): the leader reads it
 * at once and follows the new holder. */
static void
test_409_on_renewal_follows(void **state)
{
    struct election a;
    struct server s = {0};
    int64_t now = 0;

    (void)state;
    election_init(&a, "gvw-0", 0);
    run(&a, NULL, &s, &now, 1000);
    foreign_renewal(&s, "gvw-1", "2026-11-28T19:00:00.000000Z");
    s.rec.lr_transitions = 1;
    pump(&a, &s, 2000); /* PUT 409, GET: held by gvw-1, changed just now */
    assert_false(election_leading(&a));
    assert_string_equal(election_leader(&a), "gvw-1");
}

static void
test_fence(void **state)
{
    struct election a;
    struct server s = {0};
    struct election_req rq;
    struct election_answer ans;
    struct lease_record r;
    const char *why = NULL;
    char rv[32];
    int64_t wake;
    long rv0;

    (void)state;
    election_init(&a, "gvw-0", 0);
    pump(&a, &s, 0);
    rv0 = s.rv;
    /* A fence is a PUT with the version last written; it renews. */
    assert_int_equal(election_fence(&a, 500, WALL(500), &rq, &why), 0);
    assert_int_equal(rq.er_op, EOP_UPDATE);
    assert_int_equal(rq.er_why, EWHY_FENCE);
    assert_string_equal(rq.er_record.lr_holder, "gvw-0");
    /* Another call while it is out: ask again later. */
    struct election_req busy;
    assert_int_equal(election_fence(&a, 500, WALL(500), &busy, &why), 1);
    serve(&s, &rq, &ans, &r, rv, sizeof(rv));
    election_answer(&a, 500, &ans);
    assert_int_equal(s.rv, rv0 + 1);
    assert_string_equal(s.rec.lr_renew, "2017-07-14T02:40:00.500000Z");
    /* A 409 to the fence: the leader reads the Lease next, at once. */
    foreign_renewal(&s, "gvw-1", "2026-11-28T19:00:00.000000Z");
    assert_int_equal(election_fence(&a, 600, WALL(600), &rq, &why), 0);
    serve(&s, &rq, &ans, &r, rv, sizeof(rv));
    assert_int_equal(ans.ea_outcome, EANS_CONFLICT);
    election_answer(&a, 600, &ans);
    assert_int_equal(election_next(&a, 600, WALL(600), &rq, &wake), EOP_GET);
    serve(&s, &rq, &ans, &r, rv, sizeof(rv));
    election_answer(&a, 600, &ans);
    assert_false(election_leading(&a));
    /* A follower may not fence. */
    assert_int_equal(election_fence(&a, 700, WALL(700), &rq, &why), -1);
    assert_string_equal(why, "this replica does not hold the Lease");
}

/* A leader whose last renewal is older than the renew deadline fences nothing,
 * even before its round has run out. */
static void
test_stale_leader_fences_nothing(void **state)
{
    struct election a;
    struct server s = {0};
    struct election_req rq;
    const char *why = NULL;
    int64_t now = 0;

    (void)state;
    election_init(&a, "gvw-0", 0);
    pump(&a, &s, 0);
    s.fault_writes = F_ERROR;
    s.fault_gets = F_ERROR;
    for (now = 100; now < 10000; now += 100)
        pump(&a, &s, now);
    assert_true(election_leading(&a)); /* the round opened at 2 s */
    assert_int_equal(election_fence(&a, 10000, WALL(10000), &rq, &why), -1);
    assert_string_equal(why,
                        "its last renewal of the Lease is older than the renew deadline");
}

/* SIGTERM: the leader empties holderIdentity (lease 1 s, transitions kept)
 * and the follower takes it at its next try, not 15 s later. */
static void
test_release_hands_over(void **state)
{
    struct election a, b;
    struct server s = {0};
    struct election_req rq;
    struct election_answer ans;
    struct lease_record r;
    char rv[32];
    int64_t now = 0, released, taken = -1;

    (void)state;
    election_init(&a, "gvw-0", 0);
    election_init(&b, "gvw-1", 0);
    run(&a, &b, &s, &now, 7000);
    released = now;
    assert_int_equal(election_release(&a, now, WALL(now), &rq), 0);
    assert_false(election_leading(&a)); /* at once, before the answer */
    assert_int_equal(rq.er_op, EOP_UPDATE);
    assert_int_equal(rq.er_why, EWHY_RELEASE);
    assert_string_equal(rq.er_record.lr_holder, "");
    assert_int_equal(rq.er_record.lr_duration_s, 1);
    serve(&s, &rq, &ans, &r, rv, sizeof(rv));
    assert_int_equal(ans.ea_outcome, EANS_OK);
    election_answer(&a, now, &ans);
    assert_int_equal(s.rec.lr_transitions, 0);
    for (; now <= released + 5000; now += 100) {
        pump(&a, &s, now); /* released: it asks nothing more */
        pump(&b, &s, now);
        if (election_leading(&b) && taken < 0)
            taken = now;
    }
    assert_true(taken >= 0 && taken <= released + 2000);
    assert_int_equal(s.rec.lr_transitions, 1);
    assert_string_equal(s.rec.lr_holder, "gvw-1");
    /* A follower has nothing to release. */
    assert_int_equal(election_release(&b, now, WALL(now), &rq), 0); /* b leads now */
    struct election c;
    election_init(&c, "gvw-2", now);
    assert_int_equal(election_release(&c, now, WALL(now), &rq), -1);
}

/* An answer that claims success but carries no Lease is a failure. */
static void
test_ok_without_a_lease_is_an_error(void **state)
{
    struct election a;
    struct election_req rq;
    struct election_answer ans = {.ea_outcome = EANS_OK};
    int64_t wake;

    (void)state;
    election_init(&a, "gvw-0", 0);
    assert_int_equal(election_next(&a, 0, WALL(0), &rq, &wake), EOP_GET);
    election_answer(&a, 0, &ans);
    assert_false(election_leading(&a));
    assert_int_equal(election_next(&a, 0, WALL(0), &rq, &wake), EOP_NONE);
    assert_int_equal(wake, 2000);
    /* An answer when nothing was asked changes nothing. */
    election_answer(&a, 0, &ans);
    assert_false(election_leading(&a));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_microtime),
        cmocka_unit_test(test_creates_when_absent),
        cmocka_unit_test(test_renews_by_put_every_retry),
        cmocka_unit_test(test_exactly_one_leads),
        cmocka_unit_test(test_create_race_409),
        cmocka_unit_test(test_expiry_from_observed_change),
        cmocka_unit_test(test_remote_renew_time_is_not_a_clock),
        cmocka_unit_test(test_change_while_waiting_restarts_the_count),
        cmocka_unit_test(test_renew_deadline),
        cmocka_unit_test(test_409_on_renewal_follows),
        cmocka_unit_test(test_fence),
        cmocka_unit_test(test_stale_leader_fences_nothing),
        cmocka_unit_test(test_release_hands_over),
        cmocka_unit_test(test_ok_without_a_lease_is_an_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
