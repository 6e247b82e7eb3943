/* test_duration.c -- the one duration parser: every suffix, the rounding, malformed input
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "duration.h"

static void
test_durations(void **state)
{
    int64_t s, ms;

    (void)state;

    assert_int_equal(duration_parse_s("90", &s), 0);
    assert_int_equal(s, 90);
    assert_int_equal(duration_parse_s("15s", &s), 0);
    assert_int_equal(s, 15);
    assert_int_equal(duration_parse_s("2m", &s), 0);
    assert_int_equal(s, 120);
    assert_int_equal(duration_parse_s("3h", &s), 0);
    assert_int_equal(s, 10800);
    assert_int_equal(duration_parse_s("90d", &s), 0);
    assert_int_equal(s, 90 * 86400);
    assert_int_equal(duration_parse_s("0", &s), 0);
    assert_int_equal(s, 0);
    /* ms is accepted; a seconds setting rounds a partial second up. */
    assert_int_equal(duration_parse_s("1ms", &s), 0);
    assert_int_equal(s, 1);
    assert_int_equal(duration_parse_s("2000ms", &s), 0);
    assert_int_equal(s, 2);
    assert_int_equal(duration_parse_ms("250ms", &ms), 0);
    assert_int_equal(ms, 250);
    assert_int_equal(duration_parse_ms("20s", &ms), 0);
    assert_int_equal(ms, 20000);
    assert_int_equal(duration_parse_ms("7", &ms), 0);
    assert_int_equal(ms, 7000);
    const char *bad_ms[] = {"ms", "1m s", "1mss", "1 ms", "-5ms", "1.5ms", "1sm"};
    for (size_t i = 0; i < sizeof(bad_ms) / sizeof(bad_ms[0]); i++)
        assert_int_equal(duration_parse_ms(bad_ms[i], &ms), -1);
    const char *bad[] = {"",
                         "m",
                         "-1s",
                         "1w",
                         "1.5h",
                         "1msx",
                         "1 s",
                         " 1s",
                         "1s ",
                         "1hh",
                         "99999999999999999999",
                         "9999999999999999d",
                         "+5s",
                         "0x10",
                         "1e3s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        s = ms = 7;
        assert_int_equal(duration_parse_s(bad[i], &s), -1);
        assert_int_equal(duration_parse_ms(bad[i], &ms), -1);
        assert_true(s == 7 && ms == 7); /* nothing written */
    }
    assert_int_equal(duration_parse_s(NULL, &s), -1);
}

/* The edges of int64 milliseconds: the largest that fits, one past it. */
static void
test_duration_limits(void **state)
{
    int64_t ms;

    (void)state;
    assert_int_equal(duration_parse_ms("9223372036854775807ms", &ms), 0);
    assert_true(ms == INT64_MAX);
    assert_int_equal(duration_parse_ms("9223372036854775808ms", &ms), -1);
    assert_int_equal(duration_parse_ms("9223372036854775s", &ms), 0);
    assert_true(ms == 9223372036854775000);
    assert_int_equal(duration_parse_ms("9223372036854776s", &ms), -1);
    assert_int_equal(duration_parse_ms("106751991167d", &ms), 0);
    assert_int_equal(duration_parse_ms("106751991168d", &ms), -1);
    /* Leading zeros are digits like any other. */
    assert_int_equal(duration_parse_ms("0005m", &ms), 0);
    assert_true(ms == 300000);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_duration_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
