/* test_config.c -- settings: defaults, env, flags that win, every bad value */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char **fake_env;

static const char *
fake_getenv(const char *name)
{
    for (size_t i = 0; fake_env != NULL && fake_env[i] != NULL; i += 2)
        if (strcmp(fake_env[i], name) == 0)
            return fake_env[i + 1];
    return NULL;
}

static char token_path[] = "/tmp/gvw-test-token-XXXXXX";

static int
setup(void **state)
{
    int fd = mkstemp(token_path);
    if (fd < 0 || write(fd, "s3cret\n", 7) != 7)
        return -1;
    close(fd);
    return 0;
}

static int
teardown(void **state)
{
    unlink(token_path);
    return 0;
}

/* Loads with env pairs and argv; returns config_load's result. */
static int
load(struct config *cfg, const char **env, int argc, char **argv, char *err, size_t len)
{
    int rest[16], nrest;
    fake_env = env;
    return config_load(cfg, argc, argv, fake_getenv, rest, &nrest, err, len);
}

static void
test_defaults(void **state)
{
    const char *env[] = {"WEBHOOK_TOKEN_FILE", token_path, NULL};
    struct config c;
    char err[256];

    assert_int_equal(load(&c, env, 0, NULL, err, sizeof(err)), 0);
    assert_string_equal(c.c_listen_addr, "0.0.0.0:9808");
    assert_true(c.c_dry_run);
    assert_int_equal(c.c_floor_mib, 1536);
    assert_int_equal(c.c_gpu_total_mib, 15360);
    assert_string_equal(c.c_gpumem_resource, "viktorbarzin.me/gpumem");
    assert_true(c.c_gpumem_capacity_auto); /* each node its own value */
    assert_int_equal(c.c_gpumem_reserve_mib, 2048);
    assert_int_equal(c.c_max_concurrent_decisions, 16);
    assert_string_equal(c.c_gpu_node_selector, "nvidia.com/gpu.present=true");
    assert_int_equal(c.c_advertise_interval_s, 3600);
    assert_string_equal(c.c_prometheus_url, "http://prometheus:9090");
    assert_string_equal(c.c_used_query,
                        "sum by (namespace, pod) (gpu_pod_memory_used_bytes)");
    assert_string_equal(c.c_free_query, "auto"); /* SPEC: the device's own free */
    assert_string_equal(c.c_pod_label, "pod");
    assert_string_equal(c.c_namespace_label, "namespace");
    assert_string_equal(c.c_kube.ks_api_url, ""); /* not in a cluster */
    assert_int_equal(c.c_webhook_auth, WEBHOOK_AUTH_BEARER);
    assert_int_equal(c.c_audit_retention_s, 90 * 86400);
    assert_int_equal(c.c_trigger_alerts.sl_count, 1);
    assert_string_equal(c.c_trigger_alerts.sl_items[0], "GPUVRAMLow");
    assert_string_equal(c.c_alert_node_label, "node");
    assert_int_equal(c.c_action, ACTION_EVICT);
    assert_int_equal(c.c_min_runtime_s, 120);
    assert_int_equal(c.c_settle_ms, 60000);
    assert_int_equal(c.c_max_recycles_per_hour, 6);
    assert_string_equal(c.c_protect_annotation, "gpu-vram-watchdog/protected");
    assert_true(strlist_contains(&c.c_exclude_namespaces, "kube-system"));
    assert_int_equal(c.c_fallback, FALLBACK_NONE);
    assert_false(c.c_log_text);
    assert_int_equal(c.c_kube.ks_http_connect_timeout_ms, 2000);
    assert_int_equal(c.c_kube.ks_http_timeout_ms, 10000);
    assert_string_equal(c.c_gpu_label, "uuid");
    assert_string_equal(c.c_alert_gpu_label, "uuid");
    assert_string_equal(c.c_release_annotation, "gpu-vram-watchdog/release");
    assert_int_equal(c.c_release_wait_ms, 20000);
    assert_true(c.c_events);
    assert_false(c.c_predict); /* GPUVRAMExhaustionPredicted is only recorded */
    assert_false(strlist_contains(&c.c_trigger_alerts, PREDICT_ALERTNAME));
    assert_int_equal(c.c_predict_window_s, 120);
    assert_int_equal(c.c_predict_horizon_s, 120);
    assert_true(c.c_predict_min_growth == 5.0);
    config_free(&c);
}

