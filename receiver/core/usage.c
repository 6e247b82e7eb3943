/* usage.c -- sums used-bytes series per pod and refuses readings that cannot be true */
#include "usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

void
usage_reading_free(struct usage_reading *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->ur_count; i++) {
        free(r->ur_series[i].us_namespace);
        free(r->ur_series[i].us_pod);
        free(r->ur_series[i].us_gpu);
    }
    free(r->ur_series);
    r->ur_series = NULL;
    r->ur_count = 0;
}

void
usage_summary_free(struct usage_summary *s)
{
    size_t i;

    if (s == NULL)
        return;
    for (i = 0; i < s->us_count; i++) {
        free(s->us_pods[i].pu_namespace);
        free(s->us_pods[i].pu_pod);
    }
    free(s->us_pods);
    memset(s, 0, sizeof(*s));
}

int64_t
usage_bytes_to_mib(double bytes)
{
    double mib;

    if (isnan(bytes))
        return 0;
    /* Dividing by 2^20 is exact in binary floating point, so floor() is too. */
    mib = floor(bytes / MIB);
    if (mib >= 9223372036854775807.0)
        return INT64_MAX;
    if (mib <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)mib;
}

/* A series names a pod only with both labels; Prometheus treats an empty
 * label value as an absent one, and so do we. */
static int
attributed(const struct usage_series *s)
{
    return s->us_namespace != NULL && s->us_namespace[0] != '\0' && s->us_pod != NULL &&
           s->us_pod[0] != '\0';
}

/* Attributed series first, by namespace, pod, then value: summing in this
 * order makes every sum independent of the order Prometheus answered in. */
static int
cmp_series(const void *a, const void *b)
{
    const struct usage_series *x = *(const struct usage_series *const *)a;
    const struct usage_series *y = *(const struct usage_series *const *)b;
    int ax = attributed(x), ay = attributed(y), c;

    if (ax != ay)
        return ay - ax;
    if (ax) {
        if ((c = strcmp(x->us_namespace, y->us_namespace)) != 0)
            return c;
        if ((c = strcmp(x->us_pod, y->us_pod)) != 0)
            return c;
    }
    return (x->us_bytes > y->us_bytes) - (x->us_bytes < y->us_bytes);
}

static int
same_pod(const struct usage_series *x, const struct usage_series *y)
{
    return strcmp(x->us_namespace, y->us_namespace) == 0 &&
           strcmp(x->us_pod, y->us_pod) == 0;
}

/* Every value must be a real, non-negative byte count. */
static int
check_values(const struct usage_reading *r, char *err, size_t errlen)
{
    const struct usage_series *s;
    size_t i;

    for (i = 0; i < r->ur_count; i++) {
        s = &r->ur_series[i];
        if (isfinite(s->us_bytes) && s->us_bytes >= 0)
            continue;
        if (attributed(s))
            snprintf(err, errlen,
                     "Prometheus reported %g bytes for %s/%s, which cannot be true",
                     s->us_bytes, s->us_namespace, s->us_pod);
        else
            snprintf(
                err, errlen,
                "Prometheus reported %g bytes for a series without pod labels, which "
                "cannot be true",
                s->us_bytes);
        return -1;
    }
    return 0;
}

