/* pods_json.c -- reads a Kubernetes PodList into the pods the decision core judges */
#include "pods_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quantity.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
/* quote() shows at most QUOTE_MAX bytes, each as at most 4 characters. */
#define QUOTE_MAX 64
#define QUOTED (QUOTE_MAX * 4 + sizeof("..."))
/* A budget reason: two quoted strings, a quantity error and the words. */
#define REASON 1024

/* Copies len bytes of s into out (QUOTED bytes) for a message: printable
 * ASCII as is, anything else as \xNN, cut at QUOTE_MAX bytes, so API text
 * never smuggles control bytes into logs. */
static void
quote(const char *s, size_t len, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < len && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, QUOTED - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* The JSON type of a value that should have been a string, a number or an
 * object (those are read before anything asks). */
static const char *
type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

/* A present, non-empty string without NUL bytes, or NULL. (jansson refuses
 * \u0000 unless asked; the length check keeps that true if it ever is.) */
static const char *
clean_string(const json_t *v)
{
    const char *s = json_string_value(v);

    if (s == NULL || s[0] == '\0' || strlen(s) != json_string_length(v))
        return NULL;
    return s;
}

static int
days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): pure arithmetic, so the result never depends on TZ. */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = y / 400; /* y >= 1969 here: the parser refuses earlier years */
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads n digits at s into *v. */
static int
digits(const char *s, int n, int64_t *v)
{
    int i;

    for (*v = 0, i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

/* RFC 3339 ("2026-06-02T10:00:00Z", fraction and offset allowed) to unix
 * seconds; 0 (unknown) for anything else or a time not after the epoch. */
static int64_t
parse_rfc3339(const char *s)
{
    int64_t y, mo, d, h, mi, sec, oh, om, off = 0, t;
    size_t len = strlen(s), pos = 19;

    if (len < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
        s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &sec))
        return 0;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, (int)mo) ||
        h > 23 || mi > 59 || sec > 60)
        return 0;
    if (s[pos] == '.') {
        for (pos++; s[pos] >= '0' && s[pos] <= '9'; pos++)
            ;
        if (s[pos - 1] == '.')
            return 0;
    }
    if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == len) {
        off = 0;
    } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == len &&
               digits(s + pos + 1, 2, &oh) == 0 && s[pos + 3] == ':' &&
               digits(s + pos + 4, 2, &om) == 0 && oh <= 23 && om <= 59) {
        off = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    } else {
        return 0;
    }
    t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    return t > 0 ? t : 0;
}

/* One container's declared value in *mib: 0, 1 when it declares none, or -1
 * with why in msg. */
static int
value_mib(const json_t *v, const char *word, const char *cname, int64_t *mib, char *msg,
          size_t msglen)
{
    char shown[QUOTED], qerr[128];
    const char *s;
    double d;

    if (json_is_string(v)) {
        s = json_string_value(v);
        quote(s, json_string_length(v), shown);
        if (quantity_parse_n(s, json_string_length(v), mib, qerr, sizeof(qerr)) == -1) {
            snprintf(msg, msglen, "container %s: %s \"%s\" is not a quantity (%s)", cname,
                     word, shown, qerr);
            return -1;
        }
        if (*mib < 0) {
            snprintf(msg, msglen, "container %s: %s \"%s\" is negative", cname, word,
                     shown);
            return -1;
        }
        return 0;
    }
    if (json_is_number(v)) {
        /* Defensive: the API sends strings, but a hand-written manifest
         * echoed by a proxy might not. Round up, like a quantity. */
        d = json_number_value(v);
        if (d < 0) {
            snprintf(msg, msglen, "container %s: %s %g is negative", cname, word, d);
            return -1;
        }
        if (!(d < 9223372036854775807.0)) {
            snprintf(msg, msglen, "container %s: %s %g does not fit in 64 bits", cname,
                     word, d);
            return -1;
        }
        *mib = (int64_t)ceil(d);
        return 0;
    }
    snprintf(msg, msglen, "container %s: %s is a JSON %s, not a quantity", cname, word,
             type_name(v));
    return -1;
}

