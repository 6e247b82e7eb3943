/* lease.c -- this replica's part in the election: the Lease's calls on the loop, the
 * fence before each act, the release at SIGTERM
 *
 * election.c decides what to send; this file sends it (one call at a time,
 * through its own API client), feeds the answers back, and tells the daemon
 * when it starts or stops leading. A fence is a PUT of the Lease with the
 * version last read that renews it and records the act in an annotation; the
 * act is taken only when that PUT succeeds. */
#include "lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "buf.h"
#include "clock.h"
#include "election.h"
#include "kubec.h"
#include "lease_json.h"
#include "log.h"

#define PATH_MAX_LEN 1024
#define NAME_LEN 256

/* A fence waiting for its PUT. */
struct gate_wait {
    struct gate_wait *w_next;
    char w_verb[16];
    char w_ns[NAME_LEN], w_pod[NAME_LEN], w_node[NAME_LEN], w_gpu[NAME_LEN];
    int w_has_gpu;
    char w_url[512]; /* a release's; "" = none */
    gate_fence_fn w_cb;
    void *w_arg;
    int w_forgotten; /* its PUT is out, but nobody waits for the answer any more */
};

/* One call in flight: what kubec's parse fills. */
struct call {
    struct lease *c_l;
    enum election_op c_op;
    enum election_why c_why;
    struct lease_obj c_obj; /* the object answered (2xx) */
    int c_parsed;
};

struct lease {
    struct event_base *l_base; /* borrowed */
    struct kubec *l_kube;      /* owned */
    struct lease_opts l_o;     /* its strings point at l_ns, l_name, l_id */
    char l_ns[NAME_LEN], l_name[NAME_LEN], l_id[LEASE_ID_MAX];
    char l_path[PATH_MAX_LEN];      /* .../namespaces/NS/leases/NAME */
    char l_coll_path[PATH_MAX_LEN]; /* .../namespaces/NS/leases */
    struct election l_e;
    struct lease_obj l_obj; /* the Lease last read or written: a PUT starts from it */
    struct event *l_timer;  /* owned: the next try */
    struct event *l_kick;   /* owned: runs pump() from the loop */
    struct call *l_call;    /* the call in flight, or NULL */
    struct gate_wait *l_fencing;         /* the fence whose PUT is l_call */
    struct gate_wait *l_queue, **l_tail; /* fences waiting their turn */
    int l_was_leading;
    char l_last_leader[LEASE_ID_MAX]; /* for the "new leader" log line */
    int l_gate;                       /* the gate is ours */
    int l_releasing;
    void (*l_release_done)(void *);
    void *l_release_arg;
    int l_freeing;
};

static void pump(struct lease *l);

/* --- fences ------------------------------------------------------------- */

/* Ends w: calls its waiter (unless it went away) and frees it. */
static void
fence_end(struct gate_wait *w, int ok, int cancelled, const char *why)
{
    if (!w->w_forgotten)
        w->w_cb(ok, cancelled, why, w->w_arg);
    free(w);
}

/* Refuses every fence still queued (not the one whose PUT is out). */
static void
fences_refuse(struct lease *l, int cancelled, const char *why)
{
    struct gate_wait *w;

    while ((w = l->l_queue) != NULL) {
        l->l_queue = w->w_next;
        if (l->l_queue == NULL)
            l->l_tail = &l->l_queue;
        fence_end(w, 0, cancelled, why);
    }
}

/* The annotation recording an act: who, what, on which pod, when. Owned. */
static char *
last_act_json(const struct lease *l, const struct gate_wait *w)
{
    char at[LEASE_TIME_MAX];
    json_t *j;
    char *text;

    if (lease_microtime(clock_wall_us(), at, sizeof(at)) == -1)
        at[0] = '\0';
    j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s}", "replica", l->l_id, "act",
                  w->w_verb, "namespace", w->w_ns, "pod", w->w_pod, "node", w->w_node,
                  "gpu", w->w_has_gpu ? json_string(w->w_gpu) : json_null(), "at", at);
    if (j == NULL)
        return NULL;
    if (w->w_url[0] != '\0' &&
        json_object_set_new(j, "url", json_string(w->w_url)) == -1) {
        json_decref(j);
        return NULL;
    }
    text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return text;
}

/* --- leading or not ------------------------------------------------------ */

