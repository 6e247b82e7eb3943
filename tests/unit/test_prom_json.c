/* test_prom_json.c -- Prometheus instant-query answers, good, failed and broken */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/testdata.h"

#include "prom_json.h"

static void
test_incident(void **state)
{
    struct usage_reading r;
    char err[256], *body;
    size_t len;

    body = test_data_load("prom-incident.json", &len);
    assert_int_equal(
        prom_json_parse_vector(body, len, "namespace", "pod", &r, err, sizeof(err)), 0);
    free(body);
    assert_int_equal(r.ur_count, 6);
    assert_string_equal(r.ur_series[0].us_namespace, "immich");
    assert_string_equal(r.ur_series[0].us_pod, "immich-ml-5f7c9d8b6-qx2lp");
    assert_true(r.ur_series[0].us_bytes == 11489000000.0);
    assert_true(r.ur_series[1].us_bytes == 1153433600.0);
    assert_null(r.ur_series[5].us_namespace);
    assert_null(r.ur_series[5].us_pod);
    assert_true(r.ur_series[5].us_bytes == 314572800.0);
    usage_reading_free(&r);
    assert_null(r.ur_series);
    assert_int_equal(r.ur_count, 0);
    usage_reading_free(&r);
    usage_reading_free(NULL);
}

/* Per-process series with exporter label names; empty labels read as absent. */
static void
test_labels(void **state)
{
    struct usage_reading r;
    char err[256], *body;
    size_t len;

    body = test_data_load("prom-processes.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, "exported_namespace",
                                            "exported_pod", &r, err, sizeof(err)),
                     0);
    assert_int_equal(r.ur_count, 5);
    assert_string_equal(r.ur_series[1].us_pod, "immich-ml-5f7c9d8b6-qx2lp");
    assert_null(r.ur_series[3].us_namespace);
    assert_null(r.ur_series[4].us_namespace);
    assert_string_equal(r.ur_series[4].us_pod, "orphan");
    usage_reading_free(&r);

    /* with the default names, none of these series names a pod */
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, &r, err, sizeof(err)),
                     0);
    assert_int_equal(r.ur_count, 5);
    assert_null(r.ur_series[0].us_namespace);
    assert_null(r.ur_series[0].us_pod);
    usage_reading_free(&r);
    free(body);
}

struct value_case {
    const char *json; /* the value member as sent */
    double want;      /* NAN: expect NaN */
};

static const struct value_case values[] = {
    {"\"1.1489e+10\"", 11489000000.0},
    {"\"0\"", 0},
    {"\"-0\"", 0},
    {"\"123\"", 123},
    {"\"1.5\"", 1.5},
    {"\".5\"", 0.5},
    {"\"-7\"", -7},
    {"\"1E3\"", 1000},
    {"\"NaN\"", NAN},
    {"\"nan\"", NAN},
    {"\"+Inf\"", INFINITY},
    {"\"Inf\"", INFINITY},
    {"\"-Inf\"", -INFINITY},
    {"\"+infinity\"", INFINITY},
    {"\"1e400\"", INFINITY},
    {"42", 42}, /* a number, defensively */
    {"4.5", 4.5},
};

static const char *const bad_values[] = {
    "\"\"",    "\" 1\"", "\"1 \"",  "\"0x10\"",  "\"1e\"",    "\"1..2\"",     "\"abc\"",
    "\"--1\"", "\"+\"",  "\"1,5\"", "\"infx\"",  "\"+NaN\"",  "\"1\\u0000\"", "null",
    "true",    "[]",     "{}",      "\"0x1p3\"", "\"1_000\"",
};

static void
vector_with_value(char *doc, size_t len, const char *value)
{
    snprintf(doc, len,
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
             "[{\"metric\":{\"namespace\":\"a\",\"pod\":\"b\"},\"value\":[1780394400.123,"
             "%s]}]}}",
             value);
}

static void
test_values(void **state)
{
    struct usage_reading r;
    char doc[512], err[256];
    double got, want;
    size_t i;

    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        vector_with_value(doc, sizeof(doc), values[i].json);
        if (prom_json_parse_vector(doc, strlen(doc), NULL, NULL, &r, err, sizeof(err)) !=
            0)
            fail_msg("%s refused: %s", values[i].json, err);
        got = r.ur_series[0].us_bytes;
        want = values[i].want;
        if (isnan(want) ? !isnan(got) : got != want)
            fail_msg("%s gave %g, want %g", values[i].json, got, want);
        usage_reading_free(&r);
    }
    for (i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
        vector_with_value(doc, sizeof(doc), bad_values[i]);
        if (prom_json_parse_vector(doc, strlen(doc), NULL, NULL, &r, err, sizeof(err)) !=
            -1)
            fail_msg("%s accepted", bad_values[i]);
        /* a \u0000 inside the value is not a number either */
        if (strstr(err, "is not a number") == NULL && strstr(err, "not JSON") == NULL)
            fail_msg("%s: %s", bad_values[i], err);
        assert_int_equal(r.ur_count, 0);
    }
}

