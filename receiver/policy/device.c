/* device.c -- the device's own free/total per GPU: freshness and plausibility, no I/O */
#include "device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
device_label_name_ok(const char *l)
{
    return l[0] != '\0' && strchr("0123456789", l[0]) == NULL &&
           strspn(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
               strlen(l);
}

int
device_promql(const char *gpu_label, char *buf, size_t len)
{
    const char *l = gpu_label != NULL && gpu_label[0] != '\0' ? gpu_label : "uuid";
    int n;

    if (!device_label_name_ok(l))
        return -1;
    n = snprintf(buf, len,
                 "{__name__=~\"" DEVICE_FREE_METRIC "|" DEVICE_TOTAL_METRIC
                 "|" DEVICE_UNATTRIBUTED_METRIC "\",node=\"$node\"}"
                 " or label_replace(timestamp(" DEVICE_FREE_METRIC "{node=\"$node\"}),"
                 "\"" DEVICE_TS_LABEL "\",\"device\",\"\",\"\")"
                 " or label_replace(max by (%s) (timestamp("
                 "gpu_pod_memory_used_bytes{node=\"$node\"})),"
                 "\"" DEVICE_TS_LABEL "\",\"used\",\"\",\"\")",
                 l);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

void
device_reading_free(struct device_reading *d)
{
    if (d == NULL)
        return;
    free(d->dr_gpus);
    usage_reading_free(&d->dr_raw);
    memset(d, 0, sizeof(*d));
}

static int
is(const char *s, const char *lit)
{
    return s != NULL && strcmp(s, lit) == 0;
}

/* Which a series is: 0 free, 1 total, 2 device time, 3 used time, 4 unattributed,
 * -1 none. */
static int
kind_of(const struct usage_series *s)
{
    if (s->us_pod == NULL || s->us_pod[0] == '\0') {
        if (is(s->us_namespace, DEVICE_FREE_METRIC))
            return 0;
        if (is(s->us_namespace, DEVICE_TOTAL_METRIC))
            return 1;
        if (is(s->us_namespace, DEVICE_UNATTRIBUTED_METRIC))
            return 4;
        return -1;
    }
    if (s->us_namespace != NULL && s->us_namespace[0] != '\0')
        return -1; /* a tag on a named series: not something this query makes */
    if (is(s->us_pod, "device"))
        return 2;
    if (is(s->us_pod, "used"))
        return 3;
    return -1;
}

/* Records one value of kind k in g; a second one of the same kind is a dup
 * (the used time excepted: max by already made it one per GPU, and several
 * would only mean the newest counts). */
static void
put(struct device_gpu *g, int k, double v)
{
    int *have[] = {&g->dg_have_free, &g->dg_have_total, &g->dg_have_ts,
                   &g->dg_have_used_ts, &g->dg_have_unattributed};
    double *val[] = {&g->dg_free_bytes, &g->dg_total_bytes, &g->dg_ts, &g->dg_used_ts,
                     &g->dg_unattributed_bytes};

    if (k < 0 || k >= (int)(sizeof(val) / sizeof(val[0])))
        return;               /* can't happen: k is one of the DEV_* kinds */
    if (*have[k] && k >= 3) { /* shown or compared only: the largest counts */
        if (v > *val[k] || isnan(*val[k]))
            *val[k] = v;
        return;
    }
    if (*have[k])
        g->dg_dup = 1;
    *have[k] = 1;
    *val[k] = v;
}

/* A series of a known kind, while the reading is sorted by GPU. */
struct dev_ent {
    const char *e_gpu; /* borrowed from the raw reading */
    size_t e_at;       /* its index in the answer: ties keep the answer's order */
    int e_kind;
    double e_value;
};

static int
cmp_ent(const void *a, const void *b)
{
    const struct dev_ent *x = a, *y = b;
    int c = strcmp(x->e_gpu, y->e_gpu);

    if (c != 0)
        return c;
    return (x->e_at > y->e_at) - (x->e_at < y->e_at);
}

int
device_from_series(struct usage_reading *raw, struct device_reading *out)
{
    struct dev_ent *ents = NULL;
    size_t i, m = 0, n = 0;
    struct device_gpu *g = NULL;

    memset(out, 0, sizeof(*out));
    out->dr_raw = *raw;
    memset(raw, 0, sizeof(*raw));
    if (out->dr_raw.ur_count == 0)
        return 0;
    /* Sorted by GPU, then found by bsearch (device_find): a hostile answer
     * naming 85,000 GPUs once cost a linear search per series. */
    if ((ents = malloc(out->dr_raw.ur_count * sizeof(*ents))) == NULL)
        goto oom;
    for (i = 0; i < out->dr_raw.ur_count; i++) {
        const struct usage_series *s = &out->dr_raw.ur_series[i];
        int k = kind_of(s);
        if (k != -1)
            ents[m++] =
                (struct dev_ent){s->us_gpu != NULL ? s->us_gpu : "", i, k, s->us_bytes};
    }
    if (m > 1)
        qsort(ents, m, sizeof(*ents), cmp_ent);
    for (i = 0; i < m; i++)
        n += i == 0 || strcmp(ents[i - 1].e_gpu, ents[i].e_gpu) != 0;
    if (n > USAGE_MAX_GPUS) {
        free(ents);
        device_reading_free(out);
        return DEVICE_TOO_MANY_GPUS;
    }
    if (n > 0 && (out->dr_gpus = calloc(n, sizeof(*out->dr_gpus))) == NULL)
        goto oom;
    for (i = 0; i < m; i++) {
        if (i == 0 || strcmp(ents[i - 1].e_gpu, ents[i].e_gpu) != 0) {
            g = &out->dr_gpus[out->dr_count++];
            g->dg_gpu = ents[i].e_gpu;
        }
        put(g, ents[i].e_kind, ents[i].e_value);
    }
    free(ents);
    return 0;

oom:
    free(ents);
    device_reading_free(out);
    return -1;
}

const struct device_gpu *
device_find(const struct device_reading *d, const char *gpu)
{
    size_t lo = 0, hi, mid;
    int c;

    if (d == NULL || gpu == NULL)
        return NULL;
    hi = d->dr_count;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if ((c = strcmp(d->dr_gpus[mid].dg_gpu, gpu)) == 0)
            return &d->dr_gpus[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int
device_fresh(const struct device_gpu *g, char *why, size_t whylen)
{
    if (!g->dg_have_free || !g->dg_have_total) {
        snprintf(why, whylen, "no %s series",
                 g->dg_have_free ? DEVICE_TOTAL_METRIC : DEVICE_FREE_METRIC);
        return 0;
    }
    if (!g->dg_have_ts || !isfinite(g->dg_ts)) {
        snprintf(why, whylen, "no sample time for its %s", DEVICE_FREE_METRIC);
        return 0;
    }
    /* Same scrape, same timestamp: only strictly older is stale. NaN used time
     * fails the comparison, and so is not held against the device. */
    if (g->dg_have_used_ts && g->dg_ts < g->dg_used_ts) {
        snprintf(why, whylen,
                 "its device series are stale (%.3f s older than its pod series)",
                 g->dg_used_ts - g->dg_ts);
        return 0;
    }
    return 1;
}

int
device_impossible(const struct device_gpu *g, char *why, size_t whylen)
{
    const char *gpu = g->dg_gpu[0] != '\0' ? g->dg_gpu : "(unlabelled)";

    if (g->dg_dup) {
        snprintf(why, whylen,
                 "GPU %s has more than one device series of a kind (two exporters?), "
                 "which cannot be one card",
                 gpu);
        return 1;
    }
    if (!(isfinite(g->dg_total_bytes) && g->dg_total_bytes > 0)) {
        snprintf(why, whylen,
                 "the device reports a total of %g bytes on GPU %s, which "
                 "cannot be true",
                 g->dg_total_bytes, gpu);
        return 1;
    }
    if (g->dg_total_bytes / 1048576.0 > (double)DEVICE_MAX_GPU_MIB) {
        /* The bound capacity advertising holds a total to as well. */
        snprintf(why, whylen,
                 "the device reports a total of %g bytes on GPU %s, more than any card "
                 "has, which cannot be true",
                 g->dg_total_bytes, gpu);
        return 1;
    }
    if (!(isfinite(g->dg_free_bytes) && g->dg_free_bytes >= 0)) {
        snprintf(why, whylen,
                 "the device reports %g bytes free on GPU %s, which cannot "
                 "be true",
                 g->dg_free_bytes, gpu);
        return 1;
    }
    if (g->dg_free_bytes > g->dg_total_bytes) {
        snprintf(why, whylen,
                 "the device reports %lld MiB free on GPU %s, more than its total of "
                 "%lld MiB, which cannot be true",
                 (long long)usage_bytes_to_mib(g->dg_free_bytes), gpu,
                 (long long)usage_bytes_to_mib(g->dg_total_bytes));
        return 1;
    }
    return 0;
}

void
device_figure_for(const struct device_reading *d, const char *gpu,
                  struct device_figure *out)
{
    char why[200];
    size_t i;

    memset(out, 0, sizeof(*out));
    if (d == NULL)
        return;
    if (gpu != NULL) {
        const struct device_gpu *g = device_find(d, gpu);
        if (g == NULL) {
            snprintf(out->df_why, sizeof(out->df_why), "GPU %s has no device series",
                     gpu);
            return;
        }
        if (!device_fresh(g, why, sizeof(why))) {
            snprintf(out->df_why, sizeof(out->df_why), "GPU %s: %s", gpu, why);
            return;
        }
        out->df_have = 1;
        out->df_impossible = device_impossible(g, out->df_why, sizeof(out->df_why));
        out->df_free_bytes = g->dg_free_bytes;
        out->df_total_bytes = g->dg_total_bytes;
        return;
    }
    if (d->dr_count == 0) {
        snprintf(out->df_why, sizeof(out->df_why), "the node has no device series");
        return;
    }
    for (i = 0; i < d->dr_count; i++) {
        const struct device_gpu *g = &d->dr_gpus[i];
        if (!device_fresh(g, why, sizeof(why))) {
            snprintf(out->df_why, sizeof(out->df_why), "GPU %s: %s",
                     g->dg_gpu[0] != '\0' ? g->dg_gpu : "(unlabelled)", why);
            out->df_free_bytes = out->df_total_bytes = 0;
            out->df_impossible = 0;
            return;
        }
        if (!out->df_impossible && device_impossible(g, out->df_why, sizeof(out->df_why)))
            out->df_impossible = 1;
        out->df_free_bytes += g->dg_free_bytes;
        out->df_total_bytes += g->dg_total_bytes;
    }
    out->df_have = 1;
}

int
device_total(const void *dev, const char *gpu, double *total_bytes, char *why,
             size_t whylen)
{
    struct device_figure f;

    device_figure_for(dev, gpu, &f);
    if (!f.df_have)
        return 0;
    if (f.df_impossible) {
        snprintf(why, whylen, "%s", f.df_why);
        return -1;
    }
    *total_bytes = f.df_total_bytes;
    return 1;
}