static void
test_flag_wins_over_env(void **state)
{
    const char *env[] = {"FLOOR_MIB", "100", "WEBHOOK_AUTH", "none", "DRY_RUN",
                         "false",     NULL};
    char *argv[] = {"--floor-mib", "2048", "--dry-run=true", "--node", "gpu-1"};
    struct config c;
    char err[256];
    int rest[8], nrest;

    fake_env = env;
    assert_int_equal(
        config_load(&c, 5, argv, fake_getenv, rest, &nrest, err, sizeof(err)), 0);
    assert_int_equal(c.c_floor_mib, 2048);
    assert_true(c.c_dry_run);
    /* Not a setting: left for the subcommand, in order. */
    assert_int_equal(nrest, 2);
    assert_string_equal(argv[rest[0]], "--node");
    assert_string_equal(argv[rest[1]], "gpu-1");
    config_free(&c);
}

static void
test_empty_string_is_empty_not_default(void **state)
{
    const char *env[] = {"WEBHOOK_AUTH",
                         "none",
                         "EXCLUDE_NAMESPACES",
                         "",
                         "TRIGGER_ALERTS",
                         " GPUVRAMLow , Other ,,",
                         "ALERT_NODE_LABEL",
                         "",
                         "PROTECT_ANNOTATION",
                         "",
                         "RELEASE_ANNOTATION",
                         "",
                         NULL};
    struct config c;
    char err[256];

    assert_int_equal(load(&c, env, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(c.c_exclude_namespaces.sl_count, 0);
    assert_int_equal(c.c_trigger_alerts.sl_count, 2);
    assert_string_equal(c.c_trigger_alerts.sl_items[1], "Other");
    /* Empty text with a meaning of its own: no node label, no annotation. */
    assert_string_equal(c.c_alert_node_label, "");
    assert_string_equal(c.c_protect_annotation, "");
    assert_string_equal(c.c_release_annotation, "");
    config_free(&c);
}

/* Each bad value stops start-up with a line that names the setting. */
static void
test_bad_values_name_the_setting(void **state)
{
    static const struct {
        const char *name, *value, *expect;
    } cases[] = {
        {"FLOOR_MIB", "abc", "FLOOR_MIB: 'abc' is not a non-negative integer"},
        {"FLOOR_MIB", "-5", "FLOOR_MIB"},
        {"FLOOR_MIB", "", "FLOOR_MIB"},
        {"FLOOR_MIB", "12x", "FLOOR_MIB"},
        {"GPU_TOTAL_MIB", "0", "GPU_TOTAL_MIB: must be greater than 0"},
        {"GPU_TOTAL_MIB", "99999999999999999999", "GPU_TOTAL_MIB"},
        {"MAX_RECYCLES_PER_HOUR", "six", "MAX_RECYCLES_PER_HOUR"},
        {"MAX_RECYCLES_PER_HOUR", "4097", "MAX_RECYCLES_PER_HOUR: at most 4096"},
        {"GPUMEM_CAPACITY_MIB", "1.5", "GPUMEM_CAPACITY_MIB: '1.5' is neither auto nor"},
        {"GPUMEM_CAPACITY_MIB", "-1", "GPUMEM_CAPACITY_MIB"},
        {"GPUMEM_CAPACITY_MIB", "", "GPUMEM_CAPACITY_MIB"},
        {"GPUMEM_CAPACITY_MIB", "automatic", "GPUMEM_CAPACITY_MIB"},
        {"GPUMEM_RESERVE_MIB", "-1", "GPUMEM_RESERVE_MIB"},
        {"GPUMEM_RESERVE_MIB", "2Gi", "GPUMEM_RESERVE_MIB"},
        {"MAX_CONCURRENT_DECISIONS", "0", "MAX_CONCURRENT_DECISIONS: must be at least 1"},
        {"MAX_CONCURRENT_DECISIONS", "-4", "MAX_CONCURRENT_DECISIONS"},
        {"MAX_CONCURRENT_DECISIONS", "many", "MAX_CONCURRENT_DECISIONS"},
        {"DRY_RUN", "maybe", "DRY_RUN: 'maybe' is not true or false"},
        {"ACTION", "kill", "ACTION: 'kill' is not one of: evict, delete"},
        {"FALLBACK", "smallest", "FALLBACK: 'smallest' is not one of: none, largest"},
        {"PREDICT", "yes please", "PREDICT"},
        {"PREDICT_WINDOW", "0", "PREDICT_WINDOW: must be greater than 0"},
        {"PREDICT_WINDOW", "2 min", "PREDICT_WINDOW"},
        {"PREDICT_HORIZON", "0s", "PREDICT_HORIZON: must be greater than 0"},
        {"PREDICT_MIN_GROWTH", "5MB/s", "PREDICT_MIN_GROWTH: '5MB/s' is not a rate"},
        {"PREDICT_MIN_GROWTH", "-5", "PREDICT_MIN_GROWTH"},
        {"PREDICT_MIN_GROWTH", "", "PREDICT_MIN_GROWTH"},
        {"LOG_FORMAT", "xml", "LOG_FORMAT"},
        {"WEBHOOK_AUTH", "basic", "WEBHOOK_AUTH"},
        {"SETTLE", "1w", "SETTLE: '1w' is not a duration"},
        {"MIN_RUNTIME", "soon", "MIN_RUNTIME"},
        {"ADVERTISE_INTERVAL", "-1h", "ADVERTISE_INTERVAL"},
        {"AUDIT_RETENTION", "forever", "AUDIT_RETENTION"},
        {"HTTP_TIMEOUT", "x", "HTTP_TIMEOUT"},
        {"GPUMEM_RESOURCE", "gpumem",
         "GPUMEM_RESOURCE: 'gpumem' is not a valid extended"},
        {"GPUMEM_RESOURCE", "Viktor.me/gpumem", "GPUMEM_RESOURCE"},
        {"GPUMEM_RESOURCE", "a/b/c", "GPUMEM_RESOURCE"},
        {"GPUMEM_RESOURCE", "example.com/-x", "GPUMEM_RESOURCE"},
        {"GPUMEM_RESOURCE", "kubernetes.io/gpumem", "GPUMEM_RESOURCE"},
        {"PROMETHEUS_URL", "prometheus:9090", "PROMETHEUS_URL: 'prometheus:9090' is not"},
        {"PROMETHEUS_URL", "", "PROMETHEUS_URL"},
        {"KUBE_API_URL", "ftp://x", "KUBE_API_URL"},
        {"LISTEN_ADDR", "9808", "LISTEN_ADDR: '9808' is not host:port: no ':port'"},
        {"LISTEN_ADDR", "0.0.0.0:99999",
         "LISTEN_ADDR: '0.0.0.0:99999' is not host:port: the port is not a number"},
        /* The shorthand Go programs accept: the message says what to write. */
        {"LISTEN_ADDR", ":9808",
         "LISTEN_ADDR: ':9808' is not host:port: the host is empty (0.0.0.0:PORT"},
        {"LISTEN_ADDR", "::1:9808", "LISTEN_ADDR: '::1:9808' is not host:port: an IPv6"},
        {"USED_QUERY", "", "USED_QUERY: must not be empty"},
        /* Never a series label: every device query (FREE_QUERY=auto) would fail. */
        {"GPU_LABEL", "u-uid", "GPU_LABEL: 'u-uid' is not a Prometheus label name"},
        {"GPU_LABEL", "1gpu", "GPU_LABEL"},
        {"GPU_LABEL", "uuid\"}", "GPU_LABEL"},
        {"KUBE_TOKEN_FILE", "/nonexistent/token", "KUBE_TOKEN_FILE: cannot read"},
        {"KUBE_CA_FILE", "/nonexistent/ca.crt", "KUBE_CA_FILE: cannot read"},
        {"WEBHOOK_TOKEN_FILE", "/nonexistent/tok", "WEBHOOK_TOKEN_FILE: cannot read"},
        /* A directory passes access(R_OK) but is no token or CA bundle. */
        {"KUBE_TOKEN_FILE", "/tmp",
         "KUBE_TOKEN_FILE: cannot read '/tmp': Is a directory"},
        {"KUBE_CA_FILE", "/", "KUBE_CA_FILE: cannot read '/': Is a directory"},
        {"WEBHOOK_TOKEN_FILE", "/tmp",
         "WEBHOOK_TOKEN_FILE: cannot read '/tmp': Is a directory"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *env[] = {"WEBHOOK_TOKEN_FILE", token_path, cases[i].name,
                             cases[i].value, NULL};
        struct config c;
        char err[256] = "";
        /* A later duplicate wins in fake_getenv? No: first wins, so put the case first
         * when it overrides WEBHOOK_TOKEN_FILE. */
        if (strcmp(cases[i].name, "WEBHOOK_TOKEN_FILE") == 0) {
            env[0] = cases[i].name;
            env[1] = cases[i].value;
            env[2] = NULL;
        }
        int rc = load(&c, env, 0, NULL, err, sizeof(err));
        if (rc != -1 || strstr(err, cases[i].expect) != err)
            fail_msg("%s=%s: rc %d, err '%s'", cases[i].name, cases[i].value, rc, err);
    }
}

/* BUDGET_SOURCES and DRA_DRIVER: the default reads GPUMEM_RESOURCE alone; a bad or
 * repeated word stops start-up naming the setting. */
static void
test_budget_sources(void **state)
{
    static const struct {
        const char *name, *value, *expect;
    } cases[] = {
        {"BUDGET_SOURCES", "gpu",
         "BUDGET_SOURCES: 'gpu' is not a budget source (resource, hami, kai, dra)"},
        {"BUDGET_SOURCES", "hami,kai,hami", "BUDGET_SOURCES: 'hami' is listed twice"},
        {"BUDGET_SOURCES", "resource,,kai", "BUDGET_SOURCES: an empty word"},
        {"BUDGET_SOURCES", "", "BUDGET_SOURCES"},
        {"BUDGET_SOURCES", "Resource",
         "BUDGET_SOURCES: 'Resource' is not a budget source"},
        {"DRA_DRIVER", "GPU.nvidia.com",
         "DRA_DRIVER: 'GPU.nvidia.com' is not a driver name"},
        {"DRA_DRIVER", "gpu..nvidia.com", "DRA_DRIVER"},
        {"DRA_DRIVER", "-gpu.nvidia.com", "DRA_DRIVER"},
        {"DRA_DRIVER", "gpu-.nvidia.com", "DRA_DRIVER"},
        {"DRA_DRIVER", "gpu.-nvidia.com", "DRA_DRIVER"},
        {"DRA_DRIVER", "gpu.nvidia.com.", "DRA_DRIVER"},
        {"DRA_DRIVER", "gpu-", "DRA_DRIVER"},
        {"DRA_DRIVER", "", "DRA_DRIVER"},
    };
    const char *env[] = {"WEBHOOK_TOKEN_FILE", token_path, NULL, NULL, NULL};
    char *argv[] = {"--budget-sources", "kai,hami,dra,resource", "--dra-driver",
                    "gpu.example.com"};
    struct config c;
    char err[256];

    (void)state;
    assert_int_equal(load(&c, env, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(c.c_budget_sources.bo_count, 1);
    assert_int_equal(c.c_budget_sources.bo_src[0], BSRC_RESOURCE);
    assert_string_equal(c.c_dra_driver, "gpu.nvidia.com");
    config_free(&c);
    assert_int_equal(load(&c, env, 4, argv, err, sizeof(err)), 0);
    assert_int_equal(c.c_budget_sources.bo_count, 4);
    assert_int_equal(c.c_budget_sources.bo_src[0], BSRC_KAI);
    assert_int_equal(c.c_budget_sources.bo_src[3], BSRC_RESOURCE);
    assert_string_equal(c.c_dra_driver, "gpu.example.com");
    config_free(&c);
    /* digits anywhere, a dash inside */
    argv[3] = "gpu0-9.k8s.io";
    assert_int_equal(load(&c, env, 4, argv, err, sizeof(err)), 0);
    assert_string_equal(c.c_dra_driver, "gpu0-9.k8s.io");
    config_free(&c);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        env[2] = cases[i].name;
        env[3] = cases[i].value;
        err[0] = '\0';
        int rc = load(&c, env, 0, NULL, err, sizeof(err));
        if (rc != -1 || strstr(err, cases[i].expect) != err)
            fail_msg("%s=%s: rc %d, err '%s'", cases[i].name, cases[i].value, rc, err);
    }
}

/* Only serve needs the webhook token: check and advertise run without one. */
static void
test_serve_needs_a_token_file(void **state)
{
    const char *bearer[] = {"WEBHOOK_TOKEN_FILE", "", NULL};
    const char *none[] = {"WEBHOOK_TOKEN_FILE", "", "WEBHOOK_AUTH", "none", NULL};
    const char *with[] = {"WEBHOOK_TOKEN_FILE", token_path, NULL};
    struct config c;
    char err[256];

    assert_int_equal(load(&c, bearer, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), -1);
    assert_string_equal(err, "WEBHOOK_TOKEN_FILE: required when WEBHOOK_AUTH=bearer "
                             "(set a token file, or WEBHOOK_AUTH=none)");
    config_free(&c);
    assert_int_equal(load(&c, none, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), 0);
    config_free(&c);
    assert_int_equal(load(&c, with, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), 0);
    config_free(&c);
}

/* The Secret deploy/ ships holds a placeholder: serve refuses it by name, never
 * runs with a token anyone can read in the repository. */
static void
test_serve_refuses_the_placeholder_token(void **state)
{
    char path[] = "/tmp/gvw-test-placeholder-XXXXXX";
    int fd = mkstemp(path);
    const char *env[] = {"WEBHOOK_TOKEN_FILE", path, NULL};
    static const char tok[] = "PLACEHOLDER-replace-me-with-openssl-rand-hex-32\n";
    struct config c;
    char err[256];

    assert_true(fd >= 0);
    assert_int_equal(write(fd, tok, sizeof(tok) - 1), (ssize_t)(sizeof(tok) - 1));
    close(fd);
    assert_int_equal(load(&c, env, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "WEBHOOK_TOKEN_FILE: holds the placeholder token"));
    assert_non_null(strstr(err, "openssl rand -hex 32"));
    config_free(&c);
    unlink(path);
}

static void
test_bad_flag_value(void **state)
{
    const char *env[] = {"WEBHOOK_AUTH", "none", NULL};
    char *argv1[] = {"--floor-mib=lots"};
    char *argv2[] = {"--settle"};
    struct config c;
    char err[256];

    assert_int_equal(load(&c, env, 1, argv1, err, sizeof(err)), -1);
    assert_string_equal(err, "FLOOR_MIB: 'lots' is not a non-negative integer");
    assert_int_equal(load(&c, env, 1, argv2, err, sizeof(err)), -1);
    assert_string_equal(err, "SETTLE: --settle needs a value");
}

static void
test_kube_url_from_service_env(void **state)
{
    const char *env4[] = {"WEBHOOK_AUTH",
                          "none",
                          "KUBERNETES_SERVICE_HOST",
                          "10.0.0.1",
                          "KUBERNETES_SERVICE_PORT",
                          "443",
                          NULL};
    const char *env6[] = {"WEBHOOK_AUTH",
                          "none",
                          "KUBERNETES_SERVICE_HOST",
                          "fd00::1",
                          "KUBERNETES_SERVICE_PORT",
                          "6443",
                          NULL};
    const char *envx[] = {"WEBHOOK_AUTH",
                          "none",
                          "KUBERNETES_SERVICE_HOST",
                          "10.0.0.1",
                          "KUBE_API_URL",
                          "http://127.0.0.1:8001",
                          NULL};
    struct config c;
    char err[256];

    assert_int_equal(load(&c, env4, 0, NULL, err, sizeof(err)), 0);
    assert_string_equal(c.c_kube.ks_api_url, "https://10.0.0.1:443");
    config_free(&c);
    assert_int_equal(load(&c, env6, 0, NULL, err, sizeof(err)), 0);
    assert_string_equal(c.c_kube.ks_api_url, "https://[fd00::1]:6443");
    config_free(&c);
    assert_int_equal(load(&c, envx, 0, NULL, err, sizeof(err)), 0);
    assert_string_equal(c.c_kube.ks_api_url, "http://127.0.0.1:8001");
    config_free(&c);
}

/* LEADER_ELECTION=true needs an API server and Kubernetes names for the
 * replica, its namespace and the Lease; false (the default) checks none. */
static void
test_leader_election_settings(void **state)
{
    const char *off[] = {"WEBHOOK_AUTH", "none", "POD_NAME", "NOT A NAME", NULL};
    const char *no_api[] = {
        "WEBHOOK_AUTH",  "none", "LEADER_ELECTION", "true", "POD_NAME", "gvw-0",
        "POD_NAMESPACE", "ns",   "KUBE_API_URL",    "",     NULL};
    const char *ok[] = {"WEBHOOK_AUTH",
                        "none",
                        "LEADER_ELECTION",
                        "true",
                        "POD_NAME",
                        "gpu-vram-watchdog-0",
                        "POD_NAMESPACE",
                        "gpu-vram-watchdog",
                        "KUBE_API_URL",
                        "http://127.0.0.1:1",
                        NULL};
    struct {
        const char *k, *v, *want;
    } bad[] = {
        {"POD_NAME", "", "POD_NAME: '' is not a pod name"},
        {"POD_NAME", "Gvw_0", "POD_NAME: 'Gvw_0' is not a pod name"},
        {"POD_NAME", "-gvw", "POD_NAME: '-gvw' is not a pod name"},
        {"POD_NAMESPACE", "", "POD_NAMESPACE: '' is not a namespace"},
        {"POD_NAMESPACE", "a.b", "POD_NAMESPACE: 'a.b' is not a namespace"},
        {"LEASE_NAME", "Lease!", "LEASE_NAME: 'Lease!' is not a Kubernetes name"},
    };
    struct config c;
    char err[256];

    assert_int_equal(load(&c, off, 0, NULL, err, sizeof(err)), 0);
    assert_false(c.c_leader_election);
    assert_string_equal(c.c_lease_name, "gpu-vram-watchdog");
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), 0);
    config_free(&c);
    assert_int_equal(load(&c, no_api, 0, NULL, err, sizeof(err)), 0);
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), -1);
    assert_string_equal(err,
                        "LEADER_ELECTION: true needs an API server (KUBE_API_URL, or "
                        "run in a cluster)");
    config_free(&c);
    assert_int_equal(load(&c, ok, 0, NULL, err, sizeof(err)), 0);
    assert_true(c.c_leader_election);
    assert_string_equal(c.c_pod_name, "gpu-vram-watchdog-0");
    assert_int_equal(config_validate_serve(&c, err, sizeof(err)), 0);
    config_free(&c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        /* fake_getenv returns the first match: the bad value comes first. */
        const char *env[] = {bad[i].k,
                             bad[i].v,
                             "WEBHOOK_AUTH",
                             "none",
                             "LEADER_ELECTION",
                             "true",
                             "KUBE_API_URL",
                             "http://127.0.0.1:1",
                             "POD_NAME",
                             "gvw-0",
                             "POD_NAMESPACE",
                             "ns",
                             NULL};
        assert_int_equal(load(&c, env, 0, NULL, err, sizeof(err)), 0);
        assert_int_equal(config_validate_serve(&c, err, sizeof(err)), -1);
        if (strstr(err, bad[i].want) != err)
            fail_msg("%s=%s: got '%s'", bad[i].k, bad[i].v, err);
        config_free(&c);
    }
}

