/* prom_json.c -- reads Prometheus instant-query answers into usage readings */
#include "prom_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_NS_LABEL "namespace"
#define DEFAULT_POD_LABEL "pod"

/* Room for quote() to show max bytes, each as at most 4 characters. */
#define QUOTED(max) ((max)*4 + sizeof("..."))
#define SHORT 16 /* a resultType or errorType */
#define LONG 96  /* an error sentence */

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

/* "" for anything but a string, so a message can always show it. */
static void
quote_json(const json_t *v, size_t max, char *out)
{
    if (json_is_string(v))
        quote(json_string_value(v), json_string_length(v), max, out);
    else
        out[0] = '\0';
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

    if (len == 0 || strlen(s) != len)
        return -1;
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

/* [time, "value"] into *out. */
static int
sample(const json_t *pair, double *out, char *why, size_t whylen, const char *where)
{
    const json_t *v = json_array_get(pair, 1);
    char shown[QUOTED(LONG)];

    if (!json_is_array(pair) || json_array_size(pair) != 2 ||
        !json_is_number(json_array_get(pair, 0))) {
        snprintf(why, whylen, "%s: value is not a [time, value] pair", where);
        return -1;
    }
    if (json_is_number(v)) { /* Defensive: the API sends strings. */
        *out = json_number_value(v);
        return 0;
    }
    if (json_is_string(v) &&
        parse_float(json_string_value(v), json_string_length(v), out) == 0)
        return 0;
    quote_json(v, LONG, shown);
    snprintf(why, whylen, "%s: sample value \"%s\" is not a number", where, shown);
    return -1;
}

/* Loads an answer and checks it succeeded; returns the root (the caller
 * decrefs it) with data.resultType in *type and data.result in *result. */
static json_t *
open_answer(const char *body, size_t len, const char **type, const json_t **result,
            char *why, size_t whylen)
{
    const json_t *status, *data;
    json_t *root;
    json_error_t jerr;
    char a[QUOTED(SHORT)], b[QUOTED(LONG)];

    if (body == NULL || len == 0) {
        snprintf(why, whylen, "not a Prometheus answer: empty body");
        return NULL;
    }
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
    if (root == NULL) {
        snprintf(why, whylen, "not JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                 jerr.column);
        return NULL;
    }
    status = json_object_get(root, "status");
    if (json_is_string(status) && strcmp(json_string_value(status), "error") == 0) {
        quote_json(json_object_get(root, "errorType"), SHORT, a);
        quote_json(json_object_get(root, "error"), LONG, b);
        snprintf(why, whylen, "Prometheus answered an error (%s): %s", a, b);
        goto fail;
    }
    if (!json_is_string(status) || strcmp(json_string_value(status), "success") != 0) {
        snprintf(why, whylen, "not a Prometheus answer: no \"status\":\"success\"");
        goto fail;
    }
    data = json_object_get(root, "data");
    *type = json_string_value(json_object_get(data, "resultType"));
    *result = json_object_get(data, "result");
    if (*type == NULL || *result == NULL) {
        snprintf(why, whylen,
                 "not a Prometheus answer: no data.resultType and data.result");
        goto fail;
    }
    return root;

fail:
    json_decref(root);
    return NULL;
}

/* Copies the value of label name, or leaves *dst NULL when absent or empty
 * (Prometheus treats an empty label as an absent one). */
static int
label(const json_t *metric, const char *name, char **dst, char *why, size_t whylen,
      const char *where)
{
    const json_t *v = json_object_get(metric, name);
    const char *s = json_string_value(v);

    if (v == NULL)
        return 0;
    if (s == NULL || strlen(s) != json_string_length(v)) {
        snprintf(why, whylen, "%s: label %s is not a string", where, name);
        return -1;
    }
    if (s[0] != '\0' && (*dst = strdup(s)) == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

static int
parse_series(const json_t *el, const char *ns_label, const char *pod_label, size_t idx,
             struct usage_series *s, char *why, size_t whylen)
{
    const json_t *metric = json_object_get(el, "metric");
    char where[48];

    snprintf(where, sizeof(where), "result[%zu]", idx);
    if (!json_is_object(el) || (metric != NULL && !json_is_object(metric))) {
        snprintf(why, whylen, "%s is not a {metric, value} object", where);
        return -1;
    }
    if (label(metric, ns_label, &s->us_namespace, why, whylen, where) == -1 ||
        label(metric, pod_label, &s->us_pod, why, whylen, where) == -1)
        return -1;
    return sample(json_object_get(el, "value"), &s->us_bytes, why, whylen, where);
}

int
prom_json_parse_vector(const char *body, size_t len, const char *ns_label,
                       const char *pod_label, struct usage_reading *out, char *err,
                       size_t errlen)
{
    const json_t *result, *el;
    const char *type = NULL;
    json_t *root;
    char why[512], shown[QUOTED(SHORT)];
    size_t i, n;

    memset(out, 0, sizeof(*out));
    if ((root = open_answer(body, len, &type, &result, why, sizeof(why))) == NULL)
        goto fail;
    if (strcmp(type, "vector") != 0 || !json_is_array(result)) {
        quote(type, strlen(type), SHORT, shown);
        snprintf(why, sizeof(why), "resultType is \"%s\", not a vector", shown);
        goto fail;
    }
    n = json_array_size(result);
    if (n > 0 && (out->ur_series = calloc(n, sizeof(*out->ur_series))) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    json_array_foreach(result, i, el)
    {
        out->ur_count++; /* counted first, so usage_reading_free() sees it */
        if (parse_series(el, ns_label != NULL ? ns_label : DEFAULT_NS_LABEL,
                         pod_label != NULL ? pod_label : DEFAULT_POD_LABEL, i,
                         &out->ur_series[i], why, sizeof(why)) == -1)
            goto fail;
    }
    json_decref(root);
    return 0;

fail:
    json_decref(root);
    usage_reading_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int
prom_json_parse_scalar(const char *body, size_t len, double *value, char *err,
                       size_t errlen)
{
    const json_t *result;
    const char *type = NULL;
    json_t *root;
    char why[512], shown[QUOTED(SHORT)];
    int rc = -1;

    if ((root = open_answer(body, len, &type, &result, why, sizeof(why))) == NULL)
        goto done;
    if (strcmp(type, "scalar") == 0) {
        /* scalar(...) answers a bare [time, "value"]. */
        rc = sample(result, value, why, sizeof(why), "result");
    } else if (strcmp(type, "vector") != 0 || !json_is_array(result)) {
        quote(type, strlen(type), SHORT, shown);
        snprintf(why, sizeof(why), "resultType is \"%s\", not a vector", shown);
    } else if (json_array_size(result) != 1) {
        snprintf(why, sizeof(why), "the query returned %zu samples, expected one",
                 json_array_size(result));
    } else if (!json_is_object(json_array_get(result, 0))) {
        snprintf(why, sizeof(why), "result[0] is not a {metric, value} object");
    } else {
        rc = sample(json_object_get(json_array_get(result, 0), "value"), value, why,
                    sizeof(why), "result[0]");
    }
done:
    json_decref(root);
    if (rc == -1 && err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return rc;
}
