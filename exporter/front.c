/* front.c -- the exporter's front door: a small HTTP/1.1 server for GET and HEAD only, bounded
 *
 * evhttp reads a request's whole body before anyone sees it (a 200 MiB POST
 * grew the exporter by 258 MB), its timeout is an idle one (a header line
 * every 5 s held a connection for ever) and it bounds no connection count.
 * The exporter needs none of what it adds: two paths, no bodies. So each
 * connection here holds at most FRONT_HEADER_MAX bytes (the bufferevent's
 * read high-water mark), answers from the headers alone, and runs on one
 * timer that enforces the deadlines from the request's first byte. */
#include "front.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "log.h"

#define LINGER_SECONDS 1      /* after a closing answer, how long unread input is drained */
#define LINGER_BYTES (1 << 20) /* and at most this much of it (discarded, never kept) */
#define FD_SPARE 32           /* descriptors kept for the API client, NVML, logs */
#define ACCEPT_PAUSE_MS 100   /* out of descriptors: accept again after this */

enum conn_state {
    C_IDLE,    /* no byte of a request yet */
    C_READING, /* a request's headers are arriving */
    C_WRITING, /* its answer is going out; nothing more is read */
    C_LINGER,  /* answered and closing: input is drained and dropped */
};

struct conn {
    struct front *c_f;
    struct bufferevent *c_bev; /* owned */
    struct event *c_timer;     /* owned: the one deadline in force */
    struct conn *c_prev, *c_next;
    enum conn_state c_state;
    double c_since;            /* monotonic: when the current state's clock started */
    int c_close;               /* close once the answer is out */
    size_t c_drained;          /* C_LINGER: bytes dropped */
};

struct front {
    struct event_base *f_base;       /* borrowed */
    struct evconnlistener *f_listener; /* owned */
    struct event *f_resume;          /* owned: re-enables accept after EMFILE */
    struct conn *f_head, *f_tail;    /* oldest first */
    int f_nconns, f_max;
    int f_port;
    int f_emfile_logged;
    front_handler_fn f_handler;
    void *f_arg;
};

static void
conn_free(struct conn *c)
{
    struct front *f = c->c_f;

    if (c->c_prev != NULL)
        c->c_prev->c_next = c->c_next;
    else
        f->f_head = c->c_next;
    if (c->c_next != NULL)
        c->c_next->c_prev = c->c_prev;
    else
        f->f_tail = c->c_prev;
    f->f_nconns--;
    if (c->c_timer != NULL)
        event_free(c->c_timer);
    if (c->c_bev != NULL)
        bufferevent_free(c->c_bev); /* closes the socket */
    free(c);
}

/* Arms the connection's single timer seconds after c_since. */
static void
arm(struct conn *c, int seconds)
{
    double left = c->c_since + seconds - clock_mono_s();
    struct timeval tv;

    if (left < 0)
        left = 0;
    tv.tv_sec = (time_t)left;
    tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) * 1e6);
    evtimer_add(c->c_timer, &tv);
}

static void
go_idle(struct conn *c)
{
    c->c_state = C_IDLE;
    c->c_since = clock_mono_s();
    arm(c, FRONT_IDLE_SECONDS);
}

static const char *
reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    default:
        return "Internal Server Error";
    }
}

/* Queues the answer; body (may be NULL) is moved into the output, or only
 * its length sent for HEAD. */
static void
answer(struct conn *c, int status, const char *type, struct evbuffer *body, int head)
{
    struct evbuffer *out = bufferevent_get_output(c->c_bev);
    size_t len = body != NULL ? evbuffer_get_length(body) : 0;

    bufferevent_disable(c->c_bev, EV_READ); /* one request at a time */
    c->c_state = C_WRITING;
    if (evbuffer_add_printf(out,
                            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                            "%s%s\r\n",
                            status, reason(status), type, len,
                            status == 405 ? "Allow: GET, HEAD\r\n" : "",
                            c->c_close ? "Connection: close\r\n" : "") == -1 ||
        (!head && body != NULL && evbuffer_add_buffer(out, body) == -1)) {
        conn_free(c);
        return;
    }
    arm(c, FRONT_TOTAL_SECONDS); /* c_since is still the request's first byte */
}

