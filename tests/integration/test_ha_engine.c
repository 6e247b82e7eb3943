/* test_ha_engine.c -- high availability in the decision engine, against the loopback
 * fake: the fence before an eviction (refused, failed, late, granted), a follower
 * writes no Event, and the brakes carried by the Lease (SETTLE windows and the hour)
 * hold a new leader back */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "engine_harness.h"
#include "gate.h"

#define NODE "gpu-node-1"
#define QUERY_PATH "/api/v1/query"
#define PODS_PATH "/api/v1/pods"
#define ML_NS "immich"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define ML_EVICT "/api/v1/namespaces/" ML_NS "/pods/" ML_POD "/eviction"
#define ON_NODE "\"node\":\"" NODE "\""

static const struct kv ha_env[] = {
    {"MIN_RUNTIME", "1s"},
    {"SETTLE", "1s"},
    {"DRY_RUN", "false"},
    {"HTTP_TIMEOUT", "3s"},
    {"HTTP_CONNECT_TIMEOUT", "1s"},
    {"EVENTS", "false"},
    {NULL, NULL},
};

/* --- a gate standing in for the Lease ------------------------------------ */

static struct {
    int leading;
    int refuse;       /* go_fence refuses */
    gate_fence_fn cb; /* the fence waiting, or NULL */
    void *arg;
    int asked;
    char verb[16], pod[128], node[128];
} fg;

static int
fg_leading(void *a)
{
    return fg.leading;
}

static struct gate_wait *
fg_fence(const struct gate_act *act, gate_fence_fn cb, void *arg, char *why, size_t len,
         void *a)
{
    fg.asked++;
    snprintf(fg.verb, sizeof(fg.verb), "%s", act->ga_verb);
    snprintf(fg.pod, sizeof(fg.pod), "%s/%s", act->ga_namespace, act->ga_pod);
    snprintf(fg.node, sizeof(fg.node), "%s", act->ga_node);
    if (fg.refuse) {
        snprintf(why, len,
                 "this replica may not act: it does not hold the Lease (Lease "
                 "gpu-vram-watchdog/gpu-vram-watchdog)");
        return NULL;
    }
    fg.cb = cb;
    fg.arg = arg;
    return (struct gate_wait *)&fg; /* a token; never dereferenced by the engine */
}

static void
fg_forget(struct gate_wait *w, void *a)
{
    fg.cb = NULL;
}

static void
install(int leading, int refuse)
{
    struct gate_ops ops = {fg_leading, fg_fence, fg_forget, NULL};

    memset(&fg, 0, sizeof(fg));
    fg.leading = leading;
    fg.refuse = refuse;
    gate_install(&ops);
}

static int
setup(void **state)
{
    return env_setup(state, ha_env);
}

static int
teardown(void **state)
{
    gate_install(NULL);
    return env_teardown(state);
}

static size_t
count(struct env *e, const char *method, const char *path)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++) {
        const struct fake_req *r = fake_req(e->fake, i);
        if (strcmp(r->fr_method, method) == 0 && strcmp(r->fr_path, path) == 0)
            n++;
    }
    return n;
}

