/* exporter.c -- `gpu-vram-watchdog exporter`: the node agent's loop, poll and HTTP
 *
 * A libevent timer asks the poller's thread to read NVML and the processes'
 * cgroups; each reading is joined to the pods and rendered into the /metrics
 * text once; requests are answered from that text, so they never wait on
 * NVML (a driver call may hang) or the API server. */
#include "exporter.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "attribute.h"
#include "buf.h"
#include "expo_render.h"
#include "conn_guard.h"
#include "front_reply.h"
#include "exporter_config.h"
#include "once.h"
#include "log.h"
#include "nvml.h"
#include "podmap.h"
#include "poller.h"

#define RETRY_MS 5000 /* NVML down: try again at least this often */
#define FIRST_WAIT_MS                                                                    \
    2000 /* start-up: how long the first poll may hold the first answer */
#define METRICS_CAP (64u << 20) /* the rendered text; a node never comes near it */
#define EXPORTER_HEADER_MS                                                               \
    10000                       /* a request's head, from its first byte (SPEC "HTTP")   \
                                 */
#define EXPORTER_TOTAL_MS 30000 /* the whole request, from its first byte */

/* A rendered /metrics text, shared by every answer still being sent (so a
 * thousand slow scrapers hold one copy, not a thousand). */
struct text {
    size_t t_refs;
    size_t t_len;
    char *t_data; /* owned */
};

static void
text_unref(struct text *t)
{
    if (t != NULL && --t->t_refs == 0) {
        free(t->t_data);
        free(t);
    }
}

/* evbuffer_add_reference()'s cleanup: an answer is done with the text. */
static void
text_release(const void *data, size_t len, void *arg)
{
    text_unref(arg);
}

struct exporter {
    const struct exporter_config *x_cfg; /* borrowed */
    struct event_base *x_base;           /* borrowed */
    struct event *x_poll;                /* owned */
    struct poller *x_poller;             /* owned: NVML is read on its thread */
    char x_down_why[512];                /* the last reason logged; "" while up */
    struct podmap *x_pods;               /* owned */
    struct nvml_snapshot x_snap;         /* the last good read (owned) */
    struct attr_pid *x_pids;             /* owned: what its processes' cgroups said */
    size_t x_npids;
    int x_up;
    double x_last_poll;    /* unix seconds of the last good read */
    double x_poll_seconds; /* how long the last poll took */
    struct text *x_text;   /* the rendered /metrics answer; NULL = none */
    int x_fatal;           /* the loop stopped on an error, not a signal */
    struct guard *x_guard; /* owned: the front door's bounds */
    struct evhttp *x_http; /* owned */
};

/* Joins the last read to the pods, renders the text, and (from a poll,
 * may_relist) lists the pods again when a process names one the cache lacks:
 * at most one list per poll. When no text can be made, the previous one is
 * dropped too (it could show stale figures as live): /metrics answers 503
 * until a render works. */
static void
render(struct exporter *x, int may_relist)
{
    struct expo_status st = {x->x_cfg->ec_node_name,
                             x->x_up,
                             x->x_last_poll,
                             x->x_poll_seconds,
                             podmap_budget_errors(x->x_pods),
                             podmap_share_unresolved,
                             x->x_pods};
    struct attr_tally attr;
    struct buf text;
    struct text *t = NULL;
    int have_attr = 0;

    memset(&attr, 0, sizeof(attr));
    buf_init(&text, METRICS_CAP);
    if (x->x_up) {
        if (attribute(&x->x_snap, x->x_pids, x->x_npids, podmap_pods(x->x_pods),
                      podmap_is_asked, x->x_pods, &attr) == -1)
            goto fail;
        have_attr = 1;
        if (may_relist && attr.ar_unknown_seen)
            podmap_relist(x->x_pods, attr.ar_unknown);
    }
    if (expo_render(&text, &st, &x->x_snap, have_attr ? &attr : NULL,
                    podmap_pods(x->x_pods)) == -1 ||
        text.b_data == NULL || (t = calloc(1, sizeof(*t))) == NULL)
        goto fail;
    t->t_refs = 1;
    t->t_len = text.b_len;
    t->t_data = text.b_data; /* taken from the buf: no copy */
    text_unref(x->x_text);
    x->x_text = t;
    attr_tally_free(&attr);
    return;
fail:
    log_warnx("%s: %s; /metrics answers 503 until a render works", __func__,
              text.b_toobig ? "the text is over its cap" : "out of memory");
    buf_free(&text);
    text_unref(x->x_text);
    x->x_text = NULL;
    attr_tally_free(&attr);
}

