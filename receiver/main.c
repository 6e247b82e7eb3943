/* main.c -- gpu-vram-watchdog: subcommand dispatch */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_cli.h"
#include "config.h"
#include "log.h"
#include "serve.h"

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: gpu-vram-watchdog COMMAND [--setting value ...]\n"
            "\n"
            "Commands:\n"
            "  serve                  the daemon: webhook receiver, capacity advertising, "
            "metrics\n"
            "  audit                  query the audit store (see 'audit --help'); never "
            "writes\n"
            "  check [--node N] [--format table|json]\n"
            "                         re-verify now and print the decision it would take\n"
            "  advertise [--once]     patch the gpumem capacity onto GPU nodes and exit\n"
            "  --help, --version\n"
            "\n");
    config_print_help(out);
}

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

static int
cmd_serve(int argc, char **argv)
{
    struct config cfg;
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc;

    if (rest == NULL)
        return 1;
    if (load(&cfg, argc, argv, rest, &nrest) == -1) {
        free(rest);
        return 2;
    }
    if (nrest > 0) {
        fprintf(stderr, "gpu-vram-watchdog: serve: unknown argument '%s'\n", argv[rest[0]]);
        free(rest);
        config_free(&cfg);
        return 2;
    }
    free(rest);
    rc = serve_main(&cfg);
    config_free(&cfg);
    return rc;
}

int
main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (cmd == NULL) {
        usage(stderr);
        return 2;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("gpu-vram-watchdog %s\n", GVW_VERSION);
        return 0;
    }
    if (strcmp(cmd, "serve") == 0)
        return cmd_serve(argc - 2, argv + 2);
    if (strcmp(cmd, "audit") == 0)
        return audit_main(argc - 1, argv + 1);
    fprintf(stderr, "gpu-vram-watchdog: unknown command '%s' (see --help)\n", cmd);
    return 2;
}
