/* fake.c -- a fake HTTP server (libevent evhttp) for the network tests */
#include "fake.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

struct fake_route {
    char *rt_method; /* owned; NULL = any */
    char *rt_path;   /* owned */
    int rt_status;
    char *rt_content_type; /* owned */
    char *rt_body;         /* owned */
    size_t rt_body_len;
    long rt_delay_ms;
    char *rt_location; /* owned; NULL = no Location header */
    char *rt_hdr_name; /* owned; NULL = no extra header (fake_route_header) */
    char *rt_hdr_value;
    int rt_used;     /* served once: the next one for the same route wins */
    char *rt_needle; /* owned; NULL = any query; else only requests whose decoded
                        "query" parameter contains it (fake_route_query) */
};

/* An answer held back for rt_delay_ms. */
struct fake_held {
    struct fake *h_fake;
    struct evhttp_request *h_req;
    struct event *h_ev;
    const struct fake_route *h_route; /* borrowed from f_routes */
    struct fake_held *h_next;
};

struct fake {
    struct event_base *f_base;
    struct evhttp *f_http;
    int f_port;
    char f_url[64];
    struct fake_route *f_routes;
    size_t f_route_count;
    struct fake_req *f_reqs;
    size_t f_req_count;
    struct fake_held *f_held;
    size_t f_held_now, f_held_max; /* answers held back at once, and the most seen */
    int f_chunked;
};

long
fake_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static const char *
method_name(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    case EVHTTP_REQ_OPTIONS:
        return "OPTIONS";
    case EVHTTP_REQ_TRACE:
        return "TRACE";
    case EVHTTP_REQ_CONNECT:
        return "CONNECT";
    case EVHTTP_REQ_PATCH:
        return "PATCH";
    }
    return "?";
}

static void
send_answer(struct fake *f, struct evhttp_request *req, const struct fake_route *rt)
{
    struct evbuffer *out = evbuffer_new();

    if (rt == NULL) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "text/plain");
        evbuffer_add_printf(out, "fake: no route\n");
        evhttp_send_reply(req, 404, "Not Found", out);
    } else {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          rt->rt_content_type);
        if (rt->rt_location != NULL)
            evhttp_add_header(evhttp_request_get_output_headers(req), "Location",
                              rt->rt_location);
        if (rt->rt_hdr_name != NULL)
            evhttp_add_header(evhttp_request_get_output_headers(req), rt->rt_hdr_name,
                              rt->rt_hdr_value);
        evbuffer_add(out, rt->rt_body, rt->rt_body_len);
        if (f->f_chunked) { /* no Content-Length: the client learns the size late */
            evhttp_send_reply_start(req, rt->rt_status, "Fake");
            evhttp_send_reply_chunk(req, out);
            evhttp_send_reply_end(req);
        } else {
            evhttp_send_reply(req, rt->rt_status, "Fake", out);
        }
    }
    evbuffer_free(out);
}

static void
held_unlink(struct fake *f, struct fake_held *h)
{
    for (struct fake_held **pp = &f->f_held; *pp != NULL; pp = &(*pp)->h_next)
        if (*pp == h) {
            *pp = h->h_next;
            break;
        }
}

static void
held_cb(evutil_socket_t fd, short what, void *arg)
{
    struct fake_held *h = arg;

    held_unlink(h->h_fake, h);
    h->h_fake->f_held_now--;
    send_answer(h->h_fake, h->h_req, h->h_route);
    event_free(h->h_ev);
    free(h);
}

/* The first unused route for the request, or the last one if all were used. */
static struct fake_route *route_find_one(struct fake *f, const char *method,
                                         const char *path, const char *query);

/* Routes with a needle the query holds come first; the others only serve
 * requests no needle route takes. */
static struct fake_route *
route_find(struct fake *f, const struct fake_req *r)
{
    struct fake_route *rt = NULL;
    char *q = NULL;

    for (size_t i = 0; i < f->f_route_count && q == NULL; i++)
        if (f->f_routes[i].rt_needle != NULL)
            q = fake_query_param(r, "query");
    if (q != NULL)
        rt = route_find_one(f, r->fr_method, r->fr_path, q);
    free(q);
    return rt != NULL ? rt : route_find_one(f, r->fr_method, r->fr_path, NULL);
}