static void
check_transition(struct lease *l)
{
    int now = election_leading(&l->l_e);
    const char *leader = election_leader(&l->l_e);
    char n[32];

    if (strcmp(leader, l->l_last_leader) != 0) {
        snprintf(l->l_last_leader, sizeof(l->l_last_leader), "%s", leader);
        log_event(LOG_LEVEL_INFO, "lease holder seen", "lease", l->l_name, "holder",
                  leader[0] ? leader : "(nobody)", "self", l->l_id, (char *)NULL);
    }
    if (now == l->l_was_leading)
        return;
    l->l_was_leading = now;
    if (now) {
        snprintf(n, sizeof(n), "%llu", (unsigned long long)l->l_e.e_became);
        log_event(LOG_LEVEL_INFO, "leading: this replica holds the Lease", "lease",
                  l->l_name, "replica", l->l_id, "times", n, (char *)NULL);
        if (l->l_o.lo_brakes_import != NULL)
            l->l_o.lo_brakes_import(lease_obj_annotation(&l->l_obj, LEASE_ANN_BRAKES),
                                    l->l_o.lo_arg);
    } else {
        log_event(LOG_LEVEL_WARN, "stopped leading", "lease", l->l_name, "replica",
                  l->l_id, "why",
                  l->l_releasing    ? "released at SIGTERM"
                  : l->l_e.e_why[0] ? l->l_e.e_why
                                    : "another replica holds the Lease",
                  (char *)NULL);
        fences_refuse(l, 0, "this replica lost the Lease");
    }
    if (l->l_o.lo_leading != NULL)
        l->l_o.lo_leading(now, l->l_o.lo_arg);
}

/* --- calls --------------------------------------------------------------- */

static int
parse_cb(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct call *c = arg;

    if (lease_obj_parse(body, len, &c->c_obj, err, errlen) == -1)
        return -1;
    c->c_parsed = 1;
    return 0;
}

static void release_step(struct lease *l);

static void
call_done(const struct kubec_answer *a, void *arg)
{
    struct call *c = arg;
    struct lease *l = c->c_l;
    struct gate_wait *w = l->l_fencing;
    struct election_answer ans = {.ea_outcome = EANS_ERROR};
    char why[2048];

    l->l_call = NULL;
    l->l_fencing = NULL;
    if (a->kr_cancelled) {
        lease_obj_free(&c->c_obj);
        free(c);
        if (w != NULL)
            fence_end(w, 0, 1, "the daemon stopped before the act was recorded");
        return;
    }
    switch (a->kr_class) {
    case KUBE_OK:
        if (c->c_parsed) { /* can't be otherwise: kubec parses every 2xx */
            lease_obj_free(&l->l_obj);
            l->l_obj = c->c_obj;
            memset(&c->c_obj, 0, sizeof(c->c_obj));
            ans.ea_outcome = EANS_OK;
            ans.ea_record = &l->l_obj.lo_record;
            ans.ea_rv = l->l_obj.lo_rv;
        }
        break;
    case KUBE_GONE:
        ans.ea_outcome = c->c_op == EOP_GET ? EANS_NOT_FOUND : EANS_ERROR;
        break;
    case KUBE_CONFLICT:
        ans.ea_outcome = EANS_CONFLICT;
        break;
    default:
        break;
    }
    election_answer(&l->l_e, clock_mono_ms(), &ans);
    lease_obj_free(&c->c_obj);
    free(c);
    if (w != NULL) {
        if (ans.ea_outcome == EANS_OK && election_leading(&l->l_e)) {
            fence_end(w, 1, 0, NULL);
        } else {
            snprintf(why, sizeof(why),
                     "the act could not be recorded in Lease %.63s/%.253s: %.1500s",
                     l->l_ns, l->l_name,
                     a->kr_error                       ? a->kr_error
                     : ans.ea_outcome == EANS_CONFLICT ? "another write came first (409)"
                                                       : "the write failed");
            fence_end(w, 0, 0, why);
        }
    }
    check_transition(l);
    if (l->l_releasing)
        release_step(l);
    else
        pump(l);
}

/* Sends rq (for fence w, or NULL). -1 when it could not be sent (then the
 * election is told it failed). */
