/* test_budget_json.c -- budget_source on each candidate and on the victim, written to the
 * audit store and read back by `audit` (SPEC "Where budgets come from") */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "audit_format.h"
#include "store.h"
#include "store_json.h"

static const struct store_candidate cands[] = {
    {"llm", "vllm-0", 9000, 1, 4000, 1, NULL},
    {"team-a", "infer-half", 30000, 1, 40779, 0, "within_budget"},
    {"ml", "plain", 100, 0, 0, 0, "no_budget"},
};
static const char *const sources[] = {"hami", "kai", NULL};
static const struct store_victim victim = {"llm", "vllm-0", 9000, 1, 4000, 5000};

struct seen {
    char *json;
    char table[4096];
};

static int
got(int64_t id, const struct store_decision *d, void *arg)
{
    struct seen *s = arg;
    json_t *j = audit_decision_json(d, id);
    FILE *f = fmemopen(s->table, sizeof(s->table) - 1, "w");

    assert_non_null(j);
    s->json = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    assert_non_null(f);
    audit_decision_print(f, d, id);
    fclose(f);
    return 0;
}

static void
test_round_trip(void **state)
{
    char path[] = "/tmp/gvw-budget-json-XXXXXX", err[256];
    struct store_decision d = {
        .sd_time_ms = 1780300000000,
        .sd_node = "gpu-h100-1",
        .sd_trigger = "GPUVRAMLow",
        .sd_result = "would_recycle",
        .sd_reason = "llm/vllm-0 is over its budget",
        .sd_floor_mib = 1536,
        .sd_dry_run = 1,
        .sd_action = "evict",
        .sd_victim = &victim,
        .sd_candidates = cands,
        .sd_candidate_count = 3,
        .sd_budget_sources = sources,
        .sd_victim_budget_source = "hami",
    };
    struct seen s = {0};
    struct store *st;
    int64_t id = 0;
    int fd;

    (void)state;
    assert_true((fd = mkstemp(path)) >= 0);
    close(fd);
    unlink(path);
    st = store_open(path, STORE_READWRITE, err, sizeof(err));
    assert_non_null(st);
    assert_int_equal(store_decision_record(st, &d, &id, err, sizeof(err)), 0);
    assert_int_equal(store_get_decision(st, id, got, &s, err, sizeof(err)), 1);
    assert_non_null(s.json);
    assert_non_null(
        strstr(s.json, "\"victim\":{\"budget_mib\":4000,\"budget_source\":\"hami\","));
    assert_non_null(strstr(s.json, "{\"budget_mib\":4000,\"budget_source\":\"hami\","
                                   "\"eligible\":true,\"namespace\":\"llm\""));
    assert_non_null(strstr(s.json, "{\"budget_mib\":40779,\"budget_source\":\"kai\","));
    /* no budget: no source */
    assert_non_null(strstr(s.json, "{\"budget_mib\":null,\"eligible\":false,"
                                   "\"namespace\":\"ml\""));
    /* the table names a source other than GPUMEM_RESOURCE */
    assert_non_null(strstr(s.table, "budget 4000 MiB (hami), overshoot +5000 MiB"));
    assert_non_null(strstr(s.table, "team-a/infer-half [kai]"));
    assert_null(strstr(s.table, "ml/plain ["));
    free(s.json);
    store_close(st);
    unlink(path);
}

/* Without sources (rows written before, or BUDGET_SOURCES unknown): nothing added. */
static void
test_no_sources_unchanged(void **state)
{
    json_t *a = store_candidates_json(cands, 3),
           *b = store_candidates_json_src(cands, NULL, 3);
    char *x = json_dumps(a, JSON_COMPACT), *y = json_dumps(b, JSON_COMPACT);

    (void)state;
    assert_string_equal(x, y);
    assert_null(strstr(x, "budget_source"));
    free(x);
    free(y);
    json_decref(a);
    json_decref(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_no_sources_unchanged),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
