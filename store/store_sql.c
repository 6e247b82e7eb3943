/* store_sql.c -- the SQL helpers every store file uses: errors, exec, cached statements
 */
#include "store_int.h"

#include <stdarg.h>
#include <stdio.h>

void
store_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void
store_dberr(const struct store *s, char *err, size_t errlen, const char *what)
{
    const char *msg = s->st_db ? sqlite3_errmsg(s->st_db) : "out of memory";

    store_seterr(err, errlen, "%s: %s", what, msg);
}

int
store_exec(struct store *s, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;

    if (sqlite3_exec(s->st_db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        store_seterr(err, errlen, "%s", msg ? msg : sqlite3_errmsg(s->st_db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int
store_cached(struct store *s, sqlite3_stmt **slot, const char *sql, char *err,
             size_t errlen)
{
    if (*slot != NULL)
        return 0;
    if (sqlite3_prepare_v3(s->st_db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) !=
        SQLITE_OK) {
        store_dberr(s, err, errlen, "prepare");
        *slot = NULL;
        return -1;
    }
    return 0;
}

int
store_step_done(struct store *s, sqlite3_stmt *st, const char *what, char *err,
                size_t errlen)
{
    int rc = sqlite3_step(st);

    /* The message must be taken before reset, which may replace it. */
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        store_dberr(s, err, errlen, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return (rc == SQLITE_DONE || rc == SQLITE_ROW) ? 0 : -1;
}
