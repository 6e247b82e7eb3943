/* test_decimal.c -- the one decimal reader: what it takes, the bound, malformed input */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "decimal.h"

static void
test_takes_plain_digits(void **state)
{
    int64_t v = -1;

    (void)state;
    assert_int_equal(decimal_parse("0", INT64_MAX, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(decimal_parse("14000", INT64_MAX, &v), 0);
    assert_int_equal(v, 14000);
    assert_int_equal(decimal_parse("007", INT64_MAX, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(decimal_parse("9223372036854775807", INT64_MAX, &v), 0);
    assert_true(v == INT64_MAX);
}

static void
test_bound(void **state)
{
    int64_t v = 42;

    (void)state;
    assert_int_equal(decimal_parse("65535", 65535, &v), 0);
    assert_int_equal(v, 65535);
    v = 42;
    assert_int_equal(decimal_parse("65536", 65535, &v), -2);
    assert_int_equal(decimal_parse("9223372036854775808", INT64_MAX, &v), -2);
    assert_int_equal(decimal_parse("99999999999999999999999", INT64_MAX, &v), -2);
    assert_int_equal(v, 42); /* untouched on error */
}

static void
test_malformed(void **state)
{
    static const char *const bad[] = {"",    "-1",  "+1",   " 1",  "1 ",  "1.0",  "0x10",
                                      "1e3", "12k", "１２", "1\n", "abc", "1,000"};
    int64_t v = 42;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (decimal_parse(bad[i], INT64_MAX, &v) != -1)
            fail_msg("\"%s\" was taken", bad[i]);
    assert_int_equal(decimal_parse(NULL, INT64_MAX, &v), -1);
    /* A non-digit wins over the bound: "99999x" is malformed, not too big. */
    assert_int_equal(decimal_parse("99999x", 10, &v), -1);
    assert_int_equal(v, 42);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_takes_plain_digits),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
