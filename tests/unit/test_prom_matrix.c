/* test_prom_matrix.c -- the one range-answer reader (receiver/clients/prom_matrix): the
 * query_range reading of budgets --suggest and the growth subquery's collection, fed
 * well-formed and malformed answers */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom_matrix.h"

#define MIB (1024.0 * 1024.0)

struct got {
    char s[16][64];
    size_t n;
};

static int
collect(const struct prom_matrix_labels *l, double t, size_t idx, double bytes, void *arg)
{
    struct got *g = arg;

    (void)t;

    if (g->n < 16)
        snprintf(g->s[g->n++], 64, "%s/%s %zu %.0f", l->ml_namespace, l->ml_pod, idx,
                 bytes);
    return 0;
}

/* As budgets --suggest reads a query_range: start 1000, step 60, 3 points,
 * both names required, values bytes. */
static enum prom_matrix_rc
parse(const char *body, struct got *g, char *err, size_t errlen)
{
    struct prom_matrix_reader q = {
        .mr_ns_label = "namespace",
        .mr_pod_label = "pod",
        .mr_names_required = 1,
        .mr_bytes_only = 1,
        .mr_start = 1000,
        .mr_step = 60,
        .mr_points = 3,
        .mr_sample = collect,
        .mr_arg = g,
    };
    size_t series = 0;

    memset(g, 0, sizeof(*g));
    return prom_matrix_read(body, strlen(body), &q, &series, err, errlen);
}

static void
test_range_answer(void **state)
{
    (void)state;
    struct got g;
    char err[256];

    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                           "\"result\":[{\"metric\":{\"namespace\":\"ml\",\"pod\":\"a\"},"
                           "\"values\":[[1000,\"1048576\"],[1120,\"5\"]]},"
                           "{\"values\":[[1060,\"2.5e3\"]],\"metric\":{\"pod\":\"b\","
                           "\"namespace\":\"ml\",\"uuid\":\"G\"}}]}}",
                           &g, err, sizeof(err)),
                     PM_OK);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.s[0], "ml/a 0 1048576");
    assert_string_equal(g.s[1], "ml/a 2 5");
    assert_string_equal(g.s[2], "ml/b 1 2500"); /* labels after values */
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                           "\"result\":[]}}",
                           &g, err, sizeof(err)),
                     PM_OK);

    static const struct {
        const char *body;
        enum prom_matrix_rc rc;
        const char *needle;
    } bad[] = {
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,\"NaN\"]]}]}}",
         PM_BAD_SAMPLE, "\"NaN\""},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,\"abc\"]]}]}}",
         PM_BAD_SAMPLE, "ml/a at 1000.000 is \"abc\""},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,\"+Inf\"]]}]}}",
         PM_BAD_SAMPLE, "Inf"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,\"-1\"]]}]}}",
         PM_BAD_SAMPLE, "\"-1\""},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,5]]}]}}",
         PM_BAD_SAMPLE, "not a quoted number"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1030,\"1\"]]}]}}",
         PM_BAD_ANSWER, "not on the query's steps"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1180,\"1\"]]}]}}",
         PM_BAD_ANSWER, "not on the query's steps"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\"},\"values\":[]}]}}",
         PM_BAD_ANSWER, "no 'namespace' or no 'pod' label"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
         PM_BAD_ANSWER, "not a matrix"},
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\\nat 1\"}",
         PM_ERROR_STATUS, "bad_data: parse error at 1"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[",
         PM_BAD_ANSWER, "not JSON"},
        {"<html>502 Bad Gateway</html>", PM_BAD_ANSWER, "not JSON"},
        {"{\"status\":\"success\"}", PM_BAD_ANSWER, "no data"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
         "{\"namespace\":\"ml\",\"pod\":\"a\"},\"values\":[[1000,\"1\",3]]}]}}",
         PM_BAD_ANSWER, "more than two"},
        {"[]", PM_BAD_ANSWER, "not JSON"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i].body, &g, err, sizeof(err)), bad[i].rc);
        if (strstr(err, bad[i].needle) == NULL)
            fail_msg("case %zu: '%s' not in '%s'", i, bad[i].needle, err);
    }
}

/* --- the matrix answer ------------------------------------------------------ */