static void
test_help_lists_every_setting(void **state)
{
    static const char *const names[] = {"LISTEN_ADDR",
                                        "DRY_RUN",
                                        "FLOOR_MIB",
                                        "GPU_TOTAL_MIB",
                                        "GPUMEM_RESOURCE",
                                        "GPUMEM_CAPACITY_MIB",
                                        "GPU_NODE_SELECTOR",
                                        "ADVERTISE_INTERVAL",
                                        "PROMETHEUS_URL",
                                        "USED_QUERY",
                                        "FREE_QUERY",
                                        "POD_LABEL",
                                        "NAMESPACE_LABEL",
                                        "KUBE_API_URL",
                                        "KUBE_TOKEN_FILE",
                                        "KUBE_CA_FILE",
                                        "WEBHOOK_TOKEN_FILE",
                                        "WEBHOOK_AUTH",
                                        "AUDIT_DB",
                                        "AUDIT_RETENTION",
                                        "TRIGGER_ALERTS",
                                        "ALERT_NODE_LABEL",
                                        "ACTION",
                                        "MIN_RUNTIME",
                                        "SETTLE",
                                        "MAX_RECYCLES_PER_HOUR",
                                        "PROTECT_ANNOTATION",
                                        "EXCLUDE_NAMESPACES",
                                        "FALLBACK",
                                        "LOG_FORMAT",
                                        "LEADER_ELECTION",
                                        "LEASE_NAME",
                                        "POD_NAME",
                                        "POD_NAMESPACE",
                                        "--floor-mib",
                                        "--max-recycles-per-hour",
                                        "--webhook-token-file"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    config_print_help(f);
    fclose(f);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strstr(text, names[i]) == NULL)
            fail_msg("--help does not mention %s", names[i]);
    free(text);
}

