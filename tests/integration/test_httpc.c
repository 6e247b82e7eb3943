/* test_httpc.c -- the curl-on-libevent client against the fake server: what it sends and
 * reports */
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
#include "fake.h"
#include "httpc.h"
#include "log.h"

struct result {
    int done;
    int calls;
    int cancelled;
    int too_large;
    long status;
    long elapsed;
    char *error; /* owned copies */
    char *body;
    size_t body_len;
};

struct env {
    struct event_base *base;
    struct fake *fake;
    struct httpc *h;
    char tokfile[64];
    char url[128];
    struct result r;
};

static void
on_done(const struct httpc_resp *resp, void *arg)
{
    struct result *r = arg;

    r->done = 1;
    r->calls++;
    r->cancelled = resp->hr_cancelled;
    r->too_large = resp->hr_too_large;
    r->status = resp->hr_status;
    r->elapsed = resp->hr_elapsed_ms;
    free(r->error);
    free(r->body);
    r->error = resp->hr_error ? strdup(resp->hr_error) : NULL;
    assert_non_null(resp->hr_body);
    r->body = strndup(resp->hr_body, resp->hr_body_len);
    r->body_len = resp->hr_body_len;
}

static void
result_reset(struct result *r)
{
    free(r->error);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static void
write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    int fd;

    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    assert_non_null(e);
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    snprintf(e->tokfile, sizeof(e->tokfile), "/tmp/gvw-httpc-token-XXXXXX");
    assert_true((fd = mkstemp(e->tokfile)) >= 0);
    close(fd);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    httpc_free(e->h);
    fake_free(e->fake);
    event_base_free(e->base);
    unlink(e->tokfile);
    result_reset(&e->r);
    free(e);
    return 0;
}

/* A client with test timeouts (300 ms to connect, 2 s in all) unless given. */
static struct httpc *
client(struct env *e, const struct httpc_opts *o)
{
    struct httpc_opts def = {.ho_connect_timeout_ms = 300, .ho_timeout_ms = 2000};
    char err[256];

    e->h = httpc_new(e->base, o ? o : &def, err, sizeof(err));
    assert_non_null(e->h);
    return e->h;
}

static const char *
url(struct env *e, const char *path)
{
    snprintf(e->url, sizeof(e->url), "%s%s", fake_url(e->fake), path);
    return e->url;
}

/* Sends req and runs the loop until its callback ran. */
static void
run(struct env *e, const struct httpc_req *req)
{
    result_reset(&e->r);
    assert_int_equal(httpc_request(e->h, req, on_done, &e->r), 0);
    assert_int_equal(e->r.calls, 0); /* never from inside httpc_request */
    assert_int_equal(fake_run_until(e->base, &e->r.done, 5000), 0);
    assert_int_equal(e->r.calls, 1);
}

static void
test_get(void **state)
{
    struct env *e = *state;
    struct httpc_req req = {.hq_url = url(e, "/hello?x=1")};
    const struct fake_req *fr;

    client(e, NULL);
    assert_int_equal(
        fake_route(e->fake, "GET", "/hello", 200, "text/plain", "hi there", 0), 0);
    run(e, &req);
    assert_null(e->r.error);
    assert_int_equal(e->r.status, 200);
    assert_string_equal(e->r.body, "hi there");
    assert_true(e->r.elapsed >= 0 && e->r.elapsed < 5000);
    assert_int_equal(fake_count(e->fake), 1);
    fr = fake_last(e->fake);
    assert_string_equal(fr->fr_method, "GET");
    assert_string_equal(fr->fr_path, "/hello");
    assert_string_equal(fr->fr_query, "x=1");
    assert_string_equal(fake_header(fr, "User-Agent"), "gpu-vram-watchdog/" GVW_VERSION);
    assert_string_equal(fake_header(fr, "Accept"), "application/json");
    assert_null(fake_header(fr, "Authorization"));
    assert_null(fake_header(fr, "Content-Type"));
    assert_int_equal(fr->fr_body_len, 0);
    assert_int_equal(httpc_pending(e->h), 0);
}

