/* poller.c -- reads NVML and the processes' cgroups on a thread of its own, so the loop
 * never waits on them
 *
 * One worker thread owns the NVML handle. The loop asks for a poll
 * (poller_start); the worker reads, parks the reading under the mutex and
 * writes a byte to a pipe whose read end is a loop event, which hands the
 * reading to done. A driver call that hangs holds the worker only: /metrics
 * keeps answering and the loop sees the poll as overdue. */
#include "poller.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "procfs.h"

#define STOP_WAIT_MS 2000 /* at exit, how long a poll in flight may take to end */

struct poller {
    pthread_mutex_t p_mu;
    pthread_cond_t p_cv;
    pthread_t p_thread;
    int p_thread_started;
    int p_requested;             /* under p_mu: a poll was asked for */
    int p_busy;                  /* under p_mu: asked for and not yet handed over */
    int p_stop;                  /* under p_mu */
    double p_started_at;         /* under p_mu: monotonic start of the poll in flight */
    struct poll_reading *p_done; /* under p_mu: owned, ended and not yet handed over */
    int p_pipe[2];               /* worker writes, loop reads */
    struct event *p_ev;          /* owned */
    struct nvml *p_nvml;         /* owned by the worker thread */
    const char *p_library;       /* borrowed */
    const char *p_proc_root;     /* borrowed */
    poller_done_fn p_done_fn;
    void *p_arg;
};

void
poll_reading_free(struct poll_reading *r)
{
    if (r == NULL)
        return;
    nvml_snapshot_free(&r->pr_snap);
    free(r->pr_pids);
    free(r);
}

int
poller_read_pids(const char *root, const struct nvml_snapshot *snap,
                 struct attr_pid **out, size_t *nout)
{
    size_t total = 0, n = 0;

    *out = NULL;
    *nout = 0;
    for (size_t d = 0; d < snap->ns_count; d++)
        total += snap->ns_devices[d].nd_nprocs;
    if (total == 0)
        return 0;
    if ((*out = calloc(total, sizeof(**out))) == NULL)
        return -1;
    for (size_t d = 0; d < snap->ns_count; d++)
        for (size_t i = 0; i < snap->ns_devices[d].nd_nprocs; i++) {
            uint32_t pid = snap->ns_devices[d].nd_procs[i].np_pid;
            size_t k;
            for (k = 0; k < n && (*out)[k].ap_pid != pid; k++)
                ;
            if (k == n)
                procfs_pid_cgroup(root, pid, &(*out)[n++]);
        }
    *nout = n;
    return 0;
}

/* One poll, on the worker. NULL only when out of memory for the reading itself. */
static struct poll_reading *
poll_once(struct poller *p)
{
    struct poll_reading *r = calloc(1, sizeof(*r));
    double t0 = clock_mono_s();

    if (r == NULL)
        return NULL;
    if (p->p_nvml == NULL &&
        (p->p_nvml = nvml_open(p->p_library, r->pr_err, sizeof(r->pr_err))) == NULL) {
        /* stays down; pr_err says why */
    } else if (nvml_read(p->p_nvml, &r->pr_snap, r->pr_err, sizeof(r->pr_err)) == -1) {
        nvml_close(p->p_nvml); /* a lost GPU: start over with a fresh init */
        p->p_nvml = NULL;
    } else if (poller_read_pids(p->p_proc_root, &r->pr_snap, &r->pr_pids, &r->pr_npids) ==
               -1) {
        nvml_snapshot_free(&r->pr_snap);
        snprintf(r->pr_err, sizeof(r->pr_err), "out of memory");
    } else {
        r->pr_ok = 1;
    }
    r->pr_seconds = clock_mono_s() - t0;
    r->pr_finished = clock_wall_s();
    return r;
}

static void *
worker(void *arg)
{
    struct poller *p = arg;

    pthread_mutex_lock(&p->p_mu);
    for (;;) {
        struct poll_reading *r;
        while (!p->p_requested && !p->p_stop)
            pthread_cond_wait(&p->p_cv, &p->p_mu);
        if (p->p_stop)
            break;
        p->p_requested = 0;
        pthread_mutex_unlock(&p->p_mu);
        r = poll_once(p);
        pthread_mutex_lock(&p->p_mu);
        poll_reading_free(p->p_done);
        p->p_done = r;
        if (r == NULL)
            p->p_busy = 0; /* nothing to hand over; the next tick asks again */
        pthread_cond_broadcast(&p->p_cv);
        if (r != NULL) {
            ssize_t w;
            do
                w = write(p->p_pipe[1], "x", 1);
            while (w == -1 && errno == EINTR);
        }
    }
    pthread_mutex_unlock(&p->p_mu);
    nvml_close(p->p_nvml);
    p->p_nvml = NULL;
    return NULL;
}

