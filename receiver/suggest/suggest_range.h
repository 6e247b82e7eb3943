/* suggest_range.h -- a Prometheus query_range answer (a matrix) read sample by sample (no I/O) */
#ifndef GVW_SUGGEST_RANGE_H
#define GVW_SUGGEST_RANGE_H

#include <stddef.h>
#include <stdint.h>

/* What went wrong, so the command can give each its own exit code. */
enum sg_range_rc {
    SG_RANGE_OK = 0,
    SG_RANGE_BAD_ANSWER = -1, /* not JSON, not a matrix, a series without labels,
                                 a timestamp off the query's steps */
    SG_RANGE_BAD_SAMPLE = -2, /* a value that is not a finite number >= 0
                                 ("NaN", "+Inf", "-1", "abc", a JSON number) */
    SG_RANGE_ERROR_STATUS = -3, /* "status":"error": Prometheus refused the query */
    SG_RANGE_NOMEM = -4,
};

/* The query the answer is for: its first evaluation time, step and count. */
struct sg_range_query {
    int64_t rq_start; /* unix seconds */
    int64_t rq_step;  /* seconds, > 0 */
    size_t rq_points;
    const char *rq_ns_label, *rq_pod_label; /* borrowed: NAMESPACE_LABEL, POD_LABEL */
};

/* Receives each sample: its series' namespace and pod (borrowed, valid for
 * the call), the step index (0 .. rq_points - 1) and the value in bytes
 * (finite, >= 0). Returns 0, or -1 out of memory (the parse stops). */
typedef int (*sg_sample_fn)(void *arg, const char *ns, const char *pod, size_t idx,
                            double bytes);

/*
 * Reads body (len bytes) in one pass with the jscan pull reader; never builds
 * the matrix in memory. The series' labels may come before or after its
 * values. Returns SG_RANGE_OK with *series set, or an error with one line in
 * err (for SG_RANGE_BAD_SAMPLE naming the pod, the time and the value). Samples
 * seen before an error were already given to fn: the caller discards them.
 */
enum sg_range_rc sg_range_parse(const char *body, size_t len, const struct sg_range_query *q,
                                sg_sample_fn fn, void *arg, size_t *series, char *err,
                                size_t errlen);

#endif
