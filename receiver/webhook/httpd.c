/* httpd.c -- the HTTP front door: /webhook, /metrics, /healthz, /readyz (intake/ commits)
 */
#include "httpd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include "buf.h"
#include "clock.h"
#include "conn_guard.h"
#include "front_reply.h"
#include "intake.h"
#include "json_str.h"
#include "log.h"
#include "metrics.h"
#include "store.h" /* store_moved() for /readyz */
#include "token.h"

#define TOKEN_REFRESH_S 60
#define UNAUTH_LOG_EVERY_S                                                               \
    10 /* a flood of bad tokens is one line per this, not one each */

struct httpd {
    struct event_base *h_base; /* borrowed */
    struct evhttp *h_http;     /* owned */
    struct guard *h_guard;     /* owned; every connection's bounds */
    int h_port;                /* the bound port */
    struct httpd_opts h_opts;  /* strings borrowed */
    char *h_token;             /* owned; current webhook token, never logged */
    size_t h_token_len;
    int h_auth;                  /* bearer auth on */
    struct event *h_token_timer; /* owned */
    struct intake *h_intake;     /* owned; the webhooks waiting for this turn's commit */
    double h_unauth_logged;      /* monotonic s of the last 401 line; 0 = none yet */
    unsigned long long h_unauth; /* 401s since that line */
};

int
httpd_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char diff = alen != blen;
    size_t n = alen > blen ? alen : blen;

    /* Walk the longer length whatever the content, so timing leaks no prefix. */
    for (size_t i = 0; i < n; i++) {
        unsigned char ca = i < alen ? (unsigned char)a[i] : 0;
        unsigned char cb = i < blen ? (unsigned char)b[i] : 0;
        diff |= ca ^ cb;
    }
    return diff == 0;
}

/* Reads the webhook token (common/http/token's trimming and checks) into
 * h_token; on failure the previous token stays. 0, or -1 with err. */
static int
read_token(struct httpd *h, char *err, size_t errlen)
{
    char why[512], *tok;

    if (token_read(h->h_opts.ho_token_file, &tok, why, sizeof(why)) == -1) {
        snprintf(err, errlen, "WEBHOOK_TOKEN_FILE: %s", why);
        return -1;
    }
    if (h->h_token != NULL) {
        token_wipe(h->h_token, h->h_token_len);
        free(h->h_token);
    }
    h->h_token = tok;
    h->h_token_len = strlen(tok);
    return 0;
}

static void
token_refresh_cb(evutil_socket_t fd, short what, void *arg)
{
    struct httpd *h = arg;
    char err[640];

    if (read_token(h, err, sizeof(err)) == -1)
        log_warnx("%s: keeping the previous webhook token: %s", __func__, err);
}

static void
reply(struct evhttp_request *req, int code, const char *reason, const char *ctype,
      const char *body, size_t len)
{
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
    front_reply(req, code, reason, body, len);
}

/* Answers {"error": msg} with code; counted when it is a webhook answer. */
static void
reply_error(struct evhttp_request *req, int code, const char *reason, const char *msg,
            int webhook)
{
    struct buf body;

    buf_init(&body, 0);
    /* json_str_put writes as json_dumps would, invalid UTF-8 as '?'. */
    if (buf_append(&body, "{\"error\":", 9) == 0 && json_str_put(&body, msg) == 0 &&
        buf_append(&body, "}", 1) == 0)
        reply(req, code, reason, "application/json", body.b_data, body.b_len);
    else
        reply(req, code, reason, "application/json", "{\"error\":\"out of memory\"}", 25);
    buf_free(&body);
    if (webhook)
        metrics_webhook_request(code);
}

/* The intake committed this turn (ok) or could not: answers one webhook. */
static void
answer_batch(void *reqp, const struct alert_batch *b, const int64_t *ids, int ok,
             void *arg)
{
    struct httpd *h = arg;
    struct evhttp_request *req = reqp;

    if (ok) {
        char body[64];
        int n = snprintf(body, sizeof(body), "{\"accepted\":%zu}", b->ab_count);
        reply(req, 200, "OK", "application/json", body, (size_t)n);
        metrics_webhook_request(200);
        for (size_t i = 0; i < b->ab_count; i++) {
            const struct alert *a = &b->ab_alerts[i];
            metrics_alert_received(a->a_alertname, alert_status_name(a));
            if (h->h_opts.ho_on_alert != NULL)
                h->h_opts.ho_on_alert(a, ids[i], h->h_opts.ho_cb_arg);
        }
    } else {
        reply_error(req, 503, "Service Unavailable",
                    "the audit store cannot record this delivery; retry", 1);
    }
}

/* A 401: logged at once the first time (a wrong token in Alertmanager's
 * config shows up), then summed into at most one line per
 * UNAUTH_LOG_EVERY_S, so a hostile client cannot flood the log. */
