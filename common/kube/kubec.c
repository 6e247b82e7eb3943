/* kubec.c -- the generic Kubernetes API transport: base URL, token, CA, answers judged */
#include "kubec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "httpc.h"
#include "log.h"

#define KUBE_BODY_CAP (32u * 1024 * 1024)
#define KUBE_URL_MAX 4096

struct kubec {
    struct httpc *k_http; /* owned */
    char *k_url;          /* owned; the base, no trailing slash */
};

/* One call in flight; the httpc callback argument. */
struct kubec_inflight {
    char *ki_method;   /* owned, for logs */
    char *ki_path;     /* owned, for logs: the URL minus the base */
    char ki_what[256]; /* RBAC verb and resource */
    int ki_eviction;
    int ki_uid_precondition;
    kubec_parse_fn ki_parse;
    kubec_done_fn ki_done;
    void *ki_arg;
    int ki_quiet; /* success logged at debug */
};

const char *
kube_class_name(enum kube_class c)
{
    switch (c) {
    case KUBE_OK:
        return "ok";
    case KUBE_GONE:
        return "gone";
    case KUBE_CONFLICT:
        return "conflict";
    case KUBE_PDB_REFUSED:
        return "pdb_refused";
    case KUBE_FORBIDDEN:
        return "forbidden";
    case KUBE_ERROR:
        return "error";
    case KUBE_THROTTLED:
        return "throttled";
    }
    return "error"; /* can't happen */
}

struct kubec *
kubec_new(struct event_base *base, const struct kube_opts *o, char *err, size_t errlen)
{
    struct httpc_opts ho;
    struct kubec *k;
    size_t len;

    if (o->ko_url == NULL || (strncasecmp(o->ko_url, "http://", 7) != 0 &&
                              strncasecmp(o->ko_url, "https://", 8) != 0)) {
        snprintf(err, errlen, "API server URL %s: not http:// or https://",
                 o->ko_url ? o->ko_url : "(none)");
        return NULL;
    }
    if ((k = calloc(1, sizeof(*k))) == NULL || (k->k_url = strdup(o->ko_url)) == NULL) {
        snprintf(err, errlen, "out of memory");
        kubec_free(k);
        return NULL;
    }
    len = strlen(k->k_url);
    while (len > 0 && k->k_url[len - 1] == '/')
        k->k_url[--len] = '\0';
    memset(&ho, 0, sizeof(ho));
    ho.ho_connect_timeout_ms = o->ko_connect_timeout_ms;
    ho.ho_timeout_ms = o->ko_timeout_ms;
    ho.ho_body_cap = o->ko_body_cap > 0 ? o->ko_body_cap : KUBE_BODY_CAP;
    ho.ho_ca_file = o->ko_ca_file;
    ho.ho_token_file = o->ko_token_file;
    ho.ho_token_max_age_ms = o->ko_token_max_age_ms;
    if ((k->k_http = httpc_new(base, &ho, err, errlen)) == NULL) {
        kubec_free(k);
        return NULL;
    }
    return k;
}

void
kubec_free(struct kubec *k)
{
    if (k == NULL)
        return;
    httpc_free(k->k_http); /* cancelled callbacks free their calls */
    free(k->k_url);
    free(k);
}

static void
inflight_free(struct kubec_inflight *ki)
{
    if (ki == NULL)
        return;
    free(ki->ki_method);
    free(ki->ki_path);
    free(ki);
}

/* Judges an HTTP answer that arrived whole, as a real API server means it. */
static enum kube_class
classify(const struct kubec_inflight *ki, const struct httpc_resp *r)
{
    long status = r->hr_status;

    if (status >= 200 && status <= 299)
        return KUBE_OK;
    if (ki->ki_eviction && (status == 429 || status == 403 || status == 500) &&
        kube_status_pdb_refusal(status, r->hr_body, r->hr_body_len))
        return KUBE_PDB_REFUSED;
    switch (status) {
    case 404:
        return KUBE_GONE;
    case 409: /* another conflict (the pod changing under the server's retries) is no
                 proof the pod decided on is gone */
        return !ki->ki_uid_precondition ||
                       kube_status_uid_conflict(r->hr_body, r->hr_body_len)
                   ? KUBE_CONFLICT
                   : KUBE_ERROR;
    case 401:
    case 403:
        return KUBE_FORBIDDEN;
    case 429: /* not a budget's: load shedding, answered in plain text */
        return KUBE_THROTTLED;
    default:
        return KUBE_ERROR;
    }
}

