/* kubeapi.h -- the Kubernetes API subset the watchdog uses, answered from the world */
#ifndef GVW_SIM_KUBEAPI_H
#define GVW_SIM_KUBEAPI_H

#include <stddef.h>

#include <jansson.h>

#include "world.h"

/* One HTTP request, already taken apart by the server (all members borrowed). */
struct sim_request {
    const char *rq_method;       /* "GET", "POST", "PATCH", "DELETE", ... */
    const char *rq_path;         /* percent-decoded path, no query */
    const char *rq_query;        /* raw query string, "" when none */
    const char *rq_content_type; /* NULL when absent */
    const char *rq_body;         /* NUL-terminated; "" when empty */
    size_t rq_body_len;
    json_t *rq_json; /* the body parsed, or NULL when empty or not JSON */
};

/*
 * Answers one request under /api/. Returns the HTTP status and sets *out to
 * a new reference to the JSON body (an object, or a v1 Status on errors);
 * *out is NULL only when memory ran out (the caller answers 500).
 */
int kubeapi_handle(struct world *w, const struct sim_request *rq, json_t **out);

/* A v1 Status object with status Failure. name/kind fill details when not NULL.
 * New reference or NULL. */
json_t *kubeapi_status(int code, const char *reason, const char *message,
                       const char *name, const char *kind);

#endif
