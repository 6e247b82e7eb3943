/* config.c -- the daemon's settings table and its cross-setting checks */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "decimal.h"
#include "device.h"
#include "predict.h"

static const char *const auth_words[] = {"bearer", "none", NULL};
static const char *const action_words[] = {"evict", "delete", NULL};
static const char *const fallback_words[] = {"none", "largest", NULL};

#define OFF(m) offsetof(struct config, m)

/* BUDGET_SOURCES into its order, DRA_DRIVER a DNS subdomain (as the API
 * validates a driver's name). 0, or -1 with one line naming the setting. */
static int
budget_sources_check(struct config *cfg, char *err, size_t errlen)
{
    char why[160];

    if (bsrc_order_parse(cfg->c_budget_sources_raw, &cfg->c_budget_sources, why,
                         sizeof(why)) == -1) {
        snprintf(err, errlen, "BUDGET_SOURCES: %s", why);
        return -1;
    }
    return bsrc_driver_check(cfg->c_dra_driver, err, errlen);
}

/* Where a pod finds its own namespace (the downward API sets POD_NAMESPACE too). */
#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* POD_NAME's default: the hostname, which is the pod's name in a cluster. */
static int
default_pod_name(settings_getenv_fn env, char **out)
{
    char host[256] = "";

    (void)env;
    if (gethostname(host, sizeof(host) - 1) == -1)
        host[0] = '\0';
    *out = strdup(host);
    return *out ? 0 : -1;
}

/* POD_NAMESPACE's default: the ServiceAccount's namespace file; "" outside a pod. */
static int
default_pod_namespace(settings_getenv_fn env, char **out)
{
    char ns[128] = "";
    FILE *f = fopen(SA_NAMESPACE_FILE, "r");
    size_t n = 0;

    (void)env;
    if (f != NULL) {
        n = fread(ns, 1, sizeof(ns) - 1, f);
        fclose(f);
    }
    ns[n] = '\0';
    ns[strcspn(ns, " \t\r\n")] = '\0';
    *out = strdup(ns);
    return *out ? 0 : -1;
}

