/* once.c -- `exporter --once`: one poll printed for a person on the node, every MiB
 * explained
 *
 * The same reads and the same attribution as the running exporter (nvml.c,
 * poller_read_pids(), attribute_process()), so what it prints is what
 * /metrics would say; only the printing is its own. */
#include "once.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "attribute.h"
#include "json_build.h"
#include "log.h"
#include "nvml.h"
#include "podmap.h"
#include "poller.h"
#include "termtext.h"

#define MIB 1048576.0

/* What attribute() made of one process entry, in the words of --format json. */
static const char *
why_word(enum attr_why w, int list_ok)
{
    switch (w) {
    case ATTR_NO_MEMORY:
        return "memory_unknown";
    case ATTR_NO_POD_CGROUP:
        return "no_pod_cgroup";
    case ATTR_POD_UNKNOWN:
        return list_ok ? "pod_not_on_node" : "pod_list_unavailable";
    default:
        return NULL;
    }
}

static const char *
why_text(enum attr_why w, int list_ok)
{
    switch (w) {
    case ATTR_NO_MEMORY:
        return "NVML cannot report its memory";
    case ATTR_NO_POD_CGROUP:
        return "no pod cgroup (a host process, or it has ended)";
    case ATTR_POD_UNKNOWN:
        return list_ok ? "its pod is not on this node" : "the pod list is unavailable";
    default:
        return "";
    }
}

/* One device's sums. */
struct sums {
    uint64_t used, pods, unattr, unattr_procs, no_proc, procs_known;
};

static void
device_sums(const struct nvml_device *d, const struct attr_pid *pids, size_t npids,
            const struct pod_list *pods, struct sums *s)
{
    memset(s, 0, sizeof(*s));
    s->used = d->nd_total > d->nd_free ? d->nd_total - d->nd_free : 0;
    for (size_t i = 0; i < d->nd_nprocs; i++) {
        const struct pod *pod;
        const char *container;
        uint64_t used;
        enum attr_why w =
            attribute_process(d, i, pids, npids, pods, &used, &pod, &container, NULL);
        if (w == ATTR_POD)
            s->pods = attr_add_sat(s->pods, used);
        else if (w == ATTR_NO_POD_CGROUP || w == ATTR_POD_UNKNOWN)
            s->unattr_procs = attr_add_sat(s->unattr_procs, used);
        s->procs_known = attr_add_sat(s->procs_known, used);
    }
    /* As attribute(): what no pod accounts for. */
    s->unattr = s->used > s->pods ? s->used - s->pods : 0;
    s->no_proc = s->used > s->procs_known ? s->used - s->procs_known : 0;
}

/* Every name below comes from outside (NVML's model and UUID, the API's pod
 * names, its error): each goes through termtext_put(), so none can move the
 * cursor, recolour the terminal or reorder the line. */
static void
put(FILE *out, const char *s)
{
    termtext_put(out, s, SIZE_MAX);
}

