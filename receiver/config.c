/* config.c -- every setting: environment variable, --flag override, validation */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum setting_kind {
    K_STRING,    /* any text, may be empty */
    K_NONEMPTY,  /* text that must not be empty */
    K_BOOL,
    K_INT,       /* non-negative integer */
    K_DURATION,  /* seconds, with s/m/h/d */
    K_DURATION_MS, /* stored in milliseconds */
    K_ENUM,
    K_LIST,
    K_URL,
    K_ADDR,
    K_RESOURCE,
    K_FILE,      /* a path that must be readable when set explicitly */
};

struct setting {
    const char *s_name;     /* environment name; the flag is derived from it */
    const char *s_default;  /* NULL = computed (see config_load) */
    enum setting_kind s_kind;
    size_t s_offset;        /* where in struct config */
    const char *const *s_enum; /* K_ENUM: NULL-terminated accepted values */
    const char *s_help;
};

static const char *const auth_words[] = {"bearer", "none", NULL};
static const char *const action_words[] = {"evict", "delete", NULL};
static const char *const fallback_words[] = {"none", "largest", NULL};
static const char *const logfmt_words[] = {"json", "text", NULL};

#define OFF(m) offsetof(struct config, m)
#define SA_TOKEN "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define SA_CA "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

static const struct setting settings[] = {
    {"LISTEN_ADDR", "0.0.0.0:9808", K_ADDR, OFF(c_listen_addr), NULL, "HTTP listener"},
    {"DRY_RUN", "true", K_BOOL, OFF(c_dry_run), NULL,
     "log and record what it would recycle, touch nothing"},
    {"FLOOR_MIB", "1536", K_INT, OFF(c_floor_mib), NULL,
     "act only while actual free VRAM is below this"},
    {"GPU_TOTAL_MIB", "15360", K_INT, OFF(c_gpu_total_mib), NULL,
     "physical framebuffer; free = total - sum(used), unless FREE_QUERY is set"},
    {"GPUMEM_RESOURCE", "viktorbarzin.me/gpumem", K_RESOURCE, OFF(c_gpumem_resource), NULL,
     "the extended resource that carries budgets (domain/name)"},
    {"GPUMEM_CAPACITY_MIB", "14000", K_INT, OFF(c_gpumem_capacity_mib), NULL,
     "what advertise puts on each GPU node"},
    {"GPU_NODE_SELECTOR", "nvidia.com/gpu.present=true", K_NONEMPTY,
     OFF(c_gpu_node_selector), NULL, "label selector for GPU nodes"},
    {"ADVERTISE_INTERVAL", "1h", K_DURATION, OFF(c_advertise_interval_s), NULL,
     "capacity re-assert period (0 = only at start-up)"},
    {"PROMETHEUS_URL", "http://prometheus:9090", K_URL, OFF(c_prometheus_url), NULL,
     "Prometheus HTTP API base"},
    {"USED_QUERY", "sum by (namespace, pod) (gpu_pod_memory_used_bytes)", K_NONEMPTY,
     OFF(c_used_query), NULL, "per-pod used bytes; $node is replaced by the node's name"},
    {"FREE_QUERY", "", K_STRING, OFF(c_free_query), NULL,
     "optional PromQL giving free MiB for $node directly"},
    {"POD_LABEL", "pod", K_NONEMPTY, OFF(c_pod_label), NULL,
     "result label that names the pod"},
    {"NAMESPACE_LABEL", "namespace", K_NONEMPTY, OFF(c_namespace_label), NULL,
     "result label that names the namespace"},
    {"KUBE_API_URL", NULL, K_URL, OFF(c_kube_api_url), NULL,
     "API server base (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)"},
    {"KUBE_TOKEN_FILE", SA_TOKEN, K_FILE, OFF(c_kube_token_file), NULL,
     "service-account token, re-read every minute"},
    {"KUBE_CA_FILE", SA_CA, K_FILE, OFF(c_kube_ca_file), NULL,
     "TLS trust for the API server"},
    {"WEBHOOK_TOKEN_FILE", "", K_FILE, OFF(c_webhook_token_file), NULL,
     "bearer token Alertmanager must send"},
    {"WEBHOOK_AUTH", "bearer", K_ENUM, OFF(c_webhook_auth), auth_words,
     "bearer or none; bearer needs WEBHOOK_TOKEN_FILE"},
    {"AUDIT_DB", "/var/lib/gpu-vram-watchdog/audit.db", K_NONEMPTY, OFF(c_audit_db), NULL,
     "SQLite audit file (created 0600, WAL)"},
    {"AUDIT_RETENTION", "90d", K_DURATION, OFF(c_audit_retention_s), NULL,
     "older rows are pruned daily (0 = keep forever)"},
    {"TRIGGER_ALERTS", "GPUVRAMLow", K_LIST, OFF(c_trigger_alerts), NULL,
     "alertnames that start a decision (comma list)"},
    {"ALERT_NODE_LABEL", "node", K_NONEMPTY, OFF(c_alert_node_label), NULL,
     "alert label naming the GPU node; absent = every GPU node"},
    {"ACTION", "evict", K_ENUM, OFF(c_action), action_words,
     "evict (policy/v1 Eviction, honours PDBs) or delete"},
    {"MIN_RUNTIME", "2m", K_DURATION, OFF(c_min_runtime_s), NULL,
     "pods running for less than this are not victims"},
    {"SETTLE", "60s", K_DURATION_MS, OFF(c_settle_ms), NULL,
     "after a recycle, wait this long for VRAM to show as freed"},
    {"MAX_RECYCLES_PER_HOUR", "6", K_INT, OFF(c_max_recycles_per_hour), NULL,
     "global brake over a sliding hour (0 = no limit)"},
    {"PROTECT_ANNOTATION", "gpu-vram-watchdog/protected", K_NONEMPTY,
     OFF(c_protect_annotation), NULL, "value \"true\" = never a victim"},
    {"EXCLUDE_NAMESPACES", "kube-system", K_LIST, OFF(c_exclude_namespaces), NULL,
     "comma list of namespaces that are never victims"},
    {"FALLBACK", "none", K_ENUM, OFF(c_fallback), fallback_words,
     "none, or largest: recycle the largest eligible holder when nobody is over budget"},
    {"GPU_LABEL", "uuid", K_STRING, OFF(c_gpu_label), NULL,
     "series label naming the GPU; when the used series carry it, decisions are per GPU"},
    {"ALERT_GPU_LABEL", "uuid", K_STRING, OFF(c_alert_gpu_label), NULL,
     "alert label naming the GPU; absent = every GPU of the node"},
    {"RELEASE_ANNOTATION", "gpu-vram-watchdog/release", K_NONEMPTY,
     OFF(c_release_annotation), NULL,
     "pod annotation PORT/PATH: ask the tenant to free VRAM before it is recycled"},
    {"RELEASE_WAIT", "20s", K_DURATION_MS, OFF(c_release_wait_ms), NULL,
     "how long a release may take to show as free VRAM (0 = never ask)"},
    {"EVENTS", "true", K_BOOL, OFF(c_events), NULL,
     "write a Kubernetes Event on the victim for every decision that names one"},
    {"LOG_FORMAT", "json", K_ENUM, OFF(c_log_text), logfmt_words,
     "json (one object a line) or text"},
    {"HTTP_CONNECT_TIMEOUT", "2s", K_DURATION_MS, OFF(c_http_connect_timeout_ms), NULL,
     "connect timeout for Prometheus and the API server"},
    {"HTTP_TIMEOUT", "10s", K_DURATION_MS, OFF(c_http_timeout_ms), NULL,
     "total timeout of one request to Prometheus or the API server"},
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int
config_parse_duration_ms(const char *s, int64_t *ms)
{
    char *end;
    long long n, mult = 1000;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    n = strtoll(s, &end, 10);
    if (errno != 0)
        return -1;
    if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (*end != '\0') {
        switch (*end) {
        case 's': mult = 1000; break;
        case 'm': mult = 60 * 1000; break;
        case 'h': mult = 3600 * 1000; break;
        case 'd': mult = 86400 * 1000LL; break;
        default: return -1;
        }
        if (end[1] != '\0')
            return -1;
    }
    if (n > LLONG_MAX / mult)
        return -1;
    *ms = n * mult;
    return 0;
}

/* Whole seconds; a value in ms that is not whole seconds rounds up, so a
 * positive duration never becomes 0 ("never"). */
int
config_parse_duration(const char *s, int64_t *seconds)
{
    int64_t ms;

    if (config_parse_duration_ms(s, &ms) == -1)
        return -1;
    *seconds = ms / 1000 + (ms % 1000 != 0);
    return 0;
}

static int
parse_int(const char *s, int64_t *out)
{
    char *end;
    long long n;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    n = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = n;
    return 0;
}

static int
parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

/* DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', alnum at both ends. */
static int
valid_dns_subdomain(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int alnum = islower(c) || isdigit(c);
        if (!alnum && c != '-' && c != '.')
            return 0;
        if ((i == 0 || i == len - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* Qualified-name part: [A-Za-z0-9] ends, [-_.A-Za-z0-9] inside, at most 63. */
static int
valid_name_part(const char *s)
{
    size_t len = strlen(s);

    if (len == 0 || len > 63)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int alnum = isalnum(c);
        if (!alnum && c != '-' && c != '_' && c != '.')
            return 0;
        if ((i == 0 || i == len - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* An extended resource name must be domain-prefixed (domain/name) and not in
 * the kubernetes.io namespace, which is reserved for native resources. */
static int
valid_resource(const char *s)
{
    const char *slash = strchr(s, '/');

    if (slash == NULL || strchr(slash + 1, '/') != NULL)
        return 0;
    if (!valid_dns_subdomain(s, (size_t)(slash - s)) || !valid_name_part(slash + 1))
        return 0;
    return strncmp(s, "kubernetes.io/", 14) != 0;
}

static int
valid_url(const char *s)
{
    const char *host;

    if (strncmp(s, "http://", 7) == 0)
        host = s + 7;
    else if (strncmp(s, "https://", 8) == 0)
        host = s + 8;
    else
        return 0;
    return *host != '\0' && *host != '/';
}

/* host:port or [v6]:port with a port in 1..65535 (0 allowed: tests pick). */
static int
valid_addr(const char *s)
{
    const char *colon = strrchr(s, ':');
    int64_t port;

    if (colon == NULL || colon == s)
        return 0;
    if (s[0] == '[' && colon[-1] != ']')
        return 0;
    if (parse_int(colon + 1, &port) == -1 || port > 65535)
        return 0;
    return 1;
}

static int
split_list(const char *s, struct strlist *out)
{
    const char *p = s;

    out->sl_items = NULL;
    out->sl_count = 0;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *start = p;
        char **grown;

        while (len > 0 && isspace((unsigned char)*start))
            start++, len--;
        while (len > 0 && isspace((unsigned char)start[len - 1]))
            len--;
        if (len > 0) {
            grown = realloc(out->sl_items, (out->sl_count + 1) * sizeof(*grown));
            if (grown == NULL)
                return -1;
            out->sl_items = grown;
            if ((grown[out->sl_count] = strndup(start, len)) == NULL)
                return -1;
            out->sl_count++;
        }
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return 0;
}

static void
strlist_free(struct strlist *l)
{
    for (size_t i = 0; i < l->sl_count; i++)
        free(l->sl_items[i]);
    free(l->sl_items);
    l->sl_items = NULL;
    l->sl_count = 0;
}

int
strlist_contains(const struct strlist *l, const char *name)
{
    for (size_t i = 0; i < l->sl_count; i++)
        if (strcmp(l->sl_items[i], name) == 0)
            return 1;
    return 0;
}

static int
enum_index(const struct setting *st, const char *v)
{
    for (int i = 0; st->s_enum[i] != NULL; i++)
        if (strcasecmp(st->s_enum[i], v) == 0)
            return i;
    return -1;
}

static void
enum_list(const struct setting *st, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; st->s_enum[i] != NULL && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", st->s_enum[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Stores value v (explicit = given by the user, not a default) into cfg. */
static int
apply(struct config *cfg, const struct setting *st, const char *v, int explicit,
      char *err, size_t errlen)
{
    char *base = (char *)cfg + st->s_offset;
    int64_t n;
    int b, idx;
    char words[128];

    switch (st->s_kind) {
    case K_STRING:
    case K_NONEMPTY:
    case K_URL:
    case K_ADDR:
    case K_RESOURCE:
    case K_FILE:
        if (st->s_kind == K_NONEMPTY && *v == '\0')
            return seterr(err, errlen, "%s: must not be empty", st->s_name), -1;
        if (st->s_kind == K_URL && *v != '\0' && !valid_url(v))
            return seterr(err, errlen, "%s: '%s' is not an http:// or https:// URL",
                          st->s_name, v), -1;
        if (st->s_kind == K_ADDR && !valid_addr(v))
            return seterr(err, errlen, "%s: '%s' is not host:port", st->s_name, v), -1;
        if (st->s_kind == K_RESOURCE && !valid_resource(v))
            return seterr(err, errlen,
                          "%s: '%s' is not a valid extended resource name (domain/name)",
                          st->s_name, v), -1;
        if (st->s_kind == K_FILE && *v != '\0' && access(v, R_OK) == -1) {
            if (explicit)
                return seterr(err, errlen, "%s: cannot read '%s': %s", st->s_name, v,
                              strerror(errno)), -1;
            v = ""; /* an in-cluster default that is absent outside a cluster */
        }
        free(*(char **)base);
        if ((*(char **)base = strdup(v)) == NULL)
            return seterr(err, errlen, "%s: out of memory", st->s_name), -1;
        return 0;
    case K_BOOL:
        if (parse_bool(v, &b) == -1)
            return seterr(err, errlen, "%s: '%s' is not true or false", st->s_name, v), -1;
        *(int *)base = b;
        return 0;
    case K_INT:
        if (parse_int(v, &n) == -1)
            return seterr(err, errlen, "%s: '%s' is not a non-negative integer",
                          st->s_name, v), -1;
        *(int64_t *)base = n;
        return 0;
    case K_DURATION:
    case K_DURATION_MS:
        if ((st->s_kind == K_DURATION_MS ? config_parse_duration_ms(v, &n)
                                         : config_parse_duration(v, &n)) == -1)
            return seterr(err, errlen,
                          "%s: '%s' is not a duration (a number with ms, s, m, h or d)",
                          st->s_name, v), -1;
        *(int64_t *)base = n;
        return 0;
    case K_ENUM:
        if ((idx = enum_index(st, v)) < 0) {
            enum_list(st, words, sizeof(words));
            return seterr(err, errlen, "%s: '%s' is not one of: %s", st->s_name, v,
                          words), -1;
        }
        *(int *)base = idx;
        return 0;
    case K_LIST:
        strlist_free((struct strlist *)base);
        if (split_list(v, (struct strlist *)base) == -1)
            return seterr(err, errlen, "%s: out of memory", st->s_name), -1;
        return 0;
    }
    return seterr(err, errlen, "%s: unknown kind", st->s_name), -1; /* can't happen */
}

/* "FLOOR_MIB" -> "--floor-mib". */
static void
flag_name(const char *env, char *buf, size_t len)
{
    size_t i = 0, j = 2;

    if (len < 3) {
        buf[0] = '\0';
        return;
    }
    buf[0] = buf[1] = '-';
    for (; env[i] != '\0' && j + 1 < len; i++, j++)
        buf[j] = env[i] == '_' ? '-' : (char)tolower((unsigned char)env[i]);
    buf[j] = '\0';
}

/* Matches argv[*i] against the settings' flags. Returns the setting and sets
 * *value (from "--x=v" or the next argument), NULL if not a setting flag. */
static const struct setting *
match_flag(int argc, char **argv, int *i, const char **value, char *err, size_t errlen,
           int *missing)
{
    const char *arg = argv[*i];
    char flag[64];

    *missing = 0;
    for (size_t k = 0; k < NSETTINGS; k++) {
        size_t flen;
        flag_name(settings[k].s_name, flag, sizeof(flag));
        flen = strlen(flag);
        if (strncmp(arg, flag, flen) != 0)
            continue;
        if (arg[flen] == '=') {
            *value = arg + flen + 1;
            return &settings[k];
        }
        if (arg[flen] != '\0')
            continue;
        if (*i + 1 >= argc) {
            seterr(err, errlen, "%s: %s needs a value", settings[k].s_name, flag);
            *missing = 1;
            return NULL;
        }
        *value = argv[++*i];
        return &settings[k];
    }
    return NULL;
}

/* The API server address from the in-cluster environment, or "". */
static int
kube_url_from_env(config_getenv_fn env, char **out)
{
    const char *host = env("KUBERNETES_SERVICE_HOST");
    const char *port = env("KUBERNETES_SERVICE_PORT");
    char buf[512];
    int v6;

    if (host == NULL || *host == '\0') {
        *out = strdup("");
        return *out ? 0 : -1;
    }
    if (port == NULL || *port == '\0')
        port = "443";
    v6 = strchr(host, ':') != NULL;
    snprintf(buf, sizeof(buf), "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "",
             port);
    *out = strdup(buf);
    return *out ? 0 : -1;
}

static const char *
real_getenv(const char *name)
{
    return getenv(name);
}

int
config_load(struct config *cfg, int argc, char **argv, config_getenv_fn env, int *rest,
            int *nrest, char *err, size_t errlen)
{
    const char *from_flag[NSETTINGS] = {0};
    int missing;

    memset(cfg, 0, sizeof(*cfg));
    *nrest = 0;
    if (env == NULL)
        env = real_getenv;
    for (int i = 0; i < argc; i++) {
        const char *value;
        const struct setting *st =
            match_flag(argc, argv, &i, &value, err, errlen, &missing);
        if (missing)
            goto fail;
        if (st == NULL) {
            rest[(*nrest)++] = i;
            continue;
        }
        from_flag[st - settings] = value;
    }
    for (size_t k = 0; k < NSETTINGS; k++) {
        const struct setting *st = &settings[k];
        const char *v = from_flag[k];
        int explicit = 1;

        if (v == NULL)
            v = env(st->s_name);
        if (v == NULL) {
            explicit = 0;
            if (st->s_default == NULL) { /* KUBE_API_URL */
                if (kube_url_from_env(env, (char **)((char *)cfg + st->s_offset)) == -1) {
                    seterr(err, errlen, "%s: out of memory", st->s_name);
                    goto fail;
                }
                continue;
            }
            v = st->s_default;
        }
        if (apply(cfg, st, v, explicit, err, errlen) == -1)
            goto fail;
    }
    if (cfg->c_prometheus_url[0] == '\0') {
        seterr(err, errlen, "PROMETHEUS_URL: must not be empty");
        goto fail;
    }
    if (cfg->c_gpu_total_mib == 0) {
        seterr(err, errlen, "GPU_TOTAL_MIB: must be greater than 0");
        goto fail;
    }
    return 0;
fail:
    config_free(cfg);
    return -1;
}

int
config_validate_serve(const struct config *cfg, char *err, size_t errlen)
{
    if (cfg->c_webhook_auth == WEBHOOK_AUTH_BEARER && cfg->c_webhook_token_file[0] == '\0') {
        seterr(err, errlen,
               "WEBHOOK_TOKEN_FILE: required when WEBHOOK_AUTH=bearer "
               "(set a token file, or WEBHOOK_AUTH=none)");
        return -1;
    }
    return 0;
}

void
config_free(struct config *cfg)
{
    for (size_t k = 0; k < NSETTINGS; k++) {
        char *base = (char *)cfg + settings[k].s_offset;
        switch (settings[k].s_kind) {
        case K_STRING:
        case K_NONEMPTY:
        case K_URL:
        case K_ADDR:
        case K_RESOURCE:
        case K_FILE:
            free(*(char **)base);
            *(char **)base = NULL;
            break;
        case K_LIST:
            strlist_free((struct strlist *)base);
            break;
        default:
            break;
        }
    }
}

void
config_print_help(FILE *out)
{
    char flag[64];

    fprintf(out, "Settings (environment variable, or the flag, which wins):\n");
    for (size_t k = 0; k < NSETTINGS; k++) {
        const struct setting *st = &settings[k];
        flag_name(st->s_name, flag, sizeof(flag));
        fprintf(out, "  %-22s %-24s default: %s\n  %-22s %s\n", st->s_name, flag,
                st->s_default == NULL ? "(in-cluster service address)"
                : st->s_default[0] == '\0' ? "(empty)" : st->s_default,
                "", st->s_help);
    }
}