static void
incident(struct env *e, const struct kv *extra)
{
    assert_int_equal(
        fake_route_file(e->fake, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 0),
        0);
    assert_int_equal(
        fake_route_file(e->fake, "GET", PODS_PATH, 200, "remedy-pods-incident.json", 0),
        0);
    assert_int_equal(
        fake_route_file(e->fake, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json", 0),
        0);
    assert_int_equal(
        fake_route_file(e->fake, "POST", ML_EVICT, 201, "remedy-status-201.json", 0), 0);
    engine_start(e, extra, 0);
    route_no_device(e);
}

static int64_t
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The only decision the audit lists (the caller decrefs all). */
static json_t *
only(struct env *e, json_t **all)
{
    *all = decisions(e);
    assert_int_equal(json_array_size(*all), 1);
    return json_array_get(*all, 0);
}

/* --- the fence ------------------------------------------------------------ */

/* A replica that may not act sends nothing: failed, naming the Lease. */
static void
test_fence_refused(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    install(1, 1);
    incident(e, NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(fg.asked, 1);
    assert_string_equal(fg.verb, "evict");
    assert_string_equal(fg.pod, ML_NS "/" ML_POD);
    assert_string_equal(fg.node, NODE);
    assert_int_equal(count(e, "POST", ML_EVICT), 0);
    d = only(e, &all);
    jstr(d, "result", "failed");
    jhas(d, "error", "lease: this replica may not act: it does not hold the Lease");
    jhas(d, "reason", "the evict of " ML_NS "/" ML_POD " was not sent");
    jstr(jget(d, "victim"), "pod", ML_POD);
    json_decref(all);
}

/* The eviction waits for the fence; granted, it is sent, once. */
static void
test_fence_granted(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    install(1, 0);
    incident(e, NULL);
    deliver(e, ON_NODE);
    for (int i = 0; i < 200 && fg.cb == NULL; i++)
        run_ms(e->base, 10);
    assert_non_null(fg.cb);
    run_ms(e->base, 100);
    assert_int_equal(count(e, "POST", ML_EVICT), 0); /* not before the Lease says so */
    fg.cb(1, 0, NULL, fg.arg);
    fg.cb = NULL;
    wait_rows(e, 1, 5000);
    assert_int_equal(count(e, "POST", ML_EVICT), 1);
    assert_int_equal(fg.asked, 1);
    d = only(e, &all);
    jstr(d, "result", "recycled");
    jnull(d, "error");
    json_decref(all);
}

/* The fencing write failed (a 409: another replica wrote the Lease): nothing
 * is sent. */
static void
test_fence_write_failed(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    install(1, 0);
    incident(e, NULL);
    deliver(e, ON_NODE);
    for (int i = 0; i < 200 && fg.cb == NULL; i++)
        run_ms(e->base, 10);
    assert_non_null(fg.cb);
    fg.cb(0, 0,
          "the act could not be recorded in Lease gpu-vram-watchdog/gpu-vram-watchdog: "
          "another write came first (409)",
          fg.arg);
    fg.cb = NULL;
    wait_rows(e, 1, 5000);
    assert_int_equal(count(e, "POST", ML_EVICT), 0);
    d = only(e, &all);
    jstr(d, "result", "failed");
    jhas(d, "error", "another write came first (409)");
    json_decref(all);
}

/* The daemon stops while the fence is out: the row is completed, nothing sent. */
static void
test_fence_cancelled(void **state)
{
    struct env *e = *state;
    json_t *all, *d;

    install(1, 0);
    incident(e, NULL);
    deliver(e, ON_NODE);
    for (int i = 0; i < 200 && fg.cb == NULL; i++)
        run_ms(e->base, 10);
    assert_non_null(fg.cb);
    remedy_shutdown(e->r, NULL, NULL);
    assert_int_equal(remedy_in_flight(e->r), 1); /* it waits for the fence */
    fg.cb(0, 1, "the daemon stopped before the act was recorded", fg.arg);
    fg.cb = NULL;
    assert_int_equal(remedy_in_flight(e->r), 0);
    assert_int_equal(count(e, "POST", ML_EVICT), 0);
    d = only(e, &all);
    jstr(d, "result", "failed");
    jhas(d, "reason",
         "before the evict of " ML_NS "/" ML_POD " was recorded in the Lease");
    json_decref(all);
}

/* A decision that ends after its replica stopped leading writes no Event. */
static void
test_follower_writes_no_event(void **state)
{
    struct env *e = *state;
    static const struct kv events_on[] = {{"EVENTS", "true"}, {NULL, NULL}};

    install(0, 1); /* stopped leading while the decision ran */
    incident(e, events_on);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    run_ms(e->base, 200);
    for (size_t i = 0; i < fake_count(e->fake); i++)
        if (strstr(fake_req(e->fake, i)->fr_path, "/events") != NULL)
            fail_msg("an Event was written by a replica that does not lead");
}

/* --- the brakes in the Lease ---------------------------------------------- */

/* A window the old leader opened holds the new one back (coalesced, naming
 * the old victim); a window over already does not. */
static void
test_imported_window_holds_back(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256];
    json_t *all, *d;
    int64_t now = wall_ms();

    incident(e, settle);
    snprintf(
        text, sizeof(text),
        "{\"v\":1,\"settle\":[{\"node\":\"" NODE "\",\"until_ms\":%lld,\"victim\":"
        "\"ml/onnx-1\",\"dry_run\":false},{\"node\":\"gpu-node-9\",\"until_ms\":%lld,"
        "\"victim\":\"x/y\",\"dry_run\":false}],\"recycles_ms\":[]}",
        (long long)(now + 30000), (long long)(now - 1000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "inside the SETTLE window after recycling ml/onnx-1");
    json_decref(all);
    /* Exported again: the open window only. */
    char *out = remedy_brakes_export(e->r, NULL, now);
    assert_non_null(out);
    assert_non_null(strstr(out, "\"node\":\"" NODE "\""));
    assert_null(strstr(out, "gpu-node-9"));
    free(out);
}

/* A window whose "gpu" is empty is the node's (no GPU is named ""): it holds
 * a node-wide trigger back, and goes out again naming no GPU at all. */
static void
test_imported_empty_gpu_is_the_node(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256], *out;
    json_t *all, *d, *j, *w;
    int64_t now = wall_ms();

    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"" NODE "\",\"gpu\":\"\",\"until_ms\":%lld,"
             "\"victim\":\"ml/onnx-1\",\"dry_run\":false}],\"recycles_ms\":[]}",
             (long long)(now + 30000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "inside the SETTLE window after recycling ml/onnx-1");
    assert_true(json_is_null(json_object_get(d, "gpu")));
    json_decref(all);
    out = remedy_brakes_export(e->r, NULL, now);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "settle")), 1);
    w = json_array_get(json_object_get(j, "settle"), 0);
    assert_string_equal(json_string_value(json_object_get(w, "node")), NODE);
    assert_null(json_object_get(w, "gpu"));
    json_decref(j);
    free(out);
}

