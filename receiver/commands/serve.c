/* serve.c -- the daemon: wires the loop, the front door, the store and timers */
#include "serve.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "capacity.h"
#include "clients.h"
#include "clock.h"
#include "httpd.h"
#include "kube.h"
#include "lease.h"
#include "log.h"
#include "metrics.h"
#include "page.h"
#include "prom.h"
#include "refire.h"
#include "remedy.h"
#include "store.h"

#define STORE_RETRY_S 5
#define STORE_WATCH_S 1
#define PRUNE_EVERY_S 86400
/* At SIGTERM, how long an eviction already sent may take to answer before the
 * loop stops anyway: well inside a pod's 30 s termination grace period. */
#define SHUTDOWN_GRACE_S 5

/* url with any user:password@ replaced by "***@": a Prometheus URL may carry
 * credentials, and the start-up line must never show a secret. */
static void
url_for_log(const char *url, char *out, size_t len)
{
    const char *host = strstr(url, "://");
    const char *at, *end;

    host = host != NULL ? host + 3 : url;
    end = host + strcspn(host, "/?#");
    at = memchr(host, '@', (size_t)(end - host));
    if (at == NULL) {
        snprintf(out, len, "%s", url);
        return;
    }
    snprintf(out, len, "%.*s***%s", (int)(host - url), url, at);
}

struct daemon {
    const struct config *d_cfg;         /* borrowed */
    struct event_base *d_base;          /* owned */
    struct httpd *d_httpd;              /* owned */
    struct store *d_store;              /* owned; NULL until it opens */
    struct prom *d_prom;                /* owned */
    struct kube *d_kube;                /* owned; NULL without an API server */
    struct remedy *d_remedy;            /* owned */
    struct page *d_page;                /* owned: GET / */
    struct capacity *d_capacity;        /* owned; NULL without an API server */
    struct event *d_store_retry;        /* owned */
    struct event *d_store_watch;        /* owned */
    struct event *d_prune_timer;        /* owned */
    struct event *d_sigterm, *d_sigint; /* owned */
    struct event *d_grace;              /* owned: the shutdown deadline */
    int d_stopping;
    struct lease *d_lease;   /* owned; NULL with LEADER_ELECTION=false */
    struct refire *d_refire; /* owned; with d_lease: a new leader's look at ALERTS */
    int d_stop_waits;        /* SIGTERM: what must end before the loop stops */
};

static void
prune_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;
    char err[512], n_s[32];
    int64_t n;

    if (d->d_store == NULL || d->d_cfg->c_audit_retention_s == 0)
        return;
    n = store_prune(d->d_store,
                    (clock_wall_ms() / 1000 - d->d_cfg->c_audit_retention_s) * 1000, err,
                    sizeof(err));
    if (n < 0) {
        log_event(LOG_LEVEL_WARN, "audit prune failed", "error", err, (char *)NULL);
        return;
    }
    snprintf(n_s, sizeof(n_s), "%lld", (long long)n);
    log_event(LOG_LEVEL_INFO, "audit pruned", "rows", n_s, (char *)NULL);
}

/* Opens the store; until it opens, /readyz and /webhook answer 503 and this
 * retries, so a slow volume mount heals without a restart. */
static void
store_open_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;
    char err[512], interrupted[32];
    struct timeval retry = {STORE_RETRY_S, 0};

    d->d_store = store_open(d->d_cfg->c_audit_db, STORE_READWRITE, err, sizeof(err));
    if (d->d_store == NULL) {
        log_event(LOG_LEVEL_ERROR, "audit store not open; retrying", "path",
                  d->d_cfg->c_audit_db, "error", err, (char *)NULL);
        evtimer_add(d->d_store_retry, &retry);
        return;
    }
    snprintf(interrupted, sizeof(interrupted), "%lld",
             (long long)store_interrupted_count(d->d_store));
    /* Rows a previous run left in_progress are marked interrupted: say how many. */
    log_event(LOG_LEVEL_INFO, "audit store open", "path", d->d_cfg->c_audit_db,
              "interrupted_decisions", interrupted, (char *)NULL);
    if (d->d_httpd != NULL) /* NULL once stopping */
        httpd_set_store(d->d_httpd, d->d_store);
    remedy_set_store(d->d_remedy, d->d_store);
    page_set_store(d->d_page, d->d_store);
    prune_cb(-1, 0, d);
}

