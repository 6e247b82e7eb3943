/* httpc.c -- libcurl multi socket API on the libevent loop (the glue of curl's
 * hiperfifo.c) */
#include "httpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "token.h"

/* One socket curl asked us to watch; curl keeps the pointer via curl_multi_assign(). */
struct httpc_sock {
    struct event *s_ev; /* owned */
    struct httpc_sock *s_prev, *s_next;
};

/* One request from httpc_request() to its callback. */
struct httpc_call {
    struct httpc *c_h;              /* borrowed back pointer */
    CURL *c_easy;                   /* owned; NULL once removed from the multi */
    struct curl_slist *c_headers;   /* owned */
    char *c_body;                   /* owned copy: curl reads it during the transfer */
    char *c_method;                 /* owned, for logs */
    char *c_url;                    /* owned, for logs */
    struct buf c_resp;              /* the response body, capped */
    char c_errbuf[CURL_ERROR_SIZE]; /* curl's detailed reason */
    char *c_fail;                   /* owned: an error known before any transfer */
    struct event *c_fail_ev;        /* owned: delivers c_fail from the loop */
    int64_t c_start_ms;
    int c_sock_failed;    /* a socket of it could not be watched */
    long c_retry_after_s; /* the answer's Retry-After, seconds; 0 = none */
    httpc_done_fn c_cb;
    void *c_arg;
    struct httpc_call *c_prev, *c_next;
};

struct httpc {
    struct event_base *h_base;  /* borrowed */
    CURLM *h_multi;             /* owned */
    struct event *h_timer;      /* owned: the one timer curl asks for */
    struct httpc_call *h_calls; /* in flight */
    struct httpc_sock *h_socks; /* watched sockets, freed at the end if curl did not */
    size_t h_pending;
    int h_closing;
    int h_sock_failed; /* some call has c_sock_failed set */
    long h_connect_ms;
    long h_timeout_ms;
    size_t h_body_cap;
    int h_no_proxy;       /* CURLOPT_NOPROXY "*" */
    char *h_ca_file;      /* owned; NULL = system trust */
    int h_auth;           /* h_token is set up: send Authorization */
    struct token h_token; /* owned */
};

static int curl_ready;

static void
call_unlink(struct httpc_call *c)
{
    struct httpc *h = c->c_h;

    if (c->c_prev != NULL)
        c->c_prev->c_next = c->c_next;
    else
        h->h_calls = c->c_next;
    if (c->c_next != NULL)
        c->c_next->c_prev = c->c_prev;
    c->c_prev = c->c_next = NULL;
    h->h_pending--;
}

/* Takes the transfer out of curl; its easy handle is never touched again. */
static void
call_detach(struct httpc_call *c)
{
    if (c->c_easy != NULL) {
        curl_multi_remove_handle(c->c_h->h_multi, c->c_easy);
        curl_easy_cleanup(c->c_easy);
        c->c_easy = NULL;
    }
}

/* The one teardown of a call, whatever happened to it. It must be unlinked. */
static void
call_free(struct httpc_call *c)
{
    call_detach(c);
    if (c->c_fail_ev != NULL)
        event_free(c->c_fail_ev);
    for (struct curl_slist *l = c->c_headers; l != NULL; l = l->next)
        token_wipe(l->data, strlen(l->data)); /* the Authorization header */
    curl_slist_free_all(c->c_headers);
    free(c->c_body);
    free(c->c_method);
    free(c->c_url);
    free(c->c_fail);
    buf_free(&c->c_resp);
    free(c);
}

