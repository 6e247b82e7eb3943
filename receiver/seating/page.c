/* page.c -- GET /: the seating chart page, gathered on request without blocking the loop
 *
 * Choice: no background refresh and no cache. A request starts one look
 * (the node list, then each node's reading, pod list and Node, all
 * concurrently on the loop) or joins the one in flight; when it completes,
 * the newest decisions are read from the audit store (an indexed read of
 * PAGE_DECISIONS rows) and every waiting request gets the same page. So
 * nobody watching costs nothing, and the page never shows stale facts. With
 * no decision to list, the alerts received since start-up are counted (an
 * indexed read of at most PAGE_ALERTS_COUNTED rows), so the page can say
 * whether Alertmanager reaches us at all. */
#include "page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "clock.h"
#include "front_reply.h"
#include "log.h"
#include "page_text.h"
#include "page_html.h"
#include "seating.h"
#include "store.h"

#define PAGE_CAP (8u * 1024 * 1024) /* a page bigger than this is refused, not sent */
#define PAGE_GRACE_MS 5000
#define PAGE_ALERTS_COUNTED 1000 /* "at least 1000 alerts" beyond: one indexed read */

struct page {
    struct event_base *p_base;                          /* borrowed */
    const struct config *p_cfg;                         /* borrowed */
    struct prom *p_prom;                                /* borrowed */
    struct kube *p_kube;                                /* borrowed, may be NULL */
    struct store *p_store;                              /* borrowed, may be NULL */
    struct seating_look *p_look;                        /* the look in flight, or NULL */
    struct event *p_timeout;                            /* owned */
    struct evhttp_request *p_waiting[PAGE_MAX_WAITING]; /* answered when the look ends */
    size_t p_waiting_count;
    int64_t p_started_ms; /* start-up: the alerts "since start-up" count from here */
    char p_triggers[512]; /* what starts a decision, for "none a trigger (...)" */
};

static void
send_page(struct evhttp_request *req, int code, const char *reason, const char *body,
          size_t len)
{
    struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);

    evhttp_add_header(hdr, "Content-Type", "text/html; charset=utf-8");
    evhttp_add_header(hdr, "Cache-Control", "no-store");
    /* Nothing from elsewhere, no script: say so to the browser as well. */
    evhttp_add_header(hdr, "Content-Security-Policy",
                      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'");
    front_reply(req, code, reason, body, len);
}

/* Answers every waiting request with the same body. */
static void
answer_all(struct page *p, int code, const char *reason, const char *body, size_t len)
{
    for (size_t i = 0; i < p->p_waiting_count; i++)
        send_page(p->p_waiting[i], code, reason, body, len);
    p->p_waiting_count = 0;
}

static void
answer_error(struct page *p, int code, const char *reason, const char *why)
{
    struct buf b;

    buf_init(&b, 4096);
    if (buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<title>gpu-vram-watchdog</title></head><body><h1>GPU seating "
                       "chart</h1><p>") == 0 &&
        page_html_escape(&b, why) == 0 && buf_printf(&b, "</p></body></html>\n") == 0)
        answer_all(p, code, reason, b.b_data, b.b_len);
    else
        answer_all(p, code, reason, "", 0);
    buf_free(&b);
}

struct decisions {
    struct page_decision d_rows[PAGE_DECISIONS];
    size_t d_count;
    int d_oom;
};

static int
decision_row(int64_t id, const struct store_decision *d, void *arg)
{
    struct decisions *ds = arg;
    struct page_decision *r;
    char victim[600];

    if (ds->d_count >= PAGE_DECISIONS)
        return -1; /* can't happen: the query is limited */
    r = &ds->d_rows[ds->d_count];
    memset(r, 0, sizeof(*r));
    r->pd_id = id;
    r->pd_time_ms = d->sd_time_ms;
    if (d->sd_victim != NULL)
        snprintf(victim, sizeof(victim), "%s/%s",
                 d->sd_victim->sv_namespace ? d->sd_victim->sv_namespace : "",
                 d->sd_victim->sv_pod ? d->sd_victim->sv_pod : "");
    if ((r->pd_node = strdup(d->sd_node ? d->sd_node : "")) == NULL ||
        (r->pd_result = strdup(d->sd_result ? d->sd_result : "?")) == NULL ||
        (d->sd_victim != NULL && (r->pd_victim = strdup(victim)) == NULL) ||
        (d->sd_gpu != NULL && (r->pd_gpu = strdup(d->sd_gpu)) == NULL)) {
        page_decision_free(r);
        ds->d_oom = 1;
        return -1;
    }
    ds->d_count++;
    return 0;
}

struct alert_tally {
    const struct config *at_cfg;
    struct page_alerts *at_out;
};

/* Whether the alert would start a decision (remedy_on_alert's own test). */
static int
is_trigger(const struct config *cfg, const struct store_alert *a)
{
    return a->sa_status != NULL && strcmp(a->sa_status, "firing") == 0 &&
           a->sa_alertname != NULL &&
           (strlist_contains(&cfg->c_trigger_alerts, a->sa_alertname) ||
            (cfg->c_predict && strcmp(a->sa_alertname, PREDICT_ALERTNAME) == 0));
}

static int
alert_row(int64_t id, const struct store_alert *a, void *arg)
{
    struct alert_tally *t = arg;

    (void)id;
    if (t->at_out->pa_count++ == 0)
        t->at_out->pa_last_ms = a->sa_received_ms; /* newest first */
    if (is_trigger(t->at_cfg, a))
        t->at_out->pa_triggers++;
    return 0;
}

