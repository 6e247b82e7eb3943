/* test_pods_json.c -- PodList bodies as the API server sends them, and broken ones */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/testdata.h"

#include "pods_json.h"

#define LIT(s) s, sizeof(s) - 1

#define RES "viktorbarzin.me/gpumem"

static const struct pod_parse_opts opts = {
    RES, "gpu-vram-watchdog/protected", "gpu-vram-watchdog/release", NULL, NULL, 0};

static const struct pod *
find(const struct pod_list *l, const char *name)
{
    size_t i;

    for (i = 0; i < l->pl_count; i++)
        if (strcmp(l->pl_pods[i].p_name, name) == 0)
            return &l->pl_pods[i];
    fail_msg("pod %s not in the list", name);
    return NULL;
}

/* The 2026-06-02 node, read from a full PodList. */
static void
test_incident(void **state)
{
    struct pod_list l;
    const struct pod *p;
    char err[256], *body;
    size_t len;

    body = test_data_load("pods-incident.json", &len);
    /* Not NUL-terminated: the parser must honour len. */
    assert_int_equal(pods_json_parse(body, len, &opts, &l, err, sizeof(err)), 0);
    free(body);
    assert_int_equal(l.pl_count, 6);

    p = find(&l, "immich-ml-5f7c9d8b6-qx2lp");
    assert_string_equal(p->p_namespace, "immich");
    assert_string_equal(p->p_uid, "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01");
    assert_true(p->p_running);
    assert_false(p->p_terminating);
    assert_true(p->p_has_controller);
    assert_false(p->p_mirror);
    assert_false(p->p_protected);
    assert_int_equal(p->p_started, 1780352045);
    assert_int_equal(p->p_budget_state, BUDGET_OK);
    assert_int_equal(p->p_budget_mib, 3000);
    assert_null(p->p_budget_error);

    p = find(&l, "llama-swap-6d8f7b5c4-w7r2k");
    assert_int_equal(p->p_budget_mib, 5000);
    p = find(&l, "immich-server-7c4b9d6f8-m2t9z");
    assert_int_equal(p->p_budget_mib, 1800);
    p = find(&l, "portal-stt-59b7d8c6f5-j6v3q");
    assert_int_equal(p->p_budget_mib, 1500);
    /* two containers count; the init container's 8k does not */
    p = find(&l, "frigate-84d5c6b7f9-h4n8s");
    assert_int_equal(p->p_budget_state, BUDGET_OK);
    assert_int_equal(p->p_budget_mib, 2000);
    p = find(&l, "nvidia-device-plugin-daemonset-5xk2v");
    assert_int_equal(p->p_budget_state, BUDGET_NONE);
    assert_true(p->p_has_controller);

    pod_list_free(&l);
    assert_null(l.pl_pods);
    assert_int_equal(l.pl_count, 0);
    pod_list_free(&l);
    pod_list_free(NULL);
}

struct rule_case {
    const char *name;
    int running, terminating, controller, mirror, protect;
    int64_t started;
    enum budget_state state;
    int64_t budget;
    const char *error; /* substring of p_budget_error, when BUDGET_BAD */
};

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static const struct rule_case rules[] = {
    {"plain", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"pending", 0, 0, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"deleting", 1, 1, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"mirror", 1, 0, 1, 1, 0, T0, BUDGET_OK, 1000, NULL},
    {"bare", 1, 0, 0, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"protected", 1, 0, 1, 0, 1, T0, BUDGET_OK, 1000, NULL},
    {"protect-false", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"protect-yes", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    /* malformed protection fails closed */
    {"protect-number", 1, 0, 1, 0, 1, T0, BUDGET_OK, 1000, NULL},
    {"annotations-list", 1, 0, 1, 0, 1, T0, BUDGET_OK, 1000, NULL},
    {"no-start", 1, 0, 1, 0, 0, 0, BUDGET_OK, 1000, NULL},
    {"offset-start", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1000, NULL},
    {"request-only", 1, 0, 1, 0, 0, T0, BUDGET_OK, 2000, NULL},
    {"limit-over-request", 1, 0, 1, 0, 0, T0, BUDGET_OK, 2000, NULL},
    {"two-containers", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1512, NULL},
    {"no-gpumem", 1, 0, 1, 0, 0, T0, BUDGET_NONE, 0, NULL},
    {"bad-suffix", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0,
     "container broken: limit \"5q\" is not a quantity (unknown suffix \"q\")"},
    {"negative", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0,
     "container app: request \"-5\" is negative"},
    {"number", 1, 0, 1, 0, 0, T0, BUDGET_OK, 2048, NULL},
    {"number-frac", 1, 0, 1, 0, 0, T0, BUDGET_OK, 2, NULL},
    {"number-negative", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0,
     "container app: limit -1 is negative"},
    {"bool", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0,
     "container app: limit is a JSON boolean, not a quantity"},
    {"null-value", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0, "limit is a JSON null"},
    {"limits-string", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0,
     "container app: resources.limits is not an object"},
    {"binary", 1, 0, 1, 0, 0, T0, BUDGET_OK, 1024, NULL},
    {"overflow-sum", 1, 0, 1, 0, 0, T0, BUDGET_BAD, 0, "overflow 64 bits"},
};

/* Every field that shapes eligibility, one pod each. */
static void
test_rules(void **state)
{
    struct pod_list l;
    const struct pod *p;
    const struct rule_case *c;
    char err[256], *body;
    size_t len, i;

    body = test_data_load("pods-rules.json", &len);
    assert_int_equal(pods_json_parse(body, len, &opts, &l, err, sizeof(err)), 0);
    free(body);
    /* Every pod of the file but "succeeded": a finished pod is no tenant. */
    assert_int_equal(l.pl_count, sizeof(rules) / sizeof(rules[0]));
    for (i = 0; i < l.pl_count; i++)
        assert_string_not_equal(l.pl_pods[i].p_name, "succeeded");
    for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        c = &rules[i];
        p = find(&l, c->name);
        if (p->p_running != c->running || p->p_terminating != c->terminating ||
            p->p_has_controller != c->controller || p->p_mirror != c->mirror ||
            p->p_protected != c->protect || p->p_started != c->started ||
            p->p_budget_state != c->state || p->p_budget_mib != c->budget)
            fail_msg("%s: running %d terminating %d controller %d mirror %d protected %d "
                     "started %lld state %d budget %lld",
                     c->name, p->p_running, p->p_terminating, p->p_has_controller,
                     p->p_mirror, p->p_protected, (long long)p->p_started,
                     p->p_budget_state, (long long)p->p_budget_mib);
        if (c->error == NULL) {
            assert_null(p->p_budget_error);
        } else if (p->p_budget_error == NULL ||
                   strstr(p->p_budget_error, c->error) == NULL) {
            fail_msg("%s: error \"%s\" lacks \"%s\"", c->name,
                     p->p_budget_error ? p->p_budget_error : "(null)", c->error);
        }
    }
    pod_list_free(&l);
}

