/* audit_args.h -- the `audit` command line: words, options and --since times */
#ifndef GVW_AUDIT_ARGS_H
#define GVW_AUDIT_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "store.h"

#define AUDIT_PROG "gpu-vram-watchdog audit" /* how error lines begin */
#define AUDIT_DEFAULT_DB "/var/lib/gpu-vram-watchdog/audit.db"
#define AUDIT_DEFAULT_LIMIT 100
#define AUDIT_MAX_SOURCES 16 /* --db and --merge together, for one merged listing */

enum audit_command {
    AUDIT_LIST,   /* no word: decisions */
    AUDIT_SHOW,   /* show ID */
    AUDIT_ALERTS, /* alerts */
    AUDIT_STATS,  /* stats */
};

/* What the command line asks for. Strings are borrowed from argv or the
 * environment. */
struct audit_args {
    enum audit_command aa_cmd;
    int64_t aa_id;     /* show's decision id */
    const char *aa_db; /* --db, else $AUDIT_DB, else the default */
    /* HA: more databases (a second --db and on) and JSON listings (--merge;
     * "-" = standard input) of other replicas, merged with aa_db into one
     * listing of decisions (audit_merge.h). */
    const char *aa_more_dbs[AUDIT_MAX_SOURCES];
    size_t aa_nmore_dbs;
    const char *aa_merge[AUDIT_MAX_SOURCES];
    size_t aa_nmerge;
    struct store_filter aa_filter; /* --since, --node, --namespace, --result, --limit */
    int aa_json;                   /* --format json */
    int aa_help;                   /* --help or -h: print usage, nothing else */
};

/*
 * Parses argv (argv[0] is "audit"). env_db is $AUDIT_DB or NULL; now_ms is
 * the clock --since durations count back from. Options a command cannot use
 * are refused, not ignored. Returns 0, or AUDIT_EXIT_USAGE after one line on
 * stderr.
 */
int audit_parse_args(struct audit_args *a, int argc, char **argv, const char *env_db,
                     int64_t now_ms);

/* The --help text. */
void audit_print_usage(FILE *out);

#endif
