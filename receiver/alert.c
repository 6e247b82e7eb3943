/* alert.c -- the Alertmanager webhook payload (version 4), parsed and checked */
#include "alert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Duplicates an optional string member; absent or null gives "". */
static int
opt_string(json_t *obj, const char *key, char **out, size_t idx, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, key);

    if (v == NULL || json_is_null(v)) {
        *out = strdup("");
    } else if (json_is_string(v)) {
        *out = strdup(json_string_value(v));
    } else {
        seterr(err, errlen, "alerts[%zu].%s: must be a string", idx, key);
        return -1;
    }
    if (*out == NULL) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Checks that v is an object of strings, then dumps it compactly. */
static int
string_map(json_t *v, const char *what, size_t idx, char **out, char *err, size_t errlen)
{
    const char *key;
    json_t *val;

    if (!json_is_object(v)) {
        seterr(err, errlen, "alerts[%zu].%s: must be an object", idx, what);
        return -1;
    }
    json_object_foreach(v, key, val) {
        if (!json_is_string(val)) {
            seterr(err, errlen, "alerts[%zu].%s.%s: must be a string", idx, what, key);
            return -1;
        }
    }
    if ((*out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void
alert_clear(struct alert *a)
{
    free(a->a_alertname);
    free(a->a_fingerprint);
    free(a->a_starts_at);
    free(a->a_ends_at);
    free(a->a_labels_json);
    free(a->a_annotations_json);
    json_decref(a->a_labels);
    memset(a, 0, sizeof(*a));
}

static int
parse_alert(json_t *obj, size_t idx, struct alert *a, char *err, size_t errlen)
{
    json_t *labels, *annotations, *status, *name;
    const char *st;

    memset(a, 0, sizeof(*a));
    if (!json_is_object(obj))
        return seterr(err, errlen, "alerts[%zu]: must be an object", idx), -1;
    status = json_object_get(obj, "status");
    if (!json_is_string(status))
        return seterr(err, errlen, "alerts[%zu].status: missing or not a string", idx), -1;
    st = json_string_value(status);
    if (strcmp(st, "firing") != 0 && strcmp(st, "resolved") != 0)
        return seterr(err, errlen, "alerts[%zu].status: '%.64s' is not firing or resolved",
                      idx, st), -1;
    a->a_firing = st[0] == 'f';
    labels = json_object_get(obj, "labels");
    if (labels == NULL)
        return seterr(err, errlen, "alerts[%zu].labels: missing", idx), -1;
    if (string_map(labels, "labels", idx, &a->a_labels_json, err, errlen) == -1)
        goto fail;
    name = json_object_get(labels, "alertname");
    if (name == NULL || json_string_length(name) == 0) {
        seterr(err, errlen, "alerts[%zu].labels.alertname: missing or empty", idx);
        goto fail;
    }
    annotations = json_object_get(obj, "annotations");
    if (annotations == NULL || json_is_null(annotations)) {
        if ((a->a_annotations_json = strdup("{}")) == NULL)
            goto oom;
    } else if (string_map(annotations, "annotations", idx, &a->a_annotations_json, err,
                          errlen) == -1) {
        goto fail;
    }
    if ((a->a_alertname = strdup(json_string_value(name))) == NULL)
        goto oom;
    if (opt_string(obj, "fingerprint", &a->a_fingerprint, idx, err, errlen) == -1 ||
        opt_string(obj, "startsAt", &a->a_starts_at, idx, err, errlen) == -1 ||
        opt_string(obj, "endsAt", &a->a_ends_at, idx, err, errlen) == -1)
        goto fail;
    a->a_labels = json_incref(labels);
    return 0;
oom:
    seterr(err, errlen, "out of memory");
fail:
    alert_clear(a);
    return -1;
}

int
alert_batch_parse(const char *body, size_t len, struct alert_batch *out, char *err,
                  size_t errlen)
{
    json_error_t jerr;
    json_t *root, *version, *alerts;
    size_t n;

    memset(out, 0, sizeof(*out));
    if (len == 0)
        return seterr(err, errlen, "empty body: expected an Alertmanager webhook payload"),
               -1;
    /* jansson refuses invalid UTF-8, NUL escapes and nesting past its depth cap. */
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (root == NULL)
        return seterr(err, errlen, "body is not valid JSON: %s (line %d, column %d)",
                      jerr.text, jerr.line, jerr.column), -1;
    if (!json_is_object(root)) {
        seterr(err, errlen, "body must be a JSON object");
        goto fail;
    }
    version = json_object_get(root, "version");
    if (version != NULL && !json_is_string(version)) {
        seterr(err, errlen, "version: must be a string");
        goto fail;
    }
    if (version != NULL && strcmp(json_string_value(version), "4") != 0) {
        seterr(err, errlen, "version: '%.32s' is not supported (expected \"4\")",
               json_string_value(version));
        goto fail;
    }
    alerts = json_object_get(root, "alerts");
    if (!json_is_array(alerts)) {
        seterr(err, errlen, "alerts: missing or not an array");
        goto fail;
    }
    n = json_array_size(alerts);
    if (n > 0 && (out->ab_alerts = calloc(n, sizeof(*out->ab_alerts))) == NULL) {
        seterr(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if (parse_alert(json_array_get(alerts, i), i, &out->ab_alerts[i], err, errlen) ==
            -1)
            goto fail;
        out->ab_count++;
    }
    json_decref(root);
    return 0;
fail:
    alert_batch_free(out);
    json_decref(root);
    return -1;
}

void
alert_batch_free(struct alert_batch *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->ab_count; i++)
        alert_clear(&b->ab_alerts[i]);
    free(b->ab_alerts);
    b->ab_alerts = NULL;
    b->ab_count = 0;
}

const char *
alert_label(const struct alert *a, const char *name)
{
    return json_string_value(json_object_get(a->a_labels, name));
}

const char *
alert_status_name(const struct alert *a)
{
    return a->a_firing ? "firing" : "resolved";
}
