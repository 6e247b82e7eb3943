/* suggest_cli.c -- `budgets --suggest [--window 7d] [--headroom 10%] [--node N] [--format
 * table|json|patch]` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "suggest.h"
#include "suggest_math.h"

int
suggest_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--suggest") == 0)
            return 1;
    return 0;
}

/* "--opt VALUE" or "--opt=VALUE" at rest[*i]: the value, or NULL. */
static const char *
value_of(char **argv, const int *rest, int nrest, int *i, const char *opt, int *matched)
{
    const char *arg = argv[rest[*i]];
    size_t n = strlen(opt);

    *matched = 0;
    if (strncmp(arg, opt, n) != 0)
        return NULL;
    if (arg[n] == '=') {
        *matched = 1;
        return arg + n + 1;
    }
    if (arg[n] != '\0')
        return NULL;
    *matched = 1;
    if (*i + 1 >= nrest)
        return NULL;
    return argv[rest[++*i]];
}

int
suggest_cmd(int argc, char **argv)
{
    struct config cfg;
    struct sg_opts o = {.so_window_s = 7 * 86400, .so_headroom_bp = 1000};
    int *rest = calloc((size_t)argc + 1, sizeof(int)), nrest, rc = SG_EXIT_USAGE;
    char err[512];

    if (rest == NULL)
        return SG_EXIT_FAIL;
    if (config_load(&cfg, argc, argv, NULL, rest, &nrest, err, sizeof(err)) == -1) {
        fprintf(stderr, "gpu-vram-watchdog: %s\n", err);
        free(rest);
        return SG_EXIT_USAGE;
    }
    log_init(cfg.c_log_text ? LOG_FORMAT_TEXT : LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    for (int i = 0; i < nrest; i++) {
        static const char *const opts[] = {"--window", "--headroom", "--node",
                                           "--format"};
        const char *arg = argv[rest[i]], *val = NULL;
        int matched = 0, k;
        if (strcmp(arg, "--suggest") == 0)
            continue;
        for (k = 0; k < 4; k++)
            if ((val = value_of(argv, rest, nrest, &i, opts[k], &matched)) != NULL ||
                matched)
                break;
        if (k == 4) {
            fprintf(stderr, "gpu-vram-watchdog: budgets: unknown argument '%s'\n", arg);
            goto done;
        }
        if (val == NULL) {
            fprintf(stderr, "gpu-vram-watchdog: budgets: %s needs a value\n", opts[k]);
            goto done;
        }
        err[0] = '\0';
        if (k == 0)
            sg_parse_window(val, &o.so_window_s, err, sizeof(err));
        else if (k == 1)
            sg_parse_headroom(val, &o.so_headroom_bp, err, sizeof(err));
        else if (k == 2 && val[0] == '\0')
            snprintf(err, sizeof(err), "--node: must not be empty");
        else if (k == 2)
            o.so_node = val;
        else if (strcmp(val, "table") == 0)
            o.so_format = SG_FORMAT_TABLE;
        else if (strcmp(val, "json") == 0)
            o.so_format = SG_FORMAT_JSON;
        else if (strcmp(val, "patch") == 0)
            o.so_format = SG_FORMAT_PATCH;
        else
            snprintf(err, sizeof(err), "--format: '%s' is not table, json or patch", val);
        if (err[0] != '\0') {
            fprintf(stderr, "gpu-vram-watchdog: budgets: %s\n", err);
            goto done;
        }
    }
    rc = suggest_main(&cfg, &o);
done:
    free(rest);
    config_free(&cfg);
    return rc;
}
