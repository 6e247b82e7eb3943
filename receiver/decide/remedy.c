/* remedy.c -- the engine: trigger alerts in, a decision started per node (or GPU) */
#include "remedy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_nodes.h"
#include "httpc.h"
#include "kube.h"
#include "log.h"
#include "node_name.h"
#include "remedy_int.h"

/* Alert context carried while the GPU nodes are listed. */
struct fanout {
    struct remedy *f_r;
    char *f_trigger, *f_fingerprint, *f_starving_ns, *f_gpu; /* owned */
    int64_t f_alert_id;
    size_t f_bad;            /* listed names that are not node names */
    const char *f_first_bad; /* the first of them (borrowed from the list) */
};

/* --- alert intake: one decision per node --------------------------------- */

/* Starts one node's decision (one GPU's when gpu is set), or records why it
 * is held back. */
static void
begin(struct remedy *r, const char *node, const char *gpu, const char *trigger,
      const char *fp, const char *starving_ns, int64_t alert_id)
{
    struct node_state *n = brakes_node_get(r, node, gpu), *whole;
    double now = clock_mono_s();
    char reason[1024];

    if (r->r_stopping) {
        decision_record_now_gpu(r, node, gpu, trigger, fp, alert_id, RESULT_FAILED,
                                "the daemon is stopping; no decision was started", NULL);
        return;
    }
    if (n == NULL) {
        decision_record_now_gpu(r, node, gpu, trigger, fp, alert_id, RESULT_FAILED,
                                "no decision was started",
                                "too many nodes tracked, or out of memory");
        return;
    }
    if (brakes_held_back(n, now, reason, sizeof(reason))) {
        decision_record_now_gpu(r, node, gpu, trigger, fp, alert_id, RESULT_COALESCED,
                                reason, NULL);
        return;
    }
    /* A GPU's trigger also waits for a node-wide look (it covers this GPU).
     * The node's own SETTLE window is only ever opened in node scope, so a
     * trigger it holds back is about the node: its row names no GPU. */
    if (gpu != NULL && (whole = brakes_node_get(r, node, NULL)) != NULL &&
        brakes_held_back(whole, now, reason, sizeof(reason))) {
        decision_record_now_gpu(r, node, whole->n_busy ? gpu : NULL, trigger, fp,
                                alert_id, RESULT_COALESCED, reason, NULL);
        return;
    }
    /* MAX_CONCURRENT_DECISIONS: past it, wait in order (its row written now). */
    if (dqueue_must_wait(r))
        dqueue_push(r, n, trigger, fp, starving_ns, alert_id);
    else
        dqueue_launch(r, n, trigger, fp, starving_ns, alert_id, 0);
}

static void
fanout_free(struct fanout *f)
{
    free(f->f_trigger);
    free(f->f_fingerprint);
    free(f->f_starving_ns);
    free(f->f_gpu);
    free(f);
}

/* The node list named names that are not node names (a broken or hostile API
 * server): one row says so, naming the first; none of them is looked at. */
static void
skip_bad_listed(struct remedy *r, const struct fanout *f, const char *first, size_t n)
{
    char shown[NODE_NAME_SHOWN], reason[1024];

    log_warnx("%s: the GPU node list holds %zu names that are not Kubernetes node "
              "names; they are skipped",
              __func__, n);
    snprintf(reason, sizeof(reason),
             "the GPU node list holds %zu name%s that %s not a Kubernetes node name (a "
             "DNS-1123 subdomain of at most %d characters), the first %s; %s not "
             "looked at",
             n, n == 1 ? "" : "s", n == 1 ? "is" : "are", NODE_NAME_MAX,
             node_name_show(first, shown, sizeof(shown)), n == 1 ? "it is" : "they are");
    decision_record_now(r, "", f->f_trigger, f->f_fingerprint, f->f_alert_id,
                        RESULT_SKIPPED_KUBE, reason, NULL);
}

/* One listed GPU node: only a real node name keys a brake or reaches a
 * selector; the others are counted, and said once the list is done. */
static int
node_listed(const char *node, void *arg)
{
    struct fanout *f = arg;

    if (!node_name_ok(node)) {
        if (f->f_bad++ == 0)
            f->f_first_bad = node;
        return 0;
    }
    begin(f->f_r, node, f->f_gpu, f->f_trigger, f->f_fingerprint, f->f_starving_ns,
          f->f_alert_id);
    return 0;
}

