/* test_act_sim.c -- the decision engine's act step against gvw-sim answering as a real
 * API server (a DELETE's options from its body, PDB refusal forms, load shedding);
 * Prometheus is the loopback fake. What the audit records and what the sim's pods
 * went through. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "engine_harness.h"
#include "httpc.h"

extern char **environ;

#define NODE "gpu-node-1"
#define ON_NODE "\"node\":\"" NODE "\""
#define QUERY_PATH "/api/v1/query"
#define ML_POD "immich-ml-5f7c9d8b6-qx2lp"
#define ML_UID "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01"
#define ML_PATH "/api/v1/namespaces/immich/pods/" ML_POD
#define FR_POD "frigate-84d5c6b7f9-h4n8s"
#define FR_PATH "/api/v1/namespaces/frigate/pods/" FR_POD

/* The incident's tenants (tests/data/remedy-pods-incident.json) as a scenario:
 * %s is the top-level extra ("throttle"), then immich-ml's and frigate's "pdb"
 * members ("" = none). */
#define SCENARIO                                                                         \
    "{\"time_scale\": 1000%s, \"pods\": ["                                               \
    "{\"namespace\": \"immich\", \"name\": \"" ML_POD "\", \"uid\": \"" ML_UID "\","     \
    " \"budget\": 3000%s},"                                                              \
    "{\"namespace\": \"llama-swap\", \"name\": \"llama-swap-6d8f7b5c4-w7r2k\","          \
    " \"budget\": 5000},"                                                                \
    "{\"namespace\": \"frigate\", \"name\": \"" FR_POD "\", \"budget\": 2000%s},"        \
    "{\"namespace\": \"immich\", \"name\": \"immich-server-7c4b9d6f8-m2t9z\","           \
    " \"budget\": 1800},"                                                                \
    "{\"namespace\": \"portal-stt\", \"name\": \"portal-stt-59b7d8c6f5-j6v3q\","         \
    " \"budget\": 1500}]}"

struct sim {
    pid_t pid;
    char url[64];
};

static const struct kv base_env[] = {
    {"MIN_RUNTIME", "1s"},          {"SETTLE", "1s"},    {"DRY_RUN", "false"},
    {"HTTP_TIMEOUT", "3s"},         {"EVENTS", "false"}, {"FREE_QUERY", ""},
    {"HTTP_CONNECT_TIMEOUT", "1s"}, {NULL, NULL},
};

/* The sim of the running test: stopped by teardown whatever the test did. */
static struct sim sim;

static int
setup(void **state)
{
    memset(&sim, 0, sizeof(sim));
    return env_setup(state, base_env);
}

/* Starts gvw-sim on the scenario text; its URL in s->url. */
static void
sim_start(struct env *e, struct sim *s, const char *scenario)
{
    const char *bin = getenv("GVW_SIM");
    char path[128], line[256];
    posix_spawn_file_actions_t fa;
    struct pollfd pfd;
    size_t len = 0;
    int out[2], port = 0;
    FILE *fp;

    if (bin == NULL)
        fail_msg("GVW_SIM is not set (ctest sets it)");
    snprintf(path, sizeof(path), "%s/scenario.json", e->dir);
    assert_non_null(fp = fopen(path, "w"));
    fputs(scenario, fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(pipe(out), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    {
        char *argv[] = {(char *)bin, "--scenario", path, "--listen", "127.0.0.1:0", NULL};
        assert_int_equal(posix_spawn(&s->pid, bin, &fa, NULL, argv, environ), 0);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    pfd.fd = out[0];
    pfd.events = POLLIN;
    while (port == 0 && len + 1 < sizeof(line) && poll(&pfd, 1, 5000) == 1) {
        ssize_t n = read(out[0], line + len, sizeof(line) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        line[len] = '\0';
        if (strchr(line, '\n') != NULL &&
            sscanf(line, "listening 127.0.0.1:%d", &port) != 1)
            break;
    }
    close(out[0]);
    if (port == 0)
        fail_msg("gvw-sim did not start: %s", line);
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", port);
}

static void
sim_stop(struct sim *s)
{
    int status;

    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, &status, 0);
        s->pid = 0;
    }
}

static int
teardown(void **state)
{
    sim_stop(&sim);
    return env_teardown(state);
}

struct got {
    int done;
    json_t *body;
};

static void
got_cb(const struct httpc_resp *r, void *arg)
{
    struct got *g = arg;

    g->done = 1;
    g->body =
        r->hr_error == NULL ? json_loadb(r->hr_body, r->hr_body_len, 0, NULL) : NULL;
}

/* GET url+path from the test's loop; the parsed answer (caller decrefs). */
static json_t *
sim_get(struct env *e, const struct sim *s, const char *path)
{
    struct httpc_opts o = {.ho_timeout_ms = 3000, .ho_no_proxy = 1};
    char url[256], err[256];
    struct got g = {0, NULL};
    struct httpc *h = httpc_new(e->base, &o, err, sizeof(err));
    struct httpc_req req = {.hq_method = "GET", .hq_url = url};

    assert_non_null(h);
    snprintf(url, sizeof(url), "%s%s", s->url, path);
    assert_int_equal(httpc_request(h, &req, got_cb, &g), 0);
    assert_int_equal(fake_run_until(e->base, &g.done, 5000), 0);
    httpc_free(h);
    if (g.body == NULL)
        fail_msg("GET %s: no JSON answer", url);
    return g.body;
}

/* The sim's record of the mutating calls to path (method, code), in order, as
 * "METHOD CODE " words, e.g. "POST 429 POST 201 ". */
static void
calls_to(struct env *e, const struct sim *s, const char *path, char *out, size_t len)
{
    json_t *ev = sim_get(e, s, "/sim/events"), *c;
    size_t i, used = 0;

    out[0] = '\0';
    json_array_foreach(ev, i, c)
    {
        const char *p = json_string_value(json_object_get(c, "path"));
        if (p != NULL && strncmp(p, path, strlen(path)) == 0 && used < len)
            used += (size_t)snprintf(
                out + used, len - used, "%s %lld ",
                json_string_value(json_object_get(c, "method")),
                (long long)json_integer_value(json_object_get(c, "code")));
    }
    json_decref(ev);
}

/* The engine with the API server at the sim and Prometheus at the fake. */
static void
start(struct env *e, const struct sim *s, const char *action, const char *dry,
      const char *prom_file, const char *then_file)
{
    const struct kv extra[] = {
        {"KUBE_API_URL", s->url}, {"ACTION", action}, {"DRY_RUN", dry}, {NULL, NULL}};

    assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200, prom_file, 0), 0);
    if (then_file != NULL)
        assert_int_equal(fake_route_file(e->fake, "GET", QUERY_PATH, 200, then_file, 0),
                         0);
    engine_start(e, extra, 0);
}

