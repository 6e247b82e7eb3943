/* test_alert.c -- the Alertmanager payload: real deliveries and every malformed class */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/testdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alert.h"

static void
test_real_025_delivery(void **state)
{
    size_t len;
    char *body = test_data_load("alertmanager-0.25-webhook.json", &len);
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, len, &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 1);
    assert_string_equal(b.ab_alerts[0].a_alertname, "GPUVRAMLow");
    assert_true(b.ab_alerts[0].a_firing);
    assert_string_equal(b.ab_alerts[0].a_fingerprint, "cee90ef7ef51c1b3");
    assert_string_equal(b.ab_alerts[0].a_starts_at, "2026-11-21T23:41:25.184Z");
    assert_string_equal(b.ab_alerts[0].a_ends_at, "0001-01-01T00:00:00Z");
    assert_string_equal(b.ab_alerts[0].a_labels_json,
                        "{\"alertname\":\"GPUVRAMLow\",\"severity\":\"warning\"}");
    assert_non_null(
        strstr(b.ab_alerts[0].a_annotations_json, "\"summary\":\"free 560\""));
    assert_null(alert_label(&b.ab_alerts[0], "node"));
    alert_batch_free(&b);
    free(body);
}

/* Newer fields are ignored; each alert is judged by its own status. */
static void
test_newer_delivery_mixed_status(void **state)
{
    size_t len;
    char *body = test_data_load("alertmanager-0.27-webhook.json", &len);
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, len, &b, err, sizeof(err)), 0);
    assert_int_equal(b.ab_count, 2);
    assert_true(b.ab_alerts[0].a_firing);
    assert_string_equal(alert_label(&b.ab_alerts[0], "node"), "gpu-node-1");
    assert_string_equal(alert_label(&b.ab_alerts[0], "namespace"), "llama");
    assert_false(b.ab_alerts[1].a_firing);
    assert_string_equal(alert_status_name(&b.ab_alerts[1]), "resolved");
    assert_string_equal(b.ab_alerts[1].a_annotations_json, "{}");
    alert_batch_free(&b);
    free(body);
}

static void
test_minimal_and_missing_version(void **state)
{
    const char *ok[] = {
        "{\"alerts\":[]}",
        "{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}}]}",
        "{\"alerts\":[{\"status\":\"resolved\",\"labels\":{\"alertname\":\"A\"},"
        "\"annotations\":null,\"fingerprint\":null}]}",
    };
    struct alert_batch b;
    char err[256];

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (alert_batch_parse(ok[i], strlen(ok[i]), &b, err, sizeof(err)) != 0)
            fail_msg("case %zu: %s", i, err);
        alert_batch_free(&b);
    }
}

static void
test_malformed(void **state)
{
    static const struct {
        const char *body;
        const char *expect; /* prefix of the error */
    } cases[] = {
        {"", "empty body"},
        {"not json", "body is not valid JSON"},
        {"{\"alerts\":[", "body is not valid JSON"},
        {"[]", "body must be a JSON object"},
        {"\"x\"", "body must be a JSON object"},
        {"{}", "alerts: missing or not an array"},
        {"{\"alerts\":{}}", "alerts: missing or not an array"},
        {"{\"alerts\":null}", "alerts: missing or not an array"},
        {"{\"version\":\"3\",\"alerts\":[]}", "version: '3' is not supported"},
        {"{\"version\":4,\"alerts\":[]}", "version: must be a string"},
        {"{\"alerts\":[1]}", "alerts[0]: must be an object"},
        {"{\"alerts\":[{\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: missing"},
        {"{\"alerts\":[{\"status\":7,\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: missing or not a string"},
        {"{\"alerts\":[{\"status\":\"pending\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: 'pending' is not firing or resolved"},
        {"{\"alerts\":[{\"status\":\"firing\"}]}", "alerts[0].labels: missing"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":[]}]}",
         "alerts[0].labels: must be an object"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{}}]}",
         "alerts[0].labels.alertname: missing or empty"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"\"}}]}",
         "alerts[0].labels.alertname: missing or empty"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":5}}]}",
         "alerts[0].labels.alertname: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\",\"n\":1}}]}",
         "alerts[0].labels.n: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"annotations\":\"x\"}]}",
         "alerts[0].annotations: must be an object"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"fingerprint\":12}]}",
         "alerts[0].fingerprint: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"startsAt\":{}}]}",
         "alerts[0].startsAt: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}},"
         "{\"status\":\"firing\",\"labels\":{}}]}",
         "alerts[1].labels.alertname"},
        {"{\"alerts\":[],\"alerts\":[]}", "body is not valid JSON"}, /* duplicate key */
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\\u0000B\"}}]}",
         "body is not valid JSON"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"\xff\xfe\"}}]}",
         "body is not valid JSON"}, /* invalid UTF-8 */
    };
    struct alert_batch b;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            alert_batch_parse(cases[i].body, strlen(cases[i].body), &b, err, sizeof(err));
        if (rc != -1 || strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0)
            fail_msg("case %zu: rc %d err '%s'", i, rc, err);
        assert_int_equal(b.ab_count, 0);
        assert_null(b.ab_alerts);
    }
}