/* Unlinks c, runs its callback once, frees it. */
static void
call_finish(struct httpc_call *c, const char *error, int cancelled, long status)
{
    struct httpc_resp r;
    char statusbuf[16], elapsedbuf[24];

    memset(&r, 0, sizeof(r));
    r.hr_error = error;
    r.hr_too_large = error != NULL && c->c_resp.b_toobig;
    r.hr_cancelled = cancelled;
    r.hr_status = status;
    r.hr_elapsed_ms = (long)(clock_mono_ms() - c->c_start_ms);
    r.hr_retry_after_s = c->c_retry_after_s;
    if (error == NULL && c->c_resp.b_data != NULL) {
        r.hr_body = c->c_resp.b_data;
        r.hr_body_len = c->c_resp.b_len;
    } else {
        r.hr_body = "";
    }
    snprintf(statusbuf, sizeof(statusbuf), "%ld", status);
    snprintf(elapsedbuf, sizeof(elapsedbuf), "%ld", r.hr_elapsed_ms);
    log_event(LOG_LEVEL_DEBUG, "http request done", "method", c->c_method, "url",
              c->c_url, "status", statusbuf, "elapsed_ms", elapsedbuf, "error", error,
              (char *)NULL);
    call_unlink(c);
    c->c_cb(&r, c->c_arg);
    call_free(c);
}

/* The answer's Retry-After in seconds (a delay, or an HTTP date from now), as
 * libcurl read it; 0 when absent, unreadable, or in the past. */
static long
retry_after(CURL *e)
{
#if LIBCURL_VERSION_NUM >= 0x074200
    curl_off_t s = 0;

    if (curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &s) != CURLE_OK || s <= 0)
        return 0;
    return s > 86400 ? 86400 : (long)s;
#else
    (void)e;
    return 0;
#endif
}

