/* test_predict_decide.c -- the predictive trigger (PREDICT) decided end to end against a
 * loopback fake Prometheus + API server: what the audit shows and what the API server got
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "alert.h"
#include "audit_cli.h"
#include "clients.h"
#include "config.h"
#include "fake.h"
#include "kube.h"
#include "prom.h"
#include "remedy.h"
#include "store.h"

/* The 2026-06-02 cast (tests/data/remedy-pods-incident.json) on a 15360 MiB
 * card, a little earlier: the ML pod at 9000 MiB of its 3000 budget, 12850
 * MiB used in all, so 2510 MiB free, above the 1536 MiB floor. */
#define NODE "gpu-node-1"
#define QUERY_PATH "/api/v1/query"
#define PODS_PATH "/api/v1/pods"
#define ML_NS "immich"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define ML_EVICT "/api/v1/namespaces/" ML_NS "/pods/" ML_POD "/eviction"
#define FR_POD "frigate-84d5c6b7f9-h4n8s"
#define PREDICTED "GPUVRAMExhaustionPredicted"
#define GROWTH_NEEDLE "[120s:1s]" /* the growth subquery: PREDICT_WINDOW 2m, step 1 s */
#define MIB 1048576.0

enum { ML, LS, FR, SV, ST, NPODS };
static const char *const NS[NPODS] = {"immich", "llama-swap", "frigate", "immich",
                                      "portal-stt"};
static const char *const POD[NPODS] = {ML_POD, "llama-swap-6d8f7b5c4-w7r2k", FR_POD,
                                       "immich-server-7c4b9d6f8-m2t9z",
                                       "portal-stt-59b7d8c6f5-j6v3q"};
static const double STEADY_USED[NPODS] = {9000, 1100, 1400, 900, 450};

struct kv {
    const char *k, *v; /* v NULL = unset */
};

struct env {
    struct event_base *base;
    struct fake *fake;
    char dir[64], db[96];
    struct config cfg;
    int cfg_loaded;
    struct prom *prom;
    struct kube *kube;
    struct store *store;
    struct remedy *r;
    const struct kv *extra, *base_env;
};

static struct env *cur;

static const char *
env_getenv(const char *name)
{
    for (const struct kv *p = cur->extra; p != NULL && p->k != NULL; p++)
        if (strcmp(p->k, name) == 0)
            return p->v;
    for (const struct kv *p = cur->base_env; p != NULL && p->k != NULL; p++)
        if (strcmp(p->k, name) == 0)
            return p->v;
    return NULL;
}

static void
run_ms(struct event_base *base, long ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    assert_non_null(e);
    fake_isolate();
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    snprintf(e->dir, sizeof(e->dir), "/tmp/gvw-predict-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(e->db, sizeof(e->db), "%s/audit.db", e->dir);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;
    char p[160];

    kube_free(e->kube);
    prom_free(e->prom);
    if (e->r != NULL)
        assert_int_equal(remedy_in_flight(e->r), 0);
    remedy_free(e->r);
    store_close(e->store);
    if (e->cfg_loaded)
        config_free(&e->cfg);
    fake_free(e->fake);
    event_base_free(e->base);
    static const char *const tails[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s%s", e->db, tails[i]);
        unlink(p);
    }
    rmdir(e->dir);
    free(e);
    return 0;
}

/* The settings (PREDICT=true unless extra says otherwise), clients, store and engine. */
static void
start(struct env *e, const struct kv *extra)
{
    const struct kv base_env[] = {
        {"PROMETHEUS_URL", fake_url(e->fake)},
        {"KUBE_API_URL", fake_url(e->fake)},
        {"WEBHOOK_AUTH", "none"},
        {"MIN_RUNTIME", "1s"},
        {"SETTLE", "1s"},
        {"DRY_RUN", "false"},
        {"PREDICT", "true"},
        {"AUDIT_DB", e->db},
        {"LOG_FORMAT", "text"},
        {"HTTP_TIMEOUT", "3s"},
        {"EVENTS", "false"}, /* request counts below are exact */
        {NULL, NULL},
    };
    int rest[4], nrest = 0;
    char err[512];

    cur = e;
    e->extra = extra;
    e->base_env = base_env;
    if (config_load(&e->cfg, 0, NULL, env_getenv, rest, &nrest, err, sizeof(err)) == -1)
        fail_msg("config_load: %s", err);
    e->cfg_loaded = 1;
    e->extra = e->base_env = NULL;
    if (clients_new(e->base, &e->cfg, &e->prom, &e->kube, err, sizeof(err)) == -1)
        fail_msg("clients_new: %s", err);
    if ((e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err))) == NULL)
        fail_msg("store_open: %s", err);
    assert_non_null(e->r = remedy_new(e->base, &e->cfg, e->prom, e->kube));
    remedy_set_store(e->r, e->store);
    /* No device series: free is computed (15360 - used). */
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200,
                                      "{\"status\":\"success\",\"data\":{"
                                      "\"resultType\":\"vector\",\"result\":[]}}"),
                     0);
}

