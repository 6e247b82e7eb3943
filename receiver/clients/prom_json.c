/* prom_json.c -- reads Prometheus instant-query answers into usage readings
 *
 * One pass with the jscan pull reader, no DOM: 20,000 series are ~3.6 MB.
 * Prometheus writes status, then data.resultType, then data.result; when a
 * body comes in another order the result's bytes are kept and read once the
 * rest is known. A wrong shape is reported only if the body is JSON. */
#include "prom_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jscan.h"
#include "strpool.h"

#define DEFAULT_NS_LABEL "namespace"
#define DEFAULT_POD_LABEL "pod"

/* Room for quote() to show max bytes, each as at most 4 characters. */
#define QUOTED(max) ((max)*4 + sizeof("..."))
#define SHORT 16 /* a resultType or errorType */
#define LONG 96  /* an error sentence */
#define WHY 512

/* Copies len bytes of s into out (QUOTED(max) bytes) for a message, printable
 * ASCII only (others as \xNN), cut at max bytes: Prometheus text ends up in
 * logs and the audit. */
static void
quote(const char *s, size_t len, size_t max, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < len && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, QUOTED(max) - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* quote() of a held value, decoded; "" for anything but a string, so a
 * message can always show it. */
static void
quote_held(const struct js_held *v, size_t max, char *out)
{
    char head[LONG + 8];
    size_t full;

    if (v->h_type != JS_STRING) {
        out[0] = '\0';
        return;
    }
    full = js_str_copy(&v->h_str, head, sizeof(head));
    quote(head, full, max, out);
}

/*
 * A sample value as Prometheus formats it: a Go float ("1.1489e+10", "NaN",
 * "+Inf", "-Inf"). strtod alone would also take leading space, hex and a
 * trailing remainder, so the characters are checked first and the whole
 * string must be consumed. (strtod follows LC_NUMERIC; the daemon never
 * calls setlocale, so that is the C locale.)
 */
static int
parse_float(const char *s, size_t len, double *out)
{
    const char *p = s;
    char *end;

    uint64_t v = 0;
    size_t i;

    if (len == 0 || strlen(s) != len)
        return -1;
    /* Byte counts are plain integers: up to 15 digits are exact in a double,
     * and this is ~10x cheaper than strtod. */
    for (i = 0; i < len && i < 15 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (i == len) {
        *out = (double)v;
        return 0;
    }
    if (strcasecmp(s, "nan") == 0) {
        *out = NAN;
        return 0;
    }
    if (*p == '+' || *p == '-')
        p++;
    if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if (strspn(s, "0123456789+-.eE") != len)
        return -1;
    /* Out of range gives +-HUGE_VAL, i.e. infinity: the caller judges that. */
    *out = strtod(s, &end);
    return end == s + len ? 0 : -1;
}

/* The answer's frame: what the walk found, judged once it ends. */
struct answer {
    struct js_scan a_s;
    struct js_held a_status, a_error_type, a_error, a_result_type;
    int a_data_object; /* data was an object */
    int a_have_result; /* data.result was there */
    enum js_type a_result_kind;
    const char *a_result; /* its bytes, when read after the walk */
    size_t a_result_len;
    int a_result_read; /* read during the walk */
    int a_oom;
};

/* What the caller wants from the result, and what it found. */
struct want {
    int w_scalar; /* prom_json_parse_scalar: else a vector */
    const char *w_ns_label, *w_pod_label;
    const char *w_gpu_label;     /* NULL: the GPU is not read */
    struct usage_reading *w_out; /* vector */
    uint64_t *w_sets;            /* per series, its whole label set hashed: becomes
                                    w_out->ur_label_sets */
    double *w_value;             /* scalar */
    char w_why[WHY];             /* a shape error, "" if none */
};

/* --- label sets: a vector never holds two series with the same one -------- */

static uint64_t
fnv(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* splitmix64's finaliser: the pairs are summed, so each must be well mixed. */
static uint64_t
mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* h continued over v's decoded text (an escaped spelling hashes as the plain
 * one, so "\u0061" cannot pass for another label than "a"). -1 out of memory. */
static int
hash_str(const struct js_str *v, uint64_t *h)
{
    char *d;
    size_t n;

    if (!v->jv_escaped) {
        *h = fnv(*h, v->jv_raw, v->jv_len);
        return 0;
    }
    if ((d = malloc(js_str_len(v) + 1)) == NULL)
        return -1;
    n = js_str_decode(v, d);
    *h = fnv(*h, d, n);
    free(d);
    return 0;
}

/* One label (key, value) into a series' label-set hash: pairs are summed, so
 * the order the labels come in does not matter. An empty value is an absent
 * label (Prometheus's rule) and adds nothing. */
static int
add_label(uint64_t *set, const struct js_str *key, const char *value, size_t vlen)
{
    uint64_t h = 14695981039346656037ull;

    if (vlen == 0)
        return 0;
    if (hash_str(key, &h) == -1)
        return -1;
    h = (h ^ 0xff) * 1099511628211ull; /* no byte of UTF-8 text: ends the key */
    *set += mix(fnv(h, value, vlen));
    return 0;
}

/* add_label() for a value as the reader gives it (decoded when escaped). */
static int
add_label_js(uint64_t *set, const struct js_str *key, const struct js_str *v)
{
    char *d;
    size_t n;
    int rc;

    if (!v->jv_escaped)
        return add_label(set, key, v->jv_raw, v->jv_len);
    if ((d = malloc(js_str_len(v) + 1)) == NULL)
        return -1;
    n = js_str_decode(v, d);
    rc = add_label(set, key, d, n);
    free(d);
    return rc;
}

static int
held_is(const struct js_held *h, const char *lit)
{
    return h->h_type == JS_STRING && js_str_eq(&h->h_str, lit);
}

/* A [time, "value"] pair into *out; 1 with why set when it is not one. */
static int
read_sample(struct js_scan *s, double *out, char *why, size_t whylen, const char *where,
            size_t idx)
{
    unsigned depth = s->js_depth;
    char text[128], shown[QUOTED(LONG)];
    struct js_held v = {JS_ERROR, {NULL, 0, 0}, 0};
    size_t full;
    int rc, opened = 0;

    if (js_peek(s) != JS_ARRAY)
        goto not_pair;
    if (js_array_begin(s) == -1)
        return -1;
    opened = 1;
    if ((rc = js_array_next(s)) != 1 || js_peek(s) != JS_NUMBER)
        goto not_pair;
    if (js_number(s, NULL) == -1 || (rc = js_array_next(s)) != 1 ||
        js_hold(s, &v) == -1 || (rc = js_array_next(s)) != 0)
        goto not_pair;
    if (v.h_type == JS_NUMBER) { /* Defensive: the API sends strings. */
        *out = v.h_num;
        return 0;
    }
    if (v.h_type == JS_STRING) {
        full = js_str_copy(&v.h_str, text, sizeof(text));
        if (full < sizeof(text) && parse_float(text, full, out) == 0)
            return 0;
    }
    quote_held(&v, LONG, shown);
    if (where != NULL)
        snprintf(why, whylen, "%s: sample value \"%s\" is not a number", where, shown);
    else
        snprintf(why, whylen, "result[%zu]: sample value \"%s\" is not a number", idx,
                 shown);
    return 1;
not_pair:
    if (s->js_failed)
        return -1;
    if (where != NULL)
        snprintf(why, whylen, "%s: value is not a [time, value] pair", where);
    else
        snprintf(why, whylen, "result[%zu]: value is not a [time, value] pair", idx);
    /* Whatever is left of the value, skipped and checked. */
    if (!opened)
        return js_skip(s) == -1 ? -1 : 1;
    return js_leave(s, depth) == -1 ? -1 : 1;
}

/* A label's value into *dst (left NULL when empty: Prometheus treats an
 * empty label as an absent one), copied into pool, or shared with prev (the
 * same label of the series before, NULL if none) when it is the same text:
 * a pod's series usually come together. 1 when it is not a string. */
static int
read_label(struct js_scan *s, char **dst, const char *prev, struct strpool *pool,
           int *oom)
{
    struct js_str v;
    int nul = 0;

    if (js_peek(s) != JS_STRING)
        return js_skip(s) == -1 ? -1 : 1;
    if (js_string(s, &v) == -1)
        return -1;
    if (v.jv_len == 0)
        return 0;
    if (prev != NULL && !v.jv_escaped && strncmp(prev, v.jv_raw, v.jv_len) == 0 &&
        prev[v.jv_len] == '\0') {
        *dst = (char *)prev; /* the pool owns both */
        return 0;
    }
    if ((*dst = js_strdup_pool(&v, pool, &nul)) == NULL)
        return nul ? 1 : (*oom = 1, -1);
    return 0;
}

/* Which wanted label key is: 0 namespace, 1 pod, 2 GPU, else -1. */
static int
label_index(const struct want *w, const struct js_str *key)
{
    if (js_str_eq(key, w->w_ns_label))
        return 0;
    if (js_str_eq(key, w->w_pod_label))
        return 1;
    if (w->w_gpu_label != NULL && js_str_eq(key, w->w_gpu_label))
        return 2;
    return -1;
}

static const char *
label_name(const struct want *w, int k)
{
    return k == 0 ? w->w_ns_label : k == 1 ? w->w_pod_label : w->w_gpu_label;
}

static char **
label_dst(struct usage_series *ser, int k)
{
    return k == 0 ? &ser->us_namespace : k == 1 ? &ser->us_pod : &ser->us_gpu;
}

/* result[i]: a {metric, value} object into *ser; a wrong shape sets why (the
 * first, in the order: object, namespace label, pod label, GPU label, value). */
static int
read_series(struct js_scan *s, struct want *w, size_t idx, struct usage_series *ser,
            int *oom)
{
    struct js_str key, val;
    uint64_t *set = &w->w_sets[idx];
    const char *text;
    char where[48], sample_why[WHY];
    unsigned seen = 0, seen_l;
    int rc, rc2, not_object = 0, bad_label = -1, have_value = 0, sample_bad = 0;

    /* where is only for messages: written here only when one is (formatting
     * it for every series cost a fifth of a 20,000-series parse). */
    where[0] = sample_why[0] = '\0';
    if (js_peek(s) != JS_OBJECT) {
        snprintf(where, sizeof(where), "result[%zu]", idx);
        snprintf(w->w_why, sizeof(w->w_why), "%s is not a {metric, value} object", where);
        return js_skip(s);
    }
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        if (js_str_eq(&key, "metric")) {
            if (js_once(s, &seen, 1, "metric") == -1)
                return -1;
            if (js_peek(s) != JS_OBJECT) {
                not_object = 1;
                rc = js_skip(s);
            } else if ((rc = js_object_begin(s)) == 0) {
                seen_l = 0;
                while ((rc2 = js_object_next(s, &key)) == 1) {
                    int k = label_index(w, &key);
                    if (k == -1 && js_peek(s) == JS_STRING) {
                        /* Not read, but part of the label set. */
                        if ((rc2 = js_string(s, &val)) == 0 &&
                            add_label_js(set, &key, &val) == -1)
                            return *oom = 1, -1;
                    } else if (k == -1) {
                        rc2 = js_skip(s);
                    } else if (js_once(s, &seen_l, 1u << k, label_name(w, k)) == -1) {
                        rc2 = -1;
                    } else if ((rc2 = read_label(s, label_dst(ser, k),
                                                 idx > 0 ? *label_dst(ser - 1, k) : NULL,
                                                 w->w_out->ur_pool, oom)) == 1) {
                        if (bad_label == -1 || k < bad_label)
                            bad_label = k;
                        rc2 = 0;
                    } else if (rc2 == 0 && (text = *label_dst(ser, k)) != NULL &&
                               add_label(set, &key, text, strlen(text)) == -1) {
                        return *oom = 1, -1;
                    }
                    if (rc2 == -1)
                        return -1;
                }
                rc = rc2;
            }
        } else if (js_str_eq(&key, "value")) {
            if (js_once(s, &seen, 2, "value") == -1)
                return -1;
            have_value = 1;
            rc =
                read_sample(s, &ser->us_bytes, sample_why, sizeof(sample_why), NULL, idx);
            sample_bad = rc == 1;
            rc = rc == 1 ? 0 : rc;
        } else {
            rc = js_skip(s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (!not_object && bad_label == -1 && have_value && !sample_bad)
        return 0; /* the usual case: nothing to say */
    snprintf(where, sizeof(where), "result[%zu]", idx);
    if (not_object)
        snprintf(w->w_why, sizeof(w->w_why), "%s is not a {metric, value} object", where);
    else if (bad_label != -1)
        snprintf(w->w_why, sizeof(w->w_why), "%s: label %s is not a string", where,
                 label_name(w, bad_label));
    else if (!have_value)
        snprintf(w->w_why, sizeof(w->w_why), "%s: value is not a [time, value] pair",
                 where);
    else if (sample_bad)
        snprintf(w->w_why, sizeof(w->w_why), "%s", sample_why);
    return 0;
}

/* A vector's series into w->w_out, growing by doubling. */
static int
read_vector(struct js_scan *s, struct want *w, int *oom)
{
    struct usage_reading *out = w->w_out;
    struct usage_series *grown;
    size_t cap = 0;
    int rc;

    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1) {
        if (w->w_why[0] != '\0') { /* a series was wrong: only check the rest */
            if (js_skip(s) == -1)
                return -1;
            continue;
        }
        if (out->ur_count == cap) {
            uint64_t *sets;
            cap = cap ? cap * 2 : 16;
            if (cap > SIZE_MAX / sizeof(*grown) ||
                (grown = realloc(out->ur_series, cap * sizeof(*grown))) == NULL)
                return *oom = 1, -1;
            out->ur_series = grown;
            if ((sets = realloc(w->w_sets, cap * sizeof(*sets))) == NULL)
                return *oom = 1, -1;
            w->w_sets = sets;
        }
        /* Counted first, so usage_reading_free() sees a half-read series. */
        memset(&out->ur_series[out->ur_count], 0, sizeof(*grown));
        w->w_sets[out->ur_count] = 0;
        out->ur_count++;
        if (read_series(s, w, out->ur_count - 1, &out->ur_series[out->ur_count - 1],
                        oom) == -1)
            return -1;
    }
    return rc;
}

/* A vector expected to hold one sample: counts them, reads the first. */
static int
read_one(struct js_scan *s, struct want *w)
{
    char why[WHY];
    size_t n = 0;
    int rc, bad = 0;

    why[0] = '\0';
    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1) {
        if (n++ > 0) {
            rc = js_skip(s);
        } else if (js_peek(s) != JS_OBJECT) {
            snprintf(why, sizeof(why), "result[0] is not a {metric, value} object");
            bad = 1;
            rc = js_skip(s);
        } else {
            struct js_str key;
            unsigned have_value = 0;
            if (js_object_begin(s) == -1)
                return -1;
            while ((rc = js_object_next(s, &key)) == 1) {
                if (!js_str_eq(&key, "value")) {
                    rc = js_skip(s);
                } else if (js_once(s, &have_value, 1, "value") == -1) {
                    rc = -1;
                } else if ((rc = read_sample(s, w->w_value, why, sizeof(why), "result[0]",
                                             0)) == 1) {
                    bad = 1;
                    rc = 0;
                }
                if (rc == -1)
                    return -1;
            }
            if (rc == 0 && !have_value) {
                snprintf(why, sizeof(why),
                         "result[0]: value is not a [time, value] pair");
                bad = 1;
            }
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if (n != 1)
        snprintf(w->w_why, sizeof(w->w_why),
                 "the query returned %zu samples, expected one", n);
    else if (bad)
        snprintf(w->w_why, sizeof(w->w_why), "%s", why);
    return 0;
}

/* Reads data.result (the reader is at it) as the caller wants it. */
static int
read_result(struct js_scan *s, const struct answer *a, struct want *w, int *oom)
{
    char text[SHORT + 8], shown[QUOTED(SHORT)];
    enum js_type t = js_peek(s);
    int rc;

    if (w->w_scalar && held_is(&a->a_result_type, "scalar")) {
        /* scalar(...) answers a bare [time, "value"]. */
        rc = read_sample(s, w->w_value, w->w_why, sizeof(w->w_why), "result", 0);
        return rc == 1 ? 0 : rc;
    }
    if (!held_is(&a->a_result_type, "vector") || t != JS_ARRAY) {
        js_str_copy(&a->a_result_type.h_str, text, sizeof(text));
        quote(text, js_str_len(&a->a_result_type.h_str), SHORT, shown);
        snprintf(w->w_why, sizeof(w->w_why), "resultType is \"%s\", not a vector", shown);
        return js_skip(s);
    }
    return w->w_scalar ? read_one(s, w) : read_vector(s, w, oom);
}

/* Whether the answer so far says success with a result type: only then is
 * the result read as it streams by. */
static int
ready(const struct answer *a)
{
    return held_is(&a->a_status, "success") && a->a_result_type.h_type == JS_STRING;
}

static int
read_data(struct answer *a, struct want *w)
{
    struct js_scan *s = &a->a_s;
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (js_peek(s) != JS_OBJECT)
        return js_skip(s);
    a->a_data_object = 1;
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        if (js_str_eq(&key, "resultType")) {
            rc = js_once(s, &seen, 1, "resultType") == -1 ? -1
                                                          : js_hold(s, &a->a_result_type);
        } else if (!js_str_eq(&key, "result")) {
            rc = js_skip(s);
        } else if (js_once(s, &seen, 2, "result") == -1) {
            rc = -1;
        } else {
            a->a_have_result = 1;
            a->a_result_kind = js_peek(s);
            if (ready(a)) {
                a->a_result_read = 1;
                rc = read_result(s, a, w, &a->a_oom);
            } else { /* kept, and read once the rest is known */
                a->a_result = s->js_p;
                rc = js_skip(s);
                a->a_result_len = (size_t)(s->js_p - a->a_result);
            }
        }
        if (rc == -1)
            return -1;
    }
    return rc;
}

/* Walks the whole answer. 0 when it is JSON (w->w_why or why may then hold
 * a reason), -1 when it is not or memory ran out. */
static int
walk_answer(struct answer *a, struct want *w)
{
    static const char *const keys[] = {"status", "errorType", "error"};
    struct js_held *dsts[] = {&a->a_status, &a->a_error_type, &a->a_error};
    struct js_scan *s = &a->a_s;
    enum js_type t = js_peek(s);
    struct js_str key;
    unsigned seen = 0;
    int rc, k;

    if (t == JS_ARRAY)
        return js_skip(s) == -1 ? -1 : js_end(s);
    if (t != JS_OBJECT) /* like any JSON library taking only an object or array */
        return t == JS_ERROR ? -1 : js_fail(s, "expected an object");
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        for (k = 0; k < 3 && !js_str_eq(&key, keys[k]); k++)
            ;
        if (k < 3)
            rc = js_once(s, &seen, 1u << k, keys[k]) == -1 ? -1 : js_hold(s, dsts[k]);
        else if (js_str_eq(&key, "data"))
            rc = js_once(s, &seen, 8, "data") == -1 ? -1 : read_data(a, w);
        else
            rc = js_skip(s);
        if (rc == -1)
            return -1;
    }
    return rc == -1 ? -1 : js_end(s);
}

/* Walks body and reads its result into w; 0, or -1 with the reason in why
 * (w->w_why is the result's own). */
static int
read_answer(const char *body, size_t len, struct want *w, char *why, size_t whylen)
{
    char a_txt[QUOTED(SHORT)], b_txt[QUOTED(LONG)];
    struct answer *a;
    struct js_scan sub;
    int rc = -1;

    w->w_why[0] = '\0';
    if (body == NULL || len == 0) {
        snprintf(why, whylen, "not a Prometheus answer: empty body");
        return -1;
    }
    /* On the heap: the reader's frames are a few hundred bytes. */
    if ((a = calloc(1, sizeof(*a))) == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    js_init(&a->a_s, body, len);
    if (walk_answer(a, w) == -1) {
        if (a->a_oom)
            snprintf(why, whylen, "out of memory");
        else
            snprintf(why, whylen, "not JSON: %s", a->a_s.js_err);
    } else if (held_is(&a->a_status, "error")) {
        quote_held(&a->a_error_type, SHORT, a_txt);
        quote_held(&a->a_error, LONG, b_txt);
        snprintf(why, whylen, "Prometheus answered an error (%s): %s", a_txt, b_txt);
    } else if (!held_is(&a->a_status, "success")) {
        snprintf(why, whylen, "not a Prometheus answer: no \"status\":\"success\"");
    } else if (!a->a_data_object || a->a_result_type.h_type != JS_STRING ||
               !a->a_have_result) {
        snprintf(why, whylen,
                 "not a Prometheus answer: no data.resultType and data.result");
    } else if (!a->a_result_read) {
        /* Already checked as JSON: this read can only fail for memory. */
        js_init(&sub, a->a_result, a->a_result_len);
        if (read_result(&sub, a, w, &a->a_oom) == -1)
            snprintf(why, whylen, "out of memory");
        else
            rc = 0;
    } else {
        rc = 0;
    }
    if (rc == 0 && w->w_why[0] != '\0') {
        snprintf(why, whylen, "%s", w->w_why);
        rc = -1;
    }
    free(a);
    return rc;
}

int
prom_json_parse_vector(const char *body, size_t len, const char *ns_label,
                       const char *pod_label, struct usage_reading *out, char *err,
                       size_t errlen)
{
    return prom_json_parse_vector_gpu(body, len, ns_label, pod_label, NULL, out, err,
                                      errlen);
}

int
prom_json_parse_vector_gpu(const char *body, size_t len, const char *ns_label,
                           const char *pod_label, const char *gpu_label,
                           struct usage_reading *out, char *err, size_t errlen)
{
    struct want w = {
        .w_ns_label = ns_label != NULL ? ns_label : DEFAULT_NS_LABEL,
        .w_pod_label = pod_label != NULL ? pod_label : DEFAULT_POD_LABEL,
        .w_gpu_label = gpu_label != NULL && gpu_label[0] != '\0' ? gpu_label : NULL,
        .w_out = out,
    };
    char why[WHY];
    int rc;

    memset(out, 0, sizeof(*out));
    if ((out->ur_pool = strpool_new()) == NULL) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = read_answer(body, len, &w, why, sizeof(why));
    out->ur_label_sets = w.w_sets; /* freed with the reading */
    if (rc == 0)
        return 0;
    usage_reading_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int
prom_json_parse_scalar(const char *body, size_t len, double *value, char *err,
                       size_t errlen)
{
    struct want w = {.w_scalar = 1, .w_value = value};
    char why[WHY];

    if (read_answer(body, len, &w, why, sizeof(why)) == 0)
        return 0;
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}