/* Completes every finished transfer; runs after each curl_multi_socket_action(). */
static void
check_multi_info(struct httpc *h)
{
    struct httpc_call *c;
    CURLMsg *msg;
    CURL *e;
    CURLcode rc;
    char toobig[80];
    const char *error;
    long status;
    int left;

    while ((msg = curl_multi_info_read(h->h_multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        e = msg->easy_handle; /* msg dies with curl_multi_remove_handle() */
        rc = msg->data.result;
        c = NULL;
        status = 0;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        if (c != NULL)
            c->c_retry_after_s = retry_after(e);
        if (c == NULL) { /* can't happen: every handle carries its call */
            curl_multi_remove_handle(h->h_multi, e);
            curl_easy_cleanup(e);
            continue;
        }
        call_detach(c);
        error = NULL;
        if (c->c_resp.b_toobig || rc == CURLE_FILESIZE_EXCEEDED) {
            c->c_resp.b_toobig = 1; /* curl's own refusal too: hr_too_large */
            snprintf(toobig, sizeof(toobig), "response too large (over %zu bytes)",
                     c->c_resp.b_cap);
            error = toobig;
        } else if (rc == CURLE_WRITE_ERROR) {
            error = "out of memory reading the response";
        } else if (rc != CURLE_OK) {
            error = c->c_errbuf[0] != '\0' ? c->c_errbuf : curl_easy_strerror(rc);
        }
        call_finish(c, error, 0, status);
    }
    /* Transfers whose socket we could not watch would only stall: end them. */
    while (h->h_sock_failed) {
        h->h_sock_failed = 0;
        for (c = h->h_calls; c != NULL; c = c->c_next)
            if (c->c_sock_failed && c->c_easy != NULL) {
                call_detach(c);
                h->h_sock_failed = 1; /* the list changed under us: look again */
                call_finish(c, "out of memory watching a socket", 0, 0);
                break;
            }
    }
}

/* libevent: a watched socket is ready. */
static void
sock_event_cb(evutil_socket_t fd, short kind, void *arg)
{
    struct httpc *h = arg;
    int action = ((kind & EV_READ) ? CURL_CSELECT_IN : 0) |
                 ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running;

    curl_multi_socket_action(h->h_multi, fd, action, &running);
    check_multi_info(h);
}

/* libevent: curl's timeout expired. */
static void
timer_event_cb(evutil_socket_t fd, short kind, void *arg)
{
    struct httpc *h = arg;
    int running;

    curl_multi_socket_action(h->h_multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_multi_info(h);
}

/* curl: arm (or, with -1, disarm) the one timer. Only arms: curl forbids
 * calling back into the multi handle from here. */
static int
multi_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    struct httpc *h = userp;
    struct timeval tv;

    if (timeout_ms < 0)
        return evtimer_del(h->h_timer) == 0 ? 0 : -1;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return evtimer_add(h->h_timer, &tv) == 0 ? 0 : -1;
}

static void
sock_free(struct httpc *h, struct httpc_sock *s)
{
    if (s->s_prev != NULL)
        s->s_prev->s_next = s->s_next;
    else
        h->h_socks = s->s_next;
    if (s->s_next != NULL)
        s->s_next->s_prev = s->s_prev;
    event_free(s->s_ev);
    free(s);
}

/* curl: start, change or stop watching a socket. */
static int
multi_sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *sockp)
{
    struct httpc *h = userp;
    struct httpc_sock *s = sockp;
    struct httpc_call *c;
    short kind;

    if (what == CURL_POLL_REMOVE) {
        if (s != NULL)
            sock_free(h, s);
        return 0;
    }
    kind = EV_PERSIST | ((what & CURL_POLL_IN) ? EV_READ : 0) |
           ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    if (s == NULL) {
        if ((s = calloc(1, sizeof(*s))) == NULL)
            goto fail;
        if ((s->s_ev = event_new(h->h_base, fd, kind, sock_event_cb, h)) == NULL) {
            free(s);
            goto fail;
        }
        if ((s->s_next = h->h_socks) != NULL)
            s->s_next->s_prev = s;
        h->h_socks = s;
        curl_multi_assign(h->h_multi, fd, s);
    } else {
        event_del(s->s_ev);
        event_assign(s->s_ev, h->h_base, fd, kind, sock_event_cb, h);
    }
    if (event_add(s->s_ev, NULL) == 0)
        return 0;
fail:
    /*
     * Not -1: curl would then abort every transfer without telling us which.
     * The transfer is marked and check_multi_info() ends it with an error
     * right after this curl_multi_socket_action() returns. An internal curl
     * handle (no call) was only closing a connection.
     */
    log_warnx("%s: cannot watch socket %d: out of memory", __func__, (int)fd);
    c = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
    if (c != NULL) {
        c->c_sock_failed = 1;
        h->h_sock_failed = 1;
    }
    return 0;
}

struct httpc *
httpc_new(struct event_base *base, const struct httpc_opts *o, char *err, size_t errlen)
{
    struct httpc *h;

    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            snprintf(err, errlen, "curl_global_init failed");
            return NULL;
        }
        curl_ready = 1;
    }
    if ((h = calloc(1, sizeof(*h))) == NULL)
        goto nomem;
    h->h_base = base;
    h->h_connect_ms = o->ho_connect_timeout_ms > 0 ? o->ho_connect_timeout_ms
                                                   : HTTPC_CONNECT_TIMEOUT_MS;
    h->h_timeout_ms = o->ho_timeout_ms > 0 ? o->ho_timeout_ms : HTTPC_TIMEOUT_MS;
    h->h_body_cap = o->ho_body_cap > 0 ? o->ho_body_cap : HTTPC_BODY_CAP;
    h->h_no_proxy = o->ho_no_proxy != 0;
    if (o->ho_ca_file != NULL && o->ho_ca_file[0] != '\0' &&
        (h->h_ca_file = strdup(o->ho_ca_file)) == NULL)
        goto nomem;
    if (o->ho_token_file != NULL && o->ho_token_file[0] != '\0') {
        if (token_init(&h->h_token, o->ho_token_file,
                       o->ho_token_max_age_ms > 0 ? o->ho_token_max_age_ms
                                                  : HTTPC_TOKEN_MAX_AGE_MS) == -1) {
            token_free(&h->h_token);
            goto nomem;
        }
        h->h_auth = 1;
    }
    if ((h->h_timer = evtimer_new(base, timer_event_cb, h)) == NULL)
        goto nomem;
    if ((h->h_multi = curl_multi_init()) == NULL)
        goto nomem;
    if (curl_multi_setopt(h->h_multi, CURLMOPT_SOCKETFUNCTION, multi_sock_cb) !=
            CURLM_OK ||
        curl_multi_setopt(h->h_multi, CURLMOPT_SOCKETDATA, h) != CURLM_OK ||
        curl_multi_setopt(h->h_multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb) !=
            CURLM_OK ||
        curl_multi_setopt(h->h_multi, CURLMOPT_TIMERDATA, h) != CURLM_OK ||
        /* Idle keep-alive connections kept for reuse: bounded, the oldest closed
         * first, so a burst leaves no pile of idle sockets behind. */
        curl_multi_setopt(h->h_multi, CURLMOPT_MAXCONNECTS, HTTPC_MAX_IDLE_CONNS) !=
            CURLM_OK) {
        snprintf(err, errlen, "curl_multi_setopt failed");
        httpc_free(h);
        return NULL;
    }
    return h;
