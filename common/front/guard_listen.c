/* guard_listen.c -- the front door's listening socket and its descriptor budget */
#include "conn_guard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "addr.h"
#include "log.h"

#define NOFILE_RESERVE                                                                   \
    128                     /* descriptors kept for the store, the clients, closing ones \
                             */
#define ACCEPT_PAUSE_MS 100 /* out of descriptors: accept again after this */

/* A listener evhttp owns, and the timer that resumes it after a pause. The
 * listener's callback argument is evhttp's, so its error callback finds its
 * entry here by the listener. */
struct listening {
    struct evhttp *l_http;
    struct evconnlistener *l_lev;
    struct event *l_resume; /* owned */
    struct listening *l_next;
};

static struct listening *listening;

size_t
guard_fit_nofile(size_t want, const char *setting)
{
    struct rlimit rl;
    size_t fit;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
        return want;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)want + NOFILE_RESERVE)
        return want;
    fit = rl.rlim_cur > 2 * NOFILE_RESERVE ? (size_t)rl.rlim_cur - NOFILE_RESERVE
                                           : (size_t)rl.rlim_cur / 2;
    if (fit == 0)
        fit = 1;
    log_warnx("%s: %zu does not fit the open-file limit (%llu); using %zu (raise "
              "`ulimit -n` / the container's nofile limit)",
              setting, want, (unsigned long long)rl.rlim_cur, fit);
    return fit;
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
    struct listening *l = arg;

    (void)fd;
    (void)what;
    evconnlistener_enable(l->l_lev);
}

/* accept() failed for a reason retrying at once cannot fix (EMFILE, ENFILE,
 * ENOBUFS): pause the listener briefly instead of spinning on it. */
static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
    struct timeval pause = {0, ACCEPT_PAUSE_MS * 1000};
    int err = EVUTIL_SOCKET_ERROR();
    struct listening *l;

    (void)arg;
    for (l = listening; l != NULL && l->l_lev != lev; l = l->l_next)
        ;
    if (l == NULL)
        return;
    evconnlistener_disable(lev);
    evtimer_add(l->l_resume, &pause);
    log_warnx("%s: accept failed (%s); pausing the listener for %d ms", __func__,
              evutil_socket_error_to_string(err), ACCEPT_PAUSE_MS);
}

/* "host:port" / "[v6]:port" into a host and a port number 0-65535 (the
 * splitting is common/util's addr_split; the port must be all digits). */
static int
split_addr(const char *addr, char *host, size_t hostlen, int *port)
{
    const char *port_text;
    char *end;
    long p;

    if (addr_split(addr, host, hostlen, &port_text) == -1)
        return -1;
    errno = 0;
    p = strtol(port_text, &end, 10);
    if (end == port_text || *end != '\0' || errno != 0 || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

int
guard_listen(struct evhttp *http, const char *addr, char *err, size_t errlen)
{
    struct evhttp_bound_socket *sock;
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    struct listening *l;
    char host[256];
    int port;

    if (split_addr(addr, host, sizeof(host), &port) == -1) {
        snprintf(err, errlen, "'%s' is not host:port", addr);
        return -1;
    }
    if ((l = calloc(1, sizeof(*l))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    errno = 0;
    if ((sock = evhttp_bind_socket_with_handle(http, host, (ev_uint16_t)port)) == NULL) {
        /* A host that does not resolve fails in getaddrinfo, with errno 0. */
        snprintf(err, errlen, "cannot listen on %s: %s", addr,
                 errno != 0 ? strerror(errno)
                            : "the host does not resolve to an address of this machine");
        free(l);
        return -1;
    }
    l->l_http = http;
    l->l_lev = evhttp_bound_socket_get_listener(sock);
    if ((l->l_resume = evtimer_new(evconnlistener_get_base(l->l_lev), resume_cb, l)) ==
        NULL) {
        snprintf(err, errlen, "out of memory");
        free(l);
        return -1;
    }
    l->l_next = listening;
    listening = l;
    evconnlistener_set_error_cb(l->l_lev, accept_error_cb);
    if (getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&ss, &sslen) ==
        0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    return port;
}

void
guard_unlisten(struct evhttp *http)
{
    struct listening **lp = &listening, *l;

    while ((l = *lp) != NULL) {
        if (l->l_http != http) {
            lp = &l->l_next;
            continue;
        }
        *lp = l->l_next;
        event_free(l->l_resume);
        free(l);
    }
}