/* The used query's answer: the cast, the ML pod at ml_mib. */
static void
route_used(struct env *e, double ml_mib)
{
    char body[2048];
    size_t off = 0;

    off += (size_t)snprintf(body + off, sizeof(body) - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (int i = 0; i < NPODS; i++)
        off += (size_t)snprintf(body + off, sizeof(body) - off,
                                "%s{\"metric\":{\"namespace\":\"%s\",\"pod\":\"%s\"},"
                                "\"value\":[1780394400,\"%.0f\"]}",
                                i ? "," : "", NS[i], POD[i],
                                (i == ML ? ml_mib : STEADY_USED[i]) * MIB);
    snprintf(body + off, sizeof(body) - off, "]}}");
    assert_true(off < sizeof(body) - 8);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
}

/* The growth subquery's answer: each pod's use over the last 120 s, one
 * sample a second, ending at its steady figure, changing by slope[i] MiB/s. */
static void
route_growth(struct env *e, const double slope[NPODS])
{
    size_t cap = 64 * 1024, off = 0;
    char *body = malloc(cap);

    assert_non_null(body);
    off += (size_t)snprintf(body + off, cap - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                            "\"result\":[");
    for (int i = 0; i < NPODS; i++) {
        off += (size_t)snprintf(body + off, cap - off,
                                "%s{\"metric\":{\"namespace\":\"%s\",\"pod\":\"%s\"},"
                                "\"values\":[",
                                i ? "," : "", NS[i], POD[i]);
        for (int k = 0; k < 120; k++) /* t = now - 119 .. now */
            off += (size_t)snprintf(body + off, cap - off, "%s[%d,\"%.0f\"]",
                                    k ? "," : "", 1780394281 + k,
                                    (STEADY_USED[i] - slope[i] * (119 - k)) * MIB);
        off += (size_t)snprintf(body + off, cap - off, "]}");
    }
    snprintf(body + off, cap - off, "]}}");
    assert_true(off < cap - 8);
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, GROWTH_NEEDLE, 200, body), 0);
    free(body);
}

static void
route_pods(struct env *e)
{
    assert_int_equal(
        fake_route_file(e->fake, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0),
        0);
}

/* One Alertmanager delivery of alertname, firing, for the node: recorded and
 * handed to the engine, as serve does. */
static void
deliver(struct env *e, const char *alertname)
{
    char body[1024], err[512];
    struct alert_batch b;
    int64_t id;

    snprintf(
        body, sizeof(body),
        "{\"version\":\"4\",\"status\":\"firing\",\"receiver\":\"gvw\",\"groupKey\":\"{}\","
        "\"groupLabels\":{},\"commonLabels\":{},\"commonAnnotations\":{},"
        "\"externalURL\":\"http://am:9093\",\"alerts\":[{\"status\":\"firing\","
        "\"labels\":{\"alertname\":\"%s\",\"severity\":\"critical\",\"node\":\"" NODE
        "\"},"
        "\"annotations\":{},\"startsAt\":\"2026-06-02T09:30:00Z\","
        "\"endsAt\":\"0001-01-01T00:00:00Z\",\"generatorURL\":\"http://p/\","
        "\"fingerprint\":\"4f1c2b9e8d7a6c5b\"}]}",
        alertname);
    if (alert_batch_parse(body, strlen(body), &b, err, sizeof(err)) == -1)
        fail_msg("alert_batch_parse: %s", err);
    assert_int_equal(b.ab_count, 1);
    const struct alert *a = &b.ab_alerts[0];
    struct store_alert sa = {
        .sa_received_ms = 1780394400000,
        .sa_alertname = a->a_alertname,
        .sa_status = alert_status_name(a),
        .sa_fingerprint = a->a_fingerprint,
        .sa_starts_at = a->a_starts_at,
        .sa_ends_at = a->a_ends_at,
        .sa_labels_json = a->a_labels_json,
        .sa_annotations_json = a->a_annotations_json,
    };
    if (store_add_alert(e->store, &sa, &id, err, sizeof(err)) == -1)
        fail_msg("store_add_alert: %s", err);
    remedy_on_alert(e->r, a, id);
    alert_batch_free(&b);
}

