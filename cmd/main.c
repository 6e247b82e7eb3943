/* main.c -- gpu-vram-watchdog: the subcommand table and --help/--version */
#include <stdio.h>
#include <string.h>

#include "audit_cli.h"
#include "cli.h"
#include "config.h"
#include "exporter.h"

/* One subcommand. run gets the arguments after the command's name. */
struct command {
    const char *c_name;
    int (*c_run)(int argc, char **argv);
    int c_own_help; /* parses its own --help (audit) */
};

static int
run_audit(int argc, char **argv)
{
    return audit_main(argc + 1, argv - 1); /* audit_main wants its own name first */
}

static const struct command commands[] = {
    {"serve", receiver_cmd_serve, 0},
    {"check", receiver_cmd_check, 0},
    {"advertise", receiver_cmd_advertise, 0},
    {"budgets", receiver_cmd_budgets, 0},
    {"audit", run_audit, 1},
    {"exporter", exporter_main, 0},
};

static void
usage(FILE *out)
{
    fprintf(
        out,
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
        "  budgets [--node N] [--format table|json]\n"
        "                         the seating chart: per GPU node, capacity, budgets,\n"
        "                         free VRAM and each tenant's budget vs live use\n"
        "  budgets --suggest [--window 7d] [--headroom 10%%] [--node N]\n"
        "          [--format table|json|patch]\n"
        "                         budgets from measured use (p99, max) per workload\n"
        "  exporter               the node agent: per-pod, per-GPU VRAM from NVML as "
        "Prometheus metrics\n"
        "  --help, --version\n"
        "\n");
    config_print_help(out);
    exporter_print_help(out);
}

static int
print_version(void)
{
    printf("gpu-vram-watchdog %s\n", GVW_VERSION);
    return 0;
}

static int
is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int
main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    const struct command *found = NULL;

    if (cmd == NULL) {
        usage(stderr);
        return 2;
    }
    if (is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0)
        return print_version();
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(cmd, commands[i].c_name) == 0)
            found = &commands[i];
    /* `serve --version` and friends, as `serve --help`: the version, before
     * any setting is read (it must not need a token file to answer). */
    if (found != NULL)
        for (int a = 2; a < argc; a++)
            if (strcmp(argv[a], "--version") == 0)
                return print_version();
    /* `serve --help` and friends: the same help, not an unknown argument. */
    if (found == NULL || !found->c_own_help)
        for (int a = 2; a < argc; a++)
            if (is_help(argv[a])) {
                usage(stdout);
                return 0;
            }
    if (found != NULL)
        return found->c_run(argc - 2, argv + 2);
    fprintf(stderr, "gpu-vram-watchdog: unknown command '%s' (see --help)\n", cmd);
    return 2;
}
