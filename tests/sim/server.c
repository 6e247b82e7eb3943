/* server.c -- takes HTTP requests apart, answers them, logs every mutating API call */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>

#include "exporter.h"
#include "kubeapi.h"

static const char *
method_name(enum evhttp_cmd_type cmd)
{
    switch (cmd) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    case EVHTTP_REQ_PATCH:
        return "PATCH";
    default:
        return "OTHER";
    }
}

static void
reply_text(struct evhttp_request *req, int code, const char *ctype, const char *text)
{
    struct evbuffer *buf = evbuffer_new();

    if (buf == NULL || evbuffer_add(buf, text, strlen(text)) != 0 ||
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          ctype) != 0) {
        if (buf != NULL)
            evbuffer_free(buf);
        evhttp_send_error(req, 500, NULL);
        return;
    }
    evhttp_send_reply(req, code, NULL, buf);
    evbuffer_free(buf);
}

/* Sends body (stolen) as JSON; NULL body means memory ran out. A Status whose
 * details suggest a wait also gets Retry-After, as the API server's
 * ErrorNegotiated writes it. */
static void
reply_json(struct evhttp_request *req, int code, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_int_t wait = json_integer_value(
        json_object_get(json_object_get(body, "details"), "retryAfterSeconds"));
    char after[24];

    if (wait > 0) {
        snprintf(after, sizeof(after), "%lld", (long long)wait);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", after);
    }
    json_decref(body);
    if (text == NULL) {
        reply_text(req, 500, "text/plain", "gvw-sim: out of memory\n");
        return;
    }
    reply_text(req, code, "application/json", text);
    free(text);
}

/* The caller's bearer token against the token file, re-read every time so tests can
 * rotate it. 1 when allowed. */
static int
authorized(const struct server *sv, struct evhttp_request *req)
{
    const char *hdr =
        evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    char want[4096];
    size_t n;
    FILE *f;

    if (sv->sv_token_file == NULL)
        return 1;
    f = fopen(sv->sv_token_file, "r");
    if (f == NULL)
        return 0;
    n = fread(want, 1, sizeof(want) - 1, f);
    fclose(f);
    want[n] = '\0';
    while (n > 0 && (want[n - 1] == '\n' || want[n - 1] == '\r' || want[n - 1] == ' '))
        want[--n] = '\0';
    return n > 0 && hdr != NULL && strncmp(hdr, "Bearer ", 7) == 0 &&
           strcmp(hdr + 7, want) == 0;
}

/* Appends one mutating API call to the event log and stderr. */
static void
record(struct world *w, const struct sim_request *rq, struct evhttp_request *req,
       int code, const json_t *resp)
{
    const char *auth =
        evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    double now = world_now(w);
    char when[48];
    json_t *ev;

    world_fmt_time(w->w_start_wall + now, 1, when, sizeof(when));
    ev = json_pack(
        "{s:s, s:f, s:f, s:s, s:s, s:s, s:s?, s:s, s:O?, s:i, s:O?}", "time", when, "t",
        now, "scenario_t", now / w->w_scale, "method", rq->rq_method, "path", rq->rq_path,
        "query", rq->rq_query, "content_type", rq->rq_content_type, "auth",
        auth == NULL                       ? "absent"
        : strncmp(auth, "Bearer ", 7) == 0 ? "bearer"
                                           : "other",
        "body", rq->rq_json, "code", code, "reason", json_object_get(resp, "reason"));
    if (ev != NULL && rq->rq_json == NULL && rq->rq_body_len > 0 &&
        json_object_set_new(ev, "body_raw", json_stringn(rq->rq_body, rq->rq_body_len)) !=
            0) {
        json_decref(ev);
        ev = NULL;
    }
    world_record(w, ev);
    fprintf(stderr, "gvw-sim: t=%.3f %s %s%s%s -> %d\n", now, rq->rq_method, rq->rq_path,
            *rq->rq_query ? "?" : "", rq->rq_query, code);
}

