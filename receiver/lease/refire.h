/* refire.h -- a new leader decides afresh for every trigger alert still firing:
 * Prometheus' ALERTS{alertstate="firing"}, read as Alertmanager would have sent them */
#ifndef GVW_REFIRE_H
#define GVW_REFIRE_H

#include <stddef.h>

#include "alert.h"

struct event_base;
struct refire;

#define REFIRE_QUERY "ALERTS{alertstate=\"firing\"}"
#define REFIRE_TRIES 6         /* while Prometheus cannot answer ... */
#define REFIRE_RETRY_MS 5000L  /* ... asked again this often */
#define REFIRE_MAX_ALERTS 4096 /* firing alerts read from one answer */

/* Called once per firing alert of the answer; a and its strings are
 * borrowed for the call (its fingerprint is Alertmanager's). */
typedef void (*refire_alert_fn)(const struct alert *a, void *arg);

struct refire_opts {
    const char *ro_prom_url; /* borrowed (copied): PROMETHEUS_URL */
    long ro_connect_timeout_ms;
    long ro_timeout_ms;
    refire_alert_fn ro_alert;
    void *ro_arg;
};

/* Returns the asker (free with refire_free()), or NULL with a reason in err. */
struct refire *refire_new(struct event_base *base, const struct refire_opts *o, char *err,
                          size_t errlen);

/* A query in flight is cancelled; no callback runs after this. NULL is a no-op. */
void refire_free(struct refire *rf);

/* Asks Prometheus now, and again (up to REFIRE_TRIES in all, REFIRE_RETRY_MS
 * apart) while it cannot answer. A run already going is replaced. */
void refire_run(struct refire *rf);

/* Stops: retries end, an answer in flight is dropped. */
void refire_stop(struct refire *rf);

/*
 * The pure half: a Prometheus instant-query answer of ALERTS series (body,
 * len) as an Alertmanager webhook body (version 4): one firing alert per
 * series, its labels without __name__ and alertstate, its fingerprint as
 * Alertmanager computes it from them (FNV-1a 64 over the sorted pairs).
 * *count gets the alerts. Returns an owned NUL-terminated string (free()),
 * or NULL with a reason in err (not a success answer, not a vector, over
 * REFIRE_MAX_ALERTS series, out of memory).
 */
char *refire_webhook_json(const char *body, size_t len, size_t *count, char *err,
                          size_t errlen);

#endif
