/* test_suggest.c -- `budgets --suggest`'s no-I/O parts: p99, rounding, parsing, owners,
 * the range answer, the tally */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "lib/terminal_safe.h"
#include "prom_matrix.h"
#include "suggest_acc.h"
#include "suggest_math.h"
#include "suggest_owner.h"
#include "suggest_pods.h"
#include "suggest_print.h"

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* p99 against a sort of every sample, on sizes around the rank's steps. */
static void
test_percentile(void **state)
{
    static const size_t sizes[] = {1, 2, 99, 100, 101, 199, 1000, 5003};
    uint32_t got, v[5003] = {0};
    unsigned seed = 7;

    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        struct sg_hist h = {0};
        size_t n = sizes[s];
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            v[i] = (seed >> 8) % (s % 2 ? 50 : 20000); /* few and many distinct values */
            assert_int_equal(sg_hist_add(&h, v[i]), 0);
        }
        qsort(v, n, sizeof(v[0]), cmp_u32);
        assert_int_equal(sg_hist_percentile(&h, 99, &got), 0);
        assert_int_equal(got, v[(99 * n + 99) / 100 - 1]);
        assert_int_equal(sg_hist_percentile(&h, 100, &got), 0);
        assert_int_equal(got, v[n - 1]);
        assert_int_equal(h.h_max, v[n - 1]);
        assert_int_equal(h.h_n, n);
        sg_hist_free(&h);
    }
    struct sg_hist empty = {0};
    assert_int_equal(sg_hist_percentile(&empty, 99, &got), -1);
}

static void
test_mib_and_suggestion(void **state)
{
    uint32_t m;

    assert_int_equal(sg_bytes_to_mib(0, &m), 0);
    assert_int_equal(m, 0);
    assert_int_equal(sg_bytes_to_mib(1, &m), 0);
    assert_int_equal(m, 1);
    assert_int_equal(sg_bytes_to_mib(1048576, &m), 0);
    assert_int_equal(m, 1);
    assert_int_equal(sg_bytes_to_mib(1048577, &m), 0);
    assert_int_equal(m, 2);
    assert_int_equal(sg_bytes_to_mib(NAN, &m), -1);
    assert_int_equal(sg_bytes_to_mib(INFINITY, &m), -1);
    assert_int_equal(sg_bytes_to_mib(-1, &m), -1);
    assert_int_equal(sg_bytes_to_mib(1e30, &m), -1);
    assert_int_equal(sg_suggest_mib(1000, 0, 1000), 1100);    /* exact */
    assert_int_equal(sg_suggest_mib(1001, 0, 1000), 1200);    /* 1101.1 rounds up */
    assert_int_equal(sg_suggest_mib(999, 0, 1000), 1100);     /* 1098.9 -> 1099 -> 1100 */
    assert_int_equal(sg_suggest_mib(1000, 1250, 1000), 1300); /* never below the max */
    assert_int_equal(sg_suggest_mib(1, 0, 0), 100);
    assert_int_equal(sg_suggest_mib(0, 0, 1000), 0);
    assert_int_equal(sg_suggest_mib(4000000000u, 0, 100000),
                     44000000000LL); /* no overflow */
}