/* The limit for the resource, else the request. 0, 1 (none), or -1. */
static int
container_value(const json_t *ctr, const char *res, const char *cname, int64_t *mib,
                char *msg, size_t msglen)
{
    static const char *const maps[] = {"limits", "requests"};
    static const char *const words[] = {"limit", "request"};
    const json_t *resources = json_object_get(ctr, "resources"), *m, *v;
    int k;

    if (resources == NULL || json_is_null(resources))
        return 1;
    if (!json_is_object(resources)) {
        snprintf(msg, msglen, "container %s: resources is not an object", cname);
        return -1;
    }
    for (k = 0; k < 2; k++) {
        m = json_object_get(resources, maps[k]);
        if (m == NULL || json_is_null(m))
            continue;
        if (!json_is_object(m)) {
            snprintf(msg, msglen, "container %s: resources.%s is not an object", cname,
                     maps[k]);
            return -1;
        }
        if ((v = json_object_get(m, res)) != NULL)
            return value_mib(v, words[k], cname, mib, msg, msglen);
    }
    return 1;
}

/* Sums spec.containers (init containers do not count) into p. A broken
 * declaration is BUDGET_BAD with a reason; -1 only when out of memory. */
static int
pod_budget(const json_t *spec, const char *res, struct pod *p)
{
    const json_t *ctrs = json_object_get(spec, "containers"), *ctr, *name;
    char msg[REASON], cname[QUOTED];
    int64_t v, total = 0;
    size_t i;
    int rc, declared = 0;

    msg[0] = '\0';
    if (spec != NULL && !json_is_object(spec) && !json_is_null(spec)) {
        snprintf(msg, sizeof(msg), "spec is not an object");
        goto bad;
    }
    if (ctrs == NULL || json_is_null(ctrs))
        goto done;
    if (!json_is_array(ctrs)) {
        snprintf(msg, sizeof(msg), "spec.containers is not an array");
        goto bad;
    }
    json_array_foreach(ctrs, i, ctr)
    {
        if (!json_is_object(ctr)) {
            snprintf(msg, sizeof(msg), "spec.containers[%zu] is not an object", i);
            goto bad;
        }
        name = json_object_get(ctr, "name");
        if (json_is_string(name))
            quote(json_string_value(name), json_string_length(name), cname);
        else
            snprintf(cname, sizeof(cname), "#%zu", i);
        if ((rc = container_value(ctr, res, cname, &v, msg, sizeof(msg))) == -1)
            goto bad;
        if (rc == 1)
            continue;
        if (v > INT64_MAX - total) {
            snprintf(msg, sizeof(msg),
                     "the containers' values together overflow 64 bits");
            goto bad;
        }
        total += v;
        declared = 1;
    }
done:
    p->p_budget_state = declared ? BUDGET_OK : BUDGET_NONE;
    p->p_budget_mib = total;
    return 0;
bad:
    p->p_budget_state = BUDGET_BAD;
    p->p_budget_mib = 0;
    return (p->p_budget_error = strdup(msg)) == NULL ? -1 : 0;
}

/* Annotations: mirror and protected. A malformed map or protect value counts
 * as protected: when in doubt, never a victim. */
static void
pod_annotations(const json_t *md, const char *protect, struct pod *p)
{
    const json_t *ann = json_object_get(md, "annotations"), *v;

    if (ann == NULL || json_is_null(ann))
        return;
    if (!json_is_object(ann)) {
        p->p_protected = 1;
        return;
    }
    p->p_mirror = json_object_get(ann, MIRROR_ANNOTATION) != NULL;
    if (protect == NULL || protect[0] == '\0' ||
        (v = json_object_get(ann, protect)) == NULL)
        return;
    p->p_protected = !json_is_string(v) || strcasecmp(json_string_value(v), "true") == 0;
}

static int
has_controller(const json_t *md)
{
    const json_t *refs = json_object_get(md, "ownerReferences"), *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
    {
        if (json_is_true(json_object_get(ref, "controller")))
            return 1;
    }
    return 0;
}