static struct fake_route *
route_find_one(struct fake *f, const char *method, const char *path, const char *query)
{
    struct fake_route *last = NULL;

    for (size_t i = 0; i < f->f_route_count; i++) {
        struct fake_route *rt = &f->f_routes[i];
        if ((rt->rt_method != NULL && strcmp(rt->rt_method, method) != 0) ||
            strcmp(rt->rt_path, path) != 0)
            continue;
        if ((query == NULL) != (rt->rt_needle == NULL) ||
            (query != NULL && strstr(query, rt->rt_needle) == NULL))
            continue;
        if (!rt->rt_used)
            return rt;
        last = rt;
    }
    return last;
}

static int
record(struct fake *f, struct evhttp_request *req, struct fake_req **out)
{
    struct fake_req *r, *reqs;
    struct evkeyvalq *hdrs = evhttp_request_get_input_headers(req);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    const char *uri = evhttp_request_get_uri(req);
    const char *q = strchr(uri, '?');
    struct evkeyval *kv;
    size_t n = 0;

    if ((reqs = realloc(f->f_reqs, (f->f_req_count + 1) * sizeof(*reqs))) == NULL)
        return -1;
    f->f_reqs = reqs;
    r = &reqs[f->f_req_count++];
    memset(r, 0, sizeof(*r));
    r->fr_at_ms = fake_now_ms();
    r->fr_method = strdup(method_name(evhttp_request_get_command(req)));
    r->fr_path = q ? strndup(uri, (size_t)(q - uri)) : strdup(uri);
    r->fr_query = q ? strdup(q + 1) : NULL;
    r->fr_body_len = evbuffer_get_length(in);
    if ((r->fr_body = malloc(r->fr_body_len + 1)) != NULL) {
        evbuffer_copyout(in, r->fr_body, r->fr_body_len);
        r->fr_body[r->fr_body_len] = '\0';
    }
    TAILQ_FOREACH(kv, hdrs, next) n++;
    r->fr_headers = calloc(n + 1, sizeof(*r->fr_headers));
    if (r->fr_method == NULL || r->fr_path == NULL || (q && r->fr_query == NULL) ||
        r->fr_body == NULL || r->fr_headers == NULL)
        return -1;
    TAILQ_FOREACH(kv, hdrs, next)
    {
        struct fake_header *h = &r->fr_headers[r->fr_header_count];
        if ((h->fh_name = strdup(kv->key)) == NULL ||
            (h->fh_value = strdup(kv->value)) == NULL)
            return -1;
        r->fr_header_count++;
    }
    *out = r;
    return 0;
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
    struct fake *f = arg;
    struct fake_route *rt;
    struct fake_held *h;
    struct fake_req *r;
    struct timeval tv;

    if (evhttp_request_get_uri(req) == NULL) { /* libevent reporting a broken request */
        evhttp_send_error(req, 400, "fake: bad request");
        return;
    }
    if (record(f, req, &r) == -1) {
        evhttp_send_error(req, 500, "fake: out of memory");
        return;
    }
    if ((rt = route_find(f, r)) != NULL)
        rt->rt_used = 1;
    if (rt == NULL || rt->rt_delay_ms <= 0) {
        send_answer(f, req, rt);
        return;
    }
    if ((h = calloc(1, sizeof(*h))) == NULL ||
        (h->h_ev = evtimer_new(f->f_base, held_cb, h)) == NULL) {
        free(h);
        evhttp_send_error(req, 500, "fake: out of memory");
        return;
    }
    h->h_fake = f;
    h->h_req = req;
    h->h_route = rt;
    h->h_next = f->f_held;
    f->f_held = h;
    if (++f->f_held_now > f->f_held_max)
        f->f_held_max = f->f_held_now;
    tv.tv_sec = rt->rt_delay_ms / 1000;
    tv.tv_usec = (rt->rt_delay_ms % 1000) * 1000;
    evtimer_add(h->h_ev, &tv);
}

struct fake *
fake_new(struct event_base *base)
{
    struct evhttp_bound_socket *bs;
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    struct fake *f;

    if ((f = calloc(1, sizeof(*f))) == NULL)
        return NULL;
    f->f_base = base;
    if ((f->f_http = evhttp_new(base)) == NULL)
        goto fail;
    evhttp_set_allowed_methods(
        f->f_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                       EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
    evhttp_set_gencb(f->f_http, request_cb, f);
    if ((bs = evhttp_bind_socket_with_handle(f->f_http, "127.0.0.1", 0)) == NULL)
        goto fail;
    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &slen) == -1)
        goto fail;
    f->f_port = ntohs(sin.sin_port);
    snprintf(f->f_url, sizeof(f->f_url), "http://127.0.0.1:%d", f->f_port);
    return f;
