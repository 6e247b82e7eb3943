/* store_schema.c -- the audit schema, as an ordered list of forward migrations, and the
 * reader's check that a file holds it */
#include "store_int.h"

#include <stddef.h>
#include <string.h>

/*
 * Step i takes the schema from version i to i + 1 and sets user_version
 * itself, so the version moves in the same transaction as the tables. Steps
 * are append-only: never edit one that has shipped, add the next.
 *
 * Why these columns: victim and candidates are JSON text (read back whole by
 * `audit`), while everything the CLI filters or sorts on is a plain column
 * with an index. The indexes are ascending on purpose: SQLite scans them
 * backwards for "newest first", and because rowid trails every index entry
 * the backward scan also yields "ORDER BY time DESC, id DESC" without a sort.
 * AUTOINCREMENT keeps ids from being reused after a prune empties a table:
 * an id quoted in an incident report must never name a different row.
 */
static const char *const migrations[] = {
    /* 0 -> 1: the first schema */
    "CREATE TABLE alerts ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " received_ms INTEGER NOT NULL,"
    " alertname TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " fingerprint TEXT NOT NULL,"
    " starts_at TEXT,"
    " ends_at TEXT,"
    " labels TEXT NOT NULL,"
    " annotations TEXT NOT NULL);"
    "CREATE INDEX alerts_by_time ON alerts(received_ms);"
    "CREATE TABLE decisions ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " time_ms INTEGER NOT NULL,"
    " node TEXT NOT NULL,"
    " trigger_name TEXT NOT NULL,"
    " fingerprint TEXT NOT NULL,"
    " result TEXT NOT NULL,"
    " reason TEXT NOT NULL,"
    " free_mib INTEGER," /* NULL: unknown */
    " floor_mib INTEGER NOT NULL,"
    " dry_run INTEGER NOT NULL,"
    " action TEXT NOT NULL,"
    " victim_namespace TEXT," /* NULL: no victim */
    " victim_pod TEXT,"
    " victim TEXT,"              /* JSON object or NULL */
    " candidates TEXT NOT NULL," /* JSON array */
    " error TEXT,"
    " verify_free_mib INTEGER," /* NULL: not verified */
    " verify_seconds REAL,"
    " alert_id INTEGER REFERENCES alerts(id) ON DELETE SET NULL);"
    "CREATE INDEX decisions_by_time ON decisions(time_ms);"
    "CREATE INDEX decisions_by_node ON decisions(node, time_ms);"
    "CREATE INDEX decisions_by_result ON decisions(result, time_ms);"
    "CREATE INDEX decisions_by_namespace ON decisions(victim_namespace, time_ms);"
    /* `audit stats` by namespace reads only this (covering, no victimless rows). */
    "CREATE INDEX decisions_by_victim_result"
    " ON decisions(victim_namespace, result, time_ms) WHERE victim_namespace IS NOT NULL;"
    /* Pruning an alert sets alert_id NULL in its decisions: without this
     * index each deleted alert would scan the decisions table. */
    "CREATE INDEX decisions_by_alert ON decisions(alert_id);"
    "PRAGMA user_version = 1;",
    /* 1 -> 2: a recycle is recorded the moment it happens, before its verify;
     * verify_pending marks such a row until the verify ends, so a crash in
     * between is found and said at the next start. GPU scope: the GPU a
     * decision was about (NULL in node scope, so older rows read as node
     * scope). The cooperative release asked, as a JSON object like victim. */
    "ALTER TABLE decisions ADD COLUMN verify_pending INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX decisions_verify_pending ON decisions(id) WHERE verify_pending = 1;"
    "ALTER TABLE decisions ADD COLUMN gpu TEXT;"
    "ALTER TABLE decisions ADD COLUMN release TEXT;"
    "CREATE INDEX decisions_by_gpu ON decisions(gpu, time_ms) WHERE gpu IS NOT NULL;"
    "PRAGMA user_version = 2;",

    /* 2 -> 3: where each decision's free VRAM came from (SPEC free_source);
     * older rows read null. */
    "ALTER TABLE decisions ADD COLUMN free_source TEXT;"
    "PRAGMA user_version = 3;",

    /* 3 -> 4: a predicted trigger's judgement (SPEC prediction), a JSON
     * object like release; older rows read null. */
    "ALTER TABLE decisions ADD COLUMN prediction TEXT;"
    "PRAGMA user_version = 4;",

    /* 4 -> 5: high availability: the replica (POD_NAME) that took the
     * decision, so the listings of several replicas merge into one history
     * (`audit --db A --db B`); NULL without leader election, and for older rows. */
    "ALTER TABLE decisions ADD COLUMN replica TEXT;"
    "PRAGMA user_version = 5;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_SCHEMA_VERSION,
               "one migration per schema version");

static int
read_version(struct store *s, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(s->st_db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) {
        store_dberr(s, err, errlen, "read schema version");
        return -1;
    }
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        store_dberr(s, err, errlen, "read schema version");
        sqlite3_finalize(st);
        return -1;
    }
    *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

/* Runs step `from` inside the caller's transaction. A step that forgot to
 * move user_version would loop forever, so that is checked. */
static int
apply(struct store *s, int from, char *err, size_t errlen)
{
    int now;

    if (store_exec(s, migrations[from], err, errlen) == -1)
        return -1;
    if (read_version(s, &now, err, errlen) == -1)
        return -1;
    if (now != from + 1) { /* can't happen: a bug in migrations[] */
        store_seterr(err, errlen, "migration %d left schema version %d", from, now);
        return -1;
    }
    return 0;
}

