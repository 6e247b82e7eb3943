/* expo_render.c -- the exporter's /metrics text from one poll (pure) */
#include "expo_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

static int
device_family(struct buf *out, const char *name, const char *help,
              const struct expo_status *st, const struct nvml_snapshot *snap,
              const struct attr_tally *attr, int which)
{
    char gpu[16];

    if (expo_header(out, name, "gauge", help) == -1)
        return -1;
    for (size_t i = 0; i < snap->ns_count; i++) {
        const struct nvml_device *d = &snap->ns_devices[i];
        struct expo_label l[4] = {{"node", st->es_node},
                                  {"gpu", gpu},
                                  {"uuid", d->nd_uuid},
                                  {"model", d->nd_model}};
        double v = which == 0   ? (double)d->nd_total
                   : which == 1 ? (double)attr->ar_devices[i].ad_used
                   : which == 2 ? (double)d->nd_free
                                : (double)attr->ar_devices[i].ad_unattributed;
        snprintf(gpu, sizeof(gpu), "%u", d->nd_index);
        if (expo_sample(out, name, l, which == 3 ? 3 : 4, v) == -1)
            return -1;
    }
    return 0;
}

static int
pod_family(struct buf *out, const struct expo_status *st,
           const struct nvml_snapshot *snap, const struct attr_tally *attr)
{
    const char *name = "gpu_pod_memory_used_bytes";
    char gpu[16];

    if (expo_header(out, name, "gauge",
                    "GPU memory used by a container's processes on a GPU, in bytes.") ==
        -1)
        return -1;
    for (size_t i = 0; i < attr->ar_nseries; i++) {
        const struct attr_series *s = &attr->ar_series[i];
        const struct nvml_device *d = &snap->ns_devices[s->as_device];
        struct expo_label l[6] = {{"node", st->es_node}, {"namespace", s->as_namespace},
                                  {"pod", s->as_pod},    {"container", s->as_container},
                                  {"gpu", gpu},          {"uuid", d->nd_uuid}};
        snprintf(gpu, sizeof(gpu), "%u", d->nd_index);
        if (expo_sample(out, name, l, 6, (double)s->as_bytes) == -1)
            return -1;
    }
    return 0;
}

static int
by_namespace_name(const void *a, const void *b)
{
    const struct pod *x = *(const struct pod *const *)a;
    const struct pod *y = *(const struct pod *const *)b;
    int c = strcmp(x->p_namespace, y->p_namespace);

    if (c == 0)
        c = strcmp(x->p_name, y->p_name);
    if (c == 0) /* the list's order: the earliest of a repeated pod sorts first */
        c = (x > y) - (x < y);
    return c;
}

/* Marks in repeat[] every pod whose namespace and name an earlier pod of the
 * list (one with a budget) already has: one series each, even
 * from a list that repeats a pod. Sorted (O(n log n)): a scan per pod was
 * 12.5 M comparisons a scrape on a 5,000-pod node. -1 when out of memory. */
static int
mark_repeats(const struct pod_list *pods, const unsigned char *have,
             unsigned char *repeat)
{
    const struct pod **order;
    size_t n = 0;

    if (pods->pl_count == 0)
        return 0;
    if ((order = malloc(pods->pl_count * sizeof(*order))) == NULL)
        return -1;
    for (size_t i = 0; i < pods->pl_count; i++)
        if (have[i])
            order[n++] = &pods->pl_pods[i];
    qsort(order, n, sizeof(*order), by_namespace_name);
    for (size_t k = 1; k < n; k++)
        if (strcmp(order[k]->p_namespace, order[k - 1]->p_namespace) == 0 &&
            strcmp(order[k]->p_name, order[k - 1]->p_name) == 0)
            repeat[order[k] - pods->pl_pods] = 1;
    free(order);
    return 0;
}

static int
by_series_pod(const void *a, const void *b)
{
    const struct attr_series *x = *(const struct attr_series *const *)a;
    const struct attr_series *y = *(const struct attr_series *const *)b;
    int c = strcmp(x->as_namespace, y->as_namespace);

    return c != 0 ? c : strcmp(x->as_pod, y->as_pod);
}

/* The share budgets of one poll: each PL_BUDGET_SHARE pod by the totals of the
 * GPUs its series are on (the series sorted by pod, bisected), else the node's
 * GPUs when one size. mib[i] and have[i] per pod; an unresolved pod is told to
 * st->es_unresolved. -1 when out of memory. */
static int
resolve_shares(const struct expo_status *st, const struct nvml_snapshot *snap,
               const struct attr_tally *attr, const struct pod_list *pods, int64_t *mib,
               unsigned char *have)
{
    const struct attr_series **idx = NULL;
    uint64_t *all = NULL, *mine = NULL;
    size_t i, n = attr->ar_nseries;
    int rc = -1;

    if ((n > 0 && (idx = malloc(n * sizeof(*idx))) == NULL) ||
        (snap->ns_count > 0 && ((all = malloc(snap->ns_count * sizeof(*all))) == NULL ||
                                (mine = malloc(snap->ns_count * sizeof(*mine))) == NULL)))
        goto out;
    for (i = 0; i < n; i++)
        idx[i] = &attr->ar_series[i];
    if (n > 0)
        qsort(idx, n, sizeof(*idx), by_series_pod);
    for (i = 0; i < snap->ns_count; i++)
        all[i] = snap->ns_devices[i].nd_total;
    for (i = 0; i < pods->pl_count; i++) {
        const struct pod *p = &pods->pl_pods[i];
        size_t lo = 0, hi = n, nmine = 0;
        char why[160];

        if (podlist_budget(p) != PL_BUDGET_SHARE)
            continue;
        while (lo < hi) { /* the first series of p */
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(idx[mid]->as_namespace, p->p_namespace);
            if (c == 0)
                c = strcmp(idx[mid]->as_pod, p->p_name);
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n && strcmp(idx[lo]->as_namespace, p->p_namespace) == 0 &&
               strcmp(idx[lo]->as_pod, p->p_name) == 0;
             lo++)
            if (nmine < snap->ns_count)
                mine[nmine++] = snap->ns_devices[idx[lo]->as_device].nd_total;
        if (podlist_share_mib(p, mine, nmine, all, snap->ns_count, &mib[i], why,
                              sizeof(why)) == 0)
            have[i] = 1;
        else if (st->es_unresolved != NULL)
            st->es_unresolved(p, why, st->es_arg);
    }
    rc = 0;
out:
    free(idx);
    free(all);
    free(mine);
    return rc;
}

