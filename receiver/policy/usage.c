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
    free(r->ur_label_sets);
    r->ur_label_sets = NULL;
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

struct set_at {
    uint64_t sa_hash;
    size_t sa_at;
};

static int
cmp_set(const void *a, const void *b)
{
    const struct set_at *x = a, *y = b;

    if (x->sa_hash != y->sa_hash)
        return x->sa_hash < y->sa_hash ? -1 : 1;
    return (x->sa_at > y->sa_at) - (x->sa_at < y->sa_at);
}

/*
 * Two series with one label set: a vector never holds them (Prometheus
 * refuses to build one), so a broken or hostile server sent them, and the
 * reading is ambiguous (both counted? which value?): refused, never counted
 * twice. Sorted, n log n. 1 with err set, 0, or -1 when out of memory.
 */
static int
check_label_sets(const struct usage_reading *r, char *err, size_t errlen)
{
    size_t n = r->ur_count, i;
    struct set_at *v;
    int rc = 0;

    if (n < 2 || r->ur_label_sets == NULL)
        return 0;
    if ((v = malloc(n * sizeof(*v))) == NULL)
        return -1;
    for (i = 0; i < n; i++)
        v[i] = (struct set_at){r->ur_label_sets[i], i};
    qsort(v, n, sizeof(*v), cmp_set);
    for (i = 1; i < n && rc == 0; i++)
        if (v[i].sa_hash == v[i - 1].sa_hash) {
            snprintf(err, errlen,
                     "Prometheus returned two series with one label set (result[%zu] and "
                     "result[%zu]), which no Prometheus vector has: the reading is "
                     "ambiguous",
                     v[i - 1].sa_at, v[i].sa_at);
            rc = 1;
        }
    free(v);
    return rc;
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
    switch (check_label_sets(r, why, sizeof(why))) {
    case -1:
        goto oom;
    case 1:
        goto fail;
    }
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

static uint64_t
str_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */

    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/*
 * The distinct strings of v[0..n) (NULL entries skipped), sorted bytewise,
 * into *names (owned; the strings borrowed from v) and *count; with of, each
 * element's index in *names (NONE for NULL). Found by hashing, so only the
 * distinct strings are sorted: GPU names share long prefixes, and sorting
 * every series by them was most of a 65,000-series look. 0, or -1 when out of
 * memory (nothing allocated).
 */
#define NONE ((size_t)-1)
static int
distinct_sorted(const char *const *v, size_t n, const char ***names, size_t *count,
                size_t *of)
{
    const char **found = NULL, **uniq = NULL;
    uint32_t *table = NULL; /* 0 empty, else index in found + 1 */
    size_t *rank = NULL, cap = 16, nu = 0, i, k;
    int rc = -1;

    *names = NULL;
    *count = 0;
    if (n > UINT32_MAX / 4)
        return -1;
    while (cap < 2 * n)
        cap *= 2;
    if ((found = malloc((n ? n : 1) * sizeof(*found))) == NULL ||
        (table = calloc(cap, sizeof(*table))) == NULL)
        goto done;
    for (i = 0; i < n; i++) {
        if (v[i] == NULL) {
            if (of != NULL)
                of[i] = NONE;
            continue;
        }
        for (k = (size_t)str_hash(v[i]) & (cap - 1);; k = (k + 1) & (cap - 1)) {
            if (table[k] == 0) {
                found[nu] = v[i];
                table[k] = (uint32_t)++nu;
                break;
            }
            if (found[table[k] - 1] == v[i] || strcmp(found[table[k] - 1], v[i]) == 0)
                break;
        }
        if (of != NULL)
            of[i] = table[k] - 1;
    }
    if ((uniq = malloc((nu ? nu : 1) * sizeof(*uniq))) == NULL ||
        (of != NULL && (rank = malloc((nu ? nu : 1) * sizeof(*rank))) == NULL))
        goto done;
    memcpy(uniq, found, nu * sizeof(*uniq));
    if (nu > 1)
        qsort(uniq, nu, sizeof(*uniq), cmp_str);
    if (of != NULL) {
        /* Index found to index sorted: each sorted name's own slot. */
        for (i = 0; i < nu; i++) {
            for (k = (size_t)str_hash(uniq[i]) & (cap - 1);
                 found[table[k] - 1] != uniq[i] &&
                 strcmp(found[table[k] - 1], uniq[i]) != 0;
                 k = (k + 1) & (cap - 1))
                ;
            rank[table[k] - 1] = i;
        }
        for (i = 0; i < n; i++)
            if (of[i] != NONE)
                of[i] = rank[of[i]];
    }
    if (nu == 0) {
        free(uniq);
        uniq = NULL;
    }
    *names = uniq;
    *count = nu;
    uniq = NULL;
    rc = 0;
done:
    free(found);
    free(uniq);
    free(rank);
    free(table);
    return rc;
}

int
usage_gpus(const struct usage_reading *r, const char ***out, size_t *count)
{
    const char **v;
    size_t i, n = 0;
    int rc;

    *out = NULL;
    *count = 0;
    for (i = 0; r != NULL && i < r->ur_count; i++)
        n += r->ur_series[i].us_gpu != NULL;
    if (n == 0)
        return 0;
    if ((v = malloc(n * sizeof(*v))) == NULL)
        return -1;
    for (i = 0, n = 0; i < r->ur_count; i++)
        if (r->ur_series[i].us_gpu != NULL)
            v[n++] = r->ur_series[i].us_gpu;
    rc = distinct_sorted(v, n, out, count, NULL);
    free(v);
    return rc;
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
 * The reading indexed once for every GPU's decision, so that judging a GPU
 * costs its own series, not the whole reading: the series are sorted once
 * (sort_series), grouped per pod with the pod's sums and first impossible
 * value, and listed per GPU (sorted by GPU, then sorted position, so each GPU's
 * series come in the order the sums are taken in). Whether each GPU's reading
 * can be true is judged once, and so is which series of a pod lie on a GPU
 * whose reading cannot be (the taint SPEC "GPU scope" spreads).
 */
struct ix_pod {
    size_t p_from, p_to; /* its series in ix_sorted */
    double p_all;        /* summed over every series (every GPU, and none) */
    size_t p_bad;        /* the first impossible value, or NONE */
    size_t p_taint[2];   /* the first series (>0 bytes) on a GPU whose reading
                            cannot be true, and the first on another such GPU */
};

struct ix_ent {
    const struct usage_series *e_s; /* borrowed */
    size_t e_pos;                   /* in ix_sorted */
    size_t e_pod;                   /* in ix_pods, NONE without pod labels */
};

struct ix_gpu {
    const char *x_name;  /* borrowed from the reading */
    size_t x_from, x_to; /* its series in ix_ents */
    int x_bad;           /* its reading cannot be true */
};

struct usage_index {
    struct usage_limits ix_lim;
    struct usage_series **ix_sorted; /* owned */
    size_t ix_n;
    struct ix_pod *ix_pods; /* owned, in sorted (namespace, pod) order */
    size_t ix_npods;
    struct ix_ent *ix_ents; /* owned: the series naming a GPU */
    size_t ix_nents;
    struct ix_gpu *ix_gpus; /* owned, sorted by name */
    size_t ix_ngpus;
    size_t *ix_gpu_of;      /* owned: per sorted position, its GPU's index or NONE */
    char ix_ambiguous[192]; /* two series with one label set: why, else "" */
    double ix_node_bytes;   /* the named GPUs' totals summed: no pod holds more */
};

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

/* 1 with why set when GPU x's own reading cannot be true: the device's
 * figures, a series on it negative, NaN or infinite, one pod on it above its
 * total, or all on it together above it. Costs x's series only. */
static int
ix_gpu_bad(const struct usage_index *ix, const struct ix_gpu *x, char *why, size_t whylen)
{
    struct usage_summary one;
    struct pod_usage pu;
    struct usage_total t;
    size_t i, end;
    double sum = 0, on;

    if (gpu_total(&ix->ix_lim, x->x_name, &t, why, whylen) == 1)
        return 1;
    memset(&one, 0, sizeof(one));
    one.us_pods = &pu;
    for (i = x->x_from; i < x->x_to && ix->ix_ents[i].e_pod != NONE; i = end) {
        on = 0;
        for (end = i; end < x->x_to && ix->ix_ents[end].e_pod == ix->ix_ents[i].e_pod;
             end++) {
            if (bad_value(ix->ix_ents[end].e_s->us_bytes)) {
                say_bad(ix->ix_ents[end].e_s, x->x_name, why, whylen);
                return 1;
            }
            on += ix->ix_ents[end].e_s->us_bytes;
        }
        sum += on;
        pu.pu_namespace = ix->ix_ents[i].e_s->us_namespace;
        pu.pu_pod = ix->ix_ents[i].e_s->us_pod;
        pu.pu_bytes = pu.pu_gpu_bytes = on;
        one.us_count = 1;
        if (check_totals(&one, &t, why, whylen) == -1)
            return 1;
    }
    for (; i < x->x_to; i++) {
        if (bad_value(ix->ix_ents[i].e_s->us_bytes)) {
            say_bad(ix->ix_ents[i].e_s, x->x_name, why, whylen);
            return 1;
        }
        sum += ix->ix_ents[i].e_s->us_bytes;
    }
    one.us_count = 0;
    one.us_total_bytes = sum;
    return check_totals(&one, &t, why, whylen) == -1;
}

/* The pods of the sorted series, each with its sums and first bad value. */
static int
ix_group_pods(struct usage_index *ix)
{
    size_t i, end, n = 0;

    for (i = 0; i < ix->ix_n && attributed(ix->ix_sorted[i]); i++)
        if (i == 0 || !same_pod(ix->ix_sorted[i - 1], ix->ix_sorted[i]))
            n++;
    if (n > 0 && (ix->ix_pods = calloc(n, sizeof(*ix->ix_pods))) == NULL)
        return -1;
    for (i = 0; i < ix->ix_n && attributed(ix->ix_sorted[i]); i = end) {
        struct ix_pod *p = &ix->ix_pods[ix->ix_npods++];
        p->p_from = i;
        p->p_bad = p->p_taint[0] = p->p_taint[1] = NONE;
        for (end = i; end < ix->ix_n && attributed(ix->ix_sorted[end]) &&
                      same_pod(ix->ix_sorted[i], ix->ix_sorted[end]);
             end++) {
            p->p_all += ix->ix_sorted[end]->us_bytes;
            if (p->p_bad == NONE && bad_value(ix->ix_sorted[end]->us_bytes))
                p->p_bad = end;
        }
        p->p_to = end;
    }
    return 0;
}

/* The GPU-labelled series by GPU (then sorted position), the GPUs, and each
 * sorted position's GPU: grouped by hashing, placed by counting. */
static int
ix_list_gpus(struct usage_index *ix)
{
    const char **v = NULL, **names = NULL;
    size_t *at = NULL, i, pod = 0, g;
    int rc = -1;

    if ((ix->ix_gpu_of = malloc((ix->ix_n ? ix->ix_n : 1) * sizeof(size_t))) == NULL ||
        (v = malloc((ix->ix_n ? ix->ix_n : 1) * sizeof(*v))) == NULL)
        goto done;
    for (i = 0; i < ix->ix_n; i++) {
        v[i] = ix->ix_sorted[i]->us_gpu;
        ix->ix_nents += v[i] != NULL;
    }
    if (distinct_sorted(v, ix->ix_n, &names, &ix->ix_ngpus, ix->ix_gpu_of) == -1)
        goto done;
    if (ix->ix_nents > 0 &&
        ((ix->ix_ents = calloc(ix->ix_nents, sizeof(*ix->ix_ents))) == NULL ||
         (ix->ix_gpus = calloc(ix->ix_ngpus, sizeof(*ix->ix_gpus))) == NULL ||
         (at = calloc(ix->ix_ngpus, sizeof(*at))) == NULL))
        goto done;
    for (i = 0; i < ix->ix_n; i++)
        if ((g = ix->ix_gpu_of[i]) != NONE)
            ix->ix_gpus[g].x_to++; /* a count, for now */
    for (g = 0, i = 0; g < ix->ix_ngpus; g++) {
        size_t c = ix->ix_gpus[g].x_to;
        ix->ix_gpus[g] = (struct ix_gpu){names[g], i, i, 0};
        at[g] = i;
        i += c;
    }
    for (i = 0; i < ix->ix_n; i++) {
        while (pod < ix->ix_npods && ix->ix_pods[pod].p_to <= i)
            pod++;
        if ((g = ix->ix_gpu_of[i]) == NONE)
            continue;
        ix->ix_ents[at[g]++] = (struct ix_ent){
            ix->ix_sorted[i], i,
            pod < ix->ix_npods && i >= ix->ix_pods[pod].p_from ? pod : NONE};
        ix->ix_gpus[g].x_to = at[g];
    }
    rc = 0;
done:
    free(v);
    free(names);
    free(at);
    return rc;
}

/* Each GPU's plausibility and the node's capacity, then each pod's taints. */
static void
ix_judge(struct usage_index *ix)
{
    struct usage_total t;
    char why[512];
    size_t i, k;

    for (i = 0; i < ix->ix_ngpus; i++) {
        ix->ix_gpus[i].x_bad = ix_gpu_bad(ix, &ix->ix_gpus[i], why, sizeof(why));
        if (gpu_total(&ix->ix_lim, ix->ix_gpus[i].x_name, &t, why, sizeof(why)) == 1)
            t.ut_bytes = (double)ix->ix_lim.ul_total_mib * MIB;
        ix->ix_node_bytes += t.ut_bytes;
    }
    for (i = 0; i < ix->ix_npods; i++) {
        struct ix_pod *p = &ix->ix_pods[i];
        for (k = p->p_from; k < p->p_to && p->p_taint[1] == NONE; k++) {
            size_t gx = ix->ix_gpu_of[k];
            if (gx == NONE || !ix->ix_gpus[gx].x_bad || !(ix->ix_sorted[k]->us_bytes > 0))
                continue;
            if (p->p_taint[0] == NONE)
                p->p_taint[0] = k;
            else if (ix->ix_gpu_of[p->p_taint[0]] != gx)
                p->p_taint[1] = k;
        }
    }
}

struct usage_index *
usage_index_new(const struct usage_reading *r, const struct usage_limits *lim)
{
    struct usage_index *ix = calloc(1, sizeof(*ix));
    static const struct usage_reading none;

    if (ix == NULL)
        return NULL;
    ix->ix_lim = *lim;
    if (r == NULL)
        r = &none;
    ix->ix_n = r->ur_count;
    if (check_label_sets(r, ix->ix_ambiguous, sizeof(ix->ix_ambiguous)) == -1) {
        usage_index_free(ix);
        return NULL;
    }
    if ((ix->ix_n > 0 && sort_series(r, &ix->ix_sorted) == -1) ||
        ix_group_pods(ix) == -1 || ix_list_gpus(ix) == -1) {
        usage_index_free(ix);
        return NULL;
    }
    ix_judge(ix);
    return ix;
}

void
usage_index_free(struct usage_index *ix)
{
    if (ix == NULL)
        return;
    free(ix->ix_sorted);
    free(ix->ix_pods);
    free(ix->ix_ents);
    free(ix->ix_gpus);
    free(ix->ix_gpu_of);
    free(ix);
}

static const struct ix_gpu *
ix_find(const struct usage_index *ix, const char *gpu)
{
    size_t lo = 0, hi = ix->ix_ngpus, mid;
    int c;

    while (gpu != NULL && lo < hi) {
        mid = lo + (hi - lo) / 2;
        if ((c = strcmp(ix->ix_gpus[mid].x_name, gpu)) == 0)
            return &ix->ix_gpus[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Groups x's series into out; 1 with err set when a value cannot be true,
 * -1 when out of memory. A pod using x is judged by all its series. */
static int
ix_group_gpu(const struct usage_index *ix, const struct ix_gpu *x,
             struct usage_summary *out, char *err, size_t errlen)
{
    struct pod_usage *pu;
    size_t i, end;
    double g;

    if ((out->us_pods = calloc(x->x_to - x->x_from, sizeof(*out->us_pods))) == NULL)
        return -1;
    for (i = x->x_from; i < x->x_to && ix->ix_ents[i].e_pod != NONE; i = end) {
        const struct ix_pod *p = &ix->ix_pods[ix->ix_ents[i].e_pod];
        g = 0;
        for (end = i; end < x->x_to && ix->ix_ents[end].e_pod == ix->ix_ents[i].e_pod;
             end++)
            g += ix->ix_ents[end].e_s->us_bytes;
        if (p->p_bad != NONE) { /* its total would be unknown, and so its budget */
            say_bad(ix->ix_sorted[p->p_bad], x->x_name, err, errlen);
            return 1;
        }
        out->us_total_bytes += g;
        if (!(g > 0))
            continue; /* a series at 0 bytes: not a user of this GPU */
        pu = &out->us_pods[out->us_count++];
        pu->pu_namespace = ix->ix_ents[i].e_s->us_namespace;
        pu->pu_pod = ix->ix_ents[i].e_s->us_pod;
        pu->pu_bytes = p->p_all;
        pu->pu_gpu_bytes = g;
    }
    for (; i < x->x_to; i++) { /* series without pod labels */
        if (bad_value(ix->ix_ents[i].e_s->us_bytes)) {
            say_bad(ix->ix_ents[i].e_s, x->x_name, err, errlen);
            return 1;
        }
        out->us_unattributed_bytes += ix->ix_ents[i].e_s->us_bytes;
    }
    out->us_total_bytes += out->us_unattributed_bytes;
    return 0;
}

/*
 * SPEC "GPU scope": a pod using x that also uses a GPU whose reading cannot
 * be true has no knowable total (so no knowable overshoot); nor has one whose
 * use over every GPU is more than all the named GPUs hold (a huge series
 * without a GPU label, or sums running to +Inf). 1 with err set.
 */
static int
ix_tainted(const struct usage_index *ix, const struct ix_gpu *x, char *err, size_t errlen)
{
    char why[384];
    size_t i, end, k, gx = (size_t)(x - ix->ix_gpus);

    for (i = x->x_from; i < x->x_to && ix->ix_ents[i].e_pod != NONE; i = end) {
        const struct ix_pod *p = &ix->ix_pods[ix->ix_ents[i].e_pod];
        double g = 0;
        for (end = i; end < x->x_to && ix->ix_ents[end].e_pod == ix->ix_ents[i].e_pod;
             end++)
            g += ix->ix_ents[end].e_s->us_bytes;
        if (!(g > 0))
            continue; /* not a user of x */
        k = p->p_taint[0] != NONE && ix->ix_gpu_of[p->p_taint[0]] == gx ? p->p_taint[1]
                                                                        : p->p_taint[0];
        if (k != NONE) {
            const struct usage_series *s = ix->ix_sorted[k];
            ix_gpu_bad(ix, &ix->ix_gpus[ix->ix_gpu_of[k]], why, sizeof(why));
            snprintf(
                err, errlen,
                "%s/%s also uses GPU %s, whose reading cannot be true (%s): its total "
                "is unknowable, so GPU %s is not judged",
                s->us_namespace, s->us_pod, s->us_gpu, why, x->x_name);
            return 1;
        }
        if (!(p->p_all <= ix->ix_node_bytes)) {
            snprintf(err, errlen,
                     "%s/%s reports %lld MiB over every GPU, more than the %zu GPUs its "
                     "node's series name hold together (%lld MiB), which cannot be true: "
                     "GPU %s is not judged",
                     ix->ix_ents[i].e_s->us_namespace, ix->ix_ents[i].e_s->us_pod,
                     (long long)usage_bytes_to_mib(p->p_all), ix->ix_ngpus,
                     (long long)usage_bytes_to_mib(ix->ix_node_bytes), x->x_name);
            return 1;
        }
    }
    return 0;
}

int
usage_summarise_gpu_ix(const struct usage_index *ix, const char *gpu,
                       struct usage_summary *out, char *err, size_t errlen)
{
    const struct usage_limits *lim = &ix->ix_lim;
    const struct ix_gpu *x = ix_find(ix, gpu);
    struct usage_total t;
    char why[1024];
    int rc;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (ix->ix_ambiguous[0] != '\0') {
        snprintf(why, sizeof(why), "%s", ix->ix_ambiguous);
        goto fail;
    }
    if (x == NULL) {
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
    if ((rc = ix_group_gpu(ix, x, out, why, sizeof(why))) == -1) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    if (rc == 1 || check_totals(out, &t, why, sizeof(why)) == -1)
        goto fail;
    if (ix_tainted(ix, x, why, sizeof(why)))
        goto fail;
    return 0;

fail:
    usage_summary_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

size_t
usage_index_gpu_count(const struct usage_index *ix)
{
    return ix->ix_ngpus;
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
    struct usage_index *ix = usage_index_new(r, lim);
    int rc;

    if (ix == NULL) {
        memset(out, 0, sizeof(*out));
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = usage_summarise_gpu_ix(ix, gpu, out, err, errlen);
    usage_index_free(ix);
    return rc;
}