static void
nodes_listed(enum gpu_nodes_end end, const char *error, void *arg)
{
    struct fanout *f = arg;
    struct remedy *r = f->f_r;
    char reason[1024];

    if (end == GPU_NODES_FAILED) {
        decision_record_now(
            r, "", f->f_trigger, f->f_fingerprint, f->f_alert_id, RESULT_SKIPPED_KUBE,
            "the alert names no node and the GPU nodes could not be listed", error);
    } else if (end == GPU_NODES_NONE) {
        snprintf(reason, sizeof(reason),
                 "the alert names no node and no node matches GPU_NODE_SELECTOR=%s",
                 r->r_cfg->c_gpu_node_selector);
        decision_record_now(r, "", f->f_trigger, f->f_fingerprint, f->f_alert_id,
                            RESULT_SKIPPED_KUBE, reason, NULL);
    } else if (end == GPU_NODES_LISTED && f->f_bad > 0) {
        skip_bad_listed(r, f, f->f_first_bad, f->f_bad);
    }
    fanout_free(f);
}

/* An alert label that cannot name what it should decides nothing: one row
 * (no node: the label names none) says which label, shown escaped. Checked
 * before anything keys on it (the brakes, the pod list, the queries), so
 * "=gpu-1" can never pass for gpu-1 nor narrow a field selector. */
static void
skip_bad_label(struct remedy *r, const struct alert *a, int64_t alert_id,
               const char *label, const char *value, enum decision_result result,
               const char *why)
{
    char shown[NODE_NAME_SHOWN], reason[1024];

    snprintf(reason, sizeof(reason), "the alert's label %.64s=%s %s", label,
             node_name_show(value, shown, sizeof(shown)), why);
    decision_record_now(r, "", a->a_alertname, a->a_fingerprint, alert_id, result, reason,
                        NULL);
}

void
remedy_on_alert(struct remedy *r, const struct alert *a, int64_t alert_id)
{
    const struct config *cfg = r->r_cfg;
    const char *node, *starving, *gpu = NULL;
    struct fanout *f;

    /* PREDICT=true decides on GPUVRAMExhaustionPredicted, listed or not. */
    if (!a->a_firing ||
        (!strlist_contains(&cfg->c_trigger_alerts, a->a_alertname) &&
         !(cfg->c_predict && strcmp(a->a_alertname, PREDICT_ALERTNAME) == 0)))
        return;
    if (r->r_store == NULL) { /* can't happen: alerts are only accepted once it opens */
        log_warnx("%s: no audit store; no decision", __func__);
        return;
    }
    /* ALERT_NODE_LABEL empty: alerts name no node, every GPU node is looked at. */
    node = cfg->c_alert_node_label[0] != '\0' ? alert_label(a, cfg->c_alert_node_label)
                                              : NULL;
    starving = alert_label(a, "namespace");
    /* GPU scope is off with GPU_LABEL empty; an empty label names no GPU. */
    if (cfg->c_gpu_label[0] != '\0' && cfg->c_alert_gpu_label[0] != '\0' &&
        (gpu = alert_label(a, cfg->c_alert_gpu_label)) != NULL && gpu[0] == '\0')
        gpu = NULL;
    if (node != NULL && node[0] != '\0' && !node_name_ok(node)) {
        skip_bad_label(r, a, alert_id, cfg->c_alert_node_label, node, RESULT_SKIPPED_KUBE,
                       "is not a Kubernetes node name (a DNS-1123 subdomain of at most "
                       "253 characters); no node is looked at");
        return;
    }
    if (gpu != NULL && strnlen(gpu, USAGE_GPU_NAME_MAX + 1) > USAGE_GPU_NAME_MAX) {
        skip_bad_label(r, a, alert_id, cfg->c_alert_gpu_label, gpu,
                       RESULT_SKIPPED_TELEMETRY,
                       "is longer than any GPU's name (" USAGE_GPU_NAME_MAX_TEXT
                       " bytes); no GPU is looked at");
        return;
    }
    if (node != NULL && node[0] != '\0') {
        begin(r, node, gpu, a->a_alertname, a->a_fingerprint, starving, alert_id);
        return;
    }
    if (r->r_kube == NULL) {
        decision_record_now(
            r, "", a->a_alertname, a->a_fingerprint, alert_id, RESULT_SKIPPED_KUBE,
            "the alert names no node and no Kubernetes API server is configured", NULL);
        return;
    }
    if ((f = calloc(1, sizeof(*f))) == NULL ||
        (f->f_trigger = strdup(a->a_alertname)) == NULL ||
        (f->f_fingerprint = strdup(a->a_fingerprint)) == NULL ||
        (starving != NULL && (f->f_starving_ns = strdup(starving)) == NULL) ||
        (gpu != NULL && (f->f_gpu = strdup(gpu)) == NULL)) {
        if (f != NULL)
            fanout_free(f);
        log_warnx("%s: out of memory", __func__);
        return;
    }
    f->f_r = r;
    f->f_alert_id = alert_id;
    if (gpu_nodes_each(r->r_kube, cfg->c_gpu_node_selector, node_listed, nodes_listed,
                       f) == -1) {
        decision_record_now(
            r, "", f->f_trigger, f->f_fingerprint, alert_id, RESULT_SKIPPED_KUBE,
            "the alert names no node and the GPU nodes could not be listed",
            "the node list request could not be started");
        fanout_free(f);
    }
}