fail:
    fake_free(f);
    return NULL;
}

static void
routes_free(struct fake *f)
{
    for (size_t i = 0; i < f->f_route_count; i++) {
        free(f->f_routes[i].rt_method);
        free(f->f_routes[i].rt_path);
        free(f->f_routes[i].rt_content_type);
        free(f->f_routes[i].rt_body);
        free(f->f_routes[i].rt_location);
        free(f->f_routes[i].rt_hdr_name);
        free(f->f_routes[i].rt_hdr_value);
        free(f->f_routes[i].rt_needle);
    }
    free(f->f_routes);
    f->f_routes = NULL;
    f->f_route_count = 0;
}

static void
reqs_free(struct fake *f)
{
    for (size_t i = 0; i < f->f_req_count; i++) {
        struct fake_req *r = &f->f_reqs[i];
        free(r->fr_method);
        free(r->fr_path);
        free(r->fr_query);
        free(r->fr_body);
        for (size_t j = 0; j < r->fr_header_count; j++) {
            free(r->fr_headers[j].fh_name);
            free(r->fr_headers[j].fh_value);
        }
        free(r->fr_headers);
    }
    free(f->f_reqs);
    f->f_reqs = NULL;
    f->f_req_count = 0;
}

/* Sends every held answer now: routes are about to go. */
static void
held_flush(struct fake *f)
{
    while (f->f_held != NULL)
        held_cb(-1, 0, f->f_held);
}

void
fake_clear(struct fake *f)
{
    held_flush(f);
    routes_free(f);
    reqs_free(f);
}

void
fake_free(struct fake *f)
{
    if (f == NULL)
        return;
    held_flush(f);
    if (f->f_http != NULL)
        evhttp_free(f->f_http);
    routes_free(f);
    reqs_free(f);
    free(f);
}

void
fake_set_chunked(struct fake *f, int on)
{
    f->f_chunked = on;
}

