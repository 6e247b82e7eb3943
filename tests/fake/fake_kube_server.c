/* fake_kube_server.c -- a tiny API server for shell tests: GET /api/v1/pods answers a
 * file
 *
 * usage: gvw-fake-kube PODLIST_FILE LOG_FILE
 * Listens on 127.0.0.1 (a free port, printed on stdout as "port N"), answers
 * GET /api/v1/pods?... with PODLIST_FILE as it is at that moment (so a test
 * can change the pods between requests), appends each request's URI to
 * LOG_FILE, and answers anything else 404. Stops on SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

static const char *podlist_file, *log_file;

static void
handle(struct evhttp_request *req, void *arg)
{
    const char *uri = evhttp_request_get_uri(req);
    struct evbuffer *out = evbuffer_new();
    FILE *f;
    char chunk[4096];
    size_t n;

    if (out == NULL)
        return evhttp_send_error(req, 500, NULL);
    if ((f = fopen(log_file, "a")) != NULL) {
        fprintf(f, "%s\n", uri);
        fclose(f);
    }
    if (strncmp(uri, "/api/v1/pods?", 13) != 0 ||
        (f = fopen(podlist_file, "r")) == NULL) {
        evbuffer_add_printf(out, "{\"kind\":\"Status\",\"message\":\"not found\"}");
        evhttp_send_reply(req, 404, "Not Found", out);
        evbuffer_free(out);
        return;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        evbuffer_add(out, chunk, n);
    fclose(f);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "application/json");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
}

static void
stop(evutil_socket_t sig, short what, void *base)
{
    event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
    struct event_base *base;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    struct event *term;
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);

    if (argc != 3) {
        fprintf(stderr, "usage: gvw-fake-kube PODLIST_FILE LOG_FILE\n");
        return 2;
    }
    podlist_file = argv[1];
    log_file = argv[2];
    if ((base = event_base_new()) == NULL || (http = evhttp_new(base)) == NULL ||
        (sock = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0)) == NULL ||
        getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&sin, &len) ==
            -1 ||
        (term = evsignal_new(base, SIGTERM, stop, base)) == NULL ||
        event_add(term, NULL) == -1)
        return 1;
    evhttp_set_gencb(http, handle, NULL);
    printf("port %d\n", ntohs(sin.sin_port));
    fflush(stdout);
    event_base_dispatch(base);
    event_free(term);
    evhttp_free(http);
    event_base_free(base);
    return 0;
}
