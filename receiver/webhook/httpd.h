/* httpd.h -- the HTTP front door: /webhook, /metrics, /healthz, /readyz, / */
#ifndef GVW_HTTPD_H
#define GVW_HTTPD_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "alert.h"

#define HTTPD_MAX_BODY (1024 * 1024) /* SPEC: a body over 1 MiB is a 413 */

struct store;
struct httpd;
struct evhttp_request;

/* Called once per alert after the batch that holds it is durably stored and
 * answered. a and its strings are borrowed for the call only. */
typedef void (*httpd_alert_fn)(const struct alert *a, int64_t alert_id, void *arg);

struct httpd_opts {
    const char *ho_listen_addr; /* borrowed; "host:port", port 0 picks one */
    const char *ho_token_file;  /* borrowed; NULL or "" = no bearer auth */
    size_t ho_max_pending;      /* webhooks waiting for a commit; more = 503 */
    size_t ho_max_conns;        /* HTTP_MAX_CONNECTIONS (lowered to fit RLIMIT_NOFILE) */
    size_t ho_max_held_bytes;   /* HTTP_MAX_PENDING_MIB, in bytes */
    int64_t ho_header_ms;       /* HTTP_HEADER_TIMEOUT */
    int64_t ho_body_ms;         /* HTTP_BODY_TIMEOUT */
    httpd_alert_fn ho_on_alert; /* may be NULL */
    /* GET /: takes the request and answers it later (page.c); NULL = 404. */
    void (*ho_on_page)(struct evhttp_request *req, void *arg);
    /* GET /readyz once the store is open: 1 = ready, else 0 with the 503's
     * body line in why (HA: a follower names the leader). NULL = ready. */
    int (*ho_ready)(char *why, size_t len, void *arg);
    void *ho_cb_arg;
};

/*
 * Binds the listener on base. Reads the webhook token now (and again every
 * minute, so a rotated Secret is picked up). Returns NULL with a reason in
 * err. Free with httpd_free(), which answers nothing more.
 */
struct httpd *httpd_new(struct event_base *base, const struct httpd_opts *o, char *err,
                        size_t errlen);
void httpd_free(struct httpd *h);

/* The store webhooks are written to (borrowed); NULL until it opens, and
 * while it is NULL /readyz and /webhook answer 503. */
void httpd_set_store(struct httpd *h, struct store *s);

/* Commits and answers the webhooks waiting for this turn's commit now
 * (shutdown: finish the requests in hand). */
void httpd_flush(struct httpd *h);

/* The port actually bound. */
int httpd_port(const struct httpd *h);

/* 1 if a and b are equal, in time that depends only on their lengths. */
int httpd_token_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
