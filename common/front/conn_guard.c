/* conn_guard.c -- the one HTTP front door's bounds: deadlines, held bytes, connections,
 * head checks */
#include "conn_guard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "clock.h"
#include "conn_head.h"
#include "log.h"

#define SWEEP_MS 500
#define LINGER_MS 2000 /* after a refusal, read and drop what the client still sends */
#define LINGER_BYTES                                                                     \
    (1u << 20) /* ... but no more than this: then close (a 200 MiB body is not read) */
#define REFUSE_MS 5000 /* a refusal the client will not read is dropped after this */
#define LOG_EVERY_MS 10000

enum cstate {
    CS_IDLE,   /* between requests */
    CS_HEAD,   /* a request started; its head is held here until complete */
    CS_BODY,   /* the head went to evhttp; passing exactly Content-Length bytes */
    CS_HOLD,   /* refused, but evhttp still owes an earlier pipelined request its
                  answer: ours waits, so the answers stay in order */
    CS_REFUSE, /* our answer is being written */
    CS_LINGER, /* answered and shut for writing; dropping input until EOF */
    CS_DEAD,   /* told evhttp to close; freed when the bufferevent goes */
};

struct conn {
    TAILQ_ENTRY(conn) c_link;
    struct guard *c_g;
    struct bufferevent *c_bev;  /* the filter, owned by evhttp */
    struct event *c_wev;        /* socket writable, or a kick to flush; lazily */
    struct evbuffer *c_refusal; /* our own answer; lazily */
    struct evbuffer_cb_entry *c_outcb;
    enum cstate c_state;
    int64_t c_t0;         /* ms: the request's first byte; hold/refusal/linger start */
    size_t c_held;        /* this connection's share of g_held */
    size_t c_scan;        /* CS_HEAD: bytes already split into whole lines */
    int c_lead_seen;      /* CS_HEAD: the empty line a request may start with is past */
    uint64_t c_body_left; /* CS_BODY */
    size_t c_dropped;     /* CS_REFUSE, CS_LINGER: input read and dropped */
    evutil_socket_t c_fd; /* -1 until evhttp has set it */
};

TAILQ_HEAD(connq, conn);

struct guard {
    struct event_base *g_base;
    struct guard_opts g_o;
    struct connq g_conns; /* in accept order */
    size_t g_nconns;      /* not dead */
    size_t g_held;
    struct event *g_sweep;
    struct guard_stats g_st;
    struct guard_stats g_logged; /* as of the last summary line */
    int64_t g_logged_ms;
};

static void kill_conn(struct conn *c);

static void
set_held(struct conn *c, size_t n)
{
    c->c_g->g_held = c->c_g->g_held - c->c_held + n;
    c->c_held = n;
}

static evutil_socket_t
conn_fd(struct conn *c)
{
    if (c->c_fd < 0)
        c->c_fd = bufferevent_getfd(c->c_bev);
    return c->c_fd;
}

static int
retriable(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/* Waits for the socket to take more (the event is made on first use). */
static int
arm_write(struct conn *c, void (*cb)(evutil_socket_t, short, void *))
{
    if (c->c_wev == NULL &&
        (c->c_wev = event_new(c->c_g->g_base, conn_fd(c), EV_WRITE, cb, c)) == NULL)
        return -1;
    return event_add(c->c_wev, NULL);
}

static void wev_cb(evutil_socket_t fd, short what, void *arg);

/* Writes our refusal straight to the socket; once it is all out, shuts the
 * write side (the client sees the end) and lingers. */
static void
flush_refusal(struct conn *c)
{
    int n = evbuffer_write(c->c_refusal, conn_fd(c));

    if (n < 0 && !retriable(errno)) {
        kill_conn(c);
        return;
    }
    if (evbuffer_get_length(c->c_refusal) > 0) {
        if (arm_write(c, wev_cb) == -1)
            kill_conn(c);
        return;
    }
    shutdown(conn_fd(c), SHUT_WR);
    c->c_state = CS_LINGER;
    c->c_t0 = clock_mono_ms();
}

/* evhttp has answered every request handed to it on c: none unread in its
 * input, none being written, and it reads again (it stops reading while a
 * request waits for its answer). */
static int
evhttp_idle(struct conn *c)
{
    return evbuffer_get_length(bufferevent_get_input(c->c_bev)) == 0 &&
           evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0 &&
           (bufferevent_get_enabled(c->c_bev) & EV_READ) != 0;
}

/* CS_HOLD: once evhttp has answered the earlier requests, ours goes out. */
static void
release_hold(struct conn *c)
{
    if (c->c_state != CS_HOLD || !evhttp_idle(c))
        return;
    c->c_state = CS_REFUSE;
    c->c_t0 = clock_mono_ms();
    flush_refusal(c);
}

static void
wev_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;

    (void)fd;
    (void)what;
    if (c->c_state == CS_REFUSE)
        flush_refusal(c);
    else if (c->c_state == CS_HOLD && evhttp_idle(c))
        release_hold(c);
    else if (c->c_state != CS_DEAD && c->c_state != CS_LINGER)
        bufferevent_flush(c->c_bev, EV_WRITE, BEV_NORMAL); /* evhttp's own output */
}

