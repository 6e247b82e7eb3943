/* predict.c -- the predictive trigger's judgement: growth, projection, the victim. No
 * I/O. */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

int
predict_parse_rate(const char *s, double *mib_s)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1.0}, {"MiB/s", 1.0}, {"GiB/s", 1024.0}, {"KiB/s", 1.0 / 1024.0}};
    char *end;
    double v;
    size_t i;

    if (s == NULL || s[0] == '\0' || !((s[0] >= '0' && s[0] <= '9') || s[0] == '.'))
        return -1; /* no sign, no space, no "inf"/"nan" */
    v = strtod(s, &end);
    /* Plain decimals only: strtod would also take "0x10" and "1e3". */
    if (end == s || end != s + strspn(s, "0123456789.") || !isfinite(v) || v < 0)
        return -1;
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0) {
            *mib_s = v * units[i].mult;
            return isfinite(*mib_s) ? 0 : -1;
        }
    return -1;
}

/* Least-squares slope of the samples in [from, to) of s, in MiB/s; NaN
 * with fewer than two or no spread in time. */
static double
slope(const struct predict_sample *s, size_t n, double from, double to)
{
    double st = 0, sv = 0, stt = 0, stv = 0, k = 0, t0 = NAN, den;
    size_t i;

    for (i = 0; i < n; i++) {
        if (!(s[i].ps_t >= from && s[i].ps_t < to))
            continue;
        if (isnan(t0))
            t0 = s[i].ps_t; /* centred: unix seconds squared lose precision */
        double t = s[i].ps_t - t0, v = s[i].ps_bytes / MIB;
        st += t;
        sv += v;
        stt += t * t;
        stv += t * v;
        k++;
    }
    if (k < 2)
        return NAN;
    den = k * stt - st * st;
    if (!(den > 0))
        return NAN;
    return (k * stv - st * sv) / den;
}

void
predict_trend(const struct predict_sample *s, size_t n, double from_t, double split_t,
              struct predict_trend *out)
{
    size_t i;

    out->pt_all = out->pt_first = out->pt_second = NAN;
    for (i = 0; i < n; i++)
        if (!isfinite(s[i].ps_bytes) || s[i].ps_bytes < 0 || !isfinite(s[i].ps_t))
            return; /* a reading that cannot be true says nothing about growth */
    out->pt_all = slope(s, n, -INFINITY, INFINITY);
    out->pt_first = slope(s, n, from_t, split_t);
    out->pt_second = slope(s, n, split_t, INFINITY);
}

double
predict_sustained(double first, double second)
{
    if (!isfinite(first) || !isfinite(second))
        return NAN;
    return first < second ? first : second;
}

static int
known(double v)
{
    return isfinite(v);
}

void
predict_outcome_free(struct predict_outcome *out)
{
    free(out->po_order);
    out->po_order = NULL;
}

