/* release.c -- cooperative release: ask the victim to free VRAM, then watch for it
 *
 * The URL comes from a tenant's annotation, already reduced to the pod's own
 * IP, a port and a path (policy/release_target.c). The tenant's answer says
 * only whether it tried; what counts is free VRAM read back from Prometheus,
 * as the verify reads it, so a tenant cannot talk its way out of a recycle. */
#include "release.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "gate.h"
#include "gather.h"
#include "httpc.h"
#include "log.h"

struct release {
    struct event_base *rl_base;  /* borrowed */
    const struct config *rl_cfg; /* borrowed */
    struct httpc *rl_client;     /* borrowed */
    struct prom *rl_prom;        /* borrowed */
    char *rl_node;               /* owned */
    char *rl_gpu;                /* owned; NULL in node scope */
    char *rl_url;                /* owned */
    release_done_fn rl_cb;
    void *rl_arg;
    int rl_posting;             /* the POST is in flight */
    struct gate_wait *rl_fence; /* HA: the ask is being recorded in the Lease first */
    char rl_refused[1024];      /* HA: why it may not be asked ("" = it may) */
    int rl_dead;                /* release_free() ran during the POST: the answer frees */
    struct gather *rl_g;        /* owned: a reading in flight */
    struct event *rl_tick;      /* owned: the next reading */
    int64_t rl_free_before;
    int64_t rl_target;           /* free VRAM that counts as released */
    enum free_source rl_decided; /* the decision's free_source: re-read the same way */
    char rl_vanished[512];       /* the device series vanished since: said at the end */
    double rl_t0, rl_deadline;   /* monotonic seconds */
    struct release_outcome rl_o;
};

struct httpc *
release_client_new(struct event_base *base, char *err, size_t errlen)
{
    struct httpc_opts o = {
        .ho_connect_timeout_ms = RELEASE_TIMEOUT_MS,
        .ho_timeout_ms = RELEASE_TIMEOUT_MS,
        .ho_body_cap = RELEASE_BODY_CAP,
        .ho_token_file = NULL, /* never the API server's credentials */
        .ho_ca_file = NULL,
        .ho_no_proxy = 1, /* a pod IP is reached directly */
    };

    return httpc_new(base, &o, err, errlen);
}

static void
destroy(struct release *rl)
{
    gate_forget(rl->rl_fence);
    gather_free(rl->rl_g);
    if (rl->rl_tick != NULL)
        event_free(rl->rl_tick);
    free(rl->rl_node);
    free(rl->rl_gpu);
    free(rl->rl_url);
    free(rl);
}

void
release_free(struct release *rl)
{
    if (rl == NULL)
        return;
    if (rl->rl_posting) {
        /* httpc cannot cancel one request: its callback frees what is left. */
        rl->rl_dead = 1;
        gather_free(rl->rl_g);
        rl->rl_g = NULL;
        return;
    }
    destroy(rl);
}

void
release_outcome_now(const struct release *rl, struct release_outcome *o)
{
    *o = rl->rl_o;
    o->ro_released = 0;
    o->ro_seconds = clock_mono_s() - rl->rl_t0;
}

/* Ends the ask: the callback is the last thing that touches rl. */
static void done(struct release *rl, int released, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
done(struct release *rl, int released, const char *fmt, ...)
{
    struct release_outcome o;
    va_list ap;

    rl->rl_o.ro_released = released;
    rl->rl_o.ro_seconds = clock_mono_s() - rl->rl_t0;
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(rl->rl_o.ro_why, sizeof(rl->rl_o.ro_why), fmt, ap);
        va_end(ap);
    }
    o = rl->rl_o; /* the callback may free rl */
    rl->rl_cb(&o, rl->rl_arg);
}

/* The next reading: in RELEASE_POLL_MS, but never past the deadline, so the
 * last look is taken when RELEASE_WAIT runs out. */
static void
schedule(struct release *rl)
{
    double left = rl->rl_deadline - clock_mono_s(), wait = RELEASE_POLL_MS / 1000.0;
    struct timeval tv;

    if (left < wait)
        wait = left > 0 ? left : 0;
    tv.tv_sec = (time_t)wait;
    tv.tv_usec = (suseconds_t)((wait - (double)tv.tv_sec) * 1e6);
    evtimer_add(rl->rl_tick, &tv);
}

static void
wait_text(const struct release *rl, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.1fs", (double)rl->rl_cfg->c_release_wait_ms / 1000.0);
}

