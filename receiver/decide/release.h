/* release.h -- cooperative release: ask the victim to free VRAM, then watch for it */
#ifndef GVW_RELEASE_H
#define GVW_RELEASE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "policy.h"

struct event_base;
struct httpc;
struct prom;
struct release;

/* The release POST: no credentials, no redirects, 5 s, a small body cap. */
#define RELEASE_TIMEOUT_MS 5000L
#define RELEASE_BODY_CAP 4096u
/* How often free VRAM is read while waiting. */
#define RELEASE_POLL_MS 1000L

/* How an ask ended. */
struct release_outcome {
    int ro_released;      /* free >= the target was read before RELEASE_WAIT passed */
    int ro_cancelled;     /* a client was freed under it (the daemon stops) */
    long ro_status;       /* the tenant's HTTP status; 0 when none arrived */
    int ro_free_known;    /* a reading came back since the POST */
    int64_t ro_free_mib;  /* the last one */
    int64_t ro_freed_mib; /* ro_free_mib minus the free VRAM before the ask */
    double ro_seconds;    /* from the POST to the end */
    char ro_why[512];     /* when not released: why, one clause ("the tenant
                             answered HTTP 500", "free VRAM still 553 MiB after
                             RELEASE_WAIT (20s)") */
};

/* Called once, from the loop, when the ask ends; o is valid only during the
 * call. The callback may release_free() the release. */
typedef void (*release_done_fn)(const struct release_outcome *o, void *arg);

/*
 * The HTTP client releases are sent with: its own, never the API server's
 * (no token file, no CA), proxies ignored, RELEASE_TIMEOUT_MS, the response
 * body capped at RELEASE_BODY_CAP and ignored. Owned by the caller
 * (httpc_free()); NULL with a reason in err.
 */
struct httpc *release_client_new(struct event_base *base, char *err, size_t errlen);

/*
 * Sends POST url (empty body) with client, then, once the tenant answers
 * 2xx, reads free VRAM of node (of its GPU gpu in GPU scope; NULL = the
 * node) through prom (USED_QUERY / FREE_QUERY, as
 * the verify does) at once and every RELEASE_POLL_MS until free >= target_mib
 * (FLOOR_MIB; for a prediction, what no longer crosses the floor within the
 * horizon: free is already above the floor) or cfg's RELEASE_WAIT has passed
 * since the POST. A non-2xx answer, no
 * answer, or a timeout ends the ask at once. free_before_mib is the free
 * VRAM the decision saw, for freed_mib; decided its free_source: a reading
 * taken another way (the device series vanished, so free is computed) never
 * counts as released, and the outcome's why says so. Everything is borrowed (url, node
 * and gpu are copied). Returns the release (free it with release_free(), also from inside
 * cb), or NULL when it could not start (cb never runs).
 */
struct release *release_start(struct event_base *base, const struct config *cfg,
                              struct httpc *client, struct prom *prom, const char *node,
                              const char *gpu, const char *url, int64_t free_before_mib,
                              int64_t target_mib, enum free_source decided,
                              release_done_fn cb, void *arg);

/* What free VRAM fell short of, in words: "the floor", or for a prediction's
 * higher target "the N MiB that ends the prediction" (the release wait and the
 * verify say it alike). */
void free_target_words(int64_t target_mib, int64_t floor_mib, char *out, size_t len);

/* The figures so far, as an outcome that did not release (for a decision
 * cut short). */
void release_outcome_now(const struct release *rl, struct release_outcome *o);

/* Stops the ask; cb will not run. A POST in flight is left to end on its own
 * (its answer is dropped). NULL is a no-op. */
void release_free(struct release *rl);

#endif
