/* config_serve.c -- what serve checks of the loaded settings before it starts: the
 * files it must read, leader election's identity */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "token.h"

static int
kube_name_ok(const char *s, size_t max, int dots)
{
    size_t n = strlen(s);

    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && !(dots && c == '.'))
            return 0;
        if ((i == 0 || i == n - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* LEADER_ELECTION=true: what the Lease needs, named setting by setting. */
static int
validate_election(const struct config *cfg, char *err, size_t errlen)
{
    if (!cfg->c_leader_election)
        return 0;
    if (cfg->c_kube.ks_api_url[0] == '\0') {
        snprintf(err, errlen,
                 "LEADER_ELECTION: true needs an API server (KUBE_API_URL, or run in a "
                 "cluster)");
        return -1;
    }
    if (!kube_name_ok(cfg->c_pod_name, 253, 1)) {
        snprintf(err, errlen,
                 "POD_NAME: '%.64s' is not a pod name (set it from the "
                 "downward API: metadata.name)",
                 cfg->c_pod_name);
        return -1;
    }
    if (!kube_name_ok(cfg->c_pod_namespace, 63, 0)) {
        snprintf(err, errlen,
                 "POD_NAMESPACE: '%.64s' is not a namespace (set it from the "
                 "downward API: metadata.namespace)",
                 cfg->c_pod_namespace);
        return -1;
    }
    if (!kube_name_ok(cfg->c_lease_name, 253, 1)) {
        snprintf(err, errlen, "LEASE_NAME: '%.64s' is not a Kubernetes name",
                 cfg->c_lease_name);
        return -1;
    }
    return 0;
}

int
config_validate_serve(const struct config *cfg, char *err, size_t errlen)
{
    if (validate_election(cfg, err, errlen) == -1)
        return -1;
    if (cfg->c_webhook_auth == WEBHOOK_AUTH_BEARER &&
        cfg->c_webhook_token_file[0] == '\0') {
        snprintf(err, errlen,
                 "WEBHOOK_TOKEN_FILE: required when WEBHOOK_AUTH=bearer "
                 "(set a token file, or WEBHOOK_AUTH=none)");
        return -1;
    }
    if (cfg->c_webhook_auth == WEBHOOK_AUTH_BEARER) {
        /* An empty or malformed token is a setting error like an unreadable
         * file: one line, exit 2, before anything starts. */
        char why[512], *tok;

        if (token_read(cfg->c_webhook_token_file, &tok, why, sizeof(why)) == -1) {
            snprintf(err, errlen, "WEBHOOK_TOKEN_FILE: %s", why);
            return -1;
        }
        /* deploy/ ships a placeholder Secret so `apply -k` works before a token
         * exists; running with it would accept anyone who read the repository. */
        if (strncmp(tok, "PLACEHOLDER", 11) == 0) {
            snprintf(err, errlen,
                     "WEBHOOK_TOKEN_FILE: holds the placeholder token deploy/ ships; "
                     "generate one (openssl rand -hex 32) and put it in the "
                     "gpu-vram-watchdog-webhook Secret");
            token_wipe(tok, strlen(tok));
            free(tok);
            return -1;
        }
        token_wipe(tok, strlen(tok));
        free(tok);
    }
    return 0;
}
