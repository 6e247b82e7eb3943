/* test_pod_model.c -- one PodList, one reading: serve's decision, the exporter and
 * `budgets --suggest` see the same pods with the same budgets (common/pod), and what
 * only one of them keeps or refuses stays its own */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/testdata.h"

#include "podlist.h"
#include "pods_json.h"
#include "suggest_pods.h"

#define LIT(s) s, sizeof(s) - 1
#define RES "viktorbarzin.me/gpumem"

static const struct pod_parse_opts decision = {
    .po_resource = RES, .po_protect_annotation = "gpu-vram-watchdog/protected"};

static int
same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* b's budget is a's, as the decision reads it. */
static void
same_budget(const struct pod *a, const struct pod *b, const char *who)
{
    if (a->p_budget_state != b->p_budget_state || a->p_budget_mib != b->p_budget_mib ||
        a->p_budget_gpus != b->p_budget_gpus ||
        a->p_budget_base_mib != b->p_budget_base_mib ||
        !same_str(a->p_budget_source, b->p_budget_source) ||
        !same_str(a->p_budget_error, b->p_budget_error))
        fail_msg(
            "%s/%s: %s reads state %d, %lld MiB, %s, '%s'; the decision %d, %lld MiB, "
            "%s, '%s'",
            a->p_namespace, a->p_name, who, (int)b->p_budget_state,
            (long long)b->p_budget_mib, b->p_budget_source ? b->p_budget_source : "-",
            b->p_budget_error ? b->p_budget_error : "", (int)a->p_budget_state,
            (long long)a->p_budget_mib, a->p_budget_source ? a->p_budget_source : "-",
            a->p_budget_error ? a->p_budget_error : "");
}

static const struct pod *
by_uid(const struct pod_list *l, const char *uid)
{
    for (size_t i = 0; i < l->pl_count; i++)
        if (strcmp(l->pl_pods[i].p_uid, uid) == 0)
            return &l->pl_pods[i];
    return NULL;
}

/* Every pod the decision sees, the exporter and --suggest see with its budget; what
 * they see beyond it is a pod the decision leaves out (finished, a reservation
 * pod), with no budget. */
static void
test_one_reading(void **state)
{
    static const char *const files[] = {"pods-incident.json", "kube-pods-node.json",
                                        "remedy-pods-incident.json", "budget-hami.json",
                                        "budget-kai.json"};
    static const char *const orders[] = {"resource", "resource,hami,kai",
                                         "kai,hami,resource"};
    struct pod_list dec, exp, sug;
    struct bsrc_order o;
    char err[256], *body;
    size_t len, compared = 0;

    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        body = test_data_load(files[f], &len);
        for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
            assert_int_equal(bsrc_order_parse(orders[k], &o, err, sizeof(err)), 0);
            assert_int_equal(
                pods_json_parse_sources(body, len, &decision, &o, &dec, err, sizeof(err)),
                0);
            assert_int_equal(
                podlist_parse_sources(body, len, RES, &o, &exp, err, sizeof(err)), 0);
            assert_int_equal(
                sg_pods_parse_sources(body, len, RES, &o, &sug, err, sizeof(err)), 0);
            assert_null(exp.pl_budgets_error);
            for (size_t i = 0; i < dec.pl_count; i++) {
                const struct pod *d = &dec.pl_pods[i], *e, *s;
                assert_non_null(e = podlist_find(&exp, d->p_uid));
                assert_non_null(s = by_uid(&sug, d->p_uid));
                assert_string_equal(e->p_name, d->p_name);
                assert_string_equal(s->p_namespace, d->p_namespace);
                same_budget(d, e, "the exporter");
                same_budget(d, s, "--suggest");
                assert_true(same_str(d->p_budget_decl, s->p_budget_decl));
                assert_false(sg_pod_gone(s));
                compared++;
            }
            for (size_t i = 0; i < exp.pl_count; i++)
                if (by_uid(&dec, exp.pl_pods[i].p_uid) == NULL) {
                    assert_true(exp.pl_pods[i].p_reservation);
                    assert_int_equal(podlist_budget(&exp.pl_pods[i]), PL_BUDGET_NONE);
                }
            for (size_t i = 0; i < sug.pl_count; i++)
                if (by_uid(&dec, sug.pl_pods[i].p_uid) == NULL) {
                    assert_true(sg_pod_gone(&sug.pl_pods[i]));
                    assert_int_equal(sug.pl_pods[i].p_budget_state, BUDGET_NONE);
                    assert_null(sug.pl_pods[i].p_budget_source);
                }
            pod_list_free(&dec);
            pod_list_free(&exp);
            pod_list_free(&sug);
        }
        free(body);
    }
    assert_true(compared > 100);
}

/* With kai a source, a KAI reservation pod is no tenant of the decision, but its
 * processes are its own: the exporter keeps it (no budget), found by its cgroup's
 * UID and container ID. */