static void
test_matrix_parse(void **state)
{
    const char *ok =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
        "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"p\",\"uuid\":\"GPU-1\"},"
        "\"values\":[[1700000000,\"1048576\"],[1700000002.5,\"NaN\"]]},"
        "{\"metric\":{\"pod\":\"host\"},\"values\":[]}]}}";
    struct prom_matrix m;
    char err[256];

    (void)state;
    assert_int_equal(prom_matrix_parse(ok, strlen(ok), "namespace", "pod", "uuid", &m,
                                       err, sizeof(err)),
                     0);
    assert_int_equal(m.pm_count, 2);
    assert_string_equal(m.pm_series[0].ms_namespace, "ml");
    assert_string_equal(m.pm_series[0].ms_gpu, "GPU-1");
    assert_int_equal(m.pm_series[0].ms_count, 2);
    assert_true(m.pm_series[0].ms_samples[0].ps_bytes == MIB);
    assert_true(m.pm_series[0].ms_samples[1].ps_t == 1700000002.5);
    assert_true(isnan(m.pm_series[0].ms_samples[1].ps_bytes));
    assert_null(m.pm_series[1].ms_namespace);
    assert_int_equal(m.pm_series[1].ms_count, 0);
    prom_matrix_free(&m);
    prom_matrix_free(NULL);

    const char *bad[] = {
        "",
        "not json",
        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\"}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{\"pod\":1},\"values\":[]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[[1,2]]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[[1,\"x\"]]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[[1]]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{\"pod\":\"a\"},\"values\":[[1,\"1\"]]},{\"metric\":{},\"values\":[\"x\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[[\"1\",\"1\"]]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":[[1,\"12abc\"]]}]}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(prom_matrix_parse(bad[i], strlen(bad[i]), "namespace", "pod",
                                           NULL, &m, err, sizeof(err)),
                         -1);
        assert_true(err[0] != '\0');
        assert_int_equal(m.pm_count, 0);
        assert_null(m.pm_series);
    }
    assert_int_equal(prom_matrix_parse(bad[2], strlen(bad[2]), "namespace", "pod", NULL,
                                       &m, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "bad_data: parse error");
}

/* --- the reader's options: any time, names optional, values as sent -------- */

struct seen {
    char log[16][96];
    size_t n;
    int fail_at; /* the callback's n-th call fails (out of memory); 0: never */
};

static void
note(struct seen *g, const char *line)
{
    if (g->n < 16)
        snprintf(g->log[g->n], sizeof(g->log[0]), "%s", line);
    g->n++;
}

static int
lax_series(const struct prom_matrix_labels *l, void *arg)
{
    struct seen *g = arg;
    char line[96];

    snprintf(line, sizeof(line), "series %s/%s/%s",
             l->ml_namespace ? l->ml_namespace : "NULL", l->ml_pod ? l->ml_pod : "NULL",
             l->ml_gpu ? l->ml_gpu : "NULL");
    note(g, line);
    return g->fail_at != 0 && (int)g->n == g->fail_at ? -1 : 0;
}

static int
lax_sample(const struct prom_matrix_labels *l, double t, size_t idx, double v, void *arg)
{
    struct seen *g = arg;
    char line[96];

    snprintf(line, sizeof(line), "%s %.1f %zu %g", l->ml_pod ? l->ml_pod : "NULL", t, idx,
             v);
    note(g, line);
    return g->fail_at != 0 && (int)g->n == g->fail_at ? -1 : 0;
}

static enum prom_matrix_rc
lax(const char *body, struct seen *g, size_t *series, char *err, size_t errlen)
{
    struct prom_matrix_reader q = {
        .mr_ns_label = "namespace",
        .mr_pod_label = "pod",
        .mr_gpu_label = "uuid",
        .mr_series = lax_series,
        .mr_sample = lax_sample,
        .mr_arg = g,
    };
    int fail_at = g->fail_at;

    memset(g, 0, sizeof(*g));
    g->fail_at = fail_at;
    return prom_matrix_read(body, strlen(body), &q, series, err, errlen);
}

#define MATRIX(series)                                                                   \
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[" series    \
    "]}}"

