/* suggest_range.c -- a Prometheus query_range answer (a matrix) read sample by sample
 *
 * A week of 1-minute steps for a node's pods is megabytes of
 * [[t,"v"],...]; the matrix is never built: each sample goes to the caller
 * as it is read. Prometheus sends a series' "metric" before its "values",
 * but JSON members have no order, so values met first are walked again from
 * a saved reader once the labels are known. */
#include "suggest_range.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

#define NAME_MAX_LEN 253 /* a Kubernetes name (DNS subdomain) */

struct rwalk {
    struct js_scan r_s;
    const struct sg_range_query *r_q;
    sg_sample_fn r_fn;
    void *r_arg;
    size_t r_series;
    enum sg_range_rc r_rc; /* the first error's kind */
    char *r_err;
    size_t r_errlen;
};

static int fail(struct rwalk *w, enum sg_range_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps the first error's kind and line; always -1. */
static int
fail(struct rwalk *w, enum sg_range_rc rc, const char *fmt, ...)
{
    va_list ap;

    if (w->r_rc == SG_RANGE_OK) {
        w->r_rc = rc;
        va_start(ap, fmt);
        vsnprintf(w->r_err, w->r_errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A printable copy of a value for a message. */
static void
shown(const struct js_str *v, char *out, size_t cap)
{
    char raw[48];
    size_t n = js_str_copy(v, raw, sizeof(raw)), o = 0;

    for (size_t i = 0; raw[i] != '\0' && o + 5 < cap; i++) {
        unsigned char ch = (unsigned char)raw[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
            out[o++] = (char)ch;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
    }
    if (n >= sizeof(raw) && o + 4 < cap)
        o += (size_t)snprintf(out + o, cap - o, "...");
    out[o] = '\0';
}

/* A value string as bytes: the whole string a finite number >= 0. */
static int
value_bytes(const struct js_str *v, double *out)
{
    char buf[64], *end;
    size_t n = js_str_copy(v, buf, sizeof(buf));

    if (n == 0 || n >= sizeof(buf))
        return -1;
    *out = strtod(buf, &end);
    return *end == '\0' && isfinite(*out) && *out >= 0 ? 0 : -1;
}

/* One [t, "v"] pair. */
static int
read_pair(struct rwalk *w, const char *ns, const char *pod)
{
    const struct sg_range_query *q = w->r_q;
    struct js_str v;
    double t, bytes, k;
    char when[32], val[64];

    if (js_array_begin(&w->r_s) == -1 || js_array_next(&w->r_s) != 1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a sample is not [time, value]");
    if (js_peek(&w->r_s) != JS_NUMBER || js_number(&w->r_s, &t) == -1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a sample time is not a number");
    k = (t - (double)q->rq_start) / (double)q->rq_step;
    snprintf(when, sizeof(when), "%.3f", t);
    if (!(k >= 0) || k >= (double)q->rq_points || fabs(k - nearbyint(k)) > 1e-6)
        return fail(w, SG_RANGE_BAD_ANSWER,
                    "prometheus: a sample of %s/%s at %s is not on the query's steps", ns,
                    pod, when);
    if (js_array_next(&w->r_s) != 1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a sample of %s/%s at %s has no value",
                    ns, pod, when);
    if (js_peek(&w->r_s) != JS_STRING) {
        if (js_skip(&w->r_s) == -1)
            return -1;
        return fail(w, SG_RANGE_BAD_SAMPLE,
                    "prometheus: the sample of %s/%s at %s is not a quoted number", ns, pod,
                    when);
    }
    if (js_string(&w->r_s, &v) == -1)
        return -1;
    if (value_bytes(&v, &bytes) == -1) {
        char msg[160];
        shown(&v, val, sizeof(val));
        snprintf(msg, sizeof(msg), "%s at %s is \"%s\"", pod, when, val);
        return fail(w, SG_RANGE_BAD_SAMPLE,
                    "prometheus: the sample of %s/%s: not a number of bytes >= 0", ns, msg);
    }
    if (js_array_next(&w->r_s) != 0)
        return fail(w, SG_RANGE_BAD_ANSWER,
                    "prometheus: a sample of %s/%s at %s has more than two members", ns, pod,
                    when);
    if (w->r_fn(w->r_arg, ns, pod, (size_t)nearbyint(k), bytes) == -1)
        return fail(w, SG_RANGE_NOMEM, "out of memory");
    return 0;
}

static int
read_values(struct rwalk *w, const char *ns, const char *pod)
{
    int rc;

    if (js_peek(&w->r_s) != JS_ARRAY)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a series' values are not an array");
    if (js_array_begin(&w->r_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->r_s)) == 1)
        if (read_pair(w, ns, pod) == -1)
            return -1;
    return rc;
}

/* "metric": the namespace and pod labels into ns and pod. */
static int
read_metric(struct rwalk *w, char *ns, char *pod, size_t cap)
{
    struct js_str key, v;
    int rc;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a series' metric is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        char *dst = js_str_eq(&key, w->r_q->rq_ns_label)    ? ns
                    : js_str_eq(&key, w->r_q->rq_pod_label) ? pod
                                                            : NULL;
        if (dst == NULL) {
            if (js_skip(&w->r_s) == -1)
                return -1;
            continue;
        }
        if (js_peek(&w->r_s) != JS_STRING || js_string(&w->r_s, &v) == -1)
            return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a label is not a string");
        if (js_str_copy(&v, dst, cap) >= cap || memchr(v.jv_raw, '\\', v.jv_len) != NULL)
            return fail(w, SG_RANGE_BAD_ANSWER,
                        "prometheus: a label value is not a Kubernetes name");
    }
    return rc;
}

static int
read_series(struct rwalk *w)
{
    char ns[NAME_MAX_LEN + 1] = "", pod[NAME_MAX_LEN + 1] = "";
    struct js_scan saved;
    struct js_str key;
    int rc, have_metric = 0, have_values = 0, values_waiting = 0;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a series is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        if (js_str_eq(&key, "metric") && !have_metric) {
            have_metric = 1;
            rc = read_metric(w, ns, pod, sizeof(ns));
            if (rc != -1 && (ns[0] == '\0' || pod[0] == '\0'))
                rc = fail(w, SG_RANGE_BAD_ANSWER,
                          "prometheus: a series has no '%s' or no '%s' label",
                          w->r_q->rq_ns_label, w->r_q->rq_pod_label);
        } else if (js_str_eq(&key, "values") && !have_values) {
            have_values = 1;
            if (have_metric) {
                rc = read_values(w, ns, pod);
            } else { /* labels not known yet: walk them again later */
                saved = w->r_s;
                values_waiting = 1;
                rc = js_skip(&w->r_s);
            }
        } else {
            rc = js_skip(&w->r_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (!have_metric)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: a series has no metric");
    if (values_waiting) {
        struct js_scan after = w->r_s;
        w->r_s = saved;
        rc = read_values(w, ns, pod);
        w->r_s = after;
        if (rc == -1)
            return -1;
    }
    w->r_series++;
    return 0;
}

static int
read_data(struct rwalk *w)
{
    struct js_str key, v;
    int rc, matrix = 0;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: data is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        if (js_str_eq(&key, "resultType")) {
            if (js_peek(&w->r_s) != JS_STRING || js_string(&w->r_s, &v) == -1 ||
                !js_str_eq(&v, "matrix"))
                return fail(w, SG_RANGE_BAD_ANSWER,
                            "prometheus: the answer is not a matrix");
            matrix = 1;
        } else if (js_str_eq(&key, "result")) {
            if (js_peek(&w->r_s) != JS_ARRAY || js_array_begin(&w->r_s) == -1)
                return fail(w, SG_RANGE_BAD_ANSWER,
                            "prometheus: data.result is not an array");
            while ((rc = js_array_next(&w->r_s)) == 1)
                if (read_series(w) == -1)
                    return -1;
            if (rc == -1)
                return -1;
        } else if (js_skip(&w->r_s) == -1) {
            return -1;
        }
    }
    if (rc != -1 && !matrix)
        return fail(w, SG_RANGE_BAD_ANSWER, "prometheus: the answer has no resultType");
    return rc;
}

enum sg_range_rc
sg_range_parse(const char *body, size_t len, const struct sg_range_query *q, sg_sample_fn fn,
               void *arg, size_t *series, char *err, size_t errlen)
{
    struct rwalk w = {.r_q = q, .r_fn = fn, .r_arg = arg, .r_err = err, .r_errlen = errlen};
    char etype[64] = "", emsg[256] = "";
    struct js_str key, v;
    int rc, success = -1, data = 0;

    err[0] = '\0';
    js_init(&w.r_s, body, len);
    if (js_object_begin(&w.r_s) == -1)
        goto syntax;
    while ((rc = js_object_next(&w.r_s, &key)) == 1) {
        if (js_str_eq(&key, "status") && js_peek(&w.r_s) == JS_STRING) {
            if (js_string(&w.r_s, &v) == -1)
                goto syntax;
            success = js_str_eq(&v, "success");
        } else if (js_str_eq(&key, "errorType") && js_peek(&w.r_s) == JS_STRING) {
            if (js_string(&w.r_s, &v) == -1)
                goto syntax;
            js_str_copy(&v, etype, sizeof(etype));
        } else if (js_str_eq(&key, "error") && js_peek(&w.r_s) == JS_STRING) {
            if (js_string(&w.r_s, &v) == -1)
                goto syntax;
            js_str_copy(&v, emsg, sizeof(emsg));
        } else if (js_str_eq(&key, "data") && success != 0 && !data) {
            data = 1;
            if (read_data(&w) == -1)
                goto stop;
        } else if (js_skip(&w.r_s) == -1) {
            goto syntax;
        }
    }
    if (rc == -1 || js_end(&w.r_s) == -1)
        goto syntax;
    if (success == 0) {
        for (char *p = emsg; *p != '\0'; p++) /* one line */
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        snprintf(err, errlen, "prometheus: %s: %s", etype[0] ? etype : "error",
                 emsg[0] ? emsg : "(no message)");
        return SG_RANGE_ERROR_STATUS;
    }
    if (success != 1 || !data) {
        snprintf(err, errlen, "prometheus: the answer has no %s",
                 success != 1 ? "\"status\":\"success\"" : "data");
        return SG_RANGE_BAD_ANSWER;
    }
    *series = w.r_series;
    return SG_RANGE_OK;
stop:
    if (w.r_rc != SG_RANGE_OK)
        return w.r_rc;
syntax:
    snprintf(err, errlen, "prometheus: the answer is not JSON: %s", w.r_s.js_err);
    return SG_RANGE_BAD_ANSWER;
}