/* A refusal with a one-line body; the connection closes after it. */
static void
refuse(struct conn *c, int status, const char *text)
{
    struct evbuffer *body = evbuffer_new();

    c->c_close = 1;
    if (body == NULL || evbuffer_add_printf(body, "%s\n", text) == -1) {
        if (body != NULL)
            evbuffer_free(body);
        conn_free(c);
        return;
    }
    answer(c, status, "text/plain; charset=utf-8", body, 0);
    evbuffer_free(body);
}

/* The value of a header line "Name: value" when its name is name, else NULL. */
static const char *
header_value(const char *line, const char *name)
{
    size_t n = strlen(name);

    if (strncasecmp(line, name, n) != 0 || line[n] != ':')
        return NULL;
    line += n + 1;
    while (*line == ' ' || *line == '\t')
        line++;
    return line;
}

/* Whether a Connection value lists token (comma list, any case). */
static int
lists_token(const char *v, const char *token)
{
    size_t n = strlen(token);

    while (*v != '\0') {
        while (*v == ' ' || *v == '\t' || *v == ',')
            v++;
        if (strncasecmp(v, token, n) == 0 &&
            (v[n] == '\0' || v[n] == ',' || v[n] == ' ' || v[n] == '\t'))
            return 1;
        v += strcspn(v, ",");
    }
    return 0;
}

/* What a head says. */
struct head {
    const char *h_method;
    char *h_target;
    int h_close; /* the connection ends after the answer */
};

/* Reads one complete head (request line and headers, NUL-terminated, lines
 * ending "\n" with an optional "\r" before it). NULL, or what is wrong. */
static const char *
parse_head(char *text, struct head *h)
{
    char *line, *save = NULL, *version;
    int keep = -1, body = 0;

    if ((line = strtok_r(text, "\n", &save)) == NULL)
        return "bad request line";
    line[strcspn(line, "\r")] = '\0';
    h->h_method = line;
    if ((h->h_target = strchr(line, ' ')) == NULL)
        return "bad request line";
    *h->h_target++ = '\0';
    if ((version = strchr(h->h_target, ' ')) == NULL)
        return "bad request line";
    *version++ = '\0';
    if (strncmp(version, "HTTP/1.", 7) != 0 || version[7] < '0' || version[7] > '9' ||
        version[8] != '\0' || h->h_target[0] == '\0')
        return "bad request line";
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        const char *v;
        line[strcspn(line, "\r")] = '\0';
        if (line[0] == '\0')
            break;
        if (strchr(line, ':') == NULL)
            return "bad header line";
        if ((v = header_value(line, "Content-Length")) != NULL)
            body |= v[0] == '\0' || strspn(v, "0") != strlen(v);
        else if (header_value(line, "Transfer-Encoding") != NULL)
            body = 1;
        else if ((v = header_value(line, "Connection")) != NULL)
            keep = lists_token(v, "close") ? 0 : lists_token(v, "keep-alive") ? 1 : keep;
    }
    /* A body is never read: the connection closes after the answer instead. */
    h->h_close = body || keep == 0 || (version[7] == '0' && keep != 1);
    h->h_target[strcspn(h->h_target, "?")] = '\0';
    return NULL;
}

/* One complete head: judged from the headers alone, and answered. */
static void
handle_head(struct conn *c, char *text)
{
    struct head h;
    struct front_reply r;
    const char *bad;
    int is_head;

    memset(&h, 0, sizeof(h));
    if ((bad = parse_head(text, &h)) != NULL) {
        refuse(c, 400, bad);
        return;
    }
    c->c_close = h.h_close;
    is_head = strcmp(h.h_method, "HEAD") == 0;
    if (!is_head && strcmp(h.h_method, "GET") != 0) {
        refuse(c, 405, "method not allowed: GET or HEAD only");
        return;
    }
    memset(&r, 0, sizeof(r));
    r.fr_status = 500;
    r.fr_type = "text/plain; charset=utf-8";
    if ((r.fr_body = evbuffer_new()) == NULL) {
        conn_free(c);
        return;
    }
    c->c_f->f_handler(h.h_target, &r, c->c_f->f_arg);
    answer(c, r.fr_status, r.fr_type, r.fr_body, is_head);
    evbuffer_free(r.fr_body); /* references taken by the handler end with it or the output */
}