static void
test_lax_reading(void **state)
{
    struct seen g = {0};
    size_t series = 0;
    char err[256];

    (void)state;
    /* Values before the labels: the series is announced first all the same;
     * NaN, +Inf and a negative value are given as sent (the growth fit
     * judges them); a series without names (a host process) is kept. */
    assert_int_equal(
        lax(MATRIX("{\"values\":[[1700000000.5,\"NaN\"],[1700000001,\"+Inf\"],"
                   "[1700000002,\"-1\"]],\"metric\":{\"pod\":\"p\",\"namespace\":"
                   "\"ml\",\"uuid\":\"GPU-1\"}},"
                   "{\"metric\":{\"__name__\":\"x\"},\"values\":[[1700000003,\"7\"]]}"),
            &g, &series, err, sizeof(err)),
        PM_OK);
    assert_int_equal(series, 2);
    assert_int_equal(g.n, 6);
    assert_string_equal(g.log[0], "series ml/p/GPU-1");
    assert_string_equal(g.log[1], "p 1700000000.5 0 nan");
    assert_string_equal(g.log[2], "p 1700000001.0 0 inf");
    assert_string_equal(g.log[3], "p 1700000002.0 0 -1");
    assert_string_equal(g.log[4], "series NULL/NULL/NULL");
    assert_string_equal(g.log[5], "NULL 1700000003.0 0 7");

    /* Still refused without mr_bytes_only: what is not a number at all. */
    assert_int_equal(
        lax(MATRIX("{\"metric\":{\"pod\":\"p\"},\"values\":[[1,\"12abc\"]]}"), &g,
            &series, err, sizeof(err)),
        PM_BAD_SAMPLE);
    assert_string_equal(err, "the sample of -/p at 1.000 is \"12abc\": not a number");
    /* A label too long for a Kubernetes name, or escaped, is not trusted. */
    char longname[400];
    memset(longname, 'a', 300);
    longname[300] = '\0';
    char body[800];
    snprintf(body, sizeof(body), MATRIX("{\"metric\":{\"pod\":\"%s\"},\"values\":[]}"),
             longname);
    assert_int_equal(lax(body, &g, &series, err, sizeof(err)), PM_BAD_ANSWER);
    assert_string_equal(err, "a label value is not a Kubernetes name");
    assert_int_equal(lax(MATRIX("{\"metric\":{\"pod\":\"a\\u0041\"},\"values\":[]}"), &g,
                         &series, err, sizeof(err)),
                     PM_BAD_ANSWER);
    /* A label not asked for may be anything. */
    assert_int_equal(
        lax(MATRIX("{\"metric\":{\"other\":\"a\\u0041\",\"n\":1},\"values\":[]}"), &g,
            &series, err, sizeof(err)),
        PM_OK);
    /* The caller out of memory stops the read, in the series or a sample. */
    g.fail_at = 1;
    assert_int_equal(lax(MATRIX("{\"metric\":{},\"values\":[[1,\"1\"]]}"), &g, &series,
                         err, sizeof(err)),
                     PM_NOMEM);
    g.fail_at = 2;
    assert_int_equal(lax(MATRIX("{\"metric\":{},\"values\":[[1,\"1\"],[2,\"2\"]]}"), &g,
                         &series, err, sizeof(err)),
                     PM_NOMEM);
    assert_int_equal(g.n, 2); /* stopped at the first sample */
    assert_string_equal(err, "out of memory");
}

/* --- a large answer: 5,000 pods x 120 steps, as the growth subquery's -------- */

struct tally {
    size_t series, samples;
    double sum;
};

static int
count_series(const struct prom_matrix_labels *l, void *arg)
{
    struct tally *t = arg;

    t->series += l->ml_pod != NULL;
    return 0;
}

static int
count_sample(const struct prom_matrix_labels *l, double t, size_t idx, double v,
             void *arg)
{
    struct tally *ta = arg;

    (void)l;
    (void)t;
    (void)idx;
    ta->samples++;
    ta->sum += v;
    return 0;
}

