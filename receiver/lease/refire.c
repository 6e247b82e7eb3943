/* refire.c -- a new leader decides afresh for every trigger alert still firing:
 * Prometheus' ALERTS{alertstate="firing"}, read as Alertmanager would have sent them
 *
 * A trigger that reached the old leader just before it died, or a follower
 * that stored it and decided nothing, is not lost: the alert is still firing
 * in Prometheus, and the new leader hears it again from there. The answer is
 * turned into the webhook body Alertmanager would have sent and read with the
 * webhook's own parser, so it is checked exactly as a delivery is. */
#include "refire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "buf.h"
#include "httpc.h"
#include "log.h"

struct refire {
    struct event_base *rf_base; /* borrowed */
    struct httpc *rf_http;      /* owned */
    char *rf_url;               /* owned: the whole query URL */
    refire_alert_fn rf_alert;
    void *rf_arg;
    struct event *rf_retry; /* owned */
    unsigned rf_gen;        /* a run's number: an answer of an older run is dropped */
    int rf_tries;           /* left in this run */
    int rf_inflight;
};

/* One query in flight. */
struct ask {
    struct refire *a_rf;
    unsigned a_gen;
};

/* Alertmanager's fingerprint: model.LabelSet.Fingerprint(), FNV-1a 64 over
 * the pairs sorted by name, each name and value followed by 0xff. */
static uint64_t
fingerprint(json_t *labels)
{
    const char **keys;
    size_t n = json_object_size(labels), i = 0;
    uint64_t h = 14695981039346656037ULL;
    const char *k;
    json_t *v;

    if ((keys = calloc(n ? n : 1, sizeof(*keys))) == NULL)
        return 0;
    json_object_foreach(labels, k, v) keys[i++] = k;
    for (size_t a = 1; a < n; a++) /* insertion sort: label sets are small */
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *t = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = t;
        }
    for (i = 0; i < n; i++) {
        const char *s[2] = {keys[i], json_string_value(json_object_get(labels, keys[i]))};
        for (int j = 0; j < 2; j++) {
            for (const unsigned char *p = (const unsigned char *)(s[j] ? s[j] : ""); *p;
                 p++)
                h = (h ^ *p) * 1099511628211ULL;
            h = (h ^ 0xffu) * 1099511628211ULL;
        }
    }
    free(keys);
    return h;
}

/* One series as one alert; NULL when it is not one (skipped). */
static json_t *
series_alert(json_t *series)
{
    json_t *metric = json_object_get(series, "metric"), *labels, *v, *a;
    const char *k;
    char fp[17];

    if (!json_is_object(metric) || (labels = json_object()) == NULL)
        return NULL;
    json_object_foreach(metric, k, v)
    {
        if (strcmp(k, "__name__") == 0 || strcmp(k, "alertstate") == 0)
            continue;
        if (!json_is_string(v) || json_object_set(labels, k, v) == -1) {
            json_decref(labels);
            return NULL;
        }
    }
    snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)fingerprint(labels));
    a = json_pack("{s:s, s:o, s:{}, s:s}", "status", "firing", "labels", labels,
                  "annotations", "fingerprint", fp);
    return a;
}

