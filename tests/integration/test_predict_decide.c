/* test_predict_decide.c -- the predictive trigger (PREDICT) decided end to end against a
 * loopback fake Prometheus + API server: what the audit shows and what the API server got
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "engine_harness.h"

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
#define ON_NODE "\"node\":\"" NODE "\""
#define GROWTH_NEEDLE "[120s:1s]" /* the growth subquery: PREDICT_WINDOW 2m, step 1 s */
#define MIB 1048576.0

enum { ML, LS, FR, SV, ST, NPODS };
static const char *const NS[NPODS] = {"immich", "llama-swap", "frigate", "immich",
                                      "portal-stt"};
static const char *const POD[NPODS] = {ML_POD, "llama-swap-6d8f7b5c4-w7r2k", FR_POD,
                                       "immich-server-7c4b9d6f8-m2t9z",
                                       "portal-stt-59b7d8c6f5-j6v3q"};
static const double STEADY_USED[NPODS] = {9000, 1100, 1400, 900, 450};

/* GPU scope: the GPU (uuid) each pod uses, or NULL in node scope. */
static const char *const *on_gpu;

/* Every test's settings, below its own. */
static const struct kv predict_env[] = {
    {"MIN_RUNTIME", "1s"},
    {"SETTLE", "1s"},
    {"DRY_RUN", "false"},
    {"PREDICT", "true"},
    {"HTTP_TIMEOUT", "3s"},
    /* request counts below are exact */
    {"EVENTS", "false"},
    {NULL, NULL},
};

static int
setup(void **state)
{
    on_gpu = NULL;
    return env_setup(state, predict_env);
}

/* The settings (PREDICT=true unless extra says otherwise), clients, store and
 * engine; no device series: free is computed (15360 - used). */
static void
start(struct env *e, const struct kv *extra)
{
    engine_start(e, extra, 0);
    route_no_device(e);
}

/* ",\"uuid\":\"G\"" for pod i in GPU scope, else "". */
static const char *
gpu_label(int i, char *buf, size_t len)
{
    if (on_gpu == NULL)
        return "";
    snprintf(buf, len, ",\"uuid\":\"%s\"", on_gpu[i]);
    return buf;
}

/* The used query's answer: the cast, the ML pod at ml_mib. */
static void
route_used(struct env *e, double ml_mib)
{
    char gl[64];
    char body[2048];
    size_t off = 0;

    off += (size_t)snprintf(body + off, sizeof(body) - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (int i = 0; i < NPODS; i++)
        off += (size_t)snprintf(body + off, sizeof(body) - off,
                                "%s{\"metric\":{\"namespace\":\"%s\",\"pod\":\"%s\"%s},"
                                "\"value\":[1780394400,\"%.0f\"]}",
                                i ? "," : "", NS[i], POD[i], gpu_label(i, gl, sizeof(gl)),
                                (i == ML ? ml_mib : STEADY_USED[i]) * MIB);
    snprintf(body + off, sizeof(body) - off, "]}}");
    assert_true(off < sizeof(body) - 8);
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL, body, 0), 0);
}

/* The growth subquery's answer: each pod's use over the last 120 s, one
 * sample a second, ending at its steady figure, changing by slope[i] MiB/s;
 * with extra_gpu, one more series: the ML pod on that GPU, growing by
 * extra_slope MiB/s. */
static void route_growth_raw(struct env *e, const double slope[NPODS],
                             const char *extra_gpu, double extra_slope, const char *raw);

static void
route_growth_with(struct env *e, const double slope[NPODS], const char *extra_gpu,
                  double extra_slope)
{
    route_growth_raw(e, slope, extra_gpu, extra_slope, NULL);
}