static void
test_parse_options(void **state)
{
    static const char *const bad_h[] = {"0.1",
                                        "%",
                                        "10",
                                        "1.234%",
                                        "-1%",
                                        "1001%",
                                        "",
                                        "1.%",
                                        "10%%",
                                        " 10%",
                                        "99999999999999999999%"};
    static const char *const bad_w[] = {"59m", "91d", "3601s", "x", "", "7 d", "-7d"};
    uint32_t bp;
    int64_t s;
    char err[128];

    assert_int_equal(sg_parse_headroom("10%", &bp, err, sizeof(err)), 0);
    assert_int_equal(bp, 1000);
    assert_int_equal(sg_parse_headroom("12.5%", &bp, err, sizeof(err)), 0);
    assert_int_equal(bp, 1250);
    assert_int_equal(sg_parse_headroom("0.05%", &bp, err, sizeof(err)), 0);
    assert_int_equal(bp, 5);
    assert_int_equal(sg_parse_headroom("1000%", &bp, err, sizeof(err)), 0);
    assert_int_equal(bp, 100000);
    for (size_t i = 0; i < sizeof(bad_h) / sizeof(bad_h[0]); i++) {
        err[0] = '\0';
        assert_int_equal(sg_parse_headroom(bad_h[i], &bp, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "--headroom"));
    }
    assert_int_equal(sg_parse_headroom(NULL, &bp, err, sizeof(err)), -1);
    assert_int_equal(sg_parse_window("7d", &s, err, sizeof(err)), 0);
    assert_int_equal(s, 604800);
    assert_int_equal(sg_parse_window("1h", &s, err, sizeof(err)), 0);
    assert_int_equal(sg_parse_window("90d", &s, err, sizeof(err)), 0);
    for (size_t i = 0; i < sizeof(bad_w) / sizeof(bad_w[0]); i++) {
        err[0] = '\0';
        assert_int_equal(sg_parse_window(bad_w[i], &s, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "--window"));
    }
}

static void
test_cut_list(void **state)
{
    struct sg_seat s[] = {{"a", 5000, 0}, {"b", 3000, 0}, {"c", 2500, 0}, {"d", 400, 0}};

    assert_int_equal(sg_cut_list(s, 4, 11000), 0); /* 10900 fits */
    /* 1900 over: the smallest seat covering it alone is c (2500). */
    assert_int_equal(sg_cut_list(s, 4, 9000), 1);
    assert_true(s[2].ss_cut && !s[0].ss_cut && !s[1].ss_cut && !s[3].ss_cut);
    /* 5900 over: none covers it: a (largest), then 900 over: the smallest
     * covering is d? no, 400 < 900: c (2500). */
    assert_int_equal(sg_cut_list(s, 4, 5000), 2);
    assert_true(s[0].ss_cut && s[2].ss_cut && !s[1].ss_cut && !s[3].ss_cut);
    /* Ties go to the name. */
    struct sg_seat t[] = {{"y", 1000, 0}, {"x", 1000, 0}};
    assert_int_equal(sg_cut_list(t, 2, 1500), 1);
    assert_true(t[1].ss_cut && !t[0].ss_cut);
}

static void
test_owners(void **state)
{
    const char *kind;
    char name[64];

    assert_int_equal(sg_workload_of("ReplicaSet", "llm-5d9f8c7b6", "5d9f8c7b6", &kind,
                                    name, sizeof(name)),
                     0);
    assert_string_equal(kind, "Deployment");
    assert_string_equal(name, "llm");
    assert_int_equal(
        sg_workload_of("ReplicaSet", "rs-x", "other", &kind, name, sizeof(name)), 0);
    assert_string_equal(kind, "ReplicaSet");
    assert_string_equal(name, "rs-x");
    assert_int_equal(sg_workload_of("ReplicaSet", "abc", NULL, &kind, name, sizeof(name)),
                     0);
    assert_string_equal(kind, "ReplicaSet");
    assert_int_equal(sg_workload_of("StatefulSet", "db", NULL, &kind, name, sizeof(name)),
                     0);
    assert_string_equal(kind, "StatefulSet");
    assert_int_equal(sg_workload_of("Node", "n1", NULL, &kind, name, sizeof(name)), -1);
    assert_int_equal(sg_workload_of(NULL, NULL, NULL, &kind, name, sizeof(name)), -1);
    assert_int_equal(sg_workload_of("Job", "x", NULL, &kind, name, 1), -1); /* too long */

    assert_true(sg_name_matches("Deployment", "web", "web-7c8d9e6f5-zq2x4"));
    assert_false(sg_name_matches("Deployment", "web", "web-api-7c8d9e6f5-zq2x4"));
    assert_false(sg_name_matches("Deployment", "web", "web-7c8d9e6f5-zq2x"));
    assert_false(
        sg_name_matches("Deployment", "web", "web-7c8d9e6f5aa-zq2x4")); /* hash > 10 */
    assert_true(sg_name_matches("StatefulSet", "db", "db-0"));
    assert_true(sg_name_matches("StatefulSet", "db", "db-12"));
    assert_false(sg_name_matches("StatefulSet", "db", "db-01"));
    assert_false(sg_name_matches("StatefulSet", "db", "db-x"));
    assert_true(sg_name_matches("DaemonSet", "agent", "agent-x7k2p"));
    assert_true(sg_name_matches("Job", "train", "train-x7k2p"));
    assert_false(sg_name_matches("Job", "train", "train-x7k2"));
    assert_false(
        sg_name_matches("Rollout", "r", "r-x7k2p")); /* unknown kinds: live pods only */
    assert_false(sg_name_matches(NULL, "r", "r-x7k2p"));
    assert_false(sg_name_matches("StatefulSet", "db", "db"));
}