/* One step, in its own write transaction. The version is read again under
 * the write lock, so two daemons starting at once cannot both migrate.
 * Sets *done when the schema is already current. */
static int
migrate_one(struct store *s, int *done, char *err, size_t errlen)
{
    int version;

    if (store_exec(s, "BEGIN IMMEDIATE", err, errlen) == -1)
        return -1;
    if (read_version(s, &version, err, errlen) == -1)
        goto fail;
    if (version > STORE_SCHEMA_VERSION) {
        store_seterr(err, errlen,
                     "database schema version %d is newer than this program's %d",
                     version, STORE_SCHEMA_VERSION);
        goto fail;
    }
    if (version < 0) { /* can't happen unless someone set it by hand */
        store_seterr(err, errlen, "database schema version %d is invalid", version);
        goto fail;
    }
    *done = (version == STORE_SCHEMA_VERSION);
    if (!*done && apply(s, version, err, errlen) == -1)
        goto fail;
    if (store_exec(s, "COMMIT", err, errlen) == -1)
        goto fail;
    return 0;
fail:
    store_exec(s, "ROLLBACK", NULL, 0);
    return -1;
}

static int
check_readonly(struct store *s, char *err, size_t errlen)
{
    int version;

    if (read_version(s, &version, err, errlen) == -1)
        return -1;
    if (version == STORE_SCHEMA_VERSION)
        return 0;
    if (version < STORE_SCHEMA_VERSION)
        store_seterr(
            err, errlen,
            "database schema version %d is older than %d (the daemon migrates it "
            "when it starts)",
            version, STORE_SCHEMA_VERSION);
    else
        store_seterr(err, errlen,
                     "database schema version %d is newer than this program's %d",
                     version, STORE_SCHEMA_VERSION);
    return -1;
}

int
store_schema_migrate(struct store *s, char *err, size_t errlen)
{
    int done = 0;

    if (s->st_mode == STORE_READONLY)
        return check_readonly(s, err, errlen);
    while (!done)
        if (migrate_one(s, &done, err, errlen) == -1)
            return -1;
    return 0;
}

/* The columns the queries read (store_query.c), per table. */
static const char *const decision_columns[] = {"id",
                                               "time_ms",
                                               "node",
                                               "trigger_name",
                                               "fingerprint",
                                               "result",
                                               "reason",
                                               "free_mib",
                                               "floor_mib",
                                               "dry_run",
                                               "action",
                                               "victim_namespace",
                                               "victim",
                                               "candidates",
                                               "error",
                                               "verify_free_mib",
                                               "verify_seconds",
                                               "alert_id",
                                               "gpu",
                                               "release",
                                               "free_source",
                                               "prediction",
                                               NULL};
static const char *const alert_columns[] = {
    "id",        "received_ms", "alertname", "status",      "fingerprint",
    "starts_at", "ends_at",     "labels",    "annotations", NULL};

/* table is an ordinary table of the file with every one of cols an
 * ordinary column: not a view (whose query could run forever), not a
 * virtual table, no generated or hidden column (computed as it is read). */
static int
check_table(struct store *s, const char *table, const char *const *cols, char *err,
            size_t errlen)
{
    sqlite3_stmt *st = NULL;
    const char *type, *sql;
    int rc, found = 0;

    if (sqlite3_prepare_v2(
            s->st_db,
            "SELECT type, sql FROM sqlite_schema"
            " WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
            -1, &st, NULL) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        type = (const char *)sqlite3_column_text(st, 0);
        sql = (const char *)sqlite3_column_text(st, 1);
        if (found++ > 0 || type == NULL || strcmp(type, "table") != 0 || sql == NULL ||
            sqlite3_strnicmp(sql, "CREATE TABLE", 12) != 0) {
            store_seterr(err, errlen,
                         "%s is %s, not the audit store's table: this file was not "
                         "written by gpu-vram-watchdog, refusing to read it",
                         table,
                         type != NULL && strcmp(type, "view") == 0 ? "a view"
                         : found > 1                               ? "defined twice"
                                                                   : "a virtual table");
            goto fail;
        }
    }
    if (rc != SQLITE_DONE)
        goto dberr;
    if (!found) {
        store_seterr(err, errlen, "the audit database has no %s table", table);
        goto fail;
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->st_db,
                           "SELECT hidden FROM pragma_table_xinfo(?1)"
                           " WHERE name = ?2 COLLATE NOCASE",
                           -1, &st, NULL) != SQLITE_OK)
        goto dberr;
    for (; *cols != NULL; cols++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, *cols, -1, SQLITE_STATIC);
        if ((rc = sqlite3_step(st)) != SQLITE_ROW && rc != SQLITE_DONE)
            goto dberr;
        if (rc == SQLITE_DONE || sqlite3_column_int(st, 0) != 0) {
            store_seterr(err, errlen,
                         "%s.%s is %s: this file was not written by gpu-vram-watchdog, "
                         "refusing to read it",
                         table, *cols,
                         rc == SQLITE_DONE ? "missing" : "generated, not stored");
            goto fail;
        }
    }
    sqlite3_finalize(st);
    return 0;
dberr:
    store_dberr(s, err, errlen, "read the schema");
fail:
    sqlite3_finalize(st);
    return -1;
}

int
store_schema_check_tables(struct store *s, char *err, size_t errlen)
{
    if (check_table(s, "decisions", decision_columns, err, errlen) == -1)
        return -1;
    return check_table(s, "alerts", alert_columns, err, errlen);
}