/* A request may be complete in the input: answer it, refuse it, or wait. */
static void
try_request(struct conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->c_bev);
    struct evbuffer_ptr crlf, lf;
    char head[FRONT_HEADER_MAX + 1];
    size_t end;
    unsigned char first;

    /* Blank lines before a request line are allowed (RFC 9112 2.2). */
    while (evbuffer_copyout(in, &first, 1) == 1 && (first == '\r' || first == '\n'))
        evbuffer_drain(in, 1);
    if (evbuffer_get_length(in) == 0)
        return;
    if (c->c_state == C_IDLE) {
        c->c_state = C_READING;
        c->c_since = clock_mono_s();
        arm(c, FRONT_HEADER_SECONDS);
    }
    crlf = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    lf = evbuffer_search(in, "\n\n", 2, NULL);
    if (crlf.pos == -1 && lf.pos == -1) {
        if (evbuffer_get_length(in) >= FRONT_HEADER_MAX)
            refuse(c, 431, "request headers over 8 KiB");
        return; /* wait for more, inside the deadline */
    }
    if (crlf.pos != -1 && (lf.pos == -1 || crlf.pos + 2 <= lf.pos))
        end = (size_t)crlf.pos + 4;
    else
        end = (size_t)lf.pos + 2;
    if (end > FRONT_HEADER_MAX) {
        refuse(c, 431, "request headers over 8 KiB");
        return;
    }
    evbuffer_remove(in, head, end);
    head[end] = '\0';
    if (memchr(head, '\0', end) != NULL) {
        refuse(c, 400, "NUL byte in the request");
        return;
    }
    handle_head(c, head);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    if (c->c_state == C_LINGER) {
        c->c_drained += evbuffer_get_length(in);
        evbuffer_drain(in, evbuffer_get_length(in));
        if (c->c_drained > LINGER_BYTES)
            conn_free(c);
        return;
    }
    if (c->c_state != C_WRITING)
        try_request(c);
}

/* The answer is out: close (lingering a moment, so a client still sending
 * its body reads the answer before a reset), or wait for the next request. */
static void
write_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;

    if (c->c_state != C_WRITING)
        return;
    if (c->c_close) {
        c->c_state = C_LINGER;
        c->c_since = clock_mono_s();
        shutdown(bufferevent_getfd(bev), SHUT_WR);
        arm(c, LINGER_SECONDS);
        bufferevent_enable(bev, EV_READ);
        return;
    }
    go_idle(c);
    bufferevent_enable(bev, EV_READ);
    try_request(c); /* a pipelined request may wait in the input already */
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct conn *c = arg;

    /* A client that half-closed after its request still gets the answer. */
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) && c->c_state == C_WRITING) {
        c->c_close = 1;
        return;
    }
    conn_free(c);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
    conn_free(arg); /* a deadline passed, whatever the state */
}

/* Full: the oldest connection that is not sending an answer goes. A
 * lingering one first, then the one whose request (or wait) began first.
 * 0, or -1 when every connection is sending an answer. */
