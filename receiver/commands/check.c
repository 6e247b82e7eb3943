/* check.c -- `check`: re-verify now and print the decision, acting on nothing */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_format.h"
#include "clients.h"
#include "gather.h"
#include "gpu_nodes.h"
#include "kube.h"
#include "prom.h"
#include "termtext.h"
#include "verdict.h"

struct check;

/* One node's look; kept until everything is printed. */
struct look {
    struct check *l_check; /* borrowed: the run it belongs to */
    char *l_node;          /* owned */
    struct gather *l_g;    /* owned */
    struct verdict l_v;
    struct verdict *l_gpus; /* owned; GPU scope: one decision per GPU, else NULL */
    size_t l_gpu_count;
    int l_done;
};

struct check {
    const struct config *c_cfg;
    struct event_base *c_base;
    struct prom *c_prom;
    struct kube *c_kube;
    struct look *c_looks; /* owned array */
    size_t c_count;
    size_t c_pending;
    int c_failed;
};

static void
conclude(struct verdict *v, const struct gather_answer *gr, const struct config *cfg)
{
    verdict_set_result(v, verdict_from_gather(v, gr, cfg));
    if (gr->gr_status == GATHER_DECIDED && gr->gr_policy.pr_outcome == POLICY_VICTIM)
        verdict_set_victim(v, &gr->gr_policy.pr_candidates[0],
                           cfg->c_action == ACTION_DELETE ? "delete" : "evict");
}

static void
gathered(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct look *l = arg;
    struct check *c = l->l_check;

    (void)g;
    if (gr->gr_gpu_count > 0 &&
        (l->l_gpus = calloc(gr->gr_gpu_count, sizeof(*l->l_gpus))) != NULL) {
        l->l_gpu_count = gr->gr_gpu_count;
        for (size_t i = 0; i < gr->gr_gpu_count; i++) {
            verdict_init(&l->l_gpus[i], c->c_cfg, l->l_node, "check", "", 0);
            conclude(&l->l_gpus[i], &gr->gr_gpus[i], c->c_cfg);
        }
    } else {
        conclude(&l->l_v, gr, c->c_cfg); /* node scope (or no memory for the GPUs) */
    }
    l->l_done = 1;
    if (--c->c_pending == 0)
        event_base_loopbreak(c->c_base);
}

/* Starts looking at c->c_looks[i]. */
static void
start_look(struct check *c, size_t i)
{
    struct look *l = &c->c_looks[i];

    verdict_init(&l->l_v, c->c_cfg, l->l_node, "check", "", 0);
    l->l_check = c;
    l->l_g = gather_start(c->c_base, c->c_cfg, c->c_prom, c->c_kube, l->l_node, NULL,
                          gathered, l);
    if (l->l_g == NULL) {
        verdict_set_result(&l->l_v, RESULT_FAILED);
        verdict_error(&l->l_v, "out of memory");
        l->l_done = 1;
        return;
    }
    c->c_pending++;
}