struct bad_doc {
    const char *doc;
    const char *why;
};

static const struct bad_doc bad_docs[] = {
    {"", "empty body"},
    {"<html>502 Bad Gateway</html>", "not JSON"},
    {"{\"status\":\"success\"", "not JSON"},
    {"[]", "no \"status\":\"success\""},
    {"{}", "no \"status\":\"success\""},
    {"{\"status\":\"pending\"}", "no \"status\":\"success\""},
    {"{\"status\":true}", "no \"status\":\"success\""},
    {"{\"status\":\"error\"}", "Prometheus answered an error (): "},
    {"{\"status\":\"error\",\"errorType\":\"timeout\",\"error\":\"query timed out\\n\"}",
     "Prometheus answered an error (timeout): query timed out\\x0a"},
    {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"1:5: bad \\\\d in "
     "\\\"caf\u00e9\\\"\"}",
     "(bad_data): 1:5: bad \\x5cd in \\x22caf\\xc3\\xa9\\x22"},
    {"{\"status\":\"success\"}", "no data.resultType and data.result"},
    {"{\"status\":\"success\",\"data\":[]}", "no data.resultType"},
    {"{\"status\":\"success\",\"data\":{\"result\":[]}}", "no data.resultType"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\"}}",
     "no data.resultType"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":7,\"result\":[]}}",
     "no data.resultType"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"string\",\"result\":[1,\"x\"]}}",
     "resultType is \"string\", not a vector"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
     "resultType is \"vector\", not a vector"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[1]}}",
     "result[0] is not a {metric, value} object"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":[],"
     "\"value\":[1,\"1\"]}]}}",
     "result[0] is not a {metric, value} object"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":{},"
     "\"value\":[1,\"1\"]},{\"metric\":{\"pod\":7},\"value\":[1,\"1\"]}]}}",
     "result[1]: label pod is not a string"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":"
     "{\"namespace\":null},\"value\":[1,\"1\"]}]}}",
     "result[0]: label namespace is not a string"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":{}}]}}",
     "result[0]: value is not a [time, value] pair"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"value\":"
     "[\"1\",\"1\"]}]}}",
     "value is not a [time, value] pair"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"value\":"
     "[1,\"1\",3]}]}}",
     "value is not a [time, value] pair"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"value\":"
     "\"1\"}]}}",
     "value is not a [time, value] pair"},
    {"{\"status\":\"success\",\"status\":\"error\"}", "not JSON"},
    /* a repeated key the parser reads, at any depth */
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":{\"pod\":\"a\",\"pod\":\"b\"},\"value\":[1,\"1\"]}]}}",
     "not JSON: duplicate key \"pod\""},
    /* a wrong series, then bytes that are not JSON: the body is not JSON */
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[7,{]}}",
     "not JSON"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"value\":[1,2,{]}]}}",
     "not JSON"},
    /* an error status wins over a result that came first */
    {"{\"data\":{\"result\":[7],\"resultType\":\"vector\"},\"error\":\"boom\","
     "\"status\":\"error\"}",
     "Prometheus answered an error (): boom"},
    {"7", "not JSON"},
    {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
     "\"metric\":"
     "{\"pod\":\"\xff\"},\"value\":[1,\"1\"]}]}}",
     "not JSON"},
};

static void
test_bad_documents(void **state)
{
    struct usage_reading r;
    char err[256];
    size_t i;

    for (i = 0; i < sizeof(bad_docs) / sizeof(bad_docs[0]); i++) {
        memset(&r, 0x5a, sizeof(r));
        err[0] = '\0';
        if (prom_json_parse_vector(bad_docs[i].doc, strlen(bad_docs[i].doc), NULL, NULL,
                                   &r, err, sizeof(err)) != -1)
            fail_msg("case %zu accepted", i);
        if (strstr(err, bad_docs[i].why) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad_docs[i].why);
        assert_null(r.ur_series);
        assert_int_equal(r.ur_count, 0);
    }
    assert_int_equal(prom_json_parse_vector(NULL, 0, NULL, NULL, &r, NULL, 0), -1);
    err[0] = 'x';
    assert_int_equal(prom_json_parse_vector(NULL, 0, NULL, NULL, &r, err, 0), -1);
    assert_int_equal(err[0], 'x');
}