/* route_growth_with(), and raw (series' JSON, or NULL) at the end of the list. */
static void
route_growth_raw(struct env *e, const double slope[NPODS], const char *extra_gpu,
                 double extra_slope, const char *raw)
{
    size_t cap = 64 * 1024, off = 0;
    char *body = malloc(cap), gl[64];

    assert_non_null(body);
    off += (size_t)snprintf(body + off, cap - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                            "\"result\":[");
    for (int i = 0; i < NPODS; i++) {
        off +=
            (size_t)snprintf(body + off, cap - off,
                             "%s{\"metric\":{\"namespace\":\"%s\",\"pod\":\"%s\"%s},"
                             "\"values\":[",
                             i ? "," : "", NS[i], POD[i], gpu_label(i, gl, sizeof(gl)));
        for (int k = 0; k < 120; k++) /* t = now - 119 .. now */
            off += (size_t)snprintf(body + off, cap - off, "%s[%d,\"%.0f\"]",
                                    k ? "," : "", 1780394281 + k,
                                    (STEADY_USED[i] - slope[i] * (119 - k)) * MIB);
        off += (size_t)snprintf(body + off, cap - off, "]}");
    }
    if (extra_gpu != NULL) {
        off += (size_t)snprintf(body + off, cap - off,
                                ",{\"metric\":{\"namespace\":\"%s\",\"pod\":\"%s\","
                                "\"uuid\":\"%s\"},\"values\":[",
                                NS[ML], POD[ML], extra_gpu);
        for (int k = 0; k < 120; k++)
            off +=
                (size_t)snprintf(body + off, cap - off, "%s[%d,\"%.0f\"]", k ? "," : "",
                                 1780394281 + k, (3000 - extra_slope * (119 - k)) * MIB);
        off += (size_t)snprintf(body + off, cap - off, "]}");
    }
    if (raw != NULL)
        off += (size_t)snprintf(body + off, cap - off, ",%s", raw);
    snprintf(body + off, cap - off, "]}}");
    assert_true(off < cap - 8);
    assert_int_equal(
        fake_route_query(e->fake, "GET", QUERY_PATH, GROWTH_NEEDLE, 200, body), 0);
    free(body);
}

static void
route_growth(struct env *e, const double slope[NPODS])
{
    route_growth_with(e, slope, NULL, 0);
}

static void
route_pods(struct env *e)
{
    assert_int_equal(
        fake_route_file(e->fake, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0),
        0);
}

/* Up to 8 s for want decisions, and 100 ms more so an extra one would show. */
static void
wait_decided(struct env *e, size_t want)
{
    wait_rows_then(e, want, 8000, 100);
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
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
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
    /* Free was above the floor before the eviction: the verify waits for what
     * ends the prediction (1536 + 120 x 20), not the floor, and says so. */
    jhas(d, "reason",
         "free VRAM still 2510 MiB, below the 3936 MiB that ends the prediction, when "
         "SETTLE (1s) ran out");
    jint(jget(d, "verify"), "free_mib", 2510);
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 1);
    assert_int_equal(mutating(e, NULL), 1);
    json_decref(d);
}

/* The growth answer also holds series short of a label (a namespace without
 * a pod, a pod without a namespace, neither): they are nobody's growth, and
 * the grower is recycled as above. */
static void
test_growth_series_without_labels(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    route_used(e, STEADY_USED[ML]);
    route_growth_raw(
        e, slope, NULL, 0,
        "{\"metric\":{\"namespace\":\"" ML_NS "\"},\"values\":[[1780394400,"
        "\"1\"]]},{\"metric\":{\"pod\":\"" ML_POD "\"},\"values\":[["
        "1780394400,\"1\"]]},{\"metric\":{},\"values\":[[1780394400,\"1\"]]}");
    route_pods(e);
    start(e, NULL);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
    d = the_decision(e);
    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", ML_POD);
    check_prediction(d, 20, 49);
    json_decref(d);
}

/* The evicted grower's VRAM shows as freed (the ML pod's series gone from the
 * next reading: 11510 MiB free): the verify sees it. */
static void
test_grower_verified_gone(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    route_used(e, STEADY_USED[ML]);
    route_used(e, 0);
    route_growth(e, slope);
    route_pods(e);
    start(e, NULL);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
    d = the_decision(e);
    jstr(d, "result", "recycled");
    jhas(d, "reason", "free VRAM back to 11510 MiB");
    jint(jget(d, "verify"), "free_mib", 11510);
    json_decref(d);
}

/* Over budget but steady, nobody grows: the projection stays above the floor.
 * Nothing in the log says memory ran out. */
