/* prom_json.h -- Prometheus /api/v1/query answers into usage structs */
#ifndef GVW_PROM_JSON_H
#define GVW_PROM_JSON_H

#include <stddef.h>

#include "usage.h"

/*
 * Parses an instant-query answer whose resultType is "vector". Sample values
 * are strings ("123", "NaN", "+Inf"). A body with "status":"error" fails with
 * its errorType and error in err. Labels named ns_label and pod_label fill
 * us_namespace and us_pod. Returns 0 and fills out (caller frees with
 * usage_reading_free(); an empty vector is 0 with ur_count 0), or -1 with a
 * reason in err and nothing allocated.
 */
int prom_json_parse_vector(const char *body, size_t len, const char *ns_label,
                           const char *pod_label, struct usage_reading *out, char *err,
                           size_t errlen);

/* The same, also reading the label gpu_label into us_gpu (NULL or "" = no
 * GPU label: us_gpu stays NULL, exactly prom_json_parse_vector()). A GPU
 * label that is not a string is refused like the pod labels. */
int prom_json_parse_vector_gpu(const char *body, size_t len, const char *ns_label,
                               const char *pod_label, const char *gpu_label,
                               struct usage_reading *out, char *err, size_t errlen);

/* Parses a vector answer expected to hold exactly one sample (FREE_QUERY) into
 * *value. 0, or -1 with a reason (error body, no sample, several samples). */
int prom_json_parse_scalar(const char *body, size_t len, double *value, char *err,
                           size_t errlen);

#endif