static const char *
reason_of(int code)
{
    switch (code) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Payload Too Large";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

/*
 * Answers code with {"error": msg} and closes. The answer goes straight to
 * the socket: evhttp never saw this request, so it writes nothing here.
 * A new request's refusal waits while evhttp still owes an earlier
 * pipelined request on this connection its answer (CS_HOLD): written now,
 * the client would read it as that request's answer. (A refusal of the
 * request evhttp is reading, a 408 for its body, is written at once; if
 * evhttp is still writing then, the connection is just closed: two writers
 * would interleave.)
 */
static void
refuse(struct conn *c, const struct guard_head *gh, int code, const char *msg,
       const char *header)
{
    struct guard *g = c->c_g;
    char body[256];
    int blen = snprintf(body, sizeof(body), "{\"error\":\"%s\"}", msg);
    int hold = c->c_state == CS_HEAD && conn_fd(c) >= 0 && !evhttp_idle(c);

    g->g_st.gs_refused++;
    if (g->g_o.go_refused != NULL)
        g->g_o.go_refused(gh, code, g->g_o.go_arg);
    set_held(c, 0);
    if (blen < 0 || (size_t)blen >= sizeof(body) || conn_fd(c) < 0 ||
        (!hold && evbuffer_get_length(bufferevent_get_output(c->c_bev)) > 0) ||
        (c->c_refusal == NULL && (c->c_refusal = evbuffer_new()) == NULL) ||
        evbuffer_add_printf(c->c_refusal,
                            "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                            "Content-Length: %d\r\nConnection: close\r\n%s%s\r\n%s",
                            code, reason_of(code), blen, header ? header : "",
                            header ? "\r\n" : "", body) < 0) {
        kill_conn(c);
        return;
    }
    c->c_state = hold ? CS_HOLD : CS_REFUSE;
    c->c_t0 = clock_mono_ms();
    c->c_dropped = 0;
    if (!hold)
        flush_refusal(c);
}

static void
request_done(struct conn *c)
{
    set_held(c, 0);
    c->c_state = CS_IDLE;
}

/* CS_HEAD: holds the head in src until its empty line, then checks it. */
static enum bufferevent_filter_result
head_in(struct conn *c, struct evbuffer *src, struct evbuffer *dst)
{
    struct guard *g = c->c_g;
    size_t len = evbuffer_get_length(src), head_len = 0, eol;
    struct evbuffer_ptr p, e;
    struct guard_head gh;
    struct guard_refusal v = {0, NULL, NULL};
    const char *why = NULL, *head;
    size_t need;
    int code;

    /* RFC 9112 2.2: an empty line before the request line is ignored (some
     * clients end a POST body with CRLF); two in a row are a malformed head. */
    if (!c->c_lead_seen) {
        const unsigned char *b = evbuffer_pullup(src, len < 2 ? (ev_ssize_t)len : 2);
        if (b != NULL && len == 1 && b[0] == '\r') {
            set_held(c, len);
            return BEV_NEED_MORE; /* its LF decides */
        }
        c->c_lead_seen = 1;
        if (b != NULL && (b[0] == '\n' || (len >= 2 && b[0] == '\r' && b[1] == '\n'))) {
            evbuffer_drain(src, b[0] == '\n' ? 1 : 2);
            len = evbuffer_get_length(src);
            if (len == 0) { /* nothing else yet: still between requests */
                request_done(c);
                return BEV_NEED_MORE;
            }
        }
    }
    if (evbuffer_ptr_set(src, &p, c->c_scan, EVBUFFER_PTR_SET) == 0) {
        for (;;) {
            e = evbuffer_search_eol(src, &p, &eol, EVBUFFER_EOL_CRLF);
            if (e.pos < 0)
                break;
            if (e.pos == p.pos && p.pos > 0) { /* an empty line after the request line */
                head_len = (size_t)e.pos + eol;
                break;
            }
            c->c_scan = (size_t)e.pos + eol;
            if (evbuffer_ptr_set(src, &p, c->c_scan, EVBUFFER_PTR_SET) == -1)
                break;
        }
    }
    if (head_len == 0) {
        if (len > GUARD_MAX_HEAD) {
            evbuffer_drain(src, len);
            refuse(c, NULL, 431, "request head over 8 KiB", NULL);
        } else if (g->g_held - c->c_held + len > g->g_o.go_max_pending) {
            evbuffer_drain(src, len);
            refuse(c, NULL, 503, "too many bytes held for unfinished requests; retry",
                   NULL);
        } else {
            set_held(c, len);
        }
        return BEV_NEED_MORE;
    }
    if (head_len > GUARD_MAX_HEAD) {
        evbuffer_drain(src, len);
        refuse(c, NULL, 431, "request head over 8 KiB", NULL);
        return BEV_NEED_MORE;
    }
    if ((head = (const char *)evbuffer_pullup(src, (ev_ssize_t)head_len)) == NULL) {
        kill_conn(c);
        return BEV_NEED_MORE;
    }
    if ((code = conn_head_parse(head, head_len, &gh, &why)) != 0) {
        refuse(c, &gh, code, why, NULL);
        evbuffer_drain(src, len);
        return BEV_NEED_MORE;
    }
    if (g->g_o.go_check != NULL)
        g->g_o.go_check(&gh, &v, g->g_o.go_arg);
    /* What this request will hold until its body is in: head and body. */
    need = head_len + (gh.gh_content_length > 0 ? (size_t)gh.gh_content_length : 0);
    if (v.gv_code == 0 && g->g_held - c->c_held + need > g->g_o.go_max_pending) {
        v.gv_code = 503;
        v.gv_msg = "too many bytes held for unfinished requests; retry";
    }
    if (v.gv_code != 0) {
        refuse(c, &gh, v.gv_code, v.gv_msg ? v.gv_msg : "refused", v.gv_header);
        evbuffer_drain(src, len);
        return BEV_NEED_MORE;
    }
    set_held(c, need);
    c->c_body_left = gh.gh_content_length > 0 ? (uint64_t)gh.gh_content_length : 0;
    c->c_state = CS_BODY;
    if (evbuffer_remove_buffer(src, dst, head_len) != (int)head_len) {
        kill_conn(c);
        return BEV_NEED_MORE;
    }
    if (c->c_body_left == 0)
        request_done(c);
    return BEV_OK;
}

/* The filter's input side: every byte the client sends comes through here. */
static enum bufferevent_filter_result
guard_in(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
         enum bufferevent_flush_mode mode, void *arg)
{
    struct conn *c = arg;
    struct guard *g = c->c_g;
    size_t len = evbuffer_get_length(src), n;

    (void)limit;
    (void)mode;
    switch (c->c_state) {
    case CS_IDLE:
        if (len == 0)
            return BEV_NEED_MORE;
        c->c_state = CS_HEAD; /* this is the request's first byte */
        c->c_t0 = clock_mono_ms();
        c->c_scan = 0;
        c->c_lead_seen = 0;
        if (g->g_held >= g->g_o.go_max_pending) {
            evbuffer_drain(src, len);
            refuse(c, NULL, 503, "too many bytes held for unfinished requests; retry",
                   NULL);
            return BEV_NEED_MORE;
        }
        return head_in(c, src, dst);
    case CS_HEAD:
        return head_in(c, src, dst);
    case CS_BODY:
        n = len < c->c_body_left ? len : (size_t)c->c_body_left;
        if (n == 0)
            return BEV_NEED_MORE;
        if (evbuffer_remove_buffer(src, dst, n) != (int)n) {
            kill_conn(c);
            return BEV_NEED_MORE;
        }
        c->c_body_left -= n;
        if (c->c_body_left == 0)
            request_done(c);
        return BEV_OK;
    default:
        evbuffer_drain(src, len); /* refused or closing: read and drop */
        c->c_dropped += len;
        if (c->c_dropped > LINGER_BYTES && c->c_state != CS_DEAD)
            kill_conn(c);
        return BEV_NEED_MORE;
    }
}

/*
 * The filter's output side: evhttp's answers go straight to the socket, and
 * evhttp is told "written" only once the kernel has every byte. (Moving them
 * into the socket bufferevent instead would let evhttp free the connection,
 * and drop the unsent rest, right after a Connection: close answer.)
 */
static enum bufferevent_filter_result
guard_out(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
          enum bufferevent_flush_mode mode, void *arg)
{
    struct conn *c = arg;
    int n;

    (void)dst;
    (void)limit;
    (void)mode;
    if (evbuffer_get_length(src) == 0)
        return BEV_NEED_MORE;
    if (c->c_state >= CS_REFUSE || conn_fd(c) < 0) {
        evbuffer_drain(src, evbuffer_get_length(src));
        return BEV_NEED_MORE;
    }
    n = evbuffer_write(src, c->c_fd);
    if (n < 0 && !retriable(errno)) {
        evbuffer_drain(src, evbuffer_get_length(src));
        kill_conn(c);
        return BEV_NEED_MORE;
    }
    if (evbuffer_get_length(src) > 0 && arm_write(c, wev_cb) == -1) {
        kill_conn(c);
        return BEV_NEED_MORE;
    }
    return n > 0 ? BEV_OK : BEV_NEED_MORE;
}

/* evhttp adds its answer while the filter is not yet writing, and enabling
 * writing does not look at what is already queued: kick a flush once the
 * current callback returns. */
static void
out_added_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    struct conn *c = arg;

    /* A hold ends once evhttp's last answer is out: look again from the loop,
     * after evhttp has seen it written. */
    if (c->c_state == CS_HOLD && info->n_added == 0 && evbuffer_get_length(buf) == 0 &&
        c->c_wev != NULL) {
        event_active(c->c_wev, EV_WRITE, 1);
        return;
    }
    if (info->n_added == 0 || c->c_state >= CS_REFUSE || conn_fd(c) < 0)
        return;
    if (c->c_wev == NULL &&
        (c->c_wev = event_new(c->c_g->g_base, c->c_fd, EV_WRITE, wev_cb, c)) == NULL) {
        kill_conn(c);
        return;
    }
    event_active(c->c_wev, EV_WRITE, 1);
}