#define POD(name, owner, hash, containers)                                               \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"uid\":\"u-" name "\","  \
    "\"labels\":{\"pod-template-hash\":" hash "},\"ownerReferences\":" owner "},"        \
    "\"spec\":{\"containers\":" containers "},\"status\":{\"phase\":\"Running\"}}"
#define RS "[{\"kind\":\"ReplicaSet\",\"name\":\"llm-5d9f8c7b6\",\"controller\":true}]"

/* One JSON item a line, kept by hand (clang-format would run them together). */
/* clang-format off */
static const char PODS[] =
    "{\"kind\":\"PodList\",\"items\":["
    POD("llm-5d9f8c7b6-abcde", RS, "\"5d9f8c7b6\"",
        "[{\"name\":\"main\",\"resources\":{\"limits\":{\"r.io/m\":\"5k\"}}},"
        "{\"name\":\"side\",\"resources\":{\"requests\":{\"r.io/m\":\"1024\"}}},"
        "{\"name\":\"none\"}]") ","
    POD("llm-5d9f8c7b6-fghij", RS, "\"5d9f8c7b6\"",
        "[{\"name\":\"main\",\"resources\":{\"limits\":{\"r.io/m\":\"5000\"}}},"
        "{\"name\":\"side\",\"resources\":{\"requests\":{\"r.io/m\":\"1Ki\"}}}]") ","
    POD("bare", "[]", "null",
        "[{\"name\":\"b\",\"resources\":{\"limits\":{\"r.io/m\":\"5q\"}}}]") ","
    POD("db-0", "[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]", "null",
        "[{\"name\":\"db\",\"resources\":{\"limits\":{\"r.io/m\":\"2k\"}}}]")
    "]}";
/* clang-format on */

static void
test_pods(void **state)
{
    struct pod_list l;
    char err[256];

    assert_int_equal(sg_pods_parse(PODS, strlen(PODS), "r.io/m", &l, err, sizeof(err)),
                     0);
    assert_int_equal(l.pl_count, 4);
    assert_string_equal(l.pl_pods[0].p_owner_kind, "ReplicaSet");
    assert_string_equal(l.pl_pods[0].p_template_hash, "5d9f8c7b6");
    assert_int_equal(l.pl_pods[0].p_budget_state, BUDGET_OK);
    assert_int_equal(l.pl_pods[0].p_budget_mib, 6024);
    assert_int_equal(l.pl_pods[0].p_decl_count, 3);
    assert_true(l.pl_pods[0].p_decls[0].pd_declares);
    assert_int_equal(l.pl_pods[0].p_decls[0].pd_mib, 5000);
    assert_int_equal(l.pl_pods[0].p_decls[1].pd_mib, 1024);
    assert_false(l.pl_pods[0].p_decls[2].pd_declares);
    assert_null(l.pl_pods[2].p_owner_kind);
    assert_int_equal(l.pl_pods[2].p_budget_state, BUDGET_BAD); /* "5q" */
    assert_int_equal(l.pl_pods[2].p_decls[0].pd_mib, -1);
    pod_list_free(&l);

    static const char *const bad[] = {"", "{", "[]", "{\"items\":[{\"metadata\":{}}]}",
                                      "{\"items\":[]} x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(
            sg_pods_parse(bad[i], strlen(bad[i]), "r.io/m", &l, err, sizeof(err)), -1);
        assert_true(err[0] != '\0');
        assert_null(l.pl_pods);
    }
}

