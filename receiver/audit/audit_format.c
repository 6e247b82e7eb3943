/* audit_format.c -- decisions, alerts and stats as SPEC JSON and as 80-column text */
#include "audit_format.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "json_build.h"
#include "store_json.h"
#include "termtext.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column wide */

/* Splits unix ms into seconds and a 0..999 remainder, also before 1970. */
static void
split_ms(int64_t ms, time_t *sec, int *frac)
{
    int64_t s = ms / 1000, r = ms % 1000;

    if (r < 0) {
        r += 1000;
        s -= 1;
    }
    *sec = (time_t)s;
    *frac = (int)r;
}

void
audit_format_time(int64_t ms, char *buf, size_t len)
{
    struct tm tm;
    time_t sec;
    int frac;
    size_t n;

    split_ms(ms, &sec, &frac);
    if (gmtime_r(&sec, &tm) == NULL ||
        (n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
        snprintf(buf, len, "invalid time %" PRId64, ms); /* can't happen for real times */
        return;
    }
    snprintf(buf + n, len - n, ".%03dZ", frac);
}

/* "06-02 10:00" (UTC): the table's time, short enough for 80 columns. */
static void
format_short_time(int64_t ms, char *buf, size_t len)
{
    struct tm tm;
    time_t sec;
    int frac;

    split_ms(ms, &sec, &frac);
    if (gmtime_r(&sec, &tm) == NULL || strftime(buf, len, "%m-%d %H:%M", &tm) == 0)
        snprintf(buf, len, "?");
}

static json_t *
str_or(const char *s, const char *dflt)
{
    return store_json_str(s ? s : dflt);
}

static json_t *
verify_json(const struct store_decision *d)
{
    json_t *o;
    /* Milliseconds are all a settle wait can tell apart. */
    double secs = (double)(int64_t)(d->sd_verify_seconds * 1000.0 + 0.5) / 1000.0;

    if (!d->sd_verified)
        return json_null();
    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "free_mib", json_integer((json_int_t)d->sd_verify_free_mib)) ||
        jb_set(o, "seconds", json_real(secs))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
audit_decision_json(const struct store_decision *d, int64_t id)
{
    char t[AUDIT_TIME_LEN];
    json_t *o;

    if ((o = json_object()) == NULL)
        return NULL;
    audit_format_time(d->sd_time_ms, t, sizeof(t));
    if (jb_set(o, "id", id < 0 ? json_null() : json_integer((json_int_t)id)) ||
        jb_set(o, "time", json_string(t)) || jb_set(o, "node", str_or(d->sd_node, "")) ||
        jb_set(o, "trigger", str_or(d->sd_trigger, "")) ||
        jb_set(o, "fingerprint", str_or(d->sd_fingerprint, "")) ||
        jb_set(o, "result", store_json_str(d->sd_result)) ||
        jb_set(o, "reason", str_or(d->sd_reason, "")) ||
        jb_set(o, "free_mib",
               d->sd_free_known ? json_integer((json_int_t)d->sd_free_mib)
                                : json_null()) ||
        jb_set(o, "floor_mib", json_integer((json_int_t)d->sd_floor_mib)) ||
        jb_set(o, "dry_run", json_boolean(d->sd_dry_run)) ||
        jb_set(o, "action", str_or(d->sd_action, "none")) ||
        jb_set(o, "victim",
               store_victim_json_src(d->sd_victim, d->sd_victim_budget_source)) ||
        jb_set(o, "candidates",
               store_candidates_json_src(d->sd_candidates, d->sd_budget_sources,
                                         d->sd_candidate_count)) ||
        jb_set(o, "error", store_json_str(d->sd_error)) ||
        jb_set(o, "verify", verify_json(d)) ||
        jb_set(o, "gpu", store_json_str(d->sd_gpu)) ||
        jb_set(o, "release", store_release_json(d->sd_release)) ||
        jb_set(o, "free_source", store_json_str(d->sd_free_source)) ||
        jb_set(o, "prediction", store_prediction_json(d->sd_prediction)) ||
        /* HA only (README): the replica that took it; absent without leader
         * election, so a single replica's listing is as it always was. */
        (d->sd_replica != NULL && jb_set(o, "replica", json_string(d->sd_replica)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Labels as stored: an object, or (can't happen, the daemon stores
 * json_dumps output) the raw text as a string, so nothing is hidden. */
static json_t *
object_or_text(const char *text)
{
    json_t *j = json_loads(text ? text : "{}", 0, NULL);

    if (json_is_object(j))
        return j;
    json_decref(j);
    return store_json_str(text);
}

json_t *
audit_alert_json(const struct store_alert *a, int64_t id)
{
    char t[AUDIT_TIME_LEN];
    json_t *o;

    if ((o = json_object()) == NULL)
        return NULL;
    audit_format_time(a->sa_received_ms, t, sizeof(t));
    if (jb_set(o, "id", json_integer((json_int_t)id)) ||
        jb_set(o, "received_at", json_string(t)) ||
        jb_set(o, "alertname", str_or(a->sa_alertname, "")) ||
        jb_set(o, "status", str_or(a->sa_status, "")) ||
        jb_set(o, "fingerprint", str_or(a->sa_fingerprint, "")) ||
        jb_set(o, "starts_at", store_json_str(a->sa_starts_at)) ||
        jb_set(o, "ends_at", store_json_str(a->sa_ends_at)) ||
        jb_set(o, "labels", object_or_text(a->sa_labels_json)) ||
        jb_set(o, "annotations", object_or_text(a->sa_annotations_json))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
audit_stat_json(const struct store_stat *st)
{
    json_t *o;

    if ((o = json_object()) == NULL)
        return NULL;
    if (jb_set(o, "by", str_or(st->ss_by, "")) ||
        jb_set(o, "key", str_or(st->ss_key, "")) ||
        (st->ss_result != NULL && jb_set(o, "result", store_json_str(st->ss_result))) ||
        jb_set(o, "count", json_integer((json_int_t)st->ss_count))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* One table cell of exactly width columns, its text cleaned for the
 * terminal (termtext.h: stored text, an API error body or a label, cannot
 * move the cursor, fake a line or reorder the row). The last one is unpadded and
 * never cut: it runs to its full width (a 253-character pod name stays
 * whole, and copy-pastes into kubectl), the columns before it stay aligned. */
static void
cell(FILE *out, const char *s, size_t width, int right, int last)
{
    size_t w = termtext_width(s), shown;

    if (w > width && !last) {
        /* An escape that would not fit whole is left out: the padding
         * after the ellipsis keeps the columns. */
        shown = termtext_put(out, s, width - 1);
        fputs(ELLIPSIS, out);
        fprintf(out, "%*s", (int)(width - 1 - shown), "");
    } else {
        if (right)
            fprintf(out, "%*s", (int)(width - w), "");
        termtext_put(out, s, SIZE_MAX);
        if (!right && !last)
            fprintf(out, "%*s", (int)(width - w), "");
    }
    fputs(last ? "\n" : " ", out);
}

/* Decision table: 7+11+12+20+11+14 plus 5 spaces = 80 columns. FREE is
 * marked "*" when it was computed as GPU_TOTAL_MIB - used (no device series:
 * the figure misses memory no pod accounts for); the device's and an
 * explicit FREE_QUERY's are unmarked. One column wider for the mark. */
void
audit_decision_table_header(FILE *out)
{
    fprintf(out, "%7s ", "ID");
    cell(out, "TIME (UTC)", 11, 0, 0);
    cell(out, "NODE", 12, 0, 0);
    cell(out, "RESULT", 20, 0, 0);
    cell(out, "FREE/FLOOR", 11, 1, 0);
    cell(out, "VICTIM", 14, 0, 1);
}

void
audit_decision_table_row(FILE *out, const struct store_decision *d, int64_t id)
{
    /* victim: Kubernetes' longest names, 63 + "/" + 253, fit with room. */
    char t[AUDIT_TIME_LEN], ff[48], victim[512], where[512];

    format_short_time(d->sd_time_ms, t, sizeof(t));
    /* GPU scope: "node/GPU" in the node's column. */
    snprintf(where, sizeof(where), "%s%s%s", d->sd_node && *d->sd_node ? d->sd_node : "-",
             d->sd_gpu ? "/" : "", d->sd_gpu ? d->sd_gpu : "");
    if (d->sd_free_known)
        snprintf(ff, sizeof(ff), "%" PRId64 "%s/%" PRId64, d->sd_free_mib,
                 d->sd_free_source != NULL && strcmp(d->sd_free_source, "computed") == 0
                     ? "*"
                     : "",
                 d->sd_floor_mib);
    else
        snprintf(ff, sizeof(ff), "?/%" PRId64, d->sd_floor_mib);
    if (d->sd_victim != NULL)
        snprintf(victim, sizeof(victim), "%s/%s",
                 d->sd_victim->sv_namespace ? d->sd_victim->sv_namespace : "",
                 d->sd_victim->sv_pod ? d->sd_victim->sv_pod : "");
    else
        snprintf(victim, sizeof(victim), "-");
    fprintf(out, "%7" PRId64 " ", id); /* never cut: it is what `show` takes */
    cell(out, t, 11, 0, 0);
    cell(out, where, 12, 0, 0);
    cell(out, d->sd_result ? d->sd_result : "?", 20, 0, 0);
    cell(out, ff, 11, 1, 0);
    cell(out, victim, 14, 0, 1);
}

/* Alert table: 7+11+8+24+16 plus 4 spaces = 70 columns. */
void
audit_alert_table_header(FILE *out)
{
    fprintf(out, "%7s ", "ID");
    cell(out, "RECEIVED", 11, 0, 0);
    cell(out, "STATUS", 8, 0, 0);
    cell(out, "ALERTNAME", 24, 0, 0);
    cell(out, "FINGERPRINT", 16, 0, 1);
}

void
audit_alert_table_row(FILE *out, const struct store_alert *a, int64_t id)
{
    char t[AUDIT_TIME_LEN];

    format_short_time(a->sa_received_ms, t, sizeof(t));
    fprintf(out, "%7" PRId64 " ", id);
    cell(out, t, 11, 0, 0);
    cell(out, a->sa_status ? a->sa_status : "", 8, 0, 0);
    cell(out, a->sa_alertname ? a->sa_alertname : "", 24, 0, 0);
    cell(out, a->sa_fingerprint && *a->sa_fingerprint ? a->sa_fingerprint : "-", 16, 0,
         1);
}

/* Stats table: 9+20+10 plus 3 spaces = 42 columns, then the key: last, so a
 * namespace of Kubernetes' full 63 characters is never cut. */
void
audit_stat_table_header(FILE *out)
{
    cell(out, "BY", 9, 0, 0);
    cell(out, "RESULT", 20, 0, 0);
    cell(out, "COUNT", 10, 1, 0);
    cell(out, "KEY", 3, 0, 1);
}

void
audit_stat_table_row(FILE *out, const struct store_stat *st)
{
    char n[32];

    snprintf(n, sizeof(n), "%" PRId64, st->ss_count);
    cell(out, st->ss_by ? st->ss_by : "", 9, 0, 0);
    cell(out, st->ss_result && *st->ss_result ? st->ss_result : "-", 20, 0, 0);
    cell(out, n, 10, 1, 0);
    cell(out, st->ss_key ? st->ss_key : "", 3, 0, 1);
}

/* "  label       value\n" with the value cleaned. */
static void
field(FILE *out, const char *label, const char *value)
{
    fprintf(out, "  %-12s", label);
    termtext_put(out, value ? value : "-", SIZE_MAX);
    fputc('\n', out);
}

/* A budget source worth naming in a table: any but GPUMEM_RESOURCE's (the
 * default), and only a known word (the row may come from anywhere). */
static int
source_note(const char *s)
{
    return s != NULL &&
           (strcmp(s, "hami") == 0 || strcmp(s, "kai") == 0 || strcmp(s, "dra") == 0);
}

static void
print_victim(FILE *out, const struct store_victim *v, const char *src)
{
    fprintf(out, "  %-12s", "victim");
    if (v == NULL) {
        fputs("-\n", out);
        return;
    }
    termtext_put(out, v->sv_namespace ? v->sv_namespace : "", SIZE_MAX);
    fputc('/', out);
    termtext_put(out, v->sv_pod ? v->sv_pod : "", SIZE_MAX);
    fprintf(out, ": used %" PRId64 " MiB", v->sv_used_mib);
    if (v->sv_has_budget)
        fprintf(out, ", budget %" PRId64 " MiB%s%s%s, overshoot %+" PRId64 " MiB\n",
                v->sv_budget_mib, source_note(src) ? " (" : "",
                source_note(src) ? src : "", source_note(src) ? ")" : "",
                v->sv_overshoot_mib);
    else
        fputs(", no budget\n", out);
}

/* A predicted trigger's judgement: the victim's growth and the crossing. */
static void
print_prediction(FILE *out, const struct store_prediction *p)
{
    fprintf(out, "  %-12s", "prediction");
    if (p == NULL) {
        fputs("-\n", out);
        return;
    }
    if (p->sp_slope_known)
        fprintf(out, "growing %.2f MiB/s", p->sp_slope_mib_s);
    else
        fputs("growth unknown", out);
    if (p->sp_eta_known)
        fprintf(out, ", floor crossed in %.0f s", p->sp_eta_s);
    else
        fputs(", the trend never crosses the floor", out);
    fprintf(out, " (horizon %.0f s)\n", p->sp_horizon_s);
}

/* The cooperative release: its URL, then what came of it. */
static void
print_release(FILE *out, const struct store_release *r)
{
    fprintf(out, "  %-12s", "release");
    if (r == NULL) {
        fputs("-\n", out);
        return;
    }
    termtext_put(out, r->sr_url ? r->sr_url : "", SIZE_MAX);
    if (!r->sr_status_known && !r->sr_seconds_known) {
        fputs(": not asked (dry run)\n", out);
        return;
    }
    if (r->sr_status_known)
        fprintf(out, ": HTTP %ld", r->sr_status);
    else
        fputs(": no answer", out);
    if (r->sr_freed_known)
        fprintf(out, ", freed %" PRId64 " MiB", r->sr_freed_mib);
    if (r->sr_seconds_known)
        fprintf(out, " in %.1f s", r->sr_seconds);
    fputc('\n', out);
}

/* One candidate per line, the name last so that it is never cut. */
static void
print_candidate(FILE *out, const struct store_candidate *c, const char *src)
{
    char budget[32], eligible[64];

    if (c->sc_has_budget)
        snprintf(budget, sizeof(budget), "%" PRId64, c->sc_budget_mib);
    else
        snprintf(budget, sizeof(budget), "-");
    if (c->sc_eligible)
        snprintf(eligible, sizeof(eligible), "yes");
    else
        snprintf(eligible, sizeof(eligible), "no: %s",
                 c->sc_why_not ? c->sc_why_not : "?");
    fprintf(out, "    %7" PRId64 " %7s  ", c->sc_used_mib, budget);
    cell(out, eligible, 24, 0, 0);
    termtext_put(out, c->sc_namespace ? c->sc_namespace : "", SIZE_MAX);
    fputc('/', out);
    termtext_put(out, c->sc_pod ? c->sc_pod : "", SIZE_MAX);
    if (source_note(src))
        fprintf(out, " [%s]", src);
    fputc('\n', out);
}

static void
print_candidates(FILE *out, const struct store_decision *d)
{
    size_t i;

    fprintf(out, "  %-12s%zu\n", "candidates", d->sd_candidate_count);
    if (d->sd_candidate_count == 0)
        return;
    fprintf(out, "    %7s %7s  %-24s %s\n", "USED", "BUDGET", "ELIGIBLE",
            "NAMESPACE/POD");
    for (i = 0; i < d->sd_candidate_count; i++)
        print_candidate(out, &d->sd_candidates[i],
                        d->sd_budget_sources ? d->sd_budget_sources[i] : NULL);
}

void
audit_decision_print(FILE *out, const struct store_decision *d, int64_t id)
{
    char t[AUDIT_TIME_LEN], line[128];

    if (id < 0)
        fputs("decision (not recorded)\n", out);
    else
        fprintf(out, "decision %" PRId64 "\n", id);
    audit_format_time(d->sd_time_ms, t, sizeof(t));
    field(out, "time", t);
    if (d->sd_replica != NULL)
        field(out, "replica", d->sd_replica);
    field(out, "node", d->sd_node && *d->sd_node ? d->sd_node : "-");
    if (d->sd_gpu != NULL)
        field(out, "gpu", d->sd_gpu);
    field(out, "trigger", d->sd_trigger && *d->sd_trigger ? d->sd_trigger : "-");
    field(out, "fingerprint",
          d->sd_fingerprint && *d->sd_fingerprint ? d->sd_fingerprint : "-");
    field(out, "result", d->sd_result);
    field(out, "reason", d->sd_reason && *d->sd_reason ? d->sd_reason : "-");
    if (d->sd_free_known)
        snprintf(line, sizeof(line), "%" PRId64 " MiB free, floor %" PRId64 " MiB",
                 d->sd_free_mib, d->sd_floor_mib);
    else
        snprintf(line, sizeof(line), "unknown free, floor %" PRId64 " MiB",
                 d->sd_floor_mib);
    field(out, "vram", line);
    /* Where free came from: the device, GPU_TOTAL_MIB - used, or FREE_QUERY. */
    field(out, "free source",
          d->sd_free_source == NULL                    ? "-"
          : strcmp(d->sd_free_source, "device") == 0   ? "device (gpu_memory_free_bytes)"
          : strcmp(d->sd_free_source, "computed") == 0 ? "computed (GPU_TOTAL_MIB - used)"
                                                       : "query (FREE_QUERY)");
    field(out, "dry run", d->sd_dry_run ? "yes" : "no");
    field(out, "action", d->sd_action ? d->sd_action : "none");
    print_victim(out, d->sd_victim, d->sd_victim_budget_source);
    field(out, "error", d->sd_error);
    if (d->sd_verified)
        snprintf(line, sizeof(line), "%" PRId64 " MiB free after %.3f s",
                 d->sd_verify_free_mib, d->sd_verify_seconds);
    else
        snprintf(line, sizeof(line), "-");
    field(out, "verify", line);
    print_release(out, d->sd_release);
    print_prediction(out, d->sd_prediction);
    print_candidates(out, d);
}