/* Whether rq is an eviction or a pod's DELETE: what the scenario's "throttle" sheds. */
static int
recycles_pod(const struct sim_request *rq)
{
    const char *p = rq->rq_path;
    size_t n = strlen(p);

    if (strncmp(p, "/api/v1/namespaces/", 19) != 0 || strstr(p, "/pods/") == NULL)
        return 0;
    if (strcmp(rq->rq_method, "POST") == 0)
        return n > 9 && strcmp(p + n - 9, "/eviction") == 0;
    return strcmp(rq->rq_method, "DELETE") == 0 &&
           strchr(strstr(p, "/pods/") + 6, '/') == NULL;
}

/* Load shedding, as max-in-flight and priority-and-fairness answer it (apiserver
 * server/filters: tooManyRequests): plain text, Retry-After, no Status. */
static void
reply_shed(struct server *sv, struct evhttp_request *req, const struct sim_request *rq)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);

    record(sv->sv_world, rq, req, 429, NULL);
    evhttp_add_header(h, "Retry-After", sv->sv_world->w_sc->sc_throttle_retry_after);
    evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
    reply_text(req, 429, "text/plain; charset=utf-8",
               "Too many requests, please try again later.\n");
}

static void
handle_api(struct server *sv, struct evhttp_request *req, const struct sim_request *rq)
{
    int code, mutating =
                  strcmp(rq->rq_method, "GET") != 0 && strcmp(rq->rq_method, "HEAD") != 0;
    int allowed = authorized(sv, req);
    json_t *out = NULL;

    /* Shedding comes after authentication, before anything is read or changed. */
    if (allowed && recycles_pod(rq) && sv->sv_world->w_throttle_left > 0) {
        sv->sv_world->w_throttle_left--;
        reply_shed(sv, req, rq);
        return;
    }
    if (!allowed) {
        code = 401;
        out = kubeapi_status(401, "Unauthorized", "Unauthorized", NULL, NULL);
    } else if (sv->sv_lease == NULL ||
               (code = lease_api_handle(sv->sv_lease, rq->rq_method, rq->rq_path,
                                        rq->rq_json, &out)) == 0) {
        code = kubeapi_handle(sv->sv_world, rq, &out);
    }
    if (out == NULL)
        code = 500;
    if (mutating)
        record(sv->sv_world, rq, req, code, out);
    /* An evicted pod's processes die with it: NVML stops naming them before the
     * caller hears the answer, as on a real node. */
    if (mutating && sv->sv_nodefs != NULL && code < 300) {
        char err[600];
        if (nodefs_sync(sv->sv_nodefs, err, sizeof(err)) != 0)
            fprintf(stderr, "gvw-sim: node files not updated: %s\n", err);
    }
    reply_json(req, code, out);
}

static void
handle_metrics(struct server *sv, struct evhttp_request *req)
{
    struct evbuffer *buf = evbuffer_new();

    if (buf == NULL || exporter_render(sv->sv_world, buf) != 0 ||
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "text/plain; version=0.0.4; charset=utf-8") != 0) {
        if (buf != NULL)
            evbuffer_free(buf);
        evhttp_send_error(req, 500, NULL);
        return;
    }
    evhttp_send_reply(req, 200, NULL, buf);
    evbuffer_free(buf);
}

/* Runs once the quit answer has been written, so the test always reads it. */
static void
quit_done(struct evhttp_request *req, void *arg)
{
    struct server *sv = arg;

    fprintf(stderr, "gvw-sim: quit requested\n");
    event_base_loopbreak(sv->sv_base);
}