/* Deep nesting and huge strings are refused or handled without harm. */
static void
test_deep_nesting_and_huge_strings(void **state)
{
    size_t depth = 100000, n = 0;
    char *deep = malloc(depth * 2 + 64);
    struct alert_batch b;
    char err[256];

    assert_non_null(deep);
    n += (size_t)snprintf(deep, 64, "{\"alerts\":");
    for (size_t i = 0; i < depth; i++)
        deep[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    assert_int_equal(alert_batch_parse(deep, n, &b, err, sizeof(err)), -1);
    free(deep);

    /* A 900 KiB alertname is valid JSON; it is kept whole, and errors quote
     * at most a bounded prefix. */
    size_t big = 900 * 1024;
    char *huge = malloc(big + 128);
    assert_non_null(huge);
    n = (size_t)snprintf(huge, 128, "{\"alerts\":[{\"status\":\"");
    memset(huge + n, 'x', big);
    n += big;
    n += (size_t)snprintf(huge + n, 128, "\",\"labels\":{\"alertname\":\"A\"}}]}");
    assert_int_equal(alert_batch_parse(huge, n, &b, err, sizeof(err)), -1);
    assert_true(strlen(err) < 200);
    free(huge);
}

/* Members come in any order; an alert with several problems is answered
 * with the first in a fixed order, whatever order the body has them in. */
static void
test_member_order_and_priority(void **state)
{
    static const struct {
        const char *body;
        const char *expect; /* the whole error, or NULL: accepted */
    } cases[] = {
        {"{\"alerts\":[{\"labels\":{\"alertname\":\"A\"},\"status\":\"firing\"}],"
         "\"version\":\"4\"}",
         NULL},
        {"{\"alerts\":[{\"labels\":{\"alertname\":\"\"},\"status\":\"pending\"}]}",
         "alerts[0].status: 'pending' is not firing or resolved"},
        {"{\"alerts\":[{\"annotations\":1,\"labels\":{},\"status\":\"firing\"}]}",
         "alerts[0].labels.alertname: missing or empty"},
        {"{\"alerts\":[{\"annotations\":1,\"labels\":{\"alertname\":\"A\"},"
         "\"status\":\"firing\"}]}",
         "alerts[0].annotations: must be an object"},
        {"{\"alerts\":[{\"status\":\"firing\",\"annotations\":{\"a\":\"x\",\"s\":[]},"
         "\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].annotations.s: must be a string"},
        {"{\"alerts\":[{\"endsAt\":1,\"startsAt\":true,\"fingerprint\":2,"
         "\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].fingerprint: must be a string"},
        {"{\"alerts\":[{\"endsAt\":1,\"startsAt\":true,"
         "\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].startsAt: must be a string"},
        {"{\"alerts\":[{\"endsAt\":{},\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].endsAt: must be a string"},
        /* The first non-string label in the body, not in sorted order. */
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\",\"b\":1,"
         "\"a\":2}}]}",
         "alerts[0].labels.b: must be a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\",\"n\\u00e9\":1}}]}",
         "alerts[0].labels.n\xc3\xa9: must be a string"},
        {"{\"alerts\":[{\"status\":\"fir\\u00e9\",\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: 'fir\xc3\xa9' is not firing or resolved"},
        {"{\"alerts\":[{\"status\":null,\"labels\":{\"alertname\":\"A\"}}]}",
         "alerts[0].status: missing or not a string"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":null}]}",
         "alerts[0].labels: must be an object"},
        /* The first alert with a problem is the answer. */
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"}},2,"
         "{\"status\":\"x\"}]}",
         "alerts[1]: must be an object"},
        /* The version is judged before any alert, wherever it stands. */
        {"{\"alerts\":[{\"status\":\"x\"}],\"version\":\"5\"}",
         "version: '5' is not supported (expected \"4\")"},
        {"{\"alerts\":[{\"status\":\"x\"}],\"version\":null}",
         "version: must be a string"},
        {"{\"alerts\":7,\"version\":\"3\"}",
         "version: '3' is not supported (expected \"4\")"},
        {"{\"version\":\"\\u0034\",\"alerts\":[]}", NULL},
        {"{\"version\":\"0123456789012345678901234567890123456789\",\"alerts\":[]}",
         "version: '01234567890123456789012345678901' is not supported (expected \"4\")"},
        /* Not JSON beats every problem of shape, even one found before. */
        {"{\"alerts\":[{\"status\":\"x\"}],\"z\":tru}", "body is not valid JSON: "},
        {"{\"alerts\":[1],\"v\":1,\"v\":2}", "body is not valid JSON: duplicate key 'v'"},
        {"[1,2", "body is not valid JSON: "},
        {"\"x", "body is not valid JSON: "},
        {"  ", "body is not valid JSON: "},
    };
    struct alert_batch b;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            alert_batch_parse(cases[i].body, strlen(cases[i].body), &b, err, sizeof(err));
        if (cases[i].expect == NULL) {
            if (rc != 0)
                fail_msg("case %zu: %s", i, err);
            alert_batch_free(&b);
            continue;
        }
        if (rc != -1 || strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0 ||
            (strncmp(err, "body is not valid JSON", 22) != 0 &&
             strcmp(err, cases[i].expect) != 0))
            fail_msg("case %zu: rc %d err '%s'", i, rc, err);
        assert_int_equal(b.ab_count, 0);
        assert_null(b.ab_alerts);
    }
}

