/* prom.h -- Prometheus instant queries, non-blocking; every failure is "telemetry
 * unavailable" */
#ifndef GVW_PROM_H
#define GVW_PROM_H

#include <stddef.h>

#include "prom_matrix.h"
#include "usage.h"

struct event_base;
struct prom;

struct prom_opts {
    const char *po_url;     /* borrowed (copied): PROMETHEUS_URL, http(s)://host[:port] */
    const char *po_ca_file; /* borrowed (copied): PEM trust for https; NULL = system */
    long po_connect_timeout_ms; /* 0 = 2 s */
    long po_timeout_ms;         /* 0 = 10 s */
    size_t po_body_cap;         /* 0 = 8 MiB */
};

/* One answer. Valid only during the callback, except what is taken. */
struct prom_answer {
    int pa_ok;            /* 1: pa_usage / pa_value hold the answer. 0: telemetry
                             unavailable, whatever the cause */
    int pa_cancelled;     /* prom_free() ran with the query in flight (pa_ok = 0) */
    const char *pa_error; /* when !pa_ok, one line: "prometheus: HTTP 503: ...",
                             "prometheus: bad_data: parse error ...", curl's reason */
    struct usage_reading pa_usage; /* prom_query_usage on success, never empty. The
                              callback may take it (copy the struct, zero pa_usage);
                              what is left is freed after the callback. */
    double pa_value;               /* prom_query_scalar on success */
    struct prom_matrix pa_matrix;  /* prom_query_matrix on success (may be empty); the
                              callback may take it as pa_usage */
    long pa_elapsed_ms;
};

typedef void (*prom_done_fn)(struct prom_answer *a, void *arg);

/* Makes a client on base (borrowed, must outlive it). Returns it (free with
 * prom_free()) or NULL with a reason in err (URL not http(s), no memory). */
struct prom *prom_new(struct event_base *base, const struct prom_opts *o, char *err,
                      size_t errlen);

/* Frees the client; queries in flight end with pa_cancelled = 1, their
 * callbacks running before prom_free returns. NULL is a no-op. Never call it
 * from inside one of its callbacks. */
void prom_free(struct prom *p);

/*
 * GET {url}/api/v1/query?query=<promql>, the answer read with
 * prom_json_parse_vector(ns_label, pod_label). An empty vector is
 * "telemetry unavailable" too (SPEC: never act on a reading of nothing).
 * Returns 0 and later runs cb once from the loop, or -1 (logged) and never
 * runs cb. Arguments are borrowed and copied.
 */
int prom_query_usage(struct prom *p, const char *promql, const char *ns_label,
                     const char *pod_label, prom_done_fn cb, void *arg);

/* The same, also reading gpu_label into each series' us_gpu (NULL or "" =
 * exactly prom_query_usage). */
int prom_query_usage_gpu(struct prom *p, const char *promql, const char *ns_label,
                         const char *pod_label, const char *gpu_label, prom_done_fn cb,
                         void *arg);

/* The same, but no series at all is an answer (an empty reading), not an
 * error: a re-read after a recycle or a release, where the one pod that held
 * VRAM may be gone (gather_start_reread). */
int prom_query_usage_any(struct prom *p, const char *promql, const char *ns_label,
                         const char *pod_label, const char *gpu_label, prom_done_fn cb,
                         void *arg);

/*
 * FREE_QUERY=auto's device query (device_promql()): the answer in pa_usage with
 * __name__ read as the namespace, gvw_ts as the pod and gpu_label ("" =
 * "uuid") as the GPU, for device_from_series(). No series is an answer here
 * (the node has no device series), not a failure.
 */
int prom_query_device(struct prom *p, const char *promql, const char *gpu_label,
                      prom_done_fn cb, void *arg);

/* The same for a query giving one number (FREE_QUERY), read with
 * prom_json_parse_scalar into pa_value. */
int prom_query_scalar(struct prom *p, const char *promql, prom_done_fn cb, void *arg);

/* A query whose answer is a range vector (a subquery: the predictive
 * trigger's growth), read with prom_matrix_parse() into pa_matrix. No series
 * is an answer here, not a failure. */
int prom_query_matrix(struct prom *p, const char *promql, const char *ns_label,
                      const char *pod_label, const char *gpu_label, prom_done_fn cb,
                      void *arg);

/*
 * Replaces every "$node" in query with node escaped for a PromQL double-quoted
 * string (\ -> \\, " -> \"). A node with a control byte (newline...) is
 * refused: no Kubernetes name has one. Returns an owned string (free()), or
 * NULL with a reason in err.
 */
char *prom_substitute_node(const char *query, const char *node, char *err, size_t errlen);

/* The same for every "$gpu" (GPU scope: FREE_QUERY per GPU). */
char *prom_substitute_gpu(const char *query, const char *gpu, char *err, size_t errlen);

#endif
