/* test_prom.c -- Prometheus queries against the fake server: requests, readings, every
 * failure */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fake.h"
#include "log.h"
#include "prom.h"

#define USED_Q                                                                           \
    "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"gpu-node-1\"}) + 0"

#define VECTOR2                                                                          \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["           \
    "{\"metric\":{\"namespace\":\"frigate\",\"pod\":\"frigate-7d9f6c5b4-kx2vq\"},"       \
    "\"value\":[1780371700.123,\"10737418240\"]},"                                       \
    "{\"metric\":{\"exported_namespace\":\"llm\",\"exported_pod\":\"ollama-0\"},"        \
    "\"value\":[1780371700.123,\"2147483648\"]}]}}"

struct result {
    int done;
    int calls;
    int ok;
    int cancelled;
    char *error;
    struct usage_reading usage; /* taken from the answer */
    double value;
    long elapsed;
};

struct env {
    struct event_base *base;
    struct fake *fake;
    struct prom *p;
    struct result r;
};

static void
on_answer(struct prom_answer *a, void *arg)
{
    struct result *r = arg;

    r->done = 1;
    r->calls++;
    r->ok = a->pa_ok;
    r->cancelled = a->pa_cancelled;
    r->value = a->pa_value;
    r->elapsed = a->pa_elapsed_ms;
    free(r->error);
    r->error = a->pa_error ? strdup(a->pa_error) : NULL;
    assert_true(a->pa_ok ? a->pa_error == NULL : a->pa_error != NULL);
    if (!a->pa_ok)
        assert_int_equal(a->pa_usage.ur_count, 0);
    usage_reading_free(&r->usage);
    r->usage = a->pa_usage; /* taken: prom must not free it */
    memset(&a->pa_usage, 0, sizeof(a->pa_usage));
}

static void
result_reset(struct result *r)
{
    free(r->error);
    usage_reading_free(&r->usage);
    memset(r, 0, sizeof(*r));
}

static struct prom *
client(struct env *e, const char *suffix, long timeout_ms)
{
    char u[128], err[256];
    struct prom_opts o = {
        .po_url = u, .po_connect_timeout_ms = 300, .po_timeout_ms = timeout_ms};

    snprintf(u, sizeof(u), "%s%s", fake_url(e->fake), suffix);
    e->p = prom_new(e->base, &o, err, sizeof(err));
    assert_non_null(e->p);
    return e->p;
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    assert_non_null(e);
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    client(e, "", 2000);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    prom_free(e->p);
    fake_free(e->fake);
    event_base_free(e->base);
    result_reset(&e->r);
    free(e);
    return 0;
}

static void
usage(struct env *e, const char *q, const char *ns_label, const char *pod_label)
{
    result_reset(&e->r);
    assert_int_equal(prom_query_usage(e->p, q, ns_label, pod_label, on_answer, &e->r), 0);
    assert_int_equal(e->r.calls, 0);
    assert_int_equal(fake_run_until(e->base, &e->r.done, 5000), 0);
    assert_int_equal(e->r.calls, 1);
}

static void
scalar(struct env *e, const char *q)
{
    result_reset(&e->r);
    assert_int_equal(prom_query_scalar(e->p, q, on_answer, &e->r), 0);
    assert_int_equal(fake_run_until(e->base, &e->r.done, 5000), 0);
    assert_int_equal(e->r.calls, 1);
}

static void
route(struct env *e, int status, const char *body, long delay)
{
    fake_clear(e->fake);
    assert_int_equal(
        fake_route(e->fake, "GET", "/api/v1/query", status, NULL, body, delay), 0);
}

static void
test_usage_success(void **state)
{
    struct env *e = *state;
    const struct fake_req *fr;
    char *q;

    route(e, 200, VECTOR2, 0);
    usage(e, USED_Q, "namespace", "pod");
    assert_true(e->r.ok);
    assert_null(e->r.error);
    assert_int_equal(e->r.usage.ur_count, 2);
    assert_string_equal(e->r.usage.ur_series[0].us_namespace, "frigate");
    assert_string_equal(e->r.usage.ur_series[0].us_pod, "frigate-7d9f6c5b4-kx2vq");
    assert_true(e->r.usage.ur_series[0].us_bytes == 10737418240.0);
    assert_null(e->r.usage.ur_series[1].us_pod); /* other labels: unattributed */
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "GET");
    assert_string_equal(fr->fr_path, "/api/v1/query");
    assert_string_equal(fake_header(fr, "User-Agent"), "gpu-vram-watchdog/" GVW_VERSION);
    assert_null(fake_header(fr, "Authorization"));
    /* Encoded so that '+' survives form decoding: Prometheus reads it as a space
     * otherwise. */
    assert_non_null(strstr(fr->fr_query, "%2B"));
    assert_null(strchr(fr->fr_query, ' '));
    assert_null(strchr(fr->fr_query, '+'));
    q = fake_query_param(fr, "query");
    assert_string_equal(q, USED_Q);
    free(q);
    /* Other label names (exporters differ). */
    usage(e, USED_Q, "exported_namespace", "exported_pod");
    assert_true(e->r.ok);
    assert_string_equal(e->r.usage.ur_series[1].us_pod, "ollama-0");
}

