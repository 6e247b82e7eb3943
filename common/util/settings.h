/* settings.h -- settings tables: environment variable, --flag that wins, parsing, help */
#ifndef GVW_SETTINGS_H
#define GVW_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Each program describes its settings in a table of struct setting, one row
 * per environment variable, each naming where in the program's own config
 * struct the parsed value goes. The flag is derived from the name
 * (FLOOR_MIB = --floor-mib); a flag wins over the environment.
 */

enum setting_kind {
    SK_STRING,      /* char *: any text, may be empty */
    SK_NONEMPTY,    /* char *: text that must not be empty */
    SK_BOOL,        /* int: true/false/1/0/yes/no/on/off, any case */
    SK_INT,         /* int64_t: non-negative integer */
    SK_DURATION,    /* int64_t: seconds, with ms/s/m/h/d (ms rounds up) */
    SK_DURATION_MS, /* int64_t: milliseconds */
    SK_ENUM,        /* int: index into s_enum, any case */
    SK_LIST,        /* struct strlist: comma list, items trimmed, empty ones dropped */
    SK_URL,         /* char *: "" or an http:// or https:// URL */
    SK_ADDR,        /* char *: host:port or [v6]:port */
    SK_RESOURCE,    /* char *: a Kubernetes extended resource name, domain/name */
    SK_FILE,        /* char *: a path that must be readable when set explicitly; an
                       unreadable default (in-cluster files) becomes "" */
};

/* A comma-separated setting, split. Empty string = zero items. */
struct strlist {
    char **sl_items; /* owned */
    size_t sl_count;
};

/* Reads a variable of the environment; tests pass their own. NULL = unset. */
typedef const char *(*settings_getenv_fn)(const char *name);

/* Computes a string default when the setting is unset: 0 with an owned
 * string in *out, or -1 (out of memory). */
typedef int (*settings_default_fn)(settings_getenv_fn env, char **out);

struct setting {
    const char *s_name;    /* environment name; the flag is derived from it */
    const char *s_default; /* NULL = computed by s_compute */
    enum setting_kind s_kind;
    size_t s_offset;               /* where in the program's config struct */
    const char *const *s_enum;     /* SK_ENUM: NULL-terminated accepted values */
    const char *s_help;            /* one line for --help */
    settings_default_fn s_compute; /* with s_default NULL (string kinds only) */
    const char *s_default_help;    /* with s_default NULL: shown as the default */
};

/*
 * Loads every setting of tab[0..n) into cfg (the program's config struct,
 * zeroed by the caller) from the environment (env, NULL = getenv), then from --flags
 * in argv[0..argc), which win. Arguments that are not setting flags are left
 * for the caller: their indexes go to rest[] (room for argc), their count to
 * *nrest.
 *
 * Returns 0, or -1 with one line naming the setting in err ("FLOOR_MIB: 'abc'
 * is not a non-negative integer"); on -1 nothing stays allocated. The caller
 * frees cfg with settings_free().
 */
int settings_load(const struct setting *tab, size_t n, void *cfg, int argc, char **argv,
                  settings_getenv_fn env, int *rest, int *nrest, char *err,
                  size_t errlen);

/* Frees what settings_load allocated in cfg (strings, lists); safe twice. */
void settings_free(const struct setting *tab, size_t n, void *cfg);

/* What a program checks once every row is read: what no row says alone (a
 * required value, a range, settings together), and the values parsed
 * further. 0, or -1 with one line naming the setting in err. */
typedef int (*settings_check_fn)(void *cfg, char *err, size_t errlen);

/* A program's settings: its rows, and its check (NULL = none). Both programs
 * (serve and the CLIs: receiver/config; the exporter) have one, and their
 * load, free and --help are these three calls. */
struct settings_table {
    const struct setting *st_rows;
    size_t st_count;
    settings_check_fn st_check;
};

/*
 * settings_load() over t into cfg (cfg_size bytes, zeroed here first), then
 * t's check. 0, or -1 with one line naming the setting in err; on -1 nothing
 * stays allocated. The caller frees cfg with settings_table_free().
 */
int settings_table_load(const struct settings_table *t, void *cfg, size_t cfg_size,
                        int argc, char **argv, settings_getenv_fn env, int *rest,
                        int *nrest, char *err, size_t errlen);

/* settings_free() over t's rows. */
void settings_table_free(const struct settings_table *t, void *cfg);

/* Prints every setting with its flag, default and meaning (for --help). */
void settings_print_help(const struct setting *tab, size_t n, FILE *out);

/* A titled group of settings for --help, named in the order to print them. */
struct setting_group {
    const char *sg_title;
    const char *const *sg_names; /* NULL-terminated */
};

/* --help in groups: each group's settings under its title, then every
 * setting no group names under rest_title, in the table's order. */
void settings_print_groups(const struct setting *tab, size_t n,
                           const struct setting_group *groups, size_t ngroups,
                           const char *rest_title, FILE *out);

/* s_compute for KUBE_API_URL: https://$KUBERNETES_SERVICE_HOST:$..._PORT (port
 * 443 when unset, IPv6 in brackets), or "" outside a cluster. */
int settings_default_kube_url(settings_getenv_fn env, char **out);

/* 1 if name is among the list's items. */
int strlist_contains(const struct strlist *l, const char *name);

#endif
