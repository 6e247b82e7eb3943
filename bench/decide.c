/* decide.c -- gvw-decide: decision latency, from the webhook's 200 to the eviction.
 *
 *   gvw-decide -l PORT -w WEBHOOK_PORT -t TOKEN [-n 1000] [-W 50] [-g GAP_MS]
 *              [-P PODS.json -Q PROM.json]
 *
 * -P/-Q: answer every pod list and every query with these files instead (a
 * big node: bench/gen_scale.sh OUTDIR 5000 4 writes them; its pods are over
 * budget and one is evicted, whatever node the alert names).
 *
 * One process plays Prometheus and the Kubernetes API server on 127.0.0.1:PORT
 * (point PROMETHEUS_URL and KUBE_API_URL of `serve` at it) and Alertmanager: it
 * POSTs a firing GPUVRAMLow for node bench-N to 127.0.0.1:WEBHOOK_PORT/webhook,
 * and waits for the eviction of that node's over-budget pod. Both ends are
 * timestamped here, on one CLOCK_MONOTONIC. Every answer is immediate: the
 * reading is over budget (free 560 MiB < floor), the pod list names the hog and
 * one tenant within budget, the eviction gets 201.
 *
 * Decisions run one after another; each alert names a new node, so neither the
 * per-node in-flight brake nor SETTLE holds one back (run serve with SETTLE=0,
 * MAX_RECYCLES_PER_HOUR=0, DRY_RUN=false, MIN_RUNTIME=0). The first W are warm-up.
 * -g: wait GAP_MS after each eviction before the next alert, so the previous
 * decision's verification (0.2 s after its eviction with SETTLE=0) and audit
 * write are done before the next 200: the window then holds one decision's own
 * work. Without it (0) decisions run back to back and overlap.
 * Prints:
 *   DECIDE n=N ok200_to_evict_us p50=.. p90=.. p99=.. max=.. send_to_evict_us p50=..
 * p99=..
 *          ... fake_cpu_ms user=.. sys=.. (this process: the fakes and the timing)
 * Exit 0 when every decision evicted. Bounded: 5 s per decision at most. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#ifndef STEP_TIMEOUT_S
#define STEP_TIMEOUT_S 5 /* -DSTEP_TIMEOUT_S=60 under valgrind */
#endif

static struct {
    struct event_base *base;
    struct evhttp_connection *wh; /* to the daemon's webhook */
    const char *token;
    int n, warmup, i; /* total, warm-up, current */
    int64_t t_send, t_200, t_evict;
    int got_200, got_evict;
    int64_t *lat_200, *lat_send; /* per measured decision, ns */
    int measured;
    int gap_ms; /* -g: pause between an eviction and the next alert */
    long prom_queries, pod_lists, evictions, other;
    struct event *timeout;
    int failed;
    char *pods_body, *prom_body; /* -P, -Q: owned, NULL when not given */
    size_t pods_len, prom_len;
} g;

/* A whole file into memory (bench input, read once at start). */
static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (b = malloc((size_t)n + 1)) == NULL ||
        fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "gvw-decide: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 15360 MiB card: the hog uses 12000 MiB against a 3000 MiB budget, a tenant
 * 2800 of 4000: free 560 MiB, below the 1536 MiB floor. */
static const char PROM_BODY[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"namespace\":\"bench\",\"pod\":\"hog-5f7c9d8b6-qx2lp\"},"
    "\"value\":[1780394400.123,\"12582912000\"]},"
    "{\"metric\":{\"namespace\":\"tenant\",\"pod\":\"llm-6d8f7b5c4-w7r2k\"},"
    "\"value\":[1780394400.123,\"2936012800\"]}]}}";

static const char POD_FMT[] =
    "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
    "\"name\":\"%s-rs\",\"uid\":\"0c1e4a57-0000-4c8e-9f47-%s\",\"controller\":true}]},"
    "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"main\",\"resources\":{"
    "\"limits\":{\"viktorbarzin.me/gpumem\":\"%s\"}}}]},"
    "\"status\":{\"phase\":\"Running\",\"startTime\":\"2020-01-01T00:00:00Z\"}}";

static void
answer(struct evhttp_request *req, int code, const char *body, size_t len)
{
    struct evbuffer *out = evhttp_request_get_output_buffer(req);

    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "application/json");
    /* The -P/-Q bodies (megabytes, alive until exit) are sent by reference:
     * copying 8.6 MB a decision was the fake's own cost, on the same 2 cores. */
    if (body == g.pods_body || body == g.prom_body)
        evbuffer_add_reference(out, body, len, NULL, NULL);
    else
        evbuffer_add(out, body, len);
    evhttp_send_reply(req, code, code == 201 ? "Created" : "OK", NULL);
}