static void
test_exporter_keeps_reservation_pods(void **state)
{
    /* clang-format off */
    const char body[] = "{\"kind\":\"PodList\",\"items\":["
        "{\"metadata\":{\"name\":\"gpu-reservation-x\",\"namespace\":\"kai-resource-reservation\","
        "\"uid\":\"u-res\",\"annotations\":{\"gpu-fraction\":\"0.5\"}},"
        "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"r\","
        "\"containerID\":\"containerd://abc\"}]}},"
        "{\"metadata\":{\"name\":\"infer\",\"namespace\":\"ml\",\"uid\":\"u-inf\","
        "\"annotations\":{\"gpu-fraction\":\"0.5\"}},\"status\":{\"phase\":\"Running\"}}]}";
    /* clang-format on */
    struct pod_list dec, exp;
    struct bsrc_order kai;
    const struct pod *p;
    char err[256];

    assert_int_equal(bsrc_order_parse("kai", &kai, err, sizeof(err)), 0);
    assert_int_equal(
        pods_json_parse_sources(LIT(body), &decision, &kai, &dec, err, sizeof(err)), 0);
    assert_int_equal(dec.pl_count, 1);
    assert_int_equal(podlist_parse_sources(LIT(body), RES, &kai, &exp, err, sizeof(err)),
                     0);
    assert_int_equal(exp.pl_count, 2);
    assert_non_null(p = podlist_find(&exp, "u-res"));
    assert_int_equal(podlist_budget(p), PL_BUDGET_NONE);
    assert_null(p->p_budget_source);
    assert_string_equal(podlist_container(p, "abc"), "r");
    assert_int_equal(podlist_budget(podlist_find(&exp, "u-inf")), PL_BUDGET_SHARE);
    pod_list_free(&dec);
    pod_list_free(&exp);
}

/* Where the decision refuses a list for what only the budgets read (a Status, a key
 * of a container twice), the exporter keeps the pods, reads no budget, and says why
 * in the decision's own words. */
static void
test_exporter_refuses_budgets_as_the_decision_does(void **state)
{
    static const char *const bodies[] = {
        "{\"kind\":\"Status\",\"message\":\"etcd timed out\",\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"ua\"}}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"ua\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"1k\"}},\"resources\":{}}]}},"
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\",\"uid\":\"ub\"},"
        "\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES
        "\":\"2k\"}}}]}}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"ua\","
        "\"ownerReferences\":[],\"ownerReferences\":[]}}]}",
    };
    static const char *const why[] = {"the API server answered \"etcd timed out\"",
                                      "duplicate key \"resources\"",
                                      "duplicate key \"ownerReferences\""};
    struct pod_list l;
    char err[256], said[256];

    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        assert_int_equal(pods_json_parse(bodies[i], strlen(bodies[i]), &decision, &l,
                                         said, sizeof(said)),
                         -1);
        assert_non_null(strstr(said, why[i]));
        assert_int_equal(
            podlist_parse(bodies[i], strlen(bodies[i]), RES, &l, err, sizeof(err)), 0);
        assert_non_null(l.pl_budgets_error);
        assert_string_equal(l.pl_budgets_error, said);
        assert_true(l.pl_count >= 1);
        for (size_t k = 0; k < l.pl_count; k++)
            assert_int_equal(podlist_budget(&l.pl_pods[k]), PL_BUDGET_NONE);
        pod_list_free(&l);
        /* Without a resource nothing is read for budgets, nor refused. */
        assert_int_equal(
            podlist_parse(bodies[i], strlen(bodies[i]), NULL, &l, err, sizeof(err)), 0);
        assert_null(l.pl_budgets_error);
        pod_list_free(&l);
    }
}

/* --suggest lists every container's declaration, those after a broken one too, yet
 * reads the pod's budget exactly as the decision does: HAMi's reading ends where
 * the decision's stopped, and a key twice in a container the decision never read
 * refuses nothing. */
static void
test_suggest_reads_past_a_broken_container(void **state)
{
    /* clang-format off */
    const char body[] = "{\"items\":[{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\","
        "\"uid\":\"u\"},\"spec\":{\"containers\":["
        "{\"name\":\"broken\",\"resources\":{\"limits\":{\"" RES "\":\"5q\"}}},"
        "{\"name\":\"hami\",\"name\":\"again\",\"resources\":{\"limits\":{"
        "\"nvidia.com/gpu\":\"2\",\"nvidia.com/gpumem\":\"4000\"}}},"
        "7]}}]}";
    /* clang-format on */
    struct pod_list dec, sug;
    struct bsrc_order o;
    const struct pod *p;
    char err[256];

    assert_int_equal(bsrc_order_parse("hami,resource", &o, err, sizeof(err)), 0);
    assert_int_equal(
        pods_json_parse_sources(LIT(body), &decision, &o, &dec, err, sizeof(err)), 0);
    assert_int_equal(sg_pods_parse_sources(LIT(body), RES, &o, &sug, err, sizeof(err)),
                     0);
    p = &sug.pl_pods[0];
    same_budget(&dec.pl_pods[0], p, "--suggest");
    assert_int_equal(p->p_budget_state, BUDGET_BAD);
    assert_string_equal(p->p_budget_source, "resource");
    assert_non_null(strstr(p->p_budget_error, "\"5q\" is not a quantity"));
    assert_int_equal(p->p_decl_count, 3);
    assert_string_equal(p->p_decls[0].pd_name, "broken");
    assert_true(p->p_decls[0].pd_declares);
    assert_int_equal(p->p_decls[0].pd_mib, -1);
    assert_string_equal(p->p_decls[1].pd_name, "hami");
    assert_true(p->p_decls[1].pd_hami);
    assert_int_equal(p->p_decls[1].pd_gpus, 2);
    assert_false(p->p_decls[1].pd_declares);
    assert_string_equal(p->p_decls[2].pd_name, ""); /* not an object: nothing declared */
    assert_false(p->p_decls[2].pd_declares);
    pod_list_free(&dec);
    pod_list_free(&sug);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_reading),
        cmocka_unit_test(test_exporter_keeps_reservation_pods),
        cmocka_unit_test(test_exporter_refuses_budgets_as_the_decision_does),
        cmocka_unit_test(test_suggest_reads_past_a_broken_container),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
