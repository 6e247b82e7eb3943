/* clients.c -- the Prometheus and Kubernetes clients, made from the settings */
#include "clients.h"

#include <stdio.h>

#include "kube.h"
#include "prom.h"

int
clients_new(struct event_base *base, const struct config *cfg, struct prom **prom,
            struct kube **kube, char *err, size_t errlen)
{
    struct prom_opts po = {
        .po_url = cfg->c_prometheus_url,
        .po_connect_timeout_ms = (long)cfg->c_kube.ks_http_connect_timeout_ms,
        .po_timeout_ms = (long)cfg->c_kube.ks_http_timeout_ms,
    };
    struct kube_opts ko;

    *kube = NULL;
    if ((*prom = prom_new(base, &po, err, errlen)) == NULL)
        return -1;
    if (cfg->c_kube.ks_api_url[0] == '\0')
        return 0;
    kube_settings_opts(&cfg->c_kube, &ko);
    if ((*kube = kube_new(base, &ko, err, errlen)) == NULL) {
        prom_free(*prom);
        *prom = NULL;
        return -1;
    }
    return 0;
}