/* The database file was removed or replaced under the daemon. Webhooks get
 * 503 meanwhile (httpd checks before each commit); the store is reopened at
 * its path once no decision is in flight, as their rows live in the old file. */
static void
store_watch_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;

    if (d->d_store == NULL || !store_moved(d->d_store) ||
        remedy_in_flight(d->d_remedy) > 0)
        return;
    log_event(LOG_LEVEL_ERROR, "audit database file removed or replaced; reopening it",
              "path", d->d_cfg->c_audit_db, (char *)NULL);
    if (d->d_httpd != NULL)
        httpd_set_store(d->d_httpd, NULL);
    remedy_set_store(d->d_remedy, NULL);
    page_set_store(d->d_page, NULL);
    store_close(d->d_store);
    d->d_store = NULL;
    store_open_cb(-1, 0, d);
}

static void
on_alert(const struct alert *a, int64_t alert_id, void *arg)
{
    struct daemon *d = arg;
    char id[32];

    snprintf(id, sizeof(id), "%lld", (long long)alert_id);
    log_event(LOG_LEVEL_INFO, "alert recorded", "id", id, "alertname", a->a_alertname,
              "status", alert_status_name(a), "fingerprint", a->a_fingerprint,
              (char *)NULL);
    /* HA: a follower stores and answers the webhook, and decides nothing; the
     * leader decides (and a new one reads the alerts still firing). */
    if (d->d_lease != NULL && !lease_leading(d->d_lease)) {
        log_event(LOG_LEVEL_INFO, "alert not decided: this replica follows", "id", id,
                  "leader", lease_leader(d->d_lease), (char *)NULL);
        return;
    }
    remedy_on_alert(d->d_remedy, a, alert_id);
}

static void
capacity_node_metric(const char *node, int ok, void *arg)
{
    metrics_capacity_set(node, ok);
}

/* Pulls the advertiser's state into the metrics at each scrape. */
static void
collect(void *arg)
{
    struct daemon *d = arg;

    if (d->d_lease != NULL) {
        metrics_leader_set(lease_leading(d->d_lease));
        metrics_leader_transitions_set(lease_transitions(d->d_lease));
    }
    if (d->d_capacity == NULL)
        return;
    capacity_foreach_node(d->d_capacity, capacity_node_metric, NULL);
    metrics_capacity_errors_set(capacity_error_count(d->d_capacity));
}

static int
start_capacity(struct daemon *d)
{
    const struct config *cfg = d->d_cfg;
    struct capacity_opts co = {
        .co_resource = cfg->c_gpumem_resource,
        .co_capacity_mib = cfg->c_gpumem_capacity_mib,
        .co_auto = cfg->c_gpumem_capacity_auto,
        .co_reserve_mib = cfg->c_gpumem_reserve_mib,
        .co_prom = d->d_prom,
        .co_gpu_label = cfg->c_gpu_label,
        .co_selector = cfg->c_gpu_node_selector,
        .co_interval_s = (long)cfg->c_advertise_interval_s,
    };

    /* Another source's capacity belongs to its own scheduler or device plugin
     * (SPEC "Where budgets come from"): without resource, nothing to patch. */
    if (!bsrc_order_has(&cfg->c_budget_sources, BSRC_RESOURCE)) {
        log_info("%s: capacity advertising is only for BUDGET_SOURCES=resource; "
                 "BUDGET_SOURCES=%s patches nothing",
                 __func__, cfg->c_budget_sources_raw);
        return 0;
    }

    if ((d->d_capacity = capacity_new(d->d_base, d->d_kube, &co)) == NULL ||
        capacity_start(d->d_capacity) == -1) {
        log_warnx("%s: cannot start capacity advertising", __func__);
        return -1;
    }
    return 0;
}

/* --- high availability (LEADER_ELECTION=true) ---------------------------- */

/* A firing alert read from Prometheus by a new leader: decided as a webhook's
 * would be (no alert row: it did not come from Alertmanager). */