/* Prometheus writes status, data.resultType, data.result in that order, but
 * the order is not a contract: the same answer inside out reads the same. */
static void
test_member_order(void **state)
{
    const char *doc =
        "{\"data\":{\"result\":[{\"value\":[1.5,\"2048\"],\"metric\":{\"pod\":"
        "\"p\\u00e9\",\"__name__\":\"x\",\"namespace\":\"\"}},{\"metric\":{\"namespace\":"
        "\"ns\"},\"value\":[2,\"+Inf\"]}],\"resultType\":\"vector\"},\"status\":\"success\","
        "\"warnings\":[\"big\"]}";
    const char *one = "{\"data\":{\"result\":[{\"value\":[1,\"560\"]}],\"resultType\":"
                      "\"vector\"},\"status\":\"success\"}";
    struct usage_reading r;
    char err[256];
    double v = 0;

    assert_int_equal(
        prom_json_parse_vector(doc, strlen(doc), NULL, NULL, &r, err, sizeof(err)), 0);
    assert_int_equal(r.ur_count, 2);
    assert_string_equal(r.ur_series[0].us_pod, "p\xc3\xa9");
    assert_null(r.ur_series[0].us_namespace); /* empty is absent */
    assert_true(r.ur_series[0].us_bytes == 2048.0);
    assert_string_equal(r.ur_series[1].us_namespace, "ns");
    assert_true(isinf(r.ur_series[1].us_bytes));
    usage_reading_free(&r);
    assert_int_equal(prom_json_parse_scalar(one, strlen(one), &v, err, sizeof(err)), 0);
    assert_true(v == 560.0);
}

static void
test_files(void **state)
{
    struct usage_reading r;
    char err[256], *body;
    size_t len;
    double v;

    body = test_data_load("prom-error.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, &r, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "Prometheus answered an error (bad_data): invalid parameter "
                             "\\x22query\\x22: 1:5: parse error: unexpected identifier "
                             "\\x22by\\x22");
    assert_int_equal(prom_json_parse_scalar(body, len, &v, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "(bad_data)"));
    free(body);

    body = test_data_load("prom-matrix.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, &r, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "resultType is \"matrix\", not a vector");
    assert_int_equal(prom_json_parse_scalar(body, len, &v, err, sizeof(err)), -1);
    assert_string_equal(err, "resultType is \"matrix\", not a vector");
    free(body);

    body = test_data_load("prom-empty.json", &len);
    assert_int_equal(prom_json_parse_vector(body, len, NULL, NULL, &r, err, sizeof(err)),
                     0);
    assert_int_equal(r.ur_count, 0);
    assert_null(r.ur_series);
    usage_reading_free(&r);
    assert_int_equal(prom_json_parse_scalar(body, len, &v, err, sizeof(err)), -1);
    assert_string_equal(err, "the query returned 0 samples, expected one");
    free(body);

    body = test_data_load("prom-free.json", &len);
    v = 0;
    assert_int_equal(prom_json_parse_scalar(body, len, &v, err, sizeof(err)), 0);
    assert_true(v == 560.0);
    free(body);

    body = test_data_load("prom-incident.json", &len);
    assert_int_equal(prom_json_parse_scalar(body, len, &v, err, sizeof(err)), -1);
    assert_string_equal(err, "the query returned 6 samples, expected one");
    free(body);
}

static void
test_scalar(void **state)
{
    static const struct {
        const char *doc;
        int rc;
        double want;
        const char *why;
    } cases[] = {
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":"
         "[1780394400.5,\"1536\"]}}",
         0, 1536, NULL},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":"
         "[1780394400.5,\"NaN\"]}}",
         0, NAN, NULL},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1]}}",
         -1, 0, "result: value is not a [time, value] pair"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
         "\"metric\":"
         "{},\"value\":[1,\"2.5\"]}]}}",
         0, 2.5, NULL},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
         "\"metric\":"
         "{},\"value\":[1,\"x\"]}]}}",
         -1, 0, "result[0]: sample value \"x\" is not a number"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[7]}}",
         -1, 0, "result[0] is not a {metric, value} object"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
         -1, 0, "not a vector"},
        {"", -1, 0, "empty body"},
        {"{", -1, 0, "not JSON"},
    };
    char err[256];
    double v;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        v = -1;
        err[0] = '\0';
        if (prom_json_parse_scalar(cases[i].doc, strlen(cases[i].doc), &v, err,
                                   sizeof(err)) != cases[i].rc)
            fail_msg("case %zu: rc, err %s", i, err);
        if (cases[i].rc == 0 && (isnan(cases[i].want) ? !isnan(v) : v != cases[i].want))
            fail_msg("case %zu: %g", i, v);
        if (cases[i].why != NULL && strstr(err, cases[i].why) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].why);
    }
    assert_int_equal(prom_json_parse_scalar("{", 1, &v, NULL, 0), -1);
    err[0] = 'x';
    assert_int_equal(prom_json_parse_scalar("{", 1, &v, err, 0), -1);
    assert_int_equal(err[0], 'x');
}

