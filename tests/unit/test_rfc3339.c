/* test_rfc3339.c -- the one RFC 3339 parser: the Kubernetes form (seconds) and the
 * audit's (ms, space) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "rfc3339.h"

/* The strict entry point, as pods_json reads creationTimestamp/startTime. */
static void
test_strict_seconds(void **state)
{
    static const struct {
        const char *in;
        int64_t want;
    } t[] = {
        {"2026-06-02T10:00:00Z", 1780394400},
        {"2026-06-02t10:00:00z", 1780394400},
        {"2026-06-02T10:00:00.999Z", 1780394400}, /* the fraction is dropped */
        {"2026-06-02T12:00:00+02:00", 1780394400},
        {"2026-06-02T08:30:00-01:30", 1780394400},
        {"2024-02-29T00:00:00Z", 1709164800}, /* a leap day */
        {"2016-12-31T23:59:60Z", 1483228800}, /* a leap second */
        {"1970-01-01T00:00:01Z", 1},
        /* Unknown (0): not after the epoch, before 1970, malformed. */
        {"1970-01-01T00:00:00Z", 0},
        {"1970-01-01T00:00:00.5Z", 0},
        {"1970-01-01T00:30:00+01:00", 0},
        {"1969-12-31T23:00:00-02:00", 0}, /* after the epoch, but the year is refused */
        {"2026-06-02 10:00:00Z", 0},      /* the space is the audit's alone */
        {"2026-06-02T10:00:00", 0},
        {"2026-06-02T10:00:00.Z", 0},
        {"2026-06-02T10:00:00Zjunk", 0},
        {"2026-13-01T00:00:00Z", 0},
        {"2026-02-29T00:00:00Z", 0},
        {"2026-06-02T24:00:00Z", 0},
        {"2026-06-02T10:60:00Z", 0},
        {"2026-06-02T10:00:61Z", 0},
        {"2026-06-02T10:00:00+24:00", 0},
        {"2026-06-02T10:00:00+02:60", 0},
        {"2026-06-02T10:00:00+0200", 0},
        {"2026-6-02T10:00:00Z", 0},
        {"", 0},
        {"2026", 0},
        {"abcd-ef-ghTij:kl:mnZ", 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (rfc3339_parse(t[i].in) != t[i].want)
            fail_msg("\"%s\": got %lld, want %lld", t[i].in,
                     (long long)rfc3339_parse(t[i].in), (long long)t[i].want);
}

/* The lenient entry point, as the audit's --since reads a time. */
static void
test_lenient_ms(void **state)
{
    static const struct {
        const char *in;
        int64_t want;
    } t[] = {
        {"2026-06-02T10:00:00Z", 1780394400000},
        {"2026-06-02 10:00:00Z", 1780394400000},
        {"2026-06-02T10:00:00.5Z", 1780394400500},
        {"2026-06-02T10:00:00.123456Z", 1780394400123},
        {"2026-06-02T12:00:00.25+02:00", 1780394400250},
        {"1970-01-01T00:00:00Z", 0},
        {"1969-12-31T23:59:59Z", -1000}, /* any year: the caller decides */
    };
    static const char *const bad[] = {
        "",
        "2026-06-02",
        "2026-06-02X10:00:00Z",
        "2026-06-02  10:00:00Z",
        "2026-06-02T10:00:00",
        "2026-06-02T10:00:00.Z",
        "2026-06-02T10:00:00Z ",
        "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2026-06-02T10:00:00+2:00",
        "24h",
    };
    int64_t ms;

    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        ms = 7;
        if (rfc3339_parse_ms(t[i].in, RFC3339_SPACE, &ms) != 0 || ms != t[i].want)
            fail_msg("\"%s\": got %lld, want %lld", t[i].in, (long long)ms,
                     (long long)t[i].want);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ms = 7;
        if (rfc3339_parse_ms(bad[i], RFC3339_SPACE, &ms) != -1 || ms != 7)
            fail_msg("\"%s\": accepted", bad[i]);
    }
    /* Without the flag the space is refused. */
    assert_int_equal(rfc3339_parse_ms("2026-06-02 10:00:00Z", 0, &ms), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_seconds),
        cmocka_unit_test(test_lenient_ms),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