static void
handle_sim(struct server *sv, struct evhttp_request *req, const char *method,
           const char *path, const char *body)
{
    int get = strcmp(method, "GET") == 0;

    if (strcmp(path, "/sim/lease") == 0 && get && sv->sv_lease != NULL) {
        reply_json(req, 200, lease_api_state(sv->sv_lease));
    } else if (strcmp(path, "/sim/lease-fault") == 0 && strcmp(method, "POST") == 0 &&
               sv->sv_lease != NULL) {
        char spec[64];
        snprintf(spec, sizeof(spec), "%s", body);
        spec[strcspn(spec, "\r\n")] = '\0';
        if (lease_api_fault(sv->sv_lease, spec) == 0) {
            fprintf(stderr, "gvw-sim: lease fault %s\n", spec);
            reply_json(req, 200, lease_api_state(sv->sv_lease));
        } else {
            reply_text(req, 400, "text/plain", "want fence:CODE, all:CODE or none\n");
        }
    } else if (strcmp(path, "/sim/events") == 0 && get) {
        reply_json(req, 200, json_incref(sv->sv_world->w_events));
    } else if (strcmp(path, "/sim/state") == 0 && get) {
        reply_json(req, 200, world_state_json(sv->sv_world));
    } else if (strcmp(path, "/sim/nvml") == 0 && get) {
        char *text;
        world_advance(sv->sv_world);
        text = nodefs_render_nvml(sv->sv_world);
        if (text == NULL)
            reply_text(req, 500, "text/plain", "gvw-sim: out of memory\n");
        else
            reply_text(req, 200, "text/plain; charset=utf-8", text);
        free(text);
    } else if (strcmp(path, "/sim/quit") == 0 && strcmp(method, "POST") == 0) {
        evhttp_request_set_on_complete_cb(req, quit_done, sv);
        reply_json(req, 200, json_pack("{s:s}", "status", "quitting"));
    } else if (strcmp(path, "/sim/events") == 0 || strcmp(path, "/sim/state") == 0 ||
               strcmp(path, "/sim/nvml") == 0 || strcmp(path, "/sim/quit") == 0) {
        reply_text(req, 405, "text/plain", "method not allowed\n");
    } else {
        reply_text(req, 404, "text/plain", "404 page not found\n");
    }
}

/* Copies the request body out, NUL-terminated. NULL when memory ran out. */
static char *
body_copy(struct evhttp_request *req, size_t *len)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    char *body;

    *len = evbuffer_get_length(in);
    body = malloc(*len + 1);
    if (body == NULL)
        return NULL;
    if (evbuffer_copyout(in, body, *len) != (ev_ssize_t)*len) {
        free(body);
        return NULL;
    }
    body[*len] = '\0';
    return body;
}

void
server_handle(struct evhttp_request *req, void *arg)
{
    struct server *sv = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *method = method_name(evhttp_request_get_command(req));
    const char *rawpath = uri ? evhttp_uri_get_path(uri) : NULL, *query;
    struct sim_request rq;
    char key[1100], *path, *body;
    size_t plen, blen;

    query = uri ? evhttp_uri_get_query(uri) : NULL;
    path = evhttp_uridecode(rawpath && *rawpath ? rawpath : "/", 0, &plen);
    body = body_copy(req, &blen);
    if (path == NULL || body == NULL || strlen(path) != plen) {
        reply_text(req, path && body ? 400 : 500, "text/plain", "bad request\n");
        goto done;
    }
    snprintf(key, sizeof(key), "%s %s", method, path);
    world_count(sv->sv_world, key);
    /* /apis/... too: a call to a group the sim lacks is logged and gets the server's 404.
     */
    if (strncmp(path, "/api/", 5) == 0 || strncmp(path, "/apis/", 6) == 0) {
        memset(&rq, 0, sizeof(rq));
        rq.rq_method = method;
        rq.rq_path = path;
        rq.rq_query = query ? query : "";
        rq.rq_content_type =
            evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
        rq.rq_body = body;
        rq.rq_body_len = blen;
        rq.rq_json = blen > 0 ? json_loadb(body, blen, 0, NULL) : NULL;
        handle_api(sv, req, &rq);
        json_decref(rq.rq_json);
    } else if (strcmp(path, "/metrics") == 0) {
        if (strcmp(method, "GET") == 0)
            handle_metrics(sv, req);
        else
            reply_text(req, 405, "text/plain", "method not allowed\n");
    } else if (strncmp(path, "/sim/", 5) == 0) {
        handle_sim(sv, req, method, path, body);
    } else {
        reply_text(req, 404, "text/plain", "404 page not found\n");
    }
done:
    free(path);
    free(body);
}