static void
test_methods_with_body(void **state)
{
    struct env *e = *state;
    static const char *const methods[] = {"POST", "PATCH", "DELETE", "PUT"};
    const char *body = "{\"a\":1}";

    client(e, NULL);
    fake_route(e->fake, NULL, "/thing", 201, NULL, "{}", 0);
    for (size_t i = 0; i < 4; i++) {
        struct httpc_req req = {.hq_method = methods[i],
                                .hq_url = url(e, "/thing"),
                                .hq_content_type = "application/json-patch+json",
                                .hq_body = body,
                                .hq_body_len = strlen(body)};
        run(e, &req);
        assert_null(e->r.error);
        assert_int_equal(e->r.status, 201);
        const struct fake_req *fr = fake_last(e->fake);
        assert_string_equal(fr->fr_method, methods[i]);
        assert_string_equal(fr->fr_body, body);
        assert_string_equal(fake_header(fr, "Content-Type"),
                            "application/json-patch+json");
        assert_null(fake_header(fr, "Expect")); /* no 100-continue round trip */
    }
    /* A body without a content type is sent as JSON. */
    struct httpc_req req = {.hq_method = "POST",
                            .hq_url = url(e, "/thing"),
                            .hq_body = "{}",
                            .hq_body_len = 2};
    run(e, &req);
    assert_string_equal(fake_header(fake_last(e->fake), "Content-Type"),
                        "application/json");
    /* POST without a body. */
    struct httpc_req empty = {.hq_method = "POST", .hq_url = url(e, "/thing")};
    run(e, &empty);
    assert_int_equal(fake_last(e->fake)->fr_body_len, 0);
}

static void
test_error_status_is_an_answer(void **state)
{
    struct env *e = *state;
    struct httpc_req req = {.hq_url = url(e, "/boom")};

    client(e, NULL);
    fake_route(e->fake, "GET", "/boom", 500, "text/plain", "internal", 0);
    run(e, &req);
    assert_null(e->r.error); /* the transport worked: the caller judges the status */
    assert_int_equal(e->r.status, 500);
    assert_string_equal(e->r.body, "internal");
    req.hq_url = url(e, "/no-route");
    run(e, &req);
    assert_int_equal(e->r.status, 404);
}

static void
test_connection_refused(void **state)
{
    struct env *e = *state;
    char u[64];
    int port = fake_closed_port();
    struct httpc_req req = {.hq_url = u};

    client(e, NULL);
    assert_true(port > 0);
    snprintf(u, sizeof(u), "http://127.0.0.1:%d/x", port);
    run(e, &req);
    assert_non_null(e->r.error);
    assert_non_null(
        strstr(e->r.error, "onnect")); /* "Failed to connect ... Couldn't connect" */
    assert_int_equal(e->r.status, 0);
    assert_string_equal(e->r.body, "");
}

static void
test_timeout(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_connect_timeout_ms = 300, .ho_timeout_ms = 300};
    struct httpc_req req = {.hq_url = url(e, "/slow")};

    client(e, &o);
    fake_route(e->fake, "GET", "/slow", 200, NULL, "{}", 1500);
    run(e, &req);
    assert_non_null(e->r.error);
    assert_non_null(strstr(e->r.error, "timed out"));
    assert_int_equal(e->r.status, 0);
    assert_true(e->r.elapsed >= 290 && e->r.elapsed < 1000);
    /* A per-request timeout beats the client's. */
    req.hq_timeout_ms = 3000;
    run(e, &req);
    assert_null(e->r.error);
    assert_int_equal(e->r.status, 200);
}

static void
test_body_cap(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_timeout_ms = 2000, .ho_body_cap = 1024};
    struct httpc_req req = {.hq_url = url(e, "/big")};
    char big[4097], exact[1025];

    client(e, &o);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memset(exact, 'y', sizeof(exact) - 1);
    exact[sizeof(exact) - 1] = '\0';
    fake_route(e->fake, "GET", "/big", 200, "text/plain", big, 0);
    fake_route(e->fake, "GET", "/exact", 200, "text/plain", exact, 0);
    /* Known length: refused up front. */
    run(e, &req);
    assert_string_equal(e->r.error, "response too large (over 1024 bytes)");
    assert_int_equal(e->r.too_large, 1);
    assert_string_equal(e->r.body, "");
    /* Chunked, length unknown: refused while reading. */
    fake_set_chunked(e->fake, 1);
    run(e, &req);
    assert_string_equal(e->r.error, "response too large (over 1024 bytes)");
    assert_int_equal(e->r.too_large, 1);
    /* Exactly the cap is fine. */
    req.hq_url = url(e, "/exact");
    run(e, &req);
    assert_null(e->r.error);
    assert_int_equal(e->r.too_large, 0);
    assert_int_equal(e->r.body_len, 1024);
}

