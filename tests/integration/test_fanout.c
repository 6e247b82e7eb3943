/* test_fanout.c -- MAX_CONCURRENT_DECISIONS: one 1,000-node alert burst against a
 * loopback fake; at most the limit in flight, the rest queued in order, none lost */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "engine_harness.h"
#include "log.h"
#include "metrics.h"

#define NODES 1000

/* Every test's settings, below its own (MAX_CONCURRENT_DECISIONS, from start). */
static const struct kv fanout_env[] = {
    {"DRY_RUN", "true"},
    {"EVENTS", "false"},
    {"FREE_QUERY", ""}, /* one query per decision: the fake counts decisions */
    {"USED_QUERY", "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"$node\"})"},
    {NULL, NULL},
};

/* The harness's fixture, with the logs and the metrics a scrape reads. */
static int
setup(void **state)
{
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_ERROR);
    metrics_init(0);
    return env_setup(state, fanout_env);
}

static int
teardown(void **state)
{
    env_teardown(state);
    metrics_cleanup();
    return 0;
}

static void
start(struct env *e, const char *max)
{
    const struct kv extra[] = {{"MAX_CONCURRENT_DECISIONS", max}, {NULL, NULL}};

    engine_start(e, extra, 0);
}

/* One webhook body of n firing GPUVRAMLow alerts, node-0000 ... node-(n-1). */
static void
deliver_burst(struct env *e, int n)
{
    size_t cap = 256 + (size_t)n * 400, off = 0;
    char *body = malloc(cap);

    assert_non_null(body);
    off += (size_t)snprintf(body, cap,
                            "{\"version\":\"4\",\"status\":\"firing\",\"alerts\":[");
    for (int i = 0; i < n; i++)
        off +=
            (size_t)snprintf(body + off, cap - off,
                             "%s{\"status\":\"firing\",\"labels\":{\"alertname\":"
                             "\"GPUVRAMLow\",\"node\":\"node-%04d\"},\"annotations\":{},"
                             "\"startsAt\":\"2026-06-02T09:30:00Z\",\"fingerprint\":"
                             "\"fp%04d\"}",
                             i ? "," : "", i, i);
    snprintf(body + off, cap - off, "]}");
    assert_int_equal(deliver_body(e, body), n);
    free(body);
}

struct rows {
    size_t all, done, by_result_failed_interrupted, recovered;
    size_t fp_wrong; /* rows whose fingerprint is not their alert's (fpNNNN) */
    char seen[NODES + 1];
};

static int
row_cb(int64_t id, const struct store_decision *d, void *arg)
{
    struct rows *r = arg;
    int k;

    (void)id;
    r->all++;
    if (strcmp(d->sd_result, "in_progress") != 0)
        r->done++;
    if (strcmp(d->sd_result, "skipped_recovered") == 0)
        r->recovered++;
    if (strcmp(d->sd_result, "failed") == 0 && d->sd_error != NULL &&
        strcmp(d->sd_error, STORE_INTERRUPTED_ERROR) == 0)
        r->by_result_failed_interrupted++;
    if (sscanf(d->sd_node, "node-%d", &k) == 1 && k >= 0 && k < NODES) {
        char fp[16];
        snprintf(fp, sizeof(fp), "fp%04d", k);
        r->seen[k]++;
        if (d->sd_fingerprint == NULL || strcmp(d->sd_fingerprint, fp) != 0)
            r->fp_wrong++;
    }
    return 0;
}

static struct rows
rows(struct env *e)
{
    struct store_filter f = {0};
    struct rows r;
    char err[256];

    memset(&r, 0, sizeof(r));
    if (store_query_decisions(e->store, &f, row_cb, &r, err, sizeof(err)) == -1)
        fail_msg("store_query_decisions: %s", err);
    return r;
}

/* The gauge as a scrape shows it. */
static long
queued_gauge(void)
{
    struct buf out;
    const char *p;
    long v = -1;

    buf_init(&out, 0);
    assert_int_equal(metrics_render(&out), 0);
    p = strstr(out.b_data, "\ngpu_vram_watchdog_decisions_queued ");
    if (p != NULL)
        v = strtol(p + strlen("\ngpu_vram_watchdog_decisions_queued "), NULL, 10);
    buf_free(&out);
    return v;
}

/* The node a recorded Prometheus request asked about (node-NNNN), or -1. */
static int
asked_node(const struct fake_req *fr)
{
    char *q = fake_query_param(fr, "query");
    const char *p = q ? strstr(q, "node-") : NULL;
    int k = -1;

    if (p != NULL && sscanf(p, "node-%d", &k) != 1)
        k = -1;
    free(q);
    return k;
}

