/* prom_matrix.h -- a Prometheus range-vector answer ("matrix") read sample by sample (no
 * I/O) */
#ifndef GVW_PROM_MATRIX_H
#define GVW_PROM_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "predict.h"

/* What went wrong, so a command can give each its own exit code. */
enum prom_matrix_rc {
    PM_OK = 0,
    PM_BAD_ANSWER = -1,   /* not JSON, not a matrix, a series without the names
                             asked for, a time off the query's steps */
    PM_BAD_SAMPLE = -2,   /* a value that is not a quoted number (or, with
                             mr_bytes_only, not a finite number >= 0) */
    PM_ERROR_STATUS = -3, /* "status":"error": Prometheus refused the query */
    PM_NOMEM = -4,
};

/* A series' labels as read: NULL when absent, empty or not asked for.
 * Borrowed, valid for the callback's call. */
struct prom_matrix_labels {
    const char *ml_namespace;
    const char *ml_pod;
    const char *ml_gpu;
};

/* Each series once its labels are known, before its samples. */
typedef int (*prom_matrix_series_fn)(const struct prom_matrix_labels *l, void *arg);
/* Each sample: time (unix seconds), step index, value. */
typedef int (*prom_matrix_sample_fn)(const struct prom_matrix_labels *l, double t,
                                     size_t idx, double v, void *arg);

/* How to read one answer, and where its samples go. */
struct prom_matrix_reader {
    const char *mr_ns_label, *mr_pod_label, *mr_gpu_label; /* NULL or "": not read */
    int mr_names_required; /* 1: a series without both names is a bad answer */
    int mr_bytes_only;     /* 1: a value must be finite and >= 0 (PM_BAD_SAMPLE);
                              0: "NaN", "+Inf", "-1" are given as such */
    /* A query_range's grid: each time must be mr_start + k x mr_step, k <
     * mr_points, and k is given as idx. mr_points 0: any time (idx 0).
     * On a grid each step of a series is given once: a time at or before one
     * already given for the series (Prometheus sends a series in time order,
     * so that is a repeat), and a series whose whole label set (every label,
     * any order, escapes decoded) is an earlier one's, add only steps past
     * what was given. Memory: ~56 bytes a series for the call. */
    int64_t mr_start, mr_step;
    size_t mr_points;
    prom_matrix_series_fn mr_series; /* optional */
    prom_matrix_sample_fn mr_sample;
    void *mr_arg; /* both callbacks return 0, or -1 out of memory (the read stops) */
};

/*
 * Reads body (len bytes) in one pass with the jscan pull reader; never builds
 * the matrix in memory. A series' labels may come before or after its
 * values. Label values are Kubernetes-name-like (at most 253 bytes, no
 * escapes). Returns PM_OK with *series counted, or an error with one line in
 * err (a PM_BAD_SAMPLE names the series, the time and the value; a
 * PM_ERROR_STATUS is "errorType: error"). Samples seen before an error were
 * already given: the caller discards them.
 */
enum prom_matrix_rc prom_matrix_read(const char *body, size_t len,
                                     const struct prom_matrix_reader *r, size_t *series,
                                     char *err, size_t errlen);

/* A whole answer collected per series, for a reader that needs every sample
 * of a series together (the growth fit): compact arrays, not a DOM. */
struct prom_mseries {
    char *ms_namespace;                /* owned; NULL if absent */
    char *ms_pod;                      /* owned; NULL if absent */
    char *ms_gpu;                      /* owned; NULL if absent/not asked */
    struct predict_sample *ms_samples; /* owned, in the order sent */
    size_t ms_count, ms_cap;
};

struct prom_matrix {
    struct prom_mseries *pm_series; /* owned array */
    size_t pm_count, pm_cap;
};

/*
 * prom_matrix_read() with any times, names optional and values as sent
 * ("NaN", "+Inf" kept: the caller judges them), into out. 0 and out filled
 * (free with prom_matrix_free(); an empty result is 0 with pm_count 0), or -1
 * with the reason in err and nothing allocated.
 */
int prom_matrix_parse(const char *body, size_t len, const char *ns_label,
                      const char *pod_label, const char *gpu_label,
                      struct prom_matrix *out, char *err, size_t errlen);

/* Frees every series; NULL is a no-op. Leaves m empty. */
void prom_matrix_free(struct prom_matrix *m);

#endif