static void
test_steady_not_a_runaway(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {0, 0, 0, 0, 0};
    FILE *f = tmpfile();
    char log[16384];
    size_t len;
    int saved;
    json_t *d;

    assert_non_null(f);
    fflush(stderr);
    assert_true((saved = dup(2)) >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    d = decide(e, NULL, slope);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    len = fread(log, 1, sizeof(log) - 1, f);
    log[len] = '\0';
    fclose(f);
    if (strstr(log, "out of memory") != NULL)
        fail_msg("the log says memory ran out:\n%s", log);

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

#define TENANT_PATH "/tenant/unload"

/* The incident's pods, the ML pod (the grower) declaring a release on the
 * fake (which plays the tenant on loopback). */
static void
route_pods_release(struct env *e)
{
    char *text = fake_read_data("remedy-pods-incident.json", NULL), *out, ann[64];
    json_t *doc, *item, *md;
    json_error_t jerr;
    size_t i;

    assert_non_null(text);
    if ((doc = json_loads(text, 0, &jerr)) == NULL)
        fail_msg("remedy-pods-incident.json: %s", jerr.text);
    free(text);
    snprintf(ann, sizeof(ann), "%d" TENANT_PATH, fake_port(e->fake));
    json_array_foreach(json_object_get(doc, "items"), i, item)
    {
        md = json_object_get(item, "metadata");
        if (strcmp(json_string_value(json_object_get(md, "name")), ML_POD) != 0)
            continue;
        json_object_set_new(md, "annotations",
                            json_pack("{ss}", "gpu-vram-watchdog/release", ann));
        json_object_set_new(json_object_get(item, "status"), "podIP",
                            json_string("127.0.0.1"));
    }
    assert_non_null(out = json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    assert_int_equal(fake_route(e->fake, "GET", PODS_PATH, 200, NULL, out, 0), 0);
    free(out);
}

static size_t
count_reqs(struct env *e, const char *method, const char *path)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        n += strcmp(r->fr_method, method) == 0 && strcmp(r->fr_path, path) == 0;
    }
    return n;
}

/* The grower is asked to release first; after the ask the ML pod uses
 * then_ml MiB. Free is above the floor already, so a release counts only when
 * it ends the prediction: free >= floor + horizon x growth = 1536 + 120 x 20
 * = 3936 MiB. */
static json_t *
decide_release(struct env *e, double then_ml)
{
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    const struct kv extra[] = {{"RELEASE_WAIT", "2s"}, {NULL, NULL}};

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    assert_int_equal(fake_route(e->fake, "POST", TENANT_PATH, 200, NULL, "{}", 0), 0);
    route_used(e, STEADY_USED[ML]); /* the decision's reading */
    route_used(e, then_ml);         /* the release's (and the verify's) */
    route_growth(e, slope);
    route_pods_release(e);
    start(e, extra);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
    return the_decision(e);
}

/* The tenant answers 200 and frees 500 MiB: 3010 MiB free, above the floor
 * (as it was before the ask) but still predicted to starve: recycled after
 * RELEASE_WAIT, not "released". */
static void
test_release_must_end_prediction(void **state)
{
    struct env *e = *state;
    json_t *d = decide_release(e, STEADY_USED[ML] - 500);

    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", ML_POD);
    jint(jget(d, "release"), "status", 200);
    jint(jget(d, "release"), "freed_mib", 500);
    jhas(d, "reason", "predicted to starve node " NODE " in 49 s");
    jhas(d, "reason",
         "free VRAM still 3010 MiB, below the 3936 MiB that ends the prediction, after "
         "RELEASE_WAIT");
    assert_int_equal(count_reqs(e, "POST", TENANT_PATH), 1);
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(d);
}

/* The tenant frees 5000 MiB: 7510 free, past 3936: released, nothing evicted. */
static void
test_release_ends_prediction(void **state)
{
    struct env *e = *state;
    json_t *d = decide_release(e, STEADY_USED[ML] - 5000);

    jstr(d, "result", "released");
    jint(jget(d, "release"), "freed_mib", 5000);
    jhas(d, "reason", "nothing was recycled");
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 0);
    json_decref(d);
}

