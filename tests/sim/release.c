/* release.c -- tenants' release endpoints: one listener per annotated pod, on its own
 * loopback IP
 *
 * The watchdog sends its release POST to the pod's status.podIP, never to a host
 * it is told. Linux routes all of 127.0.0.0/8 to lo, so each annotated pod gets an
 * address of its own there and the request stays on this machine. The address is
 * the first free one from 127.0.0.21 up: two simulators running at once (ctest -j)
 * each find their own. */
#include "release.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#define FIRST_HOST 21  /* 127.0.0.21 */
#define MAX_TRIES 4000 /* addresses tried per pod before giving up */
#define MAX_PATH 256   /* what the watchdog accepts (README) */
#define MAX_BODY 4096

struct endpoint {
    struct releases *ep_set; /* borrowed: the owner */
    struct sim_pod *ep_pod;  /* borrowed from the world */
    struct evhttp *ep_http;  /* owned */
    unsigned short ep_port;
    char ep_path[MAX_PATH + 1];
};

struct releases {
    struct world *rs_world;   /* borrowed */
    struct nodefs *rs_nodefs; /* borrowed; may be NULL */
    struct endpoint *rs_eps;  /* owned, one per served pod */
    size_t rs_n;
};

/* "PORT/PATH": a port 1-65535 without a leading zero, then a path of visible ASCII.
 * Anything else (a scheme, a host, whitespace) is not served: the watchdog ignores it. */
static int
parse_target(const char *v, unsigned short *port, char *path, size_t pathlen)
{
    unsigned long p = 0;
    size_t i = 0, n;

    while (v[i] >= '0' && v[i] <= '9' && i < 5)
        p = p * 10 + (unsigned long)(v[i++] - '0');
    if (i == 0 || v[0] == '0' || p > 65535 || v[i] != '/')
        return -1;
    n = strlen(v + i);
    if (n > MAX_PATH || n >= pathlen)
        return -1;
    for (size_t k = i; v[k] != '\0'; k++)
        if (v[k] <= ' ' || v[k] > '~' || v[k] == '?' || v[k] == '#')
            return -1;
    *port = (unsigned short)p;
    memcpy(path, v + i, n + 1);
    return 0;
}

/* A listening socket on the first free 127.x.y.z:port at or after *next; -1 if none. */
static int
listen_loopback(unsigned short port, unsigned *next, char *ip, size_t iplen)
{
    struct sockaddr_in sa;
    unsigned tries;
    int fd, one = 1;

    for (tries = 0; tries < MAX_TRIES; tries++) {
        unsigned n = (*next)++;
        unsigned b = (n >> 8) & 0xff, c = n & 0xff;

        if (c == 0 || c == 255 || n >= (1u << 16))
            continue; /* no .0 or .255 host: they work on lo but read like subnets */
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        sa.sin_port = htons(port);
        sa.sin_addr.s_addr = htonl((127u << 24) | (b << 8) | c);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
            bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 16) == 0 &&
            evutil_make_socket_nonblocking(fd) == 0) {
            snprintf(ip, iplen, "127.0.%u.%u", b, c);
            return fd;
        }
        close(fd);
    }
    return -1;
}

static void
reply(struct evhttp_request *req, int code, const char *reason, const char *text)
{
    struct evbuffer *b = evbuffer_new();

    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; charset=utf-8");
    if (b != NULL)
        evbuffer_add_printf(b, "%s\n", text);
    evhttp_send_reply(req, code, reason, b);
    evbuffer_free(b);
}