static void
test_bearer_token_rotation(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {
        .ho_timeout_ms = 2000, .ho_token_file = e->tokfile, .ho_token_max_age_ms = 1500};
    struct httpc_req req = {.hq_url = url(e, "/api")};

    write_file(e->tokfile, "  tok-one.abc_DEF-1\n");
    client(e, &o);
    fake_route(e->fake, "GET", "/api", 200, NULL, "{}", 0);
    run(e, &req);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"),
                        "Bearer tok-one.abc_DEF-1");
    /* Rotated on disk: the cached token is used until it is older than the max age
     * (real time: 1.5 s leaves room for a slow sanitizer run on a busy machine). */
    write_file(e->tokfile, "tok-two\n");
    run(e, &req);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"),
                        "Bearer tok-one.abc_DEF-1");
    fake_run_for(e->base, 1600);
    run(e, &req);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"),
                        "Bearer tok-two");
}

static void
test_token_file_problems(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_token_file = e->tokfile, .ho_token_max_age_ms = 1};
    struct httpc_req req = {.hq_url = url(e, "/api")};
    char want[256];

    client(e, &o);
    fake_route(e->fake, "GET", "/api", 200, NULL, "{}", 0);
    write_file(e->tokfile, "\n \n");
    run(e, &req);
    snprintf(want, sizeof(want), "token file %s: empty", e->tokfile);
    assert_string_equal(e->r.error, want);
    write_file(e->tokfile, "two words\n");
    run(e, &req);
    assert_non_null(strstr(e->r.error, "not a token"));
    assert_null(strstr(e->r.error, "words")); /* the content never shows */
    write_file(e->tokfile, "good\r\nInjected: header\n");
    run(e, &req);
    assert_non_null(strstr(e->r.error, "not a token"));
    unlink(e->tokfile);
    run(e, &req);
    snprintf(want, sizeof(want), "token file %s: No such file or directory", e->tokfile);
    assert_string_equal(e->r.error, want);
    assert_int_equal(e->r.status, 0);
    assert_int_equal(fake_count(e->fake), 0); /* nothing was sent without a token */
    /* The file comes back: requests work again. */
    write_file(e->tokfile, "back");
    run(e, &req);
    assert_null(e->r.error);
    assert_string_equal(fake_header(fake_last(e->fake), "Authorization"), "Bearer back");
}

static void
test_ca_file_is_used(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_connect_timeout_ms = 500,
                           .ho_timeout_ms = 500,
                           .ho_ca_file = "/nonexistent/ca.crt"};
    char u[128];
    struct httpc_req req = {.hq_url = u};

    client(e, &o);
    snprintf(u, sizeof(u), "https://127.0.0.1:%d/x", fake_port(e->fake));
    run(e, &req);
    assert_non_null(e->r.error);
    assert_int_equal(e->r.status, 0);
}

static int timer_fired;
static long timer_at;

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct env *e = arg;

    timer_fired = 1;
    timer_at = fake_now_ms();
    assert_int_equal(e->r.done, 0); /* the slow request is still in flight */
}

/* The loop keeps turning while a response is held back for 2 s. */
static void
test_loop_not_blocked(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_timeout_ms = 5000};
    struct httpc_req req = {.hq_url = url(e, "/held")};
    struct timeval tv = {0, 100 * 1000};
    struct event *t;
    long start;

    client(e, &o);
    fake_route(e->fake, "GET", "/held", 200, NULL, "{\"late\":true}", 2000);
    assert_non_null(t = evtimer_new(e->base, on_timer, e));
    result_reset(&e->r);
    start = fake_now_ms();
    assert_int_equal(httpc_request(e->h, &req, on_done, &e->r), 0);
    evtimer_add(t, &tv);
    assert_int_equal(fake_run_until(e->base, &e->r.done, 5000), 0);
    event_free(t);
    assert_true(timer_fired);
    assert_true(timer_at - start >= 90 && timer_at - start < 400);
    assert_null(e->r.error);
    assert_string_equal(e->r.body, "{\"late\":true}");
    assert_true(e->r.elapsed >= 1900);
}

static void
test_free_cancels(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_timeout_ms = 5000};
    struct httpc_req req = {.hq_url = url(e, "/held")};
    struct result r2;

    memset(&r2, 0, sizeof(r2));
    client(e, &o);
    fake_route(e->fake, "GET", "/held", 200, NULL, "{}", 1000);
    assert_int_equal(httpc_request(e->h, &req, on_done, &e->r), 0);
    assert_int_equal(httpc_request(e->h, &req, on_done, &r2), 0);
    fake_run_for(e->base, 100); /* both on the wire */
    assert_int_equal(httpc_pending(e->h), 2);
    httpc_free(e->h);
    e->h = NULL;
    assert_int_equal(e->r.calls, 1);
    assert_true(e->r.cancelled);
    assert_string_equal(e->r.error, "cancelled");
    assert_int_equal(r2.calls, 1);
    assert_true(r2.cancelled);
    result_reset(&r2);
}

