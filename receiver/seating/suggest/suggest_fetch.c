/* suggest_fetch.c -- what `budgets --suggest` asks the API server and Prometheus, one
 * call at a time
 *
 * The command is a batch job: each call runs the event loop until its answer
 * is in, so the rest of `--suggest` reads as straight-line code. */
#include "suggest_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "buf.h"
#include "httpc.h"
#include "kube.h"
#include "kubec.h"

/* A week of a node's pods at 1-minute steps is chunked to stay under this. */
#define SG_BODY_CAP (64u * 1024 * 1024)
#define URL_MAX 16384

struct sg_fetch {
    struct event_base *f_base;
    struct httpc *f_prom;
    struct kube *f_kube; /* nodes and capacity with the project's parsers; its
                            connection also reads the pod list (sg_pods_parse) */
    char *f_prom_url;
    const char *f_resource;             /* borrowed from the config */
    const struct bsrc_order *f_sources; /* borrowed: BUDGET_SOURCES */
    const char *f_selector;
    uint64_t f_bytes, f_queries;
};

struct wait {
    int w_done;
    struct event_base *w_base;
    /* kube */
    struct kube_answer w_ka;
    char **w_nodes;
    size_t w_node_count;
    char w_err[512];
    /* pods */
    struct pod_list *w_pods;
    const char *w_res;
    const struct bsrc_order *w_sources;
    /* prometheus */
    sg_body_fn w_fn;
    void *w_arg;
    int w_rc;
    uint64_t w_bytes;
};

static void
run(struct wait *w)
{
    while (!w->w_done && event_base_loop(w->w_base, EVLOOP_ONCE) == 0)
        ;
}