static void
print_table(FILE *out, const char *node, const struct nvml_snapshot *snap,
            const struct attr_pid *pids, size_t npids, const struct pod_list *pods,
            int list_ok, const char *list_why)
{
    fputs("node ", out);
    put(out, node);
    fprintf(out, ": %zu GPU%s; pod list: %s", snap->ns_count,
            snap->ns_count == 1 ? "" : "s", list_ok ? "read" : "unavailable: ");
    if (!list_ok)
        put(out, list_why);
    fputc('\n', out);
    for (size_t dv = 0; dv < snap->ns_count; dv++) {
        const struct nvml_device *d = &snap->ns_devices[dv];
        struct sums s;

        device_sums(d, pids, npids, pods, &s);
        fprintf(out, "\nGPU %u  ", d->nd_index);
        put(out, d->nd_uuid);
        fputs("  ", out);
        put(out, d->nd_model);
        fputc('\n', out);
        fprintf(out,
                "  total %.1f MiB   free %.1f MiB   used %.1f MiB (total - free)   "
                "unattributed %.1f MiB\n",
                (double)d->nd_total / MIB, (double)d->nd_free / MIB, (double)s.used / MIB,
                (double)s.unattr / MIB);
        fprintf(out,
                "  used %.1f = pods %.1f + unattributed %.1f MiB; unattributed = "
                "%.1f in processes without a known pod + %.1f held by no listed "
                "process (driver reserve, contexts, memory NVML does not report per "
                "process)\n",
                (double)s.used / MIB, (double)s.pods / MIB, (double)s.unattr / MIB,
                (double)s.unattr_procs / MIB, (double)s.no_proc / MIB);
        if (s.pods > s.used || s.procs_known > s.used)
            fprintf(out, "  note: NVML's per-process figures add up to more than the "
                         "device's used memory; the sums above are capped at used\n");
        fprintf(out, "  %8s %10s  %s\n", "PID", "MiB",
                "NAMESPACE/POD CONTAINER, or why unattributed");
        for (size_t i = 0; i < d->nd_nprocs; i++) {
            const struct pod *pod;
            const char *container;
            uint64_t used;
            enum attr_why w =
                attribute_process(d, i, pids, npids, pods, &used, &pod, &container, NULL);
            char mib[32];

            if (w == ATTR_DUPLICATE)
                continue;
            if (w == ATTR_NO_MEMORY)
                snprintf(mib, sizeof(mib), "?");
            else
                snprintf(mib, sizeof(mib), "%.1f", (double)used / MIB);
            if (w == ATTR_POD) {
                fprintf(out, "  %8" PRIu32 " %10s  ", d->nd_procs[i].np_pid, mib);
                put(out, pod->p_namespace);
                fputc('/', out);
                put(out, pod->p_name);
                fputc(' ', out);
                put(out, container ? container : "(container not matched)");
                fputc('\n', out);
            } else
                fprintf(out, "  %8" PRIu32 " %10s  unattributed: %s\n",
                        d->nd_procs[i].np_pid, mib, why_text(w, list_ok));
        }
        if (d->nd_nprocs == 0)
            fprintf(out, "  (no processes)\n");
    }
}

/* A byte figure: an integer, or past INT64_MAX (a saturated sum, a figure
 * NVML made up) a real, never a negative integer. */