/* Hands the connection to evhttp's error path: it frees it (and us). */
static void
kill_conn(struct conn *c)
{
    if (c->c_state == CS_DEAD)
        return;
    set_held(c, 0);
    c->c_state = CS_DEAD;
    c->c_g->g_nconns--;
    if (c->c_wev != NULL)
        event_del(c->c_wev);
    bufferevent_trigger_event(c->c_bev, BEV_EVENT_ERROR | BEV_EVENT_READING,
                              BEV_TRIG_DEFER_CALLBACKS);
}

static void
conn_free(void *arg)
{
    struct conn *c = arg;

    if (c->c_g != NULL) { /* NULL: the guard went first (teardown) */
        if (c->c_state != CS_DEAD) {
            set_held(c, 0);
            c->c_g->g_nconns--;
        }
        TAILQ_REMOVE(&c->c_g->g_conns, c, c_link);
    }
    if (c->c_outcb != NULL)
        evbuffer_remove_cb_entry(bufferevent_get_output(c->c_bev), c->c_outcb);
    if (c->c_wev != NULL)
        event_free(c->c_wev);
    if (c->c_refusal != NULL)
        evbuffer_free(c->c_refusal);
    free(c);
}

/* At the connection bound: the oldest unfinished request goes first, then
 * one already refused, then the longest idle. */
