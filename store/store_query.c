/* store_query.c -- reading decisions, alerts and summaries back for the audit CLI */
#include "store_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECISION_COLUMNS                                                                 \
    "id, time_ms, node, trigger_name, fingerprint, result, reason, free_mib, floor_mib," \
    " dry_run, action, victim, candidates, error, verify_free_mib, verify_seconds,"      \
    " alert_id, gpu, release, free_source, prediction, replica"
enum {
    /* clang-format off */
    DC_ID, DC_TIME, DC_NODE, DC_TRIGGER, DC_FP, DC_RESULT, DC_REASON, DC_FREE, DC_FLOOR,
    DC_DRY, DC_ACTION, DC_VICTIM, DC_CANDS, DC_ERROR, DC_VFREE, DC_VSEC, DC_ALERT,
    DC_GPU, DC_RELEASE, DC_FREE_SOURCE, DC_PREDICTION, DC_REPLICA, DC_COUNT
    /* clang-format on */
};

/* The storage classes a column may hold, as sqlite3_column_type() bits. */
#define T_INT (1u << SQLITE_INTEGER)
#define T_REAL (1u << SQLITE_FLOAT)
#define T_TEXT (1u << SQLITE_TEXT)
#define T_NULL (1u << SQLITE_NULL)

/* What the daemon writes in each decision column (NOT NULL where the schema
 * says so). Anything else was written by another hand. */
static const struct column {
    const char *c_name;
    unsigned c_types;
} decision_cols[DC_COUNT] = {
    [DC_ID] = {"id", T_INT},
    [DC_TIME] = {"time_ms", T_INT},
    [DC_NODE] = {"node", T_TEXT},
    [DC_TRIGGER] = {"trigger_name", T_TEXT},
    [DC_FP] = {"fingerprint", T_TEXT},
    [DC_RESULT] = {"result", T_TEXT},
    [DC_REASON] = {"reason", T_TEXT},
    [DC_FREE] = {"free_mib", T_INT | T_NULL},
    [DC_FLOOR] = {"floor_mib", T_INT},
    [DC_DRY] = {"dry_run", T_INT},
    [DC_ACTION] = {"action", T_TEXT},
    [DC_VICTIM] = {"victim", T_TEXT | T_NULL},
    [DC_CANDS] = {"candidates", T_TEXT},
    [DC_ERROR] = {"error", T_TEXT | T_NULL},
    [DC_VFREE] = {"verify_free_mib", T_INT | T_NULL},
    [DC_VSEC] = {"verify_seconds", T_INT | T_REAL | T_NULL},
    [DC_ALERT] = {"alert_id", T_INT | T_NULL},
    [DC_GPU] = {"gpu", T_TEXT | T_NULL},
    [DC_RELEASE] = {"release", T_TEXT | T_NULL},
    [DC_FREE_SOURCE] = {"free_source", T_TEXT | T_NULL},
    [DC_PREDICTION] = {"prediction", T_TEXT | T_NULL},
    [DC_REPLICA] = {"replica", T_TEXT | T_NULL},
};

static const struct column alert_cols[] = {
    {"id", T_INT},
    {"received_ms", T_INT},
    {"alertname", T_TEXT},
    {"status", T_TEXT},
    {"fingerprint", T_TEXT},
    {"starts_at", T_TEXT | T_NULL},
    {"ends_at", T_TEXT | T_NULL},
    {"labels", T_TEXT},
    {"annotations", T_TEXT},
};

/* 0 when every column of the row holds what cols says, else -1 with a
 * phrase naming the first one that does not in why. */
static int
check_types(sqlite3_stmt *st, const struct column *cols, int n, char *why, size_t len)
{
    static const char *const words[] = {"?",    "an integer", "a real",
                                        "text", "a blob",     "null"};

    for (int i = 0; i < n; i++) {
        int t = sqlite3_column_type(st, i);
        if (!((cols[i].c_types >> t) & 1u)) {
            snprintf(why, len, "%s holds %s", cols[i].c_name,
                     t >= 1 && t <= 5 ? words[t] : words[0]);
            return -1;
        }
    }
    return 0;
}