static void
log_unauthorized(struct httpd *h)
{
    double now = clock_mono_s();

    h->h_unauth++;
    if (h->h_unauth_logged != 0 && now - h->h_unauth_logged < UNAUTH_LOG_EVERY_S)
        return;
    log_warnx("rejected %llu webhook(s) with a missing or wrong bearer token, from the "
              "headers (at most one such line per %d s)",
              h->h_unauth, UNAUTH_LOG_EVERY_S);
    h->h_unauth = 0;
    h->h_unauth_logged = now;
}

/* auth[0..len) is an Authorization value (NULL: none). */
static int
authorized_value(const struct httpd *h, const char *auth, size_t len)
{
    if (!h->h_auth)
        return 1;
    if (auth == NULL || len < 7 || evutil_ascii_strncasecmp(auth, "Bearer ", 7) != 0)
        return 0;
    return httpd_token_equal(auth + 7, len - 7, h->h_token, h->h_token_len);
}

static int
authorized(struct httpd *h, struct evhttp_request *req)
{
    const char *auth =
        evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");

    return authorized_value(h, auth, auth ? strlen(auth) : 0);
}

static int
head_is(const char *s, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* The guard asks this of every complete head, before any body is read: a
 * webhook without the token costs its headers and no more. */
static void
head_check(const struct guard_head *gh, struct guard_refusal *v, void *arg)
{
    struct httpd *h = arg;

    if (!head_is(gh->gh_path, gh->gh_path_len, "/webhook")) {
        /* Only the webhook takes a body: refuse one here, before it is read.
         * Every method but GET and HEAD is refused here too: evhttp would
         * answer TRACE, CONNECT and unknown methods 501, not 405. */
        int get = head_is(gh->gh_method, gh->gh_method_len, "GET") ||
                  head_is(gh->gh_method, gh->gh_method_len, "HEAD");
        if (get && gh->gh_content_length <= 0)
            return;
        if (!head_is(gh->gh_path, gh->gh_path_len, "/metrics") &&
            !head_is(gh->gh_path, gh->gh_path_len, "/healthz") &&
            !head_is(gh->gh_path, gh->gh_path_len, "/readyz") &&
            !head_is(gh->gh_path, gh->gh_path_len, "/")) {
            v->gv_code = 404;
            v->gv_msg = "no such path";
        } else if (!get) {
            v->gv_code = 405;
            v->gv_msg = "use GET";
            v->gv_header = "Allow: GET, HEAD";
        } else {
            v->gv_code = 400;
            v->gv_msg = "a GET or HEAD carries no body";
        }
        return;
    }
    if (!head_is(gh->gh_method, gh->gh_method_len, "POST")) {
        v->gv_code = 405;
        v->gv_msg = "use POST";
        v->gv_header = "Allow: POST";
    } else if (!authorized_value(h, gh->gh_auth, gh->gh_auth_len)) {
        v->gv_code = 401;
        v->gv_msg = "missing or wrong bearer token";
        v->gv_header = "WWW-Authenticate: Bearer";
        log_unauthorized(h);
    } else if (gh->gh_content_length > HTTPD_MAX_BODY) {
        v->gv_code = 413;
        v->gv_msg = "body over 1 MiB";
    }
}

/* A webhook the guard answered still counts in webhook_requests_total. */
static void
head_refused(const struct guard_head *gh, int code, void *arg)
{
    (void)arg;
    if (gh != NULL && head_is(gh->gh_path, gh->gh_path_len, "/webhook"))
        metrics_webhook_request(code);
}

static void
handle_webhook(struct httpd *h, struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    struct alert_batch batch = {0};
    char err[512];
    const char *body;

    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
        reply_error(req, 405, "Method Not Allowed", "use POST", 1);
        return;
    }
    if (!authorized(h, req)) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                          "Bearer");
        reply_error(req, 401, "Unauthorized", "missing or wrong bearer token", 1);
        log_unauthorized(h);
        return;
    }
    if (len > HTTPD_MAX_BODY) {
        reply_error(req, 413, "Payload Too Large", "body over 1 MiB", 1);
        return;
    }
    if (intake_store(h->h_intake) == NULL) {
        reply_error(req, 503, "Service Unavailable", "the audit store is not open yet",
                    1);
        return;
    }
    if (intake_full(h->h_intake)) {
        reply_error(req, 503, "Service Unavailable", "overloaded; retry", 1);
        return;
    }
    body = (const char *)evbuffer_pullup(in, -1);
    if (alert_batch_parse(body ? body : "", len, &batch, err, sizeof(err)) == -1) {
        reply_error(req, 400, "Bad Request", err, 1);
        log_info("%s: 400: %s", __func__, err);
        return;
    }
    if (intake_add(h->h_intake, req, &batch) == -1) {
        alert_batch_free(&batch);
        reply_error(req, 503, "Service Unavailable", "out of memory", 1);
    }
}

static void
handle_metrics(struct evhttp_request *req)
{
    struct buf out;

    buf_init(&out, 0);
    if (metrics_render(&out) == -1) {
        reply_error(req, 500, "Internal Server Error", "out of memory", 0);
    } else {
        reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
              out.b_data ? out.b_data : "", out.b_len);
    }
    buf_free(&out);
}