static int
drop_oldest(struct front *f)
{
    struct conn *best = NULL;

    for (struct conn *c = f->f_head; c != NULL; c = c->c_next) {
        if (c->c_state == C_WRITING)
            continue;
        if (best == NULL || (c->c_state == C_LINGER && best->c_state != C_LINGER) ||
            ((c->c_state == C_LINGER) == (best->c_state == C_LINGER) &&
             c->c_since < best->c_since))
            best = c;
    }
    if (best == NULL)
        return -1;
    conn_free(best);
    return 0;
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
          void *arg)
{
    struct front *f = arg;
    struct conn *c;

    if (f->f_nconns >= f->f_max && drop_oldest(f) == -1) {
        evutil_closesocket(fd);
        return;
    }
    if ((c = calloc(1, sizeof(*c))) == NULL) {
        evutil_closesocket(fd);
        return;
    }
    c->c_f = f;
    c->c_prev = f->f_tail;
    if (f->f_tail != NULL)
        f->f_tail->c_next = c;
    else
        f->f_head = c;
    f->f_tail = c;
    f->f_nconns++;
    if ((c->c_bev = bufferevent_socket_new(f->f_base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
        evutil_closesocket(fd);
        conn_free(c);
        return;
    }
    if ((c->c_timer = evtimer_new(f->f_base, timer_cb, c)) == NULL) {
        conn_free(c);
        return;
    }
    /* The input never holds more than one head's worth of bytes. */
    bufferevent_setwatermark(c->c_bev, EV_READ, 0, FRONT_HEADER_MAX);
    bufferevent_setcb(c->c_bev, read_cb, write_cb, event_cb, c);
    bufferevent_enable(c->c_bev, EV_READ);
    go_idle(c);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
    struct front *f = arg;

    evconnlistener_enable(f->f_listener);
}

/* accept() failed: out of descriptors would spin the loop; pause instead. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
    struct front *f = arg;
    int e = EVUTIL_SOCKET_ERROR();
    struct timeval tv = {0, ACCEPT_PAUSE_MS * 1000};

    if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM)
        return;
    if (!f->f_emfile_logged)
        log_event(LOG_LEVEL_WARN, "exporter: cannot accept a connection; pausing accepts",
                  "error", strerror(e), (char *)NULL);
    f->f_emfile_logged = 1;
    evconnlistener_disable(l);
    evtimer_add(f->f_resume, &tv);
}

/* Splits "host:port" / "[v6]:port" (checked when the setting was loaded). */
static int
split_addr(const char *addr, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon = strrchr(addr, ':');
    const char *start = addr;
    size_t len;

    if (colon == NULL || strlen(colon + 1) >= portlen)
        return -1;
    len = (size_t)(colon - addr);
    if (addr[0] == '[' && len >= 2 && addr[len - 1] == ']')
        start++, len -= 2;
    if (len == 0 || len >= hostlen)
        return -1;
    memcpy(host, start, len);
    host[len] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

struct front *
front_new(struct event_base *base, const char *addr, int max_conns, front_handler_fn handler,
          void *arg, char *err, size_t errlen)
{
    struct front *f = calloc(1, sizeof(*f));
    struct addrinfo hints, *ai = NULL;
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    struct rlimit rl;
    char host[256], port[16];
    int rc;

    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->f_base = base;
    f->f_handler = handler;
    f->f_arg = arg;
    f->f_max = max_conns;
    /* More connections than descriptors would only fail accept() later. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)f->f_max + FD_SPARE > rl.rlim_cur)
        f->f_max = rl.rlim_cur > 2 * FD_SPARE ? (int)(rl.rlim_cur - FD_SPARE) : FD_SPARE;
    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) == -1) {
        snprintf(err, errlen, "cannot listen on %s: not host:port", addr);
        goto fail;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", addr, gai_strerror(rc));
        goto fail;
    }
    f->f_listener = evconnlistener_new_bind(
        base, accept_cb, f, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
        512, ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (f->f_listener == NULL) {
        snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(errno));
        goto fail;
    }
    if ((f->f_resume = evtimer_new(base, resume_cb, f)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    evconnlistener_set_error_cb(f->f_listener, accept_error_cb);
    if (getsockname(evconnlistener_get_fd(f->f_listener), (struct sockaddr *)&ss, &sslen) == 0)
        f->f_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                   : ((struct sockaddr_in *)&ss)->sin_port);
    return f;
fail:
    front_free(f);
    return NULL;
}

int
front_port(const struct front *f)
{
    return f->f_port;
}

void
front_free(struct front *f)
{
    if (f == NULL)
        return;
    while (f->f_head != NULL)
        conn_free(f->f_head);
    if (f->f_listener != NULL)
        evconnlistener_free(f->f_listener);
    if (f->f_resume != NULL)
        event_free(f->f_resume);
    free(f);
}