/* Groups the sorted series into out->us_pods and the sums. */
static int
group(struct usage_series *const *sorted, size_t n, struct usage_summary *out)
{
    struct pod_usage *pu;
    size_t i, npods = 0;

    for (i = 0; i < n && attributed(sorted[i]); i++)
        if (i == 0 || !same_pod(sorted[i - 1], sorted[i]))
            npods++;
    if (npods > 0 && (out->us_pods = calloc(npods, sizeof(*out->us_pods))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        if (!attributed(sorted[i])) {
            out->us_unattributed_bytes += sorted[i]->us_bytes;
            continue;
        }
        if (i == 0 || !same_pod(sorted[i - 1], sorted[i])) {
            pu = &out->us_pods[out->us_count++];
            if ((pu->pu_namespace = strdup(sorted[i]->us_namespace)) == NULL ||
                (pu->pu_pod = strdup(sorted[i]->us_pod)) == NULL)
                return -1;
        }
        out->us_pods[out->us_count - 1].pu_bytes += sorted[i]->us_bytes;
    }
    for (i = 0; i < out->us_count; i++) {
        out->us_total_bytes += out->us_pods[i].pu_bytes;
        out->us_pods[i].pu_gpu_bytes = out->us_pods[i].pu_bytes;
    }
    out->us_total_bytes += out->us_unattributed_bytes;
    return 0;
}

/* One pod, or all together, above the card cannot be true. */
static int
check_totals(const struct usage_summary *s, int64_t total_mib, char *err, size_t errlen)
{
    double limit = (double)total_mib * MIB;
    size_t i;

    for (i = 0; i < s->us_count; i++) {
        if (s->us_pods[i].pu_gpu_bytes <= limit)
            continue;
        snprintf(err, errlen,
                 "%s/%s reports %lld MiB, more than GPU_TOTAL_MIB=%lld; is GPU_TOTAL_MIB "
                 "smaller than the card?",
                 s->us_pods[i].pu_namespace, s->us_pods[i].pu_pod,
                 (long long)usage_bytes_to_mib(s->us_pods[i].pu_gpu_bytes),
                 (long long)total_mib);
        return -1;
    }
    if (s->us_total_bytes > limit) {
        snprintf(err, errlen,
                 "the series together report %lld MiB, which exceeds GPU_TOTAL_MIB=%lld; "
                 "is GPU_TOTAL_MIB smaller than the card?",
                 (long long)usage_bytes_to_mib(s->us_total_bytes), (long long)total_mib);
        return -1;
    }
    return 0;
}

int
usage_summarise(const struct usage_reading *r, int64_t total_mib,
                struct usage_summary *out, char *err, size_t errlen)
{
    struct usage_series **sorted = NULL;
    char why[512];
    size_t i;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (r == NULL || r->ur_count == 0) {
        snprintf(why, sizeof(why), "Prometheus returned no series");
        goto fail;
    }
    if (check_values(r, why, sizeof(why)) == -1)
        goto fail;
    if ((sorted = calloc(r->ur_count, sizeof(*sorted))) == NULL)
        goto oom;
    for (i = 0; i < r->ur_count; i++)
        sorted[i] = &r->ur_series[i];
    qsort(sorted, r->ur_count, sizeof(*sorted), cmp_series);
    if (group(sorted, r->ur_count, out) == -1)
        goto oom;
    if (check_totals(out, total_mib, why, sizeof(why)) == -1)
        goto fail;
    free(sorted);
    return 0;

oom:
    snprintf(why, sizeof(why), "out of memory");
fail:
    free(sorted);
    usage_summary_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

/* --- GPU scope ------------------------------------------------------------ */

static int
on_gpu(const struct usage_series *s, const char *gpu)
{
    return s->us_gpu != NULL && strcmp(s->us_gpu, gpu) == 0;
}

int
usage_gpu_scoped(const struct usage_reading *r)
{
    size_t i;

    for (i = 0; r != NULL && i < r->ur_count; i++)
        if (r->ur_series[i].us_gpu != NULL)
            return 1;
    return 0;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
usage_gpus(const struct usage_reading *r, const char ***out, size_t *count)
{
    const char **g;
    size_t i, n = 0, kept = 0;

    *out = NULL;
    *count = 0;
    for (i = 0; r != NULL && i < r->ur_count; i++)
        n += r->ur_series[i].us_gpu != NULL;
    if (n == 0)
        return 0;
    if ((g = calloc(n, sizeof(*g))) == NULL)
        return -1;
    for (i = 0, n = 0; i < r->ur_count; i++)
        if (r->ur_series[i].us_gpu != NULL)
            g[n++] = r->ur_series[i].us_gpu;
    qsort(g, n, sizeof(*g), cmp_str);
    for (i = 0; i < n; i++)
        if (kept == 0 || strcmp(g[kept - 1], g[i]) != 0)
            g[kept++] = g[i];
    *out = g;
    *count = kept;
    return 0;
}

static int
bad_value(double v)
{
    return !(isfinite(v) && v >= 0);
}

/* The same sentence check_values() writes, for one series of GPU scope. */
static void
say_bad(const struct usage_series *s, const char *gpu, char *err, size_t errlen)
{
    if (attributed(s))
        snprintf(err, errlen,
                 "Prometheus reported %g bytes for %s/%s, which cannot be true", s->us_bytes,
                 s->us_namespace, s->us_pod);
    else
        snprintf(err, errlen,
                 "Prometheus reported %g bytes on GPU %s for a series without pod labels, "
                 "which cannot be true",
                 s->us_bytes, gpu);
}

/*
 * One pod's group of sorted series [from, to): whether it uses gpu, its sums,
 * and its first impossible value. Summing in sorted order keeps the sums
 * independent of the answer's order.
 */
static void
scan_pod(struct usage_series *const *sorted, size_t from, size_t to, const char *gpu,
         int *has_gpu, double *gpu_bytes, double *all_bytes, size_t *bad)
{
    size_t i;

    *has_gpu = 0;
    *gpu_bytes = *all_bytes = 0;
    *bad = to;
    for (i = from; i < to; i++) {
        if (on_gpu(sorted[i], gpu)) {
            *has_gpu = 1;
            *gpu_bytes += sorted[i]->us_bytes;
        }
        *all_bytes += sorted[i]->us_bytes;
        if (*bad == to && bad_value(sorted[i]->us_bytes))
            *bad = i;
    }
}

/* Groups the sorted series for gpu into out; 1 with err set when a value
 * cannot be true, -1 when out of memory. */
static int
group_gpu(struct usage_series *const *sorted, size_t n, const char *gpu,
          struct usage_summary *out, char *err, size_t errlen)
{
    struct pod_usage *pu;
    size_t i, end, bad, npods = 0;
    double g, all;
    int has;

    for (i = 0; i < n && attributed(sorted[i]); i++)
        if (i == 0 || !same_pod(sorted[i - 1], sorted[i]))
            npods++;
    if (npods > 0 && (out->us_pods = calloc(npods, sizeof(*out->us_pods))) == NULL)
        return -1;
    for (i = 0; i < n && attributed(sorted[i]); i = end) {
        for (end = i + 1; end < n && attributed(sorted[end]) && same_pod(sorted[i], sorted[end]);
             end++)
            ;
        scan_pod(sorted, i, end, gpu, &has, &g, &all, &bad);
        if (!has)
            continue;
        if (bad < end) { /* its total would be unknown, and so its budget */
            say_bad(sorted[bad], gpu, err, errlen);
            return 1;
        }
        out->us_total_bytes += g;
        if (!(g > 0))
            continue; /* a series at 0 bytes: not a user of this GPU */
        pu = &out->us_pods[out->us_count++];
        if ((pu->pu_namespace = strdup(sorted[i]->us_namespace)) == NULL ||
            (pu->pu_pod = strdup(sorted[i]->us_pod)) == NULL)
            return -1;
        pu->pu_bytes = all;
        pu->pu_gpu_bytes = g;
    }
    for (; i < n; i++) { /* series without pod labels: only those on gpu count */
        if (!on_gpu(sorted[i], gpu))
            continue;
        if (bad_value(sorted[i]->us_bytes)) {
            say_bad(sorted[i], gpu, err, errlen);
            return 1;
        }
        out->us_unattributed_bytes += sorted[i]->us_bytes;
    }
    out->us_total_bytes += out->us_unattributed_bytes;
    return 0;
}

int
usage_summarise_gpu(const struct usage_reading *r, const char *gpu, int64_t total_mib,
                    struct usage_summary *out, char *err, size_t errlen)
{
    struct usage_series **sorted = NULL;
    char why[512];
    size_t i, n = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    for (i = 0; r != NULL && gpu != NULL && i < r->ur_count; i++)
        n += on_gpu(&r->ur_series[i], gpu);
    if (n == 0) {
        snprintf(why, sizeof(why), "Prometheus returned no series for GPU %s",
                 gpu != NULL ? gpu : "(none)");
        goto fail;
    }
    if ((sorted = calloc(r->ur_count, sizeof(*sorted))) == NULL)
        goto oom;
    for (i = 0; i < r->ur_count; i++)
        sorted[i] = &r->ur_series[i];
    qsort(sorted, r->ur_count, sizeof(*sorted), cmp_series);
    if ((rc = group_gpu(sorted, r->ur_count, gpu, out, why, sizeof(why))) == -1)
        goto oom;
    if (rc == 1 || check_totals(out, total_mib, why, sizeof(why)) == -1)
        goto fail;
    free(sorted);
    return 0;

oom:
    snprintf(why, sizeof(why), "out of memory");
fail:
    free(sorted);
    usage_summary_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}