/* A clock far ahead cannot make a window longer than SETTLE. */
static void
test_window_clamped_to_settle(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256], *out;
    int64_t now = wall_ms();
    json_t *j, *w;

    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"" NODE
             "\",\"gpu\":\"GPU-a\",\"until_ms\":%lld,"
             "\"victim\":\"ml/onnx-1\",\"dry_run\":true}],\"recycles_ms\":[%lld]}",
             (long long)(now + 36000000), (long long)(now + 3600000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    out = remedy_brakes_export(e->r, NULL, now);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    w = json_array_get(json_object_get(j, "settle"), 0);
    assert_non_null(w);
    assert_true(json_integer_value(json_object_get(w, "until_ms")) <= now + 60000 + 50);
    assert_string_equal(json_string_value(json_object_get(w, "gpu")), "GPU-a");
    assert_true(json_is_true(json_object_get(w, "dry_run")));
    /* A recycle "in the future" counts as now, not later. */
    assert_true(json_integer_value(
                    json_array_get(json_object_get(j, "recycles_ms"), 0)) <= now + 50);
    json_decref(j);
    free(out);
}

/* The hour's recycles the old leader made count for the new one. */
static void
test_imported_recycles_rate_limit(void **state)
{
    struct env *e = *state;
    static const struct kv max2[] = {{"MAX_RECYCLES_PER_HOUR", "2"}, {NULL, NULL}};
    char text[256], err[256];
    json_t *all, *d;
    int64_t now = wall_ms();

    incident(e, max2);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[],\"recycles_ms\":[%lld,%lld,%lld]}",
             (long long)(now - 600000), (long long)(now - 1200000),
             (long long)(now - 7200000)); /* the last is over the hour */
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "rate_limited");
    assert_int_equal(count(e, "POST", ML_EVICT), 0);
    json_decref(all);
}