static int
add_look(struct check *c, const char *node)
{
    struct look *grown = realloc(c->c_looks, (c->c_count + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    c->c_looks = grown;
    memset(&grown[c->c_count], 0, sizeof(*grown));
    if ((grown[c->c_count].l_node = strdup(node)) == NULL)
        return -1;
    c->c_count++;
    return 0;
}

/* No GPU node can be looked at: the one decision serve records for an alert
 * without a node label (SPEC: "if the nodes cannot be listed: skipped_kube
 * with an empty node"). error may be NULL. 0, or -1 when out of memory. */
static int
add_no_node(struct check *c, const char *reason, const char *error)
{
    struct look *l;

    if (add_look(c, "") == -1)
        return -1;
    l = &c->c_looks[c->c_count - 1]; /* the last look: nothing reallocs it after */
    l->l_check = c;
    verdict_init(&l->l_v, c->c_cfg, l->l_node, "check", "", 0);
    verdict_set_result(&l->l_v, RESULT_SKIPPED_KUBE);
    verdict_reason(&l->l_v, "%s", reason);
    if (error != NULL)
        verdict_error(&l->l_v, "%s", error);
    l->l_done = 1;
    return 0;
}

static int
node_listed(const char *node, void *arg)
{
    struct check *c = arg;

    if (add_look(c, node) == -1) {
        c->c_failed = 1;
        return -1;
    }
    return 0;
}

static void
nodes_listed(enum gpu_nodes_end end, const char *error, void *arg)
{
    struct check *c = arg;
    char reason[512];

    if (end != GPU_NODES_LISTED) {
        /* serve's situation for an alert without a node label, in check's words. */
        if (end != GPU_NODES_NONE)
            snprintf(reason, sizeof(reason),
                     "no --node given and the GPU nodes could not be listed");
        else
            snprintf(reason, sizeof(reason),
                     "no --node given and no node matches GPU_NODE_SELECTOR=%s",
                     c->c_cfg->c_gpu_node_selector);
        if (add_no_node(c, reason,
                        end != GPU_NODES_NONE ? (error ? error : "cannot list nodes")
                                              : NULL) == -1)
            c->c_failed = 1;
        event_base_loopbreak(c->c_base);
        return;
    }
    if (c->c_failed) {
        event_base_loopbreak(c->c_base);
        return;
    }
    for (size_t i = 0; i < c->c_count; i++)
        start_look(c, i);
    if (c->c_pending == 0)
        event_base_loopbreak(c->c_base);
}

/* The decisions of look i: one per GPU in GPU scope, else the node's. */
static size_t
decisions_of(const struct check *c, size_t i, const struct verdict **v)
{
    const struct look *l = &c->c_looks[i];

    *v = l->l_gpu_count > 0 ? l->l_gpus : &l->l_v;
    return l->l_gpu_count > 0 ? l->l_gpu_count : 1;
}

static void
print(const struct check *c, int json, int single)
{
    const struct verdict *v;
    size_t i, k, n;

    if (json) {
        json_t *arr = json_array();
        for (i = 0; arr != NULL && i < c->c_count; i++)
            for (k = 0, n = decisions_of(c, i, &v); k < n; k++)
                json_array_append_new(arr, audit_decision_json(&v[k].vd_d, -1));
        if (arr != NULL) {
            /* --node in node scope: one object; in GPU scope an array (SPEC). */
            json_t *out = single && c->c_count == 1 && c->c_looks[0].l_gpu_count == 0
                              ? json_array_get(arr, 0)
                              : arr;
            json_dumpf(out, stdout, AUDIT_JSON_FLAGS);
            fputc('\n', stdout);
        }
        json_decref(arr);
        return;
    }
    for (i = 0; i < c->c_count; i++)
        for (k = 0, n = decisions_of(c, i, &v); k < n; k++)
            audit_decision_print(stdout, &v[k].vd_d, -1);
}

/* How many printed decisions could not be judged (no telemetry, no API). */
static size_t
count_unjudged(const struct check *c, size_t *total)
{
    const struct verdict *v;
    size_t i, k, n, bad = 0;

    *total = 0;
    for (i = 0; i < c->c_count; i++)
        for (k = 0, n = decisions_of(c, i, &v); k < n; k++, (*total)++)
            if (v[k].vd_d.sd_result != NULL &&
                (strcmp(v[k].vd_d.sd_result, "skipped_telemetry") == 0 ||
                 strcmp(v[k].vd_d.sd_result, "skipped_kube") == 0))
                bad++;
    return bad;
}

int
check_main(const struct config *cfg, const char *node, int json)
{
    struct check c = {.c_cfg = cfg};
    char err[512];
    int rc = 1;

    if ((c.c_base = event_base_new()) == NULL ||
        clients_new(c.c_base, cfg, &c.c_prom, &c.c_kube, err, sizeof(err)) == -1) {
        termtext_line(stderr, "gpu-vram-watchdog: check: ",
                      c.c_base ? err : "cannot create the event loop");
        goto done;
    }
    if (node != NULL) {
        if (add_look(&c, node) == -1)
            goto done;
        start_look(&c, 0);
    } else if (c.c_kube == NULL) {
        if (add_no_node(&c,
                        "no --node given and no Kubernetes API server is configured "
                        "(set KUBE_API_URL)",
                        NULL) == -1)
            goto done;
    } else if (gpu_nodes_each(c.c_kube, cfg->c_gpu_node_selector, node_listed,
                              nodes_listed, &c) == -1) {
        if (add_no_node(&c, "no --node given and the GPU nodes could not be listed",
                        "the node list request could not be started") == -1)
            goto done;
    } else {
        event_base_dispatch(c.c_base); /* until the list, then every look, is done */
    }
    if (node != NULL && c.c_pending > 0)
        event_base_dispatch(c.c_base);
    if (!c.c_failed) {
        size_t unjudged = 0, total = 0;

        print(&c, json, node != NULL);
        unjudged = count_unjudged(&c, &total);
        rc = unjudged > 0;
        /* A script tells "nothing to do" (0) from "could not look" (1). */
        if (unjudged > 0)
            fprintf(stderr,
                    "gpu-vram-watchdog: check: %zu of %zu decisions could not be judged "
                    "(skipped_telemetry or skipped_kube: see each reason)\n",
                    unjudged, total);
    }
done:
    kube_free(c.c_kube);
    prom_free(c.c_prom);
    for (size_t i = 0; i < c.c_count; i++) {
        verdict_free(&c.c_looks[i].l_v);
        for (size_t k = 0; k < c.c_looks[i].l_gpu_count; k++)
            verdict_free(&c.c_looks[i].l_gpus[k]);
        free(c.c_looks[i].l_gpus);
        gather_free(c.c_looks[i].l_g);
        free(c.c_looks[i].l_node);
    }
    free(c.c_looks);
    if (c.c_base != NULL)
        event_base_free(c.c_base);
    return rc;
}