/* The predicted victim was replaced under us (409 on its UID precondition): done,
 * as SPEC step 6 says, and never chased: the replacement is not evicted, no fresh
 * look is taken, and the prediction the act was decided on stays on record. */
static void
test_409_predicted_victim_done(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    json_t *d;

    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 409, "remedy-status-409.json", 0), 0);
    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    route_used(e, STEADY_USED[ML]); /* 2510 free, predicted */
    route_growth(e, slope);
    route_pods(e);
    start(e, NULL);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
    d = the_decision(e);
    jstr(d, "result", "recycled");
    assert_int_equal(json_integer_value(jget(d, "free_mib")), 2510);
    assert_true(json_is_object(jget(d, "prediction")));
    jhas(d, "reason", "409 on the UID precondition; the replacement is left alone");
    assert_int_equal(count_reqs(e, "POST", ML_EVICT), 1);
    json_decref(d);
}

/* Free already below the floor: decided as GPUVRAMLow, the growth never
 * asked, prediction null (docs/guide.md "Acting before starvation"). */
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
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 1);
    d = the_decision(e);
    jstr(d, "trigger", PREDICTED);
    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", ML_POD);
    assert_int_equal(json_integer_value(jget(d, "free_mib")), 553);
    assert_true(json_is_null(jget(d, "prediction")));
    jhas(d, "reason", "free 553 MiB < floor 1536 MiB");
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 0);
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
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    run_ms(e->base, 300);
    wait_decided(e, 0);
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
    jhas(d, "reason",
         "free 2510 MiB >= floor 1536 MiB; cannot measure the pods' growth, "
         "so acting on nothing; free computed as");
    /* Not "nothing to do": the trend could not be judged at all. */
    assert_null(strstr(json_string_value(jget(d, "reason")), "nothing to do"));
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 1);
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
            env_teardown(state);
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

/* The audit's decision about GPU gpu (a new reference). */
static json_t *
decision_on(json_t *all, const char *gpu)
{
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *d = json_array_get(all, i);
        if (json_is_string(jget(d, "gpu")) &&
            strcmp(json_string_value(jget(d, "gpu")), gpu) == 0)
            return json_incref(d);
    }
    fail_msg("no decision about %s", gpu);
    return NULL;
}

/* GPU scope, a trigger naming no GPU: one decision per GPU, and the node's
 * growth query asked once for both, each GPU judged on its own series. GPU
 * A (the ML pod at 12000 MiB, drifting 20 MiB/s, and llama-swap: 2260 MiB
 * free, the floor crossed in (2260 - 1536) / 20 = 36.2 s) is recycled; GPU
 * B (the steady rest: 12610 free) is not. */
static void
test_gpus_share_growth_query(void **state)
{
    static const char *const gpus[NPODS] = {"GPU-aaaa", "GPU-aaaa", "GPU-bbbb",
                                            "GPU-bbbb", "GPU-bbbb"};
    const struct kv gpu_scope[] = {
        {"USED_QUERY",
         "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    struct env *e = *state;
    json_t *all, *a, *b;

    on_gpu = gpus;
    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    route_used(e, 12000);
    route_growth(e, slope);
    route_pods(e);
    start(e, gpu_scope);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 2);
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 1);
    all = audit_json(e, NULL);
    assert_int_equal(json_array_size(all), 2);
    a = decision_on(all, "GPU-aaaa");
    b = decision_on(all, "GPU-bbbb");
    jstr(a, "result", "recycled");
    jstr(jget(a, "victim"), "pod", ML_POD);
    assert_int_equal(json_integer_value(jget(a, "free_mib")), 2260);
    check_prediction(a, 20, 37);
    jhas(a, "reason", "predicted to starve GPU GPU-aaaa in 37 s");
    jstr(b, "result", "skipped_no_candidate");
    assert_true(json_is_null(jget(b, "victim")));
    assert_int_equal(json_integer_value(jget(b, "free_mib")), 12610);
    assert_int_equal(mutating(e, NULL), 1);
    json_decref(a);
    json_decref(b);
    json_decref(all);
}