struct sg_fetch *
sg_fetch_new(const struct config *cfg, char *err, size_t errlen)
{
    struct sg_fetch *f = calloc(1, sizeof(*f));
    struct httpc_opts ho = {
        .ho_connect_timeout_ms = (long)cfg->c_kube.ks_http_connect_timeout_ms,
        /* A week of a big node is seconds of Prometheus work per chunk. */
        .ho_timeout_ms = (long)cfg->c_kube.ks_http_timeout_ms > 60000
                             ? (long)cfg->c_kube.ks_http_timeout_ms
                             : 60000,
        .ho_body_cap = SG_BODY_CAP,
    };
    struct kube_opts ko;
    size_t n;

    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->f_resource = cfg->c_gpumem_resource;
    f->f_sources = &cfg->c_budget_sources;
    f->f_selector = cfg->c_gpu_node_selector;
    if (cfg->c_kube.ks_api_url[0] == '\0') {
        snprintf(err, errlen,
                 "no Kubernetes API server (set KUBE_API_URL, or run in a cluster)");
        goto fail;
    }
    if (strncmp(cfg->c_prometheus_url, "http://", 7) != 0 &&
        strncmp(cfg->c_prometheus_url, "https://", 8) != 0) {
        snprintf(err, errlen, "PROMETHEUS_URL: '%s' is not http(s)://",
                 cfg->c_prometheus_url);
        goto fail;
    }
    if ((f->f_prom_url = strdup(cfg->c_prometheus_url)) == NULL ||
        (f->f_base = event_base_new()) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    n = strlen(f->f_prom_url);
    while (n > 0 && f->f_prom_url[n - 1] == '/')
        f->f_prom_url[--n] = '\0';
    kube_settings_opts(&cfg->c_kube, &ko);
    if ((f->f_prom = httpc_new(f->f_base, &ho, err, errlen)) == NULL ||
        (f->f_kube = kube_new(f->f_base, &ko, err, errlen)) == NULL)
        goto fail;
    return f;
fail:
    sg_fetch_free(f);
    return NULL;
}

void
sg_fetch_free(struct sg_fetch *f)
{
    if (f == NULL)
        return;
    kube_free(f->f_kube);
    httpc_free(f->f_prom);
    if (f->f_base != NULL)
        event_base_free(f->f_base);
    free(f->f_prom_url);
    free(f);
}

static void
nodes_done(struct kube_answer *a, void *arg)
{
    struct wait *w = arg;

    w->w_done = 1;
    w->w_ka.ka_class = a->ka_class;
    if (a->ka_class != KUBE_OK) {
        snprintf(w->w_err, sizeof(w->w_err), "%s",
                 a->ka_error ? a->ka_error : "kube: error");
        return;
    }
    w->w_nodes = a->ka_nodes;
    w->w_node_count = a->ka_node_count;
    a->ka_nodes = NULL;
    a->ka_node_count = 0;
    w->w_ka.ka_capacity_state = a->ka_capacity_state;
    w->w_ka.ka_capacity_mib = a->ka_capacity_mib;
}

int
sg_fetch_nodes(struct sg_fetch *f, char ***names, size_t *count, char *err, size_t errlen)
{
    struct wait w = {.w_base = f->f_base};

    if (kube_list_nodes(f->f_kube, f->f_selector, nodes_done, &w) == -1) {
        snprintf(err, errlen, "cannot list the nodes (out of memory)");
        return -1;
    }
    run(&w);
    if (w.w_ka.ka_class != KUBE_OK) {
        snprintf(err, errlen, "%s", w.w_err);
        return -1;
    }
    *names = w.w_nodes;
    *count = w.w_node_count;
    return 0;
}

int
sg_fetch_capacity(struct sg_fetch *f, const char *node, int64_t *mib, char *note,
                  size_t notelen)
{
    struct wait w = {.w_base = f->f_base};

    if (kube_get_node_capacity(f->f_kube, node, f->f_resource, nodes_done, &w) == -1) {
        snprintf(note, notelen, "the node cannot be read (out of memory)");
        return -1;
    }
    run(&w);
    if (w.w_ka.ka_class != KUBE_OK) {
        snprintf(note, notelen, "%s", w.w_err);
        return w.w_ka.ka_class == KUBE_GONE ? -2 : -1;
    }
    if (w.w_ka.ka_capacity_state != NODE_CAPACITY_OK) {
        snprintf(note, notelen, "the node does not advertise %s (run `advertise`)",
                 f->f_resource);
        return -1;
    }
    *mib = w.w_ka.ka_capacity_mib;
    return 0;
}

static int
pods_parse(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct wait *w = arg;

    return sg_pods_parse_sources(body, len, w->w_res, w->w_sources, w->w_pods, err,
                                 errlen);
}

static void
pods_done(const struct kubec_answer *a, void *arg)
{
    struct wait *w = arg;

    w->w_done = 1;
    w->w_rc = a->kr_class == KUBE_OK ? 0 : -1;
    if (w->w_rc == -1)
        snprintf(w->w_err, sizeof(w->w_err), "%s",
                 a->kr_error ? a->kr_error : "kube: error");
}

int
sg_fetch_pods(struct sg_fetch *f, const char *node, struct pod_list *out, char *err,
              size_t errlen)
{
    struct wait w = {.w_base = f->f_base,
                     .w_pods = out,
                     .w_res = f->f_resource,
                     .w_sources = f->f_sources};
    struct buf path;
    struct kubec_call c = {
        .kq_method = "GET",
        .kq_what = "list pods",
        .kq_parse = pods_parse,
        .kq_done = pods_done,
        .kq_arg = &w,
    };
    int rc;

    memset(out, 0, sizeof(*out));
    buf_init(&path, URL_MAX);
    kubec_path_add(&path, "/api/v1/pods?fieldSelector=", NULL);
    kubec_path_add(&path, NULL, "spec.nodeName=");
    kubec_path_add(&path, NULL, node);
    c.kq_path = path.b_data;
    rc = kubec_call(kube_conn(f->f_kube), &c);
    buf_free(&path);
    if (rc == -1) {
        snprintf(err, errlen, "cannot list the pods of %s (out of memory)", node);
        return -1;
    }
    run(&w);
    if (w.w_rc == -1) {
        pod_list_free(out);
        snprintf(err, errlen, "%s", w.w_err);
        return -1;
    }
    return 0;
}

static void
range_done(const struct httpc_resp *r, void *arg)
{
    struct wait *w = arg;

    w->w_done = 1;
    if (r->hr_error != NULL) {
        w->w_rc = r->hr_too_large ? 1 : -1;
        snprintf(w->w_err, sizeof(w->w_err), "prometheus: %s", r->hr_error);
        return;
    }
    w->w_bytes = r->hr_body_len;
    w->w_fn(r->hr_status, r->hr_body, r->hr_body_len, w->w_arg);
}

int
sg_fetch_range(struct sg_fetch *f, const char *promql, int64_t start, int64_t end,
               int64_t step, sg_body_fn fn, void *arg, char *err, size_t errlen)
{
    struct wait w = {.w_base = f->f_base, .w_fn = fn, .w_arg = arg};
    struct httpc_req req = {.hq_method = "GET"};
    struct buf url;
    int rc;

    buf_init(&url, URL_MAX);
    if (buf_printf(&url, "%s/api/v1/query_range?query=", f->f_prom_url) == -1 ||
        httpc_urlencode(&url, promql) == -1 ||
        buf_printf(&url, "&start=%lld&end=%lld&step=%lld", (long long)start,
                   (long long)end, (long long)step) == -1) {
        buf_free(&url);
        snprintf(err, errlen, "the query is too long");
        return -1;
    }
    req.hq_url = url.b_data;
    rc = httpc_request(f->f_prom, &req, range_done, &w);
    buf_free(&url);
    if (rc == -1) {
        snprintf(err, errlen, "prometheus: cannot send the query (out of memory)");
        return -1;
    }
    run(&w);
    f->f_queries++;
    f->f_bytes += w.w_bytes;
    if (w.w_rc != 0)
        snprintf(err, errlen, "%s", w.w_err);
    return w.w_rc;
}

void
sg_fetch_stats(const struct sg_fetch *f, uint64_t *bytes, uint64_t *queries)
{
    *bytes = f->f_bytes;
    *queries = f->f_queries;
}
