/* prom_matrix.c -- a Prometheus range-vector answer ("matrix") read sample by sample
 *
 * A week of 1-minute steps for a node's pods, or the growth subquery over
 * 5,000 pods, is megabytes of [[t,"v"],...]; the matrix is never built: each
 * sample goes to the caller as it is read. Prometheus sends a series'
 * "metric" before its "values", but JSON members have no order, so values
 * met first are walked again from a saved reader once the labels are known.
 *
 * On a query's grid each step of a series is given once: a repeated time,
 * and a series whose whole label set repeats an earlier one's, add nothing
 * (a proxy or a federation that doubles an answer must not double a sum). */
#include "prom_matrix.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

#define NAME_MAX_LEN 253 /* a Kubernetes name (DNS subdomain) */

/* A series met in a grid answer: its label set's digest and the first step
 * not given yet. */
struct seen_series {
    uint64_t ss_id[2];
    size_t ss_next;
};

/* The series of one answer, by digest: entries in order, and an open-
 * addressing index of them (entry + 1; 0 = empty). */
struct seen_set {
    struct seen_series *se_e; /* owned */
    size_t se_count, se_cap;
    size_t *se_slot; /* owned */
    size_t se_slots;
};

struct rwalk {
    struct js_scan r_s;
    const struct prom_matrix_reader *r_q;
    size_t r_series;
    enum prom_matrix_rc r_rc; /* the first error's kind */
    char *r_err;
    size_t r_errlen;
    struct seen_set r_seen; /* grid answers only (mr_points > 0) */
};

/* One series' labels while it is read. */
struct names {
    char n_ns[NAME_MAX_LEN + 1], n_pod[NAME_MAX_LEN + 1], n_gpu[NAME_MAX_LEN + 1];
    struct prom_matrix_labels n_l;
    char n_who[2 * NAME_MAX_LEN + 8]; /* "ns/pod" for messages */
    uint64_t n_id[2];                 /* a digest of every label, in any order */
    size_t n_seen;                    /* its entry in r_seen (grid answers) */
};