/* A recycle the old leader made that leaves the hour stops counting, and
 * counts once: with MAX_RECYCLES_PER_HOUR=3 and one imported recycle still
 * inside the hour, two more recycles are allowed. */
static void
test_imported_recycle_leaves_the_hour(void **state)
{
    struct env *e = *state;
    static const struct kv max3[] = {
        {"MAX_RECYCLES_PER_HOUR", "3"}, {"SETTLE", "0"}, {NULL, NULL}};
    char text[256], err[256];
    json_t *all;
    int64_t now = wall_ms();

    incident(e, max3);
    assert_int_equal(
        fake_route_file(e->fake, "GET", QUERY_PATH, 200, "remedy-prom-incident.json", 0),
        0);
    assert_int_equal(
        fake_route_file(e->fake, "GET", QUERY_PATH, 200, "remedy-prom-recovered.json", 0),
        0);
    /* One leaves the hour 200 ms from now, one stays. */
    snprintf(text, sizeof(text), "{\"v\":1,\"settle\":[],\"recycles_ms\":[%lld,%lld]}",
             (long long)(now - 3599800), (long long)(now - 60000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    run_ms(e->base, 400);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    deliver(e, ON_NODE);
    wait_rows(e, 2, 5000);
    all = decisions(e);
    jstr(json_array_get(all, 0), "result", "recycled");
    jstr(json_array_get(all, 1), "result", "recycled");
    assert_int_equal(count(e, "POST", ML_EVICT), 2);
    json_decref(all);
}

/* A failover hands this replica a full hour (MAX_RECYCLES_PER_HOUR=2 in the
 * Lease) while its own eviction waits for the fence: the eviction goes out
 * (it passed the brake before), and the hour it writes back still holds at
 * most 2 recycles. */
static void
test_full_hour_stays_full(void **state)
{
    struct env *e = *state;
    static const struct kv max2[] = {{"MAX_RECYCLES_PER_HOUR", "2"}, {NULL, NULL}};
    char text[256], err[256], *out;
    json_t *j;
    int64_t now = wall_ms();

    install(1, 0);
    incident(e, max2);
    deliver(e, ON_NODE);
    for (int i = 0; i < 200 && fg.cb == NULL; i++)
        run_ms(e->base, 10);
    assert_non_null(fg.cb);
    snprintf(text, sizeof(text), "{\"v\":1,\"settle\":[],\"recycles_ms\":[%lld,%lld]}",
             (long long)(now - 600000), (long long)(now - 1200000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    fg.cb(1, 0, NULL, fg.arg);
    fg.cb = NULL;
    wait_rows(e, 1, 5000);
    assert_int_equal(count(e, "POST", ML_EVICT), 1);
    out = remedy_brakes_export(e->r, NULL, wall_ms());
    assert_non_null(j = json_loads(out, 0, NULL));
    assert_int_equal(json_array_size(json_object_get(j, "recycles_ms")), 2);
    json_decref(j);
    free(out);
}

/* A recycle the old leader made that has just left the hour is not written
 * back: after a brake check drops it (this replica's own eviction is then
 * refused by the fence), the Lease gets the one recycle left. */
static void
test_recycle_left_the_hour_not_exported(void **state)
{
    struct env *e = *state;
    static const struct kv max2[] = {{"MAX_RECYCLES_PER_HOUR", "2"}, {NULL, NULL}};
    char text[256], err[256], *out;
    json_t *j;
    int64_t now = wall_ms();

    install(1, 1);
    incident(e, max2);
    snprintf(text, sizeof(text), "{\"v\":1,\"settle\":[],\"recycles_ms\":[%lld,%lld]}",
             (long long)(now - 3599800), (long long)(now - 60000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    run_ms(e->base, 400);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    assert_int_equal(count(e, "POST", ML_EVICT), 0);
    out = remedy_brakes_export(e->r, NULL, wall_ms());
    assert_non_null(j = json_loads(out, 0, NULL));
    assert_int_equal(json_array_size(json_object_get(j, "recycles_ms")), 1);
    json_decref(j);
    free(out);
}

/* Two windows for one node ending at the same instant: the first read names
 * the victim. */
static void
test_same_window_twice_first_victim(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256];
    json_t *all, *d;
    int64_t now = wall_ms();

    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"" NODE "\",\"until_ms\":%lld,\"victim\":"
             "\"ml/first\",\"dry_run\":false},{\"node\":\"" NODE "\",\"until_ms\":%lld,"
             "\"victim\":\"ml/second\",\"dry_run\":false}],\"recycles_ms\":[]}",
             (long long)(now + 30000), (long long)(now + 30000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "after recycling ml/first");
    json_decref(all);
}

/* The annotation's size limit: 65536 bytes are read, one more is not. */
static void
test_brakes_text_limit(void **state)
{
    struct env *e = *state;
    static const char head[] = "{\"v\":1,\"settle\":[],\"recycles_ms\":[]}";
    char *text = malloc(65538), err[256];
    int64_t now = wall_ms();

    assert_non_null(text);
    incident(e, NULL);
    memset(text, ' ', 65537);
    memcpy(text, head, strlen(head)); /* JSON allows the trailing blanks */
    text[65536] = '\0';
    if (remedy_brakes_import(e->r, text, now, err, sizeof(err)) != 0)
        fail_msg("65536 bytes refused: %s", err);
    text[65536] = ' ';
    text[65537] = '\0';
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "65536"));
    free(text);
}

/* As many recycles as the ring can hold (4096) are read; with
 * MAX_RECYCLES_PER_HOUR=0 (no limit) recycles are read and not counted. */
static void
test_brakes_recycles_limits(void **state)
{
    struct env *e = *state;
    static const struct kv nolimit[] = {{"MAX_RECYCLES_PER_HOUR", "0"}, {NULL, NULL}};
    size_t cap = 4097 * 24 + 128, off = 0;
    char *text = malloc(cap), err[256], *out;
    int64_t now = wall_ms();

    assert_non_null(text);
    incident(e, nolimit);
    off += (size_t)snprintf(text, cap, "{\"v\":1,\"settle\":[],\"recycles_ms\":[");
    for (int i = 0; i < 4096; i++)
        off += (size_t)snprintf(text + off, cap - off, "%s%lld", i ? "," : "",
                                (long long)(now - 1000 - i));
    snprintf(text + off, cap - off, "]}");
    if (remedy_brakes_import(e->r, text, now, err, sizeof(err)) != 0)
        fail_msg("4096 recycles refused: %s", err);
    out = remedy_brakes_export(e->r, NULL, now);
    assert_non_null(strstr(out, "\"recycles_ms\":[]"));
    free(out);
    free(text);
}

/* What the Lease says replaces what this replica remembers: a window it read
 * before is gone once a Lease without it is read. */
static void
test_import_replaces_windows(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256];
    json_t *all, *d;
    int64_t now = wall_ms();

    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"" NODE "\",\"until_ms\":%lld,\"victim\":"
             "\"ml/onnx-1\",\"dry_run\":false}],\"recycles_ms\":[]}",
             (long long)(now + 30000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    assert_int_equal(remedy_brakes_import(e->r,
                                          "{\"v\":1,\"settle\":[],\"recycles_ms\":[]}",
                                          now, err, sizeof(err)),
                     0);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "recycled");
    json_decref(all);
}

/* A trigger waiting its turn (MAX_CONCURRENT_DECISIONS=1) when the Lease
 * read meanwhile holds its node back: it is coalesced when its turn comes,
 * nothing is sent for it. */
static void
test_queued_held_back_by_lease(void **state)
{
    struct env *e = *state;
    static const struct kv one[] = {
        {"MAX_CONCURRENT_DECISIONS", "1"}, {"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256];
    json_t *all;
    int64_t now = wall_ms();

    incident(e, one);
    deliver(e, "\"node\":\"gpu-node-2\""); /* takes the one slot */
    deliver(e, ON_NODE);                   /* waits */
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"" NODE "\",\"until_ms\":%lld,\"victim\":"
             "\"ml/onnx-1\",\"dry_run\":false}],\"recycles_ms\":[]}",
             (long long)(now + 30000));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    wait_rows(e, 2, 8000);
    all = decisions(e);
    jstr(json_array_get(all, 1), "node", NODE);
    jstr(json_array_get(all, 1), "result", "coalesced");
    jhas(json_array_get(all, 1), "reason", "after recycling ml/onnx-1");
    assert_int_equal(count(e, "POST", ML_EVICT), 1); /* gpu-node-2's only */
    json_decref(all);
}

/* An act about to be taken rides in the export already. */
static void
test_export_counts_the_pending_act(void **state)
{
    struct env *e = *state;
    struct gate_act a = {
        .ga_verb = "evict", .ga_namespace = ML_NS, .ga_pod = ML_POD, .ga_node = NODE};
    struct gate_act rel = {.ga_verb = "release", .ga_node = NODE, .ga_url = "http://x"};
    int64_t now = wall_ms();
    char *out;

    incident(e, NULL);
    out = remedy_brakes_export(e->r, &a, now);
    assert_non_null(strstr(out, "\"victim\":\"" ML_NS "/" ML_POD "\""));
    assert_non_null(strstr(out, "\"recycles_ms\":[")); /* one entry: now */
    assert_null(strstr(out, "\"recycles_ms\":[]"));
    free(out);
    /* A release opens no window and counts for nothing (SPEC). */
    out = remedy_brakes_export(e->r, &rel, now);
    assert_string_equal(out, "{\"v\":1,\"settle\":[],\"recycles_ms\":[]}");
    free(out);
}

/* The Lease full of windows (256, as many as it carries) is read whole; the
 * export that counts an act about to be taken stays inside what the next
 * leader reads (else it refused the text and every brake with it). */
static void
test_full_lease_round_trip(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    struct gate_act a = {
        .ga_verb = "evict", .ga_namespace = ML_NS, .ga_pod = ML_POD, .ga_node = NODE};
    size_t cap = 256 * 128 + 128, off = 0;
    char *text = malloc(cap), err[256], *out;
    int64_t now = wall_ms();
    json_t *all, *d, *j;

    assert_non_null(text);
    incident(e, settle);
    off += (size_t)snprintf(text, cap, "{\"v\":1,\"settle\":[");
    for (int i = 0; i < 256; i++) { /* the last one is NODE's */
        char name[64];
        if (i == 255)
            snprintf(name, sizeof(name), "%s", NODE);
        else
            snprintf(name, sizeof(name), "gpu-node-x%d", i);
        off += (size_t)snprintf(
            text + off, cap - off,
            "%s{\"node\":\"%s\",\"until_ms\":%lld,\"victim\":\"ml/onnx-%d\","
            "\"dry_run\":false}",
            i ? "," : "", name, (long long)(now + 30000), i);
    }
    assert_true(off < cap - 32);
    snprintf(text + off, cap - off, "],\"recycles_ms\":[]}");
    if (remedy_brakes_import(e->r, text, now, err, sizeof(err)) != 0)
        fail_msg("256 windows refused: %s", err);
    free(text);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    d = only(e, &all);
    jstr(d, "result", "coalesced");
    jhas(d, "reason", "inside the SETTLE window after recycling ml/onnx-255");
    json_decref(all);
    /* An act about to be taken on another node: still at most 256 windows,
     * its own among them, and the next leader reads the text. */
    a.ga_node = "gpu-node-new";
    out = remedy_brakes_export(e->r, &a, now);
    assert_non_null(out);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "settle")), 256);
    json_decref(j);
    assert_non_null(strstr(out, "\"node\":\"gpu-node-new\""));
    if (remedy_brakes_import(e->r, out, now, err, sizeof(err)) != 0)
        fail_msg("the next leader refuses the export: %s", err);
    free(out);
}