/* GPU scope: the ML pod is steady on GPU A, the GPU it is judged on; a series
 * of the same pod on GPU B grows 20 MiB/s. GPU A's prediction counts GPU A's
 * series only: not predicted to starve, nothing recycled. */
static void
test_other_gpu_growth_not_counted(void **state)
{
    static const char *const gpus[NPODS] = {"GPU-aaaa", "GPU-aaaa", "GPU-bbbb",
                                            "GPU-bbbb", "GPU-bbbb"};
    const struct kv gpu_scope[] = {
        {"USED_QUERY",
         "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    const double slope[NPODS] = {0, 0, 0, 0, 0};
    struct env *e = *state;
    json_t *all, *a;

    on_gpu = gpus;
    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    route_used(e, 12000);
    route_growth_with(e, slope, "GPU-bbbb", 20);
    route_pods(e);
    start(e, gpu_scope);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_decided(e, 2);
    all = audit_json(e, NULL);
    a = decision_on(all, "GPU-aaaa");
    jstr(a, "result", "skipped_no_candidate");
    assert_true(json_is_null(jget(a, "victim")));
    jhas(a, "reason", "not predicted to starve");
    check_prediction(a, 0, -1);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(a);
    json_decref(all);
}

/* Two nodes predicted at once: each asks its own node's growth (a call in
 * flight is shared only by the same query), neither is judged on the
 * other's. */
static void
test_two_nodes_two_growth_queries(void **state)
{
    const struct kv per_node[] = {
        {"USED_QUERY",
         "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    struct env *e = *state;
    char body[512];
    int n1 = 0, n2 = 0;

    route_used(e, STEADY_USED[ML]); /* node 1's used query */
    route_used(e, STEADY_USED[ML]); /* node 2's */
    /* Then the growth queries, answered after 300 ms: both are out at once. */
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                                "{\"status\":\"success\",\"data\":{"
                                "\"resultType\":\"matrix\",\"result\":[]}}",
                                300),
                     0);
    route_pods(e);
    start(e, per_node);
    snprintf(body, sizeof(body),
             "{\"version\":\"4\",\"alerts\":["
             "{\"status\":\"firing\",\"labels\":{\"alertname\":\"" PREDICTED
             "\",\"node\":\"gpu-node-1\"}},"
             "{\"status\":\"firing\",\"labels\":{\"alertname\":\"" PREDICTED
             "\",\"node\":\"gpu-node-2\"}}]}");
    assert_int_equal(deliver_body(e, body), 2);
    wait_decided(e, 2);
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 2);
    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (query_has(r, GROWTH_NEEDLE)) {
            n1 += query_has(r, "node=\"gpu-node-1\"");
            n2 += query_has(r, "node=\"gpu-node-2\"");
        }
    }
    assert_int_equal(n1, 1);
    assert_int_equal(n2, 1);
}

/* The daemon stops while the growth query of a trigger naming a GPU is out:
 * the row ends failed, interrupted, still naming its GPU. */