nomem:
    snprintf(err, errlen, "out of memory");
    httpc_free(h);
    return NULL;
}

void
httpc_free(struct httpc *h)
{
    if (h == NULL)
        return;
    h->h_closing = 1;
    while (h->h_calls != NULL) {
        struct httpc_call *c = h->h_calls;

        call_detach(c);
        call_finish(c, "cancelled", 1, 0);
    }
    if (h->h_multi != NULL)
        curl_multi_cleanup(h->h_multi);
    while (h->h_socks != NULL) /* sockets curl did not ask us to forget */
        sock_free(h, h->h_socks);
    if (h->h_timer != NULL)
        event_free(h->h_timer);
    token_free(&h->h_token);
    free(h->h_ca_file);
    free(h);
}

size_t
httpc_pending(const struct httpc *h)
{
    return h->h_pending;
}

int
httpc_urlencode(struct buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
            (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' ||
            *p == '~') {
            if (buf_append(b, p, 1) == -1)
                return -1;
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            if (buf_append(b, esc, 3) == -1)
                return -1;
        }
    }
    return 0;
}

/* The bytes curl asks of a socket per read (its maximum is 512 KiB). */
#define HTTPC_RECV_BUFFER (256L * 1024)

/* The most a Content-Length reserves at once; a longer body still arrives,
 * growing the buffer by doubling. */
#define HTTPC_RESERVE_MAX ((curl_off_t)64 << 20)

/* Before the first piece, room for the whole body the server announced: a
 * 5 MB pod list otherwise grows by doubling, copying it about once more and
 * faulting in twice the pages. Only a hint: within the cap, and a failure to
 * reserve leaves the buffer as it was. */
static void
reserve_announced(struct httpc_call *c)
{
    curl_off_t len = -1;

    if (c->c_resp.b_size != 0 ||
        curl_easy_getinfo(c->c_easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) !=
            CURLE_OK ||
        len <= 0 || len > HTTPC_RESERVE_MAX ||
        (c->c_resp.b_cap != 0 && (size_t)len > c->c_resp.b_cap))
        return;
    (void)buf_reserve(&c->c_resp, (size_t)len);
}

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct httpc_call *c = userdata;

    reserve_announced(c);
    if (buf_append(&c->c_resp, ptr, size * nmemb) == -1)
        return 0; /* over the cap (or no memory): curl aborts the transfer */
    return size * nmemb;
}

/* libevent: delivers an error found before the transfer began. */
static void
fail_event_cb(evutil_socket_t fd, short kind, void *arg)
{
    struct httpc_call *c = arg;

    call_finish(c, c->c_fail, 0, 0);
}

static int
valid_method(const char *m)
{
    if (*m == '\0' || strlen(m) > 16)
        return 0;
    for (; *m; m++)
        if (*m < 'A' || *m > 'Z')
            return 0;
    return 1;
}