/* A finished pod of a workload (the replica it replaced, Succeeded or
 * Failed) is kept for its history but declares nothing: no budget from it,
 * a broken one is no error, and the live pods after it keep their own. */
static void
test_pods_finished(void **state)
{
    /* clang-format off */
    static const char body[] =
        "{\"kind\":\"PodList\",\"items\":["
        "{\"metadata\":{\"name\":\"llm-5d9f8c7b6-old\",\"namespace\":\"ml\",\"uid\":\"u1\","
        "\"ownerReferences\":" RS "},\"spec\":{\"containers\":[{\"name\":\"main\","
        "\"resources\":{\"limits\":{\"r.io/m\":\"9k\"}}}]},\"status\":{\"phase\":\"Failed\"}},"
        "{\"metadata\":{\"name\":\"job-x7k2p\",\"namespace\":\"ml\",\"uid\":\"u2\"},"
        "\"spec\":{\"containers\":[{\"name\":\"j\",\"resources\":{\"limits\":{\"r.io/m\":"
        "\"5q\"}}}]},\"status\":{\"phase\":\"Succeeded\"}},"
        POD("llm-5d9f8c7b6-new", RS, "\"5d9f8c7b6\"",
            "[{\"name\":\"main\",\"resources\":{\"limits\":{\"r.io/m\":\"2k\"}}}]")
        "]}";
    /* clang-format on */
    struct pod_list l;
    char err[256];

    assert_int_equal(sg_pods_parse(body, strlen(body), "r.io/m", &l, err, sizeof(err)),
                     0);
    assert_int_equal(l.pl_count, 3);
    assert_true(sg_pod_gone(&l.pl_pods[0]));
    assert_int_equal(l.pl_pods[0].p_budget_state, BUDGET_NONE);
    assert_true(sg_pod_gone(&l.pl_pods[1]));
    assert_int_equal(l.pl_pods[1].p_budget_state, BUDGET_NONE);
    assert_false(sg_pod_gone(&l.pl_pods[2]));
    assert_int_equal(l.pl_pods[2].p_budget_state, BUDGET_OK);
    assert_int_equal(l.pl_pods[2].p_budget_mib, 2000);
    pod_list_free(&l);
}

/* The tally: two series of one pod at one step are summed; a gone pod of
 * the same Deployment counts for it; under 1h of history gets no suggestion. */