static void
test_many_series_streamed(void **state)
{
    enum { PODS = 5000, STEPS = 120 };
    size_t cap = (size_t)PODS * (STEPS * 24 + 96) + 128, len = 0, series = 0;
    char *body = malloc(cap), err[256];
    struct tally t = {0};
    struct prom_matrix m;

    (void)state;
    assert_non_null(body);
    len += (size_t)snprintf(body + len, cap - len,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                            "\"result\":[");
    for (int p = 0; p < PODS; p++) {
        len += (size_t)snprintf(
            body + len, cap - len,
            "%s{\"metric\":{\"namespace\":\"ml\",\"pod\":\"p%d\"},\"values\":[",
            p ? "," : "", p);
        for (int k = 0; k < STEPS; k++)
            len += (size_t)snprintf(body + len, cap - len, "%s[%d,\"%d\"]", k ? "," : "",
                                    1700000000 + k, p + k);
        len += (size_t)snprintf(body + len, cap - len, "]}");
    }
    len += (size_t)snprintf(body + len, cap - len, "]}}");
    assert_true(len < cap);

    struct prom_matrix_reader q = {.mr_ns_label = "namespace",
                                   .mr_pod_label = "pod",
                                   .mr_series = count_series,
                                   .mr_sample = count_sample,
                                   .mr_arg = &t};
    assert_int_equal(prom_matrix_read(body, len, &q, &series, err, sizeof(err)), PM_OK);
    assert_int_equal(series, PODS);
    assert_int_equal(t.series, PODS);
    assert_int_equal(t.samples, (size_t)PODS * STEPS);
    /* sum over p, k of (p + k) */
    assert_true(t.sum == (double)STEPS * PODS * (PODS - 1) / 2 +
                             (double)PODS * STEPS * (STEPS - 1) / 2);

    /* Collected per series: compact arrays of (t, bytes), in the order sent. */
    assert_int_equal(
        prom_matrix_parse(body, len, "namespace", "pod", NULL, &m, err, sizeof(err)), 0);
    assert_int_equal(m.pm_count, PODS);
    assert_string_equal(m.pm_series[4999].ms_pod, "p4999");
    assert_int_equal(m.pm_series[4999].ms_count, STEPS);
    assert_true(m.pm_series[4999].ms_samples[119].ps_bytes == 4999 + 119);
    assert_true(m.pm_series[4999].ms_samples[119].ps_t == 1700000119);
    prom_matrix_free(&m);
    free(body);
}

/* On the grid each step of a series is given once: a repeated time (ten
 * times over, or the whole array again) and a series whose every label
 * repeats an earlier one's (in another order, escaped otherwise) add
 * nothing; a series that differs in any label (a second container) is its
 * own. */
static void
test_grid_repeats_given_once(void **state)
{
    struct got g;
    char err[256];

    (void)state;
    assert_int_equal(
        parse(
            MATRIX(
                "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"a\",\"c\":\"x\"},"
                "\"values\":[[1000,\"1\"],[1000,\"1\"],[1000,\"1\"],[1060,\"2\"],"
                "[1060,\"2\"],[1000,\"1\"],[1060,\"2\"]]},"
                "{\"values\":[[1000,\"7\"],[1120,\"3\"]],"
                "\"metric\":{\"\\u0063\":\"\\u0078\",\"pod\":\"a\",\"namespace\":\"ml\"}},"
                "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"a\",\"c\":\"y\"},"
                "\"values\":[[1000,\"10\"],[1000,\"10\"]]},"
                "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"a\",\"c\":\"x\",\"d\":\"\"},"
                "\"values\":[[1000,\"100\"]]}"),
            &g, err, sizeof(err)),
        PM_OK);
    assert_int_equal(g.n, 5);
    assert_string_equal(g.s[0], "ml/a 0 1");
    assert_string_equal(g.s[1], "ml/a 1 2");
    assert_string_equal(g.s[2], "ml/a 2 3"); /* the identical series' new step only */
    assert_string_equal(g.s[3], "ml/a 0 10");
    assert_string_equal(g.s[4], "ml/a 0 100");
    /* Malformed around it: a label that is not a string is refused when it is
     * a name asked for, and ignored otherwise. */
    assert_int_equal(
        parse(MATRIX("{\"metric\":{\"namespace\":\"ml\",\"pod\":\"a\",\"n\":5},"
                     "\"values\":[[1000,\"1\"],[1000,\"1\"]]}"),
              &g, err, sizeof(err)),
        PM_OK);
    assert_int_equal(g.n, 1);
    assert_int_equal(parse(MATRIX("{\"metric\":{\"namespace\":\"ml\",\"pod\":[]},"
                                  "\"values\":[[1000,\"1\"]]}"),
                           &g, err, sizeof(err)),
                     PM_BAD_ANSWER);
    assert_non_null(strstr(err, "a label is not a string"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_answer),
        cmocka_unit_test(test_matrix_parse),
        cmocka_unit_test(test_lax_reading),
        cmocka_unit_test(test_many_series_streamed),
        cmocka_unit_test(test_grid_repeats_given_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
