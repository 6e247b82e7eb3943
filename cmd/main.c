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
    int c_own_help;                /* parses its own --help (audit) */
    const char *c_usage;           /* COMMAND --help: its usage and what it does */
    void (*c_settings)(FILE *out); /* then the settings it reads */
};

static int
run_audit(int argc, char **argv)
{
    return audit_main(argc + 1, argv - 1); /* audit_main wants its own name first */
}

static const struct command commands[] = {
    {"serve", receiver_cmd_serve, 0,
     "usage: gpu-vram-watchdog serve [--setting value ...]\n"
     "\n"
     "The daemon: the Alertmanager webhook (POST /webhook), decisions, capacity\n"
     "advertising, the seating chart (GET /), /metrics, /healthz, /readyz.\n"
     "Dry-run (DRY_RUN=true) is the default: it records what it would recycle.\n",
     config_print_help},
    {"check", receiver_cmd_check, 0,
     "usage: gpu-vram-watchdog check [--node N] [--format table|json] [--setting value ...]\n"
     "\n"
     "Re-verify now and print the decision serve would take, per GPU node (or\n"
     "--node N); acts on nothing, records nothing. Reads Prometheus and the\n"
     "Kubernetes API with serve's settings.\n",
     config_print_help},
    {"advertise", receiver_cmd_advertise, 0,
     "usage: gpu-vram-watchdog advertise [--once] [--setting value ...]\n"
     "\n"
     "Patch the gpumem capacity (GPUMEM_CAPACITY_MIB) onto every node matching\n"
     "GPU_NODE_SELECTOR and exit: 0 only when every matching node was patched.\n",
     config_print_help},
    {"budgets", receiver_cmd_budgets, 0,
     "usage: gpu-vram-watchdog budgets [--node N] [--format table|json] [--setting value ...]\n"
     "       gpu-vram-watchdog budgets --suggest [--window 7d] [--headroom 10%] [--node N]\n"
     "                                 [--format table|json|patch]\n"
     "\n"
     "The seating chart as text: per GPU node (and GPU), the advertised capacity,\n"
     "the sum of declared budgets, free VRAM against the floor, and each tenant's\n"
     "budget against its live use; read-only. --suggest: budgets from measured\n"
     "use (p99, max) per workload.\n",
     config_print_help},
    {"audit", run_audit, 1, NULL, NULL},
    {"exporter", exporter_main, 0,
     "usage: gpu-vram-watchdog exporter [--setting value ...]\n"
     "       gpu-vram-watchdog exporter --once [--format table|json]\n"
     "\n"
     "The node agent (a DaemonSet, hostPID): per-pod, per-GPU VRAM from NVML as\n"
     "Prometheus metrics on EXPORTER_LISTEN_ADDR (/metrics, /healthz).\n",
     exporter_print_help},
};

/* COMMAND --help: that command's usage and the settings it reads. */
static int
command_help(const struct command *c)
{
    printf("%s\n", c->c_usage);
    c->c_settings(stdout);
    return 0;
}

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
        "  --help, --version      'COMMAND --help' for one command alone\n"
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
                if (found != NULL)
                    return command_help(found);
                usage(stdout);
                return 0;
            }
    if (found != NULL)
        return found->c_run(argc - 2, argv + 2);
    fprintf(stderr, "gpu-vram-watchdog: unknown command '%s' (see --help)\n", cmd);
    return 2;
}
