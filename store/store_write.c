/* store_write.c -- the hot writes: alerts at intake rate, decisions as they run */
#include "store_int.h"
#include "store_json.h"
#include "store_json_text.h"

#include <limits.h>
#include <stdlib.h>

static const char SQL_ADD_ALERT[] =
    "INSERT INTO alerts(received_ms, alertname, status, fingerprint, starts_at, ends_at,"
    " labels, annotations) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/* The decision's columns in bind order ?1..?18; the UPDATE adds ?19 = id.
 * Columns added later take numbers from ?30 up, so the first ones never move. */
static const char SQL_DEC_INSERT[] =
    "INSERT INTO decisions(time_ms, node, trigger_name, fingerprint, result, reason,"
    " free_mib, floor_mib, dry_run, action, victim_namespace, victim_pod, victim,"
    " candidates, error, verify_free_mib, verify_seconds, alert_id, verify_pending,"
    " gpu, release, free_source, prediction, replica)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
    " ?17, ?18, ?30, ?31, ?32, ?33, ?34, ?35)";

static const char SQL_DEC_FINISH[] =
    "UPDATE decisions SET time_ms = ?1, node = ?2, trigger_name = ?3, fingerprint = ?4,"
    " result = ?5, reason = ?6, free_mib = ?7, floor_mib = ?8, dry_run = ?9,"
    " action = ?10, victim_namespace = ?11, victim_pod = ?12, victim = ?13,"
    " candidates = ?14, error = ?15, verify_free_mib = ?16, verify_seconds = ?17,"
    " alert_id = ?18, verify_pending = ?30, gpu = ?31, release = ?32, free_source = ?33, prediction = ?34,"
    " replica = ?35 WHERE id = ?19";

/* The same, leaving the candidates as the row has them: a 5,000-pod node's
 * list is the costliest part to encode, and it does not change after the
 * row first held it (sd_candidates_stored). */
static const char SQL_DEC_FINISH_KEEP_CANDIDATES[] =
    "UPDATE decisions SET time_ms = ?1, node = ?2, trigger_name = ?3, fingerprint = ?4,"
    " result = ?5, reason = ?6, free_mib = ?7, floor_mib = ?8, dry_run = ?9,"
    " action = ?10, victim_namespace = ?11, victim_pod = ?12, victim = ?13,"
    " error = ?15, verify_free_mib = ?16, verify_seconds = ?17,"
    " alert_id = ?18, verify_pending = ?30, gpu = ?31, release = ?32, free_source = ?33, prediction = ?34,"
    " replica = ?35 WHERE id = ?19";