static void
test_tally(void **state)
{
    struct pod_list l;
    struct sg_acc a;
    char err[256];
    const double M = 1048576;

    assert_int_equal(sg_pods_parse(PODS, strlen(PODS), "r.io/m", &l, err, sizeof(err)),
                     0);
    assert_int_equal(sg_acc_init(&a, 0, 60, 200, 1000), 0);
    assert_int_equal(sg_acc_add_node(&a, "n1", &l, NULL, 10000), 0);
    assert_int_equal(sg_acc_chunk_begin(&a, 0, 0, 100), 0);
    for (size_t i = 0; i < 100; i++) {
        assert_int_equal(sg_acc_sample(&a, "ml", "llm-5d9f8c7b6-abcde", i, 4000 * M), 0);
        assert_int_equal(sg_acc_sample(&a, "ml", "llm-5d9f8c7b6-abcde", i, 1000 * M + 1),
                         0);
        if (i < 30)
            assert_int_equal(sg_acc_sample(&a, "ml", "db-0", i, 100 * M), 0);
    }
    assert_int_equal(sg_acc_chunk_end(&a, err, sizeof(err)), 0);
    assert_int_equal(sg_acc_chunk_begin(&a, 0, 100, 100), 0);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(
            sg_acc_sample(&a, "ml", "llm-7c8d9e6f5-zzzzz", i, (i + 1) * 60 * M), 0);
    assert_int_equal(sg_acc_sample(&a, "ml", "gone-thing-x", 0, 1), 0);
    assert_int_equal(sg_acc_sample(&a, "ml", "bare", 0, M), 0);
    assert_int_equal(sg_acc_chunk_end(&a, err, sizeof(err)), 0);
    assert_int_equal(sg_acc_finish(&a), 0);

    const struct sg_workload *llm = NULL, *db = NULL, *bare = NULL;
    for (size_t i = 0; i < a.a_wl_count; i++) {
        if (strcmp(a.a_wl[i].w_label, "ml/Deployment/llm") == 0)
            llm = &a.a_wl[i];
        if (strcmp(a.a_wl[i].w_label, "ml/StatefulSet/db") == 0)
            db = &a.a_wl[i];
        if (strcmp(a.a_wl[i].w_label, "ml/bare") == 0)
            bare = &a.a_wl[i];
    }
    assert_non_null(llm);
    assert_non_null(db);
    assert_non_null(bare);
    /* llm: 100 samples of 5001 MiB (two series summed, rounded up), then 60..6000. */
    assert_int_equal(llm->w_hist.h_n, 200);
    assert_int_equal(llm->w_pods_seen, 2);
    assert_int_equal(llm->w_max, 6000);
    /* Rank 198 of 200: 83 values up to 4980, 100 x 5001, then 5040, 5100, ...: the
     * 15th of those is 5880. */
    assert_int_equal(llm->w_p99, 5880);
    assert_int_equal(llm->w_history_s, 200 * 60);
    assert_true(llm->w_suggested);
    assert_int_equal(llm->w_suggested_mib, 6500); /* 5880 x 1.1 = 6468 -> 6500 */
    assert_int_equal(llm->w_declared, SG_DECLARED_OK);
    assert_int_equal(llm->w_declared_mib, 6024);
    assert_int_equal(llm->w_live, 2);
    assert_int_equal(db->w_history_s, 30 * 60);
    assert_false(db->w_suggested);
    assert_false(bare->w_suggested);
    assert_null(bare->w_kind);
    assert_int_equal(bare->w_declared, SG_DECLARED_UNREADABLE);
    assert_int_equal(a.a_gone_count, 1);
    assert_string_equal(a.a_gone[0].g_key, "ml/gone-thing-x");
    /* Seats: 2 x 6500 + db's declared 2000 (no suggestion); the bare pod's is unreadable.
     */
    assert_int_equal(a.a_nodes[0].n_seats_mib, 15000);
    assert_false(a.a_nodes[0].n_fits);
    assert_int_equal(a.a_nodes[0].n_declared_mib, 2 * 6024 + 2000);
    for (size_t i = 0; i < a.a_nodes[0].n_seat_count; i++)
        assert_int_equal(a.a_nodes[0].n_seats[i].ss_cut,
                         strcmp(a.a_nodes[0].n_seats[i].ss_name, "ml/Deployment/llm") ==
                             0);
    sg_acc_free(&a);
    pod_list_free(&l);
}

/* As suggest.c reads a range answer: every sample into the tally. */
static int
tally_sample(const struct prom_matrix_labels *l, double t, size_t idx, double bytes,
             void *arg)
{
    (void)t;
    return sg_acc_sample(arg, l->ml_namespace, l->ml_pod, idx, bytes);
}