static void
test_free_cancels_token_failure(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_token_file = "/nonexistent/token"};
    struct httpc_req req = {.hq_url = url(e, "/x")};

    client(e, &o);
    assert_int_equal(httpc_request(e->h, &req, on_done, &e->r), 0);
    httpc_free(e->h); /* before the loop delivered the token error */
    e->h = NULL;
    assert_int_equal(e->r.calls, 1);
    assert_true(e->r.cancelled);
}

static void
test_bad_requests(void **state)
{
    struct env *e = *state;
    struct httpc_req lower = {.hq_method = "get", .hq_url = url(e, "/x")};
    struct httpc_req ftp = {.hq_url = "ftp://127.0.0.1/x"};
    struct httpc_req none = {.hq_url = NULL};

    client(e, NULL);
    assert_int_equal(httpc_request(e->h, &lower, on_done, &e->r), -1);
    assert_int_equal(httpc_request(e->h, &ftp, on_done, &e->r), -1);
    assert_int_equal(httpc_request(e->h, &none, on_done, &e->r), -1);
    fake_run_for(e->base, 50);
    assert_int_equal(e->r.calls, 0);
    assert_int_equal(httpc_pending(e->h), 0);
}

/* Many at once, and a new request started from inside a callback. */
struct chain {
    struct httpc *h;
    const char *url;
    int done;
    int hops;
};

static void
on_chain(const struct httpc_resp *resp, void *arg)
{
    struct chain *c = arg;
    struct httpc_req req = {.hq_url = c->url};

    assert_null(resp->hr_error);
    if (++c->hops < 3)
        assert_int_equal(httpc_request(c->h, &req, on_chain, c), 0);
    else
        c->done = 1;
}

static void
test_parallel_and_reentrant(void **state)
{
    struct env *e = *state;
    struct httpc_opts o = {.ho_timeout_ms = 3000};
    struct result rs[10];
    struct chain c;
    struct httpc_req req;
    int all = 0;

    client(e, &o);
    fake_route(e->fake, "GET", "/p", 200, NULL, "{}", 50);
    memset(rs, 0, sizeof(rs));
    memset(&req, 0, sizeof(req));
    req.hq_url = url(e, "/p");
    for (int i = 0; i < 10; i++)
        assert_int_equal(httpc_request(e->h, &req, on_done, &rs[i]), 0);
    assert_int_equal(httpc_pending(e->h), 10);
    for (long end = fake_now_ms() + 3000; !all && fake_now_ms() < end;) {
        fake_run_for(e->base, 20);
        all = 1;
        for (int i = 0; i < 10; i++)
            all &= rs[i].done;
    }
    assert_true(all);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(rs[i].status, 200);
        result_reset(&rs[i]);
    }
    memset(&c, 0, sizeof(c));
    c.h = e->h;
    c.url = e->url;
    assert_int_equal(httpc_request(e->h, &req, on_chain, &c), 0);
    assert_int_equal(fake_run_until(e->base, &c.done, 3000), 0);
    assert_int_equal(c.hops, 3);
}

static void
test_urlencode(void **state)
{
    struct buf b;

    buf_init(&b, 0);
    assert_int_equal(
        httpc_urlencode(&b, "sum by (namespace) (x{node=\"a\"}) + 1/2~_.-\xc3\xa9"), 0);
    assert_string_equal(b.b_data,
                        "sum%20by%20%28namespace%29%20%28x%7Bnode%3D%22a%22%7D%29%20"
                        "%2B%201%2F2~_.-%C3%A9");
    buf_free(&b);
    buf_init(&b, 5);
    assert_int_equal(httpc_urlencode(&b, "abc/"), -1); /* "abc%2F" is 6 bytes */
    buf_free(&b);
    buf_init(&b, 5);
    assert_int_equal(httpc_urlencode(&b, "a/"), 0);
    assert_string_equal(b.b_data, "a%2F");
    buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_methods_with_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_status_is_an_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_body_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bearer_token_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_problems, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_file_is_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_not_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_cancels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_cancels_token_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parallel_and_reentrant, setup, teardown),
        cmocka_unit_test(test_urlencode),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