/* An annotation someone else wrote, or garbled: refused, brakes kept. */
static void
test_hostile_brakes(void **state)
{
    struct env *e = *state;
    const char *bad[] = {
        "not json",
        "[]",
        "{\"settle\":{},\"recycles_ms\":[]}",
        "{\"settle\":[],\"recycles_ms\":[\"1\"]}",
        "{\"settle\":[{\"node\":7,\"until_ms\":1,\"victim\":\"a\",\"dry_run\":false}],"
        "\"recycles_ms\":[]}",
        "{\"settle\":[{\"node\":\"n\",\"until_ms\":\"1\",\"victim\":\"a\",\"dry_run\":false}],"
        "\"recycles_ms\":[]}",
        "{\"settle\":[{\"node\":\"\",\"until_ms\":1,\"victim\":\"a\",\"dry_run\":false}],"
        "\"recycles_ms\":[]}",
        "{\"settle\":[{\"node\":\"n\",\"gpu\":7,\"until_ms\":1,\"victim\":\"a\","
        "\"dry_run\":false}],\"recycles_ms\":[]}",
        "{\"settle\":[{\"node\":\"n\",\"until_ms\":1,\"victim\":\"a\",\"dry_run\":\"false\"}],"
        "\"recycles_ms\":[]}",
        "{\"settle\":[{\"node\":\"n\",\"until_ms\":1,\"victim\":5,\"dry_run\":false}],"
        "\"recycles_ms\":[]}",
        NULL, /* a GPU of 257 bytes */
        NULL, /* a node of 254 bytes */
    };
    char *gpu257 = malloc(1024), *node254 = malloc(1024);
    char g[258], n[255];

    assert_non_null(gpu257);
    assert_non_null(node254);
    memset(g, 'g', sizeof(g) - 1);
    g[sizeof(g) - 1] = '\0';
    memset(n, 'n', sizeof(n) - 1);
    n[sizeof(n) - 1] = '\0';
    snprintf(gpu257, 1024,
             "{\"settle\":[{\"node\":\"n\",\"gpu\":\"%s\",\"until_ms\":1,\"victim\":"
             "\"a\",\"dry_run\":false}],\"recycles_ms\":[]}",
             g);
    snprintf(node254, 1024,
             "{\"settle\":[{\"node\":\"%s\",\"until_ms\":1,\"victim\":\"a\","
             "\"dry_run\":false}],\"recycles_ms\":[]}",
             n);
    bad[sizeof(bad) / sizeof(bad[0]) - 2] = gpu257;
    bad[sizeof(bad) / sizeof(bad[0]) - 1] = node254;
    char err[256];
    int64_t now = wall_ms();

    incident(e, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (remedy_brakes_import(e->r, bad[i], now, err, sizeof(err)) != -1)
            fail_msg("accepted: %s", bad[i]);
    /* None (a Lease without the annotation) changes nothing and is no error. */
    assert_int_equal(remedy_brakes_import(e->r, NULL, now, err, sizeof(err)), 0);
    free(gpu257);
    free(node254);
}

/* The longest names are read: a node of 253 bytes and a GPU of 256. */
static void
test_longest_names_read(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[1024], err[256], g[257], n[254], *out;
    int64_t now = wall_ms();

    memset(g, 'g', sizeof(g) - 1);
    g[sizeof(g) - 1] = '\0';
    memset(n, 'n', sizeof(n) - 1);
    n[sizeof(n) - 1] = '\0';
    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"%s\",\"gpu\":\"%s\",\"until_ms\":%lld,"
             "\"victim\":\"ml/onnx-1\",\"dry_run\":false}],\"recycles_ms\":[]}",
             n, g, (long long)(now + 30000));
    if (remedy_brakes_import(e->r, text, now, err, sizeof(err)) != 0)
        fail_msg("refused: %s", err);
    out = remedy_brakes_export(e->r, NULL, now);
    assert_non_null(out);
    assert_non_null(strstr(out, n));
    assert_non_null(strstr(out, g));
    free(out);
}