/* The one loader shape both programs use: the rows, then the check; a row
 * that fails is said before any check, a check that fails frees every row. */
struct tiny {
    char *t_name;
    int64_t t_count;
    int t_checked;
};

static int
tiny_check(void *arg, char *err, size_t errlen)
{
    struct tiny *t = arg;

    t->t_checked = 1;
    if (t->t_count > 3) {
        snprintf(err, errlen, "TINY_COUNT: at most 3 for %s", t->t_name);
        return -1;
    }
    return 0;
}

static void
test_settings_table(void **state)
{
    static const struct setting rows[] = {
        {"TINY_NAME", "x", SK_NONEMPTY, offsetof(struct tiny, t_name), NULL, "a name",
         NULL, NULL},
        {"TINY_COUNT", "1", SK_INT, offsetof(struct tiny, t_count), NULL, "a count", NULL,
         NULL},
    };
    static const struct settings_table table = {rows, 2, tiny_check};
    char *ok[] = {"--tiny-name", "gpu", "other"}, *bad_row[] = {"--tiny-count=abc"},
         *bad_check[] = {"--tiny-name=gpu", "--tiny-count", "4"};
    struct tiny t;
    int rest[4], nrest;
    char err[256];

    (void)state;
    fake_env = NULL;
    memset(&t, 0x5a, sizeof(t)); /* the loader zeroes it first */
    assert_int_equal(settings_table_load(&table, &t, sizeof(t), 3, ok, fake_getenv, rest,
                                         &nrest, err, sizeof(err)),
                     0);
    assert_string_equal(t.t_name, "gpu");
    assert_int_equal(t.t_count, 1);
    assert_int_equal(t.t_checked, 1);
    assert_int_equal(nrest, 1);
    assert_string_equal(ok[rest[0]], "other");
    settings_table_free(&table, &t);
    assert_null(t.t_name);

    assert_int_equal(settings_table_load(&table, &t, sizeof(t), 1, bad_row, fake_getenv,
                                         rest, &nrest, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "TINY_COUNT: 'abc'"));
    assert_int_equal(t.t_checked, 0);

    /* Nothing stays allocated (ASan says so if the name leaked). */
    assert_int_equal(settings_table_load(&table, &t, sizeof(t), 3, bad_check, fake_getenv,
                                         rest, &nrest, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "TINY_COUNT: at most 3 for gpu");
    assert_null(t.t_name);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flag_wins_over_env),
        cmocka_unit_test(test_empty_string_is_empty_not_default),
        cmocka_unit_test(test_bad_values_name_the_setting),
        cmocka_unit_test(test_serve_needs_a_token_file),
        cmocka_unit_test(test_serve_refuses_the_placeholder_token),
        cmocka_unit_test(test_bad_flag_value),
        cmocka_unit_test(test_kube_url_from_service_env),
        cmocka_unit_test(test_leader_election_settings),
        cmocka_unit_test(test_help_lists_every_setting),
        cmocka_unit_test(test_budget_sources),
        cmocka_unit_test(test_settings_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