static void
on_refire_alert(const struct alert *a, void *arg)
{
    struct daemon *d = arg;

    if (d->d_stopping || !lease_leading(d->d_lease))
        return;
    remedy_on_alert(d->d_remedy, a, 0);
}

static void
brakes_import(const char *json, void *arg)
{
    struct daemon *d = arg;
    char err[256];

    if (remedy_brakes_import(d->d_remedy, json, clock_wall_ms(), err, sizeof(err)) == -1)
        log_event(LOG_LEVEL_WARN, "the brakes in the Lease could not be read", "error",
                  err, (char *)NULL);
}

static char *
brakes_export(const struct gate_act *pending, void *arg)
{
    struct daemon *d = arg;

    return remedy_brakes_export(d->d_remedy, pending, clock_wall_ms());
}

/* Only the leader advertises capacity and decides: a new leader starts the
 * advertiser and decides afresh for every trigger still firing; one that
 * stopped leading stops advertising. */
static void
on_leading(int leading, void *arg)
{
    struct daemon *d = arg;

    if (!leading) {
        capacity_free(d->d_capacity);
        d->d_capacity = NULL;
        refire_stop(d->d_refire);
        return;
    }
    if (d->d_stopping)
        return;
    if (d->d_capacity == NULL && d->d_kube != NULL && start_capacity(d) == -1) {
        capacity_free(d->d_capacity);
        d->d_capacity = NULL;
    }
    refire_run(d->d_refire);
}

static int
ready(char *why, size_t len, void *arg)
{
    struct daemon *d = arg;

    return lease_ready(d->d_lease, why, len);
}

static int
start_lease(struct daemon *d, char *err, size_t errlen)
{
    const struct config *cfg = d->d_cfg;
    struct kube_opts ko;
    struct lease_opts lo = {
        .lo_kube = &ko,
        .lo_namespace = cfg->c_pod_namespace,
        .lo_name = cfg->c_lease_name,
        .lo_identity = cfg->c_pod_name,
        .lo_brakes_import = brakes_import,
        .lo_brakes_export = brakes_export,
        .lo_leading = on_leading,
        .lo_arg = d,
    };
    struct refire_opts ro = {
        .ro_prom_url = cfg->c_prometheus_url,
        .ro_connect_timeout_ms = (long)cfg->c_kube.ks_http_connect_timeout_ms,
        .ro_timeout_ms = (long)cfg->c_kube.ks_http_timeout_ms,
        .ro_alert = on_refire_alert,
        .ro_arg = d,
    };

    kube_settings_opts(&cfg->c_kube, &ko);
    if ((d->d_refire = refire_new(d->d_base, &ro, err, errlen)) == NULL ||
        (d->d_lease = lease_new(d->d_base, &lo, err, errlen)) == NULL)
        return -1;
    metrics_leader_set(0);
    lease_start(d->d_lease);
    return 0;
}

/* libevent's own warnings become JSON lines like everything else. */
static void
libevent_log(int severity, const char *msg)
{
    log_event(severity >= EVENT_LOG_WARN ? LOG_LEVEL_WARN : LOG_LEVEL_DEBUG, "libevent",
              "detail", msg, (char *)NULL);
}

static void
stop_now(void *arg)
{
    struct daemon *d = arg;

    event_base_loopexit(d->d_base, NULL);
}

/* SIGTERM: the decisions drained, or (HA) the Lease released; the loop stops
 * once both are done. */
static void
stop_part_done(void *arg)
{
    struct daemon *d = arg;

    if (--d->d_stop_waits <= 0)
        stop_now(d);
}

static void
grace_cb(evutil_socket_t fd, short what, void *arg)
{
    log_event(LOG_LEVEL_WARN,
              "shutdown grace over; API calls still in flight are "
              "recorded as interrupted",
              (char *)NULL);
    stop_now(arg);
}