static void
on_request(struct evhttp_request *req, void *arg)
{
    struct endpoint *ep = arg;
    struct world *w = ep->ep_set->rs_world;
    struct sim_pod *sp = ep->ep_pod;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    char err[600];

    world_advance(w);
    if (path == NULL || strcmp(path, ep->ep_path) != 0) {
        reply(req, 404, "Not Found", "404 page not found");
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
        reply(req, 405, "Method Not Allowed", "method not allowed");
        return;
    }
    if (sp->sp_state != POD_ALIVE) {
        /* Between incarnations nothing runs behind the address. */
        reply(req, 503, "Service Unavailable", "no pod behind this address");
        return;
    }
    world_release_pod(w, sp);
    fprintf(stderr, "gvw-sim: POST %s:%u%s: %s/%s releases its memory in %gs\n",
            sp->sp_ip, (unsigned)ep->ep_port, ep->ep_path, sp->sp_spec->po_namespace,
            sp->sp_name, sp->sp_spec->po_release_after * w->w_scale);
    /* An immediate release is on the node's files before the caller reads the answer. */
    if (ep->ep_set->rs_nodefs != NULL && sp->sp_spec->po_release_after == 0 &&
        nodefs_sync(ep->ep_set->rs_nodefs, err, sizeof(err)) != 0)
        fprintf(stderr, "gvw-sim: node files not updated: %s\n", err);
    reply(req, 200, "OK", "OK");
}

static int
serve_pod(struct releases *rs, struct event_base *base, struct sim_pod *sp,
          unsigned *next, char *err, size_t errlen)
{
    const char *v = json_string_value(
        json_object_get(sp->sp_spec->po_annotations, SIM_RELEASE_ANNOTATION));
    struct endpoint *ep = &rs->rs_eps[rs->rs_n];
    unsigned short port;
    int fd;

    if (v == NULL || parse_target(v, &port, ep->ep_path, sizeof(ep->ep_path)) != 0)
        return 0;
    ep->ep_set = rs;
    ep->ep_pod = sp;
    ep->ep_port = port;
    ep->ep_http = evhttp_new(base);
    if (ep->ep_http == NULL) {
        snprintf(err, errlen, "cannot set up libevent");
        return -1;
    }
    rs->rs_n++; /* from here releases_free() frees it */
    evhttp_set_max_body_size(ep->ep_http, MAX_BODY);
    evhttp_set_allowed_methods(ep->ep_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
                                                EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                                EVHTTP_REQ_PATCH | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(ep->ep_http, on_request, ep);
    fd = listen_loopback(port, next, sp->sp_ip, sizeof(sp->sp_ip));
    if (fd < 0) {
        snprintf(err, errlen, "%s/%s: no loopback address is free on port %u for %s",
                 sp->sp_spec->po_namespace, sp->sp_name, (unsigned)port, v);
        return -1;
    }
    if (evhttp_accept_socket_with_handle(ep->ep_http, fd) == NULL) {
        close(fd);
        snprintf(err, errlen, "%s/%s: cannot serve %s:%u", sp->sp_spec->po_namespace,
                 sp->sp_name, sp->sp_ip, (unsigned)port);
        return -1;
    }
    snprintf(sp->sp_release_url, sizeof(sp->sp_release_url), "http://%s:%u%s", sp->sp_ip,
             (unsigned)port, ep->ep_path);
    return 0;
}

struct releases *
releases_new(struct event_base *base, struct world *w, struct nodefs *nf, char *err,
             size_t errlen)
{
    struct releases *rs = calloc(1, sizeof(*rs));
    unsigned next = FIRST_HOST;
    size_t i;

    if (rs == NULL || (w->w_npods > 0 &&
                       (rs->rs_eps = calloc(w->w_npods, sizeof(*rs->rs_eps))) == NULL)) {
        snprintf(err, errlen, "out of memory");
        releases_free(rs);
        return NULL;
    }
    rs->rs_world = w;
    rs->rs_nodefs = nf;
    for (i = 0; i < w->w_npods; i++) {
        struct sim_pod *sp = &w->w_pods[i];
        /* Only a pod on a simulated node runs here; one elsewhere is not ours, and a
         * host process is no pod. */
        if (sp->sp_spec->po_node_idx < 0 || sp->sp_spec->po_host)
            continue;
        if (serve_pod(rs, base, sp, &next, err, errlen) != 0) {
            releases_free(rs);
            return NULL;
        }
    }
    return rs;
}

void
releases_free(struct releases *rs)
{
    size_t i;

    if (rs == NULL)
        return;
    for (i = 0; i < rs->rs_n; i++)
        evhttp_free(rs->rs_eps[i].ep_http);
    free(rs->rs_eps);
    free(rs);
}
