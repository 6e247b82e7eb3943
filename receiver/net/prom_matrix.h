/* prom_matrix.h -- a Prometheus range-vector answer ("matrix") into series of samples */
#ifndef GVW_PROM_MATRIX_H
#define GVW_PROM_MATRIX_H

#include <stddef.h>

#include "predict.h"

/* One series of a matrix answer. */
struct prom_mseries {
    char *ms_namespace;               /* owned; NAMESPACE_LABEL's value, NULL if absent */
    char *ms_pod;                     /* owned; POD_LABEL's value, NULL if absent */
    char *ms_gpu;                     /* owned; GPU_LABEL's value, NULL if absent/not asked */
    struct predict_sample *ms_samples; /* owned, in the order sent */
    size_t ms_count;
};

struct prom_matrix {
    struct prom_mseries *pm_series; /* owned array */
    size_t pm_count;
};

/*
 * Parses an instant query's answer whose resultType is "matrix" (a range
 * vector, e.g. a subquery): each series' labels ns_label, pod_label and
 * gpu_label (NULL or "" = not read) and its values [[t, "v"], ...] ("NaN",
 * "+Inf" kept as such). A "status":"error" body fails with its errorType and
 * error. 0 and out filled (free with prom_matrix_free(); an empty result is
 * 0 with pm_count 0), or -1 with the reason in err and nothing allocated.
 */
int prom_matrix_parse(const char *body, size_t len, const char *ns_label,
                      const char *pod_label, const char *gpu_label, struct prom_matrix *out,
                      char *err, size_t errlen);

/* Frees every series; NULL is a no-op. Leaves m empty. */
void prom_matrix_free(struct prom_matrix *m);

#endif
