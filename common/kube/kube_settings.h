/* kube_settings.h -- the settings serve and the exporter share (KUBE_*, HTTP_*,
 * LOG_FORMAT, GPUMEM_RESOURCE, DRA_DRIVER) */
#ifndef GVW_KUBE_SETTINGS_H
#define GVW_KUBE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "budget_src.h"
#include "settings.h"

struct kube_opts; /* kubec.h */

/* The API server and HTTP settings, one member of each program's config
 * struct. Strings are owned by that struct (settings_free()). */
struct kube_settings {
    char *ks_api_url;    /* KUBE_API_URL or from KUBERNETES_SERVICE_*; "" = none */
    char *ks_token_file; /* KUBE_TOKEN_FILE; "" when the default is absent */
    char *ks_ca_file;    /* KUBE_CA_FILE; "" when the default is absent */
    int64_t
        ks_http_connect_timeout_ms; /* HTTP_CONNECT_TIMEOUT (Prometheus too, in serve) */
    int64_t ks_http_timeout_ms;     /* HTTP_TIMEOUT (Prometheus too, in serve) */
};

/* LOG_FORMAT's words: index 1 (text) sets the int the row names. */
extern const char *const kube_settings_log_words[];

/*
 * The shared rows, each written once here and placed by each program in its
 * own table where its --help wants it. ks is the offset of the program's
 * struct kube_settings; off that of its own member. The help lines are
 * serve's: the exporter prints only its own rows.
 */
#define KS_OFF(ks, m) ((ks) + offsetof(struct kube_settings, m))
#define KUBE_SETTING_API_URL(ks)                                                                    \
    {                                                                                               \
        "KUBE_API_URL", NULL, SK_URL, KS_OFF(ks, ks_api_url), NULL,                                 \
            "API server base (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)", \
            settings_default_kube_url, "(in-cluster service address)"                               \
    }
#define KUBE_SETTING_TOKEN_FILE(ks)                                                      \
    {                                                                                    \
        "KUBE_TOKEN_FILE", "/var/run/secrets/kubernetes.io/serviceaccount/token",        \
            SK_FILE, KS_OFF(ks, ks_token_file), NULL,                                    \
            "service-account token, re-read every minute", NULL, NULL                    \
    }
#define KUBE_SETTING_CA_FILE(ks)                                                         \
    {                                                                                    \
        "KUBE_CA_FILE", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", SK_FILE, \
            KS_OFF(ks, ks_ca_file), NULL, "TLS trust for the API server", NULL, NULL     \
    }
#define KUBE_SETTING_HTTP_CONNECT_TIMEOUT(ks)                                            \
    {                                                                                    \
        "HTTP_CONNECT_TIMEOUT", "2s", SK_DURATION_MS,                                    \
            KS_OFF(ks, ks_http_connect_timeout_ms), NULL,                                \
            "connect timeout for Prometheus and the API server", NULL, NULL              \
    }
#define KUBE_SETTING_HTTP_TIMEOUT(ks)                                                    \
    {                                                                                    \
        "HTTP_TIMEOUT", "10s", SK_DURATION_MS, KS_OFF(ks, ks_http_timeout_ms), NULL,     \
            "total timeout of one request to Prometheus or the API server", NULL, NULL   \
    }
/* off: an int, 1 for LOG_FORMAT=text. */
#define KUBE_SETTING_LOG_FORMAT(off)                                                     \
    {                                                                                    \
        "LOG_FORMAT", "json", SK_ENUM, (off), kube_settings_log_words,                   \
            "json (one object a line) or text", NULL, NULL                               \
    }
/* off: a char *, the validated domain/name. */
#define KUBE_SETTING_GPUMEM_RESOURCE(off)                                                \
    {                                                                                    \
        "GPUMEM_RESOURCE", "viktorbarzin.me/gpumem", SK_RESOURCE, (off), NULL,           \
            "the extended resource that carries budgets (domain/name)", NULL, NULL       \
    }

/* off: a char *; checked with bsrc_driver_check() by each program's check. */
#define KUBE_SETTING_DRA_DRIVER(off)                                                     \
    {                                                                                    \
        "DRA_DRIVER", BSRC_DRA_DRIVER_DEFAULT, SK_NONEMPTY, (off), NULL,                 \
            "with dra: the driver whose devices' consumedCapacity memory is a budget",   \
            NULL, NULL                                                                   \
    }

/* Fills ko for kubec_new() from ks: strings borrowed from ks, the rest zero
 * (kubec's defaults). */
void kube_settings_opts(const struct kube_settings *ks, struct kube_opts *ko);

#endif
