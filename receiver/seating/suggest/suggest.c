/* suggest.c -- `budgets --suggest`: read the pods and a window of use, tally, print;
 * writes nothing
 *
 * One range query per node (chunked in time), never one per pod: the
 * query's sum by (namespace, pod) returns every pod of the node at once. The
 * first chunk is an hour; the next ones are sized from what it cost, so an
 * answer stays near SG_TARGET_BYTES whatever the node's pod count, and one
 * that still comes back over the cap is asked again in halves. */
#include "suggest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "prom.h"
#include "suggest_acc.h"
#include "suggest_fetch.h"
#include "suggest_print.h"
#include "prom_matrix.h"
#include "termtext.h"

#define SG_STEP_S 60
#define SG_FIRST_CHUNK 60
#define SG_MAX_CHUNK 10000 /* Prometheus refuses over 11,000 steps a series */
#define SG_TARGET_BYTES (16.0 * 1024 * 1024)
#define SG_DEFAULT_QUERY                                                                 \
    "sum by (namespace, pod) (gpu_pod_memory_used_bytes{node=\"$node\"})"

const char *
sg_query(const struct config *cfg)
{
    return strstr(cfg->c_used_query, "$node") != NULL ? cfg->c_used_query
                                                      : SG_DEFAULT_QUERY;
}

struct chunk {
    struct sg_acc *c_acc;
    struct prom_matrix_reader c_q;
    enum prom_matrix_rc c_rc;
    size_t c_series;
    uint64_t c_samples;
    char c_err[512];
};

static int
count_sample(const struct prom_matrix_labels *l, double t, size_t idx, double bytes,
             void *arg)
{
    struct chunk *c = arg;

    (void)t;
    c->c_samples++; /* both names are there: mr_names_required */
    return sg_acc_sample(c->c_acc, l->ml_namespace, l->ml_pod, idx, bytes);
}

static void
on_body(long status, const char *body, size_t len, void *arg)
{
    struct chunk *c = arg;
    char why[sizeof(c->c_err) - 16];

    c->c_rc = prom_matrix_read(body, len, &c->c_q, &c->c_series, why, sizeof(why));
    if (c->c_rc != PM_OK) /* the reader's line, said as Prometheus' */
        snprintf(c->c_err, sizeof(c->c_err), "%s%s",
                 c->c_rc == PM_NOMEM ? "" : "prometheus: ", why);
    if (status != 200 && c->c_rc != PM_ERROR_STATUS) {
        c->c_rc = PM_ERROR_STATUS;
        snprintf(c->c_err, sizeof(c->c_err), "prometheus: HTTP %ld", status);
    }
}

static int
exit_of(enum prom_matrix_rc rc)
{
    switch (rc) {
    case PM_OK:
        return SG_EXIT_OK;
    case PM_BAD_SAMPLE:
        return SG_EXIT_BAD_SAMPLE;
    case PM_NOMEM:
        return SG_EXIT_FAIL;
    default:
        return SG_EXIT_PROMETHEUS;
    }
}

/* Reads node's window into acc. An sg_exit; err says why when not OK. */
static int
read_node(struct sg_fetch *f, struct sg_acc *acc, size_t node_idx, const char *query,
          const struct config *cfg, char *err, size_t errlen)
{
    size_t idx = 0, chunk = SG_FIRST_CHUNK;
    int rc;

    while (idx < acc->a_points) {
        struct chunk c = {.c_acc = acc};
        size_t k = acc->a_points - idx < chunk ? acc->a_points - idx : chunk;
        int64_t t0 = acc->a_start + (int64_t)idx * acc->a_step;

        c.c_q = (struct prom_matrix_reader){
            .mr_ns_label = cfg->c_namespace_label,
            .mr_pod_label = cfg->c_pod_label,
            .mr_names_required = 1,
            .mr_bytes_only = 1,
            .mr_start = t0,
            .mr_step = acc->a_step,
            .mr_points = k,
            .mr_sample = count_sample,
            .mr_arg = &c,
        };
        sg_acc_chunk_begin(acc, node_idx, idx, k);
        rc = sg_fetch_range(f, query, t0, t0 + (int64_t)(k - 1) * acc->a_step,
                            acc->a_step, on_body, &c, err, errlen);
        if (rc == 1 && k > 1) { /* over the body cap: the same steps in halves */
            chunk = k / 2;
            continue;
        }
        if (rc != 0)
            return SG_EXIT_PROMETHEUS;
        if (c.c_rc != PM_OK) {
            snprintf(err, errlen, "%s", c.c_err);
            return exit_of(c.c_rc);
        }
        if ((rc = sg_acc_chunk_end(acc, err, errlen)) != 0)
            return rc == -2 ? SG_EXIT_BAD_SAMPLE : SG_EXIT_FAIL;
        idx += k;
        /* Size the next chunk from this one: ~30 bytes a sample. */
        double per_step = c.c_samples > 0 ? (double)c.c_samples / (double)k : 1.0;
        double next = SG_TARGET_BYTES / (30.0 * per_step);
        if (next > 4.0 * (double)k) /* a quiet stretch says little of the next one */
            next = 4.0 * (double)k;
        chunk = next > SG_MAX_CHUNK ? SG_MAX_CHUNK : next < 1 ? 1 : (size_t)next;
    }
    return SG_EXIT_OK;
}

