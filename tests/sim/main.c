/* main.c -- gvw-sim: one simulated GPU node (Kubernetes API, NVML state, /proc) for tests
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <event2/http.h>

#include "nodefs.h"
#include "release.h"
#include "scenario.h"
#include "lease_api.h"
#include "server.h"
#include "world.h"

#define EXIT_USAGE 2               /* bad flags or a bad scenario file */
#define MAX_BODY (3 * 1024 * 1024) /* the API server's own request limit */
#define SYNC_USEC 100000           /* the node's files follow usage timelines at 10 Hz */

struct options {
    const char *op_scenario;
    const char *op_listen;
    const char *op_token_file;
    const char *op_nvml_state; /* NULL = no stub NVML state file */
    const char *op_proc_root;  /* NULL = no fake /proc */
    const char *op_node_dir;   /* NULL = no per-node files */
    double op_time_scale;      /* 0 = the scenario's */
    long long op_seed;         /* -1 = the scenario's */
};

static void
usage(FILE *f)
{
    fprintf(
        f,
        "usage: gvw-sim --scenario FILE [--listen 127.0.0.1:PORT] [--time-scale F]\n"
        "               [--seed N] [--token-file FILE] [--nvml-state FILE]\n"
        "               [--proc-root DIR] [--node-dir DIR]\n"
        "  --listen      address to serve on; port 0 picks one (default 127.0.0.1:0);\n"
        "                prints 'listening HOST:PORT' on stdout once ready\n"
        "  --time-scale  real seconds per scenario second (0.1 = ten times faster)\n"
        "  --seed        seeds generated uids and pod name suffixes\n"
        "  --token-file  require 'Authorization: Bearer <file contents>' on /api/\n"
        "  --nvml-state  keep the stub NVML's state file (GVW_STUB_NVML_STATE) current\n"
        "  --proc-root   keep DIR/<pid>/cgroup current for every GPU process (PROC_ROOT)\n"
        "  --node-dir    keep DIR/<node>/nvml.state and DIR/<node>/proc/ current for\n"
        "                every simulated node (the two above are the first node's)\n");
}

/* Takes "--name value" or "--name=value"; advances *i past what it used. */
static const char *
flag_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0' || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int
parse_args(int argc, char **argv, struct options *op)
{
    const char *v;
    char *end;
    int i;

    op->op_listen = "127.0.0.1:0";
    op->op_seed = -1;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if ((v = flag_value(argc, argv, &i, "--scenario")) != NULL) {
            op->op_scenario = v;
        } else if ((v = flag_value(argc, argv, &i, "--listen")) != NULL) {
            op->op_listen = v;
        } else if ((v = flag_value(argc, argv, &i, "--token-file")) != NULL) {
            op->op_token_file = v;
        } else if ((v = flag_value(argc, argv, &i, "--nvml-state")) != NULL) {
            op->op_nvml_state = v;
        } else if ((v = flag_value(argc, argv, &i, "--proc-root")) != NULL) {
            op->op_proc_root = v;
        } else if ((v = flag_value(argc, argv, &i, "--node-dir")) != NULL) {
            op->op_node_dir = v;
        } else if ((v = flag_value(argc, argv, &i, "--time-scale")) != NULL) {
            errno = 0;
            op->op_time_scale = strtod(v, &end);
            if (errno != 0 || *end != '\0' || !(op->op_time_scale > 0)) {
                fprintf(stderr, "gvw-sim: --time-scale: want a number > 0, got '%s'\n",
                        v);
                return -1;
            }
        } else if ((v = flag_value(argc, argv, &i, "--seed")) != NULL) {
            errno = 0;
            op->op_seed = strtoll(v, &end, 10);
            if (errno != 0 || *end != '\0' || op->op_seed < 0) {
                fprintf(stderr, "gvw-sim: --seed: want an integer >= 0, got '%s'\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "gvw-sim: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return -1;
        }
    }
    if (op->op_scenario == NULL) {
        fprintf(stderr, "gvw-sim: --scenario is required\n");
        usage(stderr);
        return -1;
    }
    return 0;
}

/* Splits "host:port" into host (copied into buf) and port. */
static int
parse_listen(const char *addr, char *host, size_t hostlen, unsigned short *port)
{
    const char *colon = strrchr(addr, ':');
    char *end;
    long p;

    if (colon == NULL || colon == addr || (size_t)(colon - addr) >= hostlen)
        return -1;
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || colon[1] == '\0' || p < 0 || p > 65535)
        return -1;
    snprintf(host, hostlen, "%.*s", (int)(colon - addr), addr);
    *port = (unsigned short)p;
    return 0;
}

/* SIGTERM/SIGINT arrive here as loop events, never as work inside a handler. */
static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    fprintf(stderr, "gvw-sim: signal %d, shutting down\n", (int)sig);
    event_base_loopbreak(arg);
}

/* The node's files follow the usage timelines even when nobody asks the API. A failed
 * write is said once, and again only after a success. */
static void
on_sync_timer(evutil_socket_t fd, short what, void *arg)
{
    static int failing;
    struct nodefs *nf = arg;
    char err[600];

    if (nodefs_sync(nf, err, sizeof(err)) != 0) {
        if (!failing)
            fprintf(stderr, "gvw-sim: node files not updated: %s\n", err);
        failing = 1;
    } else {
        failing = 0;
    }
}

/* The port the kernel picked when asked for 0. */
static int
bound_port(struct evhttp_bound_socket *bs)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