/* A step of a query, under the READONLY step limit. */
static int
step(struct store *s, sqlite3_stmt *st)
{
    store_arm(s);
    return sqlite3_step(st);
}

/* The error of a query that did not end in SQLITE_DONE. */
static void
query_error(struct store *s, int rc, char *err, size_t errlen)
{
    if (rc == SQLITE_INTERRUPT)
        store_seterr(err, errlen,
                     "query: interrupted after %.0f s without a row (is this the file "
                     "gpu-vram-watchdog wrote?)",
                     s->st_step_limit_s);
    else
        store_dberr(s, err, errlen, "query");
}

/* SQL text assembled from fixed fragments only; values are always bound. */
struct sql {
    char q_text[1024];
    size_t q_len;
    int q_overflow;
};

static void
sql_add(struct sql *q, const char *frag)
{
    size_t n = strlen(frag);

    if (q->q_overflow || n >= sizeof(q->q_text) - q->q_len) {
        q->q_overflow = 1; /* can't happen: the fragments are ours */
        return;
    }
    memcpy(q->q_text + q->q_len, frag, n + 1);
    q->q_len += n;
}

/* The WHERE terms for f (after a "WHERE <something>"). Each filter has an
 * index on (column, time_ms), so a filtered listing reads only its rows. */
static void
sql_add_filter(struct sql *q, const struct store_filter *f, const char *time_col)
{
    if (f->sf_since_ms != 0) {
        sql_add(q, " AND ");
        sql_add(q, time_col);
        sql_add(q, " >= :since");
    }
    if (f->sf_node != NULL)
        sql_add(q, " AND node = :node");
    if (f->sf_namespace != NULL)
        sql_add(q, " AND victim_namespace = :ns");
    if (f->sf_result != NULL)
        sql_add(q, " AND result = :result");
    if (f->sf_gpu != NULL)
        sql_add(q, " AND gpu = :gpu");
}

/* Binds whichever of the named parameters the statement has. */
static void
bind_filter(sqlite3_stmt *st, const struct store_filter *f)
{
    int i;

    if ((i = sqlite3_bind_parameter_index(st, ":since")) > 0)
        sqlite3_bind_int64(st, i, f->sf_since_ms);
    if ((i = sqlite3_bind_parameter_index(st, ":node")) > 0)
        sqlite3_bind_text(st, i, f->sf_node, -1, SQLITE_STATIC);
    if ((i = sqlite3_bind_parameter_index(st, ":ns")) > 0)
        sqlite3_bind_text(st, i, f->sf_namespace, -1, SQLITE_STATIC);
    if ((i = sqlite3_bind_parameter_index(st, ":result")) > 0)
        sqlite3_bind_text(st, i, f->sf_result, -1, SQLITE_STATIC);
    if ((i = sqlite3_bind_parameter_index(st, ":gpu")) > 0)
        sqlite3_bind_text(st, i, f->sf_gpu, -1, SQLITE_STATIC);
    if ((i = sqlite3_bind_parameter_index(st, ":limit")) > 0) /* -1: no limit */
        sqlite3_bind_int64(st, i, f->sf_limit > 0 ? f->sf_limit : -1);
}

static sqlite3_stmt *
prepare(struct store *s, const struct sql *q, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;

    if (q->q_overflow) {
        store_seterr(err, errlen, "query too long"); /* can't happen */
        return NULL;
    }
    if (sqlite3_prepare_v2(s->st_db, q->q_text, -1, &st, NULL) != SQLITE_OK) {
        store_dberr(s, err, errlen, "query");
        return NULL;
    }
    return st;
}

static const char *
col_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);

    return t ? (const char *)t : "";
}

static const char *
col_text_or_null(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NULL : col_text(st, col);
}

/* A decision read back. The strings point into the row and into the parsed
 * JSON, so it lives only as long as both. */
