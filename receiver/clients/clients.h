/* clients.h -- the Prometheus and Kubernetes clients, made from the settings */
#ifndef GVW_CLIENTS_H
#define GVW_CLIENTS_H

#include <stddef.h>

#include "config.h"

struct event_base;
struct prom;
struct kube;

/*
 * Makes both clients on base. *kube stays NULL when no API server is
 * configured (KUBE_API_URL unset outside a cluster). Returns 0, or -1 with a
 * reason in err and nothing allocated. The caller frees them with
 * kube_free() and prom_free().
 */
int clients_new(struct event_base *base, const struct config *cfg, struct prom **prom,
                struct kube **kube, char *err, size_t errlen);

#endif