void
fake_isolate(void)
{
    static const char *const vars[] = {"http_proxy",  "HTTP_PROXY", "https_proxy",
                                       "HTTPS_PROXY", "all_proxy",  "ALL_PROXY"};

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

int
fake_port(const struct fake *f)
{
    return f->f_port;
}

const char *
fake_url(const struct fake *f)
{
    return f->f_url;
}

/* A test that cannot set up its routes must not run on: it would pass or fail
 * for the wrong reason. */
static void
die(const char *what, const char *name, const char *why)
{
    fprintf(stderr, "%s/%s: %s\n", what, name, why);
    abort();
}

int
fake_route(struct fake *f, const char *method, const char *path, int status,
           const char *content_type, const char *body, long delay_ms)
{
    struct fake_route *routes, *rt;

    if ((routes = realloc(f->f_routes, (f->f_route_count + 1) * sizeof(*routes))) == NULL)
        die("fake_route", path, "out of memory");
    f->f_routes = routes;
    rt = &routes[f->f_route_count];
    memset(rt, 0, sizeof(*rt));
    rt->rt_status = status;
    rt->rt_delay_ms = delay_ms;
    rt->rt_body_len = body ? strlen(body) : 0;
    if ((method != NULL && (rt->rt_method = strdup(method)) == NULL) ||
        (rt->rt_path = strdup(path)) == NULL ||
        (rt->rt_content_type =
             strdup(content_type ? content_type : "application/json")) == NULL ||
        (rt->rt_body = strdup(body ? body : "")) == NULL)
        die("fake_route", path, "out of memory");
    f->f_route_count++;
    return 0;
}

int
fake_route_query(struct fake *f, const char *method, const char *path, const char *needle,
                 int status, const char *body)
{
    fake_route(f, method, path, status, NULL, body, 0);
    if ((f->f_routes[f->f_route_count - 1].rt_needle = strdup(needle)) == NULL)
        die("fake_route_query", path, "out of memory");
    return 0;
}

int
fake_route_redirect(struct fake *f, const char *method, const char *path, int status,
                    const char *location)
{
    fake_route(f, method, path, status, "text/plain", "moved\n", 0);
    if ((f->f_routes[f->f_route_count - 1].rt_location = strdup(location)) == NULL)
        die("fake_route_redirect", path, "out of memory");
    return 0;
}

int
fake_route_header(struct fake *f, const char *name, const char *value)
{
    struct fake_route *rt;

    if (f->f_route_count == 0)
        die("fake_route_header", name, "no route to add it to");
    rt = &f->f_routes[f->f_route_count - 1];
    free(rt->rt_hdr_name);
    free(rt->rt_hdr_value);
    if ((rt->rt_hdr_name = strdup(name)) == NULL ||
        (rt->rt_hdr_value = strdup(value)) == NULL)
        die("fake_route_header", name, "out of memory");
    return 0;
}

int
fake_route_file(struct fake *f, const char *method, const char *path, int status,
                const char *name, long delay_ms)
{
    char *body;
    int rc;

    if ((body = fake_read_data(name, NULL)) == NULL)
        die("fake_route_file: cannot read $GVW_TEST_DATA", name, "is GVW_TEST_DATA set?");
    rc = fake_route(f, method, path, status, NULL, body, delay_ms);
    free(body);
    return rc;
}

size_t
fake_count(const struct fake *f)
{
    return f->f_req_count;
}

const struct fake_req *
fake_req(const struct fake *f, size_t i)
{
    return i < f->f_req_count ? &f->f_reqs[i] : NULL;
}

const struct fake_req *
fake_last(const struct fake *f)
{
    return f->f_req_count > 0 ? &f->f_reqs[f->f_req_count - 1] : NULL;
}

const char *
fake_header(const struct fake_req *r, const char *name)
{
    for (size_t i = 0; i < r->fr_header_count; i++)
        if (strcasecmp(r->fr_headers[i].fh_name, name) == 0)
            return r->fr_headers[i].fh_value;
    return NULL;
}

char *
fake_query_param(const struct fake_req *r, const char *key)
{
    struct evkeyvalq q;
    const char *v;
    char *out = NULL;

    if (r->fr_query == NULL)
        return NULL;
    TAILQ_INIT(&q);
    if (evhttp_parse_query_str(r->fr_query, &q) == 0 && (v = evhttp_find_header(&q, key)))
        out = strdup(v);
    evhttp_clear_headers(&q);
    return out;
}

int
fake_closed_port(void)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    int fd, port = -1;

    if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
        return -1;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sin, &slen) == 0)
        port = ntohs(sin.sin_port);
    close(fd); /* never listened: connecting is refused */
    return port;
}

static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
}

int
fake_run_until(struct event_base *base, const int *flag, long timeout_ms)
{
    long end = fake_now_ms() + timeout_ms, left;
    struct event *wake = evtimer_new(base, wake_cb, NULL);
    struct timeval tv;

    if (wake == NULL)
        return -1;
    while (!*flag && (left = end - fake_now_ms()) > 0) {
        /* Re-armed each turn so EVLOOP_ONCE never sleeps past the deadline,
         * even when libevent's clock fires the timer a little early. */
        tv.tv_sec = left / 1000;
        tv.tv_usec = (left % 1000) * 1000;
        evtimer_add(wake, &tv);
        event_base_loop(base, EVLOOP_ONCE);
    }
    event_free(wake);
    return *flag ? 0 : -1;
}

void
fake_run_for(struct event_base *base, long ms)
{
    int never = 0;

    fake_run_until(base, &never, ms);
}

char *
fake_read_data(const char *name, size_t *len)
{
    const char *dir = getenv("GVW_TEST_DATA");
    char path[4096];
    char *data = NULL;
    long size;
    FILE *fp;

    if (dir == NULL ||
        snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return NULL;
    if ((fp = fopen(path, "rb")) == NULL)
        return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 &&
        fseek(fp, 0, SEEK_SET) == 0 && (data = malloc((size_t)size + 1)) != NULL) {
        if (fread(data, 1, (size_t)size, fp) != (size_t)size) {
            free(data);
            data = NULL;
        } else {
            data[size] = '\0';
            if (len != NULL)
                *len = (size_t)size;
        }
    }
    fclose(fp);
    return data;
}

size_t
fake_held_max(const struct fake *f)
{
    return f->f_held_max;
}
