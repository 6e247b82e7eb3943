/* test_addr.c -- addr_split: listen addresses, well-formed and not */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "addr.h"

static void
test_host_port(void **state)
{
    char host[64];
    const char *port;

    assert_int_equal(addr_split("0.0.0.0:8080", host, sizeof(host), &port), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_string_equal(port, "8080");
    assert_int_equal(addr_split("[::1]:9400", host, sizeof(host), &port), 0);
    assert_string_equal(host, "::1");
    assert_string_equal(port, "9400");
    /* The port is the caller's to read: empty text passes through. */
    assert_int_equal(addr_split("localhost:", host, sizeof(host), &port), 0);
    assert_string_equal(host, "localhost");
    assert_string_equal(port, "");
}

static void
test_malformed(void **state)
{
    char host[8];
    const char *port = NULL;

    assert_int_equal(addr_split("8080", host, sizeof(host), &port), -1);
    assert_int_equal(addr_split(":8080", host, sizeof(host), &port), -1);
    assert_int_equal(addr_split("[]:8080", host, sizeof(host), &port), -1);
    assert_int_equal(addr_split("", host, sizeof(host), &port), -1);
    /* A host that does not fit is refused, never cut. */
    assert_int_equal(addr_split("abcdefgh:1", host, sizeof(host), &port), -1);
    assert_int_equal(addr_split("abcdefg:1", host, sizeof(host), &port), 0);
    assert_string_equal(host, "abcdefg");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_port),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