static struct conn *
victim(struct guard *g)
{
    struct conn *c, *best = NULL;
    int best_rank = 99, rank;

    TAILQ_FOREACH(c, &g->g_conns, c_link)
    {
        /* cppcheck-suppress uninitvar ; c is a list member, set by TAILQ_FOREACH */
        switch (c->c_state) {
        case CS_HEAD:
        case CS_BODY:
            rank = 0;
            break;
        case CS_HOLD:
        case CS_REFUSE:
        case CS_LINGER:
            rank = 1;
            break;
        case CS_IDLE:
            rank = 2;
            break;
        default:
            continue;
        }
        /* accept order is age order; within a rank the first seen is oldest */
        if (rank < best_rank ||
            (rank == best_rank && rank == 0 && c->c_t0 < best->c_t0)) {
            best = c;
            best_rank = rank;
        }
    }
    return best;
}

struct bufferevent *
guard_bevcb(struct event_base *base, void *arg)
{
    struct guard *g = arg;
    struct bufferevent *sock = NULL, *bev = NULL;
    struct conn *c, *old;

    if (g->g_nconns >= g->g_o.go_max_conns && (old = victim(g)) != NULL) {
        g->g_st.gs_dropped++;
        kill_conn(old);
    }
    if ((c = calloc(1, sizeof(*c))) == NULL)
        goto fail;
    c->c_g = g;
    c->c_fd = -1;
    c->c_state = CS_IDLE;
    if ((sock = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) == NULL)
        goto fail;
    /* The socket bufferevent never holds more than a head's worth unread. */
    bufferevent_setwatermark(sock, EV_READ, 0, GUARD_MAX_HEAD + 1);
    if ((bev = bufferevent_filter_new(sock, guard_in, guard_out, BEV_OPT_CLOSE_ON_FREE,
                                      conn_free, c)) == NULL)
        goto fail;
    c->c_bev = bev;
    TAILQ_INSERT_TAIL(&g->g_conns, c, c_link);
    g->g_nconns++;
    if ((c->c_outcb = evbuffer_add_cb(bufferevent_get_output(bev), out_added_cb, c)) ==
        NULL)
        kill_conn(c);
    return bev;
fail:
    if (sock != NULL)
        bufferevent_free(sock);
    free(c);
    /* evhttp then makes a plain bufferevent: unguarded, but the loop goes on */
    log_warnx("%s: out of memory", __func__);
    return NULL;
}

