/* test_quantity.c -- the resource.Quantity grammar: every form, every refusal */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "quantity.h"

struct good {
    const char *in;
    int64_t want;
};

static const struct good goods[] = {
    /* what the API server canonicalises budgets to */
    {"5k", 5000},
    {"3k", 3000},
    {"14k", 14000},
    {"5000", 5000},
    {"1536Mi", 1610612736},
    {"1536", 1536},
    {"0", 0},
    {"00", 0},
    {"-0", 0},
    {"+0.0", 0},
    {"0e999", 0},
    {"0Ei", 0},
    /* signs: the budget layer refuses negatives, the grammar has them */
    {"+5", 5},
    {"-5", -5},
    {"-1.5", -2},
    {"-0.5", -1},
    /* fractions, rounded up like Quantity.Value() */
    {"1.5", 2},
    {"1.0", 1},
    {".5", 1},
    {"5.", 5},
    {"1.", 1},
    {"2.000000000000000000000000001", 3},
    {"0.000000000000000000000000001", 1},
    {"1.5k", 1500},
    {"1.2345k", 1235},
    {"1.5Gi", 1610612736},
    {"0.5Ki", 512},
    {"0.1Ki", 103},
    {"0.001Ki", 2},
    {"0.0000000000000000001Ei", 1},
    /* decimal SI */
    {"100m", 1},
    {"1000m", 1},
    {"1001m", 2},
    {"1n", 1},
    {"1u", 1},
    {"1000000u", 1},
    {"1000000000n", 1},
    {"2M", 2000000},
    {"2G", 2000000000},
    {"2T", 2000000000000},
    {"2P", 2000000000000000},
    {"2E", 2000000000000000000},
    /* binary SI */
    {"1Ki", 1024},
    {"1Mi", 1048576},
    {"1Gi", 1073741824},
    {"1Ti", 1099511627776},
    {"1Pi", 1125899906842624},
    {"1Ei", 1152921504606846976},
    {"7Ei", 8070450532247928832},
    /* decimal exponents */
    {"1e3", 1000},
    {"1E3", 1000},
    {"1e+3", 1000},
    {"1.5e3", 1500},
    {"1.5E3", 1500},
    {"15e-1", 2},
    {"1e-2", 1},
    {"100e-2", 1},
    {"1e0", 1},
    {"1e-400", 1},
    {"1e-100000", 1}, /* the smallest exponent read */
    {"1e18", 1000000000000000000},
    {"12345678901234567890e-10", 1234567891},
    {"1e000000000000000000000000003", 1000},
    /* the edges of int64 */
    {"9223372036854775807", INT64_MAX},
    {"-9223372036854775807", -INT64_MAX},
    {"9.223372036854775807E", INT64_MAX},
    {"9223372036854775806.5", INT64_MAX},
    {"0009223372036854775807", INT64_MAX},
    {"9223372036854775807000e-3", INT64_MAX},
    {"8191.999999999999Pi", 9223372036854774683},
    /* the largest whole count of a binary suffix: exactly INT64_MAX >> 10 Ki */
    {"9007199254740991Ki", 9223372036854774784},
};

struct bad {
    const char *in;
    const char *why; /* a word the reason must contain */
};

static const struct bad bads[] = {
    {"", "empty"},
    {" 5", "no digits"},
    {"5 ", "suffix"},
    {"5 x", "unknown suffix \" x\""}, /* a space prints as itself */
    {"5q", "suffix \"q\""},
    {"1.2.3", "suffix"},
    {"Mi", "no digits"},
    {"--5", "no digits"},
    {"+-5", "no digits"},
    {"5e", "suffix"},
    {"5e+", "suffix"},
    {"5e-", "suffix"},
    {"5e1.5", "suffix"},
    {"0x10", "suffix"},
    {"5KI", "suffix"},
    {"5K", "suffix"},
    {"5mi", "suffix"},
    {"5Mib", "suffix"},
    {"5kk", "suffix"},
    {"5ki", "suffix"},
    {"5i", "suffix"},
    {".", "no digits"},
    {"+", "no digits"},
    {"-", "no digits"},
    {"+.", "no digits"},
    {"e3", "no digits"},
    {"5e3Mi", "suffix"},
    {"5Mi3", "suffix"},
    {"1,5", "suffix"},
    {"\t5", "no digits"},
    {"5\n", "suffix \"\\x0a\""},
    {"1e400", "64 bits"},
    {"1e19", "64 bits"},
    {"8Ei", "64 bits"},
    {"9223372036854775808", "64 bits"},
    {"-9223372036854775808", "64 bits"},
    {"9223372036854775807.1", "64 bits"},
    {"10000000000000000000", "64 bits"},
    {"99999999999999999999999", "64 bits"},
    {"8192Pi", "64 bits"},
    {"9007199254740992Ki", "64 bits"},
    {"9.3E", "64 bits"},
    {"1e100000", "64 bits"}, /* the largest exponent read: too big, not out of range */
    {"1e100001", "exponent out of range"},
    {"1e-100001", "exponent out of range"},
    {"5\xff", "\\xff"},
    {"5\\", "suffix \"\\x5c\""},
    {"5\x7f", "suffix \"\\x7f\""},
    {"5Mi\"junk\"", "\\x22"},
    {"5abcdefghijklmnopqrstuvwxyz", "..."},
    {"5abcdefghijklmnopqrstuvwxyz", "unknown suffix \"abcdefghijklmnop...\""},
};