/*
 * The order matters: the webhooks in hand are committed (and answered), the
 * listener closes (Alertmanager retries elsewhere or after the restart), then
 * every decision in flight is completed in the audit. Only an eviction the API
 * server has not answered yet is waited for, at most SHUTDOWN_GRACE_S; the
 * loop then ends and the teardown frees the clients, which completes what is
 * left as interrupted. A second signal stops at once.
 */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
    struct daemon *d = arg;
    struct timeval grace = {SHUTDOWN_GRACE_S, 0};

    if (d->d_stopping) {
        stop_now(d);
        return;
    }
    d->d_stopping = 1;
    log_info("%s: %s received; finishing the requests and decisions in hand", __func__,
             sig == SIGTERM ? "SIGTERM" : "SIGINT");
    httpd_flush(d->d_httpd);
    httpd_free(d->d_httpd);
    d->d_httpd = NULL;
    if (d->d_grace != NULL)
        evtimer_add(d->d_grace, &grace);
    /* HA: the Lease is released at once, so the other replica takes over at
     * its next try; an act already recorded in it may still be answered. */
    d->d_stop_waits = d->d_lease != NULL ? 2 : 1;
    if (d->d_lease != NULL)
        lease_release(d->d_lease, stop_part_done, d);
    remedy_shutdown(d->d_remedy, stop_part_done, d);
}

static void
on_page(struct evhttp_request *req, void *arg)
{
    struct daemon *d = arg;

    page_handle(d->d_page, req);
}

static void
daemon_teardown(struct daemon *d)
{
    page_free(d->d_page); /* answers its waiting requests before httpd goes */
    httpd_free(d->d_httpd);
    /* Fences still waiting end cancelled: their decisions complete first. */
    lease_free(d->d_lease);
    refire_free(d->d_refire);
    /* Clients first: their in-flight calls end and release what waits on them. */
    capacity_free(d->d_capacity);
    kube_free(d->d_kube);
    prom_free(d->d_prom);
    remedy_free(d->d_remedy);
    store_close(d->d_store);
    if (d->d_store_retry)
        event_free(d->d_store_retry);
    if (d->d_store_watch)
        event_free(d->d_store_watch);
    if (d->d_prune_timer)
        event_free(d->d_prune_timer);
    if (d->d_sigterm)
        event_free(d->d_sigterm);
    if (d->d_sigint)
        event_free(d->d_sigint);
    if (d->d_grace)
        event_free(d->d_grace);
    if (d->d_base)
        event_base_free(d->d_base);
    metrics_cleanup();
}

/* The event loop. With the epoll changelist, the disable-then-enable of a
 * connection's read and write events inside one loop turn (evhttp does both
 * per request) costs one epoll_ctl instead of up to three: the intake's
 * commonest system call (bench/NOTES.md). libevent's caveat, fds shared by
 * dup(), does not arise: neither evhttp nor libcurl dups its sockets. */
static struct event_base *
loop_new(void)
{
    struct event_config *ec = event_config_new();
    struct event_base *base;

    if (ec == NULL)
        return NULL;
    event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    base = event_base_new_with_config(ec);
    event_config_free(ec);
    return base;
}

