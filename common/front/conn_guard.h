/* conn_guard.h -- the one HTTP front door (serve and exporter): bounds, head checks,
 * listener */
#ifndef GVW_CONN_GUARD_H
#define GVW_CONN_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn_head.h" /* struct guard_head: what the policy checks */

struct evhttp;

/*
 * Every accepted connection's bufferevent is a filter over the socket
 * (evhttp_set_bevcb(http, guard_bevcb, guard)), so the guard sees each byte
 * before evhttp does. A request head is held back until it is complete and
 * checked; only then is it (and a body of exactly its Content-Length) passed
 * on. A request that must be refused is answered by the guard itself, from
 * its headers, and the connection closed; evhttp never sees it.
 */

/* A refusal: gv_code 0 = let the request through. */
struct guard_refusal {
    int gv_code;
    const char *gv_msg;    /* the {"error": ...} text: plain ASCII, no quotes */
    const char *gv_header; /* one extra "Name: value" line, or NULL */
};

struct guard_opts {
    size_t go_max_conns; /* connections open at once; beyond: oldest unfinished dropped */
    size_t go_max_pending; /* bytes held for unfinished requests; beyond: 503 */
    int64_t go_header_ms;  /* head complete within this of the first byte */
    int64_t go_body_ms;    /* body complete within this of the first byte */
    /* The caller's checks on a well-formed head (auth, method, size). */
    void (*go_check)(const struct guard_head *gh, struct guard_refusal *v, void *arg);
    /* Told of every refusal; gh is NULL when the head was not complete. */
    void (*go_refused)(const struct guard_head *gh, int code, void *arg);
    void *go_arg;
};

struct guard_stats {
    size_t gs_conns;      /* open now */
    size_t gs_held;       /* bytes held for unfinished requests now */
    uint64_t gs_dropped;  /* connections dropped for the connection bound */
    uint64_t gs_timeouts; /* requests past a deadline */
    uint64_t gs_refused;  /* requests answered by the guard */
};

/* The largest request head accepted (request line and headers). */
#define GUARD_MAX_HEAD (8 * 1024)

struct guard *guard_new(struct event_base *base, const struct guard_opts *o);
void guard_free(struct guard *g);

/* For evhttp_set_bevcb(): a filtered bufferevent for the next connection. */
struct bufferevent *guard_bevcb(struct event_base *base, void *g);

void guard_stats(const struct guard *g, struct guard_stats *st);

/*
 * Raises RLIMIT_NOFILE's soft limit to the hard one and returns the
 * connection bound that fits in it: want, or less with a warning naming
 * setting (descriptors are kept for the rest of the daemon).
 */
size_t guard_fit_nofile(size_t want, const char *setting);

/*
 * Binds http to addr ("host:port", "[v6]:port"; port 0 = any) and pauses
 * accepting for a moment when accept() fails for want of descriptors or
 * memory, rather than spinning. Returns the bound port, or -1 with a reason
 * in err. The listener is http's; guard_unlisten(http) before evhttp_free().
 */
int guard_listen(struct evhttp *http, const char *addr, char *err, size_t errlen);
void guard_unlisten(struct evhttp *http);

#endif
