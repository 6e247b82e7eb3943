/* exporter_config.h -- the exporter's settings table (env var, --flag that wins) */
#ifndef GVW_EXPORTER_CONFIG_H
#define GVW_EXPORTER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "budget_src.h"
#include "kube_settings.h"
#include "settings.h"

/* The loaded configuration. Every string is owned by the struct. */
struct exporter_config {
    char *ec_listen_addr;                /* EXPORTER_LISTEN_ADDR, host:port */
    char *ec_node_name;                  /* NODE_NAME, required */
    char *ec_nvml_library;               /* NVML_LIBRARY: dlopen name or path */
    char *ec_proc_root;                  /* PROC_ROOT */
    int64_t ec_poll_interval_ms;         /* POLL_INTERVAL, > 0 */
    int64_t ec_max_connections;          /* EXPORTER_MAX_CONNECTIONS, >= 1 */
    char *ec_gpumem_resource;            /* GPUMEM_RESOURCE: whose budgets are exported */
    char *ec_budget_sources_raw;         /* BUDGET_SOURCES as given */
    struct bsrc_order ec_budget_sources; /* BUDGET_SOURCES, parsed */
    char *ec_dra_driver; /* DRA_DRIVER: whose claims' memory is a budget (with dra) */
    struct kube_settings
        ec_kube;     /* KUBE_API_URL, KUBE_*_FILE, HTTP_CONNECT_TIMEOUT, HTTP_TIMEOUT */
    int ec_log_text; /* LOG_FORMAT=text */
};

/*
 * Loads the exporter's settings (env via getenv_fn, NULL = getenv; --flags in
 * argv[0..argc) win). Arguments that are not settings are stored as indexes
 * in rest[] (room for argc), their count in *nrest. Returns 0, or -1 with one
 * line naming the setting in err ("NODE_NAME: must not be empty"); on -1
 * nothing stays allocated. Free with exporter_config_free().
 */
int exporter_config_load(struct exporter_config *cfg, int argc, char **argv,
                         settings_getenv_fn getenv_fn, int *rest, int *nrest, char *err,
                         size_t errlen);

void exporter_config_free(struct exporter_config *cfg);

/* Prints the exporter's own settings for --help; the ones it shares with
 * serve (GPUMEM_RESOURCE, KUBE_*, LOG_FORMAT, HTTP_*) are printed once, by serve's table.
 */
void exporter_config_print_help(FILE *out);

#endif