/* A key twice in any object the parser reads, and a \u0000 in any string or
 * key it reads, are "not valid JSON" (jansson's JSON_REJECT_DUPLICATES and
 * its refusal of NUL escapes), told with a place. */
static void
test_duplicates_and_nul(void **state)
{
    static const struct {
        const char *body;
        const char *expect;
    } cases[] = {
        {"{\"alerts\":[],\"alerts\":[]}", "duplicate key 'alerts' (line 1, column 14)"},
        {"{\"version\":\"4\",\"alerts\":[],\"version\":\"4\"}",
         "duplicate key 'version'"},
        {"{\"x\":1,\"alerts\":[],\n \"x\":{}}", "duplicate key 'x' (line 2, column 2)"},
        {"{\"alerts\":[{\"status\":\"firing\",\"status\":\"firing\","
         "\"labels\":{\"alertname\":\"A\"}}]}",
         "duplicate key 'status'"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"g\":\"\",\"g\":1}]}",
         "duplicate key 'g'"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\","
         "\"alertname\":\"B\"}}]}",
         "duplicate key 'alertname'"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\","
         "\"\\u0061lertname\":\"B\"}}]}",
         "duplicate key 'alertname'"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"annotations\":{\"s\":\"1\",\"t\":\"2\",\"s\":3}}]}",
         "duplicate key 's'"},
        /* Told at the first repeat in the body. */
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"b\":\"1\",\"a\":\"1\","
         "\"a\":\"2\",\"b\":\"2\",\"alertname\":\"A\"}}]}",
         "duplicate key 'a' (line 1, column 57)"},
        /* Found after a problem of shape, still first. */
        {"{\"alerts\":[{\"status\":\"x\"},{\"labels\":{\"k\":\"1\",\"k\":\"1\"}}]}",
         "duplicate key 'k'"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\\u0000\"}}]}",
         "\\u0000 in a string is not supported"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\","
         "\"k\\u0000\":\"v\"}}]}",
         "\\u0000 in a key is not supported"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"annotations\":{\"s\":\"\\\\\\u0000\"}}]}",
         "\\u0000 in a string is not supported"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"fingerprint\":\"\\u0000\"}]}",
         "\\u0000 in a string is not supported"},
        {"{\"alerts\":[{\"status\":\"firing\\u0000\",\"labels\":{\"alertname\":\"A\"}}]}",
         "\\u0000 in a string is not supported"},
        {"{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":\"A\"},"
         "\"x\\u0000\":1}]}",
         "\\u0000 in a key is not supported"},
        {"{\"version\":\"4\\u0000\",\"alerts\":[]}",
         "\\u0000 in a string is not supported"},
    };
    struct alert_batch b;
    char err[256], want[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            alert_batch_parse(cases[i].body, strlen(cases[i].body), &b, err, sizeof(err));
        snprintf(want, sizeof(want), "body is not valid JSON: %s", cases[i].expect);
        if (rc != -1 || strncmp(err, want, strlen(want)) != 0)
            fail_msg("case %zu: rc %d err '%s'", i, rc, err);
        assert_int_equal(b.ab_count, 0);
        assert_null(b.ab_alerts);
    }
    /* A \u0000 escape is told apart from an escaped backslash before "u0000". */
    const char *ok = "{\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":"
                     "\"A\\\\u0000\"}}]}";
    assert_int_equal(alert_batch_parse(ok, strlen(ok), &b, err, sizeof(err)), 0);
    assert_string_equal(b.ab_alerts[0].a_alertname, "A\\u0000");
    assert_string_equal(b.ab_alerts[0].a_labels_json, "{\"alertname\":\"A\\\\u0000\"}");
    alert_batch_free(&b);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static unsigned