/* With no decision to show: the alerts received since start-up, counted. */
static void
count_alerts(struct page *p, struct page_alerts *pa, char *err, size_t errlen)
{
    struct store_filter f = {.sf_since_ms = p->p_started_ms,
                             .sf_limit = PAGE_ALERTS_COUNTED};
    struct alert_tally t = {p->p_cfg, pa};

    memset(pa, 0, sizeof(*pa));
    pa->pa_since_ms = p->p_started_ms;
    if (store_query_alerts(p->p_store, &f, alert_row, &t, err, errlen) < 0) {
        pa->pa_error = err;
        return;
    }
    pa->pa_capped = pa->pa_count >= PAGE_ALERTS_COUNTED;
}

/* TRIGGER_ALERTS (and the predictive alert when PREDICT=true) as one list. */
static void
list_triggers(const struct config *cfg, char *out, size_t len)
{
    size_t at = 0;

    out[0] = '\0';
    for (size_t i = 0; i <= cfg->c_trigger_alerts.sl_count; i++) {
        const char *name = i < cfg->c_trigger_alerts.sl_count
                               ? cfg->c_trigger_alerts.sl_items[i]
                               : (cfg->c_predict ? PREDICT_ALERTNAME : NULL);
        int n;

        if (name == NULL)
            break;
        n = snprintf(out + at, len - at, "%s%s", at > 0 ? ", " : "", name);
        if (n < 0 || (size_t)n >= len - at)
            break; /* cut: the page says what fits */
        at += (size_t)n;
    }
}

static void
looked(const struct seating *s, void *arg)
{
    struct page *p = arg;
    struct store_filter f = {.sf_limit = PAGE_DECISIONS};
    struct decisions ds;
    struct page_view v = {.pv_seating = s,
                          .pv_now_ms = clock_wall_ms(),
                          .pv_dry_run = p->p_cfg->c_dry_run,
                          .pv_triggers = p->p_triggers,
                          .pv_leader_election = p->p_cfg->c_leader_election};
    struct page_alerts alerts;
    char err[512], alerts_err[512];
    struct buf b;

    p->p_look = NULL; /* it frees itself after this call */
    evtimer_del(p->p_timeout);
    memset(&ds, 0, sizeof(ds));
    if (p->p_store == NULL)
        v.pv_decisions_error = "the audit store is not open";
    else if (store_query_decisions(p->p_store, &f, decision_row, &ds, err, sizeof(err)) <
             0)
        v.pv_decisions_error = ds.d_oom ? "out of memory" : err;
    v.pv_decisions = ds.d_rows;
    v.pv_decision_count = ds.d_count;
    if (v.pv_decisions_error == NULL && ds.d_count == 0) {
        count_alerts(p, &alerts, alerts_err, sizeof(alerts_err));
        v.pv_alerts = &alerts;
    }
    buf_init(&b, PAGE_CAP);
    if (page_html_render(&b, &v) == 0) {
        answer_all(p, 200, "OK", b.b_data, b.b_len);
    } else {
        log_warnx("%s: the page could not be rendered (%s)", __func__,
                  b.b_toobig ? "too big" : "out of memory");
        answer_error(p, 500, "Internal Server Error", "The page could not be rendered.");
    }
    buf_free(&b);
    for (size_t i = 0; i < ds.d_count; i++)
        page_decision_free(&ds.d_rows[i]);
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    struct page *p = arg;

    seating_look_cancel(p->p_look); /* its calls end detached */
    p->p_look = NULL;
    log_warnx("page: the seating chart's facts did not arrive in time");
    answer_error(p, 504, "Gateway Timeout",
                 "Prometheus or the Kubernetes API server did not answer in time; "
                 "try again.");
}

struct page *
page_new(struct event_base *base, const struct config *cfg, struct prom *prom,
         struct kube *kube)
{
    struct page *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->p_base = base;
    p->p_cfg = cfg;
    p->p_prom = prom;
    p->p_kube = kube;
    p->p_started_ms = clock_wall_ms();
    list_triggers(cfg, p->p_triggers, sizeof(p->p_triggers));
    if ((p->p_timeout = evtimer_new(base, timeout_cb, p)) == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

void
page_set_store(struct page *p, struct store *s)
{
    p->p_store = s;
}

void
page_handle(struct page *p, struct evhttp_request *req)
{
    int64_t ms = p->p_cfg->c_kube.ks_http_timeout_ms + PAGE_GRACE_MS;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

    if (p->p_waiting_count >= PAGE_MAX_WAITING) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "5");
        send_page(req, 503, "Service Unavailable", "too many requests waiting\n", 26);
        return;
    }
    p->p_waiting[p->p_waiting_count++] = req;
    if (p->p_look != NULL)
        return; /* joins the look in flight */
    if ((p->p_look = seating_look_start(p->p_base, p->p_cfg, p->p_prom, p->p_kube, NULL,
                                        looked, p)) == NULL) {
        answer_error(p, 500, "Internal Server Error", "Out of memory.");
        return;
    }
    evtimer_add(p->p_timeout, &tv);
}

void
page_free(struct page *p)
{
    if (p == NULL)
        return;
    seating_look_cancel(p->p_look);
    answer_error(p, 503, "Service Unavailable", "The watchdog is stopping.");
    event_free(p->p_timeout);
    free(p);
}