static int
send_req(struct lease *l, const struct election_req *rq, struct gate_wait *w)
{
    struct kubec_call kc;
    struct call *c = NULL;
    char what[320], *body = NULL, *brakes = NULL, *act = NULL;
    struct gate_act ga = {0};
    int rc = -1;

    memset(&kc, 0, sizeof(kc));
    if ((c = calloc(1, sizeof(*c))) == NULL)
        goto out;
    c->c_l = l;
    c->c_op = rq->er_op;
    c->c_why = rq->er_why;
    kc.kq_parse = parse_cb;
    kc.kq_done = call_done;
    kc.kq_arg = c;
    kc.kq_what = what;
    kc.kq_content_type = "application/json";
    switch (rq->er_op) {
    case EOP_GET:
        kc.kq_method = "GET";
        kc.kq_path = l->l_path;
        snprintf(what, sizeof(what), "get coordination.k8s.io leases in namespace %s",
                 l->l_ns);
        break;
    case EOP_CREATE:
        kc.kq_method = "POST";
        kc.kq_path = l->l_coll_path;
        snprintf(what, sizeof(what), "create coordination.k8s.io leases in namespace %s",
                 l->l_ns);
        if ((body = lease_body(NULL, l->l_ns, l->l_name, &rq->er_record, NULL, NULL,
                               NULL)) == NULL)
            goto out;
        break;
    case EOP_UPDATE:
        kc.kq_method = "PUT";
        kc.kq_path = l->l_path;
        snprintf(what, sizeof(what), "update coordination.k8s.io leases in namespace %s",
                 l->l_ns);
        /* Never a PUT without the version read: it would overwrite blind. */
        if (l->l_obj.lo_json == NULL || rq->er_rv[0] == '\0')
            goto out;
        if (rq->er_why != EWHY_ACQUIRE && l->l_o.lo_brakes_export != NULL) {
            /* The leader's brakes ride on every renewal, fence and release;
             * an acquisition keeps what the previous leader left. */
            if (w != NULL) {
                ga.ga_verb = w->w_verb;
                ga.ga_namespace = w->w_ns;
                ga.ga_pod = w->w_pod;
                ga.ga_node = w->w_node;
                ga.ga_gpu = w->w_has_gpu ? w->w_gpu : NULL;
                ga.ga_url = w->w_url[0] ? w->w_url : NULL;
            }
            brakes = l->l_o.lo_brakes_export(w != NULL ? &ga : NULL, l->l_o.lo_arg);
        }
        if (w != NULL && (act = last_act_json(l, w)) == NULL)
            goto out;
        if ((body = lease_body(&l->l_obj, l->l_ns, l->l_name, &rq->er_record, rq->er_rv,
                               brakes, act)) == NULL)
            goto out;
        break;
    case EOP_NONE:
        goto out; /* can't happen */
    }
    kc.kq_body = body;
    /* Renewals and reads every 2 s log at debug; takeovers, fences and the
     * release are worth an info line. */
    kc.kq_quiet = rq->er_op == EOP_GET || rq->er_why == EWHY_RENEW;
    if (kubec_call(l->l_kube, &kc) == -1)
        goto out;
    l->l_call = c;
    l->l_fencing = w;
    c = NULL;
    rc = 0;
out:
    free(c);
    free(body);
    free(brakes);
    free(act);
    return rc;
}

/* The call could not go out: the election hears it failed, as from the wire. */
static void
send_failed(struct lease *l, struct gate_wait *w)
{
    struct election_answer ans = {.ea_outcome = EANS_ERROR};
    char why[512];

    election_answer(&l->l_e, clock_mono_ms(), &ans);
    if (w != NULL) {
        snprintf(
            why, sizeof(why),
            "the act could not be recorded in Lease %.63s/%.253s: the request could not "
            "be sent",
            l->l_ns, l->l_name);
        fence_end(w, 0, 0, why);
    }
}

static void
arm(struct lease *l, int64_t wake)
{
    int64_t wait;
    struct timeval tv;

    if (wake == INT64_MAX)
        return;
    wait = wake - clock_mono_ms();
    if (wait < 0)
        wait = 0;
    tv.tv_sec = (time_t)(wait / 1000);
    tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
    evtimer_add(l->l_timer, &tv);
}

/* Sends what is due: a fence first, else the election's next call; else
 * sleeps until its next try. */