/* A window that closed since it was read is not written back to the Lease. */
static void
test_closed_window_not_exported(void **state)
{
    struct env *e = *state;
    static const struct kv settle[] = {{"SETTLE", "60s"}, {NULL, NULL}};
    char text[512], err[256], *out;
    int64_t now = wall_ms();

    incident(e, settle);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"settle\":[{\"node\":\"gpu-node-7\",\"until_ms\":%lld,"
             "\"victim\":\"ml/onnx-1\",\"dry_run\":false}],\"recycles_ms\":[]}",
             (long long)(now + 150));
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), 0);
    out = remedy_brakes_export(e->r, NULL, wall_ms());
    assert_non_null(strstr(out, "gpu-node-7")); /* open still */
    free(out);
    run_ms(e->base, 300);
    out = remedy_brakes_export(e->r, NULL, wall_ms());
    assert_string_equal(out, "{\"v\":1,\"settle\":[],\"recycles_ms\":[]}");
    free(out);
}

/* --- mutation survivors of receiver/decide (issue 39) ---------------------- */

/* A brakes annotation whose recycles_ms is no list (or missing) is refused,
 * whatever its settle list holds. */
static void
test_hostile_brakes_recycles_not_a_list(void **state)
{
    struct env *e = *state;
    const char *bad[] = {
        "{\"settle\":[],\"recycles_ms\":5}",
        "{\"settle\":[],\"recycles_ms\":{}}",
        "{\"settle\":[],\"recycles_ms\":\"[]\"}",
        "{\"settle\":[]}",
    };
    char err[256];

    incident(e, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (remedy_brakes_import(e->r, bad[i], wall_ms(), err, sizeof(err)) != -1)
            fail_msg("accepted: %s", bad[i]);
        if (strstr(err, "not a settle and recycles_ms list") == NULL)
            fail_msg("%s: \"%s\"", bad[i], err);
    }
}

