/* usage.c -- sums used-bytes series per pod and refuses readings that cannot be true */
#include "usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

#define MIB 1048576.0

void
usage_reading_free(struct usage_reading *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; r->ur_pool == NULL && i < r->ur_count; i++) {
        free(r->ur_series[i].us_namespace);
        free(r->ur_series[i].us_pod);
        free(r->ur_series[i].us_gpu);
    }
    strpool_free(r->ur_pool);
    r->ur_pool = NULL;
    free(r->ur_series);
    r->ur_series = NULL;
    r->ur_count = 0;
}

void
usage_summary_free(struct usage_summary *s)
{
    if (s == NULL)
        return;
    free(s->us_pods); /* the names are the reading's */
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

/* Within one pod's series (or among those without labels): by value, NaN
 * after every number, so the order is total and the first impossible value
 * a GPU-scope message names does not depend on the answer's order. */
static int
cmp_bytes(const void *a, const void *b)
{
    const struct usage_series *x = *(const struct usage_series *const *)a;
    const struct usage_series *y = *(const struct usage_series *const *)b;

    if (isnan(x->us_bytes) || isnan(y->us_bytes))
        return isnan(x->us_bytes) - isnan(y->us_bytes);
    return (x->us_bytes > y->us_bytes) - (x->us_bytes < y->us_bytes);
}

/* One pod's series while sorting: the first seen, how many, where they go. */
struct pod_group {
    const struct usage_series *g_first; /* borrowed */
    uint64_t g_hash;
    size_t g_count, g_at;
};

static int
cmp_group(const void *a, const void *b)
{
    const struct pod_group *x = *(const struct pod_group *const *)a;
    const struct pod_group *y = *(const struct pod_group *const *)b;
    int c;

    if ((c = strcmp(x->g_first->us_namespace, y->g_first->us_namespace)) != 0)
        return c;
    return strcmp(x->g_first->us_pod, y->g_first->us_pod);
}

static uint64_t
pod_hash(const struct usage_series *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    const unsigned char *p;

    for (p = (const unsigned char *)s->us_namespace; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* no byte of a C string: ends the namespace */
    for (p = (const unsigned char *)s->us_pod; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Sorts a few series by value in place (a pod has a handful: qsort's set-up
 * would cost more than the sort). */
static void
sort_by_bytes(struct usage_series **v, size_t n)
{
    size_t i, j;

    if (n > 16) {
        qsort(v, n, sizeof(*v), cmp_bytes);
        return;
    }
    for (i = 1; i < n; i++) {
        struct usage_series *x = v[i];
        for (j = i; j > 0 && cmp_bytes(&v[j - 1], &x) > 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/*
 * r's series, ordered, into *out (owned; free() it): attributed series first,
 * by namespace, pod, then value; then the others by value. Summing in this
 * order makes every sum independent of the order Prometheus answered in.
 * Found without comparing names per series (a qsort of 20,000 series by name
 * was a tenth of a 5,000-pod decision's instructions): the series are grouped
 * per pod in a hash table, only the pods are sorted by name, and each pod's
 * few series by value. 0, or -1 when out of memory.
 */
static int
sort_series(const struct usage_reading *r, struct usage_series ***out)
{
    struct usage_series **sorted = NULL;
    struct pod_group *groups = NULL, **order = NULL;
    uint32_t *slot_of = NULL, *table = NULL; /* table: 0 empty, else group + 1 */
    size_t n = r->ur_count, cap = 16, ngroups = 0, i, k, rest, at;
    uint64_t h;
    int rc = -1;

    *out = NULL;
    if (n > UINT32_MAX / 4) /* no reading this big fits in memory anyway */
        return -1;
    while (cap < 2 * n)
        cap *= 2;
    /* groups is only written as pods are found: malloc, so the pages never
     * used are never touched. */
    if ((sorted = calloc(n, sizeof(*sorted))) == NULL ||
        (groups = malloc(n * sizeof(*groups))) == NULL ||
        (slot_of = calloc(n, sizeof(*slot_of))) == NULL ||
        (table = calloc(cap, sizeof(*table))) == NULL)
        goto done;
    for (i = 0; i < n; i++) {
        const struct usage_series *s = &r->ur_series[i];
        if (!attributed(s))
            continue;
        h = pod_hash(s);
        for (k = (size_t)h & (cap - 1);; k = (k + 1) & (cap - 1)) {
            struct pod_group *g;
            if (table[k] == 0) {
                g = &groups[ngroups++];
                g->g_first = s;
                g->g_hash = h;
                g->g_count = 0;
                table[k] = (uint32_t)ngroups;
            }
            g = &groups[table[k] - 1];
            if (g->g_first == s ||
                (g->g_hash == h && strcmp(g->g_first->us_pod, s->us_pod) == 0 &&
                 strcmp(g->g_first->us_namespace, s->us_namespace) == 0)) {
                slot_of[i] = table[k] - 1;
                g->g_count++;
                break;
            }
        }
    }
    if (ngroups > 0 && (order = calloc(ngroups, sizeof(*order))) == NULL)
        goto done;
    for (k = 0; k < ngroups; k++)
        order[k] = &groups[k];
    if (ngroups > 0)
        qsort(order, ngroups, sizeof(*order), cmp_group);
    for (k = 0, at = 0; k < ngroups; k++) {
        order[k]->g_at = at;
        at += order[k]->g_count;
    }
    rest = at; /* the unattributed series follow every pod's */
    for (i = 0; i < n; i++) {
        if (attributed(&r->ur_series[i]))
            sorted[groups[slot_of[i]].g_at++] = &r->ur_series[i];
        else
            sorted[rest++] = &r->ur_series[i];
    }
    for (k = 0, at = 0; k < ngroups; k++) {
        sort_by_bytes(sorted + at, order[k]->g_count);
        at += order[k]->g_count;
    }
    sort_by_bytes(sorted + at, n - at);
    *out = sorted;
    sorted = NULL;
    rc = 0;
done:
    free(sorted);
    free(groups);
    free(order);
    free(slot_of);
    free(table);
    return rc;
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
            pu->pu_namespace = sorted[i]->us_namespace;
            pu->pu_pod = sorted[i]->us_pod;
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
check_totals(const struct usage_summary *s, const struct usage_total *t, char *err,
             size_t errlen)
{
    char what[96];
    size_t i;

    if (t->ut_device)
        snprintf(what, sizeof(what),
                 "the GPU's total of %lld MiB (as the device reports it)",
                 (long long)usage_bytes_to_mib(t->ut_bytes));
    else
        snprintf(what, sizeof(what), "GPU_TOTAL_MIB=%lld",
                 (long long)usage_bytes_to_mib(t->ut_bytes));
    for (i = 0; i < s->us_count; i++) {
        if (s->us_pods[i].pu_gpu_bytes <= t->ut_bytes)
            continue;
        snprintf(err, errlen, "%s/%s reports %lld MiB, more than %s%s",
                 s->us_pods[i].pu_namespace, s->us_pods[i].pu_pod,
                 (long long)usage_bytes_to_mib(s->us_pods[i].pu_gpu_bytes), what,
                 t->ut_device ? ", which cannot be true"
                              : "; is GPU_TOTAL_MIB smaller than the card?");
        return -1;
    }
    if (s->us_total_bytes > t->ut_bytes) {
        snprintf(err, errlen, "the series together report %lld MiB, which exceeds %s%s",
                 (long long)usage_bytes_to_mib(s->us_total_bytes), what,
                 t->ut_device ? "" : "; is GPU_TOTAL_MIB smaller than the card?");
        return -1;
    }
    return 0;
}

int
usage_summarise(const struct usage_reading *r, int64_t total_mib,
                struct usage_summary *out, char *err, size_t errlen)
{
    struct usage_total t = {(double)total_mib * MIB, 0};

    return usage_summarise_total(r, &t, out, err, errlen);
}

int
usage_summarise_total(const struct usage_reading *r, const struct usage_total *t,
                      struct usage_summary *out, char *err, size_t errlen)
{
    struct usage_series **sorted = NULL;
    char why[512];

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    /* No pod holds VRAM, yet the device reports the node: judged by its own
     * figure (a re-read after its one tenant left; a decision never gets here,
     * an empty answer stops it before). Without the device's total, nothing. */
    if ((r == NULL || r->ur_count == 0) && t->ut_device)
        return 0;
    if (r == NULL || r->ur_count == 0) {
        snprintf(why, sizeof(why), "Prometheus returned no series");
        goto fail;
    }
    if (check_values(r, why, sizeof(why)) == -1)
        goto fail;
    if (sort_series(r, &sorted) == -1)
        goto oom;
    if (group(sorted, r->ur_count, out) == -1)
        goto oom;
    if (check_totals(out, t, why, sizeof(why)) == -1)
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
                 "Prometheus reported %g bytes for %s/%s, which cannot be true",
                 s->us_bytes, s->us_namespace, s->us_pod);
    else
        snprintf(
            err, errlen,
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
        for (end = i + 1;
             end < n && attributed(sorted[end]) && same_pod(sorted[i], sorted[end]);
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
        pu->pu_namespace = sorted[i]->us_namespace;
        pu->pu_pod = sorted[i]->us_pod;
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

/* The total gpu is judged against: the device's own where it reports a
 * usable one, else GPU_TOTAL_MIB. 1 with why set when the device's own
 * reading of gpu cannot be true. */
static int
gpu_total(const struct usage_limits *lim, const char *gpu, struct usage_total *t,
          char *why, size_t whylen)
{
    double total;

    t->ut_bytes = (double)lim->ul_total_mib * MIB;
    t->ut_device = 0;
    if (lim->ul_device_total == NULL)
        return 0;
    switch (lim->ul_device_total(lim->ul_device, gpu, &total, why, whylen)) {
    case 0:
        return 0;
    case -1:
        return 1;
    }
    t->ut_bytes = total;
    t->ut_device = 1;
    return 0;
}

/* 1 with why set when gpu's own reading cannot be true: the device's figures,
 * a series on it negative, NaN or infinite, one pod on it above its total, or
 * all on it together above it. */
static int
gpu_reading_bad(struct usage_series *const *sorted, size_t n, const char *gpu,
                const struct usage_limits *lim, char *why, size_t whylen)
{
    struct usage_summary one;
    struct pod_usage pu;
    struct usage_total t;
    size_t i, end;
    double sum = 0, on;

    if (gpu_total(lim, gpu, &t, why, whylen) == 1)
        return 1;
    memset(&one, 0, sizeof(one));
    one.us_pods = &pu;
    for (i = 0; i < n && attributed(sorted[i]); i = end) {
        on = 0;
        for (end = i;
             end < n && attributed(sorted[end]) && same_pod(sorted[i], sorted[end]);
             end++) {
            if (!on_gpu(sorted[end], gpu))
                continue;
            if (bad_value(sorted[end]->us_bytes)) {
                say_bad(sorted[end], gpu, why, whylen);
                return 1;
            }
            on += sorted[end]->us_bytes;
        }
        sum += on;
        pu.pu_namespace = sorted[i]->us_namespace;
        pu.pu_pod = sorted[i]->us_pod;
        pu.pu_bytes = pu.pu_gpu_bytes = on;
        one.us_count = 1;
        if (check_totals(&one, &t, why, whylen) == -1)
            return 1;
    }
    for (; i < n; i++) {
        if (!on_gpu(sorted[i], gpu))
            continue;
        if (bad_value(sorted[i]->us_bytes)) {
            say_bad(sorted[i], gpu, why, whylen);
            return 1;
        }
        sum += sorted[i]->us_bytes;
    }
    one.us_count = 0;
    one.us_total_bytes = sum;
    return check_totals(&one, &t, why, whylen) == -1;
}

/*
 * SPEC "GPU scope": a pod using gpu that also uses a GPU whose reading cannot
 * be true has no knowable total (so no knowable overshoot): 1 with err set.
 */
static int
tainted(struct usage_series *const *sorted, size_t n, const char *gpu,
        const struct usage_summary *sum, const struct usage_limits *lim, char *err,
        size_t errlen)
{
    char why[384];
    size_t i, k;

    for (i = 0; i < n && attributed(sorted[i]); i++) {
        const struct usage_series *x = sorted[i];
        int user = 0;

        if (x->us_gpu == NULL || on_gpu(x, gpu) || !(x->us_bytes > 0))
            continue;
        for (k = 0; k < sum->us_count && !user; k++)
            user = strcmp(sum->us_pods[k].pu_namespace, x->us_namespace) == 0 &&
                   strcmp(sum->us_pods[k].pu_pod, x->us_pod) == 0;
        if (!user)
            continue;
        if (gpu_reading_bad(sorted, n, x->us_gpu, lim, why, sizeof(why))) {
            snprintf(
                err, errlen,
                "%s/%s also uses GPU %s, whose reading cannot be true (%s): its total "
                "is unknowable, so GPU %s is not judged",
                x->us_namespace, x->us_pod, x->us_gpu, why, gpu);
            return 1;
        }
    }
    return 0;
}

int
usage_summarise_gpu(const struct usage_reading *r, const char *gpu, int64_t total_mib,
                    struct usage_summary *out, char *err, size_t errlen)
{
    struct usage_limits lim = {total_mib, NULL, NULL};

    return usage_summarise_gpu_lim(r, gpu, &lim, out, err, errlen);
}

int
usage_summarise_gpu_lim(const struct usage_reading *r, const char *gpu,
                        const struct usage_limits *lim, struct usage_summary *out,
                        char *err, size_t errlen)
{
    struct usage_series **sorted = NULL;
    struct usage_total t;
    char why[1024];
    size_t i, n = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    for (i = 0; r != NULL && gpu != NULL && i < r->ur_count; i++)
        n += on_gpu(&r->ur_series[i], gpu);
    if (n == 0) {
        /* No pod on it, yet the device reports it: a GPU nobody uses now (its
         * tenant just recycled, or memory no pod holds), judged by its own figure. */
        if (gpu != NULL && lim->ul_device_total != NULL) {
            double total;
            switch (lim->ul_device_total(lim->ul_device, gpu, &total, why, sizeof(why))) {
            case 1:
                return 0;
            case -1:
                goto fail;
            }
        }
        snprintf(why, sizeof(why), "Prometheus returned no series for GPU %s",
                 gpu != NULL ? gpu : "(none)");
        goto fail;
    }
    if (gpu_total(lim, gpu, &t, why, sizeof(why)) == 1)
        goto fail;
    if (sort_series(r, &sorted) == -1)
        goto oom;
    if ((rc = group_gpu(sorted, r->ur_count, gpu, out, why, sizeof(why))) == -1)
        goto oom;
    if (rc == 1 || check_totals(out, &t, why, sizeof(why)) == -1)
        goto fail;
    if (tainted(sorted, r->ur_count, gpu, out, lim, why, sizeof(why)))
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
