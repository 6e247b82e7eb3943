/* election.h -- leader election on a coordination.k8s.io/v1 Lease with client-go's
 * semantics, as a pure state machine: no I/O, no clock of its own */
#ifndef GVW_ELECTION_H
#define GVW_ELECTION_H

#include <stddef.h>
#include <stdint.h>

/* client-go's defaults for core components (SPEC "High availability"). */
#define ELECTION_LEASE_MS 15000L
#define ELECTION_RENEW_DEADLINE_MS 10000L
#define ELECTION_RETRY_MS 2000L

#define LEASE_ID_MAX 254 /* holderIdentity: a pod name (DNS-1123, 253) + NUL */
#define LEASE_TIME_MAX                                                                   \
    40                   /* a MicroTime as text, "2026-11-28T19:00:00.123456Z" + room    \
                          */
#define LEASE_RV_MAX 128 /* a resourceVersion (etcd's are decimal, ~20 digits) */
#define LEASE_DURATION_MAX_S 86400 /* a longer leaseDurationSeconds is read as this */

/* The election record: the Lease spec's fields client-go compares. A time
 * is kept as the text the API server returned; it is only ever written back
 * or compared for change, never read as a clock. */
struct lease_record {
    char lr_holder[LEASE_ID_MAX];    /* holderIdentity; "" = nobody holds it */
    int64_t lr_duration_s;           /* leaseDurationSeconds, 0..LEASE_DURATION_MAX_S */
    char lr_acquire[LEASE_TIME_MAX]; /* acquireTime; "" = absent */
    char lr_renew[LEASE_TIME_MAX];   /* renewTime; "" = absent */
    int64_t lr_transitions;          /* leaseTransitions, >= 0 */
};

/* What the driver is to send next. */
enum election_op {
    EOP_NONE,   /* nothing now: call election_next() again at *wake_ms */
    EOP_GET,    /* GET the Lease */
    EOP_CREATE, /* POST a new Lease with er_record */
    EOP_UPDATE, /* PUT the Lease with er_record and er_rv (the version last read) */
};

/* Why a write is sent: the driver adds to it (a fence records the act). */
enum election_why {
    EWHY_ACQUIRE, /* taking it: a new holder, or ourselves after a lapse */
    EWHY_RENEW,   /* the leader's periodic renewal */
    EWHY_FENCE,   /* the leader records an act it is about to take (and renews) */
    EWHY_RELEASE, /* SIGTERM: holderIdentity emptied so another takes over at once */
};

struct election_req {
    enum election_op er_op;
    enum election_why er_why;      /* with CREATE and UPDATE */
    struct lease_record er_record; /* with CREATE and UPDATE: the spec to write */
    char er_rv[LEASE_RV_MAX];      /* with UPDATE */
};

/* How a call ended. */
enum election_outcome {
    EANS_OK,        /* 2xx; ea_record and ea_rv hold the object returned */
    EANS_NOT_FOUND, /* 404 to the GET */
    EANS_CONFLICT,  /* 409: another write came first (or the create lost the race) */
    EANS_ERROR,     /* anything else: transport, timeout, 5xx, 403, a body not a Lease */
};

struct election_answer {
    enum election_outcome ea_outcome;
    const struct lease_record *ea_record; /* borrowed; with EANS_OK */
    const char *ea_rv;                    /* borrowed; with EANS_OK */
};

struct election {
    char e_id[LEASE_ID_MAX]; /* our identity (POD_NAME) */
    int64_t e_lease_ms, e_deadline_ms, e_retry_ms;
    /* What was seen of the Lease. */
    int e_observed_any; /* a record has been seen (read or written) */
    struct lease_record e_observed;
    int64_t e_observed_ms;   /* observedTime: monotonic ms when e_observed was last
                                seen to change (never the record's renewTime) */
    char e_rv[LEASE_RV_MAX]; /* resourceVersion of the object last read or
                                written; "" = none yet */
    /* Where it stands. */
    int e_leading;
    int64_t e_renewed_ms;          /* send time of the last write that succeeded */
    int64_t e_round_ms;            /* the start of the renew round (client-go's
                                      RenewDeadline context); -1 = no round open */
    int64_t e_next_ms;             /* when the next try is due */
    int e_fast;                    /* the call out is a fast-path renewal */
    int64_t e_try_wall_us;         /* the wall time of the try (client-go's one "now") */
    int e_has_pending;             /* e_pending goes out at once, whatever e_next_ms */
    struct election_req e_pending; /* the rest of a try: its write after the GET, or
                                      the slow path's GET after a failed fast path */
    int e_inflight;                /* a call is out; its answer is awaited */
    enum election_op e_inflight_op;
    enum election_why e_inflight_why;
    int64_t e_inflight_sent_ms;
    int64_t e_inflight_wall_us; /* the wall time written into the record sent */
    int e_releasing;            /* SIGTERM: no more tries, the release goes out */
    int e_stopped;              /* released (or nothing to release): no more calls */
    uint64_t e_became;          /* times this replica became the leader */
    char e_why[160];            /* the last failure, in words (logs, /readyz) */
};

/* Starts as a follower that has seen nothing; the first try is due at once.
 * id is copied (cut to LEASE_ID_MAX - 1 bytes: the caller checks it). */
void election_init(struct election *e, const char *id, int64_t now_ms);

/*
 * What to send now (into rq), for the monotonic now_ms and the wall time
 * now_wall_us written into renewTime/acquireTime. EOP_NONE when a call is in
 * flight or no try is due: *wake_ms says when to call again (the next try, or
 * the renew deadline of a leader whose renewals keep failing). A leader whose
 * renew round passes the deadline stops leading here.
 */
enum election_op election_next(struct election *e, int64_t now_ms, int64_t now_wall_us,
                               struct election_req *rq, int64_t *wake_ms);

/* The answer to the call election_next() or election_fence() asked for. */
void election_answer(struct election *e, int64_t now_ms, const struct election_answer *a);

/*
 * The leader is about to act: a PUT that renews and records the act, into rq.
 * 0, or -1 with why (borrowed: a static string) when it may not act now (not
 * leading, its last renewal older than the renew deadline, stopping) or a
 * call is already in flight (the driver asks again once it is answered).
 */
int election_fence(struct election *e, int64_t now_ms, int64_t now_wall_us,
                   struct election_req *rq, const char **why);

/*
 * SIGTERM: stops leading at once and, when the Lease last seen names us,
 * gives a PUT into rq that empties holderIdentity (client-go's release:
 * leaseDurationSeconds 1, renewTime and acquireTime now, leaseTransitions
 * kept). Returns 0 with rq filled, or -1 when there is nothing to release
 * or a call is in flight (then 1: call it again once it is answered). No
 * try follows either way.
 */
int election_release(struct election *e, int64_t now_ms, int64_t now_wall_us,
                     struct election_req *rq);

/* Whether this replica leads now (it decides, advertises, writes Events). */
int election_leading(const struct election *e);

/* Whether the leader may act now: leading, and its last successful write was
 * sent less than the renew deadline ago. */
int election_may_act(const struct election *e, int64_t now_ms);

/* The holder last seen ("" = nobody, or nothing seen yet). Borrowed. */
const char *election_leader(const struct election *e);

/* "2026-11-28T19:00:00.123456Z": a MicroTime, six fractional digits, UTC.
 * 0, or -1 for a time before year 0 or after 9999 (out untouched). */
int lease_microtime(int64_t wall_us, char *out, size_t outlen);

/* Whether two records differ in any field (client-go compares them whole). */
int lease_record_differs(const struct lease_record *a, const struct lease_record *b);

#endif
