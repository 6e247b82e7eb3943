/* suggest.h -- `budgets --suggest`: budgets from measured use, read-only */
#ifndef GVW_SUGGEST_H
#define GVW_SUGGEST_H

#include <stdint.h>

#include "config.h"

/* Exit codes (docs/guide.md "Budgets from measured use"); each failure prints one
 * line on stderr and nothing on stdout, except SG_EXIT_NO_CONTROLLER, which
 * prints the rest first. */
enum sg_exit {
    SG_EXIT_OK = 0,
    SG_EXIT_FAIL = 1,          /* the API server cannot be asked, out of memory */
    SG_EXIT_USAGE = 2,         /* a bad option or setting (--window, --headroom ...) */
    SG_EXIT_PROMETHEUS = 3,    /* Prometheus cannot be asked, refused the query, or
                                  answered something that is not a matrix */
    SG_EXIT_NO_DATA = 4,       /* no sample for any pod of any node in the window */
    SG_EXIT_BAD_SAMPLE = 5,    /* a sample is not a number of bytes (NaN, a string...) */
    SG_EXIT_NO_CONTROLLER = 6, /* a pod holding a seat or VRAM has no controller */
};

enum sg_format { SG_FORMAT_TABLE, SG_FORMAT_JSON, SG_FORMAT_PATCH };

struct sg_opts {
    const char *so_node;     /* borrowed; NULL = every GPU node */
    int64_t so_window_s;     /* default 7d */
    uint32_t so_headroom_bp; /* default 1000 (10%) */
    enum sg_format so_format;
};

/* The query a node's history is read with: USED_QUERY when it selects the
 * node ($node), else the exporter's per-node sum (without a node selector
 * every node would read every other node's pods). Static or cfg's. */
const char *sg_query(const struct config *cfg);

/* Runs it; returns an enum sg_exit. */
int suggest_main(const struct config *cfg, const struct sg_opts *o);

/* `budgets --suggest ...` as the CLI runs it: argv after "budgets", settings
 * flags included. Returns an enum sg_exit. */
int suggest_cmd(int argc, char **argv);

/* Whether argv (after "budgets") asks for --suggest. */
int suggest_wanted(int argc, char **argv);

#endif