/* Binds s, or NULL; the caller's string must outlive the step (SQLITE_STATIC). */
static void
bind_str(sqlite3_stmt *st, int i, const char *s)
{
    if (s == NULL)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

static const char *
or_empty(const char *s)
{
    return s ? s : "";
}

int
store_add_alert(struct store *s, const struct store_alert *a, int64_t *id_out, char *err,
                size_t errlen)
{
    sqlite3_stmt *st;

    if (store_cached(s, &s->st_add_alert, SQL_ADD_ALERT, err, errlen) == -1)
        return -1;
    st = s->st_add_alert;
    sqlite3_bind_int64(st, 1, a->sa_received_ms);
    bind_str(st, 2, a->sa_alertname); /* NULL fails NOT NULL: a caller bug, reported */
    bind_str(st, 3, a->sa_status);
    bind_str(st, 4, or_empty(a->sa_fingerprint));
    bind_str(st, 5, a->sa_starts_at);
    bind_str(st, 6, a->sa_ends_at);
    bind_str(st, 7, a->sa_labels_json ? a->sa_labels_json : "{}");
    bind_str(st, 8, a->sa_annotations_json ? a->sa_annotations_json : "{}");
    if (store_step_done(s, st, "add alert", err, errlen) == -1)
        return -1;
    if (id_out != NULL)
        *id_out = sqlite3_last_insert_rowid(s->st_db);
    return 0;
}

/* Binds a JSON value's compact text; SQLite frees the text. Consumes j. */
static int
bind_json(sqlite3_stmt *st, int i, json_t *j)
{
    char *text;

    if (j == NULL)
        return -1;
    if (json_is_null(j)) {
        json_decref(j);
        sqlite3_bind_null(st, i);
        return 0;
    }
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (text == NULL)
        return -1;
    /* On failure too, SQLite calls the destructor. */
    return sqlite3_bind_text(st, i, text, -1, free) == SQLITE_OK ? 0 : -1;
}

/* Binds malloc'd text, NULL meaning out of memory; SQLite frees it. */
static int
bind_owned_text(sqlite3_stmt *st, int i, char *text, size_t len)
{
    if (text == NULL)
        return -1;
    if (len > (size_t)INT_MAX) {
        free(text);
        return -1;
    }
    /* On failure too, SQLite calls the destructor. */
    return sqlite3_bind_text(st, i, text, (int)len, free) == SQLITE_OK ? 0 : -1;
}

/* The candidates column: written straight as text, the same bytes bind_json()
 * would give (store_json_text.h); a 5,000-pod list costs a tree of 35,000 values
 * to build and dump otherwise. */
static int
bind_candidates(sqlite3_stmt *st, int i, const struct store_decision *d)
{
    size_t len = 0;
    char *text = store_candidates_text_src(d->sd_candidates, d->sd_budget_sources,
                                           d->sd_candidate_count, &len);

    return bind_owned_text(st, i, text, len);
}

static void
bind_victim_columns(sqlite3_stmt *st, const struct store_victim *v)
{
    if (v == NULL) {
        sqlite3_bind_null(st, 11);
        sqlite3_bind_null(st, 12);
    } else {
        bind_str(st, 11, or_empty(v->sv_namespace));
        bind_str(st, 12, or_empty(v->sv_pod));
    }
}

/* Binds ?1..?18 and ?30.. from d; result overrides d->sd_result when not NULL, and the
 * error is bound only with keep_error. Parameters left unbound are NULL. */
static int
bind_decision(sqlite3_stmt *st, const struct store_decision *d, const char *result,
              int keep_error, int with_candidates, char *err, size_t errlen)
{
    if (d->sd_candidate_count > 0 && d->sd_candidates == NULL) {
        store_seterr(err, errlen, "decision has %zu candidates but no array",
                     d->sd_candidate_count);
        return -1;
    }
    sqlite3_bind_int64(st, 1, d->sd_time_ms);
    bind_str(st, 2, or_empty(d->sd_node));
    bind_str(st, 3, or_empty(d->sd_trigger));
    bind_str(st, 4, or_empty(d->sd_fingerprint));
    bind_str(st, 5, result ? result : d->sd_result);
    bind_str(st, 6, or_empty(d->sd_reason));
    if (d->sd_free_known)
        sqlite3_bind_int64(st, 7, d->sd_free_mib);
    sqlite3_bind_int64(st, 8, d->sd_floor_mib);
    sqlite3_bind_int(st, 9, d->sd_dry_run != 0);
    bind_str(st, 10, d->sd_action ? d->sd_action : "none");
    bind_victim_columns(st, d->sd_victim);
    if (bind_json(st, 13,
                  store_victim_json_src(d->sd_victim, d->sd_victim_budget_source)) ==
            -1 ||
        (with_candidates && bind_candidates(st, 14, d) == -1) ||
        bind_json(st, 32, store_release_json(d->sd_release)) == -1 ||
        bind_json(st, 34, store_prediction_json(d->sd_prediction)) == -1) {
        store_seterr(err, errlen, "out of memory encoding the decision");
        sqlite3_clear_bindings(st);
        return -1;
    }
    bind_str(st, 15, keep_error ? d->sd_error : NULL);
    if (d->sd_verified) {
        sqlite3_bind_int64(st, 16, d->sd_verify_free_mib);
        sqlite3_bind_double(st, 17, d->sd_verify_seconds);
    }
    if (d->sd_alert_id > 0)
        sqlite3_bind_int64(st, 18, d->sd_alert_id);
    sqlite3_bind_int(st, 30, d->sd_verify_pending != 0);
    bind_str(st, 31, d->sd_gpu);
    bind_str(st, 33, d->sd_free_source);
    bind_str(st, 35, d->sd_replica);
    return 0;
}

/* Inserts d; unbound parameters are NULL, cleared after every use. */
static int
insert_decision(struct store *s, const struct store_decision *d, const char *result,
                int keep_error, int64_t *id_out, char *err, size_t errlen)
{
    if (store_cached(s, &s->st_dec_insert, SQL_DEC_INSERT, err, errlen) == -1)
        return -1;
    if (bind_decision(s->st_dec_insert, d, result, keep_error, 1, err, errlen) == -1)
        return -1;
    if (store_step_done(s, s->st_dec_insert, "record decision", err, errlen) == -1)
        return -1;
    if (id_out != NULL)
        *id_out = sqlite3_last_insert_rowid(s->st_db);
    return 0;
}

int
store_decision_start(struct store *s, const struct store_decision *d, int64_t *id_out,
                     char *err, size_t errlen)
{
    /* No error either: an in_progress row with an error reads as interrupted. */
    return insert_decision(s, d, "in_progress", 0, id_out, err, errlen);
}

int
store_decision_record(struct store *s, const struct store_decision *d, int64_t *id_out,
                      char *err, size_t errlen)
{
    return insert_decision(s, d, NULL, 1, id_out, err, errlen);
}

int
store_decision_finish(struct store *s, int64_t id, const struct store_decision *d,
                      char *err, size_t errlen)
{
    int keep = d->sd_candidates_stored;
    sqlite3_stmt **slot = keep ? &s->st_dec_finish_keep : &s->st_dec_finish;
    sqlite3_stmt *st;

    if (store_cached(s, slot, keep ? SQL_DEC_FINISH_KEEP_CANDIDATES : SQL_DEC_FINISH, err,
                     errlen) == -1)
        return -1;
    st = *slot;
    if (bind_decision(st, d, NULL, 1, !keep, err, errlen) == -1)
        return -1;
    sqlite3_bind_int64(st, 19, id);
    if (store_step_done(s, st, "finish decision", err, errlen) == -1)
        return -1;
    if (sqlite3_changes64(s->st_db) == 0) {
        store_seterr(err, errlen, "finish decision: no decision %lld", (long long)id);
        return -1;
    }
    return 0;
}
