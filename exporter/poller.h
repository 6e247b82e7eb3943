/* poller.h -- reads NVML and the processes' cgroups on a thread of its own, so the loop
 * never waits on them */
#ifndef GVW_POLLER_H
#define GVW_POLLER_H

#include <stddef.h>

#include "attribute.h"
#include "nvml.h"

struct event_base;
struct poller;

/* What one poll read. */
struct poll_reading {
    int pr_ok;                    /* NVML was read */
    char pr_err[512];             /* why not, when !pr_ok */
    struct nvml_snapshot pr_snap; /* owned, when pr_ok */
    struct attr_pid *pr_pids;     /* owned: the cgroup of every distinct PID */
    size_t pr_npids;
    double pr_seconds;  /* how long the poll took */
    double pr_finished; /* unix seconds when it ended */
};

void poll_reading_free(struct poll_reading *r);

/* What PROC_ROOT/PID/cgroup says of every distinct PID of snap: *out (free()),
 * *nout entries. 0, or -1 when out of memory. */
int poller_read_pids(const char *root, const struct nvml_snapshot *snap,
                     struct attr_pid **out, size_t *nout);

/* Runs on the loop when a poll ended; r is the callee's (poll_reading_free()). */
typedef void (*poller_done_fn)(struct poll_reading *r, void *arg);

/*
 * Starts the thread. library and proc_root are borrowed for the poller's
 * life. NVML is opened on the thread (dlopen and nvmlInit may be slow too),
 * closed after any failed read and opened again on the next poll. Returns
 * NULL with a reason in err.
 */
struct poller *poller_new(struct event_base *base, const char *library,
                          const char *proc_root, poller_done_fn done, void *arg,
                          char *err, size_t errlen);

/*
 * Asks for a poll. 0 = started; 1 = the previous poll has not ended yet
 * (nothing started); *busy_for then holds how long it has been running.
 */
int poller_start(struct poller *p, double *busy_for);

/*
 * Waits up to ms for the poll in flight and, if it ended, runs done now
 * (start-up: the first /metrics shows the first poll). 1 = done ran, 0 = not.
 */
int poller_wait(struct poller *p, int ms);

/*
 * Stops the thread. A thread stuck in an NVML call cannot be stopped: it is
 * left behind (the process is exiting) and the poller with it.
 */
void poller_free(struct poller *p);

#endif
