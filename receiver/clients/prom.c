/* prom.c -- Prometheus instant queries; every failure becomes one "telemetry unavailable"
 */
#include "prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "httpc.h"
#include "log.h"
#include "device.h"
#include "prom_json.h"

#define PROM_URL_MAX (64u * 1024)
#define PROM_QUERY_MAX (16u * 1024)

struct prom {
    struct httpc *p_http; /* owned */
    char *p_url;          /* owned; the base, no trailing slash */
};

/* One query in flight; the httpc callback argument. */
struct prom_call {
    int pc_scalar;       /* prom_query_scalar, else prom_query_usage */
    int pc_may_be_empty; /* prom_query_device, _usage_any: no series is an answer */
    int pc_matrix;       /* prom_query_matrix */
    char *pc_query;      /* owned, for logs */
    char *pc_ns_label;   /* owned */
    char *pc_pod_label;  /* owned */
    char *pc_gpu_label;  /* owned; NULL: the GPU is not read */
    prom_done_fn pc_cb;
    void *pc_arg;
};

static char *substitute(const char *query, const char *var, const char *node, char *err,
                        size_t errlen);

struct prom *
prom_new(struct event_base *base, const struct prom_opts *o, char *err, size_t errlen)
{
    struct httpc_opts ho;
    struct prom *p;
    size_t len;

    if (o->po_url == NULL || (strncasecmp(o->po_url, "http://", 7) != 0 &&
                              strncasecmp(o->po_url, "https://", 8) != 0)) {
        snprintf(err, errlen, "Prometheus URL %s: not http:// or https://",
                 o->po_url ? o->po_url : "(none)");
        return NULL;
    }
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->p_url = strdup(o->po_url)) == NULL) {
        snprintf(err, errlen, "out of memory");
        prom_free(p);
        return NULL;
    }
    len = strlen(p->p_url);
    while (len > 0 && p->p_url[len - 1] == '/')
        p->p_url[--len] = '\0';
    memset(&ho, 0, sizeof(ho));
    ho.ho_connect_timeout_ms = o->po_connect_timeout_ms;
    ho.ho_timeout_ms = o->po_timeout_ms;
    ho.ho_body_cap = o->po_body_cap;
    ho.ho_ca_file = o->po_ca_file;
    if ((p->p_http = httpc_new(base, &ho, err, errlen)) == NULL) {
        prom_free(p);
        return NULL;
    }
    return p;
}

void
prom_free(struct prom *p)
{
    if (p == NULL)
        return;
    httpc_free(p->p_http); /* cancelled callbacks free their calls */
    free(p->p_url);
    free(p);
}

static void
call_free(struct prom_call *pc)
{
    if (pc == NULL)
        return;
    free(pc->pc_query);
    free(pc->pc_ns_label);
    free(pc->pc_pod_label);
    free(pc->pc_gpu_label);
    free(pc);
}

/*
 * Why an answer failed. Prometheus sends {"status":"error", "errorType":...,
 * "error":...}: returns 1 with "errorType: error" in out. A proxy in front
 * may send anything: returns 0 with a printable excerpt in out.
 */
static int
error_summary(const char *body, size_t len, char *out, size_t outlen)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *type = json_string_value(json_object_get(root, "errorType"));
    const char *msg = json_string_value(json_object_get(root, "error"));
    size_t i, n;
    int found = msg != NULL;

    if (found) {
        snprintf(out, outlen, "%s%s%s", type ? type : "", type ? ": " : "", msg);
    } else if (len == 0) {
        snprintf(out, outlen, "(empty body)");
    } else {
        n = len < 200 ? len : 200;
        n = n < outlen - 1 ? n : outlen - 1;
        /* Not JSON, so maybe not UTF-8 either: printable ASCII only. */
        for (i = 0; i < n; i++)
            out[i] = ((unsigned char)body[i] < 0x20 || (unsigned char)body[i] >= 0x7f)
                         ? ' '
                         : body[i];
        out[i] = '\0';
    }
    json_decref(root);
    return found;
}

