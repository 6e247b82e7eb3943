/* test_guard_listen.c -- the front door's listener: addresses good and malformed, the fd
 * budget */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>
#include <event2/http.h>

#include "conn_guard.h"

struct fixture {
    struct event_base *base;
    struct evhttp *http;
};

static int
setup(void **state)
{
    static struct fixture f;

    f.base = event_base_new();
    f.http = f.base != NULL ? evhttp_new(f.base) : NULL;
    *state = &f;
    return f.http != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    guard_unlisten(f->http);
    evhttp_free(f->http);
    event_base_free(f->base);
    return 0;
}

static void
test_malformed_addresses(void **state)
{
    struct fixture *f = *state;
    static const char *bad[] = {
        "",
        "nocolon",
        ":9809",
        "[]:9809",
        "127.0.0.1:",
        "127.0.0.1:x",
        "127.0.0.1:12x",
        "127.0.0.1:-1",
        "127.0.0.1:65536",
        "127.0.0.1:99999999999999999999",
    };
    char err[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(guard_listen(f->http, bad[i], err, sizeof(err)), -1);
        assert_non_null(strstr(err, "is not host:port"));
    }
    err[0] = '\0';
    assert_int_equal(guard_listen(f->http, "nohost.invalid:9809", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot listen on nohost.invalid:9809"));
}

static void
test_binds_and_reports_the_port(void **state)
{
    struct fixture *f = *state;
    char err[256], addr[64];
    int port, again;

    port = guard_listen(f->http, "127.0.0.1:0", err, sizeof(err));
    assert_true(port > 0 && port < 65536);
    /* The port is taken now: a second listener on it is refused, with why. */
    snprintf(addr, sizeof(addr), "[127.0.0.1]:%d", port);
    again = guard_listen(f->http, addr, err, sizeof(err));
    assert_int_equal(again, -1);
    assert_non_null(strstr(err, "cannot listen on"));
}

static void
test_fit_nofile(void **state)
{
    struct rlimit rl;

    (void)state;
    assert_int_equal(guard_fit_nofile(16, "X_MAX_CONNECTIONS"), 16);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    /* The soft limit was raised to the hard one. */
    assert_true(rl.rlim_cur == rl.rlim_max);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 100000000) {
        size_t fit = guard_fit_nofile((size_t)rl.rlim_cur * 2, "X_MAX_CONNECTIONS");
        assert_true(fit >= 1 && fit < (size_t)rl.rlim_cur);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_malformed_addresses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binds_and_reports_the_port, setup, teardown),
        cmocka_unit_test(test_fit_nofile),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
