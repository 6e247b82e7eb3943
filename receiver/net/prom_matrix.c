/* prom_matrix.c -- a Prometheus range-vector answer ("matrix") into series of samples */
#include "prom_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void
prom_matrix_free(struct prom_matrix *m)
{
    size_t i;

    if (m == NULL)
        return;
    for (i = 0; i < m->pm_count; i++) {
        free(m->pm_series[i].ms_namespace);
        free(m->pm_series[i].ms_pod);
        free(m->pm_series[i].ms_gpu);
        free(m->pm_series[i].ms_samples);
    }
    free(m->pm_series);
    m->pm_series = NULL;
    m->pm_count = 0;
}

/* A label's value copied into *out (NULL when absent); -1 when it is not a
 * string or out of memory (why says which). */
static int
label(json_t *metric, const char *name, char **out, const char **why)
{
    json_t *v;

    *out = NULL;
    if (name == NULL || name[0] == '\0' || (v = json_object_get(metric, name)) == NULL)
        return 0;
    if (!json_is_string(v)) {
        *why = "a label value is not a string";
        return -1;
    }
    if ((*out = strdup(json_string_value(v))) == NULL) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

/* [t, "v"] into s; -1 with why when it is not that shape. */
static int
sample(json_t *pair, struct predict_sample *s, const char **why)
{
    json_t *t = json_array_get(pair, 0), *v = json_array_get(pair, 1);
    const char *txt;
    char *end;

    if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_number(t) ||
        !json_is_string(v)) {
        *why = "a value is not [time, \"number\"]";
        return -1;
    }
    txt = json_string_value(v);
    s->ps_t = json_number_value(t);
    s->ps_bytes = strtod(txt, &end);
    if (end == txt || *end != '\0') {
        *why = "a sample value is not a number";
        return -1;
    }
    return 0;
}

static int
series(json_t *item, const char *ns_label, const char *pod_label, const char *gpu_label,
       struct prom_mseries *ms, const char **why)
{
    json_t *metric = json_object_get(item, "metric"), *values = json_object_get(item, "values");
    size_t i;

    if (!json_is_object(metric) || !json_is_array(values)) {
        *why = "a series lacks metric or values";
        return -1;
    }
    if (label(metric, ns_label, &ms->ms_namespace, why) == -1 ||
        label(metric, pod_label, &ms->ms_pod, why) == -1 ||
        label(metric, gpu_label, &ms->ms_gpu, why) == -1)
        return -1;
    if (json_array_size(values) == 0)
        return 0;
    if ((ms->ms_samples = calloc(json_array_size(values), sizeof(*ms->ms_samples))) == NULL) {
        *why = "out of memory";
        return -1;
    }
    for (i = 0; i < json_array_size(values); i++) {
        if (sample(json_array_get(values, i), &ms->ms_samples[i], why) == -1)
            return -1;
        ms->ms_count++;
    }
    return 0;
}

int
prom_matrix_parse(const char *body, size_t len, const char *ns_label,
                  const char *pod_label, const char *gpu_label, struct prom_matrix *out,
                  char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root, *data, *result;
    const char *status, *why = NULL;
    size_t i;

    memset(out, 0, sizeof(*out));
    if ((root = json_loadb(body, len, 0, &jerr)) == NULL) {
        snprintf(err, errlen, "not JSON: %s", jerr.text);
        return -1;
    }
    status = json_string_value(json_object_get(root, "status"));
    if (status != NULL && strcmp(status, "error") == 0) {
        const char *t = json_string_value(json_object_get(root, "errorType"));
        const char *e = json_string_value(json_object_get(root, "error"));
        snprintf(err, errlen, "%s: %s", t ? t : "error", e ? e : "(no message)");
        json_decref(root);
        return -1;
    }
    data = json_object_get(root, "data");
    result = json_object_get(data, "result");
    if (status == NULL || strcmp(status, "success") != 0 || !json_is_object(data) ||
        !json_is_string(json_object_get(data, "resultType")) ||
        strcmp(json_string_value(json_object_get(data, "resultType")), "matrix") != 0 ||
        !json_is_array(result)) {
        snprintf(err, errlen, "not a successful matrix answer");
        json_decref(root);
        return -1;
    }
    if (json_array_size(result) > 0 &&
        (out->pm_series = calloc(json_array_size(result), sizeof(*out->pm_series))) == NULL) {
        snprintf(err, errlen, "out of memory");
        json_decref(root);
        return -1;
    }
    for (i = 0; i < json_array_size(result); i++) {
        out->pm_count++;
        if (series(json_array_get(result, i), ns_label, pod_label, gpu_label,
                   &out->pm_series[i], &why) == -1) {
            snprintf(err, errlen, "%s", why);
            prom_matrix_free(out);
            json_decref(root);
            return -1;
        }
    }
    json_decref(root);
    return 0;
}