/* NVML cannot be read: say why once (again only when the reason changes). */
static void
went_down(struct exporter *x, const char *why)
{
    if (strcmp(x->x_down_why, why) != 0)
        log_event(LOG_LEVEL_WARN, "NVML unavailable; serving gpu_vram_exporter_up 0",
                  "error", why, (char *)NULL);
    snprintf(x->x_down_why, sizeof(x->x_down_why), "%s", why);
    x->x_up = 0;
    nvml_snapshot_free(&x->x_snap);
}

/* A poll ended (on the loop): its figures, or why NVML could not be read. */
static void
poll_done(struct poll_reading *r, void *arg)
{
    struct exporter *x = arg;

    x->x_poll_seconds = r->pr_seconds;
    if (!r->pr_ok) {
        went_down(x, r->pr_err);
    } else {
        nvml_snapshot_free(&x->x_snap);
        x->x_snap = r->pr_snap;
        memset(&r->pr_snap, 0, sizeof(r->pr_snap));
        free(x->x_pids);
        x->x_pids = r->pr_pids;
        x->x_npids = r->pr_npids;
        r->pr_pids = NULL;
        if (x->x_down_why[0] != '\0')
            log_event(LOG_LEVEL_INFO, "NVML readable again", (char *)NULL);
        x->x_down_why[0] = '\0';
        x->x_up = 1;
        x->x_last_poll = r->pr_finished;
    }
    poll_reading_free(r);
    render(x, 1);
}

/* A poll is due: start one, unless the last one is still inside NVML. Then
 * this poll did not read NVML: up 0 and no device series (the last figures
 * are no longer live) until a poll ends again. */
static void
poll_tick(struct exporter *x)
{
    double busy_for = 0;

    podmap_refresh(x->x_pods);
    if (poller_start(x->x_poller, &busy_for) == 1) {
        went_down(x, "an NVML call has not returned by the next poll");
        x->x_poll_seconds = busy_for;
        render(x, 1);
    }
}

static void
poll_cb(evutil_socket_t fd, short what, void *arg)
{
    struct exporter *x = arg;
    int64_t ms = x->x_cfg->ec_poll_interval_ms;
    struct timeval tv;

    poll_tick(x);
    if (!x->x_up && ms > RETRY_MS)
        ms = RETRY_MS;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    /* Without a next poll the last text would stay up as if live: stop, so
     * the DaemonSet starts a fresh process. */
    if (evtimer_add(x->x_poll, &tv) == -1) {
        log_event(LOG_LEVEL_ERROR, "cannot schedule the next poll; stopping",
                  (char *)NULL);
        x->x_fatal = 1;
        event_base_loopbreak(x->x_base);
    }
}

/* A new pod list: join the last read to it now rather than at the next poll. */
static void
pods_changed(void *arg)
{
    render(arg, 0);
}

/* The exporter's policy at the front door, from a complete head: GET and
 * HEAD only, and no body (a GET with one is refused before it is read). */
static void
head_check(const struct guard_head *gh, struct guard_refusal *v, void *arg)
{
    int get = gh->gh_method_len == 3 && memcmp(gh->gh_method, "GET", 3) == 0;
    int head = gh->gh_method_len == 4 && memcmp(gh->gh_method, "HEAD", 4) == 0;

    (void)arg;
    if (!get && !head) {
        v->gv_code = 405;
        v->gv_msg = "method not allowed: GET or HEAD only";
        v->gv_header = "Allow: GET, HEAD";
    } else if (gh->gh_content_length > 0) {
        v->gv_code = 400;
        v->gv_msg = "a GET or HEAD carries no body";
    }
}

/* Sends body (a HEAD gets only its length: evhttp adds none for HEAD). */
static void
send_text(struct evhttp_request *req, int code, const char *reason, const char *type,
          struct evbuffer *body)
{
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
    front_reply_buffer(req, code, reason, body);
}