/* A Prometheus answer (or a proxy before it) that repeats each sample ten
 * times and the whole series twice: one sample a step is counted, so llm's
 * 1001 MiB suggests 1200 MiB (1001 x 1.1 rounded up), not twenty times it. */
static void
test_repeated_samples_counted_once(void **state)
{
    struct pod_list l;
    struct sg_acc a;
    struct buf body;
    char err[256];
    size_t series = 0;
    const struct sg_workload *llm = NULL;
    struct prom_matrix_reader q = {.mr_ns_label = "namespace",
                                   .mr_pod_label = "pod",
                                   .mr_names_required = 1,
                                   .mr_bytes_only = 1,
                                   .mr_start = 6000,
                                   .mr_step = 60,
                                   .mr_points = 100,
                                   .mr_sample = tally_sample};

    (void)state;
    assert_int_equal(sg_pods_parse(PODS, strlen(PODS), "r.io/m", &l, err, sizeof(err)),
                     0);
    assert_int_equal(sg_acc_init(&a, 6000, 60, 100, 1000), 0);
    assert_int_equal(sg_acc_add_node(&a, "n1", &l, NULL, 10000), 0);
    q.mr_arg = &a;
    buf_init(&body, 1 << 20);
    assert_int_equal(buf_printf(&body, "{\"status\":\"success\",\"data\":{\"resultType\":"
                                       "\"matrix\",\"result\":["),
                     0);
    for (int copy = 0; copy < 2; copy++) {
        assert_int_equal(buf_printf(&body,
                                    "%s{\"metric\":{\"namespace\":\"ml\",\"pod\":"
                                    "\"llm-5d9f8c7b6-abcde\"},\"values\":[",
                                    copy ? "," : ""),
                         0);
        for (int i = 0; i < 100; i++)
            for (int k = 0; k < 10; k++)
                assert_int_equal(buf_printf(&body, "%s[%d,\"1049624576\"]",
                                            i + k ? "," : "", 6000 + 60 * i),
                                 0);
        assert_int_equal(buf_printf(&body, "]}"), 0);
    }
    assert_int_equal(buf_printf(&body, "]}}"), 0);
    assert_int_equal(sg_acc_chunk_begin(&a, 0, 0, 100), 0);
    assert_int_equal(
        prom_matrix_read(body.b_data, body.b_len, &q, &series, err, sizeof(err)), PM_OK);
    assert_int_equal(sg_acc_chunk_end(&a, err, sizeof(err)), 0);
    assert_int_equal(sg_acc_finish(&a), 0);
    for (size_t i = 0; i < a.a_wl_count; i++)
        if (strcmp(a.a_wl[i].w_label, "ml/Deployment/llm") == 0)
            llm = &a.a_wl[i];
    assert_non_null(llm);
    assert_int_equal(llm->w_hist.h_n, 100);
    assert_int_equal(llm->w_max, 1001);
    assert_int_equal(llm->w_p99, 1001);
    assert_true(llm->w_suggested);
    assert_int_equal(llm->w_suggested_mib, 1200);
    assert_int_equal(a.a_samples, 100);
    buf_free(&body);
    sg_acc_free(&a);
    pod_list_free(&l);
}

/* A bare pod and a node whose names try to take over the terminal. */
/* clang-format off */
static const char HOSTILE_PODS[] =
    "{\"kind\":\"PodList\",\"items\":["
    "{\"metadata\":{\"name\":\"evil\\u001b[2J\\u202e\",\"namespace\":\"ml\\u009b\","
    "\"uid\":\"u-1\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
    "\"status\":{\"phase\":\"Running\"}}]}";
/* clang-format on */

/* `budgets --suggest` as a table and as patches: names from the API and from
 * Prometheus reach the terminal with their controls, C1 and bidi overrides as
 * escapes; each line is one line. */