/* A one-pod list around the given metadata, spec and status members. */
static char *
one_pod(const char *metadata_extra, const char *spec, const char *status)
{
    static char doc[4096];

    snprintf(doc, sizeof(doc),
             "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[{\"metadata\":"
             "{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\"%s}%s%s%s%s}]}",
             metadata_extra, spec[0] ? ",\"spec\":" : "", spec,
             status[0] ? ",\"status\":" : "", status);
    return doc;
}

static void
parse_one(const char *doc, struct pod_list *l)
{
    char err[256];

    if (pods_json_parse(doc, strlen(doc), &opts, l, err, sizeof(err)) != 0)
        fail_msg("%s: %s", doc, err);
    assert_int_equal(l->pl_count, 1);
}

struct time_case {
    const char *in;
    int64_t want;
};

static const struct time_case times[] = {
    {"2026-06-02T10:00:00Z", T0},
    {"2026-06-02t10:00:00z", T0},
    {"2026-06-02T10:00:00.5Z", T0},
    {"2026-06-02T10:00:00.123456789Z", T0},
    {"2026-06-02T12:00:00+02:00", T0},
    {"2026-06-02T08:30:00-01:30", T0},
    {"2024-02-29T00:00:00Z", 1709164800},
    {"2000-02-29T00:00:00Z", 951782400},
    {"2026-06-02T23:59:60Z", 1780444800},
    {"9999-12-31T23:59:59Z", 253402300799},
    {"1970-01-01T00:00:01Z", 1},
    {"1970-01-01T00:00:00Z", 0},
    {"1969-12-31T23:59:59Z", 0},
    {"2023-02-29T00:00:00Z", 0},
    {"2100-02-29T00:00:00Z", 0},
    {"2026-06-31T00:00:00Z", 0},
    {"2026-13-01T00:00:00Z", 0},
    {"2026-00-01T00:00:00Z", 0},
    {"2026-06-00T00:00:00Z", 0},
    {"2026-06-02T24:00:00Z", 0},
    {"2026-06-02T10:60:00Z", 0},
    {"2026-06-02T10:00:61Z", 0},
    {"2026-06-02 10:00:00Z", 0},
    {"2026-06-02T10:00:00", 0},
    {"2026-06-02T10:00:00.Z", 0},
    {"2026-06-02T10:00:00+0200", 0},
    {"2026-06-02T10:00:00+24:00", 0},
    {"2026-06-02T10:00:00+02:60", 0},
    {"2026-06-02T10:00:00+02:00x", 0},
    {"2026-06-02T10:00:00ZZ", 0},
    {"2026-6-2T10:00:00Z", 0},
    {"2026/06/02T10:00:00Z", 0},
    {"2026-06-02T10-00:00Z", 0},
    {"2026-06-02T10:00-00Z", 0},
    {"2026-06-02X10:00:00Z", 0},
    {"+026-06-02T10:00:00Z", 0},
    {"2026-06-0:T10:00:00Z", 0},
    {"2026-x6-02T10:00:00Z", 0},
    {"2026-06/02T10:00:00Z", 0},
    {"2026-06-x2T10:00:00Z", 0},
    {"2026-06-02Tx0:00:00Z", 0},
    {"2026-06-02T10:x0:00Z", 0},
    {"2026-06-02T10:00:x0Z", 0},
    {"2026-06-02T10:00:00+x2:00", 0},
    {"2026-06-02T10:00:00+02-00", 0},
    {"2026-06-02T10:00:00+02:x0", 0},
    {"2026-06-02T10:00:00-02", 0},
    {"", 0},
    {"yesterday", 0},
};

static void
test_start_time(void **state)
{
    struct pod_list l;
    char status[256];
    size_t i;

    for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        snprintf(status, sizeof(status), "{\"phase\":\"Running\",\"startTime\":\"%s\"}",
                 times[i].in);
        parse_one(one_pod("", "", status), &l);
        if (l.pl_pods[0].p_started != times[i].want)
            fail_msg("\"%s\" gave %lld, want %lld", times[i].in,
                     (long long)l.pl_pods[0].p_started, (long long)times[i].want);
        pod_list_free(&l);
    }
    parse_one(one_pod("", "", "{\"startTime\":1780394400}"), &l);
    assert_int_equal(l.pl_pods[0].p_started, 0);
    pod_list_free(&l);
}

struct field_case {
    const char *metadata; /* appended inside metadata */
    const char *spec;
    const char *status;
    int running, terminating, controller, mirror, protect;
    enum budget_state state;
    int64_t budget;
    const char *error;
};

