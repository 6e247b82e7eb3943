/* front_reply.c -- an answer sent through evhttp, a HEAD's as its length alone */
#include "front_reply.h"

#include <stdio.h>

#include <event2/buffer.h>
#include <event2/http.h>

/* A HEAD: its length instead of its body. Returns 1 when req is one. */
static int
head_only(struct evhttp_request *req, size_t len)
{
    char n[32];

    if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD)
        return 0;
    snprintf(n, sizeof(n), "%zu", len);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Length", n);
    return 1;
}

void
front_reply(struct evhttp_request *req, int code, const char *reason, const void *body,
            size_t len)
{
    if (!head_only(req, len))
        evbuffer_add(evhttp_request_get_output_buffer(req), body, len);
    evhttp_send_reply(req, code, reason, NULL);
}

void
front_reply_buffer(struct evhttp_request *req, int code, const char *reason,
                   struct evbuffer *body)
{
    size_t len = evbuffer_get_length(body);

    if (head_only(req, len))
        evbuffer_drain(body, len);
    evhttp_send_reply(req, code, reason, body);
}
