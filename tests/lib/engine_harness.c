/* engine_harness.c -- the decision engine's integration harness: settings, a
 * loopback fake, the audit database, webhook delivery and the audit's JSON */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"
#include "audit_cli.h"
#include "clients.h"
#include "engine_harness.h"

#define QUERY_PATH "/api/v1/query"

static struct env *cur; /* for the fake getenv, while the settings load */

void
run_ms(struct event_base *base, long ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

void
env_init(struct env *e, const struct kv *base_env)
{
    memset(e, 0, sizeof(*e));
    fake_isolate();
    e->base_env = base_env;
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->fake = fake_new(e->base));
    snprintf(e->dir, sizeof(e->dir), "/tmp/gvw-engine-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(e->db, sizeof(e->db), "%s/audit.db", e->dir);
}

void
engine_stop(struct env *e)
{
    kube_free(e->kube);
    e->kube = NULL;
    prom_free(e->prom);
    e->prom = NULL;
    if (e->r != NULL)
        assert_int_equal(remedy_in_flight(e->r), 0);
    remedy_free(e->r);
    e->r = NULL;
    store_close(e->store);
    e->store = NULL;
    if (e->cfg_loaded)
        config_free(&e->cfg);
    e->cfg_loaded = 0;
}

void
env_fini(struct env *e)
{
    char p[128];

    engine_stop(e);
    fake_free(e->fake);
    event_base_free(e->base);
    unlink(e->db);
    snprintf(p, sizeof(p), "%s-wal", e->db);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", e->db);
    unlink(p);
    rmdir(e->dir);
}

int
env_setup(void **state, const struct kv *base_env)
{
    struct env *e = malloc(sizeof(*e));

    if (e == NULL)
        return -1;
    env_init(e, base_env);
    *state = e;
    return 0;
}

int
env_teardown(void **state)
{
    env_fini(*state);
    free(*state);
    return 0;
}

/* Settings: the test's extra, then the program's base_env, then the wiring. */
static const char *
env_getenv(const char *name)
{
    const struct kv wiring[] = {
        {"PROMETHEUS_URL", fake_url(cur->fake)},
        {"KUBE_API_URL", fake_url(cur->fake)},
        {"AUDIT_DB", cur->db},
        {"WEBHOOK_AUTH", "none"},
        {"LOG_FORMAT", "text"},
        {NULL, NULL},
    };
    const struct kv *layers[] = {cur->extra, cur->base_env, wiring};

    for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
        for (const struct kv *p = layers[i]; p != NULL && p->k != NULL; p++)
            if (strcmp(p->k, name) == 0)
                return p->v;
    return NULL;
}

void
env_config(struct env *e, const struct kv *extra)
{
    int rest[4], nrest = 0;
    char err[512];

    cur = e;
    e->extra = extra;
    if (config_load(&e->cfg, 0, NULL, env_getenv, rest, &nrest, err, sizeof(err)) == -1)
        fail_msg("config_load: %s", err);
    e->cfg_loaded = 1;
    e->extra = NULL;
    cur = NULL;
}

void
env_clients(struct env *e)
{
    char err[512];

    if (clients_new(e->base, &e->cfg, &e->prom, &e->kube, err, sizeof(err)) == -1)
        fail_msg("clients_new: %s", err);
}

void
engine_start(struct env *e, const struct kv *extra, long http_timeout_ms)
{
    char err[512];

    env_config(e, extra);
    if (http_timeout_ms > 0)
        e->cfg.c_kube.ks_http_timeout_ms = http_timeout_ms;
    env_clients(e);
    if ((e->store = store_open(e->db, STORE_READWRITE, err, sizeof(err))) == NULL)
        fail_msg("store_open: %s", err);
    assert_non_null(e->r = remedy_new(e->base, &e->cfg, e->prom, e->kube));
    remedy_set_store(e->r, e->store);
}

void
route_no_device(struct env *e)
{
    assert_int_equal(fake_route_query(e->fake, "GET", QUERY_PATH, "gvw_ts", 200,
                                      "{\"status\":\"success\",\"data\":{"
                                      "\"resultType\":\"vector\",\"result\":[]}}"),
                     0);
}

size_t
deliver_body(struct env *e, const char *body)
{
    struct alert_batch b;
    char err[512];
    int64_t id;
    size_t n;

    if (alert_batch_parse(body, strlen(body), &b, err, sizeof(err)) == -1)
        fail_msg("alert_batch_parse: %s", err);
    for (size_t i = 0; i < b.ab_count; i++) {
        const struct alert *a = &b.ab_alerts[i];
        struct store_alert sa = {
            .sa_received_ms = 1780394400000,
            .sa_alertname = a->a_alertname,
            .sa_status = alert_status_name(a),
            .sa_fingerprint = a->a_fingerprint,
            .sa_starts_at = a->a_starts_at,
            .sa_ends_at = a->a_ends_at,
            .sa_labels_json = a->a_labels_json,
            .sa_annotations_json = a->a_annotations_json,
        };
        if (store_add_alert(e->store, &sa, &id, err, sizeof(err)) == -1)
            fail_msg("store_add_alert: %s", err);
        remedy_on_alert(e->r, a, id);
    }
    n = b.ab_count;
    alert_batch_free(&b);
    return n;
}

void
deliver_n(struct env *e, const char *alertname, const char *status, const char *labels,
          int copies)
{
    size_t cap = 512 + (size_t)copies * (400 + strlen(labels)), off = 0;
    char *body = malloc(cap);

    assert_non_null(body);
    off +=
        (size_t)snprintf(body + off, cap - off,
                         "{\"version\":\"4\",\"status\":\"%s\",\"receiver\":\"gvw\","
                         "\"groupKey\":\"{}:{alertname=\\\"%s\\\"}\",\"groupLabels\":{},"
                         "\"commonLabels\":{},\"commonAnnotations\":{},"
                         "\"externalURL\":\"http://alertmanager:9093\",\"alerts\":[",
                         status, alertname);
    for (int i = 0; i < copies; i++)
        off += (size_t)snprintf(
            body + off, cap - off,
            "%s{\"status\":\"%s\",\"labels\":{\"alertname\":\"%s\",\"severity\":"
            "\"critical\"%s%s},"
            "\"annotations\":{\"summary\":\"free VRAM low\"},"
            "\"startsAt\":\"2026-06-02T09:30:00Z\",\"endsAt\":\"0001-01-01T00:00:00Z\","
            "\"generatorURL\":\"http://prometheus:9090/"
            "graph\",\"fingerprint\":\"" FINGERPRINT "\"}",
            i ? "," : "", status, alertname, labels[0] ? "," : "", labels);
    snprintf(body + off, cap - off, "]}");
    assert_int_equal(deliver_body(e, body), copies);
    free(body);
}

void
deliver(struct env *e, const char *labels)
{
    deliver_n(e, "GPUVRAMLow", "firing", labels, 1);
}

int
query_has(const struct fake_req *r, const char *needle)
{
    char *q = fake_query_param(r, "query");
    int yes = q != NULL && strstr(q, needle) != NULL;

    free(q);
    return yes;
}

size_t
count_queries(struct env *e, const char *needle)
{
    size_t n = 0;

    for (size_t i = 0; i < fake_count(e->fake); i++)
        n += (size_t)query_has(fake_req(e->fake, i), needle);
    return n;
}

int
count_rows_cb(int64_t id, const struct store_decision *d, void *arg)
{
    size_t *n = arg;

    if (strcmp(d->sd_result, "in_progress") != 0)
        n[0]++;
    n[1]++;
    return 0;
}

/* Decision rows: finished ones in n[0], all in n[1]. */
void
count_rows(struct env *e, size_t n[2])
{
    struct store_filter f = {0};
    char err[256];

    n[0] = n[1] = 0;
    if (store_query_decisions(e->store, &f, count_rows_cb, n, err, sizeof(err)) == -1)
        fail_msg("store_query_decisions: %s", err);
}

void
wait_rows_then(struct env *e, size_t want, long timeout_ms, long grace_ms)
{
    long end = fake_now_ms() + timeout_ms;
    size_t n[2];

    for (;;) {
        count_rows(e, n);
        if (n[0] >= want && remedy_in_flight(e->r) == 0)
            break;
        if (fake_now_ms() >= end)
            fail_msg("waited %ld ms for %zu finished decisions: %zu finished, %zu rows, "
                     "%zu in flight",
                     timeout_ms, want, n[0], n[1], remedy_in_flight(e->r));
        run_ms(e->base, 10);
    }
    run_ms(e->base, grace_ms);
    count_rows(e, n);
    assert_int_equal(n[0], want);
    assert_int_equal(n[1], want);
    assert_int_equal(remedy_in_flight(e->r), 0);
}

void
wait_rows(struct env *e, size_t want, long timeout_ms)
{
    wait_rows_then(e, want, timeout_ms, 60);
}

json_t *
audit_json(struct env *e, const char *word)
{
    char *argv[10];
    int argc = 0, saved, fd, rc;
    char path[128], *text;
    size_t len;
    json_t *j;
    json_error_t jerr;
    FILE *fp;

    argv[argc++] = "audit";
    if (word != NULL)
        argv[argc++] = (char *)word;
    argv[argc++] = "--db";
    argv[argc++] = e->db;
    argv[argc++] = "--format";
    argv[argc++] = "json";
    argv[argc++] = "--limit";
    argv[argc++] = "0";
    argv[argc] = NULL;
    snprintf(path, sizeof(path), "%s/stdout", e->dir);
    fflush(stdout);
    assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
    assert_true((saved = dup(STDOUT_FILENO)) >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    rc = audit_main(argc, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(rc, AUDIT_EXIT_OK);
    assert_non_null(fp = fopen(path, "r"));
    fseek(fp, 0, SEEK_END);
    len = (size_t)ftell(fp);
    rewind(fp);
    assert_non_null(text = calloc(1, len + 1));
    assert_int_equal(fread(text, 1, len, fp), len);
    fclose(fp);
    unlink(path);
    if ((j = json_loads(text, 0, &jerr)) == NULL)
        fail_msg("audit output is not JSON (%s): %s", jerr.text, text);
    free(text);
    assert_true(json_is_array(j));
    return j;
}

json_t *
decisions(struct env *e)
{
    json_t *newest = audit_json(e, NULL), *oldest = json_array();
    size_t n = json_array_size(newest);

    for (size_t i = 0; i < n; i++)
        json_array_append(oldest, json_array_get(newest, n - 1 - i));
    json_decref(newest);
    return oldest;
}

json_t *
jget(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);

    if (v == NULL) {
        char *s = json_dumps(o, JSON_COMPACT);
        fail_msg("no \"%s\" in %s", k, s ? s : "?");
    }
    return v;
}

void
jstr(json_t *o, const char *k, const char *want)
{
    json_t *v = jget(o, k);

    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", k);
    assert_string_equal(json_string_value(v), want);
}

void
jint(json_t *o, const char *k, long long want)
{
    json_t *v = jget(o, k);

    if (!json_is_integer(v))
        fail_msg("\"%s\" is not an integer", k);
    assert_int_equal(json_integer_value(v), want);
}

void
jnull(json_t *o, const char *k)
{
    if (!json_is_null(jget(o, k)))
        fail_msg("\"%s\" is not null", k);
}

void
jbool(json_t *o, const char *k, int want)
{
    json_t *v = jget(o, k);

    if (!json_is_boolean(v))
        fail_msg("\"%s\" is not a boolean", k);
    assert_int_equal(json_is_true(v), want);
}

void
jhas(json_t *o, const char *k, const char *needle)
{
    json_t *v = jget(o, k);

    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", k);
    if (strstr(json_string_value(v), needle) == NULL)
        fail_msg("\"%s\" is \"%s\", without \"%s\"", k, json_string_value(v), needle);
}

json_t *
candidate(json_t *d, const char *pod)
{
    json_t *c, *arr = jget(d, "candidates");
    size_t i;

    json_array_foreach(arr, i, c)
    {
        if (strcmp(json_string_value(jget(c, "pod")), pod) == 0)
            return c;
    }
    fail_msg("no candidate %s", pod);
    return NULL;
}