/* Wrong types where the API never sends them: each reads the safe way. */
static const struct field_case fields[] = {
    {"", "", "", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {"", "null", "null", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {"", "{}", "\"Running\"", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {"", "{\"containers\":null}", "{\"phase\":\"running\"}", 0, 0, 0, 0, 0, BUDGET_NONE,
     0, NULL},
    {"", "{\"containers\":[]}", "{\"phase\":7}", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"deletionTimestamp\":null", "", "", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"deletionTimestamp\":0", "", "", 0, 1, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"ownerReferences\":{\"controller\":true}", "", "", 0, 0, 0, 0, 0, BUDGET_NONE, 0,
     NULL},
    {",\"ownerReferences\":[{\"controller\":\"true\"},7,{\"controller\":false}]", "", "",
     0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    /* The kubelet's mirror of a static pod is controlled by its Node: a mirror
     * pod even without the annotation (a custom group's "Node" is not). */
    {",\"ownerReferences\":[{\"kind\":\"Job\"},{\"kind\":\"Node\",\"controller\":true}]",
     "", "", 0, 0, 1, 1, 0, BUDGET_NONE, 0, NULL},
    {",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n\","
     "\"uid\":\"u\",\"controller\":true}]",
     "", "", 0, 0, 1, 1, 0, BUDGET_NONE, 0, NULL},
    {",\"ownerReferences\":[{\"kind\":\"Node\",\"apiVersion\":\"example.com/v1\","
     "\"controller\":true}]",
     "", "", 0, 0, 1, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"apiVersion\":\"v1\","
     "\"controller\":true}]",
     "", "", 0, 0, 1, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"annotations\":null", "", "", 0, 0, 0, 0, 0, BUDGET_NONE, 0, NULL},
    {",\"annotations\":{\"kubernetes.io/config.mirror\":null}", "", "", 0, 0, 0, 1, 0,
     BUDGET_NONE, 0, NULL},
    {",\"annotations\":{\"gpu-vram-watchdog/protected\":\"True\"}", "", "", 0, 0, 0, 0, 1,
     BUDGET_NONE, 0, NULL},
    {",\"annotations\":{\"gpu-vram-watchdog/protected\":\"\"}", "", "", 0, 0, 0, 0, 0,
     BUDGET_NONE, 0, NULL},
    {",\"annotations\":{\"gpu-vram-watchdog/protected\":true}", "", "", 0, 0, 0, 0, 1,
     BUDGET_NONE, 0, NULL},
    {",\"annotations\":{\"gpu-vram-watchdog/protected\":\" true\"}", "", "", 0, 0, 0, 0,
     0, BUDGET_NONE, 0, NULL},
    {"", "\"spec\"", "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "spec is not an object"},
    {"", "{\"containers\":{}}", "", 0, 0, 0, 0, 0, BUDGET_BAD, 0,
     "spec.containers is not an array"},
    {"", "{\"containers\":[{\"name\":\"a\"},3]}", "", 0, 0, 0, 0, 0, BUDGET_BAD, 0,
     "spec.containers[1] is not an object"},
    {"", "{\"containers\":[{\"name\":\"a\",\"resources\":null}]}", "", 0, 0, 0, 0, 0,
     BUDGET_NONE, 0, NULL},
    {"", "{\"containers\":[{\"name\":\"a\",\"resources\":[]}]}", "", 0, 0, 0, 0, 0,
     BUDGET_BAD, 0, "container a: resources is not an object"},
    {"", "{\"containers\":[{\"resources\":{\"requests\":7}}]}", "", 0, 0, 0, 0, 0,
     BUDGET_BAD, 0, "container #0: resources.requests is not an object"},
    {"",
     "{\"containers\":[{\"name\":1,\"resources\":{\"limits\":null,\"requests\":{\"" RES
     "\":\"2k\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_OK, 2000, NULL},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES "\":\"0\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_OK, 0, NULL},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
     "\":\"-0.5\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit \"-0.5\" is negative"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
     "\":\"1e400\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "does not fit in 64 bits"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES "\":1e30}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit 1e+30 does not fit in 64 bits"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
     "\":99999999999999999999999}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "does not fit in 64 bits"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES "\":{}}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit is a JSON object"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES "\":[]}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit is a JSON array"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES "\":\"\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit \"\" is not a quantity (empty quantity)"},
    {"",
     "{\"containers\":[{\"name\":\"a\\u001b[31m\",\"resources\":{\"limits\":{\"" RES
     "\":\"1\\n\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "container a\\x1b[31m: limit \"1\\x0a\" is not"},
    {"",
     "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"" RES
     "\":\"5\\\"\\\\q\"}}}]}",
     "", 0, 0, 0, 0, 0, BUDGET_BAD, 0, "limit \"5\\x22\\x5cq\" is not a quantity"},
    /* a huge number in a field nobody reads does not sink the list */
    {",\"generation\":123456789012345678901234567890", "", "", 0, 0, 0, 0, 0, BUDGET_NONE,
     0, NULL},
};

static void
test_fields(void **state)
{
    const struct field_case *c;
    struct pod_list l;
    const struct pod *p;
    size_t i;

    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        c = &fields[i];
        parse_one(one_pod(c->metadata, c->spec, c->status), &l);
        p = &l.pl_pods[0];
        if (p->p_running != c->running || p->p_terminating != c->terminating ||
            p->p_has_controller != c->controller || p->p_mirror != c->mirror ||
            p->p_protected != c->protect || p->p_budget_state != c->state ||
            p->p_budget_mib != c->budget)
            fail_msg("case %zu: running %d terminating %d controller %d mirror %d "
                     "protected %d state %d budget %lld",
                     i, p->p_running, p->p_terminating, p->p_has_controller, p->p_mirror,
                     p->p_protected, p->p_budget_state, (long long)p->p_budget_mib);
        if (c->error == NULL)
            assert_null(p->p_budget_error);
        else if (p->p_budget_error == NULL || strstr(p->p_budget_error, c->error) == NULL)
            fail_msg("case %zu: error \"%s\" lacks \"%s\"", i,
                     p->p_budget_error ? p->p_budget_error : "(null)", c->error);
        pod_list_free(&l);
    }
}

/* The pod IP, hostNetwork and the release annotation's raw value (cooperative
 * release): read as sent, malformed values included (the release parser
 * judges them); odd types are taken the safe way. */
static void
test_release_fields(void **state)
{
    struct pod_parse_opts o = {
        RES, "gpu-vram-watchdog/protected", "gpu-vram-watchdog/release", NULL, NULL, 0};
    struct pod_list l;
    char err[128];
    const char *doc;

    doc = one_pod(",\"annotations\":{\"gpu-vram-watchdog/release\":\"8080/unload\"}",
                  "{\"hostNetwork\":false}", "{\"podIP\":\"10.42.0.17\"}");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_string_equal(l.pl_pods[0].p_ip, "10.42.0.17");
    assert_string_equal(l.pl_pods[0].p_release, "8080/unload");
    assert_false(l.pl_pods[0].p_host_network);
    pod_list_free(&l);

    /* kept raw, even when it is not PORT/PATH */
    doc = one_pod(
        ",\"annotations\":{\"gpu-vram-watchdog/release\":\"http://x@evil/\\u0001\"}",
        "{\"hostNetwork\":true}", "{}");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_string_equal(l.pl_pods[0].p_release, "http://x@evil/\x01");
    assert_null(l.pl_pods[0].p_ip);
    assert_true(l.pl_pods[0].p_host_network);
    pod_list_free(&l);

    /* odd types: no IP, no annotation; a hostNetwork that is not false counts as true */
    doc = one_pod(",\"annotations\":{\"gpu-vram-watchdog/release\":8080}",
                  "{\"hostNetwork\":\"yes\"}", "{\"podIP\":7}");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_null(l.pl_pods[0].p_release);
    assert_null(l.pl_pods[0].p_ip);
    assert_true(l.pl_pods[0].p_host_network);
    pod_list_free(&l);

    /* a NUL inside: as if absent */
    doc = one_pod(",\"annotations\":{\"gpu-vram-watchdog/release\":\"80/a\\u0000b\"}", "",
                  "{\"podIP\":\"10.0.0.1\\u0000x\"}");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_null(l.pl_pods[0].p_release);
    assert_null(l.pl_pods[0].p_ip);
    pod_list_free(&l);

    /* without the option the annotation is not read */
    doc = one_pod(",\"annotations\":{\"gpu-vram-watchdog/release\":\"8080/unload\"}", "",
                  "");
    o.po_release_annotation = NULL;
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_null(l.pl_pods[0].p_release);
    pod_list_free(&l);

    /* repeated keys are refused, as elsewhere */
    o.po_release_annotation = "gpu-vram-watchdog/release";
    doc = one_pod("", "", "{\"podIP\":\"10.0.0.1\",\"podIP\":\"10.0.0.2\"}");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), -1);
    doc = one_pod(",\"annotations\":{\"gpu-vram-watchdog/release\":\"1/a\","
                  "\"gpu-vram-watchdog/release\":\"2/b\"}",
                  "", "");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), -1);
    doc = one_pod("", "{\"hostNetwork\":true,\"hostNetwork\":false}", "");
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), -1);
}