static json_t *
bytes_json(uint64_t v)
{
    return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* Every json_*_new() below takes its value's reference even when it fails,
 * so each value is owned by its parent from the moment it is made. */
static json_t *
to_json(const char *node, const struct nvml_snapshot *snap, const struct attr_pid *pids,
        size_t npids, const struct pod_list *pods, int list_ok, const char *list_why)
{
    json_t *root = json_object(), *gpus = NULL, *pl = NULL;

    if (root == NULL)
        return NULL;
    if (jb_set(root, "node", json_string(node)) ||
        jb_set(root, "pod_list", pl = json_object()) ||
        jb_set(pl, "ok", json_boolean(list_ok)) ||
        jb_set(pl, "error", list_ok ? json_null() : json_string(list_why)) ||
        jb_set(root, "gpus", gpus = json_array()))
        goto oom;
    for (size_t dv = 0; dv < snap->ns_count; dv++) {
        const struct nvml_device *d = &snap->ns_devices[dv];
        json_t *g = json_object(), *procs = NULL;
        struct sums s;

        device_sums(d, pids, npids, pods, &s);
        if (g == NULL || json_array_append_new(gpus, g) == -1 ||
            jb_set(g, "index", json_integer(d->nd_index)) ||
            jb_set(g, "uuid", json_string(d->nd_uuid)) ||
            jb_set(g, "model", json_string(d->nd_model)) ||
            jb_set(g, "total_bytes", bytes_json(d->nd_total)) ||
            jb_set(g, "free_bytes", bytes_json(d->nd_free)) ||
            jb_set(g, "used_bytes", bytes_json(s.used)) ||
            jb_set(g, "pods_bytes", bytes_json(s.pods)) ||
            jb_set(g, "unattributed_bytes", bytes_json(s.unattr)) ||
            jb_set(g, "unattributed_process_bytes", bytes_json(s.unattr_procs)) ||
            jb_set(g, "no_process_bytes", bytes_json(s.no_proc)) ||
            jb_set(g, "processes", procs = json_array()))
            goto oom;
        for (size_t i = 0; i < d->nd_nprocs; i++) {
            const struct pod *pod;
            const char *container;
            uint64_t used;
            enum attr_why w =
                attribute_process(d, i, pids, npids, pods, &used, &pod, &container, NULL);
            json_t *p;

            if (w == ATTR_DUPLICATE)
                continue;
            if ((p = json_object()) == NULL || json_array_append_new(procs, p) == -1 ||
                jb_set(p, "pid", json_integer(d->nd_procs[i].np_pid)) ||
                jb_set(p, "bytes",
                       w == ATTR_NO_MEMORY ? json_null() : bytes_json(used)) ||
                jb_set(p, "namespace",
                       w == ATTR_POD ? json_string(pod->p_namespace) : json_null()) ||
                jb_set(p, "pod",
                       w == ATTR_POD ? json_string(pod->p_name) : json_null()) ||
                jb_set(p, "container",
                       w == ATTR_POD ? json_string(container ? container : "")
                                     : json_null()) ||
                jb_set(p, "why",
                       w == ATTR_POD ? json_null() : json_string(why_word(w, list_ok))))
                goto oom;
        }
    }
    return root;
oom:
    json_decref(root);
    return NULL;
}

int
exporter_once(const struct exporter_config *cfg, const struct kube_opts *ko, int json)
{
    struct nvml *n;
    struct nvml_snapshot snap;
    struct attr_pid *pids = NULL;
    size_t npids = 0;
    struct event_base *base = NULL;
    struct podmap *pm = NULL;
    const char *why = "";
    char err[512];
    int state, rc = 1;

    memset(&snap, 0, sizeof(snap));
    if ((n = nvml_open(cfg->ec_nvml_library, err, sizeof(err))) == NULL ||
        nvml_read(n, &snap, err, sizeof(err)) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: exporter --once: cannot read NVML: %s\n",
                err);
        nvml_close(n);
        return 1;
    }
    nvml_close(n);
    /* Processes first, then the pods: the list is then the newer of the two. */
    if (poller_read_pids(cfg->ec_proc_root, &snap, &pids, &npids) == -1 ||
        (base = event_base_new()) == NULL ||
        (pm = podmap_new(base, ko, cfg->ec_node_name, cfg->ec_gpumem_resource,
                         &cfg->ec_budget_sources, cfg->ec_dra_driver, NULL, NULL, err,
                         sizeof(err))) == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: exporter --once: %s\n",
                pm == NULL && base != NULL ? err : "out of memory");
        goto done;
    }
    /* The client's own timeouts (HTTP_TIMEOUT) end the wait. */
    while ((state = podmap_state(pm, &why)) == PODMAP_LISTING)
        if (event_base_loop(base, EVLOOP_ONCE) == -1)
            break;
    if (json) {
        json_t *j = to_json(cfg->ec_node_name, &snap, pids, npids, podmap_pods(pm),
                            state == PODMAP_OK, why);
        if (j == NULL || json_dumpf(j, stdout, JSON_INDENT(2)) == -1) {
            fprintf(stderr, "gpu-vram-watchdog: exporter --once: out of memory\n");
            json_decref(j);
            goto done;
        }
        json_decref(j);
        fputc('\n', stdout);
    } else {
        print_table(stdout, cfg->ec_node_name, &snap, pids, npids, podmap_pods(pm),
                    state == PODMAP_OK, why);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
done:
    podmap_free(pm);
    if (base != NULL)
        event_base_free(base);
    free(pids);
    nvml_snapshot_free(&snap);
    return rc;
}