static void
pump(struct lease *l)
{
    struct election_req rq;
    struct gate_wait *w;
    const char *why = NULL;
    int64_t wake;
    int rc;

    if (l->l_call != NULL || l->l_freeing || l->l_releasing)
        return;
    for (int tries = 0; tries < 4; tries++) {
        while ((w = l->l_queue) != NULL) {
            rc = election_fence(&l->l_e, clock_mono_ms(), clock_wall_us(), &rq, &why);
            if (rc == 1)
                break; /* can't happen: nothing is in flight */
            l->l_queue = w->w_next;
            if (l->l_queue == NULL)
                l->l_tail = &l->l_queue;
            if (rc == -1) {
                fence_end(w, 0, 0, why);
                continue;
            }
            if (send_req(l, &rq, w) == 0)
                return;
            send_failed(l, w);
        }
        if (election_next(&l->l_e, clock_mono_ms(), clock_wall_us(), &rq, &wake) ==
            EOP_NONE) {
            check_transition(l);
            arm(l, wake);
            return;
        }
        if (send_req(l, &rq, NULL) == 0)
            return;
        send_failed(l, NULL);
        check_transition(l);
    }
    arm(l, clock_mono_ms() + ELECTION_RETRY_MS); /* out of memory: try again later */
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
    pump(arg);
}

/* --- the gate ------------------------------------------------------------ */

static int
gate_leading_op(void *arg)
{
    return lease_leading(arg);
}

