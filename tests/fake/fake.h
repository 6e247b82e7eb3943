/* fake.h -- a fake HTTP server on the test's libevent loop: canned answers, recorded
 * requests */
#ifndef GVW_FAKE_H
#define GVW_FAKE_H

#include <stddef.h>

struct event_base;
struct fake;

struct fake_header {
    char *fh_name;  /* owned, as sent */
    char *fh_value; /* owned */
};

/* One request as it arrived. */
struct fake_req {
    char *fr_method; /* owned: "GET", "POST", "PATCH", "DELETE", ... */
    char *fr_path;   /* owned: the path as sent, still percent-encoded */
    char *fr_query;  /* owned: the raw query after '?', NULL when none */
    char *fr_body;   /* owned, NUL-terminated ("" when none) */
    size_t fr_body_len;
    struct fake_header *fr_headers; /* owned */
    size_t fr_header_count;
    long fr_at_ms; /* arrival, fake_now_ms() */
};

/* Listens on 127.0.0.1, a port the kernel picks, on base (borrowed). NULL on
 * failure. Free with fake_free() before the base. */
struct fake *fake_new(struct event_base *base);

/* Stops listening; answers still held back are sent (or dropped) first. */
void fake_free(struct fake *f);

int fake_port(const struct fake *f);
/* "http://127.0.0.1:PORT", borrowed. */
const char *fake_url(const struct fake *f);

/*
 * Adds a canned answer for method (NULL = any) and path (exact, as sent,
 * without the query). Several answers for one route are served in order, the
 * last one repeating. The answer waits delay_ms before it is sent (the loop
 * keeps running meanwhile). content_type NULL = "application/json". Returns 0;
 * a failure (no memory, an unreadable data file) aborts the test program with
 * a message, so no test runs on against a route that is not there.
 */
int fake_route(struct fake *f, const char *method, const char *path, int status,
               const char *content_type, const char *body, long delay_ms);

/* The same, only for requests whose decoded "query" parameter contains needle:
 * those are served by such routes first (in order, the last repeating), and
 * never consume the answers of routes without a needle. */
int fake_route_query(struct fake *f, const char *method, const char *path,
                     const char *needle, int status, const char *body);

/* A canned redirect: status (a 3xx) with a Location header. */
int fake_route_redirect(struct fake *f, const char *method, const char *path, int status,
                        const char *location);

/* Adds one more header (a Retry-After, say) to the answer of the route added
 * last; a second call replaces it. */
int fake_route_header(struct fake *f, const char *name, const char *value);

/* The same with the body read from $GVW_TEST_DATA/name. */
int fake_route_file(struct fake *f, const char *method, const char *path, int status,
                    const char *name, long delay_ms);

/* Sends answers chunked, without Content-Length (immediate answers only). */
void fake_set_chunked(struct fake *f, int on);

/* Forgets every route and every recorded request. */
void fake_clear(struct fake *f);

size_t fake_count(const struct fake *f);
/* The most requests this fake held at once, waiting out a route's delay: how
 * many a client had in flight together, observed without timing. */
size_t fake_held_max(const struct fake *f);
/* The i-th request (0 = first), borrowed until fake_clear/fake_free; NULL if none. */
const struct fake_req *fake_req(const struct fake *f, size_t i);
const struct fake_req *fake_last(const struct fake *f);
/* The first header called name (any case), borrowed; NULL when absent. */
const char *fake_header(const struct fake_req *r, const char *name);
/* The query parameter key, percent-decoded; owned (free()); NULL when absent. */
char *fake_query_param(const struct fake_req *r, const char *key);

/* Test helpers. */
/* Unsets the proxy variables, so test traffic never leaves loopback. */
void fake_isolate(void);
/* A loopback TCP port nothing listens on (bound, then closed). -1 on failure. */
int fake_closed_port(void);
/* Runs the loop until *flag is non-zero or timeout_ms pass. 0 when set, -1 on timeout. */
int fake_run_until(struct event_base *base, const int *flag, long timeout_ms);
/* Runs the loop for ms milliseconds. */
void fake_run_for(struct event_base *base, long ms);
/* Reads $GVW_TEST_DATA/name whole; owned, NUL-terminated; NULL on failure. */
char *fake_read_data(const char *name, size_t *len);
/* Milliseconds on the monotonic clock, for timing assertions. */
long fake_now_ms(void);

#endif
