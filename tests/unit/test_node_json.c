/* test_node_json.c -- a Node's advertised gpumem capacity, and every way the body can be
 * wrong */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "node_json.h"

#define RES "viktorbarzin.me/gpumem"

static int
cap(const char *body, enum node_capacity_state *st, int64_t *mib, char *err)
{
    *st = (enum node_capacity_state) - 1;
    *mib = -7;
    return node_json_capacity(body, strlen(body), RES, st, mib, err, 256);
}

static void
test_reads_the_quantity(void **state)
{
    enum node_capacity_state st;
    int64_t mib;
    char err[256];

    (void)state;
    /* As the API server canonicalises "14000". */
    assert_int_equal(
        cap("{\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-1\"},\"status\":"
            "{\"allocatable\":{\"" RES "\":\"1\"},\"capacity\":{\"cpu\":\"8\","
            "\"" RES "\":\"14k\"}}}",
            &st, &mib, err),
        0);
    assert_int_equal(st, NODE_CAPACITY_OK);
    assert_int_equal(mib, 14000);
    assert_int_equal(
        cap("{\"status\":{\"capacity\":{\"" RES "\":\"13824\"}}}", &st, &mib, err), 0);
    assert_int_equal(mib, 13824);
    /* An escaped key still names the resource. */
    assert_int_equal(
        cap("{\"status\":{\"capacity\":{\"viktorbarzin.me\\/gpumem\":\"2Ki\"}}}", &st,
            &mib, err),
        0);
    assert_int_equal(mib, 2048);
}

static void
test_absent(void **state)
{
    const char *bodies[] = {
        "{\"kind\":\"Node\"}",
        "{\"status\":null}",
        "{\"status\":{}}",
        "{\"status\":{\"capacity\":null}}",
        "{\"status\":{\"capacity\":{\"cpu\":\"8\",\"nvidia.com/gpu\":\"1\"}}}",
        "{\"status\":{\"allocatable\":{\"" RES "\":\"14k\"}}}", /* not the capacity */
        "{\"metadata\":{\"labels\":{\"" RES "\":\"14k\"}}}",
    };
    enum node_capacity_state st;
    int64_t mib;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        if (cap(bodies[i], &st, &mib, err) != 0)
            fail_msg("%s: %s", bodies[i], err);
        assert_int_equal(st, NODE_CAPACITY_ABSENT);
        assert_int_equal(mib, -7); /* untouched */
    }
}

static void
test_malformed(void **state)
{
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"", "cannot read the Node"},
        {"[]", "cannot read the Node"},
        {"not json", "cannot read the Node"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"14k\"}}", "cannot read the Node"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"14k\"}}} x", "cannot read the Node"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"1\xff\"}}}", "cannot read the Node"},
        {"{\"status\":{},\"status\":{}}", "duplicate key"},
        {"{\"status\":{\"capacity\":{},\"capacity\":{}}}", "duplicate key"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"1\",\"" RES "\":\"2\"}}}",
         "duplicate key"},
        {"{\"status\":[]}", "status is not an object"},
        {"{\"status\":{\"capacity\":\"14k\"}}", "status.capacity is not an object"},
        {"{\"status\":{\"capacity\":{\"" RES "\":14000}}}", "is not a string"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"14q\"}}}", "is not a quantity"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"\"}}}", "is not a quantity"},
        {"{\"status\":{\"capacity\":{\"" RES "\":\"-1\"}}}", "is negative"},
        {"{\"status\":{\"capacity\":{\"" RES
         "\":\"1000000000000000000000000000000000000000000000000000000000000000000000\"}}}",
         "is not a quantity"},
        /* A wrong shape is reported only when the rest is JSON. */
        {"{\"status\":[] , }", "cannot read the Node"},
    };
    enum node_capacity_state st;
    int64_t mib;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        if (cap(cases[i].body, &st, &mib, err) != -1 ||
            strstr(err, cases[i].want) == NULL)
            fail_msg("case %zu: %s -> \"%s\", want \"%s\"", i, cases[i].body, err,
                     cases[i].want);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_the_quantity),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