/* Builds the header list: accept, no 100-continue, content type, authorization. */
static int
call_headers(struct httpc_call *c, const struct httpc_req *req, const char *token)
{
    struct curl_slist *l;
    struct buf hdr;
    int rc = -1;

    buf_init(&hdr, 0);
    if ((l = curl_slist_append(NULL, "Accept: application/json")) == NULL)
        goto out;
    c->c_headers = l;
    /* Expect: 100-continue would cost a round trip (or a 1 s stall) per body. */
    if ((l = curl_slist_append(c->c_headers, "Expect:")) == NULL)
        goto out;
    if (req->hq_body != NULL) {
        if (buf_printf(&hdr, "Content-Type: %s",
                       req->hq_content_type ? req->hq_content_type
                                            : "application/json") == -1 ||
            (l = curl_slist_append(c->c_headers, hdr.b_data)) == NULL)
            goto out;
        buf_reset(&hdr);
    }
    if (token != NULL) {
        if (buf_printf(&hdr, "Authorization: Bearer %s", token) == -1 ||
            (l = curl_slist_append(c->c_headers, hdr.b_data)) == NULL)
            goto out;
    }
    rc = 0;
out:
    if (hdr.b_data != NULL)
        token_wipe(hdr.b_data, hdr.b_size);
    buf_free(&hdr);
    return rc;
}

/* Puts the transfer options on the call's easy handle. */
static int
call_setup(struct httpc_call *c, const struct httpc_req *req)
{
    struct httpc *h = c->c_h;
    CURL *e = c->c_easy;
    CURLcode rc = CURLE_OK;

#define SET(opt, val)                                                                    \
    do {                                                                                 \
        if (rc == CURLE_OK)                                                              \
            rc = curl_easy_setopt(e, opt, val);                                          \
    } while (0)
    SET(CURLOPT_URL, req->hq_url);
    SET(CURLOPT_PRIVATE, (void *)c);
    SET(CURLOPT_WRITEFUNCTION, write_cb);
    SET(CURLOPT_WRITEDATA, (void *)c);
    SET(CURLOPT_ERRORBUFFER, c->c_errbuf);
    SET(CURLOPT_NOSIGNAL, 1L); /* no SIGALRM for DNS timeouts in a daemon */
    SET(CURLOPT_CONNECTTIMEOUT_MS,
        req->hq_connect_timeout_ms > 0 ? req->hq_connect_timeout_ms : h->h_connect_ms);
    SET(CURLOPT_TIMEOUT_MS,
        req->hq_timeout_ms > 0 ? req->hq_timeout_ms : h->h_timeout_ms);
    SET(CURLOPT_USERAGENT, "gpu-vram-watchdog/" GVW_VERSION);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->h_body_cap);
    /* curl reads 16 KiB a recv by default: a 5 MB pod list took ~320 recvs and
     * ~3 loop turns per 1.6 MB. A small answer touches only its first page. */
    SET(CURLOPT_BUFFERSIZE, HTTPC_RECV_BUFFER);
    if (h->h_no_proxy)
        SET(CURLOPT_NOPROXY, "*");
    SET(CURLOPT_HTTPHEADER, c->c_headers);
    /* Redirects are not followed: the token must not travel elsewhere. */