/* Reads a 2xx body into a; 0, or -1 with the reason in why. */
static int
parse_answer(struct prom_call *pc, const struct httpc_resp *r, struct prom_answer *a,
             char *why, size_t whylen)
{
    char perr[512], summary[512];

    if (pc->pc_scalar) {
        if (prom_json_parse_scalar(r->hr_body, r->hr_body_len, &a->pa_value, perr,
                                   sizeof(perr)) == -1)
            goto fail;
        /* A free amount of NaN or Inf cannot be acted on. */
        if (!isfinite(a->pa_value)) {
            snprintf(why, whylen,
                     "prometheus: the query returned %f, not a number of MiB",
                     a->pa_value);
            return -1;
        }
        return 0;
    }
    if (pc->pc_matrix) {
        if (prom_matrix_parse(r->hr_body, r->hr_body_len, pc->pc_ns_label,
                              pc->pc_pod_label, pc->pc_gpu_label, &a->pa_matrix, perr,
                              sizeof(perr)) == -1)
            goto fail;
        return 0;
    }
    if (prom_json_parse_vector_gpu(r->hr_body, r->hr_body_len, pc->pc_ns_label,
                                   pc->pc_pod_label, pc->pc_gpu_label, &a->pa_usage, perr,
                                   sizeof(perr)) == -1)
        goto fail;
    if (a->pa_usage.ur_count == 0 && !pc->pc_may_be_empty) {
        snprintf(why, whylen, "prometheus: the query returned no series");
        return -1;
    }
    return 0;
fail:
    /* An error body with a 2xx (a rewriting proxy): the same words as with a 4xx. */
    if (error_summary(r->hr_body, r->hr_body_len, summary, sizeof(summary)) == 1)
        snprintf(why, whylen, "prometheus: %s", summary);
    else
        snprintf(why, whylen, "prometheus: %s", perr);
    return -1;
}

static void
call_done(const struct httpc_resp *r, void *arg)
{
    struct prom_call *pc = arg;
    struct prom_answer a;
    char why[1024], summary[512], status[16], elapsed[24];

    memset(&a, 0, sizeof(a));
    a.pa_cancelled = r->hr_cancelled;
    a.pa_elapsed_ms = r->hr_elapsed_ms;
    if (r->hr_error != NULL) {
        snprintf(why, sizeof(why), "prometheus: %s", r->hr_error);
    } else if (r->hr_status < 200 || r->hr_status > 299) {
        error_summary(r->hr_body, r->hr_body_len, summary, sizeof(summary));
        snprintf(why, sizeof(why), "prometheus: HTTP %ld: %s", r->hr_status, summary);
    } else if (parse_answer(pc, r, &a, why, sizeof(why)) == 0) {
        a.pa_ok = 1;
    }
    if (!a.pa_ok) {
        usage_reading_free(&a.pa_usage);
        prom_matrix_free(&a.pa_matrix);
    }
    a.pa_error = a.pa_ok ? NULL : why;
    snprintf(status, sizeof(status), "%ld", r->hr_status);
    snprintf(elapsed, sizeof(elapsed), "%ld", r->hr_elapsed_ms);
    log_event(a.pa_ok || a.pa_cancelled ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
              a.pa_ok ? "prometheus query done" : "prometheus query failed", "query",
              pc->pc_query, "status", status, "elapsed_ms", elapsed, "error", a.pa_error,
              (char *)NULL);
    pc->pc_cb(&a, pc->pc_arg);
    usage_reading_free(&a.pa_usage);
    prom_matrix_free(&a.pa_matrix);
    call_free(pc);
}

static int
query_start(struct prom *p, struct prom_call *pc, const char *promql, prom_done_fn cb,
            void *arg)
{
    struct httpc_req req;
    struct buf url;
    int rc = -1;

    buf_init(&url, PROM_URL_MAX);
    if (buf_printf(&url, "%s/api/v1/query?query=", p->p_url) == -1 ||
        httpc_urlencode(&url, promql) == -1 || (pc->pc_query = strdup(promql)) == NULL) {
        log_warnx("%s: out of memory or query too long", __func__);
        goto out;
    }
    pc->pc_cb = cb;
    pc->pc_arg = arg;
    memset(&req, 0, sizeof(req));
    req.hq_url = url.b_data;
    if ((rc = httpc_request(p->p_http, &req, call_done, pc)) == 0)
        pc = NULL; /* call_done frees it */
out:
    call_free(pc);
    buf_free(&url);
    return rc;
}

int
prom_query_usage(struct prom *p, const char *promql, const char *ns_label,
                 const char *pod_label, prom_done_fn cb, void *arg)
{
    return prom_query_usage_gpu(p, promql, ns_label, pod_label, NULL, cb, arg);
}

/* A usage query; may_be_empty: no series is an answer, not an error. */
static int
usage_query(struct prom *p, const char *promql, const char *ns_label,
            const char *pod_label, const char *gpu_label, int may_be_empty,
            prom_done_fn cb, void *arg)
{
    struct prom_call *pc;

    if (promql == NULL || ns_label == NULL || pod_label == NULL) {
        log_warnx("%s: query and labels are required", __func__);
        return -1;
    }
    if ((pc = calloc(1, sizeof(*pc))) == NULL ||
        (pc->pc_ns_label = strdup(ns_label)) == NULL ||
        (pc->pc_pod_label = strdup(pod_label)) == NULL ||
        (gpu_label != NULL && gpu_label[0] != '\0' &&
         (pc->pc_gpu_label = strdup(gpu_label)) == NULL)) {
        log_warnx("%s: out of memory", __func__);
        call_free(pc);
        return -1;
    }
    pc->pc_may_be_empty = may_be_empty;
    return query_start(p, pc, promql, cb, arg);
}

