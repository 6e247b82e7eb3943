/* httpc.h -- non-blocking HTTP client: libcurl multi socket API on the libevent loop */
#ifndef GVW_HTTPC_H
#define GVW_HTTPC_H

#include <stddef.h>

#include "buf.h"

struct event_base;
struct httpc;

#define HTTPC_CONNECT_TIMEOUT_MS 2000L    /* default connect timeout */
#define HTTPC_TIMEOUT_MS 10000L           /* default total timeout */
#define HTTPC_BODY_CAP (8u * 1024 * 1024) /* default response body cap, bytes */
#define HTTPC_TOKEN_MAX_AGE_MS 60000L     /* bound tokens rotate: re-read after this */
#define HTTPC_MAX_IDLE_CONNS                                                             \
    16L /* curl's connection cache per client (CURLMOPT_MAXCONNECTS):                    \
           idle keep-alive connections kept; matches the default                         \
           MAX_CONCURRENT_DECISIONS, each decision asking one                            \
           server at a time */

/* Settings of one client; every field may be 0/NULL for its default. */
struct httpc_opts {
    long ho_connect_timeout_ms; /* 0 = HTTPC_CONNECT_TIMEOUT_MS */
    long ho_timeout_ms;         /* whole transfer; 0 = HTTPC_TIMEOUT_MS */
    size_t ho_body_cap;         /* 0 = HTTPC_BODY_CAP */
    const char *ho_ca_file;     /* borrowed (copied): PEM trust, the only one;
                                   NULL/"" = system store. Re-read for every new
                                   connection, so a rotated CA is taken at once */
    const char *ho_token_file;  /* borrowed (copied): bearer token; NULL/"" = no auth */
    long ho_token_max_age_ms;   /* 0 = HTTPC_TOKEN_MAX_AGE_MS; tests set it short */
    int ho_no_proxy;            /* 1: ignore the *_proxy variables (pod-to-pod calls) */
};

/* One request. Everything is borrowed and copied before httpc_request returns. */
struct httpc_req {
    const char *hq_method; /* "GET" (also when NULL), "POST", "PATCH", "DELETE", ... */
    const char *hq_url;    /* absolute http:// or https:// URL, already encoded */
    const char *hq_content_type; /* with a body; NULL = "application/json" */
    const char *hq_body;         /* NULL = no body */
    size_t hq_body_len;
    long hq_connect_timeout_ms; /* 0 = the client's */
    long hq_timeout_ms;         /* 0 = the client's */
};

/* What came back. Everything is borrowed and valid only during the callback. */
struct httpc_resp {
    const char *hr_error; /* NULL when an HTTP answer arrived whole (any status);
                             else one sentence: curl's reason ("Failed to connect
                             ...", "Operation timed out ..."), "response too large
                             (over N bytes)", a token file problem, "out of memory
                             ...", or "cancelled" */
    int hr_too_large;     /* the answer was over the body cap (hr_error says so) */
    int hr_cancelled;     /* the client was freed with the request in flight */
    long hr_status;       /* HTTP status; 0 when no answer arrived */
    const char *hr_body;  /* never NULL, NUL-terminated ("" when empty or on error) */
    size_t hr_body_len;
    long hr_elapsed_ms;    /* from httpc_request() to completion */
    long hr_retry_after_s; /* the answer's Retry-After header in seconds (a delay or
                              an HTTP date from now, at most a day); 0 when absent,
                              unreadable or past */
};

typedef void (*httpc_done_fn)(const struct httpc_resp *resp, void *arg);

/*
 * Makes a client on base (borrowed; must outlive the client). Initialises
 * libcurl on first use. Returns the client (the caller frees it with
 * httpc_free()), or NULL with a reason in err.
 */
struct httpc *httpc_new(struct event_base *base, const struct httpc_opts *o, char *err,
                        size_t errlen);

/*
 * Frees the client. Every request still in flight is aborted and its callback
 * runs once, before httpc_free returns, with hr_cancelled = 1 and hr_error
 * "cancelled" -- so callers can free per-request state in one place. Such a
 * callback must not start a request on this client (httpc_request fails).
 * Never call it from inside one of this client's callbacks. NULL is a no-op.
 */
void httpc_free(struct httpc *h);

/*
 * Starts a request. Returns 0, and then cb runs exactly once, later, from the
 * event loop (never from inside httpc_request). Returns -1 without calling cb
 * when the request could not even be queued (bad method or URL, out of
 * memory, client being freed); the reason is logged.
 * An unreadable or empty token file is not -1: the callback gets the error.
 */
int httpc_request(struct httpc *h, const struct httpc_req *req, httpc_done_fn cb,
                  void *arg);

/* Number of requests in flight (for tests and shutdown decisions). */
size_t httpc_pending(const struct httpc *h);

/*
 * Appends s percent-encoded (RFC 3986: everything but A-Z a-z 0-9 - . _ ~) to
 * b, for a query value or a path segment. Returns 0, or -1 when b is full.
 */
int httpc_urlencode(struct buf *b, const char *s);

#endif