static void
route(struct evhttp_request *req, void *arg)
{
    struct httpd *h = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    int get = cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD;

    if (path == NULL) {
        reply_error(req, 400, "Bad Request", "bad request URI", 0);
    } else if (strcmp(path, "/webhook") == 0) {
        handle_webhook(h, req);
    } else if (strcmp(path, "/metrics") == 0 || strcmp(path, "/healthz") == 0 ||
               strcmp(path, "/readyz") == 0) {
        if (!get) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
                              "GET, HEAD");
            reply_error(req, 405, "Method Not Allowed", "use GET", 0);
        } else if (path[1] == 'm') {
            handle_metrics(req);
        } else if (path[1] == 'h') {
            reply(req, 200, "OK", "text/plain", "ok\n", 3);
        } else if (intake_store(h->h_intake) != NULL &&
                   !store_moved(intake_store(h->h_intake))) {
            char why[512];
            if (h->h_opts.ho_ready != NULL &&
                !h->h_opts.ho_ready(why, sizeof(why), h->h_opts.ho_cb_arg))
                reply(req, 503, "Service Unavailable", "text/plain", why, strlen(why));
            else
                reply(req, 200, "OK", "text/plain", "ready\n", 6);
        } else {
            reply(req, 503, "Service Unavailable", "text/plain",
                  "not ready: the audit store is not open\n", 39);
        }
    } else if (strcmp(path, "/") == 0 && h->h_opts.ho_on_page != NULL) {
        if (!get) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
                              "GET, HEAD");
            reply_error(req, 405, "Method Not Allowed", "use GET", 0);
        } else {
            h->h_opts.ho_on_page(req, h->h_opts.ho_cb_arg);
        }
    } else {
        reply_error(req, 404, "Not Found", "no such path", 0);
    }
}

struct httpd *
httpd_new(struct event_base *base, const struct httpd_opts *o, char *err, size_t errlen)
{
    struct httpd *h;
    char why[512];
    struct timeval every = {TOKEN_REFRESH_S, 0};
    struct guard_opts go = {
        .go_max_pending = o->ho_max_held_bytes,
        .go_header_ms = o->ho_header_ms,
        .go_body_ms = o->ho_body_ms,
        .go_check = head_check,
        .go_refused = head_refused,
    };

    if ((h = calloc(1, sizeof(*h))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->h_base = base;
    h->h_opts = *o;
    h->h_auth = o->ho_token_file != NULL && o->ho_token_file[0] != '\0';
    go.go_arg = h;
    if (h->h_auth && read_token(h, err, errlen) == -1)
        goto fail;
    go.go_max_conns = guard_fit_nofile(o->ho_max_conns > 0 ? o->ho_max_conns : 1,
                                       "HTTP_MAX_CONNECTIONS");
    if ((h->h_guard = guard_new(base, &go)) == NULL ||
        (h->h_http = evhttp_new(base)) == NULL ||
        (h->h_intake = intake_new(base, o->ho_max_pending, answer_batch, h)) == NULL ||
        (h->h_token_timer = event_new(base, -1, EV_PERSIST, token_refresh_cb, h)) ==
            NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    evhttp_set_bevcb(h->h_http, guard_bevcb, h->h_guard);
    evhttp_set_max_body_size(h->h_http, HTTPD_MAX_BODY);
    evhttp_set_max_headers_size(h->h_http, 64 * 1024);
    evhttp_set_timeout(h->h_http, 30);
    evhttp_set_allowed_methods(
        h->h_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                       EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
    evhttp_set_gencb(h->h_http, route, h);
    if ((h->h_port = guard_listen(h->h_http, o->ho_listen_addr, why, sizeof(why))) ==
        -1) {
        snprintf(err, errlen, "LISTEN_ADDR: %s", why);
        goto fail;
    }
    if (h->h_auth)
        event_add(h->h_token_timer, &every);
    return h;
fail:
    httpd_free(h);
    return NULL;
}

void
httpd_free(struct httpd *h)
{
    if (h == NULL)
        return;
    intake_free(h->h_intake); /* before evhttp: its requests are evhttp's */
    if (h->h_http != NULL) {
        guard_unlisten(h->h_http);
        evhttp_free(h->h_http);
    }
    guard_free(h->h_guard); /* after evhttp: its connections unlink from the guard */
    if (h->h_token_timer != NULL)
        event_free(h->h_token_timer);
    if (h->h_token != NULL) {
        token_wipe(h->h_token, h->h_token_len);
        free(h->h_token);
    }
    free(h);
}

void
httpd_flush(struct httpd *h)
{
    intake_flush(h->h_intake);
}

void
httpd_set_store(struct httpd *h, struct store *s)
{
    intake_set_store(h->h_intake, s);
}

int
httpd_port(const struct httpd *h)
{
    return h->h_port;
}