/* Drops trailing spaces: a plain-text answer ends with a newline, cleaned to one. */
static void
trim_right(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

static void
call_done(const struct httpc_resp *r, void *arg)
{
    struct kubec_inflight *ki = arg;
    struct kubec_answer a;
    char why[1536], msg[768], perr[256], status[16], elapsed[24];

    memset(&a, 0, sizeof(a));
    a.kr_cancelled = r->hr_cancelled;
    a.kr_status = r->hr_status;
    a.kr_elapsed_ms = r->hr_elapsed_ms;
    a.kr_retry_after_s = r->hr_retry_after_s;
    why[0] = '\0';
    if (r->hr_error != NULL) {
        a.kr_class = KUBE_ERROR;
        snprintf(why, sizeof(why), "kube: %s: %s", ki->ki_what, r->hr_error);
    } else if ((a.kr_class = classify(ki, r)) == KUBE_OK) {
        if (ki->ki_parse != NULL && ki->ki_parse(r->hr_body, r->hr_body_len, perr,
                                                 sizeof(perr), ki->ki_arg) == -1) {
            a.kr_class = KUBE_ERROR;
            snprintf(why, sizeof(why), "kube: %s: bad answer: %s", ki->ki_what, perr);
        }
    } else {
        kube_json_status_message(r->hr_body, r->hr_body_len, msg, sizeof(msg));
        trim_right(msg);
        if (a.kr_class == KUBE_THROTTLED && r->hr_retry_after_s > 0)
            snprintf(why, sizeof(why),
                     "kube: %s: HTTP 429: API server throttled (Retry-After %ld s): %s",
                     ki->ki_what, r->hr_retry_after_s, msg);
        else if (a.kr_class == KUBE_THROTTLED)
            snprintf(why, sizeof(why), "kube: %s: HTTP 429: API server throttled: %s",
                     ki->ki_what, msg);
        else if (r->hr_status == 401)
            snprintf(why, sizeof(why),
                     "kube: %s: HTTP 401: the API server rejected the token: %s",
                     ki->ki_what, msg);
        else if (r->hr_status == 403 && a.kr_class == KUBE_FORBIDDEN)
            snprintf(why, sizeof(why),
                     "kube: HTTP 403: missing RBAC permission to %s: %s", ki->ki_what,
                     msg);
        else
            snprintf(why, sizeof(why), "kube: %s: HTTP %ld: %s", ki->ki_what,
                     r->hr_status, msg);
    }
    a.kr_error = a.kr_class == KUBE_OK ? NULL : why;
    snprintf(status, sizeof(status), "%ld", r->hr_status);
    snprintf(elapsed, sizeof(elapsed), "%ld", r->hr_elapsed_ms);
    if (a.kr_cancelled)
        log_event(LOG_LEVEL_DEBUG, "kube call cancelled", "method", ki->ki_method, "path",
                  ki->ki_path, (char *)NULL);
    else if (a.kr_class != KUBE_OK)
        log_event(LOG_LEVEL_WARN, "kube call failed", "method", ki->ki_method, "path",
                  ki->ki_path, "status", status, "elapsed_ms", elapsed, "class",
                  kube_class_name(a.kr_class), "error", why, (char *)NULL);
    else /* the writes are worth an info line; the lists run on every decision */
        log_event(strcmp(ki->ki_method, "GET") == 0 || ki->ki_quiet ? LOG_LEVEL_DEBUG
                                                                    : LOG_LEVEL_INFO,
                  "kube call done", "method", ki->ki_method, "path", ki->ki_path,
                  "status", status, "elapsed_ms", elapsed, (char *)NULL);
    ki->ki_done(&a, ki->ki_arg);
    inflight_free(ki);
}

int
kubec_call(struct kubec *k, const struct kubec_call *c)
{
    struct kubec_inflight *ki;
    struct httpc_req req;
    struct buf url;
    int rc = -1;

    if ((ki = calloc(1, sizeof(*ki))) == NULL) {
        log_warnx("%s: out of memory", __func__);
        return -1;
    }
    snprintf(ki->ki_what, sizeof(ki->ki_what), "%s", c->kq_what ? c->kq_what : "");
    buf_init(&url, KUBE_URL_MAX);
    if (c->kq_path == NULL || (ki->ki_method = strdup(c->kq_method)) == NULL ||
        (ki->ki_path = strdup(c->kq_path)) == NULL ||
        buf_printf(&url, "%s%s", k->k_url, c->kq_path) == -1) {
        log_warnx("%s: %s: out of memory or URL too long", __func__, ki->ki_what);
        goto out;
    }
    ki->ki_eviction = c->kq_eviction;
    ki->ki_uid_precondition = c->kq_uid_precondition;
    ki->ki_parse = c->kq_parse;
    ki->ki_done = c->kq_done;
    ki->ki_arg = c->kq_arg;
    ki->ki_quiet = c->kq_quiet;
    memset(&req, 0, sizeof(req));
    req.hq_method = c->kq_method;
    req.hq_url = url.b_data;
    req.hq_content_type = c->kq_content_type;
    req.hq_body = c->kq_body;
    req.hq_body_len = c->kq_body ? strlen(c->kq_body) : 0;
    req.hq_timeout_ms = c->kq_timeout_ms;
    if ((rc = httpc_request(k->k_http, &req, call_done, ki)) == 0)
        ki = NULL; /* call_done frees it */
out:
    inflight_free(ki);
    buf_free(&url);
    return rc;
}

void
kubec_path_add(struct buf *path, const char *literal, const char *value)
{
    if (path->b_toobig)
        return;
    if ((literal != NULL && buf_append(path, literal, strlen(literal)) == -1) ||
        (value != NULL && httpc_urlencode(path, value) == -1))
        path->b_toobig = 1;
}

static int
empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

int
kube_incluster_url(char *out, size_t outlen, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    long p = 0;
    int n;

    if (empty(host) || empty(port)) {
        snprintf(err, errlen,
                 "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set (not in a "
                 "cluster?)");
        return -1;
    }
    if (strpbrk(host, "/@[]?# \t\r\n") != NULL) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_HOST: '%s' is not a host", host);
        return -1;
    }
    for (const char *c = port; *c; c++) {
        if (*c < '0' || *c > '9' || p > 65535) {
            p = -1;
            break;
        }
        p = p * 10 + (*c - '0');
    }
    if (p < 1 || p > 65535) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_PORT: '%s' is not a port", port);
        return -1;
    }
    /* An IPv6 literal needs brackets in a URL. */
    n = strchr(host, ':') != NULL ? snprintf(out, outlen, "https://[%s]:%ld", host, p)
                                  : snprintf(out, outlen, "https://%s:%ld", host, p);
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(err, errlen, "in-cluster API server URL too long");
        return -1;
    }
    return 0;
}
