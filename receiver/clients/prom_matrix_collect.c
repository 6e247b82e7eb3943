/* prom_matrix_collect.c -- a matrix answer gathered per series (compact arrays, no DOM)
 */
#include <stdlib.h>
#include <string.h>

#include "prom_matrix.h"

void
prom_matrix_free(struct prom_matrix *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->pm_count; i++) {
        free(m->pm_series[i].ms_namespace);
        free(m->pm_series[i].ms_pod);
        free(m->pm_series[i].ms_gpu);
        free(m->pm_series[i].ms_samples);
    }
    free(m->pm_series);
    memset(m, 0, sizeof(*m));
}

/* A copy of a label (NULL stays NULL); -1 out of memory. */
static int
dup_label(const char *v, char **out)
{
    *out = NULL;
    return v != NULL && (*out = strdup(v)) == NULL ? -1 : 0;
}

static int
on_series(const struct prom_matrix_labels *l, void *arg)
{
    struct prom_matrix *m = arg;
    struct prom_mseries *s;

    if (m->pm_count == m->pm_cap) {
        size_t cap = m->pm_cap ? m->pm_cap * 2 : 16;
        struct prom_mseries *grown = realloc(m->pm_series, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        m->pm_series = grown;
        m->pm_cap = cap;
    }
    s = &m->pm_series[m->pm_count++];
    memset(s, 0, sizeof(*s));
    if (dup_label(l->ml_namespace, &s->ms_namespace) == -1 ||
        dup_label(l->ml_pod, &s->ms_pod) == -1 || dup_label(l->ml_gpu, &s->ms_gpu) == -1)
        return -1;
    return 0;
}

static int
on_sample(const struct prom_matrix_labels *l, double t, size_t idx, double v, void *arg)
{
    struct prom_matrix *m = arg;
    struct prom_mseries *s = &m->pm_series[m->pm_count - 1]; /* on_series ran first */

    (void)l;
    (void)idx;
    if (s->ms_count == s->ms_cap) {
        size_t cap = s->ms_cap ? s->ms_cap * 2 : 16;
        struct predict_sample *grown = realloc(s->ms_samples, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        s->ms_samples = grown;
        s->ms_cap = cap;
    }
    s->ms_samples[s->ms_count++] = (struct predict_sample){.ps_t = t, .ps_bytes = v};
    return 0;
}

int
prom_matrix_parse(const char *body, size_t len, const char *ns_label,
                  const char *pod_label, const char *gpu_label, struct prom_matrix *out,
                  char *err, size_t errlen)
{
    struct prom_matrix_reader r = {
        .mr_ns_label = ns_label,
        .mr_pod_label = pod_label,
        .mr_gpu_label = gpu_label,
        .mr_series = on_series,
        .mr_sample = on_sample,
        .mr_arg = out,
    };
    size_t series = 0;

    memset(out, 0, sizeof(*out));
    if (prom_matrix_read(body, len, &r, &series, err, errlen) != PM_OK) {
        prom_matrix_free(out);
        return -1;
    }
    return 0;
}
