/* settings.c -- settings tables: environment variable, --flag that wins, parsing, help */
#include "settings.h"

#include "decimal.h"
#include "duration.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int
parse_int(const char *s, int64_t *out)
{
    return decimal_parse(s, INT64_MAX, out) == 0 ? 0 : -1;
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
/* Says what is wrong with a listen address, or NULL when it is host:port. */
static const char *
addr_problem(const char *s)
{
    const char *colon = strrchr(s, ':');
    int64_t port;

    if (colon == NULL)
        return "no ':port' (write host:port, e.g. 0.0.0.0:9808)";
    if (colon == s)
        return "the host is empty (0.0.0.0:PORT listens on every IPv4 address, "
               "[::]:PORT on every IPv6 one)";
    if ((s[0] == '[' && colon[-1] != ']') ||
        (s[0] != '[' && memchr(s, ':', (size_t)(colon - s)) != NULL))
        return "an IPv6 host needs brackets ([::1]:9808)";
    if (parse_int(colon + 1, &port) == -1 || port > 65535)
        return "the port is not a number from 0 to 65535";
    return NULL;
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
strlist_clear(struct strlist *l)
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

/* 0 if path is a file this process can open for reading, else -1 with errno
 * set: a directory passes access(R_OK) yet can never be read as a token or a
 * CA bundle, so it is refused here (EISDIR), not at the first API call. */
static int
readable_file(const char *path)
{
    struct stat sb;

    if (access(path, R_OK) == -1 || stat(path, &sb) == -1)
        return -1;
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        return -1;
    }
    return 0;
}

/* Stores value v (explicit = given by the user, not a default) into cfg. */
static int
apply(void *cfg, const struct setting *st, const char *v, int explicit, char *err,
      size_t errlen)
{
    char *base = (char *)cfg + st->s_offset;
    int64_t n;
    int b, idx;
    char words[128];

    switch (st->s_kind) {
    case SK_STRING:
    case SK_NONEMPTY:
    case SK_URL:
    case SK_ADDR:
    case SK_RESOURCE:
    case SK_FILE:
        if (st->s_kind == SK_NONEMPTY && *v == '\0')
            return seterr(err, errlen, "%s: must not be empty", st->s_name), -1;
        if (st->s_kind == SK_URL && *v != '\0' && !valid_url(v))
            return seterr(err, errlen, "%s: '%s' is not an http:// or https:// URL",
                          st->s_name, v),
                   -1;
        if (st->s_kind == SK_ADDR && addr_problem(v) != NULL)
            return seterr(err, errlen, "%s: '%s' is not host:port: %s", st->s_name, v,
                          addr_problem(v)),
                   -1;
        if (st->s_kind == SK_RESOURCE && !valid_resource(v))
            return seterr(err, errlen,
                          "%s: '%s' is not a valid extended resource name (domain/name)",
                          st->s_name, v),
                   -1;
        if (st->s_kind == SK_FILE && *v != '\0' && readable_file(v) == -1) {
            if (explicit)
                return seterr(err, errlen, "%s: cannot read '%s': %s", st->s_name, v,
                              strerror(errno)),
                       -1;
            v = ""; /* an in-cluster default that is absent outside a cluster */
        }
        free(*(char **)base);
        if ((*(char **)base = strdup(v)) == NULL)
            return seterr(err, errlen, "%s: out of memory", st->s_name), -1;
        return 0;
    case SK_BOOL:
        if (parse_bool(v, &b) == -1)
            return seterr(err, errlen, "%s: '%s' is not true or false", st->s_name, v),
                   -1;
        *(int *)base = b;
        return 0;
    case SK_INT:
        if (parse_int(v, &n) == -1)
            return seterr(err, errlen, "%s: '%s' is not a non-negative integer",
                          st->s_name, v),
                   -1;
        *(int64_t *)base = n;
        return 0;
    case SK_DURATION:
    case SK_DURATION_MS:
        if ((st->s_kind == SK_DURATION_MS ? duration_parse_ms(v, &n)
                                          : duration_parse_s(v, &n)) == -1)
            return seterr(err, errlen,
                          "%s: '%s' is not a duration (a number with ms, s, m, h or d)",
                          st->s_name, v),
                   -1;
        *(int64_t *)base = n;
        return 0;
    case SK_ENUM:
        if ((idx = enum_index(st, v)) < 0) {
            enum_list(st, words, sizeof(words));
            return seterr(err, errlen, "%s: '%s' is not one of: %s", st->s_name, v,
                          words),
                   -1;
        }
        *(int *)base = idx;
        return 0;
    case SK_LIST:
        strlist_clear((struct strlist *)base);
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
match_flag(const struct setting *tab, size_t n, int argc, char **argv, int *i,
           const char **value, char *err, size_t errlen, int *missing)
{
    const char *arg = argv[*i];
    char flag[64];

    *missing = 0;
    for (size_t k = 0; k < n; k++) {
        size_t flen;
        flag_name(tab[k].s_name, flag, sizeof(flag));
        flen = strlen(flag);
        if (strncmp(arg, flag, flen) != 0)
            continue;
        if (arg[flen] == '=') {
            *value = arg + flen + 1;
            return &tab[k];
        }
        if (arg[flen] != '\0')
            continue;
        if (*i + 1 >= argc) {
            seterr(err, errlen, "%s: %s needs a value", tab[k].s_name, flag);
            *missing = 1;
            return NULL;
        }
        *value = argv[++*i];
        return &tab[k];
    }
    return NULL;
}

int
settings_default_kube_url(settings_getenv_fn env, char **out)
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
settings_load(const struct setting *tab, size_t n, void *cfg, int argc, char **argv,
              settings_getenv_fn env, int *rest, int *nrest, char *err, size_t errlen)
{
    const char **from_flag = NULL;
    int missing;

    *nrest = 0;
    if (env == NULL)
        env = real_getenv;
    if ((from_flag = calloc(n + 1, sizeof(*from_flag))) == NULL) {
        seterr(err, errlen, "settings: out of memory");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        const char *value;
        const struct setting *st =
            match_flag(tab, n, argc, argv, &i, &value, err, errlen, &missing);
        if (missing)
            goto fail;
        if (st == NULL) {
            rest[(*nrest)++] = i;
            continue;
        }
        from_flag[st - tab] = value;
    }
    for (size_t k = 0; k < n; k++) {
        const struct setting *st = &tab[k];
        const char *v = from_flag[k];
        int explicit = 1;

        if (v == NULL)
            v = env(st->s_name);
        if (v == NULL) {
            explicit = 0;
            if (st->s_default == NULL) {
                char **slot = (char **)((char *)cfg + st->s_offset);
                if (st->s_compute == NULL || st->s_compute(env, slot) == -1) {
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
    free(from_flag);
    return 0;
fail:
    free(from_flag);
    settings_free(tab, n, cfg);
    return -1;
}

void
settings_free(const struct setting *tab, size_t n, void *cfg)
{
    for (size_t k = 0; k < n; k++) {
        char *base = (char *)cfg + tab[k].s_offset;
        switch (tab[k].s_kind) {
        case SK_STRING:
        case SK_NONEMPTY:
        case SK_URL:
        case SK_ADDR:
        case SK_RESOURCE:
        case SK_FILE:
            free(*(char **)base);
            *(char **)base = NULL;
            break;
        case SK_LIST:
            strlist_clear((struct strlist *)base);
            break;
        default:
            break;
        }
    }
}

int
settings_table_load(const struct settings_table *t, void *cfg, size_t cfg_size, int argc,
                    char **argv, settings_getenv_fn env, int *rest, int *nrest, char *err,
                    size_t errlen)
{
    memset(cfg, 0, cfg_size);
    if (settings_load(t->st_rows, t->st_count, cfg, argc, argv, env, rest, nrest, err,
                      errlen) == -1)
        return -1;
    if (t->st_check != NULL && t->st_check(cfg, err, errlen) == -1) {
        settings_table_free(t, cfg);
        return -1;
    }
    return 0;
}

void
settings_table_free(const struct settings_table *t, void *cfg)
{
    settings_free(t->st_rows, t->st_count, cfg);
}

static void
print_one(const struct setting *st, FILE *out)
{
    char flag[64];

    flag_name(st->s_name, flag, sizeof(flag));
    fprintf(out, "  %-22s %-24s default: %s\n  %-22s %s\n", st->s_name, flag,
            st->s_default == NULL
                ? (st->s_default_help ? st->s_default_help : "(computed)")
            : st->s_default[0] == '\0' ? "(empty)"
                                       : st->s_default,
            "", st->s_help);
}

void
settings_print_help(const struct setting *tab, size_t n, FILE *out)
{
    fprintf(out, "Settings (environment variable, or the flag, which wins):\n");
    for (size_t k = 0; k < n; k++)
        print_one(&tab[k], out);
}

static int
in_group(const char *const *names, const char *name)
{
    for (size_t i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

void
settings_print_groups(const struct setting *tab, size_t n,
                      const struct setting_group *groups, size_t ngroups,
                      const char *rest_title, FILE *out)
{
    fprintf(out, "Settings (environment variable, or the flag, which wins):\n");
    for (size_t g = 0; g < ngroups; g++) {
        fprintf(out, "%s%s:\n", g == 0 ? "" : "\n", groups[g].sg_title);
        /* in the group's own order: the most needed first */
        for (size_t i = 0; groups[g].sg_names[i] != NULL; i++)
            for (size_t k = 0; k < n; k++)
                if (strcmp(tab[k].s_name, groups[g].sg_names[i]) == 0)
                    print_one(&tab[k], out);
    }
    fprintf(out, "\n%s:\n", rest_title);
    for (size_t k = 0; k < n; k++) {
        size_t g = 0;
        while (g < ngroups && !in_group(groups[g].sg_names, tab[k].s_name))
            g++;
        if (g == ngroups)
            print_one(&tab[k], out);
    }
}