/* GET or HEAD of /metrics or /healthz (the guard refused every other method). */
static void
http_cb(struct evhttp_request *req, void *arg)
{
    struct exporter *x = arg;
    /* The parsed path, as serve routes: an absolute-form target
     * (http://host/metrics, RFC 9112 3.2.2) is the same request. */
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *path = u != NULL ? evhttp_uri_get_path(u) : NULL;
    struct evbuffer *body = evbuffer_new();

    if (body == NULL) {
        evhttp_send_error(req, 503, "out of memory");
        return;
    }
    if (path == NULL)
        path = "";
    if (strcmp(path, "/metrics") == 0) {
        /* No text (the last render ran out of memory) or no room to refer
         * to it: an empty 200 would read as a node without GPUs. */
        if (x->x_text == NULL ||
            evbuffer_add_reference(body, x->x_text->t_data, x->x_text->t_len,
                                   text_release, x->x_text) == -1) {
            evbuffer_add_printf(body, "no metrics: out of memory\n");
            send_text(req, 503, "Service Unavailable", "text/plain; charset=utf-8", body);
        } else {
            x->x_text->t_refs++;
            send_text(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body);
        }
    } else if (strcmp(path, "/healthz") == 0) {
        evbuffer_add_printf(body, "ok\n");
        send_text(req, 200, "OK", "text/plain; charset=utf-8", body);
    } else {
        evbuffer_add_printf(body, "not found: try /metrics or /healthz\n");
        send_text(req, 404, "Not Found", "text/plain; charset=utf-8", body);
    }
    evbuffer_free(body); /* a reference to the text ends with the answer */
}

/* The one front door (common/front): evhttp behind the guard, with the
 * exporter's policy. Returns the bound port, or -1 with a reason in err. */