static void
log_summary(struct guard *g, int64_t now)
{
    struct guard_stats *s = &g->g_st, *l = &g->g_logged;
    char line[256];

    if (now - g->g_logged_ms < LOG_EVERY_MS ||
        (s->gs_dropped == l->gs_dropped && s->gs_timeouts == l->gs_timeouts &&
         s->gs_refused == l->gs_refused))
        return;
    snprintf(line, sizeof(line),
             "front door: %zu connections open, %zu bytes held; since the last line "
             "%llu dropped at the connection bound, %llu past a deadline, %llu refused",
             g->g_nconns, g->g_held, (unsigned long long)(s->gs_dropped - l->gs_dropped),
             (unsigned long long)(s->gs_timeouts - l->gs_timeouts),
             (unsigned long long)(s->gs_refused - l->gs_refused));
    log_event(LOG_LEVEL_WARN, line, (char *)NULL);
    *l = *s;
    g->g_logged_ms = now;
}

/* Deadlines, counted from the request's first byte whatever trickles in. */
static void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    struct guard *g = arg;
    struct conn *c, *next;
    int64_t now = clock_mono_ms();

    (void)fd;
    (void)what;
    for (c = TAILQ_FIRST(&g->g_conns); c != NULL; c = next) {
        next = TAILQ_NEXT(c, c_link);
        if ((c->c_state == CS_HEAD && now - c->c_t0 >= g->g_o.go_header_ms) ||
            (c->c_state == CS_BODY && now - c->c_t0 >= g->g_o.go_body_ms)) {
            g->g_st.gs_timeouts++;
            refuse(c, NULL, 408,
                   c->c_state == CS_HEAD ? "request head not complete in time"
                                         : "request body not complete in time",
                   NULL);
            g->g_st.gs_refused--; /* counted as a timeout, not twice */
        } else if (c->c_state == CS_HOLD && !evhttp_idle(c)) {
            if (now - c->c_t0 >= g->g_o.go_body_ms) /* the earlier answer never came */
                kill_conn(c);
        } else if (c->c_state == CS_HOLD) {
            release_hold(c);
        } else if ((c->c_state == CS_REFUSE && now - c->c_t0 >= REFUSE_MS) ||
                   (c->c_state == CS_LINGER && now - c->c_t0 >= LINGER_MS)) {
            kill_conn(c);
        }
    }
    log_summary(g, now);
}

struct guard *
guard_new(struct event_base *base, const struct guard_opts *o)
{
    struct guard *g = calloc(1, sizeof(*g));
    struct timeval every = {0, SWEEP_MS * 1000};

    if (g == NULL)
        return NULL;
    g->g_base = base;
    g->g_o = *o;
    TAILQ_INIT(&g->g_conns);
    g->g_logged_ms = clock_mono_ms();
    if ((g->g_sweep = event_new(base, -1, EV_PERSIST, sweep_cb, g)) == NULL ||
        event_add(g->g_sweep, &every) == -1) {
        guard_free(g);
        return NULL;
    }
    return g;
}

/* Call after evhttp_free(): evhttp frees the connections, and they unlink. */
void
guard_free(struct guard *g)
{
    struct conn *c;

    if (g == NULL)
        return;
    /* Any left (a deferred close still queued) no longer point at us. */
    while ((c = TAILQ_FIRST(&g->g_conns)) != NULL) {
        TAILQ_REMOVE(&g->g_conns, c, c_link);
        c->c_g = NULL;
        c->c_state = CS_DEAD;
        if (c->c_wev != NULL)
            event_del(c->c_wev);
    }
    if (g->g_sweep != NULL)
        event_free(g->g_sweep);
    free(g);
}

void
guard_stats(const struct guard *g, struct guard_stats *st)
{
    *st = g->g_st;
    st->gs_conns = g->g_nconns;
    st->gs_held = g->g_held;
}
