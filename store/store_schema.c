/* store_schema.c -- the audit schema, as an ordered list of forward migrations */
#include "store_int.h"

#include <stddef.h>

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