int
prom_query_usage_gpu(struct prom *p, const char *promql, const char *ns_label,
                     const char *pod_label, const char *gpu_label, prom_done_fn cb,
                     void *arg)
{
    return usage_query(p, promql, ns_label, pod_label, gpu_label, 0, cb, arg);
}

int
prom_query_usage_any(struct prom *p, const char *promql, const char *ns_label,
                     const char *pod_label, const char *gpu_label, prom_done_fn cb,
                     void *arg)
{
    return usage_query(p, promql, ns_label, pod_label, gpu_label, 1, cb, arg);
}

int
prom_query_device(struct prom *p, const char *promql, const char *gpu_label,
                  prom_done_fn cb, void *arg)
{
    struct prom_call *pc;

    /* The metric name and the tag stand where the pod's names would. */
    if (promql == NULL || gpu_label == NULL || (pc = calloc(1, sizeof(*pc))) == NULL) {
        log_warnx("%s: out of memory or no query", __func__);
        return -1;
    }
    pc->pc_may_be_empty = 1;
    if ((pc->pc_ns_label = strdup("__name__")) == NULL ||
        (pc->pc_pod_label = strdup(DEVICE_TS_LABEL)) == NULL ||
        (pc->pc_gpu_label = strdup(gpu_label[0] != '\0' ? gpu_label : "uuid")) == NULL) {
        log_warnx("%s: out of memory", __func__);
        call_free(pc);
        return -1;
    }
    return query_start(p, pc, promql, cb, arg);
}

int
prom_query_matrix(struct prom *p, const char *promql, const char *ns_label,
                  const char *pod_label, const char *gpu_label, prom_done_fn cb,
                  void *arg)
{
    struct prom_call *pc = NULL;

    if (promql == NULL || ns_label == NULL || pod_label == NULL ||
        (pc = calloc(1, sizeof(*pc))) == NULL ||
        (pc->pc_ns_label = strdup(ns_label)) == NULL ||
        (pc->pc_pod_label = strdup(pod_label)) == NULL ||
        (gpu_label != NULL && gpu_label[0] != '\0' &&
         (pc->pc_gpu_label = strdup(gpu_label)) == NULL)) {
        log_warnx("%s: out of memory or no query", __func__);
        call_free(pc);
        return -1;
    }
    pc->pc_matrix = 1;
    return query_start(p, pc, promql, cb, arg);
}

int
prom_query_scalar(struct prom *p, const char *promql, prom_done_fn cb, void *arg)
{
    struct prom_call *pc;

    if (promql == NULL) {
        log_warnx("%s: query is required", __func__);
        return -1;
    }
    if ((pc = calloc(1, sizeof(*pc))) == NULL) {
        log_warnx("%s: out of memory", __func__);
        return -1;
    }
    pc->pc_scalar = 1;
    return query_start(p, pc, promql, cb, arg);
}

char *
prom_substitute_node(const char *query, const char *node, char *err, size_t errlen)
{
    return substitute(query, "$node", node, err, errlen);
}

char *
prom_substitute_gpu(const char *query, const char *gpu, char *err, size_t errlen)
{
    return substitute(query, "$gpu", gpu, err, errlen);
}

/* Every var in query replaced by value, escaped for a PromQL string. */
static char *
substitute(const char *query, const char *var, const char *node, char *err, size_t errlen)
{
    const size_t varlen = strlen(var);
    struct buf b;
    const char *q, *hit;
    char *out;

    for (const char *c = node; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            snprintf(err, errlen, "%s has a control character",
                     strcmp(var, "$node") == 0 ? "node name" : "GPU label value");
            return NULL;
        }
    buf_init(&b, PROM_QUERY_MAX);
    if (buf_append(&b, "", 0) == -1) /* an empty query still gives "" */
        goto fail;
    for (q = query; (hit = strstr(q, var)) != NULL; q = hit + varlen) {
        if (buf_append(&b, q, (size_t)(hit - q)) == -1)
            goto fail;
        for (const char *c = node; *c; c++) {
            if ((*c == '\\' || *c == '"') && buf_append(&b, "\\", 1) == -1)
                goto fail;
            if (buf_append(&b, c, 1) == -1)
                goto fail;
        }
    }
    if (buf_append(&b, q, strlen(q)) == -1)
        goto fail;
    out = b.b_data; /* ownership moves to the caller */
    return out;
fail:
    snprintf(err, errlen,
             "query too long after substituting %s (max %u bytes) or out of memory", var,
             PROM_QUERY_MAX);
    buf_free(&b);
    return NULL;
}