static void
test_good(void **state)
{
    char err[128];
    int64_t v;
    size_t i;

    for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
        v = 12345;
        err[0] = '\0';
        if (quantity_parse(goods[i].in, &v, err, sizeof(err)) != 0)
            fail_msg("\"%s\" refused: %s", goods[i].in, err);
        if (v != goods[i].want)
            fail_msg("\"%s\" gave %lld, want %lld", goods[i].in, (long long)v,
                     (long long)goods[i].want);
    }
}

static void
test_bad(void **state)
{
    char err[128];
    int64_t v;
    size_t i;

    for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        v = 12345;
        err[0] = '\0';
        if (quantity_parse(bads[i].in, &v, err, sizeof(err)) != -1)
            fail_msg("\"%s\" accepted as %lld", bads[i].in, (long long)v);
        if (strstr(err, bads[i].why) == NULL)
            fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", bads[i].in, err, bads[i].why);
        assert_int_equal(v, 12345); /* untouched on failure */
    }
}

/* With a length, an embedded NUL is refused, never read as a shorter value. */
static void
test_length(void **state)
{
    char err[64];
    int64_t v = 0;
    char big[1100];

    assert_int_equal(quantity_parse_n("3k\0junk", 7, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "NUL"));
    assert_int_equal(quantity_parse_n("3kjunk", 2, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 3000);
    /* the byte after the len is never read, even a '.' */
    assert_int_equal(quantity_parse_n("2.5", 1, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 2);
    assert_int_equal(quantity_parse_n(NULL, 0, &v, err, sizeof(err)), -1);
    assert_int_equal(quantity_parse(NULL, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty"));

    /* 1024 characters is the longest accepted */
    memset(big, '0', sizeof(big));
    big[1023] = '7';
    assert_int_equal(quantity_parse_n(big, 1024, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 7);
    big[0] = '.';
    assert_int_equal(quantity_parse_n(big, 1024, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 1);
    assert_int_equal(quantity_parse_n(big, 1025, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "longer"));
}

/* With a length, an "e" ending the value is a suffix, not an exponent whose
 * sign lies past the length. */
static void
test_length_cuts_exponent(void **state)
{
    char err[64];
    int64_t v = 12345;

    (void)state;
    assert_int_equal(quantity_parse_n("5e-3", 2, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "unknown suffix \"e\""));
    assert_int_equal(quantity_parse_n("5e+3", 2, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "unknown suffix \"e\""));
    assert_int_equal(v, 12345);
}

/* With a length, a zero value followed by a digit past the length is 0: the
 * byte after the length is never read. */
static void
test_length_zero_before_digit(void **state)
{
    char err[64];
    int64_t v = 12345;

    (void)state;
    assert_int_equal(quantity_parse_n("00", 1, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 0);
    v = 12345;
    assert_int_equal(quantity_parse_n("0.00", 3, &v, err, sizeof(err)), 0);
    assert_int_equal(v, 0);
}

/* A NULL or empty error buffer is fine. */
static void
test_no_err_buffer(void **state)
{
    int64_t v = 0;
    char err[1] = {'x'};

    assert_int_equal(quantity_parse("5q", &v, NULL, 0), -1);
    assert_int_equal(quantity_parse("5q", &v, NULL, 64),
                     -1); /* no buffer: never written */
    assert_int_equal(quantity_parse("5q", &v, err, 0), -1);
    assert_int_equal(err[0], 'x');
    assert_int_equal(quantity_parse("5q", &v, err, 1), -1);
    assert_int_equal(err[0], '\0');
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_length_cuts_exponent),
        cmocka_unit_test(test_length_zero_before_digit),
        cmocka_unit_test(test_no_err_buffer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
