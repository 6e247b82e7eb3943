/* gate.h -- what this replica may do now: decide, and act on a victim. The decision
 * pipeline asks; with LEADER_ELECTION=false (nothing installed) the answer is always
 * "yes, at once", so a single replica runs exactly as it always did. */
#ifndef GVW_GATE_H
#define GVW_GATE_H

#include <stddef.h>

/* An act about to be taken, recorded in the Lease before it is (fencing).
 * Everything is borrowed for the call. */
struct gate_act {
    const char *ga_verb;      /* "evict", "delete" or "release" */
    const char *ga_namespace; /* the victim's */
    const char *ga_pod;
    const char *ga_node;
    const char *ga_gpu; /* NULL in node scope */
    const char *ga_url; /* a release: the URL asked; else NULL */
};

/* How a fence ended: ok 1 = the act is recorded, take it now; 0 = do not act,
 * why (borrowed for the call) says why; cancelled 1 = the daemon stops. */
typedef void (*gate_fence_fn)(int ok, int cancelled, const char *why, void *arg);

struct gate_wait; /* a fence in flight */

/* What leader election installs (receiver/lease/lease.c). */
struct gate_ops {
    int (*go_leading)(void *arg);
    /* Starts a fence: the wait (cb runs once, later, from the loop), or NULL
     * with why when it may not act now (cb never runs). */
    struct gate_wait *(*go_fence)(const struct gate_act *a, gate_fence_fn cb,
                                  void *cb_arg, char *why, size_t whylen, void *arg);
    /* The waiter goes away: its cb will not run. */
    void (*go_forget)(struct gate_wait *w, void *arg);
    void *go_arg; /* the last argument of each */
};

/* Installs ops (copied), or NULL to go back to no election. */
void gate_install(const struct gate_ops *ops);

/* Whether this replica leads: it may start decisions, advertise capacity and
 * write Events. 1 without leader election. */
int gate_leading(void);

enum gate_answer {
    GATE_GO,      /* act now: no leader election (cb never runs) */
    GATE_WAIT,    /* *w is the fence in flight; cb runs once, later */
    GATE_REFUSED, /* do not act: why says why (cb never runs) */
};

/* Before an eviction, a deletion or a release request. */
enum gate_answer gate_fence(const struct gate_act *a, gate_fence_fn cb, void *arg,
                            struct gate_wait **w, char *why, size_t whylen);

/* The one waiting on w goes away before its answer; NULL is a no-op. */
void gate_forget(struct gate_wait *w);

#endif