/* A settle list of 257 windows, or a recycles list of 4097, each alone, is
 * refused: no more than the brakes can hold is ever half read. */
static void
test_brakes_lists_over_their_limits(void **state)
{
    struct env *e = *state;
    size_t cap = 4097 * 96 + 128, off;
    char *text = malloc(cap), err[256];
    int64_t now = wall_ms();

    assert_non_null(text);
    incident(e, NULL);
    off = (size_t)snprintf(text, cap, "{\"v\":1,\"settle\":[");
    for (int i = 0; i < 257; i++)
        off += (size_t)snprintf(text + off, cap - off,
                                "%s{\"node\":\"gpu-node-%d\",\"until_ms\":%lld,"
                                "\"victim\":\"ml/onnx-1\",\"dry_run\":false}",
                                i ? "," : "", i, (long long)(now + 30000));
    snprintf(text + off, cap - off, "],\"recycles_ms\":[]}");
    err[0] = '\0';
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a settle and recycles_ms list"));

    off = (size_t)snprintf(text, cap, "{\"v\":1,\"settle\":[],\"recycles_ms\":[");
    for (int i = 0; i < 4097; i++)
        off += (size_t)snprintf(text + off, cap - off, "%s%lld", i ? "," : "",
                                (long long)(now - 1000 - i));
    snprintf(text + off, cap - off, "]}");
    err[0] = '\0';
    assert_int_equal(remedy_brakes_import(e->r, text, now, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a settle and recycles_ms list"));
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fence_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_brakes_lists_over_their_limits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fence_granted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence_write_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence_cancelled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_writes_no_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_imported_window_holds_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_imported_empty_gpu_is_the_node, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_window_clamped_to_settle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_imported_recycles_rate_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_imported_recycle_leaves_the_hour, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_full_hour_stays_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recycle_left_the_hour_not_exported, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_same_window_twice_first_victim, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_brakes_text_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_replaces_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_held_back_by_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(test_brakes_recycles_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_counts_the_pending_act, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_full_lease_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_brakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_brakes_recycles_not_a_list, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_longest_names_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_window_not_exported, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