static int
count_cb(void *arg, int64_t id, const struct store_decision *d)
{
    size_t *n = arg;

    (void)id;
    n[0] += strcmp(d->sd_result, "in_progress") != 0;
    n[1]++;
    return 0;
}

/* Runs the loop until want decisions are finished and none is in flight,
 * then a little longer, so an extra one would show. */
static void
wait_rows(struct env *e, size_t want)
{
    long end = fake_now_ms() + 8000;
    struct store_filter f = {0};
    size_t n[2];
    char err[256];

    for (;;) {
        n[0] = n[1] = 0;
        if (store_query_decisions(e->store, &f, count_cb, n, err, sizeof(err)) == -1)
            fail_msg("store_query_decisions: %s", err);
        if (n[0] >= want && remedy_in_flight(e->r) == 0)
            break;
        if (fake_now_ms() >= end)
            fail_msg("%zu finished decisions, %zu rows, want %zu", n[0], n[1], want);
        run_ms(e->base, 10);
    }
    run_ms(e->base, 100);
    n[0] = n[1] = 0;
    assert_true(store_query_decisions(e->store, &f, count_cb, n, err, sizeof(err)) != -1);
    assert_int_equal(n[0], want);
    assert_int_equal(n[1], want);
}

/* `audit [word] --db DB --format json --limit 0`, run in-process, parsed. */
static json_t *
audit_json(struct env *e, const char *word)
{
    char *argv[10], path[128];
    int argc = 0, saved, fd;
    json_error_t jerr;
    json_t *j;

    argv[argc++] = "audit";
    if (word != NULL)
        argv[argc++] = (char *)word;
    argv[argc++] = "--db";
    argv[argc++] = e->db;
    argv[argc++] = "--format";
    argv[argc++] = "json";
    argv[argc++] = "--limit";
    argv[argc++] = "0";
    argv[argc] = NULL;
    snprintf(path, sizeof(path), "%s/stdout", e->dir);
    fflush(stdout);
    assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
    assert_true((saved = dup(STDOUT_FILENO)) >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    int rc = audit_main(argc, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(rc, AUDIT_EXIT_OK);
    if ((j = json_load_file(path, 0, &jerr)) == NULL)
        fail_msg("audit output is not JSON: %s", jerr.text);
    unlink(path);
    assert_true(json_is_array(j));
    return j;
}

/* The one decision the audit lists (a new reference). */
static json_t *
the_decision(struct env *e)
{
    json_t *all = audit_json(e, NULL), *d;

    assert_int_equal(json_array_size(all), 1);
    d = json_incref(json_array_get(all, 0));
    json_decref(all);
    return d;
}

static json_t *
jget(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);

    if (v == NULL) {
        char *s = json_dumps(o, JSON_COMPACT);
        fail_msg("no \"%s\" in %s", k, s ? s : "?");
    }
    return v;
}

static void
jstr(json_t *o, const char *k, const char *want)
{
    json_t *v = jget(o, k);

    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", k);
    assert_string_equal(json_string_value(v), want);
}

static void
jhas(json_t *o, const char *k, const char *needle)
{
    json_t *v = jget(o, k);

    if (!json_is_string(v) || strstr(json_string_value(v), needle) == NULL)
        fail_msg("\"%s\" is %s, without \"%s\"", k,
                 json_is_string(v) ? json_string_value(v) : "not a string", needle);
}

static void
jnum(json_t *o, const char *k, double want)
{
    json_t *v = jget(o, k);

    if (!json_is_number(v) || fabs(json_number_value(v) - want) > 0.01)
        fail_msg("\"%s\" is %g, not %g", k, json_number_value(v), want);
}

/* prediction {slope_mib_s, eta_s, horizon_s}; eta < 0: null. */
static void
check_prediction(json_t *d, double slope, double eta)
{
    json_t *p = jget(d, "prediction");

    if (!json_is_object(p))
        fail_msg("prediction is not an object");
    jnum(p, "slope_mib_s", slope);
    if (eta < 0)
        assert_true(json_is_null(jget(p, "eta_s")));
    else
        jnum(p, "eta_s", eta);
    jnum(p, "horizon_s", 120);
}

static json_t *
candidate(json_t *d, const char *pod)
{
    json_t *c;
    size_t i;

    json_array_foreach(jget(d, "candidates"), i, c)
    {
        if (strcmp(json_string_value(jget(c, "pod")), pod) == 0)
            return c;
    }
    fail_msg("no candidate %s", pod);
    return NULL;
}

static int
is_growth_query(const struct fake_req *r)
{
    char *q = fake_query_param(r, "query");
    int yes = q != NULL && strstr(q, GROWTH_NEEDLE) != NULL;

    free(q);
    return yes;
}

static size_t
growth_queries(struct env *e)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++)
        n += (size_t)is_growth_query(fake_req(e->fake, i));
    return n;
}

