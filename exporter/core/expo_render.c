/* expo_render.c -- the exporter's /metrics text from one poll (pure) */
#include "expo_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

static int
device_family(struct buf *out, const char *name, const char *help,
              const struct expo_status *st, const struct nvml_snapshot *snap,
              const struct attr_result *attr, int which)
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
           const struct nvml_snapshot *snap, const struct attr_result *attr)
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
    const struct pl_pod *x = *(const struct pl_pod *const *)a;
    const struct pl_pod *y = *(const struct pl_pod *const *)b;
    int c = strcmp(x->pp_namespace, y->pp_namespace);

    if (c == 0)
        c = strcmp(x->pp_name, y->pp_name);
    if (c == 0) /* the list's order: the earliest of a repeated pod sorts first */
        c = (x > y) - (x < y);
    return c;
}

/* Marks in repeat[] every pod whose namespace and name an earlier pod of the
 * list (one with a budget) already has: one series each, even
 * from a list that repeats a pod. Sorted (O(n log n)): a scan per pod was
 * 12.5 M comparisons a scrape on a 5,000-pod node. -1 when out of memory. */
static int
mark_repeats(const struct pl_pods *pods, unsigned char *repeat)
{
    const struct pl_pod **order;
    size_t n = 0;

    if (pods->pl_count == 0)
        return 0;
    if ((order = malloc(pods->pl_count * sizeof(*order))) == NULL)
        return -1;
    for (size_t i = 0; i < pods->pl_count; i++) {
        const struct pl_pod *p = &pods->pl_items[i];
        if (p->pp_budget == PL_BUDGET_OK)
            order[n++] = p;
    }
    qsort(order, n, sizeof(*order), by_namespace_name);
    for (size_t k = 1; k < n; k++)
        if (strcmp(order[k]->pp_namespace, order[k - 1]->pp_namespace) == 0 &&
            strcmp(order[k]->pp_name, order[k - 1]->pp_name) == 0)
            repeat[order[k] - pods->pl_items] = 1;
    free(order);
    return 0;
}

static int
budget_family(struct buf *out, const struct expo_status *st, const struct pl_pods *pods)
{
    const char *name = "gpu_pod_memory_budget_bytes";
    unsigned char *repeat;
    int rc = 0;

    if (expo_header(out, name, "gauge",
                    "GPU memory budget a pod declares (GPUMEM_RESOURCE: limits, else "
                    "requests, summed over containers), in bytes.") == -1)
        return -1;
    if (pods == NULL || pods->pl_count == 0)
        return 0;
    if ((repeat = calloc(pods->pl_count, 1)) == NULL)
        return -1;
    if (mark_repeats(pods, repeat) == -1)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < pods->pl_count; i++) {
        const struct pl_pod *p = &pods->pl_items[i];
        struct expo_label l[3] = {
            {"node", st->es_node}, {"namespace", p->pp_namespace}, {"pod", p->pp_name}};
        /* MiB as the resource is counted. (Finished pods are not in the list.) */
        if (p->pp_budget != PL_BUDGET_OK || repeat[i])
            continue;
        if (expo_sample(out, name, l, 3, (double)p->pp_budget_mib * 1048576.0) == -1)
            rc = -1;
    }
    free(repeat);
    return rc;
}

int
expo_render(struct buf *out, const struct expo_status *st,
            const struct nvml_snapshot *snap, const struct attr_result *attr,
            const struct pl_pods *pods)
{
    struct expo_label version = {"version", GVW_VERSION};

    if (st->es_up && snap != NULL && attr != NULL &&
        (pod_family(out, st, snap, attr) == -1 || budget_family(out, st, pods) == -1 ||
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