/* --- the engine ---------------------------------------------------------- */

struct remedy *
remedy_new(struct event_base *base, const struct config *cfg, struct prom *prom,
           struct kube *kube)
{
    struct remedy *r = calloc(1, sizeof(*r));
    char err[256];

    if (r == NULL)
        return NULL;
    r->r_base = base;
    r->r_cfg = cfg;
    r->r_prom = prom;
    r->r_kube = kube;
    if (cfg->c_max_recycles_per_hour > 0 &&
        (r->r_recycles = calloc(cfg->c_max_recycles_per_hour > MAX_BRAKE_RING
                                    ? MAX_BRAKE_RING
                                    : (size_t)cfg->c_max_recycles_per_hour,
                                sizeof(double))) == NULL) {
        free(r);
        return NULL;
    }
    if (dqueue_init(r) == -1) {
        free(r->r_recycles);
        free(r);
        return NULL;
    }
    if (cfg->c_release_wait_ms > 0 &&
        (r->r_release_client = release_client_new(base, err, sizeof(err))) == NULL) {
        log_warnx("%s: release client: %s", __func__, err);
        dqueue_free(r);
        free(r->r_recycles);
        free(r);
        return NULL;
    }
    return r;
}

void
remedy_set_store(struct remedy *r, struct store *s)
{
    r->r_store = s;
}

size_t
remedy_in_flight(const struct remedy *r)
{
    return r->r_in_flight;
}

void
remedy_shutdown(struct remedy *r, void (*drained)(void *), void *arg)
{
    struct decision *d, *next;

    r->r_stopping = 1;
    r->r_drained = drained;
    r->r_drained_arg = arg;
    /* Waiting decisions never start: their rows end failed (interrupted). */
    dqueue_drain(r);
    for (d = r->r_decisions; d != NULL; d = next) {
        next = d->d_next_in_list; /* decision_interrupt() frees d, and only d */
        switch (d->d_phase) {
        case PH_GATHER:
            gather_free(d->d_g); /* detached: nothing was asked that changes anything */
            d->d_g = NULL;
            d->d_gr = NULL;
            decision_interrupt(d);
            break;
        case PH_VERIFY:
        case PH_FINISHING:
        case PH_RELEASE:
        case PH_ACT_WAIT:
            decision_interrupt(d);
            break;
        case PH_ACT:
        case PH_PROBE:
            break; /* its answer, or its cancellation, completes it */
        }
    }
    decision_check_drained(r);
}

void
remedy_free(struct remedy *r)
{
    struct node_state *n, *next;

    if (r == NULL)
        return;
    r->r_drained = NULL;
    r->r_stopping = 1; /* a freed slot starts nothing now */
    while (r->r_decisions != NULL)
        decision_free(r->r_decisions);
    predict_forget_calls(r);
    dqueue_free(r);
    for (n = r->r_nodes; n != NULL; n = next) {
        next = n->n_next;
        free(n->n_name);
        free(n->n_gpu);
        free(n);
    }
    httpc_free(r->r_release_client); /* after the decisions: asks left end here */
    free(r->r_recycles);
    free(r);
}