/* Requests that change something, or could: anything but GET (a dry-run
 * probe with dryRun=All counted apart in dry_run). */
static size_t
mutating(struct env *e, size_t *dry_run)
{
    size_t n = 0, dry = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (strcmp(r->fr_method, "GET") == 0)
            continue;
        char *v = fake_query_param(r, "dryRun");
        if (v != NULL && strcmp(v, "All") == 0)
            dry++;
        else
            n++;
        free(v);
    }
    if (dry_run != NULL)
        *dry_run = dry;
    return n;
}

/* A decision on PREDICTED with the used figures and the growth given. */
static json_t *
decide(struct env *e, const struct kv *extra, const double slope[NPODS])
{
    route_used(e, STEADY_USED[ML]);
    if (slope != NULL)
        route_growth(e, slope);
    route_pods(e);
    start(e, extra);
    deliver(e, PREDICTED);
    wait_rows(e, 1);
    return the_decision(e);
}

/* --- the tests ------------------------------------------------------------- */

/* The runaway, over budget and drifting 20 MiB/s: recycled before free
 * reaches the floor; eta = (2510 - 1536) / 20 = 48.7, said as 49 s. */
static void
test_grower_recycled(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    d = decide(e, NULL, slope);
    jstr(d, "trigger", PREDICTED);
    jstr(d, "result", "recycled");
    jstr(d, "action", "evict");
    jstr(jget(d, "victim"), "pod", ML_POD);
    assert_int_equal(json_integer_value(jget(d, "free_mib")), 2510);
    check_prediction(d, 20, 49);
    jhas(d, "reason", "predicted to starve node " NODE " in 49 s");
    jhas(d, "reason", ML_NS "/" ML_POD " uses 9000 MiB against a budget of 3000 MiB");
    jhas(d, "reason", "grows 20.0 MiB/s");
    assert_int_equal(growth_queries(e), 1);
    assert_int_equal(mutating(e, NULL), 1);
    json_decref(d);
}