static int
budget_family(struct buf *out, const struct expo_status *st,
              const struct nvml_snapshot *snap, const struct attr_tally *attr,
              const struct pod_list *pods)
{
    const char *name = "gpu_pod_memory_budget_bytes";
    unsigned char *repeat = NULL, *have = NULL;
    int64_t *mib = NULL;
    int rc = 0;

    if (expo_header(out, name, "gauge",
                    "GPU memory budget a pod declares (the first of BUDGET_SOURCES it "
                    "declares; GPUMEM_RESOURCE: limits, else requests, summed over "
                    "containers), in bytes.") == -1)
        return -1;
    if (pods == NULL || pods->pl_count == 0)
        return 0;
    if ((repeat = calloc(pods->pl_count, 1)) == NULL ||
        (have = calloc(pods->pl_count, 1)) == NULL ||
        (mib = calloc(pods->pl_count, sizeof(*mib))) == NULL) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < pods->pl_count; i++)
        if (podlist_budget(&pods->pl_pods[i]) == PL_BUDGET_OK) {
            have[i] = 1;
            mib[i] = pods->pl_pods[i].p_budget_mib;
        }
    if (resolve_shares(st, snap, attr, pods, mib, have) == -1 ||
        mark_repeats(pods, have, repeat) == -1)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < pods->pl_count; i++) {
        const struct pod *p = &pods->pl_pods[i];
        struct expo_label l[3] = {
            {"node", st->es_node}, {"namespace", p->p_namespace}, {"pod", p->p_name}};
        /* MiB as the resource is counted. (Finished pods are not in the list.) */
        if (!have[i] || repeat[i])
            continue;
        if (expo_sample(out, name, l, 3, (double)mib[i] * 1048576.0) == -1)
            rc = -1;
    }
out:
    free(repeat);
    free(have);
    free(mib);
    return rc;
}

int
expo_render(struct buf *out, const struct expo_status *st,
            const struct nvml_snapshot *snap, const struct attr_tally *attr,
            const struct pod_list *pods)
{
    struct expo_label version = {"version", GVW_VERSION};

    if (st->es_up && snap != NULL && attr != NULL &&
        (pod_family(out, st, snap, attr) == -1 ||
         budget_family(out, st, snap, attr, pods) == -1 ||
         device_family(out, "gpu_memory_total_bytes",
                       "GPU framebuffer memory as NVML reports it, in bytes.", st, snap,
                       attr, 0) == -1 ||
         device_family(
             out, "gpu_memory_used_bytes",
             "GPU memory in use (total - free, driver-reserved memory included), "
             "in bytes.",
             st, snap, attr, 1) == -1 ||
         device_family(out, "gpu_memory_free_bytes",
                       "Free GPU memory as NVML reports it, in bytes.", st, snap, attr,
                       2) == -1 ||
         device_family(
             out, "gpu_memory_unattributed_bytes",
             "GPU memory in use that no pod accounts for (driver, host processes, "
             "processes whose pod is unknown), in bytes.",
             st, snap, attr, 3) == -1))
        return -1;
    if (expo_header(out, "gpu_vram_exporter_up", "gauge",
                    "1 when the last poll read NVML, else 0.") == -1 ||
        expo_sample(out, "gpu_vram_exporter_up", NULL, 0, st->es_up ? 1 : 0) == -1 ||
        expo_header(out, "gpu_vram_exporter_poll_duration_seconds", "gauge",
                    "How long the last poll took.") == -1 ||
        expo_sample(out, "gpu_vram_exporter_poll_duration_seconds", NULL, 0,
                    st->es_poll_duration) == -1 ||
        expo_header(out, "gpu_vram_exporter_build_info", "gauge",
                    "Build information; the value is always 1.") == -1 ||
        expo_sample(out, "gpu_vram_exporter_build_info", &version, 1, 1) == -1 ||
        expo_header(out, "gpu_vram_exporter_budget_errors_total", "counter",
                    "Pods whose GPU memory budget could not be read (bad quantity, "
                    "negative), each counted once.") == -1 ||
        expo_sample(out, "gpu_vram_exporter_budget_errors_total", NULL, 0,
                    (double)st->es_budget_errors) == -1)
        return -1;
    if (st->es_last_poll > 0 &&
        (expo_header(out, "gpu_vram_exporter_last_poll_timestamp_seconds", "gauge",
                     "Unix time of the last poll that read NVML.") == -1 ||
         buf_printf(out, "gpu_vram_exporter_last_poll_timestamp_seconds %.3f\n",
                    st->es_last_poll) == -1))
        return -1;
    return 0;
}