static int fail(struct rwalk *w, enum prom_matrix_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps the first error's kind and line; always -1. */
static int
fail(struct rwalk *w, enum prom_matrix_rc rc, const char *fmt, ...)
{
    va_list ap;

    if (w->r_rc == PM_OK) {
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

/* A value string as a number: the whole string, and with bytes_only finite
 * and >= 0. */
static int
value_of(const struct js_str *v, int bytes_only, double *out)
{
    char buf[64], *end;
    size_t n = js_str_copy(v, buf, sizeof(buf));

    if (n == 0 || n >= sizeof(buf))
        return -1;
    *out = strtod(buf, &end);
    if (*end != '\0')
        return -1;
    return !bytes_only || (isfinite(*out) && *out >= 0) ? 0 : -1;
}

/* 64 bits of FNV-1a over n bytes, from h. */
static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t
mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Adds one label (key, value as decoded) to the digest id. Pairs are summed,
 * so their order does not matter; the key's length goes first, so no two
 * pairs read the same bytes. 0, or -1 out of memory. */
static int
digest_pair(uint64_t id[2], const struct js_str *key, const struct js_str *val)
{
    const struct js_str *part[2] = {key, val};
    uint64_t h[2] = {1469598103934665603ull, 0x6c62272e07bb0142ull};
    char stack[256] = "", *heap = NULL;

    for (int i = 0; i < 2; i++) {
        const char *bytes = part[i]->jv_raw;
        size_t len = part[i]->jv_len;
        if (part[i]->jv_escaped) { /* the same label however it was escaped */
            len = js_str_len(part[i]);
            if (len >= sizeof(stack) && (heap = malloc(len + 1)) == NULL)
                return -1;
            js_str_decode(part[i], heap ? heap : stack);
            bytes = heap ? heap : stack;
        }
        if (i == 0) {
            uint64_t klen = len;
            h[0] = fnv(h[0], &klen, sizeof(klen));
            h[1] = fnv(h[1], &klen, sizeof(klen));
        }
        h[0] = fnv(h[0], bytes, len);
        h[1] = fnv(h[1], bytes, len);
        free(heap);
        heap = NULL;
    }
    id[0] += mix(h[0]);
    id[1] += mix(h[1] ^ 0x9e3779b97f4a7c15ull);
    return 0;
}

static void
seen_free(struct seen_set *se)
{
    free(se->se_e);
    free(se->se_slot);
    memset(se, 0, sizeof(*se));
}

/* The entry of digest id, made when new. Its index, or -1 out of memory. */
static int
seen_entry(struct seen_set *se, const uint64_t id[2], size_t *out)
{
    size_t j;

    if ((se->se_count + 1) * 2 > se->se_slots) {
        size_t slots = se->se_slots ? se->se_slots * 2 : 64;
        size_t *slot = calloc(slots, sizeof(*slot));
        if (slot == NULL)
            return -1;
        for (size_t i = 0; i < se->se_count; i++) {
            for (j = (size_t)se->se_e[i].ss_id[0] & (slots - 1); slot[j] != 0;
                 j = (j + 1) & (slots - 1))
                ;
            slot[j] = i + 1;
        }
        free(se->se_slot);
        se->se_slot = slot;
        se->se_slots = slots;
    }
    for (j = (size_t)id[0] & (se->se_slots - 1); se->se_slot[j] != 0;
         j = (j + 1) & (se->se_slots - 1)) {
        const struct seen_series *e = &se->se_e[se->se_slot[j] - 1];
        if (e->ss_id[0] == id[0] && e->ss_id[1] == id[1]) {
            *out = se->se_slot[j] - 1;
            return 0;
        }
    }
    if (se->se_count == se->se_cap) {
        size_t cap = se->se_cap ? se->se_cap * 2 : 64;
        struct seen_series *e = realloc(se->se_e, cap * sizeof(*e));
        if (e == NULL)
            return -1;
        se->se_e = e;
        se->se_cap = cap;
    }
    se->se_e[se->se_count] = (struct seen_series){{id[0], id[1]}, 0};
    se->se_slot[j] = se->se_count + 1;
    *out = se->se_count++;
    return 0;
}

/* One [t, "v"] pair. */
static int
read_pair(struct rwalk *w, const struct names *n)
{
    const struct prom_matrix_reader *q = w->r_q;
    struct js_str v;
    double t, val, k = 0;
    char when[32], shownv[64];

    if (js_array_begin(&w->r_s) == -1 || js_array_next(&w->r_s) != 1)
        return fail(w, PM_BAD_ANSWER, "a sample is not [time, value]");
    if (js_peek(&w->r_s) != JS_NUMBER || js_number(&w->r_s, &t) == -1)
        return fail(w, PM_BAD_ANSWER, "a sample time is not a number");
    snprintf(when, sizeof(when), "%.3f", t);
    if (q->mr_points > 0) {
        k = (t - (double)q->mr_start) / (double)q->mr_step;
        if (!(k >= 0) || k >= (double)q->mr_points || fabs(k - nearbyint(k)) > 1e-6)
            return fail(w, PM_BAD_ANSWER,
                        "a sample of %s at %s is not on the query's steps", n->n_who,
                        when);
    }
    if (js_array_next(&w->r_s) != 1)
        return fail(w, PM_BAD_ANSWER, "a sample of %s at %s has no value", n->n_who,
                    when);
    if (js_peek(&w->r_s) != JS_STRING) {
        if (js_skip(&w->r_s) == -1)
            return -1;
        return fail(w, PM_BAD_SAMPLE, "the sample of %s at %s is not a quoted number",
                    n->n_who, when);
    }
    if (js_string(&w->r_s, &v) == -1)
        return -1;
    if (value_of(&v, q->mr_bytes_only, &val) == -1) {
        shown(&v, shownv, sizeof(shownv));
        return fail(w, PM_BAD_SAMPLE, "the sample of %s at %s is \"%s\": not a number%s",
                    n->n_who, when, shownv, q->mr_bytes_only ? " of bytes >= 0" : "");
    }
    if (js_array_next(&w->r_s) != 0)
        return fail(w, PM_BAD_ANSWER, "a sample of %s at %s has more than two members",
                    n->n_who, when);
    if (q->mr_points > 0) {
        /* Prometheus sends a series in time order: a step at or before the
         * last one given repeats it (or an identical series' repeats it). */
        struct seen_series *e = &w->r_seen.se_e[n->n_seen];
        if ((size_t)nearbyint(k) < e->ss_next)
            return 0;
        e->ss_next = (size_t)nearbyint(k) + 1;
    }
    if (q->mr_sample(&n->n_l, t, (size_t)nearbyint(k), val, q->mr_arg) == -1)
        return fail(w, PM_NOMEM, "out of memory");
    return 0;
}

static int
read_values(struct rwalk *w, const struct names *n)
{
    int rc;

    if (js_peek(&w->r_s) != JS_ARRAY)
        return fail(w, PM_BAD_ANSWER, "a series' values are not an array");
    if (js_array_begin(&w->r_s) == -1)
        return -1;
    while ((rc = js_array_next(&w->r_s)) == 1)
        if (read_pair(w, n) == -1)
            return -1;
    return rc;
}

/* A label name asked for (NULL or "" is never). */
static int
asked(const struct js_str *key, const char *name)
{
    return name != NULL && name[0] != '\0' && js_str_eq(key, name);
}

/* "metric": the labels asked for into n. */
static int
read_metric(struct rwalk *w, struct names *n)
{
    const struct prom_matrix_reader *q = w->r_q;
    struct js_str key, v;
    int rc;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, PM_BAD_ANSWER, "a series' metric is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        char *dst = asked(&key, q->mr_ns_label)    ? n->n_ns
                    : asked(&key, q->mr_pod_label) ? n->n_pod
                    : asked(&key, q->mr_gpu_label) ? n->n_gpu
                                                   : NULL;
        if (js_peek(&w->r_s) != JS_STRING) {
            if (dst != NULL)
                return fail(w, PM_BAD_ANSWER, "a label is not a string");
            if (js_skip(&w->r_s) == -1) /* not a label Prometheus sends: not digested */
                return -1;
            continue;
        }
        if (js_string(&w->r_s, &v) == -1)
            return -1;
        if (digest_pair(n->n_id, &key, &v) == -1)
            return fail(w, PM_NOMEM, "out of memory");
        if (dst == NULL)
            continue;
        if (js_str_copy(&v, dst, NAME_MAX_LEN + 1) > NAME_MAX_LEN || v.jv_escaped)
            return fail(w, PM_BAD_ANSWER, "a label value is not a Kubernetes name");
    }
    if (rc == -1)
        return -1;
    n->n_l.ml_namespace = n->n_ns[0] ? n->n_ns : NULL;
    n->n_l.ml_pod = n->n_pod[0] ? n->n_pod : NULL;
    n->n_l.ml_gpu = n->n_gpu[0] ? n->n_gpu : NULL;
    snprintf(n->n_who, sizeof(n->n_who), "%s/%s", n->n_ns[0] ? n->n_ns : "-",
             n->n_pod[0] ? n->n_pod : "-");
    if (q->mr_names_required && (n->n_ns[0] == '\0' || n->n_pod[0] == '\0'))
        return fail(w, PM_BAD_ANSWER, "a series has no '%s' or no '%s' label",
                    q->mr_ns_label ? q->mr_ns_label : "",
                    q->mr_pod_label ? q->mr_pod_label : "");
    return 0;
}

/* Tells the caller a series starts (once its labels are known). */
static int
announce(struct rwalk *w, struct names *n, int *announced)
{
    *announced = 1;
    if (w->r_q->mr_points > 0 && seen_entry(&w->r_seen, n->n_id, &n->n_seen) == -1)
        return fail(w, PM_NOMEM, "out of memory");
    if (w->r_q->mr_series != NULL && w->r_q->mr_series(&n->n_l, w->r_q->mr_arg) == -1)
        return fail(w, PM_NOMEM, "out of memory");
    return 0;
}

static int
read_series(struct rwalk *w)
{
    struct names n = {0};
    struct js_scan saved;
    struct js_str key;
    int rc, have_metric = 0, have_values = 0, values_waiting = 0, announced = 0;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, PM_BAD_ANSWER, "a series is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        if (js_str_eq(&key, "metric") && !have_metric) {
            have_metric = 1;
            rc = read_metric(w, &n);
        } else if (js_str_eq(&key, "values") && !have_values) {
            have_values = 1;
            if (have_metric) {
                rc = announce(w, &n, &announced) == -1 ? -1 : read_values(w, &n);
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
        return fail(w, PM_BAD_ANSWER, "a series has no metric");
    if (!announced && announce(w, &n, &announced) == -1)
        return -1;
    if (values_waiting) {
        struct js_scan after = w->r_s;
        w->r_s = saved;
        rc = read_values(w, &n);
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
    int rc, matrix = 0, result = 0;

    if (js_peek(&w->r_s) != JS_OBJECT || js_object_begin(&w->r_s) == -1)
        return fail(w, PM_BAD_ANSWER, "data is not an object");
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        if (js_str_eq(&key, "resultType")) {
            if (js_peek(&w->r_s) != JS_STRING || js_string(&w->r_s, &v) == -1 ||
                !js_str_eq(&v, "matrix"))
                return fail(w, PM_BAD_ANSWER, "the answer is not a matrix");
            matrix = 1;
        } else if (js_str_eq(&key, "result") && !result) {
            result = 1;
            if (js_peek(&w->r_s) != JS_ARRAY || js_array_begin(&w->r_s) == -1)
                return fail(w, PM_BAD_ANSWER, "data.result is not an array");
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
        return fail(w, PM_BAD_ANSWER, "the answer has no resultType");
    if (rc != -1 && !result) /* not "no series": an answer cut short */
        return fail(w, PM_BAD_ANSWER, "the answer has no data.result");
    return rc;
}

/* prom_matrix_read() in w, whose r_q, r_err and r_errlen are set. */
static enum prom_matrix_rc
read_answer(struct rwalk *w, const char *body, size_t len, size_t *series)
{
    char *err = w->r_err;
    size_t errlen = w->r_errlen;
    char etype[64] = "", emsg[256] = "";
    struct js_str key, v;
    int rc, success = -1, data = 0;

    err[0] = '\0';
    js_init(&w->r_s, body, len);
    if (js_object_begin(&w->r_s) == -1)
        goto syntax;
    while ((rc = js_object_next(&w->r_s, &key)) == 1) {
        if (js_str_eq(&key, "status") && js_peek(&w->r_s) == JS_STRING) {
            if (js_string(&w->r_s, &v) == -1)
                goto syntax;
            success = js_str_eq(&v, "success");
        } else if (js_str_eq(&key, "errorType") && js_peek(&w->r_s) == JS_STRING) {
            if (js_string(&w->r_s, &v) == -1)
                goto syntax;
            js_str_copy(&v, etype, sizeof(etype));
        } else if (js_str_eq(&key, "error") && js_peek(&w->r_s) == JS_STRING) {
            if (js_string(&w->r_s, &v) == -1)
                goto syntax;
            js_str_copy(&v, emsg, sizeof(emsg));
        } else if (js_str_eq(&key, "data") && success != 0 && !data) {
            data = 1;
            if (read_data(w) == -1)
                goto stop;
        } else if (js_skip(&w->r_s) == -1) {
            goto syntax;
        }
    }
    if (rc == -1 || js_end(&w->r_s) == -1)
        goto syntax;
    if (success == 0) {
        for (char *p = emsg; *p != '\0'; p++) /* one line */
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        snprintf(err, errlen, "%s: %s", etype[0] ? etype : "error",
                 emsg[0] ? emsg : "(no message)");
        return PM_ERROR_STATUS;
    }
    if (success != 1 || !data) {
        snprintf(err, errlen, "the answer has no %s",
                 success != 1 ? "\"status\":\"success\"" : "data");
        return PM_BAD_ANSWER;
    }
    *series = w->r_series;
    return PM_OK;
stop:
    if (w->r_rc != PM_OK)
        return w->r_rc;
syntax:
    snprintf(err, errlen, "the answer is not JSON: %s", w->r_s.js_err);
    return PM_BAD_ANSWER;
}

enum prom_matrix_rc
prom_matrix_read(const char *body, size_t len, const struct prom_matrix_reader *r,
                 size_t *series, char *err, size_t errlen)
{
    struct rwalk w = {.r_q = r, .r_err = err, .r_errlen = errlen};
    enum prom_matrix_rc rc = read_answer(&w, body, len, series);

    seen_free(&w.r_seen);
    return rc;
}