/* Hands the ended poll (if any) to done, on the loop. 1 when done ran. */
static int
deliver(struct poller *p)
{
    struct poll_reading *r;

    pthread_mutex_lock(&p->p_mu);
    r = p->p_done;
    p->p_done = NULL;
    if (r != NULL)
        p->p_busy = 0;
    pthread_mutex_unlock(&p->p_mu);
    if (r == NULL)
        return 0;
    p->p_done_fn(r, p->p_arg);
    return 1;
}

static void
readable_cb(evutil_socket_t fd, short what, void *arg)
{
    char drain[64];

    while (read(fd, drain, sizeof(drain)) > 0)
        ;
    deliver(arg);
}

struct poller *
poller_new(struct event_base *base, const char *library, const char *proc_root,
           poller_done_fn done, void *arg, char *err, size_t errlen)
{
    struct poller *p = calloc(1, sizeof(*p));
    sigset_t all, old;
    int rc;

    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->p_pipe[0] = p->p_pipe[1] = -1;
    p->p_library = library;
    p->p_proc_root = proc_root;
    p->p_done_fn = done;
    p->p_arg = arg;
    pthread_mutex_init(&p->p_mu, NULL);
    pthread_cond_init(&p->p_cv, NULL);
    if (pipe(p->p_pipe) == -1 || fcntl(p->p_pipe[0], F_SETFD, FD_CLOEXEC) == -1 ||
        fcntl(p->p_pipe[1], F_SETFD, FD_CLOEXEC) == -1 ||
        fcntl(p->p_pipe[0], F_SETFL, O_NONBLOCK) == -1 ||
        fcntl(p->p_pipe[1], F_SETFL, O_NONBLOCK) == -1) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        goto fail;
    }
    if ((p->p_ev = event_new(base, p->p_pipe[0], EV_READ | EV_PERSIST, readable_cb, p)) ==
            NULL ||
        event_add(p->p_ev, NULL) == -1) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* Signals stay the loop's: the worker starts with all of them blocked. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&p->p_thread, NULL, worker, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the NVML thread: %s", strerror(rc));
        goto fail;
    }
    p->p_thread_started = 1;
    return p;
fail:
    poller_free(p);
    return NULL;
}

int
poller_start(struct poller *p, double *busy_for)
{
    int busy, ended;

    pthread_mutex_lock(&p->p_mu);
    ended = p->p_done != NULL;
    pthread_mutex_unlock(&p->p_mu);
    if (ended) /* ended, its byte not yet read: not overdue */
        deliver(p);
    pthread_mutex_lock(&p->p_mu);
    busy = p->p_busy;
    if (busy) {
        *busy_for = clock_mono_s() - p->p_started_at;
    } else {
        p->p_busy = 1;
        p->p_requested = 1;
        p->p_started_at = clock_mono_s();
        pthread_cond_broadcast(&p->p_cv);
    }
    pthread_mutex_unlock(&p->p_mu);
    return busy;
}

/* Waits up to ms while the poll in flight has not ended. */
static void
poller_wait_ended(struct poller *p, int ms)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&p->p_mu);
    while (p->p_busy && p->p_done == NULL &&
           pthread_cond_timedwait(&p->p_cv, &p->p_mu, &until) == 0)
        ;
    pthread_mutex_unlock(&p->p_mu);
}

int
poller_wait(struct poller *p, int ms)
{
    poller_wait_ended(p, ms);
    return deliver(p);
}

void
poller_free(struct poller *p)
{
    int stuck;

    if (p == NULL)
        return;
    if (p->p_ev != NULL)
        event_free(p->p_ev);
    p->p_ev = NULL;
    pthread_mutex_lock(&p->p_mu);
    p->p_stop = 1;
    pthread_cond_broadcast(&p->p_cv);
    pthread_mutex_unlock(&p->p_mu);
    /* A poll in flight usually ends in milliseconds: give it STOP_WAIT_MS. */
    if (p->p_thread_started)
        poller_wait_ended(p, STOP_WAIT_MS);
    pthread_mutex_lock(&p->p_mu);
    stuck = p->p_busy && p->p_done == NULL; /* still inside NVML */
    pthread_mutex_unlock(&p->p_mu);
    if (p->p_thread_started) {
        if (stuck) {
            /* It may never return from NVML: do not wait for it, and leave
             * it what it uses (the process is exiting). */
            pthread_detach(p->p_thread);
            return;
        }
        pthread_join(p->p_thread, NULL);
    }
    poll_reading_free(p->p_done);
    if (p->p_pipe[0] != -1)
        close(p->p_pipe[0]);
    if (p->p_pipe[1] != -1)
        close(p->p_pipe[1]);
    pthread_cond_destroy(&p->p_cv);
    pthread_mutex_destroy(&p->p_mu);
    free(p);
}