/* DRY_RUN with ACTION=delete changes nothing on a server that reads a DELETE's
 * options from its body alone: the pod keeps its UID and resourceVersion. */
static void
test_dry_run_delete_untouched(void **state)
{
    struct env *e = *state;
    struct sim *s = &sim;
    json_t *before, *after, *all, *d;
    char calls[256], scenario[2048];

    snprintf(scenario, sizeof(scenario), SCENARIO, "", "", "");
    sim_start(e, s, scenario);
    before = sim_get(e, s, ML_PATH);
    start(e, s, "delete", "true", "remedy-prom-incident.json", NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    calls_to(e, s, ML_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "DELETE 200 ");
    after = sim_get(e, s, ML_PATH);
    jstr(after, "kind", "Pod"); /* not a 404 Status: the pod is still there */
    jstr(jget(after, "metadata"), "uid", ML_UID);
    jstr(jget(after, "metadata"), "resourceVersion",
         json_string_value(jget(jget(before, "metadata"), "resourceVersion")));
    assert_null(json_object_get(jget(after, "metadata"), "deletionTimestamp"));
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "would_recycle");
    jstr(d, "action", "delete");
    jhas(d, "reason", "a dry-run deletion was accepted by the API server");
    json_decref(all);
    json_decref(before);
    json_decref(after);
    engine_stop(e);
    sim_stop(s);
}

/* Load shedding (plain-text 429, Retry-After 1) twice, then the eviction: the
 * same victim each time, frigate (next in rank) never touched. */
static void
test_throttled_same_victim(void **state)
{
    struct env *e = *state;
    struct sim *s = &sim;
    json_t *all, *d;
    char calls[256], scenario[2048];

    snprintf(scenario, sizeof(scenario), SCENARIO,
             ", \"throttle\": {\"count\": 2, \"retry_after\": \"1\"}", "", "");
    sim_start(e, s, scenario);
    start(e, s, "evict", "false", "remedy-prom-two-over.json",
          "remedy-prom-recovered.json");
    deliver(e, ON_NODE);
    wait_rows(e, 1, 8000);
    calls_to(e, s, ML_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "POST 429 POST 429 POST 201 ");
    calls_to(e, s, FR_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "");
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", ML_POD);
    json_decref(all);
    engine_stop(e);
    sim_stop(s);
}

/* immich-ml's budget refuses with 403 (disruptions allowed negative): the next
 * candidate, frigate, is evicted. */
static void
test_pdb_403_next(void **state)
{
    struct env *e = *state;
    struct sim *s = &sim;
    json_t *all, *d;
    char calls[256], scenario[2048];

    snprintf(scenario, sizeof(scenario), SCENARIO, "",
             ", \"pdb\": {\"name\": \"immich-ml-pdb\", \"refuse\": \"negative\"}", "");
    sim_start(e, s, scenario);
    start(e, s, "evict", "false", "remedy-prom-two-over.json",
          "remedy-prom-recovered.json");
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    calls_to(e, s, ML_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "POST 403 ");
    calls_to(e, s, FR_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "POST 201 ");
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "recycled");
    jstr(jget(d, "victim"), "pod", FR_POD);
    jhas(d, "reason", "pdb disruptions allowed is negative");
    json_decref(all);
    engine_stop(e);
    sim_stop(s);
}

/* Both refuse (500 more than one budget; 429 still being processed): blocked,
 * the reason quoting the server, nothing evicted. */
static void
test_pdb_all_refused(void **state)
{
    struct env *e = *state;
    struct sim *s = &sim;
    json_t *all, *d;
    char calls[256], scenario[2048];

    snprintf(scenario, sizeof(scenario), SCENARIO, "",
             ", \"pdb\": {\"name\": \"immich-ml-pdb\", \"refuse\": \"multiple\"}",
             ", \"pdb\": {\"name\": \"frigate-pdb\", \"refuse\": \"processing\"}");
    sim_start(e, s, scenario);
    start(e, s, "evict", "false", "remedy-prom-two-over.json", NULL);
    deliver(e, ON_NODE);
    wait_rows(e, 1, 5000);
    calls_to(e, s, ML_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "POST 500 ");
    calls_to(e, s, FR_PATH, calls, sizeof(calls));
    assert_string_equal(calls, "POST 429 ");
    all = decisions(e);
    d = json_array_get(all, 0);
    jstr(d, "result", "blocked");
    jhas(d, "reason", "This pod has more than one PodDisruptionBudget");
    jhas(d, "reason", "The disruption budget frigate-pdb is still being processed");
    json_decref(all);
    engine_stop(e);
    sim_stop(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dry_run_delete_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttled_same_victim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pdb_403_next, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pdb_all_refused, setup, teardown),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