static void
test_nan_inf_values(void **state)
{
    struct env *e = *state;

    route(e, 200,
          "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
          "{\"metric\":{\"namespace\":\"a\",\"pod\":\"p\"},\"value\":[1,\"NaN\"]},"
          "{\"metric\":{\"namespace\":\"a\",\"pod\":\"q\"},\"value\":[1,\"+Inf\"]},"
          "{\"metric\":{\"namespace\":\"a\",\"pod\":\"r\"},\"value\":[1,\"-Inf\"]}]}}",
          0);
    /* Passed through as sent: judging them is usage_summarise's job. */
    usage(e, "q", "namespace", "pod");
    assert_true(e->r.ok);
    assert_int_equal(e->r.usage.ur_count, 3);
    assert_true(isnan(e->r.usage.ur_series[0].us_bytes));
    assert_true(isinf(e->r.usage.ur_series[1].us_bytes) &&
                e->r.usage.ur_series[1].us_bytes > 0);
    assert_true(isinf(e->r.usage.ur_series[2].us_bytes) &&
                e->r.usage.ur_series[2].us_bytes < 0);
    /* A free amount of NaN or Inf cannot be acted on. */
    route(e, 200,
          "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
          "{\"metric\":{},\"value\":[1,\"NaN\"]}]}}",
          0);
    scalar(e, "free");
    assert_false(e->r.ok);
    assert_non_null(strstr(e->r.error, "nan"));
    route(e, 200,
          "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
          "{\"metric\":{},\"value\":[1,\"+Inf\"]}]}}",
          0);
    scalar(e, "free");
    assert_false(e->r.ok);
}

static void
test_scalar_success(void **state)
{
    struct env *e = *state;

    route(e, 200,
          "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
          "{\"metric\":{\"node\":\"gpu-node-1\"},\"value\":[1780371700.5,\"1536.5\"]}]}}",
          0);
    scalar(e, "gpu_free_mib{node=\"gpu-node-1\"}");
    assert_true(e->r.ok);
    assert_true(e->r.value == 1536.5);
    /* Two samples where one is expected. */
    route(e, 200, VECTOR2, 0);
    scalar(e, "x");
    assert_false(e->r.ok);
    assert_non_null(strstr(e->r.error, "prometheus: "));
}

static void
test_error_bodies(void **state)
{
    struct env *e = *state;
    char *body;

    assert_non_null(body = fake_read_data("prom-error-bad-data.json", NULL));
    route(e, 400, body, 0);
    usage(e, "sum(", "namespace", "pod");
    assert_false(e->r.ok);
    assert_string_equal(e->r.error, "prometheus: HTTP 400: bad_data: invalid parameter "
                                    "\"query\": 1:4: parse error: unexpected <EOF>");
    /* status:error with a 200 (a proxy rewrote the code): still the error text. */
    route(e, 200, body, 0);
    usage(e, "sum(", "namespace", "pod");
    assert_false(e->r.ok);
    assert_string_equal(e->r.error, "prometheus: bad_data: invalid parameter "
                                    "\"query\": 1:4: parse error: unexpected <EOF>");
    free(body);
    assert_non_null(body = fake_read_data("prom-error-execution.json", NULL));
    route(e, 422, body, 0);
    scalar(e, "x");
    assert_string_equal(e->r.error,
                        "prometheus: HTTP 422: execution: query processing would "
                        "load too many samples into memory in query execution");
    free(body);
    assert_non_null(body = fake_read_data("prom-error-timeout.json", NULL));
    route(e, 503, body, 0);
    usage(e, "x", "namespace", "pod");
    assert_string_equal(
        e->r.error, "prometheus: HTTP 503: timeout: query timed out in query execution");
    free(body);
}

static void
test_http_500_and_garbage(void **state)
{
    struct env *e = *state;
    static const char *const garbage[] = {
        "",
        "{",
        "<html><body>502 Bad Gateway</body></html>",
        "null",
        "[]",
        "{\"status\":\"success\"}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[1,2]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{},\"value\":[1,\"twelve\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{},\"value\":[1]}]}}",
        "{\"status\":\"error\"}",
        "\xff\xfe\x00\x01",
    };

    route(e, 500, "upstream\r\nexploded\x01", 0);
    usage(e, "x", "namespace", "pod");
    assert_false(e->r.ok);
    assert_string_equal(e->r.error, "prometheus: HTTP 500: upstream  exploded ");
    route(e, 502, "", 0);
    usage(e, "x", "namespace", "pod");
    assert_string_equal(e->r.error, "prometheus: HTTP 502: (empty body)");
    for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        route(e, 200, garbage[i], 0);
        usage(e, "x", "namespace", "pod");
        assert_false(e->r.ok);
        assert_int_equal(strncmp(e->r.error, "prometheus: ", 12), 0);
        scalar(e, "x");
        assert_false(e->r.ok);
        route(e, 418, garbage[i], 0);
        usage(e, "x", "namespace", "pod");
        assert_false(e->r.ok);
        assert_int_equal(strncmp(e->r.error, "prometheus: HTTP 418: ", 22), 0);
    }
}

