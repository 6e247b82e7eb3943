/* page.h -- GET /: the seating chart page, gathered on request without blocking the loop
 */
#ifndef GVW_PAGE_H
#define GVW_PAGE_H

#include "config.h"

struct event_base;
struct evhttp_request;
struct prom;
struct kube;
struct store;
struct page;

/* Requests that may wait for one gather; more are answered 503 at once. */
#define PAGE_MAX_WAITING 64

/*
 * Makes the page server. Everything is borrowed and must outlive it; kube
 * may be NULL. A request starts a look (seating_look: the same facts as
 * `budgets`) unless one is in flight, which it then joins; all waiting
 * requests are answered when it completes, or with 504 after
 * HTTP_TIMEOUT + 5 s. Nothing is cached: each page is fresh.
 */
struct page *page_new(struct event_base *base, const struct config *cfg,
                      struct prom *prom, struct kube *kube);

/* The audit store the last decisions are read from (borrowed; NULL = none). */
void page_set_store(struct page *p, struct store *s);

/* Takes a GET / request; it is answered later, from the loop. */
void page_handle(struct page *p, struct evhttp_request *req);

/* Answers the requests still waiting with 503 and frees the page. Call it
 * before the HTTP server and the clients are freed. NULL is a no-op. */
void page_free(struct page *p);

#endif