static const struct setting settings[] = {
    {"LISTEN_ADDR", "0.0.0.0:9808", SK_ADDR, OFF(c_listen_addr), NULL, "HTTP listener",
     NULL, NULL},
    {"DRY_RUN", "true", SK_BOOL, OFF(c_dry_run), NULL,
     "log and record what it would recycle, touch nothing", NULL, NULL},
    {"FLOOR_MIB", "1536", SK_INT, OFF(c_floor_mib), NULL,
     "act only while actual free VRAM is below this", NULL, NULL},
    {"GPU_TOTAL_MIB", "15360", SK_INT, OFF(c_gpu_total_mib), NULL,
     "framebuffer of a GPU whose telemetry reports no device total; only then free = total - sum(used)",
     NULL, NULL},
    KUBE_SETTING_GPUMEM_RESOURCE(OFF(c_gpumem_resource)),
    {"GPUMEM_CAPACITY_MIB", "auto", SK_NONEMPTY, OFF(c_gpumem_capacity_raw), NULL,
     "what advertise puts on each GPU node: auto (per node, sum over its GPUs of size - "
     "GPUMEM_RESERVE_MIB) or a number of MiB for every node",
     NULL, NULL},
    {"GPUMEM_RESERVE_MIB", "2048", SK_INT, OFF(c_gpumem_reserve_mib), NULL,
     "with GPUMEM_CAPACITY_MIB=auto: MiB per GPU kept out of the seats (>= FLOOR_MIB + "
     "the driver's reserve)",
     NULL, NULL},
    {"GPU_NODE_SELECTOR", "nvidia.com/gpu.present=true", SK_NONEMPTY,
     OFF(c_gpu_node_selector), NULL, "label selector for GPU nodes", NULL, NULL},
    {"ADVERTISE_INTERVAL", "1h", SK_DURATION, OFF(c_advertise_interval_s), NULL,
     "capacity re-assert period (0 = only at start-up)", NULL, NULL},
    {"PROMETHEUS_URL", "http://prometheus:9090", SK_URL, OFF(c_prometheus_url), NULL,
     "Prometheus HTTP API base", NULL, NULL},
    /* The contract's default: one GPU node, any exporter. deploy/ sets the
     * shipped exporter's per-node, per-GPU query. */
    {"USED_QUERY", "sum by (namespace, pod) (gpu_pod_memory_used_bytes)", SK_NONEMPTY,
     OFF(c_used_query), NULL,
     "per-pod used bytes; $node is replaced by the node's name (deploy/ sets the "
     "shipped exporter's per-node, per-GPU query)",
     NULL, NULL},
    {"FREE_QUERY", FREE_QUERY_AUTO, SK_STRING, OFF(c_free_query), NULL,
     "auto: the device's own free memory per GPU (gpu_memory_free_bytes); empty: "
     "GPU_TOTAL_MIB - sum(used); else PromQL giving free MiB for $node (and $gpu)",
     NULL, NULL},
    {"POD_LABEL", "pod", SK_NONEMPTY, OFF(c_pod_label), NULL,
     "result label that names the pod", NULL, NULL},
    {"NAMESPACE_LABEL", "namespace", SK_NONEMPTY, OFF(c_namespace_label), NULL,
     "result label that names the namespace", NULL, NULL},
    KUBE_SETTING_API_URL(OFF(c_kube)),
    KUBE_SETTING_TOKEN_FILE(OFF(c_kube)),
    KUBE_SETTING_CA_FILE(OFF(c_kube)),
    {"WEBHOOK_TOKEN_FILE", "", SK_FILE, OFF(c_webhook_token_file), NULL,
     "bearer token Alertmanager must send", NULL, NULL},
    {"WEBHOOK_AUTH", "bearer", SK_ENUM, OFF(c_webhook_auth), auth_words,
     "bearer or none; bearer needs WEBHOOK_TOKEN_FILE", NULL, NULL},
    {"AUDIT_DB", "/var/lib/gpu-vram-watchdog/audit.db", SK_NONEMPTY, OFF(c_audit_db),
     NULL, "SQLite audit file (created 0600, WAL)", NULL, NULL},
    {"AUDIT_RETENTION", "90d", SK_DURATION, OFF(c_audit_retention_s), NULL,
     "older rows are pruned daily (0 = keep forever)", NULL, NULL},
    {"TRIGGER_ALERTS", "GPUVRAMLow", SK_LIST, OFF(c_trigger_alerts), NULL,
     "alertnames that start a decision (comma list)", NULL, NULL},
    {"ALERT_NODE_LABEL", "node", SK_STRING, OFF(c_alert_node_label), NULL,
     "alert label naming the GPU node; absent (or empty) = every GPU node", NULL, NULL},
    {"ACTION", "evict", SK_ENUM, OFF(c_action), action_words,
     "evict (policy/v1 Eviction, honours PDBs) or delete", NULL, NULL},
    {"MIN_RUNTIME", "2m", SK_DURATION, OFF(c_min_runtime_s), NULL,
     "pods running for less than this are not victims", NULL, NULL},
    {"SETTLE", "60s", SK_DURATION_MS, OFF(c_settle_ms), NULL,
     "after a recycle, wait this long for VRAM to show as freed", NULL, NULL},
    {"MAX_RECYCLES_PER_HOUR", "6", SK_INT, OFF(c_max_recycles_per_hour), NULL,
     "global brake over a sliding hour (0 = no limit)", NULL, NULL},
    {"PROTECT_ANNOTATION", "gpu-vram-watchdog/protected", SK_STRING,
     OFF(c_protect_annotation), NULL, "value \"true\" = never a victim (empty: none)",
     NULL, NULL},
    {"EXCLUDE_NAMESPACES", "kube-system", SK_LIST, OFF(c_exclude_namespaces), NULL,
     "comma list of namespaces that are never victims", NULL, NULL},
    {"FALLBACK", "none", SK_ENUM, OFF(c_fallback), fallback_words,
     "none, or largest: recycle the largest eligible holder when nobody is over budget",
     NULL, NULL},
    {"GPU_LABEL", "uuid", SK_STRING, OFF(c_gpu_label), NULL,
     "series label naming the GPU; when the used series carry it, decisions are per GPU",
     NULL, NULL},
    {"ALERT_GPU_LABEL", "uuid", SK_STRING, OFF(c_alert_gpu_label), NULL,
     "alert label naming the GPU; absent = every GPU of the node", NULL, NULL},
    {"RELEASE_ANNOTATION", "gpu-vram-watchdog/release", SK_STRING,
     OFF(c_release_annotation), NULL,
     "pod annotation PORT/PATH: ask the tenant to free VRAM before it is recycled (empty: never)",
     NULL, NULL},
    {"RELEASE_WAIT", "20s", SK_DURATION_MS, OFF(c_release_wait_ms), NULL,
     "how long a release may take to show as free VRAM (0 = never ask)", NULL, NULL},
    {"EVENTS", "true", SK_BOOL, OFF(c_events), NULL,
     "write a Kubernetes Event on the victim for every decision that names one", NULL,
     NULL},
    {"PREDICT", "false", SK_BOOL, OFF(c_predict), NULL,
     "decide on GPUVRAMExhaustionPredicted (false: it is only recorded)", NULL, NULL},
    {"PREDICT_WINDOW", "2m", SK_DURATION, OFF(c_predict_window_s), NULL,
     "how far back a pod's growth is measured (least squares over its last two quarters)",
     NULL, NULL},
    {"PREDICT_HORIZON", "2m", SK_DURATION, OFF(c_predict_horizon_s), NULL,
     "act when free VRAM is projected below the floor this far ahead", NULL, NULL},
    {"PREDICT_MIN_GROWTH", "5MiB/s", SK_NONEMPTY, OFF(c_predict_min_growth_raw), NULL,
     "a predicted victim grows at least this fast (KiB/s, MiB/s, GiB/s; bare = MiB/s)",
     NULL, NULL},
    KUBE_SETTING_LOG_FORMAT(OFF(c_log_text)),
    {"MAX_CONCURRENT_DECISIONS", "16", SK_INT, OFF(c_max_concurrent_decisions), NULL,
     "decisions in flight at once (at least 1); the rest queue in order", NULL, NULL},
    KUBE_SETTING_HTTP_CONNECT_TIMEOUT(OFF(c_kube)),
    KUBE_SETTING_HTTP_TIMEOUT(OFF(c_kube)),
    {"HTTP_MAX_CONNECTIONS", "1024", SK_INT, OFF(c_http_max_connections), NULL,
     "serve: connections open at once; beyond, the oldest unfinished request's is dropped",
     NULL, NULL},
    {"HTTP_MAX_PENDING_MIB", "16", SK_INT, OFF(c_http_max_pending_mib), NULL,
     "serve: MiB held for unfinished requests; beyond, a new request gets 503", NULL,
     NULL},
    {"HTTP_HEADER_TIMEOUT", "10s", SK_DURATION_MS, OFF(c_http_header_timeout_ms), NULL,
     "serve: a request's headers must be complete this long after its first byte", NULL,
     NULL},
    {"HTTP_BODY_TIMEOUT", "30s", SK_DURATION_MS, OFF(c_http_body_timeout_ms), NULL,
     "serve: a request's body must be complete this long after its first byte", NULL,
     NULL},
    {"LEADER_ELECTION", "false", SK_BOOL, OFF(c_leader_election), NULL,
     "serve: true = one of several replicas behind a Lease; only the leader decides",
     NULL, NULL},
    {"LEASE_NAME", "gpu-vram-watchdog", SK_NONEMPTY, OFF(c_lease_name), NULL,
     "the Lease's name, in POD_NAMESPACE", NULL, NULL},
    {"POD_NAME", NULL, SK_STRING, OFF(c_pod_name), NULL,
     "this replica's identity: the Lease's holderIdentity (downward API)",
     default_pod_name, "(the hostname)"},
    {"POD_NAMESPACE", NULL, SK_STRING, OFF(c_pod_namespace), NULL,
     "the Lease's namespace (downward API)", default_pod_namespace,
     "(the ServiceAccount's namespace)"},
    /* Where budgets come from (SPEC "Where budgets come from"). */
    {"BUDGET_SOURCES", BSRC_DEFAULT, SK_NONEMPTY, OFF(c_budget_sources_raw), NULL,
     "where budgets come from, in order: resource, hami, kai, dra (comma list; a pod's "
     "budget is the first it declares)",
     NULL, NULL},
    KUBE_SETTING_DRA_DRIVER(OFF(c_dra_driver)),
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

int
config_capacity_parse(const char *s, int *is_auto, int64_t *mib)
{
    int64_t v = 0;

    if (s == NULL || s[0] == '\0')
        return -1;
    if (strcasecmp(s, "auto") == 0) {
        *is_auto = 1;
        return 0;
    }
    if (decimal_parse(s, INT64_MAX, &v) != 0)
        return -1;
    *is_auto = 0;
    *mib = v;
    return 0;
}

/* What no row says alone; the values parsed further. */
static int
check(void *arg, char *err, size_t errlen)
{
    struct config *cfg = arg;

    if (cfg->c_prometheus_url[0] == '\0') {
        snprintf(err, errlen, "PROMETHEUS_URL: must not be empty");
        return -1;
    }
    if (cfg->c_max_recycles_per_hour > CONFIG_MAX_RECYCLES_PER_HOUR) {
        /* The brake remembers that many recycles an hour; more would be no brake. */
        snprintf(err, errlen,
                 "MAX_RECYCLES_PER_HOUR: at most %d (0 = no limit), not %lld",
                 CONFIG_MAX_RECYCLES_PER_HOUR, (long long)cfg->c_max_recycles_per_hour);
        return -1;
    }
    if (config_capacity_parse(cfg->c_gpumem_capacity_raw, &cfg->c_gpumem_capacity_auto,
                              &cfg->c_gpumem_capacity_mib) == -1) {
        snprintf(err, errlen,
                 "GPUMEM_CAPACITY_MIB: '%s' is neither auto nor a non-negative integer",
                 cfg->c_gpumem_capacity_raw);
        return -1;
    }
    if (cfg->c_max_concurrent_decisions == 0) {
        snprintf(err, errlen, "MAX_CONCURRENT_DECISIONS: must be at least 1");
        return -1;
    }
    if (cfg->c_http_max_connections == 0 || cfg->c_http_max_connections > 1000000) {
        snprintf(err, errlen, "HTTP_MAX_CONNECTIONS: must be between 1 and 1000000");
        return -1;
    }
    if (cfg->c_http_max_pending_mib == 0 || cfg->c_http_max_pending_mib > 1048576) {
        snprintf(err, errlen, "HTTP_MAX_PENDING_MIB: must be between 1 and 1048576");
        return -1;
    }
    if (cfg->c_http_header_timeout_ms == 0) {
        snprintf(err, errlen, "HTTP_HEADER_TIMEOUT: must be greater than 0");
        return -1;
    }
    if (cfg->c_http_body_timeout_ms < cfg->c_http_header_timeout_ms) {
        snprintf(err, errlen, "HTTP_BODY_TIMEOUT: must be at least HTTP_HEADER_TIMEOUT");
        return -1;
    }
    if (predict_parse_rate(cfg->c_predict_min_growth_raw, &cfg->c_predict_min_growth) ==
        -1) {
        snprintf(err, errlen,
                 "PREDICT_MIN_GROWTH: '%s' is not a rate (e.g. 5MiB/s, 512KiB/s, 1GiB/s)",
                 cfg->c_predict_min_growth_raw);
        return -1;
    }
    if (cfg->c_predict_window_s == 0 || cfg->c_predict_horizon_s == 0) {
        snprintf(err, errlen, "%s: must be greater than 0",
                 cfg->c_predict_window_s == 0 ? "PREDICT_WINDOW" : "PREDICT_HORIZON");
        return -1;
    }
    /* A series label (empty: GPU scope off); the device query names it. */
    if (cfg->c_gpu_label[0] != '\0' && !device_label_name_ok(cfg->c_gpu_label)) {
        snprintf(err, errlen, "GPU_LABEL: '%.64s' is not a Prometheus label name",
                 cfg->c_gpu_label);
        return -1;
    }
    if (cfg->c_gpu_total_mib == 0) {
        snprintf(err, errlen, "GPU_TOTAL_MIB: must be greater than 0");
        return -1;
    }
    return budget_sources_check(cfg, err, errlen);
}

static const struct settings_table table = {settings, NSETTINGS, check};

int
config_load(struct config *cfg, int argc, char **argv, settings_getenv_fn env, int *rest,
            int *nrest, char *err, size_t errlen)
{
    return settings_table_load(&table, cfg, sizeof(*cfg), argc, argv, env, rest, nrest,
                               err, errlen);
}

/* A DNS-1123 subdomain of at most max bytes (dots too when dots is set). */
void
config_free(struct config *cfg)
{
    settings_table_free(&table, cfg);
}

/* What a deployment must set (the shipped manifests do), then what operators
 * commonly tune; --help lists them first so the rest reads as optional. */
static const char *const every_deployment[] = {"PROMETHEUS_URL", "WEBHOOK_TOKEN_FILE",
                                               NULL};
static const char *const commonly_tuned[] = {"DRY_RUN",
                                             "FLOOR_MIB",
                                             "ACTION",
                                             "MIN_RUNTIME",
                                             "MAX_RECYCLES_PER_HOUR",
                                             "EXCLUDE_NAMESPACES",
                                             "PROTECT_ANNOTATION",
                                             "GPUMEM_CAPACITY_MIB",
                                             "GPUMEM_RESERVE_MIB",
                                             "USED_QUERY",
                                             "BUDGET_SOURCES",
                                             "LEADER_ELECTION",
                                             "AUDIT_DB",
                                             "LOG_FORMAT",
                                             NULL};
static const struct setting_group groups[] = {
    {"Every deployment sets", every_deployment},
    {"Commonly tuned", commonly_tuned},
};

void
config_print_help(FILE *out)
{
    settings_print_groups(settings, NSETTINGS, groups, sizeof(groups) / sizeof(groups[0]),
                          "The rest (the defaults suit most clusters)", out);
}