/* Copies metadata.key, which a PodList item must have. */
static int
required(const json_t *md, const char *key, size_t idx, char **dst, char *err,
         size_t errlen)
{
    const char *s = clean_string(json_object_get(md, key));

    if (s == NULL) {
        snprintf(
            err, errlen,
            "not a PodList: items[%zu] metadata.%s is missing, empty or not a string",
            idx, key);
        return -1;
    }
    if ((*dst = strdup(s)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int
parse_pod(const json_t *item, size_t idx, const struct pod_parse_opts *o, struct pod *p,
          char *err, size_t errlen)
{
    const json_t *md = json_object_get(item, "metadata"), *status, *v;
    const char *s;

    if (!json_is_object(md)) {
        snprintf(err, errlen, "not a PodList: items[%zu] has no metadata object", idx);
        return -1;
    }
    if (required(md, "namespace", idx, &p->p_namespace, err, errlen) == -1 ||
        required(md, "name", idx, &p->p_name, err, errlen) == -1 ||
        required(md, "uid", idx, &p->p_uid, err, errlen) == -1)
        return -1;
    /* Present and not null: any other value still means "being deleted". */
    v = json_object_get(md, "deletionTimestamp");
    p->p_terminating = v != NULL && !json_is_null(v);
    p->p_has_controller = has_controller(md);
    pod_annotations(md, o->po_protect_annotation, p);
    status = json_object_get(item, "status");
    s = json_string_value(json_object_get(status, "phase"));
    p->p_running = s != NULL && strcmp(s, "Running") == 0;
    s = clean_string(json_object_get(status, "startTime"));
    p->p_started = s != NULL ? parse_rfc3339(s) : 0;
    if (pod_budget(json_object_get(item, "spec"), o->po_resource, p) == -1) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* The top level must be a PodList; a Status (an API error) says why not. */
static const json_t *
items_of(const json_t *root, char *err, size_t errlen)
{
    const json_t *kind = json_object_get(root, "kind"), *items, *msg;
    char shown[QUOTED];

    if (!json_is_object(root)) {
        snprintf(err, errlen, "not a PodList: the document is a JSON %s",
                 type_name(root));
        return NULL;
    }
    if (json_is_string(kind) && strcmp(json_string_value(kind), "PodList") != 0) {
        msg = json_object_get(root, "message");
        if (strcmp(json_string_value(kind), "Status") == 0 && json_is_string(msg)) {
            quote(json_string_value(msg), json_string_length(msg), shown);
            snprintf(err, errlen, "not a PodList: the API server answered \"%s\"", shown);
        } else {
            quote(json_string_value(kind), json_string_length(kind), shown);
            snprintf(err, errlen, "not a PodList: kind is \"%s\"", shown);
        }
        return NULL;
    }
    items = json_object_get(root, "items");
    if (!json_is_array(items)) {
        snprintf(err, errlen, "not a PodList: no items array");
        return NULL;
    }
    return items;
}

int
pods_json_parse(const char *body, size_t len, const struct pod_parse_opts *opts,
                struct pod_list *out, char *err, size_t errlen)
{
    json_t *root = NULL;
    const json_t *items, *item;
    json_error_t jerr;
    char why[512];
    size_t i, n;

    memset(out, 0, sizeof(*out));
    if (opts == NULL || opts->po_resource == NULL || opts->po_resource[0] == '\0') {
        snprintf(why, sizeof(why), "no resource name to read budgets from");
        goto fail;
    }
    if (body == NULL || len == 0) {
        snprintf(why, sizeof(why), "not a PodList: empty body");
        goto fail;
    }
    /* Duplicate keys could make two readers see two different pods; jansson
     * also caps nesting depth, so a hostile body cannot exhaust the stack.
     * Integers are read as reals so an out-of-range number in a field we
     * ignore cannot reject the whole list. */
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
    if (root == NULL) {
        snprintf(why, sizeof(why), "not JSON: %s (line %d, column %d)", jerr.text,
                 jerr.line, jerr.column);
        goto fail;
    }
    if ((items = items_of(root, why, sizeof(why))) == NULL)
        goto fail;
    n = json_array_size(items);
    if (n > 0 && (out->pl_pods = calloc(n, sizeof(*out->pl_pods))) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    json_array_foreach(items, i, item)
    {
        /* Counted first, so pod_list_free() sees a half-read pod too. */
        out->pl_count++;
        if (parse_pod(item, i, opts, &out->pl_pods[i], why, sizeof(why)) == -1)
            goto fail;
    }
    json_decref(root);
    return 0;

fail:
    json_decref(root);
    pod_list_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}