struct decision_row {
    struct store_decision dr_d;
    struct store_victim dr_victim;
    struct store_candidate *dr_cands; /* owned */
    const char **dr_sources;          /* owned: each candidate's budget_source */
    struct store_release dr_release;
    struct store_prediction dr_prediction;
    json_t *dr_prediction_json; /* owned */
    json_t *dr_victim_json;     /* owned */
    json_t *dr_cands_json;      /* owned */
    json_t *dr_release_json;    /* owned */
};

static void
decision_row_free(struct decision_row *r)
{
    free(r->dr_cands);
    free(r->dr_sources);
    json_decref(r->dr_victim_json);
    json_decref(r->dr_cands_json);
    json_decref(r->dr_release_json);
    json_decref(r->dr_prediction_json);
}

static const char *
jstr(json_t *o, const char *key, int *bad)
{
    json_t *v = json_object_get(o, key);

    if (json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        *bad = 1;
        return NULL;
    }
    return json_string_value(v);
}

/* An optional string member: absent or null is NULL. */
static const char *
jstr_opt(json_t *o, const char *key, int *bad)
{
    return json_object_get(o, key) == NULL ? NULL : jstr(o, key, bad);
}

/* Reads an integer member; null or absent clears *known. */
static int64_t
jint(json_t *o, const char *key, int *known, int *bad)
{
    json_t *v = json_object_get(o, key);

    *known = json_is_integer(v);
    if (v != NULL && !json_is_null(v) && !*known)
        *bad = 1;
    return *known ? (int64_t)json_integer_value(v) : 0;
}

static int
parse_victim(struct decision_row *r, const char *text)
{
    struct store_victim *v = &r->dr_victim;
    int bad = 0, known, known2;

    if (text == NULL)
        return 0;
    r->dr_victim_json = json_loads(text, 0, NULL);
    if (!json_is_object(r->dr_victim_json))
        return -1;
    v->sv_namespace = jstr(r->dr_victim_json, "namespace", &bad);
    v->sv_pod = jstr(r->dr_victim_json, "pod", &bad);
    v->sv_used_mib = jint(r->dr_victim_json, "used_mib", &known, &bad);
    v->sv_budget_mib = jint(r->dr_victim_json, "budget_mib", &v->sv_has_budget, &bad);
    v->sv_overshoot_mib = jint(r->dr_victim_json, "overshoot_mib", &known2, &bad);
    r->dr_d.sd_victim_budget_source = jstr_opt(r->dr_victim_json, "budget_source", &bad);
    r->dr_d.sd_victim = v;
    return bad ? -1 : 0;
}

static int
parse_release(struct decision_row *r, const char *text)
{
    struct store_release *rel = &r->dr_release;
    json_t *secs;
    int bad = 0;

    if (text == NULL)
        return 0;
    r->dr_release_json = json_loads(text, 0, NULL);
    if (!json_is_object(r->dr_release_json))
        return -1;
    rel->sr_url = jstr(r->dr_release_json, "url", &bad);
    rel->sr_status = jint(r->dr_release_json, "status", &rel->sr_status_known, &bad);
    rel->sr_freed_mib = jint(r->dr_release_json, "freed_mib", &rel->sr_freed_known, &bad);
    secs = json_object_get(r->dr_release_json, "seconds");
    rel->sr_seconds_known = json_is_number(secs);
    rel->sr_seconds = rel->sr_seconds_known ? json_number_value(secs) : 0;
    r->dr_d.sd_release = rel;
    return bad ? -1 : 0;
}

static int
parse_prediction(struct decision_row *r, const char *text)
{
    struct store_prediction *p = &r->dr_prediction;
    json_t *o, *slope, *eta, *horizon;

    if (text == NULL)
        return 0;
    o = r->dr_prediction_json = json_loads(text, 0, NULL);
    slope = json_object_get(o, "slope_mib_s");
    eta = json_object_get(o, "eta_s");
    horizon = json_object_get(o, "horizon_s");
    if (!json_is_object(o) || !(json_is_null(slope) || json_is_number(slope)) ||
        !(json_is_null(eta) || json_is_number(eta)) || !json_is_number(horizon))
        return -1;
    p->sp_slope_known = json_is_number(slope);
    p->sp_slope_mib_s = p->sp_slope_known ? json_number_value(slope) : 0;
    p->sp_eta_known = json_is_number(eta);
    p->sp_eta_s = p->sp_eta_known ? json_number_value(eta) : 0;
    p->sp_horizon_s = json_number_value(horizon);
    r->dr_d.sd_prediction = p;
    return 0;
}

