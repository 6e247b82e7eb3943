/* front_reply.h -- an answer sent through evhttp, a HEAD's as its length alone */
#ifndef GVW_FRONT_REPLY_H
#define GVW_FRONT_REPLY_H

#include <stddef.h>

struct evbuffer;
struct evhttp_request;

/*
 * Sends code/reason with body (the caller has set its other headers). For a
 * HEAD only the body's Content-Length goes: evhttp would send a HEAD's body
 * and no length, and the client would read that body as the start of the
 * next answer on the connection.
 */
void front_reply(struct evhttp_request *req, int code, const char *reason,
                 const void *body, size_t len);

/* The same with the body in an evbuffer (drained for a HEAD). */
void front_reply_buffer(struct evhttp_request *req, int code, const char *reason,
                        struct evbuffer *body);

#endif
