/* store.c -- opening, closing, transactions and pruning of the SQLite audit store */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* The daemon is one event loop: waiting long for a lock would stall every
 * webhook, so it fails fast (503, Alertmanager retries). The CLI can wait. */
#define BUSY_TIMEOUT_RO_MS 5000

/* Creates the file 0600 when it is missing, so SQLite never creates it with
 * the umask's mode (the audit holds pod names and alert labels). The -wal
 * and -shm files SQLite makes later copy the database file's mode. An
 * existing file keeps the mode its operator gave it. */
static int
create_private(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    if (fd == -1) {
        if (errno == EEXIST)
            return 0;
        store_seterr(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    /* open() applied the umask, which can only remove bits; a umask such as
     * 0277 would leave the daemon unable to write its own file. */
    if (fchmod(fd, 0600) == -1) {
        store_seterr(err, errlen, "cannot chmod %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* journal_mode answers with the mode it ended in; anything but "wal" (a
 * filesystem without shared memory, say) is refused rather than run slower
 * and block readers. */
static int
enable_wal(struct store *s, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    const unsigned char *mode;
    int ok;

    if (sqlite3_prepare_v2(s->st_db, "PRAGMA journal_mode=WAL", -1, &st, NULL) !=
        SQLITE_OK) {
        store_dberr(s, err, errlen, "journal_mode");
        return -1;
    }
    if (sqlite3_step(st) != SQLITE_ROW) {
        store_dberr(s, err, errlen, "journal_mode");
        sqlite3_finalize(st);
        return -1;
    }
    mode = sqlite3_column_text(st, 0);
    ok = mode != NULL && strcmp((const char *)mode, "wal") == 0;
    if (!ok)
        store_seterr(err, errlen, "journal_mode: got %s, need wal",
                     mode ? (const char *)mode : "nothing");
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

/* Sets error on the rows sql selects (?1 = the error); adds them to the count. */
static int
mark_rows(struct store *s, const char *sql, const char *error, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(s->st_db, sql, -1, &st, NULL) != SQLITE_OK) {
        store_dberr(s, err, errlen, "mark interrupted decisions");
        return -1;
    }
    sqlite3_bind_text(st, 1, error, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        store_dberr(s, err, errlen, "mark interrupted decisions");
    else
        s->st_interrupted += sqlite3_changes64(s->st_db);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* A row still in_progress was being decided when the last run stopped. It
 * keeps its result (that is what it was) and says why it never finished. A
 * recycle whose verify was still running keeps its result and victim too. */
static int
mark_interrupted(struct store *s, char *err, size_t errlen)
{
    s->st_interrupted = 0;
    if (mark_rows(s,
                  "UPDATE decisions SET error = ?1"
                  " WHERE result = 'in_progress' AND error IS NULL",
                  STORE_INTERRUPTED_ERROR, err, errlen) == -1)
        return -1;
    return mark_rows(s,
                     "UPDATE decisions SET error = ?1, verify_pending = 0"
                     " WHERE verify_pending = 1",
                     STORE_UNVERIFIED_ERROR, err, errlen);
}

static int
open_db(struct store *s, const char *path, char *err, size_t errlen)
{
    struct stat sb;
    int flags;

    if (s->st_mode == STORE_READWRITE) {
        if (create_private(path, err, errlen) == -1)
            return -1;
        flags = SQLITE_OPEN_READWRITE;
    } else {
        if (stat(path, &sb) == -1) {
            if (errno == ENOENT)
                store_seterr(err, errlen, "audit database %s does not exist", path);
            else
                store_seterr(err, errlen, "cannot open audit database %s: %s", path,
                             strerror(errno));
            return -1;
        }
        /* A directory reads as "disk I/O error" and a FIFO blocks the
         * reader forever: say what it is instead. */
        if (!S_ISREG(sb.st_mode)) {
            store_seterr(err, errlen, "audit database %s is not a regular file%s", path,
                         S_ISDIR(sb.st_mode) ? " (a directory)" : "");
            return -1;
        }
        flags = SQLITE_OPEN_READONLY;
    }
    /* No SQLITE_OPEN_CREATE: the file exists now or we fail. */
    if (sqlite3_open_v2(path, &s->st_db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        store_seterr(err, errlen, "cannot open audit database %s: %s", path,
                     s->st_db ? sqlite3_errmsg(s->st_db) : "out of memory");
        return -1;
    }
    return 0;
}

/* "file:PATH?immutable=1" with PATH percent-encoded where a URI needs it. */
static int
immutable_uri(const char *path, char *uri, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    if (len < sizeof("file:?immutable=1"))
        return -1;
    memcpy(uri, "file:", 5);
    n = 5;
    for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || strchr("/-._~", *p) != NULL;

        if (n + 3 >= len)
            return -1;
        if (plain) {
            uri[n++] = (char)*p;
        } else {
            uri[n++] = '%';
            uri[n++] = hex[*p >> 4];
            uri[n++] = hex[*p & 15];
        }
    }
    if (n + sizeof("?immutable=1") > len)
        return -1;
    memcpy(uri + n, "?immutable=1", sizeof("?immutable=1"));
    return 0;
}

/*
 * A reader that cannot create the -shm file WAL needs (a read-only mount, a
 * copy on read-only media, a directory it may not write) fails its first
 * read. With no -wal file beside the database nobody has it open (a writer's
 * connection keeps the -wal file until it closes), so the file alone is the
 * whole database: it is reopened as immutable. 1 when reopened, else 0.
 */
static int
reopen_unshared(struct store *s, const char *path)
{
    char wal[4096], uri[3 * 4096 + 32];
    int code = sqlite3_extended_errcode(s->st_db);
    struct stat sb;

    if ((code & 0xff) != SQLITE_READONLY && (code & 0xff) != SQLITE_CANTOPEN)
        return 0;
    if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal) ||
        stat(wal, &sb) == 0 || errno != ENOENT ||
        immutable_uri(path, uri, sizeof(uri)) == -1)
        return 0;
    sqlite3_close(s->st_db);
    s->st_db = NULL;
    return sqlite3_open_v2(uri, &s->st_db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                           NULL) == SQLITE_OK;
}

/* Non-zero interrupts the statement running: its step is past the limit. */
static int
past_deadline(void *arg)
{
    const struct store *s = arg;

    return clock_mono_s() > s->st_deadline;
}

void
store_arm(struct store *s)
{
    s->st_deadline = clock_mono_s() + s->st_step_limit_s;
}

static int
configure(struct store *s, char *err, size_t errlen)
{
    int rw = s->st_mode == STORE_READWRITE, off = -1;

    sqlite3_busy_timeout(s->st_db, rw ? BUSY_TIMEOUT_RW_MS : BUSY_TIMEOUT_RO_MS);
    /* A view, trigger or index in the file may not call functions with side
     * effects. The daemon's own schema has none of them. */
    if (sqlite3_db_config(s->st_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &off) !=
            SQLITE_OK ||
        off != 0) {
        store_seterr(err, errlen, "cannot turn trusted_schema off");
        return -1;
    }
    if (!rw) {
        /* The file is `audit`'s input, not its own: whatever it holds, no
         * step runs past the limit (a recursive view would run forever). */
        s->st_step_limit_s = STORE_STEP_LIMIT_S;
        store_arm(s);
        sqlite3_progress_handler(s->st_db, 10000, past_deadline, s);
        return 0; /* a reader must not try to change the journal mode */
    }
    if (enable_wal(s, err, errlen) == -1)
        return -1;
    /* NORMAL in WAL: a power cut may lose the last commits, never corrupt.
     * journal_size_limit: the WAL shrinks back to 64 MiB after a burst. */
    return store_exec(s,
                      "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                      " PRAGMA journal_size_limit=67108864",
                      err, errlen);
}

struct store *
store_open(const char *path, enum store_mode mode, char *err, size_t errlen)
{
    struct store *s;

    if ((s = calloc(1, sizeof(*s))) == NULL) {
        store_seterr(err, errlen, "out of memory");
        return NULL;
    }
    s->st_mode = mode;
    if (open_db(s, path, err, errlen) == -1)
        goto fail;
    if (configure(s, err, errlen) == -1)
        goto fail;
    if (store_schema_migrate(s, err, errlen) == -1 &&
        (mode != STORE_READONLY || !reopen_unshared(s, path) ||
         configure(s, err, errlen) == -1 || store_schema_migrate(s, err, errlen) == -1))
        goto fail;
    if (mode == STORE_READONLY && store_schema_check_tables(s, err, errlen) == -1)
        goto fail;
    if (mode == STORE_READWRITE && mark_interrupted(s, err, errlen) == -1)
        goto fail;
    if (mode == STORE_READWRITE)
        checkpointer_start(s);
    return s;
fail:
    store_close(s);
    return NULL;
}

void
store_close(struct store *s)
{
    if (s == NULL)
        return;
    checkpointer_stop(s); /* first: its connection must not be the last one */
    sqlite3_finalize(s->st_add_alert);
    sqlite3_finalize(s->st_dec_insert);
    sqlite3_finalize(s->st_dec_finish);
    sqlite3_finalize(s->st_dec_finish_keep);
    sqlite3_finalize(s->st_begin);
    sqlite3_finalize(s->st_commit);
    sqlite3_finalize(s->st_rollback);
    sqlite3_close(s->st_db); /* rolls back an open transaction */
    free(s);
}

void
store_on_unreadable(struct store *s, store_unreadable_fn cb, void *arg)
{
    s->st_unreadable = cb;
    s->st_unreadable_arg = arg;
}

void
store_unreadable(struct store *s, const char *table, int64_t id, const char *why)
{
    if (s->st_unreadable != NULL)
        s->st_unreadable(table, id, why, s->st_unreadable_arg);
    else
        log_warnx("%s: %s row %lld cannot be read (%s): skipped", __func__, table,
                  (long long)id, why);
}

int64_t
store_interrupted_count(const struct store *s)
{
    return s ? s->st_interrupted : 0;
}

int
store_moved(struct store *s)
{
    int moved = 0;

    if (s == NULL || s->st_db == NULL ||
        sqlite3_file_control(s->st_db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) !=
            SQLITE_OK)
        return 0;
    return moved != 0;
}

int
store_begin(struct store *s, char *err, size_t errlen)
{
    if (store_cached(s, &s->st_begin, "BEGIN IMMEDIATE", err, errlen) == -1)
        return -1;
    return store_step_done(s, s->st_begin, "begin", err, errlen);
}

int
store_commit(struct store *s, char *err, size_t errlen)
{
    if (store_cached(s, &s->st_commit, "COMMIT", err, errlen) == -1 ||
        store_step_done(s, s->st_commit, "commit", err, errlen) == -1) {
        store_rollback(s);
        return -1;
    }
    return 0;
}

void
store_rollback(struct store *s)
{
    if (s == NULL || sqlite3_get_autocommit(s->st_db))
        return; /* nothing open: SQLite may already have rolled back (FULL, IOERR) */
    if (store_cached(s, &s->st_rollback, "ROLLBACK", NULL, 0) == 0)
        store_step_done(s, s->st_rollback, "rollback", NULL, 0);
    else
        sqlite3_exec(s->st_db, "ROLLBACK", NULL, NULL, NULL);
}

/* Runs one DELETE ... WHERE col < ?1 and adds its row count to *total. */
static int
prune_one(struct store *s, const char *sql, int64_t cutoff_ms, int64_t *total, char *err,
          size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(s->st_db, sql, -1, &st, NULL) != SQLITE_OK) {
        store_dberr(s, err, errlen, "prune");
        return -1;
    }
    sqlite3_bind_int64(st, 1, cutoff_ms);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        *total += sqlite3_changes64(s->st_db);
    else
        store_dberr(s, err, errlen, "prune");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int64_t
store_prune(struct store *s, int64_t cutoff_ms, char *err, size_t errlen)
{
    int64_t total = 0;

    /* A savepoint is its own transaction outside store_begin() and nests
     * inside it, so a half-done prune never commits. Decisions go first:
     * then pruning an alert rarely has a decision to update. */
    if (store_exec(s, "SAVEPOINT prune", err, errlen) == -1)
        return -1;
    if (prune_one(s, "DELETE FROM decisions WHERE time_ms < ?1", cutoff_ms, &total, err,
                  errlen) == -1 ||
        prune_one(s, "DELETE FROM alerts WHERE received_ms < ?1", cutoff_ms, &total, err,
                  errlen) == -1)
        goto fail;
    if (store_exec(s, "RELEASE prune", err, errlen) == -1)
        goto fail;
    return total;
fail:
    sqlite3_exec(s->st_db, "ROLLBACK TO prune; RELEASE prune", NULL, NULL, NULL);
    return -1;
}