int
main(int argc, char **argv)
{
    struct options op = {0};
    struct scenario *sc = NULL;
    struct world *w = NULL;
    struct event_base *base = NULL;
    struct evhttp *http = NULL;
    struct evhttp_bound_socket *bs;
    struct event *sigterm = NULL, *sigint = NULL, *synct = NULL;
    struct nodefs *nf = NULL;
    struct releases *rs = NULL;
    struct timeval every = {0, SYNC_USEC};
    struct server sv = {0};
    struct sigaction sa;
    char err[600], host[256];
    unsigned short port;
    int rc = 1;

    if (parse_args(argc, argv, &op) != 0)
        return EXIT_USAGE;
    if (parse_listen(op.op_listen, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "gvw-sim: --listen: want HOST:PORT, got '%s'\n", op.op_listen);
        return EXIT_USAGE;
    }
    if (scenario_load(op.op_scenario, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "gvw-sim: %s\n", err);
        return EXIT_USAGE;
    }
    if (op.op_seed >= 0)
        sc->sc_seed = (unsigned long long)op.op_seed;
    if (op.op_time_scale > 0)
        sc->sc_time_scale = op.op_time_scale;
    /* A client that hangs up mid-answer must not kill the simulator. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);

    w = world_new(sc, sc->sc_time_scale, err, sizeof(err));
    base = event_base_new();
    http = base ? evhttp_new(base) : NULL;
    if (w == NULL || http == NULL) {
        fprintf(stderr, "gvw-sim: %s\n", w == NULL ? err : "cannot set up libevent");
        goto done;
    }
    sv.sv_base = base;
    sv.sv_world = w;
    sv.sv_token_file = op.op_token_file;
    sv.sv_nodefs = NULL;
    /* The coordination.k8s.io Leases the watchdog's replicas elect a leader on. */
    if ((sv.sv_lease = lease_api_new()) == NULL) {
        fprintf(stderr, "gvw-sim: out of memory\n");
        goto done;
    }
    if (op.op_nvml_state != NULL || op.op_proc_root != NULL || op.op_node_dir != NULL) {
        nf = nodefs_new(w, op.op_nvml_state, op.op_proc_root, op.op_node_dir, err,
                        sizeof(err));
        if (nf == NULL) {
            fprintf(stderr, "gvw-sim: node files: %s\n", err);
            goto done;
        }
        synct = event_new(base, -1, EV_PERSIST, on_sync_timer, nf);
        if (synct == NULL || event_add(synct, &every) != 0) {
            fprintf(stderr, "gvw-sim: out of memory\n");
            goto done;
        }
        /* The files exist before anyone is told the node is up. */
        if (nodefs_sync(nf, err, sizeof(err)) != 0) {
            fprintf(stderr, "gvw-sim: cannot write the node's files: %s\n", err);
            goto done;
        }
        sv.sv_nodefs = nf;
    }
    /* Release endpoints first: they set the pod IPs the node's API then shows. */
    rs = releases_new(base, w, nf, err, sizeof(err));
    if (rs == NULL) {
        fprintf(stderr, "gvw-sim: release endpoints: %s\n", err);
        goto done;
    }
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                         EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
                                         EVHTTP_REQ_HEAD);
    evhttp_set_max_body_size(http, MAX_BODY);
    evhttp_set_gencb(http, server_handle, &sv);
    bs = evhttp_bind_socket_with_handle(http, host, port);
    if (bs == NULL || bound_port(bs) < 0) {
        fprintf(stderr, "gvw-sim: cannot listen on %s: %s\n", op.op_listen,
                strerror(errno));
        goto done;
    }
    sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    sigint = evsignal_new(base, SIGINT, on_signal, base);
    if (sigterm == NULL || sigint == NULL || evsignal_add(sigterm, NULL) != 0 ||
        evsignal_add(sigint, NULL) != 0) {
        fprintf(stderr, "gvw-sim: cannot watch signals\n");
        goto done;
    }
    printf("listening %s:%d\n", host, bound_port(bs));
    fflush(stdout);
    for (size_t i = 0; i < sc->sc_nnodes; i++)
        fprintf(stderr,
                "gvw-sim: node %s, %zu GPU(s), GPU 0 %s %ld MiB (%ld reserved, %ld "
                "per CUDA context)\n",
                sc->sc_nodes[i].nd_name, sc->sc_nodes[i].nd_ngpus,
                sc->sc_nodes[i].nd_gpus[0].gp_name,
                sc->sc_nodes[i].nd_gpus[0].gp_total_mib,
                sc->sc_nodes[i].nd_gpus[0].gp_reserved_mib,
                sc->sc_nodes[i].nd_gpus[0].gp_context_mib);
    fprintf(stderr, "gvw-sim: %zu pods and host processes, time scale %g\n", sc->sc_npods,
            sc->sc_time_scale);
    for (size_t i = 0; i < w->w_npods; i++)
        if (w->w_pods[i].sp_release_url[0] != '\0')
            fprintf(stderr, "gvw-sim: %s/%s: release endpoint POST %s\n",
                    w->w_pods[i].sp_spec->po_namespace, w->w_pods[i].sp_name,
                    w->w_pods[i].sp_release_url);
    if (event_base_dispatch(base) < 0) {
        fprintf(stderr, "gvw-sim: event loop failed\n");
        goto done;
    }
    rc = 0;
done:
    if (synct != NULL)
        event_free(synct);
    if (sigterm != NULL)
        event_free(sigterm);
    if (sigint != NULL)
        event_free(sigint);
    if (http != NULL)
        evhttp_free(http);
    releases_free(rs);
    lease_api_free(sv.sv_lease);
    if (base != NULL)
        event_base_free(base);
    nodefs_free(nf);
    world_free(w);
    scenario_free(sc);
    return rc;
}
