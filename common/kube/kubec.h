/* kubec.h -- the generic Kubernetes API transport: base URL, token, CA, answers judged */
#ifndef GVW_KUBEC_H
#define GVW_KUBEC_H

#include <stddef.h>

#include "buf.h"
#include "kube_status.h"

struct event_base;
struct kubec;

/* How to reach the API server. */
struct kube_opts {
    const char *ko_url;         /* borrowed (copied): http(s)://host[:port][/prefix] */
    const char *ko_token_file;  /* borrowed (copied): bearer token, re-read every minute;
                                   NULL/"" = no Authorization header */
    const char *ko_ca_file;     /* borrowed (copied): the only PEM trust; NULL = system */
    long ko_connect_timeout_ms; /* 0 = 2 s */
    long ko_timeout_ms;         /* 0 = 10 s */
    size_t ko_body_cap;         /* 0 = 32 MiB (a big node's PodList) */
    long ko_token_max_age_ms;   /* 0 = 60 s; tests set it short */
};

/* How an answer is judged. */
enum kube_class {
    KUBE_OK,          /* any 2xx */
    KUBE_GONE,        /* 404: the object is already gone */
    KUBE_CONFLICT,    /* 409 (with kq_uid_precondition: only the 409 that says
                         the UID precondition failed, a replacement pod) */
    KUBE_PDB_REFUSED, /* an eviction a PodDisruptionBudget refused: 429 with the
                         cause DisruptionBudget, 403 naming a poddisruptionbudget,
                         500 "more than one PodDisruptionBudget" */
    KUBE_FORBIDDEN,   /* 401/403: the token or RBAC is wrong */
    KUBE_ERROR,       /* anything else: 5xx, other 4xx, transport, timeout, bad body */
    KUBE_THROTTLED,   /* any other 429: the server shedding load (max-in-flight,
                         priority and fairness); kr_retry_after_s says when to retry */
};

/* What one call returned. Everything is borrowed, valid during the callback. */
struct kubec_answer {
    enum kube_class kr_class;
    int kr_cancelled;     /* kubec_free() ran with the call in flight */
    long kr_status;       /* HTTP status; 0 when none arrived */
    const char *kr_error; /* NULL when KUBE_OK; else one line: what failed, with the
                             Status message and causes */
    long kr_elapsed_ms;
    long kr_retry_after_s; /* the answer's Retry-After, seconds; 0 = none or unreadable */
};

/* Reads a 2xx body (len bytes, NUL-terminated). 0, or -1 with a reason in err:
 * the answer then becomes KUBE_ERROR "kube: WHAT: bad answer: REASON". */
typedef int (*kubec_parse_fn)(const char *body, size_t len, char *err, size_t errlen,
                              void *arg);
typedef void (*kubec_done_fn)(const struct kubec_answer *a, void *arg);

/* One call. Everything is borrowed and copied before kubec_call returns. */
struct kubec_call {
    const char *kq_method;       /* "GET", "POST", "PATCH", "DELETE" */
    const char *kq_path;         /* after the base URL, already encoded */
    const char *kq_what;         /* RBAC verb and resource, for error lines:
                                    "create pods/eviction in namespace x" */
    const char *kq_content_type; /* with a body */
    const char *kq_body;         /* NULL = none */
    int kq_eviction;             /* an eviction: a PodDisruptionBudget's refusal
                                    (429, 403, 500 forms) is KUBE_PDB_REFUSED */
    int kq_uid_precondition;     /* the body carries a UID precondition: a 409 is
                                    KUBE_CONFLICT only when its Status says that
                                    precondition failed, else KUBE_ERROR */
    long kq_timeout_ms;          /* the whole call; 0 = the client's */
    kubec_parse_fn kq_parse;     /* run on a 2xx before kq_done; NULL = none */
    kubec_done_fn kq_done;       /* runs exactly once, from the loop */
    void *kq_arg;                /* for kq_parse and kq_done */
    int kq_quiet; /* a routine call (the Lease renewed every 2 s): its success is
                     logged at debug, not info */
};

/*
 * Makes a client on base (borrowed, must outlive it). The URL must start with
 * http:// or https://. Returns the client (free with kubec_free()) or NULL
 * with a reason in err. Files are not read here: a bad token file fails each
 * call with a clear error instead.
 */
struct kubec *kubec_new(struct event_base *base, const struct kube_opts *o, char *err,
                        size_t errlen);

/* Frees the client; calls in flight end with kr_cancelled = 1 and KUBE_ERROR,
 * their callbacks running before kubec_free returns. NULL is a no-op. Never
 * call it from inside one of its callbacks. */
void kubec_free(struct kubec *k);

/*
 * Sends one call. Returns 0, and later kq_done runs exactly once from the
 * loop (the answer is logged first: failures as warnings, GETs at debug,
 * writes at info); or -1 (URL too long, out of memory; logged), and no
 * callback runs.
 */
int kubec_call(struct kubec *k, const struct kubec_call *c);

/*
 * Appends literal text, then value percent-encoded (either may be NULL). Once
 * an append fails the buffer is marked toobig, and kubec_call refuses a path
 * built in it: a path with a piece missing must never be sent.
 */
void kubec_path_add(struct buf *path, const char *literal, const char *value);

/* "ok", "gone", "conflict", "pdb_refused", "forbidden", "error", "throttled". */
const char *kube_class_name(enum kube_class c);

/*
 * The in-cluster API server: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 * an IPv6 host in brackets. Returns 0 with the URL in out, or -1 with a reason
 * in err (unset or malformed variables, or out too small).
 */
int kube_incluster_url(char *out, size_t outlen, char *err, size_t errlen);

#endif
