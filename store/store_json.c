/* store_json.c -- victim and candidate JSON, and strings that are always valid JSON */
#include "store_json.h"

#include <stdlib.h>
#include <string.h>

#include "json_build.h"
#include "utf8.h"

json_t *
store_json_str(const char *s)
{
    json_t *j;
    char *clean;

    if (s == NULL)
        return json_null();
    if ((j = json_string(s)) != NULL)
        return j;
    /* Not UTF-8 (or out of memory, and then the retry fails too). */
    if ((clean = strdup(s)) == NULL)
        return NULL;
    j = json_string(utf8_scrub(clean));
    free(clean);
    return j;
}

json_t *
store_release_json(const struct store_release *r)
{
    /* Milliseconds are all a wait of a few seconds can tell apart. */
    double secs = (double)(int64_t)(r ? r->sr_seconds * 1000.0 + 0.5 : 0) / 1000.0;
    json_t *o;

    if (r == NULL)
        return json_null();
    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "url", store_json_str(r->sr_url ? r->sr_url : "")) ||
        jb_set(o, "status", jb_int_or_null(r->sr_status_known, r->sr_status)) ||
        jb_set(o, "freed_mib", jb_int_or_null(r->sr_freed_known, r->sr_freed_mib)) ||
        jb_set(o, "seconds", r->sr_seconds_known ? json_real(secs) : json_null())) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A real rounded to two decimals (a slope says no more), or null. */
static json_t *
real_or_null(int known, double v)
{
    return known ? json_real((double)(int64_t)(v * 100.0 + (v < 0 ? -0.5 : 0.5)) / 100.0)
                 : json_null();
}

json_t *
store_prediction_json(const struct store_prediction *p)
{
    json_t *o;

    if (p == NULL)
        return json_null();
    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "slope_mib_s", real_or_null(p->sp_slope_known, p->sp_slope_mib_s)) ||
        jb_set(o, "eta_s",
               p->sp_eta_known ? json_integer((json_int_t)p->sp_eta_s) : json_null()) ||
        jb_set(o, "horizon_s", json_integer((json_int_t)p->sp_horizon_s))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
store_victim_json(const struct store_victim *v)
{
    return store_victim_json_src(v, NULL);
}

json_t *
store_victim_json_src(const struct store_victim *v, const char *src)
{
    json_t *o;

    if (v == NULL)
        return json_null();
    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "namespace", store_json_str(v->sv_namespace ? v->sv_namespace : "")) ||
        jb_set(o, "pod", store_json_str(v->sv_pod ? v->sv_pod : "")) ||
        jb_set(o, "used_mib", json_integer((json_int_t)v->sv_used_mib)) ||
        jb_set(o, "budget_mib", jb_int_or_null(v->sv_has_budget, v->sv_budget_mib)) ||
        jb_set(o, "overshoot_mib",
               jb_int_or_null(v->sv_has_budget, v->sv_overshoot_mib)) ||
        (src != NULL && jb_set(o, "budget_source", store_json_str(src)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *
candidate_json(const struct store_candidate *c, const char *src)
{
    json_t *o;

    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "namespace", store_json_str(c->sc_namespace ? c->sc_namespace : "")) ||
        jb_set(o, "pod", store_json_str(c->sc_pod ? c->sc_pod : "")) ||
        jb_set(o, "used_mib", json_integer((json_int_t)c->sc_used_mib)) ||
        jb_set(o, "budget_mib", jb_int_or_null(c->sc_has_budget, c->sc_budget_mib)) ||
        (src != NULL && jb_set(o, "budget_source", store_json_str(src))) ||
        jb_set(o, "eligible", json_boolean(c->sc_eligible)) ||
        jb_set(o, "why_not",
               c->sc_eligible ? json_null() : store_json_str(c->sc_why_not))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
store_candidates_json(const struct store_candidate *c, size_t n)
{
    return store_candidates_json_src(c, NULL, n);
}

json_t *
store_candidates_json_src(const struct store_candidate *c, const char *const *src,
                          size_t n)
{
    json_t *a;
    size_t i;

    if ((a = json_array()) == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (json_array_append_new(a, candidate_json(&c[i], src ? src[i] : NULL)) == -1) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