/* Another annotation name, or none, for protection. */
static void
test_protect_option(void **state)
{
    const char *doc = one_pod(
        ",\"annotations\":{\"gpu-vram-watchdog/protected\":\"true\",\"x/keep\":\"TrUe\"}",
        "", "");
    struct pod_parse_opts o = {RES, "x/keep", NULL, NULL, NULL, 0};
    struct pod_list l;
    char err[128];

    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_true(l.pl_pods[0].p_protected);
    pod_list_free(&l);
    o.po_protect_annotation = "x/other";
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_false(l.pl_pods[0].p_protected);
    pod_list_free(&l);
    o.po_protect_annotation = NULL;
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_false(l.pl_pods[0].p_protected);
    pod_list_free(&l);
    o.po_protect_annotation = "";
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_false(l.pl_pods[0].p_protected);
    pod_list_free(&l);

    /* the resource name is what counts */
    doc =
        one_pod("",
                "{\"containers\":[{\"resources\":{\"limits\":{\"example.com/vram\":\"7\","
                "\"" RES "\":\"9\"}}}]}",
                "");
    o.po_resource = "example.com/vram";
    assert_int_equal(pods_json_parse(doc, strlen(doc), &o, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_pods[0].p_budget_mib, 7);
    pod_list_free(&l);
}

struct bad_doc {
    const char *doc;
    size_t len; /* 0: strlen */
    const char *why;
};

static const struct bad_doc bad_docs[] = {
    {"", 0, "empty body"},
    {"not json", 0, "not JSON"},
    {"{\"items\":[", 0, "not JSON"},
    {"{\"items\":[]} trailing", 0, "not JSON"},
    {"{\"items\":[],\"items\":[]}", 0, "not JSON"},
    {"{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}", 0, "not JSON"},
    {"{\"items\":[{\"metadata\":{\"name\":\"\xc0\xaf\"}}]}", 0, "not JSON"},
    /* JSON, but a C string cannot hold U+0000: no such name */
    {"{\"items\":[{\"metadata\":{\"name\":\"a\\u0000b\",\"namespace\":\"n\",\"uid\":"
     "\"u\"}}]}",
     0, "items[0] metadata.name is missing, empty or not a string"},
    {"{\"items\":[1e400]}", 0, "items[0] has no metadata object"},
    /* a repeated key the parser reads, at any depth */
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\","
     "\"uid\":\"v\"}}]}",
     0, "not JSON: duplicate key \"uid\""},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\"},"
     "\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"1\",\"" RES
     "\":\"9\"}}}]}}]}",
     0, "not JSON: duplicate key"},
    /* a wrong item, then bytes that are not JSON: the body is not JSON */
    {"{\"items\":[7,{\"metadata\":{\"name\":\"a\"}},{]}", 0, "not JSON"},
    {"{\"items\":[{\"metadata\":7,\"spec\":{]}", 0, "not JSON"},
    /* kind is judged before the items, wherever it comes */
    {"{\"items\":[7],\"kind\":\"NodeList\"}", 0, "kind is \"NodeList\""},
    {"{\"items\":[{\"metadata\":7}],\"kind\":\"Status\",\"message\":\"gone\"}", 0,
     "the API server answered \"gone\""},
    /* the top level is an object or an array */
    {"  7 ", 0, "not JSON"},
    {"[1,]", 0, "not JSON"},
    {"{\"items\":[]}\0{", 14, "not JSON"},
    {"[]", 0, "the document is a JSON array"},
    /* jansson takes only an object or array at the top */
    {"\"PodList\"", 0, "not JSON"},
    {"null", 0, "not JSON"},
    {"{}", 0, "no items array"},
    {"{\"kind\":\"PodList\",\"items\":null}", 0, "no items array"},
    {"{\"kind\":\"PodList\",\"items\":{}}", 0, "no items array"},
    {"{\"kind\":\"PodList\",\"items\":\"[]\"}", 0, "no items array"},
    {"{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[]}", 0,
     "kind is \"NodeList\""},
    {"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
     "\"message\":\"pods is forbidden: User \\\"system:serviceaccount:gpu:watchdog\\\" "
     "cannot "
     "list resource \\\"pods\\\" in API group \\\"\\\" at the cluster scope\","
     "\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\"},\"code\":403}",
     0,
     "the API server answered \"pods is forbidden: User "
     "\\x22system:serviceaccount:gpu:w"},
    {"{\"kind\":\"Status\",\"code\":500}", 0, "kind is \"Status\""},
    {"{\"kind\":\"Status\",\"message\":7}", 0, "kind is \"Status\""},
    {"{\"items\":[1]}", 0, "items[0] has no metadata object"},
    {"{\"items\":[{}]}", 0, "items[0] has no metadata object"},
    {"{\"items\":[{\"metadata\":[]}]}", 0, "items[0] has no metadata object"},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}]}", 0,
     "items[0] metadata.uid is missing"},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":7}}]}", 0,
     "metadata.uid is missing, empty or not a string"},
    {"{\"items\":[{\"metadata\":{\"name\":\"\",\"namespace\":\"n\",\"uid\":\"u\"}}]}", 0,
     "metadata.name"},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}]}", 0,
     "metadata.namespace"},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":null,\"uid\":\"u\"}}]}", 0,
     "metadata.namespace"},
    {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\"}},"
     "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\",\"uid\":\"\"}}]}",
     0, "items[1] metadata.uid"},
};