int
predict_judge(const struct predict_params *pp, double free_mib,
              const struct policy_candidate *cands, const double *slopes, size_t n,
              const char *where, struct predict_outcome *out)
{
    double flr = (double)pp->pp_floor_mib;
    size_t i, j, k, eligible = 0, fast = 0, off = 0;
    int best = -1;

    memset(out, 0, sizeof(*out));
    if (n > 0 && (out->po_order = calloc(n, sizeof(*out->po_order))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        if (known(slopes[i]) && slopes[i] > 0)
            out->po_growth_mib_s += slopes[i];
        if (!cands[i].pc_eligible)
            continue;
        eligible++;
        if (known(slopes[i]) && (best < 0 || slopes[i] > slopes[best]))
            best = (int)i;
    }
    out->po_projected_mib = free_mib - out->po_growth_mib_s * pp->pp_horizon_s;
    if (out->po_growth_mib_s > 0) {
        out->po_eta_known = 1;
        out->po_eta_s = free_mib > flr ? (free_mib - flr) / out->po_growth_mib_s : 0;
    }
    /* The victims: eligible and growing fast enough, fastest first; the
     * policy's order breaks ties (insertion keeps it: stable). */
    for (i = 0; i < n; i++) {
        if (!cands[i].pc_eligible || !known(slopes[i]) || slopes[i] < pp->pp_min_growth)
            continue;
        for (j = fast; j > 0 && slopes[out->po_order[j - 1]] < slopes[i]; j--)
            out->po_order[j] = out->po_order[j - 1];
        out->po_order[j] = i;
        fast++;
    }
    for (k = fast, i = 0; i < n; i++) {
        if (cands[i].pc_eligible && known(slopes[i]) && slopes[i] >= pp->pp_min_growth)
            continue;
        out->po_order[k++] = i;
    }
    if (fast > 0)
        best = (int)out->po_order[0];
    if (best >= 0) {
        out->po_slope_known = 1;
        out->po_slope_mib_s = slopes[best];
        out->po_slope_ns = cands[best].pc_namespace;
        out->po_slope_pod = cands[best].pc_name;
    }

    text_append(out->po_reason, sizeof(out->po_reason), &off,
                "free %.0f MiB on %s >= floor %.0f MiB; ", floor(free_mib), where, flr);
    for (k = 0, i = 0; i < n; i++)
        k += known(slopes[i]) != 0;
    if (n > 0 && k == 0) {
        text_append(out->po_reason, sizeof(out->po_reason), &off,
                    "the growth of its pods is unknown (too little history in "
                    "Prometheus), so nothing is predicted");
        return 0;
    }
    if (!(out->po_projected_mib < flr)) {
        text_append(
            out->po_reason, sizeof(out->po_reason), &off,
            "its pods grow %.1f MiB/s in all, so %.0f MiB would be free in %.0f s, not "
            "below the floor: not predicted to starve",
            out->po_growth_mib_s, floor(out->po_projected_mib), pp->pp_horizon_s);
        return 0;
    }
    text_append(out->po_reason, sizeof(out->po_reason), &off,
                "its pods grow %.1f MiB/s in all: predicted to starve %s in %.0f s",
                out->po_growth_mib_s, where, ceil(out->po_eta_s));
    if (fast == 0) {
        if (eligible == 0)
            text_append(out->po_reason, sizeof(out->po_reason), &off,
                        ", but no eligible pod is over its budget");
        else if (best < 0)
            text_append(out->po_reason, sizeof(out->po_reason), &off,
                        ", but the growth of its %zu eligible over-budget pod%s is "
                        "unknown (too little history)",
                        eligible, eligible == 1 ? "" : "s");
        else
            text_append(
                out->po_reason, sizeof(out->po_reason), &off,
                ", but no over-budget pod is growing >= %g MiB/s (the fastest of %zu, "
                "%s/%s, %.1f MiB/s; a steady tenant is not a runaway)",
                pp->pp_min_growth, eligible, cands[best].pc_namespace,
                cands[best].pc_name, slopes[best]);
        return 0;
    }
    out->po_act = 1;
    out->po_ranked = fast;
    i = out->po_order[0];
    text_append(
        out->po_reason, sizeof(out->po_reason), &off,
        "; %s/%s uses %lld MiB against a budget of %lld MiB (%+lld MiB) and grows "
        "%.1f MiB/s (PREDICT_MIN_GROWTH %g MiB/s), ",
        cands[i].pc_namespace, cands[i].pc_name, (long long)cands[i].pc_used_mib,
        (long long)cands[i].pc_budget_mib, (long long)cands[i].pc_overshoot_mib,
        slopes[i], pp->pp_min_growth);
    if (fast == 1)
        text_append(out->po_reason, sizeof(out->po_reason), &off,
                    "the only over-budget pod growing that fast");
    else
        text_append(out->po_reason, sizeof(out->po_reason), &off,
                    "the fastest of %zu over-budget pods growing that fast", fast);
    return 0;
}