static void
test_empty_vector(void **state)
{
    struct env *e = *state;

    route(e, 200,
          "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
          0);
    usage(e, "x", "namespace", "pod");
    assert_false(e->r.ok);
    assert_string_equal(e->r.error, "prometheus: the query returned no series");
    scalar(e, "x");
    assert_false(e->r.ok);
}

static void
test_slow_and_refused(void **state)
{
    struct env *e = *state;
    char u[64], err[128];
    struct prom_opts o = {
        .po_url = u, .po_connect_timeout_ms = 300, .po_timeout_ms = 300};

    prom_free(e->p);
    client(e, "", 300);
    route(e, 200, VECTOR2, 1500);
    usage(e, "x", "namespace", "pod");
    assert_false(e->r.ok);
    assert_non_null(strstr(e->r.error, "timed out"));
    assert_int_equal(strncmp(e->r.error, "prometheus: ", 12), 0);
    assert_true(e->r.elapsed >= 290 && e->r.elapsed < 1000);
    prom_free(e->p);
    snprintf(u, sizeof(u), "http://127.0.0.1:%d", fake_closed_port());
    assert_non_null(e->p = prom_new(e->base, &o, err, sizeof(err)));
    usage(e, "x", "namespace", "pod");
    assert_false(e->r.ok);
    assert_non_null(strstr(e->r.error, "prometheus: Failed to connect"));
}

static void
test_base_url_prefix(void **state)
{
    struct env *e = *state;
    char err[128];
    struct prom_opts bad = {.po_url = "prometheus:9090"};

    prom_free(e->p);
    client(e, "/prom//", 2000);
    fake_route(e->fake, "GET", "/prom/api/v1/query", 200, NULL, VECTOR2, 0);
    usage(e, "x", "namespace", "pod");
    assert_true(e->r.ok);
    assert_string_equal(fake_last(e->fake)->fr_path, "/prom/api/v1/query");
    assert_null(prom_new(e->base, &bad, err, sizeof(err)));
    assert_non_null(strstr(err, "not http"));
}

static void
test_cancel_on_free(void **state)
{
    struct env *e = *state;

    route(e, 200, VECTOR2, 1000);
    result_reset(&e->r);
    assert_int_equal(prom_query_usage(e->p, "x", "namespace", "pod", on_answer, &e->r),
                     0);
    fake_run_for(e->base, 50);
    prom_free(e->p);
    e->p = NULL;
    assert_int_equal(e->r.calls, 1);
    assert_false(e->r.ok);
    assert_true(e->r.cancelled);
    assert_string_equal(e->r.error, "prometheus: cancelled");
}

static void
test_substitute_node(void **state)
{
    char err[128];
    char *s;

    s = prom_substitute_node("sum(x{node=\"$node\"}) / on() y{instance=\"$node\"}",
                             "gpu-node-1", err, sizeof(err));
    assert_string_equal(s,
                        "sum(x{node=\"gpu-node-1\"}) / on() y{instance=\"gpu-node-1\"}");
    free(s);
    s = prom_substitute_node("x{node=\"$node\"}", "a\"b\\c", err, sizeof(err));
    assert_string_equal(s, "x{node=\"a\\\"b\\\\c\"}");
    free(s);
    s = prom_substitute_node("no variable here", "n", err, sizeof(err));
    assert_string_equal(s, "no variable here");
    free(s);
    s = prom_substitute_node("", "n", err, sizeof(err));
    assert_string_equal(s, "");
    free(s);
    s = prom_substitute_node("$node$node$nod", "ab", err, sizeof(err));
    assert_string_equal(s, "abab$nod");
    free(s);
    s = prom_substitute_node("x{node=\"$node\"}", "", err, sizeof(err));
    assert_string_equal(s, "x{node=\"\"}");
    free(s);
    assert_null(
        prom_substitute_node("x{node=\"$node\"}", "evil\"}\nup{a=\"", err, sizeof(err)));
    assert_non_null(strstr(err, "control"));
    assert_null(prom_substitute_node("$node", "tab\there", err, sizeof(err)));
}

static void
test_substitute_node_too_long(void **state)
{
    char err[128];
    char *q = malloc(40000), *node = malloc(600);

    assert_non_null(q);
    assert_non_null(node);
    for (size_t i = 0; i < 39995; i += 5)
        memcpy(q + i, "$node", 5);
    q[39995] = '\0';
    memset(node, 'n', 599);
    node[599] = '\0';
    assert_null(prom_substitute_node(q, node, err, sizeof(err)));
    assert_non_null(strstr(err, "too long"));
    free(q);
    free(node);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_usage_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nan_inf_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scalar_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_500_and_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_vector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_and_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_url_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_on_free, setup, teardown),
        cmocka_unit_test(test_substitute_node),
        cmocka_unit_test(test_substitute_node_too_long),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