static void next_decision(void);
static void next_decision_cb(evutil_socket_t fd, short what, void *arg);

static void
maybe_next(void)
{
    int k;

    if (!g.got_200 || !g.got_evict)
        return;
    evtimer_del(g.timeout);
    k = g.i - g.warmup;
    if (k >= 0) {
        g.lat_200[k] = g.t_evict > g.t_200 ? g.t_evict - g.t_200 : 0;
        g.lat_send[k] = g.t_evict - g.t_send;
        g.measured++;
    }
    g.i++;
    if (g.gap_ms > 0 && g.i < g.n) {
        struct timeval gap = {g.gap_ms / 1000, (g.gap_ms % 1000) * 1000};
        event_base_once(g.base, -1, EV_TIMEOUT, next_decision_cb, NULL, &gap);
        return;
    }
    next_decision();
}

/* Prometheus and the API server, on one port. */
static void
serve_cb(struct evhttp_request *req, void *arg)
{
    const char *uri = evhttp_request_get_uri(req);
    char node[64], body[4096];
    const char *fs;
    int n;

    if (strncmp(uri, "/api/v1/query", 13) == 0) {
        g.prom_queries++;
        if (g.prom_body != NULL)
            answer(req, 200, g.prom_body, g.prom_len);
        else
            answer(req, 200, PROM_BODY, sizeof(PROM_BODY) - 1);
    } else if (strncmp(uri, "/api/v1/pods", 12) == 0 && g.pods_body != NULL) {
        g.pod_lists++;
        answer(req, 200, g.pods_body, g.pods_len);
    } else if (strncmp(uri, "/api/v1/pods", 12) == 0) {
        char hog[1024], llm[1024];
        g.pod_lists++;
        /* fieldSelector=spec.nodeName%3Dbench-N, or = unescaped */
        fs = strstr(uri, "nodeName");
        snprintf(node, sizeof(node), "%s", fs ? fs + 8 + (fs[8] == '%' ? 3 : 1) : "?");
        snprintf(hog, sizeof(hog), POD_FMT, "hog-5f7c9d8b6-qx2lp", "bench",
                 "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01", "hog", "1d2a3b4c5d01", node,
                 "3k");
        snprintf(llm, sizeof(llm), POD_FMT, "llm-6d8f7b5c4-w7r2k", "tenant",
                 "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d02", "llm", "1d2a3b4c5d02", node,
                 "4k");
        n = snprintf(body, sizeof(body),
                     "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},"
                     "\"items\":[%s,%s]}",
                     hog, llm);
        answer(req, 200, body, (size_t)n);
    } else if (strstr(uri, "/eviction") != NULL &&
               evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
        g.evictions++;
        g.t_evict = now_ns();
        g.got_evict = 1;
        answer(req, 201, "{\"kind\":\"Status\",\"status\":\"Success\"}", 36);
        maybe_next();
    } else if (strncmp(uri, "/api/v1/nodes", 13) == 0) {
        static const char nodes[] =
            "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[]}";
        answer(req, 200, nodes, sizeof(nodes) - 1);
    } else {
        g.other++;
        answer(req, 404, "{}", 2);
    }
}