/* Over budget but steady, nobody grows: the projection stays above the floor. */
static void
test_steady_not_a_runaway(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {0, 0, 0, 0, 0};
    json_t *d = decide(e, NULL, slope);

    jstr(d, "result", "skipped_no_candidate");
    assert_true(json_is_null(jget(d, "victim")));
    jstr(d, "action", "none");
    jhas(d, "reason", "not predicted to starve");
    check_prediction(d, 0, -1);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* A tenant within its budget grows fast enough to starve the GPU (10 MiB/s:
 * 1310 MiB free in 120 s, the floor crossed in (2510 - 1536) / 10 = 97.4 s);
 * the over-budget pod is steady: nobody is recycled, and the reason says why.
 * The grower is no victim (within_budget), the steady one not_growing. */
static void
test_grower_within_budget(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {0, 0, 10, 0, 0};
    json_t *d = decide(e, NULL, slope);

    jstr(d, "result", "skipped_no_candidate");
    assert_true(json_is_null(jget(d, "victim")));
    jhas(d, "reason", "predicted to starve node " NODE " in 98 s");
    jhas(d, "reason", "no over-budget pod is growing >= 5 MiB/s");
    check_prediction(d, 0, 98); /* the fastest eligible pod's (ML, steady) */
    jstr(candidate(d, FR_POD), "why_not", "within_budget");
    jstr(candidate(d, ML_POD), "why_not", "not_growing");
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* The over-budget pod shrinks: no growth, no starvation, no victim. */
static void
test_shrinking(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {-20, 0, 0, 0, 0};
    json_t *d = decide(e, NULL, slope);

    jstr(d, "result", "skipped_no_candidate");
    jhas(d, "reason", "not predicted to starve");
    check_prediction(d, -20, -1);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* FALLBACK=largest is never used on a prediction. */
static void
test_no_fallback(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {0, 0, 10, 0, 0}; /* predicted to starve; no runaway */
    const struct kv extra[] = {{"FALLBACK", "largest"}, {NULL, NULL}};
    json_t *d = decide(e, extra, slope);

    jstr(d, "result", "skipped_no_candidate");
    assert_true(json_is_null(jget(d, "victim")));
    jstr(d, "action", "none");
    jhas(d, "reason", "no over-budget pod is growing >= 5 MiB/s");
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* Dry run: would_recycle, the prediction recorded, nothing evicted (at most
 * the dryRun=All probe). */
static void
test_dry_run(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    const struct kv extra[] = {{"DRY_RUN", "true"}, {NULL, NULL}};
    size_t probes = 0;
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    d = decide(e, extra, slope);
    jstr(d, "result", "would_recycle");
    assert_true(json_is_true(jget(d, "dry_run")));
    jstr(jget(d, "victim"), "pod", ML_POD);
    check_prediction(d, 20, 49);
    jhas(d, "reason", "DRY_RUN: nothing was changed");
    assert_int_equal(mutating(e, &probes), 0);
    assert_true(probes <= 1);
    json_decref(d);
}

/* Free already below the floor: decided as GPUVRAMLow, the growth never
 * asked, prediction null (README "Acting before starvation"). */
static void
test_below_floor_as_low(void **state)
{
    struct env *e = *state;
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    assert_int_equal(
        fake_route_file(e->fake, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 0),
        0);
    route_pods(e);
    start(e, NULL);
    deliver(e, PREDICTED);
    wait_rows(e, 1);
    d = the_decision(e);
    jstr(d, "trigger", PREDICTED);
    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", ML_POD);
    assert_int_equal(json_integer_value(jget(d, "free_mib")), 553);
    assert_true(json_is_null(jget(d, "prediction")));
    jhas(d, "reason", "free 553 MiB < floor 1536 MiB");
    assert_int_equal(growth_queries(e), 0);
    assert_int_equal(mutating(e, NULL), 1);
    json_decref(d);
}

/* PREDICT=false: the alert is only recorded (TRIGGER_ALERTS is GPUVRAMLow):
 * no decision, no request. */
static void
test_predict_off(void **state)
{
    struct env *e = *state;
    const struct kv extra[] = {{"PREDICT", "false"}, {NULL, NULL}};
    json_t *alerts, *all;

    route_used(e, STEADY_USED[ML]);
    route_pods(e);
    start(e, extra);
    deliver(e, PREDICTED);
    run_ms(e->base, 300);
    wait_rows(e, 0);
    all = audit_json(e, NULL);
    assert_int_equal(json_array_size(all), 0);
    alerts = audit_json(e, "alerts");
    assert_int_equal(json_array_size(alerts), 1);
    jstr(json_array_get(alerts, 0), "alertname", PREDICTED);
    assert_int_equal(fake_count(e->fake), 0);
    json_decref(all);
    json_decref(alerts);
}

/* Prometheus fails the growth query: skipped_telemetry, the error says which
 * query, nothing is done. */
static void
test_growth_query_fails(void **state)
{
    struct env *e = *state;
    json_t *d;

    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, GROWTH_NEEDLE, 503,
                         "{\"status\":\"error\",\"errorType\":\"unavailable\","
                         "\"error\":\"too many queries\"}"),
        0);
    d = decide(e, NULL, NULL);
    jstr(d, "result", "skipped_telemetry");
    assert_true(json_is_null(jget(d, "victim")));
    assert_true(json_is_null(jget(d, "prediction")));
    jhas(d, "error", "the growth query: prometheus: HTTP 503");
    jhas(d, "reason", "cannot measure the pods' growth, so acting on nothing");
    assert_int_equal(growth_queries(e), 1);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* A growth answer that is not a matrix of numbers: the same, with the
 * reader's words. */
static void
test_growth_answer_malformed(void **state)
{
    static const struct {
        const char *body, *needle;
    } bad[] = {
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"immich\",\"pod\":\"" ML_POD
         "\"},\"values\":[[1,\"12abc\"]]}]}}",
         "\"12abc\": not a number"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[",
         "not JSON"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
         "not a matrix"},
    };
    struct env *e = *state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *d;
        if (i > 0) { /* a fresh engine and database for each */
            teardown(state);
            setup(state);
            e = *state;
        }
        assert_int_equal(
            fake_route_query(e->fake, "GET", QUERY_PATH, GROWTH_NEEDLE, 200, bad[i].body),
            0);
        d = decide(e, NULL, NULL);
        jstr(d, "result", "skipped_telemetry");
        jhas(d, "error", "the growth query: prometheus: ");
        jhas(d, "error", bad[i].needle);
        assert_true(json_is_null(jget(d, "prediction")));
        assert_int_equal(mutating(e, NULL), 0);
        json_decref(d);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grower_recycled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steady_not_a_runaway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grower_within_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shrinking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_below_floor_as_low, setup, teardown),
        cmocka_unit_test_setup_teardown(test_predict_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growth_query_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growth_answer_malformed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