static void
test_table_hostile(void **state)
{
    struct pod_list l;
    struct sg_acc a;
    struct sg_opts o = {.so_window_s = 6000, .so_headroom_bp = 1000};
    char err[256], *text = NULL;
    size_t len = 0;
    FILE *mem;

    (void)state;
    assert_int_equal(
        sg_pods_parse(HOSTILE_PODS, strlen(HOSTILE_PODS), "r.io/m", &l, err, sizeof(err)),
        0);
    assert_string_equal(l.pl_pods[0].p_name, "evil\x1b[2J\xe2\x80\xae");
    assert_int_equal(sg_acc_init(&a, 0, 60, 100, 1000), 0);
    assert_int_equal(
        sg_acc_add_node(&a, "gpu-1\xe2\x80\xa8x", &l, "nodes is forbidden\n\x07", 0), 0);
    assert_int_equal(sg_acc_chunk_begin(&a, 0, 0, 100), 0);
    assert_int_equal(sg_acc_sample(&a, "ml\xc2\x9b", "evil\x1b[2J\xe2\x80\xae", 0, 1e9),
                     0);
    assert_int_equal(sg_acc_sample(&a, "ml", "gone\x9b\x7f", 0, 1e9), 0);
    assert_int_equal(sg_acc_chunk_end(&a, err, sizeof(err)), 0);
    assert_int_equal(sg_acc_finish(&a), 0);
    for (o.so_format = SG_FORMAT_TABLE; o.so_format <= SG_FORMAT_PATCH; o.so_format++) {
        if (o.so_format == SG_FORMAT_JSON)
            continue;
        assert_non_null(mem = open_memstream(&text, &len));
        assert_int_equal(sg_print(mem, &a, &o, "q", "r.io/m"), 0);
        fclose(mem);
        assert_true(terminal_safe(text));
        assert_non_null(strstr(text, "ml\\u{009B}/evil\\x1b[2J\\u{202E}"));
        if (o.so_format == SG_FORMAT_TABLE) {
            assert_non_null(strstr(text, "node gpu-1\\u{2028}x: capacity unknown "
                                         "(nodes is forbidden\\n\\x07)"));
            assert_non_null(strstr(text, " ml/gone\\x9b\\x7f\n"));
        }
        free(text);
        text = NULL;
    }
    sg_acc_free(&a);
    pod_list_free(&l);
}

/* clang-format off */
#define SRC_POD(name, rs, annotations, containers)                                      \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"uid\":\"u-" name "\","   \
    "\"labels\":{\"pod-template-hash\":\"5d9f8c7b6\"},\"annotations\":{" annotations "}," \
    "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"" rs "\","                 \
    "\"controller\":true}]},\"spec\":{\"containers\":[" containers "]},"               \
    "\"status\":{\"phase\":\"Running\"}}"
static const char SRC_PODS[] = "{\"kind\":\"PodList\",\"items\":["
    SRC_POD("h-5d9f8c7b6-abcde", "h-5d9f8c7b6", "",
            "{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\","
            "\"nvidia.com/gpumem\":\"1000\"}}},{\"name\":\"side\"}") ","
    SRC_POD("k-5d9f8c7b6-abcde", "k-5d9f8c7b6",
            "\"gpu-fraction\":\"0.5\",\"gpu-fraction-num-devices\":\"2\"",
            "{\"name\":\"a\"}") ","
    SRC_POD("r-5d9f8c7b6-abcde", "r-5d9f8c7b6", "",
            "{\"name\":\"a\",\"resources\":{\"limits\":{\"r.io/m\":\"1000\"}}}")
    "]}";
/* clang-format on */

/* `budgets --suggest` prints the suggestion in the form of the source the pod's
 * budget came from: HAMi's per-GPU gpumem, KAI's gpu-memory annotation; a
 * GPUMEM_RESOURCE pod keeps its patch. */
