/* front.h -- the exporter's front door: a small HTTP/1.1 server for GET and HEAD only, bounded */
#ifndef GVW_FRONT_H
#define GVW_FRONT_H

#include <stddef.h>

struct event_base;
struct evbuffer;
struct front;

#define FRONT_HEADER_MAX 8192   /* request line and headers together (SPEC) */
#define FRONT_HEADER_SECONDS 10 /* from a request's first byte to its blank line */
#define FRONT_TOTAL_SECONDS 30  /* from its first byte to the answer taken */
#define FRONT_IDLE_SECONDS 60   /* a connection with no request under way */

/* What the handler answers to one GET (or HEAD) of path. */
struct front_reply {
    int fr_status;            /* 200, 404, 503 ... */
    const char *fr_type;      /* Content-Type, static */
    struct evbuffer *fr_body; /* fill it; for HEAD only its length is sent */
};

/* path: the request target up to '?' (NUL-terminated, borrowed). */
typedef void (*front_handler_fn)(const char *path, struct front_reply *r, void *arg);

/*
 * Listens on addr ("host:port", "[v6]:port"; port 0 = any, see front_port())
 * with at most max_conns connections: beyond it the oldest connection whose
 * request is unfinished (or that waits for one) is closed. Anything but GET
 * and HEAD is answered 405 from its headers, its body never read into
 * memory; headers over FRONT_HEADER_MAX get 431; requests get the
 * deadlines above. Returns NULL with a reason in err.
 */
struct front *front_new(struct event_base *base, const char *addr, int max_conns,
                        front_handler_fn handler, void *arg, char *err, size_t errlen);

/* The port it listens on. */
int front_port(const struct front *f);

/* Closes the listener and every connection. NULL is a no-op. */
void front_free(struct front *f);

#endif