int
serve_main(const struct config *cfg)
{
    struct daemon d;
    char err[512], port[16], prom_url[512], floor_mib[24], scope[160];
    struct timeval daily = {PRUNE_EVERY_S, 0};
    struct timeval watch = {STORE_WATCH_S, 0};
    struct httpd_opts ho = {
        .ho_listen_addr = cfg->c_listen_addr,
        .ho_token_file =
            cfg->c_webhook_auth == WEBHOOK_AUTH_BEARER ? cfg->c_webhook_token_file : NULL,
        .ho_max_pending = 4096,
        .ho_max_conns = (size_t)cfg->c_http_max_connections,
        .ho_max_held_bytes = (size_t)cfg->c_http_max_pending_mib * 1024 * 1024,
        .ho_header_ms = cfg->c_http_header_timeout_ms,
        .ho_body_ms = cfg->c_http_body_timeout_ms,
        .ho_on_alert = on_alert,
        .ho_on_page = on_page,
        .ho_ready = cfg->c_leader_election ? ready : NULL,
        .ho_cb_arg = &d,
    };
    int rc = 1;

    memset(&d, 0, sizeof(d));
    d.d_cfg = cfg;
    signal(SIGPIPE, SIG_IGN);
    event_set_log_callback(libevent_log);
    metrics_init(cfg->c_dry_run);
    if ((d.d_base = loop_new()) == NULL) {
        log_warnx("%s: cannot create the event loop", __func__);
        goto done;
    }
    if (clients_new(d.d_base, cfg, &d.d_prom, &d.d_kube, err, sizeof(err)) == -1) {
        log_warnx("%s: %s", __func__, err);
        goto done;
    }
    /* Neither fills an err: they fail when out of memory (remedy_new logs a
     * release client it could not make itself). */
    if ((d.d_remedy = remedy_new(d.d_base, cfg, d.d_prom, d.d_kube)) == NULL) {
        log_warnx("%s: cannot start the remediation engine (out of memory?)", __func__);
        goto done;
    }
    if ((d.d_page = page_new(d.d_base, cfg, d.d_prom, d.d_kube)) == NULL) {
        log_warnx("%s: cannot start the page: out of memory", __func__);
        goto done;
    }
    if (d.d_kube == NULL)
        log_event(LOG_LEVEL_WARN,
                  "no Kubernetes API server (KUBE_API_URL unset, not in a cluster): "
                  "decisions will end skipped_kube and no capacity is advertised",
                  (char *)NULL);
    else if (cfg->c_leader_election) {
        /* The advertiser starts when this replica leads (on_leading). */
        if (start_lease(&d, err, sizeof(err)) == -1) {
            log_warnx("%s: leader election: %s", __func__, err);
            goto done;
        }
    } else if (start_capacity(&d) == -1)
        goto done;
    metrics_set_collector(collect, &d);
    if ((d.d_httpd = httpd_new(d.d_base, &ho, err, sizeof(err))) == NULL) {
        log_warnx("%s", err);
        goto done;
    }
    d.d_store_retry = evtimer_new(d.d_base, store_open_cb, &d);
    d.d_prune_timer = event_new(d.d_base, -1, EV_PERSIST, prune_cb, &d);
    d.d_store_watch = event_new(d.d_base, -1, EV_PERSIST, store_watch_cb, &d);
    d.d_sigterm = evsignal_new(d.d_base, SIGTERM, signal_cb, &d);
    d.d_sigint = evsignal_new(d.d_base, SIGINT, signal_cb, &d);
    d.d_grace = evtimer_new(d.d_base, grace_cb, &d);
    if (!d.d_store_retry || !d.d_prune_timer || !d.d_store_watch || !d.d_sigterm ||
        !d.d_sigint || !d.d_grace) {
        log_warnx("%s: out of memory", __func__);
        goto done;
    }
    event_add(d.d_sigterm, NULL);
    event_add(d.d_sigint, NULL);
    event_add(d.d_prune_timer, &daily);
    event_add(d.d_store_watch, &watch);
    store_open_cb(-1, 0, &d);
    snprintf(port, sizeof(port), "%d", httpd_port(d.d_httpd));
    /* The settings in effect, so an operator sees at once what it judges by
     * (never a token: only the token file's path is a setting). */
    url_for_log(cfg->c_prometheus_url, prom_url, sizeof(prom_url));
    snprintf(floor_mib, sizeof(floor_mib), "%lld", (long long)cfg->c_floor_mib);
    if (cfg->c_gpu_label[0] == '\0')
        snprintf(scope, sizeof(scope), "node");
    else
        snprintf(scope, sizeof(scope),
                 "gpu where the used series carry %.100s, else node", cfg->c_gpu_label);
    log_event(LOG_LEVEL_INFO, "serving", "listen", cfg->c_listen_addr, "port", port,
              "dry_run", cfg->c_dry_run ? "true" : "false", "version", GVW_VERSION,
              "action", cfg->c_action == ACTION_DELETE ? "delete" : "evict", "floor_mib",
              floor_mib, "prometheus_url", prom_url, "used_query", cfg->c_used_query,
              "free_query", cfg->c_free_query, "scope", scope, "budget_sources",
              cfg->c_budget_sources_raw, "leader_election",
              cfg->c_leader_election ? "true" : "false", (char *)NULL);
    if (event_base_dispatch(d.d_base) == -1) {
        log_warnx("%s: event loop failed", __func__);
        goto done;
    }
    log_info("%s: stopped", __func__);
    rc = 0;
done:
    daemon_teardown(&d);
    return rc;
}
