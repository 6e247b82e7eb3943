/* test_verdict.c -- the verdict a decision's audit row is made of: a reason that
 * fills its buffer never eats the error, and the candidates go out whole or not at
 * all when memory runs out */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/oom.h"
#include "verdict.h"

static struct config cfg; /* zeroed: FLOOR_MIB 0, enforcing, no HA */

/* Two candidates as the policy ranks them (no pod objects: seen in usage). */
static void
two_candidates(struct policy_answer *p, struct policy_candidate c[2])
{
    memset(p, 0, sizeof(*p));
    memset(c, 0, 2 * sizeof(*c));
    c[0].pc_namespace = "immich";
    c[0].pc_name = "immich-ml";
    c[0].pc_used_mib = 10957;
    c[1].pc_namespace = "frigate";
    c[1].pc_name = "frigate-0";
    c[1].pc_used_mib = 1400;
    c[1].pc_why_not = "not_on_node";
    p->pr_candidates = c;
    p->pr_candidate_count = 2;
    p->pr_free_known = 1;
    p->pr_free_mib = 553;
}

/* A reason grown to two bytes short of its buffer, then appended to: it stays
 * a string inside its buffer, and the error beside it is untouched. */
static void
test_full_reason_keeps_error(void **state)
{
    struct verdict v;
    char fill[sizeof(v.vd_reason)];

    (void)state;
    verdict_init(&v, &cfg, "gpu-node-1", "GPUVRAMLow", "fp", 1);
    verdict_error(&v, "kube: HTTP 500");
    for (size_t len = sizeof(v.vd_reason) - 4; len < sizeof(v.vd_reason); len++) {
        memset(fill, 'r', len);
        fill[len] = '\0';
        verdict_reason(&v, "%s", fill);
        verdict_reason_append(&v, "evicted immich/immich-ml");
        assert_true(memchr(v.vd_reason, '\0', sizeof(v.vd_reason)) != NULL);
        assert_true(
            strncmp(v.vd_reason, fill,
                    len < sizeof(v.vd_reason) - 1 ? len : sizeof(v.vd_reason) - 1) == 0);
        assert_string_equal(v.vd_error, "kube: HTTP 500");
        assert_string_equal(v.vd_d.sd_reason, v.vd_reason);
    }
    verdict_free(&v);
}

/* Appending to a reason with room: "; " between the two. */
static void
test_append_separates(void **state)
{
    struct verdict v;

    (void)state;
    verdict_init(&v, &cfg, "gpu-node-1", "GPUVRAMLow", "fp", 1);
    verdict_reason_append(&v, "first");
    verdict_reason_append(&v, "second %d", 2);
    assert_string_equal(v.vd_reason, "first; second 2");
    verdict_free(&v);
}

/* No candidates: none listed, and no error. */
static void
test_no_candidates(void **state)
{
    struct verdict v;
    struct policy_answer p;

    (void)state;
    memset(&p, 0, sizeof(p));
    verdict_init(&v, &cfg, "gpu-node-1", "GPUVRAMLow", "fp", 1);
    assert_int_equal(verdict_set_policy(&v, &p), 0);
    assert_int_equal(v.vd_d.sd_candidate_count, 0);
    verdict_free(&v);
}

/* The candidates are listed, in rank order. */
static void
test_candidates_listed(void **state)
{
    struct verdict v;
    struct policy_answer p;
    struct policy_candidate c[2];

    (void)state;
    two_candidates(&p, c);
    verdict_init(&v, &cfg, "gpu-node-1", "GPUVRAMLow", "fp", 1);
    assert_int_equal(verdict_set_policy(&v, &p), 0);
    assert_int_equal(v.vd_d.sd_candidate_count, 2);
    assert_string_equal(v.vd_d.sd_candidates[0].sc_pod, "immich-ml");
    assert_string_equal(v.vd_d.sd_candidates[1].sc_why_not, "not_on_node");
    assert_int_equal(v.vd_d.sd_free_mib, 553);
    verdict_free(&v);
}

/* Out of memory for the candidates: -1 and none listed (never half a list);
 * out of memory for their budget sources only: the candidates still go out,
 * the sources unsaid. */
static void
test_candidates_out_of_memory(void **state)
{
    struct verdict v;
    struct policy_answer p;
    struct policy_candidate c[2];

    (void)state;
    two_candidates(&p, c);
    verdict_init(&v, &cfg, "gpu-node-1", "GPUVRAMLow", "fp", 1);
    oom_arm(0);
    assert_int_equal(verdict_set_policy(&v, &p), -1);
    assert_true(oom_disarm());
    assert_int_equal(v.vd_d.sd_candidate_count, 0);
    assert_null(v.vd_d.sd_candidates);
    oom_arm(1);
    assert_int_equal(verdict_set_policy(&v, &p), 0);
    assert_true(oom_disarm());
    assert_int_equal(v.vd_d.sd_candidate_count, 2);
    assert_null(v.vd_d.sd_budget_sources);
    verdict_free(&v);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_reason_keeps_error),
        cmocka_unit_test(test_append_separates),
        cmocka_unit_test(test_no_candidates),
        cmocka_unit_test(test_candidates_listed),
        cmocka_unit_test(test_candidates_out_of_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