#if LIBCURL_VERSION_NUM >= 0x075500
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* A CA file is the only trust: libcurl would also search its build-time
     * directory (/etc/ssl/certs) and so accept any public CA for the server
     * the token goes to. */
    if (h->h_ca_file != NULL) {
        SET(CURLOPT_CAINFO, h->h_ca_file);
        SET(CURLOPT_CAPATH, (char *)NULL);
#if LIBCURL_VERSION_NUM >= 0x075700
        /* libcurl >= 7.87 keeps the parsed CA file per multi handle for 24 h by
         * default: a rotated cluster CA would be refused until then. Read it
         * afresh for every new connection (kept-alive ones are reused). */
        SET(CURLOPT_CA_CACHE_TIMEOUT, 0L);
#endif
    }
    if (strcmp(c->c_method, "GET") == 0) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        if (strcmp(c->c_method, "POST") == 0)
            SET(CURLOPT_POST, 1L);
        else
            SET(CURLOPT_CUSTOMREQUEST, c->c_method);
        /* Without a body, curl's POST would read one from stdin: send none. */
        SET(CURLOPT_POSTFIELDSIZE_LARGE,
            (curl_off_t)(c->c_body != NULL ? req->hq_body_len : 0));
        SET(CURLOPT_POSTFIELDS, c->c_body != NULL ? c->c_body : "");
    }
#undef SET
    if (rc != CURLE_OK) {
        log_warnx("%s: %s %s: %s", __func__, c->c_method, c->c_url,
                  curl_easy_strerror(rc));
        return -1;
    }
    return 0;
}

int
httpc_request(struct httpc *h, const struct httpc_req *req, httpc_done_fn cb, void *arg)
{
    struct httpc_call *c = NULL;
    const char *method = req->hq_method ? req->hq_method : "GET";
    const char *token = NULL;
    char err[256];
    struct timeval now = {0, 0};

    if (h->h_closing) {
        log_warnx("%s: client is shutting down", __func__);
        return -1;
    }
    if (cb == NULL || req->hq_url == NULL || !valid_method(method) ||
        (strncasecmp(req->hq_url, "http://", 7) != 0 &&
         strncasecmp(req->hq_url, "https://", 8) != 0)) {
        log_warnx("%s: bad request: method %s url %s", __func__, method,
                  req->hq_url ? req->hq_url : "(null)");
        return -1;
    }
    if ((c = calloc(1, sizeof(*c))) == NULL)
        goto nomem;
    c->c_h = h;
    c->c_cb = cb;
    c->c_arg = arg;
    c->c_start_ms = clock_mono_ms();
    buf_init(&c->c_resp, h->h_body_cap);
    if ((c->c_method = strdup(method)) == NULL ||
        (c->c_url = strdup(req->hq_url)) == NULL)
        goto nomem;
    if (req->hq_body != NULL) {
        if ((c->c_body = malloc(req->hq_body_len + 1)) == NULL)
            goto nomem;
        memcpy(c->c_body, req->hq_body, req->hq_body_len);
        c->c_body[req->hq_body_len] = '\0';
    }
    if (h->h_auth && (token = token_get(&h->h_token, err, sizeof(err))) == NULL) {
        /* Delivered from the loop, so callers never see a callback re-entrantly. */
        if ((c->c_fail = strdup(err)) == NULL ||
            (c->c_fail_ev = evtimer_new(h->h_base, fail_event_cb, c)) == NULL ||
            evtimer_add(c->c_fail_ev, &now) == -1)
            goto nomem;
        goto queued;
    }
    if (call_headers(c, req, token) == -1 || (c->c_easy = curl_easy_init()) == NULL)
        goto nomem;
    if (call_setup(c, req) == -1)
        goto fail;
    if (curl_multi_add_handle(h->h_multi, c->c_easy) != CURLM_OK) {
        log_warnx("%s: %s %s: curl_multi_add_handle failed", __func__, method,
                  req->hq_url);
        goto fail;
    }
queued:
    if ((c->c_next = h->h_calls) != NULL)
        c->c_next->c_prev = c;
    h->h_calls = c;
    h->h_pending++;
    return 0;
nomem:
    log_warnx("%s: %s %s: out of memory", __func__, method, req->hq_url);
fail:
    if (c != NULL) {
        /* Never added: curl_multi_remove_handle() on it would be wrong. */
        curl_easy_cleanup(c->c_easy);
        c->c_easy = NULL;
        call_free(c);
    }
    return -1;
}