static void
reading_cb(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct release *rl = arg;
    int64_t free_mib;
    char wait[32], why[512];
    /* A computed figure where the decision read the device is no release. */
    int known = gather_reread(gr, rl->rl_decided, &free_mib, why, sizeof(why));

    rl->rl_g = NULL;
    if (gr->gr_status == GATHER_CANCELLED) {
        gather_free(g);
        rl->rl_o.ro_cancelled = 1;
        done(rl, 0, "the wait was cut short");
        return;
    }
    gather_free(g);
    if (!known && why[0] != '\0')
        snprintf(rl->rl_vanished, sizeof(rl->rl_vanished), "%s", why);
    if (known) {
        rl->rl_o.ro_free_known = 1;
        rl->rl_o.ro_free_mib = free_mib;
        rl->rl_o.ro_freed_mib = free_mib - rl->rl_free_before;
        if (free_mib >= rl->rl_target) {
            done(rl, 1, NULL);
            return;
        }
    }
    if (clock_mono_s() >= rl->rl_deadline) {
        wait_text(rl, wait, sizeof(wait));
        char below[64];
        free_target_words(rl->rl_target, rl->rl_cfg->c_floor_mib, below, sizeof(below));
        if (rl->rl_o.ro_free_known)
            done(rl, 0, "free VRAM still %lld MiB, below %s, after RELEASE_WAIT (%s)%s%s",
                 (long long)rl->rl_o.ro_free_mib, below, wait,
                 rl->rl_vanished[0] ? "; then " : "", rl->rl_vanished);
        else
            done(rl, 0, "free VRAM could not be read back within RELEASE_WAIT (%s)%s%s",
                 wait, rl->rl_vanished[0] ? ": " : "", rl->rl_vanished);
        return;
    }
    schedule(rl);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct release *rl = arg;

    if (rl->rl_refused[0] != '\0') { /* HA: never asked (release_start) */
        done(rl, 0, "the release was not sent: %s", rl->rl_refused);
        return;
    }
    /* Prometheus only: the pods are not needed to read free VRAM. */
    rl->rl_g = gather_start_reread(rl->rl_base, rl->rl_cfg, rl->rl_prom, rl->rl_node,
                                   rl->rl_gpu, reading_cb, rl);
    if (rl->rl_g == NULL)
        done(rl, 0, "free VRAM could not be read (out of memory)");
}

static void
post_cb(const struct httpc_resp *resp, void *arg)
{
    struct release *rl = arg;

    rl->rl_posting = 0;
    if (rl->rl_dead) {
        destroy(rl);
        return;
    }
    rl->rl_o.ro_status = resp->hr_status;
    if (resp->hr_cancelled) {
        rl->rl_o.ro_cancelled = 1;
        done(rl, 0, "the ask was cut short");
        return;
    }
    /* A 2xx counts even if its body ran past the cap: the body is ignored. */
    if (resp->hr_status >= 200 && resp->hr_status <= 299) {
        tick_cb(-1, 0, rl); /* the tenant may have freed before answering */
        return;
    }
    if (resp->hr_status > 0)
        done(rl, 0, "the tenant answered HTTP %ld", resp->hr_status);
    else
        done(rl, 0, "the tenant did not answer: %s",
             resp->hr_error ? resp->hr_error : "no response");
}

void
free_target_words(int64_t target_mib, int64_t floor_mib, char *out, size_t len)
{
    if (target_mib > floor_mib)
        snprintf(out, len, "the %lld MiB that ends the prediction",
                 (long long)target_mib);
    else
        snprintf(out, len, "the floor");
}

/* Sends the POST. 0, or -1 when it could not even be queued. */
static int
post(struct release *rl)
{
    struct httpc_req req = {
        .hq_method = "POST",
        .hq_url = rl->rl_url,
        .hq_timeout_ms = RELEASE_TIMEOUT_MS,
    };

    if (httpc_request(rl->rl_client, &req, post_cb, rl) == -1)
        return -1;
    rl->rl_posting = 1;
    return 0;
}

static void
fenced_cb(int ok, int cancelled, const char *why, void *arg)
{
    struct release *rl = arg;

    rl->rl_fence = NULL;
    if (ok && post(rl) == 0)
        return;
    rl->rl_o.ro_cancelled = cancelled;
    done(rl, 0, "the release was not sent: %s",
         ok ? "the request could not be started" : why);
}

struct release *
release_start(struct event_base *base, const struct config *cfg, struct httpc *client,
              struct prom *prom, const char *node, const char *gpu, const char *url,
              int64_t free_before_mib, int64_t target_mib, enum free_source decided,
              release_done_fn cb, void *arg)
{
    struct timeval now = {0, 0};
    struct release *rl;

    if (client == NULL || (rl = calloc(1, sizeof(*rl))) == NULL)
        return NULL;
    rl->rl_base = base;
    rl->rl_cfg = cfg;
    rl->rl_client = client;
    rl->rl_prom = prom;
    rl->rl_cb = cb;
    rl->rl_arg = arg;
    rl->rl_free_before = free_before_mib;
    rl->rl_target = target_mib;
    rl->rl_decided = decided;
    if ((rl->rl_node = strdup(node)) == NULL || (rl->rl_url = strdup(url)) == NULL ||
        (gpu != NULL && (rl->rl_gpu = strdup(gpu)) == NULL) ||
        (rl->rl_tick = evtimer_new(base, tick_cb, rl)) == NULL)
        goto fail;
    rl->rl_t0 = clock_mono_s();
    rl->rl_deadline = rl->rl_t0 + (double)cfg->c_release_wait_ms / 1000.0;
    /* HA: the ask is an act; the Lease records it before it is sent. */
    switch (gate_fence(
        &(struct gate_act){
            .ga_verb = "release", .ga_node = node, .ga_gpu = gpu, .ga_url = url},
        fenced_cb, rl, &rl->rl_fence, rl->rl_refused, sizeof(rl->rl_refused))) {
    case GATE_GO:
        if (post(rl) == -1)
            goto fail;
        break;
    case GATE_WAIT:
        break;
    case GATE_REFUSED: /* its outcome comes from the loop, as any other would */
        evtimer_add(rl->rl_tick, &now);
        break;
    }
    return rl;
fail:
    destroy(rl);
    return NULL;
}
