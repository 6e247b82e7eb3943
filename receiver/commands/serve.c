/* serve.c -- the daemon: wires the loop, the front door, the store and timers */
#include "serve.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "capacity.h"
#include "clients.h"
#include "httpd.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "page.h"
#include "prom.h"
#include "remedy.h"
#include "store.h"

#define STORE_RETRY_S 5
#define STORE_WATCH_S 1
#define PRUNE_EVERY_S 86400
/* At SIGTERM, how long an eviction already sent may take to answer before the
 * loop stops anyway: well inside a pod's 30 s termination grace period. */
#define SHUTDOWN_GRACE_S 5

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
};

static void
prune_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;
    char err[512], n_s[32];
    struct timespec ts;
    int64_t n;

    if (d->d_store == NULL || d->d_cfg->c_audit_retention_s == 0)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    n = store_prune(d->d_store,
                    ((int64_t)ts.tv_sec - d->d_cfg->c_audit_retention_s) * 1000, err,
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
    remedy_shutdown(d->d_remedy, stop_now, d);
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
    char err[512], port[16];
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
    else if (start_capacity(&d) == -1)
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
    log_event(LOG_LEVEL_INFO, "serving", "listen", cfg->c_listen_addr, "port", port,
              "dry_run", cfg->c_dry_run ? "true" : "false", "version", GVW_VERSION,
              (char *)NULL);
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
