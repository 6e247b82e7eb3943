/* config.h -- the daemon's settings table (env var, --flag that wins), on
 * common/util/settings */
#ifndef GVW_CONFIG_H
#define GVW_CONFIG_H

/* The alertname PREDICT=true decides on, listed in TRIGGER_ALERTS or not. */
#define PREDICT_ALERTNAME "GPUVRAMExhaustionPredicted"

/* FREE_QUERY's default: the device's own free memory (SPEC "Free VRAM"). */
#define FREE_QUERY_AUTO "auto"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "budget_src.h"
#include "kube_settings.h"
#include "settings.h"

enum webhook_auth { WEBHOOK_AUTH_BEARER, WEBHOOK_AUTH_NONE };
enum action_kind { ACTION_EVICT, ACTION_DELETE };
enum fallback_kind { FALLBACK_NONE, FALLBACK_LARGEST };

/* The loaded configuration. Every string is owned by the struct. */
/* MAX_RECYCLES_PER_HOUR's most: the hourly brake remembers this many recycles. */
#define CONFIG_MAX_RECYCLES_PER_HOUR 4096

struct config {
    char *c_listen_addr;            /* LISTEN_ADDR, "host:port" */
    int c_dry_run;                  /* DRY_RUN */
    int64_t c_floor_mib;            /* FLOOR_MIB */
    int64_t c_gpu_total_mib;        /* GPU_TOTAL_MIB */
    char *c_gpumem_resource;        /* GPUMEM_RESOURCE, validated domain/name */
    char *c_gpumem_capacity_raw;    /* GPUMEM_CAPACITY_MIB as given */
    int c_gpumem_capacity_auto;     /* GPUMEM_CAPACITY_MIB=auto */
    int64_t c_gpumem_capacity_mib;  /* GPUMEM_CAPACITY_MIB when a number */
    int64_t c_gpumem_reserve_mib;   /* GPUMEM_RESERVE_MIB (auto only) */
    char *c_gpu_node_selector;      /* GPU_NODE_SELECTOR */
    int64_t c_advertise_interval_s; /* ADVERTISE_INTERVAL, 0 = start-up only */
    char *c_prometheus_url;         /* PROMETHEUS_URL */
    char *c_used_query;             /* USED_QUERY ($node substituted later) */
    char *c_free_query;             /* FREE_QUERY: FREE_QUERY_AUTO = the device's own free
                                       per GPU; "" = derive from GPU_TOTAL_MIB; else PromQL */
    char *c_pod_label;              /* POD_LABEL */
    char *c_namespace_label;        /* NAMESPACE_LABEL */
    struct kube_settings
        c_kube; /* KUBE_API_URL, KUBE_*_FILE, HTTP_CONNECT_TIMEOUT, HTTP_TIMEOUT */
    char *c_webhook_token_file;          /* WEBHOOK_TOKEN_FILE */
    enum webhook_auth c_webhook_auth;    /* WEBHOOK_AUTH */
    char *c_audit_db;                    /* AUDIT_DB */
    int64_t c_audit_retention_s;         /* AUDIT_RETENTION */
    struct strlist c_trigger_alerts;     /* TRIGGER_ALERTS */
    char *c_alert_node_label;            /* ALERT_NODE_LABEL */
    enum action_kind c_action;           /* ACTION */
    int64_t c_min_runtime_s;             /* MIN_RUNTIME */
    int64_t c_settle_ms;                 /* SETTLE */
    int64_t c_max_recycles_per_hour;     /* MAX_RECYCLES_PER_HOUR, 0 = no limit */
    char *c_protect_annotation;          /* PROTECT_ANNOTATION */
    struct strlist c_exclude_namespaces; /* EXCLUDE_NAMESPACES */
    enum fallback_kind c_fallback;       /* FALLBACK */
    char *c_gpu_label;                   /* GPU_LABEL, "" = never GPU scope */
    char *c_alert_gpu_label;             /* ALERT_GPU_LABEL */
    char *c_release_annotation;          /* RELEASE_ANNOTATION */
    int64_t c_release_wait_ms;           /* RELEASE_WAIT, 0 = never ask */
    int c_events;                        /* EVENTS */
    int c_predict;                  /* PREDICT: decide on GPUVRAMExhaustionPredicted */
    int64_t c_predict_window_s;     /* PREDICT_WINDOW, > 0 */
    int64_t c_predict_horizon_s;    /* PREDICT_HORIZON, > 0 */
    char *c_predict_min_growth_raw; /* PREDICT_MIN_GROWTH as given */
    double c_predict_min_growth;    /* ... in MiB/s */
    int c_log_text;                 /* LOG_FORMAT=text */
    int64_t c_max_concurrent_decisions; /* MAX_CONCURRENT_DECISIONS, >= 1 */
    int64_t c_http_max_connections;     /* HTTP_MAX_CONNECTIONS */
    int64_t c_http_max_pending_mib;     /* HTTP_MAX_PENDING_MIB */
    int64_t c_http_header_timeout_ms;   /* HTTP_HEADER_TIMEOUT */
    int64_t c_http_body_timeout_ms;     /* HTTP_BODY_TIMEOUT */
    char *c_budget_sources_raw;         /* BUDGET_SOURCES as given */
    struct bsrc_order
        c_budget_sources;  /* ... parsed: where budgets come from, in order */
    char *c_dra_driver;    /* DRA_DRIVER: the driver whose consumedCapacity
                              memory is a budget */
    int c_leader_election; /* LEADER_ELECTION: one of several replicas */
    char *c_lease_name;    /* LEASE_NAME, in c_pod_namespace */
    char *c_pod_name;      /* POD_NAME: the Lease's holderIdentity (default: hostname) */
    char *c_pod_namespace; /* POD_NAMESPACE (default: the ServiceAccount's; "" = none) */
};

/*
 * Loads every setting from the environment (via getenv_fn, NULL = getenv),
 * then from --flags in argv[0..argc), which win. Validates everything,
 * including that files named explicitly are readable.
 *
 * Arguments that are not settings are left for the caller: their indexes are
 * stored in rest[] (at most argc entries), their count in *nrest. A flag that
 * looks like a setting but is unknown is NOT an error here: the subcommand
 * decides (it goes to rest).
 *
 * Returns 0, or -1 with one line naming the setting in err ("FLOOR_MIB: 'abc'
 * is not a non-negative integer"). On -1 nothing stays allocated.
 * The caller frees cfg with config_free().
 */
int config_load(struct config *cfg, int argc, char **argv, settings_getenv_fn getenv_fn,
                int *rest, int *nrest, char *err, size_t errlen);

/* What only `serve` needs: a webhook token when WEBHOOK_AUTH=bearer; with
 * LEADER_ELECTION=true an API server, a POD_NAME that is a pod name, a
 * POD_NAMESPACE and a LEASE_NAME that are Kubernetes names.
 * 0, or -1 with one line naming the setting. */
int config_validate_serve(const struct config *cfg, char *err, size_t errlen);

void config_free(struct config *cfg);

/* Prints every setting with its default and meaning (for --help). */
void config_print_help(FILE *out);

/*
 * GPUMEM_CAPACITY_MIB: "auto" (any case) sets *is_auto; else a non-negative
 * decimal integer into *mib. 0, or -1 for anything else (nothing set).
 */
int config_capacity_parse(const char *s, int *is_auto, int64_t *mib);

#endif