static void
test_source_declarations(void **state)
{
    struct pod_list l;
    struct sg_acc a;
    struct sg_opts o = {.so_window_s = 6000, .so_headroom_bp = 1000};
    struct bsrc_order src;
    char err[256], *text = NULL;
    size_t len = 0;
    FILE *mem;
    const double M = 1048576.0;

    (void)state;
    assert_int_equal(bsrc_order_parse("hami,kai,resource", &src, err, sizeof(err)), 0);
    assert_int_equal(sg_pods_parse_sources(SRC_PODS, strlen(SRC_PODS), "r.io/m", &src, &l,
                                           err, sizeof(err)),
                     0);
    assert_string_equal(l.pl_pods[0].p_budget_source, "hami");
    assert_string_equal(l.pl_pods[1].p_budget_source, "kai");
    assert_string_equal(l.pl_pods[2].p_budget_source, "resource");
    assert_int_equal(sg_acc_init(&a, 0, 60, 100, 1000), 0);
    assert_int_equal(sg_acc_add_node(&a, "n1", &l, NULL, 0), 0);
    assert_int_equal(sg_acc_chunk_begin(&a, 0, 0, 100), 0);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(sg_acc_sample(&a, "ml", "h-5d9f8c7b6-abcde", i, 7000 * M), 0);
        assert_int_equal(sg_acc_sample(&a, "ml", "k-5d9f8c7b6-abcde", i, 3000 * M), 0);
        assert_int_equal(sg_acc_sample(&a, "ml", "r-5d9f8c7b6-abcde", i, 900 * M), 0);
    }
    assert_int_equal(sg_acc_chunk_end(&a, err, sizeof(err)), 0);
    assert_int_equal(sg_acc_finish(&a), 0);

    /* 7000 x 1.1 = 7700 over 2 GPUs; 3000 x 1.1 = 3300 over 2 devices */
    o.so_format = SG_FORMAT_TABLE;
    assert_non_null(mem = open_memstream(&text, &len));
    assert_int_equal(sg_print(mem, &a, &o, "q", "r.io/m"), 0);
    fclose(mem);
    assert_non_null(
        strstr(text, "declare [hami]: container \"a\": nvidia.com/gpumem: 3850\n"));
    assert_non_null(strstr(text, "declare [kai]: annotation gpu-memory: \"1650\"\n"));
    assert_null(strstr(text, "declare [resource]"));
    free(text);

    o.so_format = SG_FORMAT_PATCH;
    assert_non_null(mem = open_memstream(&text, &len));
    assert_int_equal(sg_print(mem, &a, &o, "q", "r.io/m"), 0);
    fclose(mem);
    assert_non_null(strstr(text, "\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
                                 "\"name\":\"a\",\"resources\":{\"limits\":{"
                                 "\"nvidia.com/gpumem\":\"3850\"}}}]}}}"));
    assert_non_null(strstr(text, "\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
                                 "\"gpu-memory\":\"1650\",\"gpu-fraction\":null}}}}"));
    assert_non_null(strstr(text, "\"limits\":{\"r.io/m\":\"1000\"}")); /* 900 x 1.1 */
    free(text);

    o.so_format = SG_FORMAT_JSON;
    assert_non_null(mem = open_memstream(&text, &len));
    assert_int_equal(sg_print(mem, &a, &o, "q", "r.io/m"), 0);
    fclose(mem);
    assert_non_null(strstr(text, "\"budget_source\":\"kai\""));
    assert_non_null(
        strstr(text, "\"declaration\":\"annotation gpu-memory: \\\"1650\\\"\""));
    free(text);
    sg_acc_free(&a);
    pod_list_free(&l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_mib_and_suggestion),
        cmocka_unit_test(test_parse_options),
        cmocka_unit_test(test_cut_list),
        cmocka_unit_test(test_owners),
        cmocka_unit_test(test_pods),
        cmocka_unit_test(test_pods_finished),
        cmocka_unit_test(test_tally),
        cmocka_unit_test(test_repeated_samples_counted_once),
        cmocka_unit_test(test_table_hostile),
        cmocka_unit_test(test_source_declarations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
