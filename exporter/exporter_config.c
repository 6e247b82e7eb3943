/* exporter_config.c -- the exporter's settings table (env var, --flag that wins) */
#include "exporter_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(m) offsetof(struct exporter_config, m)

/* NODE_NAME has no default: unset reads as "", refused after loading. */
static int
unset(settings_getenv_fn env, char **out)
{
    *out = strdup("");
    return *out != NULL ? 0 : -1;
}

/* The exporter's own settings first: --help prints those alone (NOWN). */
static const struct setting settings[] = {
    {"EXPORTER_LISTEN_ADDR", "0.0.0.0:9809", SK_ADDR, OFF(ec_listen_addr), NULL,
     "exporter: HTTP listener for /metrics and /healthz", NULL, NULL},
    {"NODE_NAME", NULL, SK_NONEMPTY, OFF(ec_node_name), NULL,
     "exporter: this node's name (the downward API's spec.nodeName)", unset,
     "(required)"},
    {"NVML_LIBRARY", "libnvidia-ml.so.1", SK_NONEMPTY, OFF(ec_nvml_library), NULL,
     "exporter: NVML, loaded with dlopen", NULL, NULL},
    {"PROC_ROOT", "/proc", SK_NONEMPTY, OFF(ec_proc_root), NULL,
     "exporter: where PID/cgroup files are read (the host's /proc)", NULL, NULL},
    {"POLL_INTERVAL", "1s", SK_DURATION_MS, OFF(ec_poll_interval_ms), NULL,
     "exporter: how often NVML is read", NULL, NULL},
    {"EXPORTER_MAX_CONNECTIONS", "512", SK_INT, OFF(ec_max_connections), NULL,
     "exporter: open HTTP connections at most; beyond it the oldest unfinished one is "
     "closed",
     NULL, NULL},
    KUBE_SETTING_GPUMEM_RESOURCE(OFF(ec_gpumem_resource)),
    {"BUDGET_SOURCES", BSRC_DEFAULT, SK_NONEMPTY, OFF(ec_budget_sources_raw), NULL,
     "where budgets come from, in order: resource, hami, kai, dra", NULL, NULL},
    KUBE_SETTING_DRA_DRIVER(OFF(ec_dra_driver)),
    KUBE_SETTING_API_URL(OFF(ec_kube)),
    KUBE_SETTING_TOKEN_FILE(OFF(ec_kube)),
    KUBE_SETTING_CA_FILE(OFF(ec_kube)),
    KUBE_SETTING_LOG_FORMAT(OFF(ec_log_text)),
    KUBE_SETTING_HTTP_CONNECT_TIMEOUT(OFF(ec_kube)),
    KUBE_SETTING_HTTP_TIMEOUT(OFF(ec_kube)),
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))
#define NOWN 6

/* What no row says alone; the values parsed further. */
static int
check(void *arg, char *err, size_t errlen)
{
    struct exporter_config *cfg = arg;
    char why[160];

    if (cfg->ec_node_name[0] == '\0') {
        snprintf(err, errlen,
                 "NODE_NAME: required (this node's name; in a DaemonSet, from the "
                 "downward API's spec.nodeName)");
        return -1;
    }
    if (cfg->ec_max_connections < 1 || cfg->ec_max_connections > 1000000) {
        snprintf(err, errlen, "EXPORTER_MAX_CONNECTIONS: must be between 1 and 1000000");
        return -1;
    }
    if (bsrc_order_parse(cfg->ec_budget_sources_raw, &cfg->ec_budget_sources, why,
                         sizeof(why)) == -1) {
        snprintf(err, errlen, "BUDGET_SOURCES: %s", why);
        return -1;
    }
    if (bsrc_driver_check(cfg->ec_dra_driver, err, errlen) == -1)
        return -1;
    if (cfg->ec_poll_interval_ms <= 0) {
        snprintf(err, errlen, "POLL_INTERVAL: must be greater than 0");
        return -1;
    }
    return 0;
}

static const struct settings_table table = {settings, NSETTINGS, check};

int
exporter_config_load(struct exporter_config *cfg, int argc, char **argv,
                     settings_getenv_fn env, int *rest, int *nrest, char *err,
                     size_t errlen)
{
    return settings_table_load(&table, cfg, sizeof(*cfg), argc, argv, env, rest, nrest,
                               err, errlen);
}

void
exporter_config_free(struct exporter_config *cfg)
{
    settings_table_free(&table, cfg);
}

void
exporter_config_print_help(FILE *out)
{
    fprintf(out,
            "\nexporter: serve's GPUMEM_RESOURCE, BUDGET_SOURCES, DRA_DRIVER, KUBE_*, "
            "LOG_FORMAT and HTTP_* settings (gpu-vram-watchdog --help), and its own:\n");
    settings_print_help(settings, NOWN, out);
}
