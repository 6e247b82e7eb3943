/* server.h -- the simulator's one HTTP listener: Kubernetes API, /metrics, /sim */
#ifndef GVW_SIM_SERVER_H
#define GVW_SIM_SERVER_H

#include <event2/event.h>
#include <event2/http.h>

#include "lease_api.h"
#include "nodefs.h"
#include "world.h"

struct server {
    struct event_base *sv_base; /* borrowed */
    struct world *sv_world;     /* borrowed */
    const char *sv_token_file;  /* borrowed; NULL = the API takes any caller */
    struct nodefs *sv_nodefs;   /* borrowed; NULL = no node files to keep current */
    struct lease_api *sv_lease; /* borrowed: the Leases (tests/fake/lease_api.c) */
};

/* The evhttp general callback (arg: struct server *). Routes by path:
 * /api/... to kubeapi (/apis/coordination.k8s.io/... to the Leases), GET
 * /metrics to the exporter, /sim/... to control (GET /sim/lease: the Leases;
 * POST /sim/lease-fault with a body "fence:500", "all:503" or "none"). */
void server_handle(struct evhttp_request *req, void *arg);

#endif