static void
test_bad_documents(void **state)
{
    struct pod_list l;
    char err[256];
    size_t i, len;

    for (i = 0; i < sizeof(bad_docs) / sizeof(bad_docs[0]); i++) {
        len = bad_docs[i].len ? bad_docs[i].len : strlen(bad_docs[i].doc);
        memset(&l, 0xa5, sizeof(l));
        err[0] = '\0';
        if (pods_json_parse(bad_docs[i].doc, len, &opts, &l, err, sizeof(err)) != -1)
            fail_msg("case %zu accepted", i);
        if (strstr(err, bad_docs[i].why) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad_docs[i].why);
        assert_null(l.pl_pods);
        assert_int_equal(l.pl_count, 0);
    }
    assert_int_equal(pods_json_parse(NULL, 0, &opts, &l, err, sizeof(err)), -1);
    assert_int_equal(pods_json_parse("{\"items\":[]}", 12, NULL, &l, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "no resource name"));
    assert_int_equal(
        pods_json_parse("{\"items\":[]}", 12,
                        &(struct pod_parse_opts){NULL, NULL, NULL, NULL, NULL, 0}, &l,
                        err, 0),
        -1);
    assert_int_equal(
        pods_json_parse("{\"items\":[]}", 12,
                        &(struct pod_parse_opts){"", NULL, NULL, NULL, NULL, 0}, &l, NULL,
                        0),
        -1);
}

