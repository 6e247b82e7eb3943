/* exporter.c -- the sim's own simple exporter: per-process VRAM as Prometheus text */
#include "exporter.h"

#include <math.h>
#include <string.h>

#define MIB 1048576.0

/* Appends s as a label value, escaping \, " and newline as the exposition format
 * requires. */
static int
add_label_value(struct evbuffer *out, const char *s)
{
    const char *run = s;

    for (; *s != '\0'; s++) {
        const char *esc = *s == '\\'   ? "\\\\"
                          : *s == '"'  ? "\\\""
                          : *s == '\n' ? "\\n"
                                       : NULL;
        if (esc == NULL)
            continue;
        if (evbuffer_add(out, run, (size_t)(s - run)) != 0 ||
            evbuffer_add(out, esc, 2) != 0)
            return -1;
        run = s + 1;
    }
    return evbuffer_add(out, run, (size_t)(s - run));
}

/* Whole bytes: a real exporter reads an integer byte count from the driver. */
static long long
bytes(double mib)
{
    return (long long)llround(mib * MIB);
}

static int
render_processes(struct world *w, struct evbuffer *out)
{
    size_t i, j;

    for (i = 0; i < w->w_npods; i++) {
        const struct sim_pod *sp = &w->w_pods[i];
        const char *node = sp->sp_spec->po_node;
        /* Only running pods on a simulated node have processes on its GPUs; a host
         * process is nobody's pod. */
        if (sp->sp_state != POD_ALIVE || sp->sp_spec->po_node_idx < 0 ||
            sp->sp_spec->po_host)
            continue;
        for (j = 0; j < sp->sp_nprocs; j++) {
            long long b = bytes(world_proc_mib(w, sp, j));
            if (b <= 0)
                continue; /* an exited process leaves no series */
            if (evbuffer_add_printf(out, "gpu_pod_memory_used_bytes{node=\"") < 0 ||
                add_label_value(out, node) != 0 ||
                evbuffer_add_printf(out, "\",namespace=\"") < 0 ||
                add_label_value(out, sp->sp_spec->po_namespace) != 0 ||
                evbuffer_add_printf(out, "\",pod=\"") < 0 ||
                add_label_value(out, sp->sp_name) != 0 ||
                evbuffer_add_printf(out, "\",pid=\"%ld\"} %lld\n", sp->sp_pids[j], b) < 0)
                return -1;
        }
    }
    return 0;
}

int
exporter_render(struct world *w, struct evbuffer *out)
{
    const struct scenario *sc = w->w_sc;
    size_t g, n;

    world_advance(w);
    if (evbuffer_add_printf(
            out, "# HELP gpu_pod_memory_used_bytes GPU framebuffer memory used by one "
                 "process of a pod.\n"
                 "# TYPE gpu_pod_memory_used_bytes gauge\n") < 0 ||
        render_processes(w, out) != 0)
        return -1;
    if (evbuffer_add_printf(out, "# HELP gpu_memory_total_bytes GPU framebuffer size.\n"
                                 "# TYPE gpu_memory_total_bytes gauge\n") < 0)
        return -1;
    for (n = 0; n < sc->sc_nnodes; n++)
        for (g = 0; g < sc->sc_nodes[n].nd_ngpus; g++)
            if (evbuffer_add_printf(out, "gpu_memory_total_bytes{node=\"") < 0 ||
                add_label_value(out, sc->sc_nodes[n].nd_name) != 0 ||
                evbuffer_add_printf(
                    out, "\",gpu=\"%zu\"} %lld\n", g,
                    bytes((double)sc->sc_nodes[n].nd_gpus[g].gp_total_mib)) < 0)
                return -1;
    if (evbuffer_add_printf(
            out, "# HELP gpu_memory_free_bytes GPU framebuffer memory not in use.\n"
                 "# TYPE gpu_memory_free_bytes gauge\n") < 0)
        return -1;
    for (n = 0; n < sc->sc_nnodes; n++)
        for (g = 0; g < sc->sc_nodes[n].nd_ngpus; g++) {
            double free = (double)sc->sc_nodes[n].nd_gpus[g].gp_total_mib -
                          world_gpu_used_mib(w, (int)n, (int)g);
            if (evbuffer_add_printf(out, "gpu_memory_free_bytes{node=\"") < 0 ||
                add_label_value(out, sc->sc_nodes[n].nd_name) != 0 ||
                evbuffer_add_printf(out, "\",gpu=\"%zu\"} %lld\n", g,
                                    bytes(free > 0 ? free : 0)) < 0)
                return -1;
        }
    return 0;
}