/* A long error from Prometheus is cut, never overruns. */
static void
test_long_error(void **state)
{
    char doc[4096], err[600] = "";
    size_t n;

    n = (size_t)snprintf(
        doc, sizeof(doc),
        "{\"status\":\"error\",\"errorType\":\"execution\",\"error\":\"");
    memset(doc + n, 'x', 3000);
    n += 3000;
    n += (size_t)snprintf(doc + n, sizeof(doc) - n, "\"}");
    assert_int_equal(prom_json_parse_scalar(doc, n, &(double){0}, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "xxx..."));
    assert_true(strlen(err) < 300);
}

/* A label equal to the previous series' is shared with it (the reading's
 * strings live in one pool); anything else is its own copy, decoded. */
static void
test_shared_labels(void **state)
{
#define SER(ns, pod) "{\"metric\":{" ns pod "},\"value\":[1,\"1\"]}"
    /* One JSON item a line, kept by hand (clang-format would run them together). */
    /* clang-format off */
    static const char body[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        SER("\"namespace\":\"a\",", "\"pod\":\"p\"") ","
        SER("\"namespace\":\"a\",", "\"pod\":\"p\"") ","
        SER("\"namespace\":\"a\",", "\"pod\":\"pp\"") ","
        SER("\"namespace\":\"a\",", "\"pod\":\"p\"") ","
        SER("\"namespace\":\"a\\u0062\",", "\"pod\":\"p\"") ","
        SER("\"namespace\":\"ab\",", "\"pod\":\"p\"") ","
        SER("\"namespace\":\"\",", "\"pod\":\"p\"") ","
        SER("", "\"pod\":\"p\",\"namespace\":\"a\"") "]}}";
    /* clang-format on */
#undef SER
    struct usage_reading r;
    const struct usage_series *v;
    char err[256];

    (void)state;
    assert_int_equal(
        prom_json_parse_vector(body, sizeof(body) - 1, NULL, NULL, &r, err, sizeof(err)),
        0);
    assert_int_equal(r.ur_count, 8);
    v = r.ur_series;
    assert_non_null(r.ur_pool);
    assert_string_equal(v[0].us_namespace, "a");
    assert_string_equal(v[0].us_pod, "p");
    assert_ptr_equal(v[1].us_namespace, v[0].us_namespace);
    assert_ptr_equal(v[1].us_pod, v[0].us_pod);
    assert_string_equal(v[2].us_pod, "pp"); /* "p" is a prefix: not the same */
    assert_ptr_not_equal(v[2].us_pod, v[1].us_pod);
    assert_string_equal(v[3].us_pod, "p"); /* "pp" starts with it: not the same */
    assert_ptr_not_equal(v[3].us_pod, v[2].us_pod);
    assert_string_equal(v[4].us_namespace, "ab"); /* the escape decoded */
    assert_string_equal(v[5].us_namespace, "ab");
    assert_null(v[6].us_namespace); /* empty = absent */
    assert_string_equal(v[6].us_pod, "p");
    assert_string_equal(v[7].us_namespace, "a"); /* after an absent one: a copy */
    assert_string_equal(v[7].us_pod, "p");
    assert_ptr_equal(v[7].us_pod, v[6].us_pod);
    usage_reading_free(&r);
    assert_null(r.ur_pool);
    assert_null(r.ur_series);

    /* Cut anywhere after shared labels: refused, nothing kept (ASan sees leaks). */
    for (size_t cut = 1; cut < sizeof(body) - 1; cut += 7) {
        assert_int_equal(
            prom_json_parse_vector(body, cut, NULL, NULL, &r, err, sizeof(err)), -1);
        assert_null(r.ur_series);
        assert_null(r.ur_pool);
        assert_int_equal(r.ur_count, 0);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incident),      cmocka_unit_test(test_labels),
        cmocka_unit_test(test_values),        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_files),         cmocka_unit_test(test_member_order),
        cmocka_unit_test(test_scalar),        cmocka_unit_test(test_long_error),
        cmocka_unit_test(test_shared_labels),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