static int
http_start(struct exporter *x, char *err, size_t errlen)
{
    const struct exporter_config *cfg = x->x_cfg;
    struct guard_opts go = {
        .go_max_conns =
            guard_fit_nofile((size_t)cfg->ec_max_connections, "EXPORTER_MAX_CONNECTIONS"),
        .go_header_ms = EXPORTER_HEADER_MS,
        .go_body_ms = EXPORTER_TOTAL_MS,
        .go_check = head_check,
    };
    int port;

    /* No body is ever taken: what is held is heads, at most one each. */
    go.go_max_pending = go.go_max_conns * (GUARD_MAX_HEAD + 1);
    if ((x->x_guard = guard_new(x->x_base, &go)) == NULL ||
        (x->x_http = evhttp_new(x->x_base)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    evhttp_set_bevcb(x->x_http, guard_bevcb, x->x_guard);
    evhttp_set_max_headers_size(x->x_http, GUARD_MAX_HEAD);
    evhttp_set_max_body_size(x->x_http, 0);
    /* An answer a client does not take is dropped after this. */
    evhttp_set_timeout(x->x_http, EXPORTER_TOTAL_MS / 1000);
    evhttp_set_allowed_methods(x->x_http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(x->x_http, http_cb, x);
    if ((port = guard_listen(x->x_http, cfg->ec_listen_addr, err, errlen)) == -1)
        return -1;
    return port;
}

/* After evhttp: its connections unlink from the guard; answers in flight
 * release their texts. */
static void
http_stop(struct exporter *x)
{
    if (x->x_http != NULL) {
        guard_unlisten(x->x_http);
        evhttp_free(x->x_http);
    }
    guard_free(x->x_guard);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
    log_info("exporter: signal %d, stopping", (int)sig);
    event_base_loopbreak(arg);
}

/* The loop, once the configuration is loaded. */
static int
run(const struct exporter_config *cfg)
{
    struct exporter x;
    char portstr[16] = "";
    struct event *sigterm = NULL, *sigint = NULL;
    struct kube_opts ko;
    char err[512];
    int rc = 1, port;

    memset(&x, 0, sizeof(x));
    x.x_cfg = cfg;
    signal(SIGPIPE, SIG_IGN);
    if ((x.x_base = event_base_new()) == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: no event loop\n");
        goto done;
    }
    kube_settings_opts(&cfg->ec_kube, &ko);
    if (cfg->ec_kube.ks_api_url[0] == '\0')
        log_event(
            LOG_LEVEL_WARN,
            "no Kubernetes API server (set KUBE_API_URL, or run in a cluster): every "
            "process counts as unattributed",
            (char *)NULL);
    if ((x.x_pods = podmap_new(x.x_base, cfg->ec_kube.ks_api_url[0] ? &ko : NULL,
                               cfg->ec_node_name, cfg->ec_gpumem_resource,
                               &cfg->ec_budget_sources, cfg->ec_dra_driver, pods_changed,
                               &x, err, sizeof(err))) == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: KUBE_API_URL: %s\n", err);
        goto done;
    }
    if ((port = http_start(&x, err, sizeof(err))) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: EXPORTER_LISTEN_ADDR: %s\n", err);
        goto done;
    }
    if ((x.x_poll = evtimer_new(x.x_base, poll_cb, &x)) == NULL ||
        (sigterm = evsignal_new(x.x_base, SIGTERM, signal_cb, x.x_base)) == NULL ||
        (sigint = evsignal_new(x.x_base, SIGINT, signal_cb, x.x_base)) == NULL ||
        event_add(sigterm, NULL) == -1 || event_add(sigint, NULL) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: out of memory\n");
        goto done;
    }
    /* The bound port, for a listener given port 0 (tests). */
    snprintf(portstr, sizeof(portstr), "%d", port);
    log_event(LOG_LEVEL_INFO, "exporter listening", "addr", cfg->ec_listen_addr, "port",
              portstr, "node", cfg->ec_node_name, "nvml", cfg->ec_nvml_library,
              (char *)NULL);
    if ((x.x_poller = poller_new(x.x_base, cfg->ec_nvml_library, cfg->ec_proc_root,
                                 poll_done, &x, err, sizeof(err))) == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: %s\n", err);
        goto done;
    }
    poll_cb(-1, 0, &x); /* the first poll now: /metrics is never empty */
    if (!poller_wait(x.x_poller, FIRST_WAIT_MS))
        render(&x, 0); /* NVML is slow to answer: up 0 meanwhile */
    if (!x.x_fatal)    /* a loopbreak before the loop starts would be lost */
        event_base_dispatch(x.x_base);
    rc = x.x_fatal ? 1 : 0;
done:
    if (sigterm != NULL)
        event_free(sigterm);
    if (sigint != NULL)
        event_free(sigint);
    if (x.x_poll != NULL)
        event_free(x.x_poll);
    http_stop(&x);
    poller_free(x.x_poller); /* first: its thread may still be reading */
    podmap_free(x.x_pods);
    nvml_snapshot_free(&x.x_snap);
    free(x.x_pids);
    text_unref(x.x_text);
    if (x.x_base != NULL)
        event_base_free(x.x_base);
    return rc;
}

/* --once and --format table|json among the arguments that are not settings.
 * 0, or -1 with one line on stderr. */
static int
once_args(char **argv, const int *rest, int nrest, int *once, int *json)
{
    for (int i = 0; i < nrest; i++) {
        const char *a = argv[rest[i]];
        const char *v = NULL;
        if (strcmp(a, "--once") == 0) {
            *once = 1;
            continue;
        }
        if (strncmp(a, "--format=", 9) == 0)
            v = a + 9;
        else if (strcmp(a, "--format") == 0 && i + 1 < nrest &&
                 rest[i + 1] == rest[i] + 1)
            v = argv[rest[++i]];
        if (v == NULL) {
            fprintf(stderr, "gpu-vram-watchdog: exporter: unknown argument '%s'\n", a);
            return -1;
        }
        if (strcmp(v, "table") != 0 && strcmp(v, "json") != 0) {
            fprintf(stderr,
                    "gpu-vram-watchdog: exporter: --format: '%s' is not table or json\n",
                    v);
            return -1;
        }
        *json = strcmp(v, "json") == 0;
    }
    return 0;
}

int
exporter_main(int argc, char **argv)
{
    struct exporter_config cfg;
    struct kube_opts ko;
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc, once = 0, json = -1;
    char err[512];

    if (rest == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: out of memory\n");
        return 1;
    }
    if (exporter_config_load(&cfg, argc, argv, NULL, rest, &nrest, err, sizeof(err)) ==
        -1) {
        fprintf(stderr, "gpu-vram-watchdog: %s\n", err);
        free(rest);
        return 2;
    }
    rc = once_args(argv, rest, nrest, &once, &json);
    free(rest);
    if (rc == 0 && json != -1 && !once) {
        fprintf(stderr, "gpu-vram-watchdog: exporter: --format goes with --once\n");
        rc = -1;
    }
    if (rc == -1) {
        exporter_config_free(&cfg);
        return 2;
    }
    if (once) {
        /* The answer is the output; only errors go to the log. */
        log_init(cfg.ec_log_text ? LOG_FORMAT_TEXT : LOG_FORMAT_JSON, LOG_LEVEL_ERROR);
        kube_settings_opts(&cfg.ec_kube, &ko);
        rc = exporter_once(&cfg, cfg.ec_kube.ks_api_url[0] ? &ko : NULL, json == 1);
        exporter_config_free(&cfg);
        return rc;
    }
    log_init(cfg.ec_log_text ? LOG_FORMAT_TEXT : LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    rc = run(&cfg);
    exporter_config_free(&cfg);
    return rc;
}

void
exporter_print_help(FILE *out)
{
    fprintf(out,
            "\nexporter --once [--format table|json]: one poll printed: per GPU used = "
            "pods + unattributed, every process with its pod or why it has none\n");
    exporter_config_print_help(out);
}