/* Why a webhook got no answer (libevent's error kind), for the failure message. */
static void
webhook_error(enum evhttp_request_error e, void *arg)
{
    static const char *const names[] = {"timeout",           "eof",
                                        "invalid header",    "buffer error",
                                        "request cancelled", "data too long"};

    fprintf(stderr, "gvw-decide: webhook %d: %s\n", g.i,
            (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "error");
}

static void
webhook_done(struct evhttp_request *req, void *arg)
{
    if (req == NULL || evhttp_request_get_response_code(req) != 200) {
        fprintf(stderr, "gvw-decide: webhook %d answered %d\n", g.i,
                req ? evhttp_request_get_response_code(req) : -1);
        g.failed = 1;
        event_base_loopbreak(g.base);
        return;
    }
    g.t_200 = now_ns();
    g.got_200 = 1;
    maybe_next();
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    fprintf(stderr, "gvw-decide: decision %d: no %s within %d s\n", g.i,
            g.got_200 ? "eviction" : "200", STEP_TIMEOUT_S);
    g.failed = 1;
    event_base_loopbreak(g.base);
}

static void
next_decision(void)
{
    struct evhttp_request *req;
    struct evkeyvalq *h;
    char body[1024], auth[512];
    struct timeval tmo = {STEP_TIMEOUT_S, 0};
    int n;

    if (g.i >= g.n) {
        /* Linger: the last eviction's 201 and the verify reads still get answers,
         * so every decision ends recycled (SETTLE=0: one verify read, 0.2 s). */
        struct timeval linger = {0, 500000};
        event_base_loopexit(g.base, &linger);
        return;
    }
    n = snprintf(
        body, sizeof(body),
        "{\"version\":\"4\",\"status\":\"firing\",\"receiver\":\"wd\",\"alerts\":[{"
        "\"status\":\"firing\",\"labels\":{\"alertname\":\"GPUVRAMLow\","
        "\"node\":\"bench-%d\",\"severity\":\"warning\"},\"annotations\":{"
        "\"summary\":\"free 560\"},\"startsAt\":\"2026-11-21T23:41:25.184Z\","
        "\"endsAt\":\"0001-01-01T00:00:00Z\",\"fingerprint\":\"%016x\"}]}",
        g.i, (unsigned)g.i);
    req = evhttp_request_new(webhook_done, NULL);
    evhttp_request_set_error_cb(req, webhook_error);
    h = evhttp_request_get_output_headers(req);
    snprintf(auth, sizeof(auth), "Bearer %s", g.token);
    evhttp_add_header(h, "Host", "127.0.0.1");
    evhttp_add_header(h, "Content-Type", "application/json");
    evhttp_add_header(h, "Authorization", auth);
    evbuffer_add(evhttp_request_get_output_buffer(req), body, (size_t)n);
    g.got_200 = g.got_evict = 0;
    g.t_send = now_ns();
    evtimer_add(g.timeout, &tmo);
    if (evhttp_make_request(g.wh, req, EVHTTP_REQ_POST, "/webhook") == -1) {
        fprintf(stderr, "gvw-decide: cannot send webhook %d\n", g.i);
        g.failed = 1;
        event_base_loopbreak(g.base);
    }
}

static void
next_decision_cb(evutil_socket_t fd, short what, void *arg)
{
    next_decision();
}

/* Waits for the daemon (started after us, so its first capacity advertising
 * finds the fake API server) to answer /readyz 200; 20 s at most. */
static void ready_check(evutil_socket_t fd, short what, void *arg);

static void
ready_done(struct evhttp_request *req, void *arg)
{
    struct timeval again = {0, 50000};
    static int tries;

    if (req != NULL && evhttp_request_get_response_code(req) == 200) {
        next_decision();
        return;
    }
    if (++tries > 400) {
        fprintf(stderr, "gvw-decide: the daemon never became ready\n");
        g.failed = 1;
        event_base_loopbreak(g.base);
        return;
    }
    event_base_once(g.base, -1, EV_TIMEOUT, ready_check, NULL, &again);
}

static void
ready_check(evutil_socket_t fd, short what, void *arg)
{
    struct evhttp_request *req = evhttp_request_new(ready_done, NULL);

    evhttp_add_header(evhttp_request_get_output_headers(req), "Host", "127.0.0.1");
    if (evhttp_make_request(g.wh, req, EVHTTP_REQ_GET, "/readyz") == -1)
        ready_done(NULL, NULL);
}

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static long long
pct(const int64_t *v, int n, int p)
{
    int k = (int)((long long)n * p / 100);

    return (long long)(v[k >= n ? n - 1 : k] / 1000);
}

int
main(int argc, char **argv)
{
    int port = 0, wport = 0, opt;
    struct evhttp *srv;
    struct rusage ru;

    g.n = 1000;
    g.warmup = 50;
    while ((opt = getopt(argc, argv, "l:w:t:n:W:g:P:Q:")) != -1) {
        switch (opt) {
        case 'l':
            port = atoi(optarg);
            break;
        case 'w':
            wport = atoi(optarg);
            break;
        case 't':
            g.token = optarg;
            break;
        case 'n':
            g.n = atoi(optarg);
            break;
        case 'W':
            g.warmup = atoi(optarg);
            break;
        case 'g':
            g.gap_ms = atoi(optarg);
            break;
        case 'P':
            g.pods_body = slurp(optarg, &g.pods_len);
            break;
        case 'Q':
            g.prom_body = slurp(optarg, &g.prom_len);
            break;
        default:
            goto usage;
        }
    }
    if (port <= 0 || g.token == NULL || g.n <= 0 || g.warmup < 0 || g.gap_ms < 0)
        goto usage;
    g.base = event_base_new();
    srv = evhttp_new(g.base);
    if (evhttp_bind_socket(srv, "127.0.0.1", (uint16_t)port) == -1) {
        fprintf(stderr, "gvw-decide: cannot listen on 127.0.0.1:%d\n", port);
        return 2;
    }
    evhttp_set_gencb(srv, serve_cb, NULL);
    if (wport <= 0) { /* serve only: for a daemon started after us */
        event_base_dispatch(g.base);
        return 0;
    }
    g.lat_200 = calloc((size_t)g.n, sizeof(int64_t));
    g.lat_send = calloc((size_t)g.n, sizeof(int64_t));
    g.timeout = evtimer_new(g.base, timeout_cb, NULL);
    g.wh = evhttp_connection_base_new(g.base, NULL, "127.0.0.1", (uint16_t)wport);
    g.n += g.warmup;
    ready_check(-1, 0, NULL);
    event_base_dispatch(g.base);
    if (g.failed || g.measured == 0)
        return 1;
    getrusage(RUSAGE_SELF, &ru);
    qsort(g.lat_200, (size_t)g.measured, sizeof(int64_t), cmp64);
    qsort(g.lat_send, (size_t)g.measured, sizeof(int64_t), cmp64);
    printf("DECIDE n=%d ok200_to_evict_us p50=%lld p90=%lld p99=%lld max=%lld "
           "send_to_evict_us p50=%lld p99=%lld max=%lld prom_queries=%ld pod_lists=%ld "
           "evictions=%ld other=%ld fake_cpu_ms user=%ld sys=%ld\n",
           g.measured, pct(g.lat_200, g.measured, 50), pct(g.lat_200, g.measured, 90),
           pct(g.lat_200, g.measured, 99), (long long)(g.lat_200[g.measured - 1] / 1000),
           pct(g.lat_send, g.measured, 50), pct(g.lat_send, g.measured, 99),
           (long long)(g.lat_send[g.measured - 1] / 1000), g.prom_queries, g.pod_lists,
           g.evictions, g.other,
           (long)(ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000),
           (long)(ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000));
    return 0;
usage:
    fprintf(stderr,
            "usage: gvw-decide -l PORT -t TOKEN -w WEBHOOK_PORT [-n N] [-W WARMUP]\n"
            "                  [-g GAP_MS] [-P PODS.json -Q PROM.json]\n"
            "       gvw-decide -l PORT -t TOKEN   (serve the fakes only)\n");
    return 2;
}