static struct gate_wait *
gate_fence_op(const struct gate_act *a, gate_fence_fn cb, void *cb_arg, char *why,
              size_t whylen, void *arg)
{
    struct lease *l = arg;
    struct gate_wait *w;

    if (!election_may_act(&l->l_e, clock_mono_ms())) {
        snprintf(why, whylen, "this replica may not act: %s (Lease %.63s/%.253s)",
                 election_leading(&l->l_e)
                     ? "its last renewal of the Lease is older than the renew deadline"
                     : "it does not hold the Lease",
                 l->l_ns, l->l_name);
        return NULL;
    }
    if ((w = calloc(1, sizeof(*w))) == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    snprintf(w->w_verb, sizeof(w->w_verb), "%s", a->ga_verb ? a->ga_verb : "");
    snprintf(w->w_ns, sizeof(w->w_ns), "%s", a->ga_namespace ? a->ga_namespace : "");
    snprintf(w->w_pod, sizeof(w->w_pod), "%s", a->ga_pod ? a->ga_pod : "");
    snprintf(w->w_node, sizeof(w->w_node), "%s", a->ga_node ? a->ga_node : "");
    w->w_has_gpu = a->ga_gpu != NULL;
    snprintf(w->w_url, sizeof(w->w_url), "%s", a->ga_url ? a->ga_url : "");
    snprintf(w->w_gpu, sizeof(w->w_gpu), "%s", a->ga_gpu ? a->ga_gpu : "");
    w->w_cb = cb;
    w->w_arg = cb_arg;
    *l->l_tail = w;
    l->l_tail = &w->w_next;
    event_active(l->l_kick, EV_TIMEOUT, 0); /* sent from the loop, never from here */
    return w;
}

static void
gate_forget_op(struct gate_wait *w, void *arg)
{
    struct lease *l = arg;
    struct gate_wait **pp;

    if (w == l->l_fencing) {
        w->w_forgotten = 1; /* its answer frees it */
        return;
    }
    for (pp = &l->l_queue; *pp != NULL; pp = &(*pp)->w_next)
        if (*pp == w) {
            *pp = w->w_next;
            if (*pp == NULL)
                l->l_tail = pp;
            free(w);
            return;
        }
}

/* --- the API ------------------------------------------------------------- */

struct lease *
lease_new(struct event_base *base, const struct lease_opts *o, char *err, size_t errlen)
{
    struct kube_opts ko = *o->lo_kube;
    struct lease *l;
    struct buf p;

    if ((l = calloc(1, sizeof(*l))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->l_base = base;
    l->l_o = *o;
    l->l_tail = &l->l_queue;
    snprintf(l->l_ns, sizeof(l->l_ns), "%s", o->lo_namespace);
    snprintf(l->l_name, sizeof(l->l_name), "%s", o->lo_name);
    snprintf(l->l_id, sizeof(l->l_id), "%s", o->lo_identity);
    election_init(&l->l_e, l->l_id, clock_mono_ms());
    buf_init(&p, sizeof(l->l_path) - 1);
    kubec_path_add(&p, "/apis/coordination.k8s.io/v1/namespaces/", l->l_ns);
    kubec_path_add(&p, "/leases", NULL);
    if (p.b_toobig || p.b_data == NULL) {
        buf_free(&p);
        snprintf(err, errlen, "Lease path too long");
        goto fail;
    }
    snprintf(l->l_coll_path, sizeof(l->l_coll_path), "%s", p.b_data);
    kubec_path_add(&p, "/", l->l_name);
    if (p.b_toobig) {
        buf_free(&p);
        snprintf(err, errlen, "Lease path too long");
        goto fail;
    }
    snprintf(l->l_path, sizeof(l->l_path), "%s", p.b_data);
    buf_free(&p);
    if (ko.ko_timeout_ms <= 0 || ko.ko_timeout_ms > LEASE_CALL_TIMEOUT_MS)
        ko.ko_timeout_ms = LEASE_CALL_TIMEOUT_MS;
    if (ko.ko_connect_timeout_ms <= 0 || ko.ko_connect_timeout_ms > LEASE_CALL_TIMEOUT_MS)
        ko.ko_connect_timeout_ms = LEASE_CALL_TIMEOUT_MS;
    ko.ko_body_cap = LEASE_BODY_MAX;
    if ((l->l_kube = kubec_new(base, &ko, err, errlen)) == NULL)
        goto fail;
    if ((l->l_timer = evtimer_new(base, timer_cb, l)) == NULL ||
        (l->l_kick = evtimer_new(base, timer_cb, l)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    return l;
fail:
    lease_free(l);
    return NULL;
}

void
lease_start(struct lease *l)
{
    struct gate_ops ops = {
        .go_leading = gate_leading_op,
        .go_fence = gate_fence_op,
        .go_forget = gate_forget_op,
        .go_arg = l,
    };

    gate_install(&ops);
    l->l_gate = 1;
    log_event(LOG_LEVEL_INFO, "leader election on", "lease", l->l_name, "namespace",
              l->l_ns, "replica", l->l_id, (char *)NULL);
    event_active(l->l_kick, EV_TIMEOUT, 0);
}

static void
release_finish(struct lease *l)
{
    void (*done)(void *) = l->l_release_done;

    l->l_release_done = NULL;
    if (done != NULL)
        done(l->l_release_arg);
}

/* One step of the release: send it once nothing is in flight; end when it is
 * answered or there is nothing to release. */
static void
release_step(struct lease *l)
{
    struct election_req rq;
    int rc;

    if (l->l_call != NULL)
        return;
    rc = election_release(&l->l_e, clock_mono_ms(), clock_wall_us(), &rq);
    check_transition(l);
    if (rc == 1)
        return; /* can't happen: nothing is in flight */
    if (rc == 0 && send_req(l, &rq, NULL) == 0) {
        log_event(LOG_LEVEL_INFO, "releasing the Lease", "lease", l->l_name, "replica",
                  l->l_id, (char *)NULL);
        return;
    }
    release_finish(l);
}

void
lease_release(struct lease *l, void (*done)(void *), void *arg)
{
    l->l_releasing = 1;
    l->l_release_done = done;
    l->l_release_arg = arg;
    evtimer_del(l->l_timer);
    fences_refuse(l, 1, "the daemon is stopping");
    release_step(l);
}

void
lease_free(struct lease *l)
{
    if (l == NULL)
        return;
    l->l_freeing = 1;
    kubec_free(l->l_kube); /* a call in flight ends here, cancelled */
    fences_refuse(l, 1, "the daemon stopped before the act was recorded");
    /* Last: the decisions those fences end still see this replica's gate. */
    if (l->l_gate)
        gate_install(NULL);
    if (l->l_timer != NULL)
        event_free(l->l_timer);
    if (l->l_kick != NULL)
        event_free(l->l_kick);
    lease_obj_free(&l->l_obj);
    free(l);
}

int
lease_leading(const struct lease *l)
{
    return l != NULL && election_leading(&l->l_e);
}

const char *
lease_leader(const struct lease *l)
{
    return election_leader(&l->l_e);
}

uint64_t
lease_transitions(const struct lease *l)
{
    return l->l_e.e_became;
}

int
lease_ready(const struct lease *l, char *why, size_t len)
{
    const char *leader = election_leader(&l->l_e);

    if (election_leading(&l->l_e))
        return 1;
    if (l->l_releasing)
        snprintf(why, len, "not ready: stopping; the Lease is released\n");
    else if (leader[0] != '\0' && strcmp(leader, l->l_id) != 0)
        snprintf(why, len, "not ready: following; the leader is %s\n", leader);
    else
        snprintf(why, len, "not ready: no replica leads yet%s%s\n",
                 l->l_e.e_why[0] ? ": " : "", l->l_e.e_why);
    return 0;
}
