/* lease_json.c -- the coordination.k8s.io/v1 Lease as JSON: an answer read, a PUT or
 * POST body written */
#include "lease_json.h"

#include <stdio.h>
#include <string.h>

#include "rfc3339.h"

#define HOLDER_MAX 253 /* a pod name: a DNS-1123 subdomain */

static int
printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

/* A MicroTime member: its text when it reads as RFC 3339, else "" (a time
 * that cannot be read is never written back: the API server would refuse the
 * PUT, and the replica could never renew). -1 when it is not a string. */
static int
time_member(json_t *spec, const char *key, char *out, size_t outlen)
{
    json_t *v = json_object_get(spec, key);
    int64_t ms;

    out[0] = '\0';
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    if (json_string_length(v) < outlen &&
        rfc3339_parse_ms(json_string_value(v), 0, &ms) == 0)
        snprintf(out, outlen, "%s", json_string_value(v));
    return 0;
}

/* An integer member, clamped to 0..max; absent or null is 0. -1 when it is
 * not an integer. */
static int
int_member(json_t *spec, const char *key, json_int_t max, int64_t *out)
{
    json_t *v = json_object_get(spec, key);
    json_int_t n;

    *out = 0;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_integer(v))
        return -1;
    n = json_integer_value(v);
    *out = n < 0 ? 0 : n > max ? max : (int64_t)n;
    return 0;
}

static int
parse_spec(json_t *spec, struct lease_record *r, char *err, size_t errlen)
{
    json_t *holder;

    memset(r, 0, sizeof(*r));
    if (spec == NULL || json_is_null(spec))
        return 0;
    if (!json_is_object(spec)) {
        snprintf(err, errlen, "spec is not an object");
        return -1;
    }
    holder = json_object_get(spec, "holderIdentity");
    if (holder != NULL && !json_is_null(holder)) {
        if (!json_is_string(holder) || json_string_length(holder) > HOLDER_MAX ||
            strlen(json_string_value(holder)) != json_string_length(holder)) {
            snprintf(err, errlen, "spec.holderIdentity is not a name");
            return -1;
        }
        snprintf(r->lr_holder, sizeof(r->lr_holder), "%s", json_string_value(holder));
    }
    if (int_member(spec, "leaseDurationSeconds", LEASE_DURATION_MAX_S,
                   &r->lr_duration_s) == -1 ||
        int_member(spec, "leaseTransitions", INT32_MAX, &r->lr_transitions) == -1) {
        snprintf(err, errlen,
                 "spec.leaseDurationSeconds or leaseTransitions is not an integer");
        return -1;
    }
    if (time_member(spec, "acquireTime", r->lr_acquire, sizeof(r->lr_acquire)) == -1 ||
        time_member(spec, "renewTime", r->lr_renew, sizeof(r->lr_renew)) == -1) {
        snprintf(err, errlen, "spec.acquireTime or renewTime is not a string");
        return -1;
    }
    return 0;
}

int
lease_obj_parse(const char *body, size_t len, struct lease_obj *out, char *err,
                size_t errlen)
{
    json_t *root, *kind, *meta, *rv;
    json_error_t jerr;

    memset(out, 0, sizeof(*out));
    if (len > LEASE_BODY_MAX) {
        snprintf(err, errlen, "the answer is over %u bytes", LEASE_BODY_MAX);
        return -1;
    }
    if ((root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
        snprintf(err, errlen, "not JSON: %s", jerr.text);
        return -1;
    }
    if (!json_is_object(root)) {
        snprintf(err, errlen, "not a JSON object");
        goto fail;
    }
    kind = json_object_get(root, "kind");
    if (kind != NULL &&
        (!json_is_string(kind) || strcmp(json_string_value(kind), "Lease"))) {
        snprintf(err, errlen, "not a Lease");
        goto fail;
    }
    meta = json_object_get(root, "metadata");
    rv = json_object_get(meta, "resourceVersion");
    if (!json_is_object(meta) || !json_is_string(rv) || json_string_length(rv) == 0 ||
        json_string_length(rv) >= LEASE_RV_MAX || !printable(json_string_value(rv))) {
        snprintf(err, errlen, "no metadata.resourceVersion");
        goto fail;
    }
    snprintf(out->lo_rv, sizeof(out->lo_rv), "%s", json_string_value(rv));
    if (parse_spec(json_object_get(root, "spec"), &out->lo_record, err, errlen) == -1)
        goto fail;
    out->lo_json = root;
    return 0;
fail:
    json_decref(root);
    memset(out, 0, sizeof(*out));
    return -1;
}

void
lease_obj_free(struct lease_obj *o)
{
    json_decref(o->lo_json);
    o->lo_json = NULL;
}

const char *
lease_obj_annotation(const struct lease_obj *o, const char *key)
{
    json_t *ann = json_object_get(json_object_get(o->lo_json, "metadata"), "annotations");
    json_t *v = json_object_get(ann, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *
spec_json(const struct lease_record *r)
{
    json_t *s = json_object();

    if (s == NULL ||
        json_object_set_new(s, "holderIdentity", json_string(r->lr_holder)) == -1 ||
        json_object_set_new(s, "leaseDurationSeconds", json_integer(r->lr_duration_s)) ==
            -1 ||
        (r->lr_acquire[0] != '\0' &&
         json_object_set_new(s, "acquireTime", json_string(r->lr_acquire)) == -1) ||
        (r->lr_renew[0] != '\0' &&
         json_object_set_new(s, "renewTime", json_string(r->lr_renew)) == -1) ||
        json_object_set_new(s, "leaseTransitions", json_integer(r->lr_transitions)) ==
            -1) {
        json_decref(s);
        return NULL;
    }
    return s;
}

/* metadata[key] as an object, made when absent or not one. NULL when out of memory. */
static json_t *
object_at(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);

    if (json_is_object(o))
        return o;
    if ((o = json_object()) == NULL || json_object_set_new(parent, key, o) == -1)
        return NULL;
    return o;
}

char *
lease_body(const struct lease_obj *base, const char *ns, const char *name,
           const struct lease_record *rec, const char *rv, const char *brakes,
           const char *last_act)
{
    json_t *root, *meta, *ann;
    char *text = NULL;

    root = base != NULL && base->lo_json != NULL ? json_deep_copy(base->lo_json)
                                                 : json_object();
    if (root == NULL)
        return NULL;
    if (json_object_set_new(root, "apiVersion", json_string("coordination.k8s.io/v1")) ==
            -1 ||
        json_object_set_new(root, "kind", json_string("Lease")) == -1 ||
        (meta = object_at(root, "metadata")) == NULL ||
        json_object_set_new(meta, "name", json_string(name)) == -1 ||
        json_object_set_new(meta, "namespace", json_string(ns)) == -1)
        goto out;
    if (base != NULL && base->lo_json != NULL) {
        if (json_object_set_new(meta, "resourceVersion", json_string(rv)) == -1)
            goto out;
    } else {
        json_object_del(meta, "resourceVersion");
    }
    if (brakes != NULL || last_act != NULL) {
        if ((ann = object_at(meta, "annotations")) == NULL ||
            (brakes != NULL &&
             json_object_set_new(ann, LEASE_ANN_BRAKES, json_string(brakes)) == -1) ||
            (last_act != NULL &&
             json_object_set_new(ann, LEASE_ANN_LAST_ACT, json_string(last_act)) == -1))
            goto out;
    }
    if (json_object_set_new(root, "spec", spec_json(rec)) == -1)
        goto out;
    text = json_dumps(root, JSON_COMPACT);
out:
    json_decref(root);
    return text;
}