/* Nesting far past any real document: refused, not a stack overflow. */
static void
test_deep_nesting(void **state)
{
    size_t depth = 200000, i;
    char *doc = malloc(depth * 2 + 32), err[256];
    struct pod_list l;
    size_t n = 0;

    assert_non_null(doc);
    n += (size_t)snprintf(doc, 16, "{\"items\":[");
    for (i = 0; i < depth; i++)
        doc[n++] = '[';
    for (i = 0; i < depth; i++)
        doc[n++] = ']';
    doc[n++] = ']';
    doc[n++] = '}';
    assert_int_equal(pods_json_parse(doc, n, &opts, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not JSON"));
    free(doc);
}

/* The API server's member order is not a contract: the same pod written
 * inside out reads the same. Fields the parser ignores may hold anything
 * JSON allows, an out-of-range number or escapes included. */
static void
test_member_order(void **state)
{
    const char *doc =
        "{\"items\":[{\"status\":{\"startTime\":\"2026-06-02T10:00:00Z\",\"phase\":"
        "\"Runn\\u0069ng\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"" RES
        "\":\"1Gi\"},\"limits\":{\"" RES "\":\"5q\"}},\"name\":\"m\\u00e9\"}]},"
        "\"huge\":1e400,\"metadata\":{\"annotations\":{\"gpu-vram-watchdog/protected\":"
        "\"TRUE\"},\"uid\":\"u\\/1\",\"ownerReferences\":[7,{\"controller\":true}],"
        "\"namespace\":\"ns\",\"name\":\"p\"}}],\"kind\":\"PodList\"}";
    struct pod_list l;

    parse_one(doc, &l);
    assert_string_equal(l.pl_pods[0].p_uid, "u/1");
    assert_true(l.pl_pods[0].p_running);
    assert_int_equal(l.pl_pods[0].p_started, 1780394400);
    assert_true(l.pl_pods[0].p_has_controller);
    assert_true(l.pl_pods[0].p_protected);
    /* the limit wins over the request even when it comes second, and the
     * container's name (after its resources) is in the reason, as \xNN */
    assert_int_equal(l.pl_pods[0].p_budget_state, BUDGET_BAD);
    assert_non_null(strstr(l.pl_pods[0].p_budget_error,
                           "container m\\xc3\\xa9: limit \"5q\" is not a quantity"));
    pod_list_free(&l);
}

static void
test_empty_list(void **state)
{
    const char *doc = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                      "{\"resourceVersion\":\"7\"},\"items\":[]}";
    struct pod_list l;
    char err[64];

    assert_int_equal(pods_json_parse(doc, strlen(doc), &opts, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 0);
    assert_null(l.pl_pods);
    pod_list_free(&l);
}

/* Finished pods (Succeeded, Failed, escaped or not) are no tenant: not in the
 * list, whatever they declare; every other phase stays. A wrong shape in a
 * finished item still refuses the list, naming the item by its place in the
 * document. */
static void
test_finished_pods_dropped(void **state)
{
    const char *doc =
        "{\"kind\":\"PodList\",\"items\":["
        "{\"metadata\":{\"name\":\"done\",\"namespace\":\"ml\",\"uid\":\"u1\","
        "\"annotations\":{\"gpu-vram-watchdog/release\":\"8080/unload\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"9k\"}}}]},\"status\":{\"phase\":\"Succeeded\",\"podIP\":\"10.0.0.1\"}},"
        "{\"metadata\":{\"name\":\"live\",\"namespace\":\"ml\",\"uid\":\"u2\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"2k\"}}}]},\"status\":{\"phase\":\"Running\"}},"
        "{\"metadata\":{\"name\":\"crashed\",\"namespace\":\"ml\",\"uid\":\"u3\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" RES
        "\":\"5q\"}}}]},\"status\":{\"phase\":\"Failed\"}},"
        "{\"status\":{\"phase\":\"Succ\\u0065eded\"},\"metadata\":{\"name\":\"esc\","
        "\"namespace\":\"ml\",\"uid\":\"u4\"}},"
        "{\"metadata\":{\"name\":\"waiting\",\"namespace\":\"ml\",\"uid\":\"u5\"},"
        "\"status\":{\"phase\":\"Pending\"}},"
        "{\"metadata\":{\"name\":\"lost\",\"namespace\":\"ml\",\"uid\":\"u6\"},"
        "\"status\":{\"phase\":\"Unknown\"}},"
        "{\"metadata\":{\"name\":\"nophase\",\"namespace\":\"ml\",\"uid\":\"u7\"}}]}";
    const char *broken =
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\"},"
        "\"status\":{\"phase\":\"Failed\"}},{\"metadata\":{\"name\":\"b\",\"namespace\":"
        "\"n\",\"uid\":\"v\"},\"status\":{\"phase\":\"Succeeded\"}},{\"metadata\":"
        "{\"name\":\"c\",\"namespace\":\"n\"},\"status\":{\"phase\":\"Succeeded\"}}]}";
    struct pod_list l;
    char err[256];

    assert_int_equal(pods_json_parse(doc, strlen(doc), &opts, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 4);
    assert_string_equal(l.pl_pods[0].p_name, "live");
    assert_int_equal(l.pl_pods[0].p_budget_state, BUDGET_OK);
    assert_int_equal(l.pl_pods[0].p_budget_mib, 2000);
    assert_null(l.pl_pods[0].p_release);
    assert_string_equal(l.pl_pods[1].p_name, "waiting");
    assert_string_equal(l.pl_pods[2].p_name, "lost");
    assert_string_equal(l.pl_pods[3].p_name, "nophase");
    pod_list_free(&l);
    assert_int_equal(pods_json_parse(broken, strlen(broken), &opts, &l, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "items[2] metadata.uid"));
}

/* A list of n tiny pods ("n" running, then "fin" finished, names padded to
 * pad bytes) into a malloc'd body of *len bytes. */
static char *
many_pods(size_t n, size_t fin, size_t pad, size_t *len)
{
    size_t cap = (n + fin) * (pad + 128) + 64, o = 0;
    char *doc = malloc(cap), *name = malloc(pad + 1);

    assert_non_null(doc);
    assert_non_null(name);
    memset(name, 'x', pad);
    name[pad] = '\0';
    o += (size_t)snprintf(doc + o, cap - o, "{\"kind\":\"PodList\",\"items\":[");
    for (size_t i = 0; i < n + fin; i++)
        o += (size_t)snprintf(doc + o, cap - o,
                              "%s{\"metadata\":{\"name\":\"%s%zu\",\"namespace\":\"n\","
                              "\"uid\":\"u%zu\"},\"status\":{\"phase\":\"%s\"}}",
                              i ? "," : "", name, i, i, i < n ? "Running" : "Succeeded");
    o += (size_t)snprintf(doc + o, cap - o, "]}");
    assert_true(o < cap);
    free(name);
    *len = o;
    return doc;
}

/* The model stays small whatever the body holds (SPEC "Hostile input"): more
 * than POD_LIST_MAX pods that have not finished, or more than
 * POD_LIST_MAX_TEXT bytes of their names, is refused as too large, saying
 * so; finished pods count toward neither bound. */
static void
test_too_large(void **state)
{
    struct pod_list l;
    char err[256], *doc;
    size_t len;

    doc = many_pods(POD_LIST_MAX, 3 * POD_LIST_MAX, 0, &len);
    assert_int_equal(pods_json_parse(doc, len, &opts, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, POD_LIST_MAX);
    pod_list_free(&l);
    free(doc);

    doc = many_pods(POD_LIST_MAX + 1, 0, 0, &len);
    memset(&l, 0xa5, sizeof(l));
    assert_int_equal(pods_json_parse(doc, len, &opts, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pod list too large: more than 5000 pods that have not "
                                "finished"));
    assert_null(l.pl_pods);
    assert_int_equal(l.pl_count, 0);
    free(doc);

    /* Names far longer than Kubernetes allows: 5 x 1 MiB pass 4 MiB ... */
    doc = many_pods(5, 0, 1 << 20, &len);
    assert_int_equal(pods_json_parse(doc, len, &opts, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pod list too large: the names and annotations"));
    free(doc);
    /* ... unless those pods have finished: what they kept is dropped. */
    doc = many_pods(1, 8, 1 << 20, &len);
    assert_int_equal(pods_json_parse(doc, len, &opts, &l, err, sizeof(err)), 0);
    assert_int_equal(l.pl_count, 1);
    pod_list_free(&l);
    free(doc);
}

/* One ResourceClaim read: the driver's consumedCapacity memory, reservedFor, an
 * allocation or none; malformed bodies refused, the claim left unfetched. */
static void
test_claim_json(void **state)
{
    struct dra_claim c;
    char err[128];
    static const char *const bad[] = {"",
                                      "[]",
                                      "{",
                                      "{\"status\":",
                                      "nul",
                                      "{\"status\":{\"allocation\":{\"devices\":{"
                                      "\"results\":[{\"driver\":1,]}}}}"};

    (void)state;
    memset(&c, 0, sizeof(c));
    assert_int_equal(
        claim_json_parse(
            LIT("{\"status\":{\"reservedFor\":[{},{},{}],\"allocation\":{\"devices\":{"
                "\"results\":[{\"driver\":\"gpu.nvidia.com\",\"consumedCapacity\":{"
                "\"memory\":\"4Gi\"}},{\"driver\":\"gpu.nvidia.com\",\"consumedCapacity\":"
                "{\"memory\":4}},{\"driver\":\"gpu.nvidia.com\"},{\"driver\":\"x.io\","
                "\"consumedCapacity\":{\"memory\":\"1\"}}]}}}}"),
            "gpu.nvidia.com", &c, err, sizeof(err)),
        0);
    assert_true(c.dc_fetched);
    assert_true(c.dc_allocated);
    assert_int_equal(c.dc_reserved, 3);
    assert_int_equal(c.dc_memory_count, 2);
    assert_string_equal(c.dc_memory[0], "4Gi");
    assert_ptr_equal(c.dc_memory[1], BSRC_NOT_STRING); /* a number is no quantity */
    assert_int_equal(
        claim_json_parse(LIT("{\"status\":{}}"), "gpu.nvidia.com", &c, err, sizeof(err)),
        0);
    assert_false(c.dc_allocated);
    assert_int_equal(c.dc_memory_count, 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (claim_json_parse(bad[i], strlen(bad[i]), "gpu.nvidia.com", &c, err,
                             sizeof(err)) != -1)
            fail_msg("claim body %zu accepted: %s", i, bad[i]);
        assert_false(c.dc_fetched);
        assert_non_null(strstr(err, "not a ResourceClaim"));
    }
    free(c.dc_memory);
}

/* The claims a PodList names, once each; a body that is not one names none;
 * a pod whose claim is missing from the table, or unallocated, or carries
 * memory that is no quantity, is bad_budget with why. */
static void
test_claims_of_pods(void **state)
{
    /* clang-format off */
    static const char body[] = "{\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ml\",\"uid\":\"u1\"},\"status\":{"
        "\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":\"c1\"},"
        "{\"name\":\"h\"},{\"name\":\"i\",\"resourceClaimName\":7}]}},"
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ml\",\"uid\":\"u2\"},\"status\":{"
        "\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":\"c1\"},"
        "{\"name\":\"h\",\"resourceClaimName\":\"c2\"}]}},"
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ml\",\"uid\":\"u3\"},\"status\":{"
        "\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":\"c3\"}]}}]}";
    /* clang-format on */
    struct dra_claims l;
    struct bsrc_order dra;
    struct pod_parse_opts o = opts;
    struct pod_list pl;
    char err[256];

    (void)state;
    assert_int_equal(claim_json_refs(LIT("not json"), &l), 0);
    assert_int_equal(l.dl_count, 0);
    assert_int_equal(claim_json_refs(LIT(body), &l), 0);
    assert_int_equal(l.dl_count, 3);
    assert_non_null(dra_claims_find(&l, "ml", "c1"));
    assert_non_null(dra_claims_find(&l, "ml", "c2"));
    assert_null(dra_claims_find(&l, "other", "c1"));
    /* c1 read and allocated with 1Gi; c2 read, not allocated; c3 left out */
    assert_int_equal(
        claim_json_parse(LIT("{\"status\":{\"allocation\":{\"devices\":{"
                             "\"results\":[{\"driver\":\"d.io\","
                             "\"consumedCapacity\":{\"memory\":\"1Gi\"}}]}}}}"),
                         "d.io", (struct dra_claim *)dra_claims_find(&l, "ml", "c1"), err,
                         sizeof(err)),
        0);
    assert_int_equal(claim_json_parse(LIT("{\"status\":{}}"), "d.io",
                                      (struct dra_claim *)dra_claims_find(&l, "ml", "c2"),
                                      err, sizeof(err)),
                     0);
    ((struct dra_claim *)dra_claims_find(&l, "ml", "c3"))->dc_error =
        strdup("kube: get resourceclaims: 503");
    assert_int_equal(bsrc_order_parse("dra", &dra, err, sizeof(err)), 0);
    o.po_claims = &l;
    assert_int_equal(pods_json_parse_sources(LIT(body), &o, &dra, &pl, err, sizeof(err)),
                     0);
    assert_int_equal(pl.pl_count, 3);
    assert_int_equal(pl.pl_pods[0].p_budget_state, BUDGET_OK);
    assert_int_equal(pl.pl_pods[0].p_budget_mib, 1024);
    assert_int_equal(pl.pl_pods[1].p_budget_state, BUDGET_BAD);
    assert_string_equal(pl.pl_pods[1].p_budget_error, "claim ml/c2 has no allocation");
    assert_int_equal(pl.pl_pods[2].p_budget_state, BUDGET_BAD);
    assert_string_equal(pl.pl_pods[2].p_budget_error,
                        "claim ml/c3 could not be read: kube: get resourceclaims: 503");
    pod_list_free(&pl);
    /* no table (the exporter, suggest): no pod declares DRA */
    o.po_claims = NULL;
    assert_int_equal(pods_json_parse_sources(LIT(body), &o, &dra, &pl, err, sizeof(err)),
                     0);
    for (size_t i = 0; i < pl.pl_count; i++)
        assert_null(pl.pl_pods[i].p_budget_source);
    pod_list_free(&pl);
    dra_claims_free(&l);
}

/* Two pods naming the same two claims in opposite orders declare them in one
 * text (the claims by name), so `budgets` shows one declaration and the seating
 * chart counts their seat once. */
static void
test_claims_any_order(void **state)
{
    /* clang-format off */
    static const char body[] = "{\"items\":["
        "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ml\",\"uid\":\"u1\"},\"spec\":{"
        "\"resourceClaims\":[{\"name\":\"x\",\"resourceClaimName\":\"zeta\"},"
        "{\"name\":\"y\",\"resourceClaimName\":\"alpha\"}]}},"
        "{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ml\",\"uid\":\"u2\"},\"spec\":{"
        "\"resourceClaims\":[{\"name\":\"y\",\"resourceClaimName\":\"alpha\"},"
        "{\"name\":\"x\",\"resourceClaimName\":\"zeta\"}]}}]}";
    /* clang-format on */
    static const char *const names[] = {"zeta", "alpha"}, *const mem[] = {"2Gi", "1Gi"};
    struct dra_claims l;
    struct bsrc_order dra;
    struct pod_parse_opts o = opts;
    struct pod_list pl;
    char err[256], claim[256];

    (void)state;
    assert_int_equal(claim_json_refs(LIT(body), &l), 0);
    for (size_t i = 0; i < 2; i++) {
        snprintf(claim, sizeof(claim),
                 "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":"
                 "\"d.io\",\"consumedCapacity\":{\"memory\":\"%s\"}}]}},"
                 "\"reservedFor\":[{},{}]}}",
                 mem[i]);
        assert_int_equal(
            claim_json_parse(claim, strlen(claim), "d.io",
                             (struct dra_claim *)dra_claims_find(&l, "ml", names[i]), err,
                             sizeof(err)),
            0);
    }
    assert_int_equal(bsrc_order_parse("dra", &dra, err, sizeof(err)), 0);
    o.po_claims = &l;
    assert_int_equal(pods_json_parse_sources(LIT(body), &o, &dra, &pl, err, sizeof(err)),
                     0);
    assert_int_equal(pl.pl_count, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(pl.pl_pods[i].p_budget_mib, 3072);
        assert_non_null(pl.pl_pods[i].p_budget_decl);
    }
    assert_string_equal(pl.pl_pods[0].p_budget_decl, pl.pl_pods[1].p_budget_decl);
    assert_non_null(strstr(pl.pl_pods[0].p_budget_decl, "claim ml/alpha"));
    assert_true(strstr(pl.pl_pods[0].p_budget_decl, "claim ml/alpha") <
                strstr(pl.pl_pods[0].p_budget_decl, "claim ml/zeta"));
    pod_list_free(&pl);
    dra_claims_free(&l);
}

/* A claim a pod names directly (a shared one) is in spec.resourceClaims alone, as
 * the real API server writes it; one made from a template in the status alone.
 * Both are read, a name in both counted once; a template entry without a claim
 * name and malformed entries name nothing; a repeated resourceClaims key is
 * refused like any other. */
static void
test_claims_in_spec(void **state)
{
    /* clang-format off */
    static const char body[] = "{\"items\":["
        "{\"metadata\":{\"name\":\"s1\",\"namespace\":\"ml\",\"uid\":\"u1\"},\"spec\":{"
        "\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"shared\"},"
        "{\"name\":\"t\",\"resourceClaimTemplateName\":\"tpl\"}]},\"status\":{"
        "\"resourceClaimStatuses\":[{\"name\":\"t\",\"resourceClaimName\":\"s1-t\"}]}},"
        "{\"metadata\":{\"name\":\"s2\",\"namespace\":\"ml\",\"uid\":\"u2\"},\"spec\":{"
        "\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"shared\"}]},"
        "\"status\":{\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":"
        "\"shared\"}]}},"
        "{\"metadata\":{\"name\":\"m1\",\"namespace\":\"ml\",\"uid\":\"u3\"},\"spec\":{"
        "\"resourceClaims\":\"shared\"}},"
        "{\"metadata\":{\"name\":\"m2\",\"namespace\":\"ml\",\"uid\":\"u4\"},\"spec\":{"
        "\"resourceClaims\":[1,null,[],{\"resourceClaimName\":5},{\"name\":\"x\","
        "\"resourceClaimName\":\"a\\u0000b\"}]}}]}";
    static const char twice[] = "{\"items\":[{\"metadata\":{\"name\":\"a\","
        "\"namespace\":\"ml\",\"uid\":\"u\"},\"spec\":{\"resourceClaims\":[],"
        "\"resourceClaims\":[]}}]}";
    /* clang-format on */
    struct dra_claims l;
    struct bsrc_order dra;
    struct pod_parse_opts o = opts;
    struct pod_list pl;
    char err[256];

    (void)state;
    assert_int_equal(claim_json_refs(LIT(body), &l), 0);
    assert_int_equal(l.dl_count, 2);
    assert_non_null(dra_claims_find(&l, "ml", "shared"));
    assert_non_null(dra_claims_find(&l, "ml", "s1-t"));
    assert_int_equal(
        claim_json_parse(LIT("{\"status\":{\"allocation\":{\"devices\":{"
                             "\"results\":[{\"driver\":\"d.io\","
                             "\"consumedCapacity\":{\"memory\":\"16Gi\"}}]}},"
                             "\"reservedFor\":[{},{}]}}"),
                         "d.io", (struct dra_claim *)dra_claims_find(&l, "ml", "shared"),
                         err, sizeof(err)),
        0);
    assert_int_equal(
        claim_json_parse(LIT("{\"status\":{\"allocation\":{\"devices\":{"
                             "\"results\":[{\"driver\":\"d.io\","
                             "\"consumedCapacity\":{\"memory\":\"4Gi\"}}]}}}}"),
                         "d.io", (struct dra_claim *)dra_claims_find(&l, "ml", "s1-t"),
                         err, sizeof(err)),
        0);
    assert_int_equal(bsrc_order_parse("dra", &dra, err, sizeof(err)), 0);
    o.po_claims = &l;
    assert_int_equal(pods_json_parse_sources(LIT(body), &o, &dra, &pl, err, sizeof(err)),
                     0);
    assert_int_equal(pl.pl_count, 4);
    /* the shared claim (spec) and its own (status): 16 + 4 GiB */
    assert_int_equal(pl.pl_pods[0].p_budget_state, BUDGET_OK);
    assert_int_equal(pl.pl_pods[0].p_budget_mib, 20480);
    assert_string_equal(pl.pl_pods[0].p_budget_source, "dra");
    /* named in both: the claim once, the whole claim */
    assert_int_equal(pl.pl_pods[1].p_budget_state, BUDGET_OK);
    assert_int_equal(pl.pl_pods[1].p_budget_mib, 16384);
    assert_string_equal(pl.pl_pods[1].p_budget_decl, "claim ml/shared: memory 16Gi");
    for (size_t i = 2; i < 4; i++) { /* malformed entries name no claim */
        assert_null(pl.pl_pods[i].p_budget_source);
        assert_int_equal(pl.pl_pods[i].p_budget_state, BUDGET_NONE);
    }
    pod_list_free(&pl);
    dra_claims_free(&l);
    assert_int_equal(pods_json_parse_sources(LIT(twice), &o, &dra, &pl, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "duplicate key \"resourceClaims\""));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incident),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_start_time),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_protect_option),
        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_empty_list),
        cmocka_unit_test(test_member_order),
        cmocka_unit_test(test_release_fields),
        cmocka_unit_test(test_finished_pods_dropped),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_claim_json),
        cmocka_unit_test(test_claims_of_pods),
        cmocka_unit_test(test_claims_in_spec),
        cmocka_unit_test(test_claims_any_order),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