char *
refire_webhook_json(const char *body, size_t len, size_t *count, char *err, size_t errlen)
{
    json_t *root, *data, *result, *alerts = NULL, *hook = NULL, *a;
    char *text = NULL;
    size_t i, n;

    *count = 0;
    if ((root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
        snprintf(err, errlen, "prometheus: the ALERTS answer is not JSON");
        return NULL;
    }
    data = json_object_get(root, "data");
    result = json_object_get(data, "result");
    if (!json_is_string(json_object_get(root, "status")) ||
        strcmp(json_string_value(json_object_get(root, "status")), "success") != 0 ||
        !json_is_string(json_object_get(data, "resultType")) ||
        strcmp(json_string_value(json_object_get(data, "resultType")), "vector") != 0 ||
        !json_is_array(result)) {
        snprintf(err, errlen, "prometheus: the ALERTS answer is not a success vector");
        goto out;
    }
    if ((n = json_array_size(result)) > REFIRE_MAX_ALERTS) {
        snprintf(err, errlen, "prometheus: %zu firing alerts, over %d", n,
                 REFIRE_MAX_ALERTS);
        goto out;
    }
    if ((alerts = json_array()) == NULL)
        goto oom;
    for (i = 0; i < n; i++) {
        if ((a = series_alert(json_array_get(result, i))) == NULL)
            continue; /* not a label set: the parser would refuse the whole batch */
        if (json_array_append_new(alerts, a) == -1)
            goto oom;
        (*count)++;
    }
    hook = json_pack("{s:s, s:s, s:s, s:O}", "version", "4", "status", "firing",
                     "receiver", "prometheus-alerts", "alerts", alerts);
    if (hook == NULL || (text = json_dumps(hook, JSON_COMPACT)) == NULL)
        goto oom;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    json_decref(hook);
    json_decref(alerts);
    json_decref(root);
    return text;
}

static void ask_now(evutil_socket_t fd, short what, void *arg);

static void
schedule_retry(struct refire *rf)
{
    struct timeval tv = {REFIRE_RETRY_MS / 1000, (REFIRE_RETRY_MS % 1000) * 1000};

    if (rf->rf_tries > 0)
        evtimer_add(rf->rf_retry, &tv);
}

static void
answer_cb(const struct httpc_resp *r, void *arg)
{
    struct ask *ask = arg;
    struct refire *rf = ask->a_rf;
    struct alert_batch b;
    char err[512], n[32];
    size_t count;
    char *hook;

    rf->rf_inflight = 0;
    if (r->hr_cancelled) {
        free(ask);
        return;
    }
    if (ask->a_gen != rf->rf_gen) { /* a newer run (or a stop) came meanwhile */
        free(ask);
        ask_now(-1, 0, rf);
        return;
    }
    free(ask);
    if (r->hr_error != NULL || r->hr_status != 200) {
        snprintf(err, sizeof(err), "%s", r->hr_error ? r->hr_error : "not HTTP 200");
        log_event(LOG_LEVEL_WARN, "new leader: firing alerts not read from Prometheus",
                  "error", err, "tries_left", rf->rf_tries > 0 ? "yes" : "no",
                  (char *)NULL);
        schedule_retry(rf);
        return;
    }
    if ((hook = refire_webhook_json(r->hr_body, r->hr_body_len, &count, err,
                                    sizeof(err))) == NULL ||
        alert_batch_parse(hook, strlen(hook), &b, err, sizeof(err)) == -1) {
        free(hook);
        log_event(LOG_LEVEL_WARN, "new leader: firing alerts not read from Prometheus",
                  "error", err, (char *)NULL);
        schedule_retry(rf);
        return;
    }
    free(hook);
    rf->rf_tries = 0;
    snprintf(n, sizeof(n), "%zu", b.ab_count);
    log_event(LOG_LEVEL_INFO, "new leader: deciding afresh for the alerts still firing",
              "firing", n, (char *)NULL);
    for (size_t i = 0; i < b.ab_count; i++)
        rf->rf_alert(&b.ab_alerts[i], rf->rf_arg);
    alert_batch_free(&b);
}

static void
ask_now(evutil_socket_t fd, short what, void *arg)
{
    struct refire *rf = arg;
    struct httpc_req req = {.hq_method = "GET", .hq_url = rf->rf_url};
    struct ask *ask;

    if (rf->rf_tries <= 0 || rf->rf_inflight)
        return;
    rf->rf_tries--;
    if ((ask = calloc(1, sizeof(*ask))) == NULL) {
        schedule_retry(rf);
        return;
    }
    ask->a_rf = rf;
    ask->a_gen = rf->rf_gen;
    if (httpc_request(rf->rf_http, &req, answer_cb, ask) == -1) {
        free(ask);
        schedule_retry(rf);
        return;
    }
    rf->rf_inflight = 1;
}

struct refire *
refire_new(struct event_base *base, const struct refire_opts *o, char *err, size_t errlen)
{
    struct httpc_opts ho = {
        .ho_connect_timeout_ms = o->ro_connect_timeout_ms,
        .ho_timeout_ms = o->ro_timeout_ms,
    };
    struct refire *rf;
    struct buf url;
    size_t ulen = strlen(o->ro_prom_url);

    if ((rf = calloc(1, sizeof(*rf))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    rf->rf_base = base;
    rf->rf_alert = o->ro_alert;
    rf->rf_arg = o->ro_arg;
    buf_init(&url, 4096);
    while (ulen > 0 && o->ro_prom_url[ulen - 1] == '/')
        ulen--;
    if (buf_append(&url, o->ro_prom_url, ulen) == -1 ||
        buf_printf(&url, "/api/v1/query?query=") == -1 ||
        httpc_urlencode(&url, REFIRE_QUERY) == -1) {
        buf_free(&url);
        snprintf(err, errlen, "PROMETHEUS_URL too long");
        goto fail;
    }
    rf->rf_url = url.b_data;
    if ((rf->rf_http = httpc_new(base, &ho, err, errlen)) == NULL)
        goto fail;
    if ((rf->rf_retry = evtimer_new(base, ask_now, rf)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    return rf;
fail:
    refire_free(rf);
    return NULL;
}

void
refire_free(struct refire *rf)
{
    if (rf == NULL)
        return;
    rf->rf_gen++; /* the cancelled answer is dropped */
    httpc_free(rf->rf_http);
    if (rf->rf_retry != NULL)
        event_free(rf->rf_retry);
    free(rf->rf_url);
    free(rf);
}

void
refire_run(struct refire *rf)
{
    rf->rf_gen++;
    rf->rf_tries = REFIRE_TRIES;
    evtimer_del(rf->rf_retry);
    ask_now(-1, 0, rf); /* with an answer in flight: once it is in (and dropped) */
}

void
refire_stop(struct refire *rf)
{
    rf->rf_gen++;
    rf->rf_tries = 0;
    evtimer_del(rf->rf_retry);
}
