/* cli.c -- the receiver's subcommands (serve, check, advertise) as the binary runs them
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "budgets.h"
#include "capacity.h"
#include "check.h"
#include "clients.h"
#include "config.h"
#include "kube.h"
#include "log.h"
#include "prom.h"
#include "serve.h"
#include "suggest.h"

/* Loads the configuration for a subcommand; leftover args go to rest[]. */
static int
load(struct config *cfg, int argc, char **argv, int *rest, int *nrest)
{
    char err[512];

    if (config_load(cfg, argc, argv, NULL, rest, nrest, err, sizeof(err)) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: %s\n", err);
        return -1;
    }
    log_init(cfg->c_log_text ? LOG_FORMAT_TEXT : LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    return 0;
}

int
receiver_cmd_serve(int argc, char **argv)
{
    struct config cfg;
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc;
    char err[512];

    if (rest == NULL)
        return 1;
    if (load(&cfg, argc, argv, rest, &nrest) == -1) {
        free(rest);
        return 2;
    }
    if (config_validate_serve(&cfg, err, sizeof(err)) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: %s\n", err);
        free(rest);
        config_free(&cfg);
        return 2;
    }
    if (nrest > 0) {
        fprintf(stderr, "gpu-vram-watchdog: serve: unknown argument '%s'\n",
                argv[rest[0]]);
        free(rest);
        config_free(&cfg);
        return 2;
    }
    free(rest);
    rc = serve_main(&cfg);
    config_free(&cfg);
    return rc;
}

/* `check|budgets [--node N] [--format table|json]`: both look, print, and act on nothing.
 */
static int
cmd_node_format(int argc, char **argv, const char *name,
                int (*run)(const struct config *, const char *, int))
{
    struct config cfg;
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc = 2, json = 0;
    const char *node = NULL;

    if (rest == NULL)
        return 1;
    if (load(&cfg, argc, argv, rest, &nrest) == -1) {
        free(rest);
        return 2;
    }
    for (int i = 0; i < nrest; i++) {
        const char *arg = argv[rest[i]];
        const char *val = i + 1 < nrest ? argv[rest[i + 1]] : NULL;
        if ((strcmp(arg, "--node") == 0 || strcmp(arg, "--format") == 0) && val == NULL) {
            fprintf(stderr, "gpu-vram-watchdog: %s: %s needs a value\n", name, arg);
            goto done;
        }
        if (strncmp(arg, "--node=", 7) == 0) {
            node = arg + 7;
        } else if (strcmp(arg, "--node") == 0 && val != NULL) {
            node = val;
            i++;
        } else if (strncmp(arg, "--format=", 9) == 0 ||
                   (strcmp(arg, "--format") == 0 && val)) {
            const char *f = arg[8] == '=' ? arg + 9 : val;
            if (arg[8] != '=')
                i++;
            if (strcmp(f, "json") != 0 && strcmp(f, "table") != 0) {
                fprintf(stderr,
                        "gpu-vram-watchdog: %s: --format: '%s' is not table or json\n",
                        name, f);
                goto done;
            }
            json = strcmp(f, "json") == 0;
        } else {
            fprintf(stderr, "gpu-vram-watchdog: %s: unknown argument '%s'\n", name, arg);
            goto done;
        }
    }
    if (node != NULL && node[0] == '\0') {
        fprintf(stderr, "gpu-vram-watchdog: %s: --node: must not be empty\n", name);
        goto done;
    }
    rc = run(&cfg, node, json);
done:
    free(rest);
    config_free(&cfg);
    return rc;
}

int
receiver_cmd_check(int argc, char **argv)
{
    return cmd_node_format(argc, argv, "check", check_main);
}

int
receiver_cmd_budgets(int argc, char **argv)
{
    /* budgets from measured use: receiver/seating/suggest */
    if (suggest_wanted(argc, argv))
        return suggest_cmd(argc, argv);
    return cmd_node_format(argc, argv, "budgets", budgets_main);
}

struct advertise_run {
    int ar_ok;
    struct event_base *ar_base;
};

static void
advertised(int ok, const char *summary, void *arg)
{
    struct advertise_run *run = arg;

    run->ar_ok = ok;
    fprintf(ok ? stdout : stderr, "%s%s\n",
            ok ? "" : "gpu-vram-watchdog: advertise: ", summary);
    event_base_loopbreak(run->ar_base);
}

/* `advertise [--once]`: one pass over the GPU nodes, then exit (0 only when
 * every matching node was patched). */
int
receiver_cmd_advertise(int argc, char **argv)
{
    struct config cfg;
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc = 2;
    struct advertise_run run = {0};
    struct prom *prom = NULL;
    struct kube *kube = NULL;
    struct capacity *cap = NULL;
    char err[512];

    if (rest == NULL)
        return 1;
    if (load(&cfg, argc, argv, rest, &nrest) == -1) {
        free(rest);
        return 2;
    }
    for (int i = 0; i < nrest; i++)
        if (strcmp(argv[rest[i]], "--once") != 0) {
            fprintf(stderr, "gpu-vram-watchdog: advertise: unknown argument '%s'\n",
                    argv[rest[i]]);
            goto done;
        }
    /* Another source's capacity belongs to its own scheduler or device plugin
     * (SPEC "Where budgets come from"): nothing to patch, and nothing wrong. */
    if (!bsrc_order_has(&cfg.c_budget_sources, BSRC_RESOURCE)) {
        fprintf(stderr,
                "gpu-vram-watchdog: advertise: capacity advertising is only for "
                "BUDGET_SOURCES=resource; BUDGET_SOURCES=%s patches nothing\n",
                cfg.c_budget_sources_raw);
        rc = 0;
        goto done;
    }
    rc = 1;
    if ((run.ar_base = event_base_new()) == NULL ||
        clients_new(run.ar_base, &cfg, &prom, &kube, err, sizeof(err)) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: advertise: %s\n",
                run.ar_base ? err : "no event loop");
        goto done;
    }
    if (kube == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: advertise: no Kubernetes API server "
                        "(set KUBE_API_URL, or run in a cluster)\n");
        goto done;
    }
    struct capacity_opts co = {
        .co_resource = cfg.c_gpumem_resource,
        .co_capacity_mib = cfg.c_gpumem_capacity_mib,
        .co_auto = cfg.c_gpumem_capacity_auto,
        .co_reserve_mib = cfg.c_gpumem_reserve_mib,
        .co_prom = prom,
        .co_gpu_label = cfg.c_gpu_label,
        .co_selector = cfg.c_gpu_node_selector,
    };
    if ((cap = capacity_new(run.ar_base, kube, &co)) == NULL ||
        capacity_once(cap, advertised, &run) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: advertise: cannot start\n");
        goto done;
    }
    event_base_dispatch(run.ar_base);
    rc = run.ar_ok ? 0 : 1;
done:
    capacity_free(cap);
    kube_free(kube);
    prom_free(prom);
    if (run.ar_base != NULL)
        event_base_free(run.ar_base);
    free(rest);
    config_free(&cfg);
    return rc;
}