static void
test_burst_of_1000_nodes(void **state)
{
    struct env *e = *state;
    struct rows r;
    long end, queued_max = 0;
    int last = -1, k;

    /* Every answer waits 20 ms, so the decisions that are in flight overlap
     * and the fake sees how many at once. */
    fake_route_file(e->fake, "GET", "/api/v1/query", 200, "remedy-prom-recovered.json",
                    20);
    fake_route_file(e->fake, "GET", "/api/v1/pods", 200, "remedy-pods-incident.json", 0);
    start(e, "16");
    deliver_burst(e, NODES);
    /* Every acknowledged alert has its row at once, queued or started. */
    r = rows(e);
    assert_int_equal(r.all, NODES);
    assert_int_equal(r.done, 0);
    assert_int_equal(queued_gauge(), NODES - 16);
    assert_int_equal(remedy_in_flight(e->r), 16);
    end = fake_now_ms() + 90000;
    while ((remedy_in_flight(e->r) > 0 || queued_gauge() > 0) && fake_now_ms() < end) {
        long q = queued_gauge();

        if (q > queued_max)
            queued_max = q;
        assert_true(remedy_in_flight(e->r) <= 16);
        event_base_loop(e->base, EVLOOP_ONCE);
    }
    assert_int_equal(remedy_in_flight(e->r), 0);
    assert_int_equal(queued_gauge(), 0);
    assert_true(queued_max > 0);
    /* The fake never held more than 16 questions at once; and more than one
     * (the limit is a bound, not a serialisation). */
    assert_true(fake_held_max(e->fake) <= 16);
    assert_true(fake_held_max(e->fake) >= 2);
    /* Each of the 1,000 nodes has exactly one row, finished. */
    r = rows(e);
    assert_int_equal(r.all, NODES);
    assert_int_equal(r.done, NODES);
    assert_int_equal(r.recovered, NODES);
    for (int i = 0; i < NODES; i++)
        if (r.seen[i] != 1)
            fail_msg("node-%04d has %d rows", i, r.seen[i]);
    /* In order: the nodes were asked about in the order the alerts came. */
    assert_int_equal(fake_count(e->fake) >= NODES, 1);
    for (size_t i = 0; i < fake_count(e->fake); i++) {
        if ((k = asked_node(fake_req(e->fake, i))) < 0)
            continue;
        assert_true(k > last);
        last = k;
    }
    assert_int_equal(last, NODES - 1);
}

/* A trigger for a node whose decision waits is coalesced at once, like one
 * behind a decision in flight (no second row waiting for it). */
static void
test_queued_node_coalesces(void **state)
{
    struct env *e = *state;
    struct rows r;

    fake_route_file(e->fake, "GET", "/api/v1/query", 200, "remedy-prom-recovered.json",
                    20);
    fake_route_file(e->fake, "GET", "/api/v1/pods", 200, "remedy-pods-incident.json", 0);
    start(e, "1");
    deliver_burst(e, 5);
    assert_int_equal(queued_gauge(), 4);
    deliver_burst(e, 5); /* the same five nodes again */
    assert_int_equal(queued_gauge(), 4);
    r = rows(e);
    assert_int_equal(r.all, 10);
    assert_int_equal(r.done, 5); /* five coalesced at once */
    while (remedy_in_flight(e->r) > 0 || queued_gauge() > 0)
        event_base_loop(e->base, EVLOOP_ONCE);
    r = rows(e);
    assert_int_equal(r.done, 10);
    assert_int_equal(r.recovered, 5);
    /* Each row, queued or coalesced, names its own alert's fingerprint. */
    assert_int_equal(r.fp_wrong, 0);
    assert_true(fake_held_max(e->fake) == 1);
}

static int drained;

static void
on_drained(void *arg)
{
    (void)arg;
    drained++;
}

/* A stop with decisions waiting: none starts, every row ends failed with the
 * interrupted error; none is left in_progress. */
static void
test_shutdown_with_queue(void **state)
{
    struct env *e = *state;
    struct rows r;
    size_t asked, len;
    FILE *f = tmpfile();
    char log[16384];
    int saved;

    fake_route_file(e->fake, "GET", "/api/v1/query", 200, "remedy-prom-recovered.json",
                    200);
    fake_route_file(e->fake, "GET", "/api/v1/pods", 200, "remedy-pods-incident.json", 0);
    start(e, "4");
    deliver_burst(e, 50);
    assert_int_equal(queued_gauge(), 46);
    fake_run_for(e->base, 50); /* the four are asking Prometheus */
    asked = fake_count(e->fake);
    drained = 0;
    /* The rows are completed without a word of error in the log. */
    assert_non_null(f);
    fflush(stderr);
    assert_true((saved = dup(2)) >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    remedy_shutdown(e->r, on_drained, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    len = fread(log, 1, sizeof(log) - 1, f);
    log[len] = '\0';
    fclose(f);
    if (strstr(log, "not completed") != NULL)
        fail_msg("the log says a row was not completed:\n%s", log);
    assert_int_equal(drained, 1); /* gathering decisions end at once too */
    assert_int_equal(queued_gauge(), 0);
    r = rows(e);
    assert_int_equal(r.all, 50);
    assert_int_equal(r.done, 50);
    assert_int_equal(r.by_result_failed_interrupted, 50);
    fake_run_for(e->base, 300);
    assert_int_equal(fake_count(e->fake), asked); /* nothing waiting started */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_burst_of_1000_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_node_coalesces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_with_queue, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