rnd(unsigned n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (unsigned)((rng_state * 0x2545F4914F6CDD1Dull) >> 33) % n;
}

/* A random NUL-free UTF-8 string of at most max characters, at least min:
 * every ASCII byte 0x01-0x7f can come, and characters of 2, 3 and 4 bytes. */
static void
rnd_string(char *out, size_t cap, unsigned min, unsigned max)
{
    static const char *const wide[] = {
        "\xc3\xa9",     "\xc2\x80",         "\xe6\x97\xa5",    "\xe2\x80\xa8",
        "\xef\xbf\xbf", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"};
    static const char common[] = "\"\\/\n\t\x7f\x01\x1f ab{}:,";
    unsigned n = min + rnd(max - min + 1);
    size_t o = 0;

    for (unsigned i = 0; i < n && o + 5 < cap; i++) {
        unsigned r = rnd(10);
        if (r < 4) {
            out[o++] = (char)('a' + rnd(26));
        } else if (r < 6) {
            out[o++] = common[rnd(sizeof(common) - 1)];
        } else if (r < 8) {
            out[o++] = (char)(1 + rnd(0x7f));
        } else {
            const char *w = wide[rnd(sizeof(wide) / sizeof(wide[0]))];
            memcpy(out + o, w, strlen(w));
            o += strlen(w);
        }
    }
    out[o] = '\0';
}

static json_t *
rnd_map(unsigned max, int with_alertname)
{
    json_t *m = json_object();
    char k[128], v[128];
    unsigned n = rnd(max + 1);

    assert_non_null(m);
    if (with_alertname) {
        rnd_string(v, sizeof(v), 1, 12);
        assert_int_equal(json_object_set_new(m, "alertname", json_string(v)), 0);
    }
    for (unsigned i = 0; i < n; i++) {
        rnd_string(k, sizeof(k), 0, 8);
        rnd_string(v, sizeof(v), 0, 20);
        assert_int_equal(json_object_set_new(m, k, json_string(v)), 0);
    }
    return m;
}

/* jansson's reading of body: alerts[i].member dumped as the daemon always did. */
static char *
jansson_dump(const char *body, size_t i, const char *member)
{
    json_error_t jerr;
    json_t *root = json_loads(body, JSON_REJECT_DUPLICATES, &jerr);
    json_t *v;
    char *d;

    if (root == NULL)
        fail_msg("jansson refused a generated body: %s", jerr.text);
    v = json_object_get(json_array_get(json_object_get(root, "alerts"), i), member);
    d = v == NULL || json_is_null(v) ? strdup("{}")
                                     : json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(d);
    json_decref(root);
    return d;
}

/* Bodies written every way jansson writes them (escaped non-ASCII and
 * slashes, indented, members in any order), with random labels and
 * annotations of every ASCII byte and of wide characters: the labels and
 * annotations JSON come out byte for byte as json_dumps(JSON_COMPACT |
 * JSON_SORT_KEYS) wrote them, and every label reads back. */
static void
test_dumps_match_jansson(void **state)
{
    static const size_t flags[] = {JSON_COMPACT, JSON_COMPACT | JSON_ENSURE_ASCII,
                                   JSON_INDENT(2) | JSON_ESCAPE_SLASH,
                                   JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH};
    static const char *const member[] = {"status",      "labels",   "annotations",
                                         "fingerprint", "startsAt", "endsAt",
                                         "generatorURL"};
    struct alert_batch b;
    char err[256], s[128];

    for (int round = 0; round < 3000; round++) {
        json_t *root = json_object(), *alerts = json_array(), *al[3];
        size_t nal = 1 + rnd(3), order[7];
        char *body, *want;

        assert_non_null(root);
        for (size_t i = 0; i < nal; i++) {
            json_t *v[7];
            al[i] = json_object();
            v[0] = json_string(rnd(2) ? "firing" : "resolved");
            v[1] = rnd_map(rnd(8) == 0 ? 40 : 10, 1); /* sometimes past insertion sort */
            v[2] = rnd(6) == 0 ? json_null() : rnd_map(5, 0);
            rnd_string(s, sizeof(s), 0, 16);
            v[3] = rnd(5) == 0 ? json_null() : json_string(s);
            rnd_string(s, sizeof(s), 0, 16);
            v[4] = json_string(s);
            v[5] = json_string("0001-01-01T00:00:00Z");
            v[6] = json_string("http://vm:19090/graph?g0.expr=a%2Fb");
            for (size_t m = 0; m < 7; m++)
                order[m] = m;
            for (size_t m = 7; m > 1; m--) {
                size_t j = rnd((unsigned)m), t = order[m - 1];
                order[m - 1] = order[j];
                order[j] = t;
            }
            for (size_t m = 0; m < 7; m++)
                if (order[m] > 2 && rnd(4) == 0)
                    json_decref(v[order[m]]); /* optional members left out */
                else
                    json_object_set_new(al[i], member[order[m]], v[order[m]]);
            json_array_append_new(alerts, al[i]);
        }
        if (rnd(2))
            json_object_set_new(root, "version", json_string("4"));
        json_object_set_new(root, "alerts", alerts);
        json_object_set_new(root, "commonLabels", rnd_map(4, 1));
        body = json_dumps(root, flags[rnd(sizeof(flags) / sizeof(flags[0]))]);
        assert_non_null(body);
        if (alert_batch_parse(body, strlen(body), &b, err, sizeof(err)) != 0)
            fail_msg("round %d: %s\n%s", round, err, body);
        assert_int_equal(b.ab_count, nal);
        for (size_t i = 0; i < nal; i++) {
            const struct alert *a = &b.ab_alerts[i];
            json_t *lab = json_object_get(al[i], "labels"), *fp;
            const char *k;
            json_t *v;

            want = jansson_dump(body, i, "labels");
            if (strcmp(a->a_labels_json, want) != 0)
                fail_msg("round %d labels:\n got %s\nwant %s", round, a->a_labels_json,
                         want);
            free(want);
            want = jansson_dump(body, i, "annotations");
            if (strcmp(a->a_annotations_json, want) != 0)
                fail_msg("round %d annotations:\n got %s\nwant %s", round,
                         a->a_annotations_json, want);
            free(want);
            assert_int_equal(a->a_nlabels, json_object_size(lab));
            json_object_foreach(lab, k, v)
            {
                assert_non_null(alert_label(a, k));
                assert_string_equal(alert_label(a, k), json_string_value(v));
            }
            for (size_t j = 1; j < a->a_nlabels; j++)
                assert_true(strcmp(a->a_labels[j - 1].al_name, a->a_labels[j].al_name) <
                            0);
            assert_string_equal(a->a_alertname,
                                json_string_value(json_object_get(lab, "alertname")));
            fp = json_object_get(al[i], "fingerprint");
            assert_string_equal(a->a_fingerprint,
                                json_is_string(fp) ? json_string_value(fp) : "");
            assert_int_equal(a->a_firing,
                             strcmp(json_string_value(json_object_get(al[i], "status")),
                                    "firing") == 0);
        }
        assert_null(alert_label(&b.ab_alerts[0], "no such label"));
        alert_batch_free(&b);
        free(body);
        json_decref(root);
    }
}

/* Each ASCII byte, escaped or not, alone in a label name and value. */
static void
test_every_byte_matches_jansson(void **state)
{
    struct alert_batch b;
    char err[256];

    for (int c = 1; c < 0x80; c++) {
        char kv[4] = {'k', (char)c, 'k', '\0'};
        json_t *root, *lab = json_object();
        char *body, *want;

        json_object_set_new(lab, "alertname", json_string("A"));
        json_object_set_new(lab, kv, json_string(kv));
        root = json_pack("{s:[{s:s,s:o,s:{s:s}}]}", "alerts", "status", "firing",
                         "labels", lab, "annotations", kv, kv);
        assert_non_null(root);
        for (int ascii = 0; ascii < 2; ascii++) {
            body = json_dumps(root, ascii ? JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH : 0);
            assert_non_null(body);
            if (alert_batch_parse(body, strlen(body), &b, err, sizeof(err)) != 0)
                fail_msg("byte %#x: %s", c, err);
            want = jansson_dump(body, 0, "labels");
            assert_string_equal(b.ab_alerts[0].a_labels_json, want);
            free(want);
            want = jansson_dump(body, 0, "annotations");
            assert_string_equal(b.ab_alerts[0].a_annotations_json, want);
            free(want);
            assert_string_equal(alert_label(&b.ab_alerts[0], kv), kv);
            alert_batch_free(&b);
            free(body);
        }
        json_decref(root);
    }
}

/* Bodies need not be NUL-terminated: the length is honoured. */
static void
test_length_is_honoured(void **state)
{
    const char *body = "{\"alerts\":[]}garbage";
    struct alert_batch b;
    char err[256];

    assert_int_equal(alert_batch_parse(body, 13, &b, err, sizeof(err)), 0);
    assert_int_equal(alert_batch_parse(body, strlen(body), &b, err, sizeof(err)), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_025_delivery),
        cmocka_unit_test(test_newer_delivery_mixed_status),
        cmocka_unit_test(test_minimal_and_missing_version),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_deep_nesting_and_huge_strings),
        cmocka_unit_test(test_length_is_honoured),
        cmocka_unit_test(test_member_order_and_priority),
        cmocka_unit_test(test_duplicates_and_nul),
        cmocka_unit_test(test_dumps_match_jansson),
        cmocka_unit_test(test_every_byte_matches_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