static int
parse_candidate(json_t *o, struct store_candidate *c)
{
    int bad = !json_is_object(o), known;

    c->sc_namespace = jstr(o, "namespace", &bad);
    c->sc_pod = jstr(o, "pod", &bad);
    c->sc_used_mib = jint(o, "used_mib", &known, &bad);
    c->sc_budget_mib = jint(o, "budget_mib", &c->sc_has_budget, &bad);
    c->sc_eligible = json_is_true(json_object_get(o, "eligible"));
    c->sc_why_not = jstr(o, "why_not", &bad);
    return bad ? -1 : 0;
}

static int
parse_candidates(struct decision_row *r, const char *text)
{
    size_t i, n;

    r->dr_cands_json = json_loads(text, 0, NULL);
    if (!json_is_array(r->dr_cands_json))
        return -1;
    n = json_array_size(r->dr_cands_json);
    if (n == 0)
        return 0;
    if ((r->dr_cands = calloc(n, sizeof(*r->dr_cands))) == NULL ||
        (r->dr_sources = calloc(n, sizeof(*r->dr_sources))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        json_t *o = json_array_get(r->dr_cands_json, i);
        int bad = 0;
        if (parse_candidate(o, &r->dr_cands[i]) == -1)
            return -1;
        if ((r->dr_sources[i] = jstr_opt(o, "budget_source", &bad)) == NULL && bad)
            return -1;
    }
    r->dr_d.sd_budget_sources = r->dr_sources;
    r->dr_d.sd_candidates = r->dr_cands;
    r->dr_d.sd_candidate_count = n;
    return 0;
}

static void
read_scalars(sqlite3_stmt *st, struct store_decision *d)
{
    d->sd_time_ms = sqlite3_column_int64(st, DC_TIME);
    d->sd_node = col_text(st, DC_NODE);
    d->sd_trigger = col_text(st, DC_TRIGGER);
    d->sd_fingerprint = col_text(st, DC_FP);
    d->sd_result = col_text(st, DC_RESULT);
    d->sd_reason = col_text(st, DC_REASON);
    d->sd_free_known = sqlite3_column_type(st, DC_FREE) != SQLITE_NULL;
    d->sd_free_mib = sqlite3_column_int64(st, DC_FREE);
    d->sd_floor_mib = sqlite3_column_int64(st, DC_FLOOR);
    d->sd_dry_run = sqlite3_column_int(st, DC_DRY) != 0;
    d->sd_action = col_text(st, DC_ACTION);
    d->sd_error = col_text_or_null(st, DC_ERROR);
    d->sd_verified = sqlite3_column_type(st, DC_VFREE) != SQLITE_NULL;
    d->sd_verify_free_mib = sqlite3_column_int64(st, DC_VFREE);
    d->sd_verify_seconds = sqlite3_column_double(st, DC_VSEC);
    d->sd_alert_id = sqlite3_column_int64(st, DC_ALERT);
    d->sd_gpu = col_text_or_null(st, DC_GPU);
    d->sd_free_source = col_text_or_null(st, DC_FREE_SOURCE);
    d->sd_replica = col_text_or_null(st, DC_REPLICA);
}

/* Decodes the current row into r (zeroed by the caller). Every column is
 * the daemon's, so a value of another type or a JSON column that does not
 * parse means someone edited the file: -1 with why. */
static int
read_decision(sqlite3_stmt *st, struct decision_row *r, char *why, size_t len)
{
    const char *bad = NULL;

    if (check_types(st, decision_cols, DC_COUNT, why, len) == -1)
        return -1;
    read_scalars(st, &r->dr_d);
    if (parse_victim(r, col_text_or_null(st, DC_VICTIM)) == -1)
        bad = "victim";
    else if (parse_candidates(r, col_text(st, DC_CANDS)) == -1)
        bad = "candidates";
    else if (parse_release(r, col_text_or_null(st, DC_RELEASE)) == -1)
        bad = "release";
    else if (parse_prediction(r, col_text_or_null(st, DC_PREDICTION)) == -1)
        bad = "prediction";
    if (bad != NULL) {
        snprintf(why, len, "%s is not the JSON the daemon writes", bad);
        return -1;
    }
    return 0;
}

/* Steps st to the end, handing each decision to cb. Finalizes st. */
static int64_t
run_decisions(struct store *s, sqlite3_stmt *st, store_decision_fn cb, void *arg,
              char *err, size_t errlen)
{
    struct decision_row r;
    int64_t n = 0;
    int rc, stop;
    char why[128];

    while ((rc = step(s, st)) == SQLITE_ROW) {
        memset(&r, 0, sizeof(r));
        if (read_decision(st, &r, why, sizeof(why)) == -1) {
            /* One bad row is reported and skipped: never the listing's end. */
            decision_row_free(&r);
            store_unreadable(s, "decisions", sqlite3_column_int64(st, DC_ID), why);
            continue;
        }
        stop = cb(sqlite3_column_int64(st, DC_ID), &r.dr_d, arg);
        decision_row_free(&r);
        if (stop != 0) {
            store_seterr(err, errlen, "stopped by the caller");
            goto fail;
        }
        n++;
    }
    if (rc != SQLITE_DONE) {
        query_error(s, rc, err, errlen);
        goto fail;
    }
    sqlite3_finalize(st);
    return n;
fail:
    sqlite3_finalize(st);
    return -1;
}

int64_t
store_query_decisions(struct store *s, const struct store_filter *f, store_decision_fn cb,
                      void *arg, char *err, size_t errlen)
{
    struct sql q = {.q_len = 0};
    sqlite3_stmt *st;

    sql_add(&q, "SELECT " DECISION_COLUMNS " FROM decisions WHERE 1");
    sql_add_filter(&q, f, "time_ms");
    sql_add(&q, " ORDER BY time_ms DESC, id DESC LIMIT :limit");
    if ((st = prepare(s, &q, err, errlen)) == NULL)
        return -1;
    bind_filter(st, f);
    return run_decisions(s, st, cb, arg, err, errlen);
}

int
store_get_decision(struct store *s, int64_t id, store_decision_fn cb, void *arg,
                   char *err, size_t errlen)
{
    struct sql q = {.q_len = 0};
    sqlite3_stmt *st;

    sql_add(&q, "SELECT " DECISION_COLUMNS " FROM decisions WHERE id = :id");
    if ((st = prepare(s, &q, err, errlen)) == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    return (int)run_decisions(s, st, cb, arg, err, errlen);
}

static void
read_alert(sqlite3_stmt *st, struct store_alert *a)
{
    a->sa_received_ms = sqlite3_column_int64(st, 1);
    a->sa_alertname = col_text(st, 2);
    a->sa_status = col_text(st, 3);
    a->sa_fingerprint = col_text(st, 4);
    a->sa_starts_at = col_text_or_null(st, 5);
    a->sa_ends_at = col_text_or_null(st, 6);
    a->sa_labels_json = col_text(st, 7);
    a->sa_annotations_json = col_text(st, 8);
}

int64_t
store_query_alerts(struct store *s, const struct store_filter *f, store_alert_fn cb,
                   void *arg, char *err, size_t errlen)
{
    struct store_filter only = {.sf_since_ms = f->sf_since_ms, .sf_limit = f->sf_limit};
    struct sql q = {.q_len = 0};
    struct store_alert a;
    sqlite3_stmt *st;
    int64_t n = 0;
    int rc;
    char why[128];

    sql_add(&q,
            "SELECT id, received_ms, alertname, status, fingerprint, starts_at, ends_at,"
            " labels, annotations FROM alerts WHERE 1");
    sql_add_filter(&q, &only, "received_ms");
    sql_add(&q, " ORDER BY received_ms DESC, id DESC LIMIT :limit");
    if ((st = prepare(s, &q, err, errlen)) == NULL)
        return -1;
    bind_filter(st, &only);
    while ((rc = step(s, st)) == SQLITE_ROW) {
        if (check_types(st, alert_cols, (int)(sizeof(alert_cols) / sizeof(*alert_cols)),
                        why, sizeof(why)) == -1) {
            store_unreadable(s, "alerts", sqlite3_column_int64(st, 0), why);
            continue;
        }
        memset(&a, 0, sizeof(a));
        read_alert(st, &a);
        if (cb(sqlite3_column_int64(st, 0), &a, arg) != 0) {
            store_seterr(err, errlen, "stopped by the caller");
            goto fail;
        }
        n++;
    }
    if (rc != SQLITE_DONE) {
        query_error(s, rc, err, errlen);
        goto fail;
    }
    sqlite3_finalize(st);
    return n;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* Runs one GROUP BY query: columns (key, result, count) or (key, count). */
static int64_t
run_stats(struct store *s, struct sql *q, const struct store_filter *f, const char *by,
          int with_result, store_stat_fn cb, void *arg, char *err, size_t errlen)
{
    struct store_stat line = {.ss_by = by};
    sqlite3_stmt *st;
    int64_t n = 0;
    int rc;

    if ((st = prepare(s, q, err, errlen)) == NULL)
        return -1;
    bind_filter(st, f);
    while ((rc = step(s, st)) == SQLITE_ROW) {
        line.ss_key = col_text(st, 0);
        line.ss_result = with_result ? col_text(st, 1) : NULL;
        line.ss_count = sqlite3_column_int64(st, with_result ? 2 : 1);
        if (cb(&line, arg) != 0) {
            store_seterr(err, errlen, "stopped by the caller");
            goto fail;
        }
        n++;
    }
    if (rc != SQLITE_DONE) {
        query_error(s, rc, err, errlen);
        goto fail;
    }
    sqlite3_finalize(st);
    return n;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* FROM and WHERE of a summary: the matching rows, or with a limit the newest
 * sf_limit of them (a subquery), so stats count exactly what the listing
 * shows. Without a limit the plain form lets SQLite group straight off an
 * index instead of sorting a million rows first. Ends inside "WHERE". */
static void
sql_add_source(struct sql *q, const struct store_filter *f, const char *cols)
{
    if (f->sf_limit == 0) {
        sql_add(q, " FROM decisions WHERE 1");
        sql_add_filter(q, f, "time_ms");
        return;
    }
    sql_add(q, " FROM (SELECT ");
    sql_add(q, cols);
    sql_add(q, " FROM decisions WHERE 1");
    sql_add_filter(q, f, "time_ms");
    sql_add(q, " ORDER BY time_ms DESC, id DESC LIMIT :limit) WHERE 1");
}

int64_t
store_query_stats(struct store *s, const struct store_filter *f, store_stat_fn cb,
                  void *arg, char *err, size_t errlen)
{
    struct sql by_result = {.q_len = 0}, by_ns = {.q_len = 0};
    int64_t a, b;

    sql_add(&by_result, "SELECT result, COUNT(*)");
    sql_add_source(&by_result, f, "result");
    sql_add(&by_result, " GROUP BY result ORDER BY 2 DESC, 1");
    sql_add(&by_ns, "SELECT victim_namespace, result, COUNT(*)");
    sql_add_source(&by_ns, f, "victim_namespace, result");
    sql_add(&by_ns, " AND victim_namespace IS NOT NULL");
    sql_add(&by_ns, " GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2");
    if ((a = run_stats(s, &by_result, f, "result", 0, cb, arg, err, errlen)) == -1)
        return -1;
    if ((b = run_stats(s, &by_ns, f, "namespace", 1, cb, arg, err, errlen)) == -1)
        return -1;
    return a + b;
}
