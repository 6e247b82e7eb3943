/* store_int.h -- what the store's files (and its tests) share; no other module */
#ifndef GVW_STORE_INT_H
#define GVW_STORE_INT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store {
    sqlite3 *st_db; /* owned */
    enum store_mode st_mode;
    int64_t st_interrupted; /* rows marked interrupted by this open */
    /* Hot statements, prepared on first use and kept (SQLITE_PREPARE_PERSISTENT). */
    sqlite3_stmt *st_add_alert;
    sqlite3_stmt *st_dec_insert;
    sqlite3_stmt *st_dec_finish;
    sqlite3_stmt *st_dec_finish_keep; /* the same, candidates left as stored */
    sqlite3_stmt *st_begin;
    sqlite3_stmt *st_commit;
    sqlite3_stmt *st_rollback;
    /* READONLY: the progress handler interrupts a step still running at
     * st_deadline (monotonic s), st_step_limit_s after store_arm(). */
    double st_deadline, st_step_limit_s;
    store_unreadable_fn st_unreadable; /* NULL: log a warning */
    void *st_unreadable_arg;
};

/* How long one step of a READONLY query (producing one row) may run before
 * it is interrupted: a crafted file cannot hang `audit`, and a real one a
 * million rows long is read in well under it (docs/guide.md "The audit store"). */
#define STORE_STEP_LIMIT_S 60.0

/* Restarts the step limit; before each sqlite3_step() of a READONLY query. */
void store_arm(struct store *s);

/* Reports row id of table as unreadable (why: one phrase) and counts on. */
void store_unreadable(struct store *s, const char *table, int64_t id, const char *why);

/* READONLY: decisions and alerts are this project's tables (not views, not
 * virtual tables), with every column the queries read an ordinary one. 0,
 * or -1 with err. */
int store_schema_check_tables(struct store *s, char *err, size_t errlen);

/* Copies a formatted reason into err (bounded, always terminated when errlen > 0). */
void store_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<what>: <sqlite3_errmsg>" into err. */
void store_dberr(const struct store *s, char *err, size_t errlen, const char *what);

/* Prepares (once) the statement cached at *slot. 0 or -1 with err. */
int store_cached(struct store *s, sqlite3_stmt **slot, const char *sql, char *err,
                 size_t errlen);
/* Steps a statement that returns no rows, then resets it and clears its
 * bindings (they may point at the caller's memory). 0 or -1 with err. */
int store_step_done(struct store *s, sqlite3_stmt *st, const char *what, char *err,
                    size_t errlen);
/* Runs fixed SQL text (no values) with sqlite3_exec. 0 or -1 with err. */
int store_exec(struct store *s, const char *sql, char *err, size_t errlen);

/* Brings the schema to STORE_SCHEMA_VERSION (READWRITE) or checks it is
 * there (READONLY). 0 or -1 with err. */
int store_schema_migrate(struct store *s, char *err, size_t errlen);

/* How long a writer waits for SQLite's lock before a write fails (then the
 * webhook answers 503): short, because the wait blocks the event loop. */
#define BUSY_TIMEOUT_RW_MS 200

/* Moves a READWRITE store's WAL checkpoints to a thread of their own
 * (store_checkpoint.c); on any failure SQLite's automatic checkpoint stays. */
void checkpointer_start(struct store *s);
/* Stops that thread; before the store's connection closes. */
void checkpointer_stop(struct store *s);

#endif