static void
test_stop_while_predicting_gpu(void **state)
{
    static const char *const gpus[NPODS] = {"GPU-aaaa", "GPU-aaaa", "GPU-bbbb",
                                            "GPU-bbbb", "GPU-bbbb"};
    const struct kv gpu_scope[] = {
        {"USED_QUERY",
         "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {NULL, NULL}};
    struct env *e = *state;
    json_t *d;

    on_gpu = gpus;
    route_used(e, STEADY_USED[ML]);
    /* The growth query is the next plain query: answered after 3 s. */
    assert_int_equal(fake_route(e->fake, "GET", QUERY_PATH, 200, NULL,
                                "{\"status\":\"success\",\"data\":{"
                                "\"resultType\":\"matrix\",\"result\":[]}}",
                                3000),
                     0);
    route_pods(e);
    start(e, gpu_scope);
    deliver_n(e, PREDICTED, "firing", ON_NODE ",\"uuid\":\"GPU-aaaa\"", 1);
    for (int i = 0; i < 300 && count_queries(e, GROWTH_NEEDLE) == 0; i++)
        run_ms(e->base, 10);
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 1);
    remedy_shutdown(e->r, NULL, NULL);
    assert_int_equal(remedy_in_flight(e->r), 0);
    d = the_decision(e);
    jstr(d, "result", "failed");
    jstr(d, "gpu", "GPU-aaaa");
    jstr(d, "error", STORE_INTERRUPTED_ERROR);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* --- mutation survivors of receiver/decide (issue 39) ---------------------- */

/* The runaway is recycled; the steady tenants within their budgets keep that
 * reason in the row (within_budget), never "not_growing": not growing is said
 * only of an eligible pod the trend passed over. */
static void
test_steady_tenants_keep_their_why(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    const struct kv extra[] = {{"DRY_RUN", "true"}, {NULL, NULL}};
    json_t *d;

    d = decide(e, extra, slope);
    jstr(d, "result", "would_recycle");
    jstr(jget(d, "victim"), "pod", ML_POD);
    for (int i = LS; i < NPODS; i++) {
        json_t *c = candidate(d, POD[i]);
        jbool(c, "eligible", 0);
        jstr(c, "why_not", "within_budget");
    }
    json_decref(d);
}

/* PREDICT=true, and a plain trigger at or above the floor: nothing to do, as
 * without PREDICT; only the predicted alert asks for the pods' growth. */
static void
test_plain_trigger_above_floor_not_predicted(void **state)
{
    struct env *e = *state;
    const double slope[NPODS] = {20, 0, 0, 0, 0};
    json_t *d;

    route_used(e, STEADY_USED[ML]);
    route_growth(e, slope);
    route_pods(e);
    start(e, NULL);
    deliver_n(e, "GPUVRAMLow", "firing", ON_NODE, 1);
    wait_decided(e, 1);
    d = the_decision(e);
    jstr(d, "trigger", "GPUVRAMLow");
    jstr(d, "result", "skipped_recovered");
    assert_true(json_is_null(jget(d, "prediction")));
    assert_int_equal(count_queries(e, GROWTH_NEEDLE), 0);
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(d);
}

/* A predicted trigger on a node of five GPUs, MAX_CONCURRENT_DECISIONS=2:
 * the GPUs that wait their turn share one reading, and each still judges
 * its growth on its own pod list: five rows, nothing predicted to starve. */
static void
test_queued_gpus_predicted(void **state)
{
    static const char *const gpus[NPODS] = {"GPU-aaaa", "GPU-bbbb", "GPU-cccc",
                                            "GPU-dddd", "GPU-eeee"};
    const struct kv extra[] = {
        {"USED_QUERY",
         "sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
        {"MAX_CONCURRENT_DECISIONS", "2"},
        {NULL, NULL}};
    const double slope[NPODS] = {0, 0, 0, 0, 0};
    struct env *e = *state;
    json_t *all;

    on_gpu = gpus;
    route_used(e, STEADY_USED[ML]);
    route_growth(e, slope);
    route_pods(e);
    start(e, extra);
    deliver_n(e, PREDICTED, "firing", ON_NODE, 1);
    wait_rows_then(e, NPODS, 8000, 100);
    all = audit_json(e, NULL);
    assert_int_equal(json_array_size(all), NPODS);
    for (size_t i = 0; i < NPODS; i++) {
        json_t *d = json_array_get(all, i);
        assert_true(json_is_string(jget(d, "gpu")));
        jstr(d, "result", "skipped_no_candidate");
        jhas(d, "reason", "not predicted to starve");
    }
    assert_int_equal(mutating(e, NULL), 0);
    json_decref(all);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grower_recycled, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_growth_series_without_labels, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_grower_verified_gone, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_steady_not_a_runaway, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_grower_within_budget, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_shrinking, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_no_fallback, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_release_must_end_prediction, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_release_ends_prediction, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_below_floor_as_low, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_409_predicted_victim_done, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_predict_off, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_growth_query_fails, setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_growth_answer_malformed, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_gpus_share_growth_query, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_other_gpu_growth_not_counted, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_stop_while_predicting_gpu, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_two_nodes_two_growth_queries, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_steady_tenants_keep_their_why, setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(test_plain_trigger_above_floor_not_predicted,
                                        setup, env_teardown),
        cmocka_unit_test_setup_teardown(test_queued_gpus_predicted, setup, env_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