/* The pods without a controller that matter (they hold a seat or used VRAM):
 * one line naming them. 1 when there are any. */
static int
bare_pods(const struct sg_acc *a)
{
    size_t n = 0;

    for (size_t i = 0; i < a->a_wl_count; i++) {
        const struct sg_workload *w = &a->a_wl[i];
        if (w->w_kind != NULL || !sg_workload_shown(w))
            continue;
        if (n++ == 0)
            fputs("gpu-vram-watchdog: budgets: no controller, so no suggestion or patch "
                  "(a bare pod does not come back; give it a Deployment or budget it by "
                  "hand): ",
                  stderr);
        else
            fputs(", ", stderr);
        termtext_put(stderr, w->w_label, SIZE_MAX);
    }
    if (n > 0)
        fputc('\n', stderr);
    return n > 0;
}

int
suggest_main(const struct config *cfg, const struct sg_opts *o)
{
    struct sg_fetch *f = NULL;
    struct sg_acc acc;
    struct pod_list *lists = NULL;
    char **nodes = NULL, err[768], note[512];
    size_t count = 0;
    int rc = SG_EXIT_FAIL, acc_ok = 0;
    int64_t end;
    double t0 = clock_mono_s();

    if ((f = sg_fetch_new(cfg, err, sizeof(err))) == NULL)
        goto fail;
    if (o->so_node != NULL) {
        if ((nodes = calloc(1, sizeof(char *))) == NULL ||
            (nodes[0] = strdup(o->so_node)) == NULL) {
            snprintf(err, sizeof(err), "out of memory");
            goto fail;
        }
        count = 1;
    } else if (sg_fetch_nodes(f, &nodes, &count, err, sizeof(err)) == -1) {
        goto fail;
    } else if (count == 0) {
        snprintf(err, sizeof(err), "no node matches GPU_NODE_SELECTOR=%s",
                 cfg->c_gpu_node_selector);
        goto fail;
    }
    end = (int64_t)time(NULL) / SG_STEP_S * SG_STEP_S;
    size_t points = (size_t)(o->so_window_s / SG_STEP_S);
    if (sg_acc_init(&acc, end - (int64_t)(points - 1) * SG_STEP_S, SG_STEP_S, points,
                    o->so_headroom_bp) == -1) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    acc_ok = 1;
    if ((lists = calloc(count, sizeof(*lists))) == NULL) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        int64_t cap = 0;
        int got = sg_fetch_capacity(f, nodes[i], &cap, note, sizeof(note)),
            known = got == 0;
        if (got == -2 && o->so_node != NULL) {
            /* A mistyped --node would otherwise read as "no samples". */
            snprintf(err, sizeof(err), "--node %s: no such node (%s)", nodes[i], note);
            goto fail;
        }
        if (sg_fetch_pods(f, nodes[i], &lists[i], err, sizeof(err)) == -1)
            goto fail;
        if (sg_acc_add_node(&acc, nodes[i], &lists[i], known ? NULL : note, cap) == -1) {
            snprintf(err, sizeof(err), "out of memory");
            goto fail;
        }
    }
    for (size_t i = 0; i < count; i++) {
        char *q = prom_substitute_node(sg_query(cfg), nodes[i], err, sizeof(err));
        if (q == NULL) {
            rc = SG_EXIT_USAGE;
            goto fail;
        }
        rc = read_node(f, &acc, i, q, cfg, err, sizeof(err));
        free(q);
        if (rc != SG_EXIT_OK)
            goto fail;
    }
    rc = SG_EXIT_FAIL;
    if (acc.a_samples == 0) {
        snprintf(err, sizeof(err),
                 "no samples of any pod in the last %llds (%s) on %zu node(s): "
                 "is the exporter scraped, and does the query select them?",
                 (long long)o->so_window_s, sg_query(cfg), count);
        rc = SG_EXIT_NO_DATA;
        goto fail;
    }
    if (sg_acc_finish(&acc) == -1) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    {
        uint64_t bytes, queries;
        char b[32], q[32], s[32], ms[32];
        sg_fetch_stats(f, &bytes, &queries);
        snprintf(b, sizeof(b), "%llu", (unsigned long long)bytes);
        snprintf(q, sizeof(q), "%llu", (unsigned long long)queries);
        snprintf(s, sizeof(s), "%llu", (unsigned long long)acc.a_samples);
        snprintf(ms, sizeof(ms), "%lld", (long long)((clock_mono_s() - t0) * 1000));
        log_event(LOG_LEVEL_INFO, "suggest read", "range_queries", q, "bytes", b,
                  "samples", s, "elapsed_ms", ms, (char *)NULL);
    }
    if (sg_print(stdout, &acc, o, sg_query(cfg), cfg->c_gpumem_resource) == -1) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    rc = bare_pods(&acc) ? SG_EXIT_NO_CONTROLLER : SG_EXIT_OK;
    goto done;
fail:
    termtext_line(stderr, "gpu-vram-watchdog: budgets: ", err);
done:
    if (acc_ok)
        sg_acc_free(&acc);
    for (size_t i = 0; lists != NULL && i < count; i++)
        pod_list_free(&lists[i]);
    free(lists);
    for (size_t i = 0; nodes != NULL && i < count; i++)
        free(nodes[i]);
    free(nodes);
    sg_fetch_free(f);
    return rc;
}
