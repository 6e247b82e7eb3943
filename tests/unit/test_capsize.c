/* test_capsize.c -- GPUMEM_CAPACITY_MIB=auto: the setting, the exporter's totals and
 * GPU feature discovery's labels, malformed ones first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "capsize.h"
#include "config.h" /* config_capacity_parse */

#define GIB_BYTES(mib) ((double)(mib)*1048576.0)

static void
test_setting(void **state)
{
    static const char *const bad[] = {"",       "-1",     "14k",
                                      "14000 ", " 14000", "auto2",
                                      "1e4",    "0x10",   "99999999999999999999",
                                      NULL};
    int is_auto = 7;
    int64_t mib = 7;

    (void)state;
    assert_int_equal(config_capacity_parse("auto", &is_auto, &mib), 0);
    assert_int_equal(is_auto, 1);
    assert_int_equal(config_capacity_parse("AUTO", &is_auto, &mib), 0);
    assert_int_equal(config_capacity_parse("14000", &is_auto, &mib), 0);
    assert_int_equal(is_auto, 0);
    assert_int_equal(mib, 14000);
    assert_int_equal(config_capacity_parse("0", &is_auto, &mib), 0);
    assert_int_equal(mib, 0);
    for (int i = 0; bad[i] != NULL; i++) {
        is_auto = 7;
        mib = 7;
        assert_int_equal(config_capacity_parse(bad[i], &is_auto, &mib), -1);
        assert_int_equal(is_auto, 7); /* nothing set on -1 */
        assert_int_equal(mib, 7);
    }
    assert_int_equal(config_capacity_parse(NULL, &is_auto, &mib), -1);
}

static void
test_gfd_good(void **state)
{
    int64_t mib = -1;
    char err[256] = "";

    (void)state;
    /* A T4: 15360 MiB, one card, 2048 kept back. */
    assert_int_equal(capsize_from_gfd("15360", "1", 2048, &mib, err, sizeof(err)), 1);
    assert_int_equal(mib, 13312);
    /* An 8-way H100 node as GFD labels it. */
    assert_int_equal(capsize_from_gfd("81559", "8", 2048, &mib, err, sizeof(err)), 1);
    assert_int_equal(mib, 8 * (81559 - 2048));
    /* No labels at all: not known here, not an error. */
    mib = -1;
    assert_int_equal(capsize_from_gfd(NULL, NULL, 2048, &mib, err, sizeof(err)), 0);
    assert_int_equal(mib, -1);
}

static void
test_gfd_malformed(void **state)
{
    static const struct {
        const char *mem, *count, *why;
    } bad[] = {
        {"16GB", "1", "not a positive whole number of MiB"},
        {"24Gi", "1", "not a positive whole number"},
        {"-15360", "1", "not a positive whole number"},
        {"15360.5", "1", "not a positive whole number"},
        {" 15360", "1", "not a positive whole number"},
        {"", "1", "not a positive whole number"},
        {"0", "1", "not a positive whole number"},
        {"15360", "0", "nvidia.com/gpu.count=\"0\" is not a positive whole number"},
        {"15360", "two", "not a positive whole number"},
        {"15360", "-1", "not a positive whole number"},
        {"99999999999999999999999", "1", "beyond any real GPU"},
        {"15360", "100000", "beyond any real GPU"},
        {"15360", NULL, "nvidia.com/gpu.memory is there but nvidia.com/gpu.count is not"},
        {NULL, "1", "nvidia.com/gpu.count is there but nvidia.com/gpu.memory is not"},
        {"2048", "1", "size 2048 MiB is not above GPUMEM_RESERVE_MIB=2048"},
        {"1024", "4", "is not above GPUMEM_RESERVE_MIB"},
    };
    int64_t mib;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mib = -7;
        err[0] = '\0';
        assert_int_equal(
            capsize_from_gfd(bad[i].mem, bad[i].count, 2048, &mib, err, sizeof(err)), -1);
        assert_int_equal(mib, -7);
        if (strstr(err, bad[i].why) == NULL)
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].why);
    }
}

/* A reading as the query gpu_memory_total_bytes gives it: node and GPU labels. */
static struct usage_series ser[8];
static struct usage_reading rd;

static void
add(const char *node, const char *gpu, double bytes)
{
    struct usage_series *s = &ser[rd.ur_count++];

    s->us_namespace = (char *)node;
    s->us_pod = NULL;
    s->us_gpu = (char *)gpu;
    s->us_bytes = bytes;
}

static void
reset(void)
{
    memset(ser, 0, sizeof(ser));
    rd.ur_series = ser;
    rd.ur_count = 0;
    rd.ur_pool = NULL;
}

static void
test_series_good(void **state)
{
    int64_t mib = -1;
    char err[256] = "";

    (void)state;
    reset();
    add("t4", "GPU-a", GIB_BYTES(15360));
    add("h100", "GPU-b", GIB_BYTES(81559));
    add("h100", "GPU-c", GIB_BYTES(81559) + 4096); /* a part MiB rounds down */
    add("h100", "GPU-b", GIB_BYTES(81559));        /* the same card scraped twice */
    add(NULL, "GPU-x", GIB_BYTES(1));              /* no node: not anyone's */
    assert_int_equal(capsize_from_series(&rd, "t4", 2048, &mib, err, sizeof(err)), 1);
    assert_int_equal(mib, 13312);
    assert_int_equal(capsize_from_series(&rd, "h100", 2048, &mib, err, sizeof(err)), 1);
    assert_int_equal(mib, 2 * (81559 - 2048));
    mib = -1;
    assert_int_equal(capsize_from_series(&rd, "other", 2048, &mib, err, sizeof(err)), 0);
    assert_int_equal(mib, -1);
    assert_int_equal(capsize_from_series(NULL, "t4", 2048, &mib, err, sizeof(err)), 0);
}

static void
test_series_malformed(void **state)
{
    static const struct {
        double bytes;
        const char *gpu, *why;
    } bad[] = {
        {NAN, "GPU-a", "which no card has"},
        {-GIB_BYTES(15360), "GPU-a", "which no card has"},
        {0, "GPU-a", "which no card has"},
        {INFINITY, "GPU-a", "which no card has"},
        {1e30, "GPU-a", "which no card has"},
        {GIB_BYTES(15360), NULL, "names no GPU"},
        {GIB_BYTES(15360), "", "names no GPU"},
        {GIB_BYTES(2048), "GPU-a", "is not above GPUMEM_RESERVE_MIB=2048"},
        {GIB_BYTES(2048) + 1048575, "GPU-a", "size 2048 MiB is not above"},
    };
    int64_t mib;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        reset();
        add("n", "GPU-ok", GIB_BYTES(15360));
        add("n", bad[i].gpu, bad[i].bytes);
        mib = -7;
        err[0] = '\0';
        assert_int_equal(capsize_from_series(&rd, "n", 2048, &mib, err, sizeof(err)), -1);
        assert_int_equal(mib, -7);
        if (strstr(err, bad[i].why) == NULL)
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].why);
    }
    /* One card, two different totals: which one is true is not known. */
    reset();
    add("n", "GPU-a", GIB_BYTES(15360));
    add("n", "GPU-a", GIB_BYTES(40960));
    assert_int_equal(capsize_from_series(&rd, "n", 2048, &mib, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "two different gpu_memory_total_bytes"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setting),          cmocka_unit_test(test_gfd_good),
        cmocka_unit_test(test_gfd_malformed),    cmocka_unit_test(test_series_good),
        cmocka_unit_test(test_series_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
