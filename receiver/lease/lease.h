/* lease.h -- this replica's part in the election: the Lease's calls on the loop, the
 * fence before each act, the release at SIGTERM */
#ifndef GVW_LEASE_H
#define GVW_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "gate.h"

struct event_base;
struct kube_opts;
struct lease;

/* Calls to the API server time out after this (half the renew deadline, so a
 * leader whose API server hangs still retries before the deadline). */
#define LEASE_CALL_TIMEOUT_MS 5000L

struct lease_opts {
    const struct kube_opts *lo_kube; /* borrowed (copied): how to reach the API server;
                                        its timeout is cut to LEASE_CALL_TIMEOUT_MS */
    const char *lo_namespace;        /* borrowed (copied): POD_NAMESPACE */
    const char *lo_name;             /* borrowed (copied): LEASE_NAME */
    const char *lo_identity;         /* borrowed (copied): POD_NAME, the holderIdentity */
    /* The brakes annotation of the Lease this replica just took (NULL when it
     * has none); called before lo_leading(1, ...). May be NULL. */
    void (*lo_brakes_import)(const char *json, void *arg);
    /* The brakes as they stand, and with pending (NULL = none) already taken:
     * an owned JSON text (free()), or NULL to leave the annotation as it is.
     * Written at each renewal and fence. May be NULL. */
    char *(*lo_brakes_export)(const struct gate_act *pending, void *arg);
    /* This replica started (1) or stopped (0) leading. May be NULL. */
    void (*lo_leading)(int leading, void *arg);
    void *lo_arg;
};

/*
 * Makes this replica's side of the election on base (borrowed, must outlive
 * it). Nothing is sent until lease_start(). Returns it (free with
 * lease_free()), or NULL with a reason in err.
 */
struct lease *lease_new(struct event_base *base, const struct lease_opts *o, char *err,
                        size_t errlen);

/* Installs the gate (gate.h: only the leader decides and acts) and makes the
 * first try from the loop. */
void lease_start(struct lease *l);

/*
 * SIGTERM: stops leading at once (fences waiting are refused) and, when the
 * Lease names this replica, empties its holderIdentity so another takes over
 * at its next try. done(arg) runs once, when that write is answered or when
 * there is nothing to release (then from the loop too). Call it once.
 */
void lease_release(struct lease *l, void (*done)(void *), void *arg);

/* Uninstalls the gate; a call in flight is cancelled and every fence still
 * waiting ends with cancelled = 1 before this returns. NULL is a no-op. */
void lease_free(struct lease *l);

/* Whether this replica leads now. */
int lease_leading(const struct lease *l);

/* The holder last seen ("" = nobody, or not seen yet); borrowed. */
const char *lease_leader(const struct lease *l);

/* How many times this replica became the leader since it started. */
uint64_t lease_transitions(const struct lease *l);

/* /readyz: 1 when this replica leads; else 0 with one line for the answer's
 * body in why ("not ready: following; the leader is gvw-1\n"). */
int lease_ready(const struct lease *l, char *why, size_t len);

#endif
